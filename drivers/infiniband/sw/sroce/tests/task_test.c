// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the engine execution contexts (sroce_task.[ch]).
 *
 * Every behaviour is checked in both modes, workqueue and tasklet. The
 * work function of a test counts its calls and whether it ever found
 * itself already running (task_fix.h). sroce_task_disable() is the tests'
 * barrier: once it returns nothing runs, so a count read then is final,
 * and a run that was still to come shows up as a remembered (pending)
 * request. Runs asked for later are the sroce_task_delay suite's
 * (task_delay_test.c).
 *
 * The KUnit kernel may have a single CPU. Races are then provoked from a
 * hard interrupt (an hrtimer) and from work functions that sleep in
 * process context; the one case that needs a tasklet seen running from
 * another CPU is skipped on a uniprocessor.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "core/sroce_task.h"
#include "task_fix.h"
#include "test_util.h"

#define BUDGET		SROCE_TASK_BUDGET

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
	struct sroce_tctx *c = sroce_tctx_new(test, TCTX_DEFAULT_EXEC, NULL);

	KUNIT_EXPECT_EQ(test, c->task.exec, sroce_task_default_exec());
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_tctx_expect_settled(test, c, 1);
}

/* ---- one request, one run ------------------------------------------------- */

static int body_context(struct sroce_tctx *c, int call)
{
	c->softirq = in_serving_softirq();
	c->process = in_task();
	c->work = current_work();
	return 0;
}

static void task_runs_after_schedule_test(struct kunit *test)
{
	enum sroce_task_exec exec = sroce_tctx_param_exec(test);
	struct sroce_tctx *c = sroce_tctx_new(test, exec, body_context);

	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_tctx_expect_settled(test, c, 1);
	if (exec == SROCE_TASK_TASKLET) {
		KUNIT_EXPECT_TRUE(test, c->softirq);
	} else {
		KUNIT_EXPECT_TRUE(test, c->process);
		KUNIT_EXPECT_PTR_EQ(test, c->work, &c->task.work);
	}
}

/* ---- more to do: re-run, yielding every SROCE_TASK_BUDGET calls ----------- */

static int body_limit(struct sroce_tctx *c, int call)
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
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_limit);

	c->limit = 3 * BUDGET + 6;
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 3 * BUDGET + 6));
	sroce_tctx_expect_settled(test, c, 3 * BUDGET + 6);
	KUNIT_EXPECT_EQ(test, c->task.yields, 3);
}

/* Each call reports the work of 16 calls: a dispatch's budget lasts four. */
static int body_weighty(struct sroce_tctx *c, int call)
{
	return call < c->limit ? 16 : 0;
}

/*
 * BUDGET + 1 calls worth 16 each: a dispatch yields after BUDGET / 16 of
 * them, so they take 17 dispatches, 16 of which end with work left.
 */
static void task_weighted_budget_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_weighty);

	c->limit = BUDGET + 1;
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, BUDGET + 1));
	sroce_tctx_expect_settled(test, c, BUDGET + 1);
	KUNIT_EXPECT_EQ(test, c->task.yields, BUDGET / 4);
}

/* An idle task runs in the caller of sroce_task_run(), before it returns. */
static void task_run_inline_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_limit);

	c->limit = 1;
	c->caller = current;
	sroce_task_run(&c->task);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 1);
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	sroce_tctx_expect_settled(test, c, 1);
}

/*
 * A task bound to another CPU runs there, not in a caller here; once
 * moved (idle, enabled) it runs in the caller. A disabled or queued task
 * is not moved, nor is an unbound one (it runs anywhere).
 */
