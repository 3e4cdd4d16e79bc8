/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce multicast groups: UD QPs attached to MGIDs, and the Ethernet
 * multicast addresses they need on the netdev.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sk_buff;
struct sroce_dev;

/**
 * struct sroce_mcast - the multicast groups of a device
 * @lock: guards @groups and every group's QP list; taken with
 *	interrupts saved (the receive path reads them in softirq)
 * @groups: struct sroce_mcg, one per MGID with a QP attached
 * @ngroups: entries in @groups
 */
struct sroce_mcast {
	spinlock_t lock; /* see above */
	struct list_head groups;
	unsigned int ngroups;
};

void sroce_mcast_init(struct sroce_mcast *mc);
void sroce_mcast_cleanup(struct sroce_mcast *mc);
bool sroce_mgid_mac(const union ib_gid *mgid, u8 *mac);
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_MCAST_H */
