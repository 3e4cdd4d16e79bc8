// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the per-QP send rate limiter (transport/sroce_rate.c):
 * the token bucket's arithmetic (struct sroce_tb) against values worked
 * out by hand, at rates from 1 kbit/s to the top of u64; the units
 * IB_QP_RATE_LIMIT and an address vector's static rate come in; the
 * lowest of a QP's limits applying; the gate's timer waking the engines
 * it turned away; and the gate of a real RC QP pair (rate_fix.h): a
 * requester or responder it holds back has looked up no key and sent
 * nothing, and its timer alone lets it go on once the debt is paid.
 *
 * Timing. The suite runs under QEMU TCG in a debug kernel, where a thread
 * may stall for tens of milliseconds, so nothing here races a lower
 * bound. A QP is held back by a debt of 10 s while the test watches it do
 * nothing; then its rate is raised, which leaves a debt of at most
 * 100 ms, and what must follow has seconds to happen. A wake-up is
 * checked to come no earlier than the debt is paid against the hrtimer's
 * own guarantee (it never fires early), computed from the bucket, not
 * against a sleep of the test's.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_task.h"
#include "mem/sroce_frmr.h"
#include "rate_fix.h"
#include "test_util.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_rate.h"
#include "transport/sroce_wq.h"

/* An arbitrary start of bucket time, far from 0 and from the wrap. */
#define T0		(5 * NSEC_PER_SEC)
/* 10 Mbit/s: 800 ns a byte; the depth, 2 ms, is 2,500 bytes */
#define MBIT10		1250000ULL
#define MBIT10_DEPTH	2000000LL
#define MBIT10_DEPTH_BYTES	2500

/* ---- the bucket: a new one -------------------------------------------- */

struct tb_new_case {
	const char *name;
	u64 bps;
	u64 ns_per_byte;	/* NSEC_PER_SEC / bps, 32.32 fixed point */
	s64 depth;
};

static const struct tb_new_case tb_new_cases[] = {
	{ "1 kbit/s: 2 ms", 125, 8000000ULL << 32, 2000000 },
	{ "10 Mbit/s: 2 ms", MBIT10, 800ULL << 32, MBIT10_DEPTH },
	{ "1 Gbit/s: 2 ms", 125000000, 8ULL << 32, 2000000 },
	/* 2^32 * 0.08 = 343,597,383.68 */
	{ "100 Gbit/s: 2 ms", 12500000000ULL, 343597383, 2000000 },
	{ "U64_MAX bytes/s: at least 1, 2 ms", U64_MAX, 1, 2000000 },
};

static void tb_new_desc(const struct tb_new_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tb_new, tb_new_cases, tb_new_desc);

/*
 * A bucket that was unlimited starts full: its depth is 2 ms of sending
 * at every rate.
 */
static void rate_tb_new_test(struct kunit *test)
{
	const struct tb_new_case *c = test->param_value;
	struct sroce_tb tb = {};

	sroce_tb_set(&tb, c->bps, T0);
	KUNIT_EXPECT_EQ(test, tb.bps, c->bps);
	KUNIT_EXPECT_EQ(test, tb.ns_per_byte, c->ns_per_byte);
	KUNIT_EXPECT_EQ(test, tb.depth, c->depth);
	KUNIT_EXPECT_EQ(test, tb.credit, c->depth);
	KUNIT_EXPECT_EQ(test, tb.stamp, (u64)T0);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0), 0ULL);
}

/* ---- the bucket: what bytes cost -------------------------------------- */

struct tb_cost_case {
	const char *name;
	u64 bps;
	u32 bytes;
	u64 ns;		/* bytes * 10^9 / bps, rounded down */
};

static const struct tb_cost_case tb_cost_cases[] = {
	{ "1 kbit/s, 1 B", 125, 1, 8000000 },
	{ "1 kbit/s, 1000 B", 125, 1000, 8000000000ULL },
	/* 4,294,967,295 * 8,000,000: 397 days, past 2^54 */
	{ "1 kbit/s, 4 GiB - 1", 125, U32_MAX, 34359738360000000ULL },
	{ "1 kbit/s, 0 B", 125, 0, 0 },
	{ "10 Mbit/s, 1500 B", MBIT10, 1500, 1200000 },
	{ "10 Mbit/s, 64 KiB", MBIT10, 65536, 52428800 },
	{ "10 Mbit/s, 4 GiB - 1", MBIT10, U32_MAX, 3435973836000ULL },
	{ "1 Gbit/s, 4096 B", 125000000, 4096, 32768 },
	{ "100 Gbit/s, 4096 B", 12500000000ULL, 4096, 327 },
	{ "100 Gbit/s, 10^6 B", 12500000000ULL, 1000000, 80000 },
	{ "100 Gbit/s, 4 GiB - 1", 12500000000ULL, U32_MAX, 343597383 },
	{ "400 Gbit/s, 4096 B", 50000000000ULL, 4096, 81 },
	{ "400 Gbit/s, 10^6 B", 50000000000ULL, 1000000, 20000 },
	{ "400 Gbit/s, 4 GiB - 1", 50000000000ULL, U32_MAX, 85899345 },
	/* 10^9 * 2^32 bytes/s: the last rate whose ns per byte is not 0 */
	{ "4.29e18 B/s, 4 GiB - 1", (u64)NSEC_PER_SEC << 32, U32_MAX, 0 },
	{ "U64_MAX B/s, 4 GiB - 1", U64_MAX, U32_MAX, 0 },
};

static void tb_cost_desc(const struct tb_cost_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tb_cost, tb_cost_cases, tb_cost_desc);

/*
 * Exact to a nanosecond: never more than the real time (a QP is never
 * held back longer than its rate asks), at most 1 ns less than it rounded
 * down, and no 64-bit overflow with 4 GiB at 1 kbit/s.
 */
