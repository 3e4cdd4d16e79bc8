// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ringfuzz: the userspace ring fuzzer of sroce (see ringfuzz.h and
 * Documentation/infiniband/sroce.rst). Opens two RDMA devices, A (-a,
 * where the rings are abused) and B (-b, the well-behaved peers), runs
 * the case families, and after each group of them checks that a fresh
 * RC QP pair between A and B still moves patterned data exactly.
 *
 * Prints one line per family and check, "ok N - NAME: ..." or
 * "not ok N - NAME: first failure", and a summary; exits 1 if any
 * failed, 2 on a setup error.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "ringfuzz.h"

uint64_t rf_rand(struct rf *rf)
{
	return fuzz_rand(&rf->rng);
}

uint32_t rf_below(struct rf *rf, uint32_t n)
{
	return fuzz_below(&rf->rng, n);
}

void rf_fill_random(struct rf *rf, void *p, size_t len)
{
	uint8_t *b = p;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			v = rf_rand(rf);
		b[i] = (uint8_t)(v >> (8 * (i & 7)));
	}
}

double rf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rf_log(struct rf *rf, const char *fmt, ...)
{
	va_list ap;

	if (!rf->verbose)
		return;
	va_start(ap, fmt);
	fputs("ringfuzz: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

int rf_bad(struct rf *rf, const char *fmt, ...)
{
	char msg[sizeof(rf->first_fail)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("ringfuzz: FAIL: %s\n", msg);
	fflush(stdout);
	if (!rf->first_fail[0])
		memcpy(rf->first_fail, msg, sizeof(msg));
	rf->failed++;
	return -1;
}

void rf_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("ringfuzz: error: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	exit(2);
}

/* A completion the tool can account for: its QP, its tag, a real status. */
int rf_sane_cqe(struct rf *rf, const struct ibv_wc *wc, uint32_t qpn)
{
	if (wc->qp_num != qpn)
		return rf_bad(rf, "completion names QP %u, not %u", wc->qp_num, qpn);
	if ((wc->wr_id & RF_WRID_MASK) != RF_WRID_TAG)
		return rf_bad(rf, "completion with wr_id %#llx, never posted",
			      (unsigned long long)wc->wr_id);
	if ((unsigned int)wc->status > RF_WC_STATUS_MAX)
		return rf_bad(rf, "completion status %u", wc->status);
	return 0;
}

static unsigned int rf_next_test(struct rf *rf)
{
	return ++rf->tests;
}

void rf_result(struct rf *rf, const char *name, unsigned int failed_before,
	       unsigned int cases)
{
	double now = rf_now();

	if (rf->failed == failed_before)
		printf("ok %u - %s: %u cases, %.1f s\n", rf_next_test(rf), name, cases,
		       now - rf->t_mark);
	else
		printf("not ok %u - %s: %s (case %u)\n", rf_next_test(rf), name,
		       rf->first_fail, cases);
	rf->first_fail[0] = 0;
	rf->t_mark = now;
	fflush(stdout);
}

int rf_family_wanted(const struct rf *rf, const char *name)
{
	return !rf->only || strstr(name, rf->only);
}

static uint8_t pattern(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 7 + i * 13 + (i >> 8));
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

static int differs(const uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return (int)i;
	return -1;
}

/* One signaled WR on @q; it must complete successfully. */
static int healthy_post(struct rf *rf, struct rf_qp *q, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr_id = RF_WRID_TAG | wr->opcode;
	if (ibv_post_send(q->qp, wr, &bad))
		return rf_bad(rf, "healthy pair: ibv_post_send: %s", strerror(errno));
	if (rf_drain(rf, q, &wc, 1, 5000) != 1 || wc.status != IBV_WC_SUCCESS)
		return rf_bad(rf, "healthy pair: opcode %d did not complete successfully",
			      wr->opcode);
	return 0;
}

/* SENDs of 1, 1500 and 9000 bytes from A to B, every byte checked. */
static int healthy_sends(struct rf *rf, struct rf_qp *q, struct rf_qp *p)
{
	static const uint32_t sizes[] = { 1, 1500, 9000 };
	uint8_t *src = rf->a.mem.buf + rf->a.mem.off, *dst = rf->b.mem.buf + rf->b.mem.off;
	struct ibv_sge sge = { .lkey = q->dev->mem.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;
	unsigned int i;
	int at;

	rf_post_recvs(p, 3, 10000);	/* at 0, 10000, 20000 */
	for (i = 0; i < 3; i++) {
		fill(src + 10000 * i, sizes[i], i + 1);
		sge.addr = (uintptr_t)(src + 10000 * i);
		sge.length = sizes[i];
		if (healthy_post(rf, q, &wr))
			return -1;
		if (rf_drain(rf, p, &wc, 1, 5000) != 1 || wc.status != IBV_WC_SUCCESS ||
		    wc.byte_len != sizes[i])
			return rf_bad(rf, "healthy pair: SEND %u not received intact", i);
		at = differs(dst + 10000 * i, sizes[i], i + 1);
		if (at >= 0)
			return rf_bad(rf, "healthy pair: SEND %u byte %d wrong", i, at);
	}
	return 0;
}

/* A WRITE of 20000 bytes into B, READ back into A, every byte checked. */
static int healthy_rdma(struct rf *rf, struct rf_qp *q)
{
	uint8_t *a = rf->a.mem.buf + rf->a.mem.off, *b = rf->b.mem.buf + rf->b.mem.off;
	struct ibv_sge sge = { .addr = (uintptr_t)(a + 30000), .length = 20000,
			       .lkey = q->dev->mem.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)(b + 30000),
			     .rkey = rf->b.mem.mr->rkey },
	};
	int at;

	fill(a + 30000, 20000, 77);
	if (healthy_post(rf, q, &wr))
		return -1;
	at = differs(b + 30000, 20000, 77);
	if (at >= 0)
		return rf_bad(rf, "healthy pair: WRITE byte %d wrong", at);
	memset(a + 30000, 0, 20000);
	wr.opcode = IBV_WR_RDMA_READ;
	if (healthy_post(rf, q, &wr))
		return -1;
	at = differs(a + 30000, 20000, 77);
	if (at >= 0)
		return rf_bad(rf, "healthy pair: READ byte %d wrong", at);
	return 0;
}

/* A fresh RC pair between A and B still moves patterned data exactly. */
int rf_healthy(struct rf *rf, const char *after)
{
	unsigned int before = rf->failed;
	struct rf_qp *q, *p;
	char name[64];

	q = rf_qp_create(rf, &rf->a, IBV_QPT_RC, NULL, 64);
	p = rf_qp_create(rf, &rf->b, IBV_QPT_RC, NULL, 64);
	if (rf_qp_connect(q, p, 7) || rf_qp_connect(p, q, 7))
		rf_bad(rf, "healthy pair: cannot reach RTS");
	else if (!healthy_sends(rf, q, p))
		healthy_rdma(rf, q);
	rf_mem_check(rf, &rf->a.mem, "A's MR");
	rf_mem_check(rf, &rf->b.mem, "B's MR");
	rf_qp_destroy(q);
	rf_qp_destroy(p);
	snprintf(name, sizeof(name), "healthy-after-%s", after);
	rf_result(rf, name, before, 1);
	return rf->failed == before ? 0 : -1;
}

static void usage(void)
{
	puts("usage: ringfuzz -a DEV -b DEV [-g GID] [-G GID] [-n CASES] [-s SEED]\n"
	     "                [-w MS] [-f FAMILY] [-v]\n"
	     "  -a/-b   RDMA devices: A is fuzzed, B holds the well-behaved peers\n"
	     "  -g/-G   GID indices of A and B (default 1, the IPv4 one)\n"
	     "  -n      cases per family (default 20)\n"
	     "  -s      random seed (default: time)\n"
	     "  -w      longest wait for a completion, ms (default 10000)\n"
	     "  -f      run only the families whose name contains this\n"
	     "  -v      log more");
	exit(2);
}

static void parse(struct rf *rf, int argc, char **argv)
{
	int c;

	rf->a.gid_index = 1;
	rf->b.gid_index = 1;
	rf->iters = 20;
	rf->wait_ms = 10000;
	rf->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	while ((c = getopt(argc, argv, "a:b:g:G:n:s:w:f:v")) != -1) {
		switch (c) {
		case 'a': rf->a.name = optarg; break;
		case 'b': rf->b.name = optarg; break;
		case 'g': rf->a.gid_index = atoi(optarg); break;
		case 'G': rf->b.gid_index = atoi(optarg); break;
		case 'n': rf->iters = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': rf->seed = strtoull(optarg, NULL, 0); break;
		case 'w': rf->wait_ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'f': rf->only = optarg; break;
		case 'v': rf->verbose = 1; break;
		default: usage();
		}
	}
	if (!rf->a.name || !rf->b.name || optind != argc)
		usage();
	rf->rng = rf->seed | 1;
}

int main(int argc, char **argv)
{
	static struct rf rf;
	double t0 = rf_now();

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(&rf, argc, argv);
	rf.t_mark = t0;
	rf_open_dev(&rf.a);
	rf_open_dev(&rf.b);
	printf("ringfuzz: A %s (GID %d), B %s (GID %d), %u cases per family, seed %#llx\n",
	       rf.a.name, rf.a.gid_index, rf.b.name, rf.b.gid_index, rf.iters,
	       (unsigned long long)rf.seed);
	rf_healthy(&rf, "setup");
	rf_sq_families(&rf);
	rf_healthy(&rf, "sq");
	rf_rq_families(&rf);
	rf_healthy(&rf, "rq");
	rf_cq_families(&rf);
	rf_healthy(&rf, "cq");
	rf_async_drain(&rf.a);
	rf_async_drain(&rf.b);
	rf_close_dev(&rf.a);
	rf_close_dev(&rf.b);
	printf("ringfuzz: %u tests, %u failed; %llu cases, %llu doorbells, %llu completions, "
	       "%llu CQ_ERR and %llu QP_FATAL events on A, seed %#llx, %.1f s\n",
	       rf.tests, rf.failed ? rf.failed : 0, rf.cases, rf.doorbells, rf.cqes,
	       (unsigned long long)rf.a.async_events[IBV_EVENT_CQ_ERR],
	       (unsigned long long)rf.a.async_events[IBV_EVENT_QP_FATAL],
	       (unsigned long long)rf.seed, rf_now() - t0);
	return rf.failed ? 1 : 0;
}
