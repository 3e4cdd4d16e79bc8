// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for congestion control: the DCQCN reaction point's
 * algorithm (sroce_dcqcn.c), the device parameters in the algorithm's
 * units (sroce_cc.c), the ECN bits packets leave with, CNPs as built and
 * parsed (sroce_pkt.c), and both ends on an RC QP through the receive
 * path (sroce_rcv.c, sroce_cnp.c): a CE-marked request makes the QP send
 * its peer a CNP, a CNP from the peer cuts the QP's rate at its gate.
 *
 * The algorithm is driven with hand-made parameters of round numbers:
 * each expected rate and alpha below was worked out by hand from the
 * rules of Zhu et al. (SIGCOMM 2015) as sroce_dcqcn.c states them, the
 * arithmetic in the comments. The CNP reference is the ConnectX-4 Lx
 * capture of icrc_reference.py (the sroce_icrc and sroce_hdr suites
 * check its ICRC and BTH fields); here it must parse as a CNP and cut a
 * QP it names.
 *
 * The QP tests (cc_fix.h) give the QP a route of their own that records
 * what is sent on it: the CNPs the notification point sends are seen as
 * they would leave, IP header on.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/skbuff.h>
#include <net/checksum.h>
#include <net/inet_ecn.h>
#include <rdma/ib_pack.h>

#include "cc_fix.h"
#include "core/sroce_cc.h"
#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "test_util.h"
#include "transport/sroce_dcqcn.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_rate.h"
#include "transport/sroce_rcv.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_pkt.h"

#define ONE		SROCE_DCQCN_ALPHA_ONE
#define CUT		SROCE_DCQCN_CUT
#define FAST		SROCE_DCQCN_FAST
#define ADD		SROCE_DCQCN_ADDITIVE
#define HYPER		SROCE_DCQCN_HYPER
#define IDLE		SROCE_DCQCN_IDLE

/* ---- the algorithm ------------------------------------------------------ */

#define DQ_MAX		1000000ULL	/* max_rate of dq_cfg(), bytes/s */
#define DQ_T0		1000000ULL	/* when the first CNP comes, ns */

/*
 * Round numbers: g is 64/1024 = 1/16, so that (1 - g) * alpha and
 * (1 - g) * alpha + g come out exactly in 1/2^20ths; F is 3.
 */
static void dq_cfg(struct sroce_dcqcn_cfg *c)
{
	*c = (struct sroce_dcqcn_cfg) {
		.min_rate = 10000, .max_rate = DQ_MAX, .ai_rate = 10000,
		.hai_rate = 40000, .byte_reset = 100000,
		.reduce_period_ns = 50000, .g = 64, .initial_alpha = 1024,
		.threshold = 3, .max_dec = 50,
	};
}

static void dq_expect(struct kunit *test, const struct sroce_dcqcn_state *s,
		      u64 rc, u64 rt, u32 alpha, u8 stage)
{
	KUNIT_EXPECT_EQ(test, s->rc, rc);
	KUNIT_EXPECT_EQ(test, s->rt, rt);
	KUNIT_EXPECT_EQ(test, s->alpha, alpha);
	KUNIT_EXPECT_EQ(test, s->stage, stage);
}

struct dq_first_case {
	const char *name;
	u32 initial_alpha;
	u32 max_dec;
	u64 min_rate;
	u64 rc;
	u32 alpha;
};

static const struct dq_first_case dq_first_cases[] = {
	/* Rc * (1 - 1/2); alpha (1 - g) * 1 + g = 1 */
	{ "alpha 1: half", 1024, 50, 10000, 500000, ONE },
	/*
	 * alpha 307200/2^20: a cut of 1e6 * 307200 / 2^21 = 146484.375;
	 * alpha 307200 - 307200 / 16 + 65536
	 */
	{ "alpha 300/1024", 300, 50, 10000, 853516, 353536 },
	{ "alpha 1, max_dec 20%", 1024, 20, 10000, 800000, ONE },
	{ "alpha 1, min_rate above the half", 1024, 50, 600000, 600000, ONE },
	/* limited at max_rate; alpha 0 + g */
	{ "alpha 0: no cut", 0, 50, 10000, DQ_MAX, 65536 },
};

static void dq_first_desc(const struct dq_first_case *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dq_first, dq_first_cases, dq_first_desc);

/* The first CNP starts the QP at max_rate and cuts it by alpha / 2. */
static void dq_first_cut_test(struct kunit *test)
{
	const struct dq_first_case *k = test->param_value;
	struct sroce_dcqcn_state s = {};
	struct sroce_dcqcn_cfg c;

	dq_cfg(&c);
	c.initial_alpha = k->initial_alpha;
	c.max_dec = k->max_dec;
	c.min_rate = k->min_rate;
	KUNIT_EXPECT_TRUE(test, sroce_dcqcn_cut(&s, &c, DQ_T0));
	KUNIT_EXPECT_TRUE(test, s.active);
	KUNIT_EXPECT_TRUE(test, s.cnp_seen);
	KUNIT_EXPECT_EQ(test, s.last_cut, DQ_T0);
	dq_expect(test, &s, k->rc, DQ_MAX, k->alpha, CUT);
}

/*
 * A second CNP within reduce_period only marks the alpha period; one at
 * the period's end cuts again from the current rate and starts the
 * increase stages over.
 */
