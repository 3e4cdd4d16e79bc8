// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ringfuzz: send queue cases. The tool writes the WQE slots and the
 * producer index of a user QP's SQ itself, rings librxe's doorbell, and
 * checks the completions, the ring and the memory around the MRs.
 *
 * Every victim QP signals every WQE (sq_sig_all), so while the producer
 * index is sane each WQE posted must complete exactly once, in order,
 * with its wr_id and qp_num; a WQE the tool built to be bad (opcode out
 * of range, too many SGEs, lengths that overflow, inline data too long,
 * bad keys, addresses outside an MR, bad atomics, bad AH numbers) must
 * complete in error; on RC nothing completes successfully after an
 * error. When the tool moves the producer index backwards, beyond the
 * ring or from a second thread, only the shape of what comes back is
 * checked: the kernel must not crash, spin, write the slots or outside
 * the ring, and every completion must name a WQE the tool wrote.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ringfuzz.h"

#define RF_MAX_WQE	64
#define RF_PEER_RECVS	15
#define RF_RECV_LEN	1024
#define RF_QKEY		0x11111111

/* One case: the victim QP on A, its peer on B, what the tool posted. */
struct sq_case {
	struct rf_qp *v, *peer;
	uint64_t base;		/* wr_id of the first WQE */
	uint32_t n;		/* WQEs posted */
	uint8_t bad[RF_MAX_WQE];	/* built to fail */
	uint32_t ah_ok, ah_foreign, ah_gone;	/* UD AH numbers */
};

static struct rxe_send_wqe *sq_slot(struct rf_qp *q, uint32_t i)
{
	return rf_ring_slot(&q->sq, i);
}

/* A valid SEND of 1..256 bytes from A's MR. */
static void wqe_send(struct rf *rf, struct rf_qp *q, struct rxe_send_wqe *w,
		     uint64_t id)
{
	const struct rf_mem *m = &q->dev->mem;
	uint32_t len = 1 + rf_below(rf, 256);

	memset(w, 0, rf_ring_elem(&q->sq));
	w->wr.wr_id = id;
	w->wr.opcode = IBV_WR_SEND;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->dma.length = len;
	w->dma.resid = len;
	w->dma.num_sge = 1;
	w->dma.sge[0].addr = (uintptr_t)m->mr->addr + rf_below(rf, (uint32_t)m->len - len);
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = m->mr->lkey;
}

struct rf_case_keys {
	uint32_t keys[8];
};

/* A key no MR of either device has. */
static uint32_t bogus_key(struct rf *rf, const struct rf_case_keys *k)
{
	uint32_t key;
	int i, clash;

	do {
		key = (uint32_t)rf_rand(rf);
		for (clash = 0, i = 0; i < 8; i++)
			clash |= key == k->keys[i];
	} while (clash);
	return key;
}

static void case_keys(const struct sq_case *c, struct rf_case_keys *k)
{
	const struct rf_dev *a = c->v->dev, *b = c->peer->dev;

	k->keys[0] = a->mem.mr->lkey;
	k->keys[1] = a->mem.mr->rkey;
	k->keys[2] = a->mem2.mr->lkey;
	k->keys[3] = a->mem2.mr->rkey;
	k->keys[4] = b->mem.mr->lkey;
	k->keys[5] = b->mem.mr->rkey;
	k->keys[6] = b->mem2.mr->lkey;
	k->keys[7] = b->mem2.mr->rkey;
}

/* RDMA or atomic at the peer's MR, @off bytes in, with @rkey. */
static void wqe_remote(struct rxe_send_wqe *w, const struct sq_case *c,
		       uint32_t opcode, int64_t off, uint32_t rkey)
{
	uint64_t raddr = (uintptr_t)c->peer->dev->mem.mr->addr + off;

	w->wr.opcode = opcode;
	w->iova = raddr;
	if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.wr.atomic.remote_addr = raddr;
		w->wr.wr.atomic.rkey = rkey;
		w->wr.wr.atomic.compare_add = 1;
		w->dma.length = 8;
		w->dma.resid = 8;
		w->dma.sge[0].length = 8;
	} else {
		w->wr.wr.rdma.remote_addr = raddr;
		w->wr.wr.rdma.rkey = rkey;
	}
}

