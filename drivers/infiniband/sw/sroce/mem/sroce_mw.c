// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce memory windows: allocation, binding (type 1 and type 2B, both
 * through BIND_MW work requests), invalidation, and the rkey checks of
 * a bound window.
 *
 * Lifetime. ib_core allocates and frees struct sroce_mw. Its key index
 * lives in sroce_dev.keys next to the MRs'. dealloc unpublishes the key,
 * drops the allocation's reference, waits for the last lookup to drop
 * its own, unbinds, and waits for an RCU grace period, because ib_core
 * frees the window as soon as dealloc returns and a lookup may still be
 * looking at it.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/lockdep.h>
#include <linux/rcupdate.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "mem/sroce_key.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mw.h"

/**
 * sroce_alloc_mw() - ib_device_ops.alloc_mw
 * @ibmw: the window ib_core allocated (zeroed), with its PD and type set
 * @udata: user data; librxe sends none
 *
 * The window starts unbound, with an rkey ib_core hands to the consumer.
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for driver data or an unknown type; -ENOMEM when
 * out of memory, keys or windows.
 */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibmw->device);
	struct sroce_mw *mw = to_sroce_mw(ibmw);
	u32 index;
	int err;

	if (udata && udata->inlen)
		return -EINVAL;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;

	err = sroce_res_get(&sdev->res.mw, sdev->attr.max_mw);
	if (err)
		return err;
	err = sroce_key_reserve(sdev, &index);
	if (err)
		goto err_put_res;

	kref_init(&mw->ref);
	init_completion(&mw->released);
	spin_lock_init(&mw->lock);
	mw->state = SROCE_MW_FREE;
	mw->mr = NULL;
	mw->key = sroce_key_first(index);
	ibmw->rkey = mw->key;
	sroce_key_publish(sdev, index, mw, SROCE_KEY_TAG_MW);
	return 0;

err_put_res:
	sroce_res_put(&sdev->res.mw);
	return err;
}

static void sroce_mw_release(struct kref *ref)
{
	struct sroce_mw *mw = container_of(ref, struct sroce_mw, ref);

	complete(&mw->released);
}

/**
 * sroce_mw_put() - drop a reference
 * @mw: the window
 *
 * Context: any; never sleeps.
 */
void sroce_mw_put(struct sroce_mw *mw)
{
	kref_put(&mw->ref, sroce_mw_release);
}

/* Forget the binding, if any, and give the MR back. */
static void sroce_mw_unbind(struct sroce_mw *mw)
{
	struct sroce_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->state = SROCE_MW_FREE;
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
	if (mr) {
		atomic_dec(&mr->num_mw);
		sroce_mr_put(mr);
	}
}

/**
 * sroce_dealloc_mw() - ib_device_ops.dealloc_mw
 * @ibmw: the window
 *
 * Unbinds the window (so its MR may be deregistered) once no lookup holds
 * it any more, and returns only after an RCU grace period: ib_core frees
 * @ibmw right after.
 *
 * Context: process context, sleeps.
 * Return: 0.
 */
int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sroce_dev(ibmw->device);
	struct sroce_mw *mw = to_sroce_mw(ibmw);
	unsigned long flags;

	sroce_key_remove(sdev, sroce_key_index(mw->key));
	sroce_mw_put(mw);
	wait_for_completion(&mw->released);

	spin_lock_irqsave(&mw->lock, flags);
	sroce_mw_unbind(mw);
	spin_unlock_irqrestore(&mw->lock, flags);

	/* A lookup that found the entry before the erase may still read it. */
	synchronize_rcu();
	sroce_res_put(&sdev->res.mw);
	return 0;
}

static struct sroce_mw *sroce_mw_get(struct sroce_dev *sdev, u32 rkey)
{
	unsigned int tag = 0;
	struct sroce_mw *mw;

	rcu_read_lock();
	mw = sroce_key_lookup(sdev, rkey, &tag);
	if (mw && (tag != SROCE_KEY_TAG_MW || !sroce_mw_tryget(mw)))
		mw = NULL;
	rcu_read_unlock();
	return mw;
}

