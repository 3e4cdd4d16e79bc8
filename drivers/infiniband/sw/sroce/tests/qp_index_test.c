// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the QPN index (sroce_qp_index.c): a QP is found only
 * between publication and removal, removal returns only when the receive
 * path has let go of the QP, and numbers come back when creation fails.
 *
 * The device and the QPs are bare structures with the fields the index
 * reads; no verbs are involved.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/xarray.h>

#include "core/sroce_dev.h"
#include "core/sroce_param.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_qp_index.h"

/* How long a removal that must wait is given to return all the same. */
#define QPI_WAIT_MS	200

static void qpi_dev_free(struct kunit_resource *res)
{
	struct sroce_dev *sdev = res->data;

	xa_destroy(&sdev->qps);
}

static struct sroce_dev *qpi_dev(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, qpi_dev_free,
							 GFP_KERNEL, sdev));
	return sdev;
}

static struct sroce_qp *qpi_qp(struct kunit *test, enum ib_qp_type type)
{
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.qp_type = type;
	return qp;
}

/* Found between publication and removal, under its own number only. */
static void qp_index_publish_test(struct kunit *test)
{
	struct sroce_dev *sdev = qpi_dev(test);
	struct sroce_qp *a = qpi_qp(test, IB_QPT_RC);
	struct sroce_qp *b = qpi_qp(test, IB_QPT_UD);

	KUNIT_ASSERT_EQ(test, sroce_qp_index_reserve(sdev, a), 0);
	KUNIT_ASSERT_EQ(test, sroce_qp_index_reserve(sdev, b), 0);
	KUNIT_EXPECT_GE(test, a->ibqp.qp_num, SROCE_MIN_QPN);
	KUNIT_EXPECT_NE(test, a->ibqp.qp_num, b->ibqp.qp_num);

	/* reserved is not published: a packet finds nothing */
	KUNIT_EXPECT_NULL(test, sroce_qp_get(sdev, a->ibqp.qp_num));
	sroce_qp_index_publish(sdev, a);
	KUNIT_EXPECT_PTR_EQ(test, sroce_qp_get(sdev, a->ibqp.qp_num), a);
	sroce_qp_put(a);
	KUNIT_EXPECT_NULL(test, sroce_qp_get(sdev, b->ibqp.qp_num));

	sroce_qp_index_remove(sdev, a);
	KUNIT_EXPECT_NULL(test, sroce_qp_get(sdev, a->ibqp.qp_num));
	KUNIT_EXPECT_NULL(test, a->handle);
	sroce_qp_index_cancel(sdev, b);
	KUNIT_EXPECT_TRUE(test, xa_empty(&sdev->qps));
}

struct qpi_remover {
	struct sroce_dev *sdev;
	struct sroce_qp *qp;
	struct completion done;
};

static int qpi_remove_fn(void *arg)
{
	struct qpi_remover *r = arg;

	sroce_qp_index_remove(r->sdev, r->qp);
	complete(&r->done);
	return 0;
}

/* Does the removal return within QPI_WAIT_MS? */
static bool qpi_done_soon(struct qpi_remover *r)
{
	return wait_for_completion_timeout(&r->done,
					   msecs_to_jiffies(QPI_WAIT_MS));
}

/*
 * A packet being received holds the QP: removal waits for it, and
 * returns once it is let go. Meanwhile no new lookup finds the QP.
 */
static void qp_index_remove_waits_test(struct kunit *test)
{
	struct sroce_dev *sdev = qpi_dev(test);
	struct sroce_qp *qp = qpi_qp(test, IB_QPT_RC);
	struct qpi_remover r = { .sdev = sdev, .qp = qp };
	struct task_struct *k;
	u32 qpn;

	KUNIT_ASSERT_EQ(test, sroce_qp_index_reserve(sdev, qp), 0);
	sroce_qp_index_publish(sdev, qp);
	qpn = qp->ibqp.qp_num;
	KUNIT_ASSERT_PTR_EQ(test, sroce_qp_get(sdev, qpn), qp);
	KUNIT_ASSERT_PTR_EQ(test, sroce_qp_get(sdev, qpn), qp);

	init_completion(&r.done);
	k = kthread_run(qpi_remove_fn, &r, "sroce-qpi-test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(k));

	KUNIT_EXPECT_FALSE(test, qpi_done_soon(&r));
	KUNIT_EXPECT_NULL(test, sroce_qp_get(sdev, qpn));
	sroce_qp_put(qp);
	KUNIT_EXPECT_FALSE(test, qpi_done_soon(&r));
	sroce_qp_put(qp);
	wait_for_completion(&r.done);
	KUNIT_EXPECT_NULL(test, sroce_qp_get(sdev, qpn));
	KUNIT_EXPECT_TRUE(test, xa_empty(&sdev->qps));
}

/* One GSI QP per device; its number comes back when creation fails. */
static void qp_index_gsi_test(struct kunit *test)
{
	struct sroce_dev *sdev = qpi_dev(test);
	struct sroce_qp *gsi = qpi_qp(test, IB_QPT_GSI);
	struct sroce_qp *again = qpi_qp(test, IB_QPT_GSI);

	KUNIT_ASSERT_EQ(test, sroce_qp_index_reserve(sdev, gsi), 0);
	KUNIT_EXPECT_EQ(test, gsi->ibqp.qp_num, 1U);
	KUNIT_EXPECT_EQ(test, sroce_qp_index_reserve(sdev, again), -EBUSY);
	KUNIT_EXPECT_NULL(test, again->handle);

	sroce_qp_index_cancel(sdev, gsi);
	KUNIT_ASSERT_EQ(test, sroce_qp_index_reserve(sdev, again), 0);
	KUNIT_EXPECT_EQ(test, again->ibqp.qp_num, 1U);
	sroce_qp_index_publish(sdev, again);
	KUNIT_EXPECT_PTR_EQ(test, sroce_qp_get(sdev, 1), again);
	sroce_qp_put(again);
	sroce_qp_index_remove(sdev, again);
	KUNIT_EXPECT_TRUE(test, xa_empty(&sdev->qps));
}

static struct kunit_case sroce_qp_index_test_cases[] = {
	KUNIT_CASE(qp_index_publish_test),
	KUNIT_CASE(qp_index_remove_waits_test),
	KUNIT_CASE(qp_index_gsi_test),
	{}
};

static struct kunit_suite sroce_qp_index_test_suite = {
	.name = "sroce_qp_index",
	.test_cases = sroce_qp_index_test_cases,
};

kunit_test_suite(sroce_qp_index_test_suite);