static void dq_reduce_period_test(struct kunit *test)
{
	struct sroce_dcqcn_state s = {};
	struct sroce_dcqcn_cfg c;

	dq_cfg(&c);
	c.initial_alpha = 512;
	/* alpha 1/2: Rc 750000; alpha 2^19 - 2^15 + 2^16 = 557056 */
	KUNIT_ASSERT_TRUE(test, sroce_dcqcn_cut(&s, &c, DQ_T0));
	dq_expect(test, &s, 750000, DQ_MAX, 557056, CUT);

	s.cnp_seen = false;
	s.stage = FAST;
	s.t_stage = 2;
	s.b_stage = 1;
	s.bytes = 5000;
	KUNIT_EXPECT_FALSE(test, sroce_dcqcn_cut(&s, &c, DQ_T0 + 49999));
	KUNIT_EXPECT_TRUE(test, s.cnp_seen);
	dq_expect(test, &s, 750000, DQ_MAX, 557056, FAST);
	KUNIT_EXPECT_EQ(test, s.t_stage, 2U);
	KUNIT_EXPECT_EQ(test, s.last_cut, DQ_T0);

	/*
	 * 750000 * 557056 / 2^21 = 199218.75; alpha
	 * 557056 - 34816 + 65536 = 587776
	 */
	KUNIT_EXPECT_TRUE(test, sroce_dcqcn_cut(&s, &c, DQ_T0 + 50000));
	dq_expect(test, &s, 550782, 750000, 587776, CUT);
	KUNIT_EXPECT_EQ(test, s.t_stage, 0U);
	KUNIT_EXPECT_EQ(test, s.b_stage, 0U);
	KUNIT_EXPECT_EQ(test, s.bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, s.last_cut, DQ_T0 + 50000);
}

/* alpha loses g of itself per period without a CNP, and only then. */
static void dq_alpha_tick_test(struct kunit *test)
{
	struct sroce_dcqcn_state s = { .alpha = BIT(19), .cnp_seen = true };
	struct sroce_dcqcn_cfg c;

	dq_cfg(&c);
	sroce_dcqcn_alpha_tick(&s, &c);
	KUNIT_EXPECT_EQ(test, s.alpha, (u32)BIT(19));
	KUNIT_EXPECT_FALSE(test, s.cnp_seen);
	sroce_dcqcn_alpha_tick(&s, &c);
	KUNIT_EXPECT_EQ(test, s.alpha, 491520U);	/* 2^19 * 15/16 */
	sroce_dcqcn_alpha_tick(&s, &c);
	KUNIT_EXPECT_EQ(test, s.alpha, 460800U);
	s.cnp_seen = true;
	sroce_dcqcn_alpha_tick(&s, &c);
	KUNIT_EXPECT_EQ(test, s.alpha, 460800U);
	sroce_dcqcn_alpha_tick(&s, &c);
	KUNIT_EXPECT_EQ(test, s.alpha, 432000U);

	/* 1/2^20ths keep a decay that 1/1024ths would round away */
	c.g = 4;
	s.alpha = 256;
	sroce_dcqcn_alpha_tick(&s, &c);
	KUNIT_EXPECT_EQ(test, s.alpha, 255U);
}

struct dq_rise_case {
	const char *name;
	u32 t, b;	/* the stages, the event's counted */
	u64 rc, rt;
	u64 want_rc, want_rt;
	u8 stage;
};

/* F = 3, ai 10000, hai 40000, max 1e6; Rc goes halfway, toward Rt. */
static const struct dq_rise_case dq_rise_cases[] = {
	/* 800000 - 399999 / 2 */
	{ "fast recovery", 1, 0, 400001, 800000, 600001, 800000, FAST },
	{ "fast recovery, both below F", 2, 2, 400001, 800000, 600001, 800000,
	  FAST },
	/* Rt 810000, 810000 - 409999 / 2 */
	{ "additive: timer at F", 3, 0, 400001, 800000, 605001, 810000, ADD },
	{ "additive: bytes past F", 0, 7, 400001, 800000, 605001, 810000,
	  ADD },
	{ "additive: one at F, one past", 3, 9, 400001, 800000, 605001, 810000,
	  ADD },
	/* Rt + (4 - 3) * 40000 = 840000, 840000 - 439999 / 2 */
	{ "hyper: both past F", 4, 6, 400001, 800000, 620001, 840000, HYPER },
	/* Rt + (6 - 3) * 40000 = 920000, 920000 - 519999 / 2 */
	{ "hyper: 3 stages past F", 6, 8, 400001, 800000, 660001, 920000,
	  HYPER },
	/* 950000 + 120000 capped at 1e6, 1e6 - 599999 / 2 */
	{ "hyper: Rt capped at max_rate", 6, 8, 400001, 950000, 700001,
	  DQ_MAX, HYPER },
	{ "additive: Rt capped at max_rate", 3, 0, 999000, 995000, 999500,
	  DQ_MAX, ADD },
	{ "one below max_rate", 1, 0, 999998, DQ_MAX, 999999, DQ_MAX, FAST },
	{ "reaches max_rate: limit lifted", 1, 0, 999999, DQ_MAX, DQ_MAX,
	  DQ_MAX, IDLE },
	/* rp_max_rate_mbps lowered below Rc and Rt: free at the new max */
	{ "max_rate lowered below the rate", 1, 0, 3000000, 4000000, DQ_MAX,
	  DQ_MAX, IDLE },
};

static void dq_rise_desc(const struct dq_rise_case *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dq_rise, dq_rise_cases, dq_rise_desc);

