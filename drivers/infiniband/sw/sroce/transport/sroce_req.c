// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce requester of connected QPs: walks the send queue from its head,
 * turns each wire WQE into request packets (SEND, RDMA WRITE, RDMA READ,
 * atomics) and sends them.
 *
 * A WQE is started by taking a validated private copy into the SQ slot's
 * struct sroce_send_ctx, numbering its packets and moving the SQ head
 * past it; it then goes out a train per call of the task function (up to
 * 64 KiB of consecutive packets handed to the stack as one skb,
 * sroce_train.c), each packet carrying min(path MTU, bytes left), as far
 * as the send window (sroce_req_window.c) lets it. The payload comes from
 * the WQE's inline data or through the shared SGE cursor. Local
 * operations (LOCAL_INV, REG_MR, BIND_MW) run here too, once every WQE
 * before them has completed, and so do invalid WQEs (with their error);
 * both are then left to the completer like a WQE that was answered. The
 * SQ consumer index is the completer's: it moves, and a send CQE is
 * posted, only there.
 *
 * A UC QP sends the same packets with the UC opcodes, without AckReq and
 * without a send window; a UC WQE is settled (complete, IB_WC_SUCCESS)
 * when its last packet is out, and is never sent again.
 *
 * RC retransmission is go-back-N from the oldest unacknowledged PSN (IBA
 * 9.7.5.1): the completer names that PSN and sets SROCE_REQ_REWIND; the
 * requester moves the SQ head back to the consumer index and replays the
 * WQEs it had started from their saved contexts, the oldest from the
 * named PSN: the rest of a SEND or WRITE from that packet on, and for a
 * partly answered RDMA READ a new READ request for the missing part only
 * (its PSN, address and length moved on by the packets received). The
 * responder treats what it already has as duplicates.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "net/sroce_train.h"
#include "net/sroce_route.h"
#include "net/sroce_tx.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_payload.h"
#include "transport/sroce_req_ud.h"
#include "transport/sroce_req_window.h"
#include "transport/sroce_wq.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_opcode.h"

/* ---- opcodes and packet shapes (pure) -------------------------------- */

/**
 * sroce_wr_is_rd_atomic() - does a work request use responder resources?
 * @wr_opcode: enum ib_wr_opcode
 *
 * Return: true for RDMA READ and the atomics.
 */
bool sroce_wr_is_rd_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_WR_RDMA_READ ||
	       wr_opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static bool sroce_wr_is_write(u32 wr_opcode)
{
	return wr_opcode == IB_WR_RDMA_WRITE ||
	       wr_opcode == IB_WR_RDMA_WRITE_WITH_IMM;
}

/* The RC opcode of a packet of a SEND or WRITE message. */
static u8 sroce_req_data_opcode(u32 wr_opcode, bool first, bool last)
{
	static const u8 send[2][2] = {
		{ IB_OPCODE_RC_SEND_MIDDLE, IB_OPCODE_RC_SEND_LAST },
		{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_ONLY },
	};
	static const u8 write[2][2] = {
		{ IB_OPCODE_RC_RDMA_WRITE_MIDDLE, IB_OPCODE_RC_RDMA_WRITE_LAST },
		{ IB_OPCODE_RC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_ONLY },
	};
	bool wr = sroce_wr_is_write(wr_opcode);

	if (!last)
		return wr ? write[first][0] : send[first][0];
	switch (wr_opcode) {
	case IB_WR_SEND_WITH_IMM:
		return first ? IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE :
			       IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE;
	case IB_WR_SEND_WITH_INV:
		return first ? IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE :
			       IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return first ? IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
			       IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
	default:
		return wr ? write[first][1] : send[first][1];
	}
}

/**
 * sroce_req_npkts() - PSNs a message uses
 * @wr_opcode: enum ib_wr_opcode of a wire operation
 * @length: message bytes
 * @mtu: path MTU in bytes
 *
 * A SEND or WRITE uses one PSN per request packet, a READ one per
 * response packet (IBA 9.7.1: the requester advances its PSN by the
 * number of response packets), an atomic one; a zero-length message
 * still has one packet.
 *
 * Context: any.
 * Return: the number of PSNs, at least 1.
 */
u32 sroce_req_npkts(u32 wr_opcode, u32 length, u32 mtu)
{
	if (wr_opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wr_opcode == IB_WR_ATOMIC_FETCH_AND_ADD || !length)
		return 1;
	return DIV_ROUND_UP(length, mtu);
}

