/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce device: one ib_device bound to one Ethernet netdev.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_DEV_H
#define SROCE_DEV_H

#include <linux/netdevice.h>
#include <linux/sizes.h>
#include <rdma/ib_verbs.h>

#include "sroce_port.h"

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
#define SROCE_VENDOR_ID			0xffffff

/**
 * struct sroce_dev - an sroce RDMA device
 * @ibdev: the ib_core device; must stay first (ib_alloc_device)
 * @ndev: the Ethernet netdev; ib_core holds the reference taken by
 *	ib_device_set_netdev() until the device is unregistered
 * @ifindex: @ndev's ifindex, the key in the device map
 * @attr: device attributes reported by query_device
 * @port: port 1
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	int ifindex;
	struct ib_device_attr attr;
	struct sroce_port port;
};

static inline struct sroce_dev *to_sroce_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

int sroce_dev_add(const char *name, struct net_device *ndev);
struct sroce_dev *sroce_dev_get_by_netdev(const struct net_device *ndev);
void sroce_dev_put(struct sroce_dev *sdev);
void sroce_dev_remove_all(void);

#endif /* SROCE_DEV_H */
