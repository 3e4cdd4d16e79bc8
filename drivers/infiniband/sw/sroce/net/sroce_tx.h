/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce packet building: the BTH and headers of an outgoing RoCEv2
 * packet, for the requester and the responders alike.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TX_H
#define SROCE_TX_H

#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/types.h>

#include "wire/sroce_opcode.h"

struct dst_entry;
struct sroce_av;
struct sroce_dev;
struct sroce_mr_frag;

/*
 * Page fragments of lent payload a packet may carry: one skb fragment is
 * the packet's own, for the pad and the ICRC.
 */
#define SROCE_TX_LEND_FRAGS	(MAX_SKB_FRAGS - 1)

/*
 * Payload bytes from which a packet carries lent pages rather than a
 * copy (sroce_tx_lends()). Lending paid for packets of 4 KiB; for those
 * of 1 KiB it did not, and it made 4 KiB messages at path MTU 1024
 * slower (Documentation/infiniband/sroce.rst, "Payloads without copies").
 */
#define SROCE_TX_LEND_MIN	2048

/*
 * The same for a packet that stays in this host (same-host delivery):
 * there the lent pages are read once, by the receiver's scatter, and
 * lending saves the sender's copy of every payload of a path MTU of
 * 1024. See "Same-host delivery" in sroce.rst for the measurement.
 */
#define SROCE_TX_LEND_LOCAL_MIN	1024

/*
 * Payload of a packet that spans several PSNs (sroce_tx_span_max()): a
 * range this long lies in at most SROCE_TX_LEND_FRAGS pages however it
 * is aligned, and the packet fits a train (SROCE_TRAIN_MAX_BYTES) with
 * its headers.
 */
#define SROCE_TX_SPAN_BYTES	((SROCE_TX_LEND_FRAGS - 1) * SZ_4K)

/*
 * Jiffies a QP engine waits before it sends a packet again that a full
 * queue on the way out (the qdisc, or a veth peer's backlog) refused.
 */
#define SROCE_TX_BACKOFF	1

unsigned int sroce_tx_len(u8 opcode, u32 paylen);
struct sk_buff *sroce_tx_alloc(struct sroce_dev *sdev,
			       const struct sroce_av *av, u32 dest_qpn,
			       u8 opcode, u32 psn, u32 paylen, bool ackreq,
			       bool se);
bool sroce_tx_lends(u32 paylen, bool local);
u32 sroce_tx_span_max(u32 mtu, bool local);
int sroce_tx_lend(struct sk_buff *skb, const struct sroce_mr_frag *frags,
		  unsigned int n, u32 paylen);
void *sroce_tx_hdr(struct sk_buff *skb, enum sroce_hdr_id id);
void *sroce_tx_payload(struct sk_buff *skb);
int sroce_tx_send(struct sroce_dev *sdev, const struct sroce_av *av,
		  struct dst_entry *dst, u16 sport, struct sk_buff *skb);

#endif /* SROCE_TX_H */
