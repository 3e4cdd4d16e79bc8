/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce key space: lkeys and rkeys, shared by memory regions and windows.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_KEY_H
#define SROCE_KEY_H

#include <linux/types.h>

struct ib_pd;
struct sroce_dev;
struct sroce_mr;

/*
 * Keys. An lkey or rkey is a 24-bit index into sroce_dev.keys, then an
 * 8-bit variant the consumer may change (fast-reg MRs, type-2 MWs) so a
 * stale key stops matching while the index stays the same.
 */
#define SROCE_KEY_VARIANT_BITS		8
#define SROCE_KEY_VARIANT_MASK		0xffU

/* Tags of the entries in sroce_dev.keys (xa_tag_pointer allows 1 and 3). */
#define SROCE_KEY_TAG_MR		1
#define SROCE_KEY_TAG_MW		3

/**
 * sroce_key_index() - the xarray index a key names
 * @key: an lkey or rkey
 *
 * Return: @key without its variant byte.
 */
static inline u32 sroce_key_index(u32 key)
{
	return key >> SROCE_KEY_VARIANT_BITS;
}

/**
 * sroce_key_variant() - the consumer-owned low byte of a key
 * @key: an lkey or rkey
 *
 * Return: the variant, 0..255.
 */
static inline u32 sroce_key_variant(u32 key)
{
	return key & SROCE_KEY_VARIANT_MASK;
}

/**
 * sroce_key_compose() - build a key
 * @index: the key index, SROCE_MIN_KEY_INDEX..SROCE_MAX_KEY_INDEX
 * @variant: the low byte; only its low 8 bits are used
 *
 * Return: the key.
 */
static inline u32 sroce_key_compose(u32 index, u32 variant)
{
	return index << SROCE_KEY_VARIANT_BITS |
	       (variant & SROCE_KEY_VARIANT_MASK);
}

/**
 * sroce_key_same_object() - may @new_key replace @old_key?
 * @old_key: the key an object has now
 * @new_key: the key a fast-reg or bind wants to give it
 *
 * A consumer only owns the variant byte: a new key must keep the index.
 * The same key again is allowed.
 *
 * Return: true when the two keys differ at most in the variant byte.
 */
static inline bool sroce_key_same_object(u32 old_key, u32 new_key)
{
	return sroce_key_index(old_key) == sroce_key_index(new_key);
}

u32 sroce_key_first(u32 index);
int sroce_key_reserve(struct sroce_dev *sdev, u32 *index);
void sroce_key_publish(struct sroce_dev *sdev, u32 index, void *obj,
		       unsigned int tag);
void sroce_key_remove(struct sroce_dev *sdev, u32 index);
void *sroce_key_lookup(struct sroce_dev *sdev, u32 key, unsigned int *tag);
struct sroce_mr *sroce_rkey_get(struct sroce_dev *sdev, u32 rkey,
				struct ib_pd *pd, u32 qpn, u64 iova, u64 len,
				u32 access, int *err);

#endif /* SROCE_KEY_H */
