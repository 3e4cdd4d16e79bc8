// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce per-QP send rate limiter.
 *
 * Each QP has one gate that its requester (request packets) and its
 * responder (READ responses, atomic acknowledgments) pass before they
 * build a packet. Behind it is a token bucket at the lowest rate any
 * source asks for: IB_QP_RATE_LIMIT, the address vector's static rate,
 * and congestion control. An engine the gate turns away returns from its
 * work function with nothing to do; the gate's timer schedules it again
 * when the bucket's debt is paid. Nothing polls.
 *
 * The gate sits before the packet is built, so a throttled QP has not
 * looked up a key, read payload or allocated a buffer for a packet it
 * cannot send yet: the bytes it would gather are gathered when they can
 * leave (the gather-path design: the rate limiter's dispatch decision
 * comes before any effort is spent on a WQE).
 *
 * The bucket counts time, not bytes: its credit is the time the QP may
 * still send at line speed, and a packet costs its length at the limited
 * rate. A packet passes while the credit is not negative, so any packet
 * passes an idle gate and a run of them averages exactly the rate; the
 * credit saved while idle is capped at SROCE_RATE_BURST_NS, and while the
 * QP is busy at SROCE_RATE_LATE_NS: an engine that runs late, whether
 * woken by the gate's timer or held up by other work, makes up for it.
 * The QP is busy while either engine is: it sent, or the gate turned it
 * away, and it has not run out of work since (the requester found its
 * send queue empty, the responder its request queue). The timer lets a
 * slice of credit build beyond the debt before it wakes the engine, so a
 * paced QP sends trains of packets, not one per wake-up: a timer, a task
 * run and a transmit per packet cost more CPU than the packet itself,
 * and a sender short of CPU falls below its rate.
 *
 * Packets are counted as they leave the QP: BTH, extension headers,
 * payload, pad and ICRC (sroce_tx_len()), not the UDP, IP and Ethernet
 * headers the network adds.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/bitops.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_task.h"
#include "transport/sroce_rate.h"
#include "transport/sroce_trace.h"

/**
 * sroce_tb_cost() - the time @bytes take at the bucket's rate
 * @tb: the bucket, limited
 * @bytes: a length
 *
 * Return: nanoseconds. Exact to a nanosecond per 4 GiB at any rate from
 * 125 bytes per second (1 kbit/s) up: the 32.32 fixed-point product never
 * overflows (at most 8e6 ns per byte times 2^32 bytes).
 */
u64 sroce_tb_cost(const struct sroce_tb *tb, u32 bytes)
{
	return mul_u64_u32_shr(tb->ns_per_byte, bytes, 32);
}

/*
 * Add the credit earned since @tb->stamp, up to the bucket's depth, or
 * up to SROCE_RATE_LATE_NS while the QP is busy. Credit already above
 * the cap (made up for a late wake-up) is kept until spent.
 */
static void sroce_tb_refill(struct sroce_tb *tb, u64 now)
{
	s64 cap = tb->held ? SROCE_RATE_LATE_NS : tb->depth;
	u64 elapsed;

	if (now <= tb->stamp)
		return;
	elapsed = now - tb->stamp;
	tb->stamp = now;
	if (tb->credit >= cap)
		return;
	if (elapsed >= (u64)(cap - tb->credit))
		tb->credit = cap;
	else
		tb->credit += elapsed;
}

/**
 * sroce_tb_set() - change a bucket's rate
 * @tb: the bucket
 * @bps: the new rate in bytes per second; 0: unlimited
 * @now: the time, in ns (ktime_get_ns())
 *
 * A bucket that was unlimited starts full. One that was limited keeps
 * what it owes in bytes, not in time: bytes sent ahead of the old rate
 * are paid for at the new one, so that a rate cut while a QP is throttled
 * takes effect at once and a rate raised frees it sooner.
 */
