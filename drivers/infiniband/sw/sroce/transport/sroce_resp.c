// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC responder: the receive side of a connected QP. UC requests
 * take their own path (sroce_resp_uc.c) into the same SEND and WRITE
 * execution.
 *
 * Every request packet first meets the PSN check against the expected
 * PSN (ePSN, sroce_resp_psn_class()). The expected one is executed; a
 * duplicate is answered and never executed twice: a SEND or WRITE that
 * asks for an ACK is ACKed again with the PSN before the ePSN and the
 * current MSN (which also covers packets whose ACK was coalesced), a READ is served again
 * from its responder resource (from the packet the duplicate's PSN
 * names, IBA 9.7.5.1.3, its R_Key checked again), an atomic is answered
 * with the original value its resource saved. One from the future gets a
 * single PSN sequence error NAK and is dropped, like everything after it
 * until the ePSN arrives.
 *
 * Execution: a SEND takes the next receive WQE (RQ or SRQ; RNR NAK when
 * there is none) at its first packet and scatters each packet into it
 * through the shared SGE cursor, resuming where the previous packet of
 * the message stopped; more payload than the WQE holds is an invalid
 * request, never a truncation. An RDMA WRITE resolves its RETH rkey at
 * the first packet and copies every packet to the address it names; with
 * immediate, its last packet also consumes a receive WQE, for the
 * immediate and the completion only. An RDMA READ or atomic takes a
 * responder resource (at most max_dest_rd_atomic; one too many is an
 * invalid request NAK, see sroce_resp_res.c for when resources retire);
 * READ responses are sroce_resp_read.c's. An ACK goes out for every
 * packet that asks for one; the others are counted as deferred
 * (ack_deferred). A SEND or WRITE packet handed over by this host's own
 * transmit path may span several PSNs (sroce_resp_span()): it is checked,
 * executed and acknowledged as one packet that uses them all.
 *
 * Receive completions are posted with no queue lock held, so that a
 * completion handler may post receives to the same QP. When the QP goes
 * to ERR, a receive WQE a SEND had taken is flushed first: an RQ WQE is
 * still at the head of the RQ, which is flushed in order; an SRQ WQE is
 * completed with IB_WC_WR_FLUSH_ERR by the responder, which then raises
 * IB_EVENT_QP_LAST_WQE_REACHED. A QP reset or destroyed flushes a taken
 * SRQ WQE the same way, so that the consumer gets it back.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"
#include "net/sroce_tx.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_srq.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_rcv.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_read.h"
#include "transport/sroce_resp_res.h"
#include "transport/sroce_resp_uc.h"
#include "transport/sroce_resp_ud.h"
#include "transport/sroce_wq.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_pkt.h"

/**
 * sroce_resp_send_ack() - send an ACKNOWLEDGE packet
 * @qp: the QP
 * @p: its parameters
 * @type: ACK, RNR NAK or NAK
 * @code: the AETH syndrome's code (credits, RNR timer or NAK code)
 * @psn: the PSN it is about
 *
 * The AETH carries the current MSN.
 *
 * Context: the responder's task.
 */
void sroce_resp_send_ack(struct sroce_qp *qp, const struct sroce_qp_params *p,
			 enum sroce_aeth_type type, u8 code, u32 psn)
{
	struct sroce_aeth *aeth;
	struct sk_buff *skb;

	skb = sroce_qp_pkt_alloc(qp, p, IB_OPCODE_RC_ACKNOWLEDGE, psn, 0,
				 false, false);
	if (!skb)
		return;
	aeth = (void *)(skb->data + SROCE_BTH_LEN);
	sroce_aeth_set_type(aeth, type);
	sroce_aeth_set_code(aeth, code);
	sroce_aeth_set_msn(aeth, qp->resp.msn);
	sroce_qp_pkt_send(qp, p, skb);
}

/*
 * An invalid SRQ WQE has already left its ring (sroce_srq_take()): it
 * completes in error here, or its wr_id would never come back. An
 * invalid RQ WQE stays at the head of its RQ and is flushed from there.
 */
static void sroce_resp_bad_srq_wqe(struct sroce_qp *qp)
{
	struct ib_wc wc = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = IB_WC_LOC_QP_OP_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.port_num = SROCE_PORT_NUM,
	};

	sroce_resp_post_wc(qp, &wc, false);
}

