// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ICRC generation and checking.
 *
 * Two engines compute the same reflected CRC-32: crc32_le() of lib/crc32
 * (table driven) and the crypto API's "crc32" shash, which is crc32-pclmul
 * on x86 CPUs with PCLMULQDQ and crc32-generic (crc32_le() again) on the
 * rest. sroce_icrc_init() times both on this machine and a static key
 * routes the data path to the faster one.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/unaligned.h>
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ipv6.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/ip.h>

#include "wire/sroce_hdr.h"
#include "wire/sroce_icrc.h"

/* crc32_le(~0, 8 bytes of 0xff): the CRC of the LRH that RoCEv2 lacks. */
#define SROCE_ICRC_SEED		0xdebb20e3

/* The headers the ICRC masks: IP, UDP and BTH. */
#define SROCE_ICRC_HDRS_MAX	(sizeof(struct ipv6hdr) + \
				 sizeof(struct udphdr) + \
				 sizeof(struct sroce_bth))
/* The shortest UDP datagram with an ICRC: a BTH-only packet. */
#define SROCE_ICRC_UDP_MIN	(sizeof(struct udphdr) + \
				 sizeof(struct sroce_bth) + SROCE_ICRC_LEN)

#define SROCE_ICRC_BENCH_LEN	4096
#define SROCE_ICRC_BENCH_LOOPS	16
#define SROCE_ICRC_BENCH_ROUNDS	4

static struct crypto_shash *sroce_icrc_tfm;
static DEFINE_STATIC_KEY_FALSE(sroce_icrc_use_shash);

/**
 * struct sroce_icrc_hdrs - the masked start of a packet
 * @ip4: IPv4 header, if @bytes starts with one
 * @ip6: IPv6 header, if @bytes starts with one
 * @bytes: copy of the IP, UDP and BTH headers, masked for the ICRC
 * @len: number of valid bytes in @bytes
 * @end: offset of the ICRC from the start of the IP header
 */
struct sroce_icrc_hdrs {
	union {
		struct iphdr ip4;
		struct ipv6hdr ip6;
		u8 bytes[SROCE_ICRC_HDRS_MAX];
	};
	unsigned int len;
	unsigned int end;
};

static u32 sroce_crc32_shash(u32 crc, const void *p, unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, sroce_icrc_tfm);
	u32 *state = shash_desc_ctx(desc);

	desc->tfm = sroce_icrc_tfm;
	crypto_shash_init(desc);
	/*
	 * The whole state of the crc32 shash, generic or PCLMUL, is the
	 * running crc32_le() value, not inverted; its key only seeds it.
	 * Seeding the descriptor instead lets many users share the tfm.
	 */
	*state = crc;
	crypto_shash_update(desc, p, len);
	return *state;
}

/**
 * sroce_crc32() - run a CRC-32 engine
 * @engine: engine to use; SROCE_CRC_SHASH falls back to SROCE_CRC_LIB
 *	    when sroce_crc_engine_ready() says it is missing
 * @crc: running CRC, as for crc32_le()
 * @p: data
 * @len: length of @p
 *
 * Return: crc32_le(@crc, @p, @len), as computed by @engine.
 */
u32 sroce_crc32(enum sroce_crc_engine engine, u32 crc, const void *p,
		unsigned int len)
{
	if (engine == SROCE_CRC_SHASH && sroce_icrc_tfm)
		return sroce_crc32_shash(crc, p, len);
	return crc32_le(crc, p, len);
}

/**
 * sroce_crc_engine_ready() - whether a CRC-32 engine can be used
 * @engine: engine
 *
 * Return: true for SROCE_CRC_LIB, and for SROCE_CRC_SHASH once
 * sroce_icrc_init() has allocated the shash.
 */
bool sroce_crc_engine_ready(enum sroce_crc_engine engine)
{
	return engine == SROCE_CRC_LIB || sroce_icrc_tfm;
}

static enum sroce_crc_engine sroce_icrc_engine(void)
{
	if (static_branch_unlikely(&sroce_icrc_use_shash))
		return SROCE_CRC_SHASH;
	return SROCE_CRC_LIB;
}

