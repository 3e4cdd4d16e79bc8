// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC completer: retires send WQEs in order.
 *
 * Responses arrive on the completer's queue from the receive path. An
 * ACK retires every SEND and WRITE WQE whose last PSN it covers; a READ
 * completes when its last response packet has been scattered into the
 * WQE's SGE list (through the shared SGE cursor), an atomic when its
 * atomic ACK has been written into the WQE's one buffer. A NAK retires
 * what lies before its PSN and then asks the requester to resend (PSN
 * sequence error), waits (RNR) or completes the WQE in error and moves
 * the QP to ERR (the other codes). The SQ consumer index moves, and the
 * send CQE is posted (if the WQE is signaled, the QP signals all, or the
 * status is an error), only here.
 *
 * The retry timer runs while request packets are unacknowledged; when it
 * expires the requester goes back to the oldest WQE (go-back-N), up to
 * retry_cnt times in a row without progress.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/timer.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "sroce_comp.h"
#include "sroce_cq.h"
#include "sroce_dev.h"
#include "sroce_hdr.h"
#include "sroce_pkt.h"
#include "sroce_qp.h"
#include "sroce_req.h"
#include "sroce_stats.h"
#include "sroce_wqe.h"

/* IBA vol 1, table 45 (9.7.5.2.8): the RNR NAK timer field, in us. */
static const u32 sroce_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/**
 * sroce_rnr_timer_usecs() - the delay an RNR NAK timer code asks for
 * @code: the 5-bit timer field of an RNR NAK
 *
 * Return: microseconds.
 */
unsigned long sroce_rnr_timer_usecs(u8 code)
{
	return sroce_rnr_usecs[code & 31];
}

static unsigned long sroce_ack_timeout(u8 timeout)
{
	/* 4.096 us * 2^timeout, at least one jiffy */
	return max(1UL, usecs_to_jiffies((4096ULL << min_t(u8, timeout, 31)) /
					 1000));
}

/**
 * sroce_comp_arm_retry() - start the retry timer if it is not running
 * @qp: the QP; a request packet was just sent
 * @p: its parameters (timeout 0 means no timer)
 *
 * Context: any.
 */
void sroce_comp_arm_retry(struct sroce_qp *qp, const struct sroce_qp_params *p)
{
	if (p->timeout && !timer_pending(&qp->comp.retry_timer))
		mod_timer(&qp->comp.retry_timer,
			  jiffies + sroce_ack_timeout(p->timeout));
}

static void sroce_comp_retry_expired(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.retry_timer);

	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	sroce_task_schedule(&qp->comp.task);
}

static void sroce_comp_rnr_expired(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rnr_timer);

	set_bit(SROCE_REQ_REWIND, &qp->req.flags);
	sroce_task_schedule(&qp->req.task);
}

/* The oldest WQE in flight, if any. */
static bool sroce_comp_oldest(struct sroce_qp *qp, u32 *idx)
{
	unsigned long flags;
	bool any;

	spin_lock_irqsave(&qp->sq.lock, flags);
	any = qp->sq.head != qp->sq.queue.cons;
	*idx = qp->sq.queue.cons;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return any;
}

