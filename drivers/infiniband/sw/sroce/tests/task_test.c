// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the engine execution contexts (sroce_task.[ch]).
 *
 * Every behaviour is checked in both modes, workqueue and tasklet. The
 * work function of a test counts its calls and whether it ever found
 * itself already running. sroce_task_disable() is the tests' barrier: once
 * it returns nothing runs, so a count read then is final, and a run that
 * was still to come shows up as a remembered (pending) request.
 *
 * The KUnit kernel may have a single CPU. Races are then provoked from a
 * hard interrupt (an hrtimer) and from work functions that sleep in
 * process context; the one case that needs a tasklet seen running from
 * another CPU is skipped on a uniprocessor.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "core/sroce_task.h"
#include "test_util.h"

#define BUDGET		SROCE_TASK_BUDGET
#define WAIT_TIMEOUT	(10 * HZ)
/* How long a test watches for a run that must not happen. */
#define QUIET_MS	30
#define DEFAULT_EXEC	(-1)
/* Calls whose time a delay test records. */
#define DELAY_CALLS	4

/* ---- a task under test ---------------------------------------------------- */

struct rerun_case;

struct tctx {
	struct sroce_task task;
	int (*body)(struct tctx *c, int call);
	atomic_t calls;
	atomic_t inside;
	atomic_t overlaps;
	wait_queue_head_t called;	/* woken after each call */
	/* where the first call ran */
	bool softirq;
	bool process;
	struct work_struct *work;
	/* sroce_task_run() from the test thread */
	struct task_struct *caller;
	atomic_t inline_calls;
	int limit;
	const struct rerun_case *rc;
	/* concurrent requests */
	atomic_t produced;
	int seen;
	struct hrtimer timer;
	bool timer_stop;
	struct completion producers_done;
	/* disable while running */
	struct completion entered;
	wait_queue_head_t go;
	bool disabling;
	bool finished;
	bool kick_run;
	/* delayed runs: when each of the first calls ran, and what it saw */
	unsigned long call_at[DELAY_CALLS];
	bool delayed_at[DELAY_CALLS];
};

static int tctx_fn(void *arg)
{
	struct tctx *c = arg;
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
	struct tctx *c = kzalloc(sizeof(*c), GFP_KERNEL);

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
	struct tctx *c = res->data;

	if (!c->task.dead) {
		if (!c->task.disabled)
			sroce_task_disable(&c->task);
		sroce_task_cleanup(&c->task);
	}
	kfree(c);
}

/* A task in mode @exec (DEFAULT_EXEC: the module parameter's). */
static struct tctx *tctx_new(struct kunit *test, int exec,
			     int (*body)(struct tctx *c, int call))
{
	struct tctx *c;

	c = kunit_alloc_resource(test, tctx_res_init, tctx_res_free,
				 GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->body = body;
	if (exec == DEFAULT_EXEC)
		sroce_task_init(&c->task, "test", tctx_fn, c);
	else
		sroce_task_init_exec(&c->task, "test", tctx_fn, c, exec);
	return c;
}

static bool wait_calls(struct tctx *c, int n)
{
	return wait_event_timeout(c->called, atomic_read(&c->calls) >= n,
				  WAIT_TIMEOUT) > 0;
}

static bool dispatch_queued(struct sroce_task *t)
{
	if (t->exec == SROCE_TASK_TASKLET)
		return test_bit(TASKLET_STATE_SCHED, &t->tasklet.state);
	return work_pending(&t->work);
}

/* Stop the task; it ran exactly @calls times and nothing more was due. */
static void expect_settled(struct kunit *test, struct tctx *c, int calls)
{
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), calls);
	KUNIT_EXPECT_FALSE(test, c->task.pending);
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->overlaps), 0);
}

/* A kthread that makes one request, optionally on a given CPU. */
static int kick_fn(void *arg)
{
	struct tctx *c = arg;

	if (c->kick_run)
		sroce_task_run(&c->task);
	else
		sroce_task_schedule(&c->task);
	return 0;
}

static struct task_struct *kthread_start(struct kunit *test,
					 int (*fn)(void *arg), struct tctx *c,
					 int cpu)
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

static void kthread_finish(struct task_struct *tsk)
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

static enum sroce_task_exec param_exec(struct kunit *test)
{
	return *(const enum sroce_task_exec *)test->param_value;
}

/* ---- the module parameter ------------------------------------------------- */

