// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC requester: walks the send queue from its head, turns each
 * wire WQE into request packets (SEND, RDMA WRITE, RDMA READ, atomics)
 * and sends them.
 *
 * A WQE is started by taking a validated private copy into the SQ slot's
 * struct sroce_send_ctx, numbering its packets and moving the SQ head
 * past it; it then goes out one packet per call of the task function,
 * each packet carrying min(path MTU, bytes left). The payload comes from
 * the WQE's inline data or through the shared SGE cursor. The SQ consumer
 * index is the completer's: it moves only when a WQE completes.
 *
 * Retransmission is go-back-N: the completer sets SROCE_REQ_REWIND and
 * the requester starts again at the oldest WQE not completed, from its
 * first PSN. The responder treats the packets it already has as
 * duplicates.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "sroce_comp.h"
#include "sroce_dev.h"
#include "sroce_hdr.h"
#include "sroce_opcode.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"
#include "sroce_wq.h"
#include "sroce_xmit.h"

/* ---- packets ------------------------------------------------------- */

/**
 * sroce_rc_pkt_alloc() - a request or response packet of a connected QP
 * @qp: the sending QP
 * @p: a snapshot of its parameters (destination QP, AV)
 * @opcode: BTH opcode; must be in the opcode table
 * @psn: BTH PSN
 * @paylen: payload bytes (the pad is added)
 * @ackreq: BTH AckReq
 * @se: BTH SE
 *
 * The BTH is filled, the extension headers and the pad are zeroed; the
 * caller fills the headers and sroce_rc_pkt_payload().
 *
 * Context: any; allocates with GFP_ATOMIC.
 * Return: the skb, or NULL when memory is short.
 */
struct sk_buff *sroce_rc_pkt_alloc(struct sroce_qp *qp,
				   const struct sroce_qp_params *p, u8 opcode,
				   u32 psn, u32 paylen, bool ackreq, bool se)
{
	const struct sroce_opcode_info *info = sroce_opcode_lookup(opcode);
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	unsigned int hlen, pad = sroce_pad_count(paylen);
	struct sroce_bth *bth;
	struct sk_buff *skb;

	if (WARN_ON_ONCE(!info))
		return NULL;
	hlen = sroce_opcode_hdr_len(info);
	skb = sroce_xmit_alloc(sdev, &p->av, hlen + paylen + pad, GFP_ATOMIC);
	if (!skb)
		return NULL;
	memset(skb->data, 0, hlen);
	memset(skb->data + hlen + paylen, 0, pad);

	bth = (struct sroce_bth *)skb->data;
	sroce_bth_set_opcode(bth, opcode);
	sroce_bth_set_se(bth, se);
	sroce_bth_set_pad(bth, pad);
	sroce_bth_set_tver(bth, SROCE_TVER);
	sroce_bth_set_pkey(bth, SROCE_DEFAULT_PKEY);
	sroce_bth_set_destqp(bth, p->dest_qpn);
	sroce_bth_set_ackreq(bth, ackreq);
	sroce_bth_set_psn(bth, psn);
	return skb;
}

static void *sroce_rc_pkt_hdr(struct sk_buff *skb, enum sroce_hdr_id id)
{
	const struct sroce_opcode_info *info;

	info = sroce_opcode_lookup(sroce_bth_opcode((void *)skb->data));
	return skb->data + sroce_opcode_hdr_offset(info, id);
}

/**
 * sroce_rc_pkt_payload() - where the payload of a packet being built goes
 * @skb: from sroce_rc_pkt_alloc()
 *
 * Return: the first payload byte, right after the opcode's headers.
 */
void *sroce_rc_pkt_payload(struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;

	info = sroce_opcode_lookup(sroce_bth_opcode((void *)skb->data));
	return skb->data + sroce_opcode_hdr_len(info);
}

/**
 * sroce_rc_pkt_send() - send a packet of a connected QP to its peer
 * @qp: the QP
 * @p: the snapshot of its parameters the packet was built from
 * @skb: the packet; consumed
 *
 * Context: any.
 * Return: 0, or the error of sroce_xmit() (the packet is lost; the
 * retransmission recovers).
 */
int sroce_rc_pkt_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		      struct sk_buff *skb)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	unsigned int len = skb->len;
	int err;

	err = sroce_xmit(sdev, &p->av, p->sport, skb);
	if (err) {
		sroce_stats_inc(sdev, SROCE_CNT_SEND_ERR);
		return err;
	}
	sroce_stats_inc(sdev, SROCE_CNT_SENT_PKTS);
	sroce_stats_add(sdev, SROCE_CNT_SENT_BYTES, len);
	return 0;
}