static void rate_tb_cost_test(struct kunit *test)
{
	const struct tb_cost_case *c = test->param_value;
	struct sroce_tb tb = {};
	u64 ns;

	sroce_tb_set(&tb, c->bps, T0);
	ns = sroce_tb_cost(&tb, c->bytes);
	KUNIT_EXPECT_LE(test, ns, c->ns);
	KUNIT_EXPECT_GE(test, ns + 1, c->ns);
}

/* ---- the bucket over time ---------------------------------------------- */

/*
 * Credit earned while idle (the requester said so: sroce_tb_idle()) is
 * capped at the depth, however long the pause: a few milliseconds, three
 * days, or up to the end of the clock.
 */
static void rate_tb_refill_test(struct kunit *test)
{
	const u64 days = 3ULL * 24 * 3600 * NSEC_PER_SEC;
	struct sroce_tb tb = {};
	u64 t = T0;

	sroce_tb_set(&tb, MBIT10, t);
	/* 2,000 bytes cost 1.6 ms; 1 ms later 1 ms of it is back */
	sroce_tb_charge(&tb, 2000);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH - 1600000);
	KUNIT_EXPECT_TRUE(test, tb.held);
	sroce_tb_idle(&tb, t);
	KUNIT_EXPECT_FALSE(test, tb.held);
	t += 1000000;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH - 600000);
	KUNIT_EXPECT_EQ(test, tb.stamp, t);
	/* 1 ms more would be 0.4 ms past the depth */
	t += 1000000;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);

	/* in debt by 800 us, then idle for three days: full, no more */
	sroce_tb_charge(&tb, MBIT10_DEPTH_BYTES + 1000);
	KUNIT_EXPECT_EQ(test, tb.credit, -800000LL);
	sroce_tb_idle(&tb, t);
	KUNIT_EXPECT_EQ(test, tb.credit, -800000LL);
	t += days;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);
	KUNIT_EXPECT_EQ(test, tb.stamp, t);

	/* and from there to the last nanosecond of u64 */
	sroce_tb_charge(&tb, MBIT10_DEPTH_BYTES + 1000);
	sroce_tb_idle(&tb, t);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, U64_MAX), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);
	KUNIT_EXPECT_EQ(test, tb.stamp, U64_MAX);
}

/*
 * A packet passes while the credit is not negative and may take it below
 * zero; the wait is then exactly the debt, and 0 once that much time has
 * passed.
 */
static void rate_tb_deficit_test(struct kunit *test)
{
	struct sroce_tb tb = {};

	sroce_tb_set(&tb, MBIT10, T0);
	/* the whole credit: none left, but none owed either */
	sroce_tb_charge(&tb, MBIT10_DEPTH_BYTES);
	KUNIT_EXPECT_EQ(test, tb.credit, 0LL);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0), 0ULL);
	/* 1000 bytes more pass, and owe 800 us */
	sroce_tb_charge(&tb, 1000);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0), 800000ULL);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 + 799999), 1ULL);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 + 800000), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, 0LL);
	/* a packet of any size passes a bucket not in debt: 64 KiB */
	sroce_tb_charge(&tb, 65536);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 + 800000), 52428800ULL);
}

/*
 * A busy bucket (its QP sent, or sroce_tb_wait() found it in debt) makes
 * up for a late engine: the time past the debt counts as credit up to
 * SROCE_RATE_LATE_NS, not only up to the depth, and what is made up stays
 * until spent. Once the requester says it is idle, the credit is cut to
 * the depth and grows no further: a pause is not made up for.
 */
static void rate_tb_late_test(struct kunit *test)
{
	struct sroce_tb tb = {};
	u64 t = T0;

	sroce_tb_set(&tb, MBIT10, t);
	KUNIT_EXPECT_FALSE(test, tb.held);
	sroce_tb_charge(&tb, MBIT10_DEPTH_BYTES + 1000);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 800000ULL);
	KUNIT_EXPECT_TRUE(test, tb.held);
	/* the engine runs 5 ms after the debt was paid: 5 ms of credit */
	t += 800000 + 5000000;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_TRUE(test, tb.held);
	KUNIT_EXPECT_EQ(test, tb.credit, 5000000LL);
	/* idle now: cut to the depth, and nothing more is earned */
	sroce_tb_idle(&tb, t);
	KUNIT_EXPECT_FALSE(test, tb.held);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);
	t += 30000000;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);
	/* 10 ms of bytes pass on it, and owe 8 ms */
	sroce_tb_charge(&tb, 12500);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 8000000ULL);
	/* a wake-up 50 ms late is made up for up to SROCE_RATE_LATE_NS */
	t += 8000000 + 50000000;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, (s64)SROCE_RATE_LATE_NS);
	/* busy, held up by something else than the gate: made up too */
	sroce_tb_charge(&tb, 25000);
	KUNIT_EXPECT_EQ(test, tb.credit, 0LL);
	t += 30000000;
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
	KUNIT_EXPECT_EQ(test, tb.credit, (s64)SROCE_RATE_LATE_NS);
	/* a limit taken away and set again starts full, not held */
	sroce_tb_charge(&tb, 100000);
	KUNIT_EXPECT_NE(test, sroce_tb_wait(&tb, t), 0ULL);
	sroce_tb_set(&tb, 0, t);
	KUNIT_EXPECT_FALSE(test, tb.held);
	sroce_tb_set(&tb, MBIT10, t);
	KUNIT_EXPECT_FALSE(test, tb.held);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);
}

/* A clock read before the bucket's stamp changes nothing. */
static void rate_tb_backwards_test(struct kunit *test)
{
	struct sroce_tb tb = {};

	sroce_tb_set(&tb, MBIT10, T0);
	sroce_tb_charge(&tb, MBIT10_DEPTH_BYTES + 1000);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 - NSEC_PER_SEC), 800000ULL);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, 0), 800000ULL);
	KUNIT_EXPECT_EQ(test, tb.stamp, (u64)T0);
	KUNIT_EXPECT_EQ(test, tb.credit, -800000LL);
	/* half paid; then a read from before that half again */
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 + 400000), 400000ULL);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 + 100000), 400000ULL);
	KUNIT_EXPECT_EQ(test, tb.stamp, (u64)T0 + 400000);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, T0 + 800000), 0ULL);
}