/* Returns the IP packet length, or -errno. */
static int sroce_icrc_mask_ipv4(struct iphdr *ip)
{
	if (ip->ihl != 5 || ip->protocol != IPPROTO_UDP || ip_is_fragment(ip))
		return -EINVAL;
	ip->tos = 0xff;
	ip->ttl = 0xff;
	ip->check = (__force __sum16)0xffff;
	return ntohs(ip->tot_len);
}

/* Returns the IP packet length, or -errno. */
static int sroce_icrc_mask_ipv6(struct ipv6hdr *ip6)
{
	if (ip6->nexthdr != IPPROTO_UDP)
		return -EINVAL;
	/* The traffic class spans priority and the top of flow_lbl[0]. */
	ip6->priority = 0xf;
	memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
	ip6->hop_limit = 0xff;
	return sizeof(*ip6) + ntohs(ip6->payload_len);
}

/*
 * Validate the packet at @l3 and copy its first headers into @h, masked.
 * @head bytes at @l3 are contiguous; the packet may have @avail in total.
 */
static int sroce_icrc_parse(struct sroce_icrc_hdrs *h, const u8 *l3,
			    unsigned int head, unsigned int avail)
{
	unsigned int iph_len, pkt_len, udp_len;
	struct sroce_bth *bth;
	struct udphdr *udp;
	int ret;

	if (!head)
		return -EINVAL;
	switch (l3[0] >> 4) {
	case 4:
		iph_len = sizeof(struct iphdr);
		break;
	case 6:
		iph_len = sizeof(struct ipv6hdr);
		break;
	default:
		return -EPROTONOSUPPORT;
	}
	h->len = iph_len + sizeof(*udp) + sizeof(*bth);
	if (head < h->len)
		return -EINVAL;
	memcpy(h->bytes, l3, h->len);

	if (iph_len == sizeof(struct iphdr))
		ret = sroce_icrc_mask_ipv4(&h->ip4);
	else
		ret = sroce_icrc_mask_ipv6(&h->ip6);
	if (ret < 0)
		return ret;
	pkt_len = ret;

	udp = (struct udphdr *)&h->bytes[iph_len];
	udp_len = ntohs(udp->len);
	if (pkt_len > avail || udp_len < SROCE_ICRC_UDP_MIN ||
	    iph_len + udp_len > pkt_len)
		return -EINVAL;
	udp->check = (__force __sum16)0xffff;

	bth = (struct sroce_bth *)(udp + 1);
	bth->qpn |= cpu_to_be32(SROCE_BTH_RESV8A);

	h->end = iph_len + udp_len - SROCE_ICRC_LEN;
	return 0;
}

/* Returns the offset of the ICRC field, or -errno. */
static int sroce_icrc_linear(enum sroce_crc_engine engine, const void *l3,
			     unsigned int len, u32 *icrc)
{
	struct sroce_icrc_hdrs h;
	u32 crc;
	int err;

	err = sroce_icrc_parse(&h, l3, len, len);
	if (err)
		return err;
	crc = sroce_crc32(engine, SROCE_ICRC_SEED, h.bytes, h.len);
	crc = sroce_crc32(engine, crc, l3 + h.len, h.end - h.len);
	*icrc = ~crc;
	return h.end;
}

/**
 * sroce_icrc_calc_engine() - compute the ICRC of a packet with one engine
 * @engine: CRC-32 engine
 * @l3: the packet, starting at its IP header
 * @len: number of bytes at @l3; may exceed the packet
 * @icrc: the ICRC; it goes on the wire least significant byte first
 *
 * The four bytes the ICRC occupies are not read.
 *
 * Return: 0, -EINVAL if the packet is truncated or not one this driver
 * sends, -EPROTONOSUPPORT if it is neither IPv4 nor IPv6.
 */
int sroce_icrc_calc_engine(enum sroce_crc_engine engine, const void *l3,
			   unsigned int len, u32 *icrc)
{
	int end = sroce_icrc_linear(engine, l3, len, icrc);

	return end < 0 ? end : 0;
}

/**
 * sroce_icrc_calc() - compute the ICRC of a packet in a linear buffer
 * @l3: the packet, starting at its IP header
 * @len: number of bytes at @l3; may exceed the packet
 * @icrc: the ICRC; it goes on the wire least significant byte first
 *
 * Return: 0 or, for a packet that has no valid ICRC position, -errno as
 * for sroce_icrc_calc_engine().
 */
