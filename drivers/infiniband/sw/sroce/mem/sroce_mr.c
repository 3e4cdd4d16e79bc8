// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce memory regions: registration verbs, lookup by key, and the
 * checks of (key, iova, length, access) the data path makes before it
 * touches an MR's memory (sroce_mr_io.c).
 *
 * Lifetime. An MR is allocated here. Its key index is reserved in
 * sroce_dev.keys first and the tagged pointer is stored there last, once
 * the MR is fully built. Lookups run under RCU and take a reference with
 * kref_get_unless_zero(). dereg marks the MR invalid (the data path
 * checks the state under mr->lock before every copy, so no access
 * starts after that), unpublishes the key and drops the registration's
 * reference. If that was the last one, dereg unpins and frees at once;
 * otherwise a QP still holds the MR (a message in progress, a key-cache
 * entry) and dereg does not wait for it: the last sroce_mr_put() hands
 * the MR to a work item that unpins and frees it. Either way the MR
 * memory goes with kfree_rcu(), since a lookup may still be looking at
 * it.
 *
 * Memory is virtual-DMA: ib_core's "DMA addresses" (map_mr_sg, DMA MRs)
 * are kernel virtual addresses.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_task.h"
#include "mem/sroce_mr.h"

/* Pages of a user MR mapped between two cond_resched() calls. */
#define SROCE_MR_RESCHED_PAGES		1024

/* ---- validation ------------------------------------------------------- */

/**
 * sroce_mr_access_check() - validate the access flags of a registration
 * @access: IB_ACCESS_* flags from the consumer
 *
 * The known bits are local write, the three remote bits and MW bind.
 * IB_ACCESS_HUGETLB and the optional range (IB_ACCESS_RELAXED_ORDERING
 * and friends) are hints and are ignored. IB_ZERO_BASED is for windows.
 *
 * Context: any.
 * Return: 0; -EOPNOTSUPP for on-demand paging; -EINVAL for any other
 * bit, or for remote write or remote atomic without local write.
 */
