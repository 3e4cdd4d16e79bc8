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
 * the QP to ERR (the other codes).
 *
 * The completer's task is the one owner of the SQ's consumer side: only
 * it moves the consumer index and posts send CQEs, for wire WQEs, for the
 * local operations and invalid WQEs the requester settled, and for the
 * flush in ERR. Each WQE is retired under the SQ lock and its CQE posted
 * after the lock is dropped, so a consumer's completion handler may post
 * to the same QP; the task never runs twice at once, so CQEs keep SQ
 * order and no WQE completes twice.
 *
 * Retries (IBA 9.7.5.1): the local ACK timer runs while request packets
 * are unacknowledged and restarts on progress. Its expiry, a PSN
 * sequence error NAK and an implied NAK (a response or ACK that the
 * responder can only have sent after a READ or atomic response that did
 * not arrive, or a gap in a READ's responses) each consume one of
 * retry_cnt and make the requester resend from the oldest unacknowledged
 * PSN; with none left the oldest WQE completes with
 * IB_WC_RETRY_EXC_ERR. An RNR NAK waits the delay its timer code names
 * (IBA table 45) and consumes one of rnr_retry, unless that is 7.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/timer.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_wqe.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_comp_rules.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_rcv.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_window.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_pkt.h"

/* Flushed WQEs per call of the task function. */
#define SROCE_COMP_FLUSH_BATCH	32

/* ---- timers --------------------------------------------------------- */

/**
 * sroce_comp_arm_retry() - start the retry timer if it is not running
 * @qp: the QP; a request packet was just sent
 * @p: its parameters (timeout 0 means no timer)
 *
 * A QP that its gate limits (sroce_rate.c: IB_QP_RATE_LIMIT, a static
 * rate, congestion control) sends its packets only as fast as the gate
 * lets them out, and asks for an ACK only at the end of a message and
 * every SROCE_ACKREQ_INTERVAL packets: at a low rate that takes longer
 * than the local ACK timeout with nothing lost (a 64 KiB message at
 * 7.8 Mbit/s, the default 67 ms), and every expiry resends what was not
 * lost and uses up retry_cnt. For such a QP the timer starts again at
 * every packet sent: it then measures the silence after the last one,
 * which is what finds a lost request.
 *
 * Context: any.
 */
void sroce_comp_arm_retry(struct sroce_qp *qp, const struct sroce_qp_params *p)
{
	if (!p->timeout)
		return;
	if (sroce_rate_bps(&qp->rate) || !timer_pending(&qp->comp.retry_timer))
		mod_timer(&qp->comp.retry_timer,
			  jiffies + sroce_ack_timeout(p->timeout));
}

/*
 * A response of @psn that is no progress but answers a request that was
 * sent (@psn before sent_psn): a copy of one taken already, or one past a
 * gap while a retransmission recovers. The responder is working through what it was
 * asked, so the local ACK timeout (which is there to find lost requests
 * and dead peers) starts again, and an expiry not yet acted upon is
 * void. A retry now would only queue another round of responses behind
 * those still coming; a slow responder would then be sent round after
 * round until retry_cnt ran out with every response received.
 */
static void sroce_comp_alive(struct sroce_qp *qp,
			     const struct sroce_qp_params *p, u32 psn)
{
	struct sroce_comp *comp = &qp->comp;

	if (!p->timeout || !sroce_psn_before(psn, READ_ONCE(qp->req.sent_psn)))
		return;
	if (!timer_pending(&comp->retry_timer) &&
	    !test_bit(SROCE_COMP_TIMEOUT, &comp->flags))
		return;		/* nothing outstanding, or RNR wait */
	mod_timer(&comp->retry_timer, jiffies + sroce_ack_timeout(p->timeout));
	clear_bit(SROCE_COMP_TIMEOUT, &comp->flags);
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

	set_bit(SROCE_COMP_RNR_DONE, &qp->comp.flags);
	sroce_task_schedule(&qp->comp.task);
}

/* ---- retiring WQEs -------------------------------------------------- */

/* The oldest WQE in flight, or NULL; *@idx is its slot. */
static struct sroce_send_ctx *sroce_comp_oldest(struct sroce_qp *qp, u32 *idx)
{
	struct sroce_qp_sq *sq = &qp->sq;
	unsigned long flags;
	bool any;

	spin_lock_irqsave(&sq->lock, flags);
	any = sq->head != sq->queue.cons;
	*idx = sq->queue.cons;
	spin_unlock_irqrestore(&sq->lock, flags);
	return any ? &qp->req.ctx[*idx] : NULL;
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

/* Progress was made: fresh retry budgets and a fresh timeout. */
static void sroce_comp_progress(struct sroce_qp *qp,
				const struct sroce_qp_params *p, bool more)
{
	struct sroce_comp *comp = &qp->comp;

	comp->retry_left = p->retry_cnt;
	comp->rnr_left = p->rnr_retry;
	comp->retrying = false;
	clear_bit(SROCE_COMP_TIMEOUT, &comp->flags);
	sroce_req_window_kick(qp);
	if (more && p->timeout)
		mod_timer(&comp->retry_timer,
			  jiffies + sroce_ack_timeout(p->timeout));
	else if (!more)
		del_timer(&comp->retry_timer);
}

/*
 * Complete the WQE at slot @idx, which must still be the oldest in
 * flight; its CQE is posted after the SQ lock is dropped. An error
 * status moves the QP to ERR. Returns false if it was flushed meanwhile,
 * or rewound and not yet sent again.
 */
static bool sroce_comp_done(struct sroce_qp *qp,
			    const struct sroce_qp_params *p, u32 idx,
			    enum ib_wc_status status)
{
	struct sroce_send_ctx *ctx = &qp->req.ctx[idx];
	struct sroce_comp *comp = &qp->comp;
	struct sroce_qp_sq *sq = &qp->sq;
	bool post, more;
	unsigned long flags;
	struct ib_wc wc;

	sroce_comp_fill_wc(qp, &ctx->wqe, status, &wc);
	spin_lock_irqsave(&sq->lock, flags);
	if (sq->queue.cons != idx || sq->head == idx) {
		spin_unlock_irqrestore(&sq->lock, flags);
		/*
		 * Flushed, or rewound and not yet sent again: what was
		 * scattered of its responses so far does not count, or a
		 * READ/atomic whose last response came now would wait for
		 * one past its last PSN for ever.
		 */
		comp->rd_valid = false;
		return false;
	}
	if (!ctx->local && sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		qp->req.rd_atomic--;
	sroce_queue_advance_consumer(&sq->queue);
	more = sq->head != sq->queue.cons;
	spin_unlock_irqrestore(&sq->lock, flags);

	comp->rd_valid = false;
	if (!ctx->local)
		WRITE_ONCE(comp->una_psn, sroce_psn_next(ctx->last_psn));
	/* everything sent before the last retransmission is acknowledged */
	if (!more || !sroce_psn_before(comp->una_psn, comp->recover_psn))
		comp->recovering = false;
	sroce_key_cache_flush(&comp->kc);
	sroce_comp_progress(qp, p, more);
	/*
	 * Only a requester that found the head WQE blocked by earlier ones
	 * needs waking; any other is idle in its poster's system call, and a
	 * wakeup would queue a worker for nothing. The SQ lock taken to
	 * retire the WQE orders this test after the requester's set_bit(),
	 * so the plain test_bit() spares the locked operation in the common
	 * case.
	 */
	if (test_bit(SROCE_REQ_COMP_WAIT, &qp->req.flags) &&
	    test_and_clear_bit(SROCE_REQ_COMP_WAIT, &qp->req.flags))
		sroce_task_schedule(&qp->req.task);

	post = status != IB_WC_SUCCESS || qp->sig_all ||
	       (ctx->wqe.send_flags & IB_SEND_SIGNALED);
	if (post && sroce_cq_post(qp->scq, &wc, false))
		sroce_qp_fatal(qp);
	else if (status != IB_WC_SUCCESS)
		sroce_qp_send_error(qp);
	return true;
}

/*
 * Retire the oldest WQEs that need no more answers: settled ones, and
 * SEND and WRITE WQEs an ACK of @psn covers (@inclusive) or that lie
 * before a NAK or response of @psn. Returns the oldest left (*@idx its
 * slot), or NULL when none is left or the QP went to ERR.
 */
static struct sroce_send_ctx *sroce_comp_retire(struct sroce_qp *qp,
						const struct sroce_qp_params *p,
						u32 psn, bool inclusive,
						u32 *idx)
{
	struct sroce_send_ctx *ctx;
	u32 span;

	while ((ctx = sroce_comp_oldest(qp, idx))) {
		/* pairs with the requester's release: @status is set */
		if (smp_load_acquire(&ctx->local)) {
			if (!sroce_comp_done(qp, p, *idx, ctx->status) ||
			    ctx->status != IB_WC_SUCCESS)
				return NULL;
			continue;
		}
		if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
			return ctx;	/* only its responses complete it */
		if (inclusive ? !sroce_comp_ack_covers(psn, ctx->last_psn) :
				!sroce_psn_before(ctx->last_psn, psn))
			break;
		if (!sroce_comp_done(qp, p, *idx, IB_WC_SUCCESS))
			return NULL;
	}
	if (!ctx)
		return NULL;
	/* An ACK inside a long SEND or WRITE: part of it has arrived. */
	span = sroce_psn_diff(ctx->last_psn, ctx->first_psn) + 1;
	if (inclusive && sroce_psn_in_window(psn, ctx->first_psn, span) &&
	    sroce_psn_after(sroce_psn_next(psn), qp->comp.una_psn)) {
		WRITE_ONCE(qp->comp.una_psn, sroce_psn_next(psn));
		sroce_comp_progress(qp, p, true);
	}
	return ctx;
}

/*
 * Complete the settled WQEs at the front: local operations and WQEs that
 * failed locally. Returns false if the QP went to ERR.
 */
static bool sroce_comp_settle(struct sroce_qp *qp,
			      const struct sroce_qp_params *p)
{
	struct sroce_send_ctx *ctx;
	u32 idx;

	while ((ctx = sroce_comp_oldest(qp, &idx))) {
		/* pairs with the requester's release: @status is set */
		if (!smp_load_acquire(&ctx->local))
			break;
		if (!sroce_comp_done(qp, p, idx, ctx->status) ||
		    ctx->status != IB_WC_SUCCESS)
			return false;
	}
	return true;
}

/* Set up the response scatter of the oldest WQE, a READ or atomic. */
static void sroce_comp_expect(struct sroce_qp *qp,
			      const struct sroce_send_ctx *ctx,
			      struct sroce_rsp_expect *e)
{
	struct sroce_comp *comp = &qp->comp;

	if (!comp->rd_valid) {
		sroce_cursor_init(&comp->cur, ctx->wqe.length);
		comp->rd_psn = ctx->first_psn;
		comp->rd_valid = true;
	}
	e->read = ctx->wqe.opcode == IB_WR_RDMA_READ;
	e->first_psn = ctx->first_psn;
	e->last_psn = ctx->last_psn;
	e->next_psn = comp->rd_psn;
}

/* ---- retries -------------------------------------------------------- */

enum sroce_retry_why {
	SROCE_RETRY_TIMEOUT,
	SROCE_RETRY_SEQ_NAK,
	SROCE_RETRY_IMPLIED_NAK,
};

/* The oldest unacknowledged PSN, inside the oldest WQE @ctx. */
static u32 sroce_comp_resume_psn(struct sroce_qp *qp,
				 const struct sroce_send_ctx *ctx)
{
	struct sroce_comp *comp = &qp->comp;

	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode))
		return comp->rd_valid ? comp->rd_psn : ctx->first_psn;
	return sroce_req_resume_psn(comp->una_psn, ctx->first_psn,
				    ctx->last_psn);
}

/* Retransmit from the oldest unacknowledged PSN, within retry_cnt. */
static void sroce_comp_retry(struct sroce_qp *qp,
			     const struct sroce_qp_params *p,
			     enum sroce_retry_why why)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_comp *comp = &qp->comp;
	struct sroce_send_ctx *ctx;
	u32 idx, psn;

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;		/* nothing but RC is ever resent */
	ctx = sroce_comp_oldest(qp, &idx);
	/* pairs with the requester's release; a settled WQE is not resent */
	if (!ctx || smp_load_acquire(&ctx->local))
		return;
	psn = sroce_comp_resume_psn(qp, ctx);
	/* A NAK of a retransmission already under way is a duplicate. */
	if (why != SROCE_RETRY_TIMEOUT && comp->retrying &&
	    comp->retry_psn == psn)
		return;
	if (!comp->retry_left) {
		sroce_stats_inc(sdev, SROCE_CNT_RETRY_EXCEEDED);
		sroce_comp_done(qp, p, idx, IB_WC_RETRY_EXC_ERR);
		return;
	}
	comp->retry_left--;
	comp->retrying = true;
	comp->retry_psn = psn;
	comp->recovering = true;
	comp->recover_psn = READ_ONCE(qp->req.sent_psn);
	sroce_stats_inc(sdev, SROCE_CNT_COMPLETER_RETRY);
	sroce_req_request_rewind(qp, psn);
	if (p->timeout)
		mod_timer(&comp->retry_timer,
			  jiffies + sroce_ack_timeout(p->timeout));
}

