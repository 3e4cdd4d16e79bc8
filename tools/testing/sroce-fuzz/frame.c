// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pktfuzz: laying out RoCEv2 frames (Ethernet, IPv4 or IPv6, UDP, BTH,
 * extension headers, payload, pad, ICRC) and damaging them.
 *
 * The ICRC (IBA annex A17.3.3) is a CRC-32 over the IP, UDP and BTH
 * headers with their variant fields masked to ones (IPv4 TOS, TTL and
 * checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum; BTH byte 4), preceded by eight 0xff bytes for the LRH that
 * RoCEv2 lacks, and then the rest of the packet up to the ICRC; it is
 * sent least significant byte first.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <string.h>

#include "pktfuzz.h"

#define ETH_LEN		14
#define IP4_LEN		20
#define IP6_LEN		40
#define UDP_LEN		8
#define BTH_LEN		12
#define ICRC_LEN	4

static uint32_t crc_table[256];

static void crc_table_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? 0xedb88320u : 0);
		crc_table[i] = c;
	}
}

/* The reflected CRC-32 step of crc32_le(): no inversion in or out. */
uint32_t fz_crc32(uint32_t crc, const void *p, size_t len)
{
	const uint8_t *b = p;

	if (!crc_table[1])
		crc_table_init();
	while (len--)
		crc = (crc >> 8) ^ crc_table[(crc ^ *b++) & 0xff];
	return crc;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

/*
 * The ICRC of the IP packet at @ip, which holds @avail bytes; the UDP
 * length says where the ICRC field is. Returns its offset from @ip, or -1
 * if the headers do not fit.
 */
static int icrc_compute(const uint8_t *ip, unsigned int avail, uint32_t *icrc)
{
	uint8_t m[IP6_LEN + UDP_LEN + BTH_LEN];
	unsigned int iph, hl, end;
	uint32_t crc;

	iph = (ip[0] >> 4) == 6 ? IP6_LEN : IP4_LEN;
	hl = iph + UDP_LEN + BTH_LEN;
	if (avail < hl)
		return -1;
	end = iph + get16(ip + iph + 4);
	if (end < hl + ICRC_LEN || end > avail)
		return -1;
	end -= ICRC_LEN;
	memcpy(m, ip, hl);
	if (iph == IP4_LEN) {
		m[1] = 0xff;
		m[8] = 0xff;
		m[10] = m[11] = 0xff;
	} else {
		m[0] |= 0x0f;
		m[1] = m[2] = m[3] = 0xff;
		m[7] = 0xff;
	}
	m[iph + 6] = m[iph + 7] = 0xff;
	m[iph + UDP_LEN + 4] = 0xff;
	crc = fz_crc32(0xffffffffu, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	crc = fz_crc32(crc, m, hl);
	crc = fz_crc32(crc, ip + hl, end - hl);
	*icrc = ~crc;
	return end;
}

static void icrc_store(uint8_t *ip, unsigned int avail)
{
	uint32_t v;
	int at = icrc_compute(ip, avail, &v);

	if (at < 0)
		return;
	ip[at] = v;
	ip[at + 1] = v >> 8;
	ip[at + 2] = v >> 16;
	ip[at + 3] = v >> 24;
}

/*
 * A CNP a ConnectX-4 Lx sent (the frame shared/vectors/icrc_reference.py
 * checks): our ICRC must be the one on the wire, or nothing we send would
 * get past the device's ICRC check.
 */
int fz_icrc_selftest(void)
{
	static const uint8_t cnp[] = {
		0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
		0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
		0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00,
		0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x82, 0xfd, 0x00, 0x2a,
	};
	uint32_t v;

	if (icrc_compute(cnp, sizeof(cnp), &v) != (int)sizeof(cnp) - ICRC_LEN)
		return -1;
	return v == 0x2a00fd82u ? 0 : -1;
}

/* The extension headers IBA gives an opcode, 0 for none or unknown. */
unsigned int fz_hdrs_of(uint8_t opcode)
{
	static const unsigned int rcuc[0x18] = {
		[0x03] = FZ_H_IMMDT, [0x05] = FZ_H_IMMDT,
		[0x06] = FZ_H_RETH, [0x09] = FZ_H_IMMDT,
		[0x0a] = FZ_H_RETH, [0x0b] = FZ_H_RETH | FZ_H_IMMDT,
		[0x0c] = FZ_H_RETH, [0x0d] = FZ_H_AETH,
		[0x0f] = FZ_H_AETH, [0x10] = FZ_H_AETH,
		[0x11] = FZ_H_AETH, [0x12] = FZ_H_AETH | FZ_H_ATMACK,
		[0x13] = FZ_H_ATMETH, [0x14] = FZ_H_ATMETH,
		[0x16] = FZ_H_IETH, [0x17] = FZ_H_IETH,
	};

	if (opcode < 0x18)
		return rcuc[opcode];
	if (opcode >= 0x20 && opcode < 0x2c)
		return rcuc[opcode - 0x20];
	if (opcode == OP_UD_SEND_ONLY)
		return FZ_H_DETH;
	if (opcode == OP_UD_SEND_ONLY_IMM)
		return FZ_H_DETH | FZ_H_IMMDT;
	if (opcode == OP_CNP)
		return FZ_H_CNP;
	return 0;
}

unsigned int fz_hdr_len(unsigned int hdrs)
{
	static const unsigned int len[] = { 8, 16, 28, 4, 8, 4, 4, 16 };
	unsigned int i, n = BTH_LEN;

	for (i = 0; i < 8; i++)
		if (hdrs & (1u << i))
			n += len[i];
	return n;
}

/* The extension headers of @p at @q; returns the bytes written. */
static unsigned int put_ext(uint8_t *q, const struct fz_pkt *p)
{
	uint8_t *s = q;

	if (p->hdrs & FZ_H_DETH) {
		put32(q, p->qkey);
		put32(q + 4, p->src_qp & 0xffffff);
		q += 8;
	}
	if (p->hdrs & FZ_H_RETH) {
		put64(q, p->va);
		put32(q + 8, p->rkey);
		put32(q + 12, p->dma_len);
		q += 16;
	}
	if (p->hdrs & FZ_H_ATMETH) {
		put64(q, p->va);
		put32(q + 8, p->rkey);
		put64(q + 12, p->swap_add);
		put64(q + 20, p->compare);
		q += 28;
	}
	if (p->hdrs & FZ_H_AETH) {
		put32(q, p->aeth);
		q += 4;
	}
	if (p->hdrs & FZ_H_ATMACK) {
		put64(q, p->atmack);
		q += 8;
	}
	if (p->hdrs & FZ_H_IMMDT) {
		put32(q, p->imm);
		q += 4;
	}
	if (p->hdrs & FZ_H_IETH) {
		put32(q, p->imm ^ 0xffffffffu);
		q += 4;
	}
	if (p->hdrs & FZ_H_CNP) {
		memset(q, 0, 16);
		q += 16;
	}
	return q - s;
}

static void put_bth(uint8_t *q, const struct fz_pkt *p)
{
	q[0] = p->opcode;
	q[1] = (p->flags & 0xc0) | (p->pad & 3) << 4 | (p->tver & 0xf);
	put16(q + 2, p->pkey);
	put32(q + 4, p->qpn & 0xffffff);
	put32(q + 8, (p->ackreq ? 0x80000000u : 0) | (p->psn & 0xffffff));
}

static uint16_t ip4_csum(const uint8_t *h)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i < IP4_LEN; i += 2)
		if (i != 10)
			s += get16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

/* Ethernet and IP headers for an IP packet of @iplen bytes. */
static unsigned int put_l2l3(struct fz *f, const struct fz_pkt *p,
			     unsigned int iplen)
{
	uint8_t *e = f->frame, *ip = e + ETH_LEN;
	uint32_t d4 = ntohl(f->dev4.s_addr);

	if (p->mcast && !p->ipv6) {
		d4 = FZ_MCAST4;
		memcpy(e, "\x01\x00\x5e", 3);
		e[3] = (d4 >> 16) & 0x7f;
		e[4] = d4 >> 8;
		e[5] = d4;
	} else {
		memcpy(e, f->dev_mac, 6);
	}
	memcpy(e + 6, f->peer_mac, 6);
	if (p->ipv6) {
		put16(e + 12, 0x86dd);
		memset(ip, 0, IP6_LEN);
		ip[0] = 0x60 | p->tos >> 4;
		ip[1] = p->tos << 4;
		put16(ip + 4, iplen - IP6_LEN);
		ip[6] = IPPROTO_UDP;
		ip[7] = 64;
		memcpy(ip + 8, &f->peer6, 16);
		memcpy(ip + 24, &f->dev6, 16);
		return ETH_LEN + IP6_LEN;
	}
	put16(e + 12, 0x0800);
	memset(ip, 0, IP4_LEN);
	ip[0] = 0x45;
	ip[1] = p->tos;
	put16(ip + 2, iplen);
	put16(ip + 4, (uint16_t)f->sent);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &f->peer4, 4);
	if (p->src_host)
		ip[15] = p->src_host;
	put32(ip + 16, d4);
	put16(ip + 10, ip4_csum(ip));
	return ETH_LEN + IP4_LEN;
}

