// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_vm_kdata: the fixture of the checks. A check records its first
 * difference with kd_bad(); messages follow a pattern of their number
 * and offset; buffers are kmalloc'd and pages allocated, both DMA-mapped
 * with ib_dma_*; the pair is an RC QP on each device, connected; polls
 * are bounded (KD_TIMEOUT_MS).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kdata_fixture.h"

bool kd_bad(struct kd_ctx *c, bool bad,
	    const char *fmt, ...)
{
	va_list args;

	if (!bad || c->why[0])
		return bad;
	va_start(args, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, args);
	va_end(args);
	return true;
}

/* The byte at offset @off of message @msg. */
static u8 kd_pattern(unsigned int msg, size_t off)
{
	return (u8)(off * 7 + msg * 31 + (off >> 8));
}

void kd_fill(u8 *p, size_t len, unsigned int msg, size_t first)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = kd_pattern(msg, first + i);
}

/* The offset of the first byte that differs, or -1. */
long kd_diff(const u8 *p, size_t len, unsigned int msg, size_t first)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != kd_pattern(msg, first + i))
			return i;
	return -1;
}

long kd_diff_byte(const u8 *p, size_t len, u8 b)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != b)
			return i;
	return -1;
}

/* ---- buffers ------------------------------------------------------------- */

bool kd_buf_alloc(struct kd_ctx *c, struct ib_device *dev,
		  struct kd_buf *b, size_t len)
{
	b->len = len;
	b->va = kmalloc(len, GFP_KERNEL);
	if (kd_bad(c, !b->va, "out of memory"))
		return false;
	memset(b->va, KD_CANARY, len);
	b->dma = ib_dma_map_single(dev, b->va, len, DMA_BIDIRECTIONAL);
	if (kd_bad(c, ib_dma_mapping_error(dev, b->dma), "ib_dma_map_single")) {
		kfree(b->va);
		b->va = NULL;
		return false;
	}
	return true;
}

void kd_buf_free(struct ib_device *dev, struct kd_buf *b)
{
	if (!b->va)
		return;
	ib_dma_unmap_single(dev, b->dma, b->len, DMA_BIDIRECTIONAL);
	kfree(b->va);
	b->va = NULL;
}

struct ib_sge kd_sge(struct kd_end *e, struct kd_buf *b, u32 len)
{
	return (struct ib_sge){
		.addr = b->dma, .length = len, .lkey = e->pd->local_dma_lkey,
	};
}

bool kd_pages_alloc(struct kd_ctx *c, struct ib_device *dev,
		    struct kd_pages *pg)
{
	int i;

	sg_init_table(pg->sg, KD_PAGES);
	for (i = 0; i < KD_PAGES; i++) {
		pg->page[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (kd_bad(c, !pg->page[i], "out of memory"))
			return false;
		sg_set_page(&pg->sg[i], pg->page[i], PAGE_SIZE, 0);
	}
	pg->nents = ib_dma_map_sg(dev, pg->sg, KD_PAGES, DMA_BIDIRECTIONAL);
	return !kd_bad(c, pg->nents != KD_PAGES, "ib_dma_map_sg: %d",
		       pg->nents);
}

void kd_pages_free(struct ib_device *dev, struct kd_pages *pg)
{
	int i;

	if (pg->nents > 0)
		ib_dma_unmap_sg(dev, pg->sg, KD_PAGES, DMA_BIDIRECTIONAL);
	pg->nents = 0;
	for (i = 0; i < KD_PAGES; i++) {
		if (pg->page[i])
			__free_page(pg->page[i]);
		pg->page[i] = NULL;
	}
}

/* Compare byte @off..@off+@len of the pages with message @msg. */
long kd_pages_diff(struct kd_pages *pg, size_t off, size_t len,
		   unsigned int msg)
{
	size_t done = 0, n, in;
	long d;
	u8 *p;

	while (done < len) {
		in = (off + done) % PAGE_SIZE;
		n = min_t(size_t, len - done, PAGE_SIZE - in);
		p = page_address(pg->page[(off + done) / PAGE_SIZE]);
		d = msg == U32_MAX ? kd_diff_byte(p + in, n, 0) :
				     kd_diff(p + in, n, msg, done);
		if (d >= 0)
			return done + d;
		done += n;
	}
	return -1;
}

/* ---- the QP pair --------------------------------------------------------- */

/*
 * Completion events: data-flush-repost asks for them, and so do checks
 * that wait for completions (e->comp_hook). The repost work re-arms and,
 * the first time, posts a receive to the QP whose flush is calling it.
 */
static void kd_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kd_end *e = ctx;
	void (*hook)(struct kd_end *e) = READ_ONCE(e->comp_hook);
	struct kd_repost *r = READ_ONCE(e->repost);