static void dq_rise_test(struct kunit *test)
{
	const struct dq_rise_case *k = test->param_value;
	struct sroce_dcqcn_state s = {
		.active = true, .stage = CUT, .rc = k->rc, .rt = k->rt,
		.alpha = 12345, .t_stage = k->t, .b_stage = k->b,
	};
	struct sroce_dcqcn_cfg c;

	dq_cfg(&c);
	sroce_dcqcn_rise(&s, &c);
	dq_expect(test, &s, k->want_rc, k->want_rt, 12345, k->stage);
	KUNIT_EXPECT_EQ(test, s.active, k->stage != IDLE);
	KUNIT_EXPECT_EQ(test, s.t_stage, k->t);
	KUNIT_EXPECT_EQ(test, s.b_stage, k->b);
}

/*
 * A timer event first takes the byte counter's stages for what was sent
 * (byte_reset 100000), each one a rise, then its own.
 */
static void dq_timer_bytes_test(struct kunit *test)
{
	struct sroce_dcqcn_state s = {};
	struct sroce_dcqcn_cfg c;

	dq_cfg(&c);
	sroce_dcqcn_cut(&s, &c, DQ_T0);
	sroce_dcqcn_cut(&s, &c, DQ_T0 + 50000);
	dq_expect(test, &s, 250000, 500000, ONE, CUT);

	/* no byte stage; fast recovery to 375000 */
	sroce_dcqcn_timer_event(&s, &c, 60000);
	dq_expect(test, &s, 375000, 500000, ONE, FAST);
	KUNIT_EXPECT_EQ(test, s.bytes, 60000ULL);

	/* 120000 bytes: a byte stage (437500), then the timer's (468750) */
	sroce_dcqcn_timer_event(&s, &c, 60000);
	dq_expect(test, &s, 468750, 500000, ONE, FAST);
	KUNIT_EXPECT_EQ(test, s.b_stage, 1U);
	KUNIT_EXPECT_EQ(test, s.t_stage, 2U);
	KUNIT_EXPECT_EQ(test, s.bytes, 20000ULL);

	/*
	 * 270000 bytes, two byte stages: b 2 fast (484375), b 3 at F
	 * additive (Rt 510000, Rc 497188); then t 3 additive (Rt 520000,
	 * Rc 520000 - 22812 / 2)
	 */
	sroce_dcqcn_timer_event(&s, &c, 250000);
	dq_expect(test, &s, 508594, 520000, ONE, ADD);
	KUNIT_EXPECT_EQ(test, s.b_stage, 3U);
	KUNIT_EXPECT_EQ(test, s.t_stage, 3U);
	KUNIT_EXPECT_EQ(test, s.bytes, 70000ULL);
}

/*
 * 2 MB sent at once after a cut to 500000: each byte stage halves the
 * gap to Rt = max_rate (rounded down), 500000 needs 19 of them to close.
 * The QP is then free: the 20th stage and the timer's are not taken, and
 * an event of a QP not limited changes nothing.
 */
static void dq_timer_ceiling_test(struct kunit *test)
{
	struct sroce_dcqcn_state s = {};
	struct sroce_dcqcn_cfg c;

	dq_cfg(&c);
	sroce_dcqcn_cut(&s, &c, DQ_T0);
	sroce_dcqcn_timer_event(&s, &c, 2000000);
	KUNIT_EXPECT_FALSE(test, s.active);
	dq_expect(test, &s, DQ_MAX, DQ_MAX, ONE, IDLE);
	KUNIT_EXPECT_EQ(test, s.b_stage, 19U);
	KUNIT_EXPECT_EQ(test, s.t_stage, 0U);
	KUNIT_EXPECT_EQ(test, s.bytes, 100000ULL);

	sroce_dcqcn_timer_event(&s, &c, 500000);
	KUNIT_EXPECT_FALSE(test, s.active);
	dq_expect(test, &s, DQ_MAX, DQ_MAX, ONE, IDLE);
	KUNIT_EXPECT_EQ(test, s.b_stage, 19U);
	KUNIT_EXPECT_EQ(test, s.t_stage, 0U);
}

struct dq_step {
	char ev;	/* 'c' a CNP @arg ns after DQ_T0, 'a' alpha period, */
	u64 arg;	/* 't' a timer event with @arg bytes sent */
	u64 rc, rt;
	u32 alpha;
	u8 stage;
};

/* Worked out by hand; alpha decays by 1/16 (61440 of ONE, and so on). */
static const struct dq_step dq_steps[] = {
	{ 'c', 0, 500000, 1000000, ONE, CUT },
	{ 'a', 0, 500000, 1000000, ONE, CUT },		/* CNP seen */
	{ 'a', 0, 500000, 1000000, 983040, CUT },
	/* cut 500000 * 983040 / 2^21 = 234375; 983040 - 61440 + 65536 */
	{ 'c', 50000, 265625, 500000, 987136, CUT },
	{ 'a', 0, 265625, 500000, 987136, CUT },
	{ 'a', 0, 265625, 500000, 925440, CUT },
	/* cut 265625 * 925440 / 2^21 = 117216.2; 925440 - 57840 + 65536 */
	{ 'c', 100000, 148409, 265625, 933136, CUT },
	{ 't', 0, 207017, 265625, 933136, FAST },	/* - 117216 / 2 */
	{ 't', 0, 236321, 265625, 933136, FAST },
	{ 'a', 0, 236321, 265625, 933136, FAST },	/* CNP seen */
	{ 't', 0, 255973, 275625, 933136, ADD },	/* t = F */
	{ 't', 0, 270799, 285625, 933136, ADD },
	{ 'a', 0, 270799, 285625, 874815, ADD },	/* - 58321 */
	/* b 1 and 2 additive (283212, 294419), then t 5 */
	{ 't', 250000, 305022, 315625, 874815, ADD },
	{ 't', 0, 315324, 325625, 874815, ADD },
	/* b 3 = F additive, b 4 hyper (+40000), t 7 hyper (min 4 - F) */
	{ 't', 150000, 383088, 415625, 874815, HYPER },
	{ 't', 0, 419357, 455625, 874815, HYPER },
};

