// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for what a hostile peer, a careless ULP or a second user
 * thread can hand the driver: each case is a way in which memory outside
 * a registration was reached, a reference leaked, a QP was killed from
 * the wire or a CPU spun with interrupts off, and checks that it no
 * longer can.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_srq.h"
#include "obj/sroce_wqe.h"
#include "resp_fix.h"
#include "test_util.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_inbox.h"
#include "transport/sroce_wq.h"
#include "wire/sroce_pkt.h"

#define RW	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)

/* The next key of the object @key names (another low byte). */
static u32 next_variant(u32 key)
{
	return sroce_key_compose(key >> 8, (key & 0xff) + 1);
}

typedef enum sroce_resp_result (*resp_exec_fn)(struct sroce_qp *qp,
					       const struct sroce_qp_params *p,
					       struct sk_buff *skb,
					       const struct sroce_pkt *pkt);

/* Hand @skb, a packet of the fixture's QP, to a responder execution. */
static enum sroce_resp_result exec_pkt(struct sroce_tfix *f,
				       struct sk_buff *skb, resp_exec_fn exec)
{
	enum sroce_resp_result res;
	struct sroce_qp_params p;

	sroce_qp_params_get(f->qp, &p);
	res = exec(f->qp, &p, skb, sroce_skb_pkt(skb));
	consume_skb(skb);
	return res;
}

/* Hand @s to the RC responder's WRITE execution. */
static enum sroce_resp_result write_pkt(struct kunit *test,
					struct sroce_tfix *f,
					const struct sroce_tfix_step *s)
{
	return exec_pkt(f, sroce_tfix_skb(test, f, s), sroce_resp_write);
}

/* Hand @s to the RC responder's SEND execution. */
static enum sroce_resp_result send_pkt(struct kunit *test,
				       struct sroce_tfix *f,
				       const struct sroce_tfix_step *s)
{
	return exec_pkt(f, sroce_tfix_skb(test, f, s), sroce_resp_send);
}

/* Bytes [@from, @to) of @mem are all @val. */
static bool all_bytes(const u8 *mem, u32 from, u32 to, u8 val)
{
	for (; from < to; from++)
		if (mem[from] != val)
			return false;
	return true;
}

/* ---- atomics: the alignment of the kernel address ---------------------- */

/*
 * A ULP rebases a two-page FRMR's iova to 0x1004 after mapping it: the
 * 8-aligned iova 0x2000 then sits at kernel offset 0xffc of the first
 * page, and its 8 bytes end 4 bytes into whatever page follows that one
 * in memory. The atomic must be refused (IBA 9.4.5 alignment, checked where
 * the bytes are), and neither page touched.
 */
static void atomic_unaligned_kernel_address_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct scatterlist sg[2];
	struct page *page[2];
	struct ib_mr *ibmr;
	u64 orig = 0;
	int i, err;

	sroce_test_dev_init(test, &t);
	sg_init_table(sg, 2);
	for (i = 0; i < 2; i++) {
		page[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, page[i]);
		memset(page_address(page[i]), 0x11 * (i + 1), PAGE_SIZE);
		sg_set_page(&sg[i], page[i], PAGE_SIZE, 0);
		sg_dma_address(&sg[i]) = (uintptr_t)page_address(page[i]);
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	ibmr = sroce_alloc_mr(t.pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	ibmr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, sroce_map_mr_sg(ibmr, sg, 2, NULL), 2);
	ibmr->iova = 0x1004;
	ibmr->length = 2 * PAGE_SIZE - 4;
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(t.pd, ibmr, ibmr->lkey,
						RW | IB_ACCESS_REMOTE_ATOMIC),
			IB_WC_SUCCESS);

	err = sroce_mr_atomic(to_sroce_mr(ibmr), 0x2000, IB_OPCODE_RC_FETCH_ADD,
			      0, 1, &orig);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_TRUE(test, all_bytes(page_address(page[0]), 0, PAGE_SIZE,
					  0x11));
	KUNIT_EXPECT_TRUE(test, all_bytes(page_address(page[1]), 0, PAGE_SIZE,
					  0x22));

	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	for (i = 0; i < 2; i++)
		__free_page(page[i]);
	sroce_test_dev_check_empty(test, &t);
}