static void task_move_here_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, SROCE_TASK_WORKQUEUE,
					      body_limit);
	unsigned long flags;
	unsigned int other;
	int here;

	KUNIT_EXPECT_TRUE(test, sroce_task_move_here(&c->task));
	KUNIT_EXPECT_EQ(test, c->task.cpu, WORK_CPU_UNBOUND);

	migrate_disable();
	here = raw_smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, here);
	if (other >= nr_cpu_ids) {
		migrate_enable();
		kunit_skip(test, "one CPU: nowhere else to be bound");
	}
	c->limit = 1;
	c->caller = current;
	sroce_task_set_cpu(&c->task, other);
	sroce_task_run(&c->task);		/* dispatched on @other */
	migrate_enable();
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_tctx_expect_settled(test, c, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 0);
	sroce_task_enable(&c->task);		/* settled left it disabled */

	migrate_disable();
	here = raw_smp_processor_id();
	c->task.cpu = cpumask_any_but(cpu_online_mask, here);
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_FALSE(test, sroce_task_move_here(&c->task));
	KUNIT_EXPECT_NE(test, c->task.cpu, here);
	sroce_task_enable(&c->task);

	spin_lock_irqsave(&c->task.lock, flags);
	c->task.state = SROCE_TASK_SCHEDULED;	/* as if queued there */
	spin_unlock_irqrestore(&c->task.lock, flags);
	KUNIT_EXPECT_FALSE(test, sroce_task_move_here(&c->task));
	KUNIT_EXPECT_NE(test, c->task.cpu, here);
	spin_lock_irqsave(&c->task.lock, flags);
	c->task.state = SROCE_TASK_IDLE;
	spin_unlock_irqrestore(&c->task.lock, flags);

	KUNIT_EXPECT_TRUE(test, sroce_task_move_here(&c->task));
	KUNIT_EXPECT_EQ(test, c->task.cpu, here);
	sroce_task_run(&c->task);
	migrate_enable();
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 1);
	sroce_tctx_expect_settled(test, c, 2);
}

/*
 * An idle, unbound task is bound to a CPU other than the caller's, and
 * then runs only there; a queued one stays unbound (the caller tries
 * again), and a bound one keeps its CPU. A tasklet is never bound.
 */
static void task_bind_away_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, SROCE_TASK_WORKQUEUE,
					      body_limit);
	struct sroce_tctx *tl = sroce_tctx_new(test, SROCE_TASK_TASKLET,
					       body_limit);
	unsigned long flags;
	int here, bound;

	migrate_disable();
	here = raw_smp_processor_id();
	if (num_online_cpus() < 2) {
		sroce_task_bind_away(&c->task);
		migrate_enable();
		KUNIT_EXPECT_EQ(test, c->task.cpu, WORK_CPU_UNBOUND);
		kunit_skip(test, "one CPU: nowhere else to be bound");
	}
	spin_lock_irqsave(&c->task.lock, flags);
	c->task.state = SROCE_TASK_SCHEDULED;	/* as if queued */
	spin_unlock_irqrestore(&c->task.lock, flags);
	sroce_task_bind_away(&c->task);
	KUNIT_EXPECT_EQ(test, c->task.cpu, WORK_CPU_UNBOUND);
	spin_lock_irqsave(&c->task.lock, flags);
	c->task.state = SROCE_TASK_IDLE;
	spin_unlock_irqrestore(&c->task.lock, flags);

	sroce_task_bind_away(&c->task);
	bound = c->task.cpu;
	KUNIT_EXPECT_NE(test, bound, WORK_CPU_UNBOUND);
	KUNIT_EXPECT_NE(test, bound, here);
	KUNIT_EXPECT_TRUE(test, cpu_online(bound));
	sroce_task_bind_away(&c->task);
	KUNIT_EXPECT_EQ(test, c->task.cpu, bound);

	c->limit = 1;
	c->caller = current;
	sroce_task_run(&c->task);		/* dispatched on @bound */
	migrate_enable();
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_tctx_expect_settled(test, c, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 0);

	sroce_task_bind_away(&tl->task);
	KUNIT_EXPECT_EQ(test, tl->task.cpu, WORK_CPU_UNBOUND);
}

/*
 * 2 * BUDGET + 1 calls started by sroce_task_run(): BUDGET in the caller,
 * which then yields; BUDGET in a dispatch, which yields too; the last one
 * in another dispatch.
 */
