// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for lending registered pages to outgoing packets
 * (sroce_mr_lend(), sroce_lend_data(), sroce_tx_lend()).
 *
 * What must hold: a lent range is described piece by piece, one page at
 * a time, each piece holding one page reference; memory whose lifetime a
 * page reference does not govern (slab, vmalloc) is never lent; every
 * way a lend can fail leaves no reference and the SGE cursor where it
 * was, so that the copy the requester falls back on starts from the same
 * place; and a packet keeps the pages it carries alive after the MR is
 * invalidated, deregistered and its pages freed by their owner (KASAN
 * reports the read below if it does not). The requester builds each
 * packet once: lent when the pages may be, copied otherwise, without a
 * packet allocated for the lend and dropped.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_pack.h>
#include <trace/events/skb.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "mem/sroce_copy.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"
#include "net/sroce_tx.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_wqe.h"
#include "test_util.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_payload.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_icrc.h"

static u8 pattern(u32 i)
{
	return (u8)(i * 29 + 3);
}

/* Fill bytes [@off, @off + @len) of @m with pattern(0), pattern(1), ... */
static void fill(struct sroce_test_mr *m, u32 off, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++, off++)
		*((u8 *)page_address(m->page[off / PAGE_SIZE]) +
		  off % PAGE_SIZE) = pattern(i);
}

static u64 va(struct sroce_test_mr *m, u32 off)
{
	return m->ibmr->iova + off;
}

/* A range across a page boundary: one piece per page, one ref each. */
static void lend_pieces_test(struct kunit *test)
{
	struct sroce_mr_frag frags[4];
	struct sroce_test_dev t;
	struct sroce_test_mr m;
	struct sroce_mr *mr;

	sroce_test_dev_init(test, &t);
	sroce_test_mr_create(test, t.pd, &m, 3 * PAGE_SIZE, 0);
	mr = to_sroce_mr(m.ibmr);

	KUNIT_ASSERT_EQ(test, sroce_mr_lend(mr, va(&m, PAGE_SIZE - 100),
					    PAGE_SIZE + 300, frags, 4), 3);
	KUNIT_EXPECT_PTR_EQ(test, frags[0].page, m.page[0]);
	KUNIT_EXPECT_EQ(test, frags[0].off, (u32)PAGE_SIZE - 100);
	KUNIT_EXPECT_EQ(test, frags[0].len, 100U);
	KUNIT_EXPECT_PTR_EQ(test, frags[1].page, m.page[1]);
	KUNIT_EXPECT_EQ(test, frags[1].off, 0U);
	KUNIT_EXPECT_EQ(test, frags[1].len, (u32)PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, frags[2].page, m.page[2]);
	KUNIT_EXPECT_EQ(test, frags[2].len, 200U);
	KUNIT_EXPECT_EQ(test, page_count(m.page[0]), 2);
	KUNIT_EXPECT_EQ(test, page_count(m.page[2]), 2);
	put_page(frags[0].page);
	put_page(frags[1].page);
	put_page(frags[2].page);

	/* too many pieces for the room: nothing lent, nothing held */
	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, va(&m, PAGE_SIZE - 100),
					    PAGE_SIZE + 300, frags, 2), 0);
	KUNIT_EXPECT_EQ(test, page_count(m.page[0]), 1);
	KUNIT_EXPECT_EQ(test, page_count(m.page[1]), 1);

	/* outside the MR, or empty */
	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, va(&m, 3 * PAGE_SIZE - 1), 2,
					    frags, 4), -EFAULT);
	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, va(&m, 0), 0, frags, 4),
			-EFAULT);
	/* invalidated: as a copy would be refused */
	KUNIT_ASSERT_EQ(test, sroce_key_invalidate(t.sdev, t.pd, mr->key),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, va(&m, 0), 8, frags, 4),
			-EACCES);
	KUNIT_EXPECT_EQ(test, page_count(m.page[0]), 1);
	sroce_test_mr_destroy(test, &m);
	sroce_test_dev_check_empty(test, &t);
}

