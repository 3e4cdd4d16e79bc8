// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce rings shared with user space: sizing, allocation, the index
 * operations, resize, and serving the rings to mmap() on the uverbs file.
 *
 * The ring layout and the trust rules are described at the top of
 * sroce_queue.h.
 *
 * Buffer ownership. A ring's buffer is zeroed vmalloc memory, charged to
 * the memory cgroup of the task that creates the ring. While the ring is
 * kernel-only, the ring owns it and sroce_queue_cleanup() frees it.
 * Once sroce_queue_map_user() has published it through an
 * rdma_user_mmap_entry, the entry owns it: sroce_queue_cleanup() only
 * removes the entry, and ib_core calls sroce_mmap_free() when the last
 * reference to the entry is gone (at once, or after an mmap() that was
 * running at the time has finished).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "obj/sroce_queue.h"

/**
 * struct sroce_mmap_entry - a ring buffer offered to mmap()
 * @rdma: ib_core's entry: the mmap offset cookie and the reference count
 * @buf: the ring's vmalloc buffer, freed with the entry
 *
 * Every mmap entry sroce inserts into a user context is one of these.
 */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

/**
 * sroce_queue_slots() - the geometry of a ring
 * @num_elem: entries the caller needs the ring to hold, at least 1
 * @elem_size: bytes of one entry, at least 1
 * @num_slots: set to the slot count, a power of two above @num_elem
 * @log2_elem_size: set to log2 of the slot size: @elem_size rounded up to
 *	at least a cache line, then to a power of two
 *
 * One slot always stays free (full is "producer one behind consumer"),
 * hence the slot count is the power of two above @num_elem rather than
 * the one at or above it.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a zero @num_elem or @elem_size, or when the
 * slot area would exceed %SROCE_QUEUE_MAX_DATA.
 */
int sroce_queue_slots(u32 num_elem, size_t elem_size, u32 *num_slots,
		      u32 *log2_elem_size)
{
	unsigned long slot_size, slot_count;

	/* Both bounds also keep the round-ups below from overflowing. */
	if (!num_elem || num_elem >= SROCE_QUEUE_MAX_DATA ||
	    !elem_size || elem_size > SROCE_QUEUE_MAX_DATA)
		return -EINVAL;

	slot_size = max_t(unsigned long, elem_size, cache_line_size());
	slot_size = roundup_pow_of_two(slot_size);
	slot_count = roundup_pow_of_two((unsigned long)num_elem + 1);
	if (slot_count > SROCE_QUEUE_MAX_DATA / slot_size)
		return -EINVAL;

	*num_slots = slot_count;
	*log2_elem_size = ilog2(slot_size);
	return 0;
}

/**
 * sroce_queue_init() - allocate an empty ring
 * @q: the ring to fill in; its previous content is ignored
 * @kind: which indices user space drives
 * @num_elem: entries the ring must hold at least
 * @elem_size: bytes of one entry
 *
 * Allocates the zeroed buffer, writes the geometry into its header for
 * user space and keeps the kernel's own copies in @q. Both indices start
 * at 0. On failure @q is left zeroed, so sroce_queue_cleanup() on it is
 * harmless.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL for a bad @kind or a geometry sroce_queue_slots()
 * refuses, or -ENOMEM.
 */
int sroce_queue_init(struct sroce_queue *q, enum sroce_queue_kind kind,
		     u32 num_elem, size_t elem_size)
{
	struct rxe_queue_buf *buf;
	u32 num_slots, log2_size;
	size_t buf_size;
	int ret;

	memset(q, 0, sizeof(*q));
	if (kind != SROCE_QUEUE_FROM_USER && kind != SROCE_QUEUE_TO_USER &&
	    kind != SROCE_QUEUE_KERNEL)
		return -EINVAL;
	ret = sroce_queue_slots(num_elem, elem_size, &num_slots, &log2_size);
	if (ret)
		return ret;

	buf_size = sizeof(*buf) + ((size_t)num_slots << log2_size);
	/* zeroed: user space maps all of it; charged to the caller's memcg */
	buf = __vmalloc(PAGE_ALIGN(buf_size), GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!buf)
		return -ENOMEM;
	buf->log2_elem_size = log2_size;
	buf->index_mask = num_slots - 1;

	q->buf = buf;
	q->buf_size = buf_size;
	q->kind = kind;
	q->log2_elem_size = log2_size;
	q->index_mask = num_slots - 1;
	return 0;
}