static void task_run_budget_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_limit);

	c->limit = 2 * BUDGET + 1;
	c->caller = current;
	sroce_task_run(&c->task);
	KUNIT_EXPECT_GE(test, atomic_read(&c->calls), BUDGET);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 2 * BUDGET + 1));
	sroce_tctx_expect_settled(test, c, 2 * BUDGET + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), BUDGET);
	KUNIT_EXPECT_EQ(test, c->task.yields, 2);
}

/*
 * sroce_task_run_budget() with a budget of 2: two calls in the caller,
 * the other three of five in a dispatch. Handing on after an inline run
 * is no yield.
 */
static void task_run_small_budget_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_limit);

	c->limit = 5;
	c->caller = current;
	sroce_task_run_budget(&c->task, 2);
	KUNIT_EXPECT_GE(test, atomic_read(&c->calls), 2);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 5));
	sroce_tctx_expect_settled(test, c, 5);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 2);
	KUNIT_EXPECT_EQ(test, c->task.yields, 0);
}

/* A budget of 1 that leaves the function idle queues no dispatch. */
static void task_run_one_call_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_limit);

	c->limit = 1;
	c->caller = current;
	sroce_task_run_budget(&c->task, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->inline_calls), 1);
	KUNIT_EXPECT_EQ(test, c->task.state, SROCE_TASK_IDLE);
	sroce_tctx_expect_settled(test, c, 1);
}

/* What sroce_task_may_inline() says in a tasklet, that is in softirq. */
struct inline_probe {
	struct tasklet_struct tasklet;
	struct sroce_task *wq_task;
	struct sroce_task *tl_task;
	bool wq_ok;
	bool tl_ok;
	struct completion done;
};

static void inline_probe_fn(struct tasklet_struct *tasklet)
{
	struct inline_probe *p = from_tasklet(p, tasklet, tasklet);

	p->wq_ok = sroce_task_may_inline(p->wq_task);
	p->tl_ok = sroce_task_may_inline(p->tl_task);
	complete(&p->done);
}

/*
 * With the module's defaults, the receive path may run a workqueue-mode
 * task in softirq; never from plain process context, and never a
 * tasklet-mode task, which runs in softirq anyway.
 */
static void task_may_inline_test(struct kunit *test)
{
	struct sroce_tctx *wq = sroce_tctx_new(test, SROCE_TASK_WORKQUEUE,
					       body_limit);
	struct sroce_tctx *tl = sroce_tctx_new(test, SROCE_TASK_TASKLET,
					       body_limit);
	struct inline_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	bool done;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_FALSE(test, sroce_task_may_inline(&wq->task));
	KUNIT_EXPECT_FALSE(test, sroce_task_may_inline(&tl->task));
	p->wq_task = &wq->task;
	p->tl_task = &tl->task;
	init_completion(&p->done);
	tasklet_setup(&p->tasklet, inline_probe_fn);
	tasklet_schedule(&p->tasklet);
	done = wait_for_completion_timeout(&p->done, TCTX_WAIT_TIMEOUT);
	tasklet_kill(&p->tasklet);
	KUNIT_ASSERT_TRUE(test, done);
	KUNIT_EXPECT_TRUE(test, p->wq_ok);
	KUNIT_EXPECT_FALSE(test, p->tl_ok);
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

static int body_rerun(struct sroce_tctx *c, int call)
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
	struct sroce_tctx *c = sroce_tctx_new(test, rc->exec, body_rerun);

	c->rc = rc;
	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, rc->calls));
	sroce_tctx_expect_settled(test, c, rc->calls);
}

/* ---- concurrent requests -------------------------------------------------- */

#define PRODUCERS		4
#define PRODUCER_ITERS		1000
#define IRQ_PERIOD_NS		(200 * NSEC_PER_USEC)