/*
 * An implied NAK while the oldest WQE @ctx, a READ or atomic, waits: a
 * response or ACK of @psn, past the one expected. Retransmit, unless a
 * retransmission is still recovering: the packets past a gap are then
 * more likely copies the responder sent before it went back, or packets
 * the host reordered, than a new loss, and retrying on each of them
 * would queue round after round of responses at the responder (which is
 * alive, so the timeout starts again).
 */
static void sroce_comp_implied_nak(struct sroce_qp *qp,
				   const struct sroce_qp_params *p,
				   const struct sroce_send_ctx *ctx, u32 psn)
{
	struct sroce_comp *comp = &qp->comp;

	if (comp->recovering &&
	    sroce_psn_before(sroce_comp_resume_psn(qp, ctx), comp->recover_psn)) {
		sroce_comp_alive(qp, p, psn);
		return;
	}
	comp->recovering = false;
	sroce_comp_retry(qp, p, SROCE_RETRY_IMPLIED_NAK);
}

/*
 * A valid RNR NAK of @idx's PSN: wait the time it names, within
 * rnr_retry. The responder got the request and answered, so retry_cnt,
 * which bounds tries that found no answer (timeouts, sequence errors),
 * starts again: otherwise a QP whose peer is slow to post receives
 * would run out of it between RNR waits, on the odd lost packet, with
 * every request answered. rnr_retry alone bounds the waits.
 */
