// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: move data over one RC, UC or UD QP pair between two
 * RDMA devices and verify every byte on the receiving side.
 *
 * Copyright (c) 2026 The sroce authors
 *
 * One process opens both devices: side A is the requester, side B the
 * responder.  Each message carries a pattern keyed by (sequence number,
 * byte offset) and is gathered from / scattered into several SGEs at zero
 * and odd offsets, with canary bytes around them.  On UC and UD every
 * message names itself (its immediate is its seq): lost messages are
 * counted against a budget, every delivered one is checked in full (on UD
 * with the GRH in front of it: ud.c).  See README.
 *
 * Parts: conn.c (verbs objects, connecting RC/UC QPs), xfer.c (posting,
 * completions, the main loop), unreliable.c (UC/UD loss accounting),
 * ud.c (UD setup and datagram checks), pattern.c (the data pattern).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "pattern.h"
#include "sroce_integrity.h"
#include "ud.h"
#include "unreliable.h"
#include "xfer.h"

const char *const op_names[] = { "send", "write", "read", "atomic" };
const char *const qp_names[] = { "rc", "uc", "ud" };

/* Counters whose deltas the summary line reports, per device. */
const char *const cnt_names[NR_CNT] = {
	"completer_retry_err", "rcvd_seq_err", "duplicate_request",
	"out_of_seq_request", "rcvd_rnr_err", "icrc_err", "retry_exceeded_err",
	"malformed_pkts",
};

void fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sroce_integrity: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	r->failed = 1;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sroce_integrity: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* Message sizes, offsets and atomic operands: pure functions of seq. */

uint32_t msg_len(const struct run *r, uint32_t seq)
{
	uint32_t mtu = (uint32_t)r->o.mtu, max = r->maxlen, len;
	const uint32_t edges[] = {
		1, 2, 7, 8, 9, mtu - 1, mtu, mtu + 1, 2 * mtu - 1, 2 * mtu,
		2 * mtu + 1, 3 * mtu + 5, 16 * mtu, max - 1, max,
	};

	if (!r->o.mixed)
		return r->o.size;
	if (seq % 4 == 0)
		len = edges[(seq / 4) % (sizeof(edges) / sizeof(edges[0]))];
	else
		len = 1 + (uint32_t)(pat_hash(seq ^ 0xa11ce) % max);
	if (len < 1)
		len = 1;
	return len > max ? max : len;
}

/* Offset of the remote (contiguous) buffer of a WRITE/READ in its slot. */
size_t remote_off(uint32_t seq)
{
	if (seq % 4 == 0)
		return 0;
	return (size_t)(pat_hash(seq ^ 0xbeef) % PAT_GAP_MAX) | 1;
}

uint8_t *slot_base(struct side *sd, const struct run *r, uint64_t n)
{
	return sd->buf + (n % r->o.depth) * r->span;
}

/* ------------------------------------------------------------------ */
/* Options */

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end || !v)
		die("bad size '%s'", s);
	return v;
}

static enum op_kind parse_op(const char *s)
{
	int i;

	for (i = OP_SEND; i <= OP_ATOMIC; i++)
		if (!strcmp(s, op_names[i]))
			return (enum op_kind)i;
	die("unknown opcode '%s'", s);
}

static enum qp_kind parse_qp(const char *s)
{
	int i;

	for (i = QPK_RC; i <= QPK_UD; i++)
		if (!strcmp(s, qp_names[i]))
			return (enum qp_kind)i;
	die("unknown QP type '%s' (rc, uc or ud)", s);
}