/**
 * sroce_queue_cleanup() - release a ring's buffer
 * @q: the ring; zeroed, never initialised or already cleaned up is fine
 *
 * A ring mapped for user space gives up its mmap entry, which frees the
 * buffer when the last reference to the entry is gone; user space may
 * keep its mapping (see sroce_mmap()). Any other ring frees its buffer
 * at once. @q is zeroed afterwards; nothing may use the old buffer.
 *
 * Context: process context, may sleep; no spinlock held.
 */
void sroce_queue_cleanup(struct sroce_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	else
		vfree(q->buf);
	memset(q, 0, sizeof(*q));
}

/**
 * sroce_queue_map_user() - offer a ring's buffer to user space's mmap()
 * @q: an initialised ring not yet mapped
 * @uctx: the user context that may map it
 * @mi: set to the offset and size user space passes to mmap()
 *
 * From a successful return on, the new mmap entry owns the buffer (see
 * the top of this file); @q still points at it until sroce_queue_cleanup().
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL if @q is already mapped, or -ENOMEM.
 */
int sroce_queue_map_user(struct sroce_queue *q, struct ib_ucontext *uctx,
			 struct mminfo *mi)
{
	size_t map_size = PAGE_ALIGN(q->buf_size);
	struct sroce_mmap_entry *entry;
	int ret;

	if (WARN_ON_ONCE(q->mmap || !q->buf))
		return -EINVAL;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = q->buf;
	ret = rdma_user_mmap_entry_insert(uctx, &entry->rdma, map_size);
	if (ret)
		goto err_free_entry;

	q->mmap = entry;
	mi->offset = rdma_user_mmap_get_offset(&entry->rdma);
	mi->size = map_size;
	mi->pad = 0;
	return 0;

err_free_entry:
	kfree(entry);
	return ret;
}

/*
 * Insert the pages of a ring buffer into @vma, whose size
 * rdma_user_mmap_entry_get() has checked against the ring's. The buffer
 * is __vmalloc() memory, not vmalloc_user(): the latter cannot be
 * charged to a memory cgroup, and remap_vmalloc_range() takes nothing
 * else.
 */
static int sroce_mmap_buf(struct vm_area_struct *vma, void *buf)
{
	unsigned long addr, off = 0;
	int ret;

	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		ret = vm_insert_page(vma, addr, vmalloc_to_page(buf + off));
		if (ret)
			return ret;
		off += PAGE_SIZE;
	}
	return 0;
}

/**
 * sroce_mmap() - ib_device_ops.mmap: map a ring into user space
 * @uctx: the user context of the uverbs file being mapped
 * @vma: the new mapping; its page offset is the cookie from struct mminfo
 *
 * rdma_user_mmap_entry_get() accepts only a shared mapping of exactly
 * the ring's page-aligned size, of an entry of @uctx that has not been
 * removed; its reference keeps the buffer alive while we map it.
 *
 * The mapping holds no reference to the entry: once the ring is gone the
 * entry is freed and sroce_mmap_free() vfree()s the buffer while user
 * space may still have it mapped. That is safe because
 * sroce_mmap_buf() inserts each page with vm_insert_page(), which takes a
 * reference on the page; vfree() only drops vmalloc's own, and
 * the pages go back to the allocator when the last mapping is unmapped.
 *
 * Context: process context (mmap() on the uverbs file), may sleep.
 * Return: 0, -EINVAL for no matching entry, or vm_insert_page()'s error.
 */
