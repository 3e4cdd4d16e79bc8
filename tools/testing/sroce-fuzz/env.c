// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ringfuzz: devices, canary-guarded memory, QPs, SRQs and AHs made with
 * libibverbs, and the rings found behind them.
 *
 * Finding the rings. librxe maps every ring exactly once, with one
 * mmap() of the uverbs command file per queue (user-abi.md 2.2); the
 * offsets are cookies in its private objects. So the tool reads
 * /proc/self/maps before and after each create and takes the new
 * mappings of /dev/infiniband/uverbs*: one for a CQ or an SRQ, two for
 * a QP without an SRQ, one with. Each is checked to be a ring (the
 * header's geometry must fill the mapping to within a page), and the
 * two of a QP are told apart by their slot counts, which the tool makes
 * differ (15 send, 31 receive WRs). This depends only on the ABI, not
 * on librxe's structures.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "fuzz_util.h"
#include "ringfuzz.h"

#define RF_MEM_TOTAL	(64 * 1024)
#define RF_MEM_OFF	1000	/* MR start: canaries before it, same page */
#define RF_MAX_MAPS	256
#define RF_SQ_WR	15
#define RF_RQ_WR	31

struct rf_span {
	uintptr_t start, end;
};

/* ---- memory -------------------------------------------------------- */

static void rf_mem_init(struct rf_mem *m, struct ibv_pd *pd)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	m->total = RF_MEM_TOTAL;
	m->off = RF_MEM_OFF;
	m->len = m->total - 2 * RF_MEM_OFF;
	if (posix_memalign((void **)&m->buf, 4096, m->total))
		rf_die("out of memory");
	memset(m->buf, RF_CANARY, m->total);
	memset(m->buf + m->off, 0, m->len);
	m->mr = ibv_reg_mr(pd, m->buf + m->off, m->len, access);
	if (!m->mr)
		rf_die("ibv_reg_mr: %s", strerror(errno));
}

/* The canaries on both sides of the MR are intact. */
int rf_mem_check(struct rf *rf, const struct rf_mem *m, const char *what)
{
	size_t i;

	for (i = 0; i < m->total; i++) {
		if (i == m->off)
			i += m->len;
		if (i < m->total && m->buf[i] != RF_CANARY)
			return rf_bad(rf, "%s: byte %zd from the MR start, outside the MR, changed to 0x%02x",
				      what, (ssize_t)i - (ssize_t)m->off, m->buf[i]);
	}
	return 0;
}

void rf_open_dev(struct rf_dev *d)
{
	int fl;

	d->ctx = fuzz_open_dev(d->name);
	if (!d->ctx)
		rf_die("cannot open RDMA device %s: %s", d->name, strerror(errno));
	d->pd = ibv_alloc_pd(d->ctx);
	d->pd2 = ibv_alloc_pd(d->ctx);
	if (!d->pd || !d->pd2)
		rf_die("%s: ibv_alloc_pd: %s", d->name, strerror(errno));
	if (ibv_query_gid(d->ctx, 1, d->gid_index, &d->gid))
		rf_die("%s: GID %d: %s", d->name, d->gid_index, strerror(errno));
	rf_mem_init(&d->mem, d->pd);
	rf_mem_init(&d->mem2, d->pd2);
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		rf_die("fcntl: %s", strerror(errno));
}

void rf_close_dev(struct rf_dev *d)
{
	ibv_dereg_mr(d->mem.mr);
	ibv_dereg_mr(d->mem2.mr);
	free(d->mem.buf);
	free(d->mem2.buf);
	ibv_dealloc_pd(d->pd);
	ibv_dealloc_pd(d->pd2);
	ibv_close_device(d->ctx);
}

/* Count the asynchronous events waiting (CQ_ERR, QP_FATAL, ...). */
void rf_async_drain(struct rf_dev *d)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(d->ctx, &ev)) {
		if ((unsigned int)ev.event_type < 32)
			d->async_events[ev.event_type]++;
		ibv_ack_async_event(&ev);
	}
}

/* ---- rings ----------------------------------------------------------- */