static void sroce_comp_rnr(struct sroce_qp *qp,
			   const struct sroce_qp_params *p, u32 idx, u8 code)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_comp *comp = &qp->comp;

	sroce_stats_inc(sdev, SROCE_CNT_RCVD_RNR);
	if (timer_pending(&comp->rnr_timer))
		return;		/* a copy of the NAK we are waiting out */
	if (p->rnr_retry != SROCE_RNR_RETRY_INFINITE) {
		if (!comp->rnr_left) {
			sroce_stats_inc(sdev, SROCE_CNT_RNR_RETRY_EXCEEDED);
			sroce_comp_done(qp, p, idx, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		comp->rnr_left--;
	}
	comp->retry_left = p->retry_cnt;
	clear_bit(SROCE_COMP_TIMEOUT, &comp->flags);
	del_timer(&comp->retry_timer);
	mod_timer(&comp->rnr_timer,
		  jiffies + max(1UL, usecs_to_jiffies(sroce_rnr_timer_usecs(code))));
}

/* The RNR delay is over: resend from the PSN the RNR NAK named. */
static void sroce_comp_rnr_done(struct sroce_qp *qp,
				const struct sroce_qp_params *p)
{
	struct sroce_send_ctx *ctx;
	u32 idx;

	ctx = sroce_comp_oldest(qp, &idx);
	if (!ctx)
		return;
	sroce_req_request_rewind(qp, sroce_comp_resume_psn(qp, ctx));
	sroce_comp_arm_retry(qp, p);
}

/* ---- responses ------------------------------------------------------ */

/*
 * A NAK of @psn inside the oldest WQE @ctx, a SEND or WRITE: everything
 * before @psn was executed (IBA 9.7.5.1.2). A NAK past the last one seen
 * is progress: after a go-back-N, packets of the first transmission
 * still in flight make the responder NAK each newly expected PSN, and
 * those NAKs must not use up retry_cnt.
 */
static void sroce_comp_nak_progress(struct sroce_qp *qp,
				    const struct sroce_qp_params *p,
				    const struct sroce_send_ctx *ctx, u32 psn)
{
	struct sroce_comp *comp = &qp->comp;
	u32 span = sroce_psn_diff(ctx->last_psn, ctx->first_psn) + 1;

	if (sroce_wr_is_rd_atomic(ctx->wqe.opcode) ||
	    !sroce_psn_in_window(psn, ctx->first_psn, span))
		return;
	if (sroce_psn_after(psn, sroce_req_resume_psn(comp->una_psn,
						      ctx->first_psn,
						      ctx->last_psn)))
		sroce_comp_progress(qp, p, true);
	WRITE_ONCE(comp->una_psn, psn);
	sroce_req_window_kick(qp);
}

/* A NAK (not RNR) of @psn; the WQEs before it are retired. */
static void sroce_comp_nak(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   u8 code, u32 psn)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_send_ctx *ctx;
	u32 idx;

	ctx = sroce_comp_retire(qp, p, psn, false, &idx);
	if (code == SROCE_NAK_PSN_SEQ_ERR)
		sroce_stats_inc(sdev, SROCE_CNT_RCVD_SEQ_ERR);
	if (!ctx || sroce_psn_before(psn, ctx->first_psn))
		return;		/* about PSNs acknowledged already */
	if (code == SROCE_NAK_PSN_SEQ_ERR) {
		sroce_comp_nak_progress(qp, p, ctx, psn);
		sroce_comp_retry(qp, p, SROCE_RETRY_SEQ_NAK);
	} else if (!sroce_psn_after(psn, ctx->last_psn)) {
		sroce_comp_done(qp, p, idx, sroce_comp_nak_status(code));
	} else {
		/* A later request failed while this READ/atomic is unanswered. */
		sroce_comp_implied_nak(qp, p, ctx, psn);
	}
}

