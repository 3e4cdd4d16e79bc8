// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_vm_kverbs: the fixture of the checks. A check records its first
 * difference with kv_bad(); CQs count their handler calls; QPs are made
 * and moved through their states with the attributes the steps require;
 * the expectations poll with a bound (KV_TIMEOUT_MS) and then make sure
 * nothing more came (KV_SETTLE_MS).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kverbs_fixture.h"

/*
 * Record the first difference of a check; returns @bad, so that a check
 * reads "if (kv_bad(c, cond, ...)) goto out;".
 */
bool kv_bad(struct kv_ctx *c, bool bad,
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
bool kv_cq_create(struct kv_ctx *c, struct kv_cq *kcq, int cqe)
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

void kv_cq_destroy(struct kv_cq *kcq)
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
bool kv_expect_empty(struct kv_ctx *c, struct kv_cq *kcq,
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
bool kv_expect_wc_run(struct kv_ctx *c, struct kv_cq *kcq,
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
bool kv_expect_wcs(struct kv_ctx *c, struct kv_cq *kcq,
		   struct ib_qp *qp, u64 first_id, int n,
		   enum ib_wc_status status, int opcode)
{
	return kv_expect_wc_run(c, kcq, qp, first_id, n, status, opcode) &&
	       kv_expect_empty(c, kcq, "after the expected completions");
}

/* Wait until @cnt reaches @want, then make sure it went no further. */
bool kv_expect_count(struct kv_ctx *c, atomic_t *cnt, int want,
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
struct ib_qp *kv_qp_create(struct kv_ctx *c, enum ib_qp_type type,
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

void kv_qp_destroy(struct kv_ctx *c, struct ib_qp *qp)
{
	int err;

	if (qp) {
		err = ib_destroy_qp(qp);
		kv_bad(c, err, "ib_destroy_qp: %d", err);
	}
}

int kv_qp_state(struct ib_qp *qp)
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
int kv_qp_step_timeout(struct kv_ctx *c, struct ib_qp *qp,
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

int kv_qp_step(struct kv_ctx *c, struct ib_qp *qp,
	       enum ib_qp_state state)
{
	return kv_qp_step_timeout(c, qp, state, 14);
}

/* RESET -> INIT -> RTR -> RTS, checking the state after each step. */
bool kv_qp_to_rts(struct kv_ctx *c, struct ib_qp *qp)
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

bool kv_qp_to_err(struct kv_ctx *c, struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int err = ib_modify_qp(qp, &attr, IB_QP_STATE);

	return !kv_bad(c, err, "ib_modify_qp to ERR: %d", err);
}

bool kv_fix_setup(struct kv_ctx *c, struct kv_fix *f,
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

void kv_fix_teardown(struct kv_ctx *c, struct kv_fix *f)
{
	kv_qp_destroy(c, f->qp);
	kv_cq_destroy(&f->kcq);
}

/* Post @n receives with wr_ids @first_id..; no SGEs (no data path yet). */
int kv_post_recvs(struct ib_qp *qp, u64 first_id, int n)
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
struct ib_send_wr *kv_send_chain(u64 first_id, int n)
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
