// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the send window of an RC QP (sroce_req_window.c): which
 * READ may go while others are in flight, and when post_send of a user
 * QP may move the requester to its own CPU (sroce_req_doorbell()).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/string.h>

#include "core/sroce_task.h"
#include "test_util.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_window.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_psn.h"

/*
 * The READ window: the responses of the READs in flight end fewer than
 * SROCE_READ_WINDOW PSNs past the oldest unacknowledged one, except for
 * the oldest READ itself. 128 outstanding 64-packet READs once put 8192
 * response frames into rdma_rxe's transmit queue at once, which lost half
 * of them; go-back-N then asked for all of them again, until retry_cnt
 * ran out.
 */
struct read_window_case {
	const char *name;
	u32 una;
	u32 first_psn;
	u32 npkts;
	bool go;
};

static const struct read_window_case read_window_cases[] = {
	{ "the oldest WQE, larger than the window", 100, 100, 1024, true },
	{ "the oldest WQE, 64 packets", 100, 100, 64, true },
	{ "second 64-packet READ", 100, 164, 64, true },
	{ "ends one short of the window", 100, 164, SROCE_READ_WINDOW - 64,
	  true },
	{ "ends at the window", 100, 164, SROCE_READ_WINDOW - 63, false },
	{ "fifth 64-packet READ", 100, 100 + 4 * 64, 64, false },
	{ "after a large oldest READ", 100, 1124, 1, false },
	{ "across the 24-bit wrap", 0xffff80, 0xffffc0, 64, true },
	{ "across the wrap, too far", 0xffff80, 0x000080, 64, false },
};

static void read_window_desc(const struct read_window_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(read_window, read_window_cases, read_window_desc);

static void read_window_test(struct kunit *test)
{
	const struct read_window_case *t = test->param_value;
	u32 last = sroce_psn_add(t->first_psn, t->npkts - 1);

	KUNIT_EXPECT_EQ(test, sroce_req_read_may_go(t->una, t->first_psn, last),
			t->go);
}

/*
 * post_send of a user RC QP from a CPU other than its requester's: the
 * requester moves there only while nothing it sent is unacknowledged
 * (a packet still queued on the old CPU could be overtaken otherwise).
 */
static void doorbell_follow_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	int here, other, cpu, i;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, 100, 7);
	sroce_test_claim_send(qp, 3);
	WRITE_ONCE(qp->req.sent_psn, 103);	/* sent, not acknowledged */

	local_bh_disable();
	here = raw_smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, here);
	if (other < nr_cpu_ids) {
		sroce_task_set_cpu(&qp->req.task, other);
		sroce_req_doorbell(qp);
	}
	cpu = qp->req.task.cpu;
	local_bh_enable();
	if (other >= nr_cpu_ids)
		kunit_skip(test, "one CPU: the requester is always here");
	KUNIT_EXPECT_EQ(test, cpu, other);

	sroce_test_ack(test, qp, 102, SROCE_AETH_ACK,
		       SROCE_AETH_CREDITS_INVALID);
	KUNIT_ASSERT_EQ(test, READ_ONCE(qp->comp.una_psn), 103);
	/* the doorbell's dispatch over there is over */
	for (i = 0; i < 250 && READ_ONCE(qp->req.task.state) !=
			       SROCE_TASK_IDLE; i++)
		msleep(20);
	KUNIT_ASSERT_EQ(test, READ_ONCE(qp->req.task.state), SROCE_TASK_IDLE);

	local_bh_disable();
	here = raw_smp_processor_id();
	if (qp->req.task.cpu == here)
		sroce_task_set_cpu(&qp->req.task,
				   cpumask_any_but(cpu_online_mask, here));
	sroce_req_doorbell(qp);
	cpu = qp->req.task.cpu;
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, cpu, here);
}

static struct kunit_case req_window_test_cases[] = {
	KUNIT_CASE_PARAM(read_window_test, read_window_gen_params),
	KUNIT_CASE(doorbell_follow_test),
	{}
};

static struct kunit_suite req_window_test_suite = {
	.name = "sroce_req_window",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = req_window_test_cases,
};

kunit_test_suite(req_window_test_suite);
