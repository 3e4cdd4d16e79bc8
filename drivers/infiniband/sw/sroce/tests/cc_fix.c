// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control fixtures (cc_fix.h).
 *
 * The fixture QP's route is a dst_entry of the test's own, on a netdev
 * that is no loopback: the transmit path sends on it as to a wire,
 * through ip_local_out(), whose last step is the route's output
 * function. That one records the packet and frees it. A route of the
 * kernel's would reach no wire in the KUnit VM (it has none) and count
 * every CNP as a send error.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/resource.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <rdma/ib_pack.h>

#include "cc_fix.h"
#include "core/sroce_cc.h"
#include "core/sroce_dev.h"
#include "net/sroce_route.h"
#include "net/sroce_tx.h"
#include "resp_fix.h"
#include "transport/sroce_dcqcn.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_qp_index.h"
#include "transport/sroce_rate.h"
#include "transport/sroce_rcv.h"
#include "wire/sroce_icrc.h"

/* icrc_reference.py's ConnectX-4 Lx CNP, Ethernet header on. */
const u8 sroce_ccfix_cx_frame[CCFIX_CX_FRAME_LEN] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe,
	0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, 0x45, 0xc2,
	0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00,
	0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28,
	0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

/**
 * sroce_ccfix_av() - an address vector from one address to another
 * @av: filled in, hop limit 64, traffic class 0
 * @v6: fd00::@src to fd00::@dst rather than @src to @dst
 * @src: an IPv4 address, host order
 * @dst: an IPv4 address, host order
 */
void sroce_ccfix_av(struct sroce_av *av, bool v6, u32 src, u32 dst)
{
	memset(av, 0, sizeof(*av));
	av->hop_limit = 64;
	if (v6) {
		av->network_type = RDMA_NETWORK_IPV6;
		av->saddr.in6.sin6_family = AF_INET6;
		av->saddr.in6.sin6_addr.s6_addr32[0] = htonl(0xfd000000);
		av->daddr.in6 = av->saddr.in6;
		av->saddr.in6.sin6_addr.s6_addr32[3] = htonl(src);
		av->daddr.in6.sin6_addr.s6_addr32[3] = htonl(dst);
	} else {
		av->network_type = RDMA_NETWORK_IPV4;
		av->saddr.in4.sin_family = AF_INET;
		av->daddr.in4.sin_family = AF_INET;
		av->saddr.in4.sin_addr.s_addr = htonl(src);
		av->daddr.in4.sin_addr.s_addr = htonl(dst);
	}
}

/*
 * Put @av's UDP and IP headers in front of @skb (sroce_xmit_alloc()'s,
 * BTH on) and leave it as the UDP socket hands it over: skb->data at the
 * UDP header.
 */
static void sroce_ccfix_frame(struct kunit *test, struct sk_buff *skb,
			      const struct sroce_av *av,
			      enum sroce_xmit_how how)
{
	int err = sroce_xmit_hdrs(skb, av, 0xc123, 7, how);

	if (err)
		kfree_skb(skb);
	KUNIT_ASSERT_EQ(test, err, 0);
	__skb_pull(skb, skb_transport_offset(skb));
}

/**
 * sroce_ccfix_cnp_skb() - a CNP as it arrives
 * @test: the running test
 * @sdev: a device whose netdev sroce_xmit_alloc() can read
 * @av: its addresses
 * @qpn: the QP it names
 * @len: bytes before the ICRC: SROCE_CNP_LEN, or fewer (the CNP cut
 *	short) or up to 16 more (zeros added)
 * @how: SROCE_XMIT_LOCAL leaves the ICRC out, as this host's transmit
 *	path does: its room holds 0xee, which no ICRC matches
 *
 * Return: the packet, skb->data at the UDP header; the caller owns it.
 */