/* Three cuts, alpha periods and increase events, state after each. */
static void dq_sequence_test(struct kunit *test)
{
	struct sroce_dcqcn_state s = {};
	struct sroce_dcqcn_cfg c;
	unsigned int i;
	bool cut;

	dq_cfg(&c);
	for (i = 0; i < ARRAY_SIZE(dq_steps); i++) {
		const struct dq_step *st = &dq_steps[i];

		if (st->ev == 'c') {
			cut = sroce_dcqcn_cut(&s, &c, DQ_T0 + st->arg);
			KUNIT_EXPECT_TRUE_MSG(test, cut, "step %u", i);
		} else if (st->ev == 'a') {
			sroce_dcqcn_alpha_tick(&s, &c);
		} else {
			sroce_dcqcn_timer_event(&s, &c, st->arg);
		}
		KUNIT_EXPECT_EQ_MSG(test, s.rc, st->rc, "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, s.rt, st->rt, "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, s.alpha, st->alpha, "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, s.stage, st->stage, "step %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, s.active, "step %u", i);
	}
}

/* A new device's parameters, and what they are in the algorithm's units. */
static void dq_cfg_get_test(struct kunit *test)
{
	struct sroce_dcqcn_cfg c;
	struct sroce_cc cc;

	memset(&cc, 0xff, sizeof(cc));
	sroce_cc_init(&cc);
	KUNIT_EXPECT_EQ(test, cc.v[SROCE_CC_ECN], 1U);
	KUNIT_EXPECT_EQ(test, cc.v[SROCE_CC_NP], 1U);
	KUNIT_EXPECT_EQ(test, cc.v[SROCE_CC_RP], 1U);
	KUNIT_EXPECT_EQ(test, cc.v[SROCE_CC_CNP_INTERVAL], 50U);
	KUNIT_EXPECT_EQ(test, cc.v[SROCE_CC_RP_ALPHA_PERIOD], 55U);
	KUNIT_EXPECT_EQ(test, cc.v[SROCE_CC_RP_TIME_RESET], 300U);

	sroce_dcqcn_cfg_get(&c, &cc);
	/* Mbit/s * 125000 = bytes/s; us * 1000 = ns */
	KUNIT_EXPECT_EQ(test, c.min_rate, 125000ULL);
	KUNIT_EXPECT_EQ(test, c.max_rate, 12500000000ULL);
	KUNIT_EXPECT_EQ(test, c.ai_rate, 625000ULL);
	KUNIT_EXPECT_EQ(test, c.hai_rate, 6250000ULL);
	KUNIT_EXPECT_EQ(test, c.byte_reset, 2097152ULL);
	KUNIT_EXPECT_EQ(test, c.reduce_period_ns, 4000ULL);
	KUNIT_EXPECT_EQ(test, c.g, 4U);
	KUNIT_EXPECT_EQ(test, c.initial_alpha, 1024U);
	KUNIT_EXPECT_EQ(test, c.threshold, 5U);
	KUNIT_EXPECT_EQ(test, c.max_dec, 50U);

	/* the largest values sysfs takes do not overflow */
	cc.v[SROCE_CC_RP_MAX_RATE] = 10000000;
	cc.v[SROCE_CC_RP_REDUCE_PERIOD] = 1000000;
	cc.v[SROCE_CC_RP_BYTE_RESET] = U32_MAX;
	sroce_dcqcn_cfg_get(&c, &cc);
	KUNIT_EXPECT_EQ(test, c.max_rate, 1250000000000ULL);
	KUNIT_EXPECT_EQ(test, c.reduce_period_ns, 1000000000ULL);
	KUNIT_EXPECT_EQ(test, c.byte_reset, (u64)U32_MAX);

	/* a floor written above the ceiling is the ceiling */
	cc.v[SROCE_CC_RP_MAX_RATE] = 400;
	cc.v[SROCE_CC_RP_MIN_RATE] = 1000;
	sroce_dcqcn_cfg_get(&c, &cc);
	KUNIT_EXPECT_EQ(test, c.max_rate, 50000000ULL);
	KUNIT_EXPECT_EQ(test, c.min_rate, 50000000ULL);
}

/* ECT(0) where the path chose no ECN codepoint, with ecn_enable only. */
static void dq_tclass_test(struct kunit *test)
{
	static const struct { u8 ecn, in, out; } v[] = {
		{ 1, 0x00, 0x02 }, { 1, 0xb8, 0xba }, { 1, 0xc0, 0xc2 },
		{ 1, 0x01, 0x01 }, { 1, 0x02, 0x02 }, { 1, 0x03, 0x03 },
		{ 1, 0xb9, 0xb9 }, { 1, 0xbb, 0xbb },
		{ 0, 0x00, 0x00 }, { 0, 0xb8, 0xb8 }, { 0, 0x03, 0x03 },
	};
	struct sroce_cc cc;
	unsigned int i;

	sroce_cc_init(&cc);
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		cc.v[SROCE_CC_ECN] = v[i].ecn;
		KUNIT_EXPECT_EQ_MSG(test, sroce_cc_tclass(&cc, v[i].in), v[i].out,
				    "ecn_enable %u, traffic class %#x",
				    v[i].ecn, v[i].in);
	}
}

/* ---- CNPs on the wire --------------------------------------------------- */

/* Index of the first byte where @a and @b differ, or @len. */
static unsigned int dq_first_diff(const u8 *a, const u8 *b, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			break;
	return i;
}

