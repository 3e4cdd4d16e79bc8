// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel-verbs test of sroce for the VM harness (scenarios/kverbs.sh).
 *
 * On load it registers an ib_client, takes the device named "devname"
 * (default sroce0; others are ignored) and runs its checks against it with
 * exported ib_core APIs only, as a kernel ULP would. No peer ever answers
 * (RC requests go on the wire to the fake peer), so every check lives on
 * what needs no response: QP creation and state changes, flushes, local
 * operations (fast registration and local invalidation), CQ arming and
 * overflow, SRQs, and AHs made in atomic context. Each check prints one line to the kernel log:
 *
 *   sroce-kverbs: ok <name>
 *   sroce-kverbs: FAIL <name>: <what differed>
 *
 * and the run ends with "sroce-kverbs: N passed, N failed". Every check
 * builds its own objects and destroys them all, pass or fail; polls are
 * bounded (KV_TIMEOUT_MS). The address of the fake peer (peer_ip,
 * peer_mac) must have a permanent neighbour entry: kernel QPs and AHs
 * take the destination MAC from their caller, so nothing is resolved.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) "sroce-kverbs: " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *devname = "sroce0";
module_param(devname, charp, 0444);
MODULE_PARM_DESC(devname, "the ib_device to test (default sroce0)");

static char *peer_ip = "10.0.0.9";
module_param(peer_ip, charp, 0444);
MODULE_PARM_DESC(peer_ip, "IPv4 address of the fake peer");

static char *peer_mac = "02:00:00:00:00:09";
module_param(peer_mac, charp, 0444);
MODULE_PARM_DESC(peer_mac, "MAC of the fake peer (a static neighbour)");

#define KV_PORT		1
#define KV_TIMEOUT_MS	2000
#define KV_SETTLE_MS	20
#define KV_QKEY		0x11111111
#define KV_SQ_PSN	0x1234
#define KV_RQ_PSN	0x5678
#define KV_DEST_QPN	0x123

/* The device under test, between the client's add and remove. */
static DEFINE_MUTEX(kv_mutex);
static struct ib_device *kv_dev;

/* The lock the atomic-context AH check holds. */
static DEFINE_SPINLOCK(kv_atomic_lock);

struct kv_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct rdma_ah_attr peer;
	u8 peer_mac[ETH_ALEN];
	union ib_gid peer_gid;
	u32 sgid_index;
	char why[192];
	unsigned int passed;
	unsigned int failed;
};

/* A CQ with counters of its handler calls. */
struct kv_cq {
	struct ib_cq *cq;
	atomic_t comps;
	atomic_t events;
	enum ib_event_type last_event;
	struct ib_cq *event_cq;
};

/* Counters of a QP's asynchronous events. */
struct kv_qp_events {
	atomic_t last_wqe;
	atomic_t other;
};

/* A CQ and a QP using it for both queues: what most checks test on. */
struct kv_fix {
	struct kv_cq kcq;
	struct ib_qp *qp;
	struct ib_qp_cap cap;
};

/*
 * Record the first difference of a check; returns @bad, so that a check
 * reads "if (kv_bad(c, cond, ...)) goto out;".
 */
static __printf(3, 4) bool kv_bad(struct kv_ctx *c, bool bad,
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

static void kv_run(struct kv_ctx *c, const char *name,
		   void (*check)(struct kv_ctx *c))
{
	c->why[0] = '\0';
	check(c);
	if (c->why[0]) {
		pr_info("FAIL %s: %s\n", name, c->why);
		c->failed++;
	} else {
		pr_info("ok %s\n", name);
		c->passed++;
	}
}

/* ---- CQs ----------------------------------------------------------------- */

static void kv_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kv_cq *kcq = ctx;

	atomic_inc(&kcq->comps);
}

static void kv_cq_event_handler(struct ib_event *ev, void *ctx)
{
	struct kv_cq *kcq = ctx;

	kcq->last_event = ev->event;
	kcq->event_cq = ev->element.cq;
	atomic_inc(&kcq->events);
}

