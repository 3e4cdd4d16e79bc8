/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A task under test for the engine execution context suites (sroce_task
 * and sroce_task_delay): a sroce_task whose work function counts its
 * calls and whether it ever found itself already running, the waits and
 * checks the suites share, kthreads that make requests, and the two
 * modes, workqueue and tasklet, as a KUnit parameter.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TEST_TASK_FIX_H
#define SROCE_TEST_TASK_FIX_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "core/sroce_task.h"

#define TCTX_WAIT_TIMEOUT	(10 * HZ)
/* How long a test watches for a run that must not happen. */
#define TCTX_QUIET_MS		30
/* sroce_tctx_new(): the module parameter's mode. */
#define TCTX_DEFAULT_EXEC	(-1)
/* Calls whose time a delay test records. */
#define TCTX_DELAY_CALLS	4

struct rerun_case;

/**
 * struct sroce_tctx - a task under test
 * @task: the task; its function is tctx_fn(), which calls @body
 * @body: what each call does (NULL: nothing); gets the call's number,
 *	from 1, and returns what the task's function returns
 * @calls: calls so far
 * @inside: calls running now
 * @overlaps: calls that found another one running
 * @called: woken after each call
 * @softirq: the first call ran in softirq context
 * @process: the first call ran in process context
 * @work: the work item the first call ran in, if any
 * @caller: the test thread that calls sroce_task_run()
 * @inline_calls: calls that ran in @caller, not interrupted
 * @limit: the call that finds no more work
 * @rc: what the first call requests (struct rerun_case of the sroce_task
 *	suite)
 * @produced: concurrent requests made
 * @seen: @produced as a run last saw it
 * @timer: the hrtimer that makes requests from hard interrupt context
 * @timer_stop: @timer is not to restart
 * @producers_done: completed by each producer kthread when it is done
 * @entered: completed by a first call that holds on
 * @go: woken when the test starts disabling
 * @disabling: the test is disabling the task
 * @finished: the call that held on is over
 * @kick_run: sroce_tctx_kick_fn() calls sroce_task_run(), not
 *	sroce_task_schedule()
 * @call_at: when each of the first TCTX_DELAY_CALLS calls ran (jiffies)
 * @delayed_at: whether a delay was pending when each of them ran
 */
struct sroce_tctx {
	struct sroce_task task;
	int (*body)(struct sroce_tctx *c, int call);
	atomic_t calls;
	atomic_t inside;
	atomic_t overlaps;
	wait_queue_head_t called;
	bool softirq;
	bool process;
	struct work_struct *work;
	struct task_struct *caller;
	atomic_t inline_calls;
	int limit;
	const struct rerun_case *rc;
	atomic_t produced;
	int seen;
	struct hrtimer timer;
	bool timer_stop;
	struct completion producers_done;
	struct completion entered;
	wait_queue_head_t go;
	bool disabling;
	bool finished;
	bool kick_run;
	unsigned long call_at[TCTX_DELAY_CALLS];
	bool delayed_at[TCTX_DELAY_CALLS];
};

struct sroce_tctx *sroce_tctx_new(struct kunit *test, int exec,
				  int (*body)(struct sroce_tctx *c, int call));
bool sroce_tctx_wait_calls(struct sroce_tctx *c, int n);
bool sroce_tctx_dispatch_queued(struct sroce_task *t);
void sroce_tctx_expect_settled(struct kunit *test, struct sroce_tctx *c,
			       int calls);
int sroce_tctx_kick_fn(void *arg);
struct task_struct *sroce_tctx_kthread_start(struct kunit *test,
					     int (*fn)(void *arg),
					     struct sroce_tctx *c, int cpu);
void sroce_tctx_kthread_finish(struct task_struct *tsk);
const void *sroce_tctx_mode_gen_params(const void *prev, char *desc);
enum sroce_task_exec sroce_tctx_param_exec(struct kunit *test);

#endif /* SROCE_TEST_TASK_FIX_H */
