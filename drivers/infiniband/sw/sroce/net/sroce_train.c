// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce multi-packet transmit.
 *
 * The cost of sending a RoCEv2 packet is mostly the packet, not its
 * bytes: the route, the IP output path, the qdisc, the netdev and, on a
 * veth, the receiver's backlog and IP input all run once per skb. So the
 * requester collects consecutive packets of one message in a train and
 * hands them to the stack as one skb:
 *
 *  - Every packet is complete on its own: its BTH and extension headers,
 *    payload, pad and ICRC, and in front of them its own UDP and IP
 *    headers, with the lengths of that packet alone and, for IPv4, the
 *    identification the stack's segmentation will give it (the first
 *    packet's plus its index). Its ICRC is computed over those headers.
 *  - The first packet is the skb's head; the others hang off its
 *    frag_list, skb->data at their BTH, their headers in front of it.
 *  - The head is marked SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST with the first
 *    packet's UDP payload as gso_size: the stack's segmentation
 *    (__udp_gso_segment_list()) then cuts it back into exactly these
 *    packets. It copies the link header in front of each, keeps each
 *    packet's own IP and UDP headers, and rewrites only fields that it
 *    sets to the values they already hold (IP total length, checksum and
 *    identification; the first packet's UDP length).
 *
 * A netdev that takes SKB_GSO_FRAGLIST (veth, bridges, bonds) forwards
 * the train whole, and the receiver's UDP stack segments it before a
 * socket that did not ask for GSO skbs sees it (udp_queue_rcv_skb()), so
 * rdma_rxe gets ordinary packets. Any other netdev gets the packets from
 * the software segmentation in front of it: on the wire they are the
 * frames sroce_xmit() would have sent one by one.
 *
 * A train goes out packet by packet when it has a single packet and when
 * the netdev takes smaller GSO skbs. One whose route ends at this host
 * never becomes a GSO skb: its packets are handed to the receiving sroce
 * device in one call (sroce_xmit_local_list()), still one by one.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "net/sroce_train.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"

static bool sroce_tx_gso = true;
module_param_named(tx_gso, sroce_tx_gso, bool, 0644);
MODULE_PARM_DESC(tx_gso,
		 "Send consecutive packets of a message as one GSO skb (default: on)");

/* IPv6 and UDP header in front of a train: what SROCE_TRAIN_MAX_BYTES spares */
#define SROCE_TRAIN_HDRS	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))
static_assert(SROCE_TRAIN_MAX_BYTES + SROCE_TRAIN_HDRS <= U16_MAX);
/* a spanning packet with the longest request headers fits a train */
static_assert(SROCE_TX_SPAN_BYTES + 64 <= SROCE_TRAIN_MAX_BYTES);

/**
 * sroce_train_init() - an empty train
 * @t: the train
 *
 * It holds one packet when the tx_gso parameter is off.
 */
void sroce_train_init(struct sroce_train *t)
{
	t->head = NULL;
	t->tail = NULL;
	t->n = 0;
	t->bytes = 0;
	t->max = READ_ONCE(sroce_tx_gso) ? U16_MAX : 1;
	t->local_only = false;
}

/**
 * sroce_train_full() - is there no room for another packet?
 * @t: the train
 * @len: the next packet's length, BTH to ICRC
 *
 * Return: true if a packet of @len bytes must wait for the next train.
 */
bool sroce_train_full(const struct sroce_train *t, unsigned int len)
{
	return t->n >= t->max || t->bytes + len > SROCE_TRAIN_MAX_BYTES;
}

/**
 * sroce_train_add() - append a packet
 * @t: the train
 * @skb: from sroce_xmit_alloc(), complete but for its ICRC; the train
 *	owns it now
 */
void sroce_train_add(struct sroce_train *t, struct sk_buff *skb)
{
	skb->next = NULL;
	if (t->tail)
		t->tail->next = skb;
	else
		t->head = skb;
	t->tail = skb;
	t->n++;
	t->bytes += skb->len;
}

/* Take the packets out of @t: it is empty again. */
static struct sk_buff *sroce_train_take(struct sroce_train *t)
{
	struct sk_buff *list = t->head;

	t->head = NULL;
	t->tail = NULL;
	t->n = 0;
	t->bytes = 0;
	return list;
}

/**
 * sroce_train_purge() - free the packets of a train that will not leave
 * @t: the train; empty afterwards
 */
void sroce_train_purge(struct sroce_train *t)
{
	kfree_skb_list(sroce_train_take(t));
}

/* Hang the packets after @head off its frag_list, data at their BTHs. */
static void sroce_train_couple(struct sk_buff *head, unsigned int hlen)
{
	struct sk_buff *skb;

	skb_shinfo(head)->frag_list = head->next;
	head->next = NULL;
	skb_walk_frags(head, skb) {
		__skb_pull(skb, hlen);
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
}

/**
 * sroce_train_build() - one GSO skb of a train's packets
 * @t: the train, at least two packets; empty afterwards
 * @av: the destination
 * @sport: the UDP source port
 * @ip_id: the IPv4 identification of the first packet; packet i gets
 *	@ip_id + i, as the stack's segmentation numbers them
 *
 * Context: any.
 * Return: the skb, skb->data at the head's IP header, lengths in its IP
 * and UDP headers covering the whole train; or an ERR_PTR of
 * sroce_xmit_hdrs() (the packets are freed).
 */
struct sk_buff *sroce_train_build(struct sroce_train *t,
				  const struct sroce_av *av, u16 sport,
				  u16 ip_id)
{
	unsigned int n = t->n, hlen, paylen;
	struct sk_buff *head, *skb;
	int err = 0;
	u16 i = 0;

	head = sroce_train_take(t);
	for (skb = head; skb && !err; skb = skb->next)
		err = sroce_xmit_hdrs(skb, av, sport, ip_id + i++,
				      SROCE_XMIT_WIRE);
	if (err) {
		kfree_skb_list(head);
		return ERR_PTR(err);
	}

	hlen = skb_transport_offset(head) + sizeof(struct udphdr);
	paylen = head->len - hlen;
	sroce_train_couple(head, hlen);
	udp_hdr(head)->len = htons(head->len - skb_transport_offset(head));
	if (head->protocol == htons(ETH_P_IP)) {
		ip_hdr(head)->tot_len = htons(head->len);
		ip_send_check(ip_hdr(head));
	} else {
		ipv6_hdr(head)->payload_len =
			htons(head->len - sizeof(struct ipv6hdr));
	}

	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(head)->gso_size = paylen;
	skb_shinfo(head)->gso_segs = n;
	/* as a GRO-built train: segmentation must not touch the checksum */
	head->ip_summed = CHECKSUM_UNNECESSARY;
	return head;
}

/* May @dev take @t as one GSO skb? */
static bool sroce_train_fits(const struct sroce_train *t,
			     const struct net_device *dev)
{
	return t->bytes + SROCE_TRAIN_HDRS <= READ_ONCE(dev->gso_max_size) &&
	       t->n <= READ_ONCE(dev->gso_max_segs);
}

/* Count @n packets of @bytes sent and @errs refused. */
static void sroce_train_count(struct sroce_dev *sdev, unsigned int n,
			      unsigned int bytes, unsigned int errs)
{
	if (n) {
		sroce_stats_add(sdev, SROCE_CNT_SENT_PKTS, n);
		sroce_stats_add(sdev, SROCE_CNT_SENT_BYTES, bytes);
	}
	if (errs)
		sroce_stats_add(sdev, SROCE_CNT_SEND_ERR, errs);
}

/* The packets of @t one by one on @dst (consumed); see sroce_train_send(). */
static int sroce_train_send_each(struct sroce_dev *sdev,
				 const struct sroce_av *av, u16 sport,
				 struct sroce_train *t, struct dst_entry *dst)
{
	unsigned int n = t->n, sent = 0, bytes = 0, len;
	struct sk_buff *skb, *next;
	int err = 0;

	for (skb = sroce_train_take(t); skb; skb = next) {
		next = skb->next;
		skb->next = NULL;
		len = skb->len;
		err = sroce_xmit_hdrs(skb, av, sport, sroce_xmit_ip_ids(av, 1),
				      SROCE_XMIT_WIRE);
		if (err) {
			kfree_skb(skb);
			break;
		}
		err = sroce_xmit_out(av, dst_clone(dst), skb, SROCE_XMIT_WIRE);
		if (err)
			break;
		sent++;
		bytes += len;
	}
	kfree_skb_list(next);
	dst_release(dst);
	sroce_train_count(sdev, sent, bytes, n - sent);
	/* a refusal after the first packet is a loss like any other */
	return sent ? 0 : err;
}

/*
 * The packets of @t to a device of this host, in one hand-off; see
 * sroce_train_send(). A packet whose headers cannot be completed (its
 * ICRC, when checked) is lost with those after it.
 */
static int sroce_train_send_local(struct sroce_dev *sdev,
				  const struct sroce_av *av, u16 sport,
				  struct sroce_train *t,
				  enum sroce_xmit_how how)
{
	unsigned int n = t->n, sent = 0, bytes = 0, len;
	struct sk_buff *list = sroce_train_take(t), *skb, *last = NULL;
	int err = 0;

	for (skb = list; skb; last = skb, skb = skb->next) {
		len = skb->len;
		err = sroce_xmit_hdrs(skb, av, sport, 0, how);
		if (err)
			break;
		sent++;
		bytes += len;
	}
	if (skb) {
		if (last)
			last->next = NULL;
		else
			list = NULL;
		kfree_skb_list(skb);
	}
	if (list && sroce_xmit_local_list(av, list,
					  how == SROCE_XMIT_LOCAL)) {
		err = -EHOSTUNREACH;
		sent = 0;
		bytes = 0;
	}
	sroce_train_count(sdev, sent, bytes, n - sent);
	return sent ? 0 : err;
}

/**
 * sroce_train_send() - send the packets of a train
 * @sdev: the sending device
 * @av: the destination
 * @dst: its route, or the ERR_PTR of a lookup that failed; consumed
 * @sport: the UDP source port
 * @t: the train, not empty; empty afterwards
 *
 * Counts them as sroce_tx_send() counts a packet, and a train that left
 * as one skb in sent_gso.
 *
 * Context: any; does not sleep.
 * Return: 0 when the train left, whole or in part: a packet the stack
 * refused after the first is lost as on the wire, for the transport to
 * recover. -ENOBUFS when a full queue on the way out refused it before
 * any packet left: the caller sends it all again later. -EHOSTUNREACH
 * when a train of @t->local_only finds its route leaving this host or
 * its ICRC forced (it is dropped). Another -errno of sroce_xmit() when
 * none could be sent.
 */
int sroce_train_send(struct sroce_dev *sdev, const struct sroce_av *av,
		     struct dst_entry *dst, u16 sport, struct sroce_train *t)
{
	unsigned int n = t->n, bytes = t->bytes;
	enum sroce_xmit_how how;
	struct sk_buff *skb;
	int err;

	if (IS_ERR(dst)) {
		sroce_train_purge(t);
		sroce_train_count(sdev, 0, 0, n);
		return PTR_ERR(dst);
	}
	how = sroce_xmit_how_now(dst);
	if (t->local_only && how != SROCE_XMIT_LOCAL) {
		/* lost, and sent again in packets the wire takes */
		dst_release(dst);
		sroce_train_purge(t);
		sroce_train_count(sdev, 0, 0, n);
		return -EHOSTUNREACH;
	}
	if (how != SROCE_XMIT_WIRE) {
		dst_release(dst);
		return sroce_train_send_local(sdev, av, sport, t, how);
	}
	if (n < 2 || !sroce_train_fits(t, dst->dev))
		return sroce_train_send_each(sdev, av, sport, t, dst);

	skb = sroce_train_build(t, av, sport, sroce_xmit_ip_ids(av, n));
	if (IS_ERR(skb)) {
		dst_release(dst);
		sroce_train_count(sdev, 0, 0, n);
		return PTR_ERR(skb);
	}
	err = sroce_xmit_out(av, dst, skb, SROCE_XMIT_WIRE);
	if (err) {
		sroce_train_count(sdev, 0, 0, n);
		return err;
	}
	sroce_train_count(sdev, n, bytes, 0);
	sroce_stats_inc(sdev, SROCE_CNT_SENT_GSO);
	return 0;
}