/**
 * sroce_resp_take_rwqe() - take the next receive WQE (RQ or SRQ)
 * @qp: the QP
 *
 * Keeps the one already taken, if any; a new one gets a fresh cursor.
 *
 * Context: the responder's task; no queue lock of the QP held.
 * Return: 0, -ENOENT when none is posted, -EINVAL if it is invalid (an
 * SRQ WQE then completes with IB_WC_LOC_QP_OP_ERR).
 */
int sroce_resp_take_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;
	int err;

	if (resp->has_rwqe)
		return 0;
	if (qp->srq) {
		err = sroce_srq_take(qp->srq, &resp->rwqe);
		if (err == -EINVAL)
			sroce_resp_bad_srq_wqe(qp);
	} else {
		spin_lock_irqsave(&qp->rq.lock, flags);
		if (sroce_queue_empty(&qp->rq.queue))
			err = -ENOENT;
		else
			err = sroce_wqe_check_recv(sroce_queue_consumer_slot(&qp->rq.queue),
						   qp->rq.max_sge, &resp->rwqe);
		resp->rq_idx = qp->rq.queue.cons;
		spin_unlock_irqrestore(&qp->rq.lock, flags);
	}
	if (err)
		return err;
	resp->has_rwqe = true;
	sroce_cursor_init(&resp->cur, resp->rwqe.length);
	return 0;
}

/**
 * sroce_resp_release_rwqe() - give up the receive WQE taken
 * @qp: the QP
 *
 * An RQ WQE leaves its ring here, unless a flush of the RQ (the QP went
 * to ERR meanwhile) has already completed it. Takes no lock the caller
 * may hold across the completion that follows.
 *
 * Context: the responder's task.
 * Return: true if the caller must complete it, false if it must not
 * complete (again).
 */
bool sroce_resp_release_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;
	bool ours = true;

	if (!resp->has_rwqe)
		return false;
	resp->has_rwqe = false;
	sroce_key_cache_flush(&resp->kc);
	if (qp->srq)
		return true;
	spin_lock_irqsave(&qp->rq.lock, flags);
	ours = !sroce_queue_empty(&qp->rq.queue) &&
	       qp->rq.queue.cons == resp->rq_idx;
	if (ours)
		sroce_queue_advance_consumer(&qp->rq.queue);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	return ours;
}

/**
 * sroce_resp_post_wc() - post a receive completion
 * @qp: the QP
 * @wc: the completion
 * @solicited: the message asked for a solicited event
 *
 * A CQ overflow is a catastrophic error of the QP.
 *
 * Context: the responder's task; no queue lock of the QP held.
 */
void sroce_resp_post_wc(struct sroce_qp *qp, const struct ib_wc *wc,
			bool solicited)
{
	if (sroce_cq_post(qp->rcq, wc, solicited))
		sroce_qp_fatal(qp);
}

/* Complete the receive WQE taken; the RQ slot is released here. */
static void sroce_resp_recv_done(struct sroce_qp *qp,
				 const struct sroce_qp_params *p,
				 struct sk_buff *skb,
				 const struct sroce_pkt *pkt,
				 enum ib_wc_status status)
{
	struct sroce_resp *resp = &qp->resp;
	struct ib_wc wc = {
		.wr_id = resp->rwqe.wr_id,
		.status = status,
		.qp = &qp->ibqp,
		.src_qp = p->dest_qpn,
		.port_num = SROCE_PORT_NUM,
	};

	if (status == IB_WC_SUCCESS) {
		wc.opcode = (pkt->info->flags & SROCE_OPF_WRITE) ?
			    IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
		wc.byte_len = (pkt->info->flags & SROCE_OPF_WRITE) ?
			      resp->wlen :
			      resp->rwqe.length - resp->cur.resid;
		if (sroce_opcode_has_imm(pkt->info)) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = sroce_immdt_imm(sroce_pkt_immdt(skb, pkt));
		} else if (sroce_opcode_has_inv(pkt->info)) {
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = sroce_ieth_rkey(sroce_pkt_ieth(skb, pkt));
		}
	}
	if (sroce_resp_release_rwqe(qp))
		sroce_resp_post_wc(qp, &wc, pkt->flags & SROCE_PKT_SOLICITED);
}

