/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce memory windows (type 1 and type 2B).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_MW_H
#define SROCE_MW_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;
struct sroce_mr;

/**
 * enum sroce_mw_state - is the window bound?
 * @SROCE_MW_FREE: not bound: its rkey grants nothing
 * @SROCE_MW_BOUND: bound to @mr of struct sroce_mw
 */
enum sroce_mw_state {
	SROCE_MW_FREE,
	SROCE_MW_BOUND,
};

/**
 * struct sroce_mw - a memory window
 * @ibmw: ib_core's MW; ib_core allocates and frees the whole struct
 *	(INIT_RDMA_OBJ_SIZE)
 * @ref: lookups hold references; the allocation holds the first one
 * @released: completed when @ref drops to zero; dealloc waits for it
 * @lock: protects every field below; taken with interrupts off, before
 *	the bound MR's lock when both are needed
 * @state: FREE or BOUND
 * @key: the current rkey
 * @mr: the MR the window is bound to, with a reference, or NULL
 * @addr: first byte of the window, in @mr's address space
 * @length: bytes in the window
 * @access: remote access bits the window grants (SROCE_ACCESS_REMOTE)
 * @qpn: type 2B: the only QP that may use the rkey
 */
struct sroce_mw {
	struct ib_mw ibmw;
	struct kref ref;
	struct completion released;
	/* everything below */
	spinlock_t lock;
	enum sroce_mw_state state;
	u32 key;
	struct sroce_mr *mr;
	u64 addr;
	u64 length;
	u32 access;
	u32 qpn;
};

static inline struct sroce_mw *to_sroce_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

/**
 * struct sroce_mw_bind - a BIND_MW work request, as the WQE carries it
 * @mw_rkey: the window's current rkey
 * @new_rkey: its rkey once bound; differs at most in the low byte
 * @mr_lkey: lkey of the MR to bind to (unused when @length is 0)
 * @addr: first byte of the window, in the MR's address space
 * @length: bytes; 0 unbinds a type-1 window
 * @access: IB_ACCESS_* bits the window grants
 */
struct sroce_mw_bind {
	u32 mw_rkey;
	u32 new_rkey;
	u32 mr_lkey;
	u64 addr;
	u64 length;
	u32 access;
};

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status sroce_mw_bind(struct sroce_dev *sdev, struct ib_pd *qp_pd,
				u32 qpn, const struct sroce_mw_bind *b);

/**
 * sroce_mw_tryget() - take a reference unless the MW is being destroyed
 * @mw: an MW found under RCU
 *
 * Return: true when a reference was taken.
 */
static inline bool sroce_mw_tryget(struct sroce_mw *mw)
{
	return kref_get_unless_zero(&mw->ref);
}

void sroce_mw_put(struct sroce_mw *mw);
struct sroce_mr *sroce_mw_resolve(struct sroce_mw *mw, u32 rkey,
				  struct ib_pd *pd, u32 qpn, u64 iova, u64 len,
				  u32 access, int *err);
enum ib_wc_status sroce_mw_invalidate(struct sroce_mw *mw, struct ib_pd *pd,
				      u32 key);

extern const struct ib_device_ops sroce_mw_verbs;

#endif /* SROCE_MW_H */
