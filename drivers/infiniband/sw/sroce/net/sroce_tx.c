// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce packet building: allocates an outgoing packet with room for its
 * opcode's headers, payload and pad, fills the BTH, and sends it with
 * the device's packet counters. The requester builds its requests here,
 * the responders their ACKs and READ and atomic responses; none of them
 * needs another engine for it.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "mem/sroce_mr_io.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_icrc.h"
#include "wire/sroce_opcode.h"

/**
 * sroce_tx_len() - the length of a packet
 * @opcode: BTH opcode; must be in the opcode table
 * @paylen: payload bytes
 *
 * Return: its bytes from the BTH to the end of the ICRC.
 */
unsigned int sroce_tx_len(u8 opcode, u32 paylen)
{
	const struct sroce_opcode_info *info = sroce_opcode_lookup(opcode);

	return sroce_opcode_hdr_len(info) + paylen + sroce_pad_count(paylen) +
	       SROCE_ICRC_LEN;
}

/**
 * sroce_tx_alloc() - a packet to a given address and QP
 * @sdev: the sending device
 * @av: where the packet goes
 * @dest_qpn: BTH DestQP
 * @opcode: BTH opcode; must be in the opcode table
 * @psn: BTH PSN
 * @paylen: payload bytes (the pad is added)
 * @ackreq: BTH AckReq
 * @se: BTH SE
 *
 * The BTH is filled, the extension headers and the pad are zeroed; the
 * caller fills the headers and sroce_tx_payload().
 *
 * Context: any; allocates with GFP_ATOMIC.
 * Return: the skb, or NULL when memory is short.
 */
struct sk_buff *sroce_tx_alloc(struct sroce_dev *sdev,
			       const struct sroce_av *av, u32 dest_qpn,
			       u8 opcode, u32 psn, u32 paylen, bool ackreq,
			       bool se)
{
	const struct sroce_opcode_info *info = sroce_opcode_lookup(opcode);
	unsigned int hlen, pad = sroce_pad_count(paylen);
	struct sroce_bth *bth;
	struct sk_buff *skb;

	if (WARN_ON_ONCE(!info))
		return NULL;
	hlen = sroce_opcode_hdr_len(info);
	skb = sroce_xmit_alloc(sdev, av, hlen + paylen + pad, GFP_ATOMIC);
	if (!skb)
		return NULL;
	memset(skb->data, 0, hlen);
	memset(skb->data + hlen + paylen, 0, pad);

	bth = (struct sroce_bth *)skb->data;
	sroce_bth_set_opcode(bth, opcode);
	sroce_bth_set_se(bth, se);
	sroce_bth_set_pad(bth, pad);
	sroce_bth_set_tver(bth, SROCE_TVER);
	sroce_bth_set_pkey(bth, SROCE_DEFAULT_PKEY);
	sroce_bth_set_destqp(bth, dest_qpn);
	sroce_bth_set_ackreq(bth, ackreq);
	sroce_bth_set_psn(bth, psn);
	return skb;
}

static bool sroce_tx_lend_on = true;
module_param_named(tx_lend, sroce_tx_lend_on, bool, 0644);
MODULE_PARM_DESC(tx_lend,
		 "Send large payloads from the registered pages instead of a copy (default: on)");

/**
 * sroce_tx_lends() - should a payload be lent rather than copied?
 * @paylen: its bytes
 * @local: the packet stays in this host (sroce_route_local())
 *
 * Below SROCE_TX_LEND_MIN bytes (SROCE_TX_LEND_LOCAL_MIN for @local) the
 * page references and the packet's extra fragment cost more than the
 * copy; the module parameter tx_lend turns lending off altogether.
 *
 * Context: any.
 * Return: true to try sroce_tx_lend() first.
 */
bool sroce_tx_lends(u32 paylen, bool local)
{
	u32 min = local ? SROCE_TX_LEND_LOCAL_MIN : SROCE_TX_LEND_MIN;

	return paylen >= min && READ_ONCE(sroce_tx_lend_on);
}

/**
 * sroce_tx_span_max() - PSNs a packet of a connected QP may span
 * @mtu: the path MTU in bytes
 * @local: the QP's route ends at this host (sroce_route_local())
 *
 * A packet for a device of this host may carry the payload of several
 * consecutive packets of a message (sroce_xmit_may_span()), as many path
 * MTUs as SROCE_TX_SPAN_BYTES holds, and is always built of lent pages:
 * so none while lending is off.
 *
 * Context: any.
 * Return: the PSNs, at least 1.
 */
u32 sroce_tx_span_max(u32 mtu, bool local)
{
	if (!sroce_xmit_may_span(local) || !READ_ONCE(sroce_tx_lend_on))
		return 1;
	return max(SROCE_TX_SPAN_BYTES / mtu, 1U);
}

