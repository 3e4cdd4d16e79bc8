// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce transmit: the IP and UDP headers of a RoCEv2 packet, its ICRC,
 * and where it goes.
 *
 * The transport builds a packet from the BTH on (sroce_xmit_alloc()
 * leaves room in front for everything else) and hands it to sroce_xmit()
 * with the address vector of the QP or AH and its route (sroce_route.c).
 * sroce_xmit() puts the UDP header (source port from the QP, destination
 * 4791, checksum 0 as RoCEv2 allows) and the IPv4 or IPv6 header in
 * front, fills the ICRC and sends it with ip_local_out()/ip6_local_out().
 *
 * A destination that is a local address would reach the stack's loopback
 * device and no sroce device at all. So when the route is local, the
 * packet is handed straight to the receive side of the sroce device on
 * the netdev that owns the address. Its bytes never leave memory, so it
 * gets no ICRC, and the receive side, told that it was built here, checks
 * none: every other header is parsed and checked as one from the wire,
 * and the transport above treats it alike. The force_wire parameter
 * keeps the ICRC on such packets, filled and checked, for tests that must
 * see every packet as the wire would carry it.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_task.h"
#include "net/sroce_net.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_icrc.h"

static bool sroce_force_wire;
module_param_named(force_wire, sroce_force_wire, bool, 0644);
MODULE_PARM_DESC(force_wire,
		 "Give packets for a sroce device of this host an ICRC and check it, as on the wire (default: off)");

static bool sroce_local_span = true;
module_param_named(local_span, sroce_local_span, bool, 0644);
MODULE_PARM_DESC(local_span,
		 "Let one packet for a sroce device of this host carry several path MTUs of an RC message (default: on)");

static bool sroce_av_is_v6(const struct sroce_av *av)
{
	return av->network_type == RDMA_NETWORK_IPV6;
}

static unsigned int sroce_ip_hdr_len(const struct sroce_av *av)
{
	return sroce_av_is_v6(av) ? sizeof(struct ipv6hdr) :
				    sizeof(struct iphdr);
}

/**
 * sroce_xmit_alloc() - an skb for one outgoing RoCEv2 packet
 * @sdev: the sending device
 * @av: where it goes (decides IPv4 or IPv6 headroom)
 * @len: bytes from the BTH to the end of the pad
 * @gfp: allocation flags of the caller's context
 *
 * Return: an skb whose data starts at the BTH and holds @len bytes plus
 * room for the ICRC, with headroom for the UDP, IP and link headers; or
 * NULL when memory is short.
 */
