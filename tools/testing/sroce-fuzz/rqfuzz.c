// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ringfuzz: receive queue, SRQ and CQ cases.
 *
 * Receive WQEs get no doorbell: the tool writes them into the RQ or SRQ
 * ring of receiver QPs on A, and well-behaved senders on B (posting
 * through librxe) send to them, so that the responder consumes them.
 * With a sane producer index, every RQ WQE completes exactly once, in
 * order, and the ones built bad (too many SGEs, lengths whose sum passes
 * 2^32, bad or foreign keys, addresses outside the MR, no room) in
 * error; every SRQ WQE the kernel consumed (its consumer index passed
 * it) completes exactly once. CQ cases move the consumer index of a CQ
 * ring past the producer, backwards, to random values and race it: the
 * kernel may then only fill the slots it believes free, and must report
 * the overflow (IBV_EVENT_CQ_ERR) when there are not enough of them.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ringfuzz.h"

#define RQ_MSG_MAX	2048
#define RQ_MAX		64

struct rq_case {
	struct rf_qp *recv[2];	/* on A: the victims */
	struct rf_qp *send[2];	/* on B: well behaved */
	struct rf_srq *srq;
	unsigned int nq;
	uint64_t base;
	uint32_t n;
	uint8_t bad[RQ_MAX];
};

/* A good receive WQE: 1..max_sge SGEs in A's MR, 2048 bytes in all. */
static void rwqe_good(struct rf *rf, const struct rf_dev *d, struct rxe_recv_wqe *w,
		      size_t elem, uint32_t max_sge, uint64_t id)
{
	uint32_t n = 1 + rf_below(rf, max_sge), i, left = RQ_MSG_MAX, len;

	memset(w, 0, elem);
	w->wr_id = id;
	for (i = 0; i < n; i++) {
		len = i == n - 1 ? left : left / (n - i);
		left -= len;
		w->dma.sge[i].addr = (uintptr_t)d->mem.mr->addr +
				     rf_below(rf, (uint32_t)d->mem.len - RQ_MSG_MAX);
		w->dma.sge[i].length = len;
		w->dma.sge[i].lkey = d->mem.mr->lkey;
	}
	w->dma.num_sge = n;
	w->dma.length = RQ_MSG_MAX;
	w->dma.resid = RQ_MSG_MAX;
}

/* Turn @w bad (kind < 6) or strange (6, 7); returns 1 for bad. */
static int rwqe_mutate(struct rf *rf, const struct rf_dev *d, struct rxe_recv_wqe *w,
		       size_t elem, uint32_t max_sge, unsigned int kind)
{
	uint64_t id = w->wr_id;

	switch (kind) {
	case 0:
		w->dma.num_sge = rf_below(rf, 3) ? max_sge + 1 + rf_below(rf, 40) :
						   0x80000000u | (uint32_t)rf_rand(rf);
		return 1;
	case 1:	/* lengths whose sum passes 2^32 */
		w->dma.sge[1] = w->dma.sge[0];
		w->dma.sge[0].length = 0x80000001u;
		w->dma.sge[1].length = 0x80000000u + rf_below(rf, 0x1000);
		w->dma.num_sge = 2;
		return 1;
	case 2:
		do
			w->dma.sge[0].lkey = (uint32_t)rf_rand(rf);
		while (w->dma.sge[0].lkey == d->mem.mr->lkey ||
		       w->dma.sge[0].lkey == d->mem2.mr->lkey);
		return 1;
	case 3:	/* into the canaries before the MR */
		w->dma.sge[0].addr = (uintptr_t)d->mem.mr->addr - 1 - rf_below(rf, 512);
		return 1;
	case 4:	/* a key of another PD */
		w->dma.sge[0].lkey = d->mem2.mr->lkey;
		w->dma.sge[0].addr = (uintptr_t)d->mem2.mr->addr;
		return 1;
	case 5:	/* no room: every message has 2 bytes at least */
		w->dma.num_sge = 0;
		return 1;
	case 6:
		rf_fill_random(rf, w, elem);
		w->wr_id = id;
		return 0;
	default:	/* dma.length and resid lie: the kernel sums the SGEs itself */
		w->dma.length = (uint32_t)rf_rand(rf);
		w->dma.resid = (uint32_t)rf_rand(rf);
		return 0;
	}
}

