// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Validation of received RoCEv2 packets.
 *
 * sroce_pkt_parse() looks at nothing but the packet, so that everything
 * it accepts can be trusted by the transport as far as the wire format
 * goes, and so that it can be tested without a device. Every length is
 * checked before the bytes it covers are read. The BTH and the extension
 * headers are pulled into the linear part of the skb (pskb_may_pull());
 * the payload is left where it is, possibly in page fragments, since the
 * transport copies it out anyway.
 *
 * Pad rules. IBA packets are whole 4-byte words, so payload and pad
 * together fill whole words. The first and middle packets of a message
 * carry exactly one PMTU (a multiple of 256), so only a packet that ends
 * a message and may carry payload can have a non-zero PadCnt; a PadCnt
 * elsewhere, or one larger than the bytes after the headers, is refused.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>

#include "wire/sroce_hdr.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

/* The P_Key bits that name the partition; bit 15 is the membership type. */
#define SROCE_PKEY_BASE		GENMASK(14, 0)

/* Short names of the drop reasons, for messages. */
static const char *const sroce_drops[] = {
	[SROCE_DROP_FRAMING] = "framing",
	[SROCE_DROP_SHORT] = "short",
	[SROCE_DROP_TVER] = "tver",
	[SROCE_DROP_CNP] = "cnp",
	[SROCE_DROP_OPCODE] = "opcode",
	[SROCE_DROP_HDR_LEN] = "hdr_len",
	[SROCE_DROP_PAD] = "pad",
	[SROCE_DROP_PAYLOAD] = "payload",
	[SROCE_DROP_PKEY] = "pkey",
	[SROCE_DROP_ICRC] = "icrc",
	[SROCE_DROP_NOMEM] = "nomem",
	[SROCE_DROP_NO_QP] = "no_qp",
	[SROCE_DROP_QP_STATE] = "qp_state",
	[SROCE_DROP_QKEY] = "qkey",
	[SROCE_DROP_ADDR] = "addr",
};

static_assert(ARRAY_SIZE(sroce_drops) == SROCE_DROP_NR);

/**
 * sroce_drop_reason_name() - short name of a drop reason
 * @why: the reason
 *
 * Return: e.g. "icrc", or "?" for an invalid @why.
 */
const char *sroce_drop_reason_name(enum sroce_drop_reason why)
{
	if ((unsigned int)why >= SROCE_DROP_NR)
		return "?";
	return sroce_drops[why];
}

/*
 * The IP and UDP headers must lie, linear, right in front of skb->data,
 * with no IPv4 options or IPv6 extension headers in between, and the UDP
 * length must say what skb->len says: the ICRC is found from the former,
 * the payload length from the latter. Sets @pkt->net.
 */
static bool sroce_pkt_framing_ok(const struct sk_buff *skb,
				 struct sroce_pkt *pkt)
{
	int front = -skb_network_offset(skb);
	const struct udphdr *udp;
	unsigned int iph_len;

	if (front <= 0)
		return false;
	switch (*skb_network_header(skb) >> 4) {
	case 4:
		pkt->net = SROCE_PKT_IPV4;
		iph_len = sizeof(struct iphdr);
		break;
	case 6:
		pkt->net = SROCE_PKT_IPV6;
		iph_len = sizeof(struct ipv6hdr);
		break;
	default:
		return false;
	}
	if (front != iph_len + sizeof(*udp))
		return false;
	udp = (const struct udphdr *)(skb->data - sizeof(*udp));
	return ntohs(udp->len) == skb->len + sizeof(*udp);
}

/* Fill in what the BTH says; the BTH must be linear. */
static void sroce_pkt_read_bth(const struct sk_buff *skb,
			       struct sroce_pkt *pkt)
{
	const struct sroce_bth *bth = sroce_pkt_bth(skb);

	pkt->info = NULL;
	pkt->opcode = sroce_bth_opcode(bth);
	pkt->psn = sroce_bth_psn(bth);
	pkt->qpn = sroce_bth_destqp(bth);
	pkt->pad = sroce_bth_pad(bth);
	pkt->hdr_len = SROCE_BTH_LEN;
	pkt->paylen = 0;
	pkt->mark = 0;
	pkt->flags = (sroce_bth_ackreq(bth) ? SROCE_PKT_ACKREQ : 0) |
		     (sroce_bth_se(bth) ? SROCE_PKT_SOLICITED : 0) |
		     (sroce_bth_mig(bth) ? SROCE_PKT_MIGREQ : 0) |
		     (sroce_bth_fecn(bth) ? SROCE_PKT_FECN : 0) |
		     (sroce_bth_becn(bth) ? SROCE_PKT_BECN : 0);
}