/* An ACK, RNR NAK or NAK (the AETH of an ACKNOWLEDGE packet). */
static void sroce_comp_ack(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   const struct sroce_aeth *aeth, u32 psn)
{
	struct sroce_rsp_expect e;
	struct sroce_send_ctx *ctx;
	u32 idx;

	switch (sroce_aeth_type(aeth)) {
	case SROCE_AETH_ACK:
		ctx = sroce_comp_retire(qp, p, psn, true, &idx);
		if (!ctx || !sroce_wr_is_rd_atomic(ctx->wqe.opcode))
			break;
		sroce_comp_expect(qp, ctx, &e);
		if (sroce_comp_judge(&e, SROCE_RSP_ACK, psn) ==
		    SROCE_RSP_IMPLIED_NAK)
			sroce_comp_implied_nak(qp, p, ctx, psn);
		break;
	case SROCE_AETH_RNR_NAK:
		ctx = sroce_comp_retire(qp, p, psn, false, &idx);
		if (ctx && !sroce_psn_before(psn, ctx->first_psn)) {
			sroce_comp_nak_progress(qp, p, ctx, psn);
			sroce_comp_rnr(qp, p, idx, sroce_aeth_code(aeth));
		}
		break;
	case SROCE_AETH_NAK:
		sroce_comp_nak(qp, p, sroce_aeth_code(aeth), psn);
		break;
	default:
		break;
	}
}