/**
 * sroce_req_pkt_shape() - what request packet @index of a message is
 * @wr_opcode: enum ib_wr_opcode of a wire operation
 * @length: message bytes
 * @mtu: path MTU in bytes
 * @index: PSN offset in the message (for a READ: of the first response
 *	packet the request asks for; a resumed READ starts past 0)
 * @pkt: filled with the packet's shape
 *
 * A SEND or WRITE packet carries min(@mtu, bytes left); its opcode is
 * FIRST, MIDDLE, LAST or ONLY, the last one with the immediate or
 * invalidate variant of the work request. A READ request carries no
 * payload and asks for the rest of the message from @index on; an
 * atomic is one packet.
 *
 * Context: any.
 * Return: false if @index lies past the message.
 */
bool sroce_req_pkt_shape(u32 wr_opcode, u32 length, u32 mtu, u32 index,
			 struct sroce_req_pkt *pkt)
{
	u32 n = sroce_req_npkts(wr_opcode, length, mtu);

	memset(pkt, 0, sizeof(*pkt));
	if (index >= n)
		return false;
	pkt->npsn = 1;
	pkt->offset = index * mtu;
	pkt->first = !index;
	switch (wr_opcode) {
	case IB_WR_RDMA_READ:
		pkt->opcode = IB_OPCODE_RC_RDMA_READ_REQUEST;
		pkt->dmalen = length - pkt->offset;
		pkt->last = true;
		return true;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		pkt->opcode = IB_OPCODE_RC_COMPARE_SWAP;
		pkt->last = true;
		return true;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		pkt->opcode = IB_OPCODE_RC_FETCH_ADD;
		pkt->last = true;
		return true;
	}
	pkt->paylen = sroce_pkt_payload(length - pkt->offset, mtu);
	pkt->last = index + 1 == n;
	pkt->opcode = sroce_req_data_opcode(wr_opcode, pkt->first, pkt->last);
	if (pkt->first && sroce_wr_is_write(wr_opcode))
		pkt->dmalen = length;
	return true;
}

/**
 * sroce_req_pkt_span() - let a SEND or WRITE packet span several PSNs
 * @wr_opcode: enum ib_wr_opcode of a wire operation
 * @length: message bytes
 * @mtu: path MTU in bytes
 * @max: PSNs the packet may use
 * @pkt: the shape sroce_req_pkt_shape() gave for @wr_opcode, @length and
 *	@mtu; widened in place
 *
 * The packet carries the payload of up to @max consecutive packets of
 * its message, starting where it did: one path MTU for each but the
 * message's last, and its opcode is that of a packet that starts the
 * first of them and ends the last (FIRST, MIDDLE, LAST or ONLY), so its
 * headers are those the wire knows. Only a device of this host receives
 * such a packet (sroce_xmit_may_span()). READ requests and atomics are
 * left as they are.
 *
 * Context: any.
 */
void sroce_req_pkt_span(u32 wr_opcode, u32 length, u32 mtu, u32 max,
			struct sroce_req_pkt *pkt)
{
	u32 left = length - pkt->offset;
	u32 n = min(max, DIV_ROUND_UP(left, mtu));

	if (sroce_wr_is_rd_atomic(wr_opcode) || n < 2)
		return;
	pkt->npsn = n;
	pkt->paylen = min(left, n * mtu);
	pkt->last = pkt->paylen == left;
	pkt->opcode = sroce_req_data_opcode(wr_opcode, pkt->first, pkt->last);
}

/**
 * sroce_req_want_ackreq() - does the next request packet ask for an ACK?
 * @last: it is the last packet of its message
 * @since_ackreq: packets sent since the last one that asked
 *
 * The last packet of every message asks (IBA 9.7.6.1.2: the requester
 * sets AckReq where it needs an ACK to complete a WQE), and inside long
 * messages every SROCE_ACKREQ_INTERVAL-th packet, so that the responder's
 * progress comes back before the local ACK timeout.
 *
 * Context: any.
 * Return: the BTH AckReq bit.
 */
bool sroce_req_want_ackreq(bool last, u32 since_ackreq)
{
	return last || since_ackreq + 1 >= SROCE_ACKREQ_INTERVAL;
}