struct sk_buff *sroce_ccfix_cnp_skb(struct kunit *test, struct sroce_dev *sdev,
				    const struct sroce_av *av, u32 qpn,
				    unsigned int len, enum sroce_xmit_how how)
{
	u8 bytes[SROCE_CNP_LEN + 16] = {};
	struct sk_buff *skb;

	KUNIT_ASSERT_LE(test, len, (unsigned int)sizeof(bytes));
	sroce_cnp_fill(bytes, qpn);
	skb = sroce_xmit_alloc(sdev, av, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memcpy(skb->data, bytes, len);
	memset(skb->data + len, 0xee, SROCE_ICRC_LEN);
	sroce_ccfix_frame(test, skb, av, how);
	return skb;
}

/**
 * sroce_ccfix_req_skb() - a request with 8 bytes of payload as it arrives
 * @test: the running test
 * @sdev: a device whose netdev sroce_xmit_alloc() can read
 * @av: its addresses and traffic class
 * @opcode: an RC or UD SEND ONLY (a UD one's Q_Key is 0)
 * @qpn: the QP it is for
 *
 * Return: the packet, PSN 0, AckReq set, ICRC filled, skb->data at the
 * UDP header; the caller owns it.
 */
struct sk_buff *sroce_ccfix_req_skb(struct kunit *test, struct sroce_dev *sdev,
				    const struct sroce_av *av, u8 opcode,
				    u32 qpn)
{
	struct sk_buff *skb;

	skb = sroce_tx_alloc(sdev, av, qpn, opcode, 0, 8, true, false);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(sroce_tx_payload(skb), 0x5a, 8);
	sroce_ccfix_frame(test, skb, av, SROCE_XMIT_WIRE);
	return skb;
}

/**
 * sroce_ccfix_ip_skb() - a packet from its bytes, IPv4 header on
 * @test: the running test
 * @ip: the packet
 * @len: its length
 * @flip: a byte to change (one bit of it), or -1
 *
 * Return: the packet, skb->data at the UDP header; the caller owns it.
 */
struct sk_buff *sroce_ccfix_ip_skb(struct kunit *test, const u8 *ip,
				   unsigned int len, int flip)
{
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);
	u8 *p;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	p = skb_put_data(skb, ip, len);
	if (flip >= 0)
		p[flip] ^= 0x01;
	skb_reset_network_header(skb);
	__skb_pull(skb, sizeof(struct iphdr));
	skb_reset_transport_header(skb);
	return skb;
}

/**
 * sroce_ccfix_parse() - sroce_pkt_parse_hdrs() as the receive path calls it
 * @skb: a packet, skb->data at the UDP header: left at the BTH
 * @why: set to the reason when the packet is refused
 *
 * Return: as sroce_pkt_parse_hdrs(); sroce_skb_pkt(@skb) describes it.
 */
int sroce_ccfix_parse(struct sk_buff *skb, enum sroce_drop_reason *why)
{
	__skb_pull(skb, sizeof(struct udphdr));
	return sroce_pkt_parse_hdrs(skb, sroce_skb_pkt(skb), why);
}

/* Only one fixture at a time: KUnit runs one case at a time. */
static struct sroce_ccfix_wire *sroce_ccfix_wire;

/* The route's output: the packet "leaves", IP header first. */
static int sroce_ccfix_output(struct net *net, struct sock *sk,
			      struct sk_buff *skb)
{
	struct sroce_ccfix_wire *w = sroce_ccfix_wire;

	if (w) {
		w->n++;
		w->len = skb->len;
		skb_copy_bits(skb, 0, w->bytes,
			      min_t(unsigned int, skb->len, CCFIX_WIRE_MAX));
	}
	consume_skb(skb);
	return 0;
}

/* Before the QP's own fixture goes: out of the index, timers stopped. */
static void sroce_ccfix_free(struct kunit_resource *res)
{
	struct sroce_ccfix *x = res->data;
	struct sroce_qp *qp = x->qp;

	sroce_ccfix_wire = NULL;
	sroce_qp_index_remove(x->sdev, qp);
	sroce_dcqcn_stop(&qp->cc);
	sroce_rate_stop(&qp->rate);
	sroce_route_flush(&qp->route);
	skb_queue_purge(&qp->resp.rxq);
	xa_destroy(&x->sdev->qps);
}

static void sroce_ccfix_route(struct kunit *test, struct sroce_ccfix *x)
{
	struct net_device *ndev = kunit_kzalloc(test, sizeof(*ndev),
						GFP_KERNEL);

	x->dst = kunit_kzalloc(test, sizeof(*x->dst), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	KUNIT_ASSERT_NOT_NULL(test, x->dst);
	ndev->hard_header_len = ETH_HLEN;
	ndev->flags = IFF_UP;
	x->sdev->ndev = ndev;
	x->dst->dev = ndev;
	x->dst->output = sroce_ccfix_output;
	/* the route's reference, and one that keeps it from ever freeing */
	atomic_set(&x->dst->__refcnt, 2);
	x->qp->route.dst = x->dst;
	x->qp->route.gen = x->qp->p.av_gen;
}

/**
 * sroce_ccfix_init() - a QP whose CNPs can be seen and sent
 * @test: the running test; everything is undone with it
 * @type: IB_QPT_RC, IB_QPT_UC or IB_QPT_UD; a UD QP gets its peer's
 *	address all the same, so that only its type sets it apart
 * @v6: the QP and its peer talk IPv6 (fd00::...)
 *
 * Context: process context; asserts (ends the test) on failure.
 * Return: the fixture.
 */
struct sroce_ccfix *sroce_ccfix_init(struct kunit *test, enum ib_qp_type type,
				     bool v6)
{
	struct sroce_ccfix *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct sroce_dev *sdev;
	struct sroce_qp *qp;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->f = sroce_tfix_init(test, type, 0, 0);
	qp = x->f->qp;
	sdev = x->f->t.sdev;
	x->qp = qp;
	x->sdev = sdev;
	sroce_cc_init(&sdev->cc);
	sdev->cc.v[SROCE_CC_RP_TIME_RESET] = CCFIX_LONG_US;
	sdev->cc.v[SROCE_CC_RP_ALPHA_PERIOD] = CCFIX_LONG_US;
	sroce_rate_init(&qp->rate, &qp->req.task, &qp->resp.task, CCFIX_QPN);
	sroce_dcqcn_init(&qp->cc, &qp->rate, &sdev->cc, CCFIX_QPN);
	sroce_ccfix_av(&qp->p.av, v6, CCFIX_US, CCFIX_PEER);
	qp->p.has_av = true;
	qp->p.dest_qpn = CCFIX_QPN;
	sroce_ccfix_av(&x->in, v6, CCFIX_PEER, CCFIX_US);
	sroce_ccfix_route(test, x);

	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	sdev->next_qpn = CCFIX_QPN;
	KUNIT_ASSERT_EQ(test, sroce_qp_index_reserve(sdev, qp), 0);
	sroce_qp_index_publish(sdev, qp);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 sroce_ccfix_free,
							 GFP_KERNEL, x));
	KUNIT_ASSERT_EQ(test, qp->ibqp.qp_num, (u32)CCFIX_QPN);
	sroce_ccfix_wire = &x->wire;
	return x;
}

