// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the receive-side packet validation of sroce_pkt.c and
 * the device counters of sroce_stats.c.
 *
 * Packets are laid out byte by byte here from IBA vol 1 chapter 9 and
 * annex A17 (IPv4 or IPv6, UDP to port 4791, BTH, extension headers,
 * payload byte i = i * 7 + 3, pad, ICRC); only the ICRC is computed by
 * the driver (sroce_icrc_skb_fill(), checked against reference vectors
 * by the sroce_icrc suite). Header lengths, offsets and the drop reason
 * expected for each packet are typed in from the spec and the rules in
 * sroce_pkt.c's comment.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <asm/unaligned.h>
#include <kunit/test.h>
#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "test_util.h"
#include "transport/sroce_rcv.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_pkt.h"

#define PKT_BUF		512
#define PKT_V4_L4	28	/* IPv4 and UDP headers */
#define PKT_V6_L4	48	/* IPv6 and UDP headers */
#define PKT_FRAG	61	/* bytes per page fragment */
#define ACCEPT		(-1)	/* expected outcome: no drop */

struct pkt_spec {
	bool v6;
	u8 opcode;
	u8 tver;
	u8 pad;			/* BTH PadCnt */
	bool set_pkey;		/* else the default 0xffff */
	u16 pkey;
	bool se, mig, ackreq, fecn, becn;
	u32 qpn, psn;
	u8 ext_len;		/* extension header bytes */
	u8 ext[40];
	u16 data;		/* bytes after the headers: payload and pad */
};

static unsigned int pkt_l4(bool v6)
{
	return v6 ? PKT_V6_L4 : PKT_V4_L4;
}

/* Set the IP and UDP lengths for @ulen bytes of UDP payload. */
static void pkt_set_len(u8 *p, bool v6, unsigned int ulen)
{
	u8 *udp = p + pkt_l4(v6) - 8;

	if (v6)
		put_unaligned_be16(8 + ulen, p + 4);
	else
		put_unaligned_be16(PKT_V4_L4 + ulen, p + 2);
	put_unaligned_be16(8 + ulen, udp + 4);
}

/* Lay out @s in @p (PKT_BUF bytes), ICRC zero; returns the IP length. */
static unsigned int pkt_build(const struct pkt_spec *s, u8 *p)
{
	unsigned int l4 = pkt_l4(s->v6), i;
	unsigned int ulen = 12 + s->ext_len + s->data + SROCE_ICRC_LEN;
	u8 *udp = p + l4 - 8, *bth = p + l4;

	memset(p, 0, PKT_BUF);
	if (s->v6) {
		p[0] = 0x60;
		p[6] = 17;		/* next header: UDP */
		p[7] = 64;		/* hop limit */
		p[8] = 0xfe;		/* fe80::1 -> fe80::2 */
		p[9] = 0x80;
		p[23] = 1;
		p[24] = 0xfe;
		p[25] = 0x80;
		p[39] = 2;
	} else {
		p[0] = 0x45;
		put_unaligned_be16(0x1234, p + 4);	/* identification */
		p[6] = 0x40;		/* DF */
		p[8] = 64;		/* TTL */
		p[9] = 17;		/* protocol: UDP */
		put_unaligned_be32(0xc0a8010a, p + 12);
		put_unaligned_be32(0xc0a80114, p + 16);
	}
	put_unaligned_be16(0xc132, udp);
	put_unaligned_be16(4791, udp + 2);
	pkt_set_len(p, s->v6, ulen);

	bth[0] = s->opcode;
	bth[1] = s->se << 7 | s->mig << 6 | s->pad << 4 | s->tver;
	put_unaligned_be16(s->set_pkey ? s->pkey : 0xffff, bth + 2);
	put_unaligned_be32(s->qpn & 0xffffff, bth + 4);
	bth[4] |= s->fecn << 7 | s->becn << 6;
	put_unaligned_be32((u32)s->ackreq << 31 | (s->psn & 0xffffff), bth + 8);
	memcpy(bth + 12, s->ext, s->ext_len);
	for (i = 0; i < s->data; i++)
		bth[12 + s->ext_len + i] = i * 7 + 3;
	return l4 + ulen;
}

/* Store a valid ICRC in the packet at @p. */
static void pkt_seal(struct kunit *test, u8 *p, unsigned int len)
{
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, p, len);
	skb_reset_network_header(skb);
	err = sroce_icrc_skb_fill(skb);
	if (!err)
		skb_copy_bits(skb, len - SROCE_ICRC_LEN,
			      p + len - SROCE_ICRC_LEN, SROCE_ICRC_LEN);
	kfree_skb(skb);
	KUNIT_ASSERT_EQ(test, err, 0);
}

/*
 * An skb as the UDP layer hands it over, skb->data at the BTH: @head
 * bytes of the IP packet linear (at least the IP and UDP headers), the
 * rest of @len in page fragments of PKT_FRAG bytes.
 */
static struct sk_buff *pkt_skb(struct kunit *test, const u8 *p,
			       unsigned int len, bool v6, unsigned int head)
{
	unsigned int l4 = pkt_l4(v6), off, n;
	struct sk_buff *skb;
	struct page *page;

	head = clamp(head, l4, len);
	skb = alloc_skb(head, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, p, head);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, l4 - 8);
	for (off = head; off < len; off += n) {
		n = min(len - off, PKT_FRAG);
		page = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, page);
		memcpy(page_address(page) + 5, p + off, n);
		skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, 5, n,
				PAGE_SIZE);
	}
	__skb_pull(skb, l4);
	return skb;
}