/* A CQ of @cqe entries; kcq->cq is NULL on failure. */
static bool kv_cq_create(struct kv_ctx *c, struct kv_cq *kcq, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct ib_cq *cq;

	memset(kcq, 0, sizeof(*kcq));
	cq = ib_create_cq(c->dev, kv_comp_handler, kv_cq_event_handler, kcq,
			  &attr);
	if (kv_bad(c, IS_ERR(cq), "ib_create_cq(%d): %ld", cqe, PTR_ERR(cq)))
		return false;
	kcq->cq = cq;
	/* the depth is 2^n - 1 (librxe's ring) and at least what was asked */
	return !kv_bad(c, cq->cqe < cqe || !is_power_of_2(cq->cqe + 1),
		       "CQ of %d entries reports %d", cqe, cq->cqe);
}

static void kv_cq_destroy(struct kv_cq *kcq)
{
	if (kcq->cq)
		ib_destroy_cq(kcq->cq);
	kcq->cq = NULL;
}

/* Poll one completion, waiting up to KV_TIMEOUT_MS for it. */
static int kv_poll_one(struct kv_cq *kcq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(KV_TIMEOUT_MS);
	int n;

	for (;;) {
		n = ib_poll_cq(kcq->cq, 1, wc);
		if (n || time_after(jiffies, end))
			return n;
		usleep_range(1000, 2000);
	}
}

/* After a short wait, the CQ must hold no completion. */
static bool kv_expect_empty(struct kv_ctx *c, struct kv_cq *kcq,
			    const char *when)
{
	struct ib_wc wc = {};
	int n;

	msleep(KV_SETTLE_MS);
	n = ib_poll_cq(kcq->cq, 1, &wc);
	return !kv_bad(c, n, "%s: ib_poll_cq returned %d (wr_id %llu status %d)",
		       when, n, wc.wr_id, wc.status);
}

/*
 * Expect @n completions of @qp with wr_ids @first_id, @first_id + 1, ...,
 * all with @status and (unless @opcode is negative) @opcode.
 */
static bool kv_expect_wc_run(struct kv_ctx *c, struct kv_cq *kcq,
			     struct ib_qp *qp, u64 first_id, int n,
			     enum ib_wc_status status, int opcode)
{
	struct ib_wc wc;
	int i, got;

	for (i = 0; i < n; i++) {
		memset(&wc, 0, sizeof(wc));
		got = kv_poll_one(kcq, &wc);
		if (kv_bad(c, got != 1, "completion %d of %d: ib_poll_cq returned %d",
			   i + 1, n, got) ||
		    kv_bad(c, wc.wr_id != first_id + i || wc.status != status ||
			   wc.qp != qp || (opcode >= 0 && wc.opcode != opcode),
			   "completion %d: wr_id %llu status %d opcode %d qp %s; want %llu %d %d",
			   i + 1, wc.wr_id, wc.status, wc.opcode,
			   wc.qp == qp ? "ok" : "wrong", first_id + i, status,
			   opcode))
			return false;
	}
	return true;
}

/* The same, and then nothing more. */
static bool kv_expect_wcs(struct kv_ctx *c, struct kv_cq *kcq,
			  struct ib_qp *qp, u64 first_id, int n,
			  enum ib_wc_status status, int opcode)
{
	return kv_expect_wc_run(c, kcq, qp, first_id, n, status, opcode) &&
	       kv_expect_empty(c, kcq, "after the expected completions");
}

/* Wait until @cnt reaches @want, then make sure it went no further. */
static bool kv_expect_count(struct kv_ctx *c, atomic_t *cnt, int want,
			    const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(KV_TIMEOUT_MS);

	while (atomic_read(cnt) < want && !time_after(jiffies, end))
		usleep_range(1000, 2000);
	msleep(KV_SETTLE_MS);
	return !kv_bad(c, atomic_read(cnt) != want, "%s: %d calls, want %d",
		       what, atomic_read(cnt), want);
}

/* ---- QPs ----------------------------------------------------------------- */

static void kv_qp_event_handler(struct ib_event *ev, void *ctx)
{
	struct kv_qp_events *evs = ctx;

	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED)
		atomic_inc(&evs->last_wqe);
	else
		atomic_inc(&evs->other);
}

