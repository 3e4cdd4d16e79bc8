/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce multicast groups: UD QPs attached to MGIDs, and the Ethernet
 * multicast addresses they need on the netdev.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

/* 1024 buckets: at the device's 8192 groups, 8 to a bucket on average */
#define SROCE_MCAST_HASH_BITS	10

/**
 * struct sroce_mcast - the multicast groups of a device
 * @mutex: serialises attach and detach, so that a group and the
 *	netdev's filter entry for it come and go together (the filter is
 *	changed outside @lock: dev_mc_add() takes the netdev's address
 *	lock with bottom halves off)
 * @lock: guards @groups, @ngroups and every group's QP list; taken with
 *	interrupts saved (the receive path reads them in softirq)
 * @groups: struct sroce_mcg, one per MGID with a QP attached, hashed by
 *	MGID with @seed (the MGIDs are the user's to choose)
 * @ngroups: groups in @groups
 * @seed: hash seed, random per device
 */
struct sroce_mcast {
	struct mutex mutex; /* see above */
	spinlock_t lock; /* see above */
	DECLARE_HASHTABLE(groups, SROCE_MCAST_HASH_BITS);
	unsigned int ngroups;
	u32 seed;
};

void sroce_mcast_init(struct sroce_mcast *mc);
void sroce_mcast_cleanup(struct sroce_mcast *mc);
bool sroce_mgid_mac(const union ib_gid *mgid, u8 *mac);
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
unsigned int sroce_mcast_members(struct sroce_mcast *mc,
				 const union ib_gid *mgid, u32 *qpns);

extern const struct ib_device_ops sroce_mcast_verbs;

#endif /* SROCE_MCAST_H */
