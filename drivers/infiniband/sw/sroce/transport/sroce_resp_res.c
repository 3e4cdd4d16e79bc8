// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC responder resources and the responder's pure PSN rules.
 *
 * A responder keeps one resource per RDMA READ or atomic request it has
 * accepted and not yet retired, at most max_dest_rd_atomic of them (IBA
 * 9.7.5.1.3, 9.5): a duplicate READ is served again from it and a
 * duplicate atomic answered with the value it saved, never executed
 * twice. The resources are a ring in PSN order, oldest first.
 *
 * Retirement. The requester never has more READ/atomic requests
 * outstanding than its max_rd_atomic, which may not exceed our
 * max_dest_rd_atomic; a request stays outstanding at the requester until
 * its whole response arrived there. Nothing on the wire acknowledges a
 * response, so the responder infers it:
 *
 *  1. Capacity: when a new READ/atomic arrives and all max_dest_rd_atomic
 *     resources are held, the requester must have completed the oldest
 *     one, so it is retired - but only if its response had completely
 *     gone out before the new request arrived. If it had not, the
 *     requester sent the new request before it could have received that
 *     response: it has more outstanding than max_dest_rd_atomic, and the
 *     new request is NAKed "invalid request" (IBA: too many RDMA READ or
 *     ATOMIC requests), not silently served. "Arrived before" is judged
 *     by arrival numbers: each request packet gets the next number as it
 *     is taken from the responder's queue, and a response records,
 *     before its last packet is sent, the number the next packet to
 *     arrive will get (those already queued arrived before that packet
 *     left, so their sender cannot have seen it). The rule never refuses a
 *     requester that keeps its limit; a re-served (duplicate) response
 *     keeps the mark of its first complete serve, so that a duplicate
 *     the network made cannot turn a legal request into a refused one.
 *  2. Age: once the ePSN has moved more than 2^23 PSNs past a resource's
 *     last PSN, no packet can be classified a duplicate of it any more
 *     (it would be "ahead"); it is retired, oldest first, before it
 *     could alias a PSN of the next turn of the 24-bit space.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>

#include "transport/sroce_resp_res.h"
#include "wire/sroce_psn.h"

/**
 * sroce_resp_psn_class() - classify a request PSN (IBA 9.7.5.1)
 * @psn: PSN of the request packet
 * @epsn: the responder's expected PSN
 *
 * The 2^24 PSNs split into the ePSN, the 2^23 before it (duplicates) and
 * the 2^23 - 1 after it (out of sequence). ePSN + 2^23 is therefore a
 * duplicate.
 *
 * Context: any.
 * Return: the class of @psn.
 */
enum sroce_psn_class sroce_resp_psn_class(u32 psn, u32 epsn)
{
	s32 d = sroce_psn_diff(psn, epsn);

	if (!d)
		return SROCE_PSN_EXPECTED;
	return d < 0 ? SROCE_PSN_DUPLICATE : SROCE_PSN_AHEAD;
}

/**
 * sroce_resp_read_npkts() - response packets of an RDMA READ
 * @len: DMA length of the request
 * @mtu: path MTU in bytes
 *
 * Context: any.
 * Return: the number of PSNs the READ uses; a zero-length READ has one
 * (empty) response packet.
 */
