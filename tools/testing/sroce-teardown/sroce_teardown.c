// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_teardown: traffic for the teardown scenario (sroce-vm
 * scenarios/teardown.sh), between two RDMA devices of one host.
 *
 *   sroce_teardown traffic DEV0 GID0 DEV1 GID1 READY
 *	Connects an RC QP on DEV0 to one on DEV1 and keeps RDMA WRITEs and
 *	READs of 16 KiB in flight from DEV0 until SIGUSR1. READY is created
 *	once the first completions arrived. The first failure of a post or
 *	a completion stops posting (a device may be going away under it)
 *	and is counted. On SIGUSR1 it checks each device the way a user of
 *	a hot-unplugged NIC would and prints one line
 *
 *	  state DEV0=ok|ERRNO DEV1=ok|ERRNO completions N errors N touched N
 *	  [first WHAT]
 *
 *	where ERRNO names how a fresh verbs call on that device's context
 *	failed (ibv_alloc_pd) and touched counts the pages of mappings of
 *	removed uverbs files ("(deleted)" in /proc/self/maps) it read and
 *	wrote; WHAT, after a failure, says what the first one was (a post's
 *	errno, a poll, or a completion's status, wr_id and time since the
 *	pump started). Exits 0 unless the program itself could not run.
 *
 *   sroce_teardown serve DEV0 GID0 DEV1 GID1
 *	The same for many runs in one process, driven by commands on stdin
 *	("start", "report", "quit"; see serve()), so that an iteration
 *	costs no exec. After "report" it closes both contexts, the mappings
 *	of a removed device unmapped after they were touched.
 *
 *   sroce_teardown churn DEV0 GID0 DEV1 GID1 ITERS
 *	ITERS times: create CQs (on a completion channel, armed), MRs and
 *	QPs on both devices, connect, put WRITEs and READs in flight, wait
 *	until a completion event is pending, then tear down with the
 *	traffic still flowing, in one of four orders (requester QP first,
 *	responder QP first, responder MR first, requester MR first). A CQ
 *	with a QP on it must refuse destruction (EBUSY); the CQs are
 *	destroyed with their event unread. Exits 0 if every step behaved.
 *
 * GIDn is the GID index of the device's port 1 to use.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/*
 * 8 messages of 16 KiB in flight: 128 KiB, below a UDP socket's default
 * receive buffer. More only gets dropped at the receiving socket on a
 * slow (debug) kernel, and costs retransmission timeouts.
 */
#define MSG_SIZE	(16 * 1024)
#define BUF_SIZE	(16 * MSG_SIZE)
#define DEPTH		8
#define CQ_DEPTH	(2 * DEPTH)

struct side {
	const char *name;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	union ibv_gid gid;
	void *buf;
};

static volatile sig_atomic_t report_now;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sroce_teardown: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static void on_usr1(int sig)
{
	(void)sig;
	report_now = 1;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("no device list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open %s", name);
	return ctx;
}

