/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce memory regions.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "mem/sroce_key.h"

struct sroce_dev;

/* The access bits that mean something for an MR or an MW. */
#define SROCE_ACCESS_REMOTE	(IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_ATOMIC)
#define SROCE_ACCESS_MR		(IB_ACCESS_LOCAL_WRITE |		\
				 SROCE_ACCESS_REMOTE |			\
				 IB_ACCESS_MW_BIND)

/**
 * sroce_range_within() - is [@addr, @addr + @len) inside [@base, @base + @size)?
 * @base: start of the region
 * @size: bytes in the region
 * @addr: start of the access
 * @len: bytes accessed
 *
 * Written so that no sum can wrap: a region may end at 2^64.
 *
 * Return: true when the access lies in the region (an empty access at
 * its very end included).
 */
static inline bool sroce_range_within(u64 base, u64 size, u64 addr, u64 len)
{
	return addr >= base && len <= size && addr - base <= size - len;
}

/**
 * sroce_mr_page_pos() - page and offset of a byte of a paged region
 * @first_offset: offset of the region's first byte in its first page
 * @page_shift: log2 of the page size
 * @off: byte offset from the region's start (from its iova)
 * @index: the page, an index into the page map
 * @in_page: the offset in that page
 */
static inline void sroce_mr_page_pos(u64 first_offset, unsigned int page_shift,
				     u64 off, u64 *index, u64 *in_page)
{
	u64 pos = first_offset + off;

	*index = pos >> page_shift;
	*in_page = pos & ((1ULL << page_shift) - 1);
}

/**
 * enum sroce_mr_kind - how an MR came to be
 * @SROCE_MR_DMA: get_dma_mr: the whole kernel address space, iova is a
 *	kernel virtual address
 * @SROCE_MR_USER: reg_user_mr: pinned user pages
 * @SROCE_MR_FRMR: alloc_mr: a fast-registration MR that map_mr_sg fills
 *	with kernel virtual addresses and IB_WR_REG_MR validates
 */
enum sroce_mr_kind {
	SROCE_MR_DMA,
	SROCE_MR_USER,
	SROCE_MR_FRMR,
};

/**
 * enum sroce_mr_state - may the MR be used?
 * @SROCE_MR_INVALID: no (an FRMR before fast-reg or after invalidation)
 * @SROCE_MR_VALID: yes
 */
enum sroce_mr_state {
	SROCE_MR_INVALID,
	SROCE_MR_VALID,
};

/**
 * struct sroce_mr - a memory region
 * @ibmr: ib_core's MR; sroce allocates the whole struct. ib_core's
 *	ib_update_fast_reg_key() changes @ibmr.lkey/rkey ahead of the
 *	IB_WR_REG_MR that takes them, so the data path uses @key instead.
 * @ref: lookups and MW bindings hold references; the registration holds
 *	the first one
 * @free_work: unpins and frees the MR when its last reference goes after
 *	dereg (dereg frees at once when it held the last one)
 * @rcu: the MR is freed with kfree_rcu() (lookups run under RCU)
 * @lock: serialises changes of @key, @state, @access, @iova, @length and
 *	the page geometry (FRMRs only change), @dead and @num_mw changes
 *	against dereg; taken with interrupts off
 * @kind: DMA, user or fast-reg
 * @state: VALID or INVALID
 * @dead: dereg has started; no new MW may bind
 * @key: the current lkey (== rkey)
 * @access: IB_ACCESS_* bits in force (SROCE_ACCESS_MR bits only)
 * @iova: address of the first byte in the consumer's address space
 * @length: bytes in the region
 * @first_offset: offset of @iova in the first page of the page map
 * @page_shift: log2 of the page size of the page map
 * @num_pages: entries of the page map in use
 * @pages: user MR: the pinned pages, kvmalloc'd, one per PAGE_SIZE
 * @page_list: FRMR: kernel virtual addresses of the pages of the
 *	registration in force (the live list)
 * @map_list: FRMR: the staging list map_mr_sg fills; IB_WR_REG_MR swaps
 *	it with @page_list (sroce_frmr.c)
 * @max_pages: FRMR: capacity of each list (max_num_sg)
 * @mapped: FRMR: entries map_mr_sg staged in @map_list since the last
 *	registration; IB_WR_REG_MR takes them
 * @map_offset: FRMR: offset of the mapped data in its first page, as
 *	map_mr_sg found it (a ULP may rebase ibmr.iova afterwards)
 * @umem: user MR: the pinned memory
 * @num_mw: memory windows bound to this MR; dereg is refused while > 0
 */
struct sroce_mr {
	struct ib_mr ibmr;
	struct kref ref;
	struct work_struct free_work;
	struct rcu_head rcu;
	/* FRMR state and geometry, dead, num_mw vs dereg */
	spinlock_t lock;
	enum sroce_mr_kind kind;
	enum sroce_mr_state state;
	bool dead;
	u32 key;
	u32 access;
	u64 iova;
	u64 length;
	u64 first_offset;
	unsigned int page_shift;
	unsigned long num_pages;
	union {
		struct page **pages;
		u64 *page_list;
	};
	u64 *map_list;
	unsigned int max_pages;
	unsigned int mapped;
	u64 map_offset;
	struct ib_umem *umem;
	atomic_t num_mw;
};

static inline struct sroce_mr *to_sroce_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

int sroce_mr_access_check(int access);
u64 sroce_mr_page_count(u64 start, u64 length, unsigned int page_shift);

/* ib_device_ops */
struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);

/**
 * struct sroce_mr_view - what the data path needs of an MR, read in one
 *	go under its lock (sroce_mr_view())
 * @key: the current key
 * @state: VALID or not
 * @access: IB_ACCESS_* of the registration
 * @iova: first address
 * @length: bytes
 * @first_offset: offset of @iova in the first page
 * @page_shift: log2 of the page size
 * @num_pages: pages mapped
 * @page_list: a fast-reg MR's page list as checked (NULL otherwise)
 */
struct sroce_mr_view {
	u32 key;
	enum sroce_mr_state state;
	u32 access;
	u64 iova;
	u64 length;
	u64 first_offset;
	unsigned int page_shift;
	unsigned long num_pages;
	u64 *page_list;
};

/* data path: lookup and checks (the accesses are in sroce_mr_io.h) */
struct sroce_mr *sroce_mr_get_lkey(struct sroce_dev *sdev, u32 lkey);
void sroce_mr_put(struct sroce_mr *mr);
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   u32 access);
void sroce_mr_view(struct sroce_mr *mr, struct sroce_mr_view *v);
struct sroce_mr *sroce_mr_resolve(struct sroce_mr *mr, u32 rkey,
				  struct ib_pd *pd, u64 iova, u64 len,
				  u32 access, int *err);

/**
 * sroce_mr_tryget() - take a reference unless the MR is being destroyed
 * @mr: an MR found under RCU
 *
 * Return: true when a reference was taken.
 */
static inline bool sroce_mr_tryget(struct sroce_mr *mr)
{
	return kref_get_unless_zero(&mr->ref);
}

extern const struct ib_device_ops sroce_mr_verbs;

#endif /* SROCE_MR_H */
