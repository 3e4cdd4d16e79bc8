/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce received packet dispatch to the QP engines.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RCV_H
#define SROCE_RCV_H

struct sk_buff;
struct sroce_dev;

void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_RCV_H */
