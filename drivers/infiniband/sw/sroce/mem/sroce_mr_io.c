// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce memory regions: moving bytes in and out of an MR's memory. A copy
 * to or from a buffer, a scatter from a received packet, pages lent to an
 * outgoing packet, and the atomics. Each checks the MR as it is at that
 * moment (state, access, range) in the same RCU read-side section as the
 * access, so that sroce_dereg_mr() and an invalidation stop them at once
 * (see sroce_mr.c for the lifetime).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"

static void sroce_copy_bytes(void *mem, void *buf, size_t len,
			     enum sroce_copy_dir dir)
{
	if (dir == SROCE_COPY_TO_MR)
		memcpy(mem, buf, len);
	else
		memcpy(buf, mem, len);
}

/* The kernel address of page @index of a paged MR, mapped. */
static void *sroce_mr_page_va(struct sroce_mr *mr,
			      const struct sroce_mr_view *v, u64 index)
{
	if (mr->kind == SROCE_MR_USER)
		return kmap_local_page(mr->pages[index]);
	return (void *)(uintptr_t)v->page_list[index];
}

static void sroce_mr_page_unmap(struct sroce_mr *mr, void *va)
{
	if (mr->kind == SROCE_MR_USER)
		kunmap_local(va);
}

/* The copy itself, once sroce_mr_copy() has checked @v. */
static int sroce_mr_copy_pages(struct sroce_mr *mr,
			       const struct sroce_mr_view *v, u64 iova,
			       void *buf, u64 len, enum sroce_copy_dir dir)
{
	u64 index, off;

	if (mr->kind == SROCE_MR_DMA) {
		sroce_copy_bytes((void *)(uintptr_t)iova, buf, len, dir);
		return 0;
	}

	sroce_mr_page_pos(v->first_offset, v->page_shift, iova - v->iova,
			  &index, &off);
	while (len) {
		u64 chunk = min_t(u64, len, (1ULL << v->page_shift) - off);
		void *va;

		if (index >= v->num_pages)
			return -EFAULT;
		va = sroce_mr_page_va(mr, v, index);
		sroce_copy_bytes(va + off, buf, chunk, dir);
		sroce_mr_page_unmap(mr, va);

		buf += chunk;
		len -= chunk;
		index++;
		off = 0;
	}
	return 0;
}

/*
 * May @len bytes at @iova of the MR @v was taken of be read (@write
 * false) or written now? 0, -EACCES or -EFAULT as sroce_mr_copy() says.
 */