	if (hook)
		hook(e);
	if (!r)
		return;
	r->calls++;
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	if (r->reposts++)
		return;
	r->err = ib_post_recv(e->qp, &r->wr, NULL);
}

static void kd_qp_event(struct ib_event *ev, void *ctx)
{
	struct kd_end *e = ctx;

	if (ev->event == IB_EVENT_SQ_DRAINED)
		atomic_inc(&e->drained);
}

/* The end's first RoCEv2 GID with an IPv4 address, and its MAC. */
bool kd_end_address(struct kd_ctx *c, struct kd_end *e)
{
	const struct ib_gid_attr *gattr = NULL;
	struct net_device *ndev;
	u32 i, n = e->dev->port_data[KD_PORT].immutable.gid_tbl_len;

	for (i = 0; i < n; i++) {
		gattr = rdma_get_gid_attr(e->dev, KD_PORT, i);
		if (IS_ERR(gattr))
			continue;
		if (gattr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)gattr->gid.raw))
			break;
		rdma_put_gid_attr(gattr);
	}
	if (kd_bad(c, i == n, "no RoCEv2 IPv4 GID on %s",
		   dev_name(&e->dev->dev)))
		return false;
	e->sgid_index = i;
	e->gid = gattr->gid;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(gattr);
	if (!IS_ERR(ndev))
		ether_addr_copy(e->mac, ndev->dev_addr);
	rcu_read_unlock();
	rdma_put_gid_attr(gattr);
	return !kd_bad(c, IS_ERR(ndev), "no netdev for %s's GID",
		       dev_name(&e->dev->dev));
}

static bool kd_end_create(struct kd_ctx *c, struct kd_end *e)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 64 };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 4, .max_recv_sge = 4,
		},
	};

	e->pd = ib_alloc_pd(e->dev, 0);
	if (kd_bad(c, IS_ERR(e->pd), "ib_alloc_pd: %ld", PTR_ERR(e->pd))) {
		e->pd = NULL;
		return false;
	}
	e->cq = ib_create_cq(e->dev, kd_comp_handler, NULL, e, &cq_attr);
	if (kd_bad(c, IS_ERR(e->cq), "ib_create_cq: %ld", PTR_ERR(e->cq))) {
		e->cq = NULL;
		return false;
	}
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	init.event_handler = kd_qp_event;
	init.qp_context = e;
	atomic_set(&e->drained, 0);
	e->qp = ib_create_qp(e->pd, &init);
	if (kd_bad(c, IS_ERR(e->qp), "ib_create_qp: %ld", PTR_ERR(e->qp))) {
		e->qp = NULL;
		return false;
	}
	return true;
}

static void kd_end_destroy(struct kd_ctx *c, struct kd_end *e)
{
	int err;

	if (e->qp) {
		err = ib_destroy_qp(e->qp);
		kd_bad(c, err, "ib_destroy_qp: %d", err);
	}
	if (e->cq)
		ib_destroy_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	e->qp = NULL;
	e->cq = NULL;
	e->pd = NULL;
	e->repost = NULL;
	e->comp_hook = NULL;
}

/* RESET -> INIT -> RTR -> RTS, connected to @peer. */
static int kd_end_connect(struct kd_end *e, struct kd_end *peer, u32 sq_psn,
			  u32 rq_psn, enum ib_mtu mtu)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = KD_PORT,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ,
	};
	int err;

	err = ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_PORT |
			   IB_QP_PKEY_INDEX | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = mtu ?: IB_MTU_4096;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(e->dev, KD_PORT);
	rdma_ah_set_port_num(&a.ah_attr, KD_PORT);
	/* ib_core fills grh.sgid_attr from sgid_index for each use */
	rdma_ah_set_grh(&a.ah_attr, &peer->gid, 0, e->sgid_index, 64, 0);
	/* kernel callers give the resolved MAC */
	ether_addr_copy(a.ah_attr.roce.dmac, peer->mac);
	err = ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

