// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_scale: many objects at once, for the scale scenario (sroce-vm
 * scenarios/scale.sh), between two RDMA devices of one host (or one
 * device twice).
 *
 *   sroce_scale DEV_A GID_A DEV_B GID_B NQPS NMRS
 *
 * GID_x is the GID index of the device's port 1 to use. One process, in
 * phases:
 *
 *   reg-mrs      NMRS MRs of one page each on A's PD, the pages taken in
 *                turn from one pool of at most POOL_PAGES pages (the
 *                memory pinned stays bounded whatever NMRS is); every MR
 *                must get its own lkey and rkey
 *   create-qps   NQPS RC QPs on each device, on a few shared CQs sized
 *                for every work request their QPs can have outstanding
 *   connect-qps  QP i of A and QP i of B, INIT -> RTR -> RTS, to each other
 *   traffic      on every pair, a SEND from A (into a receive posted on
 *                B) and an RDMA WRITE from B, 64 bytes each carrying a
 *                pattern of that pair's own; every completion must be a
 *                success, and every byte received is checked
 *   destroy-qps, destroy-cqs, dereg-mrs, close
 *
 * A phase of many steps is timed by tenths: progress at 10%, 50% and
 * 100%, the time per 1,000 steps of each tenth, and its growth judged
 * (GROWTH_MAX): the 10,000th object must cost about what the first did.
 * Output: "sroce_scale: phase NAME ok: DETAIL" (or "FAIL: WHY") for each
 * phase, the memory per MR and per idle connected QP (/proc/meminfo and
 * /proc/slabinfo before and after), and the summary line
 *
 *   sroce_scale: qps=N mrs=M create_qps=..s connect=..s traffic=..s
 *   destroy_qps=..s reg_mrs=..s dereg_mrs=..s bytes_per_qp=N result=PASS
 *
 * The first failure ends the run (result=FAIL, exit status 1), saying
 * the phase, the QP pair and the status it saw.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
/* 32 MiB pinned at most: 100,000 MRs share 8,192 pages, 12 or 13 each. */
#define POOL_PAGES	8192
/* Bytes of each SEND and each WRITE. */
#define MSG		64
/* An idle QP's rings: the smallest that carry the traffic phase. */
#define SQ_DEPTH	2
#define RQ_DEPTH	2
/* CQs per device, at least; more if one would exceed max_cqe. */
#define MIN_CQS		4
/* QP pairs whose traffic is in flight at once: bounded, so that a
 * burst of 10,000 SENDs does not overflow the UDP socket's buffer and
 * turn into retransmission timeouts. 256 pairs were too many for the
 * debug kernel beside another guest: a pair waited out its 7 ACK
 * timeouts of 67 ms behind the others' work (make check, e24676e). */
#define WINDOW		64
/* Seconds without any completion before the traffic phase gives up. */
#define STALL_S		60.0
/*
 * Growth: the time per step of the last tenths (the fastest of tenths
 * 8, 9, 10) against the first (tenths 1, 2, 3). A cost that grows with
 * the number of objects (a list walked per step) slows every last tenth
 * and gives about 5.7; linear gives 1. The fastest, because another
 * guest on the host only ever adds time: with medians, two tenths of a
 * 0.4 s phase slowed that way failed it (60x, make check beside a debug
 * guest). Judged only when a tenth has JUDGED_MIN steps.
 */
#define GROWTH_MAX	3.0
#define JUDGED_MIN	100
#define TENTHS		10

struct side {
	const char *name;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	union ibv_gid gid;
	struct ibv_cq **cq;
	int ncq;
	struct ibv_qp **qp;
	unsigned char *buf;	/* nqps send slots, then nqps receive slots */
	struct ibv_mr *mr;	/* buf's */
};

struct tenths {
	const char *what;
	unsigned long total, done;
	double t0;
	double at[TENTHS + 1];	/* seconds since t0 at the end of tenth k */
	int k;			/* tenths done */
};

struct mem {
	long avail, slab, vmalloc;	/* kB, /proc/meminfo */
	long long slabinfo;		/* bytes, /proc/slabinfo; -1: unreadable */
};