struct exec_case {
	const char *name;
	const char *val;
	int exec;
};

static const struct exec_case exec_cases[] = {
	{ "workqueue", "workqueue", SROCE_TASK_WORKQUEUE },
	{ "tasklet", "tasklet", SROCE_TASK_TASKLET },
	{ "workqueue, newline (sysfs)", "workqueue\n", SROCE_TASK_WORKQUEUE },
	{ "tasklet, newline (sysfs)", "tasklet\n", SROCE_TASK_TASKLET },
	{ "empty", "", -EINVAL },
	{ "prefix", "work", -EINVAL },
	{ "longer", "tasklets", -EINVAL },
	{ "capitalised", "Tasklet", -EINVAL },
	{ "number", "1", -EINVAL },
};

static void exec_desc(const struct exec_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(exec, exec_cases, exec_desc);

static void task_exec_param_test(struct kunit *test)
{
	const struct exec_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_task_parse_exec(t->val), t->exec);
}

/* sroce_task_init() takes the module parameter's mode, and runs. */
static void task_init_default_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, DEFAULT_EXEC, NULL);

	KUNIT_EXPECT_EQ(test, c->task.exec, sroce_task_default_exec());
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 1));
	expect_settled(test, c, 1);
}

/* ---- one request, one run ------------------------------------------------- */

static int body_context(struct tctx *c, int call)
{
	c->softirq = in_serving_softirq();
	c->process = in_task();
	c->work = current_work();
	return 0;
}

static void task_runs_after_schedule_test(struct kunit *test)
{
	enum sroce_task_exec exec = param_exec(test);
	struct tctx *c = tctx_new(test, exec, body_context);

	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 1));
	expect_settled(test, c, 1);
	if (exec == SROCE_TASK_TASKLET) {
		KUNIT_EXPECT_TRUE(test, c->softirq);
	} else {
		KUNIT_EXPECT_TRUE(test, c->process);
		KUNIT_EXPECT_PTR_EQ(test, c->work, &c->task.work);
	}
}

/* ---- more to do: re-run, yielding every SROCE_TASK_BUDGET calls ----------- */

static int body_limit(struct tctx *c, int call)
{
	if (current == c->caller && !in_interrupt())
		atomic_inc(&c->inline_calls);
	return call < c->limit ? 1 : 0;
}

/*
 * More work for 3 * BUDGET + 5 calls, idle at the next: 3 * BUDGET + 6
 * calls in four dispatches, the first three of which end with work left.
 */
static void task_rerun_until_idle_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), body_limit);

	c->limit = 3 * BUDGET + 6;
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 3 * BUDGET + 6));
	expect_settled(test, c, 3 * BUDGET + 6);
	KUNIT_EXPECT_EQ(test, c->task.yields, 3);
}

/* An idle task runs in the caller of sroce_task_run(), before it returns. */
static void task_run_inline_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), body_limit);

	c->limit = 1;
	c->caller = current;
	sroce_task_run(&c->task);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 1);
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	expect_settled(test, c, 1);
}

/*
 * 2 * BUDGET + 1 calls started by sroce_task_run(): BUDGET in the caller,
 * which then yields; BUDGET in a dispatch, which yields too; the last one
 * in another dispatch.
 */
static void task_run_budget_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), body_limit);

	c->limit = 2 * BUDGET + 1;
	c->caller = current;
	sroce_task_run(&c->task);
	KUNIT_EXPECT_GE(test, atomic_read(&c->calls), BUDGET);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 2 * BUDGET + 1));
	expect_settled(test, c, 2 * BUDGET + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), BUDGET);
	KUNIT_EXPECT_EQ(test, c->task.yields, 2);
}

/* ---- requests that arrive while the function runs ------------------------- */

/**
 * struct rerun_case - the first call requests runs of its own task
 * @name: description
 * @exec: mode
 * @requests: requests the first call makes
 * @by_run: with sroce_task_run() rather than sroce_task_schedule()
 * @ret: what the first call returns (later calls return 0)
 * @calls: expected calls in all
 */
struct rerun_case {
	const char *name;
	enum sroce_task_exec exec;
	int requests;
	bool by_run;
	int ret;
	int calls;
};