static int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct sroce_mmap_entry *entry;
	int ret;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct sroce_mmap_entry, rdma);
	ret = sroce_mmap_buf(vma, entry->buf);
	rdma_user_mmap_entry_put(rdma_entry);
	return ret;
}

/**
 * sroce_mmap_free() - ib_device_ops.mmap_free: the last entry reference is gone
 * @rdma_entry: the entry, embedded in a struct sroce_mmap_entry
 *
 * Frees the ring buffer and the entry. Existing user mappings keep their
 * pages (see sroce_mmap()).
 *
 * Context: process context, may sleep.
 */
static void sroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct sroce_mmap_entry *entry =
		container_of(rdma_entry, struct sroce_mmap_entry, rdma);

	vfree(entry->buf);
	kfree(entry);
}

/* The owner's lock, when the ring has one, is held (lockdep only). */
static void sroce_queue_assert_locked(const struct sroce_queue *q)
{
	if (q->lock)
		lockdep_assert_held(q->lock);
}

/**
 * sroce_queue_set_lock() - name the lock that serialises a ring
 * @q: the ring, from sroce_queue_init()
 * @lock: the owner's lock, held around every operation on the ring's
 *	indices and slots from now on
 *
 * Context: any; before the ring is used.
 */
void sroce_queue_set_lock(struct sroce_queue *q, spinlock_t *lock)
{
	q->lock = lock;
}

/**
 * sroce_queue_load_prod() - the producer index, fresh if user space owns it
 * @q: the ring
 *
 * On a ring user space produces into, reads producer_index with acquire
 * semantics, so that the slots it covers may be read afterwards, masks it
 * and keeps it in @q->prod.
 *
 * Context: the owner's consumer-side lock held.
 * Return: the producer index, always within the index mask.
 */
u32 sroce_queue_load_prod(struct sroce_queue *q)
{
	sroce_queue_assert_locked(q);
	if (q->kind != SROCE_QUEUE_FROM_USER)
		return q->prod;
	/* Pairs with user space's store-release after it wrote the slots. */
	q->prod = smp_load_acquire(&q->buf->producer_index) & q->index_mask;
	return q->prod;
}

/**
 * sroce_queue_load_cons() - the consumer index, fresh if user space owns it
 * @q: the ring
 *
 * On a ring user space consumes from, reads consumer_index with acquire
 * semantics, so that user space is done with the slots it released before
 * the kernel writes them again, masks it and keeps it in @q->cons.
 *
 * Context: the owner's producer-side lock held.
 * Return: the consumer index, always within the index mask.
 */
u32 sroce_queue_load_cons(struct sroce_queue *q)
{
	sroce_queue_assert_locked(q);
	if (q->kind != SROCE_QUEUE_TO_USER)
		return q->cons;
	/* Pairs with user space's store-release after it read the slots. */
	q->cons = smp_load_acquire(&q->buf->consumer_index) & q->index_mask;
	return q->cons;
}

/**
 * sroce_queue_empty() - whether the ring holds no entry
 * @q: the ring
 *
 * Context: the owner's lock held.
 * Return: true if empty, judged with a fresh user-owned index.
 */
bool sroce_queue_empty(struct sroce_queue *q)
{
	u32 prod = sroce_queue_load_prod(q);

	return sroce_ring_empty(prod, sroce_queue_load_cons(q), q->index_mask);
}

/**
 * sroce_queue_full() - whether the ring holds sroce_queue_depth() entries
 * @q: the ring
 *
 * Context: the owner's lock held.
 * Return: true if full, judged with a fresh user-owned index.
 */
bool sroce_queue_full(struct sroce_queue *q)
{
	u32 prod = sroce_queue_load_prod(q);

	return sroce_ring_full(prod, sroce_queue_load_cons(q), q->index_mask);
}