int sroce_icrc_calc(const void *l3, unsigned int len, u32 *icrc)
{
	return sroce_icrc_calc_engine(sroce_icrc_engine(), l3, len, icrc);
}

/**
 * sroce_icrc_fill() - store the ICRC in a packet in a linear buffer
 * @l3: the packet, starting at its IP header
 * @len: number of bytes at @l3; may exceed the packet
 *
 * Return: 0 or -errno as for sroce_icrc_calc().
 */
int sroce_icrc_fill(void *l3, unsigned int len)
{
	u32 icrc;
	int end;

	end = sroce_icrc_linear(sroce_icrc_engine(), l3, len, &icrc);
	if (end < 0)
		return end;
	put_unaligned_le32(icrc, l3 + end);
	return 0;
}

/**
 * sroce_icrc_valid() - check the ICRC of a packet in a linear buffer
 * @l3: the packet, starting at its IP header
 * @len: number of bytes at @l3; may exceed the packet
 *
 * Return: true if the packet is well formed and its ICRC matches.
 */
bool sroce_icrc_valid(const void *l3, unsigned int len)
{
	u32 icrc;
	int end;

	end = sroce_icrc_linear(sroce_icrc_engine(), l3, len, &icrc);
	return end >= 0 && get_unaligned_le32(l3 + end) == icrc;
}

/*
 * Add bytes [@from, @to) of the IP packet in @skb, counted from its
 * network header, to @crc. On receive the IP and UDP headers have been
 * pulled already, so a leading part may sit in the head in front of
 * skb->data; the rest is walked with skb_seq_read(), fragments included.
 */