static const struct rerun_case rerun_cases[] = {
	{ "workqueue: no request", SROCE_TASK_WORKQUEUE,
	  0, false, 0, 1 },
	{ "workqueue: one schedule, one more run", SROCE_TASK_WORKQUEUE,
	  1, false, 0, 2 },
	{ "workqueue: three schedules, one more run", SROCE_TASK_WORKQUEUE,
	  3, false, 0, 2 },
	{ "workqueue: run from the function, one more run", SROCE_TASK_WORKQUEUE,
	  1, true, 0, 2 },
	{ "workqueue: schedule and more work, one more run", SROCE_TASK_WORKQUEUE,
	  1, false, 1, 2 },
	{ "workqueue: error stops", SROCE_TASK_WORKQUEUE,
	  0, false, -EIO, 1 },
	{ "workqueue: error after a schedule, one more run", SROCE_TASK_WORKQUEUE,
	  1, false, -EIO, 2 },
	{ "tasklet: no request", SROCE_TASK_TASKLET,
	  0, false, 0, 1 },
	{ "tasklet: one schedule, one more run", SROCE_TASK_TASKLET,
	  1, false, 0, 2 },
	{ "tasklet: three schedules, one more run", SROCE_TASK_TASKLET,
	  3, false, 0, 2 },
	{ "tasklet: run from the function, one more run", SROCE_TASK_TASKLET,
	  1, true, 0, 2 },
	{ "tasklet: schedule and more work, one more run", SROCE_TASK_TASKLET,
	  1, false, 1, 2 },
	{ "tasklet: error stops", SROCE_TASK_TASKLET,
	  0, false, -EIO, 1 },
	{ "tasklet: error after a schedule, one more run", SROCE_TASK_TASKLET,
	  1, false, -EIO, 2 },
};

static void rerun_desc(const struct rerun_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rerun, rerun_cases, rerun_desc);

static int body_rerun(struct tctx *c, int call)
{
	int i;

	if (call > 1)
		return 0;
	for (i = 0; i < c->rc->requests; i++) {
		if (c->rc->by_run)
			sroce_task_run(&c->task);
		else
			sroce_task_schedule(&c->task);
	}
	return c->rc->ret;
}

static void task_schedule_during_run_test(struct kunit *test)
{
	const struct rerun_case *rc = test->param_value;
	struct tctx *c = tctx_new(test, rc->exec, body_rerun);

	c->rc = rc;
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, rc->calls));
	expect_settled(test, c, rc->calls);
}

/* ---- concurrent requests -------------------------------------------------- */

#define PRODUCERS		4
#define PRODUCER_ITERS		1000
#define IRQ_PERIOD_NS		(200 * NSEC_PER_USEC)

/* Record what was produced; sleep now and then where that is allowed. */
static int body_consume(struct tctx *c, int call)
{
	WRITE_ONCE(c->seen, atomic_read(&c->produced));
	if (call % 8 == 0 && preemptible())
		usleep_range(10, 20);
	else
		udelay(2);
	return 0;
}

static int producer_fn(void *arg)
{
	struct tctx *c = arg;
	int i;

	for (i = 0; i < PRODUCER_ITERS; i++) {
		atomic_inc(&c->produced);
		if (i & 1)
			sroce_task_run(&c->task);
		else
			sroce_task_schedule(&c->task);
		if (i % 64 == 63)
			usleep_range(20, 50);
		else
			cond_resched();
	}
	complete(&c->producers_done);
	return 0;
}

/* Requests from hard interrupt context, interrupting runs of any kind. */
static enum hrtimer_restart irq_producer(struct hrtimer *timer)
{
	struct tctx *c = container_of(timer, struct tctx, timer);

	atomic_inc(&c->produced);
	sroce_task_schedule(&c->task);
	if (READ_ONCE(c->timer_stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ns_to_ktime(IRQ_PERIOD_NS));
	return HRTIMER_RESTART;
}

static void task_concurrent_test(struct kunit *test)
{
	struct task_struct *tsk[PRODUCERS];
	struct tctx *c = tctx_new(test, param_exec(test), body_consume);
	int i, final;

	for (i = 0; i < PRODUCERS; i++)
		tsk[i] = kthread_start(test, producer_fn, c, -1);
	hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	c->timer.function = irq_producer;
	hrtimer_start(&c->timer, ns_to_ktime(IRQ_PERIOD_NS), HRTIMER_MODE_REL);

	for (i = 0; i < PRODUCERS; i++)
		KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c->producers_done,
								    30 * HZ));
	for (i = 0; i < PRODUCERS; i++)
		kthread_finish(tsk[i]);
	WRITE_ONCE(c->timer_stop, true);
	hrtimer_cancel(&c->timer);

	/* The last request was not lost: a run saw everything produced. */
	final = atomic_read(&c->produced);
	KUNIT_EXPECT_GE(test, final, PRODUCERS * PRODUCER_ITERS);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(c->called,
						   READ_ONCE(c->seen) == final,
						   WAIT_TIMEOUT) > 0);
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->overlaps), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->seen), final);
	kunit_info(test, "%d requests, %d runs, %lu yields\n", final,
		   atomic_read(&c->calls), c->task.yields);
}

