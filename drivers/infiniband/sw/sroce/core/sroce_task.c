// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Execution contexts for the QP engines.
 *
 * A task calls its work function until the function reports that it has
 * nothing left to do. The function does a bounded amount of work per
 * call and returns 0 when idle, >0 when it has more to do, or a negative
 * errno, after which it is not called again until the next request.
 *
 * States (enum sroce_task_state) and what moves a task between them;
 * "queue" means: queue one dispatch (work item or tasklet) and go to
 * SCHEDULED. "D" is a task with a nonzero disable count.
 *
 *   state       schedule()  run()       fn returned:           fn returned: more
 *                                       nothing left to do     (>0, or RERUN)
 *   IDLE        queue       RUNNING,    -                      -
 *                           fn inline
 *   SCHEDULED   -           -           -                      -
 *   RUNNING     RERUN       RERUN       IDLE                   RUNNING again, or
 *   RERUN       -           -           (counts as more)       queue (yield) after
 *                                                              SROCE_TASK_BUDGET
 *                                                              calls
 *   D, IDLE     pending     pending     -                      -
 *   D, RUNNING  pending     pending     IDLE, wake disable()   IDLE, pending, wake
 *   or RERUN
 *
 *   dispatch:   SCHEDULED becomes RUNNING and the dispatch calls fn; a
 *               dispatch that finds IDLE does nothing.
 *   disable():  count++; SCHEDULED becomes IDLE + pending (the queued
 *               dispatch finds IDLE and does nothing); then sleep until the
 *               state is IDLE and wait for the dispatch to be gone.
 *   enable():   count--; at zero, a pending run is queued (exactly one).
 *   cleanup():  the task is dead: pending is dropped, enable() refuses.
 *
 * Hence: the function never runs twice at once (it is called only by
 * whoever moved the task from IDLE or SCHEDULED to RUNNING under @lock,
 * until that caller moves it out of RUNNING again); a request
 * that arrives while it runs is never lost (RERUN, or pending while
 * disabled) and causes exactly one more run, however many arrive; and once
 * disable() returns the function is not running and cannot start until
 * enable(). A negative return does not cancel a request that arrived
 * during that call: the request came after the call had started.
 *
 * Disabling waits for at most one call of the function (the runner
 * re-checks the disable count between calls), sleeping on @idle_wait:
 * there is no spinning and no timeout after which a QP would be freed
 * under a running engine. A wait that lasts SROCE_TASK_STALL is reported
 * and continues.
 *
 * Tasklet mode does not use tasklet_disable(): a scheduled tasklet that is
 * disabled never runs, so tasklet_kill() would then wait for ever, and
 * tasklet_disable_in_atomic() spins. (In Debian's 6.1, tasklet_disable()
 * itself sleeps in tasklet_unlock_wait(); vanilla kernels before 5.13
 * spun there.) Our own count makes a late tasklet a no-op, and
 * tasklet_kill() then waits, sleeping in wait_var_event(), until it has
 * run and is no longer scheduled. Workqueue mode uses cancel_work_sync()
 * for the same purpose, which also tells lockdep that disable() waits for
 * the work.
 *
 * The workqueues. Two for the module: "sroce" (WQ_UNBOUND |
 * WQ_MEM_RECLAIM | WQ_SYSFS) for the completer and the responders of UC
 * and UD QPs, and "sroce_pinned" (per CPU, WQ_CPU_INTENSIVE |
 * WQ_MEM_RECLAIM) for the requester, the RC responder, and work handed
 * to another CPU (sroce_task_schedule_away()).
 *  - WQ_MEM_RECLAIM: storage ULPs (NVMe-oF, iSER, SRP, NFS/RDMA) write
 *    pages back over RDMA during memory reclaim, so the engines must make
 *    progress when no worker can be created; it gives each queue a
 *    rescuer thread. It also keeps the workqueue core quiet when such a
 *    ULP's reclaim work flushes ours (check_flush_dependency()).
 *  - The requester runs on one CPU (sroce_task_set_cpu()): its
 *    dispatches go to that CPU, and it runs in the caller of post_send
 *    only on that CPU. A packet sent on a veth (or any netdev that hands
 *    it to netif_rx()) waits in the sending CPU's backlog; request packets
 *    of one QP sent from two CPUs overtook each other there, which cost
 *    RC a go-back-N and UC the message. A user QP's requester gets its
 *    creator's CPU, where the application posts from; kernel QPs are
 *    spread over the CPUs (sroce_task_pick_cpu()). An idle requester may
 *    be moved to another CPU when nothing it sent can still be queued
 *    on the old one (sroce_task_move_here()). WQ_CPU_INTENSIVE keeps a
 *    long requester run from holding up the other work of its CPU.
 *  - The responder of an RC QP sends too (ACKs, READ and atomic
 *    responses), and a READ or atomic response overtaken in a backlog
 *    reads as lost, so it is bound as well, when its first READ or atomic
 *    request arrives, to a CPU other than that one
 *    (sroce_task_bind_away()): on a veth the request came from the peer's
 *    requester, which then keeps its CPU to itself. It never moves.
 *  - WQ_UNBOUND for the rest: an engine is CPU-bound (copies, ICRC) and
 *    runs up to SROCE_TASK_BUDGET calls per dispatch; unbound workers let
 *    the scheduler spread the completers (which send nothing) and the
 *    UC and UD responders over the CPUs.
 *  - WQ_SYSFS: /sys/devices/virtual/workqueue/sroce/{cpumask,nice} let an
 *    administrator confine the unbound engines without a rebuild.
 *    WQ_HIGHPRI is left out: a nice -20 worker running copies would
 *    starve the very applications it serves.
 *  - Tasklet mode cannot pin: a tasklet runs where it was scheduled.
 *
 * Choosing the mode. "sroce.exec=workqueue|tasklet" is read when a task
 * is initialised, so a change applies to QPs created afterwards and never
 * to a live task. A user's post_send runs the requester in the system
 * call in both modes (sroce_task_run()). Workqueue is the default:
 * tasklets are on their way out of the kernel, and tasklet mode does not
 * win `make bench` by enough to outweigh that (the figures are in
 * Documentation/infiniband/sroce.rst). The engines do not run from the
 * receive softirq in workqueue mode, which would starve the rest of the
 * softirq work under load; only a plain ACK is handled there when the
 * completer is idle (see sroce_comp_queue()).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/bug.h>