/*
 * A DMA MR names kernel memory by address: ordinary pages are lent,
 * slab and vmalloc memory never are (0: the caller copies).
 */
static void lend_kernel_memory_test(struct kunit *test)
{
	struct page *page = alloc_page(GFP_KERNEL);
	void *slab = kmalloc(512, GFP_KERNEL);
	void *vmem = vmalloc(PAGE_SIZE);
	struct sroce_mr_frag frags[2];
	struct sroce_test_dev t;
	struct ib_mr *ibmr;
	struct sroce_mr *mr;

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_NOT_NULL(test, slab);
	KUNIT_ASSERT_NOT_NULL(test, vmem);
	sroce_test_dev_init(test, &t);
	ibmr = sroce_get_dma_mr(t.pd, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	mr = to_sroce_mr(ibmr);

	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, (uintptr_t)page_address(page) + 8,
					    64, frags, 2), 1);
	KUNIT_EXPECT_PTR_EQ(test, frags[0].page, page);
	KUNIT_EXPECT_EQ(test, frags[0].off, 8U);
	KUNIT_EXPECT_EQ(test, page_count(page), 2);
	put_page(frags[0].page);
	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, (uintptr_t)slab, 64, frags, 2),
			0);
	KUNIT_EXPECT_EQ(test, sroce_mr_lend(mr, (uintptr_t)vmem, 64, frags, 2),
			0);
	KUNIT_EXPECT_EQ(test, page_count(page), 1);

	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	sroce_test_dev_check_empty(test, &t);
	vfree(vmem);
	kfree(slab);
	__free_page(page);
}

struct lend_walk {
	struct sroce_test_dev t;
	struct sroce_test_mr m;
	struct rxe_sge sge[3];
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
	struct sroce_mr_frag frags[SROCE_TX_LEND_FRAGS];
};

/* SGEs of 1,000 bytes at the end of page 0, 3,000 in page 1, 500 in 2. */
static void walk_init(struct kunit *test, struct lend_walk *w)
{
	static const u32 off[] = { PAGE_SIZE - 1000, PAGE_SIZE + 8,
				   2 * PAGE_SIZE + 100 };
	static const u32 len[] = { 1000, 3000, 500 };
	unsigned int k;

	sroce_test_dev_init(test, &w->t);
	sroce_test_mr_create(test, w->t.pd, &w->m, 3 * PAGE_SIZE, 0);
	for (k = 0; k < 3; k++) {
		w->sge[k].addr = va(&w->m, off[k]);
		w->sge[k].length = len[k];
		w->sge[k].lkey = w->m.ibmr->lkey;
	}
	sroce_key_cache_init(&w->kc);
	sroce_cursor_init(&w->cur, 4500);
}

static int walk_lend(struct lend_walk *w, u32 len)
{
	return sroce_lend_data(w->t.sdev, w->t.pd, &w->kc, w->sge, 3, &w->cur,
			       len, w->frags, ARRAY_SIZE(w->frags));
}

static void walk_done(struct kunit *test, struct lend_walk *w)
{
	unsigned int i;

	sroce_key_cache_flush(&w->kc);
	for (i = 0; i < w->m.npages; i++)
		KUNIT_EXPECT_EQ(test, page_count(w->m.page[i]), 1);
	sroce_test_mr_destroy(test, &w->m);
	sroce_test_dev_check_empty(test, &w->t);
}

