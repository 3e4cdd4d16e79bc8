/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce transmit: RoCEv2 packets onto the network, or to a local device.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_XMIT_H
#define SROCE_XMIT_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct dst_entry;
struct sroce_av;
struct sroce_dev;

struct sk_buff *sroce_xmit_alloc(struct sroce_dev *sdev,
				 const struct sroce_av *av, unsigned int len,
				 gfp_t gfp);
bool sroce_xmit_dst_local(const struct dst_entry *dst);
u16 sroce_xmit_ip_ids(const struct sroce_av *av, unsigned int n);
int sroce_xmit_hdrs(struct sk_buff *skb, const struct sroce_av *av,
		    u16 sport, u16 ip_id);
int sroce_xmit_out(const struct sroce_av *av, struct dst_entry *dst,
		   struct sk_buff *skb);
int sroce_xmit(const struct sroce_av *av, struct dst_entry *dst, u16 sport,
	       struct sk_buff *skb);

#endif /* SROCE_XMIT_H */
