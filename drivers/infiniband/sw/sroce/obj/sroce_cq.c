// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce completion queues: the CQ verbs and sroce_cq_post(), which every
 * completion goes through.
 *
 * A user CQ's ring is mapped by librxe, which polls it without the
 * kernel; the kernel only produces into it. A kernel CQ's ring is private
 * and poll_cq consumes from it under the CQ lock. Completions are built
 * as struct ib_wc and converted into the user ABI's struct ib_uverbs_wc
 * for user CQs.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "core/sroce_dev.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_queue.h"

/*
 * wc_flags as libibverbs defines them (IBV_WC_*, verbs.h), which user
 * space reads from the ring; the kernel's IB_WC_* differ from bit 2 on.
 */
enum {
	SROCE_UWC_GRH		= 1 << 0,
	SROCE_UWC_WITH_IMM	= 1 << 1,
	SROCE_UWC_IP_CSUM_OK	= 1 << 2,
	SROCE_UWC_WITH_INV	= 1 << 3,
};

static int sroce_cq_check_size(struct sroce_dev *sdev, int cqe)
{
	if (cqe <= 0 || cqe > sdev->attr.max_cqe)
		return -EINVAL;
	return 0;
}

static int sroce_cq_reply(struct ib_udata *udata, const struct mminfo *mi)
{
	struct rxe_create_cq_resp resp = { .mi = *mi };

	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/**
 * sroce_create_cq() - ib_device_ops.create_cq
 * @ibcq: the CQ ib_core allocated
 * @attr: cqe (entries wanted), comp_vector, flags (none supported)
 * @udata: for a user CQ, room for struct rxe_create_cq_resp
 *
 * The ring gets the next power of two above @attr->cqe slots; the depth
 * reported back (ibcq->cqe) is one less, as librxe expects.
 *
 * Return: 0; -EOPNOTSUPP for creation flags (e.g. timestamps); -EINVAL
 * for a size of 0 or above max_cqe, or a user response buffer too small;
 * -ENOMEM when the device has its maximum of CQs or memory is short.
 */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibcq->device);
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	struct mminfo mi = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (udata && (udata->inlen ||
		      udata->outlen < sizeof(struct rxe_create_cq_resp)))
		return -EINVAL;
	err = sroce_cq_check_size(sdev, attr->cqe);
	if (err)
		return err;
	err = sroce_res_get(&sdev->res.cq, sdev->attr.max_cq);
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	cq->user = udata;
	err = sroce_queue_init(&cq->queue,
			       udata ? SROCE_QUEUE_TO_USER : SROCE_QUEUE_KERNEL,
			       attr->cqe, sizeof(union sroce_cqe));
	if (err)
		goto err_put_count;
	sroce_queue_set_lock(&cq->queue, &cq->lock);
	if (udata) {
		err = sroce_queue_map_user(&cq->queue,
					   sroce_udata_ucontext(udata), &mi);
		if (err)
			goto err_free_queue;
		err = sroce_cq_reply(udata, &mi);
		if (err)
			goto err_free_queue;
	}
	ibcq->cqe = sroce_queue_depth(&cq->queue);
	return 0;

err_free_queue:
	sroce_queue_cleanup(&cq->queue);
err_put_count:
	sroce_res_put(&sdev->res.cq);
	return err;
}

/**
 * sroce_destroy_cq() - ib_device_ops.destroy_cq
 * @ibcq: the CQ; ib_core has checked that no QP or SRQ uses it any more,
 *	and a destroyed QP no longer completes anything
 * @udata: user data, unused
 *
 * Return: 0.
 */
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);

	sroce_queue_cleanup(&cq->queue);
	sroce_res_put(&to_sroce_dev(ibcq->device)->res.cq);
	return 0;
}

/**
 * sroce_resize_cq() - ib_device_ops.resize_cq
 * @ibcq: the CQ
 * @cqe: the new number of entries
 * @udata: for a user CQ, room for struct rxe_resize_cq_resp; the new ring
 *	has a new mmap offset, and the old mapping stays valid until
 *	user space unmaps it
 *
 * The completions not yet polled move to the new ring, in order.
 *
 * Return: 0; -EINVAL for a size of 0 or above max_cqe, a size below the
 * number of completions waiting, or a response buffer too small;
 * -ENOMEM.
 */
static int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibcq->device);
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	struct sroce_queue old = {};
	struct mminfo mi = {};
	unsigned long flags;
	int err;

	if (udata && udata->outlen < sizeof(struct rxe_resize_cq_resp))
		return -EINVAL;
	err = sroce_cq_check_size(sdev, cqe);
	if (err)
		return err;

	err = sroce_queue_resize_prepare(&cq->queue, &old, cqe,
					 udata ? sroce_udata_ucontext(udata) :
						 NULL, &mi);
	if (err)
		return err;
	if (udata) {
		struct rxe_resize_cq_resp resp = { .mi = mi };

		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto out_cleanup;
	}

	spin_lock_irqsave(&cq->lock, flags);
	err = sroce_queue_resize_commit(&cq->queue, &old);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (!err)
		ibcq->cqe = sroce_queue_depth(&cq->queue);

