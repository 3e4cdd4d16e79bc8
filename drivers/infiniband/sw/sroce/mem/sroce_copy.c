// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce payload movement: one cursor walk over an SGE list, shared by the
 * requester (gathering a SEND or WRITE payload from its WQE), the
 * responder (scattering a SEND into a receive WQE) and the completer
 * (scattering a READ response into the request's WQE).
 *
 * A message is moved one packet at a time. The cursor remembers the SGE
 * and the offset in it where the previous packet stopped; packet and SGE
 * boundaries are unrelated. Every SGE is translated through its own lkey
 * each time a packet touches it - a translation belongs to an SGE, not to
 * the message - and a small per-engine key cache makes the repeats cheap.
 *
 * A large payload is not copied on its way out at all: the pages under
 * its SGEs are lent to the packet (sroce_lend_data()), through the same
 * walk and the same checks. A received packet is scattered as it lies,
 * in the pieces of its skb (sroce_copy_skb()).
 *
 * The SGE array may sit in a ring slot user space can rewrite at any
 * time: each field is read once per step into a private copy, and nothing
 * more than the caller's length or the cursor's residue is ever moved,
 * whatever the SGE lengths claim. A rewritten SGE can only make this
 * consumer's own transfer fail or move different bytes of its own memory:
 * every byte is still checked against the MR its lkey names.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "core/sroce_dev.h"
#include "mem/sroce_copy.h"
#include "mem/sroce_mr.h"

/* ---- the key cache ---------------------------------------------------- */

/**
 * sroce_key_cache_init() - start with an empty key cache
 * @kc: the cache
 *
 * Context: any.
 */
void sroce_key_cache_init(struct sroce_key_cache *kc)
{
	memset(kc, 0, sizeof(*kc));
}

static void sroce_key_cache_drop(struct sroce_key_cache_entry *e)
{
	if (e->mr) {
		sroce_mr_put(e->mr);
		e->mr = NULL;
	}
}

/**
 * sroce_key_cache_flush() - forget every cached translation
 * @kc: the cache
 *
 * Drops the references the cache holds, so that the MRs can be
 * deregistered. The statistics are kept.
 *
 * Context: any; never sleeps. The owner serialises it with its own use
 * of @kc.
 */
void sroce_key_cache_flush(struct sroce_key_cache *kc)
{
	unsigned int i;

	for (i = 0; i < SROCE_KEY_CACHE_SIZE; i++)
		sroce_key_cache_drop(&kc->ent[i]);
	kc->victim = 0;
}

/*
 * The MR of @pd that @lkey names. With a cache, the reference belongs to
 * the entry *@slot and stays valid until the next lookup in @kc; without
 * one (*@slot is NULL) the caller owns it. An MR of another PD is never
 * cached: a guessed foreign lkey would keep that MR referenced, unable
 * to finish its deregistration, until the message ends.
 */
static struct sroce_mr *sroce_key_cache_get(struct sroce_dev *sdev,
					    struct sroce_key_cache *kc,
					    struct ib_pd *pd, u32 lkey,
					    struct sroce_key_cache_entry **slot)
{
	struct sroce_key_cache_entry *e;
	struct sroce_mr *mr;
	unsigned int i;

	*slot = NULL;
	if (!kc) {
		mr = sroce_mr_get_lkey(sdev, lkey);
		if (mr && mr->ibmr.pd != pd) {
			sroce_mr_put(mr);
			return NULL;
		}
		return mr;
	}

	kc->lookups++;
	for (i = 0; i < SROCE_KEY_CACHE_SIZE; i++) {
		e = &kc->ent[i];
		if (!e->mr || e->lkey != lkey)
			continue;
		if (READ_ONCE(e->mr->key) == lkey) {
			kc->hits++;
			*slot = e;
			return e->mr;
		}
		/* Fast-registered again under another key: @lkey is stale. */
		sroce_key_cache_drop(e);
	}

	mr = sroce_mr_get_lkey(sdev, lkey);
	if (!mr)
		return NULL;
	if (mr->ibmr.pd != pd) {
		sroce_mr_put(mr);
		return NULL;
	}
	e = &kc->ent[kc->victim];
	kc->victim = (kc->victim + 1) % SROCE_KEY_CACHE_SIZE;
	sroce_key_cache_drop(e);
	e->lkey = lkey;
	e->mr = mr;
	*slot = e;
	return mr;
}

/* ---- the cursor ------------------------------------------------------- */

/**
 * sroce_cursor_init() - put a cursor at the start of an SGE list
 * @cur: the cursor
 * @length: the message length (gather), or the total length of the
 *	buffers (scatter), both as validated when the WQE was posted
 *
 * Context: any.
 */
void sroce_cursor_init(struct sroce_sge_cursor *cur, u32 length)
{
	cur->cur_sge = 0;
	cur->sge_offset = 0;
	cur->resid = length;
}

/*
 * What a walk over an SGE list does with each piece of an SGE it reaches,
 * once the piece is translated and checked: copy it (sroce_copy_data())
 * or lend its pages (sroce_lend_data()).
 */
struct sroce_walk {
	int (*piece)(struct sroce_walk *w, struct sroce_mr *mr, u64 iova,
		     u32 n);
	u32 access;
};

/*
 * Translate @sge, check it for the walk's access and hand its @n bytes
 * at @offset to the walk. @sge is the caller's private copy; @offset +
 * @n lies inside it.
 */
static int sroce_walk_sge(struct sroce_dev *sdev, struct ib_pd *pd,
			  struct sroce_key_cache *kc,
			  const struct rxe_sge *sge, u32 offset, u32 n,
			  struct sroce_walk *w)
{
	struct sroce_key_cache_entry *slot;
	struct sroce_mr *mr;
	int err;

	mr = sroce_key_cache_get(sdev, kc, pd, sge->lkey, &slot);
	if (!mr)
		return -EINVAL;

	/* The whole SGE must lie in the MR, not just this packet's part. */
	err = sroce_mr_check(mr, pd, sge->addr, sge->length, w->access);
	if (err == -EACCES &&
	    sroce_mr_check(mr, pd, sge->addr, sge->length, 0) == -EACCES) {
		/* Not VALID: invalidated, or being deregistered. */
		err = -EINVAL;
		if (slot)
			sroce_key_cache_drop(slot);
		goto out_release;
	}
	if (!err)
		err = w->piece(w, mr, sge->addr + offset, n);

out_release:
	if (!slot)
		sroce_mr_put(mr);
	return err;
}

/* The SGE walk of sroce_copy_data(), for any kind of walk. */
static int sroce_walk_data(struct sroce_dev *sdev, struct ib_pd *pd,
			   struct sroce_key_cache *kc,
			   const struct rxe_sge *sges, u32 num_sge,
			   struct sroce_sge_cursor *cur, u32 len,
			   struct sroce_walk *w)
{
	struct rxe_sge sge;
	u32 n;
	int err;

	while (len) {
		if (!cur->resid || cur->cur_sge >= num_sge)
			return -ENOSPC;

		sge.addr = READ_ONCE(sges[cur->cur_sge].addr);
		sge.length = READ_ONCE(sges[cur->cur_sge].length);
		sge.lkey = READ_ONCE(sges[cur->cur_sge].lkey);
		if (cur->sge_offset >= sge.length) {
			cur->cur_sge++;
			cur->sge_offset = 0;
			continue;
		}

		n = min3(len, cur->resid, sge.length - cur->sge_offset);
		err = sroce_walk_sge(sdev, pd, kc, &sge, cur->sge_offset, n, w);
		if (err)
			return err;

		len -= n;
		cur->resid -= n;
		cur->sge_offset += n;
		if (cur->sge_offset == sge.length) {
			cur->cur_sge++;
			cur->sge_offset = 0;
		}
	}
	return 0;
}

struct sroce_copy_walk {
	struct sroce_walk w;
	void *buf;
	enum sroce_copy_dir dir;
};

static int sroce_copy_piece(struct sroce_walk *w, struct sroce_mr *mr,
			    u64 iova, u32 n)
{
	struct sroce_copy_walk *c = container_of(w, struct sroce_copy_walk, w);
	int err;

	err = sroce_mr_copy(mr, iova, c->buf, n, c->dir);
	if (!err)
		c->buf += n;
	return err;
}

/**
 * sroce_copy_data() - move the next bytes of a message through an SGE list
 * @sdev: the device whose keys the lkeys are
 * @pd: the PD of the QP; every SGE's MR must belong to it
 * @kc: the calling engine's key cache, or NULL to look every key up
 * @sges: the SGE list (may be user-writable: each field is read once)
 * @num_sge: the validated number of SGEs in @sges
 * @cur: the cursor, advanced past the bytes moved
 * @buf: the packet payload
 * @len: bytes to move
 * @dir: SROCE_COPY_FROM_MR to gather into @buf (local read: any VALID
 *	MR), SROCE_COPY_TO_MR to scatter @buf (needs IB_ACCESS_LOCAL_WRITE)
 *
 * Starts at the cursor. Zero-length SGEs are skipped without a lookup;
 * an SGE whose length is now below the cursor's offset counts as used
 * up. Each SGE touched is translated through its own lkey (via @kc),
 * which must name a VALID MR of @pd granting the access, and the whole
 * SGE [addr, addr + length) must lie in that MR; then only the part of
 * it this call needs is copied. Never moves more than @len bytes nor
 * more than @cur->resid.
 *
 * On success the cursor stands right after the last byte moved: on an
 * SGE boundary it names the next SGE at offset 0.
 *
 * On failure the cursor has advanced over exactly the bytes that were
 * moved (@cur->resid went down by as many): for -EINVAL, -EACCES and
 * -EFAULT it names the failing SGE, at the offset reached in it before
 * this call touched it (0 unless an earlier call used part of that SGE),
 * and none of that SGE's bytes moved in this call; bytes of SGEs before
 * it did move. For -ENOSPC every byte that fitted was moved and the
 * cursor is at the end (past the last SGE, or @cur->resid is 0).
 *
 * Context: any; does not sleep. The caller serialises use of @cur and
 * @kc, and keeps @sges mapped.
 * Return: 0; -ENOSPC when the SGEs or @cur->resid run out before @len
 * bytes (a SEND larger than the receive buffers: NAK it, never
 * truncate); -EINVAL for an lkey that names no MR, is stale, names an MR
 * of another PD or one that is not VALID (a local protection error);
 * -EACCES for a scatter into an MR without local write; -EFAULT when the
 * SGE is not inside its MR.
 */
int sroce_copy_data(struct sroce_dev *sdev, struct ib_pd *pd,
		    struct sroce_key_cache *kc, const struct rxe_sge *sges,
		    u32 num_sge, struct sroce_sge_cursor *cur, void *buf,
		    u32 len, enum sroce_copy_dir dir)
{
	struct sroce_copy_walk c = {
		.w.piece = sroce_copy_piece,
		.w.access = dir == SROCE_COPY_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0,
		.buf = buf,
		.dir = dir,
	};

	return sroce_walk_data(sdev, pd, kc, sges, num_sge, cur, len, &c.w);
}

struct sroce_lend_walk {
	struct sroce_walk w;
	struct sroce_mr_frag *frags;
	unsigned int n;
	unsigned int max;
};

static int sroce_lend_piece(struct sroce_walk *w, struct sroce_mr *mr,
			    u64 iova, u32 n)
{
	struct sroce_lend_walk *l = container_of(w, struct sroce_lend_walk, w);
	int ret;

	ret = sroce_mr_lend(mr, iova, n, l->frags + l->n, l->max - l->n);
	if (ret < 0)
		return ret;
	if (!ret)
		return -EOPNOTSUPP;
	l->n += ret;
	return 0;
}

/**
 * sroce_lend_data() - the pages under the next bytes of a message
 * @sdev: the device whose keys the lkeys are
 * @pd: the PD of the QP
 * @kc: the calling engine's key cache, or NULL
 * @sges: the send WQE's SGE list (may be user-writable)
 * @num_sge: the validated number of SGEs in @sges
 * @cur: the cursor, advanced past the bytes lent on success
 * @len: bytes to lend
 * @frags: where the pieces go
 * @max: room in @frags
 *
 * The gather of sroce_copy_data() (SROCE_COPY_FROM_MR), with the same
 * translation and checks of every SGE, except that the bytes are not
 * copied: the pages that hold them are referenced (sroce_mr_lend()) for
 * a packet to carry. Anything that stops the walk - memory that may not
 * be lent, more than @max pieces, a bad SGE - leaves the cursor where it
 * was and no reference behind; the caller then gathers the packet with
 * sroce_copy_data(), which reports a bad SGE exactly.
 *
 * Context: any; does not sleep. The caller serialises use of @cur and
 * @kc, and keeps @sges mapped.
 * Return: the number of pieces in @frags (the caller owns their page
 * references), or a negative errno.
 */
int sroce_lend_data(struct sroce_dev *sdev, struct ib_pd *pd,
		    struct sroce_key_cache *kc, const struct rxe_sge *sges,
		    u32 num_sge, struct sroce_sge_cursor *cur, u32 len,
		    struct sroce_mr_frag *frags, unsigned int max)
{
	struct sroce_lend_walk l = {
		.w.piece = sroce_lend_piece,
		.frags = frags,
		.max = max,
	};
	struct sroce_sge_cursor start = *cur;
	int err;

	err = sroce_walk_data(sdev, pd, kc, sges, num_sge, cur, len, &l.w);
	if (!err)
		return l.n;
	sroce_mr_frags_put(frags, l.n);
	*cur = start;
	return err;
}

/* ---- scattering a received packet -------------------------------------- */

struct sroce_skb_walk {
	struct sroce_walk w;
	const struct sk_buff *skb;
	unsigned int offset;
};

static int sroce_skb_piece(struct sroce_walk *w, struct sroce_mr *mr,
			   u64 iova, u32 n)
{
	struct sroce_skb_walk *k = container_of(w, struct sroce_skb_walk, w);
	int err;

	err = sroce_mr_copy_skb(mr, iova, k->skb, k->offset, n);
	if (!err)
		k->offset += n;
	return err;
}

/**
 * sroce_copy_skb() - scatter the next bytes of a message from a packet
 * @sdev: the device whose keys the lkeys are
 * @pd: the PD of the QP
 * @kc: the calling engine's key cache, or NULL
 * @sges: the receive (or READ) WQE's SGE list
 * @num_sge: the validated number of SGEs in @sges
 * @cur: the cursor, advanced past the bytes moved
 * @skb: the packet; its payload may lie in fragments or a frag list
 * @offset: where the bytes start, from skb->data
 * @len: bytes to move
 *
 * sroce_copy_data() with SROCE_COPY_TO_MR, from the bytes of @skb as they
 * lie (sroce_mr_copy_skb()): each SGE is translated and checked once, as
 * for a linear packet, whatever pieces of the packet fill it. The cursor
 * rules are sroce_copy_data()'s.
 *
 * Context: any; does not sleep.
 * Return: as sroce_copy_data(); -EINVAL, with nothing moved, when @skb
 * holds fewer than @len bytes from @offset.
 */
int sroce_copy_skb(struct sroce_dev *sdev, struct ib_pd *pd,
		   struct sroce_key_cache *kc, const struct rxe_sge *sges,
		   u32 num_sge, struct sroce_sge_cursor *cur,
		   const struct sk_buff *skb, unsigned int offset, u32 len)
{
	struct sroce_skb_walk k = {
		.w.piece = sroce_skb_piece,
		.w.access = IB_ACCESS_LOCAL_WRITE,
		.skb = skb,
		.offset = offset,
	};

	if (offset > skb->len || len > skb->len - offset)
		return -EINVAL;
	return sroce_walk_data(sdev, pd, kc, sges, num_sge, cur, len, &k.w);
}