static void sroce_comp_fill_wc(struct sroce_qp *qp,
			       const struct sroce_send_wqe *wqe,
			       enum ib_wc_status status, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wqe->wr_id;
	wc->status = status;
	wc->opcode = sroce_wqe_wc_opcode(wqe->opcode);
	wc->qp = &qp->ibqp;
	wc->port_num = SROCE_PORT_NUM;
	if (status != IB_WC_SUCCESS)
		return;
	wc->byte_len = wqe->length;
	if (wqe->opcode == IB_WR_SEND_WITH_IMM ||
	    wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		wc->wc_flags = IB_WC_WITH_IMM;
}

/*
 * Complete the WQE at slot @idx, which must still be the oldest in
 * flight. Moves the QP to ERR for an error status.
 */
static void sroce_comp_done(struct sroce_qp *qp,
			    const struct sroce_qp_params *p, u32 idx,
			    enum ib_wc_status status)
{
	struct sroce_comp *comp = &qp->comp;
	struct sroce_qp_sq *sq = &qp->sq;
	struct sroce_send_ctx *ctx = &qp->req.ctx[idx];
	bool lost = false, post, more;
	unsigned long flags;
	struct ib_wc wc;

	sroce_comp_fill_wc(qp, &ctx->wqe, status, &wc);
	spin_lock_irqsave(&sq->lock, flags);
	if (sq->queue.cons != idx || sq->head == idx) {
		spin_unlock_irqrestore(&sq->lock, flags);
		return;		/* flushed meanwhile */
	}
	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		qp->req.rd_atomic--;
	sroce_queue_advance_consumer(&sq->queue);
	more = sq->head != sq->queue.cons;
	post = status != IB_WC_SUCCESS || qp->sig_all ||
	       (ctx->wqe.send_flags & IB_SEND_SIGNALED);
	if (post)
		lost = sroce_cq_post(qp->scq, &wc, false);
	spin_unlock_irqrestore(&sq->lock, flags);

	sroce_key_cache_flush(&comp->kc);
	comp->retry_left = p->retry_cnt;
	comp->rnr_left = p->rnr_retry;
	if (more && p->timeout)
		mod_timer(&comp->retry_timer,
			  jiffies + sroce_ack_timeout(p->timeout));
	else
		del_timer(&comp->retry_timer);
	sroce_task_schedule(&qp->req.task);
	if (lost)
		sroce_qp_fatal(qp);
	else if (status != IB_WC_SUCCESS)
		sroce_qp_error(qp);
}

/*
 * Retire the SEND and WRITE WQEs an ACK of @psn covers (@inclusive) or
 * that lie before a NAK of @psn. Returns false if the QP went to ERR.
 */
static bool sroce_comp_acked(struct sroce_qp *qp,
			     const struct sroce_qp_params *p, u32 psn,
			     bool inclusive)
{
	struct sroce_send_ctx *ctx;
	u32 idx;
	s32 d;

	while (sroce_comp_oldest(qp, &idx)) {
		ctx = &qp->req.ctx[idx];
		if (ctx->status != IB_WC_SUCCESS) {
			sroce_comp_done(qp, p, idx, ctx->status);
			return false;
		}
		if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
			break;	/* only its responses complete it */
		d = sroce_psn_diff(ctx->last_psn, psn);
		if (inclusive ? d > 0 : d >= 0)
			break;
		sroce_comp_done(qp, p, idx, IB_WC_SUCCESS);
	}
	return true;
}

static enum ib_wc_status sroce_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

static void sroce_comp_rnr(struct sroce_qp *qp,
			   const struct sroce_qp_params *p, u8 code)
{
	struct sroce_comp *comp = &qp->comp;
	u32 idx;

	sroce_stats_inc(to_sroce_dev(qp->ibqp.device), SROCE_CNT_RCVD_RNR);
	if (!sroce_comp_oldest(qp, &idx))
		return;
	if (p->rnr_retry != SROCE_RNR_RETRY_INFINITE) {
		if (!comp->rnr_left) {
			sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
					SROCE_CNT_RNR_RETRY_EXCEEDED);
			sroce_comp_done(qp, p, idx, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		comp->rnr_left--;
	}
	del_timer(&comp->retry_timer);
	mod_timer(&comp->rnr_timer,
		  jiffies + max(1UL, usecs_to_jiffies(sroce_rnr_timer_usecs(code))));
}

/*
 * An ACK of a PSN beyond every earlier one is forward progress (IBA 9.7.6.1):
 * a long message still in flight gets a fresh local ACK timeout and retry
 * budget, so that its duration is not bounded by timeout * (retry_cnt + 1).
 */
static void sroce_comp_progress(struct sroce_qp *qp,
				const struct sroce_qp_params *p, u32 psn)
{
	struct sroce_comp *comp = &qp->comp;
	u32 idx;

	if (sroce_psn_diff(psn, comp->ack_psn) <= 0)
		return;
	comp->ack_psn = psn;
	if (!sroce_comp_oldest(qp, &idx))
		return;
	comp->retry_left = p->retry_cnt;
	if (p->timeout)
		mod_timer(&comp->retry_timer,
			  jiffies + sroce_ack_timeout(p->timeout));
}

/* An ACK, RNR NAK or NAK (the AETH of an ACKNOWLEDGE packet). */
static void sroce_comp_ack(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   const struct sroce_aeth *aeth, u32 psn)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	u8 code = sroce_aeth_code(aeth);
	u32 idx;

	switch (sroce_aeth_type(aeth)) {
	case SROCE_AETH_ACK:
		if (sroce_comp_acked(qp, p, psn, true))
			sroce_comp_progress(qp, p, psn);
		break;
	case SROCE_AETH_RNR_NAK:
		if (sroce_comp_acked(qp, p, psn, false))
			sroce_comp_rnr(qp, p, code);
		break;
	case SROCE_AETH_NAK:
		if (!sroce_comp_acked(qp, p, psn, false))
			break;
		if (code == SROCE_NAK_PSN_SEQ_ERR) {
			sroce_stats_inc(sdev, SROCE_CNT_RCVD_SEQ_ERR);
			set_bit(SROCE_REQ_REWIND, &qp->req.flags);
			sroce_task_schedule(&qp->req.task);
		} else if (sroce_comp_oldest(qp, &idx)) {
			sroce_comp_done(qp, p, idx, sroce_nak_status(code));
		}
		break;
	default:
		break;
	}
}

/* A READ response packet, or an atomic ACK, for the oldest WQE. */
static void sroce_comp_data(struct sroce_qp *qp, const struct sroce_qp_params *p,
			    struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_comp *comp = &qp->comp;
	const struct rxe_send_wqe *slot;
	struct sroce_send_ctx *ctx;
	bool atomic = pkt->opcode == IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE;
	bool is_read;
	u64 orig;
	void *buf;
	u32 idx, len;
	int err;

	if (!sroce_comp_acked(qp, p, pkt->psn, false) ||
	    !sroce_comp_oldest(qp, &idx))
		return;
	ctx = &qp->req.ctx[idx];
	is_read = ctx->wqe.opcode == IB_WR_RDMA_READ;
	if (atomic == is_read ||
	    !sroce_wr_is_rd_atomic(ctx->wqe.opcode) ||
	    !sroce_psn_in_window(pkt->psn, ctx->first_psn,
				 sroce_psn_diff(ctx->last_psn,
						ctx->first_psn) + 1))
		return;		/* stale or not for this WQE: drop */
	if (pkt->psn == ctx->first_psn) {
		sroce_cursor_init(&comp->cur, ctx->wqe.length);
		comp->rd_psn = pkt->psn;
	}
	if (pkt->psn != comp->rd_psn)
		return;		/* a gap: the retry timer resends the READ */

	if (atomic) {
		/* the pre-operation value, in host order, into one buffer */
		orig = sroce_atmack_orig(sroce_pkt_atmack(skb, pkt));
		buf = &orig;
		len = sizeof(orig);
	} else {
		buf = skb->data + pkt->hdr_len;
		len = pkt->paylen;
	}
	slot = sroce_queue_slot(&qp->sq.queue, idx);
	err = sroce_copy_data(sdev, qp->ibqp.pd, &comp->kc,
			      sroce_wqe_sges(slot), ctx->wqe.num_sge,
			      &comp->cur, buf, len, SROCE_COPY_TO_MR);
	if (err) {
		sroce_comp_done(qp, p, idx, err == -ENOSPC ?
				IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return;
	}
	comp->rd_psn = sroce_psn_next(pkt->psn);
	sroce_comp_progress(qp, p, pkt->psn);
	if (pkt->psn == ctx->last_psn)
		sroce_comp_done(qp, p, idx, IB_WC_SUCCESS);
}

static void sroce_comp_timeout(struct sroce_qp *qp,
			       const struct sroce_qp_params *p)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_comp *comp = &qp->comp;
	u32 idx;

	if (!sroce_comp_oldest(qp, &idx) || timer_pending(&comp->rnr_timer))
		return;
	if (!comp->retry_left) {
		sroce_stats_inc(sdev, SROCE_CNT_RETRY_EXCEEDED);
		sroce_comp_done(qp, p, idx, IB_WC_RETRY_EXC_ERR);
		return;
	}
	comp->retry_left--;
	sroce_stats_inc(sdev, SROCE_CNT_COMPLETER_RETRY);
	set_bit(SROCE_REQ_REWIND, &qp->req.flags);
	sroce_task_schedule(&qp->req.task);
	sroce_comp_arm_retry(qp, p);
}

static int sroce_comp_run(void *arg)
{
	struct sroce_qp *qp = arg;
	struct sroce_comp *comp = &qp->comp;
	const struct sroce_pkt *pkt;
	struct sroce_qp_params p;
	struct sk_buff *skb;
	u32 idx;

	sroce_qp_params_get(qp, &p);
	if (p.state != IB_QPS_RTS && p.state != IB_QPS_SQD) {
		skb_queue_purge(&comp->rxq);
		sroce_key_cache_flush(&comp->kc);
		return 0;
	}
	if (test_and_clear_bit(SROCE_COMP_TIMEOUT, &comp->flags))
		sroce_comp_timeout(qp, &p);
	/* A WQE the requester could not gather fails in its turn. */
	if (sroce_comp_oldest(qp, &idx) &&
	    qp->req.ctx[idx].status != IB_WC_SUCCESS)
		sroce_comp_done(qp, &p, idx, qp->req.ctx[idx].status);

	skb = skb_dequeue(&comp->rxq);
	if (!skb)
		return 0;
	pkt = sroce_skb_pkt(skb);
	if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE)
		sroce_comp_ack(qp, &p, sroce_pkt_aeth(skb, pkt), pkt->psn);
	else
		sroce_comp_data(qp, &p, skb, pkt);
	consume_skb(skb);
	return 1;
}

