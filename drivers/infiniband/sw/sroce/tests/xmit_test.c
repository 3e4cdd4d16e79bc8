// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for where a packet goes (sroce_xmit.c): a route that leaves
 * the host goes to the wire with an ICRC, one that ends at this host is
 * delivered by sroce itself without one, or with one when force_wire asks
 * for it; a packet for a local address whose sroce device is gone (or
 * never was) is dropped and freed, not left behind.
 *
 * The local routes are the kernel's own, to the loopback addresses: no
 * sroce device owns lo, which is the state of a device removed between
 * the route lookup and the hand-off.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "net/sroce_route.h"
#include "net/sroce_train.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "test_util.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_pkt.h"

#define XMIT_PAYLEN	256
#define XMIT_POISON	0xee

struct xmit_case {
	const char *desc;
	unsigned int dev_flags;
	bool force_wire;
	enum sroce_xmit_how how;
};

static const struct xmit_case xmit_cases[] = {
	{ "remote", IFF_UP, false, SROCE_XMIT_WIRE },
	{ "remote, force_wire", IFF_UP, true, SROCE_XMIT_WIRE },
	{ "this host", IFF_UP | IFF_LOOPBACK, false, SROCE_XMIT_LOCAL },
	{ "this host, force_wire", IFF_UP | IFF_LOOPBACK, true,
	  SROCE_XMIT_LOCAL_CHECKED },
};

static void xmit_case_desc(const struct xmit_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xmit_how, xmit_cases, xmit_case_desc);

/* The decision reads the route's device and the parameter only. */
static void xmit_how_test(struct kunit *test)
{
	const struct xmit_case *c = test->param_value;
	struct net_device *ndev;
	struct dst_entry dst = {};

	ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->flags = c->dev_flags;
	dst.dev = ndev;
	KUNIT_EXPECT_EQ(test, sroce_xmit_how(&dst, c->force_wire), c->how);
}

static const bool xmit_families[] = { false, true };

static void xmit_family_desc(const bool *v6, char *desc)
{
	strscpy(desc, *v6 ? "IPv6" : "IPv4", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xmit_family, xmit_families, xmit_family_desc);

/* The kernel's route to one of its own addresses is a local one. */
static void xmit_how_route_test(struct kunit *test)
{
	bool v6 = *(const bool *)test->param_value;
	struct dst_entry *dst;
	struct sroce_av av;

	if (v6 && !IS_ENABLED(CONFIG_IPV6))
		kunit_skip(test, "no IPv6");
	sroce_test_loopback_av(&av, v6);
	dst = sroce_route_lookup(&av);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dst), "no route: %ld",
			       PTR_ERR(dst));
	KUNIT_EXPECT_EQ(test, sroce_xmit_how(dst, false), SROCE_XMIT_LOCAL);
	KUNIT_EXPECT_EQ(test, sroce_xmit_how(dst, true),
			SROCE_XMIT_LOCAL_CHECKED);
	dst_release(dst);
}

/* A SEND ONLY with a payload, its ICRC room poisoned. */
static struct sk_buff *xmit_pkt(struct kunit *test, struct sroce_dev *sdev,
				const struct sroce_av *av)
{
	struct sk_buff *skb;

	skb = sroce_tx_alloc(sdev, av, 0x11, IB_OPCODE_RC_SEND_ONLY, 3,
			     XMIT_PAYLEN, false, false);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(sroce_tx_payload(skb), 0x42, XMIT_PAYLEN);
	memset(skb_tail_pointer(skb) - SROCE_ICRC_LEN, XMIT_POISON,
	       SROCE_ICRC_LEN);
	return skb;
}

static const enum sroce_xmit_how xmit_hows[] = {
	SROCE_XMIT_WIRE, SROCE_XMIT_LOCAL, SROCE_XMIT_LOCAL_CHECKED,
};

