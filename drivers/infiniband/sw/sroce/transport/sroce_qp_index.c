// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce QPN index: how the receive path finds a QP by number, and how a
 * QP leaves the index without waiting for an RCU grace period.
 *
 * ib_core allocates a QP and frees it as soon as destroy_qp returns, so a
 * lookup under RCU may not touch the QP itself before it holds a
 * reference: a lookup that loaded the pointer just before destroy_qp
 * unpublished it could otherwise take that reference on freed memory.
 * The index therefore holds a small handle of the QP's own, which keeps
 * the reference count and is freed with kfree_rcu(). A lookup takes its
 * reference on the handle; destroy_qp unpublishes the handle, drops the
 * creation reference, waits until the lookups that got one have dropped
 * theirs, and leaves the handle to RCU. A lookup that loaded the handle
 * too late finds the count at zero and fails without reading the QP.
 *
 * synchronize_rcu() in destroy_qp took a grace period per QP (16 to 23 ms
 * on the test machines), which made destroying ten thousand QPs a matter
 * of minutes.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "core/sroce_dev.h"
#include "core/sroce_param.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_qp_index.h"

#define SROCE_GSI_QPN	1

/**
 * struct sroce_qp_handle - what the QPN index holds for a QP
 * @ref: one reference from creation until destroy_qp, one for each
 *	lookup that found the QP and has not let it go
 * @qp: the QP
 * @rcu: frees the handle once no lookup can be reading it
 */
struct sroce_qp_handle {
	struct kref ref;
	struct sroce_qp *qp;
	struct rcu_head rcu;
};

/**
 * sroce_qp_index_reserve() - give a new QP its number and its handle
 * @sdev: the device
 * @qp: the QP, its type set; qp->ibqp.qp_num is written
 *
 * The number is reserved, not published: lookups do not find the QP
 * until sroce_qp_index_publish().
 *
 * Context: process context.
 * Return: 0; -EBUSY for a second GSI QP; -ENOMEM, or -EBUSY when every
 * number is taken.
 */
int sroce_qp_index_reserve(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	struct sroce_qp_handle *h;
	u32 qpn;
	int err;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	kref_init(&h->ref);
	h->qp = qp;
	init_completion(&qp->released);

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		qpn = SROCE_GSI_QPN;
		err = xa_insert(&sdev->qps, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&sdev->qps, &qpn, NULL,
				      XA_LIMIT(SROCE_MIN_QPN, SROCE_MAX_QPN),
				      &sdev->next_qpn, GFP_KERNEL);
	}
	if (err < 0) {
		kfree(h);
		return err;
	}
	qp->handle = h;
	qp->ibqp.qp_num = qpn;
	return 0;
}

/**
 * sroce_qp_index_publish() - let the receive path find a QP
 * @sdev: the device
 * @qp: the QP, its number reserved and everything a packet needs set up
 *
 * Context: process context.
 */
void sroce_qp_index_publish(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	/* replaces the reserved entry: allocates nothing, cannot fail */
	xa_store(&sdev->qps, qp->ibqp.qp_num, qp->handle, GFP_KERNEL);
}

/**
 * sroce_qp_index_cancel() - give back the number of a QP never published
 * @sdev: the device
 * @qp: the QP whose creation failed after sroce_qp_index_reserve()
 *
 * Context: process context.
 */
void sroce_qp_index_cancel(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	xa_erase(&sdev->qps, qp->ibqp.qp_num);
	kfree(qp->handle);
	qp->handle = NULL;
}

static void sroce_qp_handle_release(struct kref *ref)
{
	struct sroce_qp_handle *h = container_of(ref, struct sroce_qp_handle,
						 ref);

	complete(&h->qp->released);
}

/**
 * sroce_qp_index_remove() - take a QP out of the index for good
 * @sdev: the device
 * @qp: the published QP
 *
 * Returns when no packet can reach the QP any more: no lookup holds it,
 * and none can find it. The handle outlives the QP until the lookups
 * that may have loaded it have left their RCU read sections.
 *
 * Context: process context; sleeps until the receive path lets go.
 */
void sroce_qp_index_remove(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	struct sroce_qp_handle *h = qp->handle;

	xa_erase(&sdev->qps, qp->ibqp.qp_num);
	kref_put(&h->ref, sroce_qp_handle_release);
	wait_for_completion(&qp->released);
	qp->handle = NULL;
	kfree_rcu(h, rcu);
}

/**
 * sroce_qp_get() - find a QP by number, for the receive path
 * @sdev: the device
 * @qpn: the QP number from a packet
 *
 * Context: any.
 *
 * Return: the QP with a reference (drop it with sroce_qp_put()), or NULL
 * if no live QP has that number.
 */
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp_handle *h;
	struct sroce_qp *qp = NULL;

	rcu_read_lock();
	h = xa_load(&sdev->qps, qpn);
	if (h && kref_get_unless_zero(&h->ref))
		qp = h->qp;
	rcu_read_unlock();
	return qp;
}

/**
 * sroce_qp_put() - drop a reference taken by sroce_qp_get()
 * @qp: the QP; the caller may not touch it afterwards
 */
void sroce_qp_put(struct sroce_qp *qp)
{
	kref_put(&qp->handle->ref, sroce_qp_handle_release);
}
