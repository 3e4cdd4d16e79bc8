// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared KUnit fixtures: a fake, unregistered sroce device with two PDs.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "test_util.h"
#include "../sroce_dev.h"

/**
 * sroce_test_dev_init() - set up a fake device and two PDs on it
 * @test: the running test; allocations are released with it
 * @t: the fixture to fill
 *
 * Only what the key, MR, MW and copy code touch is set: the key xarray,
 * the MR and MW limits, and the PDs' device pointers.
 *
 * Context: process context; asserts (ends the test) on allocation failure.
 */
void sroce_test_dev_init(struct kunit *test, struct sroce_test_dev *t)
{
	t->sdev = kunit_kzalloc(test, sizeof(*t->sdev), GFP_KERNEL);
	t->pd = kunit_kzalloc(test, sizeof(*t->pd), GFP_KERNEL);
	t->pd2 = kunit_kzalloc(test, sizeof(*t->pd2), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->sdev);
	KUNIT_ASSERT_NOT_NULL(test, t->pd);
	KUNIT_ASSERT_NOT_NULL(test, t->pd2);
	xa_init_flags(&t->sdev->keys, XA_FLAGS_ALLOC);
	t->sdev->attr.max_mr = SROCE_MAX_MR;
	t->sdev->attr.max_mw = SROCE_MAX_MW;
	t->pd->device = &t->sdev->ibdev;
	t->pd2->device = &t->sdev->ibdev;
}

/**
 * sroce_test_dev_check_empty() - every MR and MW of the fixture is gone
 * @test: the running test
 * @t: the fixture
 *
 * Expects an empty key table and MR and MW counts back at zero: a key
 * cache or a lookup that kept a reference shows up here.
 */
void sroce_test_dev_check_empty(struct kunit *test, struct sroce_test_dev *t)
{
	KUNIT_EXPECT_TRUE(test, xa_empty(&t->sdev->keys));
	KUNIT_EXPECT_EQ(test, atomic_read(&t->sdev->res.mr), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->sdev->res.mw), 0);
}
