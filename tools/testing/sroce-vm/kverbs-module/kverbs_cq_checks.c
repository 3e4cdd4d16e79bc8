// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_vm_kverbs: the checks of CQs, SRQs, AHs and UD sends.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/atomic.h>
#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "kverbs_cq_checks.h"
#include "kverbs_fixture.h"

/* The lock the atomic-context AH check holds. */
static DEFINE_SPINLOCK(kv_atomic_lock);

/* ---- checks: CQs, SRQs, AHs ---------------------------------------------- */

static bool kv_expect_notify(struct kv_ctx *c, struct kv_cq *kcq,
			     enum ib_cq_notify_flags flags, int want)
{
	int ret = ib_req_notify_cq(kcq->cq, flags);

	return !kv_bad(c, ret != want, "ib_req_notify_cq(%#x): %d, want %d",
		       flags, ret, want);
}

/* Arming: one handler call per arm, REPORT_MISSED_EVENTS, solicited arm. */
void kv_check_cq_notify(struct kv_ctx *c)
{
	const enum ib_cq_notify_flags missed = IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS;
	struct kv_fix f;
	struct kv_cq *kcq = &f.kcq;

	if (!kv_fix_setup(c, &f, IB_QPT_RC, 16, 4, 8, true) ||
	    !kv_expect_notify(c, kcq, missed, 0))
		goto out;
	if (kv_bad(c, kv_post_recvs(f.qp, 700, 3), "post_recv failed") ||
	    !kv_expect_count(c, &kcq->comps, 0, "handler before any CQE") ||
	    !kv_qp_to_err(c, f.qp) ||
	    !kv_expect_count(c, &kcq->comps, 1, "handler after 3 flushes") ||
	    !kv_expect_notify(c, kcq, missed, 1))
		goto out;
	/* armed again: a receive posted in ERR flushes and notifies */
	if (kv_bad(c, kv_post_recvs(f.qp, 703, 1), "post_recv failed") ||
	    !kv_expect_count(c, &kcq->comps, 2, "handler after re-arm"))
		goto out;
	/* a solicited arm fires on a completion in error (IBA 11.4.2.2) */
	if (!kv_expect_notify(c, kcq, IB_CQ_SOLICITED, 0) ||
	    kv_bad(c, kv_post_recvs(f.qp, 704, 1), "post_recv failed") ||
	    !kv_expect_count(c, &kcq->comps, 3, "handler, solicited arm"))
		goto out;
	/* not armed: no call */
	if (kv_bad(c, kv_post_recvs(f.qp, 705, 1), "post_recv failed") ||
	    !kv_expect_count(c, &kcq->comps, 3, "handler while unarmed") ||
	    !kv_expect_wcs(c, kcq, f.qp, 700, 6, IB_WC_WR_FLUSH_ERR,
			   IB_WC_RECV))
		goto out;
	kv_expect_notify(c, kcq, missed, 0);
out:
	kv_fix_teardown(c, &f);
}

/* More flushed receives than the CQ holds: IB_EVENT_CQ_ERR, once. */
void kv_check_cq_overflow(struct kv_ctx *c)
{
	struct ib_qp_cap cap = { .max_send_wr = 1 };
	struct kv_cq small, scq = {};
	struct ib_qp *qp = NULL;
	int n;

	if (!kv_cq_create(c, &small, 1) || !kv_cq_create(c, &scq, 4))
		goto out;
	n = small.cq->cqe + 3;
	cap.max_recv_wr = n;
	qp = kv_qp_create(c, IB_QPT_RC, &scq, &small, NULL, &cap, NULL);
	if (!qp || !kv_qp_to_rts(c, qp) ||
	    kv_bad(c, kv_post_recvs(qp, 800, n), "post_recv failed") ||
	    !kv_qp_to_err(c, qp) ||
	    !kv_expect_count(c, &small.events, 1, "CQ event handler"))
		goto out;
	if (!kv_bad(c, small.last_event != IB_EVENT_CQ_ERR ||
		    small.event_cq != small.cq,
		    "event %d on %s CQ, want IB_EVENT_CQ_ERR (%d)",
		    small.last_event,
		    small.event_cq == small.cq ? "this" : "another",
		    IB_EVENT_CQ_ERR))
		kv_bad(c, atomic_read(&scq.events), "the send CQ got %d events",
		       atomic_read(&scq.events));
out:
	kv_qp_destroy(c, qp);
	kv_cq_destroy(&scq);
	kv_cq_destroy(&small);
}

