// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce UD responder: a datagram (UD_SEND_ONLY, with immediate or not)
 * the receive path admitted (its Q_Key is the QP's) takes the next
 * receive WQE, RQ or SRQ. The WQE gets the 40-byte GRH first, as RoCEv2
 * receivers expect it: for IPv6 the packet's IPv6 header, for IPv4 20
 * zero bytes and then the IPv4 header (RoCEv2 annex A17.4.5.1); then the
 * payload. The completion carries the sender's QP (DETH), IB_WC_GRH and
 * the network header type, and byte_len counts the GRH.
 *
 * Nothing is acknowledged: a datagram with no receive WQE posted, or
 * longer than the WQE, is dropped and counted (dropped_ud_msg), and the
 * WQE waits for the next one. A bad local key in the WQE completes it
 * with IB_WC_LOC_PROT_ERR and takes the QP to ERR, as a receive
 * completed in error does (IBA 10.3.1).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "core/sroce_stats.h"
#include "mem/sroce_copy.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_ud.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

/**
 * sroce_ud_grh() - the GRH of a received datagram
 * @skb: the packet, its network header set
 * @net: SROCE_PKT_IPV4 or SROCE_PKT_IPV6
 * @grh: SROCE_GRH_LEN bytes, filled
 *
 * Context: any.
 */
void sroce_ud_grh(const struct sk_buff *skb, u8 net, u8 *grh)
{
	memset(grh, 0, SROCE_GRH_LEN);
	if (net == SROCE_PKT_IPV4)
		memcpy(grh + SROCE_GRH_LEN - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
}

/* Scatter the GRH and the payload into the WQE taken; 0 or an errno. */
static int sroce_resp_ud_scatter(struct sroce_qp *qp, struct sk_buff *skb,
				 const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	u8 grh[SROCE_GRH_LEN];
	int err;

	sroce_ud_grh(skb, pkt->net, grh);
	err = sroce_copy_data(sdev, qp->ibqp.pd, &resp->kc, resp->rwqe.sge,
			      resp->rwqe.num_sge, &resp->cur, grh,
			      SROCE_GRH_LEN, SROCE_COPY_TO_MR);
	if (!err && pkt->paylen)
		err = sroce_copy_skb(sdev, qp->ibqp.pd, &resp->kc,
				     resp->rwqe.sge, resp->rwqe.num_sge,
				     &resp->cur, skb, pkt->hdr_len,
				     pkt->paylen);
	return err;
}

/**
 * sroce_resp_ud_request() - receive a datagram of a UD or GSI QP
 * @qp: the QP
 * @p: its parameters
 * @skb: the packet (its Q_Key checked)
 * @pkt: its parsed form
 *
 * Context: the responder's task.
 */
void sroce_resp_ud_request(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.src_qp = sroce_deth_sqp(sroce_pkt_deth(skb, pkt)),
		.port_num = SROCE_PORT_NUM,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE,
		.network_hdr_type = pkt->net == SROCE_PKT_IPV4 ?
				    RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6,
	};
	int err;

	err = sroce_resp_take_rwqe(qp);
	if (err == -ENOENT) {
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_DROPPED_UD_MSG);
		return;
	}
	if (err) {
		sroce_qp_error(qp);	/* an invalid receive WQE */
		return;
	}
	/*
	 * A datagram longer than the WQE is dropped and the WQE kept (IBA
	 * 9.9.3, class D): anyone who knows the Q_Key may send one, and
	 * for QP1 everyone does, so it must not take the QP down.
	 */
	if (resp->rwqe.length < SROCE_GRH_LEN + pkt->paylen) {
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_DROPPED_UD_MSG);
		return;
	}
	wc.wr_id = resp->rwqe.wr_id;
	err = sroce_resp_ud_scatter(qp, skb, pkt);
	if (err) {
		wc.status = err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
					     IB_WC_LOC_PROT_ERR;
	} else {
		wc.byte_len = SROCE_GRH_LEN + pkt->paylen;
		if (sroce_opcode_has_imm(pkt->info)) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = sroce_immdt_imm(sroce_pkt_immdt(skb, pkt));
		}
	}
	sroce_key_cache_flush(&resp->kc);
	if (sroce_resp_release_rwqe(qp))
		sroce_resp_post_wc(qp, &wc, pkt->flags & SROCE_PKT_SOLICITED);
	if (wc.status != IB_WC_SUCCESS)
		sroce_qp_error(qp);
}
