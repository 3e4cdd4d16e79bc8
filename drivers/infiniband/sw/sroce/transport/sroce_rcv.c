// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce received packet dispatch: a packet sroce_pkt_parse() accepted is
 * matched to its QP by the BTH DestQP, checked against the QP's type (the
 * opcode's transport must be the QP's), state and peer address, and
 * queued for the QP's responder (requests) or completer (ACKs and
 * responses). A datagram to the multicast QPN fans out to the QPs
 * attached to its group. Every drop on the way in, from the parser's
 * verdict on, is counted here, in the device counter of its reason.
 *
 * The ICRC of a packet with a payload is checked by the engine that takes
 * it off the QP's queue (sroce_rcv_verify()), not in the receive softirq:
 * on a veth that softirq runs on the sending CPU, and the CRC pass over
 * the payload is most of the receive side's work, which the engine, woken
 * on another CPU, can do in parallel. Only the headers decide where such
 * a packet is queued; a READ request, an ACK or anything else without a
 * payload, which can change an engine's state as it is queued, is
 * checked first, and so is one marked CE, for which a CNP may be sent.
 * A packet dropped on the way in is checked before its drop is counted,
 * so that every counter keeps its meaning: rcvd_pkts counts packets
 * whose ICRC is good, icrc_err those whose is not.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ipv6.h>

#include "core/sroce_dev.h"
#include "core/sroce_mcast.h"
#include "core/sroce_stats.h"
#include "transport/sroce_cnp.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_qp_index.h"
#include "transport/sroce_rcv.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_inbox.h"
#include "wire/sroce_pkt.h"

static bool sroce_rcv_icrc_later = true;
module_param_named(icrc_later, sroce_rcv_icrc_later, bool, 0644);
MODULE_PARM_DESC(icrc_later,
		 "Check the ICRC of a packet with a payload in the engine that takes it, not on receive (default: on)");

/* The device counter each drop reason is counted in. */
static const enum sroce_counter sroce_drop_counters[] = {
	[SROCE_DROP_FRAMING] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_SHORT] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_TVER] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_CNP] = SROCE_CNT_CNP_RCVD,
	[SROCE_DROP_OPCODE] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_HDR_LEN] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_PAD] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_PAYLOAD] = SROCE_CNT_MALFORMED,
	[SROCE_DROP_PKEY] = SROCE_CNT_PKEY_VIOLATIONS,
	[SROCE_DROP_ICRC] = SROCE_CNT_ICRC_ERR,
	[SROCE_DROP_NOMEM] = SROCE_CNT_DROPPED_NOMEM,
	[SROCE_DROP_NO_QP] = SROCE_CNT_DROPPED_NO_QP,
	[SROCE_DROP_QP_STATE] = SROCE_CNT_DROPPED_QP_STATE,
	[SROCE_DROP_QKEY] = SROCE_CNT_QKEY_VIOLATIONS,
	[SROCE_DROP_ADDR] = SROCE_CNT_DROPPED_ADDR,
};

static_assert(ARRAY_SIZE(sroce_drop_counters) == SROCE_DROP_NR);

/**
 * sroce_drop_counter() - the device counter of a drop reason
 * @why: the reason
 *
 * The wire-format errors (framing, short, TVer, opcode, header length,
 * pad) share malformed_pkts; every other reason has a counter of its own.
 *
 * Return: the counter; malformed_pkts for an invalid @why.
 */
enum sroce_counter sroce_drop_counter(enum sroce_drop_reason why)
{
	if (WARN_ON_ONCE((unsigned int)why >= SROCE_DROP_NR))
		return SROCE_CNT_MALFORMED;
	return sroce_drop_counters[why];
}

/**
 * sroce_rcv_count_drop() - count a dropped packet
 * @sdev: the device it arrived on
 * @why: why it was dropped
 *
 * Context: any.
 */
void sroce_rcv_count_drop(struct sroce_dev *sdev, enum sroce_drop_reason why)
{
	sroce_stats_inc(sdev, sroce_drop_counter(why));
}

