// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce shared receive queues: the SRQ verbs and sroce_srq_take(), with
 * which the receive path takes the next WQE.
 *
 * Unlike a QP's receive queue, an SRQ slot is released as soon as its WQE
 * is taken: the WQE is copied (and checked) first, so what user space
 * writes into the slot afterwards cannot matter.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "core/sroce_dev.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_srq.h"
#include "obj/sroce_wqe.h"

static int sroce_srq_check_caps(struct sroce_dev *sdev,
				const struct ib_srq_attr *attr)
{
	if (attr->max_wr == 0 || attr->max_wr > sdev->attr.max_srq_wr ||
	    attr->max_sge > sdev->attr.max_srq_sge)
		return -EINVAL;
	if (attr->srq_limit > attr->max_wr)
		return -EINVAL;
	return 0;
}

static int sroce_srq_init_queue(struct sroce_srq *srq,
				struct ib_srq_init_attr *init,
				struct ib_udata *udata)
{
	struct rxe_create_srq_resp resp = {};
	int err;

	err = sroce_queue_init(&srq->queue,
			       udata ? SROCE_QUEUE_FROM_USER :
				       SROCE_QUEUE_KERNEL,
			       init->attr.max_wr,
			       sroce_wqe_recv_size(max(init->attr.max_sge, 1U)));
	if (err)
		return err;
	sroce_queue_set_lock(&srq->queue, &srq->lock);
	srq->max_sge = sroce_wqe_recv_caps(sroce_queue_elem_size(&srq->queue));
	if (!udata)
		return 0;

	err = sroce_queue_map_user(&srq->queue, sroce_udata_ucontext(udata),
				   &resp.mi);
	if (err)
		goto err_free_queue;
	resp.srq_num = 0;	/* librxe ignores it; SRQs have no wire name */
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_free_queue;
	return 0;

err_free_queue:
	sroce_queue_cleanup(&srq->queue);
	return err;
}

/**
 * sroce_create_srq() - ib_device_ops.create_srq
 * @ibsrq: the SRQ ib_core allocated
 * @init: its attributes; max_wr and max_sge are rounded up and written
 *	back
 * @udata: for a user SRQ, room for struct rxe_create_srq_resp
 *
 * Return: 0; -EOPNOTSUPP for an SRQ type other than IB_SRQT_BASIC;
 * -EINVAL for sizes of 0 or over the device limits, a limit above max_wr,
 * or a response buffer too small; -ENOMEM.
 */
static int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibsrq->device);
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (udata && (udata->inlen ||
		      udata->outlen < sizeof(struct rxe_create_srq_resp)))
		return -EINVAL;
	err = sroce_srq_check_caps(sdev, &init->attr);
	if (err)
		return err;
	err = sroce_res_get(&sdev->res.srq, sdev->attr.max_srq);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	srq->user = udata;
	srq->limit = init->attr.srq_limit;
	err = sroce_srq_init_queue(srq, init, udata);
	if (err)
		goto err_put_count;

	init->attr.max_wr = sroce_queue_depth(&srq->queue);
	init->attr.max_sge = srq->max_sge;
	return 0;

err_put_count:
	sroce_res_put(&sdev->res.srq);
	return err;
}

/*
 * Replace the ring by one of @max_wr entries. For user space, librxe
 * passes the address of a struct mminfo in its driver data, and the new
 * ring's mmap information is written there, not into a response.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    struct ib_udata *udata)
{
	struct rxe_modify_srq_cmd cmd = {};
	struct sroce_queue old = {};
	struct mminfo mi = {};
	unsigned long flags;
	int err;

	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}
	err = sroce_queue_resize_prepare(&srq->queue, &old, max_wr,
					 udata ? sroce_udata_ucontext(udata) :
						 NULL, &mi);
	if (err)
		return err;
	if (udata &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi, sizeof(mi))) {
		err = -EFAULT;
		goto out_cleanup;
	}

	spin_lock_irqsave(&srq->lock, flags);
	err = sroce_queue_resize_commit(&srq->queue, &old);
	spin_unlock_irqrestore(&srq->lock, flags);

out_cleanup:
	sroce_queue_cleanup(&old);
	return err;
}

/**
 * sroce_modify_srq() - ib_device_ops.modify_srq
 * @ibsrq: the SRQ
 * @attr: new max_wr (IB_SRQ_MAX_WR, a resize) and/or srq_limit
 *	(IB_SRQ_LIMIT, arms the limit event)
 * @mask: which of them
 * @udata: for user space, struct rxe_modify_srq_cmd
 *
 * Return: 0; -EINVAL for other mask bits, a size of 0, over the device
 * limit or below the WQEs queued, or a limit above the depth; -EFAULT,
 * -ENOMEM.
 */