static unsigned long nqps, nmrs;
static int failures;
static struct {
	double create_qps, connect, traffic, destroy_qps, reg_mrs, dereg_mrs;
	long long bytes_per_qp;
} sum;

static void summary(void)
{
	printf("sroce_scale: qps=%lu mrs=%lu create_qps=%.2fs connect=%.2fs traffic=%.2fs destroy_qps=%.2fs reg_mrs=%.2fs dereg_mrs=%.2fs bytes_per_qp=%lld result=%s\n",
	       nqps, nmrs, sum.create_qps, sum.connect, sum.traffic,
	       sum.destroy_qps, sum.reg_mrs, sum.dereg_mrs, sum.bytes_per_qp,
	       failures ? "FAIL" : "PASS");
}

/* The first failure ends the run: say what it was, then the summary. */
static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	printf("sroce_scale: FAILED: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
	summary();
	exit(1);
}

static void __attribute__((format(printf, 3, 4)))
phase(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("sroce_scale: phase %s %s: ", name, ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		failures++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

static unsigned long tenth_end(const struct tenths *t, int k)
{
	return t->total * (unsigned long)k / TENTHS;
}

static void tenths_start(struct tenths *t, const char *what,
			 unsigned long total)
{
	memset(t, 0, sizeof(*t));
	t->what = what;
	t->total = total;
	t->t0 = now();
}

/* One step done; marks the tenths it completes (all, for a tiny total). */
static void tenths_step(struct tenths *t)
{
	t->done++;
	while (t->k < TENTHS && t->done >= tenth_end(t, t->k + 1)) {
		t->k++;
		t->at[t->k] = now() - t->t0;
		if (t->k == 1 || t->k == 5 || t->k == TENTHS)
			printf("%s: %d%% (%lu of %lu) at %.2f s\n", t->what,
			       t->k * 10, t->done, t->total, t->at[t->k]);
	}
}

/* Seconds per step in tenth k (1-based); -1 for a tenth of no steps. */
static double per_step(const struct tenths *t, int k)
{
	unsigned long n = tenth_end(t, k) - tenth_end(t, k - 1);

	return n ? (t->at[k] - t->at[k - 1]) / n : -1;
}

static double min3(double x, double y, double z)
{
	double m = x < y ? x : y;

	return m < z ? m : z;
}

/*
 * Print the time per 1,000 steps of each tenth and the phase's line;
 * growth over GROWTH_MAX fails the phase. Returns the phase's seconds.
 */
static double tenths_end(struct tenths *t, const char *phase_name)
{
	double first, last, growth = 0, total = now() - t->t0;
	char line[512];
	int k, len = 0, judged;

	for (k = 1; k <= TENTHS; k++) {
		double s = per_step(t, k);

		len += snprintf(line + len, sizeof(line) - len,
				s < 0 ? " -" : " %.3f", s * 1000);
	}
	printf("%s: %lu in %.2f s; seconds per 1000 by tenth:%s\n",
	       t->what, t->total, total, line);
	judged = t->total / TENTHS >= JUDGED_MIN;
	if (judged) {
		first = min3(per_step(t, 1), per_step(t, 2), per_step(t, 3));
		last = min3(per_step(t, 8), per_step(t, 9), per_step(t, 10));
		growth = first > 0 ? last / first : 0;
	}
	if (!judged)
		phase(phase_name, 1, "%lu in %.2f s, growth not judged (under %d a tenth)",
		      t->total, total, JUDGED_MIN);
	else
		phase(phase_name, growth <= GROWTH_MAX,
		      "%lu in %.2f s, last tenths %.2fx the first (limit %.1f)",
		      t->total, total, growth, GROWTH_MAX);
	return total;
}

static long long slabinfo_bytes(void)
{
	unsigned long active, num, size;
	long long total = 0;
	char line[512], name[128];
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lu %lu %lu", name, &active, &num,
			   &size) == 4)
			total += (long long)num * size;
	fclose(f);
	return total;
}