/* Count a packet that passed every check. */
static void sroce_rcv_count(struct sroce_dev *sdev, const struct sk_buff *skb)
{
	sroce_stats_inc(sdev, SROCE_CNT_RCVD_PKTS);
	sroce_stats_add(sdev, SROCE_CNT_RCVD_BYTES, skb->len);
}

/**
 * sroce_rcv_verify() - check the ICRC of a packet whose check was deferred
 * @sdev: the device that received it
 * @skb: the packet, as sroce_rcv_skb() queued it (skb->data at the BTH)
 *
 * A packet that was checked already passes. One whose ICRC is wrong is
 * counted in icrc_err; one whose ICRC is good is counted as received.
 *
 * Context: any; the engine that took @skb off its queue, before it acts
 * on the packet.
 * Return: true if the packet may be acted on; false if the caller must
 * drop it (it is counted).
 */
bool sroce_rcv_verify(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	enum sroce_drop_reason why;

	if (!(pkt->flags & SROCE_PKT_ICRC_LATER))
		return true;
	pkt->flags &= ~SROCE_PKT_ICRC_LATER;
	if (sroce_pkt_check_icrc(skb, &why)) {
		sroce_rcv_count_drop(sdev, why);
		return false;
	}
	sroce_rcv_count(sdev, skb);
	return true;
}

/**
 * sroce_rcv_drop() - drop a received packet and count why
 * @sdev: the device that received it
 * @skb: the packet; consumed
 * @why: why it is dropped
 *
 * A packet whose ICRC was not checked yet is checked first: a bad one is
 * counted as such, whatever else was wrong with it.
 *
 * Context: any.
 */
void sroce_rcv_drop(struct sroce_dev *sdev, struct sk_buff *skb,
		    enum sroce_drop_reason why)
{
	if (sroce_rcv_verify(sdev, skb))
		sroce_rcv_count_drop(sdev, why);
	kfree_skb(skb);
}

/**
 * sroce_rcv_refuse() - drop a packet an engine's queue refused
 * @sdev: the device that received it
 * @skb: the packet; consumed
 * @cnt: the counter of the refusal, or SROCE_CNT_NR for none
 *
 * As sroce_rcv_drop(), with a counter rather than a drop reason.
 *
 * Context: any.
 */
void sroce_rcv_refuse(struct sroce_dev *sdev, struct sk_buff *skb,
		      enum sroce_counter cnt)
{
	if (sroce_rcv_verify(sdev, skb) && cnt != SROCE_CNT_NR)
		sroce_stats_inc(sdev, cnt);
	kfree_skb(skb);
}

/**
 * sroce_rcv_purge() - drop every packet an engine's queue holds
 * @sdev: the device that received them
 * @q: the queue (a QP's responder or completer queue)
 *
 * The QP left the states that take them. Each packet is checked if it
 * was not yet and counted as dropped for the QP's state, so that one
 * purged is still in rcvd_pkts or icrc_err.
 *
 * Context: any; takes the queue's lock.
 */
void sroce_rcv_purge(struct sroce_dev *sdev, struct sk_buff_head *q)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(q)))
		sroce_rcv_drop(sdev, skb, SROCE_DROP_QP_STATE);
}

/* Does the packet come from the QP's peer to the QP's own address? */
static bool sroce_rcv_addr_ok(const struct sroce_qp_params *p,
			      struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	const struct sroce_av *av = &p->av;

	if (pkt->net == SROCE_PKT_IPV4)
		return av->network_type == RDMA_NETWORK_IPV4 &&
		       ip_hdr(skb)->saddr == av->daddr.in4.sin_addr.s_addr &&
		       ip_hdr(skb)->daddr == av->saddr.in4.sin_addr.s_addr;
	return av->network_type == RDMA_NETWORK_IPV6 &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->saddr,
			       &av->daddr.in6.sin6_addr) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr,
			       &av->saddr.in6.sin6_addr);
}

