// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receiving QP of the responder tests (resp_fix.h).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "core/sroce_task.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_wqe.h"
#include "resp_fix.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp_uc.h"
#include "transport/sroce_resp_ud.h"
#include "transport/sroce_wq.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

static int sroce_tfix_idle(void *arg)
{
	return 0;
}

/* Undo sroce_tfix_init(), whatever part of it was done. */
static void sroce_tfix_free(struct kunit_resource *res)
{
	struct sroce_tfix *f = res->data;
	struct sroce_qp *qp = f->qp;

	if (qp && f->tasks) {
		sroce_task_disable(&qp->req.task);
		sroce_task_disable(&qp->comp.task);
		sroce_task_disable(&qp->resp.task);
		sroce_task_cleanup(&qp->req.task);
		sroce_task_cleanup(&qp->comp.task);
		sroce_task_cleanup(&qp->resp.task);
	}
	if (qp) {
		sroce_key_cache_flush(&qp->resp.kc);
		sroce_route_flush(&qp->route);
	}
	if (f->fr_mr)
		sroce_dereg_mr(f->fr_mr, NULL);
	if (f->ro_mr)
		sroce_dereg_mr(f->ro_mr, NULL);
	if (f->buf_mr)
		sroce_dereg_mr(f->buf_mr, NULL);
	if (f->fr_page)
		__free_page(f->fr_page);
	if (f->rq_ring)
		sroce_queue_cleanup(&qp->rq.queue);
	if (f->cq_ring)
		sroce_queue_cleanup(&f->cq->queue);
	kfree(f->cq);
	kfree(qp);
}

static void sroce_tfix_queues(struct kunit *test, struct sroce_tfix *f)
{
	struct sroce_qp *qp = f->qp;
	struct sroce_cq *cq = f->cq;

	KUNIT_ASSERT_EQ(test, sroce_queue_init(&cq->queue, SROCE_QUEUE_KERNEL,
					       TFIX_CQ_DEPTH,
					       sizeof(union sroce_cqe)), 0);
	f->cq_ring = true;
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&qp->rq.queue,
					       SROCE_QUEUE_KERNEL, TFIX_RQ_DEPTH,
					       sroce_wqe_recv_size(2)), 0);
	f->rq_ring = true;
	qp->rq.max_sge = sroce_wqe_recv_caps(sroce_queue_elem_size(&qp->rq.queue));
	qp->rq.max_wr = sroce_queue_depth(&qp->rq.queue);
}

static void sroce_tfix_mrs(struct kunit *test, struct sroce_tfix *f)
{
	struct scatterlist sg;
	struct ib_mr *mr;

	mr = sroce_get_dma_mr(f->t.pd, IB_ACCESS_LOCAL_WRITE |
					IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	f->buf_mr = mr;
	mr = sroce_get_dma_mr(f->t.pd, IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	f->ro_mr = mr;

	f->fr_page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->fr_page);
	memset(page_address(f->fr_page), TFIX_SENTINEL, PAGE_SIZE);
	mr = sroce_alloc_mr(f->t.pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	f->fr_mr = mr;
	sg_init_table(&sg, 1);
	sg_set_page(&sg, f->fr_page, PAGE_SIZE, 0);
	sg_dma_address(&sg) = (uintptr_t)page_address(f->fr_page);
	sg_dma_len(&sg) = PAGE_SIZE;
	mr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, sroce_map_mr_sg(mr, &sg, 1, NULL), 1);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(f->t.pd, mr, mr->lkey,
						IB_ACCESS_LOCAL_WRITE |
						IB_ACCESS_REMOTE_WRITE),
			IB_WC_SUCCESS);
}

/**
 * sroce_tfix_init() - a receiving QP
 * @test: the running test; everything is freed with it
 * @type: IB_QPT_UC, IB_QPT_RC or IB_QPT_UD
 * @epsn: the responder's expected PSN
 * @access: the IB_ACCESS_REMOTE_* bits the QP allows its peer
 *
 * Context: process context; asserts (ends the test) on failure.
 * Return: the fixture, its QP in RTS with path MTU 1024.
 */