#define PACED_PKTS	1000
#define PACED_LEN	1500
#define PACED_COST	1200000ULL	/* 1500 bytes at 800 ns */
/* 2,000,000 / 1,200,000 = 1.7: packets 1 and 2 go at once */
#define PACED_BURST	2

/*
 * A sender that waits exactly as long as the bucket says: after the
 * burst the full bucket allows, packet k leaves at (k - 1) * cost - depth,
 * one cost after the one before it. 1500 bytes every 1.2 ms is exactly
 * 10 Mbit/s.
 */
static void rate_tb_paced_test(struct kunit *test)
{
	unsigned int k, burst = 0, off_pace = 0;
	struct sroce_tb tb = {};
	u64 t = T0, w;

	sroce_tb_set(&tb, MBIT10, T0);
	for (k = 1; k <= PACED_PKTS; k++) {
		w = sroce_tb_wait(&tb, t);
		t += w;
		if (t == T0)
			burst++;
		else if (t - T0 != (k - 1) * PACED_COST - MBIT10_DEPTH)
			off_pace++;
		KUNIT_ASSERT_EQ(test, sroce_tb_wait(&tb, t), 0ULL);
		sroce_tb_charge(&tb, PACED_LEN);
	}
	KUNIT_EXPECT_EQ(test, burst, (unsigned int)PACED_BURST);
	KUNIT_EXPECT_EQ(test, off_pace, 0U);
	/* 999 * 1.2 ms - 2 ms */
	KUNIT_EXPECT_EQ(test, t - T0, 1196800000ULL);
	/* packet 3 left at 0.4 ms; from it to packet 1000: 997 costs */
	KUNIT_EXPECT_EQ(test, t - T0 - 400000, (PACED_PKTS - 3) * PACED_COST);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), PACED_COST);
}

/*
 * A new rate while in debt: what is owed is converted as bytes, so a cut
 * rate holds the sender longer and a raised one frees it sooner; 0 makes
 * the bucket unlimited, and a limit set again starts full. Credit kept
 * across a change never exceeds the new depth.
 */
static void rate_tb_change_test(struct kunit *test)
{
	struct sroce_tb tb = {};
	u64 t = T0;

	sroce_tb_set(&tb, MBIT10, t);
	sroce_tb_charge(&tb, MBIT10_DEPTH_BYTES + 1000);
	/* 1000 bytes owed: 8 ms at 1 Mbit/s */
	sroce_tb_set(&tb, 125000, t);
	KUNIT_EXPECT_EQ(test, tb.ns_per_byte, 8000ULL << 32);
	KUNIT_EXPECT_EQ(test, tb.depth, 2000000LL);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 8000000ULL);
	/* 4 ms later 500 bytes are owed: 40 us at 100 Mbit/s */
	t += 4000000;
	sroce_tb_set(&tb, 12500000, t);
	KUNIT_EXPECT_EQ(test, tb.depth, 2000000LL);
	KUNIT_EXPECT_EQ(test, tb.stamp, t);
	KUNIT_EXPECT_EQ(test, sroce_tb_wait(&tb, t), 40000ULL);
	/* 10 us later, unlimited: nothing is owed */
	t += 10000;
	sroce_tb_set(&tb, 0, t);
	KUNIT_EXPECT_EQ(test, tb.bps, 0ULL);
	KUNIT_EXPECT_EQ(test, tb.ns_per_byte, 0ULL);
	KUNIT_EXPECT_EQ(test, tb.depth, 0LL);
	KUNIT_EXPECT_EQ(test, tb.credit, 0LL);
	/* limited again a second later: full, from then */
	t += NSEC_PER_SEC;
	sroce_tb_set(&tb, MBIT10, t);
	KUNIT_EXPECT_EQ(test, tb.credit, MBIT10_DEPTH);
	KUNIT_EXPECT_EQ(test, tb.stamp, t);
	/* a full bucket at 1 Gbit/s holds 2 ms as well */
	sroce_tb_set(&tb, 125000000, t);
	KUNIT_EXPECT_EQ(test, tb.credit, 2000000LL);
	/* and keeps them at 10 Mbit/s: no refill without time */
	sroce_tb_set(&tb, MBIT10, t);
	KUNIT_EXPECT_EQ(test, tb.credit, 2000000LL);
	KUNIT_EXPECT_EQ(test, tb.depth, MBIT10_DEPTH);
}

/* ---- units -------------------------------------------------------------- */

static void rate_from_kbps_test(struct kunit *test)
{
	static const struct { u32 kbps; u64 bps; } cases[] = {
		{ 0, 0 },
		{ 1, 125 },
		{ 8, 1000 },
		{ 10000, 1250000 },
		{ 100000000, 12500000000ULL },		/* 100 Gbit/s */
		{ U32_MAX, 536870911875ULL },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rate_from_kbps(cases[i].kbps),
				    cases[i].bps, "%u kbit/s", cases[i].kbps);
}