static void mem_read(struct mem *m)
{
	char line[256];
	long v;
	FILE *f = fopen("/proc/meminfo", "r");

	memset(m, 0, sizeof(*m));
	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %ld", &v) == 1)
			m->avail = v;
		else if (sscanf(line, "Slab: %ld", &v) == 1)
			m->slab = v;
		else if (sscanf(line, "VmallocUsed: %ld", &v) == 1)
			m->vmalloc = v;
	}
	fclose(f);
	m->slabinfo = slabinfo_bytes();
}

/*
 * Bytes per object between @a and @b, @n objects: MemAvailable's drop,
 * and of it the slab and vmalloc parts. Returns the first.
 */
static long long mem_report(const char *what, const struct mem *a,
			    const struct mem *b, unsigned long n)
{
	long long per = (a->avail - b->avail) * 1024LL / (long long)n;

	printf("memory per %s: %lld bytes (MemAvailable), slab %lld, vmalloc %lld",
	       what, per, (b->slab - a->slab) * 1024LL / (long long)n,
	       (b->vmalloc - a->vmalloc) * 1024LL / (long long)n);
	if (a->slabinfo >= 0 && b->slabinfo >= 0)
		printf(", slabinfo %lld", (b->slabinfo - a->slabinfo) / (long long)n);
	printf(" (over %lu)\n", n);
	return per;
}

static void open_side(struct side *s, const char *name, const char *gid)
{
	struct ibv_device **list;
	int i, n;

	s->name = name;
	s->gid_index = atoi(gid);
	list = ibv_get_device_list(&n);
	if (!list)
		die("no device list: %s", strerror(errno));
	for (i = 0; i < n && !s->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s->ctx)
		die("cannot open %s", name);
	if (ibv_query_device(s->ctx, &s->attr))
		die("%s: query_device: %s", name, strerror(errno));
	if (ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		die("%s: GID %d: %s", name, s->gid_index, strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("%s: alloc_pd: %s", name, strerror(errno));
	printf("%s: max_qp %d max_cq %d max_cqe %d max_mr %d max_qp_wr %d\n",
	       name, s->attr.max_qp, s->attr.max_cq, s->attr.max_cqe,
	       s->attr.max_mr, s->attr.max_qp_wr);
	if (nqps > (unsigned long)s->attr.max_qp ||
	    nmrs + 1 > (unsigned long)s->attr.max_mr)
		die("%s: %lu QPs and %lu MRs are over its limits", name, nqps,
		    nmrs + 1);
}

/*
 * Pinned memory counts against RLIMIT_MEMLOCK unless the process has
 * CAP_IPC_LOCK: raise it if allowed, and say what it is either way.
 */
static void raise_memlock(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &r)) {
		int e = errno;

		getrlimit(RLIMIT_MEMLOCK, &r);
		printf("RLIMIT_MEMLOCK stays at %llu bytes: %s\n",
		       (unsigned long long)r.rlim_cur, strerror(e));
	} else {
		printf("RLIMIT_MEMLOCK raised to unlimited\n");
	}
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Every MR has a key of its own: sort @key (n of them), look for twins. */
static void keys_unique(uint32_t *key, unsigned long n, const char *which)
{
	unsigned long i;

	qsort(key, n, sizeof(*key), cmp_u32);
	for (i = 1; i < n; i++)
		if (key[i] == key[i - 1])
			die("reg-mrs: two MRs have %s 0x%x", which, key[i]);
}

/* @before: the memory once the pool is faulted in, before the first MR */
static struct ibv_mr **reg_mrs(struct side *s, unsigned char **pool_out,
			       size_t *pool_len, struct mem *before)
{
	size_t pages = nmrs < POOL_PAGES ? (nmrs ? nmrs : 1) : POOL_PAGES;
	struct ibv_mr **mr = xcalloc(nmrs, sizeof(*mr));
	uint32_t *lkey = xcalloc(nmrs, sizeof(*lkey));
	uint32_t *rkey = xcalloc(nmrs, sizeof(*rkey));
	unsigned char *pool;
	struct tenths t;
	unsigned long i;

	pool = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED)
		die("mmap of %zu pages: %s", pages, strerror(errno));
	/* faulted in now, so that the first tenth does not pay for it */
	memset(pool, 0x3c, pages * PAGE);
	mem_read(before);
	tenths_start(&t, "reg-mrs", nmrs);
	for (i = 0; i < nmrs; i++) {
		mr[i] = ibv_reg_mr(s->pd, pool + (i % pages) * PAGE, PAGE,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE);
		if (!mr[i])
			die("reg-mrs: MR %lu of %lu: %s (errno %d)", i, nmrs,
			    strerror(errno), errno);
		lkey[i] = mr[i]->lkey;
		rkey[i] = mr[i]->rkey;
		tenths_step(&t);
	}
	sum.reg_mrs = tenths_end(&t, "reg-mrs");
	keys_unique(lkey, nmrs, "lkey");
	keys_unique(rkey, nmrs, "rkey");
	printf("reg-mrs: %lu lkeys and %lu rkeys, all distinct\n", nmrs, nmrs);
	free(lkey);
	free(rkey);
	*pool_out = pool;
	*pool_len = pages * PAGE;
	return mr;
}

