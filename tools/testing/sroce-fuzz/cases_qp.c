// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pktfuzz: the case families aimed at the state of one live QP: RDMA
 * and atomic requests against the registered MR at the edges of its
 * range, forged ACKs, NAKs and READ responses around the requester's
 * PSN, CNPs, multicast and duplicate floods, in-order valid traffic, and
 * single damaged fields.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <stdint.h>

#include "cases.h"

static uint64_t mr_start(struct fz *f)
{
	return (uintptr_t)f->buf;
}

static uint64_t mr_end(struct fz *f)
{
	return (uintptr_t)f->buf + 2 * FZ_MR_LEN;
}

static uint32_t pick_rkey(struct fz *f)
{
	uint32_t k = f->mr->rkey;

	switch (fz_below(f, 8)) {
	case 0:
		return k ^ 1;		/* same index, other key byte */
	case 1:
		return k + 0x100;	/* another index */
	case 2:
		return fz_below(f, 2) ? 0 : 0xffffffff;
	default:
		return k;
	}
}

/* A VA for an access of @len bytes: inside, at or past the MR's edges. */
static uint64_t pick_va(struct fz *f, uint32_t len)
{
	uint64_t s = mr_start(f), e = mr_end(f);

	switch (fz_below(f, 10)) {
	case 0:
		return s - 1;
	case 1:
		return e - len;
	case 2:
		return e - len + 1;
	case 3:
		return e;
	case 4:
		return 0;
	case 5:
		return UINT64_MAX - fz_below(f, 4096);
	case 6:
		return s + fz_below(f, 2 * FZ_MR_LEN);
	default:
		return s + fz_below(f, FZ_MR_LEN);
	}
}

void case_reth(struct fz *f)
{
	static const uint8_t ops[] = { 0x06, 0x0a, 0x0b, 0x0c, 0x0c, 0x26,
				       0x2a, 0x2b };
	static const uint32_t lens[] = { 0, 1, 8, 1023, 1024, 1025, 4096,
					 2 * FZ_MR_LEN, 2 * FZ_MR_LEN + 1,
					 0x80000000u, 0xffffffffu };
	struct fz_pkt p;
	uint8_t op = ops[fz_below(f, sizeof(ops))];
	struct fz_qp *q = op < 0x20 ? &f->rc : &f->uc;

	fz_pkt_init(f, &p, op, q->qpn);
	p.dma_len = fz_below(f, 2) ? fz_below(f, 1025) :
		    lens[fz_below(f, sizeof(lens) / sizeof(lens[0]))];
	p.va = pick_va(f, p.dma_len);
	p.rkey = pick_rkey(f);
	p.psn = fz_below(f, 4) ? q->rq_psn : near(f, q->rq_psn);
	p.ackreq = 1;
	p.imm = fz_rand(f);
	if (op != 0x0c) {
		p.paylen = p.dma_len <= 1024 ? p.dma_len : 1024;
		if (fz_below(f, 4) == 0)
			p.paylen = fz_below(f, 1025);
		p.pad = -p.paylen & 3;
	}
	send1(f, &p, NULL);
	if (p.psn == q->rq_psn && op != 0x0c)
		q->rq_psn = (q->rq_psn + 1) & 0xffffff;
}

void case_atomic(struct fz *f)
{
	struct fz_pkt p;
	uint64_t off;

	fz_pkt_init(f, &p, fz_below(f, 2) ? OP_RC_CMP_SWAP : OP_RC_FETCH_ADD,
		    fz_below(f, 16) ? f->rc.qpn : f->uc.qpn);
	switch (fz_below(f, 6)) {
	case 0:
		off = 1 + fz_below(f, 7);			/* misaligned */
		break;
	case 1:
		off = 2 * FZ_MR_LEN - 8 + fz_below(f, 2) * 8;	/* last, past */
		break;
	case 2:
		off = 2 * FZ_MR_LEN - 4;			/* straddles */
		break;
	default:
		off = 8 * fz_below(f, FZ_MR_LEN / 8);
	}
	p.va = fz_below(f, 16) ? mr_start(f) + off : pick_va(f, 8);
	p.rkey = pick_rkey(f);
	p.swap_add = fz_rand(f);
	p.compare = fz_below(f, 2) ? 0 : fz_rand(f);
	p.psn = fz_below(f, 4) ? f->rc.rq_psn : near(f, f->rc.rq_psn);
	p.ackreq = 1;
	if (fz_below(f, 8) == 0) {
		p.paylen = 8;	/* an atomic carries no payload */
		p.hdrs |= fz_below(f, 2) ? FZ_H_RETH : 0;
	}
	send1(f, &p, NULL);
}

