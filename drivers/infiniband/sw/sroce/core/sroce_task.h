/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The execution context of a QP's engines (requester, completer,
 * responder): a task runs its work function until it has nothing left to
 * do, never twice at once, and never after it has been disabled.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TASK_H
#define SROCE_TASK_H

#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/*
 * Calls of the work function per dispatch. A task whose function still
 * has work after this many calls goes to the back of its workqueue (or
 * tasklet list) instead of looping, so that one busy QP cannot keep a
 * CPU from the others. A call that did the work of several (the
 * requester sending a train of packets) says so in its return value,
 * which counts as that many calls.
 */
#define SROCE_TASK_BUDGET	64

/**
 * enum sroce_task_exec - where a task's work function runs
 * @SROCE_TASK_WORKQUEUE: in a worker of the module's "sroce" workqueue
 *	(process context; the default)
 * @SROCE_TASK_TASKLET: in a tasklet (softirq context)
 *
 * sroce_task_run() runs the function in its caller in both modes.
 */
enum sroce_task_exec {
	SROCE_TASK_WORKQUEUE,
	SROCE_TASK_TASKLET,
};

/**
 * enum sroce_task_state - what a task is doing
 * @SROCE_TASK_IDLE: the function is not running and no run is queued
 * @SROCE_TASK_SCHEDULED: exactly one dispatch (work item or tasklet) is
 *	queued and will run the function
 * @SROCE_TASK_RUNNING: the function is running (in a dispatch or in a
 *	caller of sroce_task_run())
 * @SROCE_TASK_RERUN: the function is running and must run once more
 *	when it returns
 *
 * Disabling is counted apart (&sroce_task.disabled); a disabled task is
 * IDLE once sroce_task_disable() has returned. See sroce_task.c for the
 * transition table.
 */
enum sroce_task_state {
	SROCE_TASK_IDLE,
	SROCE_TASK_SCHEDULED,
	SROCE_TASK_RUNNING,
	SROCE_TASK_RERUN,
};

/**
 * struct sroce_task - one engine's execution context, embedded in the QP
 * @lock: protects @state, @disabled, @pending, @dead, @cpu and @yields; taken
 *	with interrupts saved (sroce_task_schedule() may come from hardirq)
 * @state: see enum sroce_task_state
 * @disabled: sroce_task_disable() calls not yet matched by
 *	sroce_task_enable(); the function does not start while nonzero
 * @pending: a run was asked for while disabled; enabling queues it
 * @dead: sroce_task_cleanup() was called; the task never runs again
 * @exec: where the function runs, fixed at sroce_task_init()
 * @cpu: the CPU workqueue dispatches run on, or WORK_CPU_UNBOUND
 *	(sroce_task_set_cpu(), sroce_task_move_here())
 * @yields: dispatches that ended with work left (budget used up)
 * @idle_wait: sroce_task_disable() waits here for the function to return
 * @delay: a run asked for later (sroce_task_schedule_after())
 * @work: the dispatch in workqueue mode
 * @tasklet: the dispatch in tasklet mode
 * @fn: the work function
 * @arg: its argument
 * @name: for messages
 */
struct sroce_task {
	spinlock_t lock; /* see above */
	enum sroce_task_state state;
	unsigned int disabled;
	bool pending;
	bool dead;
	enum sroce_task_exec exec;
	int cpu;
	unsigned long yields;
	wait_queue_head_t idle_wait;
	struct timer_list delay;
	union {
		struct work_struct work;
		struct tasklet_struct tasklet;
	};
	int (*fn)(void *arg);
	void *arg;
	const char *name;
};

int sroce_task_module_init(void);
void sroce_task_module_exit(void);
void sroce_task_defer(struct work_struct *work);

enum sroce_task_exec sroce_task_default_exec(void);
int sroce_task_parse_exec(const char *val);

void sroce_task_init(struct sroce_task *t, const char *name,
		     int (*fn)(void *arg), void *arg);
void sroce_task_init_exec(struct sroce_task *t, const char *name,
			  int (*fn)(void *arg), void *arg,
			  enum sroce_task_exec exec);
int sroce_task_pick_cpu(bool here);
void sroce_task_set_cpu(struct sroce_task *t, int cpu);
void sroce_task_bind_away(struct sroce_task *t);
bool sroce_task_move_here(struct sroce_task *t);
void sroce_task_schedule(struct sroce_task *t);
void sroce_task_schedule_away(struct sroce_task *t);
void sroce_task_schedule_after(struct sroce_task *t, unsigned long ticks);
bool sroce_task_delayed(struct sroce_task *t);
void sroce_task_run(struct sroce_task *t);
void sroce_task_run_budget(struct sroce_task *t, unsigned int budget);
bool sroce_task_may_inline(const struct sroce_task *t);
bool sroce_task_local_enter(void);
void sroce_task_local_exit(bool entered);
void sroce_task_disable(struct sroce_task *t);
void sroce_task_enable(struct sroce_task *t);
void sroce_task_cleanup(struct sroce_task *t);

#endif /* SROCE_TASK_H */