/**
 * sroce_comp_queue() - hand a response packet to the completer
 * @qp: the QP it is for (the caller holds a reference)
 * @skb: the parsed packet, skb->data at the BTH; consumed
 *
 * Context: any.
 */
void sroce_comp_queue(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_comp *comp = &qp->comp;
	unsigned long flags;
	bool closed;

	spin_lock_irqsave(&comp->rxq.lock, flags);
	closed = comp->closed;
	if (!closed)
		__skb_queue_tail(&comp->rxq, skb);
	spin_unlock_irqrestore(&comp->rxq.lock, flags);
	if (closed)
		kfree_skb(skb);
	else
		sroce_task_schedule(&comp->task);
}

/**
 * sroce_comp_init() - set up the completer of a new QP
 * @qp: the QP
 */
void sroce_comp_init(struct sroce_qp *qp)
{
	struct sroce_comp *comp = &qp->comp;

	skb_queue_head_init(&comp->rxq);
	sroce_key_cache_init(&comp->kc);
	timer_setup(&comp->retry_timer, sroce_comp_retry_expired, 0);
	timer_setup(&comp->rnr_timer, sroce_comp_rnr_expired, 0);
	sroce_task_init(&comp->task, "comp", sroce_comp_run, qp);
}

/**
 * sroce_comp_start() - the QP enters RTS: load the retry budgets
 * @qp: the QP
 * @p: its parameters
 */