/* A QP of @type; @cap gets what it really has. NULL on failure. */
static struct ib_qp *kv_qp_create(struct kv_ctx *c, enum ib_qp_type type,
				  struct kv_cq *scq, struct kv_cq *rcq,
				  struct ib_srq *srq, struct ib_qp_cap *cap,
				  struct kv_qp_events *evs)
{
	struct ib_qp_init_attr init = {
		.qp_type = type,
		.send_cq = scq->cq,
		.recv_cq = rcq->cq,
		.srq = srq,
		.cap = *cap,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.event_handler = evs ? kv_qp_event_handler : NULL,
		.qp_context = evs,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(c->pd, &init);
	if (kv_bad(c, IS_ERR(qp), "ib_create_qp(type %d): %ld", type,
		   PTR_ERR(qp)))
		return NULL;
	*cap = init.cap;
	return qp;
}

static void kv_qp_destroy(struct kv_ctx *c, struct ib_qp *qp)
{
	int err;

	if (qp) {
		err = ib_destroy_qp(qp);
		kv_bad(c, err, "ib_destroy_qp: %d", err);
	}
}

static int kv_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/*
 * Move to @state with the attributes IBA 11.2.4.2 requires for the step;
 * @timeout is the Local ACK Timeout an RC QP gets in RTS (0: infinite).
 */
static int kv_qp_step_timeout(struct kv_ctx *c, struct ib_qp *qp,
			      enum ib_qp_state state, u8 timeout)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	struct ib_qp_attr attr = { .qp_state = state };
	int mask = IB_QP_STATE;

	if (state == IB_QPS_INIT) {
		attr.port_num = KV_PORT;
		attr.pkey_index = 0;
		attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ;
		attr.qkey = KV_QKEY;
		mask |= IB_QP_PORT | IB_QP_PKEY_INDEX |
			(rc ? IB_QP_ACCESS_FLAGS : IB_QP_QKEY);
	} else if (state == IB_QPS_RTR && rc) {
		attr.ah_attr = c->peer;
		attr.path_mtu = IB_MTU_1024;
		attr.dest_qp_num = KV_DEST_QPN;
		attr.rq_psn = KV_RQ_PSN;
		attr.max_dest_rd_atomic = 4;
		attr.min_rnr_timer = 12;
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
			IB_QP_MIN_RNR_TIMER;
	} else if (state == IB_QPS_RTS) {
		attr.sq_psn = KV_SQ_PSN;
		attr.timeout = timeout;
		attr.retry_cnt = 7;
		attr.rnr_retry = 7;
		attr.max_rd_atomic = 4;
		mask |= IB_QP_SQ_PSN;
		if (rc)
			mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;
	}
	return ib_modify_qp(qp, &attr, mask);
}

static int kv_qp_step(struct kv_ctx *c, struct ib_qp *qp,
		      enum ib_qp_state state)
{
	return kv_qp_step_timeout(c, qp, state, 14);
}

/* RESET -> INIT -> RTR -> RTS, checking the state after each step. */
static bool kv_qp_to_rts(struct kv_ctx *c, struct ib_qp *qp)
{
	enum ib_qp_state s;
	int err;

	for (s = IB_QPS_INIT; s <= IB_QPS_RTS; s++) {
		err = kv_qp_step(c, qp, s);
		if (kv_bad(c, err, "ib_modify_qp to state %d: %d", s, err) ||
		    kv_bad(c, kv_qp_state(qp) != s, "state %d after the move to %d",
			   kv_qp_state(qp), s))
			return false;
	}
	return true;
}

static bool kv_qp_to_err(struct kv_ctx *c, struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int err = ib_modify_qp(qp, &attr, IB_QP_STATE);

	return !kv_bad(c, err, "ib_modify_qp to ERR: %d", err);
}

