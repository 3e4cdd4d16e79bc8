/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce work and completion rings, shared with user space.
 *
 * A ring is one buffer: the 384-byte struct rxe_queue_buf header of the
 * rxe user ABI (rdma_user_rxe.h), then 2^n slots of 2^m bytes each. The
 * producer writes a slot and then publishes producer_index with a
 * store-release; the consumer reads producer_index with a load-acquire
 * before it reads the slot, and publishes consumer_index with a
 * store-release once it is done with the slot. Empty is prod == cons,
 * full is cons == prod + 1, so a ring of 2^n slots holds 2^n - 1 entries.
 *
 * Trust boundary. When user space owns one of the two indices (it
 * produces into SQ/RQ/SRQ rings and consumes from CQ rings), everything
 * in the shared buffer may change under the kernel at any time:
 *  - the kernel keeps private copies of the slot size, the index mask and
 *    the index it owns, and never reads them back from the buffer;
 *  - the index user space owns is masked before any use, so a bad value
 *    can only make the ring look fuller or emptier than it is, never make
 *    the kernel touch memory outside the ring;
 *  - a slot's content is untrusted data (see sroce_wqe.h).
 * Kernel-owned rings (kernel QPs and CQs) keep both indices private and
 * also publish them, so that the buffer always shows the ring's state.
 *
 * Locking is the owner's business: the object that embeds the ring
 * serialises its producer and its consumer (see the lock table in
 * Documentation/infiniband/sroce.rst), and names the lock with
 * sroce_queue_set_lock() so that every ring operation can assert it.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

/**
 * enum sroce_queue_kind - which side of a ring user space drives
 * @SROCE_QUEUE_FROM_USER: user space produces, the kernel consumes
 *	(SQ, RQ and SRQ of user objects)
 * @SROCE_QUEUE_TO_USER: the kernel produces, user space consumes
 *	(CQ of a user object)
 * @SROCE_QUEUE_KERNEL: the kernel drives both indices (kernel objects)
 */
enum sroce_queue_kind {
	SROCE_QUEUE_FROM_USER,
	SROCE_QUEUE_TO_USER,
	SROCE_QUEUE_KERNEL,
};

/*
 * Largest slot area of one ring (slot count times slot size), so that a
 * ring stays well inside what vmalloc and struct mminfo's u32 size take.
 */
#define SROCE_QUEUE_MAX_DATA	SZ_1G

struct sroce_mmap_entry;

/**
 * struct sroce_queue - one ring
 * @buf: the shared buffer (header + slots), vmalloc_user() memory
 * @buf_size: bytes in @buf
 * @kind: who drives which index
 * @log2_elem_size: private copy of the slot size, log2
 * @index_mask: private copy of the slot count - 1
 * @prod: the kernel's producer index (private copy when it owns it; the
 *	last masked value it read from user space otherwise)
 * @cons: the same for the consumer index
 * @mmap: the mmap entry user space maps the buffer through, or NULL for
 *	a kernel ring; once set, the entry owns @buf (it is freed when the
 *	entry is, which may be after the ring is gone, while still mapped)
 * @lock: the owner's lock that serialises the kernel's side of the ring,
 *	set by sroce_queue_set_lock(); only read by lockdep assertions, and
 *	NULL (nothing asserted) for a ring no object owns
 */
struct sroce_queue {
	struct rxe_queue_buf *buf;
	size_t buf_size;
	enum sroce_queue_kind kind;
	u32 log2_elem_size;
	u32 index_mask;
	u32 prod;
	u32 cons;
	struct sroce_mmap_entry *mmap;
	spinlock_t *lock; /* see above */
};

/* Pure ring arithmetic, on any 2^n ring; also used by the KUnit suite. */

/**
 * sroce_ring_next() - the index after @index
 * @index: a masked index
 * @mask: slot count - 1
 *
 * Return: (@index + 1) & @mask.
 */
static inline u32 sroce_ring_next(u32 index, u32 mask)
{
	return (index + 1) & mask;
}