u32 sroce_resp_read_npkts(u32 len, u32 mtu)
{
	return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/**
 * sroce_resp_read_offset() - where a restarted READ response begins
 * @first_psn: PSN of the original READ request
 * @psn: PSN of the duplicate request, inside the READ's PSN range
 * @mtu: path MTU in bytes
 *
 * Every response packet but the last carries exactly one MTU, so the
 * response packet at @psn carries the bytes from (@psn - @first_psn) *
 * @mtu on (IBA 9.7.5.1.3).
 *
 * Context: any.
 * Return: the byte offset into the READ.
 */
u32 sroce_resp_read_offset(u32 first_psn, u32 psn, u32 mtu)
{
	return sroce_psn(psn - first_psn) * mtu;
}

/**
 * sroce_resp_res_retirable() - may a resource make room for a new one
 * @res: the oldest resource
 * @arrival: arrival number of the new READ/atomic request
 *
 * Context: any.
 * Return: true if @res's response had completely gone out before the new
 * request arrived (rule 1 above).
 */
bool sroce_resp_res_retirable(const struct sroce_resp_res *res, u32 arrival)
{
	return res->answered && (s32)(arrival - res->answered_mark) >= 0;
}

/**
 * sroce_resp_res_init() - allocate the resources of a QP
 * @ring: the ring, zeroed
 * @size: entries (the device's max_qp_rd_atom); 0 allocates nothing
 * @gfp: allocation flags
 *
 * Context: as @gfp allows.
 * Return: 0 or -ENOMEM.
 */
int sroce_resp_res_init(struct sroce_resp_res_ring *ring, u32 size,
			gfp_t gfp)
{
	ring->oldest = 0;
	ring->count = 0;
	ring->size = 0;
	ring->slot = NULL;
	if (!size)
		return 0;
	ring->slot = kcalloc(size, sizeof(*ring->slot), gfp);
	if (!ring->slot)
		return -ENOMEM;
	ring->size = size;
	return 0;
}

/**
 * sroce_resp_res_free() - free the resources of a QP
 * @ring: the ring; may be one sroce_resp_res_init() failed on
 */
void sroce_resp_res_free(struct sroce_resp_res_ring *ring)
{
	kfree(ring->slot);
	ring->slot = NULL;
	ring->size = 0;
	ring->count = 0;
}

/**
 * sroce_resp_res_clear() - retire every resource
 * @ring: the ring
 *
 * Context: any.
 */
void sroce_resp_res_clear(struct sroce_resp_res_ring *ring)
{
	ring->oldest = 0;
	ring->count = 0;
}

static struct sroce_resp_res *sroce_resp_res_at(struct sroce_resp_res_ring *ring,
						u32 i)
{
	return &ring->slot[(ring->oldest + i) % ring->size];
}

static void sroce_resp_res_retire_oldest(struct sroce_resp_res_ring *ring)
{
	ring->oldest = (ring->oldest + 1) % ring->size;
	ring->count--;
}

/**
 * sroce_resp_res_admit() - take a resource for a new READ/atomic request
 * @ring: the QP's resources
 * @limit: the QP's max_dest_rd_atomic
 * @arrival: arrival number of the request
 *
 * Retires the oldest resources while @limit or more are held and the
 * oldest is retirable (rule 1); a @limit lowered by modify_qp is honoured
 * the same way.
 *
 * Context: the responder.
 * Return: the new resource, zeroed, as the newest of the ring; NULL if
 * @limit resources are still busy (or @limit is 0): the request is one
 * too many.
 */
struct sroce_resp_res *sroce_resp_res_admit(struct sroce_resp_res_ring *ring,
					    u32 limit, u32 arrival)
{
	struct sroce_resp_res *res;

	limit = min(limit, ring->size);
	while (ring->count && ring->count >= limit &&
	       sroce_resp_res_retirable(sroce_resp_res_at(ring, 0), arrival))
		sroce_resp_res_retire_oldest(ring);
	if (ring->count >= limit)
		return NULL;
	res = sroce_resp_res_at(ring, ring->count);
	memset(res, 0, sizeof(*res));
	ring->count++;
	return res;
}

/**
 * sroce_resp_res_retire_stale() - retire what no duplicate can reach
 * @ring: the QP's resources
 * @epsn: the ePSN
 *
 * Retires, oldest first, the resources whose last PSN is no longer
 * before @epsn in serial order (rule 2).
 *
 * Context: the responder.
 */
void sroce_resp_res_retire_stale(struct sroce_resp_res_ring *ring, u32 epsn)
{
	struct sroce_resp_res *res;
	u32 last;

	while (ring->count) {
		res = sroce_resp_res_at(ring, 0);
		last = sroce_psn_add(res->first_psn, res->npkts - 1);
		if (sroce_psn_before(last, epsn))
			break;
		sroce_resp_res_retire_oldest(ring);
	}
}

/**
 * sroce_resp_res_find() - the resource a duplicate request belongs to
 * @ring: the QP's resources
 * @psn: PSN of the duplicate
 *
 * Context: the responder.
 * Return: the newest resource whose PSN range holds @psn, or NULL.
 */
struct sroce_resp_res *sroce_resp_res_find(struct sroce_resp_res_ring *ring,
					   u32 psn)
{
	struct sroce_resp_res *res;
	u32 i;

	for (i = ring->count; i--; ) {
		res = sroce_resp_res_at(ring, i);
		if (sroce_psn_in_window(psn, res->first_psn, res->npkts))
			return res;
	}
	return NULL;
}
