/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce's UDP port 4791 endpoints.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_NET_H
#define SROCE_NET_H

struct sk_buff;
struct sroce_dev;

typedef int sroce_net_rx_fn(struct sroce_dev *sdev, struct sk_buff *skb,
			    bool built_here);

int sroce_net_init(sroce_net_rx_fn *rx);
void sroce_net_deliver(struct sroce_dev *sdev, struct sk_buff *skb,
		       bool built_here);
void sroce_net_exit(void);

#endif /* SROCE_NET_H */
