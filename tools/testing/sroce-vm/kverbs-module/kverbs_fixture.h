/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce_vm_kverbs: the fixture of the checks (kverbs_fixture.c): the run's
 * context, CQs and QPs made the way the checks need them, and the
 * expectations a check is written with.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_VM_KVERBS_FIXTURE_H
#define SROCE_VM_KVERBS_FIXTURE_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/if_ether.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define KV_PORT		1
#define KV_TIMEOUT_MS	2000
#define KV_SETTLE_MS	20
#define KV_QKEY		0x11111111
#define KV_SQ_PSN	0x1234
#define KV_RQ_PSN	0x5678
#define KV_DEST_QPN	0x123

/**
 * struct kv_ctx - one run of the checks against one device
 * @dev: the device under test
 * @pd: the PD every check's objects belong to
 * @peer: the fake peer's address (RC QPs' RTR, AHs)
 * @peer_mac: the fake peer's MAC
 * @peer_gid: the fake peer's GID (its IPv4 address, v4-mapped)
 * @sgid_index: the first RoCEv2 GID of @dev with an IPv4 address
 * @why: the first difference the current check found; empty if none
 * @passed: checks passed so far
 * @failed: checks failed so far
 */
struct kv_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct rdma_ah_attr peer;
	u8 peer_mac[ETH_ALEN];
	union ib_gid peer_gid;
	u32 sgid_index;
	char why[192];
	unsigned int passed;
	unsigned int failed;
};

/**
 * struct kv_cq - a CQ with counters of its handler calls
 * @cq: the CQ; NULL until created
 * @comps: completion handler calls
 * @events: event handler calls
 * @last_event: the type of the last event
 * @event_cq: the CQ the last event named
 */
struct kv_cq {
	struct ib_cq *cq;
	atomic_t comps;
	atomic_t events;
	enum ib_event_type last_event;
	struct ib_cq *event_cq;
};

/**
 * struct kv_qp_events - counters of a QP's asynchronous events
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED events
 * @other: any other event
 */
struct kv_qp_events {
	atomic_t last_wqe;
	atomic_t other;
};

/**
 * struct kv_fix - a CQ and a QP using it for both queues: what most checks
 *	test on
 * @kcq: the CQ
 * @qp: the QP
 * @cap: what the QP really has
 */
struct kv_fix {
	struct kv_cq kcq;
	struct ib_qp *qp;
	struct ib_qp_cap cap;
};

/**
 * kv_bad() - record the first difference of a check
 * @c: the run
 * @bad: whether there is a difference
 * @fmt: what differed, printf-style; kept only if it is the check's first
 *
 * A check reads "if (kv_bad(c, cond, ...)) goto out;".
 *
 * Return: @bad.
 */
__printf(3, 4) bool kv_bad(struct kv_ctx *c, bool bad, const char *fmt, ...);

/**
 * kv_cq_create() - create a CQ of at least @cqe entries on the device
 * @c: the run
 * @kcq: filled in; kcq->cq is NULL on failure
 * @cqe: the entries asked for
 *
 * The depth must be 2^n - 1 (librxe's ring) and at least @cqe.
 *
 * Return: true if the CQ was created as expected.
 */
bool kv_cq_create(struct kv_ctx *c, struct kv_cq *kcq, int cqe);

/**
 * kv_cq_destroy() - destroy the CQ of @kcq, if any
 * @kcq: as filled in by kv_cq_create()
 */
void kv_cq_destroy(struct kv_cq *kcq);

/**
 * kv_expect_empty() - after a short wait, the CQ must hold no completion
 * @c: the run
 * @kcq: the CQ
 * @when: for the message
 *
 * Return: true if the CQ is empty.
 */
bool kv_expect_empty(struct kv_ctx *c, struct kv_cq *kcq, const char *when);

/**
 * kv_expect_wc_run() - expect a run of completions of one QP
 * @c: the run
 * @kcq: the CQ
 * @qp: the QP each completion must name
 * @first_id: the wr_id of the first; the others follow it
 * @n: how many
 * @status: the status of each
 * @opcode: the opcode of each, or negative for any
 *
 * Each completion is waited for up to KV_TIMEOUT_MS.
 *
 * Return: true if all @n came as expected.
 */
bool kv_expect_wc_run(struct kv_ctx *c, struct kv_cq *kcq, struct ib_qp *qp,
		      u64 first_id, int n, enum ib_wc_status status,
		      int opcode);

/**
 * kv_expect_wcs() - kv_expect_wc_run(), and then nothing more
 * @c: the run
 * @kcq: the CQ
 * @qp: the QP each completion must name
 * @first_id: the wr_id of the first; the others follow it
 * @n: how many
 * @status: the status of each
 * @opcode: the opcode of each, or negative for any
 *
 * Return: true if all @n came as expected and no other.
 */
