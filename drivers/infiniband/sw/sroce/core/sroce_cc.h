/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce congestion control parameters of a device (see sroce_cc.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_CC_H
#define SROCE_CC_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <net/inet_ecn.h>

struct attribute_group;

/* The parameters; each is one file in /sys/class/infiniband/DEV/cc/. */
enum sroce_cc_param {
	SROCE_CC_ECN,			/* send ECN-capable (ECT(0)) */
	SROCE_CC_NP,			/* notification point on */
	SROCE_CC_RP,			/* reaction point on */
	SROCE_CC_CNP_INTERVAL,		/* us between CNPs of one QP */
	SROCE_CC_RP_REDUCE_PERIOD,	/* us between rate cuts of one QP */
	SROCE_CC_RP_ALPHA_PERIOD,	/* us between alpha updates */
	SROCE_CC_RP_G,			/* alpha gain, 1/1024ths */
	SROCE_CC_RP_INITIAL_ALPHA,	/* alpha at the first cut, 1/1024ths */
	SROCE_CC_RP_TIME_RESET,		/* us between timer increase stages */
	SROCE_CC_RP_BYTE_RESET,		/* bytes between byte increase stages */
	SROCE_CC_RP_THRESHOLD,		/* fast recovery stages (F) */
	SROCE_CC_RP_AI_RATE,		/* additive increase, Mbit/s */
	SROCE_CC_RP_HAI_RATE,		/* hyper increase, Mbit/s */
	SROCE_CC_RP_MIN_RATE,		/* floor, Mbit/s */
	SROCE_CC_RP_MAX_RATE,		/* start and ceiling, Mbit/s */
	SROCE_CC_RP_MAX_DEC,		/* largest cut, percent */
	SROCE_CC_NPARAM
};

/**
 * struct sroce_cc - a device's congestion control parameters
 * @v: the values, indexed by enum sroce_cc_param; read with
 *	sroce_cc_get() (a store from sysfs may come at any time)
 */
struct sroce_cc {
	u32 v[SROCE_CC_NPARAM];
};

void sroce_cc_init(struct sroce_cc *cc);
extern const struct ib_device_ops sroce_cc_verbs;

static inline u32 sroce_cc_get(const struct sroce_cc *cc,
			       enum sroce_cc_param i)
{
	return READ_ONCE(cc->v[i]);
}

/**
 * sroce_cc_tclass() - the traffic class a packet leaves with
 * @cc: the device's parameters
 * @tclass: the path's traffic class (DSCP and ECN bits)
 *
 * With ecn_enable, ECT(0) unless the path set ECN bits of its own (an
 * application may ask for ECT(1) or Not-ECT explicitly only by setting
 * them; 00 in a traffic class means "not chosen"). The ICRC does not
 * cover these bits, so a peer's check is not affected.
 *
 * Return: the traffic class to send.
 */
static inline u8 sroce_cc_tclass(const struct sroce_cc *cc, u8 tclass)
{
	if (sroce_cc_get(cc, SROCE_CC_ECN) && !(tclass & INET_ECN_MASK))
		return tclass | INET_ECN_ECT_0;
	return tclass;
}

#endif /* SROCE_CC_H */