bool kd_pair_up(struct kd_ctx *c)
{
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	int err;

	if (!kd_end_create(c, e0) || !kd_end_create(c, e1))
		return false;
	err = kd_end_connect(e0, e1, KD_PSN0, KD_PSN1, c->mtu);
	if (kd_bad(c, err, "connecting %s: %d", dev_name(&e0->dev->dev), err))
		return false;
	err = kd_end_connect(e1, e0, KD_PSN1, KD_PSN0, c->mtu);
	return !kd_bad(c, err, "connecting %s: %d", dev_name(&e1->dev->dev),
		       err);
}

void kd_pair_down(struct kd_ctx *c)
{
	kd_end_destroy(c, &c->end[0]);
	kd_end_destroy(c, &c->end[1]);
}

/* ---- work requests and completions --------------------------------------- */

/* One completion of @e's CQ, waiting up to KD_TIMEOUT_MS. */
static bool kd_poll(struct kd_ctx *c, struct kd_end *e, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(KD_TIMEOUT_MS);
	int n;

	memset(wc, 0, sizeof(*wc));
	for (;;) {
		n = ib_poll_cq(e->cq, 1, wc);
		if (n)
			break;
		if (time_after(jiffies, end))
			break;
		usleep_range(500, 1000);
	}
	return !kd_bad(c, n != 1, "%s: no completion (%d)",
		       dev_name(&e->dev->dev), n);
}

/* One completion of @e: @wr_id with @status and, on success, @opcode. */
bool kd_expect(struct kd_ctx *c, struct kd_end *e, u64 wr_id,
	       enum ib_wc_status status, enum ib_wc_opcode opcode,
	       struct ib_wc *wc)
{
	if (!kd_poll(c, e, wc))
		return false;
	return !kd_bad(c, wc->wr_id != wr_id || wc->status != status ||
		       (status == IB_WC_SUCCESS && wc->opcode != opcode),
		       "%s: completion wr_id %llu status %d (%s) opcode %d; want %llu %d %d",
		       dev_name(&e->dev->dev), wc->wr_id, wc->status,
		       ib_wc_status_msg(wc->status), wc->opcode, wr_id, status,
		       opcode);
}

bool kd_post(struct kd_ctx *c, struct kd_end *e, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad = NULL;
	int err;

	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(e->qp, wr, &bad);
	return !kd_bad(c, err, "ib_post_send(opcode %d): %d", wr->opcode, err);
}

/* An RDMA WRITE or READ of @b's first @len bytes at @raddr/@rkey. */
bool kd_rdma(struct kd_ctx *c, enum ib_wr_opcode op, struct kd_buf *b,
	     u32 len, u64 raddr, u32 rkey, u64 wr_id)
{
	struct ib_sge sge = kd_sge(&c->end[0], b, len);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return kd_post(c, &c->end[0], &wr.wr);
}

/* Register @mr (already mapped) on the responder's QP with its key. */
bool kd_reg(struct kd_ctx *c, struct ib_mr *mr, u64 wr_id)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR },
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ,
	};
	struct ib_wc wc;

	return kd_post(c, &c->end[1], &reg.wr) &&
	       kd_expect(c, &c->end[1], wr_id, IB_WC_SUCCESS, IB_WC_REG_MR,
			 &wc);
}

/* A fast-reg MR of the responder's PD over @pg, with a fresh key. */
struct ib_mr *kd_frmr(struct kd_ctx *c, struct kd_pages *pg)
{
	struct ib_mr *mr;
	int n;

	mr = ib_alloc_mr(c->end[1].pd, IB_MR_TYPE_MEM_REG, KD_PAGES);
	if (kd_bad(c, IS_ERR(mr), "ib_alloc_mr: %ld", PTR_ERR(mr)))
		return NULL;
	n = ib_map_mr_sg(mr, pg->sg, pg->nents, NULL, PAGE_SIZE);
	if (kd_bad(c, n != pg->nents || mr->length != KD_PAGES * PAGE_SIZE,
		   "ib_map_mr_sg: %d, length %llu", n, mr->length)) {
		ib_dereg_mr(mr);
		return NULL;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	return mr;
}
