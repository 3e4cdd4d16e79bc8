// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel rate-limit test of sroce for the VM harness (scenarios/rate.sh).
 *
 * A kernel ULP limits a QP's send rate with IB_QP_RATE_LIMIT (kbit/s,
 * through ib_modify_qp()); sroce's gate (transport/sroce_rate.c) must then
 * let the QP's packets out at that rate. On load this module takes dev0
 * and dev1 (by default both sroce1: each QP's peer is on its own device,
 * the same-host route, which carries several Gbit/s under TCG where a
 * veth pair carries about one) and, with the kdata fixture's QP pairs,
 * keeps RDMA WRITEs of 64 KiB in flight from end 0 to end 1:
 *
 *   capacity        no limit: the rate this path carries here and now
 *   rate-<N>M       one QP limited to each of the limits (Mbit/s; default
 *                   10, 100 and 1000)
 *   multi-q<i>-<N>M eight QPs at once, each with its own limit (default
 *                   10, 20, 50, 100, 150, 200, 300 and 400)
 *
 * A limit above headroom percent (default 80) of the capacity measured
 * first is skipped, with the numbers: a QP cannot be held to a rate it
 * does not reach, and near the capacity what is measured is the path, not
 * the gate. For the eight QPs at once their sum counts, and the highest
 * limits are left out until the rest fit.
 *
 * The rate is counted in the bytes the gate charges, each packet as it
 * leaves the QP (BTH, RETH, payload, ICRC; no UDP, IP or Ethernet
 * header), from the completion that ends a warm-up (warmup_ms, by when
 * the bucket's initial credit of 2 ms is long spent) to the
 * first completion window_ms or more later: whole messages between two
 * completions, so a message's packets need not be spread evenly for the
 * count to be exact. Each limited QP must come within tolerance percent
 * (default 5) of its limit. Every WRITE lands in a slot of a
 * fast-registered MR; when it completes, the slot must hold every byte of
 * its source, before the slot is written again. Sources alternate
 * between two patterns per slot that differ in every byte, so a WRITE
 * that left a byte unwritten is seen too.
 *
 * A throttled requester sleeps until the gate's timer schedules it again.
 * While it waits, its bucket gathers credit up to 20 ms, and the timer
 * fires a slice (at most 1 ms) after the debt is paid: a requester that
 * runs up to KR_GATE_FORGIVES late makes it up with a burst; later than
 * that, the gate counts the rest as idle time and the QP never sends it.
 * Under TCG that happens whenever the host takes the
 * vCPU away or the guest's other work keeps it. So a probe wakes the same
 * way every millisecond (kr_probe_run()), and each line says how late it
 * ran in the QP's window. A rate that misses is measured once more
 * (retries); a rate that still falls short, by no more than the probe's
 * late runs beyond the QP's bucket plus the tolerance, is skipped with
 * those numbers: it measured the guest, not the gate. A rate above its
 * limit, or short by more than that, fails.
 *
 * Each check prints one line:
 *
 *   sroce-krate: ok <name>: <rate, window, packets, probe>
 *   sroce-krate: FAIL <name>: <what went wrong>
 *   sroce-krate: skip <name>: <why, with the numbers>
 *
 * (a first try that missed: "sroce-krate: retry <name>: ...", not
 * counted), then "sroce-krate: N passed, N failed, N skipped".
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) "sroce-krate: " fmt

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "kdata_fixture.h"

#define KR_MULTI_MAX	8

static char *dev0 = "sroce1";
module_param(dev0, charp, 0444);
MODULE_PARM_DESC(dev0, "the requesters' ib_device (default sroce1)");

static char *dev1 = "sroce1";
module_param(dev1, charp, 0444);
MODULE_PARM_DESC(dev1, "the responders' ib_device (default sroce1: the same-host route)");

static unsigned int limits[KR_MULTI_MAX] = { 10, 100, 1000 };
static unsigned int nlimits = 3;
module_param_array(limits, uint, &nlimits, 0444);
MODULE_PARM_DESC(limits, "limits for one QP at a time, Mbit/s");

static unsigned int multi[KR_MULTI_MAX] = {
	10, 20, 50, 100, 150, 200, 300, 400,
};

static unsigned int nmulti = KR_MULTI_MAX;
module_param_array(multi, uint, &nmulti, 0444);
MODULE_PARM_DESC(multi, "limits of the QPs that send at once, Mbit/s");

static unsigned int window_ms = 2000;
module_param(window_ms, uint, 0444);
MODULE_PARM_DESC(window_ms, "the window a limited rate is measured over");

static unsigned int capacity_ms = 1000;
module_param(capacity_ms, uint, 0444);
MODULE_PARM_DESC(capacity_ms, "the window the capacity is measured over");

static unsigned int warmup_ms = 250;
module_param(warmup_ms, uint, 0444);
MODULE_PARM_DESC(warmup_ms, "what is not measured at the start of a run");