/* Lengths whose 64-bit sum passes 2^32, and dma.length their 32-bit sum. */
static void wqe_overflow(struct rf *rf, struct rf_qp *q, struct rxe_send_wqe *w)
{
	uint32_t n = 2 + rf_below(rf, q->cap.max_send_sge - 1), i, sum = 0;

	for (i = 0; i < n; i++) {
		w->dma.sge[i] = w->dma.sge[0];
		w->dma.sge[i].length = 0x80000000u + rf_below(rf, 0x10000);
		sum += w->dma.sge[i].length;
	}
	w->dma.num_sge = n;
	w->dma.length = sum;
	w->dma.resid = sum;
}

/* Mutations that must make the kernel fail the WQE; @w is a valid SEND. */
static void wqe_break(struct rf *rf, struct sq_case *c, struct rxe_send_wqe *w,
		      unsigned int kind, const struct rf_case_keys *k)
{
	static const uint32_t ops[] = { 10, 11, 12, 13, 14, 15, 16, 31, 0x20, 0x21, 0xffffffff };
	const struct rf_mem *m = &c->v->dev->mem;
	struct rf_qp *q = c->v;

	switch (kind) {
	case 0:
		w->wr.opcode = ops[rf_below(rf, sizeof(ops) / sizeof(ops[0]))];
		break;
	case 1:
		w->dma.num_sge = rf_below(rf, 4) ? q->cap.max_send_sge + 1 + rf_below(rf, 40) :
						   0x80000000u | (uint32_t)rf_rand(rf);
		break;
	case 2:
		wqe_overflow(rf, q, w);
		break;
	case 3:
		w->wr.send_flags |= IBV_SEND_INLINE;
		w->dma.length = rf_below(rf, 2) ? q->cap.max_inline_data + 1 + rf_below(rf, 4096) :
						  0xffffffffu - rf_below(rf, 16);
		break;
	case 4:
		w->dma.sge[0].lkey = bogus_key(rf, k);
		break;
	case 5:	/* into the canaries before the MR, or past its end */
		if (rf_below(rf, 2))
			w->dma.sge[0].addr = (uintptr_t)m->mr->addr - 1 - rf_below(rf, 900);
		else
			w->dma.sge[0].addr = (uintptr_t)m->mr->addr + m->len - rf_below(rf, 8);
		w->dma.sge[0].length = 16;
		w->dma.length = w->dma.resid = 16;
		break;
	case 6:	/* a key of another PD */
		w->dma.sge[0].lkey = c->v->dev->mem2.mr->lkey;
		w->dma.sge[0].addr = (uintptr_t)c->v->dev->mem2.mr->addr;
		break;
	case 7:
		wqe_remote(w, c, rf_below(rf, 2) ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
			   0, bogus_key(rf, k));
		break;
	case 8:	/* into the peer's canaries */
		wqe_remote(w, c, rf_below(rf, 2) ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
			   rf_below(rf, 2) ? -8 : (int64_t)c->peer->dev->mem.len - 4,
			   c->peer->dev->mem.mr->rkey);
		w->dma.sge[0].length = 16;
		w->dma.length = w->dma.resid = 16;
		break;
	default:	/* misaligned atomic, or one of 4 bytes */
		wqe_remote(w, c, IBV_WR_ATOMIC_FETCH_AND_ADD, 4 + 8 * rf_below(rf, 8),
			   c->peer->dev->mem.mr->rkey);
		if (rf_below(rf, 2)) {
			wqe_remote(w, c, IBV_WR_ATOMIC_CMP_AND_SWP, 0, c->peer->dev->mem.mr->rkey);
			w->dma.length = w->dma.resid = w->dma.sge[0].length = 4;
		}
		break;
	}
}

/* Mutations whose outcome the tool leaves to the kernel. */
static void wqe_scramble(struct rf *rf, struct sq_case *c, struct rxe_send_wqe *w,
			 unsigned int kind)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	uint64_t id = w->wr.wr_id;

	switch (kind) {
	case 0:	/* a good remote operation */
		wqe_remote(w, c, ops[rf_below(rf, 5)], 8 * rf_below(rf, 64),
			   c->peer->dev->mem.mr->rkey);
		break;
	case 1:
		w->wr.send_flags = (uint32_t)rf_rand(rf);
		break;
	case 2:	/* LOCAL_INV, BIND_MW, SEND_WITH_INV of junk */
		rf_fill_random(rf, &w->wr.ex, 4);
		rf_fill_random(rf, &w->wr.wr, sizeof(w->wr.wr.mw));
		w->wr.opcode = 7 + rf_below(rf, 3);
		break;
	case 3:	/* random bytes, all but the wr_id */
		rf_fill_random(rf, w, rf_ring_elem(&c->v->sq));
		w->wr.wr_id = id;
		break;
	default:
		break;
	}
}