#include <linux/cpumask.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "core/sroce_task.h"

/* How long sroce_task_disable() waits before saying so. */
#define SROCE_TASK_STALL	(10 * HZ)

static struct workqueue_struct *sroce_task_wq;
static struct workqueue_struct *sroce_task_pinned_wq;

static const char * const sroce_task_exec_names[] = {
	[SROCE_TASK_WORKQUEUE] = "workqueue",
	[SROCE_TASK_TASKLET] = "tasklet",
};

static int sroce_task_exec_param = SROCE_TASK_WORKQUEUE;

/**
 * sroce_task_parse_exec() - parse a value of the "exec" module parameter
 * @val: "workqueue" or "tasklet", optionally followed by a newline
 *
 * Return: the enum sroce_task_exec it names, or -EINVAL.
 */
int sroce_task_parse_exec(const char *val)
{
	return sysfs_match_string(sroce_task_exec_names, val);
}

static int sroce_task_exec_set(const char *val, const struct kernel_param *kp)
{
	int exec = sroce_task_parse_exec(val);

	if (exec < 0)
		return exec;
	WRITE_ONCE(*(int *)kp->arg, exec);
	return 0;
}

static int sroce_task_exec_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  sroce_task_exec_names[READ_ONCE(*(int *)kp->arg)]);
}

static const struct kernel_param_ops sroce_task_exec_ops = {
	.set = sroce_task_exec_set,
	.get = sroce_task_exec_get,
};

module_param_cb(exec, &sroce_task_exec_ops, &sroce_task_exec_param, 0644);
MODULE_PARM_DESC(exec,
		 "where QP engines run: workqueue (default) or tasklet; read when a QP is created");

static bool sroce_task_rx_inline = true;
module_param_named(rx_inline, sroce_task_rx_inline, bool, 0644);
MODULE_PARM_DESC(rx_inline,
		 "in workqueue mode, let the receive softirq run an idle engine for a lone packet (default on)");

/*
 * Same-host deliveries under way on this CPU (sroce_task_local_enter()),
 * one inside another when a packet delivered makes an engine send.
 */
static DEFINE_PER_CPU(unsigned int, sroce_task_local_depth);