static double parse_pct(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0 && v <= 100))
		die("bad loss budget '%s' (0..100)", s);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sroce_integrity -a DEV -b DEV -g GIDIDX -G GIDIDX -o send|write|read|atomic\n"
		"                       [-Q rc|uc|ud] [options]\n"
		"  -n BYTES     volume (K/M/G suffixes; default 1G)\n"
		"  -c COUNT     atomic operations (default 100000)\n"
		"  -s SIZE      message size (default 64K; with -x the largest size, default 256K)\n"
		"  -x           mixed sizes 1..SIZE, cycling through MTU edge sizes\n"
		"  -q DEPTH     outstanding WRs (default 16)\n"
		"  -e SGES      SGEs per WR (default 4, at most 63)\n"
		"  -S N         signal every Nth WR (default 4)\n"
		"  -m MTU       path MTU, 256..4096 (default 4096)\n"
		"  -t T         local ACK timeout exponent (default 14)\n"
		"  -r N         retry_cnt (default 7)\n"
		"  -R N         rnr_retry (default 7)\n"
		"  -w SECONDS   progress watchdog (default 30)\n"
		"  -D SECONDS   stop posting after SECONDS (-n, -c are then the most sent)\n"
		"  -P MS        a progress line (time, bytes done) every MS ms\n"
		"  -p PSN       first PSN (default 0xfffff0: wraps at once)\n"
		"  -Q rc|uc|ud  transport (default rc); -u is -Q uc, -d is -Q ud.  UC: send and\n"
		"               write only; UD: send only, -s at most -m (default -m, also\n"
		"               with -x), -e at most 62; -t/-r/-R do not apply to either\n"
		"  -L PCT       UC, UD: most messages that may be lost, in %% (default 0)\n"
		"  -I MS        UC, UD: quiet period before missing messages are lost (default 200)\n"
		"  -B           busy-poll the CQs, never arming them (as perftest does)\n"
		"  -v           verbose\n"
		"  -T           self-test of the pattern checker (no devices)\n");
	exit(2);
}

/*
 * UD: a datagram is one packet, and it carries SEND or SEND_WITH_IMM only
 * (IBA 9.8.2, 9.8.3); the receive WQE's first 40 bytes take the GRH.
 */
static void check_ud_opts(struct opts *o)
{
	if (o->op != OP_SEND)
		die("-o %s needs a connected QP: a UD QP carries SEND and SEND_WITH_IMM only (use -o send)",
		    op_names[o->op]);
	if (o->size > (uint32_t)o->mtu)
		die("-s %u is over the path MTU %d: a UD message is one packet (use -s %d or less)",
		    o->size, o->mtu, o->mtu);
	if (o->sges > PAT_MAX_PIECES - 1)
		die("-e %u: UD needs one receive SGE more for the GRH (at most %d)",
		    o->sges, PAT_MAX_PIECES - 1);
	if (!o->sig_every || o->sig_every > o->depth)
		o->sig_every = o->depth;
	if (!o->quiet_ms || o->quiet_ms > 1000 * o->watchdog)
		die("-I must be 1 ms..the watchdog (-w)");
}

static void check_opts(struct opts *o)
{
	if (o->depth < 2 || o->depth > 4096 || o->sges < 1 || o->sges > PAT_MAX_PIECES ||
	    o->timeout > 31 || o->retry > 7 || o->rnr_retry > 7 || !o->watchdog ||
	    !(o->duration >= 0 && o->duration <= 86400) || o->progress_ms > 3600000 ||
	    o->size > (1u << 26) ||
	    (o->mtu != 256 && o->mtu != 512 && o->mtu != 1024 && o->mtu != 2048 &&
	     o->mtu != 4096))
		die("option out of range (see -h)");
	if (o->qpt == QPK_UD) {
		check_ud_opts(o);
		return;
	}
	if (o->mixed && o->size < 4 * (uint32_t)o->mtu)
		die("-x needs -s of at least 4 path MTUs");
	if (!o->sig_every || o->sig_every > o->depth)
		o->sig_every = o->depth;
	if (o->qpt == QPK_UC && (o->op == OP_READ || o->op == OP_ATOMIC))
		die("-o %s needs RC: a UC QP has no RDMA READ or atomics (use send or write)",
		    op_names[o->op]);
	if (o->qpt == QPK_UC && (!o->quiet_ms || o->quiet_ms > 1000 * o->watchdog))
		die("-I must be 1 ms..the watchdog (-w)");
}