/* Which engine takes the packet, or why it is dropped. */
static int sroce_rcv_check(struct sroce_qp *qp, struct sk_buff *skb,
			   const struct sroce_pkt *pkt,
			   enum sroce_drop_reason *why)
{
	bool req = pkt->info->flags & SROCE_OPF_REQ;
	struct sroce_qp_params p;

	sroce_qp_params_get(qp, &p);
	*why = SROCE_DROP_QP_STATE;
	/* RC, UC and UD QPs each take their own transport's packets */
	if (sroce_opcode_transport(pkt->info) != sroce_qp_transport(qp))
		return -EINVAL;
	if (req && (p.state < IB_QPS_RTR || p.state > IB_QPS_SQE))
		return -EINVAL;
	if (!req && p.state != IB_QPS_RTS && p.state != IB_QPS_SQD)
		return -EINVAL;
	if (sroce_opcode_transport(pkt->info) == IB_OPCODE_UD) {
		/* IBA 10.2.5: a datagram must carry the QP's Q_Key */
		*why = SROCE_DROP_QKEY;
		if (sroce_deth_qkey(sroce_pkt_deth(skb, pkt)) != p.qkey)
			return -EINVAL;
		return req;
	}
	*why = SROCE_DROP_ADDR;
	if (!p.has_av || !sroce_rcv_addr_ok(&p, skb, pkt))
		return -EINVAL;
	return req;
}

/**
 * sroce_rcv_qp() - hand a validated packet to one QP
 * @sdev: the device that received it
 * @skb: the packet, parsed; consumed
 * @qpn: the QP it is for (the BTH DestQP, or a QP attached to the
 *	multicast group it was sent to)
 *
 * Context: any (softirq for packets from the wire).
 */
static void sroce_rcv_qp(struct sroce_dev *sdev, struct sk_buff *skb,
			 u32 qpn)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	enum sroce_drop_reason why = SROCE_DROP_NO_QP;
	struct sroce_qp *qp;
	int req;

	qp = sroce_qp_get(sdev, qpn);
	if (!qp)
		goto drop;
	req = sroce_rcv_check(qp, skb, pkt, &why);
	if (req < 0) {
		sroce_qp_put(qp);
		goto drop;
	}
	if (pkt->flags & SROCE_PKT_CE) {
		/*
		 * A CNP slows the peer down: only for a packet known to be
		 * the peer's, so a marked one's ICRC is not left for later.
		 */
		if (!sroce_rcv_verify(sdev, skb)) {
			sroce_qp_put(qp);
			kfree_skb(skb);
			return;
		}
		sroce_cnp_note_ce(qp);
	}
	if (req)
		sroce_resp_queue(qp, skb);
	else
		sroce_comp_queue(qp, skb);
	sroce_qp_put(qp);
	return;
drop:
	sroce_rcv_drop(sdev, skb, why);
}

/*
 * A datagram to the multicast QPN goes to every QP attached to the group
 * of its IP destination, each checking its own state and Q_Key as for a
 * unicast datagram. Consumes @skb.
 */
static void sroce_rcv_mcast(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	u32 qpns[SROCE_MAX_MCAST_QP_ATTACH];
	struct sk_buff *copy;
	union ib_gid mgid;
	unsigned int i, n;

	if (pkt->net == SROCE_PKT_IPV4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid.raw));

	n = sroce_mcast_members(&sdev->mcast, &mgid, qpns);
	if (!n) {
		sroce_rcv_drop(sdev, skb, SROCE_DROP_NO_QP);
		return;
	}
	/* once, before the clones share it */
	if (!sroce_rcv_verify(sdev, skb)) {
		kfree_skb(skb);
		return;
	}
	for (i = 0; i + 1 < n; i++) {
		copy = skb_clone(skb, GFP_ATOMIC);
		if (!copy) {
			sroce_rcv_count_drop(sdev, SROCE_DROP_NOMEM);
			continue;
		}
		/* the parsed description travels in the control block */
		sroce_rcv_qp(sdev, copy, qpns[i]);
	}
	sroce_rcv_qp(sdev, skb, qpns[n - 1]);
}