/**
 * sroce_task_local_enter() - the caller hands a packet to the receive
 *	path of a device of this host
 *
 * Bottom halves stay disabled until sroce_task_local_exit(), so that the
 * delivery runs where a packet from the wire would, in softirq or with
 * bottom halves off, on one CPU. With interrupts disabled nothing changes
 * (no engine runs inline there anyway).
 *
 * Context: any.
 * Return: what to pass to sroce_task_local_exit().
 */
bool sroce_task_local_enter(void)
{
	if (in_hardirq() || irqs_disabled())
		return false;
	local_bh_disable();
	__this_cpu_inc(sroce_task_local_depth);
	return true;
}

/**
 * sroce_task_local_exit() - undo sroce_task_local_enter()
 * @entered: its return value
 */
void sroce_task_local_exit(bool entered)
{
	if (!entered)
		return;
	__this_cpu_dec(sroce_task_local_depth);
	local_bh_enable();
}

/*
 * Is the caller the outermost same-host delivery of this CPU? An engine
 * run there sends its own packets to this host one level deeper, and
 * those levels queue their work instead: the nesting stays two deep
 * whatever a completion handler run inside it posts.
 */
static bool sroce_task_local_outermost(void)
{
	return in_softirq() && this_cpu_read(sroce_task_local_depth) == 1;
}

/**
 * sroce_task_may_inline() - may the receive path run @t in the caller?
 * @t: an engine's task
 *
 * In workqueue mode, waking an idle engine for one packet costs a worker
 * wakeup, often on another CPU, and that is most of a small message's
 * latency. The receive path may run the engine itself instead, for a
 * call or two (sroce_task_run_budget()), as a NIC driver's poll routine
 * would: when the rx_inline parameter is on, with interrupts enabled, in
 * softirq or in the outermost same-host delivery (the requester's own
 * run handing its packet to its peer: rdma_rxe's loopback does the same).
 * A tasklet runs in softirq on this CPU anyway.
 *
 * Context: any.
 * Return: true if the caller may run @t with sroce_task_run_budget().
 */
bool sroce_task_may_inline(const struct sroce_task *t)
{
	return READ_ONCE(sroce_task_rx_inline) &&
	       t->exec == SROCE_TASK_WORKQUEUE && !irqs_disabled() &&
	       (in_serving_softirq() || sroce_task_local_outermost());
}

/**
 * sroce_task_default_exec() - the mode new tasks get
 *
 * Return: the current value of the "exec" module parameter.
 */
enum sroce_task_exec sroce_task_default_exec(void)
{
	return READ_ONCE(sroce_task_exec_param);
}

/*
 * A CPU other than this one for a dispatch of @t, spread over the others
 * by @t's address; WORK_CPU_UNBOUND when this is the only CPU online.
 */
static int sroce_task_away_cpu(const struct sroce_task *t)
{
	unsigned int n = num_online_cpus(), skip;
	int cpu = raw_smp_processor_id();

	if (n < 2)
		return WORK_CPU_UNBOUND;
	for (skip = 1 + hash_ptr(t, 16) % (n - 1); skip; skip--) {
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
	}
	return cpu;
}

/* Queue one dispatch (on @away if it is a CPU): the state becomes SCHEDULED. */
static void sroce_task_queue_on(struct sroce_task *t, int away)
	__must_hold(&t->lock)
{
	lockdep_assert_held(&t->lock);
	t->state = SROCE_TASK_SCHEDULED;
	if (t->exec == SROCE_TASK_TASKLET)
		tasklet_schedule(&t->tasklet);
	else if (t->cpu == WORK_CPU_UNBOUND && away != WORK_CPU_UNBOUND &&
		 cpu_online(away))
		queue_work_on(away, sroce_task_pinned_wq, &t->work);
	else if (t->cpu == WORK_CPU_UNBOUND)
		queue_work(sroce_task_wq, &t->work);
	else if (cpu_online(t->cpu))
		queue_work_on(t->cpu, sroce_task_pinned_wq, &t->work);
	else
		queue_work(sroce_task_pinned_wq, &t->work);
}

static void sroce_task_queue(struct sroce_task *t)
	__must_hold(&t->lock)
{
	sroce_task_queue_on(t, WORK_CPU_UNBOUND);
}

/*
 * A request for a run. Returns true if the task was idle and @here: the
 * caller has moved it to RUNNING and must call sroce_task_loop().
 */