/*
 * The QP left the receiving states with a receive WQE taken: an SRQ WQE
 * is out of its ring, so it completes here with IB_WC_WR_FLUSH_ERR; an
 * RQ WQE is still at the head of the RQ and is flushed (or, in RESET,
 * dropped) from there, ahead of the WQEs behind it.
 */
static void sroce_resp_flush_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct ib_wc wc = {
		.wr_id = resp->rwqe.wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.port_num = SROCE_PORT_NUM,
	};

	if (!resp->has_rwqe)
		return;
	resp->has_rwqe = false;
	sroce_key_cache_flush(&resp->kc);
	if (qp->srq)
		sroce_resp_post_wc(qp, &wc, false);
}

/**
 * sroce_resp_span() - the PSNs a SEND or WRITE packet stands for
 * @qp: the QP
 * @p: its parameters
 * @pkt: the packet
 *
 * One, but for an RC packet this host's transmit path handed over
 * without a wire between (SROCE_PKT_LOCAL): such a packet may carry the
 * payload of several consecutive packets of its message at once, one
 * path MTU per PSN, the last one short if it ends the message. Its
 * headers are those of a packet that starts the first of them and ends
 * the last, so it is executed as one packet that uses that many PSNs.
 * A packet from the wire spans one PSN whatever its length.
 *
 * Context: any.
 * Return: the PSNs, at least 1.
 */
u32 sroce_resp_span(const struct sroce_qp *qp, const struct sroce_qp_params *p,
		    const struct sroce_pkt *pkt)
{
	if (!(pkt->flags & SROCE_PKT_LOCAL) || qp->ibqp.qp_type != IB_QPT_RC ||
	    !pkt->paylen)
		return 1;
	return DIV_ROUND_UP(pkt->paylen, ib_mtu_enum_to_int(p->path_mtu));
}

/*
 * Every packet of a SEND or WRITE carries the path MTU, but a message's
 * last, which carries at most that; a packet spanning PSNs carries as
 * much for each of them.
 */
static bool sroce_resp_pmtu_ok(const struct sroce_qp *qp,
			       const struct sroce_qp_params *p,
			       const struct sroce_pkt *pkt)
{
	u32 room = ib_mtu_enum_to_int(p->path_mtu) *
		   sroce_resp_span(qp, p, pkt);

	return sroce_opcode_ends_msg(pkt->info) ? pkt->paylen <= room :
						  pkt->paylen == room;
}

/**
 * sroce_resp_send() - scatter a SEND packet into the receive WQE
 * @qp: the QP
 * @p: its parameters
 * @skb: the packet, admitted by the PSN check
 * @pkt: its parsed form
 *
 * The first packet of a message takes the next receive WQE; the last
 * one completes it. On RC a message longer than the WQE completes it with
 * IB_WC_LOC_LEN_ERR (on UC it is dropped), a bad local key with
 * IB_WC_LOC_PROT_ERR.
 *
 * Context: the responder's task.
 * Return: SROCE_RESP_OK; SROCE_RESP_RNR when no receive WQE is posted;
 * SROCE_RESP_DROP for a UC message longer than its WQE;
 * SROCE_RESP_NAK_INVALID or SROCE_RESP_NAK_OP after the WQE completed in
 * error, or for an invalid receive WQE.
 */
enum sroce_resp_result
sroce_resp_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (!sroce_resp_pmtu_ok(qp, p, pkt))
		return qp->ibqp.qp_type == IB_QPT_UC ? SROCE_RESP_DROP :
						       SROCE_RESP_NAK_INVALID;
	err = sroce_resp_take_rwqe(qp);
	if (err == -ENOENT)
		return SROCE_RESP_RNR;
	if (err)
		return SROCE_RESP_NAK_OP;
	err = sroce_copy_skb(sdev, qp->ibqp.pd, &resp->kc, resp->rwqe.sge,
			     resp->rwqe.num_sge, &resp->cur, skb, pkt->hdr_len,
			     pkt->paylen);
	/*
	 * A UC SEND longer than its WQE is the sender's fault, and anyone
	 * may send one (a UC first packet is taken at any PSN ahead): the
	 * message is lost and the WQE kept (IBA 9.9.3, class D), the QP
	 * stays up.
	 */
	if (err == -ENOSPC && qp->ibqp.qp_type == IB_QPT_UC)
		return SROCE_RESP_DROP;
	if (err) {
		sroce_resp_recv_done(qp, p, skb, pkt, err == -ENOSPC ?
				     IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
		return err == -ENOSPC ? SROCE_RESP_NAK_INVALID :
					SROCE_RESP_NAK_OP;
	}
	if (!sroce_opcode_ends_msg(pkt->info))
		return SROCE_RESP_OK;
	/*
	 * An R_Key to invalidate that is not this PD's, or cannot be
	 * invalidated, is the requester's error, not ours: the WQE
	 * completes with IB_WC_REM_INV_REQ_ERR, the QP fails, and an
	 * invalid request NAK tells the requester (as rdma_rxe does).
	 */
	if (sroce_opcode_has_inv(pkt->info) &&
	    sroce_key_invalidate(sdev, qp->ibqp.pd,
				 sroce_ieth_rkey(sroce_pkt_ieth(skb, pkt)))) {
		sroce_resp_recv_done(qp, p, skb, pkt, IB_WC_REM_INV_REQ_ERR);
		return SROCE_RESP_NAK_INVALID;
	}
	sroce_resp_recv_done(qp, p, skb, pkt, IB_WC_SUCCESS);
	return SROCE_RESP_OK;
}