/* The pieces follow the SGEs; the cursor moves as a copy's would. */
static void lend_data_test(struct kunit *test)
{
	struct lend_walk w;
	int n, i;

	walk_init(test, &w);
	/* 1,000 from SGE 0, then 2,500 of SGE 1 */
	n = walk_lend(&w, 3500);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_PTR_EQ(test, w.frags[0].page, w.m.page[0]);
	KUNIT_EXPECT_EQ(test, w.frags[0].off, (u32)PAGE_SIZE - 1000);
	KUNIT_EXPECT_EQ(test, w.frags[0].len, 1000U);
	KUNIT_EXPECT_PTR_EQ(test, w.frags[1].page, w.m.page[1]);
	KUNIT_EXPECT_EQ(test, w.frags[1].off, 8U);
	KUNIT_EXPECT_EQ(test, w.frags[1].len, 2500U);
	KUNIT_EXPECT_EQ(test, w.cur.cur_sge, 1U);
	KUNIT_EXPECT_EQ(test, w.cur.sge_offset, 2500U);
	KUNIT_EXPECT_EQ(test, w.cur.resid, 1000U);
	for (i = 0; i < n; i++)
		put_page(w.frags[i].page);

	/* the rest: 500 of SGE 1 and all of SGE 2 */
	n = walk_lend(&w, 1000);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, w.frags[0].off, 8U + 2500);
	KUNIT_EXPECT_EQ(test, w.frags[1].off, 100U);
	KUNIT_EXPECT_EQ(test, w.cur.resid, 0U);
	for (i = 0; i < n; i++)
		put_page(w.frags[i].page);
	walk_done(test, &w);
}

/*
 * A bad lkey in the second SGE, or memory there that may not be lent,
 * fails the lend after the first SGE's pages were referenced: the
 * references are dropped and the cursor is back at the start.
 */
static void lend_data_fails_clean_test(struct kunit *test)
{
	void *slab = kmalloc(3000, GFP_KERNEL);
	struct ib_mr *dma;
	struct lend_walk w;
	u8 buf[16];

	KUNIT_ASSERT_NOT_NULL(test, slab);
	walk_init(test, &w);
	w.sge[1].lkey ^= 0x100;
	KUNIT_EXPECT_EQ(test, walk_lend(&w, 3500), -EINVAL);
	KUNIT_EXPECT_EQ(test, w.cur.cur_sge, 0U);
	KUNIT_EXPECT_EQ(test, w.cur.sge_offset, 0U);
	KUNIT_EXPECT_EQ(test, w.cur.resid, 4500U);
	KUNIT_EXPECT_EQ(test, page_count(w.m.page[0]), 1);

	dma = sroce_get_dma_mr(w.t.pd, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dma));
	w.sge[1].addr = (uintptr_t)slab;
	w.sge[1].lkey = dma->lkey;
	KUNIT_EXPECT_EQ(test, walk_lend(&w, 3500), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, w.cur.cur_sge, 0U);
	KUNIT_EXPECT_EQ(test, w.cur.resid, 4500U);
	KUNIT_EXPECT_EQ(test, page_count(w.m.page[0]), 1);
	/* and the copy that takes over gathers from the same place */
	KUNIT_EXPECT_EQ(test, sroce_copy_data(w.t.sdev, w.t.pd, &w.kc, w.sge, 3,
					      &w.cur, buf, sizeof(buf),
					      SROCE_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, w.cur.sge_offset, 16U);
	sroce_key_cache_flush(&w.kc);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(dma, NULL), 0);
	walk_done(test, &w);
	kfree(slab);
}

/*
 * A packet carrying lent pages outlives the MR: invalidated, deregistered
 * and its pages freed by their owner, the packet still reads the bytes
 * it was built from, and frees the pages with itself.
 */