/* ---- fast registration: a map never changes a live registration ------- */

/*
 * map_mr_sg for the next I/O runs while the MR is still VALID under its
 * old key (iSER maps before its LOCAL_INV executes). A peer that still
 * holds the old key must reach the old pages, never the new ones; the
 * new pages take effect with the next IB_WR_REG_MR.
 */
static void frmr_map_keeps_live_pages_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	u8 data[64], *old_mem = page_address(f->fr_page), *new_mem;
	struct ib_mr *ibmr = f->fr_mr;
	struct scatterlist sg;
	struct sroce_mr *mr;
	struct page *next;
	u32 old_key = ibmr->rkey;
	int err;

	memset(data, 0x3c, sizeof(data));
	next = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, next);
	new_mem = page_address(next);
	memset(new_mem, 0x5a, PAGE_SIZE);
	sg_init_table(&sg, 1);
	sg_set_page(&sg, next, PAGE_SIZE, 0);
	sg_dma_address(&sg) = (uintptr_t)new_mem;
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, sroce_map_mr_sg(ibmr, &sg, 1, NULL), 1);

	/* The old key still names the old pages. */
	mr = sroce_rkey_get(f->t.sdev, old_key, f->t.pd, TFIX_QPN,
			    (uintptr_t)old_mem, sizeof(data),
			    IB_ACCESS_REMOTE_WRITE, &err);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, (uintptr_t)old_mem, data,
					    sizeof(data), SROCE_COPY_TO_MR), 0);
	sroce_mr_put(mr);
	KUNIT_EXPECT_TRUE(test, all_bytes(old_mem, 0, sizeof(data), 0x3c));
	KUNIT_EXPECT_TRUE(test, all_bytes(new_mem, 0, PAGE_SIZE, 0x5a));

	/* Invalidated and registered again: now the new pages. */
	KUNIT_ASSERT_EQ(test, sroce_key_invalidate(f->t.sdev, f->t.pd, old_key),
			IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(f->t.pd, ibmr,
						next_variant(old_key), RW),
			IB_WC_SUCCESS);
	mr = sroce_rkey_get(f->t.sdev, next_variant(old_key), f->t.pd,
			    TFIX_QPN, (uintptr_t)new_mem, sizeof(data),
			    IB_ACCESS_REMOTE_WRITE, &err);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	memset(data, 0x77, sizeof(data));
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, (uintptr_t)new_mem, data,
					    sizeof(data), SROCE_COPY_TO_MR), 0);
	sroce_mr_put(mr);
	KUNIT_EXPECT_TRUE(test, all_bytes(new_mem, 0, sizeof(data), 0x77));
	KUNIT_EXPECT_TRUE(test, all_bytes(old_mem, 0, sizeof(data), 0x3c));

	/* Put the fixture's page back before the fixture deregisters. */
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	f->fr_mr = NULL;
	__free_page(next);
}

/* ---- RDMA WRITE: references and keys across a message ----------------- */

/*
 * A WRITE with immediate that finds no receive WQE is answered with an
 * RNR NAK and sent again by the requester, from its first packet. No
 * round of that may leave a reference on the target MR behind: one leak
 * per RNR kept its pages pinned and made dereg, rdma link del and rmmod
 * wait for ever.
 */
static void write_imm_rnr_keeps_no_ref_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	struct sroce_tfix_step s = {
		IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 100, 1, 0, 600,
		K_BUF, 600,
	};
	struct sroce_mr *mr = to_sroce_mr(f->buf_mr);
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, write_pkt(test, f, &s), SROCE_RESP_RNR);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->ref), 1U);
	KUNIT_EXPECT_EQ(test, write_pkt(test, f, &s), SROCE_RESP_RNR);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->ref), 1U);

	sroce_tfix_post_recv(test, f, 0, false);
	KUNIT_EXPECT_EQ(test, write_pkt(test, f, &s), SROCE_RESP_OK);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->ref), 1U);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 600U);
	KUNIT_EXPECT_EQ(test, f->buf[TFIX_WOFF + 599],
			sroce_tfix_pattern(1, 599));
}