static void xmit_hows_desc(const enum sroce_xmit_how *how, char *desc)
{
	static const char * const names[] = {
		[SROCE_XMIT_WIRE] = "wire",
		[SROCE_XMIT_LOCAL] = "local",
		[SROCE_XMIT_LOCAL_CHECKED] = "local, checked",
	};

	strscpy(desc, names[*how], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(xmit_hdrs, xmit_hows, xmit_hows_desc);

/*
 * Only a packet that stays in memory goes without an ICRC: its room is
 * left as it was. The others get one the receive side accepts.
 */
static void xmit_hdrs_icrc_test(struct kunit *test)
{
	enum sroce_xmit_how how = *(const enum sroce_xmit_how *)
				   test->param_value;
	struct sroce_dev *sdev = sroce_test_xmit_dev(test);
	enum sroce_drop_reason why;
	struct sroce_pkt *pkt;
	struct sk_buff *skb;
	struct sroce_av av;
	unsigned int hdrs;
	u8 *icrc;

	sroce_test_loopback_av(&av, false);
	skb = xmit_pkt(test, sdev, &av);
	icrc = skb_tail_pointer(skb) - SROCE_ICRC_LEN;
	KUNIT_ASSERT_EQ(test, sroce_xmit_hdrs(skb, &av, 0xc000, 1, how), 0);
	hdrs = sizeof(struct iphdr) + sizeof(struct udphdr);
	KUNIT_EXPECT_EQ(test, skb->len, hdrs +
			sroce_tx_len(IB_OPCODE_RC_SEND_ONLY, XMIT_PAYLEN));
	if (how == SROCE_XMIT_LOCAL) {
		KUNIT_EXPECT_NULL(test, memchr_inv(icrc, XMIT_POISON,
						   SROCE_ICRC_LEN));
	} else {
		__skb_pull(skb, hdrs);
		pkt = sroce_skb_pkt(skb);
		KUNIT_ASSERT_EQ(test, sroce_pkt_parse_hdrs(skb, pkt, &why), 0);
		KUNIT_EXPECT_EQ(test, sroce_pkt_check_icrc(skb, &why), 0);
	}
	kfree_skb(skb);
}

static atomic_t xmit_freed;

static void xmit_count_free(struct sk_buff *skb)
{
	atomic_inc(&xmit_freed);
}

/* A packet to @av that counts its own freeing, headers as @how wants. */
static struct sk_buff *xmit_counted(struct kunit *test,
				    struct sroce_dev *sdev,
				    const struct sroce_av *av,
				    enum sroce_xmit_how how)
{
	struct sk_buff *skb = xmit_pkt(test, sdev, av);

	skb->destructor = xmit_count_free;
	KUNIT_EXPECT_EQ(test, sroce_xmit_hdrs(skb, av, 0xc000, 0, how), 0);
	return skb;
}

/*
 * A packet for an address of this host that no sroce device owns (the
 * loopback's, as for a device removed after the lookup): refused with
 * -EHOSTUNREACH and freed, with or without an ICRC, through sroce_xmit()
 * as the transport sends, and a whole train through sroce_train_send().
 */
static void xmit_local_gone_test(struct kunit *test)
{
	bool v6 = *(const bool *)test->param_value;
	struct sroce_test_dev t = { .sdev = sroce_test_xmit_dev(test) };
	struct sroce_dev *sdev = t.sdev;
	struct sroce_train train;
	struct dst_entry *dst;
	struct sk_buff *skb;
	struct sroce_av av;
	int i;

	if (v6 && !IS_ENABLED(CONFIG_IPV6))
		kunit_skip(test, "no IPv6");
	sroce_test_dev_init_stats(test, &t);
	sroce_test_loopback_av(&av, v6);
	atomic_set(&xmit_freed, 0);
	for (i = SROCE_XMIT_LOCAL; i <= SROCE_XMIT_LOCAL_CHECKED; i++) {
		dst = sroce_route_lookup(&av);
		KUNIT_ASSERT_FALSE(test, IS_ERR(dst));
		skb = xmit_counted(test, sdev, &av, i);
		KUNIT_EXPECT_EQ(test, sroce_xmit_out(&av, dst, skb, i),
				-EHOSTUNREACH);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&xmit_freed), 2);

	dst = sroce_route_lookup(&av);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dst));
	skb = xmit_pkt(test, sdev, &av);
	skb->destructor = xmit_count_free;
	KUNIT_EXPECT_EQ(test, sroce_xmit(&av, dst, 0xc000, skb),
			-EHOSTUNREACH);
	KUNIT_EXPECT_EQ(test, atomic_read(&xmit_freed), 3);

	/* a train: one hand-off, every packet refused, freed and counted */
	sroce_train_init(&train);
	for (i = 0; i < 3; i++) {
		skb = xmit_pkt(test, sdev, &av);
		skb->destructor = xmit_count_free;
		sroce_train_add(&train, skb);
	}
	dst = sroce_route_lookup(&av);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dst));
	KUNIT_EXPECT_EQ(test, sroce_train_send(sdev, &av, dst, 0xc000, &train),
			-EHOSTUNREACH);
	KUNIT_EXPECT_EQ(test, atomic_read(&xmit_freed), 6);
	KUNIT_EXPECT_EQ(test, train.n, 0U);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(sdev, SROCE_CNT_SEND_ERR), 3ULL);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(sdev, SROCE_CNT_SENT_PKTS), 0ULL);
}

static struct kunit_case sroce_xmit_test_cases[] = {
	KUNIT_CASE_PARAM(xmit_how_test, xmit_how_gen_params),
	KUNIT_CASE_PARAM(xmit_how_route_test, xmit_family_gen_params),
	KUNIT_CASE_PARAM(xmit_hdrs_icrc_test, xmit_hdrs_gen_params),
	KUNIT_CASE_PARAM(xmit_local_gone_test, xmit_family_gen_params),
	{}
};

static struct kunit_suite sroce_xmit_test_suite = {
	.name = "sroce_xmit",
	.test_cases = sroce_xmit_test_cases,
};

kunit_test_suites(&sroce_xmit_test_suite);