static void dereg_mrs(struct ibv_mr **mr, unsigned char *pool, size_t len)
{
	struct tenths t;
	unsigned long i;
	int err;

	tenths_start(&t, "dereg-mrs", nmrs);
	for (i = 0; i < nmrs; i++) {
		err = ibv_dereg_mr(mr[i]);
		if (err)
			die("dereg-mrs: MR %lu: %s", i, strerror(err));
		tenths_step(&t);
	}
	sum.dereg_mrs = tenths_end(&t, "dereg-mrs");
	free(mr);
	munmap(pool, len);
}

/* The traffic buffer and its MR, outside the QPs' memory measurement. */
static void traffic_mr(struct side *s)
{
	size_t len = 2 * (nqps ? nqps : 1) * MSG;

	s->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED)
		die("%s: mmap of %zu bytes: %s", s->name, len, strerror(errno));
	memset(s->buf, 0, len);
	s->mr = ibv_reg_mr(s->pd, s->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die("%s: reg_mr of the traffic buffer: %s (errno %d)", s->name,
		    strerror(errno), errno);
}

/*
 * A few CQs shared by all QPs, each sized for every work request its
 * QPs can have outstanding (SQ_DEPTH + RQ_DEPTH each), so that none can
 * overflow: more CQs than MIN_CQS only if one would exceed max_cqe.
 */
static void create_cqs(struct side *s)
{
	unsigned long per;
	int i, ncq = MIN_CQS;

	for (;;) {
		per = (nqps + ncq - 1) / ncq * (SQ_DEPTH + RQ_DEPTH);
		if (per <= (unsigned long)s->attr.max_cqe)
			break;
		ncq *= 2;
	}
	if (per < 16)
		per = 16;
	s->ncq = ncq;
	s->cq = xcalloc(ncq, sizeof(*s->cq));
	for (i = 0; i < ncq; i++) {
		s->cq[i] = ibv_create_cq(s->ctx, (int)per, NULL, NULL, 0);
		if (!s->cq[i])
			die("%s: create_cq %d of %d (%lu entries): %s", s->name,
			    i, ncq, per, strerror(errno));
	}
	printf("%s: %d CQs of %lu entries\n", s->name, ncq, per);
}

static struct ibv_qp *create_qp(struct side *s, unsigned long i)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp *qp;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq[i % s->ncq];
	qa.recv_cq = s->cq[i % s->ncq];
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = SQ_DEPTH;
	qa.cap.max_recv_wr = RQ_DEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(s->pd, &qa);
	/* ENOMEM may be vm.max_map_count: each QP maps its two rings */
	if (!qp)
		die("create-qps: %s: QP %lu of %lu: %s (errno %d)", s->name, i,
		    nqps, strerror(errno), errno);
	return qp;
}

static void create_qps(struct side *a, struct side *b)
{
	struct tenths t;
	unsigned long i;

	a->qp = xcalloc(nqps, sizeof(*a->qp));
	b->qp = xcalloc(nqps, sizeof(*b->qp));
	tenths_start(&t, "create-qps", nqps);
	for (i = 0; i < nqps; i++) {
		a->qp[i] = create_qp(a, i);
		b->qp[i] = create_qp(b, i);
		tenths_step(&t);
	}
	sum.create_qps = tenths_end(&t, "create-qps");
}