/* Write WQE @i of the case into its slot. */
static void sq_build(struct rf *rf, struct sq_case *c, uint32_t i,
		     const struct rf_case_keys *k)
{
	struct rxe_send_wqe *w = sq_slot(c->v, c->v->sq_prod + i);
	unsigned int r = rf_below(rf, 16);

	wqe_send(rf, c->v, w, c->base + i);
	c->bad[i] = r < 10;
	if (r < 10)
		wqe_break(rf, c, w, r, k);
	else
		wqe_scramble(rf, c, w, r - 10);
}

/* A fresh victim and peer; @ud for UD, else connected RC. */
static void case_open(struct rf *rf, struct sq_case *c, int ud, unsigned int rnr,
		      unsigned int recvs)
{
	enum ibv_qp_type t = ud ? IBV_QPT_UD : IBV_QPT_RC;
	int err;

	memset(c->bad, 0, sizeof(c->bad));
	c->v = rf_qp_create(rf, &rf->a, t, NULL, 256);
	c->peer = rf_qp_create(rf, &rf->b, t, NULL, 64);
	if (ud)
		err = rf_qp_ud_ready(c->v) || rf_qp_ud_ready(c->peer);
	else
		err = rf_qp_connect(c->v, c->peer, rnr) ||
		      rf_qp_connect(c->peer, c->v, 7);
	if (err)
		rf_die("cannot bring the case's QPs to RTS");
	rf_post_recvs(c->peer, recvs, RF_RECV_LEN);
	c->base = RF_WRID_TAG | (rf->cases++ << 8);
	c->n = 0;
}

static void case_close(struct sq_case *c)
{
	rf_qp_destroy(c->v);
	rf_qp_destroy(c->peer);
}

/* Everything the kernel must have left alone, after a case. */
static int case_memory(struct rf *rf, struct sq_case *c, int slots_too)
{
	int bad = 0;

	bad |= rf_ring_check(rf, &c->v->sq, "victim SQ", slots_too);
	bad |= rf_ring_check(rf, &c->v->cqr, "victim CQ", 0);
	bad |= rf_ring_check(rf, &c->peer->rq, "peer RQ", 1);
	bad |= rf_mem_check(rf, &c->v->dev->mem, "A's MR");
	bad |= rf_mem_check(rf, &c->v->dev->mem2, "A's second MR");
	bad |= rf_mem_check(rf, &c->peer->dev->mem, "B's MR");
	return bad;
}

/*
 * Every WQE posted completed once, in order, well formed; bad ones in
 * error; on RC no success after an error; the SQ is empty again.
 */
static int case_verdict(struct rf *rf, struct sq_case *c, int rc)
{
	struct ibv_wc wc[RF_MAX_WQE + 1];
	int got, i, failed_at = -1;

	got = rf_drain(rf, c->v, wc, (int)c->n, 300);
	if (got >= 0 && got < (int)c->n) {
		if (rf_qp_state(c->v, IBV_QPS_ERR))
			return rf_bad(rf, "cannot move the victim QP to ERR");
		i = rf_drain(rf, c->v, wc + got, (int)c->n - got, 3000);
		got = i < 0 ? i : got + i;
	}
	if (got != (int)c->n || rf_poll(c->v, wc + got, 1) != 0)
		return rf_bad(rf, "case %#llx: %d completions for %u WQEs",
			      (unsigned long long)c->base, got, c->n);
	for (i = 0; i < got; i++) {
		if (rf_sane_cqe(rf, &wc[i], c->v->qp->qp_num))
			return -1;
		if (wc[i].wr_id != c->base + (uint64_t)i)
			return rf_bad(rf, "completion %d has wr_id %#llx, not %#llx", i,
				      (unsigned long long)wc[i].wr_id,
				      (unsigned long long)(c->base + i));
		if (c->bad[i] && wc[i].status == IBV_WC_SUCCESS)
			return rf_bad(rf, "bad WQE %d (opcode %u, num_sge %u, length %u) succeeded",
				      i, sq_slot(c->v, c->v->sq_prod - c->n + i)->wr.opcode,
				      sq_slot(c->v, c->v->sq_prod - c->n + i)->dma.num_sge,
				      sq_slot(c->v, c->v->sq_prod - c->n + i)->dma.length);
		if (rc && failed_at >= 0 && wc[i].status == IBV_WC_SUCCESS)
			return rf_bad(rf, "WQE %d succeeded after WQE %d failed", i, failed_at);
		if (wc[i].status != IBV_WC_SUCCESS && failed_at < 0)
			failed_at = i;
	}
	if ((rf_ring_load(&c->v->sq, RF_HDR_CONS) ^ c->v->sq_prod) & c->v->sq.mask)
		return rf_bad(rf, "SQ consumer index %u, producer %u after every completion",
			      rf_ring_load(&c->v->sq, RF_HDR_CONS), c->v->sq_prod);
	return case_memory(rf, c, 1);
}

