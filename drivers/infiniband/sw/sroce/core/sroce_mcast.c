// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce multicast: attach_mcast/detach_mcast keep, per device, the UD QPs
 * attached to each MGID (IBA 10.5). RoCEv2 carries a group as an IP
 * multicast address: an IPv4 group as its IPv4-mapped MGID
 * (::ffff:239.1.1.1), an IPv6 group as itself. The first QP attached to
 * a group adds the group's Ethernet multicast address (01:00:5e:... or
 * 33:33:...) to the netdev's filter, the last one detached removes it;
 * joining the group at the IP level (IGMP/MLD) is rdma_cm's business, as
 * for any RoCE device.
 *
 * The receive path (transport/sroce_rcv.c) asks sroce_mcast_members()
 * which QPs a datagram to the multicast QPN goes to.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_ether.h>
#include <linux/jhash.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "core/sroce_dev.h"
#include "core/sroce_mcast.h"

/* One group: an MGID and the QPNs attached to it. */
struct sroce_mcg {
	struct hlist_node node;
	union ib_gid mgid;
	u8 mac[ETH_ALEN];
	unsigned int nqps;
	u32 qpns[SROCE_MAX_MCAST_QP_ATTACH];
};

/**
 * sroce_mcast_init() - no groups yet
 * @mc: the device's multicast state
 */
void sroce_mcast_init(struct sroce_mcast *mc)
{
	mutex_init(&mc->mutex);
	spin_lock_init(&mc->lock);
	hash_init(mc->groups);
	mc->ngroups = 0;
	mc->seed = get_random_u32();
}

/**
 * sroce_mcast_cleanup() - free what is left of the groups
 * @mc: the device's multicast state
 *
 * ib_core detaches every QP before it destroys it (an attached QP is in
 * use), so nothing should be left when the device goes.
 *
 * Context: dealloc_driver.
 */
void sroce_mcast_cleanup(struct sroce_mcast *mc)
{
	struct hlist_node *tmp;
	struct sroce_mcg *g;
	unsigned int bkt;

	WARN_ON_ONCE(mc->ngroups);
	hash_for_each_safe(mc->groups, bkt, tmp, g, node) {
		hash_del(&g->node);
		kfree(g);
	}
	mutex_destroy(&mc->mutex);
}

/**
 * sroce_mgid_mac() - the Ethernet multicast address of a RoCEv2 MGID
 * @mgid: an IPv6 multicast address or an IPv4-mapped IPv4 multicast one
 * @mac: filled with the address (RFC 1112, RFC 2464)
 *
 * Context: any.
 * Return: false if @mgid is not a multicast address.
 */
bool sroce_mgid_mac(const union ib_gid *mgid, u8 *mac)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(a)) {
		if (!ipv4_is_multicast(a->s6_addr32[3]))
			return false;
		ip_eth_mc_map(a->s6_addr32[3], mac);
		return true;
	}
	if (!ipv6_addr_is_multicast(a))
		return false;
	ipv6_eth_mc_map(a, mac);
	return true;
}

static u32 sroce_mcg_hash(const struct sroce_mcast *mc,
			  const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), mc->seed);
}

