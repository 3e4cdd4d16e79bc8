/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce DCQCN reaction point (see sroce_dcqcn.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_DCQCN_H
#define SROCE_DCQCN_H

#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct sroce_cc;
struct sroce_rate;

/* alpha is kept in 1/2^20ths: the 1/1024ths of the parameters lose its
 * decay at small values (alpha * g / 1024 rounds to 0 below 256/g).
 */
#define SROCE_DCQCN_ALPHA_SHIFT	20
#define SROCE_DCQCN_ALPHA_ONE	BIT(SROCE_DCQCN_ALPHA_SHIFT)

/* The phase the last increase was in, for tracing. */
enum sroce_dcqcn_stage {
	SROCE_DCQCN_IDLE,	/* not limited */
	SROCE_DCQCN_CUT,	/* just cut */
	SROCE_DCQCN_FAST,	/* fast recovery toward the target */
	SROCE_DCQCN_ADDITIVE,	/* additive increase of the target */
	SROCE_DCQCN_HYPER,	/* hyper increase of the target */
};

/**
 * struct sroce_dcqcn_cfg - a device's reaction point parameters in the
 *	units the algorithm uses (sroce_dcqcn_cfg_get())
 * @min_rate: the lowest rate a cut leaves, bytes/s
 * @max_rate: the rate a QP starts from and at which it is free again
 * @ai_rate: additive increase of the target rate, bytes/s
 * @hai_rate: hyper increase step, bytes/s
 * @byte_reset: bytes sent per byte-counter stage
 * @reduce_period_ns: a QP's rate is cut at most once per this period
 * @g: the alpha gain, 1/1024ths
 * @initial_alpha: alpha at a QP's first cut, 1/1024ths
 * @threshold: F, the stages of fast recovery
 * @max_dec: the largest cut, percent
 */
struct sroce_dcqcn_cfg {
	u64 min_rate;
	u64 max_rate;
	u64 ai_rate;
	u64 hai_rate;
	u64 byte_reset;
	u64 reduce_period_ns;
	u32 g;
	u32 initial_alpha;
	u32 threshold;
	u32 max_dec;
};

/**
 * struct sroce_dcqcn_state - the algorithm's state for one QP
 * @active: the QP is limited by congestion control
 * @cnp_seen: a CNP came in the current alpha period
 * @stage: what the last event did (enum sroce_dcqcn_stage)
 * @rc: the current rate, bytes/s
 * @rt: the target rate, bytes/s
 * @alpha: the congestion estimate, 1/2^20ths
 * @t_stage: timer increase events since the last cut
 * @b_stage: byte-counter increase events since the last cut
 * @bytes: bytes sent toward the next byte-counter event
 * @last_cut: when the rate was last cut, ns
 */
struct sroce_dcqcn_state {
	bool active;
	bool cnp_seen;
	u8 stage;
	u64 rc;
	u64 rt;
	u32 alpha;
	u32 t_stage;
	u32 b_stage;
	u64 bytes;
	u64 last_cut;
};

void sroce_dcqcn_cfg_get(struct sroce_dcqcn_cfg *c, const struct sroce_cc *cc);
bool sroce_dcqcn_cut(struct sroce_dcqcn_state *s,
		     const struct sroce_dcqcn_cfg *c, u64 now);
void sroce_dcqcn_alpha_tick(struct sroce_dcqcn_state *s,
			    const struct sroce_dcqcn_cfg *c);
void sroce_dcqcn_rise(struct sroce_dcqcn_state *s,
		      const struct sroce_dcqcn_cfg *c);
void sroce_dcqcn_timer_event(struct sroce_dcqcn_state *s,
			     const struct sroce_dcqcn_cfg *c, u64 sent);

/**
 * struct sroce_dcqcn - a QP's reaction point
 * @lock: guards @s, @stopped and @sent_mark; interrupts saved
 * @s: the algorithm's state
 * @stopped: the QP's engines are stopped: CNPs are ignored
 * @sent_mark: the gate's sent bytes at the last timer event
 * @alpha_timer: the alpha update period
 * @rise_timer: the timer increase period
 * @rate: the QP's gate, where the current rate applies
 * @cc: the device's parameters
 * @qpn: for tracing
 */
struct sroce_dcqcn {
	spinlock_t lock; /* see above */
	struct sroce_dcqcn_state s;
	bool stopped;
	u64 sent_mark;
	struct hrtimer alpha_timer;
	struct hrtimer rise_timer;
	struct sroce_rate *rate;
	const struct sroce_cc *cc;
	u32 qpn;
};

void sroce_dcqcn_init(struct sroce_dcqcn *d, struct sroce_rate *rate,
		      const struct sroce_cc *cc, u32 qpn);
void sroce_dcqcn_stop(struct sroce_dcqcn *d);
void sroce_dcqcn_reset(struct sroce_dcqcn *d);
bool sroce_dcqcn_cnp(struct sroce_dcqcn *d);

#endif /* SROCE_DCQCN_H */
