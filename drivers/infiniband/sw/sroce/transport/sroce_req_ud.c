// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce UD requester: a SEND (with immediate) of a UD or GSI QP is one
 * UD_SEND_ONLY packet (IBA 9.8.2) to the address handle and QP its WQE
 * names, with a DETH carrying the Q_Key and the sending QP. Nothing is
 * acknowledged: the WQE completes once the packet is out, or with an
 * error before anything is sent: IB_WC_LOC_LEN_ERR for a message longer
 * than the port's MTU, IB_WC_LOC_QP_OP_ERR for an address handle that is
 * gone or belongs to another PD, IB_WC_LOC_PROT_ERR for a bad local key.
 * A packet the network cannot route is lost like any datagram
 * (send_err counts it); a full netdev queue is waited out as on RC.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "net/sroce_route.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_payload.h"
#include "transport/sroce_req_ud.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_opcode.h"

/**
 * sroce_ud_qkey() - the Q_Key a datagram carries
 * @wr_qkey: the Q_Key of the send WR
 * @qp_qkey: the sending QP's Q_Key
 *
 * IBA 10.2.5: a WR Q_Key with its most significant bit set (a
 * "privileged" Q_Key) is replaced by the QP's own.
 *
 * Context: any.
 * Return: the DETH Q_Key.
 */
u32 sroce_ud_qkey(u32 wr_qkey, u32 qp_qkey)
{
	return (wr_qkey & 0x80000000) ? qp_qkey : wr_qkey;
}

/* Build the packet of the WQE at req->cur_idx; NULL when memory is short. */
static struct sk_buff *sroce_req_ud_build(struct sroce_qp *qp,
					  const struct sroce_qp_params *p,
					  struct sroce_send_ctx *ctx,
					  const struct sroce_av *av, int *err)
{
	const struct sroce_send_wqe *wqe = &ctx->wqe;
	struct sroce_req_pkt pkt = {
		.opcode = wqe->opcode == IB_WR_SEND_WITH_IMM ?
			  IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE :
			  IB_OPCODE_UD_SEND_ONLY,
		.paylen = wqe->length,
		.first = true,
		.last = true,
	};
	const struct sroce_opcode_info *info = sroce_opcode_lookup(pkt.opcode);
	struct sroce_deth *deth;
	struct sk_buff *skb;

	*err = 0;
	skb = sroce_tx_alloc(to_sroce_dev(qp->ibqp.device), av,
			     wqe->wr.ud.remote_qpn, pkt.opcode, ctx->first_psn,
			     pkt.paylen, false,
			     wqe->send_flags & IB_SEND_SOLICITED);
	if (!skb)
		return NULL;
	deth = (void *)(skb->data + sroce_opcode_hdr_offset(info,
							    SROCE_HDR_DETH));
	sroce_deth_set_qkey(deth, sroce_ud_qkey(wqe->wr.ud.remote_qkey,
						p->qkey));
	sroce_deth_set_sqp(deth, qp->ibqp.qp_num);
	if (sroce_opcode_has_imm(info))
		sroce_immdt_set_imm((void *)(skb->data +
					     sroce_opcode_hdr_offset(info,
								     SROCE_HDR_IMMDT)),
				    (__force __be32)wqe->ex);
	if (pkt.paylen &&
	    sroce_req_gather(qp, ctx, &pkt, sroce_tx_payload(skb))) {
		kfree_skb(skb);
		*err = -EACCES;
		return NULL;
	}
	return skb;
}

/**
 * sroce_req_ud_send() - send the datagram of the WQE in progress
 * @qp: a UD or GSI QP
 * @p: its parameters
 *
 * Context: the requester's task.
 * Return: 1 when the WQE is done with (sent or failed), 0 to wait for a
 * netdev queue with room or for the rate limiter's gate (the task is
 * scheduled again), as the requester's task function returns.
 */
int sroce_req_ud_send(struct sroce_qp *qp, const struct sroce_qp_params *p)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	struct sroce_send_ctx *ctx = &req->ctx[req->cur_idx];
	struct sroce_sge_cursor cur = req->cur;
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct sroce_av av;
	struct sk_buff *skb;
	unsigned int len;
	int err;

	if (!sroce_rate_open(&qp->rate, SROCE_RATE_REQ))
		return 0;
	if (ctx->wqe.length > ctx->mtu) {
		status = IB_WC_LOC_LEN_ERR;
		goto settle;
	}
	if (sroce_ah_get_av(sdev, ctx->wqe.wr.ud.ah_num, qp->ibqp.pd, &av)) {
		status = IB_WC_LOC_QP_OP_ERR;
		goto settle;
	}
	av.traffic_class = sroce_cc_tclass(&sdev->cc, av.traffic_class);
	skb = sroce_req_ud_build(qp, p, ctx, &av, &err);
	if (!skb) {
		if (!err)
			return 1;	/* no memory: try again */
		status = IB_WC_LOC_PROT_ERR;
		goto settle;
	}
	len = skb->len;
	err = sroce_xmit(&av, sroce_route_lookup(&av), p->sport, skb);
	if (err == -ENOBUFS) {
		/* The netdev's queue is full: send it again later. */
		sroce_stats_inc(sdev, SROCE_CNT_SEND_ERR);
		req->cur = cur;
		sroce_task_schedule_after(&req->task, SROCE_TX_BACKOFF);
		return 0;
	}
	sroce_rate_charge(&qp->rate, SROCE_RATE_REQ, len);
	if (err) {
		sroce_stats_inc(sdev, SROCE_CNT_SEND_ERR);
	} else {
		sroce_stats_inc(sdev, SROCE_CNT_SENT_PKTS);
		sroce_stats_add(sdev, SROCE_CNT_SENT_BYTES, len);
	}
settle:
	if (status != IB_WC_SUCCESS)
		sroce_req_halt(qp);
	sroce_req_end_msg(req);
	sroce_req_settle(qp, ctx, status);
	return 1;
}
