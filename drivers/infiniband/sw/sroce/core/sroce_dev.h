/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce device: one ib_device bound to one Ethernet netdev.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_DEV_H
#define SROCE_DEV_H

#include <linux/atomic.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_cc.h"
#include "core/sroce_mcast.h"
#include "core/sroce_param.h"
#include "core/sroce_port.h"

struct sroce_stats;

/**
 * struct sroce_res - object counts of one device, against its limits
 * @pd: protection domains
 * @ah: address handles
 * @cq: completion queues
 * @srq: shared receive queues
 * @qp: queue pairs
 * @mr: memory regions
 * @mw: memory windows
 *
 * A verb that creates an object takes a count first with sroce_res_get()
 * and gives it back when the object is destroyed or creation fails.
 */
struct sroce_res {
	atomic_t pd;
	atomic_t ah;
	atomic_t cq;
	atomic_t srq;
	atomic_t qp;
	atomic_t mr;
	atomic_t mw;
};

/**
 * struct sroce_dev - an sroce RDMA device
 * @ibdev: the ib_core device; must stay first (ib_alloc_device)
 * @ndev: the Ethernet netdev; ib_core holds the reference taken by
 *	ib_device_set_netdev() until the device is unregistered
 * @ifindex: @ndev's ifindex, the key in the device map
 * @attr: device attributes reported by query_device
 * @port: port 1
 * @res: object counts
 * @qps: QPN -> struct sroce_qp, for the receive path (XA_FLAGS_ALLOC)
 * @next_qpn: cursor of the cyclic QPN allocation in @qps
 * @keys: key index (key >> 8) -> MR or MW, as a tagged pointer (see
 *	sroce_mr.h); lkeys and rkeys share the index space so that an rkey
 *	on the wire names exactly one object
 * @next_key: cursor of the cyclic key index allocation
 * @ahs: ah_num -> struct sroce_ah, for UD WQEs of user QPs; the lock is
 *	taken with interrupts off (AHs come and go in atomic context)
 * @next_ah: cursor of the cyclic ah_num allocation
 * @stats: per-CPU counters (sroce_stats.h), from before registration
 *	until dealloc_driver
 * @mcast: multicast groups and their QPs (sroce_mcast.c)
 * @mr_zombies: MRs deregistered while a QP still held them, not yet
 *	freed; dealloc_driver waits for it to drop to zero (their umem
 *	release needs the device)
 * @cc: congestion control parameters (sysfs: cc/)
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	int ifindex;
	struct ib_device_attr attr;
	struct sroce_port port;
	struct sroce_res res;
	struct xarray qps;
	u32 next_qpn;
	struct xarray keys;
	u32 next_key;
	struct xarray ahs;
	u32 next_ah;
	struct sroce_stats __percpu *stats;
	struct sroce_mcast mcast;
	atomic_t mr_zombies;
	struct sroce_cc cc;
};

/**
 * struct sroce_ucontext - a user context (one per opened device file)
 * @ibuc: ib_core's context, allocated by ib_core
 */
struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

static inline struct sroce_dev *to_sroce_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

/**
 * sroce_res_get() - count one more object against a device limit
 * @count: the object count in struct sroce_res
 * @max: the device limit
 *
 * Return: 0, or -ENOMEM when the device already has @max objects.
 */
static inline int sroce_res_get(atomic_t *count, int max)
{
	if (atomic_inc_return(count) > max) {
		atomic_dec(count);
		return -ENOMEM;
	}
	return 0;
}

/**
 * sroce_res_put() - give back a count taken by sroce_res_get()
 * @count: the object count
 */
static inline void sroce_res_put(atomic_t *count)
{
	atomic_dec(count);
}

struct ib_ucontext *sroce_udata_ucontext(struct ib_udata *udata);

int sroce_dev_add(const char *name, struct net_device *ndev,
		  const struct ib_device_ops *const *verbs);
void sroce_dev_dealloc_driver(struct ib_device *ibdev);
struct sroce_dev *sroce_dev_get_by_netdev(const struct net_device *ndev);
void sroce_dev_put(struct sroce_dev *sdev);
void sroce_dev_remove_all(void);

#endif /* SROCE_DEV_H */
