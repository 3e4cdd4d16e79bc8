/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce UC responder: the receive side of an Unreliable Connected QP.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_UC_H
#define SROCE_RESP_UC_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct sroce_opcode_info;
struct sroce_pkt;
struct sroce_qp;
struct sroce_qp_params;

/* What a UC responder does with a packet, before it executes anything. */
enum sroce_uc_verdict {
	SROCE_UC_NEXT,		/* in order: execute it */
	SROCE_UC_RESTART,	/* a first packet out of order: start anew */
	SROCE_UC_DROP,		/* drop it and the rest of its message */
	SROCE_UC_STALE,		/* behind the ePSN: drop it, change nothing */
};

enum sroce_uc_verdict
sroce_resp_uc_verdict(u32 epsn, bool dropping,
		      const struct sroce_opcode_info *prev,
		      u32 psn, const struct sroce_opcode_info *info);
void sroce_resp_uc_request(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   struct sk_buff *skb, const struct sroce_pkt *pkt);

#endif /* SROCE_RESP_UC_H */