struct sk_buff *sroce_xmit_alloc(struct sroce_dev *sdev,
				 const struct sroce_av *av, unsigned int len,
				 gfp_t gfp)
{
	unsigned int head = LL_RESERVED_SPACE(sdev->ndev) + VLAN_HLEN +
			    sroce_ip_hdr_len(av) + sizeof(struct udphdr);
	struct sk_buff *skb;

	skb = alloc_skb(head + len + SROCE_ICRC_LEN, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	skb_put(skb, len + SROCE_ICRC_LEN);
	return skb;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

static void sroce_push_ip4(struct sk_buff *skb, const struct sroce_av *av,
			   u16 id)
{
	struct iphdr *iph;

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->saddr.in4.sin_addr.s_addr;
	iph->daddr = av->daddr.in4.sin_addr.s_addr;
	iph->id = htons(id);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
}

static void sroce_push_ip6(struct sk_buff *skb, const struct sroce_av *av)
{
	struct ipv6hdr *ip6h;

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, av->traffic_class, htonl(av->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit;
	ip6h->saddr = av->saddr.in6.sin6_addr;
	ip6h->daddr = av->daddr.in6.sin6_addr;
	skb->protocol = htons(ETH_P_IPV6);
}

/**
 * sroce_xmit_dst_local() - does a route end at this host?
 * @dst: the route
 *
 * Such a packet would reach the stack's loopback device and no sroce
 * device at all: sroce_xmit_out() delivers it itself.
 *
 * Return: true for a local destination.
 */
bool sroce_xmit_dst_local(const struct dst_entry *dst)
{
	return dst->dev->flags & IFF_LOOPBACK;
}

/**
 * sroce_xmit_how() - how a packet on a route is delivered
 * @dst: the route
 * @force_wire: give a packet for this host an ICRC all the same
 *
 * Context: any.
 * Return: SROCE_XMIT_WIRE for a route that leaves this host;
 * SROCE_XMIT_LOCAL for one that ends here, or SROCE_XMIT_LOCAL_CHECKED
 * when @force_wire.
 */
enum sroce_xmit_how sroce_xmit_how(const struct dst_entry *dst,
				   bool force_wire)
{
	if (!sroce_xmit_dst_local(dst))
		return SROCE_XMIT_WIRE;
	return force_wire ? SROCE_XMIT_LOCAL_CHECKED : SROCE_XMIT_LOCAL;
}

/**
 * sroce_xmit_how_now() - sroce_xmit_how() under the force_wire parameter
 * @dst: the route
 *
 * Decide once per packet or train and pass the answer on, so that the
 * headers and the hand-off agree when the parameter changes meanwhile.
 *
 * Context: any.
 * Return: as sroce_xmit_how().
 */
enum sroce_xmit_how sroce_xmit_how_now(const struct dst_entry *dst)
{
	return sroce_xmit_how(dst, READ_ONCE(sroce_force_wire));
}

/**
 * sroce_xmit_may_span() - may a packet carry several PSNs' payloads?
 * @local: its route ends at this host (sroce_route_local())
 *
 * A packet handed to a device of this host without an ICRC never meets
 * a netdev's MTU, and the receiving device knows it came from here
 * (SROCE_PKT_LOCAL): it may carry several consecutive packets of a
 * message at once, the cost of one packet for many. Not with force_wire,
 * which wants every packet as the wire carries it, nor with the module
 * parameter local_span off. The train that carries it is marked
 * &sroce_train.local_only, and dropped if its route changed meanwhile.
 *
 * Context: any.
 * Return: true if the requester may build spanning packets now.
 */
bool sroce_xmit_may_span(bool local)
{
	return local && READ_ONCE(sroce_local_span) &&
	       !READ_ONCE(sroce_force_wire);
}

/* The netdev that owns the (local) destination address, referenced. */
static struct net_device *sroce_local_owner(const struct sroce_av *av)
{
	struct net_device *ndev = NULL;

	if (!sroce_av_is_v6(av))
		return ip_dev_find(&init_net, av->daddr.in4.sin_addr.s_addr);
	if (IS_ENABLED(CONFIG_IPV6)) {
		rcu_read_lock();
		ndev = ipv6_stub->ipv6_dev_find(&init_net,
						&av->daddr.in6.sin6_addr, NULL);
		if (ndev)
			dev_hold(ndev);
		rcu_read_unlock();
	}
	return ndev;
}

/**
 * sroce_xmit_local_list() - hand packets for a local address to its device
 * @av: the destination, the same for every packet
 * @list: the packets, linked by skb->next, skb->data at their IP
 *	headers; consumed
 * @built_here: they carry no ICRC (SROCE_XMIT_LOCAL) and the receive
 *	side must not check one
 *
 * The packets go to the sroce device on the netdev that owns the
 * destination address, in order, skb->data at their UDP headers as the
 * UDP socket would deliver them. The device is looked up and referenced
 * once for them all: a requester's train costs one lookup, not one a
 * packet. That device may be going away: one that is no longer
 * registered takes nothing, and the packets are dropped as ones sent to
 * an address without a sroce device.
 *
 * Context: any; does not sleep.
 * Return: 0 when the device took them, -EHOSTUNREACH when there is none.
 */
int sroce_xmit_local_list(const struct sroce_av *av, struct sk_buff *list,
			  bool built_here)
{
	struct net_device *ndev = sroce_local_owner(av);
	struct sroce_dev *target = NULL;
	struct sk_buff *skb, *next;
	bool entered;

	if (ndev)
		target = sroce_dev_get_by_netdev(is_vlan_dev(ndev) ?
						 vlan_dev_real_dev(ndev) : ndev);
	if (!target) {
		if (ndev)
			dev_put(ndev);
		kfree_skb_list(list);
		return -EHOSTUNREACH;
	}

	entered = sroce_task_local_enter();
	for (skb = list; skb; skb = next) {
		next = skb->next;
		skb_mark_not_on_list(skb);
		skb->dev = ndev;
		skb->pkt_type = PACKET_HOST;
		__skb_pull(skb, sroce_ip_hdr_len(av));
		sroce_net_deliver(target, skb, built_here);
	}
	sroce_task_local_exit(entered);
	sroce_dev_put(target);
	dev_put(ndev);
	return 0;
}

/**
 * sroce_xmit_local() - hand a packet for a local address to its device
 * @av: the destination
 * @skb: the packet, skb->data at the IP header; consumed
 * @built_here: as for sroce_xmit_local_list()
 *
 * Context: any; does not sleep.
 * Return: as sroce_xmit_local_list().
 */
int sroce_xmit_local(const struct sroce_av *av, struct sk_buff *skb,
		     bool built_here)
{
	skb_mark_not_on_list(skb);
	return sroce_xmit_local_list(av, skb, built_here);
}

/**
 * sroce_xmit_ip_ids() - reserve IPv4 identification values
 * @av: the destination (the IDs are drawn per address pair)
 * @n: how many consecutive values the caller will use
 *
 * Return: the first; an IPv6 destination gets 0 (it has no such field).
 */
u16 sroce_xmit_ip_ids(const struct sroce_av *av, unsigned int n)
{
	struct iphdr iph = {
		.protocol = IPPROTO_UDP,
		.saddr = av->saddr.in4.sin_addr.s_addr,
		.daddr = av->daddr.in4.sin_addr.s_addr,
	};

	if (sroce_av_is_v6(av))
		return 0;
	__ip_select_ident(&init_net, &iph, n);
	return ntohs(iph.id);
}

/**
 * sroce_xmit_ip_id() - the IPv4 identification of a single packet
 * @av: the destination
 * @how: from sroce_xmit_how_now()
 *
 * A packet that stays in this host is never reassembled, so it is not
 * worth a draw from the stack's identification generator.
 *
 * Return: the identification for sroce_xmit_hdrs().
 */
u16 sroce_xmit_ip_id(const struct sroce_av *av, enum sroce_xmit_how how)
{
	return how == SROCE_XMIT_WIRE ? sroce_xmit_ip_ids(av, 1) : 0;
}

/**
 * sroce_xmit_hdrs() - put the UDP and IP headers in front of a packet and
 *	fill its ICRC
 * @skb: from sroce_xmit_alloc(), skb->data at the BTH
 * @av: the destination
 * @sport: the UDP source port (the QP's)
 * @ip_id: the IPv4 identification (ignored for IPv6)
 * @how: from sroce_xmit_how_now(); SROCE_XMIT_LOCAL leaves the ICRC out
 *
 * The ICRC covers the headers as they are now: whoever changes one of its
 * covered fields later (a GSO segment's length) must leave the packet as
 * it was when it reaches the wire.
 *
 * Return: 0, or the error of sroce_icrc_skb_fill(); skb->data is at the
 * IP header either way.
 */
int sroce_xmit_hdrs(struct sk_buff *skb, const struct sroce_av *av,
		    u16 sport, u16 ip_id, enum sroce_xmit_how how)
{
	sroce_push_udp(skb, sport);
	if (sroce_av_is_v6(av))
		sroce_push_ip6(skb, av);
	else
		sroce_push_ip4(skb, av, ip_id);
	if (how == SROCE_XMIT_LOCAL)
		return 0;
	return sroce_icrc_skb_fill(skb);
}

/**
 * sroce_xmit_out() - send a packet whose headers are complete
 * @av: the destination
 * @dst: its route (referenced, consumed)
 * @skb: the packet, skb->data at the IP header; consumed
 * @how: as given to sroce_xmit_hdrs()
 *
 * Return: as sroce_xmit().
 */
int sroce_xmit_out(const struct sroce_av *av, struct dst_entry *dst,
		   struct sk_buff *skb, enum sroce_xmit_how how)
{
	int err;

	if (how != SROCE_XMIT_WIRE) {
		dst_release(dst);
		return sroce_xmit_local(av, skb, how == SROCE_XMIT_LOCAL);
	}

	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	if (sroce_av_is_v6(av)) {
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		err = ip6_local_out(&init_net, NULL, skb);
	} else {
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		err = ip_local_out(&init_net, NULL, skb);
	}
	/* positive NET_XMIT_* codes: only NET_XMIT_CN still means sent */
	return err > 0 ? net_xmit_errno(err) : err;
}

/**
 * sroce_xmit() - send one RoCEv2 packet
 * @av: the destination
 * @dst: its route, from sroce_route_lookup() or sroce_route_get(), or
 *	the ERR_PTR of a lookup that failed; consumed
 * @sport: the UDP source port (the QP's)
 * @skb: from sroce_xmit_alloc(), with the BTH and everything after it
 *	written except the ICRC; consumed in every case
 *
 * Context: any; does not sleep.
 *
 * Return: 0 when the packet left (or was delivered locally); a negative
 * errno when it could not be routed (-ENETUNREACH, -EHOSTUNREACH), or the
 * stack dropped it at once (-ENOBUFS and friends). A packet lost later on
 * the way is the transport's business (retries).
 */
int sroce_xmit(const struct sroce_av *av, struct dst_entry *dst, u16 sport,
	       struct sk_buff *skb)
{
	enum sroce_xmit_how how;
	int err;

	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	how = sroce_xmit_how_now(dst);
	err = sroce_xmit_hdrs(skb, av, sport, sroce_xmit_ip_id(av, how), how);
	if (err) {
		dst_release(dst);
		kfree_skb(skb);
		return err;
	}
	return sroce_xmit_out(av, dst, skb, how);
}