static int sroce_icrc_skb_crc(enum sroce_crc_engine engine,
			      struct sk_buff *skb, u32 *crc,
			      unsigned int from, unsigned int to)
{
	int noff = skb_network_offset(skb);
	unsigned int n, done = 0;
	struct skb_seq_state st;
	const u8 *data;

	if (noff + (int)from < 0) {
		n = min_t(unsigned int, to, -noff) - from;
		*crc = sroce_crc32(engine, *crc, skb_network_header(skb) + from,
				   n);
		from += n;
	}
	if (from == to)
		return 0;

	skb_prepare_seq_read(skb, noff + from, noff + to, &st);
	while (done < to - from) {
		n = skb_seq_read(done, &data, &st);
		if (!n)
			break;
		n = min(n, to - from - done);
		*crc = sroce_crc32(engine, *crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return done == to - from ? 0 : -EINVAL;
}

/* Returns the offset of the ICRC from skb->data, or -errno. */
static int sroce_icrc_skb_calc(struct sk_buff *skb, u32 *icrc)
{
	enum sroce_crc_engine engine = sroce_icrc_engine();
	int noff = skb_network_offset(skb);
	int head = (int)skb_headlen(skb) - noff;
	struct sroce_icrc_hdrs h;
	u32 crc;
	int err;

	if (head <= 0)
		return -EINVAL;
	err = sroce_icrc_parse(&h, skb_network_header(skb), head,
			       skb->len - noff);
	if (err)
		return err;
	if (noff + (int)h.end < 0)
		return -EINVAL;

	crc = sroce_crc32(engine, SROCE_ICRC_SEED, h.bytes, h.len);
	err = sroce_icrc_skb_crc(engine, skb, &crc, h.len, h.end);
	if (err)
		return err;
	*icrc = ~crc;
	return noff + h.end;
}

/**
 * sroce_icrc_skb_fill() - store the ICRC in an outgoing packet
 * @skb: the packet; its network header is set and its IP, UDP and BTH
 *	 headers are complete and linear, the ICRC field writable
 *
 * The payload may lie in page fragments or a frag list. skb->data may
 * point to the IP header or anywhere up to the start of the ICRC.
 *
 * Return: 0 or -errno as for sroce_icrc_calc().
 */
int sroce_icrc_skb_fill(struct sk_buff *skb)
{
	__le32 wire;
	u32 icrc;
	int off;

	off = sroce_icrc_skb_calc(skb, &icrc);
	if (off < 0)
		return off;
	wire = cpu_to_le32(icrc);
	return skb_store_bits(skb, off, &wire, sizeof(wire));
}

/**
 * sroce_icrc_skb_check() - verify the ICRC of a received packet
 * @skb: the packet; its network header is set and its IP, UDP and BTH
 *	 headers are linear
 *
 * As for sroce_icrc_skb_fill(), the payload may be in fragments and
 * skb->data may already point past the UDP header.
 *
 * Return: 0 if the ICRC matches, -EBADMSG if it does not, another -errno
 * as for sroce_icrc_calc() if the packet is malformed.
 */
int sroce_icrc_skb_check(struct sk_buff *skb)
{
	__le32 wire;
	u32 icrc;
	int off;

	off = sroce_icrc_skb_calc(skb, &icrc);
	if (off < 0)
		return off;
	if (skb_copy_bits(skb, off, &wire, sizeof(wire)))
		return -EINVAL;
	return le32_to_cpu(wire) == icrc ? 0 : -EBADMSG;
}

/* Best of a few rounds, so that an interrupt does not decide. */
static u64 sroce_icrc_bench(enum sroce_crc_engine engine, const u8 *buf,
			    u32 *crc)
{
	u64 best = U64_MAX, start;
	int round, i;

	for (round = 0; round < SROCE_ICRC_BENCH_ROUNDS; round++) {
		start = ktime_get_ns();
		for (i = 0; i < SROCE_ICRC_BENCH_LOOPS; i++)
			*crc = sroce_crc32(engine, *crc, buf,
					   SROCE_ICRC_BENCH_LEN);
		best = min(best, ktime_get_ns() - start);
	}
	return best;
}

/* Time both engines; switch to the shash if it is faster and agrees. */
static int sroce_icrc_choose(void)
{
	u32 lib_crc = ~0, shash_crc = ~0;
	u64 lib_ns, shash_ns;
	u8 *buf;
	int i;

	buf = kmalloc(SROCE_ICRC_BENCH_LEN, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < SROCE_ICRC_BENCH_LEN; i++)
		buf[i] = i * 151 + 7;
	lib_ns = sroce_icrc_bench(SROCE_CRC_LIB, buf, &lib_crc);
	shash_ns = sroce_icrc_bench(SROCE_CRC_SHASH, buf, &shash_crc);
	kfree(buf);

	if (WARN_ON(lib_crc != shash_crc))
		return 0;
	if (shash_ns < lib_ns)
		static_branch_enable(&sroce_icrc_use_shash);
	pr_info("ICRC uses %s: crc32_le %llu ns, %s %llu ns per %u KiB\n",
		shash_ns < lib_ns ? "crypto crc32" : "crc32_le",
		lib_ns, crypto_shash_driver_name(sroce_icrc_tfm), shash_ns,
		SROCE_ICRC_BENCH_LOOPS * SROCE_ICRC_BENCH_LEN / 1024);
	return 0;
}

/**
 * sroce_icrc_init() - pick the CRC-32 engine for the ICRC
 *
 * Allocates the crypto "crc32" shash and keeps whichever of it and
 * crc32_le() is faster here. Without the shash, crc32_le() is used.
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_icrc_init(void)
{
	struct crypto_shash *tfm;
	int err;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("ICRC uses crc32_le: no crc32 shash (%ld)\n",
			PTR_ERR(tfm));
		return 0;
	}
	/* sroce_crc32_shash() relies on a bare u32 state. */
	if (crypto_shash_descsize(tfm) != sizeof(u32)) {
		pr_info("ICRC uses crc32_le: unexpected %s\n",
			crypto_shash_driver_name(tfm));
		crypto_free_shash(tfm);
		return 0;
	}

	sroce_icrc_tfm = tfm;
	err = sroce_icrc_choose();
	if (err)
		sroce_icrc_exit();
	return err;
}

/**
 * sroce_icrc_exit() - release what sroce_icrc_init() allocated
 *
 * No ICRC may be in progress or start afterwards.
 */
void sroce_icrc_exit(void)
{
	static_branch_disable(&sroce_icrc_use_shash);
	crypto_free_shash(sroce_icrc_tfm);
	sroce_icrc_tfm = NULL;
}
