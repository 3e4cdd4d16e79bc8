// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce routes: where a RoCEv2 packet to an address vector leaves.
 *
 * Every packet is routed in the initial network namespace, through the
 * egress netdev of the address vector's GID. A datagram QP looks its
 * route up for each packet, as its WQEs name any AH. A connected QP
 * sends every packet to the same peer, so it keeps the route it found
 * (struct sroce_route) and looks it up again only when the route is no
 * longer valid or the QP's address vector changed.
 *
 * A kept route is checked before every use, as a socket checks its
 * cached route: the stack marks a route obsolete when its table changes
 * (a route added or deleted, an address gone, the netdev down or
 * unregistered), and ->check() then refuses it. The netdev's own
 * reference is not held by a kept route once the netdev is unregistered
 * (the stack moves its routes to the blackhole device), so a QP that
 * outlives its netdev does not hold up the unregistration.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <net/dst.h>
#include <net/ip6_fib.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_verbs.h>

#include "net/sroce_route.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"

static bool sroce_route_v6(const struct sroce_av *av)
{
	return av->network_type == RDMA_NETWORK_IPV6;
}

static struct dst_entry *sroce_route4(const struct sroce_av *av)
{
	struct flowi4 fl = {
		.flowi4_oif = av->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = RT_TOS(av->traffic_class),
		.daddr = av->daddr.in4.sin_addr.s_addr,
		.saddr = av->saddr.in4.sin_addr.s_addr,
	};
	struct rtable *rt;

	rt = ip_route_output_key(&init_net, &fl);
	return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
}

static struct dst_entry *sroce_route6(const struct sroce_av *av)
{
	struct flowi6 fl = {
		.flowi6_oif = av->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr.in6.sin6_addr,
		.saddr = av->saddr.in6.sin6_addr,
	};

	if (!IS_ENABLED(CONFIG_IPV6))
		return ERR_PTR(-EAFNOSUPPORT);
	return ipv6_stub->ipv6_dst_lookup_flow(&init_net, NULL, &fl, NULL);
}

/**
 * sroce_route_lookup() - the route of a RoCEv2 packet to an address vector
 * @av: the destination
 *
 * Context: any; does not sleep.
 * Return: a referenced dst, or an ERR_PTR (-ENETUNREACH, -EHOSTUNREACH).
 */
struct dst_entry *sroce_route_lookup(const struct sroce_av *av)
{
	return sroce_route_v6(av) ? sroce_route6(av) : sroce_route4(av);
}

/**
 * sroce_route_init() - start without a kept route
 * @r: the route of a QP being created
 *
 * Context: any.
 */
void sroce_route_init(struct sroce_route *r)
{
	spin_lock_init(&r->lock);
	r->dst = NULL;
	r->gen = 0;
	r->lookups = 0;
	r->misses = 0;
}

/**
 * sroce_route_flush() - let go of the kept route
 * @r: the route
 *
 * The next sroce_route_get() looks the route up again. A QP's route is
 * flushed when the QP is destroyed, after its engines stopped.
 *
 * Context: any.
 */
void sroce_route_flush(struct sroce_route *r)
{
	struct dst_entry *old;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	old = r->dst;
	r->dst = NULL;
	WRITE_ONCE(r->local, false);
	spin_unlock_irqrestore(&r->lock, flags);
	dst_release(old);
}

/* May the kept route still be used? The stack's check, as for a socket. */
static bool sroce_route_valid(struct dst_entry *dst, u32 cookie)
{
	return !dst->obsolete || dst->ops->check(dst, cookie) == dst;
}

/* What ->check() of a route found for @av wants back. */
static u32 sroce_route_cookie(const struct sroce_av *av,
			      struct dst_entry *dst)
{
	if (IS_ENABLED(CONFIG_IPV6) && sroce_route_v6(av))
		return rt6_get_cookie(container_of(dst, struct rt6_info, dst));
	return 0;
}

/**
 * sroce_route_local() - does the kept route end at this host?
 * @r: the route
 *
 * For decisions made before a packet is built, when the route is not
 * asked for yet: the answer of the last route kept, false before the
 * first.
 *
 * Context: any; takes no lock.
 * Return: true if the packets of the route kept are delivered in this host.
 */
bool sroce_route_local(const struct sroce_route *r)
{
	return READ_ONCE(r->local);
}

/**
 * sroce_route_get() - the route of a connected QP's packets
 * @r: the QP's route
 * @av: the QP's address vector, from the parameters the packet was
 *	built with
 * @gen: the generation of @av (it changes with every new address vector)
 *
 * The kept route when it was found for @gen and is still valid; else a
 * lookup, which is kept unless it was made for an older address vector
 * than the one kept (an engine that still sends with its old parameters
 * does not push out the route of the new ones).
 *
 * Context: any; does not sleep.
 * Return: a referenced dst, or the ERR_PTR of a failed lookup.
 */
struct dst_entry *sroce_route_get(struct sroce_route *r,
				  const struct sroce_av *av, u32 gen)
{
	struct dst_entry *dst, *old = NULL;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	r->lookups++;
	dst = r->dst;
	if (dst && r->gen == gen && sroce_route_valid(dst, r->cookie)) {
		dst_hold(dst);
		spin_unlock_irqrestore(&r->lock, flags);
		return dst;
	}
	r->misses++;
	spin_unlock_irqrestore(&r->lock, flags);

	dst = sroce_route_lookup(av);
	if (IS_ERR(dst))
		return dst;

	spin_lock_irqsave(&r->lock, flags);
	if (!r->dst || (s32)(gen - r->gen) >= 0) {
		old = r->dst;
		r->dst = dst_clone(dst);
		r->cookie = sroce_route_cookie(av, dst);
		r->gen = gen;
		WRITE_ONCE(r->local, sroce_xmit_dst_local(dst));
	}
	spin_unlock_irqrestore(&r->lock, flags);
	dst_release(old);
	return dst;
}