static void parse_opts(struct opts *o, int argc, char **argv)
{
	int c, have_size = 0;

	*o = (struct opts){
		.gid = { -1, -1 }, .op = OP_SEND, .bytes = 1ull << 30,
		.count = 100000, .size = 65536, .depth = 16, .sges = 4,
		.sig_every = 4, .mtu = 4096, .timeout = 14, .retry = 7,
		.rnr_retry = 7, .watchdog = 30, .psn = 0xfffff0,
		.qpt = QPK_RC, .loss_pct = 0, .quiet_ms = 200,
	};
	while ((c = getopt(argc, argv, "a:b:g:G:o:n:c:s:xq:e:S:m:t:r:R:w:D:P:p:Q:udL:I:BvTh")) != -1) {
		switch (c) {
		case 'a': o->dev[0] = optarg; break;
		case 'b': o->dev[1] = optarg; break;
		case 'g': o->gid[0] = atoi(optarg); break;
		case 'G': o->gid[1] = atoi(optarg); break;
		case 'o':
			o->op = parse_op(optarg);
			break;
		case 'n': o->bytes = parse_size(optarg); break;
		case 'c': o->count = parse_size(optarg); break;
		case 's': o->size = (uint32_t)parse_size(optarg); have_size = 1; break;
		case 'x': o->mixed = 1; break;
		case 'q': o->depth = (unsigned int)atoi(optarg); break;
		case 'e': o->sges = (unsigned int)atoi(optarg); break;
		case 'S': o->sig_every = (unsigned int)atoi(optarg); break;
		case 'm': o->mtu = atoi(optarg); break;
		case 't': o->timeout = (unsigned int)atoi(optarg); break;
		case 'r': o->retry = (unsigned int)atoi(optarg); break;
		case 'R': o->rnr_retry = (unsigned int)atoi(optarg); break;
		case 'w': o->watchdog = (unsigned int)atoi(optarg); break;
		case 'D': o->duration = atof(optarg); break;
		case 'P': o->progress_ms = (unsigned int)atoi(optarg); break;
		case 'p': o->psn = (uint32_t)strtoul(optarg, NULL, 0) & 0xffffff; break;
		case 'Q': o->qpt = parse_qp(optarg); break;
		case 'u': o->qpt = QPK_UC; break;
		case 'd': o->qpt = QPK_UD; break;
		case 'L': o->loss_pct = parse_pct(optarg); break;
		case 'I': o->quiet_ms = (unsigned int)atoi(optarg); break;
		case 'B': o->busy = 1; break;
		case 'v': o->verbose = 1; break;
		case 'T':
			if (pat_selftest())
				die("pattern self-test failed");
			if (ud_selftest())
				die("UD GRH check self-test failed");
			printf("sroce_integrity: pattern self-test passed\n");
			exit(0);
		default: usage();
		}
	}
	if (!o->dev[0] || !o->dev[1] || o->gid[0] < 0 || o->gid[1] < 0 || optind != argc)
		usage();
	if (o->qpt == QPK_UD && !have_size)
		o->size = (uint32_t)o->mtu;
	else if (o->mixed && !have_size)
		o->size = 256 * 1024;
	check_opts(o);
}

static void summary(struct run *r, double secs)
{
	uint64_t d[2][8], bytes = r->o.op == OP_ATOMIC ? 8 * r->completed : 0;
	unsigned int i, j;

	for (i = 0; i < 2; i++) {
		uint64_t before[8];

		memcpy(before, r->s[i].cnt, sizeof(before));
		read_counters(&r->s[i]);
		for (j = 0; j < 8; j++)
			d[i][j] = r->s[i].cnt[j] - before[j];
	}
	if (r->o.op != OP_ATOMIC)
		for (i = 0; i < r->completed; i++)
			bytes += msg_len(r, i);
	printf("sroce_integrity: op=%s", op_names[r->o.op]);
	if (r->o.qpt != QPK_RC)
		printf(" qp=%s", qp_names[r->o.qpt]);
	printf(" mtu=%d size=%s%u sges=%u depth=%u bytes=%" PRIu64
	       " msgs=%" PRIu64 " secs=%.1f MB/s=%.1f retries=%" PRIu64 " timeouts=%" PRIu64
	       " seq_naks=%" PRIu64 " dup=%" PRIu64 " oos=%" PRIu64 " rnr=%" PRIu64
	       " icrc_err=%" PRIu64 " malformed=%" PRIu64,
	       r->o.mtu, r->o.mixed ? "1.." : "", r->o.size, r->o.sges,
	       r->o.depth, bytes, r->completed, secs, secs > 0 ? bytes / secs / 1e6 : 0.0,
	       d[0][C_TIMEOUT] + d[0][C_SEQNAK], d[0][C_TIMEOUT], d[0][C_SEQNAK],
	       d[1][C_DUP], d[1][C_OOS], d[0][C_RNR],
	       d[0][C_ICRC] + d[1][C_ICRC], d[0][C_MALFORMED] + d[1][C_MALFORMED]);
	if (is_ud(r))
		printf(" grh=%s", ud_grh_form(r));
	if (is_unrel(r))
		printf(" delivered=%" PRIu64 " lost=%" PRIu64 " dups=%" PRIu64
		       " late=%" PRIu64, r->delivered, r->lost, r->dups, r->late);
	printf(" result=%s\n", r->failed ? "FAIL" : "PASS");
}