void sroce_tb_set(struct sroce_tb *tb, u64 bps, u64 now)
{
	u64 owed = 0;

	if (tb->bps) {
		sroce_tb_refill(tb, now);
		if (tb->credit < 0)
			owed = mul_u64_u64_div_u64(-tb->credit, tb->bps,
						   NSEC_PER_SEC);
	}
	if (!bps) {
		WRITE_ONCE(tb->bps, 0);
		tb->ns_per_byte = 0;
		tb->depth = 0;
		tb->credit = 0;
		tb->slice = 0;
		tb->held = false;
		return;
	}
	/* NSEC_PER_SEC << 32 is below 2^63 */
	tb->ns_per_byte = max_t(u64, 1,
				div64_u64((u64)NSEC_PER_SEC << 32, bps));
	tb->depth = SROCE_RATE_BURST_NS;
	tb->slice = min_t(u64, sroce_tb_cost(tb, SROCE_RATE_SLICE_BYTES),
			  SROCE_RATE_SLICE_NS);
	if (!tb->bps)
		tb->credit = tb->depth;
	else if (owed)
		tb->credit = -(s64)sroce_tb_cost(tb, min_t(u64, owed, U32_MAX));
	else
		tb->credit = min(tb->credit, tb->depth);
	tb->stamp = now;
	WRITE_ONCE(tb->bps, bps);
}

/**
 * sroce_tb_wait() - how long until a limited bucket lets a packet through
 * @tb: the bucket, limited
 * @now: the time, in ns
 *
 * A bucket found in debt is held: the time until its engine runs again
 * earns credit beyond the depth (see sroce_tb_refill()), so that a late
 * wake-up does not cost rate.
 *
 * Return: 0 when it is not in debt, else the ns until the debt is paid.
 */
u64 sroce_tb_wait(struct sroce_tb *tb, u64 now)
{
	sroce_tb_refill(tb, now);
	if (tb->credit >= 0)
		return 0;
	tb->held = true;
	return -tb->credit;
}

/**
 * sroce_tb_charge() - take a packet's cost from a limited bucket
 * @tb: the bucket
 * @bytes: the packet's length
 *
 * The credit may go below zero: the packet was let through while it was
 * not, and the debt holds the next one back. A bucket that sends is held
 * until sroce_tb_idle(): its QP has more to send, and time it loses to a
 * late engine is made up for.
 */
void sroce_tb_charge(struct sroce_tb *tb, u32 bytes)
{
	tb->credit -= sroce_tb_cost(tb, bytes);
	tb->held = true;
}

/**
 * sroce_tb_idle() - a limited bucket's QP has nothing more to send
 * @tb: the bucket
 * @now: the time, in ns
 *
 * From now on the credit grows to the depth only, and credit made up
 * beyond it is dropped: what the QP did not send for want of work is not
 * sent later in a burst.
 */
void sroce_tb_idle(struct sroce_tb *tb, u64 now)
{
	sroce_tb_refill(tb, now);
	tb->held = false;
	tb->credit = min(tb->credit, tb->depth);
}

/* Schedule the engines in @waiting. */
static void sroce_rate_wake(struct sroce_rate *rl, unsigned long waiting)
{
	unsigned int e;

	for_each_set_bit(e, &waiting, SROCE_RATE_NENGINE)
		sroce_task_schedule(rl->task[e]);
}

static enum hrtimer_restart sroce_rate_fire(struct hrtimer *timer)
{
	struct sroce_rate *rl = container_of(timer, struct sroce_rate, timer);
	unsigned long flags, waiting;

	spin_lock_irqsave(&rl->lock, flags);
	waiting = rl->waiting;
	rl->waiting = 0;
	spin_unlock_irqrestore(&rl->lock, flags);
	sroce_rate_wake(rl, waiting);
	return HRTIMER_NORESTART;
}

/**
 * sroce_rate_init() - set up a QP's gate, open
 * @rl: the gate
 * @req: the requester's task
 * @resp: the responder's task
 * @qpn: the QP's number, for tracing
 */