static unsigned int headroom = 80;
module_param(headroom, uint, 0444);
MODULE_PARM_DESC(headroom, "percent of the capacity a limit may reach");

static unsigned int tolerance = 5;
module_param(tolerance, uint, 0444);
MODULE_PARM_DESC(tolerance, "percent a limited rate may miss its limit by");

static unsigned int retries = 1;
module_param(retries, uint, 0444);
MODULE_PARM_DESC(retries, "how often a rate that missed its limit is measured again");

/*
 * What a packet of the WRITEs is made of, at path MTU 4096 (the fixture's
 * default): the gate charges each packet's BTH, its RETH if it is the
 * message's first, its payload and its ICRC (sroce_tx_len()).
 */
#define KR_MSG		SZ_64K
#define KR_MSG_ORDER	get_order(KR_MSG)
#define KR_MTU		4096
#define KR_BTH		12
#define KR_RETH		16
#define KR_ICRC		4

/*
 * On a same-host route an RC packet carries up to 60 KiB of its message,
 * 15 path MTUs (sroce_tx_span_max()); elsewhere one. Were this wrong, the
 * count would move by 14 BTHs and ICRCs a message: 0.3% of 64 KiB.
 */
#define KR_SPAN_LOCAL	(SZ_64K - SZ_4K)

/*
 * WRITEs in flight: enough for 100 ms at the QP's limit, 4 to 16, so that
 * the send queue does not run dry while this thread waits for a vCPU. (A
 * QP with nothing to send saves credit, up to what its bucket holds, and
 * spends it at once when WRITEs come again: a window that starts there
 * measures more than the limit.)
 */
#define KR_DEPTH	16
#define KR_DEPTH_MIN	4
#define KR_INFLIGHT_MS	100

/* A result line's text, built piece by piece (kr_add()). */
#define KR_TEXT		512

struct kr_text {
	char s[KR_TEXT];
	size_t len;
};

#define KR_REG_WR_ID	BIT_ULL(62)

/* The two devices, between the client's add and remove. */
static DEFINE_MUTEX(kr_mutex);
static struct ib_device *kr_dev[2];

/* Completion events of every flow's requester CQ wake the run. */
static DECLARE_WAIT_QUEUE_HEAD(kr_wait);
static atomic_t kr_events = ATOMIC_INIT(0);

enum kr_phase { KR_WARMUP, KR_WINDOW, KR_DRAIN, KR_DONE };

/**
 * struct kr_flow - one QP pair and what it measured
 * @kd: the pair (kdata fixture); kd.why holds its first failure
 * @mbps: its limit in Mbit/s; 0: none
 * @id: its index in the run: which patterns its sources hold
 * @depth: WRITEs it keeps in flight; @dst has as many slots, @src twice
 * @msg_bytes: what the gate charges for one WRITE
 * @msg_pkts: its packets
 * @src: the sources, each KR_MSG bytes of one pattern
 * @dst: the destination slots, KR_MSG bytes each, in @mr
 * @sg: @dst as a scatterlist
 * @nents: what ib_dma_map_sg() returned for it
 * @mr: the responder's fast-registered MR over @dst
 * @phase: where the flow is
 * @posted: WRITEs posted; the wr_id of the next
 * @done: WRITEs completed and checked
 * @bytes: what the gate charged for those
 * @t_start: when the first WRITE was posted (ns)
 * @t0: when the window started (the completion that ended the warm-up)
 * @t1: when it ended
 * @b0: @bytes at @t0
 * @b1: @bytes at @t1
 * @m0: @done at @t0
 * @m1: @done at @t1
 * @last: the last completion's time
 * @max_gap: the longest time between two completions in the window
 */
struct kr_flow {
	struct kd_ctx kd;
	unsigned int mbps;
	unsigned int id;
	unsigned int depth;
	u32 msg_bytes;
	u32 msg_pkts;
	struct kd_buf src[2 * KR_DEPTH];
	struct page *dst[KR_DEPTH];
	struct scatterlist sg[KR_DEPTH];
	int nents;
	struct ib_mr *mr;
	enum kr_phase phase;
	u64 posted;
	u64 done;
	u64 bytes;
	u64 t_start;
	u64 t0, t1;
	u64 b0, b1;
	u64 m0, m1;
	u64 last;
	u64 max_gap;
};

/* The run's result lines and the addresses of its two ends. */
static struct {
	struct kd_ctx addr;
	unsigned int passed;
	unsigned int failed;
	unsigned int skipped;
} kr;

static void kr_comp_hook(struct kd_end *e)
{
	atomic_inc(&kr_events);
	wake_up(&kr_wait);
}

/* The pattern source slot @i of @f holds: distinct for every flow. */
static unsigned int kr_pattern_no(const struct kr_flow *f, unsigned int i)
{
	return f->id * 2 * KR_DEPTH + i;
}

/* Mbit/s as bytes per second. */
static u64 kr_mbps_bytes(unsigned int mbps)
{
	return (u64)mbps * 1000000 / BITS_PER_BYTE;
}