/* Post @n WQEs built by sq_build() in up to three doorbells. */
static int case_post(struct rf *rf, struct sq_case *c, uint32_t n)
{
	struct rf_case_keys k;
	uint32_t i, done = 0, step;
	int err;

	case_keys(c, &k);
	for (i = 0; i < n; i++)
		sq_build(rf, c, i, &k);
	rf_ring_snap(&c->v->sq);
	while (done < n) {
		step = 1 + rf_below(rf, n - done);
		done += step;
		c->v->sq_prod += step;
		c->n += step;
		rf_ring_store(&c->v->sq, RF_HDR_PROD, c->v->sq_prod & c->v->sq.mask);
		err = rf_doorbell(rf, c->v);
		if (err)
			return rf_bad(rf, "doorbell in RTS: %s", strerror(err));
	}
	return 0;
}

/* sq-rc: valid-looking RC WQEs with bad fields, random bytes. */
static void fam_sq_rc(struct rf *rf)
{
	unsigned int before = rf->failed, i;
	struct sq_case c;

	for (i = 0; i < rf->iters; i++) {
		case_open(rf, &c, 0, 0, RF_PEER_RECVS);
		if (!case_post(rf, &c, 1 + rf_below(rf, c.v->cap.max_send_wr)))
			case_verdict(rf, &c, 1);
		case_close(&c);
		if (rf->failed != before)
			break;
	}
	rf_result(rf, "sq-rc-wqe", before, i);
}

/* sq-header: the kernel uses its own geometry, not the header's. */
static void fam_sq_header(struct rf *rf)
{
	unsigned int before = rf->failed, i, j;
	struct sq_case c;
	struct ibv_wc wc[RF_MAX_WQE];
	uint32_t *hdr;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		case_open(rf, &c, 0, 0, RF_PEER_RECVS);
		c.n = 1 + rf_below(rf, c.v->cap.max_send_wr);
		for (j = 0; j < c.n; j++)
			wqe_send(rf, c.v, sq_slot(c.v, c.v->sq_prod + j), c.base + j);
		rf_ring_snap(&c.v->sq);
		hdr = (uint32_t *)c.v->sq.base;
		hdr[0] = rf_below(rf, 2) ? (uint32_t)rf_rand(rf) : 31;
		hdr[1] = rf_below(rf, 2) ? (uint32_t)rf_rand(rf) : 0xffffffff;
		c.v->sq_prod += c.n;
		rf_ring_store(&c.v->sq, RF_HDR_PROD, c.v->sq_prod & c.v->sq.mask);
		if (rf_doorbell(rf, c.v))
			rf_bad(rf, "doorbell in RTS failed");
		if (rf_drain(rf, c.v, wc, (int)c.n, 3000) != (int)c.n)
			rf_bad(rf, "valid SENDs under a scribbled header did not all complete");
		for (j = 0; j < c.n && rf->failed == before; j++)
			if (wc[j].status != IBV_WC_SUCCESS || wc[j].wr_id != c.base + j)
				rf_bad(rf, "valid SEND %u under a scribbled header: status %d wr_id %#llx",
				       j, wc[j].status, (unsigned long long)wc[j].wr_id);
		hdr[0] = c.v->sq.log2;
		hdr[1] = c.v->sq.mask;
		case_memory(rf, &c, 1);
		case_close(&c);
	}
	rf_result(rf, "sq-header", before, i);
}