/*
 * Place one WRITE packet's payload at resp->va, through @mr (the first
 * packet's, found and referenced by sroce_resp_write_start()) or else
 * resp->rkey. The R_Key is resolved again for every later packet: an
 * invalidation, a fast registration under a new key or an unbound
 * window stops a WRITE in progress at its next packet, and nothing is
 * held between packets (a message the requester starts again after an
 * RNR NAK or a PSN error leaves no reference behind).
 */
static int sroce_resp_write_place(struct sroce_qp *qp, struct sroce_mr *mr,
				  struct sk_buff *skb,
				  const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_mr *found;
	int err = 0;

	if (!pkt->paylen)
		return 0;
	if (mr)
		return sroce_mr_copy_skb(mr, resp->va, skb, pkt->hdr_len,
					 pkt->paylen);
	found = sroce_rkey_get(sdev, resp->rkey, qp->ibqp.pd, qp->ibqp.qp_num,
			       resp->va, pkt->paylen, IB_ACCESS_REMOTE_WRITE,
			       &err);
	if (!found)
		return err;
	err = sroce_mr_copy_skb(found, resp->va, skb, pkt->hdr_len,
				pkt->paylen);
	sroce_mr_put(found);
	return err;
}

/*
 * A first packet: take the RETH, and check its R_Key for the whole DMA.
 * @mr is set to the MR found, referenced, for the first packet's own
 * bytes (NULL for a zero-length WRITE).
 */
static enum sroce_resp_result
sroce_resp_write_start(struct sroce_qp *qp, const struct sroce_qp_params *p,
		       struct sk_buff *skb, const struct sroce_pkt *pkt,
		       struct sroce_mr **mr)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_reth *reth = sroce_pkt_reth(skb, pkt);
	struct sroce_resp *resp = &qp->resp;
	int err = 0;

	resp->va = sroce_reth_va(reth);
	resp->rkey = sroce_reth_rkey(reth);
	resp->resid = sroce_reth_len(reth);
	resp->wlen = resp->resid;
	if (!(p->access & IB_ACCESS_REMOTE_WRITE))
		return SROCE_RESP_NAK_ACCESS;
	if (resp->resid > SROCE_MAX_MSG_SIZE)
		return SROCE_RESP_NAK_INVALID;	/* past max_msg_sz */
	if (!resp->resid)
		return SROCE_RESP_OK;	/* IBA 9.4.1: no R_Key check */
	*mr = sroce_rkey_get(sdev, resp->rkey, qp->ibqp.pd, qp->ibqp.qp_num,
			     resp->va, resp->resid, IB_ACCESS_REMOTE_WRITE, &err);
	return *mr ? SROCE_RESP_OK : SROCE_RESP_NAK_ACCESS;
}

/* The packet's length against the RETH and the MTU; the immediate's WQE. */
static enum sroce_resp_result
sroce_resp_write_check(struct sroce_qp *qp, const struct sroce_qp_params *p,
		       const struct sroce_pkt *pkt, bool last)
{
	struct sroce_resp *resp = &qp->resp;
	int err;

	if (pkt->paylen > resp->resid || (last && pkt->paylen != resp->resid) ||
	    !sroce_resp_pmtu_ok(qp, p, pkt))
		return SROCE_RESP_NAK_INVALID;
	/* The immediate needs a receive WQE before any byte is placed. */
	if (last && sroce_opcode_has_imm(pkt->info)) {
		err = sroce_resp_take_rwqe(qp);
		if (err)
			return err == -ENOENT ? SROCE_RESP_RNR : SROCE_RESP_NAK_OP;
	}
	return SROCE_RESP_OK;
}

