// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The task under test of the engine execution context suites
 * (task_fix.h).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "core/sroce_task.h"
#include "task_fix.h"

static int tctx_fn(void *arg)
{
	struct sroce_tctx *c = arg;
	int call, ret;

	if (atomic_inc_return(&c->inside) > 1)
		atomic_inc(&c->overlaps);
	call = atomic_inc_return(&c->calls);
	ret = c->body ? c->body(c, call) : 0;
	atomic_dec(&c->inside);
	wake_up(&c->called);
	return ret;
}

static int tctx_res_init(struct kunit_resource *res, void *context)
{
	struct sroce_tctx *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return -ENOMEM;
	init_waitqueue_head(&c->called);
	init_waitqueue_head(&c->go);
	init_completion(&c->producers_done);
	init_completion(&c->entered);
	res->data = c;
	return 0;
}

/* Retire the task, whatever state the test left it in, then free it. */
static void tctx_res_free(struct kunit_resource *res)
{
	struct sroce_tctx *c = res->data;

	if (!c->task.dead) {
		if (!c->task.disabled)
			sroce_task_disable(&c->task);
		sroce_task_cleanup(&c->task);
	}
	kfree(c);
}

/**
 * sroce_tctx_new() - a task under test
 * @test: the running test; the task is retired and freed with it
 * @exec: its mode (TCTX_DEFAULT_EXEC: the module parameter's)
 * @body: what each call of its function does (NULL: nothing)
 *
 * Context: process context; asserts (ends the test) on failure.
 * Return: the task under test, idle and enabled.
 */
struct sroce_tctx *sroce_tctx_new(struct kunit *test, int exec,
				  int (*body)(struct sroce_tctx *c, int call))
{
	struct sroce_tctx *c;

	c = kunit_alloc_resource(test, tctx_res_init, tctx_res_free,
				 GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->body = body;
	if (exec == TCTX_DEFAULT_EXEC)
		sroce_task_init(&c->task, "test", tctx_fn, c);
	else
		sroce_task_init_exec(&c->task, "test", tctx_fn, c, exec);
	return c;
}

/**
 * sroce_tctx_wait_calls() - wait until the function was called @n times
 * @c: the task under test
 * @n: calls to wait for
 *
 * Return: true, or false after TCTX_WAIT_TIMEOUT.
 */
bool sroce_tctx_wait_calls(struct sroce_tctx *c, int n)
{
	return wait_event_timeout(c->called, atomic_read(&c->calls) >= n,
				  TCTX_WAIT_TIMEOUT) > 0;
}

/**
 * sroce_tctx_dispatch_queued() - is a run of @t queued?
 * @t: the task
 *
 * Return: whether its work item or tasklet is queued.
 */
bool sroce_tctx_dispatch_queued(struct sroce_task *t)
{
	if (t->exec == SROCE_TASK_TASKLET)
		return test_bit(TASKLET_STATE_SCHED, &t->tasklet.state);
	return work_pending(&t->work);
}

/**
 * sroce_tctx_expect_settled() - stop the task and check it settled
 * @test: the running test
 * @c: the task under test; it is left disabled
 * @calls: the function ran exactly this many times, and nothing more was
 *	due
 */
void sroce_tctx_expect_settled(struct kunit *test, struct sroce_tctx *c,
			       int calls)
{
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), calls);
	KUNIT_EXPECT_FALSE(test, c->task.pending);
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->overlaps), 0);
}

/**
 * sroce_tctx_kick_fn() - a kthread that makes one request
 * @arg: the task under test; its @kick_run says which request
 *
 * Started by sroce_tctx_kthread_start(), optionally on a given CPU.
 *
 * Return: 0.
 */
int sroce_tctx_kick_fn(void *arg)
{
	struct sroce_tctx *c = arg;

	if (c->kick_run)
		sroce_task_run(&c->task);
	else
		sroce_task_schedule(&c->task);
	return 0;
}

/**
 * sroce_tctx_kthread_start() - start a kthread for the task under test
 * @test: the running test
 * @fn: the kthread's function
 * @c: its argument
 * @cpu: the CPU it is bound to, or -1 for any
 *
 * Context: process context; asserts (ends the test) on failure.
 * Return: the kthread, to be passed to sroce_tctx_kthread_finish().
 */
struct task_struct *sroce_tctx_kthread_start(struct kunit *test,
					     int (*fn)(void *arg),
					     struct sroce_tctx *c, int cpu)
{
	struct task_struct *tsk;

	tsk = kthread_create(fn, c, "sroce-task-test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(tsk));
	/* kthread_stop() must find it even if it has exited. */
	get_task_struct(tsk);
	if (cpu >= 0)
		kthread_bind(tsk, cpu);
	wake_up_process(tsk);
	return tsk;
}

/**
 * sroce_tctx_kthread_finish() - stop and release a kthread
 * @tsk: what sroce_tctx_kthread_start() returned
 */
void sroce_tctx_kthread_finish(struct task_struct *tsk)
{
	kthread_stop(tsk);
	put_task_struct(tsk);
}

/* ---- the modes ------------------------------------------------------------ */

static const enum sroce_task_exec task_modes[] = {
	SROCE_TASK_WORKQUEUE,
	SROCE_TASK_TASKLET,
};

static void task_mode_desc(const enum sroce_task_exec *m, char *desc)
{
	strscpy(desc, *m == SROCE_TASK_TASKLET ? "tasklet" : "workqueue",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(task_mode, task_modes, task_mode_desc);

/**
 * sroce_tctx_mode_gen_params() - the two modes, as a KUnit parameter
 * @prev: the previous mode (an enum sroce_task_exec), or NULL
 * @desc: where the mode's name goes
 *
 * Return: the next mode, or NULL after the last.
 */
const void *sroce_tctx_mode_gen_params(const void *prev, char *desc)
{
	return task_mode_gen_params(prev, desc);
}

/**
 * sroce_tctx_param_exec() - the mode of a sroce_tctx_mode_gen_params() case
 * @test: the running test
 *
 * Return: its mode.
 */
enum sroce_task_exec sroce_tctx_param_exec(struct kunit *test)
{
	return *(const enum sroce_task_exec *)test->param_value;
}