/* ---- disabling ------------------------------------------------------------ */

enum busy_how {
	BUSY_SCHEDULE,		/* sroce_task_schedule() from the test */
	BUSY_KTHREAD_RUN,	/* sroce_task_run() in a kthread */
	BUSY_OTHER_CPU,		/* sroce_task_schedule() on another CPU */
};

struct busy_case {
	const char *name;
	enum sroce_task_exec exec;
	enum busy_how how;
};

static const struct busy_case busy_cases[] = {
	{ "workqueue: in the worker", SROCE_TASK_WORKQUEUE, BUSY_SCHEDULE },
	{ "workqueue: inline in a kthread", SROCE_TASK_WORKQUEUE,
	  BUSY_KTHREAD_RUN },
	{ "tasklet: inline in a kthread", SROCE_TASK_TASKLET,
	  BUSY_KTHREAD_RUN },
	{ "tasklet: in the tasklet on another CPU", SROCE_TASK_TASKLET,
	  BUSY_OTHER_CPU },
};

static void busy_desc(const struct busy_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(busy, busy_cases, busy_desc);

/*
 * The first call holds on until the test starts disabling, then 20 ms
 * more, and says it has more to do. In softirq it busy-waits, for at most
 * 500 ms in all.
 */
static int body_hold(struct tctx *c, int call)
{
	int i;

	if (call > 1)
		return 0;
	complete(&c->entered);
	if (preemptible()) {
		wait_event_timeout(c->go, READ_ONCE(c->disabling),
				   WAIT_TIMEOUT);
		msleep(20);
	} else {
		for (i = 0; i < 480 && !READ_ONCE(c->disabling); i++)
			mdelay(1);
		mdelay(20);
	}
	WRITE_ONCE(c->finished, true);
	return 1;
}

static void task_disable_waits_test(struct kunit *test)
{
	const struct busy_case *bc = test->param_value;
	struct task_struct *tsk = NULL;
	struct tctx *c = tctx_new(test, bc->exec, body_hold);
	unsigned int cpu;

	switch (bc->how) {
	case BUSY_SCHEDULE:
		sroce_task_schedule(&c->task);
		break;
	case BUSY_KTHREAD_RUN:
		c->kick_run = true;
		tsk = kthread_start(test, kick_fn, c, -1);
		break;
	case BUSY_OTHER_CPU:
		cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
		if (cpu >= nr_cpu_ids)
			kunit_skip(test, "one CPU: a tasklet cannot be seen running");
		tsk = kthread_start(test, kick_fn, c, cpu);
		break;
	}

	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c->entered,
							    WAIT_TIMEOUT));
	WRITE_ONCE(c->disabling, true);
	wake_up(&c->go);
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(c->finished));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	/* The call's "more to do" is kept for enable(). */
	KUNIT_EXPECT_TRUE(test, c->task.pending);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 2));
	expect_settled(test, c, 2);
	if (tsk)
		kthread_finish(tsk);
}

/*
 * A run queued but not started when disable() comes is taken back and
 * remembered; if it started first, it is over. Either way one run in all.
 */
static void task_disable_cancels_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), NULL);
	int before;

	sroce_task_schedule(&c->task);
	sroce_task_disable(&c->task);
	before = atomic_read(&c->calls);
	KUNIT_EXPECT_LE(test, before, 1);
	KUNIT_EXPECT_EQ(test, c->task.pending, before == 0);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));
	msleep(QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), before);

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 1));
	expect_settled(test, c, 1);
}