static int rf_maps(struct rf_span *out, int max)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		rf_die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (!strstr(line, "/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &s, &e) != 2 || n == max)
			rf_die("cannot parse /proc/self/maps: %s", line);
		out[n].start = s;
		out[n++].end = e;
	}
	fclose(f);
	return n;
}

/* The mappings in @after that are not in @before. */
static int rf_maps_new(const struct rf_span *before, int nb,
		       struct rf_span *after, int na)
{
	int i, j, n = 0;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (before[j].start == after[i].start)
				break;
		if (j == nb)
			after[n++] = after[i];
	}
	return n;
}

size_t rf_ring_elem(const struct rf_ring *r)
{
	return (size_t)1 << r->log2;
}

static size_t rf_ring_data(const struct rf_ring *r)
{
	return ((size_t)r->mask + 1) << r->log2;
}

uint32_t rf_ring_load(const struct rf_ring *r, unsigned int off)
{
	return __atomic_load_n((uint32_t *)(r->base + off), __ATOMIC_ACQUIRE);
}

void rf_ring_store(struct rf_ring *r, unsigned int off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(r->base + off), v, __ATOMIC_RELEASE);
}

void *rf_ring_slot(const struct rf_ring *r, uint32_t idx)
{
	return r->base + RF_HDR_SIZE + ((size_t)(idx & r->mask) << r->log2);
}

/* Take a mapping as a ring: its header's geometry must fill it. */
static void rf_ring_from(struct rf_ring *r, const struct rf_span *s)
{
	const uint32_t *hdr = (const uint32_t *)s->start;

	r->base = (uint8_t *)s->start;
	r->size = s->end - s->start;
	r->log2 = hdr[0];
	r->mask = hdr[1];
	if (r->log2 < 5 || r->log2 > 20 || !r->mask || (r->mask & (r->mask + 1)) ||
	    r->mask > (1u << 24))
		rf_die("mapping at %p: no ring header (log2 %u, mask %#x)",
		       (void *)r->base, r->log2, r->mask);
	if (RF_HDR_SIZE + rf_ring_data(r) > r->size ||
	    RF_HDR_SIZE + rf_ring_data(r) + 4096 <= r->size)
		rf_die("mapping at %p of %zu bytes: ring of %u slots of %zu does not fill it",
		       (void *)r->base, r->size, r->mask + 1, rf_ring_elem(r));
	/* the header's pads and the tail after the slots are the kernel's to leave alone */
	memset(r->base + 8, RF_CANARY, RF_HDR_PROD - 8);
	memset(r->base + RF_HDR_PROD + 4, RF_CANARY, RF_HDR_CONS - RF_HDR_PROD - 4);
	memset(r->base + RF_HDR_CONS + 4, RF_CANARY, RF_HDR_SIZE - RF_HDR_CONS - 4);
	memset(r->base + RF_HDR_SIZE + rf_ring_data(r), RF_CANARY,
	       r->size - RF_HDR_SIZE - rf_ring_data(r));
	r->shadow = malloc(rf_ring_data(r));
	if (!r->shadow)
		rf_die("out of memory");
	rf_ring_snap(r);
}

/* Remember the slots as they are now: the kernel must not change them. */
void rf_ring_snap(struct rf_ring *r)
{
	memcpy(r->shadow, r->base + RF_HDR_SIZE, rf_ring_data(r));
}

static int rf_canary_run(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != RF_CANARY)
			return (int)i;
	return -1;
}

/*
 * What the kernel must never write in a ring: the header's geometry and
 * pads, the tail after the slots and, with @slots_too (work queues),
 * the slots user space wrote.
 */
