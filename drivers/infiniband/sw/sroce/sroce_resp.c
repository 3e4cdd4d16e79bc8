// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC responder: the receive side of a connected QP.
 *
 * Every request packet first meets the PSN check against the expected
 * PSN (ePSN). The expected one is executed; a duplicate is answered (an
 * ACK of what was already executed, or the READ served again) and never
 * executed twice; one from the future gets a single PSN sequence error
 * NAK and is dropped, like everything after it until the ePSN arrives.
 *
 * Execution: a SEND takes the next receive WQE (RQ or SRQ; RNR NAK when
 * there is none) at its first packet and scatters each packet into it
 * through the shared SGE cursor, resuming where the previous packet of
 * the message stopped; more payload than the WQE holds is an invalid
 * request, never a truncation. An RDMA WRITE resolves its RETH rkey at
 * the first packet and copies every packet to the address it names; with
 * immediate, its last packet also consumes a receive WQE, for the
 * immediate and the completion only. An RDMA READ is answered at once
 * with response packets gathered from the rkey's memory. An ACK goes out
 * for every packet that asks for one.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_hdr.h"
#include "sroce_mr.h"
#include "sroce_pkt.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_resp.h"
#include "sroce_srq.h"
#include "sroce_stats.h"

/* What executing a request packet ended in. */
enum sroce_resp_result {
	SROCE_RESP_OK,
	SROCE_RESP_RNR,			/* no receive WQE: RNR NAK */
	SROCE_RESP_NAK_INVALID,		/* NAK invalid request, QP to ERR */
	SROCE_RESP_NAK_ACCESS,		/* NAK remote access error, ERR */
	SROCE_RESP_NAK_OP,		/* NAK remote operational error, ERR */
};

/* Send an ACKNOWLEDGE with the given syndrome for @psn. */
static void sroce_resp_ack(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   enum sroce_aeth_type type, u8 code, u32 psn)
{
	struct sroce_aeth *aeth;
	struct sk_buff *skb;

	skb = sroce_rc_pkt_alloc(qp, p, IB_OPCODE_RC_ACKNOWLEDGE, psn, 0,
				 false, false);
	if (!skb)
		return;
	aeth = (void *)(skb->data + SROCE_BTH_LEN);
	sroce_aeth_set_type(aeth, type);
	sroce_aeth_set_code(aeth, code);
	sroce_aeth_set_msn(aeth, qp->resp.msn);
	sroce_rc_pkt_send(qp, p, skb);
}

/* Take the next receive WQE: 0, -ENOENT when none, -EINVAL if bad. */
static int sroce_resp_take_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;
	int err;

	if (resp->has_rwqe)
		return 0;
	if (qp->srq) {
		err = sroce_srq_take(qp->srq, &resp->rwqe);
	} else {
		spin_lock_irqsave(&qp->rq.lock, flags);
		if (sroce_queue_empty(&qp->rq.queue))
			err = -ENOENT;
		else
			err = sroce_wqe_check_recv(sroce_queue_consumer_slot(&qp->rq.queue),
						   qp->rq.max_sge, &resp->rwqe);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
	}
	if (err)
		return err;
	resp->has_rwqe = true;
	sroce_cursor_init(&resp->cur, resp->rwqe.length);
	return 0;
}

/* Complete the receive WQE taken; the RQ slot is released here. */
static void sroce_resp_recv_done(struct sroce_qp *qp,
				 const struct sroce_qp_params *p,
				 struct sk_buff *skb,
				 const struct sroce_pkt *pkt,
				 enum ib_wc_status status)
{
	struct sroce_resp *resp = &qp->resp;
	struct ib_wc wc = {
		.wr_id = resp->rwqe.wr_id,
		.status = status,
		.qp = &qp->ibqp,
		.src_qp = p->dest_qpn,
		.port_num = SROCE_PORT_NUM,
	};
	unsigned long flags;
	bool lost;