/**
 * sroce_req_resume_psn() - where a retransmission of a WQE starts
 * @una: the oldest unacknowledged PSN the completer named
 * @first_psn: the WQE's first PSN
 * @last_psn: its last PSN
 *
 * Context: any.
 * Return: @una if it lies in the WQE's PSNs, else @first_psn (the name
 * is stale: the WQE it was meant for completed meanwhile).
 */
u32 sroce_req_resume_psn(u32 una, u32 first_psn, u32 last_psn)
{
	if (sroce_psn_in_window(una, first_psn,
				sroce_psn_diff(last_psn, first_psn) + 1))
		return una;
	return first_psn;
}

/* ---- starting a WQE ------------------------------------------------ */

static bool sroce_req_is_wire(u32 wr_opcode)
{
	return wr_opcode != IB_WR_LOCAL_INV && wr_opcode != IB_WR_BIND_MW &&
	       wr_opcode != IB_WR_REG_MR;
}

/* May the wire WQE start now, given fences and the READ/atomic limit? */
static bool sroce_req_may_start(struct sroce_qp *qp,
				const struct sroce_qp_params *p,
				const struct sroce_send_wqe *wqe)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->sq.lock);

	/* IBA 10.8.3.3: a fenced WR waits for every earlier READ/atomic. */
	if ((wqe->send_flags & IB_SEND_FENCE) && req->rd_atomic)
		return false;
	return !sroce_wr_is_rd_atomic(wqe->opcode) ||
	       req->rd_atomic < max_t(u32, p->max_rd_atomic, 1);
}

/* What sroce_req_claim() did with the WQE at the SQ head. */
enum sroce_req_claim {
	SROCE_CLAIM_NONE,	/* nothing may start now */
	SROCE_CLAIM_LOCAL,	/* settled without the wire: the completer's */
	SROCE_CLAIM_WIRE,	/* started: send its packets from *psn */
};

/* A new WQE at @head: check it, run it if local, or number its PSNs. */
static enum sroce_req_claim sroce_req_claim_new(struct sroce_qp *qp,
						const struct sroce_qp_params *p,
						u32 head, u32 *psn)
{
	struct sroce_qp_sq *sq = &qp->sq;
	struct sroce_req *req = &qp->req;
	struct sroce_send_ctx *ctx = &req->ctx[head];
	struct sroce_wqe_limits lim = {
		.qp_type = qp->ibqp.qp_type,
		.max_sge = sq->max_sge,
		.max_inline = sq->max_inline,
		.user = qp->user,
	};
	enum ib_wc_status status;

	lockdep_assert_held(&sq->lock);

	status = sroce_wqe_check_send(sroce_queue_slot(&sq->queue, head), &lim,
				      &ctx->wqe);
	if (status != IB_WC_SUCCESS || !sroce_req_is_wire(ctx->wqe.opcode)) {
		/* Local operations run once nothing is in flight before them. */
		if (head != sq->queue.cons)
			return SROCE_CLAIM_NONE;
		if (status == IB_WC_SUCCESS)
			status = sroce_wq_exec_local(qp, &ctx->wqe);
		if (status != IB_WC_SUCCESS)
			req->halted = true;
		ctx->status = status;
		ctx->first_psn = req->psn;
		ctx->last_psn = req->psn;
		/* @status before @local: the completer reads them lockless */
		smp_store_release(&ctx->local, true);
		return SROCE_CLAIM_LOCAL;
	}
	if (sroce_qp_transport(qp) == SROCE_TRANSPORT_NONE ||
	    !sroce_req_may_start(qp, p, &ctx->wqe))
		return SROCE_CLAIM_NONE;
	ctx->status = IB_WC_SUCCESS;
	ctx->local = false;
	ctx->first_psn = req->psn;
	if (sroce_qp_transport(qp) == IB_OPCODE_UD) {
		/* one packet of at most the port's MTU (IBA 9.8.2) */
		ctx->mtu = sroce_qp_port_mtu(qp);
		ctx->last_psn = ctx->first_psn;
	} else {
		ctx->mtu = ib_mtu_enum_to_int(p->path_mtu);
		ctx->last_psn = sroce_psn_add(req->psn,
					      sroce_req_npkts(ctx->wqe.opcode,
							      ctx->wqe.length,
							      ctx->mtu) - 1);
	}
	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		req->rd_atomic++;
	*psn = ctx->first_psn;
	return SROCE_CLAIM_WIRE;
}