int rf_ring_check(struct rf *rf, const struct rf_ring *r, const char *what,
		  int slots_too)
{
	static const unsigned int pads[][2] = {
		{ 8, RF_HDR_PROD }, { RF_HDR_PROD + 4, RF_HDR_CONS },
		{ RF_HDR_CONS + 4, RF_HDR_SIZE },
	};
	const uint32_t *hdr = (const uint32_t *)r->base;
	size_t data = rf_ring_data(r), i;
	int at;

	if (hdr[0] != r->log2 || hdr[1] != r->mask)
		return rf_bad(rf, "%s: ring geometry changed to log2 %u mask %#x",
			      what, hdr[0], hdr[1]);
	for (i = 0; i < 3; i++) {
		at = rf_canary_run(r->base + pads[i][0], pads[i][1] - pads[i][0]);
		if (at >= 0)
			return rf_bad(rf, "%s: header byte %u written", what,
				      pads[i][0] + at);
	}
	at = rf_canary_run(r->base + RF_HDR_SIZE + data, r->size - RF_HDR_SIZE - data);
	if (at >= 0)
		return rf_bad(rf, "%s: byte %d after the last slot written", what, at);
	if (slots_too && memcmp(r->shadow, r->base + RF_HDR_SIZE, data)) {
		for (i = 0; i < data && r->shadow[i] == r->base[RF_HDR_SIZE + i]; i++)
			;
		return rf_bad(rf, "%s: the kernel wrote slot %zu (byte %zu)", what,
			      i >> r->log2, i & (rf_ring_elem(r) - 1));
	}
	return 0;
}

/* ---- objects --------------------------------------------------------- */

static struct ibv_cq *rf_cq_create(struct rf_dev *d, unsigned int cqe,
				   struct rf_ring *ring)
{
	struct rf_span before[RF_MAX_MAPS], after[RF_MAX_MAPS];
	int nb = rf_maps(before, RF_MAX_MAPS), na;
	struct ibv_cq *cq = ibv_create_cq(d->ctx, (int)cqe, NULL, NULL, 0);

	if (!cq)
		rf_die("%s: ibv_create_cq: %s", d->name, strerror(errno));
	na = rf_maps_new(before, nb, after, rf_maps(after, RF_MAX_MAPS));
	if (na != 1)
		rf_die("%s: ibv_create_cq made %d uverbs mappings, not 1", d->name, na);
	rf_ring_from(ring, after);
	if (ring->mask < (uint32_t)cq->cqe)
		rf_die("%s: CQ ring of %u slots for %d CQEs", d->name, ring->mask + 1, cq->cqe);
	return cq;
}

/* Tell the SQ and RQ mappings of a new QP apart by their slot counts. */
static void rf_qp_rings(struct rf_qp *q, struct rf_span *maps, int n)
{
	struct rf_ring r;
	int i;

	if (n != (q->rq.base ? 2 : 1))
		rf_die("ibv_create_qp made %d uverbs mappings", n);
	q->rq.base = NULL;
	for (i = 0; i < n; i++) {
		rf_ring_from(&r, &maps[i]);
		if (r.mask == q->cap.max_send_wr && !q->sq.base)
			q->sq = r;
		else if (r.mask == q->cap.max_recv_wr && !q->rq.base)
			q->rq = r;
		else
			rf_die("QP ring of %u slots matches neither %u send nor %u receive WRs",
			       r.mask + 1, q->cap.max_send_wr, q->cap.max_recv_wr);
	}
	if (!q->sq.base)
		rf_die("no send queue ring found");
}

struct rf_qp *rf_qp_create(struct rf *rf, struct rf_dev *d,
			   enum ibv_qp_type type, struct rf_srq *srq,
			   unsigned int cqe)
{
	struct rf_span before[RF_MAX_MAPS], after[RF_MAX_MAPS];
	struct ibv_qp_init_attr qia = {
		.qp_type = type,
		.sq_sig_all = 1,
		.srq = srq ? srq->srq : NULL,
		.cap = {
			.max_send_wr = RF_SQ_WR, .max_recv_wr = srq ? 0 : RF_RQ_WR,
			.max_send_sge = 4, .max_recv_sge = srq ? 0 : 4,
			.max_inline_data = 64,
		},
	};
	struct rf_qp *q = calloc(1, sizeof(*q));
	int nb, na;

	if (!q)
		rf_die("out of memory");
	q->dev = d;
	q->cq = rf_cq_create(d, cqe, &q->cqr);
	qia.send_cq = q->cq;
	qia.recv_cq = q->cq;
	nb = rf_maps(before, RF_MAX_MAPS);
	q->qp = ibv_create_qp(d->pd, &qia);
	if (!q->qp)
		rf_die("%s: ibv_create_qp: %s", d->name, strerror(errno));
	q->cap = qia.cap;
	na = rf_maps_new(before, nb, after, rf_maps(after, RF_MAX_MAPS));
	q->rq.base = srq ? NULL : (uint8_t *)1;	/* expect an RQ mapping */
	rf_qp_rings(q, after, na);
	q->psn = rf_below(rf, 1u << 24);
	return q;
}

