/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCE port of an sroce device: state and MTU that follow the netdev.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_PORT_H
#define SROCE_PORT_H

#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#define SROCE_PORT_NUM			1
#define SROCE_PKEY_TBL_LEN		1
#define SROCE_GID_TBL_LEN		256

/*
 * Most header bytes a RoCEv2 packet carries besides a full-MTU payload:
 * IPv6 (40) + UDP (8) + BTH (12) + RETH (16) + ImmDt (4) + ICRC (4). The
 * active IB MTU is the largest one that fits the netdev MTU after them.
 */
#define SROCE_MAX_WIRE_OVERHEAD		84

/**
 * struct sroce_port - the single RoCE port of a device
 * @lock: serialises writers of @state, @active_mtu and @cap_flags;
 *	readers use READ_ONCE() and may see a value one update old
 * @state: IB_PORT_ACTIVE when the netdev is up with carrier, else DOWN
 * @active_mtu: largest IB MTU the netdev's MTU carries
 * @cap_flags: IB_PORT_* capability bits (modify_port may change some)
 * @qkey_violations: Q_Key violation counter, reset by modify_port
 */
struct sroce_port {
	spinlock_t lock; /* see above */
	enum ib_port_state state;
	enum ib_mtu active_mtu;
	u32 cap_flags;
	atomic_t qkey_violations;
};

enum ib_mtu sroce_port_mtu_for(unsigned int netdev_mtu);
void sroce_port_init(struct sroce_port *port, struct net_device *ndev);
bool sroce_port_refresh(struct sroce_port *port, struct net_device *ndev);
void sroce_port_netdev_event(struct ib_device *ibdev, struct sroce_port *port,
			     struct net_device *ndev, unsigned long event);

extern const struct ib_device_ops sroce_port_verbs;

#endif /* SROCE_PORT_H */