/**
 * sroce_rcv() - dispatch a validated packet to its QP
 * @sdev: the device that received it
 * @skb: the packet, skb->data at the BTH, parsed (sroce_skb_pkt());
 *	consumed
 *
 * A datagram to the multicast QPN goes to the QPs attached to its group.
 *
 * Context: any (softirq for packets from the wire).
 */
static void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);

	if (!pkt->info) {
		sroce_rcv_drop(sdev, skb, SROCE_DROP_NO_QP);
		return;
	}
	if (pkt->qpn == IB_MULTICAST_QPN &&
	    sroce_opcode_transport(pkt->info) == IB_OPCODE_UD) {
		sroce_rcv_mcast(sdev, skb);
		return;
	}
	sroce_rcv_qp(sdev, skb, pkt->qpn);
}

/*
 * A CNP (counted in cnp_rcvd already) for one of our connected QPs, of
 * the annex's length, with a good ICRC and from the QP's peer: the QP's
 * reaction point takes it. The caller still owns @skb.
 */
static void sroce_rcv_cnp(struct sroce_dev *sdev, struct sk_buff *skb,
			  bool built_here)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	enum sroce_drop_reason why;
	struct sroce_qp_params p;
	struct sroce_qp *qp;

	if (!sroce_pkt_cnp_ok(skb) ||
	    (!built_here && sroce_pkt_check_icrc(skb, &why)))
		return;
	qp = sroce_qp_get(sdev, pkt->qpn);
	if (!qp)
		return;
	sroce_qp_params_get(qp, &p);
	if (p.has_av && sroce_rcv_addr_ok(&p, skb, pkt))
		sroce_cnp_react(qp);
	sroce_qp_put(qp);
}

/**
 * sroce_rcv_skb() - validate, count and dispatch a packet for a device
 * @sdev: the device whose netdev received it (the caller holds a
 *	reference)
 * @skb: the packet, skb->data at its UDP header and its network header set
 * @built_here: a local delivery of this module's transmit path without an
 *	ICRC (net/sroce_xmit.c): every header is checked, the ICRC is not
 *
 * The receive callback net/sroce_net.c is given at module init: packets
 * from the UDP socket and the local deliveries of the transmit path come
 * through here.
 *
 * Context: any (softirq for packets from the wire).
 * Return: 0 when the packet was passed on (consumed), -EINVAL when it
 * was dropped (the caller still owns it).
 */
int sroce_rcv_skb(struct sroce_dev *sdev, struct sk_buff *skb,
		  bool built_here)
{
	enum sroce_drop_reason why;
	struct sroce_pkt *pkt;

	if (!pskb_may_pull(skb, sizeof(struct udphdr))) {
		sroce_rcv_count_drop(sdev, SROCE_DROP_FRAMING);
		return -EINVAL;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	pkt = sroce_skb_pkt(skb);
	if (sroce_pkt_parse_hdrs(skb, pkt, &why)) {
		sroce_rcv_count_drop(sdev, why);
		if (why == SROCE_DROP_CNP)
			sroce_rcv_cnp(sdev, skb, built_here);
		return -EINVAL;
	}
	if (built_here) {
		pkt->flags |= SROCE_PKT_LOCAL;
		sroce_rcv_count(sdev, skb);
		sroce_rcv(sdev, skb);
		return 0;
	}
	/* a payload's ICRC is for the engine that takes it (see above) */
	pkt->flags |= SROCE_PKT_ICRC_LATER;
	if ((!pkt->paylen || !READ_ONCE(sroce_rcv_icrc_later)) &&
	    !sroce_rcv_verify(sdev, skb))
		return -EINVAL;
	sroce_rcv(sdev, skb);
	return 0;
}