/* Parse; returns ACCEPT or the drop reason. *@skbp, if given, is kept. */
static int pkt_run(struct kunit *test, const u8 *p, unsigned int len,
		   bool v6, unsigned int head, struct sroce_pkt *pkt,
		   struct sk_buff **skbp)
{
	struct sk_buff *skb = pkt_skb(test, p, len, v6, head);
	unsigned int skb_len = skb->len;
	enum sroce_drop_reason why = SROCE_DROP_NR;
	int ret;

	ret = sroce_pkt_parse(skb, pkt, &why);
	KUNIT_EXPECT_TRUE(test, ret == 0 || ret == -EINVAL);
	KUNIT_EXPECT_EQ(test, skb->len, skb_len);
	if (ret)
		KUNIT_EXPECT_LT(test, why, SROCE_DROP_NR);
	if (skbp)
		*skbp = skb;
	else
		kfree_skb(skb);
	return ret ? (int)why : ACCEPT;
}

/* The skb shapes every valid packet is parsed in. */
static const struct {
	const char *name;
	int head;		/* linear bytes after the IP and UDP headers */
} pkt_layouts[] = {
	{ "linear", PKT_BUF },
	{ "BTH in a fragment", 0 },
	{ "headers split", 12 + 4 },
};

/* Valid packets of each header shape */

struct pkt_valid_case {
	const char *name;
	struct pkt_spec s;
	u8 hdr_len;
	u32 paylen;
	/* offsets of the extension headers from the BTH, 0 if absent */
	u8 deth, reth, atmeth, aeth, atmack, immdt, ieth;
};

static const struct pkt_valid_case pkt_valid_cases[] = {
	{ "IPv4 RC SEND_ONLY, 13 bytes, pad 3",
	  { .opcode = 0x04, .se = true, .ackreq = true, .qpn = 0x12,
	    .psn = 1, .pad = 3, .data = 16 },
	  .hdr_len = 12, .paylen = 13 },
	{ "IPv6 RC RDMA_WRITE_FIRST, RETH, 256 bytes",
	  { .v6 = true, .opcode = 0x06, .qpn = 0xabcdef, .psn = 0xfffffe,
	    .ext_len = 16,
	    .ext = { 0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00,
		     0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x20, 0x00 },
	    .data = 256 },
	  .hdr_len = 28, .paylen = 256, .reth = 12 },
	{ "IPv4 RC RDMA_READ_REQUEST, RETH",
	  { .opcode = 0x0c, .ackreq = true, .qpn = 0x11, .psn = 0x800000,
	    .ext_len = 16,
	    .ext = { 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x10, 0x00,
		     0x00, 0x00, 0xca, 0xfe, 0x00, 0x01, 0x00, 0x00 } },
	  .hdr_len = 28, .reth = 12 },
	{ "IPv6 RC ACKNOWLEDGE, AETH",
	  { .v6 = true, .opcode = 0x11, .qpn = 0x11, .psn = 7, .ext_len = 4,
	    .ext = { 0x1f, 0x00, 0x00, 0x42 } },
	  .hdr_len = 16, .aeth = 12 },
	{ "IPv4 RC ATOMIC_ACKNOWLEDGE, AETH and AtomicAckETH",
	  { .opcode = 0x12, .qpn = 0x11, .psn = 0x99, .ext_len = 12,
	    .ext = { 0x1f, 0x00, 0x00, 0x03, 0x01, 0x02, 0x03, 0x04,
		     0x05, 0x06, 0x07, 0x08 } },
	  .hdr_len = 24, .aeth = 12, .atmack = 16 },
	{ "IPv4 UD SEND_ONLY, DETH, 7 bytes, pad 1",
	  { .opcode = 0x64, .qpn = 1, .psn = 0x123456, .ext_len = 8,
	    .ext = { 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 },
	    .pad = 1, .data = 8 },
	  .hdr_len = 20, .paylen = 7, .deth = 12 },
	{ "IPv6 RC SEND_LAST_WITH_IMMEDIATE, 2 bytes, pad 2",
	  { .v6 = true, .opcode = 0x03, .se = true, .ackreq = true,
	    .qpn = 0x345, .psn = 0x10, .ext_len = 4,
	    .ext = { 0xde, 0xad, 0xbe, 0xef }, .pad = 2, .data = 4 },
	  .hdr_len = 16, .paylen = 2, .immdt = 12 },
	{ "IPv4 RC SEND_ONLY_WITH_INVALIDATE, 5 bytes, pad 3",
	  { .opcode = 0x17, .ackreq = true, .qpn = 0x20, .psn = 0x20,
	    .ext_len = 4, .ext = { 0xab, 0xcd, 0x01, 0x02 }, .pad = 3,
	    .data = 8 },
	  .hdr_len = 16, .paylen = 5, .ieth = 12 },
	{ "IPv6 RC COMPARE_SWAP, AtomicETH",
	  { .v6 = true, .opcode = 0x13, .ackreq = true, .qpn = 0x11,
	    .psn = 5, .ext_len = 28,
	    .ext = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,
		     0x00, 0x00, 0x00, 0x77, 0x11, 0x11, 0x22, 0x22,
		     0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66,
		     0x77, 0x77, 0x88, 0x88 } },
	  .hdr_len = 40, .atmeth = 12 },
	{ "IPv6 RC RDMA_WRITE_ONLY_WITH_IMMEDIATE, 12 bytes",
	  { .v6 = true, .opcode = 0x0b, .ackreq = true, .qpn = 0x12,
	    .psn = 3, .ext_len = 20,
	    .ext = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00,
		     0x00, 0x00, 0x43, 0x21, 0x00, 0x00, 0x00, 0x0c,
		     0xa5, 0xa5, 0xa5, 0xa5 }, .data = 12 },
	  .hdr_len = 32, .paylen = 12, .reth = 12, .immdt = 28 },
	{ "IPv4 UC SEND_MIDDLE, MigReq, FECN and BECN, 256 bytes",
	  { .opcode = 0x21, .mig = true, .fecn = true, .becn = true,
	    .qpn = 0xffffff, .psn = 0xffffff, .data = 256 },
	  .hdr_len = 12, .paylen = 256 },
};

