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

#include "core/sroce_task.h"
#include "mem/sroce_copy.h"
#include "net/sroce_tx.h"
#include "obj/sroce_wqe.h"

struct sroce_av;
struct sroce_qp;
struct sroce_qp_params;

/**
 * struct sroce_send_ctx - transport state of one started send WQE
 * @wqe: the validated private copy taken when the requester started it;
 *	a retransmission reuses it and never reads the slot's fixed part
 *	again
 * @first_psn: PSN of its first packet
 * @last_psn: PSN of its last packet (of the last READ response packet
 *	for an RDMA READ)
 * @mtu: the path MTU in bytes its packets were cut to
 * @status: IB_WC_SUCCESS, or the local error it met
 * @local: it needs no answer from the wire: a local operation the
 *	requester ran, an invalid WQE, a WQE whose gather failed, or a UC
 *	message whose last packet is out; it completes with @status as soon
 *	as it is the oldest, and is never sent (again). Written with
 *	release semantics after @status, read with acquire semantics.
 *
 * One per SQ slot, indexed like the ring. Written by the requester before
 * it moves the SQ head past the slot (under the SQ lock); read by the
 * completer for slots between the consumer index and the head.
 */
struct sroce_send_ctx {
	struct sroce_send_wqe wqe;
	u32 first_psn;
	u32 last_psn;
	u32 mtu;
	enum ib_wc_status status;
	bool local;
};

/**
 * struct sroce_req - per-QP requester state
 * @task: the requester's execution context
 * @ctx: one struct sroce_send_ctx per SQ slot
 * @kc: key cache of the gather; flushed at every message end
 * @cur: gather cursor in the WQE being sent
 * @cur_idx: SQ slot of the WQE being sent (valid while @in_msg)
 * @psn: PSN of the first packet of the next new WQE
 * @sent_psn: one past the highest PSN sent, noted just before the packet
 *	goes to the netdev (a READ's whole range counts
 *	once its request is out); read by the completer
 * @npkt: index of the next packet of the WQE at @cur_idx
 * @since_ackreq: packets sent since the last one with AckReq
 * @in_msg: a WQE is partly sent
 * @halted: a WQE failed locally; nothing new starts until the completer,
 *	which moves the QP to ERR (RC) or SQE (UC), has flushed the SQ (SQ
 *	lock)
 * @rd_atomic: READ and atomic WQEs between the SQ consumer index and the
 *	head (SQ lock), held to max_rd_atomic
 * @replays: WQEs from the SQ head on that were started before a rewind
 *	and restart from their @ctx (SQ lock)
 * @resume: the first replay restarts at @resume_psn, not its first PSN
 * @resume_psn: see @resume
 * @rewind_psn: the oldest unacknowledged PSN the completer named with
 *	its last rewind request (SQ lock)
 * @flags: SROCE_REQ_* bits, set by the completer
 *
 * Everything but the fields marked "SQ lock" belongs to the requester's
 * task.
 */
struct sroce_req {
	struct sroce_task task;
	struct sroce_send_ctx *ctx;
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
	u32 cur_idx;
	u32 psn;
	u32 sent_psn;
	u32 npkt;
	u32 since_ackreq;
	bool in_msg;
	bool halted;
	u32 rd_atomic;
	u32 replays;
	bool resume;
	u32 resume_psn;
	u32 rewind_psn;
	unsigned long flags;
};

/* sroce_req.flags: go back to the oldest unacknowledged PSN */
#define SROCE_REQ_REWIND	0
/* sroce_req.flags: waiting for ACKs to open the send window */
#define SROCE_REQ_WINDOW_WAIT	1
/*
 * sroce_req.flags: a WQE at the SQ head may not start until earlier ones
 * complete (a fence, the READ/atomic limit, a local operation behind wire
 * WQEs); set under the SQ lock, tested by the completer after it
 * retired a WQE under that lock (sroce_comp_done())
 */
#define SROCE_REQ_COMP_WAIT	2

/*
 * Request packets a QP may have sent past the oldest unacknowledged PSN
 * (while no READ or atomic is outstanding). Bounds the queueing delay in
 * front of the ACKs: with a full netdev backlog ahead of it, an ACK could
 * arrive later than the local ACK timeout on a slow host, and each
 * spurious timeout resends everything after the oldest unacknowledged
 * PSN. Four AckReq intervals, so the window always holds AckReq packets.
 */
#define SROCE_REQ_WINDOW	128

/*
 * The same while the QP's route ends at this host: no netdev queue lies
 * in front of the ACKs, and the packets wait in the responder's queue,
 * which holds SROCE_RESP_BACKLOG, twice as many. At 128 PSNs a QP whose
 * packets span PSNs had two 64 KiB messages in flight at path MTU 1024,
 * and both CPUs waited on each other's wakeups.
 */
#define SROCE_REQ_WINDOW_LOCAL	2048

/*
 * READ response packets a QP may have asked for past the oldest
 * unacknowledged PSN. A responder sends a READ's responses as fast as it
 * can make them, so 128 outstanding READs of 64 KiB at path MTU 1024 put
 * 8192 frames into its transmit queue at once, far more than a usual
 * qdisc holds (1000); the frames it drops each cost a go-back-N that asks
 * for all of them again. 256 frames fit the smallest usual transmit queue
 * with room to spare and still cover several large READs.
 */
#define SROCE_READ_WINDOW	256

/* AckReq at least this often inside long messages. */
#define SROCE_ACKREQ_INTERVAL	32

/**
 * struct sroce_req_pkt - the shape of one request packet of a message
 * @opcode: BTH opcode
 * @offset: message bytes before this packet's payload (for a READ
 *	request: before the bytes it asks for)
 * @paylen: payload bytes the packet carries
 * @dmalen: RETH DMA length: the whole message for the first packet of
 *	a WRITE, the bytes still wanted for a READ request; else 0
 * @npsn: PSNs it uses: 1, or more for a packet that spans several
 *	(sroce_req_pkt_span())
 * @first: the packet starts the message (it carries the RETH of a WRITE)
 * @last: the packet ends the message (immediate, invalidate, SE)
 */
struct sroce_req_pkt {
	u8 opcode;
	u32 offset;
	u32 paylen;
	u32 dmalen;
	u32 npsn;
	bool first;
	bool last;
};

/* for the other parts of the requester */
void sroce_req_halt(struct sroce_qp *qp);
void sroce_req_end_msg(struct sroce_req *req);
void sroce_req_settle(struct sroce_qp *qp, struct sroce_send_ctx *ctx,
		      enum ib_wc_status status);

int sroce_req_init(struct sroce_qp *qp);
void sroce_req_cleanup(struct sroce_qp *qp);
void sroce_req_reset(struct sroce_qp *qp);
void sroce_req_request_rewind(struct sroce_qp *qp, u32 psn);
bool sroce_wr_is_rd_atomic(u32 wr_opcode);

u32 sroce_req_npkts(u32 wr_opcode, u32 length, u32 mtu);
bool sroce_req_pkt_shape(u32 wr_opcode, u32 length, u32 mtu, u32 index,
			 struct sroce_req_pkt *pkt);
void sroce_req_pkt_span(u32 wr_opcode, u32 length, u32 mtu, u32 max,
			struct sroce_req_pkt *pkt);
bool sroce_req_want_ackreq(bool last, u32 since_ackreq);
u32 sroce_req_resume_psn(u32 una, u32 first_psn, u32 last_psn);

#endif /* SROCE_REQ_H */
