// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce work queues of a QP: their rings, posting by kernel consumers,
 * the user doorbell, the start of send processing, flush and reset.
 *
 * Send processing starts WQEs in order at the SQ's head; it is the
 * requester's (sroce_req.c), which the doorbell wakes. Every WQE is
 * checked (sroce_wqe_check_send()) on a private copy before any of it is
 * used; a bad one completes in error and the QP goes to ERR. Local
 * operations (LOCAL_INV, BIND_MW, REG_MR) are carried out here, for the
 * requester, once every WQE before them has completed.
 *
 * Every send completion, flushes included, is made by the completer's
 * task (sroce_comp.c), one WQE at a time in order: the SQ consumer index
 * advances under the SQ lock (which frees the slot for user space), then
 * the CQE is posted with no QP lock held. Flushed WQEs always complete,
 * signaled or not.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "core/sroce_dev.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mw.h"
#include "obj/sroce_ah.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_wqe.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req_window.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_inbox.h"
#include "transport/sroce_wq.h"

static int sroce_wq_init_sq(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata, struct mminfo *mi)
{
	struct ib_qp_cap *cap = &init->cap;
	int err;

	err = sroce_queue_init(&qp->sq.queue,
			       udata ? SROCE_QUEUE_FROM_USER :
				       SROCE_QUEUE_KERNEL,
			       max(cap->max_send_wr, 1U),
			       sroce_wqe_send_size(cap->max_send_sge,
						   cap->max_inline_data));
	if (err)
		return err;
	sroce_queue_set_lock(&qp->sq.queue, &qp->sq.lock);
	sroce_wqe_send_caps(sroce_queue_elem_size(&qp->sq.queue),
			    &qp->sq.max_sge, &qp->sq.max_inline);
	qp->sq.max_wr = sroce_queue_depth(&qp->sq.queue);
	qp->sq.head = 0;
	if (udata) {
		err = sroce_queue_map_user(&qp->sq.queue,
					   sroce_udata_ucontext(udata), mi);
		if (err) {
			sroce_queue_cleanup(&qp->sq.queue);
			return err;
		}
	}
	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	return 0;
}

static int sroce_wq_init_rq(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata, struct mminfo *mi)
{
	struct ib_qp_cap *cap = &init->cap;
	int err;

	if (qp->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	err = sroce_queue_init(&qp->rq.queue,
			       udata ? SROCE_QUEUE_FROM_USER :
				       SROCE_QUEUE_KERNEL,
			       max(cap->max_recv_wr, 1U),
			       sroce_wqe_recv_size(max(cap->max_recv_sge, 1U)));
	if (err)
		return err;
	sroce_queue_set_lock(&qp->rq.queue, &qp->rq.lock);
	qp->rq.max_sge = sroce_wqe_recv_caps(sroce_queue_elem_size(&qp->rq.queue));
	qp->rq.max_wr = sroce_queue_depth(&qp->rq.queue);
	if (udata) {
		err = sroce_queue_map_user(&qp->rq.queue,
					   sroce_udata_ucontext(udata), mi);
		if (err) {
			sroce_queue_cleanup(&qp->rq.queue);
			return err;
		}
	}
	cap->max_recv_wr = qp->rq.max_wr;
	cap->max_recv_sge = qp->rq.max_sge;
	return 0;
}

/**
 * sroce_wq_init() - make the send and receive rings of a new QP
 * @qp: the QP, its fields initialised
 * @init: the creation attributes; the real capabilities are written back
 * @udata: for a user QP: the rings are mapped for user space
 * @resp: filled with the rings' mmap information for a user QP
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_wq_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata, struct rxe_create_qp_resp *resp)
{
	int err;

	err = sroce_wq_init_sq(qp, init, udata, &resp->sq_mi);
	if (err)
		return err;
	err = sroce_wq_init_rq(qp, init, udata, &resp->rq_mi);
	if (err) {
		sroce_queue_cleanup(&qp->sq.queue);
		return err;
	}
	return 0;
}

/**
 * sroce_wq_cleanup() - free the rings of a QP
 * @qp: the QP; nothing uses its rings any more
 */
void sroce_wq_cleanup(struct sroce_qp *qp)
{
	sroce_queue_cleanup(&qp->sq.queue);
	if (!qp->srq)
		sroce_queue_cleanup(&qp->rq.queue);
}

static void sroce_wq_limits(struct sroce_qp *qp, struct sroce_wqe_limits *lim)
{
	lim->qp_type = qp->ibqp.qp_type;
	lim->max_sge = qp->sq.max_sge;
	lim->max_inline = qp->sq.max_inline;
	lim->user = qp->user;
}

/**
 * sroce_wq_exec_local() - run a local send queue operation
 * @qp: the QP
 * @wqe: the validated copy of a LOCAL_INV, REG_MR or BIND_MW WQE
 *
 * Context: the requester, with the SQ lock held (so that a flush sees
 * the operation either run and settled or not started).
 * Return: the completion status of the operation.
 */
enum ib_wc_status sroce_wq_exec_local(struct sroce_qp *qp,
				      const struct sroce_send_wqe *wqe)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_mw_bind bind;

	lockdep_assert_held(&qp->sq.lock);

	switch (wqe->opcode) {
	case IB_WR_LOCAL_INV:
		return sroce_key_invalidate(sdev, qp->ibqp.pd, wqe->ex);
	case IB_WR_REG_MR:
		return sroce_mr_fast_reg(qp->ibqp.pd, wqe->wr.reg.mr,
					 wqe->wr.reg.key, wqe->wr.reg.access);
	case IB_WR_BIND_MW:
		bind.mw_rkey = wqe->wr.mw.mw_rkey;
		bind.new_rkey = wqe->wr.mw.rkey;
		bind.mr_lkey = wqe->wr.mw.mr_lkey;
		bind.addr = wqe->wr.mw.addr;
		bind.length = wqe->wr.mw.length;
		bind.access = wqe->wr.mw.access;
		return sroce_mw_bind(sdev, qp->ibqp.pd, qp->ibqp.qp_num, &bind);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/**
 * sroce_sq_kick() - process new send WQEs of a QP
 * @qp: the QP
 *
 * In RTS, wakes the requester; in ERR and SQE, flushes what was posted.
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_sq_kick(struct sroce_qp *qp)
{
	switch (sroce_qp_state(qp)) {
	case IB_QPS_RTS:
		sroce_task_schedule(&qp->req.task);
		break;
	case IB_QPS_ERR:
		/* user space posts receives without a doorbell: flush them too */
		sroce_wq_flush_sq(qp);
		sroce_wq_flush_rq(qp);
		break;
	case IB_QPS_SQE:
		sroce_wq_flush_sq(qp);
		break;
	default:
		break;
	}
}