void rf_qp_destroy(struct rf_qp *q)
{
	if (ibv_destroy_qp(q->qp))
		rf_die("ibv_destroy_qp: %s", strerror(errno));
	if (ibv_destroy_cq(q->cq))
		rf_die("ibv_destroy_cq: %s", strerror(errno));
	free(q->sq.shadow);
	free(q->rq.shadow);
	free(q->cqr.shadow);
	free(q);
}

int rf_qp_state(struct rf_qp *q, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
}

static int rf_qp_init(struct rf_qp *q)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (q->qp->qp_type == IBV_QPT_UD)
		mask |= IBV_QP_QKEY;
	else
		mask |= IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(q->qp, &a, mask);
}

/* RESET -> INIT -> RTR -> RTS of an RC QP with @peer. */
int rf_qp_connect(struct rf_qp *q, const struct rf_qp *peer,
		  unsigned int rnr_retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num, .rq_psn = peer->psn,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 14,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = {
				.dgid = peer->dev->gid, .hop_limit = 64,
				.sgid_index = (uint8_t)q->dev->gid_index,
			},
		},
	};
	int err = rf_qp_init(q);

	if (!err)
		err = ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 2;
	a.rnr_retry = (uint8_t)rnr_retry;
	a.sq_psn = q->psn;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RESET -> INIT -> RTR -> RTS of a UD QP. */
int rf_qp_ud_ready(struct rf_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int err = rf_qp_init(q);

	if (!err)
		err = ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->psn;
	return ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

struct rf_srq *rf_srq_create(struct rf *rf, struct rf_dev *d,
			     unsigned int wr, unsigned int sge)
{
	struct rf_span before[RF_MAX_MAPS], after[RF_MAX_MAPS];
	struct ibv_srq_init_attr sia = {
		.attr = { .max_wr = wr, .max_sge = sge },
	};
	struct rf_srq *s = calloc(1, sizeof(*s));
	int nb = rf_maps(before, RF_MAX_MAPS), na;

	(void)rf;
	if (!s)
		rf_die("out of memory");
	s->srq = ibv_create_srq(d->pd, &sia);
	if (!s->srq)
		rf_die("%s: ibv_create_srq: %s", d->name, strerror(errno));
	na = rf_maps_new(before, nb, after, rf_maps(after, RF_MAX_MAPS));
	if (na != 1)
		rf_die("%s: ibv_create_srq made %d uverbs mappings, not 1", d->name, na);
	rf_ring_from(&s->ring, after);
	s->max_sge = sia.attr.max_sge;
	if (s->ring.mask < sia.attr.max_wr ||
	    rf_ring_elem(&s->ring) < RF_RECV_FIXED + 16 * s->max_sge)
		rf_die("%s: SRQ ring of %u slots of %zu for %u WRs of %u SGEs",
		       d->name, s->ring.mask + 1, rf_ring_elem(&s->ring),
		       sia.attr.max_wr, s->max_sge);
	return s;
}

void rf_srq_destroy(struct rf_srq *s)
{
	if (ibv_destroy_srq(s->srq))
		rf_die("ibv_destroy_srq: %s", strerror(errno));
	free(s->ring.shadow);
	free(s);
}

struct ibv_ah *rf_ah_create(struct rf_dev *from, struct ibv_pd *pd,
			    const struct rf_dev *to)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = {
			.dgid = to->gid, .hop_limit = 64,
			.sgid_index = (uint8_t)from->gid_index,
		},
	};
	struct ibv_ah *ah = ibv_create_ah(pd, &a);

	if (!ah)
		rf_die("%s: ibv_create_ah: %s", from->name, strerror(errno));
	return ah;
}

