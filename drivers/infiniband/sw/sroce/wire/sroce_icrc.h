/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 invariant CRC (IBA vol 1, annex A17: RoCEv2).
 *
 * The ICRC is a CRC-32 (the Ethernet one) over the IP packet with the
 * fields that routers may change forced to all ones, preceded by eight
 * 0xff bytes that stand in for the InfiniBand LRH. It occupies the last
 * four bytes of the UDP payload and is sent least significant byte first.
 *
 * Packets are handed over as IPv4 (no options, not fragmented) or IPv6 (no
 * extension headers) packets carrying UDP; where the ICRC sits is taken
 * from the UDP length, which must fit in the IP packet.
 */

#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <linux/types.h>

struct sk_buff;

#define SROCE_ICRC_LEN		4

int sroce_icrc_init(void);
void sroce_icrc_exit(void);

int sroce_icrc_calc(const void *l3, unsigned int len, u32 *icrc);
int sroce_icrc_fill(void *l3, unsigned int len);
bool sroce_icrc_valid(const void *l3, unsigned int len);

int sroce_icrc_skb_fill(struct sk_buff *skb);
int sroce_icrc_skb_check(struct sk_buff *skb);

/*
 * The two CRC-32 implementations sroce_icrc_init() chooses between. Only
 * the KUnit tests name them; everything else uses the chosen one.
 */
enum sroce_crc_engine {
	SROCE_CRC_LIB,		/* crc32_le() of lib/crc32.c */
	SROCE_CRC_SHASH,	/* the crypto API's "crc32" shash */
};

bool sroce_crc_engine_ready(enum sroce_crc_engine engine);
u32 sroce_crc32(enum sroce_crc_engine engine, u32 crc, const void *p,
		unsigned int len);
int sroce_icrc_calc_engine(enum sroce_crc_engine engine, const void *l3,
			   unsigned int len, u32 *icrc);

#endif /* SROCE_ICRC_H */
