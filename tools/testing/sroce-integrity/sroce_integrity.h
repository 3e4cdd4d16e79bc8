/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce_integrity: the run state every part of the tool shares, and the
 * helpers of sroce_integrity.c (failure reports, message sizes and slots).
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef SROCE_INTEGRITY_H
#define SROCE_INTEGRITY_H

#include <stdint.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "pattern.h"

enum op_kind { OP_SEND, OP_WRITE, OP_READ, OP_ATOMIC };
extern const char *const op_names[];

/* Transport of the QP pair. */
enum qp_kind { QPK_RC, QPK_UC, QPK_UD };
extern const char *const qp_names[];

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
	double duration;	/* -D: stop posting after this many seconds, 0: never */
	unsigned int progress_ms;	/* -P: a progress line this often, 0: none */
	int busy;	/* -B: poll the CQs without ever arming them */
};

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr[2];
	struct ibv_ah *ah;	/* UD: A's address handle of B */
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
	/*
	 * t0: when the transfer began (CLOCK_MONOTONIC, s); next_report: when
	 * the next progress line (-P) is due; bytes_done: the bytes of the
	 * first msgs_done messages, those done so far (progress_done()).
	 */
	double t0, next_report;
	uint64_t bytes_done, msgs_done;
	uint64_t model[ATOMIC_TARGETS];
	struct timespec last_progress;
	int failed;
	/*
	 * UC: r->verified counts accounted messages (delivered or declared
	 * lost); last_seq is the highest seq delivered, -1 before the first.
	 */
	uint64_t delivered, lost, dups, late;
	int64_t last_seq;
	/*
	 * UD: B posts rdepth receive WQEs (2 x depth: headroom for
	 * duplicates), each slot with a GRH prefix; seen[seq] is set once
	 * message seq was delivered (a second copy is a duplicate).
	 */
	unsigned int rdepth;
	uint8_t *seen;
	size_t seen_cap;
};

/* Counters whose deltas the summary line reports, per device. */
#define NR_CNT 8
extern const char *const cnt_names[NR_CNT];
enum { C_TIMEOUT, C_SEQNAK, C_DUP, C_OOS, C_RNR, C_ICRC, C_RETRY_EXC, C_MALFORMED };

void fail(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
double now_s(void);
uint32_t msg_len(const struct run *r, uint32_t seq);
size_t remote_off(uint32_t seq);
uint8_t *slot_base(struct side *sd, const struct run *r, uint64_t n);

static inline int is_uc(const struct run *r)
{
	return r->o.qpt == QPK_UC;
}

static inline int is_ud(const struct run *r)
{
	return r->o.qpt == QPK_UD;
}

/* UC or UD: no ACKs, every message names itself, losses are counted. */
static inline int is_unrel(const struct run *r)
{
	return r->o.qpt != QPK_RC;
}

#endif /* SROCE_INTEGRITY_H */