/*
 * The R_Key of a multi-packet WRITE is checked at its first packet and
 * must still hold at every later one: after the target FRMR was
 * invalidated and registered again under a new key, the rest of a WRITE
 * under the old key is refused (remote access error), not placed into
 * the new registration.
 */
static void write_rekeyed_mid_message_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	struct sroce_tfix_step first = {
		IB_OPCODE_RC_RDMA_WRITE_FIRST, 100, 1, 0, 1024, K_FR_HEAD, 3072,
	};
	struct sroce_tfix_step middle = {
		IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 101, 1, 1024, 1024,
	};
	const u8 *mem = page_address(f->fr_page);
	u32 key = f->fr_mr->rkey;

	KUNIT_ASSERT_EQ(test, write_pkt(test, f, &first), SROCE_RESP_OK);
	KUNIT_EXPECT_EQ(test, mem[1023], sroce_tfix_pattern(1, 1023));

	KUNIT_ASSERT_EQ(test, sroce_key_invalidate(f->t.sdev, f->t.pd, key),
			IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(f->t.pd, f->fr_mr,
						next_variant(key), RW),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, write_pkt(test, f, &middle),
			SROCE_RESP_NAK_ACCESS);
	KUNIT_EXPECT_TRUE(test, all_bytes(mem, 1024, PAGE_SIZE, TFIX_SENTINEL));
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(f->fr_mr)->ref), 1U);
}

/* ---- SEND with invalidate: the IETH's R_Key ---------------------------- */

/* A 100-byte SEND ONLY WITH INVALIDATE of @rkey at PSN @psn. */
static enum sroce_resp_result send_inv_pkt(struct kunit *test,
					   struct sroce_tfix *f, u32 psn,
					   u32 rkey)
{
	struct sroce_tfix_step s = {
		IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE, psn, 2, 0, 100,
	};
	struct sk_buff *skb = sroce_tfix_skb(test, f, &s);

	sroce_ieth_set_rkey(sroce_pkt_ieth(skb, sroce_skb_pkt(skb)), rkey);
	return exec_pkt(f, skb, sroce_resp_send);
}

/*
 * The R_Key a SEND asks the responder to invalidate is the requester's
 * to get right: one that names no MR of the PD is a remote invalid
 * request (NAK, the WQE completes with IB_WC_REM_INV_REQ_ERR), not a
 * local QP operation error with the SEND acknowledged. A valid one is
 * invalidated and reported in the completion.
 */
static void send_inv_bad_rkey_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	u32 good = f->fr_mr->rkey;
	struct ib_wc wc;

	sroce_tfix_post_recv(test, f, 0, false);
	sroce_tfix_post_recv(test, f, 1, false);
	KUNIT_EXPECT_EQ(test, send_inv_pkt(test, f, 100, next_variant(good)),
			SROCE_RESP_NAK_INVALID);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, TFIX_WR_ID(0));
	KUNIT_EXPECT_EQ(test, to_sroce_mr(f->fr_mr)->state, SROCE_MR_VALID);

	KUNIT_EXPECT_EQ(test, send_inv_pkt(test, f, 101, good), SROCE_RESP_OK);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, good);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100U);
	KUNIT_EXPECT_EQ(test, to_sroce_mr(f->fr_mr)->state, SROCE_MR_INVALID);
}

/* ---- lengths a requester must keep -------------------------------------- */

/*
 * Every packet of a message but its last carries exactly the path MTU,
 * and none carries more: a SEND FIRST or MIDDLE of
 * another size, or a SEND ONLY past the MTU, is an invalid request and
 * places nothing; so is a WRITE ONLY past the MTU, even one its RETH
 * announces. A WRITE may not be longer than the device's largest
 * message, whatever its MR would hold.
 */