/**
 * sroce_resp_write() - place an RDMA WRITE packet
 * @qp: the QP
 * @p: its parameters
 * @skb: the packet, admitted by the PSN check
 * @pkt: its parsed form
 *
 * The first packet checks the RETH's R_Key for the whole message; every
 * packet resolves it again for its own bytes. A last packet with
 * immediate data consumes a receive WQE and completes it.
 *
 * Context: the responder's task.
 * Return: SROCE_RESP_OK; SROCE_RESP_NAK_ACCESS for an R_Key, bounds or
 * access violation; SROCE_RESP_NAK_INVALID for a length that does not
 * match the RETH or the path MTU; SROCE_RESP_RNR when the immediate finds
 * no receive WQE; SROCE_RESP_NAK_OP for an invalid receive WQE.
 */
enum sroce_resp_result
sroce_resp_write(struct sroce_qp *qp, const struct sroce_qp_params *p,
		 struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	bool last = sroce_opcode_ends_msg(pkt->info);
	enum sroce_resp_result res = SROCE_RESP_OK;
	struct sroce_mr *mr = NULL;

	if (sroce_opcode_starts_msg(pkt->info))
		res = sroce_resp_write_start(qp, p, skb, pkt, &mr);
	if (res == SROCE_RESP_OK)
		res = sroce_resp_write_check(qp, p, pkt, last);
	if (res == SROCE_RESP_OK && sroce_resp_write_place(qp, mr, skb, pkt))
		res = SROCE_RESP_NAK_ACCESS;
	if (mr)
		sroce_mr_put(mr);
	if (res != SROCE_RESP_OK)
		return res;
	resp->va += pkt->paylen;
	resp->resid -= pkt->paylen;
	if (last && sroce_opcode_has_imm(pkt->info))
		sroce_resp_recv_done(qp, p, skb, pkt, IB_WC_SUCCESS);
	return SROCE_RESP_OK;
}

/**
 * sroce_resp_res_take() - take a resource for a new READ or atomic
 * @qp: the QP
 * @p: its parameters (max_dest_rd_atomic)
 * @pkt: the request
 * @npkts: the PSNs it uses
 *
 * Context: the responder's task.
 * Return: the resource, or NULL when it is one too many.
 */
struct sroce_resp_res *sroce_resp_res_take(struct sroce_qp *qp,
					   const struct sroce_qp_params *p,
					   const struct sroce_pkt *pkt,
					   u32 npkts)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_resp_res *res;

	res = sroce_resp_res_admit(&resp->res, p->max_dest_rd_atomic,
				   resp->arrival);
	if (!res)
		return NULL;
	res->first_psn = pkt->psn;
	res->npkts = npkts;
	res->opcode = pkt->opcode;
	return res;
}

/* Send the ATOMIC ACKNOWLEDGE of the atomic at @psn. */
static void sroce_resp_atomic_ack(struct sroce_qp *qp,
				  const struct sroce_qp_params *p, u32 psn,
				  u64 orig)
{
	struct sroce_atmack *ack;
	struct sroce_aeth *aeth;
	struct sk_buff *rsp;

	rsp = sroce_qp_pkt_alloc(qp, p, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
				 psn, 0, false, false);
	if (!rsp)
		return;
	aeth = (void *)(rsp->data + SROCE_BTH_LEN);
	sroce_aeth_set_code(aeth, SROCE_AETH_CREDITS_INVALID);
	sroce_aeth_set_msn(aeth, qp->resp.msn);
	ack = (void *)(rsp->data + SROCE_BTH_LEN + sizeof(*aeth));
	sroce_atmack_set_orig(ack, orig);
	sroce_rate_charge(&qp->rate, SROCE_RATE_RESP, rsp->len);
	sroce_qp_pkt_send(qp, p, rsp);
}