/* QP i of @s to the state in @a: fails the run, naming the QP, if not. */
static void modify(struct side *s, unsigned long i, struct ibv_qp_attr *a,
		   int mask, const char *state)
{
	int err = ibv_modify_qp(s->qp[i], a, IBV_QP_STATE | mask);

	if (err)
		die("connect-qps: %s: QP %lu (0x%x) to %s: %s", s->name, i,
		    s->qp[i]->qp_num, state, strerror(err));
}

static void to_init(struct side *s, unsigned long i)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	modify(s, i, &a, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	       "INIT");
}

static void to_rtr(struct side *s, struct side *peer, unsigned long i)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp[i]->qp_num;
	a.rq_psn = 0x1000;
	/* no READ or atomic in the traffic: the least responder resources */
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)s->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	modify(s, i, &a, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	       IBV_QP_MIN_RNR_TIMER, "RTR");
}

static void to_rts(struct side *s, unsigned long i)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 17;		/* 537 ms: a loaded debug guest is slow */
	a.retry_cnt = 7;
	a.rnr_retry = 7;	/* RNR NAKs are retried without end */
	a.sq_psn = 0x1000;
	a.max_rd_atomic = 1;
	modify(s, i, &a, IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static void connect_qps(struct side *a, struct side *b)
{
	struct tenths t;
	unsigned long i;

	tenths_start(&t, "connect-qps", nqps);
	for (i = 0; i < nqps; i++) {
		to_init(a, i);
		to_init(b, i);
		to_rtr(a, b, i);
		to_rtr(b, a, i);
		to_rts(a, i);
		to_rts(b, i);
		tenths_step(&t);
	}
	sum.connect = tenths_end(&t, "connect-qps");
}

enum { GOT_SEND = 1, GOT_RECV = 2, GOT_WRITE = 4, GOT_ALL = 7 };

static unsigned char *slot(const struct side *s, unsigned long i, int recv)
{
	return s->buf + ((recv ? nqps : 0) + i) * MSG;
}

/*
 * Byte k of pair i's message in direction dir (0: A's SEND, 1: B's
 * WRITE): the pair's index in the first four bytes, so that no two
 * pairs' messages are alike.
 */
static unsigned char pattern(unsigned long i, int dir, size_t k)
{
	if (k < 4)
		return (unsigned char)((i >> (8 * k)) ^ (dir ? 0xa5 : 0x5a));
	return (unsigned char)(i * 31 + k * 7 + dir * 101 + 1);
}

static void post(struct side *s, unsigned long i, int kind, struct side *peer)
{
	struct ibv_send_wr wr, *bad_wr;
	struct ibv_recv_wr rwr, *bad_rwr;
	struct ibv_sge sge;
	int err;

	sge.addr = (uintptr_t)slot(s, i, kind == GOT_RECV);
	sge.length = MSG;
	sge.lkey = s->mr->lkey;
	if (kind == GOT_RECV) {
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = (uint64_t)kind << 32 | i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		err = ibv_post_recv(s->qp[i], &rwr, &bad_rwr);
	} else {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)kind << 32 | i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.opcode = kind == GOT_SEND ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		if (peer) {
			wr.wr.rdma.remote_addr = (uintptr_t)slot(peer, i, 1);
			wr.wr.rdma.rkey = peer->mr->rkey;
		}
		err = ibv_post_send(s->qp[i], &wr, &bad_wr);
	}
	if (err)
		die("traffic: %s: QP %lu: post of kind %d: %s", s->name, i,
		    kind, strerror(err));
}