static void pkt_valid_desc(const struct pkt_valid_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pkt_valid, pkt_valid_cases, pkt_valid_desc);

static void pkt_expect_at(struct kunit *test, const struct sk_buff *skb,
			  const void *hdr, u8 off, const char *what)
{
	KUNIT_EXPECT_PTR_EQ_MSG(test, hdr,
				off ? (const void *)(skb->data + off) : NULL,
				"%s", what);
}

static void pkt_expect_hdrs(struct kunit *test, const struct sk_buff *skb,
			    const struct sroce_pkt *pkt,
			    const struct pkt_valid_case *t)
{
	pkt_expect_at(test, skb, sroce_pkt_deth(skb, pkt), t->deth, "DETH");
	pkt_expect_at(test, skb, sroce_pkt_reth(skb, pkt), t->reth, "RETH");
	pkt_expect_at(test, skb, sroce_pkt_atmeth(skb, pkt), t->atmeth,
		      "AtomicETH");
	pkt_expect_at(test, skb, sroce_pkt_aeth(skb, pkt), t->aeth, "AETH");
	pkt_expect_at(test, skb, sroce_pkt_atmack(skb, pkt), t->atmack,
		      "AtomicAckETH");
	pkt_expect_at(test, skb, sroce_pkt_immdt(skb, pkt), t->immdt, "ImmDt");
	pkt_expect_at(test, skb, sroce_pkt_ieth(skb, pkt), t->ieth, "IETH");
	KUNIT_EXPECT_PTR_EQ(test, (u8 *)sroce_pkt_bth(skb), skb->data);
	KUNIT_EXPECT_EQ(test, memcmp(skb->data + 12, t->s.ext, t->s.ext_len),
			0);
}

static void pkt_valid_test(struct kunit *test)
{
	const struct pkt_valid_case *t = test->param_value;
	const struct pkt_spec *s = &t->s;
	u8 *p = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	u8 *pay = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	unsigned int len, i, l;
	struct sroce_pkt pkt;
	struct sk_buff *skb;
	u8 flags;

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, pay);
	len = pkt_build(s, p);
	pkt_seal(test, p, len);
	flags = (s->ackreq ? SROCE_PKT_ACKREQ : 0) |
		(s->se ? SROCE_PKT_SOLICITED : 0) |
		(s->mig ? SROCE_PKT_MIGREQ : 0) |
		(s->fecn ? SROCE_PKT_FECN : 0) |
		(s->becn ? SROCE_PKT_BECN : 0);

	for (l = 0; l < ARRAY_SIZE(pkt_layouts); l++) {
		memset(&pkt, 0xa5, sizeof(pkt));
		KUNIT_ASSERT_EQ_MSG(test, pkt_run(test, p, len, s->v6,
						  pkt_l4(s->v6) +
						  pkt_layouts[l].head,
						  &pkt, &skb),
				    ACCEPT, "%s", pkt_layouts[l].name);
		KUNIT_EXPECT_EQ(test, pkt.net,
				s->v6 ? SROCE_PKT_IPV6 : SROCE_PKT_IPV4);
		KUNIT_EXPECT_EQ(test, pkt.opcode, s->opcode);
		KUNIT_ASSERT_NOT_NULL(test, pkt.info);
		KUNIT_EXPECT_EQ(test, pkt.info->opcode, s->opcode);
		KUNIT_EXPECT_EQ(test, pkt.psn, s->psn);
		KUNIT_EXPECT_EQ(test, pkt.qpn, s->qpn);
		KUNIT_EXPECT_EQ(test, pkt.pad, s->pad);
		KUNIT_EXPECT_EQ(test, pkt.flags, flags);
		KUNIT_EXPECT_EQ(test, pkt.hdr_len, t->hdr_len);
		KUNIT_EXPECT_EQ(test, pkt.paylen, t->paylen);
		/* The headers are linear; the payload is where it was. */
		KUNIT_EXPECT_GE(test, skb_headlen(skb), t->hdr_len);
		pkt_expect_hdrs(test, skb, &pkt, t);
		KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, pkt.hdr_len, pay,
						    pkt.paylen), 0);
		for (i = 0; i < t->paylen; i++)
			KUNIT_EXPECT_EQ(test, pay[i], (u8)(i * 7 + 3));
		kfree_skb(skb);
	}
}

/* Malformed packets, and changes that must not matter */

struct pkt_bad_case {
	const char *name;
	struct pkt_spec s;
	unsigned int off;	/* byte of the IP packet changed ... */
	u8 xor;			/* ... by this, after the ICRC is computed */
	int want;		/* enum sroce_drop_reason, or ACCEPT */
};