/* A READ response packet, or an atomic ACK. */
static void sroce_comp_data(struct sroce_qp *qp, const struct sroce_qp_params *p,
			    struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	bool atomic = pkt->opcode == IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE;
	struct sroce_comp *comp = &qp->comp;
	struct sroce_send_ctx *ctx;
	const struct rxe_sge *sges;
	struct sroce_rsp_expect e;
	u32 idx, span = 1;
	u64 orig;
	int err;

	ctx = sroce_comp_retire(qp, p, pkt->psn, false, &idx);
	if (!ctx || !sroce_wr_is_rd_atomic(ctx->wqe.opcode)) {
		/* stale: nothing it could answer */
		sroce_comp_alive(qp, p, pkt->psn);
		return;
	}
	sroce_comp_expect(qp, ctx, &e);
	switch (sroce_comp_judge(&e, atomic ? SROCE_RSP_ATOMIC : SROCE_RSP_READ,
				 pkt->psn)) {
	case SROCE_RSP_IMPLIED_NAK:
		sroce_comp_implied_nak(qp, p, ctx, pkt->psn);
		return;
	case SROCE_RSP_STALE:
		sroce_comp_alive(qp, p, pkt->psn);
		return;
	case SROCE_RSP_ACCEPT:
		break;
	}
	sges = sroce_wqe_sges(sroce_queue_slot(&qp->sq.queue, idx));
	if (atomic) {
		/* the pre-operation value, in host order */
		orig = sroce_atmack_orig(sroce_pkt_atmack(skb, pkt));
		err = sroce_copy_data(sdev, qp->ibqp.pd, &comp->kc, sges,
				      ctx->wqe.num_sge, &comp->cur, &orig,
				      sizeof(orig), SROCE_COPY_TO_MR);
	} else {
		span = sroce_comp_read_span(&e, pkt, comp->cur.resid, ctx->mtu);
		if (!span)
			return;	/* malformed: the retry timer recovers */
		err = sroce_copy_skb(sdev, qp->ibqp.pd, &comp->kc, sges,
				     ctx->wqe.num_sge, &comp->cur, skb,
				     pkt->hdr_len, pkt->paylen);
	}
	if (err) {
		sroce_comp_done(qp, p, idx, err == -ENOSPC ?
				IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return;
	}
	comp->rd_psn = sroce_psn_add(pkt->psn, span);
	if (sroce_psn_add(pkt->psn, span - 1) == ctx->last_psn)
		sroce_comp_done(qp, p, idx, IB_WC_SUCCESS);
	else
		sroce_comp_progress(qp, p, true);
}

/* ---- the task ------------------------------------------------------- */

/* Complete a batch of WQEs with IB_WC_WR_FLUSH_ERR; 1 if more are left. */
static int sroce_comp_flush(struct sroce_qp *qp)
{
	struct sroce_qp_sq *sq = &qp->sq;
	struct rxe_send_wqe *slot;
	unsigned long flags;
	struct ib_wc wc;
	unsigned int n;
	bool at_head;

	for (n = 0; n < SROCE_COMP_FLUSH_BATCH; n++) {
		memset(&wc, 0, sizeof(wc));
		spin_lock_irqsave(&sq->lock, flags);
		/* what sroce_wq_flush_sq() asked for is done */
		if (!sq->flush_left) {
			spin_unlock_irqrestore(&sq->lock, flags);
			return 0;
		}
		if (sroce_queue_empty(&sq->queue)) {
			sq->flush_left = 0;
			sq->head = sq->queue.cons;
			qp->req.replays = 0;
			qp->req.rd_atomic = 0;
			/* a UC/UD QP may go back from SQE to RTS */
			qp->req.halted = false;
			spin_unlock_irqrestore(&sq->lock, flags);
			return 0;
		}
		slot = sroce_queue_consumer_slot(&sq->queue);
		wc.wr_id = READ_ONCE(slot->wr.wr_id);
		wc.opcode = sroce_wqe_wc_opcode(READ_ONCE(slot->wr.opcode));
		at_head = sq->head == sq->queue.cons;
		sroce_queue_advance_consumer(&sq->queue);
		sq->flush_left--;
		if (at_head)
			sq->head = sq->queue.cons;
		spin_unlock_irqrestore(&sq->lock, flags);

		wc.status = IB_WC_WR_FLUSH_ERR;
		wc.qp = &qp->ibqp;
		wc.port_num = SROCE_PORT_NUM;
		if (sroce_cq_post(qp->scq, &wc, false))
			sroce_qp_fatal(qp);
	}
	return 1;
}

/*
 * In SQD, with a drain notification asked for: raise it once every WQE
 * the requester started has completed (IBA 11.6.3: the SQ is drained
 * when no WQE is outstanding, not when SQD is entered).
 */
static void sroce_comp_check_drained(struct sroce_qp *qp)
{
	struct sroce_qp_sq *sq = &qp->sq;
	unsigned long flags;
	bool drained;

	if (!test_bit(SROCE_COMP_SQD_NOTIFY, &qp->comp.flags))
		return;
	spin_lock_irqsave(&sq->lock, flags);
	drained = sq->queue.cons == sq->head && !READ_ONCE(qp->req.in_msg);
	spin_unlock_irqrestore(&sq->lock, flags);
	if (drained && test_and_clear_bit(SROCE_COMP_SQD_NOTIFY, &qp->comp.flags))
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/**
 * sroce_comp_notify_drained() - raise IB_EVENT_SQ_DRAINED when drained
 * @qp: the QP, just moved to SQD with en_sqd_async_notify
 *
 * The completer raises the event once the WQEs in flight have
 * completed, at once if there are none.
 *
 * Context: any.
 */
void sroce_comp_notify_drained(struct sroce_qp *qp)
{
	set_bit(SROCE_COMP_SQD_NOTIFY, &qp->comp.flags);
	sroce_task_schedule(&qp->comp.task);
}

/* Drop what the completer holds for a QP that is not sending. */
static void sroce_comp_drop(struct sroce_qp *qp)
{
	sroce_rcv_purge(to_sroce_dev(qp->ibqp.device), &qp->comp.rxq);
	sroce_key_cache_flush(&qp->comp.kc);
	qp->comp.rd_valid = false;
}

static int sroce_comp_run(void *arg)
{
	struct sroce_qp *qp = arg;
	struct sroce_comp *comp = &qp->comp;
	const struct sroce_pkt *pkt;
	struct sroce_qp_params p;
	struct sk_buff *skb;

	sroce_qp_params_get(qp, &p);
	switch (p.state) {
	case IB_QPS_RTS:
		clear_bit(SROCE_COMP_SQD_NOTIFY, &comp->flags);
		break;
	case IB_QPS_SQD:
		break;
	case IB_QPS_ERR:
	case IB_QPS_SQE:
		clear_bit(SROCE_COMP_SQD_NOTIFY, &comp->flags);
		sroce_comp_drop(qp);
		return sroce_comp_flush(qp);
	default:
		clear_bit(SROCE_COMP_SQD_NOTIFY, &comp->flags);
		sroce_comp_drop(qp);
		return 0;
	}
	/* Settled WQEs (local operations, local errors) complete in turn. */
	if (!sroce_comp_settle(qp, &p))
		return 1;

	skb = skb_dequeue(&comp->rxq);
	if (!skb) {
		/*
		 * Timers are looked at only once the responses that came in
		 * are processed: an ACK waiting in the queue may be progress,
		 * which cancels an expiry not yet acted upon.
		 */
		if (test_and_clear_bit(SROCE_COMP_TIMEOUT, &comp->flags) &&
		    !timer_pending(&comp->rnr_timer))
			sroce_comp_retry(qp, &p, SROCE_RETRY_TIMEOUT);
		if (test_and_clear_bit(SROCE_COMP_RNR_DONE, &comp->flags))
			sroce_comp_rnr_done(qp, &p);
		if (p.state == IB_QPS_SQD)
			sroce_comp_check_drained(qp);
		return 0;
	}
	if (!sroce_rcv_verify(to_sroce_dev(qp->ibqp.device), skb)) {
		kfree_skb(skb);
		return 1;
	}
	pkt = sroce_skb_pkt(skb);
	if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE)
		sroce_comp_ack(qp, &p, sroce_pkt_aeth(skb, pkt), pkt->psn);
	else
		sroce_comp_data(qp, &p, skb, pkt);
	consume_skb(skb);
	return 1;
}

/**
 * sroce_comp_kick() - let the completer make the send completions due
 * @qp: the QP
 *
 * Runs the completer in the caller when it is idle and interrupts are on
 * (so that a flush is done when modify_qp returns), else schedules it. A
 * call from the completer's own completion handler only asks for one
 * more run.
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_comp_kick(struct sroce_qp *qp)
{
	if (in_hardirq() || irqs_disabled())
		sroce_task_schedule(&qp->comp.task);
	else
		sroce_task_run(&qp->comp.task);
}

/**
 * sroce_comp_queue() - hand a response packet to the completer
 * @qp: the QP it is for (the caller holds a reference)
 * @skb: the parsed packet, skb->data at the BTH; consumed
 *
 * An ACK that finds nothing queued before it is handled in the caller
 * (sroce_comp_kick()): the receive path completes the WQEs it covers at
 * once, as a NIC would, instead of leaving them to a worker that a busy
 * CPU may not run for a while. Meanwhile they would hold their send queue
 * slots: rping, which posts a SEND per message without waiting for the
 * last one's completion, saw its 16-deep send queue fill that way on one
 * vCPU. Responses that carry data (READ, atomic), and anything behind a
 * backlog, go to the worker: their scatter is no work for softirq; the
 * first and middle packets of a READ response wake it on another CPU. Past
 * SROCE_COMP_BACKLOG packets waiting, the packet is dropped and counted
 * (dropped_backlog): the retry rules recover what it carried.
 *
 * Every response names a PSN the requester sent, so one at or past
 * &sroce_req.sent_psn is forged or from an earlier life of the QP: were
 * it taken, an ACK would complete WQEs never sent as successful. It is
 * dropped here (dropped_unsent_psn); the requester notes a PSN as sent
 * before the packet leaves, so a fast answer is never taken for one.
 *
 * Context: any.
 */
void sroce_comp_queue(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	bool ack = pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE;
	bool burst = !(pkt->info->flags & SROCE_OPF_LAST);
	struct sroce_comp *comp = &qp->comp;
	bool closed, full, here = false;
	unsigned long flags;

	if (!sroce_psn_before(pkt->psn, READ_ONCE(qp->req.sent_psn))) {
		sroce_rcv_refuse(to_sroce_dev(qp->ibqp.device), skb,
				 SROCE_CNT_DROPPED_UNSENT);
		return;
	}
	spin_lock_irqsave(&comp->rxq.lock, flags);
	full = skb_queue_len(&comp->rxq) >= SROCE_COMP_BACKLOG;
	closed = comp->closed;
	if (!closed && !full) {
		here = ack && skb_queue_empty(&comp->rxq);
		__skb_queue_tail(&comp->rxq, skb);
	}
	spin_unlock_irqrestore(&comp->rxq.lock, flags);
	if (closed || full) {
		sroce_rcv_refuse(to_sroce_dev(qp->ibqp.device), skb,
				 full ? SROCE_CNT_DROPPED_BACKLOG : SROCE_CNT_NR);
		return;
	}
	if (here)
		sroce_comp_kick(qp);
	else if (burst)
		sroce_task_schedule_away(&comp->task);
	else
		sroce_task_schedule(&comp->task);
}

/**
 * sroce_comp_init() - set up the completer of a new QP
 * @qp: the QP
 *
 * Context: process context.
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
 *
 * Context: modify_qp (process context).
 */
void sroce_comp_start(struct sroce_qp *qp, const struct sroce_qp_params *p)
{
	qp->comp.retry_left = p->retry_cnt;
	qp->comp.rnr_left = p->rnr_retry;
	WRITE_ONCE(qp->comp.una_psn, READ_ONCE(qp->req.psn));
	qp->comp.retrying = false;
	qp->comp.recovering = false;
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
 *
 * Context: process context.
 */
void sroce_comp_reset(struct sroce_qp *qp)
{
	sroce_comp_drop(qp);
	qp->comp.retrying = false;
	qp->comp.flags = 0;
}

/**
 * sroce_comp_cleanup() - the QP is being destroyed
 * @qp: the QP, its tasks disabled and timers stopped
 *
 * Context: process context.
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