static bool kv_srq_expect(struct kv_ctx *c, struct ib_srq *srq, u32 max_wr,
			  u32 limit)
{
	struct ib_srq_attr attr = {};
	int err = ib_query_srq(srq, &attr);

	return !kv_bad(c, err || attr.max_wr != max_wr ||
		       attr.srq_limit != limit,
		       "ib_query_srq: %d, max_wr %u limit %u; want %u %u",
		       err, attr.max_wr, attr.srq_limit, max_wr, limit);
}

/* Post to an SRQ until it refuses, at most @max + 1; returns how many. */
static int kv_srq_fill(struct ib_srq *srq, int max)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = {};
	int i;

	for (i = 0; i <= max; i++) {
		wr.wr_id = 900 + i;
		if (ib_post_srq_recv(srq, &wr, &bad))
			break;
	}
	return i;
}

/* The SRQ of a QP in ERR is not flushed: LAST_WQE_REACHED instead. */
static void kv_check_srq_qp(struct kv_ctx *c, struct ib_srq *srq)
{
	struct ib_qp_cap cap = { .max_send_wr = 1 };
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = { .wr_id = 1 };
	struct kv_qp_events evs = {};
	struct ib_qp *qp = NULL;
	struct kv_cq kcq;
	int err;

	if (!kv_cq_create(c, &kcq, 8))
		goto out;
	qp = kv_qp_create(c, IB_QPT_RC, &kcq, &kcq, srq, &cap, &evs);
	if (!qp)
		goto out;
	err = ib_post_recv(qp, &wr, &bad);
	if (kv_bad(c, err != -EINVAL, "post_recv on a QP with an SRQ: %d",
		   err) ||
	    kv_bad(c, kv_qp_step(c, qp, IB_QPS_INIT), "to INIT failed") ||
	    !kv_qp_to_err(c, qp) ||
	    !kv_expect_count(c, &evs.last_wqe, 1, "LAST_WQE_REACHED") ||
	    !kv_expect_count(c, &evs.other, 0, "other QP events"))
		goto out;
	kv_expect_empty(c, &kcq, "QP with an SRQ in ERR");
out:
	kv_qp_destroy(c, qp);
	kv_cq_destroy(&kcq);
}

/* Full SRQ, resizes (refused, and one that keeps the WQEs), the limit. */
void kv_check_srq(struct kv_ctx *c)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ib_srq_attr attr = {};
	struct ib_srq *srq;
	u32 depth, grown;
	int n, err;

	srq = ib_create_srq(c->pd, &init);
	if (kv_bad(c, IS_ERR(srq), "ib_create_srq: %ld", PTR_ERR(srq)))
		return;
	depth = init.attr.max_wr;
	if (kv_bad(c, depth < 4 || !is_power_of_2(depth + 1) ||
		   init.attr.max_sge < 1, "SRQ of 4 x 1 SGE reports %u x %u",
		   depth, init.attr.max_sge) ||
	    !kv_srq_expect(c, srq, depth, 0))
		goto out;
	n = kv_srq_fill(srq, depth);
	if (kv_bad(c, n != depth, "SRQ of %u took %d WRs", depth, n))
		goto out;
	/* smaller than what it holds: refused */
	attr.max_wr = depth / 2;
	err = ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR);
	if (kv_bad(c, err != -EINVAL, "shrink below the WQEs held: %d", err) ||
	    !kv_srq_expect(c, srq, depth, 0))
		goto out;
	attr.max_wr = 2 * depth + 1;
	attr.srq_limit = 2;
	err = ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR | IB_SRQ_LIMIT);
	grown = roundup_pow_of_two(2 * depth + 2) - 1;
	if (kv_bad(c, err, "ib_modify_srq(max_wr %u, limit 2): %d",
		   attr.max_wr, err) ||
	    !kv_srq_expect(c, srq, grown, 2))
		goto out;
	/* the WQEs posted before the resize still take their slots */
	n = kv_srq_fill(srq, grown);
	if (kv_bad(c, n != grown - depth,
		   "after the resize to %u, %d more WRs fit, want %u", grown,
		   n, grown - depth))
		goto out;
	kv_check_srq_qp(c, srq);