/* ---- opcodes ------------------------------------------------------- */

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

/* The RC opcode of a packet of a SEND or WRITE message. */
static u8 sroce_req_opcode(u32 wr_opcode, bool first, bool last)
{
	static const u8 send[2][2] = {
		{ IB_OPCODE_RC_SEND_MIDDLE, IB_OPCODE_RC_SEND_LAST },
		{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_ONLY },
	};
	static const u8 write[2][2] = {
		{ IB_OPCODE_RC_RDMA_WRITE_MIDDLE, IB_OPCODE_RC_RDMA_WRITE_LAST },
		{ IB_OPCODE_RC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_ONLY },
	};
	bool wr = wr_opcode == IB_WR_RDMA_WRITE ||
		  wr_opcode == IB_WR_RDMA_WRITE_WITH_IMM;

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

/* Packets of a message: READ responses or request packets. */
static u32 sroce_req_npkts(const struct sroce_send_wqe *wqe, u32 mtu)
{
	if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD || !wqe->length)
		return 1;
	return DIV_ROUND_UP(wqe->length, mtu);
}

/* ---- starting a WQE ------------------------------------------------ */

static bool sroce_req_is_wire(u32 wr_opcode)
{
	return wr_opcode != IB_WR_LOCAL_INV && wr_opcode != IB_WR_BIND_MW &&
	       wr_opcode != IB_WR_REG_MR;
}

/* May the WQE start now, given fences and the READ/atomic limit? */
static bool sroce_req_may_start(struct sroce_qp *qp,
				const struct sroce_qp_params *p,
				const struct sroce_send_wqe *wqe)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->sq.lock);

	if ((wqe->send_flags & IB_SEND_FENCE) && req->rd_atomic)
		return false;
	return !sroce_wr_is_rd_atomic(wqe->opcode) ||
	       req->rd_atomic < max_t(u32, p->max_rd_atomic, 1);
}

/*
 * Start the WQE at the SQ head. Returns 1 when one started or a local
 * operation ran, 0 when there is nothing to start now.
 */
static int sroce_req_start(struct sroce_qp *qp,
			   const struct sroce_qp_params *p)
{
	struct sroce_qp_sq *sq = &qp->sq;
	struct sroce_req *req = &qp->req;
	struct sroce_wqe_limits lim = {
		.qp_type = qp->ibqp.qp_type,
		.max_sge = sq->max_sge,
		.max_inline = sq->max_inline,
		.user = qp->user,
	};
	u32 mtu = ib_mtu_enum_to_int(p->path_mtu);
	struct sroce_send_ctx *ctx;
	enum ib_wc_status status;
	unsigned long flags;
	bool at_cons;
	u32 head;

	spin_lock_irqsave(&sq->lock, flags);
	head = sq->head;
	if (head == sroce_queue_load_prod(&sq->queue)) {
		spin_unlock_irqrestore(&sq->lock, flags);
		return 0;
	}
	ctx = &req->ctx[head];
	status = sroce_wqe_check_send(sroce_queue_slot(&sq->queue, head), &lim,
				      &ctx->wqe);
	if (status != IB_WC_SUCCESS || !sroce_req_is_wire(ctx->wqe.opcode)) {
		/* The verbs layer runs these once nothing is in flight. */
		at_cons = head == sq->queue.cons;
		spin_unlock_irqrestore(&sq->lock, flags);
		if (!at_cons)
			return 0;
		sroce_sq_start_local(qp);
		return 1;
	}
	if (!sroce_req_may_start(qp, p, &ctx->wqe)) {
		spin_unlock_irqrestore(&sq->lock, flags);
		return 0;
	}
	ctx->status = IB_WC_SUCCESS;
	ctx->first_psn = req->psn;
	ctx->last_psn = sroce_psn_add(req->psn,
				      sroce_req_npkts(&ctx->wqe, mtu) - 1);
	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		req->rd_atomic++;
	sq->head = sroce_ring_next(head, sq->queue.index_mask);
	spin_unlock_irqrestore(&sq->lock, flags);

	req->cur_idx = head;
	req->sent = 0;
	req->npkt = 0;
	req->in_msg = true;
	sroce_cursor_init(&req->cur, ctx->wqe.length);
	return 1;
}

/* ---- sending ------------------------------------------------------- */