/* The AH number librxe wrote into the slot for @ah, posted on @q. */
static uint32_t probe_ah(struct rf *rf, struct sq_case *c, struct ibv_ah *ah, int expect_ok)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->v->dev->mem.mr->addr, .length = 8,
		.lkey = c->v->dev->mem.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = c->base + c->n, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = c->peer->qp->qp_num, .remote_qkey = RF_QKEY },
	}, *bad;
	struct ibv_wc wc;
	uint32_t num;

	if (ibv_post_send(c->v->qp, &wr, &bad))
		rf_die("ibv_post_send (UD probe): %s", strerror(errno));
	num = sq_slot(c->v, c->v->sq_prod)->wr.wr.ud.ah_num;
	c->v->sq_prod++;
	c->bad[c->n++] = !expect_ok;
	if (rf_drain(rf, c->v, &wc, 1, 3000) != 1)
		rf_bad(rf, "UD probe send did not complete");
	else if ((wc.status == IBV_WC_SUCCESS) != expect_ok)
		rf_bad(rf, "UD send with the AH of %s PD: status %d", expect_ok ? "its" : "another",
		       wc.status);
	return num;
}

static void ud_build(struct rf *rf, struct sq_case *c, uint32_t i)
{
	struct rxe_send_wqe *w = sq_slot(c->v, c->v->sq_prod + i);
	unsigned int r = rf_below(rf, 8);

	wqe_send(rf, c->v, w, c->base + c->n + i);
	w->wr.wr.ud.remote_qpn = c->peer->qp->qp_num;
	w->wr.wr.ud.remote_qkey = RF_QKEY;
	w->wr.wr.ud.ah_num = c->ah_ok;
	c->bad[c->n + i] = r < 5;
	switch (r) {
	case 0: w->wr.wr.ud.ah_num = 0; break;
	case 1: w->wr.wr.ud.ah_num = c->ah_foreign; break;
	case 2: w->wr.wr.ud.ah_num = c->ah_gone; break;
	case 3: w->wr.wr.ud.ah_num = 0x10000000u | (uint32_t)rf_rand(rf); break;
	case 4:	/* longer than any port MTU */
		w->dma.sge[0].addr = (uintptr_t)c->v->dev->mem.mr->addr;
		w->dma.length = w->dma.resid = w->dma.sge[0].length = 8192 + rf_below(rf, 4096);
		break;
	case 5: w->wr.wr.ud.remote_qpn = (uint32_t)rf_rand(rf); break;
	case 6: w->wr.wr.ud.remote_qkey = (uint32_t)rf_rand(rf); break;
	default: break;
	}
}

/* ud-ah: UD sends to AH numbers that are 0, gone, foreign or random. */
static void fam_ud(struct rf *rf)
{
	unsigned int before = rf->failed, i, j, n;
	struct ibv_ah *ok, *foreign, *gone;
	struct sq_case c;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		case_open(rf, &c, 1, 0, RF_PEER_RECVS);
		ok = rf_ah_create(&rf->a, rf->a.pd, &rf->b);
		foreign = rf_ah_create(&rf->a, rf->a.pd2, &rf->b);
		gone = rf_ah_create(&rf->a, rf->a.pd, &rf->b);
		c.ah_gone = probe_ah(rf, &c, gone, 1);
		ibv_destroy_ah(gone);
		c.ah_ok = probe_ah(rf, &c, ok, 1);
		c.ah_foreign = probe_ah(rf, &c, foreign, 0);
		/* the foreign AH may have put the prober in ERR: a fresh victim */
		rf_qp_destroy(c.v);
		c.v = rf_qp_create(rf, &rf->a, IBV_QPT_UD, NULL, 256);
		if (rf_qp_ud_ready(c.v))
			rf_die("cannot bring a UD QP to RTS");
		c.base += 0x80;
		c.n = 0;
		n = 1 + rf_below(rf, c.v->cap.max_send_wr);
		for (j = 0; j < n; j++)
			ud_build(rf, &c, j);
		rf_ring_snap(&c.v->sq);
		c.v->sq_prod += n;
		c.n = n;
		rf_ring_store(&c.v->sq, RF_HDR_PROD, c.v->sq_prod & c.v->sq.mask);
		if (rf_doorbell(rf, c.v))
			rf_bad(rf, "UD doorbell in RTS failed");
		case_verdict(rf, &c, 0);
		ibv_destroy_ah(ok);
		ibv_destroy_ah(foreign);
		case_close(&c);
	}
	rf_result(rf, "sq-ud-ah", before, i);
}

