// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_rate: the userspace side of sroce's rate limiter, for the rate
 * scenario (sroce-vm scenarios/rate.sh).
 *
 *   sroce_rate [-w WINDOW_MS] [-c CAPACITY_MS] [-W WARMUP_MS]
 *              [-H HEADROOM] [-t TOLERANCE] DEV GID_INDEX
 *
 * Stock rdma-core reaches the gate one way only: the address vector's
 * static rate, which ibv_modify_qp() to RTR passes in ah_attr.static_rate
 * (an enum ibv_rate, 2.5 Gbit/s at the lowest). IBV_QP_RATE_LIMIT needs
 * the extended modify command or a provider's modify_qp_rate_limit, and
 * librxe has neither. On DEV (both ends of each QP pair on it, GID
 * GID_INDEX: a same-host route) the program
 *
 *  - notes what the device reports as packet pacing capabilities and what
 *    ibv_modify_qp_rate_limit() and ibv_modify_qp(IBV_QP_RATE_LIMIT)
 *    return on a QP in RTS (documentation, not checks);
 *  - checks that ibv_query_qp() reports each QP's static rate back;
 *  - keeps 64 KiB RDMA WRITEs in flight on a pair without a static rate
 *    (the capacity) and then on one at 2.5 Gbit/s, which must come within
 *    TOLERANCE percent (default 5) of it, unless that is above HEADROOM
 *    percent (default 80) of the capacity (skipped, with the numbers).
 *    A rate that misses is measured once more; one that then falls short
 *    by no more than a probe saw the vCPU lost beyond what the gate
 *    forgives, plus the tolerance, is skipped with those numbers (see
 *    krate_main.c).
 *
 * The rate is counted as sroce's gate charges it (BTH, RETH, payload,
 * ICRC of each packet; see krate_main.c in sroce-vm/kverbs-module), over
 * whole messages from the completion that ends the warm-up to the first
 * one WINDOW_MS (CAPACITY_MS for the capacity) later. Every WRITE's
 * destination slot is compared with its source when it completes, before
 * the slot is written again; the sources of a slot alternate between two
 * patterns that differ in every byte.
 *
 * One line each:
 *
 *   sroce-rate: ok NAME: WHAT
 *   sroce-rate: FAIL NAME: WHY
 *   sroce-rate: skip NAME: WHY
 *   sroce-rate: note NAME: WHAT
 *   sroce-rate: retry NAME: WHAT (a first try that missed)
 *
 * Exit status: 0 if nothing failed, 1 if a check failed, 2 if the program
 * could not run.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG		(64 * 1024)
#define DEPTH		16
#define MTU		4096
#define BTH		12
#define RETH		16
#define ICRC		4
/* a same-host packet spans up to 60 KiB (sroce_tx_span_max()) */
#define SPAN		(MSG - 4096)
#define MSG_PKTS	((MSG + SPAN - 1) / SPAN)
#define MSG_BYTES	(MSG + RETH + MSG_PKTS * (BTH + ICRC))
#define TIMEOUT_MS	3000
#define STATIC_MBPS	2500

static unsigned int window_ms = 2000, capacity_ms = 1000, warmup_ms = 250;
static unsigned int headroom = 80, tolerance = 5;
static int failed;

/* A QP pair on the device, its buffers and what it measured. */
struct pair {
	struct ibv_cq *cq;		/* the requester's, on the channel */
	struct ibv_cq *rcq;		/* the responder's: gets nothing */
	struct ibv_qp *qp;		/* requester */
	struct ibv_qp *rqp;		/* responder */
	struct ibv_mr *smr, *dmr;
	uint8_t *src;			/* 2 DEPTH slots */
	uint8_t *dst;			/* DEPTH slots */
	unsigned int id;		/* which patterns */
	bool window, drain;
	uint64_t posted, done, bytes;
	uint64_t start, t0, t1, b0, b1, m0, m1;
	char why[256];
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	union ibv_gid gid;
	int gid_index;
} dev;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sroce_rate: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static void line(const char *verdict, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("sroce-rate: %s %s: ", verdict, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!strcmp(verdict, "FAIL"))
		failed = 1;
}