/* One completion of @s: a success, expected, not seen before. */
static void take_wc(const struct side *s, const struct ibv_wc *wc,
		    unsigned char *got)
{
	unsigned long i = wc->wr_id & 0xffffffffu;
	int kind = (int)(wc->wr_id >> 32);

	if (wc->status != IBV_WC_SUCCESS)
		die("traffic: %s: QP pair %lu (QPN 0x%x): completion of kind %d: status %s (%d), vendor_err 0x%x",
		    s->name, i, wc->qp_num, kind,
		    ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	if (i >= nqps || (kind != GOT_SEND && kind != GOT_RECV &&
			  kind != GOT_WRITE) || (got[i] & kind))
		die("traffic: %s: unexpected completion, wr_id 0x%llx", s->name,
		    (unsigned long long)wc->wr_id);
	if (wc->qp_num != s->qp[i]->qp_num)
		die("traffic: %s: QP pair %lu: completion on QPN 0x%x, not 0x%x",
		    s->name, i, wc->qp_num, s->qp[i]->qp_num);
	if (kind == GOT_RECV && (wc->opcode != IBV_WC_RECV ||
				 wc->byte_len != MSG))
		die("traffic: %s: QP pair %lu: receive of opcode %d, %u bytes",
		    s->name, i, wc->opcode, wc->byte_len);
	got[i] |= kind;
}

/* Poll every CQ of @s once; the number of completions taken. */
static unsigned long poll_side(const struct side *s, unsigned char *got)
{
	struct ibv_wc wc[64];
	unsigned long taken = 0;
	int c, j, n;

	for (c = 0; c < s->ncq; c++) {
		n = ibv_poll_cq(s->cq[c], 64, wc);
		if (n < 0)
			die("traffic: %s: poll_cq %d failed", s->name, c);
		for (j = 0; j < n; j++)
			take_wc(s, &wc[j], got);
		taken += n;
	}
	return taken;
}

/* Pairs lo..hi-1: post, then wait for their 3 completions each. */
static void traffic_window(struct side *a, struct side *b, unsigned long lo,
			   unsigned long hi, unsigned char *got)
{
	unsigned long i, left = 3 * (hi - lo), n;
	double last = now();

	for (i = lo; i < hi; i++) {
		post(b, i, GOT_RECV, NULL);
		post(a, i, GOT_SEND, NULL);
		post(b, i, GOT_WRITE, a);
	}
	while (left) {
		n = poll_side(a, got) + poll_side(b, got);
		if (n > left)
			die("traffic: more completions than posted");
		left -= n;
		if (n) {
			last = now();
			continue;
		}
		if (now() - last < STALL_S)
			continue;
		for (i = lo; i < hi && got[i] == GOT_ALL; i++)
			;
		die("traffic: no completion for %.0f s; QP pair %lu (QPNs 0x%x, 0x%x) has seen 0x%x of 0x%x, %lu missing",
		    STALL_S, i, a->qp[i]->qp_num, b->qp[i]->qp_num, got[i],
		    GOT_ALL, left);
	}
}

/* Every byte each pair received, both directions; the number checked. */
static unsigned long verify(const struct side *a, const struct side *b)
{
	unsigned long i, checked = 0;
	const unsigned char *p;
	size_t k;
	int dir;

	for (i = 0; i < nqps; i++)
		for (dir = 0; dir < 2; dir++) {
			p = slot(dir ? a : b, i, 1);
			for (k = 0; k < MSG; k++, checked++)
				if (p[k] != pattern(i, dir, k))
					die("traffic: QP pair %lu: %s byte %zu is 0x%02x, not 0x%02x",
					    i, dir ? "WRITE" : "SEND", k,
					    p[k], pattern(i, dir, k));
		}
	return checked;
}

static void traffic(struct side *a, struct side *b)
{
	unsigned char *got = xcalloc(nqps, 1);
	unsigned long i, hi, checked;
	double t0 = now();
	size_t k;

	for (i = 0; i < nqps; i++)
		for (k = 0; k < MSG; k++) {
			slot(a, i, 0)[k] = pattern(i, 0, k);
			slot(b, i, 0)[k] = pattern(i, 1, k);
		}
	for (i = 0; i < nqps; i = hi) {
		hi = i + WINDOW < nqps ? i + WINDOW : nqps;
		traffic_window(a, b, i, hi, got);
	}
	checked = verify(a, b);
	sum.traffic = now() - t0;
	free(got);
	phase("traffic", 1, "%lu SENDs and %lu WRITEs on %lu pairs, %lu completions IBV_WC_SUCCESS, %lu bytes checked, %.2f s",
	      nqps, nqps, nqps, 3 * nqps, checked, sum.traffic);
}

static void destroy_qps(struct side *a, struct side *b)
{
	struct tenths t;
	unsigned long i;
	int err;

	tenths_start(&t, "destroy-qps", nqps);
	for (i = 0; i < nqps; i++) {
		err = ibv_destroy_qp(a->qp[i]);
		if (!err)
			err = ibv_destroy_qp(b->qp[i]);
		if (err)
			die("destroy-qps: QP pair %lu: %s", i, strerror(err));
		tenths_step(&t);
	}
	sum.destroy_qps = tenths_end(&t, "destroy-qps");
	free(a->qp);
	free(b->qp);
}

static void destroy_cqs(struct side *s)
{
	int i, err;

	for (i = 0; i < s->ncq; i++) {
		err = ibv_destroy_cq(s->cq[i]);
		if (err)
			die("%s: destroy_cq %d: %s", s->name, i, strerror(err));
	}
	free(s->cq);
}

static void close_side(struct side *s)
{
	int err = ibv_dereg_mr(s->mr);

	if (err)
		die("%s: dereg_mr of the traffic buffer: %s", s->name,
		    strerror(err));
	munmap(s->buf, 2 * (nqps ? nqps : 1) * MSG);
	err = ibv_dealloc_pd(s->pd);
	if (err)
		die("%s: dealloc_pd: %s", s->name, strerror(err));
	if (ibv_close_device(s->ctx))
		die("%s: close_device: %s", s->name, strerror(errno));
}

static unsigned long number(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end || v > 0xffffffffUL)
		die("bad %s '%s'", what, s);
	return v;
}

