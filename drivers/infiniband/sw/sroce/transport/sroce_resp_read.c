// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC responder: RDMA READ responses.
 *
 * A new READ gets a responder resource and its response goes out
 * SROCE_RESP_READ_BUDGET packets per run of the responder's task, the
 * resource holding the position; the requests behind it wait in the
 * queue, in order. A duplicate READ is served again from its resource.
 *
 * Go-back-N on the responder's side. A requester that lost a response
 * packet asks again for the READ from the missing PSN and then for every
 * request after it (IBA 9.7.5.1.3). Everything the responder still sends
 * past that PSN is dropped by the requester, and so is the answer to any
 * request queued in front of the duplicate that the requester is going
 * to ask for again anyway. Serving them anyway does not only waste the
 * link: the requester may see them after it has made progress on the
 * retransmission, take them for a new gap and ask again, and each round
 * queues another full set of responses behind the last. So a duplicate
 * READ is noticed as it is queued (sroce_resp_mark_queued()), and before
 * the next packet goes out the responder (sroce_resp_rewind()) stops the
 * response in progress if it lies past the duplicate's PSN and marks the
 * READs queued in front of the duplicate, for PSNs past it, not to be
 * served: they get their resource, so the duplicates that follow find
 * it, but no response.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"
#include "net/sroce_train.h"
#include "net/sroce_tx.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_read.h"
#include "transport/sroce_resp_res.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_pkt.h"
#include "wire/sroce_psn.h"

/*
 * Build one READ response packet: @n bytes from @mr at @va (no MR when
 * 0), lent when sroce_tx_lends() says so and the MR's pages may be (see
 * sroce_mr_lend()), copied otherwise; a packet that spans PSNs (@span)
 * is only ever lent. Return: the packet, or an ERR_PTR (-ENOMEM;
 * -EFAULT when the MR could not be read; -EMSGSIZE for a spanning packet
 * that could not be lent).
 */
static struct sk_buff *sroce_resp_read_pkt(struct sroce_qp *qp,
					   const struct sroce_qp_params *p,
					   struct sroce_mr *mr, u64 va, u32 n,
					   u8 opcode, u32 psn, bool span)
{
	struct sroce_mr_frag frags[SROCE_TX_LEND_FRAGS];
	struct sroce_aeth *aeth;
	struct sk_buff *skb;
	int lent = 0;

	if (span || sroce_tx_lends(n, sroce_route_local(&qp->route))) {
		lent = sroce_mr_lend(mr, va, n, frags, ARRAY_SIZE(frags));
		if (lent < 0)
			return ERR_PTR(-EFAULT);
		if (span && !lent)
			return ERR_PTR(-EMSGSIZE);
	}
	skb = sroce_qp_pkt_alloc(qp, p, opcode, psn, lent ? 0 : n, false,
				 false);
	if (!skb) {
		sroce_mr_frags_put(frags, lent);
		return ERR_PTR(-ENOMEM);
	}
	if (opcode != IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE) {
		aeth = (void *)(skb->data + SROCE_BTH_LEN);
		sroce_aeth_set_type(aeth, SROCE_AETH_ACK);
		sroce_aeth_set_code(aeth, SROCE_AETH_CREDITS_INVALID);
		sroce_aeth_set_msn(aeth, qp->resp.msn);
	}
	if (lent) {
		if (sroce_tx_lend(skb, frags, lent, n)) {
			kfree_skb(skb);
			return ERR_PTR(-ENOMEM);
		}
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_SENT_LENT);
	} else if (n && sroce_mr_copy(mr, va, sroce_tx_payload(skb), n,
				      SROCE_COPY_FROM_MR)) {
		kfree_skb(skb);
		return ERR_PTR(-EFAULT);
	}
	return skb;
}

/* Add a response packet of @k PSNs to @t. */
static void sroce_resp_read_add(struct sroce_dev *sdev, struct sroce_train *t,
				struct sk_buff *skb, u32 k)
{
	sroce_train_add(t, skb);
	if (k > 1) {
		t->local_only = true;
		sroce_stats_inc(sdev, SROCE_CNT_SENT_SPAN);
	}
}

static u8 sroce_read_resp_opcode(bool first, bool last)
{
	if (first)
		return last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
			      IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	return last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
		      IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
}

