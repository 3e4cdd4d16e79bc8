// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: move data over one RC or UC QP pair between two RDMA
 * devices and verify every byte on the receiving side.
 *
 * Copyright (c) 2026 The sroce authors
 *
 * One process opens both devices: side A is the requester, side B the
 * responder.  Each message carries a pattern keyed by (sequence number,
 * byte offset) and is gathered from / scattered into several SGEs at zero
 * and odd offsets, with canary bytes around them.  On UC every message
 * names itself (its immediate is its seq): lost messages are counted
 * against a budget, every delivered one is checked in full.  See README.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "pattern.h"

enum op_kind { OP_SEND, OP_WRITE, OP_READ, OP_ATOMIC };
static const char *const op_names[] = { "send", "write", "read", "atomic" };

/* Transport of the QP pair (UD is a later step: the names stay open). */
enum qp_kind { QPK_RC, QPK_UC };
static const char *const qp_names[] = { "rc", "uc" };

#define ATOMIC_TARGETS	4
#define ATOMIC_STRIDE	64
#define SEND_IMM_SALT	0x5eedu

struct opts {
	const char *dev[2];
	int gid[2];
	enum op_kind op;
	uint64_t bytes;
	uint64_t count;
	uint32_t size;
	int mixed;
	unsigned int depth, sges, sig_every;
	int mtu;
	unsigned int timeout, retry, rnr_retry, watchdog;
	uint32_t psn;
	int verbose;
	enum qp_kind qpt;
	double loss_pct;	/* UC: most messages that may be lost, % */
	unsigned int quiet_ms;	/* UC: silence after which missing seqs are lost */
};

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr[2];
	uint8_t *buf;
	size_t len;
	union ibv_gid gid;
	unsigned int events;
	uint64_t cnt[8];
};

/* One in-flight message (requester side), indexed by seq % depth. */
struct req_slot {
	uint32_t seq, len;
	int signaled;
	struct pat_layout lay;
	uint64_t want;		/* atomics: the value that must come back */
	int cas;
};

/* One posted receive WQE (responder side), indexed by its number % depth. */
struct rcv_slot {
	struct pat_layout lay;
};

struct run {
	struct opts o;
	struct side s[2];
	size_t span;		/* bytes per slot */
	uint32_t maxlen;
	struct req_slot *rq;
	struct rcv_slot *rv;
	uint64_t posted, completed, verified, recvs_posted, recvs_done;
	uint64_t bytes_posted, nmsgs;
	int posting_done;
	uint64_t model[ATOMIC_TARGETS];
	struct timespec last_progress;
	int failed;
	/*
	 * UC: r->verified counts accounted messages (delivered or declared
	 * lost); last_seq is the highest seq delivered, -1 before the first.
	 */
	uint64_t delivered, lost, dups, late;
	int64_t last_seq;
};

/* Counters whose deltas the summary line reports, per device. */
static const char *const cnt_names[] = {
	"completer_retry_err", "rcvd_seq_err", "duplicate_request",
	"out_of_seq_request", "rcvd_rnr_err", "icrc_err", "retry_exceeded_err",
	"malformed_pkts",
};
enum { C_TIMEOUT, C_SEQNAK, C_DUP, C_OOS, C_RNR, C_ICRC, C_RETRY_EXC, C_MALFORMED };

static void fail(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct run *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sroce_integrity: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	r->failed = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sroce_integrity: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ */
/* Message sizes, offsets and atomic operands: pure functions of seq. */

static uint32_t msg_len(const struct run *r, uint32_t seq)
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
static size_t remote_off(uint32_t seq)
{
	if (seq % 4 == 0)
		return 0;
	return (size_t)(pat_hash(seq ^ 0xbeef) % PAT_GAP_MAX) | 1;
}

static uint8_t *slot_base(struct side *sd, const struct run *r, uint64_t n)
{
	return sd->buf + (n % r->o.depth) * r->span;
}

static int is_uc(const struct run *r)
{
	return r->o.qpt == QPK_UC;
}

/* ------------------------------------------------------------------ */
/* Counters */

static void read_counters(struct side *sd)
{
	char path[256];
	unsigned int i;

	for (i = 0; i < sizeof(cnt_names) / sizeof(cnt_names[0]); i++) {
		unsigned long long v = 0;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
			 sd->name, cnt_names[i]);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%llu", &v) != 1)
				v = 0;
			fclose(f);
		}
		sd->cnt[i] = v;
	}
}

/* ------------------------------------------------------------------ */
/* Setup */

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open RDMA device %s", name);
	return ctx;
}

