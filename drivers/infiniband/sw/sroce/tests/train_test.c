// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for multi-packet transmit (sroce_train.c).
 *
 * A train is only right if the kernel's own segmentation turns it back
 * into the packets sroce would have sent one at a time. So each case
 * builds every packet twice, once into a train and once alone with
 * sroce_xmit_hdrs() and the IPv4 identification the train promises it,
 * runs the train through __skb_gso_segment() as a netdev without
 * SKB_GSO_FRAGLIST (transmit) or a UDP socket that takes no GSO skbs
 * (receive) would, and compares the segments with the single packets
 * byte for byte, IP header to ICRC. In the "lent pages" cases the train's
 * packets carry their payloads in page fragments, as the requester sends
 * them from registered memory (sroce_tx_lend()), and the single packets
 * in their heads: the frames must not tell the two apart.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "mem/sroce_mr_io.h"
#include "net/sroce_train.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "test_util.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_psn.h"

#define TRAIN_SPORT	0xc123
#define TRAIN_QPN	0x00abcd
#define TRAIN_PSN	0xfffffe	/* the PSNs wrap inside the train */

/* One packet of a test train. */
struct train_pkt {
	u8 opcode;
	u32 paylen;
};

struct train_case {
	const char *name;
	bool v6;
	bool rx;		/* segment as the receiving UDP stack does */
	u16 ip_id;
	unsigned int n;
	struct train_pkt pkts[5];
	bool lent;		/* payloads in page fragments (sroce_tx_lend()) */
};

static const struct train_case train_cases[] = {
	{ "v4 write, short last", false, false, 0x1234, 4,
	  { { IB_OPCODE_RC_RDMA_WRITE_FIRST, 1024 },
	    { IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 1024 },
	    { IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 1024 },
	    { IB_OPCODE_RC_RDMA_WRITE_LAST, 37 } } },
	{ "v4 send, IP ID wraps", false, false, 0xfffe, 4,
	  { { IB_OPCODE_RC_SEND_FIRST, 4096 },
	    { IB_OPCODE_RC_SEND_MIDDLE, 4096 },
	    { IB_OPCODE_RC_SEND_MIDDLE, 4096 },
	    { IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE, 4096 } } },
	{ "v4 READ response, receive side", false, true, 7, 3,
	  { { IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 1024 },
	    { IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, 1024 },
	    { IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, 1 } } },
	{ "v6 UC write", true, false, 0, 5,
	  { { IB_OPCODE_UC_RDMA_WRITE_FIRST, 256 },
	    { IB_OPCODE_UC_RDMA_WRITE_MIDDLE, 256 },
	    { IB_OPCODE_UC_RDMA_WRITE_MIDDLE, 256 },
	    { IB_OPCODE_UC_RDMA_WRITE_MIDDLE, 256 },
	    { IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 255 } } },
	{ "v6 send, receive side", true, true, 0, 2,
	  { { IB_OPCODE_RC_SEND_FIRST, 1024 },
	    { IB_OPCODE_RC_SEND_LAST, 2 } } },
	{ "v4 write, lent pages", false, false, 0xfffe, 4,
	  { { IB_OPCODE_RC_RDMA_WRITE_FIRST, 4096 },
	    { IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 4096 },
	    { IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 4096 },
	    { IB_OPCODE_RC_RDMA_WRITE_LAST, 1021 } }, true },
	{ "v6 send, lent pages, receive side", true, true, 0, 3,
	  { { IB_OPCODE_RC_SEND_FIRST, 1024 },
	    { IB_OPCODE_RC_SEND_MIDDLE, 1024 },
	    { IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE, 3 } }, true },
};