/* Requests while disabled wait for the last enable(), then run once. */
static void task_schedule_disabled_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), NULL);

	sroce_task_disable(&c->task);
	sroce_task_disable(&c->task);
	sroce_task_schedule(&c->task);
	sroce_task_schedule(&c->task);
	sroce_task_run(&c->task);
	sroce_task_schedule(&c->task);
	msleep(QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 0);
	KUNIT_EXPECT_TRUE(test, c->task.pending);

	sroce_task_enable(&c->task);
	msleep(QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 0);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 1));
	expect_settled(test, c, 1);
}

/* After cleanup nothing is queued and nothing runs, whatever is asked. */
static void task_cleanup_quiet_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), NULL);

	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 1));
	sroce_task_disable(&c->task);
	sroce_task_schedule(&c->task);
	sroce_task_cleanup(&c->task);
	KUNIT_EXPECT_FALSE(test, c->task.pending);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));

	sroce_task_schedule(&c->task);
	sroce_task_run(&c->task);
	msleep(QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_FALSE(test, c->task.pending);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->overlaps), 0);
}

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
static int body_delay(struct tctx *c, int call)
{
	if (call <= DELAY_CALLS) {
		c->call_at[call - 1] = jiffies;
		c->delayed_at[call - 1] = sroce_task_delayed(&c->task);
	}
	return 0;
}

/* The delay of @c expires in [@from, @to] + @ticks (at least one). */
static void expect_expiry(struct kunit *test, struct tctx *c,
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
	struct tctx *c = tctx_new(test, t->exec, body_delay);
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

	KUNIT_ASSERT_TRUE(test, wait_calls(c, t->calls));
	/* Not before the delay, and not after the longer one. */
	KUNIT_EXPECT_TRUE(test, time_after_eq(c->call_at[last],
					      start + max(1UL, t->ticks)));
	if (t->again)
		KUNIT_EXPECT_TRUE(test, time_before(c->call_at[last],
						    start + t->again));
	KUNIT_EXPECT_FALSE(test, c->delayed_at[last]);
	KUNIT_EXPECT_FALSE(test, sroce_task_delayed(&c->task));
	msleep(QUIET_MS);
	expect_settled(test, c, t->calls);
}

/* Sleep until the delay of @t has expired; false if it never does. */
static bool wait_delay_over(struct sroce_task *t)
{
	unsigned long deadline = jiffies + WAIT_TIMEOUT;

	while (sroce_task_delayed(t) && time_before(jiffies, deadline))
		schedule_timeout_uninterruptible(1);
	return !sroce_task_delayed(t);
}

/* A delay that expires while the task is disabled runs at enable(). */
static void task_delay_disabled_test(struct kunit *test)
{
	struct tctx *c = tctx_new(test, param_exec(test), body_delay);
	unsigned long start = jiffies;

	sroce_task_schedule_after(&c->task, DELAY_TICKS);
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_task_delayed(&c->task));
	KUNIT_ASSERT_TRUE(test, wait_delay_over(&c->task));
	KUNIT_EXPECT_TRUE(test, c->task.pending);
	msleep(QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 0);
	KUNIT_EXPECT_FALSE(test, dispatch_queued(&c->task));

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, wait_calls(c, 1));
	KUNIT_EXPECT_TRUE(test, time_after_eq(c->call_at[0],
					      start + DELAY_TICKS));
	KUNIT_EXPECT_FALSE(test, c->delayed_at[0]);
	expect_settled(test, c, 1);
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

	msleep(jiffies_to_msecs(DELAY_TICKS) + QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(runs), 0);
}

static struct kunit_case sroce_task_test_cases[] = {
	KUNIT_CASE_PARAM(task_exec_param_test, exec_gen_params),
	KUNIT_CASE(task_init_default_test),
	KUNIT_CASE_PARAM(task_runs_after_schedule_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_rerun_until_idle_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_run_inline_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_run_budget_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_schedule_during_run_test, rerun_gen_params),
	KUNIT_CASE_PARAM(task_concurrent_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_disable_waits_test, busy_gen_params),
	KUNIT_CASE_PARAM(task_disable_cancels_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_schedule_disabled_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_cleanup_quiet_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_delay_test, delay_gen_params),
	KUNIT_CASE_PARAM(task_delay_disabled_test, task_mode_gen_params),
	KUNIT_CASE_PARAM(task_delay_cleanup_test, cleanup_delay_gen_params),
	{}
};

static struct kunit_suite sroce_task_test_suite = {
	.name = "sroce_task",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_task_test_cases,
};

kunit_test_suites(&sroce_task_test_suite);