static void setup_side(struct run *r, struct side *sd, int gid_index)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr qia = {
		.qp_type = r->o.qpt == QPK_UC ? IBV_QPT_UC : IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = r->o.depth,
			.max_recv_wr = r->o.depth,
			.max_send_sge = r->o.sges,
			.max_recv_sge = r->o.sges,
		},
	};
	int i, fl;

	sd->ctx = open_dev(sd->name);
	sd->pd = ibv_alloc_pd(sd->ctx);
	sd->ch = ibv_create_comp_channel(sd->ctx);
	if (!sd->pd || !sd->ch)
		die("%s: PD or completion channel: %s", sd->name, strerror(errno));
	fl = fcntl(sd->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(sd->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("fcntl: %s", strerror(errno));
	sd->cq = ibv_create_cq(sd->ctx, (int)(2 * r->o.depth + 8), NULL, sd->ch, 0);
	if (!sd->cq)
		die("%s: ibv_create_cq: %s", sd->name, strerror(errno));
	qia.send_cq = sd->cq;
	qia.recv_cq = sd->cq;
	sd->qp = ibv_create_qp(sd->pd, &qia);
	if (!sd->qp)
		die("%s: ibv_create_qp: %s", sd->name, strerror(errno));

	sd->len = r->o.depth * r->span + ATOMIC_TARGETS * ATOMIC_STRIDE;
	if (posix_memalign((void **)&sd->buf, 4096, sd->len))
		die("out of memory (%zu bytes)", sd->len);
	memset(sd->buf, PAT_CANARY, sd->len);
	/* the same memory twice: SGEs alternate between the two keys */
	for (i = 0; i < 2; i++) {
		sd->mr[i] = ibv_reg_mr(sd->pd, sd->buf, sd->len, access);
		if (!sd->mr[i])
			die("%s: ibv_reg_mr: %s", sd->name, strerror(errno));
	}
	if (ibv_query_gid(sd->ctx, 1, gid_index, &sd->gid))
		die("%s: GID index %d: %s", sd->name, gid_index, strerror(errno));
	if (ibv_req_notify_cq(sd->cq, 0))
		die("%s: ibv_req_notify_cq", sd->name);
}

static enum ibv_mtu ib_mtu(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/*
 * RESET -> INIT -> RTR -> RTS.  A UC QP gets the attributes ib_core allows
 * for UC and no more: no timeout, retry, RNR or READ/atomic resources.
 */
static void connect_qp(struct run *r, struct side *me, struct side *peer,
		       int my_gid, uint32_t my_psn, uint32_t peer_psn,
		       unsigned int rd_atomic, int uc)
{
	struct ibv_qp_attr a;
	int mask, err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!uc)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC;
	err = ibv_modify_qp(me->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		die("%s: to INIT: %s", me->name, strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ib_mtu(r->o.mtu);
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer_psn;
	a.max_dest_rd_atomic = (uint8_t)rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)my_gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	if (!uc)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	err = ibv_modify_qp(me->qp, &a, mask);
	if (err)
		die("%s: to RTR: %s", me->name, strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)r->o.timeout;
	a.retry_cnt = (uint8_t)r->o.retry;
	a.rnr_retry = (uint8_t)r->o.rnr_retry;
	a.sq_psn = my_psn;
	a.max_rd_atomic = (uint8_t)rd_atomic;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (!uc)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	err = ibv_modify_qp(me->qp, &a, mask);
	if (err)
		die("%s: to RTS: %s", me->name, strerror(err));
}

/* ------------------------------------------------------------------ */
/* Responder receives */

static int post_recv(struct run *r)
{
	struct side *b = &r->s[1];
	uint64_t n = r->recvs_posted;
	struct rcv_slot *rs = &r->rv[n % r->o.depth];
	struct ibv_sge sge[PAT_MAX_PIECES];
	struct ibv_recv_wr wr = { .wr_id = n, .sg_list = sge }, *bad;
	unsigned int i;
	int err;

	if (r->o.op == OP_SEND) {
		uint8_t *base = slot_base(b, r, n);

		pat_layout_make(&rs->lay, 2 * n + 1, r->maxlen, r->o.sges);
		for (i = 0; i < rs->lay.n; i++) {
			sge[i].addr = (uintptr_t)(base + rs->lay.p[i].off);
			sge[i].length = rs->lay.p[i].len;
			sge[i].lkey = b->mr[i & 1]->lkey;
		}
		wr.num_sge = (int)rs->lay.n;
	}
	err = ibv_post_recv(b->qp, &wr, &bad);
	if (err) {
		fail(r, "ibv_post_recv #%" PRIu64 ": %s", n, strerror(err));
		return -1;
	}
	r->recvs_posted++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Requester posts */

static int is_last(struct run *r, uint32_t len)
{
	if (r->o.op == OP_ATOMIC)
		return r->posted + 1 >= r->o.count;
	return r->bytes_posted + len >= r->o.bytes;
}

static void prep_atomic(struct run *r, struct req_slot *q, struct ibv_send_wr *wr,
			struct ibv_sge *sge)
{
	uint64_t h = pat_hash(q->seq ^ 0xa70e1c), *local;
	unsigned int t = (unsigned int)(h % ATOMIC_TARGETS);
	struct side *a = &r->s[0], *b = &r->s[1];

	local = (uint64_t *)slot_base(a, r, q->seq);
	q->want = r->model[t];
	*local = ~q->want;	/* must be overwritten by the return value */
	sge->addr = (uintptr_t)local;
	sge->length = 8;
	sge->lkey = a->mr[q->seq & 1]->lkey;
	wr->wr.atomic.remote_addr = (uintptr_t)(b->buf + r->o.depth * r->span +
						t * ATOMIC_STRIDE);
	wr->wr.atomic.rkey = b->mr[(q->seq >> 1) & 1]->rkey;
	q->cas = (h >> 16) % 3 == 0;
	if (q->cas) {
		int miss = (h >> 24) % 5 == 0;

		wr->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr->wr.atomic.compare_add = miss ? r->model[t] ^ (h | 1) : r->model[t];
		wr->wr.atomic.swap = pat_hash(q->seq + 7);
		if (!miss)
			r->model[t] = wr->wr.atomic.swap;
	} else {
		wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.compare_add = pat_hash(q->seq + 3);
		r->model[t] += wr->wr.atomic.compare_add;
	}
	wr->num_sge = 1;
}

static void prep_data(struct run *r, struct req_slot *q, struct ibv_send_wr *wr,
		      struct ibv_sge *sge, int last)
{
	struct side *a = &r->s[0], *b = &r->s[1];
	uint8_t *base = slot_base(a, r, q->seq);
	uint8_t *rbase = slot_base(b, r, q->seq) + remote_off(q->seq);
	unsigned int i;

	pat_layout_make(&q->lay, 2ull * q->seq, q->len, r->o.sges);
	for (i = 0; i < q->lay.n; i++) {
		sge[i].addr = (uintptr_t)(base + q->lay.p[i].off);
		sge[i].length = q->lay.p[i].len;
		sge[i].lkey = a->mr[i & 1]->lkey;
	}
	wr->num_sge = (int)q->lay.n;
	wr->wr.rdma.remote_addr = (uintptr_t)rbase;
	wr->wr.rdma.rkey = b->mr[(q->seq >> 1) & 1]->rkey;
	switch (r->o.op) {
	case OP_SEND:
		pat_fill(base, &q->lay, q->seq, q->len);
		if (is_uc(r)) {
			/* a receive WQE number says nothing on UC: name it */
			wr->opcode = IBV_WR_SEND_WITH_IMM;
			wr->imm_data = htonl(q->seq);
		} else if (q->seq & 1) {
			wr->opcode = IBV_WR_SEND_WITH_IMM;
			wr->imm_data = htonl(q->seq ^ SEND_IMM_SALT);
		} else {
			wr->opcode = IBV_WR_SEND;
		}
		break;
	case OP_WRITE:
		pat_fill(base, &q->lay, q->seq, q->len);
		/* plain WRITEs; every odd one and the last carry the seq */
		if ((q->seq & 1) || last || is_uc(r)) {
			wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			wr->imm_data = htonl(q->seq);
		} else {
			wr->opcode = IBV_WR_RDMA_WRITE;
		}
		break;
	default: {
		struct pat_layout one = { .n = 1, .p = { { 0, q->len } } };

		wr->opcode = IBV_WR_RDMA_READ;
		pat_fill(rbase, &one, q->seq, q->len);
		break;
	}
	}
}

/* Post message r->posted if the window allows; 1 posted, 0 not, -1 error. */
static int post_one(struct run *r)
{
	struct ibv_sge sge[PAT_MAX_PIECES];
	struct ibv_send_wr wr, *bad;
	struct req_slot *q;
	uint32_t seq = (uint32_t)r->posted;
	int last, err;

	if (r->posting_done || r->posted >= r->completed + r->o.depth)
		return 0;
	if ((r->o.op == OP_SEND || r->o.op == OP_WRITE) &&
	    r->posted >= r->verified + r->o.depth)
		return 0;
	q = &r->rq[seq % r->o.depth];
	q->seq = seq;
	q->len = r->o.op == OP_ATOMIC ? 8 : msg_len(r, seq);
	last = is_last(r, q->len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = seq;
	wr.sg_list = sge;
	if (r->o.op == OP_ATOMIC)
		prep_atomic(r, q, &wr, sge);
	else
		prep_data(r, q, &wr, sge, last);
	q->signaled = last || seq % r->o.sig_every == r->o.sig_every - 1;
	/*
	 * UC: the WR that fills the receive window is signaled, so that
	 * "everything posted has completed" is known when the window stalls.
	 */
	if (is_uc(r) && seq + 1 >= r->verified + r->o.depth)
		q->signaled = 1;
	if (q->signaled)
		wr.send_flags = IBV_SEND_SIGNALED;
	err = ibv_post_send(r->s[0].qp, &wr, &bad);
	if (err) {
		fail(r, "ibv_post_send seq %u: %s", seq, strerror(err));
		return -1;
	}
	r->posted++;
	r->bytes_posted += q->len;
	if (last) {
		r->posting_done = 1;
		r->nmsgs = r->posted;
	}
	return 1;
}

/* ------------------------------------------------------------------ */
/* Completions */

static int report_bad(struct run *r, const char *what, uint32_t seq, uint32_t len,
		      const uint8_t *slot, const struct pat_result *res)
{
	char buf[512];

	pat_describe(res, slot, r->span, buf, sizeof(buf));
	fail(r, "%s: data mismatch in message %u (%u bytes): %s", what, seq, len, buf);
	return -1;
}

static int check_req_slot(struct run *r, uint64_t k)
{
	struct req_slot *q = &r->rq[k % r->o.depth];
	uint8_t *base = slot_base(&r->s[0], r, k);
	struct pat_result res;

	if (r->o.op == OP_READ) {
		pat_check(base, r->span, &q->lay, q->seq, q->len, &res);
		if (!res.ok)
			return report_bad(r, "READ (requester)", q->seq, q->len,
					  base, &res);
		pat_restore(base, r->span, &q->lay, q->len);
	} else if (r->o.op == OP_ATOMIC) {
		uint64_t got;

		memcpy(&got, base, 8);
		if (got != q->want) {
			fail(r, "%s seq %u returned 0x%016" PRIx64 ", want 0x%016" PRIx64,
			     q->cas ? "CMP_SWAP" : "FETCH_ADD", q->seq, got, q->want);
			return -1;
		}
	}
	return 0;
}

static enum ibv_wc_opcode want_wc_opcode(const struct run *r, const struct req_slot *q)
{
	switch (r->o.op) {
	case OP_SEND: return IBV_WC_SEND;
	case OP_WRITE: return IBV_WC_RDMA_WRITE;
	case OP_READ: return IBV_WC_RDMA_READ;
	default: return q->cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD;
	}
}

static int req_completion(struct run *r, const struct ibv_wc *wc)
{
	uint64_t seq = wc->wr_id, k;
	struct req_slot *q;

	if (wc->status != IBV_WC_SUCCESS) {
		fail(r, "requester completion of seq %" PRIu64 ": %s (vendor_err %u)",
		     seq, ibv_wc_status_str(wc->status), wc->vendor_err);
		return -1;
	}
	if (seq < r->completed || seq >= r->posted) {
		fail(r, "requester completion for seq %" PRIu64 " outside [%" PRIu64
		     ", %" PRIu64 ")", seq, r->completed, r->posted);
		return -1;
	}
	for (k = r->completed; k < seq; k++)
		if (r->rq[k % r->o.depth].signaled) {
			fail(r, "completion of seq %" PRIu64 " before signaled seq %" PRIu64,
			     seq, k);
			return -1;
		}
	q = &r->rq[seq % r->o.depth];
	if (wc->opcode != want_wc_opcode(r, q)) {
		fail(r, "requester completion seq %" PRIu64 ": opcode %d, want %d",
		     seq, wc->opcode, want_wc_opcode(r, q));
		return -1;
	}
	for (k = r->completed; k <= seq; k++)
		if (check_req_slot(r, k))
			return -1;
	r->completed = seq + 1;
	return 0;
}

static int check_write_slot(struct run *r, uint64_t k)
{
	uint8_t *base = slot_base(&r->s[1], r, k);
	uint32_t len = msg_len(r, (uint32_t)k);
	struct pat_layout one = { .n = 1, .p = { { remote_off((uint32_t)k), len } } };
	struct pat_result res;

	pat_check(base, r->span, &one, (uint32_t)k, len, &res);
	if (!res.ok)
		return report_bad(r, "WRITE (responder)", (uint32_t)k, len, base, &res);
	pat_restore(base, r->span, &one, len);
	return 0;
}

static int recv_write(struct run *r, const struct ibv_wc *wc)
{
	uint64_t seq, k;
	uint32_t len;

	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		fail(r, "responder: opcode %d flags 0x%x, want RECV_RDMA_WITH_IMM",
		     wc->opcode, wc->wc_flags);
		return -1;
	}
	seq = ntohl(wc->imm_data);
	if (seq < r->verified || seq >= r->posted ||
	    (!(seq & 1) && !(r->posting_done && seq + 1 == r->nmsgs))) {
		fail(r, "responder: WRITE_IMM immediate %" PRIu64
		     " unexpected (verified %" PRIu64 ", posted %" PRIu64 ")",
		     seq, r->verified, r->posted);
		return -1;
	}
	len = msg_len(r, (uint32_t)seq);
	if (wc->byte_len != len) {
		fail(r, "responder: WRITE_IMM seq %" PRIu64 " byte_len %u, want %u",
		     seq, wc->byte_len, len);
		return -1;
	}
	for (k = r->verified; k <= seq; k++)
		if (check_write_slot(r, k))
			return -1;
	r->verified = seq + 1;
	return 0;
}

static int recv_send(struct run *r, const struct ibv_wc *wc)
{
	uint64_t seq = wc->wr_id;
	uint32_t len = msg_len(r, (uint32_t)seq);
	struct rcv_slot *rs = &r->rv[seq % r->o.depth];
	uint8_t *base = slot_base(&r->s[1], r, seq);
	int imm = seq & 1;
	struct pat_result res;

	if (seq != r->verified || seq >= r->posted) {
		fail(r, "responder: receive #%" PRIu64 " completed, want #%" PRIu64
		     " (posted %" PRIu64 ")", seq, r->verified, r->posted);
		return -1;
	}
	if (wc->opcode != IBV_WC_RECV || !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && ntohl(wc->imm_data) != ((uint32_t)seq ^ SEND_IMM_SALT))) {
		fail(r, "responder: seq %" PRIu64 " (%s, %u bytes) completed with opcode %d flags 0x%x imm 0x%x byte_len %u",
		     seq, imm ? "SEND_WITH_IMM" : "SEND", len, wc->opcode, wc->wc_flags,
		     ntohl(wc->imm_data), wc->byte_len);
		return -1;
	}
	if (wc->byte_len != len) {
		fail(r, "responder: seq %" PRIu64 " byte_len %u, want %u", seq,
		     wc->byte_len, len);
		return -1;
	}
	pat_check(base, r->span, &rs->lay, (uint32_t)seq, len, &res);
	if (!res.ok)
		return report_bad(r, "SEND (responder)", (uint32_t)seq, len, base, &res);
	pat_restore(base, r->span, &rs->lay, len);
	r->verified = seq + 1;
	return 0;
}

/*
 * UC: declare messages r->verified..@upto-1 lost.  A WRITE that was dropped
 * may have landed in part: what landed must be right, and its slot is
 * reset for the message that reuses it.  (A SEND's remains stay in the
 * receive WQE it was being scattered into: see uc_check_send().)
 */
static int uc_lose(struct run *r, uint64_t upto)
{
	struct pat_result res;
	uint64_t k;

	for (k = r->verified; k < upto; k++) {
		if (r->o.op == OP_WRITE) {
			uint8_t *base = slot_base(&r->s[1], r, k);
			uint32_t len = msg_len(r, (uint32_t)k);
			struct pat_layout one = {
				.n = 1, .p = { { remote_off((uint32_t)k), len } },
			};

			pat_check_partial(base, r->span, &one, (uint32_t)k, len, &res);
			if (!res.ok)
				return report_bad(r, "lost UC WRITE (responder, the part that landed)",
						  (uint32_t)k, len, base, &res);
			pat_restore(base, r->span, &one, len);
		}
		r->lost++;
		if (r->o.verbose)
			fprintf(stderr, "sroce_integrity: message %" PRIu64 " lost\n", k);
	}
	if (upto > r->verified)
		r->verified = upto;
	return 0;
}

/*
 * UC SEND: message @seq landed in receive WQE #@n.  The WQE may have taken
 * part of messages dropped since the last delivered one before it was
 * reused; past the end of @seq, bytes those messages put there are allowed.
 */
static int uc_check_send(struct run *r, uint64_t n, uint32_t seq, uint32_t len, int dup)
{
	struct rcv_slot *rs = &r->rv[n % r->o.depth];
	uint8_t *base = slot_base(&r->s[1], r, n);
	uint32_t lo = (uint32_t)(r->last_seq + 1);
	struct pat_result res;
	size_t cleaned = 0;

	if (!dup && lo < seq)
		cleaned = pat_clean_stale(base, &rs->lay, len, lo, seq);
	pat_check(base, r->span, &rs->lay, seq, len, &res);
	if (!res.ok)
		return report_bad(r, "UC SEND (responder)", seq, len, base, &res);
	if (cleaned)
		memset(base, PAT_CANARY, r->span);
	else
		pat_restore(base, r->span, &rs->lay, len);
	return 0;
}

/*
 * UC WRITE_WITH_IMM: message @seq in its own slot.  A duplicate may have
 * landed again before or after the first copy was checked and the slot
 * reset, and a late one (declared lost) before or after its slot was reset,
 * so these are held to the partial check (whatever is there is right).
 */
static int uc_check_write(struct run *r, uint32_t seq, uint32_t len, int dup)
{
	uint8_t *base = slot_base(&r->s[1], r, seq);
	struct pat_layout one = { .n = 1, .p = { { remote_off(seq), len } } };
	struct pat_result res;

	if (seq < r->verified && seq + r->o.depth < r->posted) {
		fail(r, "responder: WRITE seq %u delivered after it was declared lost and its slot reused (raise -I)",
		     seq);
		return -1;
	}
	if (dup || seq < r->verified)
		pat_check_partial(base, r->span, &one, seq, len, &res);
	else
		pat_check(base, r->span, &one, seq, len, &res);
	if (!res.ok)
		return report_bad(r, dup ? "UC WRITE duplicate (responder)" :
				  "UC WRITE (responder)", seq, len, base, &res);
	pat_restore(base, r->span, &one, len);
	return 0;
}

/*
 * UC: a receive completion is one delivered message, named by its
 * immediate.  Seqs must rise; the same seq again is a duplicate (allowed on
 * UC, counted, checked); seqs skipped over are lost.  A seq that was
 * declared lost after the quiet period and arrives after all is late.
 */
static int uc_recv(struct run *r, const struct ibv_wc *wc)
{
	enum ibv_wc_opcode want = r->o.op == OP_SEND ? IBV_WC_RECV :
				  IBV_WC_RECV_RDMA_WITH_IMM;
	uint32_t seq, len;
	int dup, err;

	if (wc->opcode != want || !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		fail(r, "responder: receive #%" PRIu64 " opcode %d flags 0x%x, want %s with an immediate",
		     wc->wr_id, wc->opcode, wc->wc_flags,
		     r->o.op == OP_SEND ? "RECV" : "RECV_RDMA_WITH_IMM");
		return -1;
	}
	seq = ntohl(wc->imm_data);
	if (seq >= r->posted || (int64_t)seq < r->last_seq) {
		fail(r, "responder: UC message %u delivered %s (last delivered %" PRId64
		     ", posted %" PRIu64 ")", seq,
		     seq >= r->posted ? "but never posted" : "out of order",
		     r->last_seq, r->posted);
		return -1;
	}
	dup = (int64_t)seq == r->last_seq;
	len = msg_len(r, seq);
	if (wc->byte_len != len) {
		fail(r, "responder: UC message %u byte_len %u, want %u", seq,
		     wc->byte_len, len);
		return -1;
	}
	err = r->o.op == OP_SEND ? uc_check_send(r, wc->wr_id, seq, len, dup) :
				   uc_check_write(r, seq, len, dup);
	if (err)
		return err;
	if (dup) {
		r->dups++;
		return 0;
	}
	if (seq < r->verified) {
		r->lost--;
		r->late++;
	} else if (uc_lose(r, seq)) {
		return -1;
	}
	r->verified = r->verified > seq + 1 ? r->verified : seq + 1;
	r->last_seq = seq;
	r->delivered++;
	return 0;
}

static int rsp_completion(struct run *r, const struct ibv_wc *wc)
{
	int err;

	if (wc->status != IBV_WC_SUCCESS) {
		fail(r, "responder completion of receive #%" PRIu64 ": %s (vendor_err %u)",
		     wc->wr_id, ibv_wc_status_str(wc->status), wc->vendor_err);
		return -1;
	}
	if (r->o.op != OP_SEND && r->o.op != OP_WRITE) {
		fail(r, "responder: unexpected completion (opcode %d)", wc->opcode);
		return -1;
	}
	if (wc->wr_id != r->recvs_done) {
		fail(r, "responder: receive #%" PRIu64 " completed out of order (want #%"
		     PRIu64 ")", wc->wr_id, r->recvs_done);
		return -1;
	}
	if (is_uc(r))
		err = uc_recv(r, wc);
	else
		err = r->o.op == OP_SEND ? recv_send(r, wc) : recv_write(r, wc);
	if (err)
		return err;
	r->recvs_done++;
	return post_recv(r);
}

/* Drain both CQs; returns completions seen, or -1. */
static int drain(struct run *r)
{
	struct ibv_wc wc[32];
	int i, n, total = 0, side;

	for (side = 0; side < 2; side++) {
		do {
			n = ibv_poll_cq(r->s[side].cq, 32, wc);
			if (n < 0) {
				fail(r, "%s: ibv_poll_cq: %d", r->s[side].name, n);
				return -1;
			}
			for (i = 0; i < n; i++)
				if ((side ? rsp_completion : req_completion)(r, &wc[i]))
					return -1;
			total += n;
		} while (n);
	}
	return total;
}

/* Wait up to @ms for a completion event on either CQ and re-arm it. */
static int wait_events(struct run *r, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = r->s[0].ch->fd, .events = POLLIN },
		{ .fd = r->s[1].ch->fd, .events = POLLIN },
	};
	int i, n;

	n = poll(pfd, 2, ms);
	if (n < 0 && errno != EINTR) {
		fail(r, "poll: %s", strerror(errno));
		return -1;
	}
	for (i = 0; n > 0 && i < 2; i++) {
		struct ibv_cq *cq;
		void *ctx;

		if (!(pfd[i].revents & POLLIN))
			continue;
		while (!ibv_get_cq_event(r->s[i].ch, &cq, &ctx))
			r->s[i].events++;
		if (ibv_req_notify_cq(r->s[i].cq, 0)) {
			fail(r, "%s: ibv_req_notify_cq", r->s[i].name);
			return -1;
		}
	}
	return 0;
}

