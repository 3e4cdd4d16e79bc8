/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce UD responder: datagrams received by UD and GSI QPs.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_UD_H
#define SROCE_RESP_UD_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct sroce_pkt;
struct sroce_qp;
struct sroce_qp_params;

/* The GRH a UD receive buffer starts with (IBA 11.4.1.1, RoCEv2 A17.4.5.1) */
#define SROCE_GRH_LEN	40

void sroce_ud_grh(const struct sk_buff *skb, u8 net, u8 *grh);
void sroce_resp_ud_request(struct sroce_qp *qp, const struct sroce_qp_params *p,
			   struct sk_buff *skb, const struct sroce_pkt *pkt);

#endif /* SROCE_RESP_UD_H */
