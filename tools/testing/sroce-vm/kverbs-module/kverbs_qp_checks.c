// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_vm_kverbs: the checks of QPs, their queues and fast registration.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kverbs_fixture.h"
#include "kverbs_qp_checks.h"

/* ---- checks: QPs and their queues ---------------------------------------- */

/* Capabilities of a new QP, a refused transition, the way to RTS. */
static void kv_check_qp_create(struct kv_ctx *c, enum ib_qp_type type)
{
	struct ib_qp_cap cap = {
		.max_send_wr = 10, .max_recv_wr = 5,
		.max_send_sge = 2, .max_recv_sge = 3, .max_inline_data = 64,
	};
	struct ib_qp_init_attr init = {};
	struct ib_qp_attr attr = {};
	const struct ib_global_route *grh;
	struct ib_qp *qp = NULL;
	struct kv_cq kcq;
	int err;

	if (!kv_cq_create(c, &kcq, 32))
		goto out;
	qp = kv_qp_create(c, type, &kcq, &kcq, NULL, &cap, NULL);
	if (!qp ||
	    kv_bad(c, cap.max_send_wr < 10 || cap.max_recv_wr < 5 ||
		   cap.max_send_sge < 2 || cap.max_recv_sge < 3 ||
		   cap.max_inline_data < 64 ||
		   !is_power_of_2(cap.max_send_wr + 1) ||
		   !is_power_of_2(cap.max_recv_wr + 1) || qp->qp_num < 2,
		   "QPN %u, caps wr %u/%u sge %u/%u inline %u for 10/5 2/3 64",
		   qp->qp_num, cap.max_send_wr, cap.max_recv_wr,
		   cap.max_send_sge, cap.max_recv_sge, cap.max_inline_data))
		goto out;
	err = ib_query_qp(qp, &attr, IB_QP_STATE | IB_QP_CAP, &init);
	if (kv_bad(c, err || attr.qp_state != IB_QPS_RESET ||
		   memcmp(&init.cap, &cap, sizeof(cap)),
		   "query after create: %d, state %d, caps wr %u/%u", err,
		   attr.qp_state, init.cap.max_send_wr, init.cap.max_recv_wr))
		goto out;
	/* RESET -> RTR skips INIT (IBA 10.3.1): refused, nothing changes */
	err = kv_qp_step(c, qp, IB_QPS_RTR);
	if (kv_bad(c, err != -EINVAL || kv_qp_state(qp) != IB_QPS_RESET,
		   "RESET->RTR: %d, state %d", err, kv_qp_state(qp)) ||
	    !kv_qp_to_rts(c, qp))
		goto out;
	err = ib_query_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_AV |
			  IB_QP_DEST_QPN | IB_QP_PATH_MTU | IB_QP_RQ_PSN, &init);
	if (kv_bad(c, err || attr.sq_psn != KV_SQ_PSN,
		   "query in RTS: %d, sq_psn %#x", err, attr.sq_psn) ||
	    type != IB_QPT_RC)
		goto out;
	grh = rdma_ah_read_grh(&attr.ah_attr);
	kv_bad(c, attr.dest_qp_num != KV_DEST_QPN || attr.rq_psn != KV_RQ_PSN ||
	       attr.path_mtu != IB_MTU_1024 ||
	       !ether_addr_equal(attr.ah_attr.roce.dmac, c->peer_mac) ||
	       memcmp(&grh->dgid, &c->peer_gid, sizeof(c->peer_gid)),
	       "RTS query: dest_qpn %#x rq_psn %#x mtu %d dmac %pM dgid %pI6",
	       attr.dest_qp_num, attr.rq_psn, attr.path_mtu,
	       attr.ah_attr.roce.dmac, grh->dgid.raw);
out:
	kv_qp_destroy(c, qp);
	kv_cq_destroy(&kcq);
}

void kv_check_rc_create(struct kv_ctx *c)
{
	kv_check_qp_create(c, IB_QPT_RC);
}

void kv_check_ud_create(struct kv_ctx *c)
{
	kv_check_qp_create(c, IB_QPT_UD);
}

/* Receives flush in order on the move to ERR, and at once in ERR. */
void kv_check_recv_flush(struct kv_ctx *c)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = { .wr_id = 1 };
	struct kv_fix f;
	int err;

	if (!kv_fix_setup(c, &f, IB_QPT_RC, 32, 4, 8, false))
		goto out;
	err = ib_post_recv(f.qp, &wr, &bad);
	if (kv_bad(c, err != -EINVAL || bad != &wr,
		   "post_recv in RESET: %d", err) ||
	    !kv_qp_to_rts(c, f.qp))
		goto out;
	err = kv_post_recvs(f.qp, 100, 6);
	if (kv_bad(c, err, "post_recv in RTS: %d", err) ||
	    !kv_expect_empty(c, &f.kcq, "receives posted") ||
	    !kv_qp_to_err(c, f.qp) ||
	    !kv_expect_wcs(c, &f.kcq, f.qp, 100, 6, IB_WC_WR_FLUSH_ERR,
			   IB_WC_RECV))
		goto out;
	err = kv_post_recvs(f.qp, 200, 2);
	if (!kv_bad(c, err, "post_recv in ERR: %d", err))
		kv_expect_wcs(c, &f.kcq, f.qp, 200, 2, IB_WC_WR_FLUSH_ERR,
			      IB_WC_RECV);
