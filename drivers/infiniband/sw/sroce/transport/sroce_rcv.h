/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce received packet validation, drop counting and dispatch to the QP
 * engines.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RCV_H
#define SROCE_RCV_H

#include <linux/types.h>

#include "core/sroce_stats.h"
#include "wire/sroce_pkt.h"

struct sk_buff;
struct sroce_dev;

enum sroce_counter sroce_drop_counter(enum sroce_drop_reason why);
void sroce_rcv_count_drop(struct sroce_dev *sdev, enum sroce_drop_reason why);
int sroce_rcv_skb(struct sroce_dev *sdev, struct sk_buff *skb,
		  bool built_here);
bool sroce_rcv_verify(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_rcv_drop(struct sroce_dev *sdev, struct sk_buff *skb,
		    enum sroce_drop_reason why);
void sroce_rcv_refuse(struct sroce_dev *sdev, struct sk_buff *skb,
		      enum sroce_counter cnt);
void sroce_rcv_purge(struct sroce_dev *sdev, struct sk_buff_head *q);

#endif /* SROCE_RCV_H */