static int sroce_mr_io_check(const struct sroce_mr_view *v, u64 iova,
			     u64 len, bool write)
{
	if (v->state != SROCE_MR_VALID)
		return -EACCES;
	if (write && !(v->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (!sroce_range_within(v->iova, v->length, iova, len))
		return -EFAULT;
	return 0;
}

/**
 * sroce_mr_copy() - copy between a buffer and an MR
 * @mr: the MR, referenced; the caller ran sroce_mr_check()
 * @iova: first byte in the MR (a kernel virtual address for a DMA MR)
 * @buf: the kernel buffer
 * @len: bytes
 * @dir: SROCE_COPY_TO_MR or SROCE_COPY_FROM_MR
 *
 * Checks the state and the range again against the MR as it is now, so
 * that a message in progress stops at the first packet after a dereg or
 * an invalidation, and a racing remapping can never make it touch memory
 * outside the region; refuses to write to an MR without local write
 * access (its pages may be shared, e.g. the zero page). The copy runs in
 * an RCU read-side section: sroce_dereg_mr() of an MR still referenced
 * waits for a grace period, so no copy that saw the MR valid is still
 * running when dereg returns.
 *
 * Context: any; does not sleep.
 * Return: 0, -EACCES for an MR no longer valid or a write to a read-only
 * MR, -EFAULT when the range is (no longer) inside the MR.
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u64 len,
		  enum sroce_copy_dir dir)
{
	struct sroce_mr_view v;
	int err;

	if (!len)
		return 0;

	rcu_read_lock();
	sroce_mr_view(mr, &v);
	err = sroce_mr_io_check(&v, iova, len, dir == SROCE_COPY_TO_MR);
	if (!err)
		err = sroce_mr_copy_pages(mr, &v, iova, buf, len, dir);
	rcu_read_unlock();
	return err;
}

/*
 * sroce_mr_copy_skb() once the MR is checked: each piece of the packet's
 * bytes (its head, each page fragment, each skb of its frag list) is
 * copied as it lies.
 */
static int sroce_mr_scatter_skb(struct sroce_mr *mr,
				const struct sroce_mr_view *v, u64 iova,
				const struct sk_buff *skb, unsigned int offset,
				u32 len)
{
	unsigned int head = skb_headlen(skb);
	struct skb_seq_state st;
	const u8 *data;
	u32 n, done = 0;
	int err = 0;

	/* a scatter only reads the buffer sroce_mr_copy_pages() is given */
	if (offset <= head && len <= head - offset)
		return sroce_mr_copy_pages(mr, v, iova,
					   (void *)(skb->data + offset), len,
					   SROCE_COPY_TO_MR);
	/* and skb_seq_read() only reads the skb */
	skb_prepare_seq_read((struct sk_buff *)skb, offset, offset + len, &st);
	while (done < len && !err) {
		n = skb_seq_read(done, &data, &st);
		if (!n) {
			err = -EINVAL;
			break;
		}
		n = min(n, len - done);
		err = sroce_mr_copy_pages(mr, v, iova + done, (void *)data, n,
					  SROCE_COPY_TO_MR);
		done += n;
	}
	skb_abort_seq_read(&st);
	return err;
}

/**
 * sroce_mr_copy_skb() - place bytes of a received packet in an MR
 * @mr: the MR, referenced; the caller ran sroce_mr_check()
 * @iova: where the first byte goes
 * @skb: the packet; the bytes may lie in its head, its page fragments
 *	or its frag list
 * @offset: where they start, from skb->data
 * @len: bytes
 *
 * sroce_mr_copy() with SROCE_COPY_TO_MR, fed from @skb piece by piece
 * under one check of the MR. A packet from a NIC that delivers page
 * fragments, or one IP reassembled, is not linearised first, which would
 * cost a second copy of its payload and an allocation.
 *
 * Context: any; does not sleep.
 * Return: as sroce_mr_copy(); -EINVAL when @skb holds fewer than @len
 * bytes from @offset (nothing is written then).
 */
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova,
		      const struct sk_buff *skb, unsigned int offset, u32 len)
{
	struct sroce_mr_view v;
	int err;

	if (!len)
		return 0;
	if (offset > skb->len || len > skb->len - offset)
		return -EINVAL;

	rcu_read_lock();
	sroce_mr_view(mr, &v);
	err = sroce_mr_io_check(&v, iova, len, true);
	if (!err)
		err = sroce_mr_scatter_skb(mr, &v, iova, skb, offset, len);
	rcu_read_unlock();
	return err;
}

/*
 * The page under @iova of a checked range, if a packet may keep a
 * reference to it: any page of a user MR; kernel memory (DMA and fast-reg
 * MRs) when it is an ordinary page of the linear map, not slab or vmalloc
 * memory, whose lifetime a page reference does not govern. *@pgoff is
 * the offset of @iova in the page and *@room the bytes from there to the
 * end of the page (and of the MR's page). Return: 1 with *@page set, 0
 * when the memory may not be lent, -EFAULT past the MR's pages.
 */
static int sroce_mr_lend_page(struct sroce_mr *mr,
			      const struct sroce_mr_view *v, u64 iova,
			      struct page **page, u32 *pgoff, u64 *room)
{
	u64 index, off;
	void *va;

	if (mr->kind == SROCE_MR_DMA) {
		va = (void *)(uintptr_t)iova;
		*room = U64_MAX;
	} else {
		sroce_mr_page_pos(v->first_offset, v->page_shift,
				  iova - v->iova, &index, &off);
		if (index >= v->num_pages)
			return -EFAULT;
		*room = (1ULL << v->page_shift) - off;
		if (mr->kind == SROCE_MR_USER) {
			*page = mr->pages[index];
			*pgoff = off;
			return 1;
		}
		va = (void *)(uintptr_t)v->page_list[index] + off;
	}
	if (!virt_addr_valid(va))
		return 0;
	*page = virt_to_page(va);
	if (!sendpage_ok(*page))
		return 0;
	*pgoff = offset_in_page(va);
	*room = min_t(u64, *room, PAGE_SIZE - *pgoff);
	return 1;
}

/**
 * sroce_mr_frags_put() - give back pieces sroce_mr_lend() referenced
 * @frags: the pieces
 * @n: how many
 *
 * For the lender whose packet was never built: a packet that took the
 * pieces drops their references when it is freed.
 *
 * Context: any.
 */
void sroce_mr_frags_put(const struct sroce_mr_frag *frags, unsigned int n)
{
	while (n--)
		put_page(frags[n].page);
}

/* sroce_mr_lend() once the range is checked against @v. */
static int sroce_mr_lend_range(struct sroce_mr *mr,
			       const struct sroce_mr_view *v, u64 iova,
			       u32 len, struct sroce_mr_frag *frags,
			       unsigned int max)
{
	unsigned int n = 0;
	struct page *page;
	u32 pgoff, chunk;
	u64 room;
	int ret;

	while (len) {
		ret = sroce_mr_lend_page(mr, v, iova, &page, &pgoff, &room);
		if (ret > 0 && n == max)
			ret = 0;
		if (ret <= 0) {
			sroce_mr_frags_put(frags, n);
			return ret;
		}
		chunk = min_t(u64, len, room);
		get_page(page);
		frags[n].page = page;
		frags[n].off = pgoff;
		frags[n].len = chunk;
		n++;
		iova += chunk;
		len -= chunk;
	}
	return n;
}

/**
 * sroce_mr_lend() - reference the pages under a range of an MR
 * @mr: the MR, referenced; the caller ran sroce_mr_check()
 * @iova: first byte
 * @len: bytes, at least 1
 * @frags: where the pieces go, one per page
 * @max: room in @frags
 *
 * Checks the MR as it is now, as sroce_mr_copy() does, and describes the
 * range as pieces of pages, each holding a page reference of its own, so
 * that a packet can carry the bytes without a copy. The references keep
 * the pages alive after a deregistration or an invalidation, until the
 * packet is freed: a packet in flight never reads freed memory. The bytes
 * are read when the packet is built and sent, so a consumer that changes
 * them before the send completes may send what it wrote, as on a NIC.
 *
 * Context: any; does not sleep.
 * Return: the number of pieces (the caller owns their references); 0 when
 * the memory may not be lent or needs more than @max pieces (the caller
 * copies it); -EACCES for an MR no longer valid, -EFAULT when the range
 * is (no longer) inside the MR.
 */
int sroce_mr_lend(struct sroce_mr *mr, u64 iova, u32 len,
		  struct sroce_mr_frag *frags, unsigned int max)
{
	struct sroce_mr_view v;
	int ret;

	if (!len)
		return -EFAULT;
	rcu_read_lock();
	sroce_mr_view(mr, &v);
	ret = sroce_mr_io_check(&v, iova, len, false);
	if (!ret)
		ret = sroce_mr_lend_range(mr, &v, iova, len, frags, max);
	rcu_read_unlock();
	return ret;
}

/* Serialises the atomics of all QPs against each other. */
static DEFINE_SPINLOCK(sroce_atomic_lock);

/* The kernel address of the 8 bytes at @iova, once @v has been checked. */
static u64 *sroce_mr_atomic_target(struct sroce_mr *mr,
				   const struct sroce_mr_view *v, u64 iova)
{
	u64 index, off;
	void *base;

	if (mr->kind == SROCE_MR_DMA)
		return (u64 *)(uintptr_t)iova;
	sroce_mr_page_pos(v->first_offset, v->page_shift, iova - v->iova,
			  &index, &off);
	if (index >= v->num_pages)
		return NULL;
	if (mr->kind == SROCE_MR_USER)
		base = page_address(mr->pages[index]);
	else
		base = (void *)(uintptr_t)v->page_list[index];
	return base ? base + off : NULL;
}

/**
 * sroce_mr_atomic() - execute an atomic operation on an MR
 * @mr: the MR, referenced; the caller ran the access checks
 * @iova: address of the 8-byte target
 * @op: IB_OPCODE_RC_COMPARE_SWAP or IB_OPCODE_RC_FETCH_ADD
 * @compare: the value compared with (compare and swap)
 * @swap_add: the value swapped in, or added
 * @orig: set to the target's value before the operation
 *
 * The alignment that IBA 9.4.5 requires is checked on the kernel
 * address, not only on @iova: a user MR registered at an iova that is
 * not congruent to its address modulo 8, or an FRMR whose iova a ULP
 * rebased, puts an aligned @iova at an unaligned kernel address, whose
 * 8 bytes may run into the next page, which is not the MR's. Aligned,
 * they never cross a page. The operation runs under RCU, with the MR's
 * state checked again, so that it is ordered before a dereg that
 * returns (sroce_dereg_mr()).
 *
 * Context: any; does not sleep.
 * Return: 0; -EINVAL when the target is not 8-byte aligned; -EACCES when
 * the MR is no longer valid or not writable; -EFAULT when the target is
 * not (or no longer) inside the MR.
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, u8 op, u64 compare,
		    u64 swap_add, u64 *orig)
{
	struct sroce_mr_view v;
	u64 *target;
	int err = 0;

	if (!IS_ALIGNED(iova, sizeof(u64)))
		return -EINVAL;
	rcu_read_lock();
	sroce_mr_view(mr, &v);
	err = sroce_mr_io_check(&v, iova, sizeof(u64), true);
	target = err ? NULL : sroce_mr_atomic_target(mr, &v, iova);
	if (!err && !target)
		err = -EFAULT;
	else if (target && !IS_ALIGNED((uintptr_t)target, sizeof(u64)))
		err = -EINVAL;
	if (!err) {
		spin_lock_bh(&sroce_atomic_lock);
		*orig = *target;
		if (op == IB_OPCODE_RC_FETCH_ADD)
			*target = *orig + swap_add;
		else if (*orig == compare)
			*target = swap_add;
		spin_unlock_bh(&sroce_atomic_lock);
	}
	rcu_read_unlock();
	return err;
}