/* Write @n receive WQEs from @prod into @ring; bad[] says which are bad. */
static void rq_build(struct rf *rf, struct rq_case *c, struct rf_ring *ring,
		     uint32_t prod, uint32_t max_sge, uint32_t n)
{
	const struct rf_dev *d = c->recv[0]->dev;
	struct rxe_recv_wqe *w;
	unsigned int r;
	uint32_t i;

	for (i = 0; i < n; i++) {
		w = rf_ring_slot(ring, prod + i);
		rwqe_good(rf, d, w, rf_ring_elem(ring), max_sge, c->base + i);
		r = rf_below(rf, 12);
		c->bad[i] = r < 8 ? (uint8_t)rwqe_mutate(rf, d, w, rf_ring_elem(ring),
							  max_sge, r) : 0;
	}
	rf_ring_snap(ring);
}

static void rq_open(struct rf *rf, struct rq_case *c, unsigned int nq, int srq)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->nq = nq;
	if (srq)
		c->srq = rf_srq_create(rf, &rf->a, 31, 4);
	for (i = 0; i < nq; i++) {
		c->recv[i] = rf_qp_create(rf, &rf->a, IBV_QPT_RC, c->srq, 64);
		c->send[i] = rf_qp_create(rf, &rf->b, IBV_QPT_RC, NULL, 64);
		if (rf_qp_connect(c->recv[i], c->send[i], 7) ||
		    rf_qp_connect(c->send[i], c->recv[i], 0))
			rf_die("cannot bring the receive case's QPs to RTS");
	}
	c->base = RF_WRID_TAG | (rf->cases++ << 8);
}

static void rq_close(struct rq_case *c)
{
	unsigned int i;

	for (i = 0; i < c->nq; i++) {
		rf_qp_destroy(c->recv[i]);
		rf_qp_destroy(c->send[i]);
	}
	if (c->srq)
		rf_srq_destroy(c->srq);
}

