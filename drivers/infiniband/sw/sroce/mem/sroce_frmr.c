// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce fast registration: map_mr_sg, IB_WR_REG_MR and invalidation
 * (LOCAL_INV, SEND_WITH_INV) of fast-reg MRs.
 *
 * A fast-reg MR has two page lists. map_mr_sg fills the staging one,
 * map_list; IB_WR_REG_MR makes it the live one, page_list, which the
 * data path translates through. ULPs map the next I/O's pages before
 * the LOCAL_INV of the previous registration has executed (iSER does),
 * so a map must never touch the list that the registration still valid
 * under the old key uses: a peer that holds that key would otherwise
 * reach the new pages, or pages of earlier mappings already freed.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mw.h"

/* map_mr_sg page sizes: what query_device reports in page_size_cap. */
#define SROCE_FRMR_MIN_PAGE_SIZE	PAGE_SIZE
#define SROCE_FRMR_MAX_PAGE_SIZE	SZ_2G

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_sroce_mr(ibmr);

	if (mr->mapped >= mr->max_pages)
		return -ENOMEM;
	mr->map_list[mr->mapped++] = addr;
	return 0;
}

/**
 * sroce_map_mr_sg() - ib_device_ops.map_mr_sg
 * @ibmr: an MR from sroce_alloc_mr(); ib_map_mr_sg() has set page_size
 * @sg: the DMA-mapped (here: kernel virtual) scatterlist
 * @sg_nents: entries in @sg
 * @sg_offset: offset into the first entry, updated as ib_sg_to_pages() does
 *
 * Records the pages in the staging list, and ibmr->iova/length. They
 * take effect only when an IB_WR_REG_MR executes: the registration in
 * force, if any, keeps its own list, so consumers may map before the
 * LOCAL_INV of the previous registration has run.
 *
 * Context: process context or softirq, as the ULP calls it; the ULP
 * serialises it against IB_WR_REG_MR of the same MR.
 * Return: the number of @sg entries mapped, or a negative errno (-EINVAL
 * for a bad page size or a non fast-reg MR).
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_sroce_mr(ibmr);
	int n;

	if (mr->kind != SROCE_MR_FRMR)
		return -EINVAL;
	if (!is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SROCE_FRMR_MIN_PAGE_SIZE ||
	    ibmr->page_size > SROCE_FRMR_MAX_PAGE_SIZE)
		return -EINVAL;

	mr->mapped = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_mr_set_page);
	if (n > 0)
		mr->map_offset = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/*
 * The pages of a registration: those map_mr_sg staged since the last
 * one, which become the live list, or without a new map the live list
 * again, as it is. False when nothing was ever mapped or @length does
 * not fit the pages.
 */
static bool sroce_frmr_take_map(struct sroce_mr *mr, unsigned int shift,
				u64 length)
{
	lockdep_assert_held(&mr->lock);

	if (mr->mapped) {
		if (!sroce_range_within(0, (u64)mr->mapped << shift,
					mr->map_offset, length))
			return false;
		swap(mr->page_list, mr->map_list);
		mr->num_pages = mr->mapped;
		mr->first_offset = mr->map_offset;
		mr->page_shift = shift;
		mr->mapped = 0;
		return true;
	}
	return mr->num_pages && shift == mr->page_shift &&
	       sroce_range_within(0, (u64)mr->num_pages << shift,
				  mr->first_offset, length);
}

/**
 * sroce_mr_fast_reg() - execute an IB_WR_REG_MR
 * @pd: the PD of the QP that posted it
 * @ibmr: the MR named in the work request (a kernel pointer: user WQEs
 *	must never reach here)
 * @key: the new lkey/rkey; only its low byte may differ from the MR's
 * @access: IB_ACCESS_* flags of the registration
 *
 * The MR must be a fast-reg MR of @pd and INVALID; it becomes VALID with
 * @key and the pages map_mr_sg staged since its last registration (or,
 * with no new map, the pages of that registration again).
 *
 * Context: any; takes mr->lock with interrupts off.
 * Return: IB_WC_SUCCESS; IB_WC_LOC_PROT_ERR when the MR belongs to
 * another PD; IB_WC_LOC_QP_OP_ERR for anything else (not a fast-reg MR,
 * nothing mapped, bad @access, @key of another index, MR not INVALID).
 */