	if (!resp->has_rwqe)
		return;
	if (status == IB_WC_SUCCESS) {
		wc.opcode = (pkt->info->flags & SROCE_OPF_WRITE) ?
			    IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
		/* WRITE with immediate: the length the RETH announced */
		wc.byte_len = (pkt->info->flags & SROCE_OPF_WRITE) ? resp->wlen :
			      resp->rwqe.length - resp->cur.resid;
		if (sroce_opcode_has_imm(pkt->info)) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = sroce_immdt_imm(sroce_pkt_immdt(skb, pkt));
		} else if (sroce_opcode_has_inv(pkt->info)) {
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = sroce_ieth_rkey(sroce_pkt_ieth(skb, pkt));
		}
	}
	if (!qp->srq) {
		spin_lock_irqsave(&qp->rq.lock, flags);
		sroce_queue_advance_consumer(&qp->rq.queue);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
	}
	resp->has_rwqe = false;
	sroce_key_cache_flush(&resp->kc);
	lost = sroce_cq_post(qp->rcq, &wc, pkt->flags & SROCE_PKT_SOLICITED);
	if (lost)
		sroce_qp_fatal(qp);
}

static enum sroce_resp_result
sroce_resp_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	int err;

	err = sroce_resp_take_rwqe(qp);
	if (err == -ENOENT)
		return SROCE_RESP_RNR;
	if (err)
		return SROCE_RESP_NAK_OP;
	err = sroce_copy_data(sdev, qp->ibqp.pd, &resp->kc, resp->rwqe.sge,
			      resp->rwqe.num_sge, &resp->cur,
			      skb->data + pkt->hdr_len, pkt->paylen,
			      SROCE_COPY_TO_MR);
	if (err) {
		sroce_resp_recv_done(qp, p, skb, pkt, err == -ENOSPC ?
				     IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return err == -ENOSPC ? SROCE_RESP_NAK_INVALID :
					SROCE_RESP_NAK_OP;
	}
	if (sroce_opcode_ends_msg(pkt->info)) {
		if (sroce_opcode_has_inv(pkt->info) &&
		    sroce_key_invalidate(sdev, qp->ibqp.pd,
					 sroce_ieth_rkey(sroce_pkt_ieth(skb, pkt))))
			sroce_resp_recv_done(qp, p, skb, pkt, IB_WC_LOC_QP_OP_ERR);
		else
			sroce_resp_recv_done(qp, p, skb, pkt, IB_WC_SUCCESS);
	}
	return SROCE_RESP_OK;
}

static enum sroce_resp_result
sroce_resp_write(struct sroce_qp *qp, const struct sroce_qp_params *p,
		 struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	bool last = sroce_opcode_ends_msg(pkt->info);
	struct sroce_reth *reth;
	int err = 0;

	if (sroce_opcode_starts_msg(pkt->info)) {
		reth = sroce_pkt_reth(skb, pkt);
		resp->va = sroce_reth_va(reth);
		resp->resid = sroce_reth_len(reth);
		resp->wlen = resp->resid;
		if (!(p->access & IB_ACCESS_REMOTE_WRITE))
			return SROCE_RESP_NAK_ACCESS;
		if (resp->resid) {
			resp->mr = sroce_rkey_get(sdev, sroce_reth_rkey(reth),
						  qp->ibqp.pd, qp->ibqp.qp_num,
						  resp->va, resp->resid,
						  IB_ACCESS_REMOTE_WRITE, &err);
			if (!resp->mr)
				return SROCE_RESP_NAK_ACCESS;
		}
	}
	if (pkt->paylen > resp->resid || (last && pkt->paylen != resp->resid) ||
	    (!last && pkt->paylen != ib_mtu_enum_to_int(p->path_mtu)))
		return SROCE_RESP_NAK_INVALID;
	/* The immediate needs a receive WQE before any byte is placed. */
	if (last && sroce_opcode_has_imm(pkt->info)) {
		err = sroce_resp_take_rwqe(qp);
		if (err)
			return err == -ENOENT ? SROCE_RESP_RNR : SROCE_RESP_NAK_OP;
	}
	if (pkt->paylen && sroce_mr_copy(resp->mr, resp->va,
					 skb->data + pkt->hdr_len, pkt->paylen,
					 SROCE_COPY_TO_MR))
		return SROCE_RESP_NAK_ACCESS;
	resp->va += pkt->paylen;
	resp->resid -= pkt->paylen;
	if (last) {
		if (resp->mr)
			sroce_mr_put(resp->mr);
		resp->mr = NULL;
		if (sroce_opcode_has_imm(pkt->info))
			sroce_resp_recv_done(qp, p, skb, pkt, IB_WC_SUCCESS);
	}
	return SROCE_RESP_OK;
}