/* Record the pair's first failure. */
static bool bad(struct pair *p, bool cond, const char *fmt, ...)
{
	va_list ap;

	if (!cond || p->why[0])
		return cond;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return true;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint8_t pattern(unsigned int msg, size_t off)
{
	return (uint8_t)(off * 7 + msg * 31 + (off >> 8));
}

static void open_dev(const char *name)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev.ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!dev.ctx)
		die("cannot open %s", name);
	if (ibv_query_gid(dev.ctx, 1, dev.gid_index, &dev.gid))
		die("ibv_query_gid(%d): %s", dev.gid_index, strerror(errno));
	dev.pd = ibv_alloc_pd(dev.ctx);
	dev.ch = ibv_create_comp_channel(dev.ctx);
	if (!dev.pd || !dev.ch)
		die("PD or completion channel: %s", strerror(errno));
}

/* What the device says about packet pacing (IBV_QP_RATE_LIMIT). */
static void note_caps(void)
{
	struct ibv_device_attr_ex attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	err = ibv_query_device_ex(dev.ctx, NULL, &attr);
	if (err) {
		line("note", "packet-pacing-caps", "ibv_query_device_ex: %s",
		     strerror(err));
		return;
	}
	line("note", "packet-pacing-caps",
	     "qp_rate_limit_min %u, qp_rate_limit_max %u kbit/s, supported_qpts %#x",
	     attr.packet_pacing_caps.qp_rate_limit_min,
	     attr.packet_pacing_caps.qp_rate_limit_max,
	     attr.packet_pacing_caps.supported_qpts);
}

/* RESET -> INIT -> RTR (with @rate) -> RTS, connected to @peer. */
static int connect_qp(struct ibv_qp *qp, struct ibv_qp *peer, uint8_t rate)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = peer->qp_num;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dev.gid;
	a.ah_attr.grh.sgid_index = dev.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	a.ah_attr.static_rate = rate;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct ibv_qp *create_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(dev.pd, &init);
}

/* A pair whose requester has static rate @rate; dies if it cannot. */
static void pair_up(struct pair *p, unsigned int id, uint8_t rate)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	size_t i;
	int err;

	memset(p, 0, sizeof(*p));
	p->id = id;
	p->cq = ibv_create_cq(dev.ctx, 2 * DEPTH, NULL, dev.ch, 0);
	p->rcq = ibv_create_cq(dev.ctx, 2, NULL, NULL, 0);
	if (!p->cq || !p->rcq)
		die("ibv_create_cq: %s", strerror(errno));
	p->qp = create_qp(p->cq);
	p->rqp = create_qp(p->rcq);
	if (!p->qp || !p->rqp)
		die("ibv_create_qp: %s", strerror(errno));
	p->src = aligned_alloc(4096, 2 * DEPTH * MSG);
	p->dst = aligned_alloc(4096, DEPTH * MSG);
	if (!p->src || !p->dst)
		die("out of memory");
	for (i = 0; i < 2 * DEPTH * (size_t)MSG; i++)
		p->src[i] = pattern(id * 2 * DEPTH + i / MSG, i % MSG);
	memset(p->dst, 0xa5, DEPTH * MSG);
	p->smr = ibv_reg_mr(dev.pd, p->src, 2 * DEPTH * MSG, access);
	p->dmr = ibv_reg_mr(dev.pd, p->dst, DEPTH * MSG, access);
	if (!p->smr || !p->dmr)
		die("ibv_reg_mr: %s", strerror(errno));
	err = connect_qp(p->qp, p->rqp, rate);
	if (!err)
		err = connect_qp(p->rqp, p->qp, 0);
	if (err)
		die("connecting the QPs (static rate %u): %s", rate,
		    strerror(err));
}

static void pair_down(struct pair *p)
{
	ibv_destroy_qp(p->qp);
	ibv_destroy_qp(p->rqp);
	ibv_dereg_mr(p->smr);
	ibv_dereg_mr(p->dmr);
	ibv_destroy_cq(p->cq);
	ibv_destroy_cq(p->rcq);
	free(p->src);
	free(p->dst);
}

/* ibv_query_qp must report @want as the requester's static rate. */
static void check_query(struct pair *p, const char *name, uint8_t want)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	err = ibv_query_qp(p->qp, &a, IBV_QP_AV, &init);
	if (err || a.ah_attr.static_rate != want)
		line("FAIL", name, "ibv_query_qp: %s, static_rate %u; want %u",
		     err ? strerror(err) : "ok", a.ah_attr.static_rate, want);
	else
		line("ok", name, "ibv_query_qp reports static_rate %u", want);
}