static int finished(const struct run *r)
{
	if (!r->posting_done || r->completed < r->nmsgs)
		return 0;
	if (r->o.op == OP_SEND || r->o.op == OP_WRITE)
		return r->verified >= r->nmsgs;
	return 1;
}

static void progress_dump(struct run *r, const char *why)
{
	fail(r, "%s: posted %" PRIu64 ", completed %" PRIu64 ", verified %" PRIu64
	     ", receives posted %" PRIu64 " done %" PRIu64 ", %s",
	     op_names[r->o.op], r->posted, r->completed, r->verified,
	     r->recvs_posted, r->recvs_done, why);
}

/*
 * UC: everything posted has completed on the requester and nothing has
 * arrived for the quiet period: the tail of the burst is lost.
 */
static int uc_quiet(struct run *r, double idle)
{
	if (!is_uc(r) || r->posted <= r->verified || r->completed < r->posted ||
	    idle * 1000 < r->o.quiet_ms)
		return 0;
	if (r->o.verbose)
		fprintf(stderr, "sroce_integrity: %.0f ms quiet: messages %" PRIu64
			"..%" PRIu64 " lost\n", idle * 1000, r->verified, r->posted - 1);
	return uc_lose(r, r->posted) ? -1 : 1;
}

static int run_loop(struct run *r)
{
	double last = now_s(), t;
	int n, ms = 200;

	for (;;) {
		while ((n = post_one(r)) > 0)
			;
		if (n < 0)
			return -1;
		n = drain(r);
		if (n < 0)
			return -1;
		t = now_s();
		if (n > 0) {
			last = t;
			continue;
		}
		if (finished(r))
			return 0;
		n = uc_quiet(r, t - last);
		if (n < 0)
			return -1;
		if (n > 0) {
			last = t;
			continue;
		}
		if (t - last > r->o.watchdog) {
			progress_dump(r, "no completion within the watchdog");
			return -1;
		}
		if (is_uc(r) && r->o.quiet_ms < 200)
			ms = (int)r->o.quiet_ms;
		if (wait_events(r, ms))
			return -1;
	}
}

