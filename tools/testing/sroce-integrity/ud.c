// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: UD mode.  A's QP sends each message as one datagram
 * (SEND_WITH_IMM, immediate = seq) through an address handle of B's GID;
 * B's receive WQEs take the 40-byte GRH in front of the payload, either in
 * a separate first SGE or in front of the first payload piece.  Every
 * delivered datagram is checked in full: completion fields, the GRH (an
 * IPv4 or IPv6 header describing this very datagram), every payload byte
 * and the canaries around it.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unreliable.h"
#include "ud.h"
#include "xfer.h"

/* ------------------------------------------------------------------ */
/* Setup */

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

/* RESET -> INIT (with the Q_Key) -> RTR -> RTS: all a UD QP takes. */
static void ud_modify(struct side *sd, uint32_t psn)
{
	struct ibv_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = UD_QKEY;
	err = ibv_modify_qp(sd->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (err)
		die("%s: UD QP to INIT: %s", sd->name, strerror(err));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	err = ibv_modify_qp(sd->qp, &a, IBV_QP_STATE);
	if (err)
		die("%s: UD QP to RTR: %s", sd->name, strerror(err));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn;
	err = ibv_modify_qp(sd->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (err)
		die("%s: UD QP to RTS: %s", sd->name, strerror(err));
}

/**
 * ud_connect() - both UD QPs to RTS, and A's address handle of B
 *
 * A datagram is one packet: a message over the port MTU of either device
 * could not be sent, so -m above it is refused here.
 */
void ud_connect(struct run *r)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.port_num = 1,
		.grh = {
			.dgid = r->s[1].gid,
			.sgid_index = (uint8_t)r->o.gid[0],
			.hop_limit = 64,
		},
	};
	int i;

	for (i = 0; i < 2; i++) {
		struct ibv_port_attr pa;

		if (ibv_query_port(r->s[i].ctx, 1, &pa))
			die("%s: ibv_query_port", r->s[i].name);
		if (mtu_bytes(pa.active_mtu) < r->o.mtu)
			die("%s: port MTU %d is below -m %d: a UD message is one packet (lower -m or raise the netdev MTU)",
			    r->s[i].name, mtu_bytes(pa.active_mtu), r->o.mtu);
	}
	ud_modify(&r->s[0], r->o.psn);
	ud_modify(&r->s[1], (r->o.psn + 0x1234) & 0xffffff);
	r->s[0].ah = ibv_create_ah(r->s[0].pd, &ah);
	if (!r->s[0].ah)
		die("%s: ibv_create_ah to GID index %d of %s: %s", r->s[0].name,
		    r->o.gid[1], r->s[1].name, strerror(errno));
}

/* ------------------------------------------------------------------ */
/* Datagrams */

static uint8_t *ud_slot(struct run *r, uint64_t n)
{
	return r->s[1].buf + (n % r->rdepth) * r->span;
}

/* Where receive WQE #@n takes the GRH: see ud_recv_sges(). */
static uint8_t *ud_grh_at(struct run *r, uint64_t n)
{
	return ud_slot(r, n) + ((n & 1) ? 8 : UD_PREFIX - UD_GRH_LEN);
}

/**
 * ud_recv_sges() - the scatter list of receive WQE #@n
 * @r: the run
 * @n: the WQE's number
 * @sge: filled, at most -e + 1 entries
 *
 * The payload goes into the -e pieces of the WQE's layout, UD_PREFIX bytes
 * into its slot.  An even WQE takes the GRH in the 40 bytes right before
 * its first piece, in the same SGE (the first piece sits at offset 0 for
 * an even key); an odd one in a separate 40-byte first SGE near the slot
 * start.
 *
 * Return: the number of SGEs.
 */
unsigned int ud_recv_sges(struct run *r, uint64_t n, struct ibv_sge *sge)
{
	struct rcv_slot *rs = &r->rv[n % r->rdepth];
	uint8_t *base = ud_slot(r, n) + UD_PREFIX;
	struct side *b = &r->s[1];
	unsigned int i, k = 0;

	pat_layout_make(&rs->lay, (n & 1) ? 2 * n + 1 : 2 * n, r->maxlen, r->o.sges);
	if (n & 1) {
		sge[0].addr = (uintptr_t)ud_grh_at(r, n);
		sge[0].length = UD_GRH_LEN;
		sge[0].lkey = b->mr[1]->lkey;
		k = 1;
	}
	for (i = 0; i < rs->lay.n; i++, k++) {
		sge[k].addr = (uintptr_t)(base + rs->lay.p[i].off);
		sge[k].length = rs->lay.p[i].len;
		sge[k].lkey = b->mr[k & 1]->lkey;
	}
	if (!(n & 1)) {
		sge[0].addr -= UD_GRH_LEN;
		sge[0].length += UD_GRH_LEN;
	}
	return k;
}

