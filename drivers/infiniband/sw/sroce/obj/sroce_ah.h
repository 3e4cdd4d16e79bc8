/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce address vectors and address handles.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_AH_H
#define SROCE_AH_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

/**
 * struct sroce_av - where a QP or an address handle sends to
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6 (from the source
 *	GID's type; RoCEv2 only)
 * @sgid_index: index of the source GID in the port's GID table
 * @hop_limit: IP TTL / hop limit
 * @traffic_class: IP TOS / traffic class
 * @flow_label: IPv6 flow label, and the entropy of the UDP source port
 * @sl: service level (carried, not used by RoCE)
 * @static_rate: as given (soft RoCE sends as fast as it can)
 * @dmac: destination MAC, resolved by ib_core
 * @ifindex: the egress netdev of the source GID (the port's netdev or a
 *	VLAN device on it), as of the time the AV was set
 * @sgid: source GID
 * @dgid: destination GID
 * @saddr: source IP address (from @sgid)
 * @daddr: destination IP address (from @dgid)
 *
 * An AV is a value: it holds no references. The source GID attribute it
 * was built from is copied out, so a GID that later disappears only makes
 * the route lookup at transmit time fail.
 */
struct sroce_av {
	u8 network_type;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	u8 sl;
	u8 static_rate;
	u8 dmac[ETH_ALEN];
	int ifindex;
	union ib_gid sgid;
	union ib_gid dgid;
	union {
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} saddr, daddr;
};

/**
 * struct sroce_ah - an address handle
 * @ibah: ib_core's AH, allocated by ib_core
 * @av: its address vector
 * @ah_num: its number for user-space UD WQEs (never 0), the key in the
 *	device's @ahs xarray
 */
struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	u32 ah_num;
};

static inline struct sroce_ah *to_sroce_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr);

int sroce_ah_get_av(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		    struct sroce_av *av);

extern const struct ib_device_ops sroce_ah_verbs;

#endif /* SROCE_AH_H */
