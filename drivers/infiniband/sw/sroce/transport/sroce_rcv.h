/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce received packet dispatch to the QP engines.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RCV_H
#define SROCE_RCV_H

#include <linux/types.h>

struct sk_buff;
struct sroce_dev;

void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rcv_qp(struct sroce_dev *sdev, struct sk_buff *skb, u32 qpn);

#endif /* SROCE_RCV_H */