/* IBA 10.6.7.2: the window's side of a bind. */
static bool sroce_mw_may_bind(const struct sroce_mw *mw, struct ib_pd *qp_pd,
			      const struct sroce_mw_bind *b)
{
	lockdep_assert_held(&mw->lock);

	if (mw->key != b->mw_rkey ||
	    !sroce_key_same_object(b->mw_rkey, b->new_rkey))
		return false;
	/* Zero-based windows are optional; librxe refuses them too. */
	if (b->access & IB_ZERO_BASED || b->access & ~IB_ACCESS_SUPPORTED)
		return false;
	/* The QP, the window and (sroce_mw_mr_may_bind()) the MR: one PD. */
	if (mw->ibmw.pd != qp_pd)
		return false;
	if (mw->ibmw.type == IB_MW_TYPE_1)
		return true;
	/* Type 2: free, and a bind is never an unbind. */
	return mw->state == SROCE_MW_FREE && b->length;
}

/* IBA 10.6.7.2: the MR's side of a bind (C10-73, C10-74, C10-75). */
static bool sroce_mw_mr_may_bind(const struct sroce_mw *mw,
				 struct sroce_mr *mr,
				 const struct sroce_mw_bind *b)
{
	lockdep_assert_held(&mr->lock);

	if (mr->dead || mr->state != SROCE_MR_VALID)
		return false;
	if (mr->ibmr.pd != mw->ibmw.pd || !(mr->access & IB_ACCESS_MW_BIND))
		return false;
	if (b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return sroce_range_within(mr->iova, mr->length, b->addr, b->length);
}

static enum ib_wc_status sroce_mw_bind_locked(struct sroce_mw *mw,
					      struct ib_pd *qp_pd, u32 qpn,
					      const struct sroce_mw_bind *b,
					      struct sroce_mr *mr)
{
	unsigned long flags;
	bool ok;

	lockdep_assert_held(&mw->lock);
	if (!sroce_mw_may_bind(mw, qp_pd, b))
		return IB_WC_MW_BIND_ERR;

	if (mr) {
		/* Counted under mr->lock, so dereg sees us or we see dead. */
		spin_lock_irqsave(&mr->lock, flags);
		ok = sroce_mw_mr_may_bind(mw, mr, b);
		if (ok) {
			atomic_inc(&mr->num_mw);
			kref_get(&mr->ref);
		}
		spin_unlock_irqrestore(&mr->lock, flags);
		if (!ok)
			return IB_WC_MW_BIND_ERR;
	}

	/* A type-1 window may be re-bound: the new MR is held already. */
	sroce_mw_unbind(mw);
	mw->key = b->new_rkey;
	mw->ibmw.rkey = b->new_rkey;
	if (mr) {
		mw->state = SROCE_MW_BOUND;
		mw->mr = mr;
		mw->addr = b->addr;
		mw->length = b->length;
		mw->access = b->access & SROCE_ACCESS_REMOTE;
		mw->qpn = mw->ibmw.type == IB_MW_TYPE_2 ? qpn : 0;
	}
	return IB_WC_SUCCESS;
}

/**
 * sroce_mw_bind() - execute a BIND_MW work request
 * @sdev: the device
 * @qp_pd: the PD of the QP that posted it
 * @qpn: that QP's number; a type-2B window is bound to it
 * @b: the request, copied from the WQE (untrusted)
 *
 * Both window types are bound this way (librxe turns ibv_bind_mw() into
 * a BIND_MW WQE). IBA 10.6.7.2: the MR must be VALID, grant MW bind,
 * belong to the window's PD and contain the window; remote write or
 * atomic needs the MR's local write; the new rkey keeps the index. A type
 * 2 window must be free, of the QP's PD, and have a length; a type 1
 * window may be re-bound, and a length of 0 unbinds it. Zero-based
 * windows are not supported.
 *
 * Context: any; takes the window's lock, then the MR's, with interrupts
 * off.
 * Return: IB_WC_SUCCESS, or IB_WC_MW_BIND_ERR for any violation,
 * including keys that name nothing or are stale.
 */
enum ib_wc_status sroce_mw_bind(struct sroce_dev *sdev, struct ib_pd *qp_pd,
				u32 qpn, const struct sroce_mw_bind *b)
{
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	unsigned long flags;

	mw = sroce_mw_get(sdev, b->mw_rkey);
	if (!mw)
		return IB_WC_MW_BIND_ERR;

	if (b->length) {
		mr = sroce_mr_get_lkey(sdev, b->mr_lkey);
		if (!mr)
			goto out_put_mw;
	}

	spin_lock_irqsave(&mw->lock, flags);
	status = sroce_mw_bind_locked(mw, qp_pd, qpn, b, mr);
	spin_unlock_irqrestore(&mw->lock, flags);

	/* The binding took its own reference. */
	if (mr)
		sroce_mr_put(mr);
out_put_mw:
	sroce_mw_put(mw);
	return status;
}

/* May a remote access through @mw go ahead? */
static int sroce_mw_grants(const struct sroce_mw *mw, u32 rkey,
			   struct ib_pd *pd, u32 qpn, u64 iova, u64 len,
			   u32 access)
{
	lockdep_assert_held(&mw->lock);

	if (mw->key != rkey)
		return -ENOENT;
	if (mw->state != SROCE_MW_BOUND || mw->ibmw.pd != pd)
		return -EACCES;
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->qpn != qpn)
		return -EACCES;
	if (access & ~mw->access & SROCE_ACCESS_MR)
		return -EACCES;
	if (!sroce_range_within(mw->addr, mw->length, iova, len))
		return -EFAULT;
	return 0;
}