static void train_case_desc(const struct train_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(train, train_cases, train_case_desc);

static void train_av(struct sroce_av *av, bool v6)
{
	memset(av, 0, sizeof(*av));
	av->hop_limit = 64;
	av->traffic_class = 0x60;
	if (v6) {
		av->network_type = RDMA_NETWORK_IPV6;
		av->flow_label = 0x12345;
		av->saddr.in6.sin6_addr.s6_addr[0] = 0xfd;
		av->saddr.in6.sin6_addr.s6_addr[15] = 1;
		av->daddr.in6.sin6_addr.s6_addr[0] = 0xfd;
		av->daddr.in6.sin6_addr.s6_addr[15] = 2;
	} else {
		av->network_type = RDMA_NETWORK_IPV4;
		av->saddr.in4.sin_addr.s_addr = htonl(0x0a000001);
		av->daddr.in4.sin_addr.s_addr = htonl(0x0a000002);
	}
}

/*
 * Packet @i of @c with its payload lent (sroce_tx_lend()) from two pages,
 * the first 1,001 bytes from the end of one, the rest from the next.
 */
static struct sk_buff *train_pkt_lent(struct kunit *test,
				      struct sroce_dev *sdev,
				      const struct sroce_av *av,
				      const struct train_case *c, unsigned int i)
{
	const struct train_pkt *p = &c->pkts[i];
	u32 k = 0, j, len, off = PAGE_SIZE - 1001;
	struct sroce_mr_frag frags[2];
	struct sk_buff *skb;
	unsigned int n;
	u8 *va;

	skb = sroce_tx_alloc(sdev, av, TRAIN_QPN, p->opcode,
			     (TRAIN_PSN + i) & SROCE_PSN_MASK, 0,
			     i == c->n - 1, false);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	for (n = 0; k < p->paylen; n++) {
		KUNIT_ASSERT_LT(test, n, 2U);
		frags[n].page = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, frags[n].page);
		len = min_t(u32, p->paylen - k, PAGE_SIZE - off);
		va = page_address(frags[n].page) + off;
		for (j = 0; j < len; j++)
			va[j] = i * 31 + (k + j) * 7;
		frags[n].off = off;
		frags[n].len = len;
		k += len;
		off = 0;
	}
	KUNIT_ASSERT_EQ(test, sroce_tx_lend(skb, frags, n, p->paylen), 0);
	/* the lent pieces, then the packet's own pad and ICRC */
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, n + 1);
	KUNIT_EXPECT_TRUE(test, skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG);
	KUNIT_EXPECT_EQ(test, skb->len, sroce_tx_len(p->opcode, p->paylen));
	return skb;
}

/*
 * Packet @i of @c, payload bytes a pattern of @i and their offset; lent
 * from pages if @lent, in the packet's head if not.
 */
static struct sk_buff *train_pkt(struct kunit *test, struct sroce_dev *sdev,
				 const struct sroce_av *av,
				 const struct train_case *c, unsigned int i,
				 bool lent)
{
	const struct train_pkt *p = &c->pkts[i];
	struct sk_buff *skb;
	u8 *pay;
	u32 k;

	if (lent && p->paylen)
		return train_pkt_lent(test, sdev, av, c, i);
	skb = sroce_tx_alloc(sdev, av, TRAIN_QPN, p->opcode,
			     (TRAIN_PSN + i) & SROCE_PSN_MASK, p->paylen,
			     i == c->n - 1, false);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	pay = sroce_tx_payload(skb);
	for (k = 0; k < p->paylen; k++)
		pay[k] = i * 31 + k * 7;
	return skb;
}

/* The bytes of @skb from its network header on, in a kunit buffer. */
static u8 *train_bytes(struct kunit *test, struct sk_buff *skb,
		       unsigned int *len)
{
	int off = skb_network_offset(skb);
	u8 *buf;

	*len = skb->len - off;
	buf = kunit_kmalloc(test, *len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, off, buf, *len), 0);
	return buf;
}

/* What the train promises: lengths, GSO geometry, one frag per packet. */
static void train_check_head(struct kunit *test, const struct train_case *c,
			     struct sk_buff *head, unsigned int total)
{
	unsigned int ulen = total - (c->v6 ? sizeof(struct ipv6hdr) :
					     sizeof(struct iphdr));
	struct sk_buff *frag;
	unsigned int n = 1;

	KUNIT_EXPECT_EQ(test, head->len, total);
	KUNIT_EXPECT_EQ(test, ntohs(udp_hdr(head)->len), ulen);
	if (c->v6)
		KUNIT_EXPECT_EQ(test, ntohs(ipv6_hdr(head)->payload_len), ulen);
	else
		KUNIT_EXPECT_EQ(test, ntohs(ip_hdr(head)->tot_len), total);
	KUNIT_EXPECT_EQ(test, skb_shinfo(head)->gso_type,
			SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST);
	KUNIT_EXPECT_EQ(test, skb_shinfo(head)->gso_segs, c->n);
	KUNIT_EXPECT_EQ(test, skb_shinfo(head)->gso_size,
			sroce_tx_len(c->pkts[0].opcode, c->pkts[0].paylen));
	skb_walk_frags(head, frag) {
		/* data at the BTH, the packet's own headers in front */
		KUNIT_EXPECT_EQ(test, skb_transport_offset(frag),
				-(int)sizeof(struct udphdr));
		KUNIT_EXPECT_EQ(test, frag->len,
				sroce_tx_len(c->pkts[n].opcode,
					     c->pkts[n].paylen));
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, c->n);
}

/* Let the stack segment @head, as a netdev or a UDP socket would. */
static struct sk_buff *train_segment(struct kunit *test,
				     const struct train_case *c,
				     struct sk_buff *head)
{
	struct sk_buff *segs;

