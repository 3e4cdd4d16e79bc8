/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce multi-packet transmit: consecutive packets of one message handed
 * to the IP stack as one UDP GSO skb.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TRAIN_H
#define SROCE_TRAIN_H

#include <linux/skbuff.h>
#include <linux/types.h>

struct dst_entry;
struct sroce_av;
struct sroce_dev;

/*
 * Bytes from the first BTH to the last ICRC of a train: with the IPv6
 * and UDP headers in front, the IP packet the stack sees stays within its
 * 16-bit length field.
 */
#define SROCE_TRAIN_MAX_BYTES	(U16_MAX - 48)

/**
 * struct sroce_train - packets waiting to leave together
 * @head: the first; the others hang off skb->next
 * @tail: the last
 * @n: how many
 * @bytes: their lengths (BTH to ICRC) added up
 * @max: packets it may hold: 1 when multi-packet transmit is off
 * @local_only: it holds a packet that spans several PSNs, which only a
 *	device of this host may receive (sroce_xmit_may_span()): when its
 *	route no longer ends here without an ICRC, the train is dropped
 */
struct sroce_train {
	struct sk_buff *head;
	struct sk_buff *tail;
	unsigned int n;
	unsigned int bytes;
	unsigned int max;
	bool local_only;
};

void sroce_train_init(struct sroce_train *t);
bool sroce_train_full(const struct sroce_train *t, unsigned int len);
void sroce_train_add(struct sroce_train *t, struct sk_buff *skb);
void sroce_train_purge(struct sroce_train *t);
struct sk_buff *sroce_train_build(struct sroce_train *t,
				  const struct sroce_av *av, u16 sport,
				  u16 ip_id);
int sroce_train_send(struct sroce_dev *sdev, const struct sroce_av *av,
		     struct dst_entry *dst, u16 sport, struct sroce_train *t);

#endif /* SROCE_TRAIN_H */