static int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibsrq->device);
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (!attr->max_wr || attr->max_wr > sdev->attr.max_srq_wr)
			return -EINVAL;
		if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > attr->max_wr)
			return -EINVAL;
		err = sroce_srq_resize(srq, attr->max_wr, udata);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		if (attr->srq_limit > sroce_queue_depth(&srq->queue))
			err = -EINVAL;
		else
			srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
		if (err)
			return err;
	}
	return 0;
}

/**
 * sroce_query_srq() - ib_device_ops.query_srq
 * @ibsrq: the SRQ
 * @attr: filled with its depth, SGEs per WQE and armed limit
 *
 * Return: 0.
 */
static int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = sroce_queue_depth(&srq->queue);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * sroce_destroy_srq() - ib_device_ops.destroy_srq
 * @ibsrq: the SRQ; ib_core has checked that no QP uses it any more
 * @udata: user data, unused
 *
 * Return: 0.
 */
static int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);

	sroce_queue_cleanup(&srq->queue);
	sroce_res_put(&to_sroce_dev(ibsrq->device)->res.srq);
	return 0;
}

/**
 * sroce_post_srq_recv() - ib_device_ops.post_srq_recv, for kernel SRQs
 * @ibsrq: the SRQ
 * @wr: a chain of receive WRs
 * @bad_wr: set to the first WR not posted
 *
 * Context: any.
 *
 * Return: 0; -ENOMEM when the SRQ is full; -EINVAL for a WR with too
 * many SGEs, or a user SRQ (librxe posts into its ring itself).
 */
static int sroce_post_srq_recv(struct ib_srq *ibsrq,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_sroce_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (sroce_queue_full(&srq->queue)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_wqe_from_recv_wr(wr, srq->max_sge,
					     sroce_queue_producer_slot(&srq->queue));
		if (err)
			break;
		sroce_queue_advance_producer(&srq->queue);
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

static void sroce_srq_limit_reached(struct sroce_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
		.element.srq = &srq->ibsrq,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * sroce_srq_take() - take the next receive WQE of an SRQ
 * @srq: the SRQ
 * @wqe: filled with a checked copy of the WQE
 *
 * The slot is released at once, even when its content is refused. When
 * the WQEs left fall below an armed limit, the limit is disarmed and the
 * SRQ's event handler gets IB_EVENT_SRQ_LIMIT_REACHED (IBA 10.2.9.3).
 *
 * Context: any.
 *
 * Return: 0; -ENOENT when the SRQ is empty; -EINVAL when the WQE user
 * space wrote is invalid (too many SGEs).
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_recv_wqe *wqe)
{
	bool limit_reached = false;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	if (sroce_queue_empty(&srq->queue)) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return -ENOENT;
	}
	err = sroce_wqe_check_recv(sroce_queue_consumer_slot(&srq->queue),
				   srq->max_sge, wqe);
	sroce_queue_advance_consumer(&srq->queue);
	if (srq->limit && sroce_queue_count(&srq->queue) < srq->limit) {
		srq->limit = 0;
		limit_reached = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit_reached)
		sroce_srq_limit_reached(srq);
	return err;
}

/* The verbs on shared receive queues, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_srq_verbs = {
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	.create_srq = sroce_create_srq,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.post_srq_recv = sroce_post_srq_recv,
	.destroy_srq = sroce_destroy_srq,
};
