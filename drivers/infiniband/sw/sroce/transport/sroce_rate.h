/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce per-QP send rate limiter (see sroce_rate.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RATE_H
#define SROCE_RATE_H

#include <linux/hrtimer.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <linux/types.h>

struct sroce_task;

/*
 * The credit a bucket holds when nothing waits: the time the QP may send
 * at line speed after a pause (its burst), and how late the gate's timer
 * may fire without costing rate. A packet longer than that still passes
 * an idle gate: the bucket goes into debt for it.
 */
#define SROCE_RATE_BURST_NS	(2 * NSEC_PER_MSEC)
/*
 * The credit a bucket may gather while its QP is busy (it sent, or was
 * turned away, and has not said it ran out of work since): a wake-up that
 * comes late (a busy or preempted CPU; under QEMU TCG a few ms is common)
 * is made up for by a burst, up to this much, instead of being lost as
 * idle time. An idle QP's credit is capped at SROCE_RATE_BURST_NS.
 */
#define SROCE_RATE_LATE_NS	(20 * NSEC_PER_MSEC)
/*
 * An engine the gate turned away is woken once its debt is paid and this
 * much more credit has built up, the sending time of a train's worth of
 * bytes but no more than SROCE_RATE_SLICE_NS: one wake-up then sends a
 * train, not a packet, and a slow QP still sends every millisecond.
 */
#define SROCE_RATE_SLICE_BYTES	SZ_64K
#define SROCE_RATE_SLICE_NS	NSEC_PER_MSEC

/**
 * struct sroce_tb - a token bucket kept in nanoseconds of sending time
 * @bps: the rate in bytes per second; 0: unlimited
 * @ns_per_byte: NSEC_PER_SEC / @bps, as a 32.32 fixed-point number
 * @depth: the credit the bucket holds at most, in ns
 * @credit: the credit in ns; below zero the bucket is in debt, and
 *	nothing passes until the debt is paid
 * @stamp: when @credit was last brought up to date, in ns
 * @slice: the credit, in ns, an engine turned away waits for beyond its
 *	debt (SROCE_RATE_SLICE_BYTES)
 * @held: the QP is busy: it sent or was turned away since it last said
 *	it was idle (sroce_tb_idle()); the credit may grow to
 *	SROCE_RATE_LATE_NS
 *
 * A packet passes while the credit is not negative and costs its bytes'
 * sending time, which may take the credit below zero: any packet passes
 * an idle gate, and a long run averages exactly @bps.
 */
struct sroce_tb {
	u64 bps;
	u64 ns_per_byte;
	s64 depth;
	s64 credit;
	u64 stamp;
	u64 slice;
	bool held;
};

void sroce_tb_set(struct sroce_tb *tb, u64 bps, u64 now);
u64 sroce_tb_cost(const struct sroce_tb *tb, u32 bytes);
u64 sroce_tb_wait(struct sroce_tb *tb, u64 now);
void sroce_tb_charge(struct sroce_tb *tb, u32 bytes);
void sroce_tb_idle(struct sroce_tb *tb, u64 now);

/* Where a QP's limits come from; the lowest applies. */
enum sroce_rate_src {
	SROCE_RATE_SRC_QP,	/* IB_QP_RATE_LIMIT */
	SROCE_RATE_SRC_STATIC,	/* the address vector's static_rate */
	SROCE_RATE_SRC_CC,	/* congestion control */
	SROCE_RATE_NSRC
};

/* The engines that send a QP's packets through its gate. */
enum sroce_rate_engine {
	SROCE_RATE_REQ,		/* requests: SEND, WRITE, READ, atomics */
	SROCE_RATE_RESP,	/* READ responses, atomic acknowledgments */
	SROCE_RATE_NENGINE
};

/**
 * struct sroce_rate - a QP's gate
 * @lock: guards everything below; interrupts saved (the timer runs in
 *	softirq, an engine may run in softirq)
 * @tb: the bucket, at the lowest rate of @limit
 * @limit: what each source asks for, in bytes per second; 0: nothing
 * @waiting: bit per engine the gate turned away; the timer wakes them
 * @busy: bit per engine that sent or was turned away since it last ran
 *	out of work; the bucket is held (&sroce_tb.held) while any is set
 * @task: each engine's task
 * @timer: fires when the debt is paid
 * @closed: how often the gate turned an engine away
 * @sent: bytes charged while the QP was limited (congestion control's
 *	byte counter)
 * @qpn: the QP's number, for tracing
 */
struct sroce_rate {
	spinlock_t lock; /* see above */
	struct sroce_tb tb;
	u64 limit[SROCE_RATE_NSRC];
	unsigned long waiting;
	unsigned long busy;
	struct sroce_task *task[SROCE_RATE_NENGINE];
	struct hrtimer timer;
	u64 closed;
	u64 sent;
	u32 qpn;
};

void sroce_rate_init(struct sroce_rate *rl, struct sroce_task *req,
		     struct sroce_task *resp, u32 qpn);
void sroce_rate_stop(struct sroce_rate *rl);
void sroce_rate_reset(struct sroce_rate *rl);
void sroce_rate_set(struct sroce_rate *rl, enum sroce_rate_src src,
		    u64 bps);
u64 sroce_rate_bps(struct sroce_rate *rl);
u64 sroce_rate_sent(struct sroce_rate *rl);
bool __sroce_rate_open(struct sroce_rate *rl, enum sroce_rate_engine e);
void __sroce_rate_charge(struct sroce_rate *rl, enum sroce_rate_engine e,
			 u32 bytes);
void __sroce_rate_refund(struct sroce_rate *rl, u32 bytes);
void __sroce_rate_idle(struct sroce_rate *rl, enum sroce_rate_engine e);

u64 sroce_rate_from_kbps(u32 kbps);
u64 sroce_rate_from_static(u8 static_rate);

/**
 * sroce_rate_open() - may an engine build its next packet now?
 * @rl: the QP's gate
 * @e: which engine asks
 *
 * Asked before the packet is built: a QP turned away has not looked up a
 * key, read a byte of payload or allocated anything for it. An engine
 * turned away stops (its work function reports nothing to do) and is
 * scheduled again by the gate's timer once the debt is paid. One that
 * may go pays for what it built with sroce_rate_charge().
 *
 * Context: the engine's task.
 * Return: true if it may.
 */
static inline bool sroce_rate_open(struct sroce_rate *rl,
				   enum sroce_rate_engine e)
{
	if (likely(!READ_ONCE(rl->tb.bps)))
		return true;
	return __sroce_rate_open(rl, e);
}

/**
 * sroce_rate_charge() - pay for a packet the gate let through
 * @rl: the QP's gate
 * @e: the engine that sends it; it is busy until sroce_rate_idle()
 * @bytes: the packet's length as it leaves (sroce_tx_len())
 *
 * Context: the engine's task.
 */
static inline void sroce_rate_charge(struct sroce_rate *rl,
				     enum sroce_rate_engine e, u32 bytes)
{
	if (unlikely(READ_ONCE(rl->tb.bps)))
		__sroce_rate_charge(rl, e, bytes);
}

/**
 * sroce_rate_refund() - give back what packets that did not leave cost
 * @rl: the QP's gate
 * @bytes: what sroce_rate_charge() was told for them
 *
 * For packets that were built and charged but that the netdev refused
 * (its queue full): they are built and charged again when they are sent.
 *
 * Context: the engine's task.
 */
static inline void sroce_rate_refund(struct sroce_rate *rl, u32 bytes)
{
	if (unlikely(READ_ONCE(rl->tb.bps)))
		__sroce_rate_refund(rl, bytes);
}

/**
 * sroce_rate_idle() - an engine has nothing more to send
 * @rl: the QP's gate
 * @e: the engine
 *
 * Once neither engine is busy, and until one sends again, the QP earns
 * credit only up to its bucket's depth: a pause is not made up for, a
 * late wake-up is.
 *
 * Context: the engine's task.
 */
static inline void sroce_rate_idle(struct sroce_rate *rl,
				   enum sroce_rate_engine e)
{
	if (unlikely(READ_ONCE(rl->tb.bps)))
		__sroce_rate_idle(rl, e);
}

#endif /* SROCE_RATE_H */