/*
 * A flow with limit @mbps (0: none) and index @id: its depth and what
 * the gate charges for each of its WRITEs on the route from dev0 to dev1.
 */
static void kr_flow_init(struct kr_flow *f, unsigned int mbps,
			 unsigned int id)
{
	u32 per_pkt = kr_dev[0] == kr_dev[1] ? KR_SPAN_LOCAL : KR_MTU;
	u64 want;

	memset(f, 0, sizeof(*f));
	f->mbps = mbps;
	f->id = id;
	f->depth = KR_DEPTH;
	if (mbps) {
		want = DIV_ROUND_UP_ULL(kr_mbps_bytes(mbps) * KR_INFLIGHT_MS,
					MSEC_PER_SEC * KR_MSG);
		f->depth = clamp_t(u64, want, KR_DEPTH_MIN, KR_DEPTH);
	}
	f->msg_pkts = DIV_ROUND_UP(KR_MSG, per_pkt);
	f->msg_bytes = KR_MSG + KR_RETH + f->msg_pkts * (KR_BTH + KR_ICRC);
}

/* Set the requester's IB_QP_RATE_LIMIT; query_qp must report it. */
static bool kr_flow_limit(struct kr_flow *f)
{
	struct ib_qp *qp = f->kd.end[0].qp;
	u32 kbps = f->mbps * 1000;
	struct ib_qp_init_attr init;
	struct ib_qp_attr a = {};
	int err;

	if (!f->mbps)
		return true;
	a.rate_limit = kbps;
	err = ib_modify_qp(qp, &a, IB_QP_RATE_LIMIT);
	if (kd_bad(&f->kd, err, "ib_modify_qp(IB_QP_RATE_LIMIT %u kbit/s): %d",
		   kbps, err))
		return false;
	memset(&a, 0, sizeof(a));
	err = ib_query_qp(qp, &a, IB_QP_RATE_LIMIT, &init);
	return !kd_bad(&f->kd, err || a.rate_limit != kbps,
		       "ib_query_qp: %d, rate_limit %u kbit/s; want %u", err,
		       a.rate_limit, kbps);
}

/*
 * The flow's QP pair, its sources on end 0 and its destination slots in a
 * fast-registered MR of end 1, and its limit.
 */
static bool kr_flow_up(struct kr_flow *f)
{
	struct kd_ctx *c = &f->kd;
	struct kd_end *e0 = &c->end[0], *e1 = &c->end[1];
	unsigned int i, npages = f->depth * (KR_MSG / PAGE_SIZE);
	int n;

	for (i = 0; i < 2; i++) {
		c->end[i].dev = kr.addr.end[i].dev;
		c->end[i].sgid_index = kr.addr.end[i].sgid_index;
		c->end[i].gid = kr.addr.end[i].gid;
		memcpy(c->end[i].mac, kr.addr.end[i].mac, ETH_ALEN);
	}
	if (!kd_pair_up(c))
		return false;
	e0->comp_hook = kr_comp_hook;
	for (i = 0; i < 2 * f->depth; i++) {
		if (!kd_buf_alloc(c, e0->dev, &f->src[i], KR_MSG))
			return false;
		kd_fill(f->src[i].va, KR_MSG, kr_pattern_no(f, i), 0);
	}
	sg_init_table(f->sg, f->depth);
	for (i = 0; i < f->depth; i++) {
		f->dst[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, KR_MSG_ORDER);
		if (kd_bad(c, !f->dst[i], "out of memory"))
			return false;
		sg_set_page(&f->sg[i], f->dst[i], KR_MSG, 0);
	}
	f->nents = ib_dma_map_sg(e1->dev, f->sg, f->depth, DMA_BIDIRECTIONAL);
	if (kd_bad(c, f->nents <= 0, "ib_dma_map_sg: %d", f->nents))
		return false;
	f->mr = ib_alloc_mr(e1->pd, IB_MR_TYPE_MEM_REG, npages);
	if (kd_bad(c, IS_ERR(f->mr), "ib_alloc_mr(%u pages): %ld", npages,
		   PTR_ERR(f->mr))) {
		f->mr = NULL;
		return false;
	}
	n = ib_map_mr_sg(f->mr, f->sg, f->nents, NULL, PAGE_SIZE);
	if (kd_bad(c, n != f->nents || f->mr->length != (u64)f->depth * KR_MSG,
		   "ib_map_mr_sg: %d of %d, length %llu", n, f->nents,
		   f->mr->length))
		return false;
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey) & 0xff);
	return kd_reg(c, f->mr, KR_REG_WR_ID) && kr_flow_limit(f);
}