/* Drop every WQE of the send queue without completions. */
static void sroce_wq_drop_sq(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	sroce_queue_discard(&qp->sq.queue);
	qp->sq.head = qp->sq.queue.cons;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

static int sroce_post_one_send(struct sroce_qp *qp,
			       const struct ib_send_wr *wr,
			       const struct sroce_wqe_limits *lim)
{
	u32 ah_num = 0;

	lockdep_assert_held(&qp->sq.lock);

	if (sroce_queue_full(&qp->sq.queue))
		return -ENOMEM;
	if ((qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) &&
	    (wr->opcode == IB_WR_SEND || wr->opcode == IB_WR_SEND_WITH_IMM)) {
		if (!ud_wr(wr)->ah || ud_wr(wr)->ah->device != qp->ibqp.device)
			return -EINVAL;
		ah_num = to_sroce_ah(ud_wr(wr)->ah)->ah_num;
	}
	return sroce_wqe_from_send_wr(wr, ah_num, lim,
				      sroce_queue_producer_slot(&qp->sq.queue));
}

/**
 * sroce_post_send() - ib_device_ops.post_send
 * @ibqp: the QP
 * @wr: for a kernel QP, a chain of send WRs; for a user QP, NULL: librxe
 *	has written WQEs into the ring and this is its doorbell
 * @bad_wr: set to the first WR not posted
 *
 * Context: any for kernel QPs.
 *
 * Return: 0; -EINVAL in RESET, INIT or RTR (IBA 10.3.1: posting to the
 * send queue is an immediate error there) or for a WR that cannot be
 * posted; -ENOMEM when the send queue is full.
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	enum ib_qp_state state = sroce_qp_state(qp);
	struct sroce_wqe_limits lim;
	unsigned long flags;
	int err = 0;

	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		/*
		 * librxe has already written its WQEs into the ring; the
		 * error it gets back says they were not posted, so drop
		 * them rather than run them once the QP reaches RTS.
		 */
		if (qp->user)
			sroce_wq_drop_sq(qp);
		if (bad_wr)
			*bad_wr = wr;
		return -EINVAL;
	}
	if (!qp->user) {
		sroce_wq_limits(qp, &lim);
		spin_lock_irqsave(&qp->sq.lock, flags);
		for (; wr; wr = wr->next) {
			err = sroce_post_one_send(qp, wr, &lim);
			if (err)
				break;
			sroce_queue_advance_producer(&qp->sq.queue);
		}
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		if (err)
			*bad_wr = wr;
	}
	if (qp->user && sroce_qp_state(qp) == IB_QPS_RTS) {
		/*
		 * The doorbell of user space, in its system call: run the
		 * requester here, as softirq would, rather than wait for a
		 * worker or for ksoftirqd to be scheduled next to busy-polling
		 * applications (up to a tick). A packet to a device of this
		 * host reaches its QP in this call (sroce_xmit_local()), whose
		 * responder may run here too (sroce_task_may_inline()).
		 */
		local_bh_disable();
		sroce_req_doorbell(qp);
		local_bh_enable();
	} else {
		sroce_sq_kick(qp);
	}
	return err;
}