/*
 * Build the next packets of the READ response being served into @t, from
 * @mr (NULL when nothing is left to read): at most SROCE_RESP_READ_BUDGET
 * of them, each spanning as many PSNs as sroce_tx_span_max() allows, as
 * long as the rate limiter's gate lets them through.
 * Return: 0, or -EFAULT when @mr could not be read.
 */
static int sroce_resp_read_fill(struct sroce_qp *qp,
				const struct sroce_qp_params *p,
				struct sroce_mr *mr, struct sroce_train *t)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp_res *res = qp->resp.serving;
	u32 mtu = ib_mtu_enum_to_int(p->path_mtu);
	u32 off = sroce_resp_read_offset(0, res->next, mtu);
	u32 left = res->read.len - min(off, res->read.len);
	u32 budget = SROCE_RESP_READ_BUDGET, n, k, span = 1;
	struct sk_buff *skb;
	u8 opcode;

	if (left)
		span = sroce_tx_span_max(mtu, sroce_route_local(&qp->route));
	while (budget && res->next != res->npkts) {
		k = min(span, res->npkts - res->next);
		n = min(left, k * mtu);
		opcode = sroce_read_resp_opcode(res->next == res->start,
						res->next + k == res->npkts);
		if (sroce_train_full(t, sroce_tx_len(opcode, n)) ||
		    !sroce_rate_open(&qp->rate, SROCE_RATE_RESP))
			break;
		skb = sroce_resp_read_pkt(qp, p, mr, res->read.va + off, n,
					  opcode,
					  sroce_psn_add(res->first_psn, res->next),
					  k > 1);
		if (PTR_ERR_OR_ZERO(skb) == -EMSGSIZE) {
			span = 1;	/* not lent: one PSN a packet */
			continue;
		}
		if (PTR_ERR_OR_ZERO(skb) == -EFAULT)
			return -EFAULT;
		budget--;
		sroce_rate_charge(&qp->rate, SROCE_RATE_RESP,
				  sroce_tx_len(opcode, n));
		/* no memory: the packet is lost, for the requester to ask again */
		if (!IS_ERR(skb))
			sroce_resp_read_add(sdev, t, skb, k);
		res->next += k;
		off += n;
		left -= n;
	}
	return 0;
}

/* Start serving @res's READ response at its response packet @start. */
static void sroce_resp_serve_start(struct sroce_resp *resp,
				   struct sroce_resp_res *res, u32 start)
{
	res->start = start;
	res->next = start;
	resp->serving = res;
}

/**
 * sroce_resp_serve() - send the next packets of the READ response being
 *	served
 * @qp: the QP; &sroce_resp.serving is set
 * @p: its parameters
 *
 * At most SROCE_RESP_READ_BUDGET packets, in one train; for a device of
 * this host a packet may carry several response packets' payloads
 * (sroce_tx_span_max(), read by sroce_comp_read_span()). The R_Key is
 * looked up again for what is left, so an MR invalidated or deregistered
 * meanwhile ends the response with a remote access error NAK. A train a full queue on the way out
 * refused is sent again after SROCE_TX_BACKOFF; one the network refused
 * for another reason is lost like any other and left to the requester's
 * retry.
 *
 * A QP whose rate limiter's gate is closed sends nothing and does not
 * look the R_Key up: the gate's timer schedules the responder again.
 *
 * Context: the responder's task.
 * Return: the packets built, at least 1: the responder's task counts the
 * call as that many against its budget, so that it yields its CPU every
 * SROCE_TASK_BUDGET packets and not every SROCE_TASK_BUDGET trains; 0
 * when the gate is closed.
 */