static bool kv_fix_setup(struct kv_ctx *c, struct kv_fix *f,
			 enum ib_qp_type type, int cqe, u32 send_wr,
			 u32 recv_wr, bool to_rts)
{
	memset(f, 0, sizeof(*f));
	f->cap.max_send_wr = send_wr;
	f->cap.max_recv_wr = recv_wr;
	if (!kv_cq_create(c, &f->kcq, cqe))
		return false;
	f->qp = kv_qp_create(c, type, &f->kcq, &f->kcq, NULL, &f->cap, NULL);
	return f->qp && (!to_rts || kv_qp_to_rts(c, f->qp));
}

static void kv_fix_teardown(struct kv_ctx *c, struct kv_fix *f)
{
	kv_qp_destroy(c, f->qp);
	kv_cq_destroy(&f->kcq);
}

/* Post @n receives with wr_ids @first_id..; no SGEs (no data path yet). */
static int kv_post_recvs(struct ib_qp *qp, u64 first_id, int n)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_recv_wr wr = {};
	int i, err;

	for (i = 0; i < n; i++) {
		wr.wr_id = first_id + i;
		err = ib_post_recv(qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

/* A chain of @n signaled zero-length SENDs, wr_ids @first_id.. */
static struct ib_send_wr *kv_send_chain(u64 first_id, int n)
{
	struct ib_send_wr *wrs = kcalloc(n, sizeof(*wrs), GFP_KERNEL);
	int i;

	for (i = 0; wrs && i < n; i++) {
		wrs[i].wr_id = first_id + i;
		wrs[i].opcode = IB_WR_SEND;
		wrs[i].send_flags = IB_SEND_SIGNALED;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
	}
	return wrs;
}

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

static void kv_check_rc_create(struct kv_ctx *c)
{
	kv_check_qp_create(c, IB_QPT_RC);
}

static void kv_check_ud_create(struct kv_ctx *c)
{
	kv_check_qp_create(c, IB_QPT_UD);
}

/* Receives flush in order on the move to ERR, and at once in ERR. */
static void kv_check_recv_flush(struct kv_ctx *c)
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
static void kv_check_send_flush(struct kv_ctx *c)
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
static void kv_check_sq_full(struct kv_ctx *c)
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
static void kv_check_fast_reg(struct kv_ctx *c)
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
static void kv_check_fast_reg_pd(struct kv_ctx *c)
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

/* ---- checks: CQs, SRQs, AHs ---------------------------------------------- */

static bool kv_expect_notify(struct kv_ctx *c, struct kv_cq *kcq,
			     enum ib_cq_notify_flags flags, int want)
{
	int ret = ib_req_notify_cq(kcq->cq, flags);

	return !kv_bad(c, ret != want, "ib_req_notify_cq(%#x): %d, want %d",
		       flags, ret, want);
}

/* Arming: one handler call per arm, REPORT_MISSED_EVENTS, solicited arm. */
static void kv_check_cq_notify(struct kv_ctx *c)
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
static void kv_check_cq_overflow(struct kv_ctx *c)
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
static void kv_check_srq(struct kv_ctx *c)
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
static void kv_check_ah_atomic(struct kv_ctx *c)
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
static void kv_check_ud_send(struct kv_ctx *c)
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

/* ---- setup and the client ------------------------------------------------ */

/* The first RoCEv2 GID with an IPv4 address, and the fake peer's address. */
static int kv_setup_peer(struct kv_ctx *c)
{
	const struct ib_gid_attr *gattr;
	__be32 addr;
	u32 i;

	if (!in4_pton(peer_ip, -1, (u8 *)&addr, -1, NULL) ||
	    !mac_pton(peer_mac, c->peer_mac)) {
		pr_err("bad peer_ip or peer_mac\n");
		return -EINVAL;
	}
	ipv6_addr_set_v4mapped(addr, (struct in6_addr *)c->peer_gid.raw);

	for (i = 0; i < c->dev->port_data[KV_PORT].immutable.gid_tbl_len; i++) {
		gattr = rdma_get_gid_attr(c->dev, KV_PORT, i);
		if (IS_ERR(gattr))
			continue;
		if (gattr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)gattr->gid.raw)) {
			rdma_put_gid_attr(gattr);
			break;
		}
		rdma_put_gid_attr(gattr);
	}
	if (i == c->dev->port_data[KV_PORT].immutable.gid_tbl_len) {
		pr_err("no RoCEv2 IPv4 GID on %s\n", dev_name(&c->dev->dev));
		return -ENOENT;
	}
	c->sgid_index = i;

	memset(&c->peer, 0, sizeof(c->peer));
	c->peer.type = rdma_ah_find_type(c->dev, KV_PORT);
	rdma_ah_set_port_num(&c->peer, KV_PORT);
	rdma_ah_set_sl(&c->peer, 0);
	/* ib_core fills grh.sgid_attr from sgid_index for each use */
	rdma_ah_set_grh(&c->peer, &c->peer_gid, 0, c->sgid_index, 64, 0);
	memcpy(c->peer.roce.dmac, c->peer_mac, ETH_ALEN);
	return 0;
}

