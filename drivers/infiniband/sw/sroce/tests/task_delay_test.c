// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the runs an engine execution context is asked for
 * later (sroce_task_schedule_after() in sroce_task.[ch]), in both modes,
 * workqueue and tasklet, with the task under test of task_fix.h.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "core/sroce_task.h"
#include "task_fix.h"
#include "test_util.h"

/* ---- runs asked for later (sroce_task_schedule_after()) ------------------ */

/* The delay the tests ask for: a few jiffies, about 20 ms or more. */
#define DELAY_TICKS	(HZ / 50 + 2)

/**
 * struct delay_case - a run asked for later, and what else happens
 * @name: description
 * @exec: mode
 * @ticks: the delay asked for
 * @again: a second, longer delay asked for while the first is pending
 *	(0: none); it must not push the run out
 * @run_meanwhile: sroce_task_run() while the delay is pending
 * @calls: calls expected in all; the last one is the delayed run
 */
struct delay_case {
	const char *name;
	enum sroce_task_exec exec;
	unsigned long ticks;
	unsigned long again;
	bool run_meanwhile;
	int calls;
};

static const struct delay_case delay_cases[] = {
	{ "workqueue: one run after the delay", SROCE_TASK_WORKQUEUE,
	  DELAY_TICKS, 0, false, 1 },
	{ "workqueue: 0 ticks is one jiffy", SROCE_TASK_WORKQUEUE,
	  0, 0, false, 1 },
	{ "workqueue: a second delay does not push it out",
	  SROCE_TASK_WORKQUEUE, DELAY_TICKS, 5 * HZ, false, 1 },
	{ "workqueue: a run meanwhile sees it pending", SROCE_TASK_WORKQUEUE,
	  HZ / 2, 0, true, 2 },
	{ "tasklet: one run after the delay", SROCE_TASK_TASKLET,
	  DELAY_TICKS, 0, false, 1 },
	{ "tasklet: 0 ticks is one jiffy", SROCE_TASK_TASKLET,
	  0, 0, false, 1 },
	{ "tasklet: a second delay does not push it out", SROCE_TASK_TASKLET,
	  DELAY_TICKS, 5 * HZ, false, 1 },
	{ "tasklet: a run meanwhile sees it pending", SROCE_TASK_TASKLET,
	  HZ / 2, 0, true, 2 },
};

static void delay_desc(const struct delay_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(delay, delay_cases, delay_desc);

/* Note when each call ran and whether the delay was still pending. */
static int body_delay(struct sroce_tctx *c, int call)
{
	if (call <= TCTX_DELAY_CALLS) {
		c->call_at[call - 1] = jiffies;
		c->delayed_at[call - 1] = sroce_task_delayed(&c->task);
	}
	return 0;
}

/* The delay of @c expires in [@from, @to] + @ticks (at least one). */
static void expect_expiry(struct kunit *test, struct sroce_tctx *c,
			  unsigned long from, unsigned long to,
			  unsigned long ticks)
{
	unsigned long exp = READ_ONCE(c->task.delay.expires);

	/* One jiffy may be over at once; the expiry time is still there. */
	if (ticks > 1)
		KUNIT_EXPECT_TRUE(test, sroce_task_delayed(&c->task));
	ticks = max(1UL, ticks);
	KUNIT_EXPECT_TRUE_MSG(test, time_in_range(exp, from + ticks, to + ticks),
			      "expires %lu, asked for at %lu..%lu + %lu", exp,
			      from, to, ticks);
}

static void task_delay_test(struct kunit *test)
{
	const struct delay_case *t = test->param_value;
	struct sroce_tctx *c = sroce_tctx_new(test, t->exec, body_delay);
	unsigned long start, armed;
	int last = t->calls - 1;

	start = jiffies;
	sroce_task_schedule_after(&c->task, t->ticks);
	armed = jiffies;
	expect_expiry(test, c, start, armed, t->ticks);
	if (t->again) {
		sroce_task_schedule_after(&c->task, t->again);
		expect_expiry(test, c, start, armed, t->ticks);
	}
	if (t->run_meanwhile) {
		/* Inline, long before the expiry: it runs now. */
		sroce_task_run(&c->task);
		KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
		KUNIT_EXPECT_TRUE(test, c->delayed_at[0]);
	}

	KUNIT_ASSERT_TRUE(test, sroce_tctx_wait_calls(c, t->calls));
	/* Not before the delay, and not after the longer one. */
	KUNIT_EXPECT_TRUE(test, time_after_eq(c->call_at[last],
					      start + max(1UL, t->ticks)));
	if (t->again)
		KUNIT_EXPECT_TRUE(test, time_before(c->call_at[last],
						    start + t->again));
	KUNIT_EXPECT_FALSE(test, c->delayed_at[last]);
	KUNIT_EXPECT_FALSE(test, sroce_task_delayed(&c->task));
	msleep(TCTX_QUIET_MS);
	sroce_tctx_expect_settled(test, c, t->calls);
}

/* Sleep until the delay of @t has expired; false if it never does. */
static bool wait_delay_over(struct sroce_task *t)
{
	unsigned long deadline = jiffies + TCTX_WAIT_TIMEOUT;

	while (sroce_task_delayed(t) && time_before(jiffies, deadline))
		schedule_timeout_uninterruptible(1);
	return !sroce_task_delayed(t);
}

/* A delay that expires while the task is disabled runs at enable(). */
static void task_delay_disabled_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_delay);
	unsigned long start = jiffies;

	sroce_task_schedule_after(&c->task, DELAY_TICKS);
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_task_delayed(&c->task));
	KUNIT_ASSERT_TRUE(test, wait_delay_over(&c->task));
	KUNIT_EXPECT_TRUE(test, c->task.pending);
	msleep(TCTX_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 0);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	KUNIT_EXPECT_TRUE(test, time_after_eq(c->call_at[0],
					      start + DELAY_TICKS));
	KUNIT_EXPECT_FALSE(test, c->delayed_at[0]);
	sroce_tctx_expect_settled(test, c, 1);
}