/* One READ response packet: @n bytes from @mr at @va (no MR when 0). */
static int sroce_resp_read_pkt(struct sroce_qp *qp,
			       const struct sroce_qp_params *p,
			       struct sroce_mr *mr, u64 va, u32 n, u8 opcode,
			       u32 psn)
{
	struct sroce_aeth *aeth;
	struct sk_buff *skb;

	skb = sroce_rc_pkt_alloc(qp, p, opcode, psn, n, false, false);
	if (!skb)
		return -ENOMEM;
	if (opcode != IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE) {
		aeth = (void *)(skb->data + SROCE_BTH_LEN);
		sroce_aeth_set_type(aeth, SROCE_AETH_ACK);
		sroce_aeth_set_code(aeth, SROCE_AETH_CREDITS_INVALID);
		sroce_aeth_set_msn(aeth, qp->resp.msn);
	}
	if (n && sroce_mr_copy(mr, va, sroce_rc_pkt_payload(skb), n,
			       SROCE_COPY_FROM_MR)) {
		kfree_skb(skb);
		return -EFAULT;
	}
	return sroce_rc_pkt_send(qp, p, skb);
}

static u8 sroce_read_resp_opcode(bool first, bool last)
{
	if (first)
		return last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
			      IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	return last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
		      IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
}

/*
 * Serve a READ request (new or duplicate): all response packets now.
 * *@npkts is set to the PSNs the READ uses.
 */
static enum sroce_resp_result
sroce_resp_read(struct sroce_qp *qp, const struct sroce_qp_params *p,
		struct sk_buff *skb, const struct sroce_pkt *pkt, u32 *npkts)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_reth *reth = sroce_pkt_reth(skb, pkt);
	u32 mtu = ib_mtu_enum_to_int(p->path_mtu);
	u32 len = sroce_reth_len(reth), off = 0, n, i;
	u64 va = sroce_reth_va(reth);
	struct sroce_mr *mr = NULL;
	int err = 0;

	*npkts = len ? DIV_ROUND_UP(len, mtu) : 1;
	if (!(p->access & IB_ACCESS_REMOTE_READ) || len > SROCE_MAX_MSG_SIZE)
		return SROCE_RESP_NAK_ACCESS;
	if (len) {
		mr = sroce_rkey_get(sdev, sroce_reth_rkey(reth), qp->ibqp.pd,
				    qp->ibqp.qp_num, va, len,
				    IB_ACCESS_REMOTE_READ, &err);
		if (!mr)
			return SROCE_RESP_NAK_ACCESS;
	}
	sroce_stats_inc(sdev, SROCE_CNT_RDMA_RECVS);
	for (i = 0; i < *npkts; i++, off += n) {
		n = sroce_pkt_payload(len - off, mtu);
		err = sroce_resp_read_pkt(qp, p, mr, va + off, n,
					  sroce_read_resp_opcode(!i,
								 i + 1 == *npkts),
					  sroce_psn_add(pkt->psn, i));
		if (err == -EFAULT)
			break;
	}
	if (mr)
		sroce_mr_put(mr);
	return err == -EFAULT ? SROCE_RESP_NAK_ACCESS : SROCE_RESP_OK;
}

/* Serialises atomics of all QPs against each other. */
static DEFINE_SPINLOCK(sroce_atomic_lock);

