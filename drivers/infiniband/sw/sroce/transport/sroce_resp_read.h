/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce RC responder: RDMA READ responses, and going back when the
 * requester asks for a READ again.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_READ_H
#define SROCE_RESP_READ_H

#include <linux/skbuff.h>
#include <linux/types.h>

#include "transport/sroce_resp.h"

struct sroce_pkt;
struct sroce_qp;
struct sroce_qp_params;

/* sroce_pkt.mark bits of a request waiting in &sroce_resp.rxq */
#define SROCE_RESP_MARK_DUP_READ	BIT(0)	/* a duplicate READ request */
#define SROCE_RESP_MARK_NO_SERVE	BIT(1)	/* asked for again behind it */

enum sroce_resp_result
sroce_resp_read(struct sroce_qp *qp, const struct sroce_qp_params *p,
		struct sk_buff *skb, const struct sroce_pkt *pkt, u32 *npkts);
void sroce_resp_dup_read(struct sroce_qp *qp, const struct sroce_qp_params *p,
			 struct sk_buff *skb, const struct sroce_pkt *pkt);
unsigned int sroce_resp_serve(struct sroce_qp *qp,
			      const struct sroce_qp_params *p);
void sroce_resp_mark_queued(struct sroce_resp *resp, struct sroce_pkt *pkt);
void sroce_resp_rewind(struct sroce_qp *qp);

#endif /* SROCE_RESP_READ_H */