/* @n SENDs of 2..2048 bytes, spread over the senders, through librxe. */
static void rq_send(struct rf *rf, struct rq_case *c, uint32_t n)
{
	const struct rf_mem *m = &c->send[0]->dev->mem;
	struct ibv_sge sge = { .addr = (uintptr_t)m->mr->addr, .lkey = m->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc[32];
	uint32_t i, per[2] = { 0, 0 };

	for (i = 0; i < n; i++) {
		struct rf_qp *s = c->send[i % c->nq];

		sge.length = 2 + rf_below(rf, RQ_MSG_MAX - 1);
		wr.wr_id = i;
		if (ibv_post_send(s->qp, &wr, &bad))
			rf_die("ibv_post_send on a sender: %s", strerror(errno));
		per[i % c->nq]++;
	}
	for (i = 0; i < c->nq; i++)
		rf_drain(rf, c->send[i], wc, (int)per[i], 500);
}

static int rq_memory(struct rf *rf, struct rq_case *c)
{
	int bad = 0;
	unsigned int i;

	for (i = 0; i < c->nq; i++) {
		if (!c->srq)
			bad |= rf_ring_check(rf, &c->recv[i]->rq, "victim RQ", 1);
		bad |= rf_ring_check(rf, &c->recv[i]->cqr, "victim CQ", 0);
	}
	if (c->srq)
		bad |= rf_ring_check(rf, &c->srq->ring, "victim SRQ", 1);
	bad |= rf_mem_check(rf, &c->recv[0]->dev->mem, "A's MR");
	bad |= rf_mem_check(rf, &c->recv[0]->dev->mem2, "A's second MR");
	bad |= rf_mem_check(rf, &c->send[0]->dev->mem, "B's MR");
	return bad;
}

/*
 * Each completion of the receivers is well formed; @strict (the producer
 * index was sane): @seen counts each WQE once, bad ones fail, an RQ
 * completes in order.
 */
static int rq_collect(struct rf *rf, struct rq_case *c, uint8_t *seen, int want,
		      int strict)
{
	struct ibv_wc wc[RQ_MAX];
	unsigned int i, qpn_ok;
	int n, j, total = 0;

	for (i = 0; i < c->nq; i++) {
		if (rf_qp_state(c->recv[i], IBV_QPS_ERR))
			return rf_bad(rf, "cannot move a receiver to ERR");
		/* a strict RQ case knows its count; otherwise wait for quiet */
		n = rf_drain(rf, c->recv[i], wc, want, strict && !c->srq ? 3000 : 500);
		for (j = 0; j < n; j++) {
			uint64_t idx = wc[j].wr_id - c->base;

			qpn_ok = wc[j].qp_num == c->recv[i]->qp->qp_num;
			if (rf_sane_cqe(rf, &wc[j], wc[j].qp_num) || !qpn_ok)
				return rf_bad(rf, "receive completion on QP %u for receiver %u",
					      wc[j].qp_num, c->recv[i]->qp->qp_num);
			if (idx >= RQ_MAX || (seen[idx]++ && strict))
				return rf_bad(rf, "receive WQE %llu completed twice or never posted",
					      (unsigned long long)idx);
			if (strict && c->bad[idx] && wc[j].status == IBV_WC_SUCCESS)
				return rf_bad(rf, "bad receive WQE %llu succeeded",
					      (unsigned long long)idx);
			if (strict && !c->srq && idx != (uint64_t)j)
				return rf_bad(rf, "receive completion %d is of WQE %llu", j,
					      (unsigned long long)idx);
		}
		total += n;
	}
	return total;
}

/* rq-wqe: bad receive WQEs in a QP's own RQ, consumed by SENDs. */
static void fam_rq(struct rf *rf)
{
	unsigned int before = rf->failed, i;
	uint8_t seen[RQ_MAX];
	struct rq_case c;
	int got;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		rq_open(rf, &c, 1, 0);
		c.n = 1 + rf_below(rf, 15);
		rq_build(rf, &c, &c.recv[0]->rq, 0, c.recv[0]->cap.max_recv_sge, c.n);
		c.recv[0]->rq_prod = c.n;
		rf_ring_store(&c.recv[0]->rq, RF_HDR_PROD, c.n);
		rq_send(rf, &c, c.n);
		memset(seen, 0, sizeof(seen));
		got = rq_collect(rf, &c, seen, (int)c.n, 1);
		if (got >= 0 && got != (int)c.n)
			rf_bad(rf, "%d receive completions for %u WQEs", got, c.n);
		if (rf_ring_load(&c.recv[0]->rq, RF_HDR_CONS) != c.n)
			rf_bad(rf, "RQ consumer index %u after %u WQEs completed",
			       rf_ring_load(&c.recv[0]->rq, RF_HDR_CONS), c.n);
		rq_memory(rf, &c);
		rq_close(&c);
	}
	rf_result(rf, "rq-wqe", before, i);
}

/* srq-wqe: bad WQEs in an SRQ shared by two QPs; consumed means completed. */
static void fam_srq(struct rf *rf)
{
	unsigned int before = rf->failed, i;
	uint8_t seen[RQ_MAX];
	struct rq_case c;
	uint32_t k, j;
	int got;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		rq_open(rf, &c, 2, 1);
		c.n = 1 + rf_below(rf, 30);
		rq_build(rf, &c, &c.srq->ring, 0, c.srq->max_sge, c.n);
		rf_ring_store(&c.srq->ring, RF_HDR_PROD, c.n);
		rq_send(rf, &c, c.n);
		memset(seen, 0, sizeof(seen));
		/* stop the senders first: nothing consumes after this count */
		for (j = 0; j < c.nq; j++)
			rf_qp_state(c.send[j], IBV_QPS_ERR);
		usleep(20000);
		k = rf_ring_load(&c.srq->ring, RF_HDR_CONS);
		got = rq_collect(rf, &c, seen, RQ_MAX, 1);
		if (k > c.n)
			rf_bad(rf, "SRQ consumer index %u past the %u WQEs posted", k, c.n);
		for (j = 0; got >= 0 && j < k && j < c.n; j++)
			if (!seen[j]) {
				rf_bad(rf, "SRQ WQE %u (%s) was consumed and never completed",
				       j, c.bad[j] ? "bad" : "good");
				break;
			}
		if (got >= 0 && (uint32_t)got != k && rf->failed == before)
			rf_bad(rf, "%d receive completions for %u SRQ WQEs consumed", got, k);
		rq_memory(rf, &c);
		rq_close(&c);
	}
	rf_result(rf, "srq-wqe", before, i);
}