/* ---- producer index games ------------------------------------------ */

/* Completions of a case whose producer index was abused: shape only. */
static int case_settle(struct rf *rf, struct sq_case *c, int in_reset)
{
	struct ibv_wc wc[32];
	int n, i, rounds = 0;

	/* RESET cannot go to ERR: nothing may complete there anyway */
	if (!in_reset && rf_qp_state(c->v, IBV_QPS_ERR))
		return rf_bad(rf, "cannot move the victim QP to ERR");
	rf_doorbell(rf, c->v);
	do {
		n = rf_drain(rf, c->v, wc, 32, 200);
		for (i = 0; i < n; i++)
			if (rf_sane_cqe(rf, &wc[i], c->v->qp->qp_num) ||
			    (wc[i].wr_id & ~0xffULL) != c->base)
				return rf_bad(rf, "completion for wr_id %#llx, which case %#llx never wrote",
					      (unsigned long long)wc[i].wr_id,
					      (unsigned long long)c->base);
	} while (n > 0 && ++rounds < 64);
	if (n > 0)
		return rf_bad(rf, "the flushed victim QP keeps completing");
	if (rf_ring_load(&c->v->sq, RF_HDR_CONS) > c->v->sq.mask)
		return rf_bad(rf, "SQ consumer index %u beyond the ring",
			      rf_ring_load(&c->v->sq, RF_HDR_CONS));
	return case_memory(rf, c, 1);
}

/* Fill every slot: valid SENDs (some slow: no receive waits) and bad ones. */
static void fill_all(struct rf *rf, struct sq_case *c)
{
	struct rf_case_keys k;
	uint32_t i, save = c->v->sq_prod;

	case_keys(c, &k);
	c->v->sq_prod = 0;
	for (i = 0; i <= c->v->sq.mask; i++)
		sq_build(rf, c, i, &k);
	c->v->sq_prod = save;
	rf_ring_snap(&c->v->sq);
}

/*
 * sq-prod: some WQEs in flight (SENDs stuck in RNR retries), then the
 * producer index moved backwards (audit item 17), far beyond the ring,
 * and back and forth, with doorbells after each move.
 */
static void fam_sq_prod(struct rf *rf)
{
	unsigned int before = rf->failed, i, j;
	struct sq_case c;
	uint32_t cons;
	int err;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		case_open(rf, &c, 0, 7, 0);	/* no receives: SENDs wait in RNR */
		fill_all(rf, &c);
		/*
		 * Every other case only valid SENDs, none of which ends the
		 * claims: a producer index moved back behind the requester's
		 * head lets it claim round the ring, past the consumer.
		 */
		for (j = 0; j <= (i & 1 ? c.v->sq.mask : 3); j++)
			wqe_send(rf, c.v, sq_slot(c.v, j), c.base + j);
		rf_ring_snap(&c.v->sq);
		rf_ring_store(&c.v->sq, RF_HDR_PROD, i & 1 ? c.v->sq.mask : 4);
		rf_doorbell(rf, c.v);
		for (j = 0; j < 8; j++) {
			cons = rf_ring_load(&c.v->sq, RF_HDR_CONS);
			switch (rf_below(rf, 4)) {
			case 0: c.v->sq_prod = cons - 1 - rf_below(rf, 4); break;
			case 1: c.v->sq_prod = (uint32_t)rf_rand(rf); break;
			case 2: c.v->sq_prod = cons; break;
			default: c.v->sq_prod = cons + rf_below(rf, c.v->sq.mask + 1); break;
			}
			rf_ring_store(&c.v->sq, RF_HDR_PROD, c.v->sq_prod);
			err = rf_doorbell(rf, c.v);
			if (err)	/* RTS or, after a bad WQE, ERR: both ring */
				rf_bad(rf, "doorbell after the producer index moved: %s",
				       strerror(err));
		}
		case_settle(rf, &c, 0);
		case_close(&c);
	}
	rf_result(rf, "sq-prod", before, i);
}

