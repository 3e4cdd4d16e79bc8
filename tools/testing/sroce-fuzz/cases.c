// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pktfuzz: the case families. Each case sends one frame or a burst; most
 * carry a valid ICRC, so that they reach the checks behind it. PSNs are
 * chosen around the ones the device expects (verbs.c tracks them), keys
 * and addresses around the live MR's.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <string.h>
#include <sys/socket.h>

#include "cases.h"
#include "pktfuzz.h"

const char *const fz_family_names[FZ_NR_FAMILIES] = {
	"opcode", "hdr-mismatch", "truncate", "ip-udp-len", "pad", "reth",
	"atomic", "forged-resp", "cnp", "mcast-flood", "dup-flood", "valid",
	"bitflip", "bad-icrc", "fields", "ipv6",
};

/*
 * Relative weights of the cases: mostly frames with a valid ICRC. A flood
 * case sends 16 to 64 frames, the others one, so that each flood makes
 * about 4% of the frames.
 */
static const unsigned int weights[FZ_NR_FAMILIES] = {
	200, 120, 160, 120, 100, 160, 120, 200, 60, 3, 3, 160, 120, 40, 100,
	80,
};

unsigned int fz_pick_family(struct fz *f)
{
	unsigned int i, total = 0, r;

	for (i = 0; i < FZ_NR_FAMILIES; i++)
		total += weights[i];
	r = fz_below(f, total);
	for (i = 0; r >= weights[i]; i++)
		r -= weights[i];
	return i;
}

const struct fz_lie no_lie = { .flip_bit = -1 };

static uint16_t rd16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

/* Will the IPv4/UDP layers hand the frame to sroce's socket? */
static enum fz_fate classify(const uint8_t *fr, int len, const struct fz_lie *l)
{
	unsigned int tot, ulen;

	if (fr[12] == 0x86 && fr[13] == 0xdd) {
		if (len < 14 + 40 + 8)
			return FZ_IP_DROP;
		tot = 40 + rd16(fr + 18);
		ulen = rd16(fr + 14 + 44);
		return tot > (unsigned int)len - 14 || ulen < 8 ||
		       ulen > tot - 40 || rd16(fr + 56) != FZ_UDP_PORT ?
		       FZ_IP_DROP : FZ_TO_DEVICE;
	}
	if (len < 14 + 20 || l->bad_ip_csum)
		return FZ_IP_DROP;
	tot = rd16(fr + 16);
	if (tot < 20 || tot > (unsigned int)len - 14 || tot < 28)
		return FZ_IP_DROP;
	ulen = rd16(fr + 38);
	if (ulen < 8 || ulen > tot - 20 || rd16(fr + 36) != FZ_UDP_PORT)
		return FZ_IP_DROP;
	return FZ_TO_DEVICE;
}

void fz_send(struct fz *f, const struct fz_pkt *p, const struct fz_lie *l,
	     enum fz_fate fate)
{
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = f->ifindex,
		.sll_halen = 6,
	};
	int len = fz_build(f, p, l ? l : &no_lie);

	if (fate == FZ_NR_FATES)
		fate = classify(f->frame, len, l ? l : &no_lie);
	memcpy(to.sll_addr, f->frame, 6);
	if (sendto(f->tx_fd, f->frame, len, 0, (struct sockaddr *)&to,
		   sizeof(to)) != len) {
		f->send_err++;
		return;
	}
	f->sent++;
	f->fate[fate]++;
	f->family_sent[f->family]++;
}

void send1(struct fz *f, const struct fz_pkt *p, const struct fz_lie *l)
{
	fz_send(f, p, l, FZ_NR_FATES);
}

/* A PSN around @psn: exact half of the time, else within +-8. */
uint32_t near(struct fz *f, uint32_t psn)
{
	if (fz_below(f, 2))
		return psn & 0xffffff;
	return (psn + fz_below(f, 17) - 8) & 0xffffff;
}

struct fz_qp *pick_qp(struct fz *f)
{
	struct fz_qp *qs[] = { &f->rc, &f->uc, &f->ud, &f->ud_mc };

	return qs[fz_below(f, 4)];
}

/* A target QPN: mostly a live QP, else QP0, QP1, multicast or random. */
uint32_t pick_qpn(struct fz *f, struct fz_qp **qp)
{
	static const uint32_t odd[] = { 0, 1, 0xffffff, 2, 0x800000 };
	unsigned int r = fz_below(f, 20);

	*qp = pick_qp(f);
	if (r < 16)
		return (*qp)->qpn;
	if (r < 19)
		return odd[fz_below(f, 5)];
	return fz_rand(f) & 0xffffff;
}