/* @n receives of @len bytes each in @p's MR, through librxe. */
void rf_post_recvs(struct rf_qp *p, unsigned int n, uint32_t len)
{
	const struct rf_mem *m = &p->dev->mem;
	struct ibv_sge sge = { .length = len, .lkey = m->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sge.addr = (uintptr_t)m->mr->addr + (i % 48) * len;
		wr.wr_id = i;
		if (ibv_post_recv(p->qp, &wr, &bad))
			rf_die("ibv_post_recv on the peer: %s", strerror(errno));
	}
	rf_ring_snap(&p->rq);
}

/* ---- racing an index ------------------------------------------------- */

static void *racer_main(void *arg)
{
	struct rf_racer *r = arg;
	uint32_t other, v;

	while (!r->stop) {
		r->rng ^= r->rng << 13;
		r->rng ^= r->rng >> 7;
		r->rng ^= r->rng << 17;
		other = rf_ring_load(r->ring, r->off == RF_HDR_PROD ? RF_HDR_CONS : RF_HDR_PROD);
		switch (r->rng & 7) {
		case 0: v = other - 1; break;		/* full */
		case 1: v = other; break;		/* empty */
		case 2: v = other + 1; break;
		case 3: v = (uint32_t)(r->rng >> 32); break;	/* beyond the ring */
		case 4: v = rf_ring_load(r->ring, r->off) - 1; break;	/* backwards */
		default: v = other + (uint32_t)((r->rng >> 8) & r->ring->mask); break;
		}
		rf_ring_store(r->ring, r->off, v);
		r->writes++;
	}
	return NULL;
}

void rf_race_start(struct rf *rf, struct rf_racer *r)
{
	r->stop = 0;
	r->rng = rf_rand(rf) | 1;
	r->writes = 0;
	if (pthread_create(&r->thread, NULL, racer_main, r))
		rf_die("pthread_create");
}

void rf_race_stop(struct rf_racer *r)
{
	r->stop = 1;
	pthread_join(r->thread, NULL);
}

/* ---- doorbell and completions ---------------------------------------- */

/*
 * librxe's doorbell: IB_USER_VERBS_CMD_POST_SEND with no work request,
 * written on the command file (user-abi.md 2.7). Returns 0 or errno.
 */
int rf_doorbell(struct rf *rf, struct rf_qp *q)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req;
	struct ib_uverbs_post_send_resp resp = { 0 };
	double t0 = rf_now();
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = q->qp->handle;
	req.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	n = write(q->qp->context->cmd_fd, &req, sizeof(req));
	rf->doorbells++;
	if (rf_now() - t0 > 5.0)
		rf_bad(rf, "a doorbell took %.1f s", rf_now() - t0);
	if (n == (ssize_t)sizeof(req))
		return 0;
	return n < 0 ? errno : EIO;
}

int rf_poll(struct rf_qp *q, struct ibv_wc *wc, int max)
{
	int n = ibv_poll_cq(q->cq, max, wc);

	if (n > 0)
		q->cqes += (unsigned int)n;
	return n;
}

/*
 * Poll until @want completions arrived, or none came for @quiet_ms, or
 * rf->wait_ms passed. Returns how many arrived, or -1 if polling failed.
 */
int rf_drain(struct rf *rf, struct rf_qp *q, struct ibv_wc *wc, int want,
	     unsigned int quiet_ms)
{
	double start = rf_now(), last = start;
	int got = 0, n;

	while (got < want) {
		n = rf_poll(q, wc + got, want - got);
		if (n < 0)
			return rf_bad(rf, "ibv_poll_cq: %d", n);
		if (n) {
			got += n;
			last = rf_now();
			continue;
		}
		if ((rf_now() - last) * 1000 > quiet_ms ||
		    (rf_now() - start) * 1000 > rf->wait_ms)
			break;
		usleep(200);
	}
	rf->cqes += (unsigned int)got;
	return got;
}
