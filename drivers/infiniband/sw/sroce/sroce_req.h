/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce RC requester: turns send WQEs into request packets.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_REQ_H
#define SROCE_REQ_H

#include <linux/skbuff.h>
#include <linux/types.h>

#include "sroce_copy.h"
#include "sroce_task.h"
#include "sroce_wqe.h"

struct sroce_qp;
struct sroce_qp_params;

/**
 * struct sroce_send_ctx - transport state of one send WQE in flight
 * @wqe: the validated private copy taken when the requester started it
 * @first_psn: PSN of its first packet
 * @last_psn: PSN of its last packet (of the last READ response packet
 *	for an RDMA READ)
 * @status: IB_WC_SUCCESS, or the local error the requester met while
 *	gathering it; the completer completes it with that status
 *
 * One per SQ slot, indexed like the ring. Written by the requester before
 * it moves the SQ head past the slot (under the SQ lock), read by the
 * completer for slots between the consumer index and the head.
 */
struct sroce_send_ctx {
	struct sroce_send_wqe wqe;
	u32 first_psn;
	u32 last_psn;
	enum ib_wc_status status;
};

/**
 * struct sroce_req - per-QP requester state
 * @task: the requester's execution context
 * @ctx: one struct sroce_send_ctx per SQ slot
 * @kc: key cache of the gather; flushed at every message end
 * @cur: gather cursor in the WQE being sent
 * @cur_idx: SQ slot of the WQE being sent (valid while @in_msg)
 * @psn: PSN of the next request packet
 * @sent: payload bytes of the WQE at @cur_idx already sent
 * @npkt: packets of that WQE already sent
 * @since_ackreq: packets sent since the last one with AckReq
 * @in_msg: a WQE is partly sent
 * @rd_atomic: READ and atomic WQEs between the SQ consumer index and the
 *	head (protected by the SQ lock), held to max_rd_atomic
 * @flags: SROCE_REQ_* bits, set by the completer
 */
struct sroce_req {
	struct sroce_task task;
	struct sroce_send_ctx *ctx;
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
	u32 cur_idx;
	u32 psn;
	u32 sent;
	u32 npkt;
	u32 since_ackreq;
	bool in_msg;
	u32 rd_atomic;
	unsigned long flags;
};

/* sroce_req.flags: go back to the oldest unacknowledged WQE */
#define SROCE_REQ_REWIND	0

/* AckReq at least this often inside long messages. */
#define SROCE_ACKREQ_INTERVAL	32

int sroce_req_init(struct sroce_qp *qp);
void sroce_req_cleanup(struct sroce_qp *qp);
void sroce_req_reset(struct sroce_qp *qp);
void sroce_req_rewind(struct sroce_qp *qp);
bool sroce_wr_is_rd_atomic(u32 wr_opcode);

struct sk_buff *sroce_rc_pkt_alloc(struct sroce_qp *qp,
				   const struct sroce_qp_params *p, u8 opcode,
				   u32 psn, u32 paylen, bool ackreq, bool se);
void *sroce_rc_pkt_payload(struct sk_buff *skb);
int sroce_rc_pkt_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		      struct sk_buff *skb);

#endif /* SROCE_REQ_H */
