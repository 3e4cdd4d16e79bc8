// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DCQCN reaction point: the rate congestion control gives a QP.
 *
 * A CNP from the peer (RoCEv2 annex A17.9) says that packets of this QP
 * were marked CE on their way: a queue is building. The QP's rate (Rc)
 * is then cut by alpha/2, alpha being the running estimate of how often
 * that happens, after the rate it had becomes the target (Rt). Without
 * CNPs the rate climbs back in stages, each stage an event of a timer
 * (every rp_time_reset_us) or of a byte counter (every rp_byte_reset
 * bytes sent): for the first F (rp_threshold) stages of both, Rc moves
 * halfway to Rt (fast recovery); then Rt itself grows by rp_ai_rate per
 * event (additive increase), and once both counters are past F by
 * rp_hai_rate times the stages past F (hyper increase). alpha decays by
 * the gain g every rp_alpha_period_us without a CNP, and grows by it on
 * each cut. A QP whose rate is back at rp_max_rate is no longer limited.
 * This is the algorithm of Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments" (SIGCOMM 2015), with the parameters of
 * core/sroce_cc.c.
 *
 * The rate applies through the QP's gate (sroce_rate.c) as its
 * SROCE_RATE_SRC_CC limit; the lowest of that and the QP's other limits
 * is what the QP sends at. A QP starts unlimited; its first CNP starts
 * it at rp_max_rate, so that a few cuts in a row bring it to the
 * bottleneck whatever the link.
 *
 * The byte counter is read from the gate (every byte a limited QP sends
 * passes it) at each timer event, so its stages come at the timer's
 * pace at the latest: sroce moves at most a few hundred MB/s a QP, one
 * byte stage (2 MiB) every few ms, and a timer event every 300 us.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/minmax.h>

#include "core/sroce_cc.h"
#include "transport/sroce_dcqcn.h"
#include "transport/sroce_rate.h"

#define CREATE_TRACE_POINTS
#include "transport/sroce_trace.h"

#define SROCE_MBPS_TO_BPS	(1000000 / BITS_PER_BYTE)

/**
 * sroce_dcqcn_cfg_get() - the device's parameters, in the algorithm's units
 * @c: filled in
 * @cc: the device's parameters
 */
void sroce_dcqcn_cfg_get(struct sroce_dcqcn_cfg *c, const struct sroce_cc *cc)
{
	c->min_rate = (u64)sroce_cc_get(cc, SROCE_CC_RP_MIN_RATE) *
		      SROCE_MBPS_TO_BPS;
	c->max_rate = (u64)sroce_cc_get(cc, SROCE_CC_RP_MAX_RATE) *
		      SROCE_MBPS_TO_BPS;
	c->ai_rate = (u64)sroce_cc_get(cc, SROCE_CC_RP_AI_RATE) *
		     SROCE_MBPS_TO_BPS;
	c->hai_rate = (u64)sroce_cc_get(cc, SROCE_CC_RP_HAI_RATE) *
		      SROCE_MBPS_TO_BPS;
	c->byte_reset = sroce_cc_get(cc, SROCE_CC_RP_BYTE_RESET);
	c->reduce_period_ns = (u64)sroce_cc_get(cc, SROCE_CC_RP_REDUCE_PERIOD) *
			      NSEC_PER_USEC;
	c->g = sroce_cc_get(cc, SROCE_CC_RP_G);
	c->initial_alpha = sroce_cc_get(cc, SROCE_CC_RP_INITIAL_ALPHA);
	c->threshold = sroce_cc_get(cc, SROCE_CC_RP_THRESHOLD);
	c->max_dec = sroce_cc_get(cc, SROCE_CC_RP_MAX_DEC);
	/* sysfs stores each value alone: keep the pair ordered */
	c->min_rate = min(c->min_rate, c->max_rate);
}

/* alpha -= alpha * g: one period without a CNP */
static u32 sroce_dcqcn_alpha_decay(u32 alpha, u32 g)
{
	return alpha - (u32)(((u64)alpha * g) >> 10);
}