/* Undo kr_flow_up(), from wherever it stopped. */
static void kr_flow_down(struct kr_flow *f)
{
	struct ib_device *d0 = f->kd.end[0].dev, *d1 = f->kd.end[1].dev;
	unsigned int i;

	if (f->mr)
		ib_dereg_mr(f->mr);
	f->mr = NULL;
	kd_pair_down(&f->kd);
	if (f->nents > 0)
		ib_dma_unmap_sg(d1, f->sg, f->depth, DMA_BIDIRECTIONAL);
	f->nents = 0;
	for (i = 0; i < f->depth; i++) {
		if (f->dst[i])
			__free_pages(f->dst[i], KR_MSG_ORDER);
		f->dst[i] = NULL;
	}
	for (i = 0; i < 2 * f->depth; i++)
		kd_buf_free(d0, &f->src[i]);
}

/*
 * Post WRITE number f->posted, from source slot posted % (2 depth) to
 * destination slot posted % depth.
 */
static bool kr_post(struct kr_flow *f)
{
	u64 seq = f->posted;
	struct kd_end *e0 = &f->kd.end[0];
	struct ib_sge sge = kd_sge(e0, &f->src[seq % (2 * f->depth)], KR_MSG);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = seq, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
		.remote_addr = f->mr->iova + (seq % f->depth) * KR_MSG,
		.rkey = f->mr->rkey,
	};

	if (!kd_post(&f->kd, e0, &wr.wr))
		return false;
	f->posted++;
	return true;
}

/*
 * WRITE number f->done completed (@wc) at @now: check it and its slot,
 * count it, move the window, and post the next while the window is open.
 */
static void kr_complete(struct kr_flow *f, const struct ib_wc *wc, u64 now)
{
	u64 seq = f->done;
	unsigned int s = seq % (2 * f->depth);
	const u8 *got = page_address(f->dst[seq % f->depth]);
	long d;

	if (kd_bad(&f->kd, wc->wr_id != seq || wc->status != IB_WC_SUCCESS ||
		   wc->opcode != IB_WC_RDMA_WRITE,
		   "completion wr_id %llu status %d (%s) opcode %d; want WRITE %llu",
		   wc->wr_id, wc->status, ib_wc_status_msg(wc->status),
		   wc->opcode, seq))
		goto failed;
	if (memcmp(got, f->src[s].va, KR_MSG)) {
		d = kd_diff(got, KR_MSG, kr_pattern_no(f, s), 0);
		kd_bad(&f->kd, true, "WRITE %llu landed with byte %ld wrong",
		       seq, d);
		goto failed;
	}
	f->done++;
	f->bytes += f->msg_bytes;
	if (f->phase == KR_WINDOW)
		f->max_gap = max(f->max_gap, now - f->last);
	f->last = now;
	if (f->phase == KR_WARMUP &&
	    now - f->t_start >= (u64)warmup_ms * NSEC_PER_MSEC) {
		f->phase = KR_WINDOW;
		f->t0 = now;
		f->b0 = f->bytes;
		f->m0 = f->done;
	} else if (f->phase == KR_WINDOW &&
		   now - f->t0 >= (u64)(f->mbps ? window_ms : capacity_ms) *
				  NSEC_PER_MSEC) {
		f->phase = KR_DRAIN;
		f->t1 = now;
		f->b1 = f->bytes;
		f->m1 = f->done;
	}
	if (f->phase == KR_DRAIN) {
		if (f->done == f->posted)
			f->phase = KR_DONE;
		return;
	}
	if (kr_post(f))
		return;
failed:
	f->phase = KR_DONE;
}

/*
 * The probe wakes the way a gate's QP does, every KR_PROBE_NS while flows
 * run: a soft hrtimer queues a work item on a per-CPU, CPU-intensive
 * workqueue (as the gate's timer schedules the requester on
 * "sroce_pinned"), and the work item notes how late it runs. Runs later
 * than KR_PROBE_SLACK are kept, when and by how much. A vCPU that the
 * host takes away for L ms, or that other work keeps for L ms, delays it
 * about L ms once. A QP whose requester runs later than its gate forgives
 * loses the rest of that time: the probe's late runs in a QP's window,
 * each less KR_GATE_FORGIVES, estimate what the QP lost so.
 */
#define KR_PROBE_NS	NSEC_PER_MSEC
#define KR_PROBE_SLACK	(2 * NSEC_PER_MSEC)	/* later runs are kept */
/*
 * How late a held requester may run at no cost: the 20 ms a waiting
 * engine's bucket gathers (SROCE_RATE_LATE_NS) less the slice of up to
 * 1 ms its timer already waits for (SROCE_RATE_SLICE_NS).
 */
#define KR_GATE_FORGIVES	(19 * NSEC_PER_MSEC)
#define KR_PROBE_LATE	2048	/* more than a run can have */

static struct {
	struct workqueue_struct *wq;
	struct hrtimer timer;
	struct work_struct work;
	u64 due;
	unsigned int nlate;
	struct {
		u64 at;
		u64 by;
	} late[KR_PROBE_LATE];
	bool stop;
} kr_probe;