/* A packet of opcode @op, and one with 16 bytes after the BTH. */
#define PKT(op, ...)	{ .opcode = (op), .qpn = 0x12, .psn = 1, __VA_ARGS__ }
#define RAW(op, ...)	{ .opcode = (op), .qpn = 0x18, .ext_len = 16, \
			  __VA_ARGS__ }
#define SEND(...)	PKT(0x04, __VA_ARGS__)
#define CNP(...)	RAW(0x81, __VA_ARGS__)
#define PKEY(v)		.set_pkey = true, .pkey = (v)

static const struct pkt_bad_case pkt_bad_cases[] = {
	{ "TVer 1", SEND(.tver = 1, .data = 4), .want = SROCE_DROP_TVER },
	{ "TVer 15, IPv6", SEND(.v6 = true, .tver = 15),
	  .want = SROCE_DROP_TVER },
	{ "CNP with TVer 1", CNP(.tver = 1), .want = SROCE_DROP_TVER },
	{ "RoCEv2 CNP", CNP(), .want = SROCE_DROP_CNP },
	{ "RoCEv2 CNP, IPv6", CNP(.v6 = true), .want = SROCE_DROP_CNP },
	{ "RoCEv2 CNP, other P_Key", CNP(PKEY(0x1234)),
	  .want = SROCE_DROP_CNP },
	{ "IB CN opcode 0x80", RAW(0x80),
	  .want = SROCE_DROP_OPCODE },
	{ "RD SEND_ONLY 0x44", RAW(0x44),
	  .want = SROCE_DROP_OPCODE },
	{ "opcode 0xff", RAW(0xff), .want = SROCE_DROP_OPCODE },
	{ "RDMA_READ_REQUEST, half a RETH", PKT(0x0c, .ext_len = 8),
	  .want = SROCE_DROP_HDR_LEN },
	{ "ATOMIC_ACKNOWLEDGE without AtomicAckETH",
	  PKT(0x12, .ext_len = 4), .want = SROCE_DROP_HDR_LEN },
	{ "COMPARE_SWAP a word short", PKT(0x13, .ext_len = 24),
	  .want = SROCE_DROP_HDR_LEN },
	{ "UD SEND_ONLY without DETH", PKT(0x64),
	  .want = SROCE_DROP_HDR_LEN },
	{ "pad 3 without payload", SEND(.pad = 3), .want = SROCE_DROP_PAD },
	{ "pad 1, 5 bytes", SEND(.pad = 1, .data = 5),
	  .want = SROCE_DROP_PAD },
	{ "5 bytes without pad", SEND(.data = 5), .want = SROCE_DROP_PAD },
	{ "pad 2 on SEND_FIRST", PKT(0x00, .pad = 2, .data = 8),
	  .want = SROCE_DROP_PAD },
	{ "pad 1 on RDMA_WRITE_MIDDLE", PKT(0x07, .pad = 1,
					     .data = 8),
	  .want = SROCE_DROP_PAD },
	{ "pad 1 on ACKNOWLEDGE", PKT(0x11, .ext_len = 4,
				       .pad = 1, .data = 4),
	  .want = SROCE_DROP_PAD },
	{ "RDMA_READ_REQUEST with 4 bytes of payload",
	  PKT(0x0c, .ext_len = 16, .data = 4), .want = SROCE_DROP_PAYLOAD },
	{ "ACKNOWLEDGE with 4 bytes of payload",
	  PKT(0x11, .ext_len = 4, .data = 4), .want = SROCE_DROP_PAYLOAD },
	{ "COMPARE_SWAP with 8 bytes of payload",
	  PKT(0x13, .ext_len = 28, .data = 8), .want = SROCE_DROP_PAYLOAD },
	{ "ATOMIC_ACKNOWLEDGE with 4 bytes of payload",
	  PKT(0x12, .ext_len = 12, .data = 4), .want = SROCE_DROP_PAYLOAD },
	{ "P_Key 0x7ffe", SEND(PKEY(0x7ffe)), .want = SROCE_DROP_PKEY },
	{ "P_Key 0xfffe", SEND(PKEY(0xfffe)), .want = SROCE_DROP_PKEY },
	{ "P_Key 0x0000", SEND(PKEY(0x0000)), .want = SROCE_DROP_PKEY },
	{ "P_Key 0x8000", SEND(PKEY(0x8000)), .want = SROCE_DROP_PKEY },
	{ "P_Key 0x7fff, limited member", SEND(PKEY(0x7fff), .data = 4),
	  .want = ACCEPT },
	{ "bad P_Key and bad ICRC", SEND(PKEY(0x1234), .data = 4),
	  .off = 40, .xor = 0x01, .want = SROCE_DROP_PKEY },
	{ "ICRC, last byte", SEND(.data = 4), .off = 47, .xor = 0x80,
	  .want = SROCE_DROP_ICRC },
	{ "IP version 5", SEND(), .off = 0, .xor = 0x10,
	  .want = SROCE_DROP_FRAMING },
	{ "IPv4 with IHL 6", SEND(), .off = 0, .xor = 0x03,
	  .want = SROCE_DROP_FRAMING },
	{ "IPv4 carrying TCP", SEND(), .off = 9, .xor = 17 ^ 6,
	  .want = SROCE_DROP_FRAMING },
	{ "IPv4 fragment", SEND(), .off = 6, .xor = 0x20,
	  .want = SROCE_DROP_FRAMING },
	{ "IPv4 total length too long", SEND(), .off = 3, .xor = 0x40,
	  .want = SROCE_DROP_FRAMING },
	{ "UDP length one too long", SEND(.data = 4), .off = 25, .xor = 0x01,
	  .want = SROCE_DROP_FRAMING },
	{ "IPv6 carrying TCP", SEND(.v6 = true), .off = 6, .xor = 17 ^ 6,
	  .want = SROCE_DROP_FRAMING },
	{ "IPv6 payload length too long", SEND(.v6 = true), .off = 5,
	  .xor = 0x80, .want = SROCE_DROP_FRAMING },
	{ "IPv4 TTL", SEND(.data = 4), .off = 8, .xor = 0xff, .want = ACCEPT },
	{ "IPv4 DSCP", SEND(.data = 4), .off = 1, .xor = 0xfc,
	  .want = ACCEPT },
	{ "IPv4 ECN CE", SEND(.data = 4), .off = 1, .xor = 0x03,
	  .want = ACCEPT },
	{ "IPv4 header checksum", SEND(), .off = 10, .xor = 0x5a,
	  .want = ACCEPT },
	{ "IPv4 UDP checksum", SEND(), .off = 26, .xor = 0xa5, .want = ACCEPT },
	{ "IPv6 traffic class, high nibble", SEND(.v6 = true), .off = 0,
	  .xor = 0x0f, .want = ACCEPT },
	{ "IPv6 traffic class, low nibble", SEND(.v6 = true), .off = 1,
	  .xor = 0xf0, .want = ACCEPT },
	{ "IPv6 flow label", SEND(.v6 = true), .off = 2, .xor = 0xff,
	  .want = ACCEPT },
	{ "IPv6 hop limit", SEND(.v6 = true), .off = 7, .xor = 0x3f,
	  .want = ACCEPT },
	{ "IPv6 UDP checksum", SEND(.v6 = true), .off = 46, .xor = 0x11,
	  .want = ACCEPT },
	{ "BTH FECN", SEND(), .off = 32, .xor = 0x80, .want = ACCEPT },
	{ "BTH BECN, IPv6", SEND(.v6 = true), .off = 52, .xor = 0x40,
	  .want = ACCEPT },
};