static bool sroce_task_request(struct sroce_task *t, bool here)
	__must_hold(&t->lock)
{
	lockdep_assert_held(&t->lock);
	if (t->disabled) {
		/* Kept for enable(), unless cleanup() retired the task. */
		if (!t->dead)
			t->pending = true;
		return false;
	}
	switch (t->state) {
	case SROCE_TASK_IDLE:
		if (here) {
			t->state = SROCE_TASK_RUNNING;
			return true;
		}
		sroce_task_queue(t);
		return false;
	case SROCE_TASK_RUNNING:
		t->state = SROCE_TASK_RERUN;
		return false;
	default:
		/* SCHEDULED, RERUN: a run is coming already. */
		return false;
	}
}

/*
 * Call the work function until it is idle, the task is disabled, or
 * @budget calls are made. The caller has moved the task to RUNNING.
 */
static void sroce_task_loop(struct sroce_task *t, unsigned int budget)
{
	unsigned long flags;
	unsigned int calls;
	bool more;
	int ret;

	for (calls = 1; ; calls++) {
		ret = t->fn(t->arg);
		/* a call that did the work of several counts as several */
		if (ret > 1)
			calls += ret - 1;

		spin_lock_irqsave(&t->lock, flags);
		more = ret > 0 || t->state == SROCE_TASK_RERUN;
		if (!more) {
			t->state = SROCE_TASK_IDLE;
			break;
		}
		if (t->disabled) {
			t->pending = true;
			t->state = SROCE_TASK_IDLE;
			break;
		}
		if (calls >= budget) {
			/* an inline run handing on is no yield */
			if (budget == SROCE_TASK_BUDGET)
				t->yields++;
			sroce_task_queue(t);
			break;
		}
		t->state = SROCE_TASK_RUNNING;
		spin_unlock_irqrestore(&t->lock, flags);
	}
	/* Under @lock: once disable() sees IDLE, @t may be freed. */
	if (t->disabled)
		wake_up(&t->idle_wait);
	spin_unlock_irqrestore(&t->lock, flags);
}

/* A dispatch: run the function unless disable() took the run back. */
static void sroce_task_dispatch(struct sroce_task *t)
{
	unsigned long flags;
	bool run;

	spin_lock_irqsave(&t->lock, flags);
	run = t->state == SROCE_TASK_SCHEDULED;
	if (run)
		t->state = SROCE_TASK_RUNNING;
	spin_unlock_irqrestore(&t->lock, flags);

	if (run)
		sroce_task_loop(t, SROCE_TASK_BUDGET);
}

static void sroce_task_work(struct work_struct *work)
{
	sroce_task_dispatch(container_of(work, struct sroce_task, work));
}

static void sroce_task_tasklet(struct tasklet_struct *tasklet)
{
	sroce_task_dispatch(container_of(tasklet, struct sroce_task, tasklet));
}

static void sroce_task_delay_expired(struct timer_list *timer)
{
	struct sroce_task *t = from_timer(t, timer, delay);

	sroce_task_schedule(t);
}

/**
 * sroce_task_init_exec() - initialise a task in a given mode
 * @t: the task
 * @name: name for messages; must outlive the task
 * @fn: the work function: returns 0 when idle, >0 to be called again,
 *	or a negative errno to stop until the next request
 * @arg: its argument
 * @exec: where @fn runs
 *
 * The task starts idle and enabled. The KUnit suite uses this directly;
 * the driver calls sroce_task_init().
 *
 * Context: any; the "sroce" workqueue must exist for workqueue mode.
 */
void sroce_task_init_exec(struct sroce_task *t, const char *name,
			  int (*fn)(void *arg), void *arg,
			  enum sroce_task_exec exec)
{
	spin_lock_init(&t->lock);
	init_waitqueue_head(&t->idle_wait);
	t->state = SROCE_TASK_IDLE;
	t->disabled = 0;
	t->pending = false;
	t->dead = false;
	t->yields = 0;
	t->exec = exec;
	t->cpu = WORK_CPU_UNBOUND;
	t->fn = fn;
	t->arg = arg;
	t->name = name;
	timer_setup(&t->delay, sroce_task_delay_expired, 0);
	if (exec == SROCE_TASK_TASKLET)
		tasklet_setup(&t->tasklet, sroce_task_tasklet);
	else
		INIT_WORK(&t->work, sroce_task_work);
	WARN_ON_ONCE(exec == SROCE_TASK_WORKQUEUE && !sroce_task_wq);
}