/* One raced run: doorbells in @st (RESET/INIT/RTR/RTS/ERR) while a thread scribbles. */
static void race_once(struct rf *rf, struct sq_case *c, enum ibv_qp_state st)
{
	struct rf_racer r = { .ring = &c->v->sq, .off = RF_HDR_PROD };
	int expect = st == IBV_QPS_RESET ? EINVAL : 0;
	struct ibv_wc wc[32];
	unsigned int j;
	int err;

	if (st == IBV_QPS_ERR || st == IBV_QPS_RESET)
		rf_qp_state(c->v, st);
	rf_race_start(rf, &r);
	for (j = 0; j < 200; j++) {
		err = rf_doorbell(rf, c->v);
		if (err != expect) {
			rf_bad(rf, "doorbell in state %d under a racing producer: %s", st,
			       strerror(err));
			break;
		}
		while (rf_poll(c->v, wc, 32) > 0)
			;
		if (st == IBV_QPS_RTS && j == 150)
			rf_qp_state(c->v, IBV_QPS_ERR);	/* flush while it races */
	}
	rf_race_stop(&r);
	rf_log(rf, "race in state %d: %lu producer writes, %u doorbells", st, r.writes, j);
}

/* sq-race: the producer index raced by a second thread while doorbells ring. */
static void fam_sq_race(struct rf *rf)
{
	static const enum ibv_qp_state states[] = { IBV_QPS_RTS, IBV_QPS_ERR, IBV_QPS_RESET };
	unsigned int before = rf->failed, i;
	struct sq_case c;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		case_open(rf, &c, 0, 0, RF_PEER_RECVS);
		fill_all(rf, &c);
		race_once(rf, &c, states[i % 3]);
		case_settle(rf, &c, states[i % 3] == IBV_QPS_RESET);
		case_close(&c);
	}
	rf_result(rf, "sq-race", before, i);
}

/*
 * sq-states: a doorbell in RESET, INIT or RTR fails with EINVAL and the
 * WQEs it covered are dropped: they never run once the QP reaches RTS.
 */
static void fam_sq_states(struct rf *rf)
{
	unsigned int before = rf->failed, i, j;
	struct ibv_wc wc[RF_MAX_WQE];
	struct sq_case c;
	int err;

	for (i = 0; i < rf->iters && rf->failed == before; i++) {
		c.v = rf_qp_create(rf, &rf->a, IBV_QPT_RC, NULL, 256);
		c.peer = rf_qp_create(rf, &rf->b, IBV_QPT_RC, NULL, 64);
		c.base = RF_WRID_TAG | (rf->cases++ << 8);
		c.n = 1 + rf_below(rf, c.v->cap.max_send_wr);
		for (j = 0; j < c.n; j++)
			wqe_send(rf, c.v, sq_slot(c.v, j), c.base + j);
		rf_ring_snap(&c.v->sq);
		c.v->sq_prod = c.n;
		rf_ring_store(&c.v->sq, RF_HDR_PROD, c.n);
		err = rf_doorbell(rf, c.v);
		if (err != EINVAL)
			rf_bad(rf, "doorbell in RESET: %s, not EINVAL", strerror(err));
		if (rf_ring_load(&c.v->sq, RF_HDR_CONS) != c.n)
			rf_bad(rf, "WQEs of a refused doorbell stay queued (consumer %u, producer %u)",
			       rf_ring_load(&c.v->sq, RF_HDR_CONS), c.n);
		if (rf_qp_connect(c.v, c.peer, 0) || rf_qp_connect(c.peer, c.v, 7))
			rf_die("cannot bring the case's QPs to RTS");
		rf_post_recvs(c.peer, RF_PEER_RECVS, RF_RECV_LEN);
		rf_doorbell(rf, c.v);
		if (rf_drain(rf, c.v, wc, 1, 300) != 0)
			rf_bad(rf, "a WQE of a refused doorbell ran in RTS (wr_id %#llx)",
			       (unsigned long long)wc[0].wr_id);
		case_memory(rf, &c, 1);
		case_close(&c);
	}
	rf_result(rf, "sq-states", before, i);
}

void rf_sq_families(struct rf *rf)
{
	if (rf_family_wanted(rf, "sq-rc-wqe"))
		fam_sq_rc(rf);
	if (rf_family_wanted(rf, "sq-header"))
		fam_sq_header(rf);
	if (rf_family_wanted(rf, "sq-ud-ah"))
		fam_ud(rf);
	if (rf_family_wanted(rf, "sq-states"))
		fam_sq_states(rf);
	if (rf_family_wanted(rf, "sq-prod"))
		fam_sq_prod(rf);
	if (rf_family_wanted(rf, "sq-race"))
		fam_sq_race(rf);
}