static void pkt_bad_desc(const struct pkt_bad_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pkt_bad, pkt_bad_cases, pkt_bad_desc);

static void pkt_bad_test(struct kunit *test)
{
	const struct pkt_bad_case *t = test->param_value;
	u8 *p = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	struct sroce_pkt pkt;
	unsigned int len, l;

	KUNIT_ASSERT_NOT_NULL(test, p);
	len = pkt_build(&t->s, p);
	pkt_seal(test, p, len);
	KUNIT_ASSERT_LT(test, t->off, len);
	p[t->off] ^= t->xor;

	for (l = 0; l < ARRAY_SIZE(pkt_layouts); l++)
		KUNIT_EXPECT_EQ_MSG(test, pkt_run(test, p, len, t->s.v6,
						  pkt_l4(t->s.v6) +
						  pkt_layouts[l].head,
						  &pkt, NULL),
				    t->want, "%s", pkt_layouts[l].name);
	/* What is known of a CNP when it is dropped. */
	if (t->want == SROCE_DROP_CNP) {
		KUNIT_EXPECT_EQ(test, pkt.opcode, 0x81);
		KUNIT_EXPECT_EQ(test, pkt.qpn, t->s.qpn);
		KUNIT_EXPECT_PTR_EQ(test, pkt.info, NULL);
	}
}

/* Every opcode */

enum op_class {
	OP_NONE,	/* no payload: PadCnt 0 */
	OP_MID,		/* first or middle packet: payload, PadCnt 0 */
	OP_END,		/* last or only packet: payload, any PadCnt */
};

/* BTH and extension headers of IBA's RC, UC and UD opcodes (9.2, 9.3) */
static const struct {
	u8 hdr_len;	/* 0: not implemented */
	u8 cls;
} pkt_opcodes[256] = {
	[0x00] = { 12, OP_MID }, [0x01] = { 12, OP_MID },
	[0x02] = { 12, OP_END }, [0x03] = { 16, OP_END },
	[0x04] = { 12, OP_END }, [0x05] = { 16, OP_END },
	[0x06] = { 28, OP_MID }, [0x07] = { 12, OP_MID },
	[0x08] = { 12, OP_END }, [0x09] = { 16, OP_END },
	[0x0a] = { 28, OP_END }, [0x0b] = { 32, OP_END },
	[0x0c] = { 28, OP_NONE }, [0x0d] = { 16, OP_MID },
	[0x0e] = { 12, OP_MID }, [0x0f] = { 16, OP_END },
	[0x10] = { 16, OP_END }, [0x11] = { 16, OP_NONE },
	[0x12] = { 24, OP_NONE }, [0x13] = { 40, OP_NONE },
	[0x14] = { 40, OP_NONE }, [0x16] = { 16, OP_END },
	[0x17] = { 16, OP_END },
	[0x20] = { 12, OP_MID }, [0x21] = { 12, OP_MID },
	[0x22] = { 12, OP_END }, [0x23] = { 16, OP_END },
	[0x24] = { 12, OP_END }, [0x25] = { 16, OP_END },
	[0x26] = { 28, OP_MID }, [0x27] = { 12, OP_MID },
	[0x28] = { 12, OP_END }, [0x29] = { 16, OP_END },
	[0x2a] = { 28, OP_END }, [0x2b] = { 32, OP_END },
	[0x64] = { 20, OP_END }, [0x65] = { 24, OP_END },
};

