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

/**
 * enum sroce_xmit_how - how a packet reaches its destination
 * @SROCE_XMIT_WIRE: through the IP stack and out of a netdev
 * @SROCE_XMIT_LOCAL: to a sroce device of this host, without an ICRC
 * @SROCE_XMIT_LOCAL_CHECKED: to a sroce device of this host, with its
 *	ICRC filled and checked as on the wire (force_wire)
 */
enum sroce_xmit_how {
	SROCE_XMIT_WIRE,
	SROCE_XMIT_LOCAL,
	SROCE_XMIT_LOCAL_CHECKED,
};

struct sk_buff *sroce_xmit_alloc(struct sroce_dev *sdev,
				 const struct sroce_av *av, unsigned int len,
				 gfp_t gfp);
bool sroce_xmit_dst_local(const struct dst_entry *dst);
enum sroce_xmit_how sroce_xmit_how(const struct dst_entry *dst,
				   bool force_wire);
enum sroce_xmit_how sroce_xmit_how_now(const struct dst_entry *dst);
bool sroce_xmit_may_span(bool local);
int sroce_xmit_local_list(const struct sroce_av *av, struct sk_buff *list,
			  bool built_here);
int sroce_xmit_local(const struct sroce_av *av, struct sk_buff *skb,
		     bool built_here);
u16 sroce_xmit_ip_ids(const struct sroce_av *av, unsigned int n);
u16 sroce_xmit_ip_id(const struct sroce_av *av, enum sroce_xmit_how how);
int sroce_xmit_hdrs(struct sk_buff *skb, const struct sroce_av *av,
		    u16 sport, u16 ip_id, enum sroce_xmit_how how);
int sroce_xmit_out(const struct sroce_av *av, struct dst_entry *dst,
		   struct sk_buff *skb, enum sroce_xmit_how how);
int sroce_xmit(const struct sroce_av *av, struct dst_entry *dst, u16 sport,
	       struct sk_buff *skb);

#endif /* SROCE_XMIT_H */
