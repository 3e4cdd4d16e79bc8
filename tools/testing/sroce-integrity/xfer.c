// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: the data path: posting, completions and the main loop.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ud.h"
#include "unreliable.h"
#include "xfer.h"

/* ------------------------------------------------------------------ */
/* Responder receives */

int post_recv(struct run *r)
{
	struct side *b = &r->s[1];
	uint64_t n = r->recvs_posted;
	struct rcv_slot *rs = &r->rv[n % r->o.depth];
	struct ibv_sge sge[PAT_MAX_PIECES + 1];
	struct ibv_recv_wr wr = { .wr_id = n, .sg_list = sge }, *bad;
	unsigned int i;
	int err;

	if (is_ud(r)) {
		wr.num_sge = (int)ud_recv_sges(r, n, sge);
	} else if (r->o.op == OP_SEND) {
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

/*
 * The last message: the volume (-n) or count (-c) is reached, or the
 * duration (-D) is over. The last message of a WRITE run carries an
 * immediate, so that B verifies it too, wherever the run stops.
 */
static int is_last(struct run *r, uint32_t len)
{
	if (r->o.duration > 0 && now_s() - r->t0 >= r->o.duration)
		return 1;
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
	wr->wr.atomic.remote_addr = (uintptr_t)(b->buf + r->rdepth * r->span +
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
		if (is_ud(r)) {
			ud_prep_send(r, q->seq, wr);
		} else if (is_uc(r)) {
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
int post_one(struct run *r)
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
	 * UC, UD: the WR that fills the receive window is signaled, so that
	 * "everything posted has completed" is known when the window stalls.
	 */
	if (is_unrel(r) && seq + 1 >= r->verified + r->o.depth)
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

int report_bad(struct run *r, const char *what, uint32_t seq, uint32_t len,
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
	if (is_ud(r))
		err = ud_recv(r, wc);
	else if (is_uc(r))
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

	if (r->o.busy)
		return 0;	/* -B: straight back to polling the CQs */
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

/*
 * Messages done: on RC SEND and WRITE those B verified, otherwise those
 * A's requester completed (a READ is verified when it completes; on UC
 * and UD B's count includes lost messages).
 */
static void progress_done(struct run *r)
{
	uint64_t upto = r->completed;

	if (!is_unrel(r) && (r->o.op == OP_SEND || r->o.op == OP_WRITE))
		upto = r->verified;
	for (; r->msgs_done < upto; r->msgs_done++)
		r->bytes_done += r->o.op == OP_ATOMIC ? 8 :
				 msg_len(r, (uint32_t)r->msgs_done);
}

/*
 * -P: one line per period with the time (since the start and on
 * CLOCK_MONOTONIC, which another process or the kernel's trace clock
 * "mono" can be lined up with) and the bytes done so far.
 */
static void progress_report(struct run *r, double t)
{
	if (!r->o.progress_ms || t < r->next_report)
		return;
	progress_done(r);
	printf("sroce_integrity: progress t=%.3f mono=%.6f bytes=%" PRIu64
	       " msgs=%" PRIu64 "\n", t - r->t0, t, r->bytes_done, r->msgs_done);
	while (r->next_report <= t)
		r->next_report += r->o.progress_ms / 1000.0;
}

/* The last progress line, at the end of the run. */
void progress_end(struct run *r)
{
	if (!r->o.progress_ms)
		return;
	r->next_report = 0;
	progress_report(r, now_s());
}

static void progress_dump(struct run *r, const char *why)
{
	fail(r, "%s: posted %" PRIu64 ", completed %" PRIu64 ", verified %" PRIu64
	     ", receives posted %" PRIu64 " done %" PRIu64 ", %s",
	     op_names[r->o.op], r->posted, r->completed, r->verified,
	     r->recvs_posted, r->recvs_done, why);
}

int run_loop(struct run *r)
{
	double last = now_s(), t;
	int n, ms = 200;

	r->next_report = last;
	for (;;) {
		while ((n = post_one(r)) > 0)
			;
		if (n < 0)
			return -1;
		n = drain(r);
		if (n < 0)
			return -1;
		t = now_s();
		progress_report(r, t);
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
		if (is_unrel(r) && r->o.quiet_ms < 200)
			ms = (int)r->o.quiet_ms;
		if (r->o.progress_ms && (int)r->o.progress_ms < ms)
			ms = (int)r->o.progress_ms;
		if (wait_events(r, ms))
			return -1;
	}
}

/* After the run nothing more may complete (duplicates delivered twice). */
int check_quiet(struct run *r)
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

int check_atomic_targets(struct run *r)
{
	const uint8_t *t = r->s[1].buf + r->rdepth * r->span;
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