unsigned int sroce_resp_serve(struct sroce_qp *qp,
			      const struct sroce_qp_params *p)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	u32 mtu = ib_mtu_enum_to_int(p->path_mtu);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res = resp->serving;
	u32 off = sroce_resp_read_offset(0, res->next, mtu);
	u32 left = res->read.len - min(off, res->read.len);
	u32 mark, start = res->next;
	struct sroce_mr *mr = NULL;
	struct sroce_train train;
	unsigned int built;
	int err = 0;

	if (!sroce_rate_open(&qp->rate, SROCE_RATE_RESP))
		return 0;
	/*
	 * Requests that arrived before this chunk arrived before the last
	 * packet of the response went out. Taken before any packet is sent,
	 * so that a request the peer sends on seeing the response (it may
	 * be queued while this runs) is never counted before it.
	 */
	mark = resp->arrivals + skb_queue_len_lockless(&resp->rxq);

	if (left) {
		mr = sroce_rkey_get(sdev, res->read.rkey, qp->ibqp.pd,
				    qp->ibqp.qp_num, res->read.va + off, left,
				    IB_ACCESS_REMOTE_READ, &err);
		if (!mr)
			err = -EFAULT;
	}
	sroce_train_init(&train);
	if (!err)
		err = sroce_resp_read_fill(qp, p, mr, &train);
	built = max(1U, train.n);
	if (train.n && sroce_qp_train_send(qp, p, &train) == -ENOBUFS &&
	    !err) {
		/* a full queue on the way out: these packets again later */
		res->next = start;
		sroce_task_schedule_after(&resp->task, SROCE_TX_BACKOFF);
	}
	if (mr)
		sroce_mr_put(mr);
	if (err) {
		resp->serving = NULL;
		sroce_resp_send_ack(qp, p, SROCE_AETH_NAK,
				    SROCE_NAK_REM_ACCESS_ERR,
				    sroce_psn_add(res->first_psn, res->next));
		sroce_qp_error(qp);
		return built;
	}
	if (res->next < res->npkts)
		return built;
	resp->serving = NULL;
	if (!res->answered) {
		res->answered = true;
		res->answered_mark = mark;
	}
	return built;
}

/**
 * sroce_resp_read() - execute a new RDMA READ request
 * @qp: the QP
 * @p: its parameters
 * @skb: the request, at the ePSN
 * @pkt: its parsed description
 * @npkts: set to the PSNs the READ uses
 *
 * Checks the access, gives the READ a resource and starts its response,
 * unless the requester has asked again for something before it (the
 * packet is marked SROCE_RESP_MARK_NO_SERVE): then the resource is only
 * kept for the duplicate that is on its way.
 *
 * Context: the responder's task.
 * Return: SROCE_RESP_OK or the NAK to send.
 */
enum sroce_resp_result
sroce_resp_read(struct sroce_qp *qp, const struct sroce_qp_params *p,
		struct sk_buff *skb, const struct sroce_pkt *pkt, u32 *npkts)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_reth *reth = sroce_pkt_reth(skb, pkt);
	u32 len = sroce_reth_len(reth), rkey = sroce_reth_rkey(reth);
	u64 va = sroce_reth_va(reth);
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	int err = 0;

	*npkts = sroce_resp_read_npkts(len, ib_mtu_enum_to_int(p->path_mtu));
	if (!(p->access & IB_ACCESS_REMOTE_READ) || len > SROCE_MAX_MSG_SIZE)
		return SROCE_RESP_NAK_ACCESS;
	if (len) {
		mr = sroce_rkey_get(sdev, rkey, qp->ibqp.pd, qp->ibqp.qp_num,
				    va, len, IB_ACCESS_REMOTE_READ, &err);
		if (!mr)
			return SROCE_RESP_NAK_ACCESS;
		sroce_mr_put(mr);
	}
	res = sroce_resp_res_take(qp, p, pkt, *npkts);
	if (!res)
		return SROCE_RESP_NAK_INVALID;
	res->read.va = va;
	res->read.rkey = rkey;
	res->read.len = len;
	sroce_stats_inc(sdev, SROCE_CNT_RDMA_RECVS);
	if (!(pkt->mark & SROCE_RESP_MARK_NO_SERVE))
		sroce_resp_serve_start(&qp->resp, res, 0);
	return SROCE_RESP_OK;
}

/**
 * sroce_resp_dup_read() - answer a duplicate RDMA READ request
 * @qp: the QP
 * @p: its parameters
 * @skb: the request, before the ePSN
 * @pkt: its parsed description
 *
 * Served again from its resource, from the response packet its PSN
 * names, if its RETH asks for the rest of the original READ from there
 * (IBA 9.7.5.1.3), and unless an earlier duplicate is behind it
 * (SROCE_RESP_MARK_NO_SERVE). Anything else has no resource (it
 * retired) or does not match it, and is dropped.
 *
 * Context: the responder's task.
 */