/* A WQE started before a rewind: restart it from its saved context. */
static enum sroce_req_claim sroce_req_claim_replay(struct sroce_qp *qp,
						   const struct sroce_qp_params *p,
						   u32 head, u32 *psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_ctx *ctx = &req->ctx[head];

	lockdep_assert_held(&qp->sq.lock);

	if (ctx->local) {
		req->resume = false;
		return SROCE_CLAIM_LOCAL;	/* never run twice */
	}
	if (!sroce_req_may_start(qp, p, &ctx->wqe))
		return SROCE_CLAIM_NONE;
	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		req->rd_atomic++;
	*psn = ctx->first_psn;
	if (req->resume)
		*psn = sroce_req_resume_psn(req->resume_psn, ctx->first_psn,
					    ctx->last_psn);
	req->resume = false;
	return SROCE_CLAIM_WIRE;
}

/* Put the gather cursor @offset bytes into the WQE's SGE list. */
static void sroce_req_seek(struct sroce_sge_cursor *cur,
			   const struct rxe_sge *sges, u32 num_sge,
			   u32 length, u32 offset)
{
	u32 len;

	sroce_cursor_init(cur, length);
	cur->resid = length - min(offset, length);
	for (cur->cur_sge = 0; cur->cur_sge < num_sge; cur->cur_sge++) {
		len = READ_ONCE(sges[cur->cur_sge].length);
		if (offset < len)
			break;
		offset -= len;
	}
	cur->sge_offset = cur->cur_sge < num_sge ? offset : 0;
}

/*
 * Start the WQE at the SQ head (new or replayed). Returns 1 when one
 * started or settled, 0 when there is nothing to start now.
 */
static int sroce_req_start(struct sroce_qp *qp,
			   const struct sroce_qp_params *p)
{
	struct sroce_qp_sq *sq = &qp->sq;
	struct sroce_req *req = &qp->req;
	enum sroce_req_claim claim = SROCE_CLAIM_NONE;
	struct sroce_send_ctx *ctx;
	unsigned long flags;
	u32 head, psn = 0;
	bool empty;

	spin_lock_irqsave(&sq->lock, flags);
	head = sq->head;
	empty = !sroce_ring_holds(sroce_queue_load_prod(&sq->queue),
				  sq->queue.cons, head, sq->queue.index_mask);
	if (!empty) {
		if (req->replays)
			claim = sroce_req_claim_replay(qp, p, head, &psn);
		else if (!req->halted && p->state == IB_QPS_RTS)
			claim = sroce_req_claim_new(qp, p, head, &psn);
		if (claim == SROCE_CLAIM_NONE)
			set_bit(SROCE_REQ_COMP_WAIT, &req->flags);
	}
	if (claim != SROCE_CLAIM_NONE) {
		if (req->replays)
			req->replays--;
		sq->head = sroce_ring_next(head, sq->queue.index_mask);
	}
	spin_unlock_irqrestore(&sq->lock, flags);

	/* a pause is not made up for */
	if (empty)
		sroce_rate_idle(&qp->rate, SROCE_RATE_REQ);
	if (claim == SROCE_CLAIM_NONE)
		return 0;
	if (claim == SROCE_CLAIM_LOCAL) {
		sroce_task_schedule(&qp->comp.task);
		return 1;
	}
	ctx = &req->ctx[head];
	req->cur_idx = head;
	req->npkt = sroce_psn_diff(psn, ctx->first_psn);
	WRITE_ONCE(req->in_msg, true);
	if (!(ctx->wqe.send_flags & IB_SEND_INLINE))
		sroce_req_seek(&req->cur,
			       sroce_wqe_sges(sroce_queue_slot(&sq->queue, head)),
			       ctx->wqe.num_sge, ctx->wqe.length,
			       req->npkt * ctx->mtu);
	return 1;
}

/* ---- sending ------------------------------------------------------- */