/**
 * sroce_post_recv() - ib_device_ops.post_recv, for kernel QPs
 * @ibqp: the QP
 * @wr: a chain of receive WRs
 * @bad_wr: set to the first WR not posted
 *
 * Receives posted in ERR are flushed at once.
 *
 * Context: any.
 *
 * Return: 0; -EINVAL in RESET, with an SRQ, for a user QP or a WR with
 * too many SGEs; -ENOMEM when the receive queue is full.
 */
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	enum ib_qp_state state = sroce_qp_state(qp);
	unsigned long flags;
	int err = 0;

	if (qp->user || qp->srq || state == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		if (sroce_queue_full(&qp->rq.queue)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_wqe_from_recv_wr(wr, qp->rq.max_sge,
					     sroce_queue_producer_slot(&qp->rq.queue));
		if (err)
			break;
		sroce_queue_advance_producer(&qp->rq.queue);
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (err)
		*bad_wr = wr;

	if (state == IB_QPS_ERR)
		sroce_wq_flush_rq(qp);
	return err;
}

/**
 * sroce_wq_flush_sq() - complete every outstanding send WQE in error
 * @qp: the QP, in ERR or SQE
 *
 * Each WQE, started or not, completes with IB_WC_WR_FLUSH_ERR, in order.
 * The completer's task does it, as it makes every send completion: in
 * the caller when the task is idle and interrupts are on, else soon. One
 * call flushes at most what the ring can hold, whatever a user thread
 * writes into it meanwhile.
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_wq_flush_sq(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq.flush_left = sroce_queue_depth(&qp->sq.queue);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	sroce_comp_kick(qp);
}

/**
 * sroce_wq_flush_rq() - complete every posted receive WQE in error
 * @qp: the QP, in ERR, without an SRQ
 *
 * Each WQE in the RQ now completes with IB_WC_WR_FLUSH_ERR, in order.
 * The responder's task does it (sroce_wq_flush_rq_batch()), in the
 * caller when the task is idle and interrupts are on, else soon: the
 * completion handler then runs without the RQ's lock, so that it may
 * post receives to this QP again, and one call flushes at most what the
 * RQ held, whatever a user thread writes into the ring meanwhile.
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_wq_flush_rq(struct sroce_qp *qp)
{
	struct sroce_qp_rq *rq = &qp->rq;
	unsigned long flags;

	if (qp->srq)
		return;
	spin_lock_irqsave(&rq->lock, flags);
	rq->flush_left = sroce_queue_depth(&rq->queue);
	spin_unlock_irqrestore(&rq->lock, flags);
	sroce_resp_kick(qp);
}

/**
 * sroce_wq_flush_rq_batch() - flush some receive WQEs
 * @qp: the QP, in ERR
 *
 * Takes up to SROCE_WQ_FLUSH_BATCH WQEs off the RQ under its lock, then
 * completes them with IB_WC_WR_FLUSH_ERR without it.
 *
 * Context: the responder's task.
 * Return: 1 if the flush asked for by sroce_wq_flush_rq() goes on, else 0.
 */
int sroce_wq_flush_rq_batch(struct sroce_qp *qp)
{
	struct sroce_qp_rq *rq = &qp->rq;
	u64 wr_id[SROCE_WQ_FLUSH_BATCH];
	unsigned long flags;
	bool lost = false;
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.port_num = SROCE_PORT_NUM,
	};
	u32 i, n;

	if (qp->srq)
		return 0;
	spin_lock_irqsave(&rq->lock, flags);
	n = min3(sroce_queue_count(&rq->queue), rq->flush_left,
		 (u32)SROCE_WQ_FLUSH_BATCH);
	for (i = 0; i < n; i++) {
		struct rxe_recv_wqe *slot = sroce_queue_consumer_slot(&rq->queue);

		wr_id[i] = READ_ONCE(slot->wr_id);
		sroce_queue_advance_consumer(&rq->queue);
	}
	rq->flush_left = n < SROCE_WQ_FLUSH_BATCH ? 0 : rq->flush_left - n;
	spin_unlock_irqrestore(&rq->lock, flags);

	for (i = 0; i < n; i++) {
		wc.wr_id = wr_id[i];
		if (sroce_cq_post(qp->rcq, &wc, false))
			lost = true;
	}
	if (lost)
		sroce_qp_fatal(qp);
	return n == SROCE_WQ_FLUSH_BATCH;
}

/**
 * sroce_wq_reset() - drop every outstanding WQE without completions
 * @qp: the QP, just moved to RESET
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_wq_reset(struct sroce_qp *qp)
{
	unsigned long flags;

	sroce_wq_drop_sq(qp);
	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq.lock, flags);
	sroce_queue_discard(&qp->rq.queue);
	qp->rq.flush_left = 0;
	spin_unlock_irqrestore(&qp->rq.lock, flags);
}

/* The verbs on a queue pair's work requests, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_wq_verbs = {
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,
};