static const struct {
	const char *name;
	void (*check)(struct kv_ctx *c);
} kv_checks[] = {
	{ "rc-qp-create-to-rts", kv_check_rc_create },
	{ "ud-qp-create-to-rts", kv_check_ud_create },
	{ "recv-flush", kv_check_recv_flush },
	{ "send-flush", kv_check_send_flush },
	{ "sq-full", kv_check_sq_full },
	{ "fast-reg", kv_check_fast_reg },
	{ "fast-reg-wrong-pd", kv_check_fast_reg_pd },
	{ "cq-notify", kv_check_cq_notify },
	{ "cq-overflow", kv_check_cq_overflow },
	{ "srq", kv_check_srq },
	{ "ah-atomic", kv_check_ah_atomic },
	{ "ud-send", kv_check_ud_send },
};

static void kv_run_all(struct ib_device *dev)
{
	static struct kv_ctx ctx;	/* kv_mutex serialises runs */
	struct kv_ctx *c = &ctx;
	int i;

	lockdep_assert_held(&kv_mutex);
	memset(c, 0, sizeof(*c));
	c->dev = dev;
	if (kv_setup_peer(c)) {
		pr_info("FAIL setup: no address for the peer\n");
		c->failed++;
		goto out_summary;
	}
	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		pr_info("FAIL setup: ib_alloc_pd: %ld\n", PTR_ERR(c->pd));
		c->failed++;
		goto out_summary;
	}
	pr_info("testing %s, source GID index %u, peer %s %pM\n",
		dev_name(&dev->dev), c->sgid_index, peer_ip, c->peer_mac);
	for (i = 0; i < ARRAY_SIZE(kv_checks); i++)
		kv_run(c, kv_checks[i].name, kv_checks[i].check);
	ib_dealloc_pd(c->pd);

out_summary:
	pr_info("%u passed, %u failed\n", c->passed, c->failed);
}

static int kv_client_add(struct ib_device *dev)
{
	if (strcmp(dev_name(&dev->dev), devname))
		return -EOPNOTSUPP;	/* not ours: no client data */
	mutex_lock(&kv_mutex);
	if (!kv_dev)
		kv_dev = dev;
	mutex_unlock(&kv_mutex);
	return 0;
}

static void kv_client_remove(struct ib_device *dev, void *client_data)
{
	mutex_lock(&kv_mutex);
	if (kv_dev == dev)
		kv_dev = NULL;
	mutex_unlock(&kv_mutex);
}

static struct ib_client kv_client = {
	.name = "sroce_vm_kverbs",
	.add = kv_client_add,
	.remove = kv_client_remove,
};

static int __init kv_init(void)
{
	int err;

	err = ib_register_client(&kv_client);
	if (err)
		return err;

	/* remove() waits for the mutex: the device stays while we test */
	mutex_lock(&kv_mutex);
	if (kv_dev) {
		kv_run_all(kv_dev);
	} else {
		pr_info("FAIL setup: no ib_device named %s\n", devname);
		pr_info("0 passed, 1 failed\n");
	}
	mutex_unlock(&kv_mutex);
	return 0;
}

static void __exit kv_exit(void)
{
	ib_unregister_client(&kv_client);
}

module_init(kv_init);
module_exit(kv_exit);
MODULE_DESCRIPTION("sroce VM test: kernel verbs against an sroce device");
MODULE_LICENSE("GPL");
