/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce routes: where a RoCEv2 packet to an address vector leaves, and
 * the route a connected QP keeps for its peer.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_ROUTE_H
#define SROCE_ROUTE_H

#include <linux/spinlock.h>
#include <linux/types.h>

struct dst_entry;
struct sroce_av;

/**
 * struct sroce_route - the route a connected QP's packets take
 * @lock: guards the other fields; interrupts saved (the engines of one
 *	QP send from softirq and from workers, on any CPU)
 * @dst: the route, holding a reference; NULL when there is none
 * @cookie: what the route's ->check() wants back (IPv6 only)
 * @gen: the generation of the QP's address vector @dst was found for
 * @local: @dst ends at this host (sroce_route_local()); read without @lock
 * @lookups: routes asked for (statistics and tests)
 * @misses: of those, found by a route lookup rather than here
 */
struct sroce_route {
	spinlock_t lock; /* see above */
	struct dst_entry *dst;
	u32 cookie;
	u32 gen;
	bool local;
	u64 lookups;
	u64 misses;
};

struct dst_entry *sroce_route_lookup(const struct sroce_av *av);
void sroce_route_init(struct sroce_route *r);
void sroce_route_flush(struct sroce_route *r);
bool sroce_route_local(const struct sroce_route *r);
struct dst_entry *sroce_route_get(struct sroce_route *r,
				  const struct sroce_av *av, u32 gen);

#endif /* SROCE_ROUTE_H */
