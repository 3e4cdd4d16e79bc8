/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce responder: its inbox.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_INBOX_H
#define SROCE_RESP_INBOX_H

#include <linux/types.h>

struct sk_buff;
struct sroce_pkt;
struct sroce_qp;

/* Where the responder runs for a request (sroce_resp_where()). */
enum sroce_resp_where {
	SROCE_RESP_HERE,	/* in the caller, if the task allows it */
	SROCE_RESP_QUEUE,	/* a worker */
	SROCE_RESP_AWAY,	/* a worker on another CPU */
};

enum sroce_resp_where sroce_resp_where(const struct sroce_pkt *pkt,
				       u32 streak, bool first, bool armed);
void sroce_resp_queue(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_resp_kick(struct sroce_qp *qp);

#endif /* SROCE_RESP_INBOX_H */