/**
 * sroce_dcqcn_cut() - a CNP arrived: cut the rate
 * @s: the QP's state
 * @c: the parameters
 * @now: the time, ns
 *
 * Rt = Rc; Rc = Rc * (1 - alpha / 2), at most rp_max_dec_pct and not
 * below rp_min_rate; alpha = (1 - g) * alpha + g; the increase stages
 * start over. A CNP within rp_rate_reduce_period_us of the last cut only
 * marks the alpha period. A QP not limited yet starts at rp_max_rate
 * with alpha at rp_initial_alpha.
 *
 * Return: true if the rate was cut.
 */
bool sroce_dcqcn_cut(struct sroce_dcqcn_state *s,
		     const struct sroce_dcqcn_cfg *c, u64 now)
{
	u64 cut, cap;

	s->cnp_seen = true;
	if (s->active && now - s->last_cut < c->reduce_period_ns)
		return false;
	if (!s->active) {
		s->active = true;
		s->rc = c->max_rate;
		s->alpha = c->initial_alpha <<
			   (SROCE_DCQCN_ALPHA_SHIFT - 10);
	}
	s->rt = s->rc;
	/* alpha / 2 of the rate: alpha is in 1/2^20ths */
	cut = mul_u64_u32_shr(s->rc, s->alpha, SROCE_DCQCN_ALPHA_SHIFT + 1);
	cap = div_u64(s->rc * c->max_dec, 100);
	s->rc = max(s->rc - min(cut, cap), c->min_rate);
	s->alpha = min(sroce_dcqcn_alpha_decay(s->alpha, c->g) +
		       (c->g << (SROCE_DCQCN_ALPHA_SHIFT - 10)),
		       SROCE_DCQCN_ALPHA_ONE);
	s->t_stage = 0;
	s->b_stage = 0;
	s->bytes = 0;
	s->last_cut = now;
	s->stage = SROCE_DCQCN_CUT;
	return true;
}

/**
 * sroce_dcqcn_alpha_tick() - the end of an alpha period
 * @s: the QP's state
 * @c: the parameters
 *
 * Without a CNP in the period, alpha = (1 - g) * alpha.
 */
void sroce_dcqcn_alpha_tick(struct sroce_dcqcn_state *s,
			    const struct sroce_dcqcn_cfg *c)
{
	if (!s->cnp_seen)
		s->alpha = sroce_dcqcn_alpha_decay(s->alpha, c->g);
	s->cnp_seen = false;
}

/**
 * sroce_dcqcn_rise() - one increase event (after its stage was counted)
 * @s: the QP's state, active
 * @c: the parameters
 *
 * Fast recovery while both stage counts are below F, hyper increase once
 * both are past it, additive increase otherwise; then Rc moves halfway
 * to Rt, rounding toward Rt so that it gets there. A QP whose rate
 * reaches rp_max_rate is no longer limited (@s->active cleared).
 */
void sroce_dcqcn_rise(struct sroce_dcqcn_state *s,
		      const struct sroce_dcqcn_cfg *c)
{
	u32 lo = min(s->t_stage, s->b_stage);
	u32 hi = max(s->t_stage, s->b_stage);

	if (hi < c->threshold) {
		s->stage = SROCE_DCQCN_FAST;
	} else if (lo > c->threshold) {
		s->rt += (u64)(lo - c->threshold) * c->hai_rate;
		s->stage = SROCE_DCQCN_HYPER;
	} else {
		s->rt += c->ai_rate;
		s->stage = SROCE_DCQCN_ADDITIVE;
	}
	/* rp_max_rate_mbps may have been lowered below the rate */
	s->rc = min(s->rc, c->max_rate);
	s->rt = clamp(s->rt, s->rc, c->max_rate);
	s->rc = s->rt - (s->rt - s->rc) / 2;
	if (s->rc >= c->max_rate) {
		s->active = false;
		s->stage = SROCE_DCQCN_IDLE;
	}
}