/* Record what was produced; sleep now and then where that is allowed. */
static int body_consume(struct sroce_tctx *c, int call)
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
	struct sroce_tctx *c = arg;
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
	struct sroce_tctx *c = container_of(timer, struct sroce_tctx, timer);

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
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      body_consume);
	int i, final;

	for (i = 0; i < PRODUCERS; i++)
		tsk[i] = sroce_tctx_kthread_start(test, producer_fn, c, -1);
	hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	c->timer.function = irq_producer;
	hrtimer_start(&c->timer, ns_to_ktime(IRQ_PERIOD_NS), HRTIMER_MODE_REL);

	for (i = 0; i < PRODUCERS; i++)
		KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c->producers_done,
								    30 * HZ));
	for (i = 0; i < PRODUCERS; i++)
		sroce_tctx_kthread_finish(tsk[i]);
	WRITE_ONCE(c->timer_stop, true);
	hrtimer_cancel(&c->timer);

	/* The last request was not lost: a run saw everything produced. */
	final = atomic_read(&c->produced);
	KUNIT_EXPECT_GE(test, final, PRODUCERS * PRODUCER_ITERS);
	KUNIT_EXPECT_TRUE(test, wait_event_timeout(c->called,
						   READ_ONCE(c->seen) == final,
						   TCTX_WAIT_TIMEOUT) > 0);
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
static int body_hold(struct sroce_tctx *c, int call)
{
	int i;

	if (call > 1)
		return 0;
	complete(&c->entered);
	if (preemptible()) {
		wait_event_timeout(c->go, READ_ONCE(c->disabling),
				   TCTX_WAIT_TIMEOUT);
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
	struct sroce_tctx *c = sroce_tctx_new(test, bc->exec, body_hold);
	unsigned int cpu;

	switch (bc->how) {
	case BUSY_SCHEDULE:
		sroce_task_schedule(&c->task);
		break;
	case BUSY_KTHREAD_RUN:
		c->kick_run = true;
		tsk = sroce_tctx_kthread_start(test, sroce_tctx_kick_fn, c, -1);
		break;
	case BUSY_OTHER_CPU:
		cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
		if (cpu >= nr_cpu_ids)
			kunit_skip(test, "one CPU: a tasklet cannot be seen running");
		tsk = sroce_tctx_kthread_start(test, sroce_tctx_kick_fn, c, cpu);
		break;
	}

	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c->entered,
							    TCTX_WAIT_TIMEOUT));
	WRITE_ONCE(c->disabling, true);
	wake_up(&c->go);
	sroce_task_disable(&c->task);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(c->finished));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	/* The call's "more to do" is kept for enable(). */
	KUNIT_EXPECT_TRUE(test, c->task.pending);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 2));
	sroce_tctx_expect_settled(test, c, 2);
	if (tsk)
		sroce_tctx_kthread_finish(tsk);
}

/*
 * A run queued but not started when disable() comes is taken back and
 * remembered; if it started first, it is over. Either way one run in all.
 */
static void task_disable_cancels_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      NULL);
	int before;

	sroce_task_schedule(&c->task);
	sroce_task_disable(&c->task);
	before = atomic_read(&c->calls);
	KUNIT_EXPECT_LE(test, before, 1);
	KUNIT_EXPECT_EQ(test, c->task.pending, before == 0);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));
	msleep(TCTX_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), before);

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_tctx_expect_settled(test, c, 1);
}

/* Requests while disabled wait for the last enable(), then run once. */
static void task_schedule_disabled_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      NULL);

	sroce_task_disable(&c->task);
	sroce_task_disable(&c->task);
	sroce_task_schedule(&c->task);
	sroce_task_schedule(&c->task);
	sroce_task_run(&c->task);
	sroce_task_schedule(&c->task);
	msleep(TCTX_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 0);
	KUNIT_EXPECT_TRUE(test, c->task.pending);

	sroce_task_enable(&c->task);
	msleep(TCTX_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 0);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));

	sroce_task_enable(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_tctx_expect_settled(test, c, 1);
}