/* The bytes sroce_cnp_fill() writes are the capture's BTH and more. */
static void dq_cnp_fill_test(struct kunit *test)
{
	u8 buf[SROCE_CNP_LEN + 4];

	memset(buf, 0xee, sizeof(buf));
	sroce_cnp_fill(buf, CCFIX_CX_QPN);
	KUNIT_EXPECT_EQ(test, dq_first_diff(buf, CCFIX_CX_IP + CCFIX_CX_BTH,
					    SROCE_CNP_LEN), SROCE_CNP_LEN);
	KUNIT_EXPECT_EQ(test, buf[SROCE_CNP_LEN], 0xee);

	/* a QPN of 24 bits leaves BECN and the reserved bits alone */
	sroce_cnp_fill(buf, 0xfedcba);
	KUNIT_EXPECT_EQ(test, buf[0], 0x81);
	KUNIT_EXPECT_EQ(test, buf[4], 0x40);
	KUNIT_EXPECT_EQ(test, buf[5], 0xfe);
	KUNIT_EXPECT_EQ(test, buf[6], 0xdc);
	KUNIT_EXPECT_EQ(test, buf[7], 0xba);
	KUNIT_EXPECT_EQ(test, buf[8] | buf[9] | buf[10] | buf[11], 0);
}

static const bool dq_families[] = { false, true };

static void dq_family_desc(const bool *v6, char *desc)
{
	strscpy(desc, *v6 ? "IPv6" : "IPv4", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dq_family, dq_families, dq_family_desc);

/*
 * A CNP of ours parses as one, to its QP, with a good ICRC, whatever its
 * length; only the annex's 32 bytes (BTH, 16 reserved, ICRC) are one to
 * act upon.
 */
static void dq_cnp_parse_test(struct kunit *test)
{
	static const unsigned int lens[] = {
		SROCE_BTH_LEN, SROCE_CNP_LEN - 4, SROCE_CNP_LEN,
		SROCE_CNP_LEN + 4, SROCE_CNP_LEN + 16,
	};
	struct sroce_dev *sdev = sroce_test_xmit_dev(test);
	bool v6 = *(const bool *)test->param_value;
	enum sroce_drop_reason why;
	struct sroce_pkt *pkt;
	struct sk_buff *skb;
	struct sroce_av av;
	unsigned int i;

	sroce_ccfix_av(&av, v6, CCFIX_CX_SRC, CCFIX_CX_DST);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		skb = sroce_ccfix_cnp_skb(test, sdev, &av, 0x123456, lens[i],
					  SROCE_XMIT_WIRE);
		pkt = sroce_skb_pkt(skb);
		why = SROCE_DROP_NR;
		KUNIT_EXPECT_EQ(test, sroce_ccfix_parse(skb, &why), -EINVAL);
		KUNIT_EXPECT_EQ(test, why, SROCE_DROP_CNP);
		KUNIT_EXPECT_EQ(test, pkt->opcode, SROCE_OPCODE_ROCE_CNP);
		KUNIT_EXPECT_EQ(test, pkt->qpn, 0x123456U);
		KUNIT_EXPECT_EQ(test, pkt->psn, 0U);
		KUNIT_EXPECT_EQ(test, pkt->flags, (u8)SROCE_PKT_BECN);
		KUNIT_EXPECT_EQ(test, pkt->net,
				v6 ? SROCE_PKT_IPV6 : SROCE_PKT_IPV4);
		KUNIT_EXPECT_EQ(test, skb->len, lens[i] + SROCE_ICRC_LEN);
		KUNIT_EXPECT_EQ_MSG(test, sroce_pkt_cnp_ok(skb),
				    lens[i] == SROCE_CNP_LEN, "%u bytes",
				    skb->len);
		KUNIT_EXPECT_EQ(test, sroce_pkt_check_icrc(skb, &why), 0);
		kfree_skb(skb);
	}
}

/*
 * The hardware's CNP is one, of the annex's length and with a good
 * ICRC; with a reserved bit flipped on the way its ICRC is wrong.
 */
static void dq_cnp_capture_test(struct kunit *test)
{
	struct sk_buff *skb;
	enum sroce_drop_reason why;

	skb = sroce_ccfix_ip_skb(test, CCFIX_CX_IP, CCFIX_CX_LEN, -1);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_parse(skb, &why), -EINVAL);
	KUNIT_EXPECT_EQ(test, why, SROCE_DROP_CNP);
	KUNIT_EXPECT_EQ(test, sroce_skb_pkt(skb)->qpn, (u32)CCFIX_CX_QPN);
	/* ECT(0): BECN, not CE */
	KUNIT_EXPECT_EQ(test, sroce_skb_pkt(skb)->flags, (u8)SROCE_PKT_BECN);
	KUNIT_EXPECT_TRUE(test, sroce_pkt_cnp_ok(skb));
	KUNIT_EXPECT_EQ(test, sroce_pkt_check_icrc(skb, &why), 0);
	kfree_skb(skb);

	skb = sroce_ccfix_ip_skb(test, CCFIX_CX_IP, CCFIX_CX_LEN,
				 CCFIX_CX_BTH + 20);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_parse(skb, &why), -EINVAL);
	KUNIT_EXPECT_EQ(test, why, SROCE_DROP_CNP);
	KUNIT_EXPECT_EQ(test, sroce_pkt_check_icrc(skb, &why), -EINVAL);
	KUNIT_EXPECT_EQ(test, why, SROCE_DROP_ICRC);
	kfree_skb(skb);
}

struct dq_ecn_case {
	bool v6;
	u8 tclass;
	bool ce;
};