/* Fill the extension headers of a request packet. */
static void sroce_req_fill_hdrs(struct sk_buff *skb,
				const struct sroce_send_wqe *wqe,
				const struct sroce_req_pkt *pkt)
{
	struct sroce_atmeth *atm;
	struct sroce_reth *reth;

	if (wqe->opcode == IB_WR_RDMA_READ ||
	    (pkt->first && sroce_wr_is_write(wqe->opcode))) {
		reth = sroce_tx_hdr(skb, SROCE_HDR_RETH);
		sroce_reth_set_va(reth, wqe->wr.rdma.remote_addr + pkt->offset);
		sroce_reth_set_rkey(reth, wqe->wr.rdma.rkey);
		sroce_reth_set_len(reth, pkt->dmalen);
	} else if (sroce_wr_is_rd_atomic(wqe->opcode)) {
		atm = sroce_tx_hdr(skb, SROCE_HDR_ATMETH);
		sroce_atmeth_set_va(atm, wqe->wr.atomic.remote_addr);
		sroce_atmeth_set_rkey(atm, wqe->wr.atomic.rkey);
		if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
			sroce_atmeth_set_swap_add(atm, wqe->wr.atomic.swap);
			sroce_atmeth_set_compare(atm, wqe->wr.atomic.compare_add);
		} else {
			sroce_atmeth_set_swap_add(atm, wqe->wr.atomic.compare_add);
		}
	}
	if (!pkt->last)
		return;
	if (wqe->opcode == IB_WR_SEND_WITH_IMM ||
	    wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		sroce_immdt_set_imm(sroce_tx_hdr(skb, SROCE_HDR_IMMDT),
				    (__force __be32)wqe->ex);
	if (wqe->opcode == IB_WR_SEND_WITH_INV)
		sroce_ieth_set_rkey(sroce_tx_hdr(skb, SROCE_HDR_IETH),
				    wqe->ex);
}

/**
 * sroce_req_halt() - a WQE failed locally: start nothing new
 * @qp: the QP
 *
 * Until the completer has flushed the SQ.
 *
 * Context: the requester's task.
 */