static int pkt_opcode_run(struct kunit *test, u8 *p, struct pkt_spec *s,
			  struct sroce_pkt *pkt)
{
	unsigned int len = pkt_build(s, p);

	pkt_seal(test, p, len);
	return pkt_run(test, p, len, s->v6, 0, pkt, NULL);
}

static void pkt_opcode_test(struct kunit *test)
{
	u8 *p = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	struct sroce_pkt pkt;
	struct pkt_spec s;
	int op, want;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (op = 0; op < 256; op++) {
		memset(&s, 0, sizeof(s));
		s.opcode = op;
		s.qpn = 0x42;
		s.v6 = op & 1;
		if (!pkt_opcodes[op].hdr_len) {
			/* Room for any headers an unknown opcode might have */
			s.ext_len = 16;
			want = op == 0x81 ? SROCE_DROP_CNP : SROCE_DROP_OPCODE;
			KUNIT_EXPECT_EQ_MSG(test, pkt_opcode_run(test, p, &s,
								 &pkt),
					    want, "opcode %#x", op);
			continue;
		}
		s.ext_len = pkt_opcodes[op].hdr_len - 12;
		s.data = pkt_opcodes[op].cls == OP_NONE ? 0 : 8;
		KUNIT_EXPECT_EQ_MSG(test, pkt_opcode_run(test, p, &s, &pkt),
				    ACCEPT, "opcode %#x", op);
		KUNIT_EXPECT_EQ(test, pkt.opcode, op);
		KUNIT_EXPECT_EQ(test, pkt.hdr_len, pkt_opcodes[op].hdr_len);
		KUNIT_EXPECT_EQ(test, pkt.paylen, s.data);

		/* One byte of pad after three of payload */
		s.data = 4;
		s.pad = 1;
		want = pkt_opcodes[op].cls == OP_END ? ACCEPT : SROCE_DROP_PAD;
		KUNIT_EXPECT_EQ_MSG(test, pkt_opcode_run(test, p, &s, &pkt),
				    want, "opcode %#x with pad", op);
		if (want == ACCEPT)
			KUNIT_EXPECT_EQ(test, pkt.paylen, 3);
	}
}

/* Truncation */

static const struct pkt_valid_case *const pkt_trunc_bases[] = {
	&pkt_valid_cases[0],	/* SEND_ONLY, pad 3 */
	&pkt_valid_cases[5],	/* UD SEND_ONLY, pad 1 */
	&pkt_valid_cases[8],	/* COMPARE_SWAP over IPv6 */
	&pkt_valid_cases[9],	/* RDMA_WRITE_ONLY_WITH_IMMEDIATE */
};