/**
 * sroce_ccfix_count() - a counter of the fixture's device
 * @x: the fixture
 * @c: the counter
 *
 * Return: its value.
 */
u64 sroce_ccfix_count(struct sroce_ccfix *x, enum sroce_counter c)
{
	return sroce_stats_read(x->sdev, c);
}

/**
 * sroce_ccfix_req_rx() - a SEND ONLY to the QP arrives, over IPv4
 * @test: the running test
 * @x: the fixture, IPv4
 * @ecn: the ECN field of its IP header (DSCP 46 with it)
 * @src: where it comes from (CCFIX_PEER: the QP's peer)
 */
void sroce_ccfix_req_rx(struct kunit *test, struct sroce_ccfix *x, u8 ecn,
			u32 src)
{
	u8 op = x->qp->ibqp.qp_type == IB_QPT_UD ? IB_OPCODE_UD_SEND_ONLY :
						   IB_OPCODE_RC_SEND_ONLY;
	struct sroce_av av = x->in;
	struct sk_buff *skb;

	av.traffic_class = 0xb8 | ecn;
	av.saddr.in4.sin_addr.s_addr = htonl(src);
	skb = sroce_ccfix_req_skb(test, x->sdev, &av, op, CCFIX_QPN);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(x->sdev, skb, false), 0);
}

/* The peer's CNP of @kind to the fixture QP. */
static struct sk_buff *sroce_ccfix_cnp_of(struct kunit *test,
					  struct sroce_ccfix *x,
					  enum sroce_ccfix_cnp kind)
{
	enum sroce_xmit_how how = SROCE_XMIT_WIRE;
	unsigned int len = SROCE_CNP_LEN;
	struct sroce_av av = x->in;
	u32 qpn = CCFIX_QPN;
	struct sk_buff *skb;

	switch (kind) {
	case CCFIX_CNP_CAPTURE:
		return sroce_ccfix_ip_skb(test, CCFIX_CX_IP, CCFIX_CX_LEN, -1);
	case CCFIX_CNP_CAPTURE_FLIP:
		return sroce_ccfix_ip_skb(test, CCFIX_CX_IP, CCFIX_CX_LEN,
					  CCFIX_CX_BTH + 20);
	case CCFIX_CNP_LOCAL:
		how = SROCE_XMIT_LOCAL;
		break;
	case CCFIX_CNP_STRANGER:
		sroce_ccfix_av(&av, av.network_type == RDMA_NETWORK_IPV6,
			       CCFIX_STRANGER, CCFIX_US);
		break;
	case CCFIX_CNP_LONG:
		len += 4;
		break;
	case CCFIX_CNP_SHORT:
		len -= 4;
		break;
	case CCFIX_CNP_NO_QP:
		qpn++;
		break;
	default:
		break;
	}
	skb = sroce_ccfix_cnp_skb(test, x->sdev, &av, qpn, len, how);
	if (kind == CCFIX_CNP_BAD_ICRC)
		skb->data[sizeof(struct udphdr) + SROCE_BTH_LEN + 3] ^= 0x80;
	return skb;
}

/**
 * sroce_ccfix_cnp_rx() - a CNP for the QP arrives
 * @test: the running test
 * @x: the fixture
 * @kind: which CNP
 *
 * The receive path never passes a CNP on (-EINVAL): it is freed here.
 */
void sroce_ccfix_cnp_rx(struct kunit *test, struct sroce_ccfix *x,
			enum sroce_ccfix_cnp kind)
{
	struct sk_buff *skb = sroce_ccfix_cnp_of(test, x, kind);

	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(x->sdev, skb,
					    kind == CCFIX_CNP_LOCAL), -EINVAL);
	kfree_skb(skb);
}