/**
 * sroce_dcqcn_timer_event() - the rate increase timer fired
 * @s: the QP's state, active
 * @c: the parameters
 * @sent: bytes the QP sent since the last event
 *
 * First the byte counter's events for @sent, then the timer's own.
 */
void sroce_dcqcn_timer_event(struct sroce_dcqcn_state *s,
			     const struct sroce_dcqcn_cfg *c, u64 sent)
{
	s->bytes += sent;
	while (s->active && s->bytes >= c->byte_reset) {
		s->bytes -= c->byte_reset;
		s->b_stage++;
		sroce_dcqcn_rise(s, c);
	}
	if (!s->active)
		return;
	s->t_stage++;
	sroce_dcqcn_rise(s, c);
}

/* A timer's period, a parameter in us. */
static ktime_t sroce_dcqcn_period(const struct sroce_cc *cc,
				  enum sroce_cc_param i)
{
	return ns_to_ktime((u64)sroce_cc_get(cc, i) * NSEC_PER_USEC);
}

/* The rate the gate should apply for @s: 0 when it is not limited. */
static u64 sroce_dcqcn_limit(const struct sroce_dcqcn_state *s)
{
	return s->active ? s->rc : 0;
}

/*
 * Is the expiry a timer's callback handles still due? A CNP may restart
 * the timer (sroce_dcqcn_cnp(), under @d->lock) while the callback waits
 * for that lock: the timer is then queued again, for the period the CNP
 * began, and the expiry belongs to the period it ended. Handling it
 * would raise a rate just cut, or end an alpha period in which a CNP
 * came. Called under @d->lock; a callback that goes on forwards its
 * timer before it lets go, so that no restart comes between (forwarding
 * a queued timer is a bug hrtimer_forward() warns of).
 */
static bool sroce_dcqcn_due(struct sroce_dcqcn *d, struct hrtimer *timer)
{
	lockdep_assert_held(&d->lock);
	return d->s.active && !d->stopped && !hrtimer_is_queued(timer);
}

static enum hrtimer_restart sroce_dcqcn_alpha_fire(struct hrtimer *timer)
{
	struct sroce_dcqcn *d = container_of(timer, struct sroce_dcqcn,
					     alpha_timer);
	struct sroce_dcqcn_cfg c;
	unsigned long flags;
	bool active;

	sroce_dcqcn_cfg_get(&c, d->cc);
	spin_lock_irqsave(&d->lock, flags);
	active = sroce_dcqcn_due(d, timer);
	if (active) {
		sroce_dcqcn_alpha_tick(&d->s, &c);
		hrtimer_forward_now(timer,
				    sroce_dcqcn_period(d->cc,
						       SROCE_CC_RP_ALPHA_PERIOD));
	}
	spin_unlock_irqrestore(&d->lock, flags);
	return active ? HRTIMER_RESTART : HRTIMER_NORESTART;
}

/*
 * The rate goes to the gate under @d->lock (the gate's lock nests
 * inside it), so that a cut and a rise racing on two CPUs reach the gate
 * in the order they reached the state.
 */
static enum hrtimer_restart sroce_dcqcn_rise_fire(struct hrtimer *timer)
{
	struct sroce_dcqcn *d = container_of(timer, struct sroce_dcqcn,
					     rise_timer);
	struct sroce_dcqcn_cfg c;
	unsigned long flags;
	bool active;
	u64 sent;

	sroce_dcqcn_cfg_get(&c, d->cc);
	spin_lock_irqsave(&d->lock, flags);
	active = sroce_dcqcn_due(d, timer);
	if (active) {
		sent = sroce_rate_sent(d->rate);
		sroce_dcqcn_timer_event(&d->s, &c, sent - d->sent_mark);
		d->sent_mark = sent;
		trace_sroce_dcqcn(d->qpn, d->s.stage, d->s.rc, d->s.rt,
				  d->s.alpha);
		sroce_rate_set(d->rate, SROCE_RATE_SRC_CC,
			       sroce_dcqcn_limit(&d->s));
		active = d->s.active;
	}
	if (active)
		hrtimer_forward_now(timer,
				    sroce_dcqcn_period(d->cc,
						       SROCE_CC_RP_TIME_RESET));
	spin_unlock_irqrestore(&d->lock, flags);
	return active ? HRTIMER_RESTART : HRTIMER_NORESTART;
}