static enum hrtimer_restart kr_probe_fire(struct hrtimer *timer)
{
	queue_work(kr_probe.wq, &kr_probe.work);
	return HRTIMER_NORESTART;
}

static void kr_probe_run(struct work_struct *work)
{
	u64 now = ktime_get_ns();
	u64 by = now > kr_probe.due ? now - kr_probe.due : 0;

	if (by > KR_PROBE_SLACK && kr_probe.nlate < KR_PROBE_LATE) {
		kr_probe.late[kr_probe.nlate].at = now;
		kr_probe.late[kr_probe.nlate].by = by;
		kr_probe.nlate++;
	}
	if (READ_ONCE(kr_probe.stop))
		return;
	kr_probe.due = now + KR_PROBE_NS;
	hrtimer_start(&kr_probe.timer, ns_to_ktime(kr_probe.due),
		      HRTIMER_MODE_ABS_SOFT);
}

static void kr_probe_start(void)
{
	kr_probe.nlate = 0;
	WRITE_ONCE(kr_probe.stop, false);
	kr_probe.due = ktime_get_ns() + KR_PROBE_NS;
	hrtimer_start(&kr_probe.timer, ns_to_ktime(kr_probe.due),
		      HRTIMER_MODE_ABS_SOFT);
}

/* Each can start the other until the work item has seen @stop. */
static void kr_probe_stop(void)
{
	WRITE_ONCE(kr_probe.stop, true);
	hrtimer_cancel(&kr_probe.timer);
	cancel_work_sync(&kr_probe.work);
	hrtimer_cancel(&kr_probe.timer);
}

/**
 * struct kr_stalls - what the probe saw in a window
 * @max: the latest it ran, in ns
 * @n: how often it ran later than the gate forgives
 * @lost: by how much, in all, in ns
 */
struct kr_stalls {
	u64 max;
	unsigned int n;
	u64 lost;
};

/* The probe's firings in (@t0, @t1], against a gate forgiving @depth ns. */
static void kr_probe_window(u64 t0, u64 t1, u64 depth, struct kr_stalls *st)
{
	unsigned int i;
	u64 by;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < kr_probe.nlate; i++) {
		if (kr_probe.late[i].at <= t0 || kr_probe.late[i].at > t1)
			continue;
		by = kr_probe.late[i].by;
		st->max = max(st->max, by);
		if (by > depth) {
			st->n++;
			st->lost += by - depth;
		}
	}
}

/*
 * Run @n flows at once until each has measured its window and every
 * WRITE it posted completed, or failed. The thread sleeps while no
 * completion waits: it shares the vCPUs with the QPs it measures.
 */
static void kr_measure(struct kr_flow *flows, unsigned int n)
{
	u64 start, now, quiet;
	struct ib_wc wc[16];
	unsigned int i, j, active;
	bool progress, missed;
	int seen, got;

	kr_probe_start();
	start = ktime_get_ns();
	for (i = 0; i < n; i++) {
		flows[i].t_start = start;
		flows[i].phase = KR_WARMUP;
		for (j = 0; j < flows[i].depth; j++)
			if (!kr_post(&flows[i])) {
				flows[i].phase = KR_DONE;
				break;
			}
	}
	quiet = start;
	for (;;) {
		seen = atomic_read(&kr_events);
		progress = false;
		active = 0;
		for (i = 0; i < n; i++) {
			struct kr_flow *f = &flows[i];

			if (f->phase == KR_DONE)
				continue;
			got = ib_poll_cq(f->kd.end[0].cq, ARRAY_SIZE(wc), wc);
			now = ktime_get_ns();
			if (kd_bad(&f->kd, got < 0, "ib_poll_cq: %d", got))
				f->phase = KR_DONE;
			for (j = 0; got > 0 && j < got && f->phase != KR_DONE; j++)
				kr_complete(f, &wc[j], now);
			progress |= got > 0;
			active += f->phase != KR_DONE;
		}
		if (!active)
			break;
		now = ktime_get_ns();
		if (progress) {
			quiet = now;
			cond_resched();
			continue;
		}
		if (now - quiet > KD_TIMEOUT_MS * NSEC_PER_MSEC) {
			for (i = 0; i < n; i++)
				kd_bad(&flows[i].kd, flows[i].phase != KR_DONE,
				       "no completion for %u ms (%llu of %llu WRITEs done)",
				       KD_TIMEOUT_MS, flows[i].done,
				       flows[i].posted);
			break;
		}
		missed = false;
		for (i = 0; i < n; i++)
			if (flows[i].phase != KR_DONE &&
			    ib_req_notify_cq(flows[i].kd.end[0].cq,
					     IB_CQ_NEXT_COMP |
					     IB_CQ_REPORT_MISSED_EVENTS) > 0)
				missed = true;
		if (!missed)
			wait_event_idle_timeout(kr_wait,
						atomic_read(&kr_events) != seen,
						msecs_to_jiffies(100));
	}
	kr_probe_stop();
}