static void pkt_trunc_desc(const struct pkt_valid_case *const *t,
			   char *desc)
{
	strscpy(desc, (*t)->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pkt_trunc, pkt_trunc_bases, pkt_trunc_desc);

/* The reason for @ulen bytes of a packet @t cut short, lengths fixed up. */
static int pkt_trunc_want(const struct pkt_valid_case *t, unsigned int ulen)
{
	unsigned int room;

	if (ulen < 12 + 4)
		return SROCE_DROP_SHORT;
	if (ulen < t->hdr_len + 4)
		return SROCE_DROP_HDR_LEN;
	room = ulen - t->hdr_len - 4;
	if (room % 4 || room < t->s.pad)
		return SROCE_DROP_PAD;
	/* What now sits in the ICRC field are other bytes. */
	return SROCE_DROP_ICRC;
}

/*
 * Every length short of the full one, in a linear skb and with all but
 * the IP and UDP headers in fragments: once with the IP and UDP lengths
 * telling the truth, once with them still claiming the whole packet.
 */
static void pkt_trunc_test(struct kunit *test)
{
	const struct pkt_valid_case *t =
		*(const struct pkt_valid_case *const *)test->param_value;
	u8 *full = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	u8 *p = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	unsigned int l4 = pkt_l4(t->s.v6), len, ulen, l;
	struct sroce_pkt pkt;

	KUNIT_ASSERT_NOT_NULL(test, full);
	KUNIT_ASSERT_NOT_NULL(test, p);
	len = pkt_build(&t->s, full);
	pkt_seal(test, full, len);

	for (ulen = 0; ulen < len - l4; ulen++) {
		for (l = 0; l < 2; l++) {
			memcpy(p, full, len);
			KUNIT_EXPECT_EQ_MSG(test,
					    pkt_run(test, p, l4 + ulen,
						    t->s.v6, l ? 0 : PKT_BUF,
						    &pkt, NULL),
					    SROCE_DROP_FRAMING,
					    "%u bytes, stale lengths", ulen);
			pkt_set_len(p, t->s.v6, ulen);
			KUNIT_EXPECT_EQ_MSG(test,
					    pkt_run(test, p, l4 + ulen,
						    t->s.v6, l ? 0 : PKT_BUF,
						    &pkt, NULL),
					    pkt_trunc_want(t, ulen),
					    "%u bytes", ulen);
		}
	}
}

/* Bit flips everywhere */

static const struct pkt_valid_case *const pkt_flip_bases[] = {
	&pkt_valid_cases[9],	/* IPv6 RDMA_WRITE_ONLY_WITH_IMMEDIATE */
	&pkt_valid_cases[7],	/* IPv4 SEND_ONLY_WITH_INVALIDATE, pad 3 */
};

KUNIT_ARRAY_PARAM(pkt_flip, pkt_flip_bases, pkt_trunc_desc);

/*
 * The outcome of flipping bit @bit (0x01 or 0x80) of byte @off of the IP
 * header (20 or 40 bytes, from RFC 791 / RFC 8200).
 */
static int pkt_flip_ip(bool v6, unsigned int off, u8 bit)
{
	if (v6) {
		if (off == 0)		/* version; traffic class */
			return bit == 0x80 ? SROCE_DROP_FRAMING : ACCEPT;
		if (off <= 3 || off == 7)	/* class, flow label, hops */
			return ACCEPT;
		if (off <= 6)		/* payload length, next header */
			return SROCE_DROP_FRAMING;
		return SROCE_DROP_ICRC;	/* addresses */
	}
	switch (off) {
	case 1:			/* DSCP and ECN */
	case 8:			/* TTL */
	case 10:		/* header checksum */
	case 11:
		return ACCEPT;
	case 6:			/* reserved flag; fragment offset */
		return bit == 0x80 ? SROCE_DROP_ICRC : SROCE_DROP_FRAMING;
	case 0:			/* version, IHL */
	case 2:			/* total length */
	case 3:
	case 7:			/* fragment offset */
	case 9:			/* protocol */
		return SROCE_DROP_FRAMING;
	default:		/* identification, addresses */
		return SROCE_DROP_ICRC;
	}
}

/* ... and of byte @off of the UDP header and what follows it. */
static int pkt_flip_l4(unsigned int off, u8 bit)
{
	switch (off) {
	case 4:			/* UDP length */
	case 5:
		return SROCE_DROP_FRAMING;
	case 6:			/* UDP checksum */
	case 7:
	case 8 + 4:		/* BTH FECN, BECN, resv6 */
		return ACCEPT;
	case 8 + 1:		/* SE; TVer */
		return bit == 0x80 ? SROCE_DROP_ICRC : SROCE_DROP_TVER;
	case 8 + 2:		/* P_Key: membership; partition */
		return bit == 0x80 ? SROCE_DROP_ICRC : SROCE_DROP_PKEY;
	case 8 + 3:
		return SROCE_DROP_PKEY;
	default:		/* ports, the rest of the BTH and all after */
		return SROCE_DROP_ICRC;
	}
}

static void pkt_flip_test(struct kunit *test)
{
	const struct pkt_valid_case *t =
		*(const struct pkt_valid_case *const *)test->param_value;
	static const u8 bits[] = { 0x01, 0x80 };
	u8 *p = kunit_kzalloc(test, PKT_BUF, GFP_KERNEL);
	unsigned int l4 = pkt_l4(t->s.v6), len, off, b;
	struct sroce_pkt pkt;
	int want;

	KUNIT_ASSERT_NOT_NULL(test, p);
	len = pkt_build(&t->s, p);
	pkt_seal(test, p, len);

	for (off = 0; off < len; off++) {
		/* The opcode byte: see pkt_opcode_test(). */
		if (off == l4)
			continue;
		for (b = 0; b < ARRAY_SIZE(bits); b++) {
			if (off < l4 - 8)
				want = pkt_flip_ip(t->s.v6, off, bits[b]);
			else
				want = pkt_flip_l4(off - (l4 - 8), bits[b]);
			p[off] ^= bits[b];
			KUNIT_EXPECT_EQ_MSG(test,
					    pkt_run(test, p, len, t->s.v6, 0,
						    &pkt, NULL),
					    want, "byte %u bit %#x", off,
					    bits[b]);
			p[off] ^= bits[b];
		}
	}
}

/* Drop reasons and counters */

static const struct {
	enum sroce_drop_reason why;
	enum sroce_counter counter;
} pkt_drop_counters[] = {
	{ SROCE_DROP_FRAMING, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_SHORT, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_TVER, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_CNP, SROCE_CNT_CNP_RCVD },
	{ SROCE_DROP_OPCODE, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_HDR_LEN, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_PAD, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_PAYLOAD, SROCE_CNT_MALFORMED },
	{ SROCE_DROP_PKEY, SROCE_CNT_PKEY_VIOLATIONS },
	{ SROCE_DROP_ICRC, SROCE_CNT_ICRC_ERR },
	{ SROCE_DROP_NOMEM, SROCE_CNT_DROPPED_NOMEM },
	{ SROCE_DROP_NO_QP, SROCE_CNT_DROPPED_NO_QP },
	{ SROCE_DROP_QP_STATE, SROCE_CNT_DROPPED_QP_STATE },
	{ SROCE_DROP_QKEY, SROCE_CNT_QKEY_VIOLATIONS },
	{ SROCE_DROP_ADDR, SROCE_CNT_DROPPED_ADDR },
};

/* The names "rdma statistic show" prints: rxe's fifteen, then sroce's. */
static const char *const pkt_counter_names[] = {
	"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request",
	"rcvd_rnr_err", "send_rnr_err", "rcvd_seq_err", "ack_deferred",
	"retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err",
	"send_err", "link_downed", "rdma_sends", "rdma_recvs",
	"icrc_err", "malformed_pkts", "cnp_rcvd", "pkey_violations",
	"qkey_violations", "dropped_no_qp", "dropped_qp_state",
	"dropped_addr", "dropped_nomem", "sent_bytes", "rcvd_bytes",
	"send_seq_err", "read_resp_abandoned", "dropped_uc_msg",
	"dropped_ud_msg", "dropped_backlog", "dropped_unsent_psn", "sent_gso",
	"sent_lent", "sent_span", "ecn_marked_rcvd", "cnp_sent", "cnp_handled",
	"rp_rate_decreases",
};

static struct sroce_dev *pkt_fake_dev(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev),
					       GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	KUNIT_ASSERT_EQ(test, sroce_stats_init(sdev), 0);
	return sdev;
}