static enum sroce_resp_result
sroce_resp_atomic(struct sroce_qp *qp, const struct sroce_qp_params *p,
		  struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_atmeth *atm = sroce_pkt_atmeth(skb, pkt);
	u64 va = sroce_atmeth_va(atm), orig, *target;
	struct sroce_atmack *ack;
	struct sroce_aeth *aeth;
	struct sroce_mr *mr;
	struct sk_buff *rsp;
	int err = 0;

	if (!(p->access & IB_ACCESS_REMOTE_ATOMIC))
		return SROCE_RESP_NAK_ACCESS;
	mr = sroce_rkey_get(sdev, sroce_atmeth_rkey(atm), qp->ibqp.pd,
			    qp->ibqp.qp_num, va, sizeof(u64),
			    IB_ACCESS_REMOTE_ATOMIC, &err);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	target = sroce_mr_atomic_ptr(mr, va);
	if (!target) {
		sroce_mr_put(mr);
		return SROCE_RESP_NAK_INVALID;
	}
	spin_lock_bh(&sroce_atomic_lock);
	orig = *target;
	if (pkt->opcode == IB_OPCODE_RC_COMPARE_SWAP) {
		if (orig == sroce_atmeth_compare(atm))
			*target = sroce_atmeth_swap_add(atm);
	} else {
		*target = orig + sroce_atmeth_swap_add(atm);
	}
	spin_unlock_bh(&sroce_atomic_lock);
	sroce_mr_put(mr);

	qp->resp.msn++;
	rsp = sroce_rc_pkt_alloc(qp, p, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
				 pkt->psn, 0, false, false);
	if (rsp) {
		aeth = (void *)(rsp->data + SROCE_BTH_LEN);
		sroce_aeth_set_code(aeth, SROCE_AETH_CREDITS_INVALID);
		sroce_aeth_set_msn(aeth, qp->resp.msn);
		ack = (void *)(rsp->data + SROCE_BTH_LEN + sizeof(*aeth));
		sroce_atmack_set_orig(ack, orig);
		sroce_rc_pkt_send(qp, p, rsp);
	}
	return SROCE_RESP_OK;
}

/* A request from before the ePSN: answer it, never execute it again. */
static void sroce_resp_duplicate(struct sroce_qp *qp,
				 const struct sroce_qp_params *p,
				 struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	u32 npkts;

	sroce_stats_inc(to_sroce_dev(qp->ibqp.device), SROCE_CNT_DUP_REQ);
	if (pkt->info->flags & SROCE_OPF_READ) {
		sroce_resp_read(qp, p, skb, pkt, &npkts);
		return;
	}
	/* Everything before the ePSN has been executed: say so. */
	sroce_resp_ack(qp, p, SROCE_AETH_ACK, SROCE_AETH_CREDITS_INVALID,
		       sroce_psn_add(qp->resp.psn, SROCE_PSN_MASK));
}

/* Execute the request at the ePSN; *@npkts is the PSNs it used. */
static enum sroce_resp_result
sroce_resp_execute(struct sroce_qp *qp, const struct sroce_qp_params *p,
		   struct sk_buff *skb, const struct sroce_pkt *pkt,
		   u32 *npkts)
{
	u32 kind = pkt->info->flags;

	*npkts = 1;
	if (!sroce_opcode_may_follow(qp->resp.prev, pkt->info))
		return SROCE_RESP_NAK_INVALID;
	if (kind & SROCE_OPF_SEND)
		return sroce_resp_send(qp, p, skb, pkt);
	if (kind & SROCE_OPF_WRITE)
		return sroce_resp_write(qp, p, skb, pkt);
	if (kind & SROCE_OPF_READ)
		return sroce_resp_read(qp, p, skb, pkt, npkts);
	if (kind & SROCE_OPF_ATOMIC)
		return sroce_resp_atomic(qp, p, skb, pkt);
	return SROCE_RESP_NAK_INVALID;
}

static const u8 sroce_resp_nak_code[] = {
	[SROCE_RESP_NAK_INVALID] = SROCE_NAK_INVALID_REQ,
	[SROCE_RESP_NAK_ACCESS] = SROCE_NAK_REM_ACCESS_ERR,
	[SROCE_RESP_NAK_OP] = SROCE_NAK_REM_OP_ERR,
};