static const struct dq_ecn_case dq_ecn_cases[] = {
	{ false, 0x00, false }, { false, 0x01, false }, { false, 0x02, false },
	{ false, 0x03, true }, { false, 0xb8, false }, { false, 0xbb, true },
	{ true, 0x00, false }, { true, 0x01, false }, { true, 0x02, false },
	{ true, 0x03, true }, { true, 0xba, false }, { true, 0xbb, true },
};

static void dq_ecn_desc(const struct dq_ecn_case *k, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s traffic class 0x%02x",
		 k->v6 ? "IPv6" : "IPv4", k->tclass);
}

KUNIT_ARRAY_PARAM(dq_ecn, dq_ecn_cases, dq_ecn_desc);

/* CE (0b11) in the ECN field, and only CE, marks a packet. */
static void dq_ecn_test(struct kunit *test)
{
	const struct dq_ecn_case *k = test->param_value;
	struct sroce_dev *sdev = sroce_test_xmit_dev(test);
	enum sroce_drop_reason why;
	struct sk_buff *skb;
	struct sroce_av av;
	u8 flags;

	sroce_ccfix_av(&av, k->v6, CCFIX_CX_SRC, CCFIX_CX_DST);
	av.traffic_class = k->tclass;
	av.flow_label = 0x54321;
	skb = sroce_ccfix_req_skb(test, sdev, &av, IB_OPCODE_RC_SEND_ONLY,
				  0x11);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_parse(skb, &why), 0);
	flags = sroce_skb_pkt(skb)->flags;
	KUNIT_EXPECT_EQ(test, !!(flags & SROCE_PKT_CE), k->ce);
	KUNIT_EXPECT_TRUE(test, flags & SROCE_PKT_ACKREQ);
	kfree_skb(skb);
}

/* ---- both ends on a QP --------------------------------------------------- */

/* rp_max_rate_mbps's default in bytes/s: where the first CNP starts */
#define DQ_MAX_BPS	(100000ULL * 125000)

struct dq_rp_case {
	const char *name;
	enum sroce_ccfix_cnp kind;
	bool v6;
	bool ud;	/* to a UD QP */
	bool off;	/* rp_enable 0 */
	bool cuts;
};

static const struct dq_rp_case dq_rp_cases[] = {
	{ "from the peer", CCFIX_CNP, .cuts = true },
	{ "from the peer, IPv6", CCFIX_CNP, .v6 = true, .cuts = true },
	{ "the ConnectX-4 Lx capture", CCFIX_CNP_CAPTURE, .cuts = true },
	{ "from this host, no ICRC", CCFIX_CNP_LOCAL, .cuts = true },
	{ "from another address", CCFIX_CNP_STRANGER },
	{ "from another address, IPv6", CCFIX_CNP_STRANGER, .v6 = true },
	{ "36 bytes", CCFIX_CNP_LONG },
	{ "28 bytes", CCFIX_CNP_SHORT },
	{ "bad ICRC", CCFIX_CNP_BAD_ICRC },
	{ "the capture, a bit flipped", CCFIX_CNP_CAPTURE_FLIP },
	{ "to another QPN", CCFIX_CNP_NO_QP },
	{ "rp_enable 0", CCFIX_CNP, .off = true },
	{ "to a UD QP", CCFIX_CNP, .ud = true },
};

static void dq_rp_desc(const struct dq_rp_case *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dq_rp, dq_rp_cases, dq_rp_desc);

/*
 * A CNP the reaction point takes cuts the QP's gate from rp_max_rate to
 * its half (alpha 1). Any other is counted in cnp_rcvd only; then the
 * peer's good CNP still cuts the same QP.
 */
static void dq_rp_test(struct kunit *test)
{
	const struct dq_rp_case *k = test->param_value;
	struct sroce_ccfix *x;
	u64 cuts = k->cuts;

	x = sroce_ccfix_init(test, k->ud ? IB_QPT_UD : IB_QPT_RC, k->v6);
	if (k->off)
		x->sdev->cc.v[SROCE_CC_RP] = 0;
	sroce_ccfix_cnp_rx(test, x, k->kind);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_RCVD), 1ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_HANDLED),
			cuts);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_RP_DECREASES),
			cuts);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&x->qp->rate),
			cuts ? DQ_MAX_BPS / 2 : 0);
	KUNIT_EXPECT_EQ(test, x->qp->cc.s.active, k->cuts);
	if (k->cuts || k->ud)
		return;

	x->sdev->cc.v[SROCE_CC_RP] = 1;
	sroce_ccfix_cnp_rx(test, x, CCFIX_CNP);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_RCVD), 2ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_HANDLED),
			1ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_RP_DECREASES),
			1ULL);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&x->qp->rate), DQ_MAX_BPS / 2);
}

/*
 * A CNP within rp_rate_reduce_period_us of the cut is taken but cuts
 * nothing; with the period 0 the next one cuts again (alpha is still 1:
 * 1 - g + g). Once the QP's engines stop, CNPs cut nothing; its reset
 * opens the gate.
 */