/**
 * sroce_queue_count() - entries in the ring
 * @q: the ring
 *
 * Context: the owner's lock held.
 * Return: 0 .. sroce_queue_depth(), judged with a fresh user-owned index.
 */
u32 sroce_queue_count(struct sroce_queue *q)
{
	u32 prod = sroce_queue_load_prod(q);

	return sroce_ring_count(prod, sroce_queue_load_cons(q), q->index_mask);
}

/**
 * sroce_queue_slot() - address of a slot
 * @q: the ring
 * @index: any value; only its bits within the index mask count
 *
 * Uses only the kernel's private geometry, so the result lies inside the
 * buffer whatever user space wrote into the header.
 *
 * Context: any.
 * Return: the slot's first byte.
 */
void *sroce_queue_slot(const struct sroce_queue *q, u32 index)
{
	size_t offset = (size_t)(index & q->index_mask) << q->log2_elem_size;

	return q->buf->data + offset;
}

/**
 * sroce_queue_producer_slot() - the slot the producer fills next
 * @q: the ring; the caller has checked it is not full
 *
 * Context: the owner's producer-side lock held.
 * Return: the slot at the kernel's producer index.
 */
void *sroce_queue_producer_slot(const struct sroce_queue *q)
{
	sroce_queue_assert_locked(q);
	return sroce_queue_slot(q, q->prod);
}

/**
 * sroce_queue_consumer_slot() - the oldest entry
 * @q: the ring; the caller has checked it is not empty
 *
 * Context: the owner's consumer-side lock held.
 * Return: the slot at the kernel's consumer index.
 */
void *sroce_queue_consumer_slot(const struct sroce_queue *q)
{
	sroce_queue_assert_locked(q);
	return sroce_queue_slot(q, q->cons);
}

/**
 * sroce_queue_advance_producer() - publish the slot just filled
 * @q: a ring the kernel produces into (TO_USER or KERNEL)
 *
 * Advances the private producer index and stores it to the header with
 * release semantics, after the slot's content. The caller must have seen
 * sroce_queue_full() return false since it last advanced; this function
 * does not check, so advancing a full ring would silently empty it.
 *
 * Context: the owner's producer-side lock held.
 */
void sroce_queue_advance_producer(struct sroce_queue *q)
{
	sroce_queue_assert_locked(q);
	if (WARN_ON_ONCE(q->kind == SROCE_QUEUE_FROM_USER))
		return;
	q->prod = sroce_ring_next(q->prod, q->index_mask);
	/* The slot's content is visible before the index that covers it. */
	smp_store_release(&q->buf->producer_index, q->prod);
}

/**
 * sroce_queue_advance_consumer() - release the oldest entry's slot
 * @q: a ring the kernel consumes from (FROM_USER or KERNEL)
 *
 * Advances the private consumer index and stores it to the header with
 * release semantics, after the kernel's last access to the slot. The
 * caller must have seen sroce_queue_empty() return false since it last
 * advanced; this function does not check, so advancing an empty ring
 * would make it look full.
 *
 * Context: the owner's consumer-side lock held.
 */