static void rc_lengths_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	struct sroce_tfix_step first = { IB_OPCODE_RC_SEND_FIRST, 100, 1, 0, 1000 };
	struct sroce_tfix_step only = { IB_OPCODE_RC_SEND_ONLY, 100, 1, 0, 1100 };
	struct sroce_tfix_step middle = { IB_OPCODE_RC_SEND_MIDDLE, 101, 1, 1024, 1028 };
	struct sroce_tfix_step write = {
		IB_OPCODE_RC_RDMA_WRITE_FIRST, 100, 1, 0, 1024, K_BUF,
		SROCE_MAX_MSG_SIZE + 1,
	};
	struct sroce_tfix_step ok = { IB_OPCODE_RC_SEND_FIRST, 100, 1, 0, 1024 };
	struct sroce_tfix_step write_only = {
		IB_OPCODE_RC_RDMA_WRITE_ONLY, 100, 1, 0, 1100, K_BUF, 1100,
	};

	sroce_tfix_post_recv(test, f, 0, false);
	KUNIT_EXPECT_EQ(test, send_pkt(test, f, &first), SROCE_RESP_NAK_INVALID);
	KUNIT_EXPECT_EQ(test, send_pkt(test, f, &only), SROCE_RESP_NAK_INVALID);
	KUNIT_EXPECT_FALSE(test, f->qp->resp.has_rwqe);
	KUNIT_EXPECT_TRUE(test, all_bytes(f->buf, TFIX_RECV_OFF(0),
					  TFIX_RECV_OFF(0) + TFIX_RECV_LEN,
					  TFIX_SENTINEL));
	KUNIT_EXPECT_EQ(test, send_pkt(test, f, &ok), SROCE_RESP_OK);
	KUNIT_EXPECT_EQ(test, send_pkt(test, f, &middle), SROCE_RESP_NAK_INVALID);
	KUNIT_EXPECT_EQ(test, f->buf[TFIX_RECV_OFF(0) + 1024], TFIX_SENTINEL);
	KUNIT_EXPECT_EQ(test, write_pkt(test, f, &write), SROCE_RESP_NAK_INVALID);
	KUNIT_EXPECT_EQ(test, write_pkt(test, f, &write_only),
			SROCE_RESP_NAK_INVALID);
	KUNIT_EXPECT_TRUE(test, all_bytes(f->buf, TFIX_WOFF, TFIX_WOFF + 1024,
					  TFIX_SENTINEL));
}

/* ---- UD: a datagram longer than the receive buffer --------------------- */

/*
 * One datagram longer than the posted buffer, from anyone who knows the
 * Q_Key (for QP1, the well-known GSI Q_Key), used to take the QP to ERR
 * for good, and with QP1 all connection management. It is dropped and
 * counted instead (IBA 9.9.3 class D), and the receive WQE is kept for
 * the next datagram.
 */
static void ud_oversized_datagram_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_UD, 0, 0);
	struct sroce_tfix_step big = {
		IB_OPCODE_UD_SEND_ONLY, 0, 1, 0, TFIX_RECV_LEN - 40 + 1,
	};
	struct sroce_tfix_step small = { IB_OPCODE_UD_SEND_ONLY, 1, 2, 0, 100 };
	struct ib_wc wc;

	sroce_tfix_post_recv(test, f, 0, false);
	sroce_tfix_rx(test, f, &big);
	KUNIT_EXPECT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(test, sroce_qp_state(f->qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_DROPPED_UD_MSG), 1);
	KUNIT_EXPECT_EQ(test, sroce_queue_count(&f->qp->rq.queue), 1U);

	sroce_tfix_rx(test, f, &small);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)TFIX_WR_ID(0));
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40U + 100);
	KUNIT_EXPECT_EQ(test, f->buf[TFIX_RECV_OFF(0) + 40 + 99],
			sroce_tfix_pattern(2, 99));
	KUNIT_EXPECT_EQ(test, sroce_qp_state(f->qp), IB_QPS_RTS);
}

/* ---- SRQ: an invalid WQE is consumed, so it must complete ------------- */