void sroce_resp_dup_read(struct sroce_qp *qp, const struct sroce_qp_params *p,
			 struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_reth *reth = sroce_pkt_reth(skb, pkt);
	u32 mtu = ib_mtu_enum_to_int(p->path_mtu);
	struct sroce_resp_res *res;
	u32 off;

	if (pkt->mark & SROCE_RESP_MARK_NO_SERVE)
		return;
	res = sroce_resp_res_find(&qp->resp.res, pkt->psn);
	if (!res || res->opcode != IB_OPCODE_RC_RDMA_READ_REQUEST)
		return;
	off = sroce_resp_read_offset(res->first_psn, pkt->psn, mtu);
	if (sroce_reth_rkey(reth) != res->read.rkey ||
	    sroce_reth_va(reth) != res->read.va + off ||
	    (u64)sroce_reth_len(reth) + off != res->read.len)
		return;
	sroce_resp_serve_start(&qp->resp, res, sroce_psn(pkt->psn -
							 res->first_psn));
}

/**
 * sroce_resp_mark_queued() - note a request as it is queued
 * @resp: the responder
 * @pkt: the request's parsed description, about to join &sroce_resp.rxq
 *
 * A READ request before the ePSN is a duplicate: the requester is
 * probably going back to its PSN. The ePSN is read without the task's
 * exclusion; it only moves forward, so a request found before it is a
 * duplicate, and one that is missed is noticed when it is executed.
 *
 * Context: any; the caller holds &sroce_resp.rxq.lock.
 */
void sroce_resp_mark_queued(struct sroce_resp *resp, struct sroce_pkt *pkt)
{
	lockdep_assert_held(&resp->rxq.lock);
	pkt->mark = 0;
	if (pkt->opcode != IB_OPCODE_RC_RDMA_READ_REQUEST ||
	    sroce_resp_psn_class(pkt->psn, READ_ONCE(resp->psn)) !=
	    SROCE_PSN_DUPLICATE)
		return;
	pkt->mark = SROCE_RESP_MARK_DUP_READ;
	if (!resp->rewind || sroce_psn_before(pkt->psn, resp->rewind_psn))
		resp->rewind_psn = pkt->psn;
	resp->rewind = true;
}

static bool sroce_resp_is_dup_read(struct sk_buff *skb, u32 psn)
{
	const struct sroce_pkt *pkt = sroce_skb_pkt(skb);

	return (pkt->mark & SROCE_RESP_MARK_DUP_READ) && pkt->psn == psn;
}

/*
 * Mark the READ requests queued in front of the duplicate of @psn, for
 * PSNs past it, not to be served. Returns false, marking nothing, if the
 * duplicate has left the queue already: the task took it between its
 * last look at the flag and the dequeue, and is serving it.
 */
static bool sroce_resp_mark_superseded(struct sroce_resp *resp, u32 psn)
{
	struct sroce_pkt *pkt;
	struct sk_buff *skb;
	bool queued = false;

	lockdep_assert_held(&resp->rxq.lock);
	skb_queue_walk(&resp->rxq, skb) {
		queued = sroce_resp_is_dup_read(skb, psn);
		if (queued)
			break;
	}
	if (!queued)
		return false;
	skb_queue_walk(&resp->rxq, skb) {
		if (sroce_resp_is_dup_read(skb, psn))
			break;
		pkt = sroce_skb_pkt(skb);
		if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST &&
		    sroce_psn_after(pkt->psn, psn))
			pkt->mark |= SROCE_RESP_MARK_NO_SERVE;
	}
	return true;
}

/**
 * sroce_resp_rewind() - act on a duplicate READ that was queued
 * @qp: the QP
 *
 * If a duplicate READ joined the queue since the last call, is still in
 * it and its resource is still held, the response in progress stops
 * unless it is still before the duplicate's PSN, and the READs queued in
 * front of the duplicate for later PSNs will not be served (see the top
 * of this file).
 *
 * Context: the responder's task.
 */
void sroce_resp_rewind(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;
	unsigned long flags;
	bool act;
	u32 psn;

	spin_lock_irqsave(&resp->rxq.lock, flags);
	act = resp->rewind;
	psn = resp->rewind_psn;
	resp->rewind = false;
	act = act && sroce_resp_res_find(&resp->res, psn) &&
	      sroce_resp_mark_superseded(resp, psn);
	spin_unlock_irqrestore(&resp->rxq.lock, flags);

	res = resp->serving;
	if (act && res &&
	    !sroce_psn_after(psn, sroce_psn_add(res->first_psn, res->next))) {
		resp->serving = NULL;
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_READ_ABANDONED);
	}
}