/* What stock librxe does with IBV_QP_RATE_LIMIT, on @qp in RTS. */
static void note_rate_limit(struct ibv_qp *qp)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 100000 };
	struct ibv_qp_attr a;
	int err;

	err = ibv_modify_qp_rate_limit(qp, &rl);
	line("note", "ibv_modify_qp_rate_limit",
	     "100000 kbit/s on a QP in RTS returns %d (%s)", err,
	     err ? strerror(err) : "done");
	memset(&a, 0, sizeof(a));
	a.rate_limit = 100000;
	errno = 0;
	err = ibv_modify_qp(qp, &a, IBV_QP_RATE_LIMIT);
	line("note", "ibv_modify_qp-IBV_QP_RATE_LIMIT",
	     "100000 kbit/s on a QP in RTS returns %d (%s)", err,
	     err ? strerror(err) : "done");
}

/*
 * Post WRITEs until DEPTH are in flight, as one chain: under TCG every
 * ibv_post_send() is a system call that runs the requester.
 */
static bool refill(struct pair *p)
{
	struct ibv_send_wr wr[DEPTH], *badwr;
	struct ibv_sge sge[DEPTH];
	unsigned int i, n = DEPTH - (p->posted - p->done);
	uint64_t seq;
	int err;

	if (p->drain || !n)
		return true;
	for (i = 0; i < n; i++) {
		seq = p->posted + i;
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)p->src + (seq % (2 * DEPTH)) * MSG,
			.length = MSG, .lkey = p->smr->lkey,
		};
		wr[i] = (struct ibv_send_wr){
			.wr_id = seq, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
			.wr.rdma = {
				.remote_addr = (uintptr_t)p->dst +
					       (seq % DEPTH) * MSG,
				.rkey = p->dmr->rkey,
			},
		};
	}
	err = ibv_post_send(p->qp, wr, &badwr);
	if (bad(p, err, "ibv_post_send: %s", strerror(err)))
		return false;
	p->posted += n;
	return true;
}

/*
 * Whether a slot holds its source: 8 bytes at a time, which TCG runs
 * faster than glibc's SSE2 memcmp (the capacity is what it leaves).
 */
static bool same(const uint8_t *a, const uint8_t *b)
{
	const uint64_t *x = (const void *)a, *y = (const void *)b;
	size_t i;

	for (i = 0; i < MSG / sizeof(*x); i++)
		if (x[i] != y[i])
			return false;
	return true;
}

