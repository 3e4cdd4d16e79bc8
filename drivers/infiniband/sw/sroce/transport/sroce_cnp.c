// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion notification (RoCEv2 annex A17.9): the two ends of DCQCN.
 *
 * Notification point: a packet of a connected QP that arrives with CE in
 * its IP header (a queue on the way marked it) makes this side send a
 * CNP to the QP's peer, naming the peer's QP, at most one per QP every
 * np_cnp_interval_us. Reaction point: a CNP that arrives for one of our
 * connected QPs, from that QP's peer, cuts the QP's rate
 * (sroce_dcqcn.c). Both are on by default, as on RoCE NICs, and each can
 * be turned off per device (core/sroce_cc.c). A CNP for a QP that cannot
 * react (switched off, or a UD QP) is only counted.
 *
 * UD QPs neither send nor take CNPs: their packets go to many peers and
 * one rate per QP would slow every flow for one congested path.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/skbuff.h>

#include "core/sroce_cc.h"
#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "net/sroce_xmit.h"
#include "transport/sroce_cnp.h"
#include "transport/sroce_qp.h"
#include "wire/sroce_pkt.h"

static bool sroce_cnp_connected(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

/*
 * The first caller of an interval wins it: several CPUs may receive
 * marked packets of one QP at once.
 */
static bool sroce_cnp_due(struct sroce_qp *qp, u64 interval_ns)
{
	u64 now = ktime_get_ns();
	s64 last = atomic64_read(&qp->cnp_last);

	if (last && now - last < interval_ns)
		return false;
	return atomic64_cmpxchg(&qp->cnp_last, last, now) == last;
}

/**
 * sroce_cnp_note_ce() - a packet of @qp arrived marked CE
 * @qp: the QP it was for (connected, its peer checked by the caller)
 *
 * Sends the peer a CNP unless one went out within np_cnp_interval_us.
 *
 * Context: any (the receive path).
 */
void sroce_cnp_note_ce(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_qp_params p;
	struct sk_buff *skb;

	sroce_stats_inc(sdev, SROCE_CNT_ECN_MARKED);
	if (!sroce_cc_get(&sdev->cc, SROCE_CC_NP) || !sroce_cnp_connected(qp))
		return;
	if (!sroce_cnp_due(qp, (u64)sroce_cc_get(&sdev->cc,
						 SROCE_CC_CNP_INTERVAL) *
			   NSEC_PER_USEC))
		return;
	sroce_qp_params_get(qp, &p);
	if (!p.has_av)
		return;
	skb = sroce_xmit_alloc(sdev, &p.av, SROCE_CNP_LEN, GFP_ATOMIC);
	if (!skb)
		return;
	sroce_cnp_fill(skb->data, p.dest_qpn);
	if (!sroce_qp_pkt_send(qp, &p, skb))
		sroce_stats_inc(sdev, SROCE_CNT_CNP_SENT);
}

/**
 * sroce_cnp_react() - a CNP from @qp's peer arrived for @qp
 * @qp: the QP
 *
 * Context: any (the receive path).
 */
void sroce_cnp_react(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);

	if (!sroce_cc_get(&sdev->cc, SROCE_CC_RP) || !sroce_cnp_connected(qp))
		return;
	sroce_stats_inc(sdev, SROCE_CNT_CNP_HANDLED);
	if (sroce_dcqcn_cnp(&qp->cc))
		sroce_stats_inc(sdev, SROCE_CNT_RP_DECREASES);
}
