// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the slot sizes of sroce_wqe.c: the size of a send and a
 * receive slot for given limits, and what a slot of a given size holds.
 * The expectations come from the rxe user ABI (user-abi.md 2.4, 2.5),
 * written out by hand: slot sizes rounded to a power of two with their
 * capacity.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/kernel.h>

#include "obj/sroce_wqe.h"
#include "test_util.h"

struct wqe_size_case {
	u32 max_sge;
	u32 max_inline;
	size_t size;		/* sroce_wqe_send_size() */
	size_t slot;		/* size rounded up to a power of two */
	u32 caps_sge;		/* what that slot holds */
	u32 caps_inline;
};

static const struct wqe_size_case wqe_size_cases[] = {
	{ 0, 0, 208, 256, 3, 48 },
	{ 1, 0, 224, 256, 3, 48 },
	{ 3, 48, 256, 256, 3, 48 },
	{ 4, 0, 272, 512, 19, 304 },
	{ 1, 64, 272, 512, 19, 304 },
	{ 16, 400, 608, 1024, 51, 816 },
	{ 32, 512, 720, 1024, 51, 816 },
	{ 63, 0, 1216, 2048, 63, 1008 },
	{ 0, 1008, 1216, 2048, 63, 1008 },
	{ 63, 1008, 1216, 2048, 63, 1008 },
	{ 0xffffffff, 0, 68719476928ULL, 1ULL << 37, 63, 1008 },
};

static void wqe_size_desc(const struct wqe_size_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u SGEs, %u inline",
		 t->max_sge, t->max_inline);
}

KUNIT_ARRAY_PARAM(wqe_size, wqe_size_cases, wqe_size_desc);

static void wqe_send_size_test(struct kunit *test)
{
	const struct wqe_size_case *t = test->param_value;
	u32 sge, inl;

	KUNIT_EXPECT_EQ(test, sroce_wqe_send_size(t->max_sge, t->max_inline),
			t->size);
	sroce_wqe_send_caps(t->slot, &sge, &inl);
	KUNIT_EXPECT_EQ(test, sge, t->caps_sge);
	KUNIT_EXPECT_EQ(test, inl, t->caps_inline);
	/* The slot holds at least what was asked for, up to the limits. */
	KUNIT_EXPECT_GE(test, sge, min_t(u32, t->max_sge, SROCE_MAX_SGE));
	KUNIT_EXPECT_GE(test, inl,
			min_t(u32, t->max_inline, SROCE_MAX_INLINE_DATA));
}

static void wqe_caps_edges_test(struct kunit *test)
{
	u32 sge, inl;

	sroce_wqe_send_caps(128, &sge, &inl);
	KUNIT_EXPECT_EQ(test, sge, 0);
	KUNIT_EXPECT_EQ(test, inl, 0);
	sroce_wqe_send_caps(208, &sge, &inl);
	KUNIT_EXPECT_EQ(test, sge, 0);
	KUNIT_EXPECT_EQ(test, inl, 0);
	sroce_wqe_send_caps(223, &sge, &inl);
	KUNIT_EXPECT_EQ(test, sge, 0);
	KUNIT_EXPECT_EQ(test, inl, 15);

	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_size(0), 40);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_size(1), 56);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_size(2), 72);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_size(63), 1048);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_size(0xffffffff), 68719476760ULL);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_caps(32), 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_caps(40), 0);
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_caps(64), 1);	/* 1 SGE */
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_caps(128), 5);	/* 2 SGEs */
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_caps(256), 13);	/* 8 SGEs */
	KUNIT_EXPECT_EQ(test, sroce_wqe_recv_caps(2048), 63);	/* 63 SGEs */
}

static struct kunit_case sroce_wqe_size_test_cases[] = {
	KUNIT_CASE_PARAM(wqe_send_size_test, wqe_size_gen_params),
	KUNIT_CASE(wqe_caps_edges_test),
	{}
};

static struct kunit_suite sroce_wqe_size_test_suite = {
	.name = "sroce_wqe_size",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_wqe_size_test_cases,
};

kunit_test_suites(&sroce_wqe_size_test_suite);