static void tsrq_free(struct kunit_resource *res)
{
	struct sroce_srq *srq = res->data;

	sroce_queue_cleanup(&srq->queue);
}

/* A kernel SRQ of 4 WQEs of 2 SGEs, freed with the test. */
static struct sroce_srq *tsrq_init(struct kunit *test)
{
	struct sroce_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, srq);
	spin_lock_init(&srq->lock);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&srq->queue, SROCE_QUEUE_KERNEL, 4,
					       sroce_wqe_recv_size(2)), 0);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, tsrq_free,
							 GFP_KERNEL, srq));
	srq->max_sge = sroce_wqe_recv_caps(sroce_queue_elem_size(&srq->queue));
	return srq;
}

/* Post a slot as user space may write it: @num_sge SGEs of @len bytes. */
static void tsrq_post_raw(struct sroce_srq *srq, u64 wr_id, u32 num_sge, u32 len)
{
	struct rxe_recv_wqe *slot = sroce_queue_producer_slot(&srq->queue);
	u32 i;

	memset(slot, 0, sroce_queue_elem_size(&srq->queue));
	slot->wr_id = wr_id;
	slot->dma.num_sge = num_sge;
	for (i = 0; i < min(num_sge, srq->max_sge); i++)
		slot->dma.sge[i].length = len;
	sroce_queue_advance_producer(&srq->queue);
}

/*
 * An SRQ WQE the responder refuses (more SGEs than the SRQ holds, or
 * lengths whose sum passes 2^32) leaves the SRQ all the same. It used to
 * vanish: no completion ever gave its wr_id back (found by ringfuzz's
 * srq-wqe family). It completes with IB_WC_LOC_QP_OP_ERR on the QP that
 * took it, and the SEND is refused.
 */
static void srq_invalid_wqe_completes_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	struct sroce_tfix_step s = { IB_OPCODE_RC_SEND_ONLY, 100, 1, 0, 100 };
	struct sroce_srq *srq = tsrq_init(test);
	struct sroce_qp_params p;
	struct sk_buff *skb;
	struct ib_wc wc;
	int i;

	tsrq_post_raw(srq, 0x5151, srq->max_sge + 1, 16);
	tsrq_post_raw(srq, 0x5252, 2, 0x80000001);
	f->qp->srq = srq;
	for (i = 0; i < 2; i++) {
		skb = sroce_tfix_skb(test, f, &s);
		sroce_qp_params_get(f->qp, &p);
		KUNIT_EXPECT_EQ(test, sroce_resp_send(f->qp, &p, skb, sroce_skb_pkt(skb)),
				SROCE_RESP_NAK_OP);
		consume_skb(skb);
		KUNIT_EXPECT_EQ(test, sroce_queue_count(&srq->queue), (u32)(1 - i));
		KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 1);
		KUNIT_EXPECT_EQ(test, wc.wr_id, i ? 0x5252ULL : 0x5151ULL);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, &f->qp->ibqp);
		KUNIT_EXPECT_FALSE(test, f->qp->resp.has_rwqe);
	}
	KUNIT_EXPECT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 0);
	f->qp->srq = NULL;
}

/* ---- a flood: every inbox has a limit --------------------------------- */

/*
 * Requests queue for the responder's task, which a flood outruns: QP1
 * takes datagrams from anyone. Past SROCE_RESP_BACKLOG waiting packets,
 * more are dropped and counted, and the ones queued are kept.
 */
static void resp_backlog_bounded_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_UD, 0, 0);
	struct sroce_tfix_step s = { IB_OPCODE_UD_SEND_ONLY, 0, 1, 0, 8 };
	u32 i;

	for (i = 0; i < SROCE_RESP_BACKLOG + 10; i++)
		sroce_resp_queue(f->qp, sroce_tfix_skb(test, f, &s));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&f->qp->resp.rxq),
			(u32)SROCE_RESP_BACKLOG);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_DROPPED_BACKLOG),
			10);
	skb_queue_purge(&f->qp->resp.rxq);
}

/* ---- the completer: answers to PSNs never sent ------------------------ */

