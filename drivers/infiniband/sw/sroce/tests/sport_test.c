// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the UDP source port choice of sroce_sport.h.
 *
 * The expected ports were computed with the project's Python reference
 * (a transcription of rdma_get_udp_sport() and of rdma_rxe's create-time
 * hash), so sroce agrees with rdma_rxe and RoCE NICs on the wire.
 */

#include <kunit/test.h>

#include "test_util.h"
#include "wire/sroce_sport.h"

struct sport_connected_case {
	u32 flow_label;
	u32 lqpn;
	u32 rqpn;
	u16 sport;
};

static const struct sport_connected_case sport_connected_cases[] = {
	{ 0, 0x11, 0x12, 0xc132 },
	{ 0, 0x11, 0x12345, 0xd799 },
	{ 0, 0x64, 0xc8, 0xce21 },
	{ 0, 0x1, 0x1, 0xc001 },
	{ 0, 0x0, 0x12, 0xc000 },
	{ 0, 0xffffff, 0xffffff, 0xff21 },
	{ 0, 0x800001, 0x3, 0xc01b },
	{ 0x12345, 0x11, 0x12, 0xe341 },
	{ 0xfffff, 0x11, 0x12, 0xffc0 },
	{ 0x4000, 0x5, 0x6, 0xc001 },
	{ 0x1, 0x11, 0x12, 0xc001 },
};

static void sport_connected_desc(const struct sport_connected_case *t,
				 char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "flow label %#x, QPs %#x and %#x",
		 t->flow_label, t->lqpn, t->rqpn);
}

KUNIT_ARRAY_PARAM(sport_connected, sport_connected_cases,
		  sport_connected_desc);

/* Both ends of a connection compute the same port. */
static void sport_connected_test(struct kunit *test)
{
	const struct sport_connected_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_sport_connected(t->flow_label, t->lqpn,
						    t->rqpn), t->sport);
	KUNIT_EXPECT_EQ(test, sroce_sport_connected(t->flow_label, t->rqpn,
						    t->lqpn), t->sport);
}

struct sport_default_case {
	u32 qpn;
	u16 sport;
};

static const struct sport_default_case sport_default_cases[] = {
	{ 0x0, 0xc000 },
	{ 0x1, 0xd872 },
	{ 0x11, 0xdf94 },
	{ 0x12, 0xf806 },
	{ 0x100, 0xf221 },
	{ 0x800000, 0xc8e0 },
	{ 0xffffff, 0xf94d },
};

static void sport_default_desc(const struct sport_default_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "QP %#x", t->qpn);
}

KUNIT_ARRAY_PARAM(sport_default, sport_default_cases, sport_default_desc);

static void sport_default_test(struct kunit *test)
{
	const struct sport_default_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_sport_default(t->qpn), t->sport);
}

static struct kunit_case sroce_sport_test_cases[] = {
	KUNIT_CASE_PARAM(sport_connected_test, sport_connected_gen_params),
	KUNIT_CASE_PARAM(sport_default_test, sport_default_gen_params),
	{}
};

static struct kunit_suite sroce_sport_test_suite = {
	.name = "sroce_sport",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_sport_test_cases,
};

kunit_test_suites(&sroce_sport_test_suite);