static void dq_rp_period_test(struct kunit *test)
{
	struct sroce_ccfix *x = sroce_ccfix_init(test, IB_QPT_RC, false);
	struct sroce_qp *qp = x->qp;

	x->sdev->cc.v[SROCE_CC_RP_REDUCE_PERIOD] = CCFIX_LONG_US;
	sroce_ccfix_cnp_rx(test, x, CCFIX_CNP);
	sroce_ccfix_cnp_rx(test, x, CCFIX_CNP);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_HANDLED),
			2ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_RP_DECREASES),
			1ULL);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&qp->rate), DQ_MAX_BPS / 2);
	KUNIT_EXPECT_EQ(test, qp->cc.s.alpha, ONE);
	/* the rate climbs back from rp_time_reset_us (1 s) on */
	KUNIT_EXPECT_TRUE(test, hrtimer_is_queued(&qp->cc.rise_timer));
	KUNIT_EXPECT_TRUE(test, hrtimer_is_queued(&qp->cc.alpha_timer));

	x->sdev->cc.v[SROCE_CC_RP_REDUCE_PERIOD] = 0;
	sroce_ccfix_cnp_rx(test, x, CCFIX_CNP);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_RP_DECREASES),
			2ULL);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&qp->rate), DQ_MAX_BPS / 4);
	KUNIT_EXPECT_EQ(test, qp->cc.s.rt, DQ_MAX_BPS / 2);

	sroce_dcqcn_stop(&qp->cc);
	KUNIT_EXPECT_FALSE(test, hrtimer_is_queued(&qp->cc.rise_timer));
	sroce_ccfix_cnp_rx(test, x, CCFIX_CNP);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_RP_DECREASES),
			2ULL);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&qp->rate), DQ_MAX_BPS / 4);
	sroce_dcqcn_reset(&qp->cc);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&qp->rate), 0ULL);
	KUNIT_EXPECT_FALSE(test, qp->cc.s.active);
}

/*
 * A timer callback that waited for the reaction point's lock while a CNP
 * restarted its timer finds the timer queued again: the expiry it
 * handles belongs to the period the CNP ended. It must neither raise the
 * rate just cut nor end the alpha period the CNP marked; the restarted
 * timer keeps the new period. The callbacks are called here as the
 * hrtimer core calls them, their timers queued by the cut.
 */
static void dq_rp_stale_timer_test(struct kunit *test)
{
	struct sroce_ccfix *x = sroce_ccfix_init(test, IB_QPT_RC, false);
	struct sroce_dcqcn *d = &x->qp->cc;

	sroce_ccfix_cnp_rx(test, x, CCFIX_CNP);
	KUNIT_ASSERT_TRUE(test, hrtimer_is_queued(&d->rise_timer));
	KUNIT_ASSERT_TRUE(test, hrtimer_is_queued(&d->alpha_timer));

	KUNIT_EXPECT_EQ(test, d->rise_timer.function(&d->rise_timer),
			HRTIMER_NORESTART);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&x->qp->rate), DQ_MAX_BPS / 2);
	KUNIT_EXPECT_EQ(test, d->s.t_stage, 0U);
	KUNIT_EXPECT_EQ(test, d->s.stage, CUT);
	KUNIT_EXPECT_TRUE(test, hrtimer_is_queued(&d->rise_timer));

	KUNIT_EXPECT_EQ(test, d->alpha_timer.function(&d->alpha_timer),
			HRTIMER_NORESTART);
	KUNIT_EXPECT_TRUE(test, d->s.cnp_seen);
	KUNIT_EXPECT_TRUE(test, hrtimer_is_queued(&d->alpha_timer));
}

/*
 * The CNP the QP sent is the capture's but for the direction (the QP is
 * the capture's receiver), the IP identification and checksum, and the
 * ICRC, which covers the identification: checksum and ICRC must be right.
 */
static void dq_expect_sent_cnp(struct kunit *test,
			       const struct sroce_ccfix_wire *w)
{
	const unsigned int icrc = CCFIX_CX_LEN - SROCE_ICRC_LEN;
	u8 want[CCFIX_CX_LEN], got[CCFIX_CX_LEN];
	enum sroce_drop_reason why;
	struct sk_buff *skb;

	KUNIT_ASSERT_EQ(test, w->len, (unsigned int)CCFIX_CX_LEN);
	memcpy(got, w->bytes, CCFIX_CX_LEN);
	KUNIT_EXPECT_EQ(test, (__force u16)ip_fast_csum(got, 5), 0);
	memcpy(want, CCFIX_CX_IP, CCFIX_CX_LEN);
	memcpy(want + 12, CCFIX_CX_IP + 16, 4);
	memcpy(want + 16, CCFIX_CX_IP + 12, 4);
	memset(want + 4, 0, 2);
	memset(got + 4, 0, 2);
	memset(want + 10, 0, 2);
	memset(got + 10, 0, 2);
	memset(want + icrc, 0, SROCE_ICRC_LEN);
	memset(got + icrc, 0, SROCE_ICRC_LEN);
	KUNIT_EXPECT_EQ(test, dq_first_diff(got, want, CCFIX_CX_LEN),
			(unsigned int)CCFIX_CX_LEN);

	skb = sroce_ccfix_ip_skb(test, w->bytes, CCFIX_CX_LEN, -1);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_parse(skb, &why), -EINVAL);
	KUNIT_EXPECT_EQ(test, why, SROCE_DROP_CNP);
	KUNIT_EXPECT_EQ(test, sroce_pkt_check_icrc(skb, &why), 0);
	kfree_skb(skb);
}

/*
 * A CE-marked request makes the QP send its peer a CNP, one per
 * np_cnp_interval_us (1 s here, then 0); each request still goes to the
 * responder. The QP's traffic class is the capture's DSCP 48, to which
 * the device adds ECT(0).
 */
