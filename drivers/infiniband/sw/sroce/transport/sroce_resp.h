/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce responder of connected QPs: executes request packets and (RC)
 * answers them.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_H
#define SROCE_RESP_H

#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/types.h>

#include "core/sroce_task.h"
#include "mem/sroce_copy.h"
#include "obj/sroce_wqe.h"
#include "transport/sroce_resp_res.h"
#include "wire/sroce_opcode.h"

struct ib_wc;
struct sroce_mr;
struct sroce_pkt;
struct sroce_qp;
struct sroce_qp_params;

/*
 * RDMA READ response packets one run of the responder sends before it
 * lets the task run again (and other QPs' tasks with it).
 */
#define SROCE_RESP_READ_BUDGET	16

/*
 * Calls of the responder when the receive softirq runs it for a lone
 * packet (sroce_resp_queue()): one for the packet, one that finds the
 * queue empty and lets the task go idle without waking a worker.
 */
#define SROCE_RESP_INLINE_CALLS	2

/*
 * Payload bytes of one message queued in a row, after which the rest of
 * it is left to a worker on another CPU (sroce_resp_queue()). Below it a
 * short message runs in the receive softirq as single packets do: waking
 * a worker elsewhere costs more than its copies.
 */
#define SROCE_RESP_STREAK	SZ_8K

/* What executing a request packet ended in. */
enum sroce_resp_result {
	SROCE_RESP_OK,
	SROCE_RESP_RNR,			/* no receive WQE: RNR NAK */
	SROCE_RESP_NAK_INVALID,		/* NAK invalid request, QP to ERR */
	SROCE_RESP_NAK_ACCESS,		/* NAK remote access error, ERR */
	SROCE_RESP_NAK_OP,		/* NAK remote operational error, ERR */
	SROCE_RESP_DROP,		/* UC: the message is lost, QP stays */
};

/**
 * struct sroce_resp - per-QP responder state
 * @task: the responder's execution context
 * @rxq: received requests waiting for the task; its lock also guards
 *	@closed
 * @closed: the QP is being destroyed: @rxq takes nothing more
 * @kc: key cache of the SEND scatter; flushed at every message end
 * @rwqe: private copy of the receive WQE the current SEND (or the
 *	WRITE with immediate) consumes
 * @has_rwqe: @rwqe is taken (from the RQ: still in the ring until the
 *	receive completes; from the SRQ: already out of it)
 * @rq_idx: RQ consumer index of @rwqe when it came from the RQ
 * @cur: scatter cursor in @rwqe
 * @rkey: the R_Key of the current WRITE, resolved again for each packet
 * @va: where its next payload byte goes
 * @resid: bytes of the WRITE still expected
 * @wlen: the DMA length of the current WRITE (its RETH), the byte_len of
 *	a WRITE with immediate's receive completion
 * @psn: the expected PSN (ePSN)
 * @msn: message sequence number: requests completed
 * @prev: opcode of the last request packet executed, or NULL at a
 *	message boundary
 * @nak_sent: a PSN sequence error (or RNR) NAK went out for @psn; stay
 *	silent until @psn arrives
 * @uc_drop: UC only: the rest of the current message is being dropped
 *	(a packet was lost or failed); the next first packet clears it
 * @err_done: the responder has handled the QP's move to ERR (its SRQ
 *	WQE flushed, LAST_WQE_REACHED raised)
 * @res: responder resources of the READ and atomic requests
 *	(sroce_resp_res.c)
 * @serving: the resource whose READ response is going out, or NULL;
 *	requests behind it wait in @rxq
 * @rewind: a duplicate READ joined @rxq since the responder last looked
 *	(guarded by @rxq's lock)
 * @rewind_psn: the earliest PSN such duplicates asked for (same lock)
 * @arrivals: request packets taken from @rxq since the last reset
 * @arrival: arrival number of the packet being executed
 * @streak: payload bytes queued since the last packet that ended a
 *	message (guarded by @rxq's lock)
 */
struct sroce_resp {
	struct sroce_task task;
	struct sk_buff_head rxq;
	bool closed;
	struct sroce_key_cache kc;
	struct sroce_recv_wqe rwqe;
	bool has_rwqe;
	u32 rq_idx;
	struct sroce_sge_cursor cur;
	u32 rkey;
	u64 va;
	u32 resid;
	u32 wlen;
	u32 psn;
	u32 msn;
	const struct sroce_opcode_info *prev;
	bool nak_sent;
	bool uc_drop;
	bool err_done;
	struct sroce_resp_res_ring res;
	struct sroce_resp_res *serving;
	bool rewind;
	u32 rewind_psn;
	u32 arrivals;
	u32 arrival;
	u32 streak;
};

int sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);

/* for the other parts of the responder */
void sroce_resp_send_ack(struct sroce_qp *qp, const struct sroce_qp_params *p,
			 enum sroce_aeth_type type, u8 code, u32 psn);
int sroce_resp_take_rwqe(struct sroce_qp *qp);
bool sroce_resp_release_rwqe(struct sroce_qp *qp);
void sroce_resp_post_wc(struct sroce_qp *qp, const struct ib_wc *wc,
			bool solicited);
u32 sroce_resp_span(const struct sroce_qp *qp, const struct sroce_qp_params *p,
		    const struct sroce_pkt *pkt);
enum sroce_resp_result
sroce_resp_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		struct sk_buff *skb, const struct sroce_pkt *pkt);
enum sroce_resp_result
sroce_resp_write(struct sroce_qp *qp, const struct sroce_qp_params *p,
		 struct sk_buff *skb, const struct sroce_pkt *pkt);
struct sroce_resp_res *sroce_resp_res_take(struct sroce_qp *qp,
					   const struct sroce_qp_params *p,
					   const struct sroce_pkt *pkt,
					   u32 npkts);

#endif /* SROCE_RESP_H */