static void lend_outlives_mr_test(struct kunit *test)
{
	const u32 off = 100, len = 4999;
	struct sroce_mr_frag frags[4];
	struct sroce_test_dev t;
	struct sroce_test_mr m;
	struct sk_buff *skb;
	u8 *got;
	int n;
	u32 i;

	got = kunit_kmalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, got);
	sroce_test_dev_init(test, &t);
	sroce_test_mr_create(test, t.pd, &m, 2 * PAGE_SIZE, 0);
	fill(&m, off, len);
	n = sroce_mr_lend(to_sroce_mr(m.ibmr), va(&m, off), len, frags, 4);
	KUNIT_ASSERT_EQ(test, n, 2);

	/* a bare BTH and the ICRC room, as sroce_tx_alloc() leaves them */
	skb = alloc_skb(SROCE_BTH_LEN + SROCE_ICRC_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_zero(skb, SROCE_BTH_LEN + SROCE_ICRC_LEN);
	KUNIT_ASSERT_EQ(test, sroce_tx_lend(skb, frags, n, len), 0);
	KUNIT_EXPECT_EQ(test, skb->len, SROCE_BTH_LEN + len +
			sroce_pad_count(len) + SROCE_ICRC_LEN);
	KUNIT_EXPECT_EQ(test, sroce_bth_pad((struct sroce_bth *)skb->data),
			sroce_pad_count(len));

	KUNIT_ASSERT_EQ(test, sroce_key_invalidate(t.sdev, t.pd,
						   m.ibmr->lkey),
			IB_WC_SUCCESS);
	sroce_test_mr_destroy(test, &m);	/* frees the owner's pages */
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, SROCE_BTH_LEN, got, len), 0);
	for (i = 0; i < len; i++)
		if (got[i] != pattern(i))
			break;
	KUNIT_EXPECT_EQ(test, i, len);
	/* the pad is zero, written only to the packet's own fragment */
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, SROCE_BTH_LEN + len, got,
					    sroce_pad_count(len) +
					    SROCE_ICRC_LEN), 0);
	for (i = 0; i < sroce_pad_count(len) + SROCE_ICRC_LEN; i++)
		KUNIT_EXPECT_EQ(test, got[i], 0);
	kfree_skb(skb);
	sroce_test_dev_check_empty(test, &t);
}

/* skbs freed with kfree_skb() by one task, seen by its tracepoint */
struct skb_drops {
	struct task_struct *task;
	atomic_t n;
};

static void count_drop(void *data, struct sk_buff *skb, void *location,
		       enum skb_drop_reason reason)
{
	struct skb_drops *d = data;

	if (current == d->task)
		atomic_inc(&d->n);
}

/* The requester's packet for the @len bytes under SGE 0 of slot 0. */
static struct sk_buff *req_pkt(struct kunit *test, struct sroce_qp *qp,
			       u64 addr, u32 lkey, u32 len)
{
	struct rxe_send_wqe *slot = sroce_queue_slot(&qp->sq.queue, 0);
	struct sroce_send_ctx *ctx = &qp->req.ctx[0];
	struct sroce_req_pkt pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY, .paylen = len,
		.first = true, .last = true,
	};
	struct sroce_req_hdr h = { .opcode = IB_OPCODE_RC_SEND_ONLY };
	struct sroce_qp_params p = { .dest_qpn = 0x11 };

	p.av.network_type = RDMA_NETWORK_IPV4;
	slot->dma.sge[0].addr = addr;
	slot->dma.sge[0].length = len;
	slot->dma.sge[0].lkey = lkey;
	memset(ctx, 0, sizeof(*ctx));
	ctx->wqe.opcode = IB_WR_SEND;
	ctx->wqe.num_sge = 1;
	ctx->wqe.length = len;
	qp->req.cur_idx = 0;
	sroce_cursor_init(&qp->req.cur, len);
	return sroce_req_pkt_alloc(qp, &p, ctx, &pkt, &h);
}

/* Its payload is @len bytes of pattern(0), pattern(1), ... */
static void expect_payload(struct kunit *test, struct sk_buff *skb, u32 len)
{
	u8 *got = kunit_kmalloc(test, len, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, SROCE_BTH_LEN, got, len), 0);
	for (i = 0; i < len; i++)
		if (got[i] != pattern(i))
			break;
	KUNIT_EXPECT_EQ(test, i, len);
}

/*
 * A payload big enough to lend: from registered pages it is lent, from
 * slab memory under a DMA MR it is copied; either way the packet is the
 * only one allocated (none is dropped), the cursor is past the payload,
 * and sent_lent counts the lent packet alone.
 */