/* Gather @len bytes of the current WQE's payload into @buf. */
static int sroce_req_gather(struct sroce_qp *qp, struct sroce_send_ctx *ctx,
			    void *buf, u32 len)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	const struct rxe_send_wqe *slot;

	slot = sroce_queue_slot(&qp->sq.queue, req->cur_idx);
	if (ctx->wqe.send_flags & IB_SEND_INLINE) {
		memcpy(buf, sroce_wqe_inline(slot) + req->sent, len);
		return 0;
	}
	return sroce_copy_data(sdev, qp->ibqp.pd, &req->kc,
			       sroce_wqe_sges(slot), ctx->wqe.num_sge,
			       &req->cur, buf, len, SROCE_COPY_FROM_MR);
}

/* The one packet of a READ request or an atomic. */
static struct sk_buff *sroce_req_rd_atomic_pkt(struct sroce_qp *qp,
					       const struct sroce_qp_params *p,
					       struct sroce_send_ctx *ctx)
{
	const struct sroce_send_wqe *wqe = &ctx->wqe;
	struct sroce_atmeth *atm;
	struct sroce_reth *reth;
	struct sk_buff *skb;
	u8 opcode;

	if (wqe->opcode == IB_WR_RDMA_READ) {
		skb = sroce_rc_pkt_alloc(qp, p, IB_OPCODE_RC_RDMA_READ_REQUEST,
					 ctx->first_psn, 0, true, false);
		if (!skb)
			return NULL;
		reth = sroce_rc_pkt_hdr(skb, SROCE_HDR_RETH);
		sroce_reth_set_va(reth, wqe->wr.rdma.remote_addr);
		sroce_reth_set_rkey(reth, wqe->wr.rdma.rkey);
		sroce_reth_set_len(reth, wqe->length);
		return skb;
	}
	opcode = wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
		 IB_OPCODE_RC_COMPARE_SWAP : IB_OPCODE_RC_FETCH_ADD;
	skb = sroce_rc_pkt_alloc(qp, p, opcode, ctx->first_psn, 0, true, false);
	if (!skb)
		return NULL;
	atm = sroce_rc_pkt_hdr(skb, SROCE_HDR_ATMETH);
	sroce_atmeth_set_va(atm, wqe->wr.atomic.remote_addr);
	sroce_atmeth_set_rkey(atm, wqe->wr.atomic.rkey);
	if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
		sroce_atmeth_set_swap_add(atm, wqe->wr.atomic.swap);
		sroce_atmeth_set_compare(atm, wqe->wr.atomic.compare_add);
	} else {
		sroce_atmeth_set_swap_add(atm, wqe->wr.atomic.compare_add);
	}
	return skb;
}

/* The next packet of a SEND or WRITE; NULL with *@status on failure. */
static struct sk_buff *sroce_req_data_pkt(struct sroce_qp *qp,
					  const struct sroce_qp_params *p,
					  struct sroce_send_ctx *ctx,
					  enum ib_wc_status *status)
{
	const struct sroce_send_wqe *wqe = &ctx->wqe;
	struct sroce_req *req = &qp->req;
	u32 resid = wqe->length - req->sent;
	u32 len = sroce_pkt_payload(resid, ib_mtu_enum_to_int(p->path_mtu));
	bool first = !req->npkt, last = len == resid;
	u8 opcode = sroce_req_opcode(wqe->opcode, first, last);
	struct sroce_reth *reth;
	struct sk_buff *skb;
	bool ackreq, se;
	int err;

	ackreq = last || req->since_ackreq + 1 >= SROCE_ACKREQ_INTERVAL;
	se = last && (wqe->send_flags & IB_SEND_SOLICITED);
	skb = sroce_rc_pkt_alloc(qp, p, opcode, sroce_psn_add(ctx->first_psn,
							      req->npkt),
				 len, ackreq, se);
	if (!skb)
		return NULL;
	if (first && (wqe->opcode == IB_WR_RDMA_WRITE ||
		      wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM)) {
		reth = sroce_rc_pkt_hdr(skb, SROCE_HDR_RETH);
		sroce_reth_set_va(reth, wqe->wr.rdma.remote_addr);
		sroce_reth_set_rkey(reth, wqe->wr.rdma.rkey);
		sroce_reth_set_len(reth, wqe->length);
	}
	if (last && (wqe->opcode == IB_WR_SEND_WITH_IMM ||
		     wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM))
		sroce_immdt_set_imm(sroce_rc_pkt_hdr(skb, SROCE_HDR_IMMDT),
				    (__force __be32)wqe->ex);
	if (last && wqe->opcode == IB_WR_SEND_WITH_INV)
		sroce_ieth_set_rkey(sroce_rc_pkt_hdr(skb, SROCE_HDR_IETH),
				    wqe->ex);