/* Message @seq as a datagram to B's QP; the SGEs are set by the caller. */
void ud_prep_send(struct run *r, uint32_t seq, struct ibv_send_wr *wr)
{
	wr->opcode = IBV_WR_SEND_WITH_IMM;
	wr->imm_data = htonl(seq);
	wr->wr.ud.ah = r->s[0].ah;
	wr->wr.ud.remote_qpn = r->s[1].qp->qp_num;
	wr->wr.ud.remote_qkey = UD_QKEY;
}

/* ------------------------------------------------------------------ */
/* GRH */

static int gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, mapped, sizeof(mapped));
}

const char *ud_grh_form(const struct run *r)
{
	return gid_is_v4(&r->s[0].gid) ? "ipv4" : "ipv6";
}

/* The UDP length of a RoCEv2 SEND_ONLY_WITH_IMMEDIATE of @len bytes. */
static unsigned int udp_len(uint32_t len)
{
	/* UDP, BTH, DETH, ImmDt, payload and pad to 4, ICRC */
	return 8 + 12 + 8 + 4 + len + ((4 - (len & 3)) & 3) + 4;
}

static unsigned int be16_at(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* The IPv4 header checksum over @hdr comes out as 0xffff. */
static int ipv4_csum_ok(const uint8_t *hdr)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += be16_at(hdr + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * What is wrong with the GRH of message @seq (@len bytes), or NULL.  RoCEv2
 * (annex A17.4.5.2): for an IPv4 datagram the last 20 of the 40 bytes are
 * its IPv4 header, the first 20 are unspecified; for IPv6, the IPv6 header.
 */
static const char *grh_wrong(struct run *r, const uint8_t *g, uint32_t len)
{
	const uint8_t *sa = r->s[0].gid.raw, *da = r->s[1].gid.raw;

	if (gid_is_v4(&r->s[0].gid)) {
		const uint8_t *ip = g + 20;

		if (ip[0] != 0x45)
			return "IPv4 version/IHL is not 0x45";
		if (be16_at(ip + 2) != 20 + udp_len(len))
			return "IPv4 total length is not that of this datagram";
		if (ip[9] != 17)
			return "IPv4 protocol is not UDP (17)";
		if (memcmp(ip + 12, sa + 12, 4))
			return "IPv4 source is not A's address";
		if (memcmp(ip + 16, da + 12, 4))
			return "IPv4 destination is not B's address";
		if (!ipv4_csum_ok(ip))
			return "IPv4 header checksum is wrong";
		return NULL;
	}
	if (g[0] >> 4 != 6)
		return "IPv6 version is not 6";
	if (be16_at(g + 4) != udp_len(len))
		return "IPv6 payload length is not that of this datagram";
	if (g[6] != 17)
		return "IPv6 next header is not UDP (17)";
	if (memcmp(g + 8, sa, 16))
		return "IPv6 source is not A's GID";
	if (memcmp(g + 24, da, 16))
		return "IPv6 destination is not B's GID";
	return NULL;
}

static int bad_grh(struct run *r, uint64_t n, uint32_t seq, const uint8_t *g,
		   const char *why)
{
	char hex[2 * UD_GRH_LEN + 1];
	int i;

	for (i = 0; i < UD_GRH_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", g[i]);
	fail(r, "responder: UD message %u in receive #%" PRIu64 ": GRH: %s: %s",
	     seq, n, why, hex);
	return -1;
}

/*
 * The bytes of receive WQE #@n's slot in front of its layout: the GRH and
 * canaries only.  They are reset afterwards.
 */
static int ud_check_prefix(struct run *r, uint64_t n, uint32_t seq, uint32_t len)
{
	uint8_t *slot = ud_slot(r, n), *g = ud_grh_at(r, n);
	const char *why = grh_wrong(r, g, len);
	size_t i;

	if (why)
		return bad_grh(r, n, seq, g, why);
	for (i = 0; i < UD_PREFIX; i++) {
		if (slot + i >= g && slot + i < g + UD_GRH_LEN)
			continue;
		if (slot[i] != PAT_CANARY) {
			fail(r, "responder: UD message %u in receive #%" PRIu64
			     ": slot byte %zu before the payload changed to 0x%02x",
			     seq, n, i, slot[i]);
			return -1;
		}
	}
	memset(slot, PAT_CANARY, UD_PREFIX);
	return 0;
}

/*
 * Self-test of the GRH check: headers built here from the RFCs (791, 8200)
 * pass, and each of a list of single-byte changes is caught.
 */
static int grh_selftest_one(int v6)
{
	static const uint8_t a4[4] = { 10, 0, 0, 1 }, b4[4] = { 10, 0, 0, 2 };
	static const size_t flips4[] = { 20, 22, 23, 29, 32, 35, 36, 39, 30 };
	static const size_t flips6[] = { 0, 4, 5, 6, 8, 23, 24, 39 };
	const size_t *flips = v6 ? flips6 : flips4;
	size_t nflips = v6 ? 8 : 9, i;
	static struct run r;
	uint8_t g[UD_GRH_LEN];
	unsigned int ul = udp_len(1001);

	memset(&r, 0, sizeof(r));
	memset(g, 0, sizeof(g));
	if (v6) {
		r.s[0].gid.raw[0] = 0xfd;
		r.s[0].gid.raw[15] = 1;
		r.s[1].gid.raw[0] = 0xfd;
		r.s[1].gid.raw[15] = 2;
		g[0] = 0x60;
		g[4] = (uint8_t)(ul >> 8);
		g[5] = (uint8_t)ul;
		g[6] = 17;
		g[7] = 64;
		memcpy(g + 8, r.s[0].gid.raw, 16);
		memcpy(g + 24, r.s[1].gid.raw, 16);
	} else {
		uint8_t *ip = g + 20;
		uint32_t sum = 0;

		for (i = 0; i < 2; i++) {
			r.s[i].gid.raw[10] = 0xff;
			r.s[i].gid.raw[11] = 0xff;
			memcpy(r.s[i].gid.raw + 12, i ? b4 : a4, 4);
		}
		ip[0] = 0x45;
		ip[2] = (uint8_t)((20 + ul) >> 8);
		ip[3] = (uint8_t)(20 + ul);
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, a4, 4);
		memcpy(ip + 16, b4, 4);
		for (i = 0; i < 20; i += 2)
			sum += be16_at(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		ip[10] = (uint8_t)(~sum >> 8);
		ip[11] = (uint8_t)~sum;
		memset(g, 0x77, 20);	/* unspecified: anything goes */
	}
	if (grh_wrong(&r, g, 1001) || !grh_wrong(&r, g, 1002 + 3))
		return -1;
	for (i = 0; i < nflips; i++) {
		g[flips[i]] ^= 0x10;
		if (!grh_wrong(&r, g, 1001))
			return -1;
		g[flips[i]] ^= 0x10;
	}
	return 0;
}

/* The GRH check passes right IPv4 and IPv6 headers and fails wrong ones. */
int ud_selftest(void)
{
	return grh_selftest_one(0) || grh_selftest_one(1) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Accounting */

/* Has message @seq been delivered before?  Marks it delivered. */
static int ud_seen(struct run *r, uint32_t seq)
{
	int was;

	if (seq >= r->seen_cap) {
		size_t cap = r->seen_cap ? r->seen_cap : 4096;
		uint8_t *p;

		while (cap <= seq)
			cap *= 2;
		p = realloc(r->seen, cap);
		if (!p)
			die("out of memory");
		memset(p + r->seen_cap, 0, cap - r->seen_cap);
		r->seen = p;
		r->seen_cap = cap;
	}
	was = r->seen[seq];
	r->seen[seq] = 1;
	return was;
}

static int ud_check_wc(struct run *r, const struct ibv_wc *wc, uint32_t seq,
		       uint32_t len)
{
	const unsigned int flags = IBV_WC_WITH_IMM | IBV_WC_GRH;

	if (wc->opcode != IBV_WC_RECV || (wc->wc_flags & flags) != flags) {
		fail(r, "responder: receive #%" PRIu64 " opcode %d flags 0x%x, want RECV with an immediate and a GRH",
		     wc->wr_id, wc->opcode, wc->wc_flags);
		return -1;
	}
	if (wc->src_qp != r->s[0].qp->qp_num) {
		fail(r, "responder: UD message %u from QP 0x%x, want A's 0x%x", seq,
		     wc->src_qp, r->s[0].qp->qp_num);
		return -1;
	}
	if (wc->byte_len != UD_GRH_LEN + len) {
		fail(r, "responder: UD message %u byte_len %u, want %u (GRH + %u)",
		     seq, wc->byte_len, UD_GRH_LEN + len, len);
		return -1;
	}
	return 0;
}

/**
 * ud_recv() - a receive completion of B: one datagram, named by its
 * immediate
 * @r: the run
 * @wc: the completion
 *
 * Every copy is checked in full (a datagram has its WQE to itself).  UD
 * may deliver out of order: seqs skipped over are declared lost, and one
 * arriving after that is late (delivered, no longer lost); a seq delivered
 * before is a duplicate.
 *
 * Return: 0, or -1 on a failure (reported).
 */
int ud_recv(struct run *r, const struct ibv_wc *wc)
{
	uint64_t n = wc->wr_id;
	struct rcv_slot *rs = &r->rv[n % r->rdepth];
	uint8_t *base = ud_slot(r, n) + UD_PREFIX;
	struct pat_result res;
	uint32_t seq, len;

	seq = ntohl(wc->imm_data);
	if (seq >= r->posted) {
		fail(r, "responder: UD message %u delivered but never posted (posted %"
		     PRIu64 ")", seq, r->posted);
		return -1;
	}
	len = msg_len(r, seq);
	if (ud_check_wc(r, wc, seq, len) || ud_check_prefix(r, n, seq, len))
		return -1;
	pat_check(base, r->span - UD_PREFIX, &rs->lay, seq, len, &res);
	if (!res.ok)
		return report_bad(r, "UD SEND (responder)", seq, len, base, &res);
	pat_restore(base, r->span - UD_PREFIX, &rs->lay, len);
	if (ud_seen(r, seq)) {
		r->dups++;
		return 0;
	}
	return unrel_delivered(r, seq);
}