/* After the run nothing more may complete (duplicates delivered twice). */
static int check_quiet(struct run *r)
{
	struct ibv_wc wc;
	int side;

	usleep(200000);
	for (side = 0; side < 2; side++)
		if (ibv_poll_cq(r->s[side].cq, 1, &wc) > 0) {
			fail(r, "%s: stray completion after the run: wr_id %" PRIu64
			     " status %s opcode %d", r->s[side].name, wc.wr_id,
			     ibv_wc_status_str(wc.status), wc.opcode);
			return -1;
		}
	return 0;
}

static int check_atomic_targets(struct run *r)
{
	const uint8_t *t = r->s[1].buf + r->o.depth * r->span;
	unsigned int i;
	uint64_t v;

	for (i = 0; i < ATOMIC_TARGETS; i++) {
		memcpy(&v, t + i * ATOMIC_STRIDE, 8);
		if (v != r->model[i]) {
			fail(r, "atomic target %u holds 0x%016" PRIx64 ", want 0x%016" PRIx64,
			     i, v, r->model[i]);
			return -1;
		}
	}
	return 0;
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

	for (i = QPK_RC; i <= QPK_UC; i++)
		if (!strcmp(s, qp_names[i]))
			return (enum qp_kind)i;
	if (!strcmp(s, "ud"))
		die("-Q ud is not implemented yet");
	die("unknown QP type '%s' (rc or uc)", s);
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
		"                       [-Q rc|uc] [options]\n"
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
		"  -p PSN       first PSN (default 0xfffff0: wraps at once)\n"
		"  -Q rc|uc     transport (default rc); -u is -Q uc.  UC: send and write only,\n"
		"               -t/-r/-R do not apply\n"
		"  -L PCT       UC: most messages that may be lost, in %% (default 0)\n"
		"  -I MS        UC: quiet period before missing messages are lost (default 200)\n"
		"  -v           verbose\n"
		"  -T           self-test of the pattern checker (no devices)\n");
	exit(2);
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
	while ((c = getopt(argc, argv, "a:b:g:G:o:n:c:s:xq:e:S:m:t:r:R:w:p:Q:uL:I:vTh")) != -1) {
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
		case 'p': o->psn = (uint32_t)strtoul(optarg, NULL, 0) & 0xffffff; break;
		case 'Q': o->qpt = parse_qp(optarg); break;
		case 'u': o->qpt = QPK_UC; break;
		case 'L': o->loss_pct = parse_pct(optarg); break;
		case 'I': o->quiet_ms = (unsigned int)atoi(optarg); break;
		case 'v': o->verbose = 1; break;
		case 'T':
			if (pat_selftest())
				die("pattern self-test failed");
			printf("sroce_integrity: pattern self-test passed\n");
			exit(0);
		default: usage();
		}
	}
	if (!o->dev[0] || !o->dev[1] || o->gid[0] < 0 || o->gid[1] < 0 || optind != argc)
		usage();
	if (o->mixed && !have_size)
		o->size = 256 * 1024;
	if (o->depth < 2 || o->depth > 4096 || o->sges < 1 || o->sges > PAT_MAX_PIECES ||
	    o->timeout > 31 || o->retry > 7 || o->rnr_retry > 7 || !o->watchdog ||
	    o->size > (1u << 26) ||
	    (o->mtu != 256 && o->mtu != 512 && o->mtu != 1024 && o->mtu != 2048 &&
	     o->mtu != 4096))
		die("option out of range (see -h)");
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