/* ib_rate_to_mbps()'s figures (IBA's data rates, not signalling) / 8 */
static void rate_from_static_test(struct kunit *test)
{
	static const struct { u8 rate; u64 bps; } cases[] = {
		{ IB_RATE_PORT_CURRENT, 0 },
		{ IB_RATE_2_5_GBPS, 312500000 },
		{ IB_RATE_10_GBPS, 1250000000 },
		{ IB_RATE_14_GBPS, 1757750000 },	/* 14,062 Mbit/s */
		{ IB_RATE_100_GBPS, 12890625000ULL },	/* 103,125 Mbit/s */
		{ IB_RATE_400_GBPS, 53125000000ULL },	/* 425,000 Mbit/s */
		{ IB_RATE_600_GBPS, 79687500000ULL },	/* 637,500 Mbit/s */
		{ 1, 0 },	/* not an enum ib_rate */
		{ IB_RATE_600_GBPS + 1, 0 },
		{ 0xff, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rate_from_static(cases[i].rate),
				    cases[i].bps, "static rate %u",
				    cases[i].rate);
}

/* ---- the gate ----------------------------------------------------------- */

/* The lowest nonzero limit applies; taking one away restores the next. */
static void rate_lowest_test(struct kunit *test)
{
	struct sroce_rate *rl = rate_gate_new(test, NULL, NULL);
	s64 credit;
	u64 stamp;

	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 0ULL);
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 1000000);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 1000000ULL);
	sroce_rate_set(rl, SROCE_RATE_SRC_STATIC, 500000);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 500000ULL);
	/* a higher limit from another source leaves the bucket alone */
	sroce_rate_charge(rl, SROCE_RATE_REQ, 1000);
	credit = rl->tb.credit;
	stamp = rl->tb.stamp;
	sroce_rate_set(rl, SROCE_RATE_SRC_CC, 2000000);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 500000ULL);
	KUNIT_EXPECT_EQ(test, rl->tb.credit, credit);
	KUNIT_EXPECT_EQ(test, rl->tb.stamp, stamp);
	sroce_rate_set(rl, SROCE_RATE_SRC_STATIC, 0);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 1000000ULL);
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 0);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 2000000ULL);
	/* two sources at one rate: either alone still limits */
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 2000000);
	sroce_rate_set(rl, SROCE_RATE_SRC_CC, 0);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 2000000ULL);
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 0);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), 0ULL);
	KUNIT_EXPECT_TRUE(test, sroce_rate_open(rl, SROCE_RATE_REQ));
	KUNIT_EXPECT_EQ(test, rl->closed, 0ULL);
}

/*
 * Both engines turned away by a debt of 200 ms: each is counted, and the
 * timer, armed by the gate alone, runs each once, not before the debt is
 * paid; then the gate is open.
 */
static void rate_gate_timer_test(struct kunit *test)
{
	const unsigned long both = BIT(SROCE_RATE_REQ) | BIT(SROCE_RATE_RESP);
	struct rate_waiter *req = rate_waiter_new(test);
	struct rate_waiter *resp = rate_waiter_new(test);
	struct sroce_rate *rl = rate_gate_new(test, &req->task, &resp->task);
	unsigned long waiting;
	u64 paid;

	sroce_rate_set(rl, SROCE_RATE_SRC_QP, MBIT10);
	rate_gate_owe(test, rl, 250000);
	paid = rate_gate_paid_at(rl);
	if (sroce_rate_open(rl, SROCE_RATE_REQ) ||
	    sroce_rate_open(rl, SROCE_RATE_RESP)) {
		/* open while in debt is wrong; after a stall, inconclusive */
		KUNIT_ASSERT_GE(test, ktime_get_ns(), paid);
		kunit_skip(test, "the test stalled past the 200 ms debt");
	}
	if (rate_gate_waiting(rl, paid, &waiting))
		KUNIT_EXPECT_EQ(test, waiting, both);
	KUNIT_EXPECT_EQ(test, rl->closed, 2ULL);

	KUNIT_ASSERT_TRUE(test, rate_waiter_wait(req));
	KUNIT_ASSERT_TRUE(test, rate_waiter_wait(resp));
	KUNIT_EXPECT_GE(test, req->first_ns, paid);
	KUNIT_EXPECT_GE(test, resp->first_ns, paid);
	KUNIT_EXPECT_EQ(test, atomic_read(&req->calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&resp->calls), 1);
	waiting = READ_ONCE(rl->waiting);
	KUNIT_EXPECT_EQ(test, waiting, 0UL);
	KUNIT_EXPECT_TRUE(test, sroce_rate_open(rl, SROCE_RATE_REQ));
	KUNIT_EXPECT_EQ(test, rl->closed, 2ULL);
}

/*
 * The slice a held engine waits for beyond its debt: a train's sending
 * time, at most 1 ms (10 and 100 Mbit/s: 1 ms; 1 Gbit/s: 64 KiB at 8 ns
 * a byte; 10 Gbit/s: at 0.8 ns).
 */
static void rate_tb_slice_test(struct kunit *test)
{
	struct sroce_tb tb = {};

	sroce_tb_set(&tb, MBIT10, T0);
	KUNIT_EXPECT_EQ(test, tb.slice, (u64)NSEC_PER_MSEC);
	sroce_tb_set(&tb, MBIT10 * 10, T0);
	KUNIT_EXPECT_EQ(test, tb.slice, (u64)NSEC_PER_MSEC);
	sroce_tb_set(&tb, MBIT10 * 100, T0);
	KUNIT_EXPECT_EQ(test, tb.slice, 524288ULL);
	sroce_tb_set(&tb, MBIT10 * 1000, T0);
	KUNIT_EXPECT_EQ(test, tb.slice, 52428ULL);
	sroce_tb_set(&tb, 0, T0);
	KUNIT_EXPECT_EQ(test, tb.slice, 0ULL);
}

#define SLICE_BPS	12500000ULL	/* 100 Mbit/s */
#define SLICE_PKT	1500		/* 120 us at SLICE_BPS */

/*
 * An engine turned away at 100 Mbit/s is woken a slice (1 ms) after its
 * debt is paid, not at once, and then sends a train: at least the
 * slice's eight 1500-byte packets before the gate closes again.
 */
static void rate_gate_slice_test(struct kunit *test)
{
	struct rate_waiter *w = rate_waiter_new(test);
	struct sroce_rate *rl = rate_gate_new(test, &w->task, NULL);
	unsigned int train = 0;
	u64 paid;

	sroce_rate_set(rl, SROCE_RATE_SRC_QP, SLICE_BPS);
	rate_gate_owe(test, rl, 125000);	/* 10 ms */
	paid = rate_gate_paid_at(rl);
	if (sroce_rate_open(rl, SROCE_RATE_REQ)) {
		KUNIT_ASSERT_GE(test, ktime_get_ns(), paid);
		kunit_skip(test, "the test stalled past the 10 ms debt");
	}
	KUNIT_EXPECT_GE(test, (u64)ktime_to_ns(hrtimer_get_expires(&rl->timer)),
			paid + NSEC_PER_MSEC);
	KUNIT_ASSERT_TRUE(test, rate_waiter_wait(w));
	KUNIT_EXPECT_GE(test, w->first_ns, paid + NSEC_PER_MSEC);
	while (train < 1000 && sroce_rate_open(rl, SROCE_RATE_REQ)) {
		sroce_rate_charge(rl, SROCE_RATE_REQ, SLICE_PKT);
		train++;
	}
	KUNIT_EXPECT_GE(test, train, 9U);
	KUNIT_EXPECT_LT(test, train, 1000U);
}