static enum sroce_resp_result
sroce_resp_atomic(struct sroce_qp *qp, const struct sroce_qp_params *p,
		  struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_atmeth *atm = sroce_pkt_atmeth(skb, pkt);
	u64 va = sroce_atmeth_va(atm), orig = 0;
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	int err = 0;

	if (!(p->access & IB_ACCESS_REMOTE_ATOMIC))
		return SROCE_RESP_NAK_ACCESS;
	mr = sroce_rkey_get(sdev, sroce_atmeth_rkey(atm), qp->ibqp.pd,
			    qp->ibqp.qp_num, va, sizeof(u64),
			    IB_ACCESS_REMOTE_ATOMIC, &err);
	if (!mr)
		return SROCE_RESP_NAK_ACCESS;
	res = sroce_resp_res_take(qp, p, pkt, 1);
	if (res)
		err = sroce_mr_atomic(mr, va, pkt->opcode,
				      sroce_atmeth_compare(atm),
				      sroce_atmeth_swap_add(atm), &orig);
	sroce_mr_put(mr);
	if (!res || err == -EINVAL)
		return SROCE_RESP_NAK_INVALID;
	if (err)
		return SROCE_RESP_NAK_ACCESS;

	res->orig = orig;
	res->answered = true;
	res->answered_mark = qp->resp.arrivals +
			     skb_queue_len_lockless(&qp->resp.rxq);
	qp->resp.msn++;
	sroce_resp_atomic_ack(qp, p, pkt->psn, orig);
	return SROCE_RESP_OK;
}

/* A request from before the ePSN: answer it, never execute it again. */
static void sroce_resp_duplicate(struct sroce_qp *qp,
				 const struct sroce_qp_params *p,
				 struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_resp_res *res;

	sroce_stats_inc(to_sroce_dev(qp->ibqp.device), SROCE_CNT_DUP_REQ);
	if (pkt->info->flags & SROCE_OPF_READ) {
		sroce_resp_dup_read(qp, p, skb, pkt);
		return;
	}
	if (pkt->info->flags & SROCE_OPF_ATOMIC) {
		res = sroce_resp_res_find(&qp->resp.res, pkt->psn);
		if (res && res->first_psn == pkt->psn &&
		    res->opcode == pkt->opcode)
			sroce_resp_atomic_ack(qp, p, pkt->psn, res->orig);
		return;
	}
	/*
	 * Everything before the ePSN has been executed, including packets
	 * whose ACK was coalesced: one ACK of ePSN - 1 covers them all. A
	 * retried message ends with AckReq, so only a duplicate that asks
	 * is answered: a resent message of N packets costs one ACK per
	 * AckReq, not N.
	 */
	if (!(pkt->flags & SROCE_PKT_ACKREQ))
		return;
	sroce_resp_send_ack(qp, p, SROCE_AETH_ACK, SROCE_AETH_CREDITS_INVALID,
			    sroce_psn_add(qp->resp.psn, SROCE_PSN_MASK));
}

/* Execute the request at the ePSN; *@npkts is the PSNs it used. */
static enum sroce_resp_result
sroce_resp_execute(struct sroce_qp *qp, const struct sroce_qp_params *p,
		   struct sk_buff *skb, const struct sroce_pkt *pkt,
		   u32 *npkts)
{
	u32 kind = pkt->info->flags;

	*npkts = 1;
	if (!sroce_opcode_may_follow(qp->resp.prev, pkt->info))
		return SROCE_RESP_NAK_INVALID;
	if (kind & (SROCE_OPF_SEND | SROCE_OPF_WRITE))
		*npkts = sroce_resp_span(qp, p, pkt);
	if (kind & SROCE_OPF_SEND)
		return sroce_resp_send(qp, p, skb, pkt);
	if (kind & SROCE_OPF_WRITE)
		return sroce_resp_write(qp, p, skb, pkt);
	if (kind & SROCE_OPF_READ)
		return sroce_resp_read(qp, p, skb, pkt, npkts);
	if (kind & SROCE_OPF_ATOMIC)
		return sroce_resp_atomic(qp, p, skb, pkt);
	return SROCE_RESP_NAK_INVALID;
}

static const u8 sroce_resp_nak_code[] = {
	[SROCE_RESP_NAK_INVALID] = SROCE_NAK_INVALID_REQ,
	[SROCE_RESP_NAK_ACCESS] = SROCE_NAK_REM_ACCESS_ERR,
	[SROCE_RESP_NAK_OP] = SROCE_NAK_REM_OP_ERR,
};

