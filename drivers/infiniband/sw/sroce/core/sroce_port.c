// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCE port of an sroce device.
 *
 * An sroce device has exactly one port and it mirrors its netdev: the port
 * is ACTIVE while the netdev is running with carrier, and its active MTU
 * is the largest IB MTU whose packets fit the netdev MTU. The GID table is
 * ib_core's business (it follows the netdev's addresses by itself).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "core/sroce_stats.h"
#include "wire/sroce_hdr.h"

/* Port capability bits modify_port may set or clear. */
#define SROCE_PORT_MUTABLE_CAPS	(IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP)

/**
 * sroce_port_mtu_for() - IB MTU carried by a netdev MTU
 * @netdev_mtu: the Ethernet MTU in bytes
 *
 * Return: the largest IB MTU whose packets, headers and ICRC included, fit
 * into @netdev_mtu; IB_MTU_256 when not even that fits (such a link drops
 * full-sized packets, which the requester's retry handles).
 */
enum ib_mtu sroce_port_mtu_for(unsigned int netdev_mtu)
{
	enum ib_mtu mtu = IB_MTU_4096;

	while (mtu > IB_MTU_256 &&
	       ib_mtu_enum_to_int(mtu) + SROCE_MAX_WIRE_OVERHEAD > netdev_mtu)
		mtu--;
	return mtu;
}

static enum ib_port_state sroce_port_state_of(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static void sroce_port_dispatch(struct ib_device *ibdev,
				enum ib_event_type type)
{
	struct ib_event event = {
		.device = ibdev,
		.element.port_num = SROCE_PORT_NUM,
		.event = type,
	};

	ib_dispatch_event(&event);
}

/**
 * sroce_port_refresh() - recompute the port state and MTU from the netdev
 * @port: the port
 * @ndev: the netdev it mirrors
 *
 * Context: any context that may take a BH spinlock.
 *
 * Return: true when the port state changed.
 */
bool sroce_port_refresh(struct sroce_port *port, struct net_device *ndev)
{
	enum ib_port_state state = sroce_port_state_of(ndev);
	enum ib_mtu mtu = sroce_port_mtu_for(READ_ONCE(ndev->mtu));
	bool changed;

	spin_lock_bh(&port->lock);
	changed = port->state != state;
	WRITE_ONCE(port->state, state);
	WRITE_ONCE(port->active_mtu, mtu);
	spin_unlock_bh(&port->lock);
	return changed;
}

/**
 * sroce_port_init() - set a new device's port from its netdev
 * @port: the port to initialise
 * @ndev: the netdev it mirrors
 */
void sroce_port_init(struct sroce_port *port, struct net_device *ndev)
{
	spin_lock_init(&port->lock);
	port->cap_flags = IB_PORT_CM_SUP;
	atomic_set(&port->qkey_violations, 0);
	sroce_port_refresh(port, ndev);
}

/**
 * sroce_port_netdev_event() - follow a netdev notifier event
 * @ibdev: the device owning @port
 * @port: the port to update
 * @ndev: the netdev the event is about
 * @event: NETDEV_* event
 *
 * Recomputes the port state and MTU and dispatches IB_EVENT_PORT_ACTIVE or
 * IB_EVENT_PORT_ERR when the state changed; a port that went down counts
 * in link_downed. Netdev notifiers run under RTNL, so events are
 * dispatched in the order they happened.
 */
void sroce_port_netdev_event(struct ib_device *ibdev, struct sroce_port *port,
			     struct net_device *ndev, unsigned long event)
{
	ASSERT_RTNL();

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		if (!sroce_port_refresh(port, ndev))
			break;
		if (READ_ONCE(port->state) == IB_PORT_ACTIVE) {
			sroce_port_dispatch(ibdev, IB_EVENT_PORT_ACTIVE);
			break;
		}
		/* PortCounters LinkDownedCounter: the link went down */
		sroce_stats_inc(to_sroce_dev(ibdev), SROCE_CNT_LINK_DOWNED);
		sroce_port_dispatch(ibdev, IB_EVENT_PORT_ERR);
		break;
	default:
		break;
	}
}