/* Random but plausible contents for every header field. */
void scramble(struct fz *f, struct fz_pkt *p)
{
	static const uint32_t lens[] = { 0, 1, 4, 255, 256, 1024, 1025,
					 4096, 0x7fffffff, 0xffffffff };

	p->aeth = fz_rand(f);
	p->atmack = fz_rand(f);
	p->imm = fz_rand(f);
	p->swap_add = fz_rand(f);
	p->compare = fz_rand(f);
	p->dma_len = lens[fz_below(f, 10)];
	if (fz_below(f, 4) == 0)
		p->rkey = fz_rand(f);
	if (fz_below(f, 4) == 0)
		p->va = fz_rand(f);
	p->ackreq = fz_below(f, 2);
	p->flags = fz_below(f, 4) << 6;
	p->paylen = fz_below(f, 3) ? fz_below(f, 64) : fz_below(f, 1100);
	p->pad = -p->paylen & 3;
}

/* A packet to a live QP (or an odd QPN), PSN around the expected one. */
void random_pkt(struct fz *f, struct fz_pkt *p, uint8_t opcode)
{
	struct fz_qp *q;
	uint32_t qpn = pick_qpn(f, &q);

	fz_pkt_init(f, p, opcode, qpn);
	scramble(f, p);
	p->psn = near(f, q->rq_psn);
	if (!fz_hdrs_of(opcode) && fz_below(f, 2))
		p->hdrs = fz_rand(f) & 0x7f;
	if (qpn == 0xffffff)
		p->mcast = fz_below(f, 2);
}

uint8_t known_opcode(struct fz *f)
{
	static const uint8_t ops[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
		0x14, 0x16, 0x17, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26,
		0x27, 0x28, 0x29, 0x2a, 0x2b, 0x64, 0x65,
	};

	return ops[fz_below(f, sizeof(ops))];
}

/* Every opcode in turn, 0 to 255, with its own headers (or random). */
static void case_opcode(struct fz *f)
{
	struct fz_pkt p;

	random_pkt(f, &p, f->sweep_op++ & 0xff);
	send1(f, &p, NULL);
}

static void case_hdr_mismatch(struct fz *f)
{
	struct fz_pkt p;

	random_pkt(f, &p, known_opcode(f));
	p.hdrs = fz_below(f, 3) ? fz_hdrs_of(known_opcode(f)) :
		 fz_rand(f) & 0xff;
	if (fz_below(f, 3) == 0)
		p.paylen = 0;
	send1(f, &p, NULL);
}

/* Cut a frame at every offset in turn; mostly with lengths that agree. */
static void case_truncate(struct fz *f)
{
	struct fz_lie l = { .flip_bit = -1 };
	struct fz_pkt p;
	int full;

	random_pkt(f, &p, known_opcode(f));
	p.paylen = fz_below(f, 40);
	p.pad = -p.paylen & 3;
	full = 14 + 20 + 8 + fz_hdr_len(p.hdrs) + p.paylen + p.pad + 4;
	l.truncate_at = 14 + f->trunc_off++ % (full - 14);
	l.fix_lengths = fz_below(f, 4) != 0;
	l.recrc = l.fix_lengths && fz_below(f, 4) != 0;
	send1(f, &p, &l);
}

static void case_lengths(struct fz *f)
{
	static const int deltas[] = { -65535, -1000, -64, -9, -8, -5, -4, -3,
				      -1, 1, 2, 4, 8, 100, 1500, 65535 };
	struct fz_lie l = { .flip_bit = -1 };
	struct fz_pkt p;

	random_pkt(f, &p, known_opcode(f));
	if (fz_below(f, 2))
		l.ip_len_delta = deltas[fz_below(f, 16)];
	else
		l.udp_len_delta = deltas[fz_below(f, 16)];
	if (fz_below(f, 3) == 0) {
		l.ip_len_delta = deltas[fz_below(f, 9)];
		l.udp_len_delta = l.ip_len_delta;
	}
	l.recrc = fz_below(f, 2);
	l.bad_ip_csum = fz_below(f, 16) == 0;
	send1(f, &p, &l);
}

static void case_pad(struct fz *f)
{
	struct fz_pkt p;

	random_pkt(f, &p, fz_below(f, 4) ? known_opcode(f) : fz_rand(f));
	p.paylen = fz_below(f, 12);
	p.pad = fz_below(f, 4);
	send1(f, &p, NULL);
}


void fz_run_case(struct fz *f, unsigned int family)
{
	static void (*const run[FZ_NR_FAMILIES])(struct fz *f) = {
		[FAM_OPCODE] = case_opcode,
		[FAM_HDR_MISMATCH] = case_hdr_mismatch,
		[FAM_TRUNCATE] = case_truncate,
		[FAM_LENGTHS] = case_lengths,
		[FAM_PAD] = case_pad,
		[FAM_RETH] = case_reth,
		[FAM_ATOMIC] = case_atomic,
		[FAM_FORGED_RESP] = case_forged_resp,
		[FAM_CNP] = case_cnp,
		[FAM_MCAST_FLOOD] = case_mcast_flood,
		[FAM_DUP_FLOOD] = case_dup_flood,
		[FAM_VALID] = case_valid,
		[FAM_BITFLIP] = case_bitflip,
		[FAM_BAD_ICRC] = case_bad_icrc,
		[FAM_FIELDS] = case_fields,
		[FAM_IPV6] = case_ipv6,
	};

	f->family = family;
	run[family](f);
}