out_cleanup:
	/* the old ring on success, the unused new one on failure */
	sroce_queue_cleanup(&old);
	return err;
}

static void sroce_cqe_to_user(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	u32 flags = 0;

	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	uwc->qp_num = wc->qp ? wc->qp->qp_num : 0;
	uwc->src_qp = wc->src_qp;
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;

	if (wc->wc_flags & IB_WC_GRH)
		flags |= SROCE_UWC_GRH;
	if (wc->wc_flags & IB_WC_WITH_IMM) {
		flags |= SROCE_UWC_WITH_IMM;
		uwc->ex.imm_data = wc->ex.imm_data;
	}
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		flags |= SROCE_UWC_WITH_INV;
		uwc->ex.invalidate_rkey = wc->ex.invalidate_rkey;
	}
	if (wc->wc_flags & IB_WC_IP_CSUM_OK)
		flags |= SROCE_UWC_IP_CSUM_OK;
	uwc->wc_flags = flags;
}

static bool sroce_cq_should_notify(struct sroce_cq *cq, const struct ib_wc *wc,
				   bool solicited)
{
	lockdep_assert_held(&cq->lock);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		WRITE_ONCE(cq->notify, 0);
		return true;
	}
	return false;
}

static void sroce_cq_overflowed(struct sroce_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};

	ibdev_warn_ratelimited(cq->ibcq.device,
			       "CQ of %u entries overflowed; it is in error\n",
			       sroce_queue_depth(&cq->queue));
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * sroce_cq_post() - add a completion to a CQ
 * @cq: the CQ
 * @wc: the completion; @wc->qp names the QP
 * @solicited: the completion is of a solicited receive (for IB_CQ_SOLICITED)
 *
 * Calls the CQ's completion handler, once, if the CQ was armed for this
 * completion, and its event handler with IB_EVENT_CQ_ERR if the CQ was
 * full: the completion is then lost and the CQ stays in error.
 *
 * Context: any; takes @cq->lock with interrupts saved. The caller must
 * not hold a lock the completion handler might take.
 *
 * Return: 0, or -EOVERFLOW if the CQ is (or just went) in error.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited)
{
	union sroce_cqe *slot;
	unsigned long flags;
	bool overflowed = false;
	bool notify = false;
	int err = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow) {
		err = -EOVERFLOW;
	} else if (sroce_queue_full(&cq->queue)) {
		cq->overflow = true;
		overflowed = true;
		err = -EOVERFLOW;
	} else {
		slot = sroce_queue_producer_slot(&cq->queue);
		if (cq->user)
			sroce_cqe_to_user(&slot->uwc, wc);
		else
			slot->ibwc = *wc;
		sroce_queue_advance_producer(&cq->queue);
		notify = sroce_cq_should_notify(cq, wc, solicited);
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflowed)
		sroce_cq_overflowed(cq);
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return err;
}

/**
 * sroce_poll_cq() - ib_device_ops.poll_cq, for kernel CQs
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: filled with the oldest completions
 *
 * Context: any.
 *
 * Return: the number of completions taken, or -EINVAL for a user CQ
 * (librxe polls its ring itself).
 */
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	union sroce_cqe *slot;
	unsigned long flags;
	int n = 0;

	if (cq->user)
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && !sroce_queue_empty(&cq->queue)) {
		slot = sroce_queue_consumer_slot(&cq->queue);
		wc[n++] = slot->ibwc;
		sroce_queue_advance_consumer(&cq->queue);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * sroce_peek_cq() - ib_device_ops.peek_cq
 * @ibcq: the CQ
 * @wc_cnt: the caller's threshold
 *
 * Return: the number of completions waiting, at most @wc_cnt.
 */
static int sroce_peek_cq(struct ib_cq *ibcq, int wc_cnt)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	unsigned long flags;
	u32 count;

	spin_lock_irqsave(&cq->lock, flags);
	count = sroce_queue_count(&cq->queue);
	spin_unlock_irqrestore(&cq->lock, flags);
	return min_t(u32, count, max(wc_cnt, 0));
}

/**
 * sroce_req_notify_cq() - ib_device_ops.req_notify_cq
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Arms the CQ: the next completion (or the next solicited or failed one)
 * calls the completion handler once. A stronger arming request is not
 * weakened by a later IB_CQ_SOLICITED.
 *
 * Return: 0, or 1 with IB_CQ_REPORT_MISSED_EVENTS if completions are
 * already waiting (kernel consumers then poll again).
 */
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_sroce_cq(ibcq);
	u8 want = flags & IB_CQ_SOLICITED_MASK;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		WRITE_ONCE(cq->notify, want);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !sroce_queue_empty(&cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* The verbs on completion queues, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_cq_verbs = {
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	.create_cq = sroce_create_cq,
	.resize_cq = sroce_resize_cq,
	.req_notify_cq = sroce_req_notify_cq,
	.poll_cq = sroce_poll_cq,
	.peek_cq = sroce_peek_cq,
	.destroy_cq = sroce_destroy_cq,
};