/**
 * sroce_ring_count() - entries between consumer and producer
 * @prod: producer index (need not be masked)
 * @cons: consumer index (need not be masked)
 * @mask: slot count - 1
 *
 * Return: the number of entries, 0 .. @mask.
 */
static inline u32 sroce_ring_count(u32 prod, u32 cons, u32 mask)
{
	return (prod - cons) & mask;
}

/**
 * sroce_ring_empty() - whether a ring holds no entry
 * @prod: producer index (need not be masked)
 * @cons: consumer index (need not be masked)
 * @mask: slot count - 1
 *
 * Return: true when the masked indices are equal.
 */
static inline bool sroce_ring_empty(u32 prod, u32 cons, u32 mask)
{
	return ((prod ^ cons) & mask) == 0;
}

/**
 * sroce_ring_full() - whether a ring holds @mask entries
 * @prod: producer index (need not be masked)
 * @cons: consumer index (need not be masked)
 * @mask: slot count - 1
 *
 * Return: true when the slot after the producer's is the consumer's.
 */
static inline bool sroce_ring_full(u32 prod, u32 cons, u32 mask)
{
	return ((prod + 1) & mask) == (cons & mask);
}

/**
 * sroce_ring_holds() - whether a slot lies among a ring's entries
 * @prod: producer index (need not be masked)
 * @cons: consumer index (need not be masked)
 * @index: the slot
 * @mask: slot count - 1
 *
 * A consumer that walks ahead of the consumer index (the requester's SQ
 * head) must stop at the producer index. Where user space owns that
 * index it can move it backwards, behind the walker: "index != prod"
 * then holds all the way round the ring, over entries still in use.
 *
 * Return: true when @index is at or after @cons and before @prod.
 */
static inline bool sroce_ring_holds(u32 prod, u32 cons, u32 index, u32 mask)
{
	return sroce_ring_count(index, cons, mask) <
	       sroce_ring_count(prod, cons, mask);
}

int sroce_queue_slots(u32 num_elem, size_t elem_size, u32 *num_slots,
		      u32 *log2_elem_size);

int sroce_queue_init(struct sroce_queue *q, enum sroce_queue_kind kind,
		     u32 num_elem, size_t elem_size);
void sroce_queue_cleanup(struct sroce_queue *q);

int sroce_queue_map_user(struct sroce_queue *q, struct ib_ucontext *uctx,
			 struct mminfo *mi);

int sroce_queue_resize_prepare(struct sroce_queue *old,
			       struct sroce_queue *new, u32 num_elem,
			       struct ib_ucontext *uctx, struct mminfo *mi);
int sroce_queue_resize_commit(struct sroce_queue *q, struct sroce_queue *new);
void sroce_queue_set_lock(struct sroce_queue *q, spinlock_t *lock);

/**
 * sroce_queue_depth() - entries the ring can hold
 * @q: the ring
 *
 * Return: slot count - 1, the depth reported to the verbs consumer.
 */
static inline u32 sroce_queue_depth(const struct sroce_queue *q)
{
	return q->index_mask;
}

u32 sroce_queue_load_prod(struct sroce_queue *q);
u32 sroce_queue_load_cons(struct sroce_queue *q);

bool sroce_queue_empty(struct sroce_queue *q);
bool sroce_queue_full(struct sroce_queue *q);
u32 sroce_queue_count(struct sroce_queue *q);

void *sroce_queue_slot(const struct sroce_queue *q, u32 index);
void *sroce_queue_producer_slot(const struct sroce_queue *q);
void *sroce_queue_consumer_slot(const struct sroce_queue *q);

void sroce_queue_advance_producer(struct sroce_queue *q);
void sroce_queue_advance_consumer(struct sroce_queue *q);
u32 sroce_queue_discard(struct sroce_queue *q);

/**
 * sroce_queue_elem_size() - bytes per slot
 * @q: the ring
 *
 * Return: the private slot size.
 */
static inline size_t sroce_queue_elem_size(const struct sroce_queue *q)
{
	return (size_t)1 << q->log2_elem_size;
}

extern const struct ib_device_ops sroce_queue_verbs;

#endif /* SROCE_QUEUE_H */