/*
 * rq-race / srq-race: every slot filled, the producer index raced while
 * the senders send; only the shape of what completes is checked.
 */
static void fam_rq_race(struct rf *rf, int srq)
{
	unsigned int before = rf->failed, i;
	struct rf_racer r = { .off = RF_HDR_PROD };
	uint8_t seen[RQ_MAX];
	struct rf_ring *ring;
	struct rq_case c;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		rq_open(rf, &c, srq ? 2 : 1, srq);
		ring = srq ? &c.srq->ring : &c.recv[0]->rq;
		rq_build(rf, &c, ring, 0, srq ? c.srq->max_sge : c.recv[0]->cap.max_recv_sge,
			 ring->mask + 1);
		r.ring = ring;
		rf_race_start(rf, &r);
		rq_send(rf, &c, 15 * c.nq);
		rf_race_stop(&r);
		rf_ring_store(ring, RF_HDR_PROD, 0);
		memset(seen, 0, sizeof(seen));
		rq_collect(rf, &c, seen, RQ_MAX, 0);
		if (rf_ring_load(ring, RF_HDR_CONS) > ring->mask)
			rf_bad(rf, "consumer index %u beyond the ring", rf_ring_load(ring, RF_HDR_CONS));
		rq_memory(rf, &c);
		rq_close(&c);
	}
	rf_result(rf, srq ? "srq-race" : "rq-race", before, i);
}

void rf_rq_families(struct rf *rf)
{
	if (rf_family_wanted(rf, "rq-wqe"))
		fam_rq(rf);
	if (rf_family_wanted(rf, "srq-wqe"))
		fam_srq(rf);
	if (rf_family_wanted(rf, "rq-race"))
		fam_rq_race(rf, 0);
	if (rf_family_wanted(rf, "srq-race"))
		fam_rq_race(rf, 1);
}

/* ---- CQ ---------------------------------------------------------------- */

/* The slots the kernel wrote since the snapshot: only [from, from + n). */
static int cq_slots(struct rf *rf, struct rf_qp *q, uint32_t from, uint32_t n)
{
	const struct rf_ring *r = &q->cqr;
	size_t elem = rf_ring_elem(r);
	uint32_t i, off;

	for (i = 0; i <= r->mask; i++) {
		const struct ib_uverbs_wc *cqe = rf_ring_slot(r, i);
		int changed = memcmp(r->shadow + (size_t)i * elem, cqe, elem) != 0;

		off = (i - from) & r->mask;
		if (off >= n && changed)
			return rf_bad(rf, "CQ slot %u written outside the %u the kernel had (from %u)",
				      i, n, from);
		if (off < n && changed &&
		    (cqe->qp_num != q->qp->qp_num || cqe->status > RF_WC_STATUS_MAX ||
		     (cqe->wr_id & RF_WRID_MASK) != RF_WRID_TAG))
			return rf_bad(rf, "CQ slot %u: qp_num %u status %u wr_id %#llx", i,
				      cqe->qp_num, cqe->status, (unsigned long long)cqe->wr_id);
	}
	return 0;
}

