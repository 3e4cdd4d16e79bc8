// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce UC responder: request packets of Unreliable Connected QPs.
 *
 * UC carries SEND and RDMA WRITE messages (with immediate or not) over
 * the same packets as RC, but nothing is acknowledged and nothing is
 * sent again (IBA 9.8.3). The responder executes packets in PSN order
 * through the RC responder's SEND and WRITE execution. When a packet is
 * missing, out of order or cannot be executed, the message it belongs to
 * is lost: the packet and the rest of the message are dropped silently,
 * and the next message starts clean with its first packet, at any PSN
 * ahead (the expected PSN follows it). A receive WQE a lost SEND had begun
 * to fill is not completed: the next SEND fills it again from its start.
 *
 * A packet whose PSN lies behind the expected one (in the half of the PSN
 * space before it) is stale: the requester has sent past it, so it is a
 * duplicate or was overtaken on the way. It is dropped and changes
 * nothing, not even the message in progress: executing a stale first
 * packet would deliver an older message after a newer one, and UC keeps
 * its messages in order even though it may lose some (IBA 9.8.3).
 *
 * Errors (IBA 9.9.3, responder classes for UC): no receive WQE for a
 * SEND or for a WRITE's immediate, an R_Key, bounds, access or length
 * violation of an RDMA WRITE, and a SEND longer than its receive WQE lose
 * the message silently, and the WQE is kept for the next message. A bad
 * local key in the WQE completes the WQE in error, and an invalid
 * receive WQE is an error too: the QP goes to ERR, as any receive
 * completed in error takes it. Every lost message is counted
 * (dropped_uc_msg), every PSN gap out_of_seq_request, every stale packet
 * duplicate_request.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "mem/sroce_mr.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_uc.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"
#include "wire/sroce_psn.h"

/**
 * sroce_resp_uc_verdict() - admit a UC request packet or drop it
 * @epsn: the expected PSN
 * @dropping: the rest of a lost message is being dropped
 * @prev: the opcode of the last packet executed inside the message in
 *	progress, or NULL at a message boundary
 * @psn: the packet's PSN
 * @info: its opcode
 *
 * A packet at the expected PSN that may follow @prev is executed. One
 * behind @epsn is stale. Any other first (or only) packet starts a new
 * message; any other packet is dropped, with the rest of its message.
 *
 * Context: any.
 * Return: what to do with the packet.
 */
enum sroce_uc_verdict
sroce_resp_uc_verdict(u32 epsn, bool dropping,
		      const struct sroce_opcode_info *prev,
		      u32 psn, const struct sroce_opcode_info *info)
{
	if (psn == epsn && !dropping && sroce_opcode_may_follow(prev, info))
		return SROCE_UC_NEXT;
	if (sroce_psn_before(psn, epsn))
		return SROCE_UC_STALE;
	if (sroce_opcode_starts_msg(info))
		return SROCE_UC_RESTART;
	return SROCE_UC_DROP;
}

/*
 * Forget the message in progress: the SEND's place in its receive WQE
 * (kept, to be filled again from its start).
 */
static void sroce_resp_uc_abandon(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->has_rwqe)
		sroce_cursor_init(&resp->cur, resp->rwqe.length);
	sroce_key_cache_flush(&resp->kc);
	resp->prev = NULL;
}

/*
 * The message of @pkt is lost: drop the rest of it. The expected PSN
 * follows the packets dropped, so that only a real gap counts as out of
 * sequence.
 */
static void sroce_resp_uc_lose(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;

	if (!resp->uc_drop)
		sroce_stats_inc(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_DROPPED_UC_MSG);
	sroce_resp_uc_abandon(qp);
	resp->uc_drop = !sroce_opcode_ends_msg(pkt->info);
	WRITE_ONCE(resp->psn, sroce_psn_next(pkt->psn));
}

/* Check the packet's place in the stream; false if it is dropped. */
static bool sroce_resp_uc_admit(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_resp *resp = &qp->resp;
	enum sroce_uc_verdict v;

	v = sroce_resp_uc_verdict(resp->psn, resp->uc_drop, resp->prev,
				  pkt->psn, pkt->info);
	if (v == SROCE_UC_NEXT)
		return true;
	if (v == SROCE_UC_STALE) {
		sroce_stats_inc(sdev, SROCE_CNT_DUP_REQ);
		return false;
	}
	if (pkt->psn != resp->psn)
		sroce_stats_inc(sdev, SROCE_CNT_OUT_OF_SEQ_REQ);
	if (v == SROCE_UC_DROP) {
		sroce_resp_uc_lose(qp, pkt);
		return false;
	}
	/* A new message: the one in progress lost its end. */
	if (resp->prev && !resp->uc_drop)
		sroce_stats_inc(sdev, SROCE_CNT_DROPPED_UC_MSG);
	sroce_resp_uc_abandon(qp);
	resp->uc_drop = false;
	WRITE_ONCE(resp->psn, pkt->psn);
	return true;
}

/* Does a failed execution take the QP to ERR, or only lose the message? */
static bool sroce_resp_uc_fatal(const struct sroce_pkt *pkt,
				enum sroce_resp_result res)
{
	switch (res) {
	case SROCE_RESP_RNR:
	case SROCE_RESP_NAK_ACCESS:
	case SROCE_RESP_DROP:
		return false;
	case SROCE_RESP_NAK_INVALID:
		/* a WRITE's lengths; a SEND's invalid WQE completed it */
		return pkt->info->flags & SROCE_OPF_SEND;
	default:
		return true;
	}
}

/**
 * sroce_resp_uc_request() - receive a request packet of a UC QP
 * @qp: the QP
 * @p: its parameters
 * @skb: the packet
 * @pkt: its parsed form (a UC SEND or RDMA WRITE opcode)
 *
 * Context: the responder's task.
 */
void sroce_resp_uc_request(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;
	enum sroce_resp_result res;

	if (!sroce_resp_uc_admit(qp, pkt))
		return;
	if (pkt->info->flags & SROCE_OPF_SEND)
		res = sroce_resp_send(qp, p, skb, pkt);
	else if (pkt->info->flags & SROCE_OPF_WRITE)
		res = sroce_resp_write(qp, p, skb, pkt);
	else
		res = SROCE_RESP_NAK_INVALID;	/* no such UC opcode */

	if (res != SROCE_RESP_OK) {
		if (sroce_resp_uc_fatal(pkt, res)) {
			sroce_qp_error(qp);
			return;
		}
		sroce_resp_uc_lose(qp, pkt);
		return;
	}
	/* read by sroce_resp_mark_queued() */
	WRITE_ONCE(resp->psn, sroce_psn_next(pkt->psn));
	resp->prev = pkt->info;
	if (sroce_opcode_ends_msg(pkt->info)) {
		resp->msn = sroce_psn_next(resp->msn);
		resp->prev = NULL;
		sroce_key_cache_flush(&resp->kc);
	}
}