void sroce_rate_init(struct sroce_rate *rl, struct sroce_task *req,
		     struct sroce_task *resp, u32 qpn)
{
	memset(rl, 0, sizeof(*rl));
	rl->qpn = qpn;
	spin_lock_init(&rl->lock);
	rl->task[SROCE_RATE_REQ] = req;
	rl->task[SROCE_RATE_RESP] = resp;
	hrtimer_init(&rl->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	rl->timer.function = sroce_rate_fire;
}

/**
 * sroce_rate_stop() - stop the gate's timer
 * @rl: the gate; the engines are disabled, so nothing arms it again
 *
 * Context: process context; waits for a running timer callback.
 */
void sroce_rate_stop(struct sroce_rate *rl)
{
	unsigned long flags;

	hrtimer_cancel(&rl->timer);
	spin_lock_irqsave(&rl->lock, flags);
	rl->waiting = 0;
	spin_unlock_irqrestore(&rl->lock, flags);
}

/**
 * sroce_rate_reset() - a QP back in RESET starts with a full bucket
 * @rl: the gate, stopped (sroce_rate_stop()); the limits are kept
 */
void sroce_rate_reset(struct sroce_rate *rl)
{
	unsigned long flags;

	spin_lock_irqsave(&rl->lock, flags);
	rl->busy = 0;
	if (rl->tb.bps) {
		rl->tb.credit = rl->tb.depth;
		rl->tb.stamp = ktime_get_ns();
		rl->tb.held = false;
	}
	spin_unlock_irqrestore(&rl->lock, flags);
}

/* The lowest limit a source asks for; 0 when none does. */
static u64 sroce_rate_lowest(const struct sroce_rate *rl)
{
	u64 bps = 0;
	unsigned int i;

	for (i = 0; i < SROCE_RATE_NSRC; i++)
		if (rl->limit[i] && (!bps || rl->limit[i] < bps))
			bps = rl->limit[i];
	return bps;
}

/**
 * sroce_rate_set() - set what one source limits the QP to
 * @rl: the gate
 * @src: the source
 * @bps: bytes per second; 0: this source sets no limit
 *
 * The lowest limit applies from the next packet. Engines the gate holds
 * are woken at once if the new rate frees them, else when the debt, as
 * recomputed at the new rate, is paid.
 *
 * Context: any.
 */
void sroce_rate_set(struct sroce_rate *rl, enum sroce_rate_src src, u64 bps)
{
	unsigned long flags, wake = 0;
	u64 lowest;

	spin_lock_irqsave(&rl->lock, flags);
	rl->limit[src] = bps;
	lowest = sroce_rate_lowest(rl);
	if (lowest != rl->tb.bps) {
		sroce_tb_set(&rl->tb, lowest, ktime_get_ns());
		if (!lowest)
			rl->busy = 0;	/* as the bucket: not held */
		if (!lowest || rl->tb.credit >= 0) {
			wake = rl->waiting;
			rl->waiting = 0;
		} else if (rl->waiting) {
			hrtimer_start(&rl->timer,
				      ns_to_ktime(-rl->tb.credit + rl->tb.slice),
				      HRTIMER_MODE_REL_SOFT);
		}
	}
	spin_unlock_irqrestore(&rl->lock, flags);
	trace_sroce_rate(rl->qpn, src, bps, lowest);
	sroce_rate_wake(rl, wake);
}

/**
 * sroce_rate_bps() - the rate the gate lets through
 * @rl: the gate
 *
 * Return: bytes per second, 0 when the QP is not limited.
 */
u64 sroce_rate_bps(struct sroce_rate *rl)
{
	return READ_ONCE(rl->tb.bps);
}

/**
 * __sroce_rate_open() - sroce_rate_open() for a limited QP
 * @rl: the gate
 * @e: the engine asking
 *
 * Return: true if the engine may build and send a packet now.
 */
bool __sroce_rate_open(struct sroce_rate *rl, enum sroce_rate_engine e)
{
	unsigned long flags;
	u64 wait = 0;

	spin_lock_irqsave(&rl->lock, flags);
	if (rl->tb.bps)
		wait = sroce_tb_wait(&rl->tb, ktime_get_ns());
	if (wait) {
		rl->closed++;
		rl->busy |= BIT(e);
		rl->waiting |= BIT(e);
		hrtimer_start(&rl->timer, ns_to_ktime(wait + rl->tb.slice),
			      HRTIMER_MODE_REL_SOFT);
	}
	spin_unlock_irqrestore(&rl->lock, flags);
	return !wait;
}

/**
 * __sroce_rate_charge() - sroce_rate_charge() for a limited QP
 * @rl: the gate
 * @e: the engine that sends it
 * @bytes: the packet's length
 */
void __sroce_rate_charge(struct sroce_rate *rl, enum sroce_rate_engine e,
			 u32 bytes)
{
	unsigned long flags;

	spin_lock_irqsave(&rl->lock, flags);
	if (rl->tb.bps) {
		rl->busy |= BIT(e);
		sroce_tb_charge(&rl->tb, bytes);
		rl->sent += bytes;
	}
	spin_unlock_irqrestore(&rl->lock, flags);
}

/**
 * __sroce_rate_idle() - sroce_rate_idle() for a limited QP
 * @rl: the gate
 * @e: the engine that ran out of work
 */
void __sroce_rate_idle(struct sroce_rate *rl, enum sroce_rate_engine e)
{
	unsigned long flags;

	spin_lock_irqsave(&rl->lock, flags);
	rl->busy &= ~BIT(e);
	if (rl->tb.bps && !rl->busy)
		sroce_tb_idle(&rl->tb, ktime_get_ns());
	spin_unlock_irqrestore(&rl->lock, flags);
}

/**
 * __sroce_rate_refund() - sroce_rate_refund() for a limited QP
 * @rl: the gate
 * @bytes: what the packets that did not leave were charged
 *
 * Their cost goes back into the bucket, as far as it may hold while an
 * engine waits (the rate may have changed since: the cost is the new
 * rate's), and out of the byte count congestion control reads.
 */
void __sroce_rate_refund(struct sroce_rate *rl, u32 bytes)
{
	unsigned long flags;

	spin_lock_irqsave(&rl->lock, flags);
	if (rl->tb.bps) {
		rl->tb.credit = min_t(s64, rl->tb.credit +
					   sroce_tb_cost(&rl->tb, bytes),
				      SROCE_RATE_LATE_NS);
		rl->sent -= min_t(u64, rl->sent, bytes);
	}
	spin_unlock_irqrestore(&rl->lock, flags);
}

/**
 * sroce_rate_sent() - bytes the gate charged while the QP was limited
 * @rl: the gate
 *
 * Return: a running count; only differences mean something.
 */
u64 sroce_rate_sent(struct sroce_rate *rl)
{
	unsigned long flags;
	u64 sent;

	spin_lock_irqsave(&rl->lock, flags);
	sent = rl->sent;
	spin_unlock_irqrestore(&rl->lock, flags);
	return sent;
}

/**
 * sroce_rate_from_kbps() - IB_QP_RATE_LIMIT's unit to the gate's
 * @kbps: kilobits per second, as ib_qp_attr.rate_limit; 0: no limit
 *
 * Return: bytes per second.
 */
u64 sroce_rate_from_kbps(u32 kbps)
{
	return (u64)kbps * 1000 / BITS_PER_BYTE;
}

/**
 * sroce_rate_from_static() - an address vector's static rate in bytes/s
 * @static_rate: an enum ib_rate
 *
 * IBA static rate control spaces a QP's packets to this rate. A static
 * rate at or above what sroce reaches has no effect, as on a port slower
 * than it; rdma_cm passes IB_RATE_PORT_CURRENT for RoCE.
 *
 * Return: bytes per second; 0 for IB_RATE_PORT_CURRENT or an unknown
 * value (no limit).
 */
u64 sroce_rate_from_static(u8 static_rate)
{
	int mbps;

	if (static_rate == IB_RATE_PORT_CURRENT)
		return 0;
	mbps = ib_rate_to_mbps(static_rate);
	if (mbps <= 0)
		return 0;
	return (u64)mbps * 1000000 / BITS_PER_BYTE;
}