static void teardown(struct side *a, struct side *b, struct ibv_mr **mr,
		     unsigned char *pool, size_t pool_len)
{
	double t0;

	destroy_qps(a, b);
	t0 = now();
	destroy_cqs(a);
	destroy_cqs(b);
	phase("destroy-cqs", 1, "%d CQs in %.2f s", a->ncq + b->ncq,
	      now() - t0);
	dereg_mrs(mr, pool, pool_len);
	t0 = now();
	close_side(a);
	close_side(b);
	phase("close", 1, "traffic MRs, PDs and both contexts in %.2f s",
	      now() - t0);
}

int main(int argc, char **argv)
{
	struct side a = { 0 }, b = { 0 };
	struct mem start, m0, m1, m2, m3, m4;
	unsigned char *pool;
	struct ibv_mr **mr;
	size_t pool_len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 7) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B NQPS NMRS\n",
			argv[0]);
		return 2;
	}
	nqps = number(argv[5], "NQPS");
	nmrs = number(argv[6], "NMRS");
	raise_memlock();
	open_side(&a, argv[1], argv[2]);
	open_side(&b, argv[3], argv[4]);

	mem_read(&start);
	mr = reg_mrs(&a, &pool, &pool_len, &m0);
	mem_read(&m1);
	if (nmrs)
		mem_report("MR", &m0, &m1, nmrs);
	traffic_mr(&a);
	traffic_mr(&b);

	mem_read(&m2);
	create_cqs(&a);
	create_cqs(&b);
	create_qps(&a, &b);
	connect_qps(&a, &b);
	mem_read(&m3);
	if (nqps) {
		sum.bytes_per_qp = mem_report("idle connected QP", &m2, &m3,
					      2 * nqps);
		printf("(per QP: its share of the CQs, the kernel's QP and the rings librxe mmaps, and librxe's own memory)\n");
	}

	traffic(&a, &b);
	teardown(&a, &b, mr, pool, pool_len);
	mem_read(&m4);
	printf("memory after teardown: MemAvailable %+ld kB, slab %+ld kB, vmalloc %+ld kB against the start\n",
	       m4.avail - start.avail, m4.slab - start.slab,
	       m4.vmalloc - start.vmalloc);
	summary();
	return failures ? 1 : 0;
}
