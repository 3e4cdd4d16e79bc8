/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * UDP source port of a QP's RoCEv2 packets.
 *
 * The destination port is always SROCE_UDP_PORT and receivers ignore the
 * source port, which only spreads flows over ECMP paths and RSS queues.
 * Both forms below land in the range RoCEv2 reserves for it, 0xc000 to
 * 0xffff, and match what rdma_rxe and RoCE NICs send.
 */

#ifndef SROCE_SPORT_H
#define SROCE_SPORT_H

#include <linux/hash.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define SROCE_SPORT_BITS	14

/**
 * sroce_sport_default() - source port of a QP that has no peer yet
 * @qpn: number of the local QP
 *
 * Used from QP creation on; UD and GSI QPs keep it for good.
 *
 * Return: a port in [0xc000, 0xffff] derived from @qpn.
 */
static inline u16 sroce_sport_default(u32 qpn)
{
	return IB_ROCE_UDP_ENCAP_VALID_PORT_MIN |
	       hash_32(qpn, SROCE_SPORT_BITS);
}

/**
 * sroce_sport_connected() - source port of a connected QP
 * @flow_label: flow label of the GRH in the QP's address vector, or 0
 * @lqpn: number of the local QP
 * @rqpn: number of the remote QP
 *
 * Without a flow label the port is derived from both QP numbers, and
 * symmetrically, so both ends of a connection use the same port.
 *
 * Return: a port in [0xc000, 0xffff].
 */
static inline u16 sroce_sport_connected(u32 flow_label, u32 lqpn, u32 rqpn)
{
	return rdma_get_udp_sport(flow_label, lqpn, rqpn);
}

#endif /* SROCE_SPORT_H */
