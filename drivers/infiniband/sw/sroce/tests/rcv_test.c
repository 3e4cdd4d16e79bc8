// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the deferred ICRC check of sroce_rcv.c: a packet with a
 * payload is queued on its headers and its ICRC checked by the engine
 * that takes it (sroce_rcv_verify()), and every way such a packet can be
 * dropped first still counts it as rcvd_pkts or icrc_err, never both,
 * never neither.
 *
 * sroce_rcv_skb() is driven with packets to a QPN that has no QP: its
 * drops show which check ran.
 *
 * The packets are built by the transmit path (sroce_tx_alloc(),
 * sroce_xmit_hdrs(), which fills the ICRC) and handed over as the UDP
 * socket does, skb->data at the BTH.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "test_util.h"
#include "transport/sroce_rcv.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_pkt.h"

#define RCV_PAYLEN	300

struct rcv_fix {
	struct sroce_test_dev t;
	struct sroce_av av;
};

static struct rcv_fix *rcv_fix(struct kunit *test)
{
	struct rcv_fix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	sroce_test_dev_init(test, &f->t);
	sroce_test_dev_init_stats(test, &f->t);
	f->t.sdev->ndev = kunit_kzalloc(test, sizeof(*f->t.sdev->ndev),
					GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->t.sdev->ndev);
	f->t.sdev->ndev->hard_header_len = ETH_HLEN;
	f->av.network_type = RDMA_NETWORK_IPV4;
	f->av.hop_limit = 64;
	f->av.saddr.in4.sin_addr.s_addr = htonl(0x0a000001);
	f->av.daddr.in4.sin_addr.s_addr = htonl(0x0a000002);
	return f;
}

/*
 * A WRITE MIDDLE packet as it arrives, its headers parsed and its ICRC
 * left for later; @flip: a payload byte to corrupt, or -1.
 */
static struct sk_buff *rcv_pkt(struct kunit *test, struct rcv_fix *f,
			       int flip)
{
	enum sroce_drop_reason why;
	struct sk_buff *skb;
	u8 *pay;

	skb = sroce_tx_alloc(f->t.sdev, &f->av, 0x12,
			     IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 7, RCV_PAYLEN,
			     false, false);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	pay = sroce_tx_payload(skb);
	memset(pay, 0x5a, RCV_PAYLEN);
	KUNIT_ASSERT_EQ(test, sroce_xmit_hdrs(skb, &f->av, 0xc000, 1,
					      SROCE_XMIT_WIRE), 0);
	if (flip >= 0)
		pay[flip] ^= 0x10;
	__skb_pull(skb, sizeof(struct iphdr) + sizeof(struct udphdr));
	KUNIT_ASSERT_EQ(test,
			sroce_pkt_parse_hdrs(skb, sroce_skb_pkt(skb), &why), 0);
	sroce_skb_pkt(skb)->flags |= SROCE_PKT_ICRC_LATER;
	return skb;
}

/*
 * A packet as the UDP socket hands it over (skb->data at the UDP header):
 * @opcode with @paylen bytes of payload, to a QPN no QP has, its headers
 * as @how has them; @flip: a byte after the BTH to corrupt, or -1.
 */
static struct sk_buff *rcv_pkt_how(struct kunit *test, struct rcv_fix *f,
				   u8 opcode, u32 paylen, int flip,
				   enum sroce_xmit_how how)
{
	struct sk_buff *skb;

	skb = sroce_tx_alloc(f->t.sdev, &f->av, 0x12, opcode, 7, paylen,
			     false, false);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(sroce_tx_payload(skb), 0x33, paylen);
	KUNIT_ASSERT_EQ(test, sroce_xmit_hdrs(skb, &f->av, 0xc000, 1, how), 0);
	if (flip >= 0)
		skb->data[sizeof(struct iphdr) + sizeof(struct udphdr) +
			  12 + flip] ^= 0x04;
	__skb_pull(skb, sizeof(struct iphdr));
	return skb;
}

static struct sk_buff *rcv_wire_pkt(struct kunit *test, struct rcv_fix *f,
				    u8 opcode, u32 paylen, int flip)
{
	return rcv_pkt_how(test, f, opcode, paylen, flip, SROCE_XMIT_WIRE);
}

static u64 rcv_count(struct rcv_fix *f, enum sroce_counter c)
{
	return sroce_stats_read(f->t.sdev, c);
}

/* A good packet passes once, and is counted once. */
static void rcv_verify_good_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);
	struct sk_buff *skb = rcv_pkt(test, f, -1);
	unsigned int len = skb->len;

	KUNIT_EXPECT_TRUE(test, sroce_rcv_verify(f->t.sdev, skb));
	KUNIT_EXPECT_FALSE(test, sroce_skb_pkt(skb)->flags &
				 SROCE_PKT_ICRC_LATER);
	KUNIT_EXPECT_TRUE(test, sroce_rcv_verify(f->t.sdev, skb));
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_BYTES), (u64)len);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 0ULL);
	kfree_skb(skb);
}

/* Its headers were fine; the engine refuses it for its payload. */
static void rcv_verify_bad_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);
	struct sk_buff *skb = rcv_pkt(test, f, RCV_PAYLEN - 1);

	KUNIT_EXPECT_FALSE(test, sroce_rcv_verify(f->t.sdev, skb));
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 0ULL);
	kfree_skb(skb);
}