	memset(skb_push(head, ETH_HLEN), 0, ETH_HLEN);
	skb_reset_mac_header(head);
	eth_hdr(head)->h_proto = head->protocol;
	segs = __skb_gso_segment(head, NETIF_F_SG, !c->rx);
	/* as its callers do: the list holds references of its own */
	consume_skb(head);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(segs));
	return segs;
}

static void train_segments_are_packets(struct kunit *test)
{
	const struct train_case *c = test->param_value;
	struct sroce_dev *sdev = sroce_test_xmit_dev(test);
	struct sk_buff *single[5], *head, *segs, *seg;
	unsigned int i, total, alen, blen;
	struct sroce_train t;
	struct sroce_av av;
	u8 *a, *b;

	train_av(&av, c->v6);
	sroce_train_init(&t);
	total = (c->v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		sizeof(struct udphdr);
	for (i = 0; i < c->n; i++) {
		KUNIT_ASSERT_FALSE(test, sroce_train_full(&t, 1));
		sroce_train_add(&t, train_pkt(test, sdev, &av, c, i, c->lent));
		single[i] = train_pkt(test, sdev, &av, c, i, false);
		KUNIT_ASSERT_EQ(test, sroce_xmit_hdrs(single[i], &av,
						      TRAIN_SPORT, c->ip_id + i,
						      SROCE_XMIT_WIRE), 0);
		total += sroce_tx_len(c->pkts[i].opcode, c->pkts[i].paylen);
	}

	head = sroce_train_build(&t, &av, TRAIN_SPORT, c->ip_id);
	KUNIT_ASSERT_FALSE(test, IS_ERR(head));
	KUNIT_EXPECT_EQ(test, t.n, 0U);
	train_check_head(test, c, head, total);

	segs = train_segment(test, c, head);
	for (i = 0, seg = segs; seg; seg = seg->next, i++) {
		if (i >= c->n)
			break;
		KUNIT_EXPECT_EQ(test, sroce_icrc_skb_check(seg), 0);
		a = train_bytes(test, seg, &alen);
		b = train_bytes(test, single[i], &blen);
		KUNIT_EXPECT_EQ_MSG(test, alen, blen, "segment %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, alen == blen && !memcmp(a, b, alen),
				      "segment %u differs from the packet alone",
				      i);
		if (!c->v6)
			KUNIT_EXPECT_EQ(test, ntohs(ip_hdr(seg)->id),
					(u16)(c->ip_id + i));
	}
	KUNIT_EXPECT_EQ(test, i, c->n);
	kfree_skb_list(segs);
	for (i = 0; i < c->n; i++)
		kfree_skb(single[i]);
}

/* The 16-bit IP length bounds a train; tx_gso off makes it one packet. */
static void train_full_bounds(struct kunit *test)
{
	struct sroce_dev *sdev = sroce_test_xmit_dev(test);
	static const struct train_case c = {
		.n = 1, .pkts = { { IB_OPCODE_RC_SEND_MIDDLE, 4096 } },
	};
	unsigned int len = sroce_tx_len(IB_OPCODE_RC_SEND_MIDDLE, 4096);
	struct sroce_train t;
	struct sroce_av av;
	unsigned int n = 0;

	train_av(&av, false);
	sroce_train_init(&t);
	KUNIT_ASSERT_GT(test, t.max, 1U);
	while (!sroce_train_full(&t, len)) {
		sroce_train_add(&t, train_pkt(test, sdev, &av, &c, 0, false));
		n++;
	}
	/* 15 packets of 4,112 bytes fit in 65,487; a 16th would not */
	KUNIT_EXPECT_EQ(test, n, 15U);
	KUNIT_EXPECT_EQ(test, t.bytes, 15 * len);
	KUNIT_EXPECT_LE(test, t.bytes + sizeof(struct ipv6hdr) +
			sizeof(struct udphdr), (unsigned int)U16_MAX);
	sroce_train_purge(&t);
	KUNIT_EXPECT_EQ(test, t.n, 0U);
	KUNIT_EXPECT_NULL(test, t.head);

	t.max = 1;	/* what tx_gso=0 gives */
	sroce_train_add(&t, train_pkt(test, sdev, &av, &c, 0, false));
	KUNIT_EXPECT_TRUE(test, sroce_train_full(&t, 1));
	sroce_train_purge(&t);
}

static struct kunit_case sroce_train_test_cases[] = {
	KUNIT_CASE_PARAM(train_segments_are_packets, train_gen_params),
	KUNIT_CASE(train_full_bounds),
	{}
};

static struct kunit_suite sroce_train_test_suite = {
	.name = "sroce_train",
	.test_cases = sroce_train_test_cases,
};

kunit_test_suites(&sroce_train_test_suite);
