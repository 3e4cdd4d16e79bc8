// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce requester: a request packet and its payload.
 *
 * A payload of SROCE_TX_LEND_MIN bytes or more (SROCE_TX_LEND_LOCAL_MIN
 * when the QP's route ends at this host) is not copied: the pages
 * of the WQE's memory that hold it are lent to the packet as page
 * fragments (sroce_lend_data(), sroce_tx_lend()), and its only pass over
 * the bytes on this side is the ICRC's. The packet's head then holds only
 * the headers, so it is a small allocation instead of one a page or two
 * larger than the payload, which the kernel also zeroes when it
 * initialises allocations (init_on_alloc, Debian's default). Inline data,
 * smaller payloads, memory that may not be lent (slab or vmalloc memory
 * under a kernel MR) and payloads in more pieces than an skb takes are
 * copied into the packet as before; so is everything while the module
 * parameter tx_lend is off.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/skbuff.h>
#include <linux/string.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "mem/sroce_copy.h"
#include "mem/sroce_mr_io.h"
#include "net/sroce_tx.h"
#include "obj/sroce_wqe.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_payload.h"

/**
 * sroce_req_gather() - gather the payload of a request packet
 * @qp: the QP
 * @ctx: the WQE being sent (at req->cur_idx)
 * @pkt: the packet's shape
 * @buf: where the payload goes
 *
 * Context: the requester's task.
 * Return: 0, or the error of sroce_copy_data() (a bad local key).
 */
int sroce_req_gather(struct sroce_qp *qp, struct sroce_send_ctx *ctx,
		     const struct sroce_req_pkt *pkt, void *buf)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	const struct rxe_send_wqe *slot;

	slot = sroce_queue_slot(&qp->sq.queue, req->cur_idx);
	if (ctx->wqe.send_flags & IB_SEND_INLINE) {
		memcpy(buf, sroce_wqe_inline(slot) + pkt->offset, pkt->paylen);
		return 0;
	}
	return sroce_copy_data(sdev, qp->ibqp.pd, &req->kc,
			       sroce_wqe_sges(slot), ctx->wqe.num_sge,
			       &req->cur, buf, pkt->paylen, SROCE_COPY_FROM_MR);
}

/*
 * The packet with its payload lent. NULL when the payload has to be
 * copied instead (nothing changed); ERR_PTR(-ENOMEM) when memory is short
 * (the cursor is back where it was). The pages are looked up before the
 * packet is allocated: when they may not be lent, the copy that follows
 * allocates the only packet.
 */
static struct sk_buff *sroce_req_alloc_lent(struct sroce_qp *qp,
					    const struct sroce_qp_params *p,
					    const struct sroce_send_ctx *ctx,
					    const struct sroce_req_pkt *pkt,
					    const struct sroce_req_hdr *h)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_mr_frag frags[SROCE_TX_LEND_FRAGS];
	struct sroce_req *req = &qp->req;
	struct sroce_sge_cursor start = req->cur;
	struct sk_buff *skb;
	int n;

	n = sroce_lend_data(sdev, qp->ibqp.pd, &req->kc,
			    sroce_wqe_sges(sroce_queue_slot(&qp->sq.queue,
							    req->cur_idx)),
			    ctx->wqe.num_sge, &req->cur, pkt->paylen, frags,
			    ARRAY_SIZE(frags));
	if (n <= 0)
		return NULL;
	skb = sroce_qp_pkt_alloc(qp, p, h->opcode, h->psn, 0, h->ackreq,
				 h->se);
	if (!skb) {
		sroce_mr_frags_put(frags, n);
		goto restore_cursor;
	}
	if (sroce_tx_lend(skb, frags, n, pkt->paylen)) {
		kfree_skb(skb);
		goto restore_cursor;
	}
	sroce_stats_inc(sdev, SROCE_CNT_SENT_LENT);
	return skb;

restore_cursor:
	req->cur = start;
	return ERR_PTR(-ENOMEM);
}

/**
 * sroce_req_pkt_alloc() - a request packet with its payload in place
 * @qp: the QP
 * @p: its parameters
 * @ctx: the WQE being sent (at req->cur_idx)
 * @pkt: the packet's shape; the cursor stands at its payload
 * @h: its BTH
 *
 * The payload is lent or copied (see the top of this file); the cursor
 * moves past it. The extension headers are left to the caller.
 *
 * A packet that spans PSNs (@pkt->npsn > 1) is only ever lent: one
 * whose pages may not be lent, or lie in too many pieces, is not built.
 *
 * Context: the requester's task.
 * Return: the packet; NULL when memory is short (the cursor has not
 * moved); ERR_PTR(-EINVAL) when the payload could not be gathered (a bad
 * local key); ERR_PTR(-EMSGSIZE) for a spanning packet that could not be
 * lent (the cursor has not moved).
 */
struct sk_buff *sroce_req_pkt_alloc(struct sroce_qp *qp,
				    const struct sroce_qp_params *p,
				    struct sroce_send_ctx *ctx,
				    const struct sroce_req_pkt *pkt,
				    const struct sroce_req_hdr *h)
{
	struct sk_buff *skb;

	if (pkt->npsn > 1) {
		skb = sroce_req_alloc_lent(qp, p, ctx, pkt, h);
		if (!skb)
			return ERR_PTR(-EMSGSIZE);
		return IS_ERR(skb) ? NULL : skb;
	}
	if (sroce_tx_lends(pkt->paylen, sroce_route_local(&qp->route)) &&
	    !(ctx->wqe.send_flags & IB_SEND_INLINE)) {
		skb = sroce_req_alloc_lent(qp, p, ctx, pkt, h);
		if (skb)
			return IS_ERR(skb) ? NULL : skb;
	}
	skb = sroce_qp_pkt_alloc(qp, p, h->opcode, h->psn, pkt->paylen,
				 h->ackreq, h->se);
	if (!skb)
		return NULL;
	if (pkt->paylen &&
	    sroce_req_gather(qp, ctx, pkt, sroce_tx_payload(skb))) {
		kfree_skb(skb);
		return ERR_PTR(-EINVAL);
	}
	return skb;
}