out:
	kv_fix_teardown(c, &f);
}

/*
 * SENDs: refused in INIT; outstanding in RTS (on the wire to a peer that
 * does not exist, with an infinite ACK timeout, so neither an ACK nor
 * retry exhaustion can complete them); flush in order on ->ERR.
 */
void kv_check_send_flush(struct kv_ctx *c)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *wrs = NULL;
	struct kv_fix f;
	int err;

	if (!kv_fix_setup(c, &f, IB_QPT_RC, 32, 8, 1, false))
		goto out;
	wrs = kv_send_chain(300, 4);
	if (kv_bad(c, !wrs, "out of memory"))
		goto out;
	wrs[2].send_flags = 0;	/* flushed WQEs complete, signaled or not */
	err = kv_qp_step(c, f.qp, IB_QPS_INIT);
	if (kv_bad(c, err, "to INIT: %d", err))
		goto out;
	err = ib_post_send(f.qp, wrs, &bad);
	if (kv_bad(c, err != -EINVAL || bad != wrs,
		   "post_send in INIT: %d, bad_wr %s", err,
		   bad == wrs ? "first" : "wrong") ||
	    !kv_expect_empty(c, &f.kcq, "post_send in INIT"))
		goto out;
	err = kv_qp_step(c, f.qp, IB_QPS_RTR) ?:
	      kv_qp_step_timeout(c, f.qp, IB_QPS_RTS, 0) ?:
	      ib_post_send(f.qp, wrs, &bad);
	if (kv_bad(c, err, "to RTS and post_send: %d", err) ||
	    !kv_expect_empty(c, &f.kcq, "SENDs outstanding in RTS") ||
	    !kv_qp_to_err(c, f.qp))
		goto out;
	kv_expect_wcs(c, &f.kcq, f.qp, 300, 4, IB_WC_WR_FLUSH_ERR, IB_WC_SEND);
out:
	kfree(wrs);
	kv_fix_teardown(c, &f);
}

/* One WR more than the send queue holds: -ENOMEM at exactly that WR. */
void kv_check_sq_full(struct kv_ctx *c)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *wrs = NULL;
	struct kv_fix f;
	int depth, err;

	if (!kv_fix_setup(c, &f, IB_QPT_RC, 64, 4, 1, true))
		goto out;
	depth = f.cap.max_send_wr;
	wrs = kv_send_chain(400, depth + 1);
	if (kv_bad(c, !wrs || depth > f.kcq.cq->cqe,
		   "no memory, or a send queue of %d for a CQ of %d", depth,
		   f.kcq.cq->cqe))
		goto out;
	err = ib_post_send(f.qp, wrs, &bad);
	if (kv_bad(c, err != -ENOMEM || bad != &wrs[depth],
		   "%d WRs on a queue of %d: %d, bad_wr #%td", depth + 1, depth,
		   err, bad ? bad - wrs : -1) ||
	    !kv_qp_to_err(c, f.qp))
		goto out;
	kv_expect_wcs(c, &f.kcq, f.qp, 400, depth, IB_WC_WR_FLUSH_ERR,
		      IB_WC_SEND);
out:
	kfree(wrs);
	kv_fix_teardown(c, &f);
}

/* ---- checks: fast registration ------------------------------------------- */

/* An RC QP in RTS and two kmalloc'd pages, DMA-mapped. */
struct kv_frmr {
	struct kv_fix fix;
	void *buf[2];
	struct scatterlist sg[2];
	int nents;
};

static bool kv_frmr_setup(struct kv_ctx *c, struct kv_frmr *fr)
{
	int i;

	memset(fr, 0, sizeof(*fr));
	if (!kv_fix_setup(c, &fr->fix, IB_QPT_RC, 16, 8, 1, true))
		return false;
	sg_init_table(fr->sg, ARRAY_SIZE(fr->sg));
	for (i = 0; i < ARRAY_SIZE(fr->buf); i++) {
		/* kmalloc aligns power-of-two sizes to themselves */
		fr->buf[i] = kmalloc(PAGE_SIZE, GFP_KERNEL);
		if (kv_bad(c, !fr->buf[i], "out of memory"))
			return false;
		sg_set_buf(&fr->sg[i], fr->buf[i], PAGE_SIZE);
	}
	fr->nents = ib_dma_map_sg(c->dev, fr->sg, ARRAY_SIZE(fr->sg),
				  DMA_BIDIRECTIONAL);
	return !kv_bad(c, fr->nents != ARRAY_SIZE(fr->sg),
		       "ib_dma_map_sg: %d", fr->nents);
}

static void kv_frmr_teardown(struct kv_ctx *c, struct kv_frmr *fr)
{
	if (fr->nents > 0)
		ib_dma_unmap_sg(c->dev, fr->sg, ARRAY_SIZE(fr->sg),
				DMA_BIDIRECTIONAL);
	kfree(fr->buf[0]);
	kfree(fr->buf[1]);
	kv_fix_teardown(c, &fr->fix);
}