void sroce_req_halt(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->req.halted = true;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/**
 * sroce_req_end_msg() - the message at req->cur_idx is over
 * @req: the requester
 *
 * Sent, failed or abandoned: the next one starts at the PSN after it.
 *
 * Context: the requester's task.
 */
void sroce_req_end_msg(struct sroce_req *req)
{
	WRITE_ONCE(req->in_msg, false);
	req->psn = sroce_psn_next(req->ctx[req->cur_idx].last_psn);
	sroce_key_cache_flush(&req->kc);
}

/* Is the WQE being sent still in flight (not completed or flushed)? */
static bool sroce_req_cur_in_flight(struct sroce_qp *qp)
{
	struct sroce_qp_sq *sq = &qp->sq;
	unsigned long flags;
	u32 mask = sq->queue.index_mask;
	bool ret;

	spin_lock_irqsave(&sq->lock, flags);
	ret = sroce_ring_count(qp->req.cur_idx, sq->queue.cons, mask) <
	      sroce_ring_count(sq->head, sq->queue.cons, mask);
	spin_unlock_irqrestore(&sq->lock, flags);
	return ret;
}

/* Everything before @end has been sent at least once. */
static void sroce_req_note_sent(struct sroce_req *req, u32 end)
{
	if (sroce_psn_after(end, req->sent_psn))
		WRITE_ONCE(req->sent_psn, end);	/* read by the completer */
}

/**
 * sroce_req_settle() - a WQE needs no answer from the wire
 * @qp: the QP
 * @ctx: the WQE
 * @status: what it completes with
 *
 * A UC or UD message is complete once its last packet is out (IBA
 * 9.8.3: no acknowledgment): it is settled like a local operation, and
 * the completer completes it in turn.
 *
 * Context: the requester's task.
 */
void sroce_req_settle(struct sroce_qp *qp, struct sroce_send_ctx *ctx,
		      enum ib_wc_status status)
{
	ctx->status = status;
	/* @status before @local: the completer reads them lockless */
	smp_store_release(&ctx->local, true);
	sroce_task_schedule(&qp->comp.task);
}

/* Where a train started: what a refused train goes back to. */
struct sroce_req_mark {
	struct sroce_sge_cursor cur;
	u32 npkt;
	u32 since_ackreq;
};

/*
 * The shape of packet @index of @ctx. An RC packet whose payload is not
 * inline spans as many PSNs as sroce_tx_span_max() allows (more than one
 * only while the QP's route ends at this host).
 */
static bool sroce_req_shape(struct sroce_qp *qp,
			    const struct sroce_send_ctx *ctx, u32 index,
			    struct sroce_req_pkt *pkt)
{
	if (!sroce_req_pkt_shape(ctx->wqe.opcode, ctx->wqe.length, ctx->mtu,
				 index, pkt))
		return false;
	if (qp->ibqp.qp_type == IB_QPT_RC &&
	    !(ctx->wqe.send_flags & IB_SEND_INLINE))
		sroce_req_pkt_span(ctx->wqe.opcode, ctx->wqe.length, ctx->mtu,
				   sroce_tx_span_max(ctx->mtu,
						     sroce_route_local(&qp->route)),
				   pkt);
	return true;
}

/* The BTH of packet req->npkt of @ctx, shaped @pkt. */
static void sroce_req_bth(struct sroce_qp *qp, const struct sroce_send_ctx *ctx,
			  const struct sroce_req_pkt *pkt,
			  struct sroce_req_hdr *h)
{
	struct sroce_req *req = &qp->req;

	h->opcode = sroce_opcode_on_transport(pkt->opcode,
					      sroce_qp_transport(qp));
	h->psn = sroce_psn_add(ctx->first_psn, req->npkt);
	h->se = pkt->last && (ctx->wqe.send_flags & IB_SEND_SOLICITED);
	/* UC has no acknowledgements: no AckReq (IBA 9.2.3) */
	h->ackreq = qp->ibqp.qp_type == IB_QPT_RC &&
		    (sroce_req_want_ackreq(pkt->last, req->since_ackreq +
					   pkt->npsn - 1) ||
		     sroce_wr_is_rd_atomic(ctx->wqe.opcode));
}

/*
 * Build packet req->npkt of the WQE in progress, shaped @pkt, and count
 * it as sent. A spanning packet whose pages cannot be lent is narrowed to
 * one PSN (@pkt says so afterwards). Return: the packet; NULL when memory
 * is short; an ERR_PTR when its payload could not be gathered (a bad
 * local key).
 */
static struct sk_buff *sroce_req_build(struct sroce_qp *qp,
				       const struct sroce_qp_params *p,
				       struct sroce_send_ctx *ctx,
				       struct sroce_req_pkt *pkt)
{
	struct sroce_req *req = &qp->req;
	struct sroce_req_hdr h;
	struct sk_buff *skb;

	sroce_req_bth(qp, ctx, pkt, &h);
	skb = sroce_req_pkt_alloc(qp, p, ctx, pkt, &h);
	if (skb == ERR_PTR(-EMSGSIZE)) {
		sroce_req_pkt_shape(ctx->wqe.opcode, ctx->wqe.length, ctx->mtu,
				    req->npkt, pkt);
		sroce_req_bth(qp, ctx, pkt, &h);
		skb = sroce_req_pkt_alloc(qp, p, ctx, pkt, &h);
	}
	if (IS_ERR_OR_NULL(skb))
		return skb;
	if (pkt->npsn > 1)
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_SENT_SPAN);
	sroce_req_fill_hdrs(skb, &ctx->wqe, pkt);

	/* before it leaves: its answer may come back before the send returns */
	sroce_req_note_sent(req, pkt->last ? sroce_psn_next(ctx->last_psn) :
			    sroce_psn_add(h.psn, pkt->npsn));
	req->since_ackreq = h.ackreq ? 0 : req->since_ackreq + pkt->npsn;
	req->npkt = pkt->last ? sroce_psn_diff(ctx->last_psn, ctx->first_psn) + 1 :
				req->npkt + pkt->npsn;
	return skb;
}

/* Pay the rate limiter's gate for a packet built (@pkt as it was built). */
static void sroce_req_charge(struct sroce_qp *qp,
			     const struct sroce_req_pkt *pkt)
{
	u8 opcode = sroce_opcode_on_transport(pkt->opcode,
					      sroce_qp_transport(qp));

	sroce_rate_charge(&qp->rate, SROCE_RATE_REQ,
			  sroce_tx_len(opcode, pkt->paylen));
}

/*
 * Build the packets of the WQE in progress into @t, the first shaped
 * @pkt, until the message ends, the send window or the rate limiter's
 * gate closes, or @t is full. The gate comes first: a packet it holds
 * back has not been gathered.
 * Return: 1 when the message's last packet is in @t; 0 when the rest
 * waits; -ENOMEM when memory is short; -EINVAL when a payload could not
 * be gathered.
 */
