// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel data-path test of sroce for the VM harness (scenarios/kverbs.sh).
 *
 * A kernel ULP's view of sroce: on load it takes two sroce devices (dev0,
 * dev1; the two ends of the scenario's veth pair), connects an RC QP on
 * each with ib_core's kernel API only, and moves data between them:
 *
 *   data-send-sges      the seed walkthrough: a 7,680-byte SEND gathered
 *                       from kmalloc'd 1 KiB + 512 B + 6 KiB buffers,
 *                       scattered into 2 KiB + 8 KiB receive buffers
 *   data-frmr-write-read  RDMA WRITE and READ through a fast-registered
 *                       MR (REG_MR) over four separate pages
 *   data-send-inv       SEND_WITH_INV invalidates the responder's rkey:
 *                       the receive completion says so, the next WRITE
 *                       with that rkey is a remote access error
 *   data-local-inv-rereg  LOCAL_INV, then REG_MR with the next key: the
 *                       new rkey works, the old one is refused
 *   data-flush-repost   a QP with receives goes to ERR and its CQ's
 *                       handler posts one more receive from inside the
 *                       flush (as ib_drain_rq() and reposting ULPs do):
 *                       no deadlock, every receive flushed once, in order
 *   data-sqd-mid-message  the QP goes to SQD while a 1 MiB SEND is on the
 *                       wire: that message is finished, the next one
 *                       waits, IB_EVENT_SQ_DRAINED comes once when the
 *                       first has completed, and back in RTS the second
 *                       goes; both arrive intact
 *
 * Buffers are DMA-mapped with ib_dma_* (sroce is a virtual-DMA device) and
 * used with the PD's local_dma_lkey. Every check builds its own pair of
 * QPs and tears it down, pass or fail, and prints
 *
 *   sroce-kverbs: ok <name>
 *   sroce-kverbs: FAIL <name>: <what differed>
 *
 * then "sroce-kverbs: N passed, N failed" (the prefix of kverbs.sh).
 *
 * The module is made of this file (parameters, the checks, the
 * ib_client) and kdata_fixture.c (the context, buffers, the QP pair, work
 * requests and completions).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) "sroce-kverbs: " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#include "kdata_fixture.h"

static char *dev0 = "sroce0";
module_param(dev0, charp, 0444);
MODULE_PARM_DESC(dev0, "the requester's ib_device (default sroce0)");

static char *dev1 = "sroce1";
module_param(dev1, charp, 0444);
MODULE_PARM_DESC(dev1, "the responder's ib_device (default sroce1)");

#define KD_SQD_LEN	(1024 * 1024)	/* 4,096 packets at path MTU 256 */
#define KD_SQD_NEXT	4096

/* The two devices, between the client's add and remove. */
static DEFINE_MUTEX(kd_mutex);
static struct ib_device *kd_dev[2];

/* ---- checks -------------------------------------------------------------- */

/*
 * The seed walkthrough in a kernel ULP: a 7,680-byte SEND gathered from
 * 1 KiB + 512 B + 6 KiB lands as 2 KiB + 5,632 B of 2 KiB + 8 KiB receive
 * buffers; the rest of the 8 KiB buffer stays untouched.
 */
