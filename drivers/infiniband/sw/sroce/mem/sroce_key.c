// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce key space: the lkeys and rkeys of memory regions and windows.
 *
 * One xarray per device (sroce_dev.keys) maps a key index to its object,
 * an MR or an MW told apart by the pointer tag, so that an rkey on the
 * wire names exactly one object. An index is reserved while the object
 * is built, published once it is complete, and removed first when it is
 * destroyed. Writers are the verbs (process context, the xarray's own
 * lock); readers are the data path, under RCU. sroce_rkey_get() is the
 * one resolver of rkeys from the wire: it looks the key up and hands it
 * to the MR or the window it names.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>

#include "core/sroce_dev.h"
#include "mem/sroce_key.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mw.h"

/**
 * sroce_key_first() - the first key of a newly created MR or MW
 * @index: its key index
 *
 * Context: any.
 * Return: @index with a random non-zero variant.
 */
u32 sroce_key_first(u32 index)
{
	return sroce_key_compose(index,
				 get_random_u32_inclusive(1, SROCE_KEY_VARIANT_MASK));
}

/**
 * sroce_key_reserve() - reserve a key index for an object being built
 * @sdev: the device
 * @index: the reserved index
 *
 * Lookups see nothing at @index until sroce_key_publish().
 *
 * Context: process context, may sleep.
 * Return: 0, or -ENOMEM when memory or the index space is exhausted.
 */
int sroce_key_reserve(struct sroce_dev *sdev, u32 *index)
{
	int err;

	err = xa_alloc_cyclic(&sdev->keys, index, NULL,
			      XA_LIMIT(SROCE_MIN_KEY_INDEX, SROCE_MAX_KEY_INDEX),
			      &sdev->next_key, GFP_KERNEL);
	if (err < 0)
		return -ENOMEM;
	return 0;
}

/**
 * sroce_key_publish() - make a fully built object visible to lookups
 * @sdev: the device
 * @index: an index from sroce_key_reserve()
 * @obj: the MR or MW
 * @tag: SROCE_KEY_TAG_MR or SROCE_KEY_TAG_MW
 *
 * The store orders every earlier write to @obj before the pointer.
 *
 * Context: process context.
 */
void sroce_key_publish(struct sroce_dev *sdev, u32 index, void *obj,
		       unsigned int tag)
{
	void *old;

	/* The slot exists (reserved), so this store allocates nothing. */
	old = xa_store(&sdev->keys, index, xa_tag_pointer(obj, tag),
		       GFP_KERNEL);
	WARN_ON_ONCE(old);
}

/**
 * sroce_key_remove() - unpublish an object, or give back a reservation
 * @sdev: the device
 * @index: the key index
 *
 * Lookups that started earlier may still find the object until an RCU
 * grace period has passed; their kref_get_unless_zero() fails once the
 * object's count is zero.
 *
 * Context: process context.
 */
void sroce_key_remove(struct sroce_dev *sdev, u32 index)
{
	xa_erase(&sdev->keys, index);
}

/**
 * sroce_key_lookup() - the object a key's index names
 * @sdev: the device
 * @key: an lkey or rkey; its variant is not compared here
 * @tag: set to the object's tag when one is found
 *
 * Context: the caller holds rcu_read_lock(), and must take a reference
 * (sroce_mr_tryget(), sroce_mw_tryget()) before leaving it.
 * Return: the MR or MW, or NULL.
 */
void *sroce_key_lookup(struct sroce_dev *sdev, u32 key, unsigned int *tag)
{
	void *entry;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "sroce key lookup without RCU");
	entry = xa_load(&sdev->keys, sroce_key_index(key));
	if (!entry)
		return NULL;
	*tag = xa_pointer_tag(entry);
	return xa_untag_pointer(entry);
}

/**
 * sroce_rkey_get() - resolve an rkey for a remote access
 * @sdev: the device
 * @rkey: the rkey from the packet
 * @pd: the PD of the responder's QP
 * @qpn: the responder's QP number (type-2B windows are bound to one QP)
 * @iova: first byte accessed
 * @len: bytes accessed
 * @access: the remote access bit(s) the operation needs
 * @err: set to -ENOENT when @rkey names nothing or is stale, -EACCES
 *	for a PD, QP, access or state mismatch, -EFAULT for a range outside
 *	the MR or window; untouched on success
 *
 * An rkey names an MR (which must grant @access) or a bound window (which
 * must grant @access, contain the range and, for type 2B, be bound to
 * @qpn); either must belong to @pd. The caller then uses the returned
 * MR at @iova: windows are never zero-based.
 *
 * Context: any; takes the RCU read lock and object locks itself.
 * Return: the backing MR with a reference, or NULL and *@err.
 */
struct sroce_mr *sroce_rkey_get(struct sroce_dev *sdev, u32 rkey,
				struct ib_pd *pd, u32 qpn, u64 iova, u64 len,
				u32 access, int *err)
{
	unsigned int tag = 0;
	struct sroce_mr *mr;
	void *obj;

	rcu_read_lock();
	obj = sroce_key_lookup(sdev, rkey, &tag);
	if (obj && tag == SROCE_KEY_TAG_MR && !sroce_mr_tryget(obj))
		obj = NULL;
	if (obj && tag == SROCE_KEY_TAG_MW && !sroce_mw_tryget(obj))
		obj = NULL;
	rcu_read_unlock();
	if (!obj) {
		*err = -ENOENT;
		return NULL;
	}

	if (tag == SROCE_KEY_TAG_MW) {
		mr = sroce_mw_resolve(obj, rkey, pd, qpn, iova, len, access,
				      err);
		sroce_mw_put(obj);
		return mr;
	}

	return sroce_mr_resolve(obj, rkey, pd, iova, len, access, err);
}