static u8 sroce_port_phys_state(struct net_device *ndev,
				enum ib_port_state state)
{
	if (state == IB_PORT_ACTIVE)
		return IB_PORT_PHYS_STATE_LINK_UP;
	if (READ_ONCE(ndev->flags) & IFF_UP)
		return IB_PORT_PHYS_STATE_POLLING;
	return IB_PORT_PHYS_STATE_DISABLED;
}

/**
 * sroce_query_port() - ib_device_ops.query_port
 * @ibdev: the device
 * @port_num: port number (ib_core only passes valid ones)
 * @attr: filled in; ib_core zeroed it
 *
 * Return: 0 (the link speed falls back to a default if the netdev does not
 * report one).
 */
static int sroce_query_port(struct ib_device *ibdev, u32 port_num,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	struct sroce_port *port = &sdev->port;

	attr->state = READ_ONCE(port->state);
	attr->phys_state = sroce_port_phys_state(sdev->ndev, attr->state);
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = READ_ONCE(port->active_mtu);
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->port_cap_flags = READ_ONCE(port->cap_flags);
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->qkey_viol_cntr = atomic_read(&port->qkey_violations);
	attr->pkey_tbl_len = SROCE_PKEY_TBL_LEN;
	attr->max_vl_num = 1;
	attr->ip_gids = true;

	if (ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

/**
 * sroce_modify_port() - ib_device_ops.modify_port
 * @ibdev: the device
 * @port_num: port number
 * @mask: IB_PORT_* modify mask
 * @props: capability bits to set and clear
 *
 * Return: 0, or -EOPNOTSUPP for a port shutdown, an init type, or a
 * capability bit a RoCE port cannot change.
 */
static int sroce_modify_port(struct ib_device *ibdev, u32 port_num, int mask,
			     struct ib_port_modify *props)
{
	struct sroce_port *port = &to_sroce_dev(ibdev)->port;
	u32 caps;

	if (mask & (IB_PORT_SHUTDOWN | IB_PORT_INIT_TYPE))
		return -EOPNOTSUPP;
	if ((props->set_port_cap_mask | props->clr_port_cap_mask) &
	    ~SROCE_PORT_MUTABLE_CAPS)
		return -EOPNOTSUPP;

	spin_lock_bh(&port->lock);
	caps = (port->cap_flags | props->set_port_cap_mask) &
	       ~props->clr_port_cap_mask;
	WRITE_ONCE(port->cap_flags, caps);
	spin_unlock_bh(&port->lock);

	if (mask & IB_PORT_RESET_QKEY_CNTR)
		atomic_set(&port->qkey_violations, 0);
	return 0;
}

/**
 * sroce_query_pkey() - ib_device_ops.query_pkey
 * @ibdev: the device
 * @port_num: port number
 * @index: P_Key table index
 * @pkey: the full-membership default P_Key
 *
 * Return: 0, or -EINVAL for an index past the one-entry table.
 */
static int sroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			    u16 *pkey)
{
	if (index >= SROCE_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = SROCE_DEFAULT_PKEY;
	return 0;
}

/**
 * sroce_get_port_immutable() - ib_device_ops.get_port_immutable
 * @ibdev: the device
 * @port_num: port number
 * @immutable: table sizes and core capabilities of a RoCEv2 port
 *
 * Return: 0.
 */
static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = SROCE_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SROCE_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/**
 * sroce_get_link_layer() - ib_device_ops.get_link_layer
 * @ibdev: the device
 * @port_num: port number
 *
 * Return: IB_LINK_LAYER_ETHERNET.
 */
static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

/* The verbs on the port and its attributes, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_port_verbs = {
	.get_port_immutable = sroce_get_port_immutable,
	.get_link_layer = sroce_get_link_layer,
	.query_port = sroce_query_port,
	.modify_port = sroce_modify_port,
	.query_pkey = sroce_query_pkey,
};