static void dq_np_test(struct kunit *test)
{
	struct sroce_ccfix *x = sroce_ccfix_init(test, IB_QPT_RC, false);

	x->qp->p.av.traffic_class = 0xc0;
	x->sdev->cc.v[SROCE_CC_CNP_INTERVAL] = CCFIX_LONG_US;
	sroce_ccfix_req_rx(test, x, INET_ECN_CE, CCFIX_PEER);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_ECN_MARKED),
			1ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_SENT), 1ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_SENT_PKTS), 1ULL);
	KUNIT_ASSERT_EQ(test, x->wire.n, 1U);
	dq_expect_sent_cnp(test, &x->wire);

	sroce_ccfix_req_rx(test, x, INET_ECN_CE, CCFIX_PEER);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_ECN_MARKED),
			2ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_SENT), 1ULL);
	KUNIT_EXPECT_EQ(test, x->wire.n, 1U);

	x->sdev->cc.v[SROCE_CC_CNP_INTERVAL] = 0;
	sroce_ccfix_req_rx(test, x, INET_ECN_CE, CCFIX_PEER);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_ECN_MARKED),
			3ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_SENT), 2ULL);
	KUNIT_ASSERT_EQ(test, x->wire.n, 2U);
	dq_expect_sent_cnp(test, &x->wire);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&x->qp->resp.rxq), 3U);
}

/*
 * A CE-marked request whose ICRC is wrong is dropped as such before it
 * can make the QP send a CNP: whoever sent it cannot slow the peer down.
 * (The ICRC of a packet with a payload is otherwise checked later, by
 * the engine that takes it.)
 */
static void dq_np_bad_icrc_test(struct kunit *test)
{
	struct sroce_ccfix *x = sroce_ccfix_init(test, IB_QPT_RC, false);
	struct sroce_av av = x->in;
	struct sk_buff *skb;

	av.traffic_class = 0xb8 | INET_ECN_CE;
	skb = sroce_ccfix_req_skb(test, x->sdev, &av, IB_OPCODE_RC_SEND_ONLY,
				  CCFIX_QPN);
	skb->data[skb->len - 1] ^= 0x01;
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(x->sdev, skb, false), 0);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_ICRC_ERR), 1ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_ECN_MARKED),
			0ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_SENT), 0ULL);
	KUNIT_EXPECT_EQ(test, x->wire.n, 0U);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&x->qp->resp.rxq), 0U);

	/* the same with a good ICRC: one CNP, and the request queued */
	sroce_ccfix_req_rx(test, x, INET_ECN_CE, CCFIX_PEER);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_SENT), 1ULL);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&x->qp->resp.rxq), 1U);
}

struct dq_np_case {
	const char *name;
	bool ud;
	bool off;	/* np_enable 0 */
	u8 ecn;
	u32 src;
	u64 marked;	/* ecn_marked_rcvd */
};

static const struct dq_np_case dq_np_cases[] = {
	{ "np_enable 0", false, true, INET_ECN_CE, CCFIX_PEER, 1 },
	{ "ECT(0)", false, false, INET_ECN_ECT_0, CCFIX_PEER, 0 },
	{ "ECT(1)", false, false, INET_ECN_ECT_1, CCFIX_PEER, 0 },
	{ "to a UD QP", true, false, INET_ECN_CE, CCFIX_PEER, 1 },
	{ "from another address", false, false, INET_ECN_CE, CCFIX_STRANGER,
	  0 },
};

static void dq_np_desc(const struct dq_np_case *k, char *desc)
{
	strscpy(desc, k->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dq_np, dq_np_cases, dq_np_desc);

/* Requests after which no CNP leaves. */
static void dq_np_quiet_test(struct kunit *test)
{
	const struct dq_np_case *k = test->param_value;
	struct sroce_ccfix *x;

	x = sroce_ccfix_init(test, k->ud ? IB_QPT_UD : IB_QPT_RC, false);
	if (k->off)
		x->sdev->cc.v[SROCE_CC_NP] = 0;
	sroce_ccfix_req_rx(test, x, k->ecn, k->src);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_ECN_MARKED),
			k->marked);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_CNP_SENT), 0ULL);
	KUNIT_EXPECT_EQ(test, sroce_ccfix_count(x, SROCE_CNT_SENT_PKTS), 0ULL);
	KUNIT_EXPECT_EQ(test, x->wire.n, 0U);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&x->qp->resp.rxq),
			k->src == CCFIX_PEER ? 1U : 0U);
}

static struct kunit_case sroce_dcqcn_test_cases[] = {
	KUNIT_CASE_PARAM(dq_first_cut_test, dq_first_gen_params),
	KUNIT_CASE(dq_reduce_period_test),
	KUNIT_CASE(dq_alpha_tick_test),
	KUNIT_CASE_PARAM(dq_rise_test, dq_rise_gen_params),
	KUNIT_CASE(dq_timer_bytes_test),
	KUNIT_CASE(dq_timer_ceiling_test),
	KUNIT_CASE(dq_sequence_test),
	KUNIT_CASE(dq_cfg_get_test),
	KUNIT_CASE(dq_tclass_test),
	KUNIT_CASE(dq_cnp_fill_test),
	KUNIT_CASE_PARAM(dq_cnp_parse_test, dq_family_gen_params),
	KUNIT_CASE(dq_cnp_capture_test),
	KUNIT_CASE_PARAM(dq_ecn_test, dq_ecn_gen_params),
	KUNIT_CASE_PARAM(dq_rp_test, dq_rp_gen_params),
	KUNIT_CASE(dq_rp_period_test),
	KUNIT_CASE(dq_rp_stale_timer_test),
	KUNIT_CASE(dq_np_test),
	KUNIT_CASE(dq_np_bad_icrc_test),
	KUNIT_CASE_PARAM(dq_np_quiet_test, dq_np_gen_params),
	{}
};

static struct kunit_suite sroce_dcqcn_test_suite = {
	.name = "sroce_dcqcn",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_dcqcn_test_cases,
};

kunit_test_suites(&sroce_dcqcn_test_suite);