static __printf(2, 3) void kr_add(struct kr_text *t, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	t->len += vscnprintf(t->s + t->len, sizeof(t->s) - t->len, fmt, args);
	va_end(args);
}

/* kbit/s as Mbit/s: "12.34" for 12340. */
static void kr_add_mbps(struct kr_text *t, u64 kbps)
{
	kr_add(t, "%llu.%02llu", kbps / 1000, kbps % 1000 / 10);
}

/* ns as ms: "12.3" for 12345678. */
static void kr_add_ms(struct kr_text *t, u64 ns)
{
	kr_add(t, "%llu.%llu", ns / NSEC_PER_MSEC,
	       ns % NSEC_PER_MSEC / (NSEC_PER_MSEC / 10));
}

/*
 * What a flow's measurement says (kr_flow_verdict()): KR_STALLED, the
 * rate fell short of its limit by no more than the vCPU time the probe
 * saw lost beyond what the QP's bucket holds, plus the tolerance.
 */
enum kr_verdict { KR_OK, KR_STALLED, KR_MISSED, KR_BROKEN };

static void kr_line(const char *verdict, const char *name, const char *text)
{
	pr_info("%s %s: %s\n", verdict, name, text);
}

static void kr_pass(const char *name, const char *text)
{
	kr_line("ok", name, text);
	kr.passed++;
}

static void kr_fail(const char *name, const char *text)
{
	kr_line("FAIL", name, text);
	kr.failed++;
}

static void kr_skip(const char *name, const char *text)
{
	kr_line("skip", name, text);
	kr.skipped++;
}

/*
 * The final line of a check: a rate the vCPU's stalls explain is
 * skipped, not failed; the line says how much time they cost.
 */
static void kr_report(const char *name, enum kr_verdict v, const char *text)
{
	if (v == KR_OK)
		kr_pass(name, text);
	else if (v == KR_STALLED)
		kr_skip(name, text);
	else
		kr_fail(name, text);
}

/* The rate @f measured in its window, in kbit/s; 0 if it has none. */
static u64 kr_flow_kbps(const struct kr_flow *f)
{
	if (f->m1 < f->m0 + 2 || f->t1 <= f->t0)
		return 0;
	return mul_u64_u64_div_u64(f->b1 - f->b0, BITS_PER_BYTE * USEC_PER_SEC,
				   f->t1 - f->t0);
}

/*
 * What flow @f measured, in @t: its failure, or its rate (against its
 * limit, if it has one) and what the probe saw in its window.
 */
static enum kr_verdict kr_flow_verdict(struct kr_flow *f, struct kr_text *t)
{
	u64 kbps = kr_flow_kbps(f), want = (u64)f->mbps * 1000, ns, per;
	u64 pkts = (f->m1 - f->m0) * f->msg_pkts, depth, shortfall;
	struct kr_stalls st;
	s64 err;

	t->len = 0;
	if (!f->kd.why[0] && !kbps)
		kd_bad(&f->kd, true, "the window holds %llu WRITEs, too few",
		       f->m1 - f->m0);
	if (f->kd.why[0]) {
		kr_add(t, "%s", f->kd.why);
		return KR_BROKEN;
	}
	ns = f->t1 - f->t0;
	kr_add_mbps(t, kbps);
	if (!f->mbps) {
		kr_probe_window(f->t0, f->t1, KR_PROBE_SLACK, &st);
		kr_add(t, " Mbit/s with no limit, over %llu ms, %llu packets, %llu MiB checked",
		       ns / NSEC_PER_MSEC, pkts, f->done * KR_MSG / SZ_1M);
		kr_add(t, "; the 1 ms probe ran up to ");
		kr_add_ms(t, st.max);
		kr_add(t, " ms late");
		return KR_OK;
	}
	depth = KR_GATE_FORGIVES;
	kr_probe_window(f->t0, f->t1, depth, &st);
	/* hundredths of a percent */
	err = div64_s64(((s64)kbps - (s64)want) * 10000, want);
	per = div64_u64((u64)f->msg_bytes * NSEC_PER_SEC,
			kr_mbps_bytes(f->mbps));
	kr_add(t, " Mbit/s against a limit of %u (%c%lld.%02lld%%), over %llu ms, %llu packets",
	       f->mbps, err < 0 ? '-' : '+', abs(err) / 100, abs(err) % 100,
	       ns / NSEC_PER_MSEC, pkts);
	kr_add(t, "; completions up to ");
	kr_add_ms(t, f->max_gap);
	kr_add(t, " ms apart, one WRITE every ");
	kr_add_ms(t, per);
	kr_add(t, " ms; the 1 ms probe ran up to ");
	kr_add_ms(t, st.max);
	kr_add(t, " ms late, %u times later than the gate forgives (", st.n);
	kr_add_ms(t, depth);
	kr_add(t, " ms), ");
	kr_add_ms(t, st.lost);
	kr_add(t, " ms beyond");
	if (abs(err) <= tolerance * 100)
		return KR_OK;
	/* the sending time it fell short by: the window's share it missed */
	shortfall = err < 0 ? div64_u64(ns * (want - kbps), want) : 0;
	if (err < 0 && shortfall <= st.lost + ns * tolerance / 100) {
		kr_add(t, ": short by ");
		kr_add_ms(t, shortfall);
		kr_add(t, " ms of sending, what the vCPU lost beyond the bucket explains");
		return KR_STALLED;
	}
	kr_add(t, ": more than %u%% off", tolerance);
	return KR_MISSED;
}