/*
 * Packets the netdev refused give their cost back: a QP charged 10 ms
 * beyond its bucket is open again, and the byte count congestion control
 * reads is as before. A refund larger than the charges leaves no more
 * than SROCE_RATE_LATE_NS of credit and a count of 0.
 */
static void rate_gate_refund_test(struct kunit *test)
{
	struct rate_waiter *w = rate_waiter_new(test);
	struct sroce_rate *rl = rate_gate_new(test, &w->task, NULL);
	u64 sent;

	sroce_rate_set(rl, SROCE_RATE_SRC_QP, MBIT10);
	sent = sroce_rate_sent(rl);
	rate_gate_owe(test, rl, 12500);
	KUNIT_EXPECT_EQ(test, sroce_rate_sent(rl) - sent,
			MBIT10_DEPTH_BYTES + 12500ULL);
	sroce_rate_refund(rl, MBIT10_DEPTH_BYTES + 12500);
	KUNIT_EXPECT_EQ(test, sroce_rate_sent(rl), sent);
	KUNIT_EXPECT_TRUE(test, sroce_rate_open(rl, SROCE_RATE_REQ));
	KUNIT_EXPECT_EQ(test, rl->closed, 0ULL);

	sroce_rate_refund(rl, U32_MAX);
	KUNIT_EXPECT_EQ(test, sroce_rate_sent(rl), 0ULL);
	KUNIT_EXPECT_LE(test, rl->tb.credit, (s64)SROCE_RATE_LATE_NS);
	/* unlimited: nothing to give back */
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 0);
	sroce_rate_refund(rl, 1000);
	KUNIT_EXPECT_EQ(test, rl->tb.credit, 0LL);
}

/*
 * The QP is busy while either engine is: the requester running out of
 * work leaves the credit a busy responder made up for a late wake-up,
 * and the bucket is cut to its depth once both have run out. A QP moved
 * to RESET, or no longer limited, starts with neither engine busy.
 */
static void rate_gate_busy_test(struct kunit *test)
{
	struct sroce_rate *rl = rate_gate_new(test, NULL, NULL);
	unsigned long flags;

	sroce_rate_set(rl, SROCE_RATE_SRC_QP, MBIT10);
	sroce_rate_charge(rl, SROCE_RATE_RESP, 1000);
	KUNIT_EXPECT_TRUE(test, rl->tb.held);
	spin_lock_irqsave(&rl->lock, flags);
	rl->tb.credit = SROCE_RATE_LATE_NS;	/* made up for a late run */
	spin_unlock_irqrestore(&rl->lock, flags);
	sroce_rate_idle(rl, SROCE_RATE_REQ);
	KUNIT_EXPECT_TRUE(test, rl->tb.held);
	KUNIT_EXPECT_EQ(test, rl->tb.credit, (s64)SROCE_RATE_LATE_NS);
	sroce_rate_idle(rl, SROCE_RATE_RESP);
	KUNIT_EXPECT_FALSE(test, rl->tb.held);
	KUNIT_EXPECT_EQ(test, rl->tb.credit, MBIT10_DEPTH);

	/* the other way round */
	sroce_rate_charge(rl, SROCE_RATE_REQ, 1000);
	sroce_rate_charge(rl, SROCE_RATE_RESP, 1000);
	sroce_rate_idle(rl, SROCE_RATE_RESP);
	KUNIT_EXPECT_TRUE(test, rl->tb.held);
	sroce_rate_idle(rl, SROCE_RATE_REQ);
	KUNIT_EXPECT_FALSE(test, rl->tb.held);

	sroce_rate_charge(rl, SROCE_RATE_RESP, 1000);
	sroce_rate_reset(rl);
	KUNIT_EXPECT_EQ(test, rl->busy, 0UL);
	sroce_rate_charge(rl, SROCE_RATE_RESP, 1000);
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 0);
	KUNIT_EXPECT_EQ(test, rl->busy, 0UL);
	KUNIT_EXPECT_FALSE(test, rl->tb.held);
}

/* 1 Mbit/s, and 1,250,000 bytes owed: 10 s */
#define HELD_BPS	125000ULL
#define HELD_OWED	1250000U

/* A gate of @w's task only, holding it back by 10 s. */
static struct sroce_rate *rate_gate_held(struct kunit *test,
					 struct rate_waiter *w)
{
	struct sroce_rate *rl = rate_gate_new(test, &w->task, NULL);

	sroce_rate_set(rl, SROCE_RATE_SRC_QP, HELD_BPS);
	rate_gate_owe(test, rl, HELD_OWED);
	KUNIT_ASSERT_FALSE(test, sroce_rate_open(rl, SROCE_RATE_REQ));
	return rl;
}

/*
 * A lower limit from another source while held back: the timer moves to
 * the end of the longer debt (the owed bytes at 500 kbit/s: 20 s); taking
 * every limit away then frees the engine at once.
 */