/* After cleanup nothing is queued and nothing runs, whatever is asked. */
static void task_cleanup_quiet_test(struct kunit *test)
{
	struct sroce_tctx *c = sroce_tctx_new(test, sroce_tctx_param_exec(test),
					      NULL);

	sroce_task_schedule(&c->task);
	KUNIT_EXPECT_TRUE(test, sroce_tctx_wait_calls(c, 1));
	sroce_task_disable(&c->task);
	sroce_task_schedule(&c->task);
	sroce_task_cleanup(&c->task);
	KUNIT_EXPECT_FALSE(test, c->task.pending);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));

	sroce_task_schedule(&c->task);
	sroce_task_run(&c->task);
	msleep(TCTX_QUIET_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->calls), 1);
	KUNIT_EXPECT_FALSE(test, c->task.pending);
	KUNIT_EXPECT_FALSE(test, sroce_tctx_dispatch_queued(&c->task));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->overlaps), 0);
}

/*
 * A same-host delivery (sroce_task_local_enter()): the outermost one may
 * run a workqueue-mode task inline, one inside it may not, and bottom
 * halves off without a delivery do not count. With interrupts off there
 * is no delivery context at all.
 */
static void task_may_inline_local_test(struct kunit *test)
{
	struct sroce_tctx *wq = sroce_tctx_new(test, SROCE_TASK_WORKQUEUE,
					       body_limit);
	struct sroce_tctx *tl = sroce_tctx_new(test, SROCE_TASK_TASKLET,
					       body_limit);
	bool outer, inner, bh_only, irqs_off;
	bool at_outer, at_inner, tl_outer, back, after;

	local_bh_disable();
	bh_only = sroce_task_may_inline(&wq->task);
	local_bh_enable();

	outer = sroce_task_local_enter();
	at_outer = sroce_task_may_inline(&wq->task);
	tl_outer = sroce_task_may_inline(&tl->task);
	inner = sroce_task_local_enter();
	at_inner = sroce_task_may_inline(&wq->task);
	sroce_task_local_exit(inner);
	back = sroce_task_may_inline(&wq->task);
	sroce_task_local_exit(outer);
	after = sroce_task_may_inline(&wq->task);

	local_irq_disable();
	irqs_off = sroce_task_local_enter();
	sroce_task_local_exit(irqs_off);
	local_irq_enable();

	KUNIT_EXPECT_FALSE(test, bh_only);
	KUNIT_EXPECT_TRUE(test, outer && inner);
	KUNIT_EXPECT_TRUE(test, at_outer);
	KUNIT_EXPECT_FALSE(test, tl_outer);
	KUNIT_EXPECT_FALSE(test, at_inner);
	KUNIT_EXPECT_TRUE(test, back);
	KUNIT_EXPECT_FALSE(test, after);
	KUNIT_EXPECT_FALSE(test, irqs_off);
}

static struct kunit_case sroce_task_test_cases[] = {
	KUNIT_CASE_PARAM(task_exec_param_test, exec_gen_params),
	KUNIT_CASE(task_init_default_test),
	KUNIT_CASE_PARAM(task_runs_after_schedule_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_rerun_until_idle_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_weighted_budget_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_run_inline_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE(task_move_here_test),
	KUNIT_CASE(task_bind_away_test),
	KUNIT_CASE_PARAM(task_run_budget_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_run_small_budget_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_run_one_call_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE(task_may_inline_test),
	KUNIT_CASE(task_may_inline_local_test),
	KUNIT_CASE_PARAM(task_schedule_during_run_test, rerun_gen_params),
	KUNIT_CASE_PARAM(task_concurrent_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_disable_waits_test, busy_gen_params),
	KUNIT_CASE_PARAM(task_disable_cancels_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_schedule_disabled_test, sroce_tctx_mode_gen_params),
	KUNIT_CASE_PARAM(task_cleanup_quiet_test, sroce_tctx_mode_gen_params),
	{}
};

static struct kunit_suite sroce_task_test_suite = {
	.name = "sroce_task",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_task_test_cases,
};

kunit_test_suites(&sroce_task_test_suite);