/* WRITE p->done completed at @now: check it, count it, move the window. */
static bool complete(struct pair *p, const struct ibv_wc *wc, uint64_t now,
		     unsigned int ms)
{
	uint64_t seq = p->done;
	const uint8_t *got = p->dst + (seq % DEPTH) * MSG;
	const uint8_t *want = p->src + (seq % (2 * DEPTH)) * MSG;
	size_t i;

	if (bad(p, wc->wr_id != seq || wc->status != IBV_WC_SUCCESS ||
		wc->opcode != IBV_WC_RDMA_WRITE,
		"completion wr_id %llu status %s opcode %d; want WRITE %llu",
		(unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		wc->opcode, (unsigned long long)seq))
		return false;
	if (!same(got, want)) {
		for (i = 0; got[i] == want[i]; i++)
			;
		bad(p, true, "WRITE %llu landed with byte %zu wrong",
		    (unsigned long long)seq, i);
		return false;
	}
	p->done++;
	p->bytes += MSG_BYTES;
	if (!p->window && now - p->start >= warmup_ms * 1000000ULL) {
		p->window = true;
		p->t0 = now;
		p->b0 = p->bytes;
		p->m0 = p->done;
	} else if (p->window && !p->drain &&
		   now - p->t0 >= ms * 1000000ULL) {
		p->drain = true;
		p->t1 = now;
		p->b1 = p->bytes;
		p->m1 = p->done;
	}
	return true;
}

/* Take what the CQ holds; -1 on failure, else how many. */
static int reap(struct pair *p, unsigned int ms)
{
	struct ibv_wc wc[DEPTH];
	uint64_t now;
	int i, n;

	n = ibv_poll_cq(p->cq, DEPTH, wc);
	if (bad(p, n < 0, "ibv_poll_cq: %d", n))
		return -1;
	now = now_ns();
	for (i = 0; i < n; i++)
		if (!complete(p, &wc[i], now, ms))
			return -1;
	return n && !refill(p) ? -1 : n;
}

/* Keep WRITEs in flight until the window is measured; false on failure. */
static bool measure(struct pair *p, unsigned int ms)
{
	struct pollfd pfd = { .fd = dev.ch->fd, .events = POLLIN };
	struct ibv_cq *ecq;
	void *ectx;
	int n;

	p->start = now_ns();
	if (!refill(p))
		return false;
	while (!p->drain || p->done < p->posted) {
		n = reap(p, ms);
		if (n < 0)
			return false;
		if (n)
			continue;
		if (bad(p, ibv_req_notify_cq(p->cq, 0), "ibv_req_notify_cq"))
			return false;
		n = reap(p, ms);	/* what came before the CQ was armed */
		if (n < 0)
			return false;
		if (n)
			continue;
		n = poll(&pfd, 1, TIMEOUT_MS);
		if (bad(p, n <= 0, "no completion for %d ms (%llu of %llu done)",
			TIMEOUT_MS, (unsigned long long)p->done,
			(unsigned long long)p->posted))
			return false;
		if (bad(p, ibv_get_cq_event(dev.ch, &ecq, &ectx),
			"ibv_get_cq_event"))
			return false;
		ibv_ack_cq_events(ecq, 1);
	}
	return true;
}

/* The window's rate in kbit/s, 0 if it has none. */
static uint64_t kbps(const struct pair *p)
{
	if (p->m1 < p->m0 + 2 || p->t1 <= p->t0)
		return 0;
	return (p->b1 - p->b0) * 8 * 1000000ULL / (p->t1 - p->t0);
}

/*
 * The probe: a thread due every millisecond that keeps when it woke more
 * than 2 ms late and by how much. It waits for a vCPU as the requester's
 * worker does when the gate's timer wakes it: behind the host, which may
 * take the vCPU away for L ms, and behind this program's checking. A
 * requester that runs L ms late costs its QP whatever of L exceeds what
 * the gate forgives: the 20 ms a waiting QP's bucket gathers less the
 * slice of up to 1 ms its timer waits for. See krate_main.c.
 */
#define PROBE_NS	1000000ULL
#define PROBE_SLACK	2000000ULL
#define GATE_FORGIVES	19000000ULL
#define PROBE_LATE	4096

static struct {
	pthread_t thread;
	atomic_int stop;
	unsigned int n;
	struct {
		uint64_t at, by;
	} late[PROBE_LATE];
} probe;

static void *probe_run(void *arg)
{
	uint64_t due = now_ns() + PROBE_NS, now;
	struct timespec ts;

	(void)arg;
	while (!atomic_load(&probe.stop)) {
		ts.tv_sec = due / 1000000000ULL;
		ts.tv_nsec = due % 1000000000ULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		now = now_ns();
		if (now > due + PROBE_SLACK && probe.n < PROBE_LATE) {
			probe.late[probe.n].at = now;
			probe.late[probe.n].by = now - due;
			probe.n++;
		}
		due = now + PROBE_NS;
	}
	return NULL;
}

static void probe_start(void)
{
	atomic_store(&probe.stop, 0);
	probe.n = 0;
	if (pthread_create(&probe.thread, NULL, probe_run, NULL))
		die("pthread_create: cannot start the probe");
}

static void probe_stop(void)
{
	atomic_store(&probe.stop, 1);
	pthread_join(probe.thread, NULL);
}

/*
 * The probe's wakes in (@t0, @t1]: the latest (@max), how many came
 * later than @depth (@n) and the ns beyond it in all (returned).
 */
static uint64_t probe_lost(uint64_t t0, uint64_t t1, uint64_t depth,
			   uint64_t *max, unsigned int *n)
{
	uint64_t lost = 0;
	unsigned int i;

	*max = 0;
	*n = 0;
	for (i = 0; i < probe.n; i++) {
		if (probe.late[i].at <= t0 || probe.late[i].at > t1)
			continue;
		if (probe.late[i].by > *max)
			*max = probe.late[i].by;
		if (probe.late[i].by > depth) {
			lost += probe.late[i].by - depth;
			(*n)++;
		}
	}
	return lost;
}

/*
 * A QP whose address vector has static rate 2.5 Gbit/s, measured against
 * it; a rate that misses is measured once more. Return: false if it
 * failed.
 */
static bool check_static(uint64_t cap)
{
	const char *name = "static-rate-2.5G", *verdict = "ok";
	uint64_t got, lost, max, ns, want = STATIC_MBPS * 1000ULL;
	double err, shortfall;
	char why[128] = "";
	unsigned int nlate;
	struct pair p;
	int try;

	for (try = 0; try < 2; try++) {
		pair_up(&p, 1 + try, IBV_RATE_2_5_GBPS);
		if (!try) {
			check_query(&p, "query-static-rate-2.5G",
				    IBV_RATE_2_5_GBPS);
			/* refused or not, the QP must carry the run below */
			note_rate_limit(p.qp);
			if (want > cap * headroom / 100) {
				line("skip", name,
				     "2500 Mbit/s is above %u%% of the capacity measured, %.2f Mbit/s",
				     headroom, cap / 1000.0);
				pair_down(&p);
				return true;
			}
		}
		probe_start();
		got = measure(&p, window_ms) ? kbps(&p) : 0;
		if (!got) {
			probe_stop();
			line("FAIL", name, "%s",
			     p.why[0] ? p.why : "too few WRITEs in the window");
			pair_down(&p);
			return false;
		}
		probe_stop();
		ns = p.t1 - p.t0;
		lost = probe_lost(p.t0, p.t1, GATE_FORGIVES, &max, &nlate);
		err = 100.0 * ((double)got - want) / want;
		shortfall = err < 0 ? -err / 100 * ns : 0;
		if (err >= -(double)tolerance && err <= tolerance) {
			verdict = "ok";
			why[0] = '\0';
		} else if (err < 0 && shortfall <= lost + ns * tolerance / 100.0) {
			verdict = "skip";
			snprintf(why, sizeof(why),
				 ": short by %.1f ms of sending, what the vCPU lost beyond what the gate forgives explains",
				 shortfall / 1e6);
		} else {
			verdict = "FAIL";
			snprintf(why, sizeof(why), ": more than %u%% off",
				 tolerance);
		}
		line(try || !strcmp(verdict, "ok") ? verdict : "retry", name,
		     "%.2f Mbit/s against a static rate of 2500 (%+.2f%%), over %llu ms, %llu packets, %llu MiB checked; the 1 ms probe ran up to %.1f ms late, %u times later than the gate forgives (19 ms), %.1f ms beyond%s",
		     got / 1000.0, err, (unsigned long long)ns / 1000000,
		     (unsigned long long)(p.m1 - p.m0) * MSG_PKTS,
		     (unsigned long long)p.done * MSG / (1024 * 1024),
		     max / 1e6, nlate, lost / 1e6, why);
		pair_down(&p);
		if (!strcmp(verdict, "ok"))
			break;
	}
	return strcmp(verdict, "FAIL");
}

int main(int argc, char **argv)
{
	uint64_t cap;
	struct pair p;
	int opt;

	while ((opt = getopt(argc, argv, "w:c:W:H:t:")) != -1) {
		switch (opt) {
		case 'w':
			window_ms = atoi(optarg);
			break;
		case 'c':
			capacity_ms = atoi(optarg);
			break;
		case 'W':
			warmup_ms = atoi(optarg);
			break;
		case 'H':
			headroom = atoi(optarg);
			break;
		case 't':
			tolerance = atoi(optarg);
			break;
		default:
			die("usage: see the top of sroce_rate.c");
		}
	}
	if (argc - optind != 2)
		die("usage: sroce_rate [options] DEV GID_INDEX");
	dev.gid_index = atoi(argv[optind + 1]);
	open_dev(argv[optind]);
	note_caps();

	pair_up(&p, 0, 0);
	check_query(&p, "query-no-static-rate", 0);
	cap = measure(&p, capacity_ms) ? kbps(&p) : 0;
	if (!cap) {
		line("FAIL", "user-capacity", "%s",
		     p.why[0] ? p.why : "too few WRITEs in the window");
		pair_down(&p);
		return 1;
	}
	line("ok", "user-capacity",
	     "%.2f Mbit/s with no static rate, over %llu ms, %llu packets, %llu MiB checked",
	     cap / 1000.0, (unsigned long long)(p.t1 - p.t0) / 1000000,
	     (unsigned long long)(p.m1 - p.m0) * MSG_PKTS,
	     (unsigned long long)p.done * MSG / (1024 * 1024));
	pair_down(&p);
	check_static(cap);
	return failed;
}