/* The request at the ePSN was executed: move on, ACK or defer. */
static void sroce_resp_executed(struct sroce_qp *qp,
				const struct sroce_qp_params *p,
				const struct sroce_pkt *pkt, u32 npkts)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	u32 kind = pkt->info->flags;

	resp->nak_sent = false;
	/* read by sroce_resp_mark_queued() */
	WRITE_ONCE(resp->psn, sroce_psn_add(resp->psn, npkts));
	sroce_resp_res_retire_stale(&resp->res, resp->psn);
	resp->prev = pkt->info;
	if (kind & SROCE_OPF_ATOMIC) {
		resp->prev = NULL;	/* its MSN moved with the response */
	} else if (sroce_opcode_ends_msg(pkt->info)) {
		resp->msn = sroce_psn_next(resp->msn);
		resp->prev = NULL;
	}
	if (!resp->prev)
		sroce_key_cache_flush(&resp->kc);
	if (kind & (SROCE_OPF_READ | SROCE_OPF_ATOMIC))
		return;		/* the response acknowledges it */
	/* of the last PSN a spanning packet used: it covers them all */
	if (pkt->flags & SROCE_PKT_ACKREQ)
		sroce_resp_send_ack(qp, p, SROCE_AETH_ACK,
				    SROCE_AETH_CREDITS_INVALID,
				    sroce_psn_add(pkt->psn, npkts - 1));
	else
		sroce_stats_inc(sdev, SROCE_CNT_ACK_DEFERRED);
}

static void sroce_resp_request(struct sroce_qp *qp,
			       const struct sroce_qp_params *p,
			       struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	enum sroce_resp_result res;
	u32 npkts;

	switch (sroce_resp_psn_class(pkt->psn, resp->psn)) {
	case SROCE_PSN_DUPLICATE:
		sroce_resp_duplicate(qp, p, skb, pkt);
		return;
	case SROCE_PSN_AHEAD:
		sroce_stats_inc(sdev, SROCE_CNT_OUT_OF_SEQ_REQ);
		if (!resp->nak_sent) {
			sroce_stats_inc(sdev, SROCE_CNT_SENT_SEQ_NAK);
			sroce_resp_send_ack(qp, p, SROCE_AETH_NAK,
					    SROCE_NAK_PSN_SEQ_ERR, resp->psn);
		}
		resp->nak_sent = true;
		return;
	case SROCE_PSN_EXPECTED:
		break;
	}

	res = sroce_resp_execute(qp, p, skb, pkt, &npkts);
	if (res == SROCE_RESP_RNR) {
		sroce_stats_inc(sdev, SROCE_CNT_SENT_RNR);
		sroce_resp_send_ack(qp, p, SROCE_AETH_RNR_NAK, p->min_rnr_timer,
				    pkt->psn);
		resp->nak_sent = true;
		return;
	}
	if (res != SROCE_RESP_OK) {
		sroce_resp_send_ack(qp, p, SROCE_AETH_NAK,
				    sroce_resp_nak_code[res], pkt->psn);
		sroce_qp_error(qp);
		return;
	}
	sroce_resp_executed(qp, p, pkt, npkts);
}

/*
 * Drop what the responder holds: the QP left the receiving states. A
 * receive WQE taken is flushed (sroce_resp_flush_rwqe()).
 */
static void sroce_resp_drop_state(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;

	spin_lock_irqsave(&resp->rxq.lock, flags);
	resp->rewind = false;
	spin_unlock_irqrestore(&resp->rxq.lock, flags);
	sroce_rcv_purge(to_sroce_dev(qp->ibqp.device), &resp->rxq);
	sroce_key_cache_flush(&resp->kc);
	sroce_resp_flush_rwqe(qp);
	resp->serving = NULL;
	sroce_resp_res_clear(&resp->res);
	resp->prev = NULL;
	resp->uc_drop = false;
}

/* The QP is in ERR: flush once, then let the consumer know (SRQ). */
static void sroce_resp_error(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->err_done) {
		sroce_rcv_purge(to_sroce_dev(qp->ibqp.device), &resp->rxq);
		return;
	}
	resp->err_done = true;
	sroce_resp_drop_state(qp);
	if (qp->srq)
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/*
 * The rate limiter's gate for the request at the head of the queue: an
 * atomic is executed only when its acknowledgment may leave. (A READ's
 * response passes it in sroce_resp_serve().)
 */