/* ------------------------------------------------------------------ */

static void teardown(struct side *sd)
{
	int i;

	if (sd->qp)
		ibv_destroy_qp(sd->qp);
	for (i = 0; i < 2; i++)
		if (sd->mr[i])
			ibv_dereg_mr(sd->mr[i]);
	if (sd->cq) {
		ibv_ack_cq_events(sd->cq, sd->events);
		ibv_destroy_cq(sd->cq);
	}
	if (sd->ch)
		ibv_destroy_comp_channel(sd->ch);
	if (sd->pd)
		ibv_dealloc_pd(sd->pd);
	if (sd->ctx)
		ibv_close_device(sd->ctx);
	free(sd->buf);
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
	if (is_uc(r))
		printf(" delivered=%" PRIu64 " lost=%" PRIu64 " dups=%" PRIu64
		       " late=%" PRIu64, r->delivered, r->lost, r->dups, r->late);
	printf(" result=%s\n", r->failed ? "FAIL" : "PASS");
}

/* UC: every message delivered or lost, some delivered, losses in budget. */
static void uc_verdict(struct run *r)
{
	if (r->delivered + r->lost != r->nmsgs)
		fail(r, "UC accounting: %" PRIu64 " delivered + %" PRIu64
		     " lost != %" PRIu64 " messages", r->delivered, r->lost, r->nmsgs);
	else if (!r->delivered)
		fail(r, "UC: not one of %" PRIu64 " messages was delivered", r->nmsgs);
	else if (r->lost * 100.0 > r->o.loss_pct * r->nmsgs)
		fail(r, "UC: %" PRIu64 " of %" PRIu64 " messages lost (%.2f%%), over the -L budget of %g%%",
		     r->lost, r->nmsgs, r->lost * 100.0 / r->nmsgs, r->o.loss_pct);
}