/* Let A's @q post @n signaled SENDs to @peer; wait until its CQ is quiet. */
static uint32_t cq_traffic(struct rf_qp *q, uint32_t n)
{
	const struct rf_mem *m = &q->dev->mem;
	struct ibv_sge sge = { .addr = (uintptr_t)m->mr->addr, .length = 64,
			       .lkey = m->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t i, prod, last;
	double t;

	prod = rf_ring_load(&q->cqr, RF_HDR_PROD);
	for (i = 0; i < n; i++) {
		wr.wr_id = RF_WRID_TAG | i;
		if (ibv_post_send(q->qp, &wr, &bad))
			rf_die("ibv_post_send: %s", strerror(errno));
	}
	for (t = rf_now(), last = prod; rf_now() - t < 0.5;) {
		usleep(2000);
		prod = rf_ring_load(&q->cqr, RF_HDR_PROD);
		if (prod != last) {
			last = prod;
			t = rf_now();
		}
	}
	return prod;
}

/*
 * cq-cons: the CQ's consumer index past the producer, backwards or
 * random; then n completions. The kernel fills exactly
 * min(n, free) slots, free = mask - (prod - cons) & mask, and reports an
 * overflow when n > free.
 */
static void fam_cq(struct rf *rf)
{
	unsigned int before = rf->failed, i;
	struct rf_qp *q, *peer;
	uint32_t prod0, prod1, cons, n, freed, made;
	uint64_t cq_err;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		q = rf_qp_create(rf, &rf->a, IBV_QPT_RC, NULL, 15);
		peer = rf_qp_create(rf, &rf->b, IBV_QPT_RC, NULL, 64);
		if (rf_qp_connect(q, peer, 0) || rf_qp_connect(peer, q, 7))
			rf_die("cannot bring the CQ case's QPs to RTS");
		rf_post_recvs(peer, 15, 1024);
		rf->cases++;
		prod0 = rf_ring_load(&q->cqr, RF_HDR_PROD);
		switch (rf_below(rf, 3)) {
		case 0: cons = prod0 + 1 + rf_below(rf, q->cqr.mask); break;
		case 1: cons = prod0 - 1 - rf_below(rf, q->cqr.mask); break;
		default: cons = (uint32_t)rf_rand(rf); break;
		}
		rf_ring_store(&q->cqr, RF_HDR_CONS, cons);
		freed = q->cqr.mask - ((prod0 - cons) & q->cqr.mask);
		n = 1 + rf_below(rf, q->cap.max_send_wr);
		rf_async_drain(&rf->a);
		cq_err = rf->a.async_events[IBV_EVENT_CQ_ERR];
		rf_ring_snap(&q->cqr);
		prod1 = cq_traffic(q, n);
		made = (prod1 - prod0) & q->cqr.mask;
		if (made != (n < freed ? n : freed))
			rf_bad(rf, "%u completions in a CQ with %u free slots; it holds %u more",
			       n, freed, made);
		cq_slots(rf, q, prod0, made);
		rf_async_drain(&rf->a);
		if ((n > freed) != (rf->a.async_events[IBV_EVENT_CQ_ERR] > cq_err))
			rf_bad(rf, "%u completions, %u free CQ slots: CQ_ERR events went %llu -> %llu",
			       n, freed, (unsigned long long)cq_err,
			       (unsigned long long)rf->a.async_events[IBV_EVENT_CQ_ERR]);
		rf_ring_check(rf, &q->cqr, "CQ", 0);
		rf_qp_destroy(q);
		rf_qp_destroy(peer);
	}
	rf_result(rf, "cq-cons", before, i);
}

/* cq-race: the consumer index raced while completions arrive. */
static void fam_cq_race(struct rf *rf)
{
	unsigned int before = rf->failed, i;
	struct rf_racer r = { .off = RF_HDR_CONS };
	struct rf_qp *q, *peer;
	uint32_t prod;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		q = rf_qp_create(rf, &rf->a, IBV_QPT_RC, NULL, 15);
		peer = rf_qp_create(rf, &rf->b, IBV_QPT_RC, NULL, 64);
		if (rf_qp_connect(q, peer, 0) || rf_qp_connect(peer, q, 7))
			rf_die("cannot bring the CQ case's QPs to RTS");
		rf_post_recvs(peer, 15, 1024);
		rf->cases++;
		r.ring = &q->cqr;
		rf_race_start(rf, &r);
		prod = cq_traffic(q, q->cap.max_send_wr);
		rf_race_stop(&r);
		if (prod > q->cqr.mask)
			rf_bad(rf, "CQ producer index %u beyond the ring", prod);
		/* every slot written (the shadow is the zeroed ring) holds one of this QP */
		cq_slots(rf, q, 0, q->cqr.mask + 1);
		rf_async_drain(&rf->a);
		rf_ring_check(rf, &q->cqr, "CQ", 0);
		rf_qp_destroy(q);
		rf_qp_destroy(peer);
	}
	rf_result(rf, "cq-race", before, i);
}

void rf_cq_families(struct rf *rf)
{
	if (rf_family_wanted(rf, "cq-cons"))
		fam_cq(rf);
	if (rf_family_wanted(rf, "cq-race"))
		fam_cq_race(rf);
}