static int sroce_req_fill_train(struct sroce_qp *qp,
				const struct sroce_qp_params *p,
				struct sroce_send_ctx *ctx,
				struct sroce_req_pkt *pkt, struct sroce_train *t)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct sroce_req *req = &qp->req;
	struct sk_buff *skb;
	u8 opcode;

	for (;;) {
		if (rc && sroce_req_window_wait(qp, ctx,
						sroce_psn_add(ctx->first_psn,
							      req->npkt)))
			return 0;
		if (!sroce_rate_open(&qp->rate, SROCE_RATE_REQ))
			return 0;
		skb = sroce_req_build(qp, p, ctx, pkt);
		if (IS_ERR(skb))
			return PTR_ERR(skb);
		if (!skb)
			return -ENOMEM;
		sroce_req_charge(qp, pkt);
		sroce_train_add(t, skb);
		if (pkt->npsn > 1)
			t->local_only = true;
		if (pkt->last)
			return 1;
		/* the completer may retire the WQE on an ACK of a first copy */
		if (!sroce_req_cur_in_flight(qp) ||
		    !sroce_req_shape(qp, ctx, req->npkt, pkt))
			return 0;
		opcode = sroce_opcode_on_transport(pkt->opcode,
						   sroce_qp_transport(qp));
		if (sroce_train_full(t, sroce_tx_len(opcode, pkt->paylen)))
			return 0;
	}
}

/* A packet's payload could not be gathered: the WQE fails locally. */
static void sroce_req_fail_local(struct sroce_qp *qp,
				 struct sroce_send_ctx *ctx)
{
	/* The completer reports it once the WQEs before it are done. */
	ctx->status = IB_WC_LOC_PROT_ERR;
	/* @status before @local: the completer reads them lockless */
	smp_store_release(&ctx->local, true);
	sroce_req_halt(qp);
	sroce_req_end_msg(&qp->req);
	sroce_task_schedule(&qp->comp.task);
}

/*
 * The @n packets of a train are out; @ended: the message's last among
 * them. Returns @n: the task counts the call as that many (its budget).
 */
static int sroce_req_sent(struct sroce_qp *qp, const struct sroce_qp_params *p,
			  struct sroce_send_ctx *ctx, bool ended, int n)
{
	if (ended)
		sroce_req_end_msg(&qp->req);
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		if (ended)
			sroce_req_settle(qp, ctx, IB_WC_SUCCESS);
		return n;
	}
	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_RDMA_SENDS);
	sroce_comp_arm_retry(qp, p);
	return n;
}

/*
 * Send the next packets of the WQE in progress: as many as fit one train
 * (sroce_train.c) and the send window.
 */
static int sroce_req_send_next(struct sroce_qp *qp,
			       const struct sroce_qp_params *p)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_ctx *ctx = &req->ctx[req->cur_idx];
	struct sroce_train train;
	struct sroce_req_mark mark;
	struct sroce_req_pkt pkt;
	unsigned int bytes;
	int ret, n;

	if (sroce_qp_transport(qp) == IB_OPCODE_UD)
		return sroce_req_ud_send(qp, p);
	/* The completer may have retired it on an ACK of the first copy. */
	if (!sroce_req_cur_in_flight(qp) ||
	    !sroce_req_shape(qp, ctx, req->npkt, &pkt)) {
		sroce_req_end_msg(req);
		return 1;
	}
	mark.cur = req->cur;
	mark.npkt = req->npkt;
	mark.since_ackreq = req->since_ackreq;
	sroce_train_init(&train);
	ret = sroce_req_fill_train(qp, p, ctx, &pkt, &train);
	if (ret == -EINVAL) {
		if (train.n)
			sroce_qp_train_send(qp, p, &train);
		sroce_req_fail_local(qp, ctx);
		return 0;
	}
	if (!train.n)
		return ret == -ENOMEM;	/* no memory: try again */
	n = train.n;
	bytes = train.bytes;
	if (sroce_qp_train_send(qp, p, &train) == -ENOBUFS) {
		/* The netdev's queue is full: send the train again later. */
		sroce_rate_refund(&qp->rate, bytes);
		req->cur = mark.cur;
		req->npkt = mark.npkt;
		req->since_ackreq = mark.since_ackreq;
		sroce_task_schedule_after(&req->task, SROCE_TX_BACKOFF);
		return 0;
	}
	return sroce_req_sent(qp, p, ctx, ret == 1, n);
}