int main(int argc, char **argv)
{
	static struct run run;
	struct run *r = &run;
	unsigned int rd_atomic, i;
	struct ibv_device_attr da;
	double t0, secs;

	parse_opts(&r->o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	r->maxlen = r->o.op == OP_ATOMIC ? 8 : r->o.size;
	r->span = r->o.op == OP_ATOMIC ? ATOMIC_STRIDE :
		  (pat_layout_span(r->maxlen, r->o.sges) + 63) & ~(size_t)63;
	r->last_seq = -1;
	r->rq = calloc(r->o.depth, sizeof(*r->rq));
	r->rv = calloc(r->o.depth, sizeof(*r->rv));
	if (!r->rq || !r->rv)
		die("out of memory");
	r->s[0].name = r->o.dev[0];
	r->s[1].name = r->o.dev[1];
	setup_side(r, &r->s[0], r->o.gid[0]);
	setup_side(r, &r->s[1], r->o.gid[1]);
	if (ibv_query_device(r->s[0].ctx, &da))
		die("ibv_query_device");
	rd_atomic = r->o.depth < (unsigned int)da.max_qp_rd_atom ?
		    r->o.depth : (unsigned int)da.max_qp_rd_atom;
	if (rd_atomic > 255)
		rd_atomic = 255;
	for (i = 0; i < ATOMIC_TARGETS; i++) {
		r->model[i] = 0x1000000000000000ull * (i + 1) + i;
		memcpy(r->s[1].buf + r->o.depth * r->span + i * ATOMIC_STRIDE,
		       &r->model[i], 8);
	}
	connect_qp(r, &r->s[0], &r->s[1], r->o.gid[0], r->o.psn,
		   (r->o.psn + 0x1234) & 0xffffff, rd_atomic, is_uc(r));
	connect_qp(r, &r->s[1], &r->s[0], r->o.gid[1],
		   (r->o.psn + 0x1234) & 0xffffff, r->o.psn, rd_atomic,
		   is_uc(r));
	if (r->o.op == OP_SEND || r->o.op == OP_WRITE)
		for (i = 0; i < r->o.depth; i++)
			if (post_recv(r))
				break;
	read_counters(&r->s[0]);
	read_counters(&r->s[1]);
	if (r->o.verbose)
		fprintf(stderr, "sroce_integrity: %s -> %s qpn 0x%x -> 0x%x, slot %zu bytes\n",
			r->s[0].name, r->s[1].name, r->s[0].qp->qp_num,
			r->s[1].qp->qp_num, r->span);
	t0 = now_s();
	if (!r->failed && !run_loop(r)) {
		secs = now_s() - t0;
		if (!check_quiet(r) && r->o.op == OP_ATOMIC)
			check_atomic_targets(r);
		if (!r->failed && is_uc(r))
			uc_verdict(r);
	} else {
		secs = now_s() - t0;
	}
	summary(r, secs);
	teardown(&r->s[0]);
	teardown(&r->s[1]);
	free(r->rq);
	free(r->rv);
	return r->failed ? 1 : 0;
}
