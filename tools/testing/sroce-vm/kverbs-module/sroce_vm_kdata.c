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
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) "sroce-kverbs: " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev0 = "sroce0";
module_param(dev0, charp, 0444);
MODULE_PARM_DESC(dev0, "the requester's ib_device (default sroce0)");

static char *dev1 = "sroce1";
module_param(dev1, charp, 0444);
MODULE_PARM_DESC(dev1, "the responder's ib_device (default sroce1)");

#define KD_PORT		1
#define KD_TIMEOUT_MS	3000
#define KD_PSN0		0x100
#define KD_PSN1		0x900000
#define KD_PAGES	4
#define KD_CANARY	0xa5
#define KD_SQD_LEN	(1024 * 1024)	/* 256 packets at path MTU 4096 */
#define KD_SQD_NEXT	4096

/* The two devices, between the client's add and remove. */
static DEFINE_MUTEX(kd_mutex);
static struct ib_device *kd_dev[2];

/* What the CQ handler of data-flush-repost does: one receive posted back. */
struct kd_repost {
	struct ib_recv_wr wr;
	struct ib_sge sge;
	int calls;
	int reposts;
	int err;
};

/* One end: its device, objects and address. */
struct kd_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 sgid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	struct kd_repost *repost;	/* the CQ handler's work, if any */
	atomic_t drained;		/* IB_EVENT_SQ_DRAINED events */
};

struct kd_ctx {
	struct kd_end end[2];		/* [0] requester, [1] responder */
	struct kd_repost repost;	/* outlives every CQ of a run */
	char why[192];
	unsigned int passed;
	unsigned int failed;
};

/* A kmalloc'd buffer and its DMA address. */
struct kd_buf {
	u8 *va;
	u64 dma;
	size_t len;
};

/* Pages for a fast-registered MR, DMA-mapped. */
struct kd_pages {
	struct page *page[KD_PAGES];
	struct scatterlist sg[KD_PAGES];
	int nents;
};

static __printf(3, 4) bool kd_bad(struct kd_ctx *c, bool bad,
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

static void kd_fill(u8 *p, size_t len, unsigned int msg, size_t first)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = kd_pattern(msg, first + i);
}

/* The offset of the first byte that differs, or -1. */
static long kd_diff(const u8 *p, size_t len, unsigned int msg, size_t first)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != kd_pattern(msg, first + i))
			return i;
	return -1;
}

static long kd_diff_byte(const u8 *p, size_t len, u8 b)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != b)
			return i;
	return -1;
}

/* ---- buffers ------------------------------------------------------------- */

static bool kd_buf_alloc(struct kd_ctx *c, struct ib_device *dev,
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

static void kd_buf_free(struct ib_device *dev, struct kd_buf *b)
{
	if (!b->va)
		return;
	ib_dma_unmap_single(dev, b->dma, b->len, DMA_BIDIRECTIONAL);
	kfree(b->va);
	b->va = NULL;
}

static struct ib_sge kd_sge(struct kd_end *e, struct kd_buf *b, u32 len)
{
	return (struct ib_sge){
		.addr = b->dma, .length = len, .lkey = e->pd->local_dma_lkey,
	};
}

static bool kd_pages_alloc(struct kd_ctx *c, struct ib_device *dev,
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

static void kd_pages_free(struct ib_device *dev, struct kd_pages *pg)
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
static long kd_pages_diff(struct kd_pages *pg, size_t off, size_t len,
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
 * Completion events: only data-flush-repost asks for them. Its handler
 * re-arms and, the first time, posts a receive to the QP whose flush is
 * calling it.
 */
static void kd_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kd_end *e = ctx;
	struct kd_repost *r = READ_ONCE(e->repost);

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
static bool kd_end_address(struct kd_ctx *c, struct kd_end *e)
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
}

/* RESET -> INIT -> RTR -> RTS, connected to @peer. */
static int kd_end_connect(struct kd_end *e, struct kd_end *peer, u32 sq_psn,
			  u32 rq_psn)
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
	a.path_mtu = IB_MTU_4096;
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

static bool kd_pair_up(struct kd_ctx *c)
{
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	int err;

	if (!kd_end_create(c, e0) || !kd_end_create(c, e1))
		return false;
	err = kd_end_connect(e0, e1, KD_PSN0, KD_PSN1);
	if (kd_bad(c, err, "connecting %s: %d", dev_name(&e0->dev->dev), err))
		return false;
	err = kd_end_connect(e1, e0, KD_PSN1, KD_PSN0);
	return !kd_bad(c, err, "connecting %s: %d", dev_name(&e1->dev->dev),
		       err);
}

static void kd_pair_down(struct kd_ctx *c)
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
static bool kd_expect(struct kd_ctx *c, struct kd_end *e, u64 wr_id,
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

static bool kd_post(struct kd_ctx *c, struct kd_end *e, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad = NULL;
	int err;

	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(e->qp, wr, &bad);
	return !kd_bad(c, err, "ib_post_send(opcode %d): %d", wr->opcode, err);
}

/* An RDMA WRITE or READ of @b's first @len bytes at @raddr/@rkey. */
static bool kd_rdma(struct kd_ctx *c, enum ib_wr_opcode op, struct kd_buf *b,
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
static bool kd_reg(struct kd_ctx *c, struct ib_mr *mr, u64 wr_id)
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
static struct ib_mr *kd_frmr(struct kd_ctx *c, struct kd_pages *pg)
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
 * SQD while a message is on the wire (IBA 10.3.1): the 1 MiB SEND is
 * 256 packets, twice the send window, so once its first packet is placed
 * most of it is still to go when the QP enters SQD. The requester must
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