static struct sroce_mcg *sroce_mcg_find(struct sroce_mcast *mc,
					const union ib_gid *mgid)
{
	struct sroce_mcg *g;

	lockdep_assert_held(&mc->lock);
	hash_for_each_possible(mc->groups, g, node, sroce_mcg_hash(mc, mgid))
		if (!memcmp(g->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return g;
	return NULL;
}

static int sroce_mcg_index(const struct sroce_mcg *g, u32 qpn)
{
	unsigned int i;

	for (i = 0; i < g->nqps; i++)
		if (g->qpns[i] == qpn)
			return i;
	return -1;
}

/*
 * Add @qpn to the group of @fresh's MGID; *@used tells whether @fresh
 * became that group (a new one, with @qpn its only member).
 */
static int sroce_mcg_add(struct sroce_mcast *mc, struct sroce_mcg *fresh,
			 u32 qpn, bool *used)
{
	struct sroce_mcg *g;

	lockdep_assert_held(&mc->lock);
	*used = false;
	g = sroce_mcg_find(mc, &fresh->mgid);
	if (!g) {
		if (mc->ngroups >= SROCE_MAX_MCAST_GRP)
			return -ENOMEM;
		fresh->qpns[0] = qpn;
		fresh->nqps = 1;
		hash_add(mc->groups, &fresh->node,
			 sroce_mcg_hash(mc, &fresh->mgid));
		mc->ngroups++;
		*used = true;
		return 0;
	}
	if (sroce_mcg_index(g, qpn) >= 0)
		return 0;	/* attached already */
	if (g->nqps >= SROCE_MAX_MCAST_QP_ATTACH)
		return -ENOMEM;
	g->qpns[g->nqps++] = qpn;
	return 0;
}

/* Take member @i out of @g; @g, unlinked, if that was the last one. */
static struct sroce_mcg *sroce_mcg_drop(struct sroce_mcast *mc,
					struct sroce_mcg *g, unsigned int i)
{
	lockdep_assert_held(&mc->lock);
	g->qpns[i] = g->qpns[--g->nqps];
	if (g->nqps)
		return NULL;
	hash_del(&g->node);
	mc->ngroups--;
	return g;
}

/**
 * sroce_attach_mcast() - ib_device_ops.attach_mcast
 * @ibqp: a UD QP
 * @gid: the MGID
 * @lid: ignored (RoCE has no LIDs)
 *
 * The first QP of a group adds the group's Ethernet address to the
 * netdev's filter; if that fails, the group is taken out again, so that
 * a failed attach leaves nothing behind for ib_core (which does not
 * detach a QP whose attach failed) to trip over at cleanup.
 *
 * Context: process context.
 * Return: 0; -EINVAL for a QP that is not UD or a GID that is not
 * multicast; -ENOMEM when the device or the group is full, or the
 * netdev could not take the address.
 */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcg *fresh;
	unsigned long flags;
	bool used;
	int err;

	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	fresh->mgid = *gid;
	if (!sroce_mgid_mac(gid, fresh->mac)) {
		kfree(fresh);
		return -EINVAL;
	}
	mutex_lock(&mc->mutex);
	spin_lock_irqsave(&mc->lock, flags);
	err = sroce_mcg_add(mc, fresh, ibqp->qp_num, &used);
	spin_unlock_irqrestore(&mc->lock, flags);
	/* a new group: let its frames in, or take it out again */
	if (used && dev_mc_add(sdev->ndev, fresh->mac)) {
		spin_lock_irqsave(&mc->lock, flags);
		sroce_mcg_drop(mc, fresh, 0);
		spin_unlock_irqrestore(&mc->lock, flags);
		used = false;
		err = -ENOMEM;
	}
	mutex_unlock(&mc->mutex);
	if (!used)
		kfree(fresh);
	return err;
}

/**
 * sroce_detach_mcast() - ib_device_ops.detach_mcast
 * @ibqp: the QP
 * @gid: the MGID
 * @lid: ignored
 *
 * Context: process context.
 * Return: 0, or -EINVAL if @ibqp is not attached to @gid.
 */
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_mcast *mc = &sdev->mcast;
	struct sroce_mcg *g, *gone = NULL;
	unsigned long flags;
	int i, err = -EINVAL;

	mutex_lock(&mc->mutex);
	spin_lock_irqsave(&mc->lock, flags);
	g = sroce_mcg_find(mc, gid);
	i = g ? sroce_mcg_index(g, ibqp->qp_num) : -1;
	if (i >= 0) {
		gone = sroce_mcg_drop(mc, g, i);
		err = 0;
	}
	spin_unlock_irqrestore(&mc->lock, flags);
	if (gone) {
		dev_mc_del(sdev->ndev, gone->mac);
		kfree(gone);
	}
	mutex_unlock(&mc->mutex);
	return err;
}

/**
 * sroce_mcast_members() - the QPs attached to a group
 * @mc: the device's multicast state
 * @mgid: the group
 * @qpns: filled with their QPNs, room for SROCE_MAX_MCAST_QP_ATTACH
 *
 * Context: any.
 * Return: how many there are; 0 if @mgid is no group.
 */
unsigned int sroce_mcast_members(struct sroce_mcast *mc,
				 const union ib_gid *mgid, u32 *qpns)
{
	unsigned int n = 0;
	struct sroce_mcg *g;
	unsigned long flags;

	spin_lock_irqsave(&mc->lock, flags);
	g = sroce_mcg_find(mc, mgid);
	if (g) {
		n = g->nqps;
		memcpy(qpns, g->qpns, n * sizeof(qpns[0]));
	}
	spin_unlock_irqrestore(&mc->lock, flags);
	return n;
}

/* The verbs on multicast groups, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_mcast_verbs = {
	.attach_mcast = sroce_attach_mcast,
	.detach_mcast = sroce_detach_mcast,
};