void sroce_queue_advance_consumer(struct sroce_queue *q)
{
	sroce_queue_assert_locked(q);
	if (WARN_ON_ONCE(q->kind == SROCE_QUEUE_TO_USER))
		return;
	q->cons = sroce_ring_next(q->cons, q->index_mask);
	/* The kernel is done with the slot before user space may reuse it. */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

/**
 * sroce_queue_discard() - release every entry the ring holds now
 * @q: a ring the kernel consumes from (FROM_USER or KERNEL)
 *
 * Moves the consumer index to the producer index read once, in one
 * store: however user space moves its producer index meanwhile, this
 * ends (a loop of sroce_queue_advance_consumer() until the ring looks
 * empty would not).
 *
 * Context: the owner's consumer-side lock held.
 * Return: the entries released.
 */
u32 sroce_queue_discard(struct sroce_queue *q)
{
	u32 prod, n;

	sroce_queue_assert_locked(q);

	if (WARN_ON_ONCE(q->kind == SROCE_QUEUE_TO_USER))
		return 0;
	prod = sroce_queue_load_prod(q);
	n = sroce_ring_count(prod, q->cons, q->index_mask);
	q->cons = prod;
	/* The kernel is done with the slots before user space may reuse them. */
	smp_store_release(&q->buf->consumer_index, q->cons);
	return n;
}

/**
 * sroce_queue_resize_prepare() - allocate the ring a resize moves to
 * @old: the live ring; only its kind and slot size are read, which never
 *	change, so the owner's lock need not be held
 * @new: set to an empty ring of @old's kind and slot size
 * @num_elem: entries @new must hold at least
 * @uctx: the user context to map @new for, or NULL for a kernel ring
 * @mi: set to @new's mmap offset and size when @uctx is not NULL
 *
 * On success the caller takes its lock and calls
 * sroce_queue_resize_commit(), then, with the lock dropped,
 * sroce_queue_cleanup() on @new, whether the commit worked or not.
 *
 * Context: process context, may sleep; no spinlock held.
 * Return: 0, -EINVAL for a bad @num_elem, or -ENOMEM. On failure @new is
 * zeroed and needs no cleanup.
 */
int sroce_queue_resize_prepare(struct sroce_queue *old,
			       struct sroce_queue *new, u32 num_elem,
			       struct ib_ucontext *uctx, struct mminfo *mi)
{
	int ret;

	ret = sroce_queue_init(new, old->kind, num_elem,
			       sroce_queue_elem_size(old));
	if (ret)
		return ret;
	if (!uctx)
		return 0;

	ret = sroce_queue_map_user(new, uctx, mi);
	if (ret)
		goto err_cleanup_new;
	return 0;

err_cleanup_new:
	sroce_queue_cleanup(new);
	return ret;
}

/**
 * sroce_queue_resize_commit() - move a ring's entries into a new buffer
 * @q: the live ring
 * @new: an empty ring from sroce_queue_resize_prepare() on @q
 *
 * Copies the live entries, oldest first, to slots 0 .. count - 1 of @new,
 * publishes both of @new's indices, and then exchanges the two rings:
 * @q is the new ring and @new holds the old one, for the caller to hand to
 * sroce_queue_cleanup() once its lock is dropped. The user-owned index is
 * read once, fresh, and everything user space adds to the old ring after
 * that is left behind; user space must not use a ring while it resizes it.
 *
 * Context: the owner's lock held (both sides of the ring); does not sleep.
 * Return: 0, or -EINVAL if the live entries do not fit in @new or @new
 * does not match @q's kind and slot size. Then both rings are left as
 * they were, except that @q's copy of its user-owned index is refreshed.
 */
int sroce_queue_resize_commit(struct sroce_queue *q, struct sroce_queue *new)
{
	size_t slot_size = sroce_queue_elem_size(q);
	u32 count, i;

	sroce_queue_assert_locked(q);

	if (WARN_ON_ONCE(new->kind != q->kind ||
			 new->log2_elem_size != q->log2_elem_size))
		return -EINVAL;

	count = sroce_queue_count(q);
	if (count > sroce_queue_depth(new))
		return -EINVAL;

	for (i = 0; i < count; i++)
		memcpy(sroce_queue_slot(new, i),
		       sroce_queue_slot(q, q->cons + i), slot_size);

	new->prod = count;
	new->cons = 0;
	/* The copied slots are visible before the indices covering them. */
	smp_store_release(&new->buf->producer_index, new->prod);
	/* Orders nothing of its own: the new ring is not mapped yet. */
	smp_store_release(&new->buf->consumer_index, new->cons);

	swap(*q, *new);
	/* The lock belongs to the owner, not to the buffer. */
	swap(q->lock, new->lock);
	return 0;
}

/* The verbs on ring mappings, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_queue_verbs = {
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
};
