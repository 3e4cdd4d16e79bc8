// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the 24-bit PSN arithmetic of sroce_psn.h.
 *
 * The expectations follow from the definition of PSNs as serial numbers
 * modulo 2^24 whose order is defined over half the space: written out by
 * hand, with the wrap from 0xffffff to 0 and the 2^23 boundary as the
 * interesting edges.
 */

#include <kunit/test.h>

#include "test_util.h"
#include "wire/sroce_psn.h"

struct psn_add_case {
	const char *name;
	u32 psn;
	u32 n;
	u32 sum;
};

static const struct psn_add_case psn_add_cases[] = {
	{ "zero", 0, 0, 0 },
	{ "plain step", 0x000100, 1, 0x000101 },
	{ "wrap at 2^24", 0xffffff, 1, 0 },
	{ "wrap past zero", 0xfffffe, 3, 1 },
	{ "half the space", 0x800000, 0x800000, 0 },
	{ "add 2^24 - 1 is minus one", 0x123456, 0xffffff, 0x123455 },
	{ "add 2^24 is identity", 0x123456, 0x1000000, 0x123456 },
	{ "psn above 24 bits", 0x1ffffff, 1, 0 },
	{ "n above 24 bits", 0x000010, 0xff000010, 0x000020 },
};

static void psn_add_desc(const struct psn_add_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(psn_add, psn_add_cases, psn_add_desc);

static void psn_add_test(struct kunit *test)
{
	const struct psn_add_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_psn_add(t->psn, t->n), t->sum);
	if (t->n == 1)
		KUNIT_EXPECT_EQ(test, sroce_psn_next(t->psn), t->sum);
	/* Serial order: what was added comes back as the distance. */
	if (sroce_psn(t->n) < SROCE_PSN_HALF)
		KUNIT_EXPECT_EQ(test, sroce_psn_diff(t->sum, t->psn),
				(s32)sroce_psn(t->n));
}

struct psn_diff_case {
	const char *name;
	u32 a;
	u32 b;
	s32 diff;	/* a - b in serial arithmetic */
};

static const struct psn_diff_case psn_diff_cases[] = {
	{ "equal", 0x123456, 0x123456, 0 },
	{ "ahead by two", 5, 3, 2 },
	{ "behind by two", 3, 5, -2 },
	{ "ahead across the wrap", 0, 0xffffff, 1 },
	{ "behind across the wrap", 0xffffff, 0, -1 },
	{ "far across the wrap", 0x000010, 0xfffff0, 0x20 },
	{ "largest lead", 0x7fffff, 0, 0x7fffff },
	{ "largest lag", 0, 0x7fffff, -0x7fffff },
	{ "half way is behind", 0x800000, 0, -0x800000 },
	{ "half way the other way", 0, 0x800000, -0x800000 },
	{ "half way plus one is behind", 0x800001, 0, -0x7fffff },
	{ "bits above 24 ignored", 0x1000005, 0xff000003, 2 },
};

static void psn_diff_desc(const struct psn_diff_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(psn_diff, psn_diff_cases, psn_diff_desc);

static void psn_diff_test(struct kunit *test)
{
	const struct psn_diff_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_psn_diff(t->a, t->b), t->diff);
	KUNIT_EXPECT_EQ(test, sroce_psn_before(t->a, t->b), t->diff < 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_after(t->a, t->b), t->diff > 0);
	/* Only one of before, after and equal holds. */
	KUNIT_EXPECT_FALSE(test, sroce_psn_before(t->a, t->b) &&
			   sroce_psn_after(t->a, t->b));
}

struct psn_mask_case {
	u32 in;
	u32 out;
};

static const struct psn_mask_case psn_mask_cases[] = {
	{ 0x000000, 0x000000 },
	{ 0xffffff, 0xffffff },
	{ 0x1000000, 0x000000 },
	{ 0x1234567, 0x234567 },
	{ 0xffffffff, 0xffffff },
	{ 0x80800000, 0x800000 },
};

static void psn_mask_desc(const struct psn_mask_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%#x", t->in);
}

KUNIT_ARRAY_PARAM(psn_mask, psn_mask_cases, psn_mask_desc);

static void psn_mask_test(struct kunit *test)
{
	const struct psn_mask_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_psn(t->in), t->out);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(t->in, 0), t->out);
}

struct psn_window_case {
	const char *name;
	u32 psn;
	u32 first;
	u32 count;
	bool inside;
};

static const struct psn_window_case psn_window_cases[] = {
	{ "first", 100, 100, 8, true },
	{ "last", 107, 100, 8, true },
	{ "one past the end", 108, 100, 8, false },
	{ "one before", 99, 100, 8, false },
	{ "empty window", 100, 100, 0, false },
	{ "wrapped window, high part", 0xffffff, 0xfffffe, 4, true },
	{ "wrapped window, low part", 1, 0xfffffe, 4, true },
	{ "wrapped window, past the end", 2, 0xfffffe, 4, false },
	{ "wrapped window, before", 0xfffffd, 0xfffffe, 4, false },
	{ "largest window", 0x7fffff, 0, SROCE_PSN_HALF, true },
};

static void psn_window_desc(const struct psn_window_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(psn_window, psn_window_cases, psn_window_desc);

static void psn_window_test(struct kunit *test)
{
	const struct psn_window_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_psn_in_window(t->psn, t->first, t->count),
			t->inside);
}

static struct kunit_case sroce_psn_test_cases[] = {
	KUNIT_CASE_PARAM(psn_add_test, psn_add_gen_params),
	KUNIT_CASE_PARAM(psn_diff_test, psn_diff_gen_params),
	KUNIT_CASE_PARAM(psn_mask_test, psn_mask_gen_params),
	KUNIT_CASE_PARAM(psn_window_test, psn_window_gen_params),
	{}
};

static struct kunit_suite sroce_psn_test_suite = {
	.name = "sroce_psn",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_psn_test_cases,
};

kunit_test_suites(&sroce_psn_test_suite);