/* Buffers and both sides' verbs objects. */
static void prepare(struct run *r)
{
	r->maxlen = r->o.op == OP_ATOMIC ? 8 : r->o.size;
	r->span = r->o.op == OP_ATOMIC ? ATOMIC_STRIDE :
		  (pat_layout_span(r->maxlen, r->o.sges) + 63) & ~(size_t)63;
	r->rdepth = r->o.depth;
	if (is_ud(r)) {
		r->span += UD_PREFIX;
		r->rdepth = 2 * r->o.depth;
	}
	r->last_seq = -1;
	r->rq = calloc(r->o.depth, sizeof(*r->rq));
	r->rv = calloc(r->rdepth, sizeof(*r->rv));
	if (!r->rq || !r->rv)
		die("out of memory");
	r->s[0].name = r->o.dev[0];
	r->s[1].name = r->o.dev[1];
	setup_side(r, &r->s[0], r->o.gid[0]);
	setup_side(r, &r->s[1], r->o.gid[1]);
}

/* Both QPs to RTS, the atomic targets set, B's receives posted. */
static void connect_pair(struct run *r)
{
	unsigned int rd_atomic, i;
	struct ibv_device_attr da;

	if (ibv_query_device(r->s[0].ctx, &da))
		die("ibv_query_device");
	rd_atomic = r->o.depth < (unsigned int)da.max_qp_rd_atom ?
		    r->o.depth : (unsigned int)da.max_qp_rd_atom;
	if (rd_atomic > 255)
		rd_atomic = 255;
	for (i = 0; i < ATOMIC_TARGETS; i++) {
		r->model[i] = 0x1000000000000000ull * (i + 1) + i;
		memcpy(r->s[1].buf + r->rdepth * r->span + i * ATOMIC_STRIDE,
		       &r->model[i], 8);
	}
	if (is_ud(r)) {
		ud_connect(r);
	} else {
		connect_qp(r, &r->s[0], &r->s[1], r->o.gid[0], r->o.psn,
			   (r->o.psn + 0x1234) & 0xffffff, rd_atomic, is_uc(r));
		connect_qp(r, &r->s[1], &r->s[0], r->o.gid[1],
			   (r->o.psn + 0x1234) & 0xffffff, r->o.psn, rd_atomic,
			   is_uc(r));
	}
	if (r->o.op == OP_SEND || r->o.op == OP_WRITE)
		for (i = 0; i < r->rdepth; i++)
			if (post_recv(r))
				break;
}

int main(int argc, char **argv)
{
	static struct run run;
	struct run *r = &run;
	double t0, secs;

	parse_opts(&r->o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	prepare(r);
	connect_pair(r);
	read_counters(&r->s[0]);
	read_counters(&r->s[1]);
	if (r->o.verbose)
		fprintf(stderr, "sroce_integrity: %s -> %s qpn 0x%x -> 0x%x, slot %zu bytes\n",
			r->s[0].name, r->s[1].name, r->s[0].qp->qp_num,
			r->s[1].qp->qp_num, r->span);
	t0 = now_s();
	r->t0 = t0;
	if (r->o.progress_ms)
		printf("sroce_integrity: progress start mono=%.6f qpn=0x%x peer_qpn=0x%x\n",
		       t0, r->s[0].qp->qp_num, r->s[1].qp->qp_num);
	if (!r->failed && !run_loop(r)) {
		progress_end(r);
		secs = now_s() - t0;
		if (!check_quiet(r) && r->o.op == OP_ATOMIC)
			check_atomic_targets(r);
		if (!r->failed && is_unrel(r))
			uc_verdict(r);
	} else {
		secs = now_s() - t0;
	}
	summary(r, secs);
	teardown(&r->s[0]);
	teardown(&r->s[1]);
	free(r->rq);
	free(r->rv);
	free(r->seen);
	return r->failed ? 1 : 0;
}