/**
 * sroce_dcqcn_init() - set up a QP's reaction point, not limiting
 * @d: the reaction point
 * @rate: the QP's gate
 * @cc: the device's parameters
 * @qpn: the QP's number, for tracing
 */
void sroce_dcqcn_init(struct sroce_dcqcn *d, struct sroce_rate *rate,
		      const struct sroce_cc *cc, u32 qpn)
{
	memset(d, 0, sizeof(*d));
	spin_lock_init(&d->lock);
	d->rate = rate;
	d->cc = cc;
	d->qpn = qpn;
	hrtimer_init(&d->alpha_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	d->alpha_timer.function = sroce_dcqcn_alpha_fire;
	hrtimer_init(&d->rise_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	d->rise_timer.function = sroce_dcqcn_rise_fire;
}

/**
 * sroce_dcqcn_stop() - stop the reaction point and its timers
 * @d: the reaction point
 *
 * CNPs that arrive afterwards are ignored until sroce_dcqcn_reset().
 *
 * Context: process context; waits for running timer callbacks.
 */
void sroce_dcqcn_stop(struct sroce_dcqcn *d)
{
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	d->stopped = true;
	spin_unlock_irqrestore(&d->lock, flags);
	hrtimer_cancel(&d->alpha_timer);
	hrtimer_cancel(&d->rise_timer);
}

/**
 * sroce_dcqcn_reset() - a stopped reaction point starts over, unlimited
 * @d: the reaction point, stopped
 */
void sroce_dcqcn_reset(struct sroce_dcqcn *d)
{
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	memset(&d->s, 0, sizeof(d->s));
	d->sent_mark = sroce_rate_sent(d->rate);
	d->stopped = false;
	sroce_rate_set(d->rate, SROCE_RATE_SRC_CC, 0);
	spin_unlock_irqrestore(&d->lock, flags);
}

/**
 * sroce_dcqcn_cnp() - a CNP for this QP arrived
 * @d: the QP's reaction point
 *
 * Cuts the rate (sroce_dcqcn_cut()) and starts the timers that raise it
 * again.
 *
 * Context: any.
 * Return: true if the rate was cut.
 */
bool sroce_dcqcn_cnp(struct sroce_dcqcn *d)
{
	struct sroce_dcqcn_cfg c;
	unsigned long flags;
	bool cut = false;

	sroce_dcqcn_cfg_get(&c, d->cc);
	spin_lock_irqsave(&d->lock, flags);
	if (d->stopped)
		goto out_unlock;
	if (!d->s.active)
		hrtimer_start(&d->alpha_timer,
			      sroce_dcqcn_period(d->cc,
						 SROCE_CC_RP_ALPHA_PERIOD),
			      HRTIMER_MODE_REL_SOFT);
	cut = sroce_dcqcn_cut(&d->s, &c, ktime_get_ns());
	if (!cut)
		goto out_unlock;
	/* the stages start over: so does the timer's period */
	hrtimer_start(&d->rise_timer,
		      sroce_dcqcn_period(d->cc, SROCE_CC_RP_TIME_RESET),
		      HRTIMER_MODE_REL_SOFT);
	d->sent_mark = sroce_rate_sent(d->rate);
	trace_sroce_dcqcn(d->qpn, d->s.stage, d->s.rc, d->s.rt, d->s.alpha);
	sroce_rate_set(d->rate, SROCE_RATE_SRC_CC, sroce_dcqcn_limit(&d->s));
out_unlock:
	spin_unlock_irqrestore(&d->lock, flags);
	return cut;
}