/**
 * sroce_task_init() - initialise a task in the mode "sroce.exec" names
 * @t: the task
 * @name: name for messages; must outlive the task
 * @fn: the work function, see sroce_task_init_exec()
 * @arg: its argument
 *
 * The module parameter is read here, once: changing it later does not
 * affect this task.
 *
 * Context: any.
 */
void sroce_task_init(struct sroce_task *t, const char *name,
		     int (*fn)(void *arg), void *arg)
{
	sroce_task_init_exec(t, name, fn, arg, sroce_task_default_exec());
}

/**
 * sroce_task_pick_cpu() - the CPU for the requester of a new QP
 * @here: prefer the caller's CPU
 *
 * A user QP's requester goes where its creator runs: the application
 * posts from there, and its post_send then sends in the system call.
 * Kernel QPs (a ULP makes many from one thread) are spread over the CPUs.
 *
 * Context: any.
 * Return: the caller's CPU if @here, else the online CPUs in turn.
 */
int sroce_task_pick_cpu(bool here)
{
	static atomic_t next = ATOMIC_INIT(0);

	if (here)
		return raw_smp_processor_id();
	return cpumask_local_spread(atomic_inc_return(&next), NUMA_NO_NODE);
}

/**
 * sroce_task_bind_away() - bind an idle, unbound task to another CPU
 * @t: the task
 *
 * From now on every dispatch of @t runs on one CPU, chosen as by
 * sroce_task_schedule_away(): not this one. A task that is queued or
 * running stays unbound (the caller tries again later), as does one on a
 * machine with a single CPU online and one in tasklet mode.
 *
 * Context: any.
 */
void sroce_task_bind_away(struct sroce_task *t)
{
	unsigned long flags;

	if (READ_ONCE(t->cpu) != WORK_CPU_UNBOUND ||
	    t->exec != SROCE_TASK_WORKQUEUE || num_online_cpus() < 2)
		return;
	spin_lock_irqsave(&t->lock, flags);
	if (t->cpu == WORK_CPU_UNBOUND && t->state == SROCE_TASK_IDLE)
		WRITE_ONCE(t->cpu, sroce_task_away_cpu(t));
	spin_unlock_irqrestore(&t->lock, flags);
}

/**
 * sroce_task_set_cpu() - dispatch a task on one CPU
 * @t: the task, initialised and never run
 * @cpu: the CPU, from sroce_task_pick_cpu()
 *
 * In workqueue mode, every dispatch of @t runs on @cpu while it is
 * online, and sroce_task_run() runs @t in its caller only on @cpu. In
 * tasklet mode this changes nothing.
 *
 * Context: process context, before the task is first scheduled.
 */
void sroce_task_set_cpu(struct sroce_task *t, int cpu)
{
	if (t->exec == SROCE_TASK_WORKQUEUE)
		t->cpu = cpu;
}

/**
 * sroce_task_move_here() - bind an idle CPU-bound task to this CPU
 * @t: the task
 *
 * The caller knows that nothing @t did on its old CPU is still on its
 * way (for the requester: every packet it sent was acknowledged), so
 * that work done here cannot overtake it. A task that is queued,
 * running or disabled stays where it is, as does an unbound one.
 *
 * Context: any, with migration disabled (the caller runs @t next, here).
 * Return: true if sroce_task_run() would now run @t here.
 */
bool sroce_task_move_here(struct sroce_task *t)
{
	int cpu = raw_smp_processor_id();
	unsigned long flags;
	bool here;

	spin_lock_irqsave(&t->lock, flags);
	here = t->cpu == cpu || t->cpu == WORK_CPU_UNBOUND;
	if (!here && !t->disabled && t->state == SROCE_TASK_IDLE) {
		t->cpu = cpu;
		here = true;
	}
	spin_unlock_irqrestore(&t->lock, flags);
	return here;
}

/**
 * sroce_task_schedule() - make sure the work function runs soon
 * @t: the task
 *
 * If the function is running, it runs once more after it returns; if a
 * run is queued already, nothing changes; if the task is disabled, the
 * request is kept for sroce_task_enable().
 *
 * Context: any, including hard interrupts.
 */