/* Apply the length lies of @l to a frame of @len bytes; returns @len. */
static int apply_lie(struct fz *f, const struct fz_pkt *p,
		     const struct fz_lie *l, int len)
{
	uint8_t *ip = f->frame + ETH_LEN;
	unsigned int iph = p->ipv6 ? IP6_LEN : IP4_LEN;
	uint8_t *udp = ip + iph;

	if (l->flip_bit >= 0 && ETH_LEN + iph + UDP_LEN + l->flip_bit / 8 < (unsigned int)len)
		udp[UDP_LEN + l->flip_bit / 8] ^= 1 << (l->flip_bit % 8);
	if (l->truncate_at > 0 && l->truncate_at < len) {
		len = l->truncate_at;
		if (l->fix_lengths && len >= ETH_LEN + (int)iph + UDP_LEN) {
			put16(udp + 4, len - ETH_LEN - iph);
			put16(ip + (p->ipv6 ? 4 : 2), len - ETH_LEN -
			      (p->ipv6 ? IP6_LEN : 0));
		}
	}
	if (len >= ETH_LEN + (int)iph + UDP_LEN) {
		if (l->udp_dport)
			put16(udp + 2, l->udp_dport);
		put16(udp + 4, get16(udp + 4) + l->udp_len_delta);
	}
	if (len >= ETH_LEN + (int)iph) {
		uint8_t *tl = ip + (p->ipv6 ? 4 : 2);

		put16(tl, get16(tl) + l->ip_len_delta);
		if (!p->ipv6)
			put16(ip + 10, ip4_csum(ip) ^ (l->bad_ip_csum ? 0x5a5a : 0));
	}
	if (l->recrc)
		icrc_store(ip, len - ETH_LEN);
	if (l->bad_icrc && len > ETH_LEN + 1)
		f->frame[len - 1] ^= 0x10;
	return len;
}