static void rate_gate_cut_test(struct kunit *test)
{
	struct rate_waiter *w = rate_waiter_new(test);
	struct sroce_rate *rl = rate_gate_held(test, w);
	u64 was = rate_gate_paid_at(rl), paid;
	unsigned long waiting;

	sroce_rate_set(rl, SROCE_RATE_SRC_CC, HELD_BPS / 2);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), HELD_BPS / 2);
	paid = rate_gate_paid_at(rl);
	KUNIT_EXPECT_GT(test, paid, was + 5 * NSEC_PER_SEC);
	KUNIT_EXPECT_TRUE(test, hrtimer_is_queued(&rl->timer));
	KUNIT_EXPECT_GE(test, (u64)ktime_to_ns(hrtimer_get_expires(&rl->timer)),
			paid);
	KUNIT_EXPECT_EQ(test, atomic_read(&w->calls), 0);

	sroce_rate_set(rl, SROCE_RATE_SRC_CC, 0);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), HELD_BPS);
	sroce_rate_set(rl, SROCE_RATE_SRC_QP, 0);
	waiting = READ_ONCE(rl->waiting);
	KUNIT_EXPECT_EQ(test, waiting, 0UL);
	KUNIT_EXPECT_TRUE(test, rate_waiter_wait(w));
	KUNIT_EXPECT_TRUE(test, sroce_rate_open(rl, SROCE_RATE_REQ));
}

/*
 * A limit raised while held back: the debt, converted, is at most 100 ms
 * (1,250,000 bytes at 100 Mbit/s), and the timer runs the engine once it
 * is paid, not 10 s later.
 */
static void rate_gate_raise_test(struct kunit *test)
{
	struct rate_waiter *w = rate_waiter_new(test);
	struct sroce_rate *rl = rate_gate_held(test, w);
	u64 now, paid;

	sroce_rate_set(rl, SROCE_RATE_SRC_QP, HELD_BPS * 100);
	now = ktime_get_ns();
	paid = rate_gate_paid_at(rl);
	KUNIT_EXPECT_LE(test, paid, now + 100 * NSEC_PER_MSEC);
	KUNIT_ASSERT_TRUE(test, rate_waiter_wait(w));
	KUNIT_EXPECT_GE(test, w->first_ns, paid);
	KUNIT_EXPECT_EQ(test, atomic_read(&w->calls), 1);
	KUNIT_EXPECT_EQ(test, rl->closed, 1ULL);
}

/* ---- the gate of a QP pair ---------------------------------------------- */

#define RATE_WR_ID	0x5ea7ULL
#define XFER_LEN	4000	/* one packet at path MTU 4096 */
/* WRITE from RATE_A's MR to RATE_B's, READ back: both cross a page */
#define WR_LOFF		100
#define WR_ROFF		200
#define RD_LOFF		50
#define RD_ROFF		300
/* an atomic's target in RATE_B's MR (8-aligned), its result in RATE_A's */
#define AT_ROFF		(PAGE_SIZE + 8)
#define AT_LOFF		1024

/* Post a signaled WRITE or READ of XFER_LEN bytes from RATE_A. */
static void rate_post_rdma(struct kunit *test, struct rate_pair *f,
			   enum ib_wr_opcode opcode, u32 lkey, u32 loff,
			   u32 roff)
{
	struct ib_sge sge = {
		.addr = rate_mr_iova(f, RATE_A, loff),
		.length = XFER_LEN,
		.lkey = lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = RATE_WR_ID,
			.opcode = opcode,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = rate_mr_iova(f, RATE_B, roff),
		.rkey = f->mr[RATE_B].ibmr->rkey,
	};
	const struct ib_send_wr *bad;

	KUNIT_ASSERT_EQ(test, sroce_post_send(&f->qp[RATE_A]->ibqp, &wr.wr,
					      &bad), 0);
}

/*
 * IB_QP_RATE_LIMIT in RTS, in place, as query_qp reports it back: the
 * gate's rate in bytes, a full bucket, 0 for no limit. A QP moved to
 * RESET while its gate holds it back keeps its limit, with its timer
 * stopped, nothing waiting, and a full bucket.
 */
static void rate_qp_limit_test(struct kunit *test)
{
	struct rate_pair *f = rate_pair_new(test);
	struct sroce_rate *rl = &f->qp[RATE_A]->rate;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct ib_qp_init_attr init;

	rate_pair_limit(test, f, RATE_A, 0);
	rate_pair_limit(test, f, RATE_A, 10000);
	KUNIT_EXPECT_EQ(test, rl->tb.credit, MBIT10_DEPTH);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&f->qp[RATE_B]->rate), 0ULL);
	rate_pair_limit(test, f, RATE_A, U32_MAX);
	rate_pair_limit(test, f, RATE_A, 0);
	KUNIT_EXPECT_TRUE(test, sroce_rate_open(rl, SROCE_RATE_REQ));

	rate_pair_throttle(test, f, RATE_A);
	rate_post_rdma(test, f, IB_WR_RDMA_WRITE, f->mr[RATE_A].ibmr->lkey,
		       WR_LOFF, WR_ROFF);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_turned_away,
						     RATE_A));
	KUNIT_ASSERT_EQ(test, sroce_modify_qp(&f->qp[RATE_A]->ibqp, &attr,
					      IB_QP_STATE, NULL), 0);
	KUNIT_EXPECT_FALSE(test, hrtimer_is_queued(&rl->timer));
	KUNIT_EXPECT_EQ(test, rl->waiting, 0UL);
	KUNIT_EXPECT_EQ(test, rl->tb.credit, rl->tb.depth);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(rl), RATE_SLOW_KBPS * 125ULL);
	KUNIT_ASSERT_EQ(test, sroce_query_qp(&f->qp[RATE_A]->ibqp, &attr, 0,
					     &init), 0);
	KUNIT_EXPECT_EQ(test, attr.rate_limit, (u32)RATE_SLOW_KBPS);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RESET);
}

/*
 * A WRITE whose SGE names no MR, posted while the gate holds the
 * requester back: nothing happens while it is held, which shows that the
 * key was not looked up (with the gate open the WQE fails at once). Once
 * the debt is paid the timer runs the requester, and the WQE fails with
 * IB_WC_LOC_PROT_ERR without a packet.
 */