/**
 * struct cleanup_delay_case - a delay and a retired task
 * @name: description
 * @exec: mode
 * @before: the delay is asked for before sroce_task_cleanup()
 * @after: and after it
 */
struct cleanup_delay_case {
	const char *name;
	enum sroce_task_exec exec;
	bool before;
	bool after;
};

static const struct cleanup_delay_case cleanup_delay_cases[] = {
	{ "workqueue: cleanup drops a pending delay", SROCE_TASK_WORKQUEUE,
	  true, false },
	{ "workqueue: a delay after cleanup is ignored", SROCE_TASK_WORKQUEUE,
	  false, true },
	{ "workqueue: both", SROCE_TASK_WORKQUEUE, true, true },
	{ "tasklet: cleanup drops a pending delay", SROCE_TASK_TASKLET,
	  true, false },
	{ "tasklet: a delay after cleanup is ignored", SROCE_TASK_TASKLET,
	  false, true },
	{ "tasklet: both", SROCE_TASK_TASKLET, true, true },
};

static void cleanup_delay_desc(const struct cleanup_delay_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cleanup_delay, cleanup_delay_cases, cleanup_delay_desc);

/* A task freed right after cleanup; it counts its runs outside itself. */
struct delay_victim {
	struct sroce_task task;
	atomic_t *runs;
};

static int victim_fn(void *arg)
{
	struct delay_victim *v = arg;

	atomic_inc(v->runs);
	return 0;
}

/*
 * No run ever happens and nothing touches the task once it is freed: an
 * expiry that did would be a use-after-free KASAN reports (and a timer
 * freed while armed, one debugobjects reports).
 */
static void task_delay_cleanup_test(struct kunit *test)
{
	const struct cleanup_delay_case *t = test->param_value;
	atomic_t *runs = kunit_kzalloc(test, sizeof(*runs), GFP_KERNEL);
	struct delay_victim *v;

	KUNIT_ASSERT_NOT_NULL(test, runs);
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, v);
	v->runs = runs;
	sroce_task_init_exec(&v->task, "test", victim_fn, v, t->exec);

	if (t->before) {
		sroce_task_schedule_after(&v->task, DELAY_TICKS);
		KUNIT_EXPECT_TRUE(test, sroce_task_delayed(&v->task));
	}
	sroce_task_disable(&v->task);
	sroce_task_cleanup(&v->task);
	KUNIT_EXPECT_FALSE(test, sroce_task_delayed(&v->task));
	if (t->after) {
		sroce_task_schedule_after(&v->task, DELAY_TICKS);
		KUNIT_EXPECT_FALSE(test, sroce_task_delayed(&v->task));
	}
	KUNIT_EXPECT_FALSE(test, v->task.pending);
	kfree(v);

	msleep(jiffies_to_msecs(DELAY_TICKS) + TCTX_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(runs), 0);
}

static struct kunit_case sroce_task_delay_test_cases[] = {
	KUNIT_CASE_PARAM(task_delay_test, delay_gen_params),
	KUNIT_CASE_PARAM(task_delay_disabled_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_delay_cleanup_test, cleanup_delay_gen_params),
	{}
};

static struct kunit_suite sroce_task_delay_test_suite = {
	.name = "sroce_task_delay",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_task_delay_test_cases,
};

kunit_test_suites(&sroce_task_delay_test_suite);