static void sroce_resp_request(struct sroce_qp *qp,
			       const struct sroce_qp_params *p,
			       struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	s32 d = sroce_psn_diff(pkt->psn, resp->psn);
	enum sroce_resp_result res;
	u32 npkts;

	if (d < 0) {
		sroce_resp_duplicate(qp, p, skb, pkt);
		return;
	}
	if (d > 0) {
		sroce_stats_inc(sdev, SROCE_CNT_OUT_OF_SEQ_REQ);
		if (!resp->nak_sent)
			sroce_resp_ack(qp, p, SROCE_AETH_NAK,
				       SROCE_NAK_PSN_SEQ_ERR, resp->psn);
		resp->nak_sent = true;
		return;
	}

	res = sroce_resp_execute(qp, p, skb, pkt, &npkts);
	if (res == SROCE_RESP_RNR) {
		sroce_stats_inc(sdev, SROCE_CNT_SENT_RNR);
		sroce_resp_ack(qp, p, SROCE_AETH_RNR_NAK, p->min_rnr_timer,
			       pkt->psn);
		resp->nak_sent = true;
		return;
	}
	if (res != SROCE_RESP_OK) {
		sroce_resp_ack(qp, p, SROCE_AETH_NAK,
			       sroce_resp_nak_code[res], pkt->psn);
		sroce_qp_error(qp);
		return;
	}
	resp->nak_sent = false;
	resp->psn = sroce_psn_add(resp->psn, npkts);
	resp->prev = pkt->info;
	if (sroce_opcode_ends_msg(pkt->info) &&
	    !(pkt->info->flags & SROCE_OPF_ATOMIC)) {
		resp->msn = sroce_psn_next(resp->msn);
		resp->prev = NULL;
	} else if (pkt->info->flags & SROCE_OPF_ATOMIC) {
		resp->prev = NULL;
	}
	if (!resp->prev)
		sroce_key_cache_flush(&resp->kc);
	if ((pkt->flags & SROCE_PKT_ACKREQ) &&
	    !(pkt->info->flags & (SROCE_OPF_READ | SROCE_OPF_ATOMIC)))
		sroce_resp_ack(qp, p, SROCE_AETH_ACK,
			       SROCE_AETH_CREDITS_INVALID, pkt->psn);
}

/* Drop what the responder holds: the QP left the receiving states. */
static void sroce_resp_drop_state(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	skb_queue_purge(&resp->rxq);
	sroce_key_cache_flush(&resp->kc);
	if (resp->mr) {
		sroce_mr_put(resp->mr);
		resp->mr = NULL;
	}
	/* An RQ WQE stays in its ring and is flushed from there. */
	resp->has_rwqe = false;
	resp->prev = NULL;
}

static int sroce_resp_run(void *arg)
{
	struct sroce_qp *qp = arg;
	struct sroce_qp_params p;
	struct sk_buff *skb;

	sroce_qp_params_get(qp, &p);
	if (p.state == IB_QPS_RESET || p.state == IB_QPS_INIT ||
	    p.state == IB_QPS_ERR) {
		sroce_resp_drop_state(qp);
		return 0;
	}
	skb = skb_dequeue(&qp->resp.rxq);
	if (!skb)
		return 0;
	sroce_resp_request(qp, &p, skb, sroce_skb_pkt(skb));
	consume_skb(skb);
	return 1;
}

/**
 * sroce_resp_queue() - hand a request packet to the responder
 * @qp: the QP it is for (the caller holds a reference)
 * @skb: the parsed packet, skb->data at the BTH, linear; consumed
 *
 * Context: any.
 */
void sroce_resp_queue(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;
	bool closed;

	spin_lock_irqsave(&resp->rxq.lock, flags);
	closed = resp->closed;
	if (!closed)
		__skb_queue_tail(&resp->rxq, skb);
	spin_unlock_irqrestore(&resp->rxq.lock, flags);
	if (closed)
		kfree_skb(skb);
	else
		sroce_task_schedule(&resp->task);
}

/**
 * sroce_resp_init() - set up the responder of a new QP
 * @qp: the QP
 */
void sroce_resp_init(struct sroce_qp *qp)
{
	skb_queue_head_init(&qp->resp.rxq);
	sroce_key_cache_init(&qp->resp.kc);
	sroce_task_init(&qp->resp.task, "resp", sroce_resp_run, qp);
}

/**
 * sroce_resp_reset() - forget the requests of a QP back in RESET
 * @qp: the QP, its tasks disabled
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	sroce_resp_drop_state(qp);
	qp->resp.msn = 0;
	qp->resp.nak_sent = false;
}

/**
 * sroce_resp_cleanup() - the QP is being destroyed
 * @qp: the QP, its tasks disabled
 */
void sroce_resp_cleanup(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->resp.rxq.lock, flags);
	qp->resp.closed = true;
	spin_unlock_irqrestore(&qp->resp.rxq.lock, flags);
	sroce_resp_reset(qp);
	sroce_task_cleanup(&qp->resp.task);
}