void sroce_comp_start(struct sroce_qp *qp, const struct sroce_qp_params *p)
{
	qp->comp.retry_left = p->retry_cnt;
	qp->comp.rnr_left = p->rnr_retry;
	qp->comp.ack_psn = sroce_psn_add(p->sq_psn, SROCE_PSN_MASK);
}

/**
 * sroce_comp_stop() - stop the timers of a QP
 * @qp: the QP; its tasks are disabled
 *
 * Context: process context (waits for running timer callbacks).
 */
void sroce_comp_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->comp.retry_timer);
	del_timer_sync(&qp->comp.rnr_timer);
}

/**
 * sroce_comp_reset() - forget the responses of a QP back in RESET
 * @qp: the QP, its tasks disabled and timers stopped
 */
void sroce_comp_reset(struct sroce_qp *qp)
{
	skb_queue_purge(&qp->comp.rxq);
	sroce_key_cache_flush(&qp->comp.kc);
	qp->comp.flags = 0;
}

/**
 * sroce_comp_cleanup() - the QP is being destroyed
 * @qp: the QP, its tasks disabled and timers stopped
 */
void sroce_comp_cleanup(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->comp.rxq.lock, flags);
	qp->comp.closed = true;
	spin_unlock_irqrestore(&qp->comp.rxq.lock, flags);
	sroce_comp_reset(qp);
	sroce_task_cleanup(&qp->comp.task);
}