static void rate_qp_bad_lkey_test(struct kunit *test)
{
	struct rate_pair *f = rate_pair_new(test);
	struct ib_wc *wc = &f->wc[RATE_A];
	struct rate_snap s, now;

	rate_pair_throttle(test, f, RATE_A);
	rate_pair_snap(f, &s);
	/* the MR's key with another key byte: a stale key */
	rate_post_rdma(test, f, IB_WR_RDMA_WRITE,
		       f->mr[RATE_A].ibmr->lkey ^ 0x80, WR_LOFF, WR_ROFF);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_turned_away,
						     RATE_A));
	rate_pair_expect_held(test, f, RATE_A, &s);

	rate_pair_release(test, f, RATE_A);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_completed,
						     RATE_A));
	KUNIT_EXPECT_EQ(test, wc->status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc->wr_id, RATE_WR_ID);
	/* the timer ran it once: it was not turned away again */
	KUNIT_EXPECT_EQ(test, f->qp[RATE_A]->rate.closed,
			f->closed0[RATE_A] + 1);
	rate_pair_snap(f, &now);
	KUNIT_EXPECT_EQ(test, now.caught, 0);
	KUNIT_EXPECT_EQ(test, now.sent, s.sent);
}

/*
 * A WRITE posted while the gate holds the requester back: the target is
 * untouched until the gate opens. The source is rewritten meanwhile: the
 * packet carries the new bytes, read when it is built, after the gate.
 */
static void rate_qp_write_test(struct kunit *test)
{
	struct rate_pair *f = rate_pair_new(test);
	struct ib_wc *wc = &f->wc[RATE_A];
	struct rate_snap s, now;

	rate_mr_fill(f, RATE_A, WR_LOFF, XFER_LEN, 1);
	rate_pair_throttle(test, f, RATE_A);
	rate_pair_snap(f, &s);
	rate_post_rdma(test, f, IB_WR_RDMA_WRITE, f->mr[RATE_A].ibmr->lkey,
		       WR_LOFF, WR_ROFF);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_turned_away,
						     RATE_A));
	rate_pair_expect_held(test, f, RATE_A, &s);
	KUNIT_EXPECT_EQ(test, rate_mr_first_wrong(f, RATE_B, WR_ROFF - 1,
						  XFER_LEN + 2, -1),
			XFER_LEN + 2U);
	rate_mr_fill(f, RATE_A, WR_LOFF, XFER_LEN, 2);

	rate_pair_release(test, f, RATE_A);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_completed,
						     RATE_A));
	KUNIT_EXPECT_EQ(test, wc->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc->opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, rate_mr_first_wrong(f, RATE_B, WR_ROFF,
						  XFER_LEN, 2), XFER_LEN);
	KUNIT_EXPECT_EQ(test, *rate_mr_at(f, RATE_B, WR_ROFF - 1),
			SROCE_TEST_SENTINEL);
	KUNIT_EXPECT_EQ(test, *rate_mr_at(f, RATE_B, WR_ROFF + XFER_LEN),
			SROCE_TEST_SENTINEL);
	KUNIT_EXPECT_EQ(test, f->qp[RATE_A]->rate.closed,
			f->closed0[RATE_A] + 1);
	/* the WRITE and its ACK */
	rate_pair_snap(f, &now);
	KUNIT_EXPECT_EQ(test, now.caught, 2);
	KUNIT_EXPECT_EQ(test, now.sent, s.sent + 2);
}

struct rate_read_case {
	const char *name;
	bool invalidate;
};

static const struct rate_read_case rate_read_cases[] = {
	{ "served once the gate opens", false },
	{ "R_Key invalidated while held: looked up after", true },
};

static void rate_read_desc(const struct rate_read_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rate_read, rate_read_cases, rate_read_desc);

/*
 * A READ to a QP whose gate holds its responder back: the request is
 * executed, the response is not built, and nothing comes back until the
 * timer runs the responder; then the data arrives intact. The R_Key is
 * looked up for the response when the gate opens: invalidated while the
 * responder is held, the READ ends with a remote access error.
 */
static void rate_qp_read_test(struct kunit *test)
{
	const struct rate_read_case *c = test->param_value;
	struct rate_pair *f = rate_pair_new(test);
	struct ib_wc *wc = &f->wc[RATE_A];
	struct rate_snap s;

	rate_mr_fill(f, RATE_B, RD_ROFF, XFER_LEN, 3);
	rate_pair_throttle(test, f, RATE_B);
	rate_post_rdma(test, f, IB_WR_RDMA_READ, f->mr[RATE_A].ibmr->lkey,
		       RD_LOFF, RD_ROFF);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_turned_away,
						     RATE_B));
	/* the request went; nothing after it */
	rate_pair_snap(f, &s);
	KUNIT_EXPECT_EQ(test, s.caught, 1);
	rate_pair_expect_held(test, f, RATE_B, &s);
	KUNIT_EXPECT_EQ(test, rate_mr_first_wrong(f, RATE_A, RD_LOFF,
						  XFER_LEN, -1), XFER_LEN);
	if (c->invalidate)
		KUNIT_EXPECT_EQ(test,
				sroce_key_invalidate(f->t.sdev, f->t.pd,
						     f->mr[RATE_B].ibmr->rkey),
				IB_WC_SUCCESS);

	rate_pair_release(test, f, RATE_B);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_completed,
						     RATE_A));
	KUNIT_EXPECT_EQ(test, wc->wr_id, RATE_WR_ID);
	KUNIT_EXPECT_EQ(test, f->qp[RATE_B]->rate.closed,
			f->closed0[RATE_B] + 1);
	if (c->invalidate) {
		KUNIT_EXPECT_EQ(test, wc->status, IB_WC_REM_ACCESS_ERR);
		KUNIT_EXPECT_EQ(test, rate_mr_first_wrong(f, RATE_A, RD_LOFF,
							  XFER_LEN, -1),
				XFER_LEN);
		return;
	}
	KUNIT_EXPECT_EQ(test, wc->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc->opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, rate_mr_first_wrong(f, RATE_A, RD_LOFF,
						  XFER_LEN, 3), XFER_LEN);
	KUNIT_EXPECT_EQ(test, *rate_mr_at(f, RATE_A, RD_LOFF + XFER_LEN),
			SROCE_TEST_SENTINEL);
}