/**
 * sroce_req_request_rewind() - ask the requester to retransmit
 * @qp: the QP
 * @psn: the oldest unacknowledged PSN: where the oldest WQE resumes
 *
 * Context: the completer (any context); takes the SQ lock.
 */
void sroce_req_request_rewind(struct sroce_qp *qp, u32 psn)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->req.rewind_psn = psn;
	set_bit(SROCE_REQ_REWIND, &qp->req.flags);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	sroce_task_schedule(&qp->req.task);
}

/* Go back to the oldest WQE not yet completed; the requester's task. */
static void sroce_req_rewind(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_qp_sq *sq = &qp->sq;
	struct sroce_send_ctx *ctx;
	unsigned long flags;
	u32 i;

	if (req->in_msg)
		sroce_req_end_msg(req);
	spin_lock_irqsave(&sq->lock, flags);
	for (i = sq->queue.cons; i != sq->head;
	     i = sroce_ring_next(i, sq->queue.index_mask)) {
		ctx = &req->ctx[i];
		if (!ctx->local && sroce_wr_is_rd_atomic(ctx->wqe.opcode))
			req->rd_atomic--;
		req->replays++;
	}
	req->resume = sq->head != sq->queue.cons;
	req->resume_psn = req->rewind_psn;
	sq->head = sq->queue.cons;
	spin_unlock_irqrestore(&sq->lock, flags);
	/*
	 * The first packet resent asks for an ACK: the responder's answer
	 * names how far it really got. Without it, the first ACK would come
	 * SROCE_ACKREQ_INTERVAL packets into the resend; on a host slow
	 * enough for that to take longer than the local ACK timeout, every
	 * retry would time out before any progress, until retry_cnt ran out.
	 */
	req->since_ackreq = SROCE_ACKREQ_INTERVAL;
}

static int sroce_req_run(void *arg)
{
	struct sroce_qp *qp = arg;
	struct sroce_qp_params p;
	int ret;

	sroce_qp_params_get(qp, &p);
	/*
	 * SQD (IBA 10.3.1): the message being sent, and any the completer
	 * asks to send again, go out in full; no new one starts (see
	 * sroce_req_start()). Cutting one short would leave req->psn
	 * behind its PSNs, for the next WQE to reuse.
	 */
	if (p.state != IB_QPS_RTS && p.state != IB_QPS_SQD) {
		sroce_key_cache_flush(&qp->req.kc);
		WRITE_ONCE(qp->req.in_msg, false);
		return 0;
	}
	if (sroce_task_delayed(&qp->req.task))
		return 0;	/* backing off a full netdev queue */
	if (test_and_clear_bit(SROCE_REQ_REWIND, &qp->req.flags))
		sroce_req_rewind(qp);
	if (!qp->req.in_msg) {
		ret = sroce_req_start(qp, &p);
		if (ret <= 0 || !qp->req.in_msg)
			return ret;
	}
	return sroce_req_send_next(qp, &p);
}

/**
 * sroce_req_init() - set up the requester of a new QP
 * @qp: the QP, its send queue made
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int sroce_req_init(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->ctx = kvcalloc(qp->sq.queue.index_mask + 1, sizeof(*req->ctx),
			    GFP_KERNEL_ACCOUNT);
	if (!req->ctx)
		return -ENOMEM;
	sroce_key_cache_init(&req->kc);
	sroce_task_init(&req->task, "req", sroce_req_run, qp);
	return 0;
}

/**
 * sroce_req_reset() - forget everything in flight
 * @qp: the QP, with its requester task disabled (or never run)
 *
 * Context: process context.
 */
void sroce_req_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	sroce_key_cache_flush(&req->kc);
	req->in_msg = false;
	req->halted = false;
	req->rd_atomic = 0;
	req->replays = 0;
	req->resume = false;
	req->since_ackreq = 0;
	req->flags = 0;
}

/**
 * sroce_req_cleanup() - free the requester of a QP being destroyed
 * @qp: the QP, with its requester task disabled
 *
 * Context: process context.
 */
void sroce_req_cleanup(struct sroce_qp *qp)
{
	sroce_req_reset(qp);
	sroce_task_cleanup(&qp->req.task);
	kvfree(qp->req.ctx);
	qp->req.ctx = NULL;
}