static bool sroce_resp_gate(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;
	struct sk_buff *skb;
	bool atomic;

	if (likely(!sroce_rate_bps(&qp->rate)))
		return true;
	spin_lock_irqsave(&resp->rxq.lock, flags);
	skb = skb_peek(&resp->rxq);
	atomic = skb && (sroce_skb_pkt(skb)->info->flags & SROCE_OPF_ATOMIC);
	spin_unlock_irqrestore(&resp->rxq.lock, flags);
	return !atomic || sroce_rate_open(&qp->rate, SROCE_RATE_RESP);
}

static int sroce_resp_run(void *arg)
{
	struct sroce_qp *qp = arg;
	struct sroce_resp *resp = &qp->resp;
	struct sroce_qp_params p;
	struct sk_buff *skb;

	sroce_qp_params_get(qp, &p);
	if (p.state == IB_QPS_RESET || p.state == IB_QPS_INIT) {
		sroce_resp_drop_state(qp);
		return 0;
	}
	if (p.state == IB_QPS_ERR) {
		sroce_resp_error(qp);
		return sroce_wq_flush_rq_batch(qp);
	}
	sroce_resp_rewind(qp);
	if (resp->serving) {
		if (sroce_task_delayed(&resp->task))
			return 0;	/* backing off a full netdev queue */
		return sroce_resp_serve(qp, &p);
	}
	if (!sroce_resp_gate(qp))
		return 0;	/* the gate's timer schedules us again */
	skb = skb_dequeue(&resp->rxq);
	if (!skb) {
		/* a pause of the responder is not made up for */
		sroce_rate_idle(&qp->rate, SROCE_RATE_RESP);
		return 0;
	}
	resp->arrival = resp->arrivals++;
	if (!sroce_rcv_verify(to_sroce_dev(qp->ibqp.device), skb)) {
		kfree_skb(skb);
		return 1;
	}
	if (qp->ibqp.qp_type == IB_QPT_UC)
		sroce_resp_uc_request(qp, &p, skb, sroce_skb_pkt(skb));
	else if (sroce_qp_transport(qp) == IB_OPCODE_UD)
		sroce_resp_ud_request(qp, &p, skb, sroce_skb_pkt(skb));
	else
		sroce_resp_request(qp, &p, skb, sroce_skb_pkt(skb));
	consume_skb(skb);
	return 1;
}

/**
 * sroce_resp_init() - set up the responder of a new QP
 * @qp: the QP
 *
 * An RC QP gets room for as many responder resources as the device
 * allows any QP (max_qp_rd_atom); max_dest_rd_atomic limits how many
 * are used.
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int sroce_resp_init(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	int err;

	err = sroce_resp_res_init(&qp->resp.res,
				  qp->ibqp.qp_type == IB_QPT_RC ?
				  sdev->attr.max_qp_rd_atom : 0,
				  GFP_KERNEL_ACCOUNT);
	if (err)
		return err;
	skb_queue_head_init(&qp->resp.rxq);
	sroce_key_cache_init(&qp->resp.kc);
	sroce_task_init(&qp->resp.task, "resp", sroce_resp_run, qp);
	return 0;
}

/**
 * sroce_resp_reset() - forget the requests of a QP back in RESET
 * @qp: the QP, its tasks disabled
 *
 * A receive WQE taken from the SRQ completes with IB_WC_WR_FLUSH_ERR.
 *
 * Context: process context.
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	sroce_resp_drop_state(qp);
	qp->resp.msn = 0;
	qp->resp.nak_sent = false;
	qp->resp.err_done = false;
	qp->resp.arrivals = 0;
}

/**
 * sroce_resp_cleanup() - the QP is being destroyed
 * @qp: the QP, its tasks disabled
 *
 * A receive WQE taken from the SRQ completes with IB_WC_WR_FLUSH_ERR.
 *
 * Context: process context.
 */
void sroce_resp_cleanup(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->resp.rxq.lock, flags);
	qp->resp.closed = true;
	spin_unlock_irqrestore(&qp->resp.rxq.lock, flags);
	sroce_resp_reset(qp);
	sroce_task_cleanup(&qp->resp.task);
	sroce_resp_res_free(&qp->resp.res);
}
