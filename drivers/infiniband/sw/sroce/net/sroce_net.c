// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce's UDP port 4791 endpoints.
 *
 * The module owns the RoCEv2 port in the initial network namespace, for
 * IPv4 and (when the kernel has it) IPv6, from load to unload. Binding it
 * is also what keeps sroce and rdma_rxe apart: both use the rxe driver id,
 * so they must never run side by side, and whichever loads second fails
 * to bind.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/net_namespace.h>
#include <net/udp_tunnel.h>

#include "core/sroce_dev.h"
#include "net/sroce_net.h"
#include "wire/sroce_hdr.h"

static struct socket *sroce_sock4;
static struct socket *sroce_sock6;

/*
 * Where received packets go: the transport's receive entry, given by
 * sroce_net_init() before the sockets exist and kept until they are gone.
 * A callback rather than a call, so that this layer does not depend on
 * the one above it.
 */
static sroce_net_rx_fn *sroce_net_rx;

/**
 * sroce_net_deliver() - a RoCEv2 packet for a device of this host
 * @sdev: the device that takes it (the caller holds a reference)
 * @skb: the packet, skb->data at its UDP header and its network header
 *	set; consumed
 * @built_here: the packet carries no ICRC and none is checked
 *
 * The local delivery entry of the transmit path (sroce_xmit.c). Only
 * this entry can tell the receive side to skip the ICRC: the UDP socket's
 * packets always have theirs checked.
 *
 * Context: any.
 */
void sroce_net_deliver(struct sroce_dev *sdev, struct sk_buff *skb,
		       bool built_here)
{
	if (sroce_net_rx(sdev, skb, built_here))
		kfree_skb(skb);
}

/*
 * UDP encapsulation receive hook, in softirq context, with skb->data at
 * the UDP header and the UDP checksum (if any) already verified. The
 * packet belongs to us whatever happens: returning 0 says it was consumed.
 */
static int sroce_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct sroce_dev *sdev;
	bool consumed;

	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);

	sdev = sroce_dev_get_by_netdev(ndev);
	if (!sdev)
		goto drop;

	consumed = !sroce_net_rx(sdev, skb, false);
	sroce_dev_put(sdev);
	if (consumed)
		return 0;
drop:
	kfree_skb(skb);
	return 0;
}

static struct socket *sroce_sock_open(int family)
{
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_recv,
	};
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(SROCE_UDP_PORT),
		/* RoCEv2 over IPv6 uses a zero UDP checksum */
		.ipv6_v6only = family == AF_INET6,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);

	setup_udp_tunnel_sock(&init_net, sock, &tnl);
	return sock;
}

static void sroce_sock_close(struct socket **sock)
{
	if (*sock) {
		udp_tunnel_sock_release(*sock);
		*sock = NULL;
	}
}

static int sroce_sock_error(const char *family, struct socket *sock)
{
	int err = PTR_ERR(sock);

	if (err == -EADDRINUSE)
		pr_err("UDP port %u (%s) is in use, probably by rdma_rxe: unload it first (modprobe -r rdma_rxe)\n",
		       SROCE_UDP_PORT, family);
	else
		pr_err("cannot open UDP port %u (%s): %d\n", SROCE_UDP_PORT,
		       family, err);
	return err;
}

/**
 * sroce_net_init() - bind UDP port 4791 for IPv4 and IPv6
 * @rx: the receive entry: validates, counts and dispatches a packet
 *	(skb->data at its UDP header) for a device, checking its ICRC
 *	unless it was built here without one; returns 0 when it consumed
 *	the packet, an error when the caller must free it
 *
 * An IPv6-less kernel (or one booted with ipv6.disable=1) gets IPv4 only.
 *
 * Return: 0, or a negative errno; -EADDRINUSE when another module (in
 * practice rdma_rxe) holds the port.
 */
int sroce_net_init(sroce_net_rx_fn *rx)
{
	struct socket *sock;

	sroce_net_rx = rx;
	sock = sroce_sock_open(AF_INET);
	if (IS_ERR(sock))
		return sroce_sock_error("IPv4", sock);
	sroce_sock4 = sock;

	if (!IS_ENABLED(CONFIG_IPV6))
		return 0;

	sock = sroce_sock_open(AF_INET6);
	if (IS_ERR(sock)) {
		if (PTR_ERR(sock) == -EAFNOSUPPORT) {
			pr_info("IPv6 is disabled: RoCEv2 over IPv4 only\n");
			return 0;
		}
		sroce_sock_close(&sroce_sock4);
		return sroce_sock_error("IPv6", sock);
	}
	sroce_sock6 = sock;
	return 0;
}

/**
 * sroce_net_exit() - release UDP port 4791
 *
 * Called after every device is gone; releasing the sockets waits for
 * receivers still running under RCU.
 */
void sroce_net_exit(void)
{
	sroce_sock_close(&sroce_sock6);
	sroce_sock_close(&sroce_sock4);
}
