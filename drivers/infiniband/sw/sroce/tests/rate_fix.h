/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fixtures of the rate limiter suite (rate_test.c): engine tasks that
 * note when they ran, a bare gate, and an RC QP pair on a test device
 * whose packets the test carries from one QP to the other.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TEST_RATE_FIX_H
#define SROCE_TEST_RATE_FIX_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/skbuff.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_task.h"
#include "test_util.h"

struct sroce_cq;
struct sroce_qp;
struct sroce_rate;

/* How long anything the tests wait for may take. */
#define RATE_WAIT_MS		5000
/* How long a QP held back is watched doing nothing. */
#define RATE_QUIET_MS		50

/**
 * struct rate_waiter - an engine's task for a bare gate
 * @task: the task the gate schedules
 * @calls: its function's calls
 * @first_ns: when the first call ran (ktime_get_ns())
 * @called: woken after each call
 */
struct rate_waiter {
	struct sroce_task task;
	atomic_t calls;
	u64 first_ns;
	wait_queue_head_t called;
};

struct rate_waiter *rate_waiter_new(struct kunit *test);
bool rate_waiter_wait(struct rate_waiter *w);
struct sroce_rate *rate_gate_new(struct kunit *test, struct sroce_task *req,
				 struct sroce_task *resp);
void rate_gate_owe(struct kunit *test, struct sroce_rate *rl, u32 owed);
u64 rate_gate_paid_at(struct sroce_rate *rl);
bool rate_gate_waiting(struct sroce_rate *rl, u64 paid,
		       unsigned long *waiting);

/* The two QPs of a pair. */
enum { RATE_A, RATE_B };

#define RATE_MR_SIZE		(2 * PAGE_SIZE)
/* The limit of a throttled QP, then of a released one, in kbit/s. */
#define RATE_SLOW_KBPS		1000	/* 125,000 bytes/s, 8 us a byte */
#define RATE_FAST_KBPS		100000	/* 12.5 MB/s, 80 ns a byte */
/* Bytes a throttled QP owes: 10 s at RATE_SLOW_KBPS, 100 ms at FAST. */
#define RATE_OWED		1250000U

/**
 * struct rate_pair - two connected RC QPs in RTS and what carries their
 *	packets
 * @test: the test that owns the pair
 * @t: the test device (its counters, its key table) and the PD
 * @cq: each QP's CQ, for both its queues
 * @qp: the QPs, made by sroce_create_qp(); RATE_A's peer is RATE_B
 * @qpn: their numbers
 * @mr: an MR of each, RATE_MR_SIZE bytes, local and every remote access;
 *	RATE_A's is kmalloc() memory, whose bytes a packet copies when it
 *	is built (it may not lend them)
 * @mr_made: @mr was registered
 * @wire: copies of the packets the QPs sent, not yet delivered
 * @caught: packets the QPs sent so far
 * @watching: the kfree_skb probe is registered
 * @closed0: each QP's &sroce_rate.closed when it was throttled
 * @wc: a completion polled from each CQ
 * @have_wc: @wc holds one
 */
struct rate_pair {
	struct kunit *test;
	struct sroce_test_dev t;
	struct sroce_cq *cq[2];
	struct sroce_qp *qp[2];
	u32 qpn[2];
	struct sroce_test_mr mr[2];
	bool mr_made[2];
	struct sk_buff_head wire;
	atomic_t caught;
	bool watching;
	u64 closed0[2];
	struct ib_wc wc[2];
	bool have_wc[2];
};

/**
 * struct rate_snap - what a pair has sent
 * @sent: sent_pkts + send_err of the device: every packet that left a
 *	QP (the hand-off to 127.0.0.1, which no sroce device owns, fails
 *	and counts in send_err)
 * @caught: &rate_pair.caught
 */
struct rate_snap {
	u64 sent;
	int caught;
};

struct rate_pair *rate_pair_new(struct kunit *test);
void rate_pair_limit(struct kunit *test, struct rate_pair *f, int side,
		     u32 kbps);
void rate_pair_throttle(struct kunit *test, struct rate_pair *f, int side);
void rate_pair_release(struct kunit *test, struct rate_pair *f, int side);
void rate_pair_snap(struct rate_pair *f, struct rate_snap *s);
bool rate_pair_turned_away(struct rate_pair *f, int side);
bool rate_pair_completed(struct rate_pair *f, int side);
bool rate_pair_pump_until(struct rate_pair *f,
			  bool (*done)(struct rate_pair *f, int side),
			  int side);
void rate_pair_expect_held(struct kunit *test, struct rate_pair *f, int side,
			   const struct rate_snap *s);
u8 *rate_mr_at(struct rate_pair *f, int side, u32 off);
void rate_mr_fill(struct rate_pair *f, int side, u32 off, u32 len, u8 msg);
u32 rate_mr_first_wrong(struct rate_pair *f, int side, u32 off, u32 len,
			int msg);
u64 rate_mr_iova(struct rate_pair *f, int side, u32 off);

#endif /* SROCE_TEST_RATE_FIX_H */