/* Measure the capacity: one QP with no limit. Return: kbit/s, 0 if none. */
static u64 kr_check_capacity(struct kr_flow *f)
{
	struct kr_text t;

	kr_flow_init(f, 0, 0);
	if (kr_flow_up(f))
		kr_measure(f, 1);
	kr_flow_down(f);
	if (kr_flow_verdict(f, &t) != KR_OK) {
		kr_fail("capacity", t.s);
		return 0;
	}
	kr_pass("capacity", t.s);
	return kr_flow_kbps(f);
}

/* The most a limit may be with @cap_kbps measured, in Mbit/s. */
static u64 kr_allowed_mbps(u64 cap_kbps)
{
	return div_u64(cap_kbps * headroom, 100 * 1000);
}

/* "@mbps ... above headroom% of the capacity measured, @cap_kbps" */
static void kr_add_above(struct kr_text *t, u64 mbps, u64 cap_kbps)
{
	kr_add(t, "%llu Mbit/s, above %u%% of the capacity measured, ", mbps,
	       headroom);
	kr_add_mbps(t, cap_kbps);
	kr_add(t, " Mbit/s");
}

/*
 * One QP limited to @mbps. A rate that misses its limit is measured once
 * more (retries) before it counts.
 */
static void kr_check_one(struct kr_flow *f, unsigned int mbps, u64 cap_kbps)
{
	struct kr_text t = {};
	enum kr_verdict v;
	unsigned int try;
	char name[32];

	snprintf(name, sizeof(name), "rate-%uM", mbps);
	if (mbps > kr_allowed_mbps(cap_kbps)) {
		kr_add(&t, "the limit is ");
		kr_add_above(&t, mbps, cap_kbps);
		kr_skip(name, t.s);
		return;
	}
	for (try = 0;; try++) {
		kr_flow_init(f, mbps, 0);
		if (kr_flow_up(f))
			kr_measure(f, 1);
		kr_flow_down(f);
		v = kr_flow_verdict(f, &t);
		if (v == KR_OK || v == KR_BROKEN || try == retries)
			break;
		kr_line("retry", name, t.s);
	}
	kr_report(name, v, t.s);
}

/* The name of multi[] entry @i, limited to @mbps. */
static void kr_multi_name(char *name, size_t size, unsigned int i,
			  unsigned int mbps)
{
	snprintf(name, size, "multi-q%u-%uM", i, mbps);
}

/* Set up the flows of multi[] @want (0: left out). Return: how many. */
static unsigned int kr_multi_up(struct kr_flow *flows,
				const unsigned int *want)
{
	unsigned int i, n = 0;
	char name[32];

	for (i = 0; i < nmulti; i++) {
		if (!want[i])
			continue;
		kr_flow_init(&flows[n], want[i], i);
		if (!kr_flow_up(&flows[n])) {
			kr_flow_down(&flows[n]);
			kr_multi_name(name, sizeof(name), i, want[i]);
			kr_fail(name, flows[n].kd.why);
			continue;
		}
		n++;
	}
	return n;
}

/*
 * The QPs of multi[] at once. While their sum is above what the capacity
 * allows, the highest limit is left out (skipped). If a rate misses its
 * limit, and none failed otherwise, the whole set runs once more.
 */
static void kr_check_multi(struct kr_flow *flows, u64 cap_kbps)
{
	unsigned int want[KR_MULTI_MAX], i, n, nwant = 0, top, try;
	u64 sum = 0, allowed = kr_allowed_mbps(cap_kbps);
	enum kr_verdict v[KR_MULTI_MAX];
	unsigned int missed, broken;
	struct kr_text t = {};
	char name[32];

	for (i = 0; i < nmulti; i++) {
		want[i] = multi[i];
		sum += multi[i];
	}
	while (sum > allowed) {
		top = 0;
		for (i = 1; i < nmulti; i++)
			if (want[i] > want[top])
				top = i;
		if (!want[top])
			break;
		kr_multi_name(name, sizeof(name), top, want[top]);
		t.len = 0;
		kr_add(&t, "the limits at once add up to ");
		kr_add_above(&t, sum, cap_kbps);
		kr_skip(name, t.s);
		sum -= want[top];
		want[top] = 0;
	}
	for (i = 0; i < nmulti; i++)
		nwant += !!want[i];
	for (try = 0;; try++) {
		n = kr_multi_up(flows, want);
		if (!n)
			return;
		pr_info("%u QPs at once, %llu Mbit/s in all\n", n, sum);
		kr_measure(flows, n);
		missed = 0;
		broken = 0;
		for (i = 0; i < n; i++) {
			kr_flow_down(&flows[i]);
			v[i] = kr_flow_verdict(&flows[i], &t);
			missed += v[i] == KR_MISSED || v[i] == KR_STALLED;
			broken += v[i] == KR_BROKEN;
		}
		if (!missed || broken || n < nwant || try == retries)
			break;
		for (i = 0; i < n; i++) {
			kr_multi_name(name, sizeof(name), flows[i].id,
				      flows[i].mbps);
			kr_flow_verdict(&flows[i], &t);
			kr_line("retry", name, t.s);
		}
	}
	for (i = 0; i < n; i++) {
		kr_multi_name(name, sizeof(name), flows[i].id, flows[i].mbps);
		kr_flow_verdict(&flows[i], &t);
		kr_report(name, v[i], t.s);
	}
}