/* Has the QP at @side's gate found both its engines out of work? */
static bool rate_pair_idle(struct rate_pair *f, int side)
{
	struct sroce_rate *rl = &f->qp[side]->rate;
	unsigned long flags;
	bool held;

	spin_lock_irqsave(&rl->lock, flags);
	held = rl->tb.held;
	spin_unlock_irqrestore(&rl->lock, flags);
	return !held;
}

/*
 * A limited QP that only answers READs: once its responder has sent the
 * response and found no more requests, the QP is idle, and a pause
 * before the next READ is not made up for by a burst. Its requester
 * never runs, so the responder has to say so.
 */
static void rate_qp_read_idle_test(struct kunit *test)
{
	struct rate_pair *f = rate_pair_new(test);
	struct sroce_rate *rl = &f->qp[RATE_B]->rate;
	u64 sent = sroce_rate_sent(rl);

	rate_mr_fill(f, RATE_B, RD_ROFF, XFER_LEN, 5);
	rate_pair_limit(test, f, RATE_B, RATE_FAST_KBPS);
	rate_post_rdma(test, f, IB_WR_RDMA_READ, f->mr[RATE_A].ibmr->lkey,
		       RD_LOFF, RD_ROFF);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_completed,
						     RATE_A));
	KUNIT_EXPECT_EQ(test, f->wc[RATE_A].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, rate_mr_first_wrong(f, RATE_A, RD_LOFF,
						  XFER_LEN, 5), XFER_LEN);
	/* the response went through the gate */
	KUNIT_EXPECT_GT(test, sroce_rate_sent(rl) - sent, (u64)XFER_LEN);
	KUNIT_EXPECT_TRUE(test, rate_pair_pump_until(f, rate_pair_idle,
						     RATE_B));
	KUNIT_EXPECT_EQ(test, READ_ONCE(rl->busy), 0UL);
}

/*
 * A FETCH_ADD to a QP whose gate holds its responder back is not
 * executed until its acknowledgment may leave: the target keeps its
 * value while the responder is held, and changes once the timer runs it.
 */
static void rate_qp_atomic_test(struct kunit *test)
{
	struct rate_pair *f = rate_pair_new(test);
	struct ib_wc *wc = &f->wc[RATE_A];
	struct ib_sge sge = {
		.addr = rate_mr_iova(f, RATE_A, AT_LOFF),
		.length = sizeof(u64),
		.lkey = f->mr[RATE_A].ibmr->lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = RATE_WR_ID,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = rate_mr_iova(f, RATE_B, AT_ROFF),
		.compare_add = 5,
		.rkey = f->mr[RATE_B].ibmr->rkey,
	};
	u64 val = 0x1000, orig;
	const struct ib_send_wr *bad;
	struct rate_snap s;

	memcpy(rate_mr_at(f, RATE_B, AT_ROFF), &val, sizeof(val));
	rate_pair_throttle(test, f, RATE_B);
	KUNIT_ASSERT_EQ(test, sroce_post_send(&f->qp[RATE_A]->ibqp, &wr.wr,
					      &bad), 0);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_turned_away,
						     RATE_B));
	rate_pair_snap(f, &s);
	rate_pair_expect_held(test, f, RATE_B, &s);
	memcpy(&val, rate_mr_at(f, RATE_B, AT_ROFF), sizeof(val));
	KUNIT_EXPECT_EQ(test, val, 0x1000ULL);

	rate_pair_release(test, f, RATE_B);
	KUNIT_ASSERT_TRUE(test, rate_pair_pump_until(f, rate_pair_completed,
						     RATE_A));
	KUNIT_EXPECT_EQ(test, wc->status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc->opcode, IB_WC_FETCH_ADD);
	memcpy(&orig, rate_mr_at(f, RATE_A, AT_LOFF), sizeof(orig));
	memcpy(&val, rate_mr_at(f, RATE_B, AT_ROFF), sizeof(val));
	KUNIT_EXPECT_EQ(test, orig, 0x1000ULL);
	KUNIT_EXPECT_EQ(test, val, 0x1005ULL);
	KUNIT_EXPECT_EQ(test, f->qp[RATE_B]->rate.closed,
			f->closed0[RATE_B] + 1);
}

static struct kunit_case sroce_rate_test_cases[] = {
	KUNIT_CASE_PARAM(rate_tb_new_test, tb_new_gen_params),
	KUNIT_CASE_PARAM(rate_tb_cost_test, tb_cost_gen_params),
	KUNIT_CASE(rate_tb_refill_test),
	KUNIT_CASE(rate_tb_deficit_test),
	KUNIT_CASE(rate_tb_backwards_test),
	KUNIT_CASE(rate_tb_late_test),
	KUNIT_CASE(rate_tb_paced_test),
	KUNIT_CASE(rate_tb_change_test),
	KUNIT_CASE(rate_tb_slice_test),
	KUNIT_CASE(rate_from_kbps_test),
	KUNIT_CASE(rate_from_static_test),
	KUNIT_CASE(rate_lowest_test),
	KUNIT_CASE(rate_gate_timer_test),
	KUNIT_CASE(rate_gate_cut_test),
	KUNIT_CASE(rate_gate_raise_test),
	KUNIT_CASE(rate_gate_slice_test),
	KUNIT_CASE(rate_gate_refund_test),
	KUNIT_CASE(rate_gate_busy_test),
	KUNIT_CASE(rate_qp_limit_test),
	KUNIT_CASE(rate_qp_bad_lkey_test),
	KUNIT_CASE(rate_qp_write_test),
	KUNIT_CASE_PARAM(rate_qp_read_test, rate_read_gen_params),
	KUNIT_CASE(rate_qp_atomic_test),
	KUNIT_CASE(rate_qp_read_idle_test),
	{}
};

static struct kunit_suite sroce_rate_test_suite = {
	.name = "sroce_rate",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_rate_test_cases,
};

kunit_test_suites(&sroce_rate_test_suite);