	err = sroce_req_gather(qp, ctx, sroce_rc_pkt_payload(skb), len);
	if (err) {
		kfree_skb(skb);
		*status = IB_WC_LOC_PROT_ERR;
		return NULL;
	}
	req->since_ackreq = ackreq ? 0 : req->since_ackreq + 1;
	req->sent += len;
	if (last)
		req->npkt = sroce_psn_diff(ctx->last_psn, ctx->first_psn);
	return skb;
}

/* Send the next packet of the WQE in progress. */
static int sroce_req_send_next(struct sroce_qp *qp,
			       const struct sroce_qp_params *p)
{
	struct sroce_req *req = &qp->req;
	struct sroce_send_ctx *ctx = &req->ctx[req->cur_idx];
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct sk_buff *skb;

	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode)) {
		skb = sroce_req_rd_atomic_pkt(qp, p, ctx);
		req->npkt = sroce_psn_diff(ctx->last_psn, ctx->first_psn);
	} else {
		skb = sroce_req_data_pkt(qp, p, ctx, &status);
	}
	if (!skb && status == IB_WC_SUCCESS)
		return 1;	/* no memory: try again */
	if (!skb) {
		/* The completer reports it once the WQEs before it are done. */
		ctx->status = status;
		req->in_msg = false;
		sroce_key_cache_flush(&req->kc);
		sroce_task_schedule(&qp->comp.task);
		return 0;
	}

	req->npkt++;
	if (sroce_psn_diff(ctx->last_psn, ctx->first_psn) < (s32)req->npkt) {
		req->in_msg = false;
		req->psn = sroce_psn_next(ctx->last_psn);
		sroce_key_cache_flush(&req->kc);
	}
	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_RDMA_SENDS);
	sroce_rc_pkt_send(qp, p, skb);
	sroce_comp_arm_retry(qp, p);
	return 1;
}

/**
 * sroce_req_rewind() - go back to the oldest WQE not yet completed
 * @qp: the QP
 *
 * Context: the requester's task only.
 */
void sroce_req_rewind(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_qp_sq *sq = &qp->sq;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&sq->lock, flags);
	if (sq->head != sq->queue.cons) {
		req->psn = req->ctx[sq->queue.cons].first_psn;
		for (i = sq->queue.cons; i != sq->head;
		     i = sroce_ring_next(i, sq->queue.index_mask))
			if (sroce_wr_is_rd_atomic(req->ctx[i].wqe.opcode))
				req->rd_atomic--;
		sq->head = sq->queue.cons;
	}
	spin_unlock_irqrestore(&sq->lock, flags);
	req->in_msg = false;
	req->since_ackreq = 0;
	sroce_key_cache_flush(&req->kc);
}

static int sroce_req_run(void *arg)
{
	struct sroce_qp *qp = arg;
	struct sroce_qp_params p;
	int ret;

	if (qp->ibqp.qp_type != IB_QPT_RC) {
		/* UC and UD are not wired in yet: their wire WQEs wait */
		sroce_sq_start_local(qp);
		return 0;
	}
	sroce_qp_params_get(qp, &p);
	if (p.state != IB_QPS_RTS) {
		sroce_key_cache_flush(&qp->req.kc);
		qp->req.in_msg = false;
		return 0;
	}
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
			    GFP_KERNEL);
	if (!req->ctx)
		return -ENOMEM;
	sroce_key_cache_init(&req->kc);
	sroce_task_init(&req->task, "req", sroce_req_run, qp);
	return 0;
}

/**
 * sroce_req_reset() - forget everything in flight
 * @qp: the QP, with its requester task disabled (or never run)
 */
void sroce_req_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	sroce_key_cache_flush(&req->kc);
	req->in_msg = false;
	req->rd_atomic = 0;
	req->since_ackreq = 0;
	req->flags = 0;
}

/**
 * sroce_req_cleanup() - free the requester of a QP being destroyed
 * @qp: the QP, with its requester task disabled
 */
void sroce_req_cleanup(struct sroce_qp *qp)
{
	sroce_req_reset(qp);
	sroce_task_cleanup(&qp->req.task);
	kvfree(qp->req.ctx);
	qp->req.ctx = NULL;
}