enum ib_wc_status sroce_mr_fast_reg(struct ib_pd *pd, struct ib_mr *ibmr,
				    u32 key, u32 access)
{
	struct sroce_mr *mr = to_sroce_mr(ibmr);
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;

	if (mr->kind != SROCE_MR_FRMR)
		return IB_WC_LOC_QP_OP_ERR;
	if (ibmr->pd != pd)
		return IB_WC_LOC_PROT_ERR;
	if (sroce_mr_access_check(access) || !is_power_of_2(ibmr->page_size))
		return IB_WC_LOC_QP_OP_ERR;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->dead || mr->state != SROCE_MR_INVALID ||
	    !sroce_key_same_object(mr->key, key) ||
	    !sroce_frmr_take_map(mr, ilog2(ibmr->page_size), ibmr->length)) {
		status = IB_WC_LOC_QP_OP_ERR;
	} else {
		mr->access = access & SROCE_ACCESS_MR;
		mr->iova = ibmr->iova;
		mr->length = ibmr->length;
		WRITE_ONCE(mr->key, key);
		mr->state = SROCE_MR_VALID;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return status;
}

static enum ib_wc_status sroce_mr_invalidate(struct sroce_mr *mr,
					     struct ib_pd *pd, u32 key)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;

	if (mr->kind != SROCE_MR_FRMR || mr->ibmr.pd != pd)
		return IB_WC_LOC_PROT_ERR;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key || atomic_read(&mr->num_mw))
		status = IB_WC_LOC_PROT_ERR;
	else
		mr->state = SROCE_MR_INVALID;
	spin_unlock_irqrestore(&mr->lock, flags);
	return status;
}

/**
 * sroce_key_invalidate() - execute a LOCAL_INV, or a SEND_WITH_INV's rkey
 * @sdev: the device
 * @pd: the PD of the QP that executes it
 * @key: the exact current key of a fast-reg MR or a type-2 MW
 *
 * An FRMR becomes INVALID; a type-2 MW becomes unbound. Invalidating an
 * object that is already invalid succeeds.
 *
 * Context: any; takes the object's lock with interrupts off.
 * Return: IB_WC_SUCCESS, or (IBA 11.6.2) for an MR: IB_WC_LOC_PROT_ERR
 * when @key names nothing, is stale, names a DMA or user MR, an MR of
 * another PD or an MR with bound windows; for an MW: IB_WC_LOC_PROT_ERR
 * for a stale key, IB_WC_MW_BIND_ERR for a type-1 MW or an MW of another
 * PD. The responder turns a failure into its own NAK.
 */
enum ib_wc_status sroce_key_invalidate(struct sroce_dev *sdev,
				       struct ib_pd *pd, u32 key)
{
	enum ib_wc_status status = IB_WC_LOC_PROT_ERR;
	unsigned int tag = 0;
	void *obj;

	rcu_read_lock();
	obj = sroce_key_lookup(sdev, key, &tag);
	if (obj && tag == SROCE_KEY_TAG_MR && !sroce_mr_tryget(obj))
		obj = NULL;
	if (obj && tag == SROCE_KEY_TAG_MW && !sroce_mw_tryget(obj))
		obj = NULL;
	rcu_read_unlock();
	if (!obj)
		return status;

	if (tag == SROCE_KEY_TAG_MR) {
		status = sroce_mr_invalidate(obj, pd, key);
		sroce_mr_put(obj);
	} else {
		status = sroce_mw_invalidate(obj, pd, key);
		sroce_mw_put(obj);
	}
	return status;
}

/* The verbs on fast-registration pages, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_frmr_verbs = {
	.map_mr_sg = sroce_map_mr_sg,
};
