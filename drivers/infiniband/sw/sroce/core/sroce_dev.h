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
#include <linux/sizes.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "sroce_mcast.h"
#include "sroce_port.h"

struct sroce_stats;

/*
 * Device limits. They are what the verbs layer will enforce; the values
 * are reported through query_device/query_port and must only ever grow
 * in a compatible way.
 */
#define SROCE_MAX_SGE			63
#define SROCE_MAX_INLINE_DATA		1008	/* SROCE_MAX_SGE * 16 */
#define SROCE_MAX_MSG_SIZE		SZ_1G
#define SROCE_MAX_QP			131072
#define SROCE_MAX_QP_WR			32768
#define SROCE_MAX_CQ			65536
#define SROCE_MAX_CQE			131071
#define SROCE_MAX_MR			262144
#define SROCE_MAX_MW			65536
#define SROCE_MAX_PD			65536
#define SROCE_MAX_AH			65536
#define SROCE_MAX_SRQ			65536
#define SROCE_MAX_SRQ_WR		32768
#define SROCE_MAX_RD_ATOMIC		128
#define SROCE_MAX_FAST_REG_PAGES	512
#define SROCE_MAX_MCAST_GRP		8192
#define SROCE_MAX_MCAST_QP_ATTACH	56
/*
 * Received packets one QP's responder and completer may have waiting.
 * A flood (QP1's Q_Key is public; anyone may send to it) is dropped past
 * them and counted in dropped_backlog. The completer's is larger: it
 * holds the responses of up to SROCE_MAX_RD_ATOMIC outstanding READs, 64
 * KiB each at path MTU 1024 in perftest's defaults.
 */
#define SROCE_RESP_BACKLOG		4096
#define SROCE_COMP_BACKLOG		16384

#define SROCE_VENDOR_ID			0xffffff

/* QPNs handed out to QPs other than QP0/QP1; 24 bits on the wire. */
#define SROCE_MIN_QPN			16
#define SROCE_MAX_QPN			((1U << 24) - 1)
/* MR and MW keys: a 24-bit index, then an 8-bit variant. */
#define SROCE_MIN_KEY_INDEX		1
#define SROCE_MAX_KEY_INDEX		((1U << 24) - 1)
#define SROCE_MAX_AH_NUM		((1U << 24) - 1)

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

int sroce_dev_add(const char *name, struct net_device *ndev);
struct sroce_dev *sroce_dev_get_by_netdev(const struct net_device *ndev);
void sroce_dev_put(struct sroce_dev *sdev);
void sroce_dev_remove_all(void);

#endif /* SROCE_DEV_H */