/**
 * sroce_mw_resolve() - the rkey half of sroce_rkey_get() for a window
 * @mw: the window, referenced
 * @rkey: the rkey from the packet
 * @pd: the PD of the responder's QP
 * @qpn: the responder's QP number
 * @iova: first byte accessed, in the bound MR's address space
 * @len: bytes accessed
 * @access: the remote access bit(s) needed
 * @err: set as sroce_rkey_get() documents, on failure only
 *
 * Context: any; takes the window's lock and the MR's, with interrupts off.
 * Return: the bound MR with a reference, or NULL and *@err.
 */
struct sroce_mr *sroce_mw_resolve(struct sroce_mw *mw, u32 rkey,
				  struct ib_pd *pd, u32 qpn, u64 iova, u64 len,
				  u32 access, int *err)
{
	struct sroce_mr *mr = NULL;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&mw->lock, flags);
	ret = sroce_mw_grants(mw, rkey, pd, qpn, iova, len, access);
	if (!ret) {
		mr = mw->mr;
		kref_get(&mr->ref);
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	if (ret)
		goto err;

	/* The window's rights stand in for the MR's remote rights. */
	ret = sroce_mr_check(mr, mr->ibmr.pd, iova, len, 0);
	if (ret) {
		sroce_mr_put(mr);
		goto err;
	}
	return mr;

err:
	*err = ret;
	return NULL;
}

/**
 * sroce_mw_invalidate() - the window half of sroce_key_invalidate()
 * @mw: the window, referenced
 * @pd: the PD of the QP that executes the invalidation
 * @key: the exact current rkey
 *
 * Context: any; takes the window's lock with interrupts off.
 * Return: IB_WC_SUCCESS (the window is unbound), IB_WC_LOC_PROT_ERR for
 * a stale @key, IB_WC_MW_BIND_ERR for a type-1 window or one of another
 * PD.
 */
enum ib_wc_status sroce_mw_invalidate(struct sroce_mw *mw, struct ib_pd *pd,
				      u32 key)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->key != key)
		status = IB_WC_LOC_PROT_ERR;
	else if (mw->ibmw.type != IB_MW_TYPE_2 || mw->ibmw.pd != pd)
		status = IB_WC_MW_BIND_ERR;
	else
		sroce_mw_unbind(mw);
	spin_unlock_irqrestore(&mw->lock, flags);
	return status;
}

/* The verbs on memory windows, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_mw_verbs = {
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,
};