/*
 * The ECN field of the IP header (linear: it is in front of skb->data).
 * A router or qdisc on the way set CE when a queue built up (RFC 3168);
 * the notification point answers that with a CNP (sroce_cnp.c).
 */
static void sroce_pkt_read_ecn(const struct sk_buff *skb,
			       struct sroce_pkt *pkt)
{
	const void *nh = skb_network_header(skb);
	u8 ecn;

	if (pkt->net == SROCE_PKT_IPV4)
		ecn = ((const struct iphdr *)nh)->tos;
	else
		ecn = ipv6_get_dsfield((const struct ipv6hdr *)nh);
	if (INET_ECN_is_ce(ecn))
		pkt->flags |= SROCE_PKT_CE;
}

/* The pad rules of the file comment; @pkt->hdr_len fits in skb->len. */
static bool sroce_pkt_pad_ok(const struct sk_buff *skb,
			     const struct sroce_pkt *pkt)
{
	unsigned int room = skb->len - pkt->hdr_len - SROCE_ICRC_LEN;

	if (room % SROCE_PAD_ALIGN)
		return false;
	if (!pkt->pad)
		return true;
	return (pkt->info->flags & SROCE_OPF_PAYLOAD) &&
	       sroce_opcode_ends_msg(pkt->info) && room >= pkt->pad;
}

/*
 * The port's only P_Key is the default one, a full member, so IBA's
 * matching rule (same partition, not both limited members) comes down to
 * the partition bits.
 */
static bool sroce_pkt_pkey_ok(const struct sk_buff *skb)
{
	u16 pkey = sroce_bth_pkey(sroce_pkt_bth(skb));

	return (pkey & SROCE_PKEY_BASE) == (SROCE_DEFAULT_PKEY & SROCE_PKEY_BASE);
}

static int sroce_pkt_fail(enum sroce_drop_reason *why,
			  enum sroce_drop_reason reason)
{
	*why = reason;
	return -EINVAL;
}

/**
 * sroce_pkt_parse_hdrs() - validate a received RoCEv2 packet but for its
 *	ICRC, and describe it
 * @skb: the packet: skb->data at the BTH, the IP and UDP headers right in
 *	front of it, skb_network_header() at the IP header, skb->len the
 *	UDP payload (BTH to ICRC)
 * @pkt: where to describe it, normally sroce_skb_pkt(@skb)
 * @why: set to the reason when the packet is refused
 *
 * The checks run in this order, the first failure deciding the reason:
 * IP/UDP framing, length of a BTH and an ICRC, TVer, CNP, opcode, length
 * of the opcode's headers and an ICRC, the pad rules, no payload where
 * the opcode has none, P_Key. The ICRC is sroce_pkt_check_icrc()'s. The
 * headers up to the payload are made linear, which may reallocate the
 * skb head (pointers into it taken earlier go stale); skb->len and the
 * packet bytes are not changed. Nothing outside @skb, @pkt and @why is
 * looked at or changed.
 *
 * On success all of @pkt is set. On failure it is undefined, except that
 * from SROCE_DROP_TVER on the BTH fields (@opcode, @psn, @qpn, @pad,
 * @flags) and @net are set, so that a CNP can be traced to its QP.
 *
 * Context: any; does not sleep (allocates with GFP_ATOMIC if the headers
 * are not linear).
 *
 * Return: 0, or -EINVAL with *@why set.
 */
int sroce_pkt_parse_hdrs(struct sk_buff *skb, struct sroce_pkt *pkt,
			 enum sroce_drop_reason *why)
{
	if (!sroce_pkt_framing_ok(skb, pkt))
		return sroce_pkt_fail(why, SROCE_DROP_FRAMING);
	if (skb->len < SROCE_BTH_LEN + SROCE_ICRC_LEN)
		return sroce_pkt_fail(why, SROCE_DROP_SHORT);
	if (!pskb_may_pull(skb, SROCE_BTH_LEN))
		return sroce_pkt_fail(why, SROCE_DROP_NOMEM);
	sroce_pkt_read_bth(skb, pkt);
	sroce_pkt_read_ecn(skb, pkt);