out:
	ib_destroy_srq(srq);
}

/* rdma_create_ah()/rdma_destroy_ah() without sleeping, under a spinlock. */
void kv_check_ah_atomic(struct kv_ctx *c)
{
	struct rdma_ah_attr attr = c->peer;
	const struct ib_global_route *grh;
	struct rdma_ah_attr out = {};
	unsigned long flags;
	struct ib_ah *ah;
	int err;

	spin_lock_irqsave(&kv_atomic_lock, flags);
	ah = rdma_create_ah(c->pd, &attr, 0);
	spin_unlock_irqrestore(&kv_atomic_lock, flags);
	if (kv_bad(c, IS_ERR(ah), "rdma_create_ah in atomic context: %ld",
		   PTR_ERR(ah)))
		return;

	err = rdma_query_ah(ah, &out);
	grh = rdma_ah_read_grh(&out);
	kv_bad(c, err || !ether_addr_equal(out.roce.dmac, c->peer_mac) ||
	       !(rdma_ah_get_ah_flags(&out) & IB_AH_GRH) ||
	       grh->sgid_index != c->sgid_index ||
	       memcmp(&grh->dgid, &c->peer_gid, sizeof(c->peer_gid)),
	       "rdma_query_ah: %d, dmac %pM, sgid_index %u, dgid %pI6", err,
	       out.roce.dmac, grh->sgid_index, grh->dgid.raw);
	rdma_destroy_ah_attr(&out);

	spin_lock_irqsave(&kv_atomic_lock, flags);
	rdma_destroy_ah(ah, 0);
	spin_unlock_irqrestore(&kv_atomic_lock, flags);
}

/* A UD SEND through an AH waits in RTS and flushes; without one: refused. */
void kv_check_ud_send(struct kv_ctx *c)
{
	struct rdma_ah_attr attr = c->peer;
	const struct ib_send_wr *bad = NULL;
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = 1000, .opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_qpn = KV_DEST_QPN,
		.remote_qkey = KV_QKEY,
	};
	struct kv_fix f;
	struct ib_ah *ah;
	int err;

	ah = rdma_create_ah(c->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (kv_bad(c, IS_ERR(ah), "rdma_create_ah: %ld", PTR_ERR(ah)))
		return;
	if (!kv_fix_setup(c, &f, IB_QPT_UD, 8, 4, 1, true))
		goto out;
	err = ib_post_send(f.qp, &wr.wr, &bad);
	if (kv_bad(c, err != -EINVAL || bad != &wr.wr,
		   "UD SEND without an AH: %d", err))
		goto out;
	wr.ah = ah;
	err = ib_post_send(f.qp, &wr.wr, &bad);
	if (kv_bad(c, err, "UD SEND: %d", err))
		goto out;
	/* a datagram completes once it is sent: nothing acknowledges it */
	if (!kv_expect_wcs(c, &f.kcq, f.qp, 1000, 1, IB_WC_SUCCESS, IB_WC_SEND) ||
	    !kv_qp_to_err(c, f.qp))
		goto out;
	wr.wr.wr_id = 1001;
	err = ib_post_send(f.qp, &wr.wr, &bad);
	if (kv_bad(c, err, "UD SEND in ERR: %d", err))
		goto out;
	kv_expect_wcs(c, &f.kcq, f.qp, 1001, 1, IB_WC_WR_FLUSH_ERR, IB_WC_SEND);
out:
	kv_fix_teardown(c, &f);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}