/* ACKs, NAKs, READ responses and atomic ACKs for the RC requester. */
void case_forged_resp(struct fz *f)
{
	static const uint8_t ops[] = { 0x11, 0x11, 0x11, 0x12, 0x0d, 0x0e,
				       0x0f, 0x10, 0x10 };
	static const uint8_t syn[] = { 0x00, 0x1f, 0x0a, 0x20, 0x3f, 0x60,
				       0x61, 0x62, 0x63, 0x64, 0x65, 0x40,
				       0x80, 0xff };
	struct fz_pkt p;
	uint8_t s;

	fz_pkt_init(f, &p, ops[fz_below(f, sizeof(ops))],
		    fz_below(f, 16) ? f->rc.qpn : pick_qp(f)->qpn);
	p.psn = near(f, f->rc.sq_psn - 1 - fz_below(f, 3));
	s = fz_below(f, 4) ? syn[fz_below(f, sizeof(syn))] : fz_rand(f);
	p.aeth = (uint32_t)s << 24 | (fz_below(f, 2) ? fz_below(f, 16) :
				      (uint32_t)fz_rand(f) & 0xffffff);
	p.atmack = fz_rand(f);
	if (p.opcode >= 0x0d && p.opcode <= 0x10) {
		p.paylen = p.opcode == 0x0d || p.opcode == 0x0e ? 1024 :
			   fz_below(f, 1025);
		if (fz_below(f, 8) == 0)
			p.paylen = fz_below(f, 2048);
		p.pad = -p.paylen & 3;
	}
	send1(f, &p, NULL);
}

void case_cnp(struct fz *f)
{
	struct fz_qp *q;
	struct fz_pkt p;

	fz_pkt_init(f, &p, OP_CNP, pick_qpn(f, &q));
	p.flags = fz_below(f, 4) << 6;
	p.tos = fz_below(f, 4) ? 0x03 : 0;	/* ECN CE */
	if (fz_below(f, 8) == 0)
		p.hdrs = fz_below(f, 2) ? 0 : FZ_H_CNP | FZ_H_AETH;
	if (fz_below(f, 8) == 0)
		p.ipv6 = 1;
	send1(f, &p, NULL);
}

static void ud_pkt(struct fz *f, struct fz_pkt *p, uint32_t qpn)
{
	fz_pkt_init(f, p, fz_below(f, 2) ? OP_UD_SEND_ONLY : OP_UD_SEND_ONLY_IMM,
		    qpn);
	p->qkey = fz_below(f, 8) ? f->ud.qkey : fz_rand(f);
	p->src_qp = fz_rand(f) & 0xffffff;
	p->psn = fz_rand(f) & 0xffffff;
	p->imm = fz_rand(f);
	p->paylen = fz_below(f, 4) ? fz_below(f, 256) : fz_below(f, 1025);
	p->pad = -p->paylen & 3;
}

void case_mcast_flood(struct fz *f)
{
	unsigned int i, n = 16 + fz_below(f, 49);
	struct fz_pkt p;

	for (i = 0; i < n; i++) {
		ud_pkt(f, &p, 0xffffff);
		p.mcast = fz_below(f, 16) != 0;
		send1(f, &p, NULL);
	}
}

/* The same frame again and again: duplicates of requests already done. */
void case_dup_flood(struct fz *f)
{
	unsigned int i, n = 16 + fz_below(f, 49);
	struct fz_pkt p;

	switch (fz_below(f, 4)) {
	case 0:
		fz_pkt_init(f, &p, OP_RC_SEND_ONLY, f->rc.qpn);
		p.psn = (f->rc.rq_psn - 1 - fz_below(f, 4)) & 0xffffff;
		p.paylen = 16;
		break;
	case 1:
		fz_pkt_init(f, &p, OP_RC_READ_REQ, f->rc.qpn);
		p.psn = (f->rc.rq_psn - 1 - fz_below(f, 4)) & 0xffffff;
		p.dma_len = 64 << fz_below(f, 6);
		break;
	case 2:
		fz_pkt_init(f, &p, OP_RC_ACK, f->rc.qpn);
		p.psn = (f->rc.sq_psn - 1) & 0xffffff;
		p.aeth = 0x1f << 24;
		break;
	default:
		ud_pkt(f, &p, f->ud.qpn);
	}
	p.ackreq = 1;
	for (i = 0; i < n; i++)
		send1(f, &p, NULL);
}