static void open_side(struct side *s, const char *name, const char *gid)
{
	s->name = name;
	s->gid_index = atoi(gid);
	s->ctx = open_dev(name);
	if (ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		die("%s: GID %d: %s", name, s->gid_index, strerror(errno));
	s->buf = aligned_alloc(4096, BUF_SIZE);
	if (!s->buf)
		die("out of memory");
	memset(s->buf, 0x5a, BUF_SIZE);
}

/* PD, channel, armed CQ, MR and an RC QP in RESET. */
static void create_objs(struct side *s)
{
	struct ibv_qp_init_attr qa;

	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("%s: alloc_pd: %s", s->name, strerror(errno));
	s->ch = ibv_create_comp_channel(s->ctx);
	if (!s->ch)
		die("%s: create_comp_channel: %s", s->name, strerror(errno));
	s->cq = ibv_create_cq(s->ctx, CQ_DEPTH, NULL, s->ch, 0);
	if (!s->cq)
		die("%s: create_cq: %s", s->name, strerror(errno));
	if (ibv_req_notify_cq(s->cq, 0))
		die("%s: req_notify_cq", s->name);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		die("%s: reg_mr: %s", s->name, strerror(errno));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = DEPTH;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (!s->qp)
		die("%s: create_qp: %s", s->name, strerror(errno));
}

static void connect_qp(struct side *me, struct side *peer)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	err = ibv_modify_qp(me->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		die("%s: to INIT: %s", me->name, strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 8;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)me->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(me->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		die("%s: to RTR: %s", me->name, strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	/*
	 * 268 ms, 7 retries. The traffic only has to flow while devices go
	 * away around it; a debug kernel under TCG, sharing the host with
	 * another guest, can take longer than 67 ms (14) to answer READs
	 * several times in a row, and a retry error then fails a step that
	 * removed nothing.
	 */
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 8;
	err = ibv_modify_qp(me->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die("%s: to RTS: %s", me->name, strerror(err));
}

/* One WRITE (even @n) or READ (odd) of MSG_SIZE from @a's slot n to @b's. */
static int post_one(struct side *a, struct side *b, unsigned long n)
{
	size_t off = (n % (BUF_SIZE / MSG_SIZE)) * MSG_SIZE;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	sge.addr = (uintptr_t)a->buf + off;
	sge.length = MSG_SIZE;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = n;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = (n & 1) ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + off;
	wr.wr.rdma.rkey = b->mr->rkey;
	return ibv_post_send(a->qp, &wr, &bad);
}

static const char *errno_name(int e)
{
	switch (e) {
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	case ENXIO: return "ENXIO";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	default: return "other";
	}
}

/* How a fresh verbs call on @s's context ends: "ok" or the errno's name. */
static const char *probe(struct side *s)
{
	struct ibv_pd *pd;

	errno = 0;
	pd = ibv_alloc_pd(s->ctx);
	if (!pd)
		return errno_name(errno);
	ibv_dealloc_pd(pd);
	return "ok";
}

/*
 * Read and write every page of each mapping of a removed uverbs file: the
 * rings of an unplugged device. Must neither fault nor hurt the kernel.
 */
static unsigned long touch_deleted_maps(void)
{
	unsigned long start, end, touched = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		volatile unsigned char *p;

		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    !strstr(line, "(deleted)"))
			continue;
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		for (p = (unsigned char *)start; p < (unsigned char *)end;
		     p += 4096) {
			p[0] = (unsigned char)(p[0] + 1);
			p[4095] = 0xff;
			touched++;
		}
		/* and gone: the last reference to the removed file goes too */
		if (munmap((void *)start, end - start))
			die("munmap of a removed device's ring: %s",
			    strerror(errno));
	}
	fclose(f);
	return touched;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct pump {
	unsigned long posted, done, errors;
	int outstanding, stalled;
	double t0;		/* when the pump started */
	char first[80];		/* the first failure, for the state line */
};

/* Count a failure; the first one is kept, described by @fmt. */
static void __attribute__((format(printf, 2, 3)))
pump_fail(struct pump *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->errors++) {
		va_start(ap, fmt);
		vsnprintf(p->first, sizeof(p->first), fmt, ap);
		va_end(ap);
	}
	p->stalled = 1;
}

/*
 * Keep DEPTH WRITEs and READs in flight from @a to @b until @stop says so;
 * @ready is called once, when DEPTH have completed. The first failure
 * (post, poll or a completion in error: the device may be going away)
 * stops posting; it is counted, and the pump idles.
 */
static void pump(struct side *a, struct side *b, struct pump *p,
		 int (*stop)(void), void (*ready)(void))
{
	struct ibv_wc wc[DEPTH];
	int ready_done = 0;
	int i, n;

	memset(p, 0, sizeof(*p));
	p->t0 = now();
	while (!stop()) {
		while (!p->stalled && p->outstanding < DEPTH) {
			i = post_one(a, b, p->posted);
			if (i) {
				pump_fail(p, "post:%s", errno_name(i));
				break;
			}
			p->posted++;
			p->outstanding++;
		}
		n = p->stalled ? 0 : ibv_poll_cq(a->cq, DEPTH, wc);
		if (n < 0)
			pump_fail(p, "poll");
		for (i = 0; i < n; i++) {
			p->outstanding--;
			p->done++;
			if (wc[i].status != IBV_WC_SUCCESS)
				pump_fail(p, "wc:%s(%d):wr_id=%llu:after=%.1fs",
					  ibv_wc_status_str(wc[i].status),
					  wc[i].status,
					  (unsigned long long)wc[i].wr_id,
					  now() - p->t0);
		}
		if (!ready_done && p->done >= DEPTH) {
			ready();
			ready_done = 1;
		}
		if (p->stalled)
			usleep(1000);
	}
}

/* The state line (see the top of this file); @live: which devices live. */
static void report(struct side *a, struct side *b, const struct pump *p,
		   int live[2])
{
	const char *sa = probe(a), *sb = probe(b);
	unsigned long touched = touch_deleted_maps();

	printf("state %s=%s %s=%s completions %lu errors %lu touched %lu%s%s\n",
	       a->name, sa, b->name, sb, p->done, p->errors, touched,
	       p->errors ? " first " : "", p->first);
	fflush(stdout);
	live[0] = !strcmp(sa, "ok");
	live[1] = !strcmp(sb, "ok");
}

static const char *ready_file;

static void make_ready_file(void)
{
	FILE *f = fopen(ready_file, "w");

	if (!f)
		die("%s: %s", ready_file, strerror(errno));
	fclose(f);
}

static int usr1_seen(void)
{
	return report_now;
}

static int traffic(struct side *a, struct side *b, const char *ready)
{
	struct pump p;
	int live[2];

	signal(SIGUSR1, on_usr1);
	ready_file = ready;
	create_objs(a);
	create_objs(b);
	connect_qp(a, b);
	connect_qp(b, a);
	pump(a, b, &p, usr1_seen, make_ready_file);
	report(a, b, &p, live);
	/* Exit with whatever is left: close on a live device, as kill -9. */
	return 0;
}

static void say_ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

/* A command is waiting on stdin (or stdin is closed). */
static int command_waiting(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void destroy_objs(struct side *s)
{
	if (ibv_destroy_qp(s->qp) || ibv_dereg_mr(s->mr) ||
	    ibv_destroy_cq(s->cq) || ibv_destroy_comp_channel(s->ch) ||
	    ibv_dealloc_pd(s->pd))
		die("%s: destroying the objects of a live device failed",
		    s->name);
}

/* Close @s after a run: its objects first if the device still lives. */
static void close_side(struct side *s, int live)
{
	if (live)
		destroy_objs(s);
	/*
	 * On a removed device the objects are already gone in the kernel
	 * and librxe's destroy verbs fail with EIO: leave their user-space
	 * halves, close the context.
	 */
	if (ibv_close_device(s->ctx))
		die("%s: close_device: %s", s->name, strerror(errno));
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/*
 * serve: one process for many runs, so that an iteration costs no exec
 * (seconds on the debug kernel). Commands on stdin, one a line:
 *   start   open both devices afresh, connect, pump; "ready" once the
 *	     first completions arrived; the pump runs on until the next
 *	     command
 *   report  stop, print the state line, destroy what lives, close both
 *	     contexts (the mappings of a removed device were unmapped by
 *	     touch_deleted_maps()); then "closed"
 *   quit    exit
 */
static int serve(char **argv)
{
	struct side a, b;
	char cmd[32];
	struct pump p;
	int live[2];

	setvbuf(stdin, NULL, _IONBF, 0);
	while (fgets(cmd, sizeof(cmd), stdin)) {
		if (!strcmp(cmd, "quit\n"))
			return 0;
		if (strcmp(cmd, "start\n"))
			die("unknown command %s", cmd);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		open_side(&a, argv[2], argv[3]);
		open_side(&b, argv[4], argv[5]);
		create_objs(&a);
		create_objs(&b);
		connect_qp(&a, &b);
		connect_qp(&b, &a);
		pump(&a, &b, &p, command_waiting, say_ready);
		if (!fgets(cmd, sizeof(cmd), stdin) || strcmp(cmd, "report\n"))
			die("expected report");
		report(&a, &b, &p, live);
		close_side(&a, live[0]);
		close_side(&b, live[1]);
		printf("closed\n");
		fflush(stdout);
	}
	return 0;
}

/* Wait up to 2 s for a completion event on @s's channel, unread. */
static int event_pending(struct side *s)
{
	struct pollfd p = { .fd = s->ch->fd, .events = POLLIN };

	return poll(&p, 1, 2000) == 1 && (p.revents & POLLIN);
}

static void destroy_qp(struct side *s)
{
	if (s->qp && ibv_destroy_qp(s->qp))
		die("%s: destroy_qp: %s", s->name, strerror(errno));
	s->qp = NULL;
}

static void dereg_mr(struct side *s)
{
	if (s->mr && ibv_dereg_mr(s->mr))
		die("%s: dereg_mr: %s", s->name, strerror(errno));
	s->mr = NULL;
}

static void destroy_rest(struct side *s)
{
	int err;

	destroy_qp(s);
	dereg_mr(s);
	/* the event stays unread: reported 0, so this does not wait for it */
	err = ibv_destroy_cq(s->cq);
	if (err)
		die("%s: destroy_cq with an event pending: %s", s->name,
		    strerror(err));
	if (ibv_destroy_comp_channel(s->ch))
		die("%s: destroy_comp_channel: %s", s->name, strerror(errno));
	if (ibv_dealloc_pd(s->pd))
		die("%s: dealloc_pd: %s", s->name, strerror(errno));
	s->cq = NULL;
	s->ch = NULL;
	s->pd = NULL;
}

static int churn(struct side *a, struct side *b, unsigned long iters)
{
	static const char *const order[] = {
		"requester QP", "responder QP", "responder MR", "requester MR",
	};
	unsigned long it, posted;
	double t0 = now();
	int err;

	for (it = 0; it < iters; it++) {
		create_objs(a);
		create_objs(b);
		connect_qp(a, b);
		connect_qp(b, a);
		for (posted = 0; posted < DEPTH; posted++)
			if (post_one(a, b, posted))
				die("iteration %lu: post_send: %s", it,
				    strerror(errno));
		/* the CQ is armed: its first completion queues an event */
		if (!event_pending(a))
			die("iteration %lu: no completion event in 2 s", it);

		switch (it % 4) {
		case 0:
			destroy_qp(a);
			break;
		case 1:
			destroy_qp(b);
			break;
		case 2:
			dereg_mr(b);
			break;
		case 3:
			dereg_mr(a);
			break;
		}
		/* A CQ that a QP still uses must refuse to go. */
		if (a->qp) {
			err = ibv_destroy_cq(a->cq);
			if (err != EBUSY)
				die("iteration %lu: destroy_cq under a QP: %s, not EBUSY",
				    it, err ? strerror(err) : "success");
		}
		destroy_rest(a);
		destroy_rest(b);
		if (iters <= 10 || !(it % 10))
			printf("churn %lu: %s destroyed first, with traffic in flight\n",
			       it, order[it % 4]);
	}
	printf("churn: %lu iterations in %.1f s\n", iters, now() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	struct side a = { 0 }, b = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "serve"))
		return serve(argv);
	if (argc != 7 || (strcmp(argv[1], "traffic") && strcmp(argv[1], "churn"))) {
		fprintf(stderr,
			"usage: %s traffic|churn|serve DEV0 GID0 DEV1 GID1 [READY|ITERS]\n",
			argv[0]);
		return 2;
	}
	open_side(&a, argv[2], argv[3]);
	open_side(&b, argv[4], argv[5]);
	if (!strcmp(argv[1], "traffic"))
		return traffic(&a, &b, argv[6]);
	return churn(&a, &b, strtoul(argv[6], NULL, 0));
}