	if (sroce_bth_tver(sroce_pkt_bth(skb)) != SROCE_TVER)
		return sroce_pkt_fail(why, SROCE_DROP_TVER);
	if (pkt->opcode == SROCE_OPCODE_ROCE_CNP)
		return sroce_pkt_fail(why, SROCE_DROP_CNP);
	pkt->info = sroce_opcode_lookup(pkt->opcode);
	if (!pkt->info)
		return sroce_pkt_fail(why, SROCE_DROP_OPCODE);

	pkt->hdr_len = sroce_opcode_hdr_len(pkt->info);
	if (skb->len < pkt->hdr_len + SROCE_ICRC_LEN)
		return sroce_pkt_fail(why, SROCE_DROP_HDR_LEN);
	if (!sroce_pkt_pad_ok(skb, pkt))
		return sroce_pkt_fail(why, SROCE_DROP_PAD);
	pkt->paylen = skb->len - pkt->hdr_len - pkt->pad - SROCE_ICRC_LEN;
	if (pkt->paylen && !(pkt->info->flags & SROCE_OPF_PAYLOAD))
		return sroce_pkt_fail(why, SROCE_DROP_PAYLOAD);
	if (!sroce_pkt_pkey_ok(skb))
		return sroce_pkt_fail(why, SROCE_DROP_PKEY);
	if (!pskb_may_pull(skb, pkt->hdr_len))
		return sroce_pkt_fail(why, SROCE_DROP_NOMEM);
	return 0;
}

/**
 * sroce_cnp_fill() - write a CNP's BTH and reserved bytes
 * @buf: SROCE_CNP_LEN bytes
 * @dest_qpn: the QP whose packets were marked: the flow's sender
 *
 * RoCEv2 annex A17.9.2: opcode 0x81, the default P_Key, BECN set, PSN 0,
 * nothing else set in the BTH, then 16 reserved bytes of zero; the ICRC
 * follows as for any packet. A ConnectX NIC's CNP has the same bytes.
 */
void sroce_cnp_fill(void *buf, u32 dest_qpn)
{
	struct sroce_bth *bth = buf;

	memset(buf, 0, SROCE_CNP_LEN);
	sroce_bth_set_opcode(bth, SROCE_OPCODE_ROCE_CNP);
	sroce_bth_set_pkey(bth, SROCE_DEFAULT_PKEY);
	sroce_bth_set_becn(bth, true);
	sroce_bth_set_destqp(bth, dest_qpn);
}

/**
 * sroce_pkt_cnp_ok() - is a packet sroce_pkt_parse_hdrs() called a CNP
 *	one to act upon?
 * @skb: the packet, skb->data at the BTH
 *
 * Only a CNP of the annex's length counts; its ICRC is checked apart.
 *
 * Return: true if it is one.
 */
bool sroce_pkt_cnp_ok(const struct sk_buff *skb)
{
	return skb->len == SROCE_CNP_LEN + SROCE_ICRC_LEN;
}

/**
 * sroce_pkt_check_icrc() - verify the ICRC of a packet
 * @skb: a packet sroce_pkt_parse_hdrs() accepted, as it left it
 * @why: set to the reason when the ICRC is wrong
 *
 * Context: any.
 * Return: 0, or -EINVAL with *@why set (SROCE_DROP_ICRC, or
 * SROCE_DROP_FRAMING when the IP and UDP headers do not frame it).
 */
int sroce_pkt_check_icrc(struct sk_buff *skb, enum sroce_drop_reason *why)
{
	int err = sroce_icrc_skb_check(skb);

	if (err == -EBADMSG)
		return sroce_pkt_fail(why, SROCE_DROP_ICRC);
	if (err)
		return sroce_pkt_fail(why, SROCE_DROP_FRAMING);
	return 0;
}

/**
 * sroce_pkt_parse() - validate a received RoCEv2 packet and describe it
 * @skb: as for sroce_pkt_parse_hdrs()
 * @pkt: where to describe it, normally sroce_skb_pkt(@skb)
 * @why: set to the reason when the packet is refused
 *
 * sroce_pkt_parse_hdrs() and then sroce_pkt_check_icrc(): the ICRC is
 * the last check.
 *
 * Context: any; does not sleep.
 * Return: 0, or -EINVAL with *@why set.
 */
int sroce_pkt_parse(struct sk_buff *skb, struct sroce_pkt *pkt,
		    enum sroce_drop_reason *why)
{
	return sroce_pkt_parse_hdrs(skb, pkt, why) ?:
	       sroce_pkt_check_icrc(skb, why);
}