void sroce_task_schedule(struct sroce_task *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	sroce_task_request(t, false);
	spin_unlock_irqrestore(&t->lock, flags);
}

/**
 * sroce_task_schedule_away() - make sure the work function runs soon, on
 *	another CPU if it is idle now
 * @t: the task
 *
 * As sroce_task_schedule(), but an idle task that is not bound to a CPU
 * (sroce_task_set_cpu()) is dispatched on a CPU other than the caller's.
 * For bulk work handed over by the receive softirq: on a veth that runs
 * on the sending CPU, and where the CPUs share no cache the scheduler
 * wakes an unbound worker beside its waker and leaves the others idle.
 *
 * Context: any, including hard interrupts.
 */
void sroce_task_schedule_away(struct sroce_task *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	if (!t->disabled && t->state == SROCE_TASK_IDLE)
		sroce_task_queue_on(t, sroce_task_away_cpu(t));
	else
		sroce_task_request(t, false);
	spin_unlock_irqrestore(&t->lock, flags);
}

/**
 * sroce_task_schedule_after() - make the work function run later
 * @t: the task
 * @ticks: how many jiffies from now (at least one)
 *
 * For a work function that cannot go on yet and must not spin: the
 * network refused a packet because its queues are full, say. A delay
 * already pending is kept, not pushed further out. When it expires the
 * task is scheduled as by sroce_task_schedule(). After
 * sroce_task_cleanup() this does nothing.
 *
 * Context: any.
 */
void sroce_task_schedule_after(struct sroce_task *t, unsigned long ticks)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	if (!t->dead && !timer_pending(&t->delay))
		mod_timer(&t->delay, jiffies + max(1UL, ticks));
	spin_unlock_irqrestore(&t->lock, flags);
}

/**
 * sroce_task_delayed() - is a run asked for later still to come?
 * @t: the task
 *
 * A work function that asked for a later run checks this to stay idle
 * until then, whatever else scheduled it meanwhile.
 *
 * Context: any.
 * Return: true while the delay of sroce_task_schedule_after() runs.
 */
bool sroce_task_delayed(struct sroce_task *t)
{
	return timer_pending(&t->delay);
}

/**
 * sroce_task_run() - run the work function now, in the caller
 * @t: the task
 *
 * An idle task runs its function in the caller, for up to
 * SROCE_TASK_BUDGET calls, and queues a dispatch if work remains; a task
 * bound to a CPU (sroce_task_set_cpu()) does so only on that CPU, and is
 * queued there from anywhere else. If the
 * function is running elsewhere, it runs once more when it returns; if a
 * run is queued, that run will do. The work function may call it on its
 * own task: that is a request for one more run, not a recursion.
 *
 * Context: process or softirq, interrupts enabled; in tasklet mode the
 * function must not sleep, in workqueue mode it must not sleep if a
 * caller may be in softirq.
 */
void sroce_task_run(struct sroce_task *t)
{
	sroce_task_run_budget(t, SROCE_TASK_BUDGET);
}

/**
 * sroce_task_run_budget() - run the work function now, a bounded number
 *	of times
 * @t: the task
 * @budget: calls of the work function at most, 1 to SROCE_TASK_BUDGET
 *
 * As sroce_task_run(), but a run in the caller ends after @budget calls
 * and queues a dispatch if work remains. The receive path uses a small
 * budget to handle a lone packet in softirq without letting a busy QP
 * hold the softirq for long.
 *
 * Context: as for sroce_task_run().
 */
void sroce_task_run_budget(struct sroce_task *t, unsigned int budget)
{
	unsigned long flags;
	bool run;

	lockdep_assert_irqs_enabled();
	if (WARN_ON_ONCE(!budget || budget > SROCE_TASK_BUDGET))
		budget = SROCE_TASK_BUDGET;
	/* A task bound to a CPU runs here only on that CPU, and stays. */
	migrate_disable();
	spin_lock_irqsave(&t->lock, flags);
	run = sroce_task_request(t, t->cpu == WORK_CPU_UNBOUND ||
				 t->cpu == raw_smp_processor_id());
	spin_unlock_irqrestore(&t->lock, flags);

	if (run)
		sroce_task_loop(t, budget);
	migrate_enable();
}

/**
 * sroce_task_disable() - stop a task and wait until it is stopped
 * @t: the task
 *
 * Once this returns, the work function is not running and does not
 * start until the matching sroce_task_enable(). A run that was queued
 * or asked for meanwhile is remembered, not lost. Disables nest.
 *
 * Context: process; sleeps for at most one call of the work function.
 * Must not be called from the work function.
 */