/* In-order requests the device must take: SEND, WRITE and READ. */
void case_valid(struct fz *f)
{
	struct fz_qp *q = fz_below(f, 3) ? &f->rc : &f->uc;
	struct fz_pkt p;

	switch (fz_below(f, 5)) {
	case 0:
		ud_pkt(f, &p, fz_below(f, 2) ? f->ud.qpn : f->ud_mc.qpn);
		p.qkey = f->ud.qkey;
		send1(f, &p, NULL);
		return;
	case 1:
		fz_pkt_init(f, &p, q == &f->rc ? OP_RC_WRITE_ONLY :
			    OP_UC_WRITE_ONLY, q->qpn);
		p.dma_len = p.paylen = fz_below(f, 1025);
		p.va = mr_start(f) + fz_below(f, FZ_MR_LEN - 1024);
		break;
	case 2:
		if (q == &f->rc) {
			fz_pkt_init(f, &p, OP_RC_READ_REQ, q->qpn);
			p.dma_len = 1 + fz_below(f, 1024);
			p.va = mr_start(f) + fz_below(f, FZ_MR_LEN - 1024);
			break;
		}
		/* fall through */
	default:
		fz_pkt_init(f, &p, q == &f->rc ? OP_RC_SEND_ONLY :
			    OP_UC_SEND_ONLY, q->qpn);
		p.paylen = fz_below(f, 1025);
	}
	p.pad = -p.paylen & 3;
	p.psn = q->rq_psn;
	p.ackreq = 1;
	send1(f, &p, NULL);
	q->rq_psn = (q->rq_psn + 1) & 0xffffff;
}

void case_bitflip(struct fz *f)
{
	struct fz_lie l = { .recrc = 1 };
	struct fz_pkt p;

	random_pkt(f, &p, known_opcode(f));
	l.flip_bit = fz_below(f, fz_hdr_len(p.hdrs) * 8);
	send1(f, &p, &l);
}

void case_bad_icrc(struct fz *f)
{
	struct fz_lie l = { .flip_bit = -1, .bad_icrc = 1 };
	struct fz_pkt p;

	random_pkt(f, &p, known_opcode(f));
	if (fz_below(f, 2)) {
		l.flip_bit = fz_below(f, (fz_hdr_len(p.hdrs) + p.paylen) * 8);
		l.bad_icrc = 0;	/* the flip alone breaks the ICRC */
	}
	send1(f, &p, &l);
}

/* One field wrong in an otherwise valid request. */
void case_fields(struct fz *f)
{
	static const uint16_t pkeys[] = { 0x7fff, 0x0000, 0x8001, 0x7ffe,
					  0x1234 };
	static const uint16_t ports[] = { 4790, 4792, 0 };
	struct fz_lie l = { .flip_bit = -1 };
	struct fz_pkt p;

	random_pkt(f, &p, known_opcode(f));
	switch (fz_below(f, 6)) {
	case 0:
		p.pkey = pkeys[fz_below(f, 5)];
		break;
	case 1:
		p.tver = 1 + fz_below(f, 15);
		break;
	case 2:
		ud_pkt(f, &p, f->ud.qpn);
		p.qkey = f->ud.qkey ^ (1u << fz_below(f, 32));
		break;
	case 3:
		p.src_host = 3 + fz_below(f, 250);	/* not the QP's peer */
		break;
	case 4:
		l.udp_dport = ports[fz_below(f, 3)];
		break;
	default:
		p.tos = fz_rand(f);	/* masked out of the ICRC */
		p.flags = 0xc0;
	}
	send1(f, &p, &l);
}

void case_ipv6(struct fz *f)
{
	struct fz_pkt p;

	if (fz_below(f, 2))
		ud_pkt(f, &p, f->ud.qpn);
	else
		random_pkt(f, &p, fz_below(f, 2) ? known_opcode(f) : fz_rand(f));
	p.ipv6 = 1;
	p.mcast = 0;
	p.tos = fz_below(f, 4) ? 0 : fz_rand(f);
	send1(f, &p, NULL);
}
