/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce responder: its inbox.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_INBOX_H
#define SROCE_RESP_INBOX_H

struct sk_buff;
struct sroce_qp;

void sroce_resp_queue(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_resp_kick(struct sroce_qp *qp);

#endif /* SROCE_RESP_INBOX_H */