/* A plain ACK of @psn, through the receive path. */
static void ack_of(struct kunit *test, struct sroce_qp *qp, u32 psn)
{
	sroce_test_ack(test, qp, psn, SROCE_AETH_ACK, SROCE_AETH_CREDITS_INVALID);
}

/*
 * Every ACK names a PSN that was sent. One past &sroce_req.sent_psn is
 * forged (or of an earlier life of the QP): it must not complete the
 * WQEs it would cover, which were never sent, as successful.
 */
static void ghost_ack_ignored_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, 100, 7);
	sroce_test_claim_send(qp, 3);

	ack_of(test, qp, 102);		/* nothing sent */
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 0);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_DROPPED_UNSENT),
			1);

	WRITE_ONCE(qp->req.sent_psn, 101);	/* the first packet is out */
	ack_of(test, qp, 102);
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 0);
	ack_of(test, qp, 100);		/* a real ACK of it */
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(qp->comp.una_psn), 101);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_DROPPED_UNSENT),
			2);

	WRITE_ONCE(qp->req.sent_psn, 103);	/* all of it */
	ack_of(test, qp, 102);
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 1);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_DROPPED_UNSENT),
			2);
}

/* ---- rings: a producer index user space keeps moving ------------------ */

/*
 * deep: the writer has to catch up with the drop only once per ring.
 * The writer keeps the clocksource's time, not jiffies: the CPU looping
 * with interrupts off may be the one that advances jiffies.
 */
#define RACE_DEPTH	16384
#define RACE_TIME_NS	(2 * NSEC_PER_SEC)

/**
 * struct ring_race - a user thread that keeps a QP's rings non-empty
 * @qp: the QP whose SQ and RQ rings it writes
 * @started: it is running
 * @timed_out: it ran for RACE_TIME_NS without being stopped
 */
struct ring_race {
	struct sroce_qp *qp;
	bool started;
	bool timed_out;
};

static int ring_race_writer(void *arg)
{
	struct ring_race *r = arg;
	struct rxe_queue_buf *sq = r->qp->sq.queue.buf, *rq = r->qp->rq.queue.buf;
	u64 end = ktime_get_ns() + RACE_TIME_NS;

	WRITE_ONCE(r->started, true);
	while (!kthread_should_stop()) {
		if (ktime_get_ns() > end) {
			WRITE_ONCE(r->timed_out, true);
			break;
		}
		/* one behind the consumer: the ring looks full */
		WRITE_ONCE(sq->producer_index, READ_ONCE(sq->consumer_index) - 1);
		WRITE_ONCE(rq->producer_index, READ_ONCE(rq->consumer_index) - 1);
	}
	while (!kthread_should_stop())
		usleep_range(100, 200);
	return 0;
}

/*
 * Moving a user QP to RESET drops its WQEs with interrupts off. A second
 * user thread that keeps writing the producer index used to keep that
 * loop going for as long as it ran (a hard lockup). The drop must take
 * what the ring held when it started and return, whatever the thread
 * does meanwhile.
 */
static void ring_drop_bounded_test(struct kunit *test)
{
	struct ring_race r = {};
	struct task_struct *writer;
	struct sroce_qp *qp;
	unsigned int me;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&qp->sq.queue,
					       SROCE_QUEUE_FROM_USER,
					       RACE_DEPTH,
					       sizeof(struct rxe_send_wqe)), 0);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&qp->rq.queue,
					       SROCE_QUEUE_FROM_USER,
					       RACE_DEPTH, sroce_wqe_recv_size(1)),
			0);
	r.qp = qp;

	/* This thread on one CPU, the writer on another. */
	me = get_cpu();
	put_cpu();
	set_cpus_allowed_ptr(current, cpumask_of(me));
	writer = kthread_create(ring_race_writer, &r, "sroce-ring-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(writer));
	kthread_bind(writer, cpumask_any_but(cpu_online_mask, me));
	wake_up_process(writer);
	while (!READ_ONCE(r.started))
		usleep_range(100, 200);

	sroce_wq_reset(qp);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(r.timed_out),
			       "the drop ran as long as the writer did");

	kthread_stop(writer);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	sroce_queue_cleanup(&qp->rq.queue);
	sroce_queue_cleanup(&qp->sq.queue);
}