void sroce_task_disable(struct sroce_task *t)
{
	might_sleep();
	WARN_ON_ONCE(t->exec == SROCE_TASK_WORKQUEUE &&
		     current_work() == &t->work);

	spin_lock_irq(&t->lock);
	t->disabled++;
	if (t->state == SROCE_TASK_SCHEDULED) {
		t->state = SROCE_TASK_IDLE;
		t->pending = true;
	}
	while (!wait_event_lock_irq_timeout(t->idle_wait,
					    t->state == SROCE_TASK_IDLE,
					    t->lock, SROCE_TASK_STALL))
		pr_warn("task %s: still waiting for its work function\n",
			t->name);
	spin_unlock_irq(&t->lock);

	/* A dispatch taken back above may still be queued or starting. */
	if (t->exec == SROCE_TASK_TASKLET)
		tasklet_kill(&t->tasklet);
	else
		cancel_work_sync(&t->work);
}

/**
 * sroce_task_enable() - undo one sroce_task_disable()
 * @t: the task
 *
 * When the last disable is undone, a run asked for while the task was
 * disabled is queued (one run, however many requests came).
 *
 * Context: any.
 */
void sroce_task_enable(struct sroce_task *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	if (WARN_ON_ONCE(!t->disabled || t->dead))
		goto out_unlock;
	if (--t->disabled == 0 && t->pending) {
		t->pending = false;
		sroce_task_queue(t);
	}
out_unlock:
	spin_unlock_irqrestore(&t->lock, flags);
}

/**
 * sroce_task_cleanup() - retire a disabled task
 * @t: the task
 *
 * Drops any remembered run and any delayed one. Afterwards nothing is
 * queued, the work function never runs again and
 * sroce_task_schedule()/sroce_task_run() are ignored, so the memory
 * holding @t may be freed. A task that was not disabled is disabled first
 * (with a warning).
 *
 * Context: process; may sleep.
 */
void sroce_task_cleanup(struct sroce_task *t)
{
	if (WARN_ON_ONCE(!READ_ONCE(t->disabled)))
		sroce_task_disable(t);

	spin_lock_irq(&t->lock);
	t->dead = true;
	t->pending = false;
	spin_unlock_irq(&t->lock);
	/* No one arms it now; an expiry running meanwhile finds @dead. */
	del_timer_sync(&t->delay);
}

/**
 * sroce_task_module_init() - create the module's workqueues
 *
 * Return: 0 or -ENOMEM.
 *
 * Context: module init, before any device exists.
 */
int sroce_task_module_init(void)
{
	sroce_task_wq = alloc_workqueue("sroce",
					WQ_UNBOUND | WQ_MEM_RECLAIM | WQ_SYSFS,
					0);
	if (!sroce_task_wq)
		goto err_nomem;
	sroce_task_pinned_wq = alloc_workqueue("sroce_pinned",
					       WQ_CPU_INTENSIVE |
					       WQ_MEM_RECLAIM, 0);
	if (!sroce_task_pinned_wq)
		goto err_destroy_wq;
	return 0;

err_destroy_wq:
	destroy_workqueue(sroce_task_wq);
	sroce_task_wq = NULL;
err_nomem:
	pr_err("cannot allocate the sroce workqueues\n");
	return -ENOMEM;
}

/**
 * sroce_task_defer() - run a one-off work item on the module's workqueue
 * @work: an initialised work item
 *
 * For clean-ups that must sleep but are triggered where sleeping is not
 * allowed (the last reference to a deregistered MR, dropped by a QP
 * engine). The workqueue is drained at module exit, so @work's function
 * never outlives the module.
 *
 * Context: any.
 */
void sroce_task_defer(struct work_struct *work)
{
	queue_work(sroce_task_wq, work);
}

/**
 * sroce_task_module_exit() - destroy the module's workqueues
 *
 * Context: module exit, after every device (hence every QP and its
 * tasks) is gone.
 */
void sroce_task_module_exit(void)
{
	destroy_workqueue(sroce_task_pinned_wq);
	sroce_task_pinned_wq = NULL;
	destroy_workqueue(sroce_task_wq);
	sroce_task_wq = NULL;
}