/*
 * Dropped on the way in before its check: a good one counts as received
 * and for the drop's reason, a bad one only as an ICRC error.
 */
static void rcv_drop_deferred_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);

	sroce_rcv_drop(f->t.sdev, rcv_pkt(test, f, -1), SROCE_DROP_NO_QP);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_NO_QP), 1ULL);

	sroce_rcv_drop(f->t.sdev, rcv_pkt(test, f, 0), SROCE_DROP_NO_QP);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_NO_QP), 1ULL);
}

/* Refused by a full or closed queue: the same, with a counter. */
static void rcv_refuse_deferred_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);

	sroce_rcv_refuse(f->t.sdev, rcv_pkt(test, f, -1),
			 SROCE_CNT_DROPPED_BACKLOG);
	sroce_rcv_refuse(f->t.sdev, rcv_pkt(test, f, -1), SROCE_CNT_NR);
	sroce_rcv_refuse(f->t.sdev, rcv_pkt(test, f, 5),
			 SROCE_CNT_DROPPED_BACKLOG);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 2ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_BACKLOG), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 1ULL);
}

/*
 * The way in: a packet without a payload is checked at once, one with a
 * payload when it is taken or dropped; no QP takes these, so each good
 * one is counted received and dropped, each bad one an ICRC error.
 */
static void rcv_skb_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);
	struct sk_buff *skb;

	skb = rcv_wire_pkt(test, f, IB_OPCODE_RC_ACKNOWLEDGE, 0, 1);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, false), -EINVAL);
	kfree_skb(skb);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 1ULL);

	skb = rcv_wire_pkt(test, f, IB_OPCODE_RC_ACKNOWLEDGE, 0, -1);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, false), 0);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 1ULL);

	skb = rcv_wire_pkt(test, f, IB_OPCODE_RC_SEND_ONLY, 64, 30);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, false), 0);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 2ULL);

	skb = rcv_wire_pkt(test, f, IB_OPCODE_RC_SEND_ONLY, 64, -1);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, false), 0);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 2ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_NO_QP), 2ULL);
}

/*
 * A packet the transmit path built for a device of this host has no
 * ICRC, and none is checked: it is counted received at once, with or
 * without a payload, and its drop is counted for its own reason. The
 * same bytes from the UDP socket are an ICRC error.
 */
static void rcv_skb_built_here_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);
	struct sk_buff *skb;

	skb = rcv_pkt_how(test, f, IB_OPCODE_RC_SEND_ONLY, 64, -1,
			  SROCE_XMIT_LOCAL);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, true), 0);
	skb = rcv_pkt_how(test, f, IB_OPCODE_RC_ACKNOWLEDGE, 0, -1,
			  SROCE_XMIT_LOCAL);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, true), 0);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 2ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_NO_QP), 2ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 0ULL);

	/* poisoned: sroce_tx_alloc() leaves the ICRC room as it finds it */
	skb = rcv_pkt_how(test, f, IB_OPCODE_RC_ACKNOWLEDGE, 0, -1,
			  SROCE_XMIT_LOCAL);
	memset(skb_tail_pointer(skb) - SROCE_ICRC_LEN, 0xee, SROCE_ICRC_LEN);
	KUNIT_EXPECT_EQ(test, sroce_rcv_skb(f->t.sdev, skb, false), -EINVAL);
	kfree_skb(skb);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 2ULL);
}

/*
 * A QP that leaves the receiving states drops what its engines queued:
 * the packets checked already and the good unchecked ones count as
 * dropped for the QP's state, the bad ones as ICRC errors only, and
 * every packet is in rcvd_pkts or icrc_err.
 */
static void rcv_purge_test(struct kunit *test)
{
	struct rcv_fix *f = rcv_fix(test);
	struct sk_buff_head q;
	struct sk_buff *skb;

	skb_queue_head_init(&q);
	skb_queue_tail(&q, rcv_pkt(test, f, -1));
	skb_queue_tail(&q, rcv_pkt(test, f, 17));
	skb = rcv_pkt(test, f, -1);
	KUNIT_ASSERT_TRUE(test, sroce_rcv_verify(f->t.sdev, skb));
	skb_queue_tail(&q, skb);

	sroce_rcv_purge(f->t.sdev, &q);
	KUNIT_EXPECT_TRUE(test, skb_queue_empty(&q));
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_RCVD_PKTS), 2ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_ICRC_ERR), 1ULL);
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_QP_STATE), 2ULL);

	sroce_rcv_purge(f->t.sdev, &q);		/* an empty queue */
	KUNIT_EXPECT_EQ(test, rcv_count(f, SROCE_CNT_DROPPED_QP_STATE), 2ULL);
}

static struct kunit_case sroce_rcv_test_cases[] = {
	KUNIT_CASE(rcv_verify_good_test),
	KUNIT_CASE(rcv_verify_bad_test),
	KUNIT_CASE(rcv_drop_deferred_test),
	KUNIT_CASE(rcv_refuse_deferred_test),
	KUNIT_CASE(rcv_skb_test),
	KUNIT_CASE(rcv_skb_built_here_test),
	KUNIT_CASE(rcv_purge_test),
	{}
};

static struct kunit_suite sroce_rcv_test_suite = {
	.name = "sroce_rcv",
	.test_cases = sroce_rcv_test_cases,
};

kunit_test_suites(&sroce_rcv_test_suite);
