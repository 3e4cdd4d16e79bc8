/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ringfuzz: writes into the rxe-ABI rings of sroce what librxe never
 * would, and checks what the kernel does with it. Shared state and the
 * helpers every part of the tool uses.
 *
 *   ringfuzz.c  options, the phases, results, the well-behaved check
 *   env.c       devices, memory with canaries, CQs, QPs, SRQs, AHs,
 *               finding the ring mappings, doorbell, completions
 *   sqfuzz.c    send queue cases (RC and UD)
 *   rqfuzz.c    receive queue, SRQ and CQ cases
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef RINGFUZZ_H
#define RINGFUZZ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>

/* Offsets of struct rxe_queue_buf (user-abi.md 2.3). */
#define RF_HDR_PROD	128
#define RF_HDR_CONS	256
#define RF_HDR_SIZE	384
#define RF_CANARY	0xa5
#define RF_SEND_FIXED	208	/* struct rxe_send_wqe without SGEs */
#define RF_RECV_FIXED	40	/* struct rxe_recv_wqe without SGEs */

/* The top 16 bits of every wr_id the tool writes: "RF". */
#define RF_WRID_TAG	0x5246000000000000ULL
#define RF_WRID_MASK	0xffff000000000000ULL

/* ib_wc_status runs from IBV_WC_SUCCESS to IBV_WC_TM_RNDV_INCOMPLETE. */
#define RF_WC_STATUS_MAX	IBV_WC_TM_RNDV_INCOMPLETE

/* One ring mapping: the rxe_queue_buf header, then the slots. */
struct rf_ring {
	uint8_t *base;
	size_t size;		/* bytes mapped */
	uint32_t mask;		/* slot count - 1, from the header at create */
	uint32_t log2;		/* log2 of the slot size, likewise */
	uint8_t *shadow;	/* the slots as the tool last wrote them */
};

/*
 * Memory registered as one MR, with canary bytes in the same pages on
 * both sides of it: the pinned pages hold them, so a kernel write past
 * the MR's bounds lands there.
 */
struct rf_mem {
	uint8_t *buf;
	size_t total;
	size_t off;		/* MR start within buf */
	size_t len;		/* MR length */
	struct ibv_mr *mr;
};

struct rf_dev {
	const char *name;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_pd *pd2;	/* a second PD: its AH and MR are foreign */
	struct rf_mem mem;
	struct rf_mem mem2;	/* registered in pd2 */
	union ibv_gid gid;
	uint64_t async_events[32];	/* by enum ibv_event_type */
};

/* A QP with its rings, as the tool found them. */
struct rf_qp {
	struct ibv_qp *qp;
	struct ibv_cq *cq;	/* send and receive CQ */
	struct rf_ring cqr;	/* that CQ's ring */
	struct rf_ring sq;
	struct rf_ring rq;	/* base NULL with an SRQ */
	struct ibv_qp_cap cap;	/* what create_qp reported */
	struct rf_dev *dev;
	uint32_t sq_prod;	/* the producer index the tool keeps */
	uint32_t rq_prod;
	uint64_t cqes;		/* completions seen */
	uint32_t psn;
};

struct rf_srq {
	struct ibv_srq *srq;
	struct rf_ring ring;
	uint32_t max_sge;
	uint32_t prod;
};

struct rf {
	struct rf_dev a, b;
	uint64_t rng;
	uint64_t seed;
	unsigned int iters;	/* cases per family */
	unsigned int wait_ms;	/* longest wait for a completion */
	int verbose;
	unsigned int tests, failed;
	unsigned long long cases, cqes, doorbells;
	const char *only;	/* run only the families whose name has this */
	char first_fail[240];	/* the first failure since the last result */
	double t_mark;		/* when the last result was printed */
};

/* One completion read from a CQ ring by the tool itself. */
struct rf_cqe {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t qp_num;
};

/*
 * A second thread that writes one index of a ring as fast as it can:
 * full, empty, one past, backwards, far beyond the ring, random.
 */
struct rf_racer {
	struct rf_ring *ring;
	unsigned int off;	/* RF_HDR_PROD or RF_HDR_CONS */
	volatile int stop;
	uint64_t rng;
	unsigned long writes;
	pthread_t thread;
};

/* ringfuzz.c */
uint64_t rf_rand(struct rf *rf);
uint32_t rf_below(struct rf *rf, uint32_t n);
void rf_fill_random(struct rf *rf, void *p, size_t len);
void rf_log(struct rf *rf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* a failed check: printed and counted; returns -1 */
int rf_bad(struct rf *rf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rf_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
double rf_now(void);
int rf_sane_cqe(struct rf *rf, const struct ibv_wc *wc, uint32_t qpn);

/* env.c */
void rf_open_dev(struct rf_dev *d);
void rf_close_dev(struct rf_dev *d);
int rf_mem_check(struct rf *rf, const struct rf_mem *m, const char *what);
struct rf_qp *rf_qp_create(struct rf *rf, struct rf_dev *d,
			   enum ibv_qp_type type, struct rf_srq *srq,
			   unsigned int cqe);
void rf_qp_destroy(struct rf_qp *q);
int rf_qp_connect(struct rf_qp *q, const struct rf_qp *peer,
		  unsigned int rnr_retry);
int rf_qp_ud_ready(struct rf_qp *q);
int rf_qp_state(struct rf_qp *q, enum ibv_qp_state st);
void rf_post_recvs(struct rf_qp *p, unsigned int n, uint32_t len);
struct rf_srq *rf_srq_create(struct rf *rf, struct rf_dev *d,
			     unsigned int wr, unsigned int sge);
void rf_srq_destroy(struct rf_srq *s);
struct ibv_ah *rf_ah_create(struct rf_dev *from, struct ibv_pd *pd,
			    const struct rf_dev *to);
int rf_doorbell(struct rf *rf, struct rf_qp *q);
int rf_poll(struct rf_qp *q, struct ibv_wc *wc, int max);
int rf_drain(struct rf *rf, struct rf_qp *q, struct ibv_wc *wc, int want,
	     unsigned int quiet_ms);
void rf_async_drain(struct rf_dev *d);

/* env.c: rings */
uint32_t rf_ring_load(const struct rf_ring *r, unsigned int off);
void rf_ring_store(struct rf_ring *r, unsigned int off, uint32_t v);
void *rf_ring_slot(const struct rf_ring *r, uint32_t idx);
size_t rf_ring_elem(const struct rf_ring *r);
void rf_ring_snap(struct rf_ring *r);
int rf_ring_check(struct rf *rf, const struct rf_ring *r, const char *what,
		  int slots_too);

void rf_race_start(struct rf *rf, struct rf_racer *r);
void rf_race_stop(struct rf_racer *r);

/* sqfuzz.c */
void rf_sq_families(struct rf *rf);

/* rqfuzz.c */
void rf_rq_families(struct rf *rf);
void rf_cq_families(struct rf *rf);

/* ringfuzz.c: a case family's verdict, one result line */
void rf_result(struct rf *rf, const char *name, unsigned int failed_before,
	       unsigned int cases);
int rf_family_wanted(const struct rf *rf, const char *name);
int rf_healthy(struct rf *rf, const char *after);

#endif /* RINGFUZZ_H */