static void req_pkt_lend_or_copy_test(struct kunit *test)
{
	const u32 len = SROCE_TX_LEND_MIN + 1000;
	struct skb_drops drops = { .task = current };
	struct sroce_test_dev t;
	struct sroce_test_mr m;
	struct net_device *ndev;
	struct sk_buff *skb;
	struct sroce_qp *qp;
	struct ib_mr *dma;
	u8 *slab;
	u32 i;

	slab = kunit_kmalloc(test, len, GFP_KERNEL);
	ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slab);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	for (i = 0; i < len; i++)
		slab[i] = pattern(i);
	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	ndev->hard_header_len = ETH_HLEN;
	t.sdev->ndev = ndev;
	qp = sroce_test_comp_qp(test, &t, 4, 0, 7);
	sroce_key_cache_init(&qp->req.kc);
	sroce_test_mr_create(test, t.pd, &m, 2 * PAGE_SIZE, 0);
	fill(&m, 100, len);
	dma = sroce_get_dma_mr(t.pd, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dma));
	KUNIT_ASSERT_EQ(test, register_trace_kfree_skb(count_drop, &drops), 0);

	skb = req_pkt(test, qp, va(&m, 100), m.ibmr->lkey, len);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(skb));
	KUNIT_EXPECT_GT(test, skb_shinfo(skb)->nr_frags, 0);
	KUNIT_EXPECT_EQ(test, qp->req.cur.resid, 0U);
	expect_payload(test, skb, len);
	consume_skb(skb);

	skb = req_pkt(test, qp, (uintptr_t)slab, dma->lkey, len);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(skb));
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 0);
	KUNIT_EXPECT_EQ(test, qp->req.cur.resid, 0U);
	expect_payload(test, skb, len);
	consume_skb(skb);

	unregister_trace_kfree_skb(count_drop, &drops);
	tracepoint_synchronize_unregister();
	KUNIT_EXPECT_EQ(test, atomic_read(&drops.n), 0);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_SENT_LENT), 1);
	sroce_key_cache_flush(&qp->req.kc);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(dma, NULL), 0);
	sroce_test_mr_destroy(test, &m);
	sroce_test_dev_check_empty(test, &t);
}

/* Lent from 2 KiB a packet, from 1 KiB when it stays in this host. */
static void lend_threshold_test(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, sroce_tx_lends(SROCE_TX_LEND_MIN - 1, false));
	KUNIT_EXPECT_TRUE(test, sroce_tx_lends(SROCE_TX_LEND_MIN, false));
	KUNIT_EXPECT_FALSE(test, sroce_tx_lends(1024, false));
	KUNIT_EXPECT_FALSE(test,
			   sroce_tx_lends(SROCE_TX_LEND_LOCAL_MIN - 1, true));
	KUNIT_EXPECT_TRUE(test, sroce_tx_lends(SROCE_TX_LEND_LOCAL_MIN, true));
	KUNIT_EXPECT_TRUE(test, sroce_tx_lends(1024, true));
	KUNIT_EXPECT_TRUE(test, sroce_tx_lends(4096, true));
	KUNIT_EXPECT_FALSE(test, sroce_tx_lends(0, true));
}

static struct kunit_case sroce_lend_test_cases[] = {
	KUNIT_CASE(lend_threshold_test),
	KUNIT_CASE(lend_pieces_test),
	KUNIT_CASE(lend_kernel_memory_test),
	KUNIT_CASE(lend_data_test),
	KUNIT_CASE(lend_data_fails_clean_test),
	KUNIT_CASE(lend_outlives_mr_test),
	KUNIT_CASE(req_pkt_lend_or_copy_test),
	{}
};

static struct kunit_suite sroce_lend_test_suite = {
	.name = "sroce_lend",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_lend_test_cases,
};

kunit_test_suites(&sroce_lend_test_suite);