static void kd_check_send_sges(struct kd_ctx *c)
{
	static const u32 gather[] = { 1024, 512, 6144 };
	static const u32 scatter[] = { 2048, 8192 };
	const struct ib_recv_wr *rbad = NULL;
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	struct kd_buf src[3] = {}, dst[2] = {};
	struct ib_sge ssge[3], rsge[2];
	struct ib_recv_wr rwr = { .wr_id = 20, .sg_list = rsge, .num_sge = 2 };
	struct ib_send_wr swr = {
		.wr_id = 10, .opcode = IB_WR_SEND, .sg_list = ssge,
		.num_sge = 3,
	};
	struct ib_wc wc;
	size_t off = 0;
	long d;
	int i, err;

	if (!kd_pair_up(c))
		goto out;
	for (i = 0; i < 3; i++) {
		if (!kd_buf_alloc(c, e0->dev, &src[i], gather[i]))
			goto out;
		kd_fill(src[i].va, gather[i], 1, off);
		off += gather[i];
		ssge[i] = kd_sge(e0, &src[i], gather[i]);
	}
	for (i = 0; i < 2; i++) {
		if (!kd_buf_alloc(c, e1->dev, &dst[i], scatter[i]))
			goto out;
		rsge[i] = kd_sge(e1, &dst[i], scatter[i]);
	}
	err = ib_post_recv(e1->qp, &rwr, &rbad);
	if (kd_bad(c, err, "ib_post_recv: %d", err) || !kd_post(c, e0, &swr) ||
	    !kd_expect(c, e0, 10, IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    !kd_expect(c, e1, 20, IB_WC_SUCCESS, IB_WC_RECV, &wc) ||
	    kd_bad(c, wc.byte_len != off || wc.qp != e1->qp,
		   "receive: byte_len %u, want %zu", wc.byte_len, off))
		goto out;
	d = kd_diff(dst[0].va, 2048, 1, 0);
	if (kd_bad(c, d >= 0, "2 KiB buffer differs at byte %ld", d))
		goto out;
	d = kd_diff(dst[1].va, off - 2048, 1, 2048);
	if (kd_bad(c, d >= 0, "8 KiB buffer differs at byte %ld", d))
		goto out;
	d = kd_diff_byte(dst[1].va + off - 2048, 8192 - (off - 2048),
			 KD_CANARY);
	kd_bad(c, d >= 0, "8 KiB buffer written past the message (+%ld)", d);
out:
	kd_pair_down(c);
	for (i = 0; i < 3; i++)
		kd_buf_free(e0->dev, &src[i]);
	for (i = 0; i < 2; i++)
		kd_buf_free(e1->dev, &dst[i]);
}

/*
 * RDMA WRITE into a fast-registered MR over four separate pages, at an
 * offset so that the data crosses every page boundary; the bytes around it
 * stay zero. Then an RDMA READ of the whole MR brings back what it holds.
 */
static void kd_check_frmr_write_read(struct kd_ctx *c)
{
	const size_t len = KD_PAGES * PAGE_SIZE - 100, at = 50;
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	struct kd_buf src = {}, back = {};
	struct kd_pages pg = {};
	struct ib_mr *mr = NULL;
	struct ib_wc wc;
	long d;

	if (!kd_pair_up(c) || !kd_pages_alloc(c, e1->dev, &pg) ||
	    !kd_buf_alloc(c, e0->dev, &src, len) ||
	    !kd_buf_alloc(c, e0->dev, &back, KD_PAGES * PAGE_SIZE))
		goto out;
	mr = kd_frmr(c, &pg);
	if (!mr || !kd_reg(c, mr, 30))
		goto out;
	kd_fill(src.va, len, 2, 0);
	if (!kd_rdma(c, IB_WR_RDMA_WRITE, &src, len, mr->iova + at, mr->rkey,
		     31) ||
	    !kd_expect(c, e0, 31, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc))
		goto out;
	d = kd_pages_diff(&pg, at, len, 2);
	if (kd_bad(c, d >= 0, "MR differs at byte %ld of the WRITE", d) ||
	    kd_bad(c, kd_pages_diff(&pg, 0, at, U32_MAX) >= 0 ||
		   kd_pages_diff(&pg, at + len, 50, U32_MAX) >= 0,
		   "the WRITE touched bytes around its range"))
		goto out;
	if (!kd_rdma(c, IB_WR_RDMA_READ, &back, KD_PAGES * PAGE_SIZE, mr->iova,
		     mr->rkey, 32) ||
	    !kd_expect(c, e0, 32, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc))
		goto out;
	d = kd_diff(back.va + at, len, 2, 0);
	kd_bad(c, d >= 0 || kd_diff_byte(back.va, at, 0) >= 0 ||
	       kd_diff_byte(back.va + at + len, 50, 0) >= 0,
	       "READ brought back other bytes (first at +%ld)", d);
out:
	if (mr)
		ib_dereg_mr(mr);
	kd_pair_down(c);
	kd_pages_free(e1->dev, &pg);
	kd_buf_free(e0->dev, &src);
	kd_buf_free(e0->dev, &back);
}

/*
 * SEND_WITH_INV carrying the responder's rkey: the receive completion has
 * IB_WC_WITH_INVALIDATE and the rkey, and the MR is invalid from then on:
 * an RDMA WRITE with the rkey is NAKed (remote access error) and the MR's
 * pages keep what they held.
 */
static void kd_check_send_inv(struct kd_ctx *c)
{
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	const struct ib_recv_wr *rbad = NULL;
	struct kd_buf msg = {}, rbuf = {};
	struct ib_sge ssge, rsge;
	struct ib_recv_wr rwr = { .wr_id = 41, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.wr_id = 40, .opcode = IB_WR_SEND_WITH_INV, .sg_list = &ssge,
		.num_sge = 1,
	};
	struct kd_pages pg = {};
	struct ib_mr *mr = NULL;
	struct ib_wc wc;
	int err;

	if (!kd_pair_up(c) || !kd_pages_alloc(c, e1->dev, &pg) ||
	    !kd_buf_alloc(c, e0->dev, &msg, 256) ||
	    !kd_buf_alloc(c, e1->dev, &rbuf, 256))
		goto out;
	mr = kd_frmr(c, &pg);
	if (!mr || !kd_reg(c, mr, 39))
		goto out;
	kd_fill(msg.va, 256, 3, 0);
	ssge = kd_sge(e0, &msg, 256);
	rsge = kd_sge(e1, &rbuf, 256);
	swr.ex.invalidate_rkey = mr->rkey;
	err = ib_post_recv(e1->qp, &rwr, &rbad);
	if (kd_bad(c, err, "ib_post_recv: %d", err) || !kd_post(c, e0, &swr) ||
	    !kd_expect(c, e0, 40, IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    !kd_expect(c, e1, 41, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	if (kd_bad(c, !(wc.wc_flags & IB_WC_WITH_INVALIDATE) ||
		   wc.ex.invalidate_rkey != mr->rkey || wc.byte_len != 256,
		   "receive: flags %#x rkey %#x (want %#x) byte_len %u",
		   wc.wc_flags, wc.ex.invalidate_rkey, mr->rkey, wc.byte_len) ||
	    kd_bad(c, kd_diff(rbuf.va, 256, 3, 0) >= 0, "received data differs"))
		goto out;
	if (!kd_rdma(c, IB_WR_RDMA_WRITE, &msg, 256, mr->iova, mr->rkey, 42) ||
	    !kd_expect(c, e0, 42, IB_WC_REM_ACCESS_ERR, 0, &wc))
		goto out;
	kd_bad(c, kd_pages_diff(&pg, 0, KD_PAGES * PAGE_SIZE, U32_MAX) >= 0,
	       "a WRITE through the invalidated rkey changed the MR");
out:
	if (mr)
		ib_dereg_mr(mr);
	kd_pair_down(c);
	kd_pages_free(e1->dev, &pg);
	kd_buf_free(e0->dev, &msg);
	kd_buf_free(e1->dev, &rbuf);
}

/*
 * LOCAL_INV, then REG_MR with the next key: a WRITE with the new rkey
 * lands, one with the old rkey is NAKed (remote access error).
 */
static void kd_check_local_inv_rereg(struct kd_ctx *c)
{
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	struct ib_send_wr inv = { .wr_id = 51, .opcode = IB_WR_LOCAL_INV };
	struct kd_pages pg = {};
	struct kd_buf src = {};
	struct ib_mr *mr = NULL;
	struct ib_wc wc;
	u32 old;
	long d;

	if (!kd_pair_up(c) || !kd_pages_alloc(c, e1->dev, &pg) ||
	    !kd_buf_alloc(c, e0->dev, &src, 3000))
		goto out;
	mr = kd_frmr(c, &pg);
	if (!mr || !kd_reg(c, mr, 50))
		goto out;
	old = mr->rkey;
	inv.ex.invalidate_rkey = old;
	if (!kd_post(c, e1, &inv) ||
	    !kd_expect(c, e1, 51, IB_WC_SUCCESS, IB_WC_LOCAL_INV, &wc))
		goto out;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	if (kd_bad(c, mr->rkey == old, "the key did not change") ||
	    !kd_reg(c, mr, 52))
		goto out;
	kd_fill(src.va, 3000, 4, 0);
	if (!kd_rdma(c, IB_WR_RDMA_WRITE, &src, 3000, mr->iova + PAGE_SIZE - 1000,
		     mr->rkey, 53) ||
	    !kd_expect(c, e0, 53, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc))
		goto out;
	d = kd_pages_diff(&pg, PAGE_SIZE - 1000, 3000, 4);
	if (kd_bad(c, d >= 0, "MR differs at byte %ld of the WRITE", d))
		goto out;
	if (!kd_rdma(c, IB_WR_RDMA_WRITE, &src, 16, mr->iova, old, 54) ||
	    !kd_expect(c, e0, 54, IB_WC_REM_ACCESS_ERR, 0, &wc))
		goto out;
	kd_bad(c, kd_pages_diff(&pg, 0, 16, U32_MAX) >= 0,
	       "a WRITE through the old rkey changed the MR");
out:
	if (mr)
		ib_dereg_mr(mr);
	kd_pair_down(c);
	kd_pages_free(e1->dev, &pg);
	kd_buf_free(e0->dev, &src);
}

/*
 * Receives 0 and 1 are posted, the CQ armed, the QP moved to ERR: the
 * flush completes them and the handler posts receive 2 from inside it.
 * Each must complete once, in order, flushed. A flush that called the
 * handler with the receive queue's lock held deadlocked on that post.
 */
static void kd_check_flush_repost(struct kd_ctx *c)
{
	struct kd_end *e = &c->end[1];
	struct kd_repost *r = &c->repost;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_sge sge[2];
	struct ib_recv_wr wr[2];
	struct kd_buf b = {};
	struct ib_wc wc;
	int i, err;

	if (!kd_pair_up(c) || !kd_buf_alloc(c, e->dev, &b, 3 * 256))
		goto out;
	for (i = 0; i < 2; i++) {
		sge[i] = kd_sge(e, &b, 256);
		sge[i].addr += i * 256;
		wr[i] = (struct ib_recv_wr){
			.wr_id = i, .sg_list = &sge[i], .num_sge = 1,
			.next = i ? NULL : &wr[1],
		};
	}
	memset(r, 0, sizeof(*r));
	r->sge = kd_sge(e, &b, 256);
	r->sge.addr += 2 * 256;
	r->wr = (struct ib_recv_wr){ .wr_id = 2, .sg_list = &r->sge,
				     .num_sge = 1 };
	err = ib_post_recv(e->qp, wr, NULL);
	if (kd_bad(c, err, "ib_post_recv: %d", err))
		goto out;
	WRITE_ONCE(e->repost, r);
	err = ib_req_notify_cq(e->cq, IB_CQ_NEXT_COMP);
	if (kd_bad(c, err < 0, "ib_req_notify_cq: %d", err))
		goto out;
	err = ib_modify_qp(e->qp, &a, IB_QP_STATE);
	if (kd_bad(c, err, "ib_modify_qp to ERR: %d", err))
		goto out;
	for (i = 0; i < 3; i++)
		if (!kd_expect(c, e, i, IB_WC_WR_FLUSH_ERR, 0, &wc))
			goto out;
	kd_bad(c, !r->calls || r->err, "handler: %d calls, post error %d",
	       r->calls, r->err);
out:
	kd_pair_down(c);
	kd_buf_free(e->dev, &b);
}

/* Wait until the first byte of @p is no longer the canary. */
static bool kd_wait_placed(struct kd_ctx *c, const u8 *p)
{
	unsigned long end = jiffies + msecs_to_jiffies(KD_TIMEOUT_MS);

	while (READ_ONCE(*p) == KD_CANARY && time_before(jiffies, end))
		usleep_range(50, 100);
	return !kd_bad(c, READ_ONCE(*p) == KD_CANARY,
		       "the first packet was never placed");
}

/* Wait for @e's first IB_EVENT_SQ_DRAINED. */
static bool kd_wait_drained(struct kd_ctx *c, struct kd_end *e)
{
	unsigned long end = jiffies + msecs_to_jiffies(KD_TIMEOUT_MS);

	while (!atomic_read(&e->drained) && time_before(jiffies, end))
		usleep_range(200, 500);
	return !kd_bad(c, !atomic_read(&e->drained), "no SQ_DRAINED event");
}

/* Both SENDs of data-sqd-mid-message, and their receives. */
static bool kd_sqd_post(struct kd_ctx *c, struct kd_buf *src,
			struct kd_buf *dst, struct ib_send_wr *swr)
{
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	static const u32 len[2] = { KD_SQD_LEN, KD_SQD_NEXT };
	struct ib_sge ssge[2], rsge[2];
	struct ib_recv_wr rwr[2];
	int i, err;

	for (i = 0; i < 2; i++) {
		kd_fill(src->va + i * KD_SQD_LEN, len[i], i, 0);
		ssge[i] = kd_sge(e0, src, len[i]);
		ssge[i].addr += i * KD_SQD_LEN;
		rsge[i] = kd_sge(e1, dst, len[i]);
		rsge[i].addr += i * KD_SQD_LEN;
		rwr[i] = (struct ib_recv_wr){
			.wr_id = 30 + i, .sg_list = &rsge[i], .num_sge = 1,
			.next = i ? NULL : &rwr[1],
		};
		swr[i] = (struct ib_send_wr){
			.wr_id = 40 + i, .opcode = IB_WR_SEND,
			.sg_list = &ssge[i], .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
			.next = i ? NULL : &swr[1],
		};
	}
	err = ib_post_recv(e1->qp, rwr, NULL);
	return !kd_bad(c, err, "ib_post_recv: %d", err) && kd_post(c, e0, swr);
}

/*
 * SQD while a message is on the wire (IBA 10.3.1): at path MTU 256 the
 * 1 MiB SEND is 4,096 packets, 32 send windows, so once its first packet
 * is placed most of it is still to go when the QP enters SQD. (At path
 * MTU 4096, 256 packets, it could be over, and the next SEND started,
 * before this thread woke up on one vCPU, once the requester sent its
 * packets in trains.) The requester must
 * finish it and not start the 4 KiB one; IB_EVENT_SQ_DRAINED comes when
 * nothing is outstanding, i.e. with the first SEND's completion in the CQ.
 * Back in RTS the second SEND goes. A requester that stopped mid-message
 * gave the next WQE the cut message's PSNs, and the responder NAKed it.
 */
static void kd_check_sqd_mid_message(struct kd_ctx *c)
{
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	struct ib_qp_attr a = { .qp_state = IB_QPS_SQD,
				.en_sqd_async_notify = 1 };
	struct kd_buf src = {}, dst = {};
	struct ib_send_wr swr[2];
	struct ib_wc wc[2];
	int n, err;
	long d;

	c->mtu = IB_MTU_256;
	if (!kd_pair_up(c) ||
	    !kd_buf_alloc(c, e0->dev, &src, KD_SQD_LEN + KD_SQD_NEXT) ||
	    !kd_buf_alloc(c, e1->dev, &dst, KD_SQD_LEN + KD_SQD_NEXT) ||
	    !kd_sqd_post(c, &src, &dst, swr) || !kd_wait_placed(c, dst.va))
		goto out;
	err = ib_modify_qp(e0->qp, &a, IB_QP_STATE | IB_QP_EN_SQD_ASYNC_NOTIFY);
	if (kd_bad(c, err, "ib_modify_qp to SQD: %d", err) ||
	    !kd_wait_drained(c, e0))
		goto out;
	n = ib_poll_cq(e0->cq, 2, wc);
	if (kd_bad(c, n != 1 || wc[0].wr_id != 40 || wc[0].status,
		   "at SQ_DRAINED: %d send completions (first: wr_id %llu, %s); want the 1 MiB SEND's alone",
		   n, n > 0 ? wc[0].wr_id : 0,
		   n > 0 ? ib_wc_status_msg(wc[0].status) : "-"))
		goto out;
	a.qp_state = IB_QPS_RTS;
	err = ib_modify_qp(e0->qp, &a, IB_QP_STATE);
	if (kd_bad(c, err, "ib_modify_qp back to RTS: %d", err) ||
	    !kd_expect(c, e0, 41, IB_WC_SUCCESS, IB_WC_SEND, wc) ||
	    !kd_expect(c, e1, 30, IB_WC_SUCCESS, IB_WC_RECV, wc) ||
	    kd_bad(c, wc[0].byte_len != KD_SQD_LEN, "1 MiB SEND: byte_len %u",
		   wc[0].byte_len) ||
	    !kd_expect(c, e1, 31, IB_WC_SUCCESS, IB_WC_RECV, wc) ||
	    kd_bad(c, wc[0].byte_len != KD_SQD_NEXT, "4 KiB SEND: byte_len %u",
		   wc[0].byte_len))
		goto out;
	d = kd_diff(dst.va, KD_SQD_LEN, 0, 0);
	if (kd_bad(c, d >= 0, "1 MiB SEND differs at byte %ld", d))
		goto out;
	d = kd_diff(dst.va + KD_SQD_LEN, KD_SQD_NEXT, 1, 0);
	if (kd_bad(c, d >= 0, "4 KiB SEND differs at byte %ld", d))
		goto out;
	kd_bad(c, atomic_read(&e0->drained) != 1, "%d SQ_DRAINED events",
	       atomic_read(&e0->drained));
out:
	kd_pair_down(c);
	c->mtu = 0;
	kd_buf_free(e0->dev, &src);
	kd_buf_free(e1->dev, &dst);
}

/* ---- running ------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*check)(struct kd_ctx *c);
} kd_checks[] = {
	{ "data-send-sges", kd_check_send_sges },
	{ "data-frmr-write-read", kd_check_frmr_write_read },
	{ "data-send-inv", kd_check_send_inv },
	{ "data-local-inv-rereg", kd_check_local_inv_rereg },
	{ "data-sqd-mid-message", kd_check_sqd_mid_message },
	{ "data-flush-repost", kd_check_flush_repost },
};

static void kd_run_all(void)
{
	static struct kd_ctx ctx;	/* kd_mutex serialises runs */
	struct kd_ctx *c = &ctx;
	int i;

	lockdep_assert_held(&kd_mutex);
	memset(c, 0, sizeof(*c));
	for (i = 0; i < 2; i++) {
		c->end[i].dev = kd_dev[i];
		if (!kd_end_address(c, &c->end[i])) {
			pr_info("FAIL data-setup: %s\n", c->why);
			c->failed++;
			goto out_summary;
		}
	}
	pr_info("data path %s (%pI6c) -> %s (%pI6c)\n",
		dev_name(&kd_dev[0]->dev), c->end[0].gid.raw,
		dev_name(&kd_dev[1]->dev), c->end[1].gid.raw);
	for (i = 0; i < ARRAY_SIZE(kd_checks); i++) {
		c->why[0] = '\0';
		kd_checks[i].check(c);
		if (c->why[0]) {
			pr_info("FAIL %s: %s\n", kd_checks[i].name, c->why);
			c->failed++;
		} else {
			pr_info("ok %s\n", kd_checks[i].name);
			c->passed++;
		}
	}
out_summary:
	pr_info("%u passed, %u failed\n", c->passed, c->failed);
}

static int kd_client_add(struct ib_device *dev)
{
	int i = !strcmp(dev_name(&dev->dev), dev0) ? 0 :
		!strcmp(dev_name(&dev->dev), dev1) ? 1 : -1;

	if (i < 0)
		return -EOPNOTSUPP;	/* not ours: no client data */
	mutex_lock(&kd_mutex);
	if (!kd_dev[i])
		kd_dev[i] = dev;
	mutex_unlock(&kd_mutex);
	return 0;
}

static void kd_client_remove(struct ib_device *dev, void *client_data)
{
	int i;

	mutex_lock(&kd_mutex);
	for (i = 0; i < 2; i++)
		if (kd_dev[i] == dev)
			kd_dev[i] = NULL;
	mutex_unlock(&kd_mutex);
}

static struct ib_client kd_client = {
	.name = "sroce_vm_kdata",
	.add = kd_client_add,
	.remove = kd_client_remove,
};

static int __init kd_init(void)
{
	int err;

	err = ib_register_client(&kd_client);
	if (err)
		return err;

	/* remove() waits for the mutex: the devices stay while we test */
	mutex_lock(&kd_mutex);
	if (kd_dev[0] && kd_dev[1]) {
		kd_run_all();
	} else {
		pr_info("FAIL data-setup: no ib_device %s and %s\n", dev0, dev1);
		pr_info("0 passed, 1 failed\n");
	}
	mutex_unlock(&kd_mutex);
	return 0;
}

static void __exit kd_exit(void)
{
	ib_unregister_client(&kd_client);
}

module_init(kd_init);
module_exit(kd_exit);
MODULE_DESCRIPTION("sroce VM test: a kernel ULP's data path between two sroce devices");
MODULE_LICENSE("GPL");