static void kr_run_all(void)
{
	struct kr_flow *flows;
	u64 cap;
	unsigned int i;

	lockdep_assert_held(&kr_mutex);
	memset(&kr, 0, sizeof(kr));
	flows = kcalloc(KR_MULTI_MAX, sizeof(*flows), GFP_KERNEL);
	if (!flows) {
		kr_fail("setup", "out of memory");
		goto out;
	}
	for (i = 0; i < 2; i++) {
		kr.addr.end[i].dev = kr_dev[i];
		if (!kd_end_address(&kr.addr, &kr.addr.end[i])) {
			kr_fail("setup", kr.addr.why);
			goto out;
		}
	}
	pr_info("%s (%pI6c) -> %s (%pI6c), %s route; WRITEs of %u KiB\n",
		dev_name(&kr_dev[0]->dev), kr.addr.end[0].gid.raw,
		dev_name(&kr_dev[1]->dev), kr.addr.end[1].gid.raw,
		kr_dev[0] == kr_dev[1] ? "same-host" : "wire", KR_MSG / SZ_1K);
	cap = kr_check_capacity(&flows[0]);
	if (!cap)
		goto out;
	for (i = 0; i < nlimits; i++)
		kr_check_one(&flows[0], limits[i], cap);
	if (nmulti)
		kr_check_multi(flows, cap);
out:
	kfree(flows);
	pr_info("%u passed, %u failed, %u skipped\n", kr.passed, kr.failed,
		kr.skipped);
}

static int kr_client_add(struct ib_device *dev)
{
	bool is0 = !strcmp(dev_name(&dev->dev), dev0);
	bool is1 = !strcmp(dev_name(&dev->dev), dev1);

	if (!is0 && !is1)
		return -EOPNOTSUPP;	/* not ours: no client data */
	mutex_lock(&kr_mutex);
	if (is0 && !kr_dev[0])
		kr_dev[0] = dev;
	if (is1 && !kr_dev[1])
		kr_dev[1] = dev;
	mutex_unlock(&kr_mutex);
	return 0;
}

static void kr_client_remove(struct ib_device *dev, void *client_data)
{
	int i;

	mutex_lock(&kr_mutex);
	for (i = 0; i < 2; i++)
		if (kr_dev[i] == dev)
			kr_dev[i] = NULL;
	mutex_unlock(&kr_mutex);
}

static struct ib_client kr_client = {
	.name = "sroce_vm_krate",
	.add = kr_client_add,
	.remove = kr_client_remove,
};

static int __init kr_init(void)
{
	int err;

	if (nmulti > KR_MULTI_MAX || !window_ms || !capacity_ms)
		return -EINVAL;
	kr_probe.wq = alloc_workqueue("sroce_vm_krate", WQ_CPU_INTENSIVE, 0);
	if (!kr_probe.wq)
		return -ENOMEM;
	hrtimer_init(&kr_probe.timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	kr_probe.timer.function = kr_probe_fire;
	INIT_WORK(&kr_probe.work, kr_probe_run);
	err = ib_register_client(&kr_client);
	if (err) {
		destroy_workqueue(kr_probe.wq);
		return err;
	}

	/* remove() waits for the mutex: the devices stay while we test */
	mutex_lock(&kr_mutex);
	if (kr_dev[0] && kr_dev[1]) {
		kr_run_all();
	} else {
		pr_info("FAIL setup: no ib_device %s and %s\n", dev0, dev1);
		pr_info("0 passed, 1 failed, 0 skipped\n");
	}
	mutex_unlock(&kr_mutex);
	destroy_workqueue(kr_probe.wq);
	return 0;
}

static void __exit kr_exit(void)
{
	ib_unregister_client(&kr_client);
}

module_init(kr_init);
module_exit(kr_exit);
MODULE_DESCRIPTION("sroce VM test: per-QP send rate limits (IB_QP_RATE_LIMIT) as a kernel ULP sets them");
MODULE_LICENSE("GPL");