/* ---- the RQ flush: completion handlers run without the RQ's lock ------- */

/**
 * struct repost - a kernel ULP's receive handler that posts again
 * @test: the running test
 * @f: the fixture
 * @calls: handler calls
 * @reposts: receives it posted back; at most one
 */
struct repost {
	struct kunit *test;
	struct sroce_tfix *f;
	int calls;
	int reposts;
};

static void repost_handler(struct ib_cq *ibcq, void *ctx)
{
	struct repost *r = ctx;

	r->calls++;
	sroce_req_notify_cq(ibcq, IB_CQ_NEXT_COMP);
	if (r->reposts++)
		return;
	sroce_tfix_post_recv(r->test, r->f, 2, false);
}

/*
 * A QP in ERR flushes its receive WQEs into the CQ, whose handler may
 * post a receive to the same QP (ib_drain_rq() does, as do ULPs that
 * repost from their handler). The flush used to call the handler with
 * the RQ's lock held: that post deadlocked. Each flushed WQE completes
 * once, in order, the reposted one too.
 */
static void rq_flush_handler_reposts_test(struct kunit *test)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, 100, RW);
	struct repost r = { .test = test, .f = f };
	struct ib_wc wc[4];
	unsigned long flags;

	sroce_tfix_post_recv(test, f, 0, false);
	sroce_tfix_post_recv(test, f, 1, false);
	f->cq->ibcq.comp_handler = repost_handler;
	f->cq->ibcq.cq_context = &r;
	KUNIT_ASSERT_EQ(test, sroce_req_notify_cq(&f->cq->ibcq,
						  IB_CQ_NEXT_COMP), 0);
	spin_lock_irqsave(&f->qp->state_lock, flags);
	write_seqcount_begin(&f->qp->p_seq);
	f->qp->p.state = IB_QPS_ERR;
	write_seqcount_end(&f->qp->p_seq);
	spin_unlock_irqrestore(&f->qp->state_lock, flags);

	/* What the responder's task does in ERR, after sroce_wq_flush_rq(). */
	sroce_wq_flush_rq(f->qp);
	while (sroce_wq_flush_rq_batch(f->qp))
		;
	KUNIT_EXPECT_GE(test, r.calls, 1);
	KUNIT_EXPECT_GE(test, r.reposts, 1);
	/* The repost asked for one more flush. */
	while (sroce_wq_flush_rq_batch(f->qp))
		;
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 4, wc), 3);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, (u64)TFIX_WR_ID(0));
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, (u64)TFIX_WR_ID(1));
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, (u64)TFIX_WR_ID(2));
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc[2].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, sroce_queue_count(&f->qp->rq.queue), 0U);
	f->cq->ibcq.comp_handler = NULL;
}

static struct kunit_case sroce_abuse_test_cases[] = {
	KUNIT_CASE(atomic_unaligned_kernel_address_test),
	KUNIT_CASE(frmr_map_keeps_live_pages_test),
	KUNIT_CASE(write_imm_rnr_keeps_no_ref_test),
	KUNIT_CASE(write_rekeyed_mid_message_test),
	KUNIT_CASE(ud_oversized_datagram_test),
	KUNIT_CASE(srq_invalid_wqe_completes_test),
	KUNIT_CASE(resp_backlog_bounded_test),
	KUNIT_CASE(ring_drop_bounded_test),
	KUNIT_CASE(rq_flush_handler_reposts_test),
	KUNIT_CASE(ghost_ack_ignored_test),
	KUNIT_CASE(send_inv_bad_rkey_test),
	KUNIT_CASE(rc_lengths_test),
	{}
};

static struct kunit_suite sroce_abuse_test_suite = {
	.name = "sroce_abuse",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_abuse_test_cases,
};

kunit_test_suite(sroce_abuse_test_suite);