bool kv_expect_wcs(struct kv_ctx *c, struct kv_cq *kcq, struct ib_qp *qp,
		   u64 first_id, int n, enum ib_wc_status status, int opcode);

/**
 * kv_expect_count() - wait until a counter reaches @want, then make sure
 *	it went no further
 * @c: the run
 * @cnt: the counter (of handler calls)
 * @want: the value expected
 * @what: for the message
 *
 * Return: true if @cnt is @want.
 */
bool kv_expect_count(struct kv_ctx *c, atomic_t *cnt, int want,
		     const char *what);

/**
 * kv_qp_create() - create a QP of the run's PD
 * @c: the run
 * @type: the QP type
 * @scq: its send CQ
 * @rcq: its receive CQ
 * @srq: its SRQ, or NULL
 * @cap: what to ask for; gets what the QP really has
 * @evs: counters of its asynchronous events, or NULL for no handler
 *
 * Return: the QP, or NULL on failure.
 */
struct ib_qp *kv_qp_create(struct kv_ctx *c, enum ib_qp_type type,
			   struct kv_cq *scq, struct kv_cq *rcq,
			   struct ib_srq *srq, struct ib_qp_cap *cap,
			   struct kv_qp_events *evs);

/**
 * kv_qp_destroy() - destroy @qp, if any; a failure fails the check
 * @c: the run
 * @qp: the QP or NULL
 */
void kv_qp_destroy(struct kv_ctx *c, struct ib_qp *qp);

/**
 * kv_qp_state() - the state of @qp, as ib_query_qp() reports it
 * @qp: the QP
 *
 * Return: an enum ib_qp_state, or -1 if the query failed.
 */
int kv_qp_state(struct ib_qp *qp);

/**
 * kv_qp_step_timeout() - move @qp to @state with the attributes IBA
 *	11.2.4.2 requires for the step
 * @c: the run
 * @qp: the QP
 * @state: the state to move to
 * @timeout: the Local ACK Timeout an RC QP gets in RTS (0: infinite)
 *
 * Return: what ib_modify_qp() returned.
 */
int kv_qp_step_timeout(struct kv_ctx *c, struct ib_qp *qp,
		       enum ib_qp_state state, u8 timeout);

/**
 * kv_qp_step() - kv_qp_step_timeout() with a Local ACK Timeout of 14
 * @c: the run
 * @qp: the QP
 * @state: the state to move to
 *
 * Return: what ib_modify_qp() returned.
 */
int kv_qp_step(struct kv_ctx *c, struct ib_qp *qp, enum ib_qp_state state);

/**
 * kv_qp_to_rts() - RESET -> INIT -> RTR -> RTS, checking the state after
 *	each step
 * @c: the run
 * @qp: the QP, in RESET
 *
 * Return: true if @qp got to RTS.
 */
bool kv_qp_to_rts(struct kv_ctx *c, struct ib_qp *qp);

/**
 * kv_qp_to_err() - move @qp to ERR
 * @c: the run
 * @qp: the QP
 *
 * Return: true if ib_modify_qp() succeeded.
 */
bool kv_qp_to_err(struct kv_ctx *c, struct ib_qp *qp);

/**
 * kv_fix_setup() - create a CQ and a QP using it for both queues
 * @c: the run
 * @f: filled in; kv_fix_teardown() it whatever this returns
 * @type: the QP type
 * @cqe: the CQ's entries
 * @send_wr: the send queue's depth asked for
 * @recv_wr: the receive queue's depth asked for
 * @to_rts: whether to move the QP to RTS
 *
 * Return: true if all went as expected.
 */
bool kv_fix_setup(struct kv_ctx *c, struct kv_fix *f, enum ib_qp_type type,
		  int cqe, u32 send_wr, u32 recv_wr, bool to_rts);

/**
 * kv_fix_teardown() - destroy what kv_fix_setup() created
 * @c: the run
 * @f: the fixture
 */
void kv_fix_teardown(struct kv_ctx *c, struct kv_fix *f);

/**
 * kv_post_recvs() - post @n receives without SGEs
 * @qp: the QP
 * @first_id: the wr_id of the first; the others follow it
 * @n: how many
 *
 * Return: 0, or the first error of ib_post_recv().
 */
int kv_post_recvs(struct ib_qp *qp, u64 first_id, int n);

/**
 * kv_send_chain() - a chain of @n signaled zero-length SENDs
 * @first_id: the wr_id of the first; the others follow it
 * @n: how many
 *
 * Return: the array of WRs (kfree() it), or NULL if out of memory.
 */
struct ib_send_wr *kv_send_chain(u64 first_id, int n);

#endif /* SROCE_VM_KVERBS_FIXTURE_H */
