/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Received RoCEv2 packets: validation of the wire format and the parsed
 * description the transport works from, kept in skb->cb.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_PKT_H
#define SROCE_PKT_H

#include <linux/build_bug.h>
#include <linux/skbuff.h>
#include <linux/stddef.h>
#include <linux/types.h>

#include "wire/sroce_hdr.h"
#include "wire/sroce_opcode.h"

/* BTH opcode of a RoCEv2 Congestion Notification Packet (annex A17.9). */
#define SROCE_OPCODE_ROCE_CNP	0x81
/* A CNP: its BTH and 16 reserved bytes, then the ICRC. */
#define SROCE_CNP_RSVD_LEN	16
#define SROCE_CNP_LEN		(SROCE_BTH_LEN + SROCE_CNP_RSVD_LEN)

/*
 * Why a received packet was dropped. The first group is found by
 * sroce_pkt_parse() from the packet alone; the second needs device state
 * and is the receive path's to report.
 */
enum sroce_drop_reason {
	SROCE_DROP_FRAMING,	/* IP/UDP encapsulation not RoCEv2's */
	SROCE_DROP_SHORT,	/* shorter than a BTH and an ICRC */
	SROCE_DROP_TVER,	/* BTH TVer other than 0 */
	SROCE_DROP_CNP,		/* a CNP: well formed, but not for a QP */
	SROCE_DROP_OPCODE,	/* opcode sroce does not implement */
	SROCE_DROP_HDR_LEN,	/* too short for the opcode's headers */
	SROCE_DROP_PAD,		/* PadCnt or length against the pad rules */
	SROCE_DROP_PAYLOAD,	/* payload after an opcode that has none */
	SROCE_DROP_PKEY,	/* P_Key does not match the default one */
	SROCE_DROP_ICRC,	/* ICRC mismatch */
	SROCE_DROP_NOMEM,	/* headers could not be made linear */
	SROCE_DROP_NO_QP,	/* DestQP names no QP */
	SROCE_DROP_QP_STATE,	/* QP not in a state to receive it */
	SROCE_DROP_QKEY,	/* UD: Q_Key mismatch */
	SROCE_DROP_ADDR,	/* RC/UC: IP addresses are not the QP's peer */
	SROCE_DROP_NR
};

/* IP version a packet came over (struct sroce_pkt.net). */
enum sroce_pkt_net {
	SROCE_PKT_IPV4 = 4,
	SROCE_PKT_IPV6 = 6,
};

/* Bits of struct sroce_pkt.flags, copied from the BTH but the last. */
#define SROCE_PKT_ACKREQ	BIT(0)	/* AckReq */
#define SROCE_PKT_SOLICITED	BIT(1)	/* SE */
#define SROCE_PKT_MIGREQ	BIT(2)	/* MigReq */
#define SROCE_PKT_FECN		BIT(3)	/* FECN: congestion seen on the way */
#define SROCE_PKT_BECN		BIT(4)	/* BECN */
/* Not from the BTH: its ICRC is yet to be checked (sroce_rcv.c). */
#define SROCE_PKT_ICRC_LATER	BIT(5)
/*
 * Not from the BTH: handed over by this host's transmit path, never on a
 * wire; it may span several PSNs (transport/sroce_resp.c).
 */
#define SROCE_PKT_LOCAL		BIT(6)
/* The IP header's ECN field says CE: congestion on the way (RFC 3168). */
#define SROCE_PKT_CE		BIT(7)

/**
 * struct sroce_pkt - a received packet, as sroce_pkt_parse() found it
 * @info: opcode table entry; NULL for a CNP
 * @psn: BTH PSN
 * @qpn: BTH DestQP
 * @paylen: payload bytes, without the pad and the ICRC
 * @opcode: BTH OpCode
 * @hdr_len: bytes of the BTH and the extension headers; the payload
 *	starts this far from skb->data
 * @pad: BTH PadCnt
 * @net: enum sroce_pkt_net
 * @flags: SROCE_PKT_* bits
 * @mark: a note of the engine whose queue holds the packet (the
 *	responder's: SROCE_RESP_MARK_*); zero from parsing
 *
 * It lives in skb->cb (sroce_skb_pkt()) from parsing until the skb is
 * freed or handed on; the extension headers sit at skb->data, linear,
 * the payload may be in fragments (read it with skb_copy_bits()).
 */
struct sroce_pkt {
	const struct sroce_opcode_info *info;
	u32 psn;
	u32 qpn;
	u32 paylen;
	u8 opcode;
	u8 hdr_len;
	u8 pad;
	u8 net;
	u8 flags;
	u8 mark;
};

/**
 * sroce_skb_pkt() - the parsed description kept in an skb's control block
 * @skb: a received packet owned by sroce
 *
 * Return: skb->cb as a struct sroce_pkt.
 */
static inline struct sroce_pkt *sroce_skb_pkt(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_pkt) > sizeof_field(struct sk_buff, cb));
	return (struct sroce_pkt *)skb->cb;
}

int sroce_pkt_parse_hdrs(struct sk_buff *skb, struct sroce_pkt *pkt,
			 enum sroce_drop_reason *why);
void sroce_cnp_fill(void *buf, u32 dest_qpn);
bool sroce_pkt_cnp_ok(const struct sk_buff *skb);
int sroce_pkt_check_icrc(struct sk_buff *skb, enum sroce_drop_reason *why);
int sroce_pkt_parse(struct sk_buff *skb, struct sroce_pkt *pkt,
		    enum sroce_drop_reason *why);
const char *sroce_drop_reason_name(enum sroce_drop_reason why);

static inline struct sroce_bth *sroce_pkt_bth(const struct sk_buff *skb)
{
	return (struct sroce_bth *)skb->data;
}

/**
 * sroce_pkt_hdr() - an extension header of a parsed packet
 * @skb: the packet, skb->data still at its BTH
 * @pkt: what sroce_pkt_parse() made of it
 * @id: the header
 *
 * Return: a pointer to the header in the linear part of @skb, or NULL if
 * the opcode has no such header.
 */
static inline void *sroce_pkt_hdr(const struct sk_buff *skb,
				  const struct sroce_pkt *pkt,
				  enum sroce_hdr_id id)
{
	if (!pkt->info || !sroce_opcode_has_hdr(pkt->info, id))
		return NULL;
	return skb->data + sroce_opcode_hdr_offset(pkt->info, id);
}

static inline struct sroce_reth *
sroce_pkt_reth(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_RETH);
}

static inline struct sroce_aeth *
sroce_pkt_aeth(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_AETH);
}

static inline struct sroce_atmeth *
sroce_pkt_atmeth(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_ATMETH);
}

static inline struct sroce_atmack *
sroce_pkt_atmack(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_ATMACK);
}

static inline struct sroce_deth *
sroce_pkt_deth(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_DETH);
}

static inline struct sroce_immdt *
sroce_pkt_immdt(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_IMMDT);
}

static inline struct sroce_ieth *
sroce_pkt_ieth(const struct sk_buff *skb, const struct sroce_pkt *pkt)
{
	return sroce_pkt_hdr(skb, pkt, SROCE_HDR_IETH);
}

#endif /* SROCE_PKT_H */