struct sroce_tfix *sroce_tfix_init(struct kunit *test, enum ib_qp_type type,
				   u32 epsn, u32 access)
{
	struct sroce_tfix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct sroce_qp *qp;

	KUNIT_ASSERT_NOT_NULL(test, f);
	sroce_test_dev_init(test, &f->t);
	sroce_test_dev_init_stats(test, &f->t);
	f->buf = kunit_kmalloc(test, TFIX_BUF_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->buf);
	memset(f->buf, TFIX_SENTINEL, TFIX_BUF_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, sroce_tfix_free,
							 GFP_KERNEL, f));

	f->qp = kzalloc(sizeof(*f->qp), GFP_KERNEL);
	f->cq = kzalloc(sizeof(*f->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->qp);
	KUNIT_ASSERT_NOT_NULL(test, f->cq);
	qp = f->qp;
	f->cq->ibcq.device = &f->t.sdev->ibdev;
	spin_lock_init(&f->cq->lock);
	qp->ibqp.device = &f->t.sdev->ibdev;
	qp->ibqp.pd = f->t.pd;
	qp->ibqp.qp_type = type;
	qp->ibqp.qp_num = TFIX_QPN;
	qp->ibqp.recv_cq = &f->cq->ibcq;
	qp->rcq = f->cq;
	spin_lock_init(&qp->state_lock);
	seqcount_spinlock_init(&qp->p_seq, &qp->state_lock);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	sroce_route_init(&qp->route);
	skb_queue_head_init(&qp->resp.rxq);
	sroce_key_cache_init(&qp->resp.kc);
	sroce_tfix_queues(test, f);
	sroce_task_init_exec(&qp->req.task, "test-req", sroce_tfix_idle, qp,
			     SROCE_TASK_WORKQUEUE);
	sroce_task_init_exec(&qp->comp.task, "test-comp", sroce_tfix_idle, qp,
			     SROCE_TASK_WORKQUEUE);
	sroce_task_init_exec(&qp->resp.task, "test-resp", sroce_tfix_idle, qp,
			     SROCE_TASK_WORKQUEUE);
	f->tasks = true;
	sroce_tfix_mrs(test, f);

	qp->p.state = IB_QPS_RTS;
	qp->p.path_mtu = IB_MTU_1024;
	qp->p.dest_qpn = TFIX_DEST_QPN;
	qp->p.access = access;
	qp->p.rq_psn = epsn;
	qp->resp.psn = epsn;
	return f;
}

/**
 * sroce_tfix_post_recv() - post receive WQE @k
 * @test: the running test
 * @f: the fixture
 * @k: 0, 1, ...: wr_id TFIX_WR_ID(@k), one SGE of TFIX_RECV_LEN bytes at
 *	TFIX_RECV_OFF(@k) in the buffer
 * @bad_lkey: name an lkey that does not exist instead
 */
void sroce_tfix_post_recv(struct kunit *test, struct sroce_tfix *f, u32 k,
			  bool bad_lkey)
{
	const struct ib_recv_wr *bad;
	struct ib_sge sge = {
		.addr = (uintptr_t)f->buf + TFIX_RECV_OFF(k),
		.length = TFIX_RECV_LEN,
		.lkey = f->buf_mr->lkey ^ (bad_lkey ? 0x00ffff00 : 0),
	};
	struct ib_recv_wr wr = {
		.wr_id = TFIX_WR_ID(k),
		.sg_list = &sge,
		.num_sge = 1,
	};

	KUNIT_ASSERT_EQ(test, sroce_post_recv(&f->qp->ibqp, &wr, &bad), 0);
}

static u32 sroce_tfix_rkey(const struct sroce_tfix *f, enum sroce_tfix_key key)
{
	switch (key) {
	case K_STALE:
		return f->buf_mr->rkey ^ 0x80;
	case K_NOREMOTE:
		return f->ro_mr->rkey;
	case K_FR_TAIL:
	case K_FR_HEAD:
		return f->fr_mr->rkey;
	default:
		return f->buf_mr->rkey;
	}
}

static u64 sroce_tfix_va(const struct sroce_tfix *f, enum sroce_tfix_key key)
{
	switch (key) {
	case K_FR_TAIL:
		return f->fr_mr->iova + PAGE_SIZE - 100;
	case K_FR_HEAD:
		return f->fr_mr->iova;
	case K_WRAP:
		return U64_MAX - 99;
	default:
		return (uintptr_t)f->buf + TFIX_WOFF;
	}
}

/* Add @len bytes of @src to @skb as a page fragment at an odd offset. */
static void sroce_tfix_add_frag(struct kunit *test, struct sk_buff *skb,
				const u8 *src, u32 len)
{
	struct page *page = alloc_page(GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_LE(test, len, (u32)PAGE_SIZE - 5);
	memcpy(page_address(page) + 5, src, len);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, 5, len,
			PAGE_SIZE);
}

/*
 * The packet @lin again, its headers in the head and its payload split
 * into two page fragments and a frame on the frag list. Consumes @lin.
 */
static struct sk_buff *sroce_tfix_nonlinear(struct kunit *test,
					    struct sk_buff *lin, u32 hdr_len)
{
	u32 len = lin->len - hdr_len, third = len / 3;
	const u8 *pay = lin->data + hdr_len;
	struct sk_buff *skb, *tail;