int sroce_mr_access_check(int access)
{
	u32 bits = access;

	if (bits & IB_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	if (bits & ~(SROCE_ACCESS_MR | IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL))
		return -EINVAL;
	if ((bits & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(bits & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/**
 * sroce_mr_page_count() - pages a region spans
 * @start: address of its first byte
 * @length: bytes, at least 1
 * @page_shift: log2 of the page size
 *
 * Context: any.
 * Return: the number of pages that hold [@start, @start + @length).
 */
u64 sroce_mr_page_count(u64 start, u64 length, unsigned int page_shift)
{
	u64 first = start >> page_shift;
	u64 last = (start + length - 1) >> page_shift;

	return last - first + 1;
}

/* ---- creation and destruction ----------------------------------------- */

/*
 * A new MR: counted, key index reserved, not yet visible. The caller
 * fills in the kind-specific part and publishes it, or discards it.
 */
static struct sroce_mr *sroce_mr_create(struct ib_pd *pd,
					enum sroce_mr_kind kind)
{
	struct sroce_dev *sdev = to_sroce_dev(pd->device);
	struct sroce_mr *mr;
	u32 index;
	int err;

	err = sroce_res_get(&sdev->res.mr, sdev->attr.max_mr);
	if (err)
		return ERR_PTR(err);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_put_res;
	}

	err = sroce_key_reserve(sdev, &index);
	if (err)
		goto err_free_mr;

	kref_init(&mr->ref);
	spin_lock_init(&mr->lock);
	atomic_set(&mr->num_mw, 0);
	mr->kind = kind;
	mr->state = SROCE_MR_INVALID;
	mr->key = sroce_key_first(index);
	/* ib_core sets these after we return; lookups may come before. */
	mr->ibmr.device = pd->device;
	mr->ibmr.pd = pd;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return mr;

err_free_mr:
	kfree(mr);
err_put_res:
	sroce_res_put(&sdev->res.mr);
	return ERR_PTR(err);
}

/* Undo sroce_mr_create() for an MR that was never published. */
static void sroce_mr_discard(struct sroce_mr *mr)
{
	struct sroce_dev *sdev = to_sroce_dev(mr->ibmr.device);

	sroce_key_remove(sdev, sroce_key_index(mr->key));
	kfree(mr);
	sroce_res_put(&sdev->res.mr);
}

static void sroce_mr_publish(struct sroce_mr *mr)
{
	struct sroce_dev *sdev = to_sroce_dev(mr->ibmr.device);

	sroce_key_publish(sdev, sroce_key_index(mr->key), mr,
			  SROCE_KEY_TAG_MR);
}

/**
 * sroce_get_dma_mr() - ib_device_ops.get_dma_mr
 * @pd: the PD
 * @access: IB_ACCESS_* flags
 *
 * The MR covers the whole kernel address space: an iova is a kernel
 * virtual address. ib_alloc_pd() uses it for pd->local_dma_lkey.
 *
 * Context: process context, may sleep.
 * Return: the MR, or an ERR_PTR: -EINVAL/-EOPNOTSUPP for bad @access,
 * -ENOMEM when out of memory, keys or MRs.
 */
struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct sroce_mr *mr;
	int err;

	err = sroce_mr_access_check(access);
	if (err)
		return ERR_PTR(err);

	mr = sroce_mr_create(pd, SROCE_MR_DMA);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->access = access & SROCE_ACCESS_MR;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->state = SROCE_MR_VALID;
	sroce_mr_publish(mr);
	return &mr->ibmr;
}

/* Fill the page map of a user MR from its pinned pages. */
static int sroce_mr_fill_pages(struct sroce_mr *mr, struct ib_umem *umem)
{
	struct sg_page_iter iter;
	unsigned long n = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (n == mr->num_pages)
			break;
		mr->pages[n++] = sg_page_iter_page(&iter);
		if (!(n % SROCE_MR_RESCHED_PAGES))
			cond_resched();
	}
	return n == mr->num_pages ? 0 : -EFAULT;
}

static int sroce_reg_user_check(u64 start, u64 length, u64 iova, int access,
				struct ib_udata *udata)
{
	if (udata && udata->inlen)
		return -EINVAL;
	if (!length)
		return -EINVAL;
	/* Neither range may wrap past 2^64. */
	if (length - 1 > U64_MAX - iova || length - 1 > U64_MAX - start)
		return -EINVAL;
	return sroce_mr_access_check(access);
}

/**
 * sroce_reg_user_mr() - ib_device_ops.reg_user_mr
 * @pd: the PD
 * @start: user address of the first byte
 * @length: bytes, at least 1
 * @iova: the address the consumer uses for @start in work requests
 * @access: IB_ACCESS_* flags
 * @udata: user data; librxe sends none
 *
 * Pins the pages (ib_umem_get() honours @access: read-only memory cannot
 * be registered writable) and keeps one struct page pointer per page.
 * Linear in the number of pages, and reschedules while it walks them.
 *
 * Context: process context, may sleep.
 * Return: the MR, or an ERR_PTR: -EINVAL for bad arguments or driver
 * data, -EOPNOTSUPP for on-demand paging, -ENOMEM when out of memory,
 * keys or MRs, or what ib_umem_get() returns (e.g. -EFAULT, -ENOMEM for
 * RLIMIT_MEMLOCK).
 */
static struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				       u64 iova, int access, struct ib_udata *udata)
{
	struct ib_umem *umem;
	struct sroce_mr *mr;
	u64 count;
	int err;

	err = sroce_reg_user_check(start, length, iova, access, udata);
	if (err)
		return ERR_PTR(err);

	count = sroce_mr_page_count(start, length, PAGE_SHIFT);
	/* kvmalloc refuses more than INT_MAX bytes. */
	if (count > INT_MAX / sizeof(struct page *))
		return ERR_PTR(-ENOMEM);

	mr = sroce_mr_create(pd, SROCE_MR_USER);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->pages = kvmalloc_array(count, sizeof(*mr->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_discard;
	}
	mr->num_pages = count;

	umem = ib_umem_get(pd->device, start, length, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_free_pages;
	}

	err = sroce_mr_fill_pages(mr, umem);
	if (err)
		goto err_release_umem;

	mr->umem = umem;
	mr->page_shift = PAGE_SHIFT;
	mr->first_offset = start & ~PAGE_MASK;
	mr->access = access & SROCE_ACCESS_MR;
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->state = SROCE_MR_VALID;
	sroce_mr_publish(mr);
	return &mr->ibmr;

err_release_umem:
	ib_umem_release(umem);
err_free_pages:
	kvfree(mr->pages);
err_discard:
	sroce_mr_discard(mr);
	return ERR_PTR(err);
}

/**
 * sroce_alloc_mr() - ib_device_ops.alloc_mr
 * @pd: the PD
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: pages map_mr_sg may map, 1..SROCE_MAX_FAST_REG_PAGES
 *
 * The MR starts INVALID; IB_WR_REG_MR (sroce_mr_fast_reg()) validates it.
 *
 * Context: process context, may sleep.
 * Return: the MR, or an ERR_PTR: -EOPNOTSUPP for another @type, -EINVAL
 * for a bad @max_num_sg, -ENOMEM when out of memory, keys or MRs.
 */
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_create(pd, SROCE_MR_FRMR);
	if (IS_ERR(mr))
		return ERR_CAST(mr);

	mr->page_list = kcalloc(max_num_sg, sizeof(*mr->page_list),
				GFP_KERNEL);
	mr->map_list = kcalloc(max_num_sg, sizeof(*mr->map_list), GFP_KERNEL);
	if (!mr->page_list || !mr->map_list) {
		kfree(mr->page_list);
		kfree(mr->map_list);
		sroce_mr_discard(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	sroce_mr_publish(mr);
	return &mr->ibmr;
}

/* Unpin and free what the MR maps, then the MR itself after a grace period. */
static void sroce_mr_free(struct sroce_mr *mr)
{
	switch (mr->kind) {
	case SROCE_MR_USER:
		ib_umem_release(mr->umem);
		kvfree(mr->pages);
		break;
	case SROCE_MR_FRMR:
		kfree(mr->page_list);
		kfree(mr->map_list);
		break;
	case SROCE_MR_DMA:
		break;
	}
	kfree_rcu(mr, rcu);
}

static void sroce_mr_free_work(struct work_struct *work)
{
	struct sroce_mr *mr = container_of(work, struct sroce_mr, free_work);
	struct sroce_dev *sdev = to_sroce_dev(mr->ibmr.device);

	sroce_mr_free(mr);
	if (atomic_dec_and_test(&sdev->mr_zombies))
		wake_up_var(&sdev->mr_zombies);
}

/*
 * The last reference went after dereg (which counted the MR in
 * mr_zombies): this may be a QP engine in atomic context, and
 * ib_umem_release() sleeps, so the freeing is deferred.
 */
static void sroce_mr_release(struct kref *ref)
{
	struct sroce_mr *mr = container_of(ref, struct sroce_mr, ref);

	INIT_WORK(&mr->free_work, sroce_mr_free_work);
	sroce_task_defer(&mr->free_work);
}

/**
 * sroce_mr_put() - drop a reference
 * @mr: the MR
 *
 * Context: any; never sleeps.
 */
void sroce_mr_put(struct sroce_mr *mr)
{
	kref_put(&mr->ref, sroce_mr_release);
}

/**
 * sroce_dereg_mr() - ib_device_ops.dereg_mr
 * @ibmr: the MR
 * @udata: user data, unused
 *
 * Invalidates the MR and unpublishes its key. If nothing else holds the
 * MR it is unpinned and freed now; if a QP still does (a message in
 * progress, a cached key), that QP's last sroce_mr_put() frees it later,
 * from a work item. Never waits for the data path.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EBUSY while memory windows are bound to the MR.
 */
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_sroce_mr(ibmr);
	struct sroce_dev *sdev = to_sroce_dev(ibmr->device);
	unsigned long flags;

	/* A bind takes mr->lock to count itself in num_mw, or sees dead. */
	spin_lock_irqsave(&mr->lock, flags);
	if (atomic_read(&mr->num_mw)) {
		spin_unlock_irqrestore(&mr->lock, flags);
		return -EBUSY;
	}
	mr->dead = true;
	mr->state = SROCE_MR_INVALID;
	spin_unlock_irqrestore(&mr->lock, flags);

	sroce_key_remove(sdev, sroce_key_index(mr->key));
	sroce_res_put(&sdev->res.mr);
	if (refcount_dec_if_one(&mr->ref.refcount)) {
		sroce_mr_free(mr);
		return 0;
	}
	/*
	 * A QP still holds the MR. Its next copy sees it invalid; wait for
	 * the copies that saw it valid (RCU readers, see sroce_mr_copy()).
	 * Counted before the put: the release may run inside it.
	 */
	synchronize_rcu();
	atomic_inc(&sdev->mr_zombies);
	sroce_mr_put(mr);
	return 0;
}

/* ---- the data path ---------------------------------------------------- */

/**
 * sroce_mr_view() - what the data path needs of an MR, in one go
 * @mr: the MR, referenced
 * @v: filled under the MR's lock
 *
 * Context: any; takes the MR's lock with interrupts off.
 */
void sroce_mr_view(struct sroce_mr *mr, struct sroce_mr_view *v)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	v->key = mr->key;
	v->state = mr->state;
	v->access = mr->access;
	v->iova = mr->iova;
	v->length = mr->length;
	v->first_offset = mr->first_offset;
	v->page_shift = mr->page_shift;
	v->num_pages = mr->num_pages;
	/* a fast-reg swaps lists: translate through the one just checked */
	v->page_list = mr->kind == SROCE_MR_FRMR ? mr->page_list : NULL;
	spin_unlock_irqrestore(&mr->lock, flags);
}

static int sroce_mr_view_check(const struct sroce_mr_view *v,
			       const struct sroce_mr *mr, struct ib_pd *pd,
			       u64 iova, u64 len, u32 access)
{
	if (mr->ibmr.pd != pd || v->state != SROCE_MR_VALID)
		return -EACCES;
	if (access & ~v->access & SROCE_ACCESS_MR)
		return -EACCES;
	if (!sroce_range_within(v->iova, v->length, iova, len))
		return -EFAULT;
	return 0;
}

/**
 * sroce_mr_get_lkey() - find an MR by its exact current key
 * @sdev: the device
 * @lkey: the key
 *
 * Context: any; takes the RCU read lock itself.
 * Return: the MR with a reference (drop it with sroce_mr_put()), or NULL
 * when @lkey names no MR or is stale. The MR may be INVALID.
 */
struct sroce_mr *sroce_mr_get_lkey(struct sroce_dev *sdev, u32 lkey)
{
	unsigned int tag = 0;
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = sroce_key_lookup(sdev, lkey, &tag);
	if (mr && (tag != SROCE_KEY_TAG_MR || READ_ONCE(mr->key) != lkey ||
		   !sroce_mr_tryget(mr)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * sroce_mr_check() - may @pd access [@iova, @iova + @len) of @mr so?
 * @mr: the MR, referenced
 * @pd: the PD of the QP doing the access
 * @iova: first byte
 * @len: bytes
 * @access: IB_ACCESS_* bits the access needs (0 for a local read,
 *	IB_ACCESS_LOCAL_WRITE for a local write, a remote bit for a remote
 *	access)
 *
 * Context: any; takes mr->lock with interrupts off.
 * Return: 0; -EACCES for another PD, a missing access bit or an MR that
 * is not VALID; -EFAULT when the range is not inside the MR.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   u32 access)
{
	struct sroce_mr_view v;

	sroce_mr_view(mr, &v);
	return sroce_mr_view_check(&v, mr, pd, iova, len, access);
}

/**
 * sroce_mr_resolve() - the rkey half of sroce_rkey_get() for an MR
 * @mr: the MR, referenced; the reference passes to the caller on success
 *	and is dropped on failure
 * @rkey: the rkey from the packet
 * @pd: the PD of the responder's QP
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: the remote access bit(s) needed
 * @err: set as sroce_rkey_get() documents, on failure only
 *
 * Context: any; takes the MR's lock, with interrupts off.
 * Return: @mr, or NULL and *@err.
 */
struct sroce_mr *sroce_mr_resolve(struct sroce_mr *mr, u32 rkey,
				  struct ib_pd *pd, u64 iova, u64 len,
				  u32 access, int *err)
{
	struct sroce_mr_view v;
	int ret;

	sroce_mr_view(mr, &v);
	ret = v.key == rkey ? sroce_mr_view_check(&v, mr, pd, iova, len, access)
			    : -ENOENT;
	if (ret) {
		sroce_mr_put(mr);
		*err = ret;
		return NULL;
	}
	return mr;
}

/* The verbs on memory regions, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_mr_verbs = {
	.get_dma_mr = sroce_get_dma_mr,
	.reg_user_mr = sroce_reg_user_mr,
	.alloc_mr = sroce_alloc_mr,
	.dereg_mr = sroce_dereg_mr,
};