static void pkt_stats_test(struct kunit *test)
{
	struct sroce_dev *sdev = pkt_fake_dev(test);
	u64 want[SROCE_CNT_NR] = {};
	struct rdma_hw_stats *hw;
	unsigned long irqflags;
	int c, cpu;

	/* a new counter needs its name here first */
	KUNIT_ASSERT_EQ(test, (int)ARRAY_SIZE(pkt_counter_names), SROCE_CNT_NR);

	for (c = 0; c < SROCE_CNT_NR; c++)
		KUNIT_EXPECT_EQ(test, sroce_stats_read(sdev, c), 0);

	sroce_stats_inc(sdev, SROCE_CNT_ICRC_ERR);
	sroce_stats_inc(sdev, SROCE_CNT_ICRC_ERR);
	want[SROCE_CNT_ICRC_ERR] = 2;
	sroce_stats_add(sdev, SROCE_CNT_RCVD_BYTES, 1000);
	sroce_stats_add(sdev, SROCE_CNT_RCVD_BYTES, 0x100000000ULL);
	want[SROCE_CNT_RCVD_BYTES] = 0x100000000ULL + 1000;
	local_irq_save(irqflags);
	sroce_stats_inc(sdev, SROCE_CNT_SENT_PKTS);
	local_irq_restore(irqflags);
	want[SROCE_CNT_SENT_PKTS] = 1;
	/* Other CPUs' shares count too. */
	for_each_possible_cpu(cpu) {
		per_cpu_ptr(sdev->stats, cpu)->cnt[SROCE_CNT_RCVD_PKTS] +=
			cpu + 1;
		want[SROCE_CNT_RCVD_PKTS] += cpu + 1;
	}
	for (c = 0; c < SROCE_CNT_NR; c++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_stats_read(sdev, c), want[c],
				    "counter %d", c);

	/* Through ib_core's interface */
	KUNIT_EXPECT_PTR_EQ(test, sroce_alloc_hw_port_stats(&sdev->ibdev, 2),
			    NULL);
	hw = sroce_alloc_hw_port_stats(&sdev->ibdev, 1);
	KUNIT_ASSERT_NOT_NULL(test, hw);
	KUNIT_EXPECT_EQ(test, hw->num_counters,
			(int)ARRAY_SIZE(pkt_counter_names));
	KUNIT_EXPECT_EQ(test, sroce_get_hw_stats(&sdev->ibdev, hw, 1, 0),
			SROCE_CNT_NR);
	KUNIT_EXPECT_EQ(test, sroce_get_hw_stats(&sdev->ibdev, hw, 2, 0),
			-EINVAL);
	for (c = 0; c < SROCE_CNT_NR && c < hw->num_counters; c++) {
		KUNIT_EXPECT_EQ_MSG(test, hw->value[c], want[c],
				    "counter %d", c);
		KUNIT_EXPECT_STREQ(test, hw->descs[c].name,
				   pkt_counter_names[c]);
		KUNIT_EXPECT_STREQ(test, sroce_counter_name(c),
				   pkt_counter_names[c]);
	}
	KUNIT_EXPECT_PTR_EQ(test, sroce_counter_name(SROCE_CNT_NR), NULL);
	rdma_free_hw_stats_struct(hw);
	sroce_stats_cleanup(sdev);
	KUNIT_EXPECT_TRUE(test, !sdev->stats);
}

static void pkt_drop_counter_test(struct kunit *test)
{
	struct sroce_dev *sdev = pkt_fake_dev(test);
	u64 want[SROCE_CNT_NR] = {};
	unsigned int i;
	int c;

	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(pkt_drop_counters), SROCE_DROP_NR);
	for (i = 0; i < ARRAY_SIZE(pkt_drop_counters); i++) {
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_drop_counter(pkt_drop_counters[i].why),
				    pkt_drop_counters[i].counter, "%s",
				    sroce_drop_reason_name(pkt_drop_counters[i].why));
		sroce_rcv_count_drop(sdev, pkt_drop_counters[i].why);
		want[pkt_drop_counters[i].counter]++;
	}
	for (c = 0; c < SROCE_CNT_NR; c++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_stats_read(sdev, c), want[c],
				    "%s", pkt_counter_names[c]);
	KUNIT_EXPECT_STREQ(test, sroce_drop_reason_name(SROCE_DROP_NR), "?");
	sroce_stats_cleanup(sdev);
}

static struct kunit_case sroce_pkt_test_cases[] = {
	KUNIT_CASE_PARAM(pkt_valid_test, pkt_valid_gen_params),
	KUNIT_CASE_PARAM(pkt_bad_test, pkt_bad_gen_params),
	KUNIT_CASE(pkt_opcode_test),
	KUNIT_CASE_PARAM(pkt_trunc_test, pkt_trunc_gen_params),
	KUNIT_CASE_PARAM(pkt_flip_test, pkt_flip_gen_params),
	KUNIT_CASE(pkt_stats_test),
	KUNIT_CASE(pkt_drop_counter_test),
	{}
};

static struct kunit_suite sroce_pkt_test_suite = {
	.name = "sroce_pkt",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_pkt_test_cases,
};

kunit_test_suites(&sroce_pkt_test_suite);
