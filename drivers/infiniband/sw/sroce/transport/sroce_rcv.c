// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce received packet dispatch: a packet sroce_pkt_parse() accepted is
 * matched to its QP by the BTH DestQP, checked against the QP's type (the
 * opcode's transport must be the QP's), state and peer address, and
 * queued for the QP's responder (requests) or completer (ACKs and
 * responses). Drops are counted.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>

#include "sroce_comp.h"
#include "sroce_dev.h"
#include "sroce_mcast.h"
#include "sroce_pkt.h"
#include "sroce_qp.h"
#include "sroce_rcv.h"
#include "sroce_resp.h"

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
void sroce_rcv_qp(struct sroce_dev *sdev, struct sk_buff *skb, u32 qpn)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	enum sroce_drop_reason why = SROCE_DROP_NO_QP;
	struct sroce_qp *qp;
	int req;

	qp = sroce_qp_get(sdev, qpn);
	if (!qp)
		goto drop;
	req = sroce_rcv_check(qp, skb, pkt, &why);
	if (req < 0 || skb_linearize(skb)) {
		if (req >= 0)
			why = SROCE_DROP_NOMEM;
		sroce_qp_put(qp);
		goto drop;
	}
	if (req)
		sroce_resp_queue(qp, skb);
	else
		sroce_comp_queue(qp, skb);
	sroce_qp_put(qp);
	return;
drop:
	sroce_pkt_count_drop(sdev, why);
	kfree_skb(skb);
}

/**
 * sroce_rcv() - dispatch a validated packet to its QP
 * @sdev: the device that received it
 * @skb: the packet, skb->data at the BTH, parsed (sroce_skb_pkt());
 *	consumed
 *
 * A datagram to the multicast QPN goes to the QPs attached to its group
 * (sroce_mcast.c).
 *
 * Context: any (softirq for packets from the wire).
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);

	if (!pkt->info) {
		sroce_pkt_count_drop(sdev, SROCE_DROP_NO_QP);
		kfree_skb(skb);
		return;
	}
	if (pkt->qpn == IB_MULTICAST_QPN &&
	    sroce_opcode_transport(pkt->info) == IB_OPCODE_UD) {
		sroce_mcast_rcv(sdev, skb);
		return;
	}
	sroce_rcv_qp(sdev, skb, pkt->qpn);
}