	skb = alloc_skb(sizeof(struct iphdr) + hdr_len, GFP_KERNEL);
	tail = alloc_skb(len - 2 * third, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_NOT_NULL(test, tail);
	skb_put_data(skb, skb_network_header(lin),
		     sizeof(struct iphdr) + hdr_len);
	skb_reset_network_header(skb);
	skb_pull(skb, sizeof(struct iphdr));
	memcpy(skb->cb, lin->cb, sizeof(skb->cb));
	sroce_tfix_add_frag(test, skb, pay, third);
	sroce_tfix_add_frag(test, skb, pay + third, third);
	skb_put_data(tail, pay + 2 * third, len - 2 * third);
	skb_shinfo(skb)->frag_list = tail;
	skb->len += tail->len;
	skb->data_len += tail->len;
	skb->truesize += tail->truesize;
	consume_skb(lin);
	return skb;
}

/**
 * sroce_tfix_skb() - a request packet as parsing leaves it
 * @test: the running test
 * @f: the fixture
 * @s: what the packet is
 *
 * The headers start at skb->data and the control block is filled in; a
 * zeroed IPv4 header sits in front of them, as the network header. With
 * @f->frags a payload of 3 bytes or more lies outside the head.
 *
 * Return: the skb; the caller consumes it.
 */
struct sk_buff *sroce_tfix_skb(struct kunit *test, const struct sroce_tfix *f,
			       const struct sroce_tfix_step *s)
{
	const struct sroce_opcode_info *info = sroce_opcode_lookup(s->op);
	struct sroce_pkt *pkt;
	struct sk_buff *skb;
	u32 hdr_len, i;
	u8 *data;

	KUNIT_ASSERT_NOT_NULL(test, info);
	hdr_len = sroce_opcode_hdr_len(info);
	skb = alloc_skb(sizeof(struct iphdr) + hdr_len + s->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_zero(skb, sizeof(struct iphdr));
	skb_reset_network_header(skb);
	skb_pull(skb, sizeof(struct iphdr));
	data = skb_put_zero(skb, hdr_len + s->len);
	sroce_bth_set_opcode(sroce_pkt_bth(skb), s->op);
	sroce_bth_set_destqp(sroce_pkt_bth(skb), TFIX_QPN);
	sroce_bth_set_psn(sroce_pkt_bth(skb), s->psn);
	for (i = 0; i < s->len; i++)
		data[hdr_len + i] = sroce_tfix_pattern(s->msg, s->off + i);

	pkt = sroce_skb_pkt(skb);
	memset(pkt, 0, sizeof(*pkt));
	pkt->info = info;
	pkt->opcode = s->op;
	pkt->psn = s->psn;
	pkt->qpn = TFIX_QPN;
	pkt->paylen = s->len;
	pkt->hdr_len = hdr_len;
	pkt->net = SROCE_PKT_IPV4;
	if (sroce_opcode_has_hdr(info, SROCE_HDR_RETH)) {
		struct sroce_reth *reth = sroce_pkt_reth(skb, pkt);

		sroce_reth_set_va(reth, sroce_tfix_va(f, s->key));
		sroce_reth_set_rkey(reth, sroce_tfix_rkey(f, s->key));
		sroce_reth_set_len(reth, s->dmalen);
	}
	if (sroce_opcode_has_imm(info))
		sroce_immdt_set_imm(sroce_pkt_immdt(skb, pkt),
				    cpu_to_be32(TFIX_IMM));
	if (f->frags && s->len >= 3)
		skb = sroce_tfix_nonlinear(test, skb, hdr_len);
	return skb;
}

/**
 * sroce_tfix_rx() - hand a packet to the responder, as its task does
 * @test: the running test
 * @f: the fixture, of a UC or UD QP
 * @s: the packet
 */
void sroce_tfix_rx(struct kunit *test, struct sroce_tfix *f,
		   const struct sroce_tfix_step *s)
{
	struct sk_buff *skb = sroce_tfix_skb(test, f, s);
	struct sroce_qp_params p;

	sroce_qp_params_get(f->qp, &p);
	if (f->qp->ibqp.qp_type == IB_QPT_UD)
		sroce_resp_ud_request(f->qp, &p, skb, sroce_skb_pkt(skb));
	else
		sroce_resp_uc_request(f->qp, &p, skb, sroce_skb_pkt(skb));
	consume_skb(skb);
}

/**
 * sroce_tfix_count() - a counter of the fixture's device
 * @f: the fixture
 * @c: the counter
 *
 * Return: its value.
 */
u64 sroce_tfix_count(struct sroce_tfix *f, enum sroce_counter c)
{
	return sroce_stats_read(f->t.sdev, c);
}