/*
 * Lay out @p in f->frame with a valid ICRC, then damage it as @l says.
 * Returns the frame length.
 */
int fz_build(struct fz *f, const struct fz_pkt *p, const struct fz_lie *l)
{
	unsigned int hl = fz_hdr_len(p->hdrs), body, iplen, off, i;
	uint8_t *q;

	body = hl + p->paylen + p->pad + ICRC_LEN;
	if (body + ETH_LEN + IP6_LEN + UDP_LEN > FZ_MAX_FRAME)
		body = FZ_MAX_FRAME - ETH_LEN - IP6_LEN - UDP_LEN;
	iplen = (p->ipv6 ? IP6_LEN : IP4_LEN) + UDP_LEN + body;
	off = put_l2l3(f, p, iplen);
	q = f->frame + off;
	put16(q, f->sport);
	put16(q + 2, FZ_UDP_PORT);
	put16(q + 4, UDP_LEN + body);
	put16(q + 6, 0);
	q += UDP_LEN;
	put_bth(q, p);
	q += BTH_LEN;
	q += put_ext(q, p);
	for (i = hl; i < body - ICRC_LEN; i++, q++)
		*q = p->payload && i - hl < p->paylen ? p->payload[i - hl] :
		     (uint8_t)(i * 7 + p->psn);
	icrc_store(f->frame + ETH_LEN, iplen);
	return apply_lie(f, p, l, off + UDP_LEN + body);
}

/* A well-formed packet of @opcode to @qpn with IBA's header set. */
void fz_pkt_init(struct fz *f, struct fz_pkt *p, uint8_t opcode, uint32_t qpn)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->qpn = qpn;
	p->pkey = FZ_PKEY;
	p->hdrs = fz_hdrs_of(opcode);
	p->qkey = f->ud.qkey;
	p->src_qp = f->ud.peer_qpn;
	p->rkey = f->mr ? f->mr->rkey : 0;
	p->va = (uintptr_t)f->buf;
}