/**
 * sroce_tx_lend() - give a packet a payload of lent pages
 * @skb: from sroce_tx_alloc() with no payload
 * @frags: the payload, as sroce_lend_data() found it; each page reference
 *	passes to @skb
 * @n: pieces in @frags, 1..SROCE_TX_LEND_FRAGS
 * @paylen: their bytes
 *
 * The pieces become the packet's page fragments, and a fragment of the
 * packet's own follows them with the pad (zeroed) and the room for the
 * ICRC, which sroce_icrc_skb_fill() writes there: nothing is ever written
 * to a lent page. The fragments are marked shared (SKBFL_SHARED_FRAG):
 * their owner may change them while the packet is in flight, so a layer
 * that must see stable bytes copies them first.
 *
 * Context: any; allocates with GFP_ATOMIC.
 * Return: 0, or -ENOMEM; either way the references belong to @skb, and
 * freeing it drops them. -EINVAL (and a warning) for an @n out of range,
 * whose references are dropped here: @skb is left as it was.
 */
int sroce_tx_lend(struct sk_buff *skb, const struct sroce_mr_frag *frags,
		  unsigned int n, u32 paylen)
{
	unsigned int pad = sroce_pad_count(paylen), i;
	struct page *page;
	u8 *tail;

	if (WARN_ON_ONCE(!n || n > SROCE_TX_LEND_FRAGS)) {
		sroce_mr_frags_put(frags, n);
		return -EINVAL;
	}
	/* the ICRC room sroce_tx_alloc() left moves to the end */
	__skb_trim(skb, skb->len - SROCE_ICRC_LEN);
	for (i = 0; i < n; i++)
		skb_fill_page_desc(skb, i, frags[i].page, frags[i].off,
				   frags[i].len);
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	skb->len += paylen;
	skb->data_len += paylen;
	skb->truesize += paylen;
	sroce_bth_set_pad((struct sroce_bth *)skb->data, pad);

	tail = netdev_alloc_frag(pad + SROCE_ICRC_LEN);
	if (!tail)
		return -ENOMEM;
	memset(tail, 0, pad + SROCE_ICRC_LEN);
	page = virt_to_head_page(tail);
	skb_fill_page_desc(skb, n, page, tail - (u8 *)page_address(page),
			   pad + SROCE_ICRC_LEN);
	skb->len += pad + SROCE_ICRC_LEN;
	skb->data_len += pad + SROCE_ICRC_LEN;
	skb->truesize += pad + SROCE_ICRC_LEN;
	return 0;
}

/**
 * sroce_tx_hdr() - where a header of a packet being built goes
 * @skb: from sroce_tx_alloc()
 * @id: the header; the packet's opcode must have it
 *
 * Return: the first byte of the header.
 */
void *sroce_tx_hdr(struct sk_buff *skb, enum sroce_hdr_id id)
{
	const struct sroce_opcode_info *info;

	info = sroce_opcode_lookup(sroce_bth_opcode((void *)skb->data));
	return skb->data + sroce_opcode_hdr_offset(info, id);
}

/**
 * sroce_tx_payload() - where the payload of a packet being built goes
 * @skb: from sroce_tx_alloc()
 *
 * Return: the first payload byte, right after the opcode's headers.
 */
void *sroce_tx_payload(struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;

	info = sroce_opcode_lookup(sroce_bth_opcode((void *)skb->data));
	return skb->data + sroce_opcode_hdr_len(info);
}

/**
 * sroce_tx_send() - send a built packet and count it
 * @sdev: the sending device
 * @av: where the packet goes (as given to sroce_tx_alloc())
 * @dst: its route, or the ERR_PTR of a lookup that failed; consumed
 * @sport: the UDP source port
 * @skb: the packet; consumed
 *
 * Context: any.
 * Return: 0, or the error of sroce_xmit(). -ENOBUFS means a full queue
 * on the way out refused the packet: the caller sends it again after
 * SROCE_TX_BACKOFF rather than leave it to a retransmission timeout.
 * After any other error the packet is lost and retransmission recovers.
 */
int sroce_tx_send(struct sroce_dev *sdev, const struct sroce_av *av,
		  struct dst_entry *dst, u16 sport, struct sk_buff *skb)
{
	unsigned int len = skb->len;
	int err;

	err = sroce_xmit(av, dst, sport, skb);
	if (err) {
		sroce_stats_inc(sdev, SROCE_CNT_SEND_ERR);
		return err;
	}
	sroce_stats_inc(sdev, SROCE_CNT_SENT_PKTS);
	sroce_stats_add(sdev, SROCE_CNT_SENT_BYTES, len);
	return 0;
}