/* A fast-reg MR of @pd mapped over the pages, with a fresh key. */
static struct ib_mr *kv_frmr_alloc(struct kv_ctx *c, struct ib_pd *pd,
				   struct kv_frmr *fr)
{
	struct ib_mr *mr;
	int n;

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, ARRAY_SIZE(fr->sg));
	if (kv_bad(c, IS_ERR(mr), "ib_alloc_mr: %ld", PTR_ERR(mr)))
		return NULL;
	n = ib_map_mr_sg(mr, fr->sg, fr->nents, NULL, PAGE_SIZE);
	if (kv_bad(c, n != fr->nents || mr->length != 2 * PAGE_SIZE ||
		   mr->iova != sg_dma_address(&fr->sg[0]),
		   "ib_map_mr_sg: %d, length %llu, iova %s", n, mr->length,
		   mr->iova == sg_dma_address(&fr->sg[0]) ? "ok" : "wrong")) {
		ib_dereg_mr(mr);
		return NULL;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	return mr;
}

static int kv_post_reg(struct ib_qp *qp, struct ib_mr *mr, u64 wr_id,
		       struct ib_send_wr *next)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_reg_wr reg = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
			.next = next,
		},
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};

	return ib_post_send(qp, &reg.wr, &bad);
}

static int kv_post_local_inv(struct ib_qp *qp, u32 rkey, u64 wr_id)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};

	return ib_post_send(qp, &wr, &bad);
}

/* REG_MR, LOCAL_INV, REG_MR again with the next key: all succeed. */
void kv_check_fast_reg(struct kv_ctx *c)
{
	struct kv_frmr fr;
	struct kv_cq *kcq = &fr.fix.kcq;
	struct ib_mr *mr = NULL;
	int err;

	if (!kv_frmr_setup(c, &fr))
		goto out;
	mr = kv_frmr_alloc(c, c->pd, &fr);
	if (!mr)
		goto out;
	err = kv_post_reg(fr.fix.qp, mr, 500, NULL);
	if (kv_bad(c, err, "post REG_MR: %d", err) ||
	    !kv_expect_wcs(c, kcq, fr.fix.qp, 500, 1, IB_WC_SUCCESS,
			   IB_WC_REG_MR))
		goto out;
	err = kv_post_local_inv(fr.fix.qp, mr->rkey, 501);
	if (kv_bad(c, err, "post LOCAL_INV: %d", err) ||
	    !kv_expect_wcs(c, kcq, fr.fix.qp, 501, 1, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV))
		goto out;
	/* invalid again: it may be registered with the next key */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	err = kv_post_reg(fr.fix.qp, mr, 502, NULL);
	if (kv_bad(c, err, "second post REG_MR: %d", err) ||
	    !kv_expect_wcs(c, kcq, fr.fix.qp, 502, 1, IB_WC_SUCCESS,
			   IB_WC_REG_MR))
		goto out;
	kv_bad(c, kv_qp_state(fr.fix.qp) != IB_QPS_RTS, "QP in state %d",
	       kv_qp_state(fr.fix.qp));
out:
	if (mr)
		ib_dereg_mr(mr);
	kv_frmr_teardown(c, &fr);
}

/*
 * REG_MR of another PD's MR: a local protection error (the MR's PD must
 * be the QP's); the QP goes to ERR and the SEND behind it is flushed.
 */
void kv_check_fast_reg_pd(struct kv_ctx *c)
{
	struct ib_send_wr send = {
		.wr_id = 601, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct kv_frmr fr;
	struct kv_cq *kcq = &fr.fix.kcq;
	struct ib_pd *pd2 = NULL;
	struct ib_mr *mr = NULL;
	int err;

	if (!kv_frmr_setup(c, &fr))
		goto out;
	pd2 = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(pd2)) {
		kv_bad(c, true, "ib_alloc_pd: %ld", PTR_ERR(pd2));
		pd2 = NULL;
		goto out;
	}
	mr = kv_frmr_alloc(c, pd2, &fr);
	if (!mr)
		goto out;
	err = kv_post_reg(fr.fix.qp, mr, 600, &send);
	/* the opcode of a completion in error is undefined (IBA 11.4.2.1) */
	if (kv_bad(c, err, "post REG_MR + SEND: %d", err) ||
	    !kv_expect_wc_run(c, kcq, fr.fix.qp, 600, 1, IB_WC_LOC_PROT_ERR,
			      -1) ||
	    !kv_expect_wcs(c, kcq, fr.fix.qp, 601, 1, IB_WC_WR_FLUSH_ERR, -1))
		goto out;
	kv_bad(c, kv_qp_state(fr.fix.qp) != IB_QPS_ERR,
	       "QP in state %d, not ERR", kv_qp_state(fr.fix.qp));
out:
	if (mr)
		ib_dereg_mr(mr);
	if (pd2)
		ib_dealloc_pd(pd2);
	kv_frmr_teardown(c, &fr);
}
