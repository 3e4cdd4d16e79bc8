/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * InfiniBand transport headers as carried by RoCEv2 (IBA vol 1, 9.2 and
 * annex A17).
 *
 * One struct per header, in wire (big-endian) order. Sub-word fields are
 * described by GENMASK()s of the 32-bit word that holds them, numbered as
 * the word reads on the wire (bit 31 is the first bit sent), and reached
 * through the typed accessors below, which are thin wrappers around the
 * be32 helpers of <linux/bitfield.h>. Whole-word fields are plain __be32 or
 * __be64 members.
 *
 * In a packet every header starts on a 4-byte boundary but not necessarily
 * on an 8-byte one, so the headers with 64-bit fields are declared
 * __packed __aligned(4).
 *
 * This file only describes the wire format; it holds no driver state.
 */

#ifndef SROCE_HDR_H
#define SROCE_HDR_H

#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

#include "wire/sroce_psn.h"

#define SROCE_UDP_PORT		4791	/* IANA port of RoCEv2 */
#define SROCE_TVER		0	/* the only BTH TVer defined */
#define SROCE_DEFAULT_PKEY	0xffff	/* default partition, full member */
#define SROCE_GSI_QKEY		0x80010000	/* Q_Key of QP1 (GSI) */
#define SROCE_QPN_MASK		GENMASK(23, 0)
#define SROCE_PAD_ALIGN		4	/* payload + pad is a multiple */

/* Base Transport Header (IBA 9.2), 12 bytes. */
struct sroce_bth {
	__be32 op_pkey;		/* OpCode, SE, M, PadCnt, TVer, P_Key */
	__be32 qpn;		/* FECN, BECN, resv6, DestQP */
	__be32 apsn;		/* AckReq, resv7, PSN */
};

#define SROCE_BTH_OPCODE	GENMASK(31, 24)
#define SROCE_BTH_SE		BIT(23)		/* solicited event */
#define SROCE_BTH_MIG		BIT(22)		/* MigReq */
#define SROCE_BTH_PAD		GENMASK(21, 20)
#define SROCE_BTH_TVER		GENMASK(19, 16)
#define SROCE_BTH_PKEY		GENMASK(15, 0)

#define SROCE_BTH_FECN		BIT(31)
#define SROCE_BTH_BECN		BIT(30)
#define SROCE_BTH_RESV6		GENMASK(29, 24)
/* FECN, BECN and resv6 together: RoCEv2 "resv8a", masked out of the ICRC. */
#define SROCE_BTH_RESV8A	GENMASK(31, 24)
#define SROCE_BTH_DESTQP	GENMASK(23, 0)

#define SROCE_BTH_ACKREQ	BIT(31)
#define SROCE_BTH_RESV7		GENMASK(30, 24)
#define SROCE_BTH_PSN		GENMASK(23, 0)

static_assert(sizeof(struct sroce_bth) == 12);
static_assert(SROCE_BTH_PSN == SROCE_PSN_MASK);
static_assert(SROCE_BTH_DESTQP == SROCE_QPN_MASK);

static inline u8 sroce_bth_opcode(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->op_pkey, SROCE_BTH_OPCODE);
}

static inline void sroce_bth_set_opcode(struct sroce_bth *bth, u8 opcode)
{
	be32p_replace_bits(&bth->op_pkey, opcode, SROCE_BTH_OPCODE);
}

static inline bool sroce_bth_se(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->op_pkey, SROCE_BTH_SE);
}

static inline void sroce_bth_set_se(struct sroce_bth *bth, bool se)
{
	be32p_replace_bits(&bth->op_pkey, se, SROCE_BTH_SE);
}

static inline bool sroce_bth_mig(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->op_pkey, SROCE_BTH_MIG);
}

static inline void sroce_bth_set_mig(struct sroce_bth *bth, bool mig)
{
	be32p_replace_bits(&bth->op_pkey, mig, SROCE_BTH_MIG);
}

static inline u8 sroce_bth_pad(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->op_pkey, SROCE_BTH_PAD);
}

static inline void sroce_bth_set_pad(struct sroce_bth *bth, u8 pad)
{
	be32p_replace_bits(&bth->op_pkey, pad, SROCE_BTH_PAD);
}

static inline u8 sroce_bth_tver(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->op_pkey, SROCE_BTH_TVER);
}

static inline void sroce_bth_set_tver(struct sroce_bth *bth, u8 tver)
{
	be32p_replace_bits(&bth->op_pkey, tver, SROCE_BTH_TVER);
}

static inline u16 sroce_bth_pkey(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->op_pkey, SROCE_BTH_PKEY);
}

static inline void sroce_bth_set_pkey(struct sroce_bth *bth, u16 pkey)
{
	be32p_replace_bits(&bth->op_pkey, pkey, SROCE_BTH_PKEY);
}

static inline bool sroce_bth_fecn(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->qpn, SROCE_BTH_FECN);
}

static inline void sroce_bth_set_fecn(struct sroce_bth *bth, bool fecn)
{
	be32p_replace_bits(&bth->qpn, fecn, SROCE_BTH_FECN);
}

static inline bool sroce_bth_becn(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->qpn, SROCE_BTH_BECN);
}

static inline void sroce_bth_set_becn(struct sroce_bth *bth, bool becn)
{
	be32p_replace_bits(&bth->qpn, becn, SROCE_BTH_BECN);
}

static inline u32 sroce_bth_destqp(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->qpn, SROCE_BTH_DESTQP);
}

static inline void sroce_bth_set_destqp(struct sroce_bth *bth, u32 qpn)
{
	be32p_replace_bits(&bth->qpn, qpn, SROCE_BTH_DESTQP);
}

static inline bool sroce_bth_ackreq(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->apsn, SROCE_BTH_ACKREQ);
}

static inline void sroce_bth_set_ackreq(struct sroce_bth *bth, bool ackreq)
{
	be32p_replace_bits(&bth->apsn, ackreq, SROCE_BTH_ACKREQ);
}

static inline u32 sroce_bth_psn(const struct sroce_bth *bth)
{
	return be32_get_bits(bth->apsn, SROCE_BTH_PSN);
}

static inline void sroce_bth_set_psn(struct sroce_bth *bth, u32 psn)
{
	be32p_replace_bits(&bth->apsn, psn, SROCE_BTH_PSN);
}

/**
 * sroce_pad_count() - PadCnt for a payload
 * @len: payload length in bytes
 *
 * Return: the number of pad bytes (0-3) that bring @len up to a multiple of
 * four, as carried in the BTH PadCnt field.
 */
static inline u8 sroce_pad_count(u32 len)
{
	return -len & (SROCE_PAD_ALIGN - 1);
}

/* RDMA Extended Transport Header (IBA 9.3.3), 16 bytes. */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;		/* DMA length */
} __packed __aligned(4);

static_assert(sizeof(struct sroce_reth) == 16);

static inline u64 sroce_reth_va(const struct sroce_reth *reth)
{
	return be64_to_cpu(reth->va);
}

static inline void sroce_reth_set_va(struct sroce_reth *reth, u64 va)
{
	reth->va = cpu_to_be64(va);
}

static inline u32 sroce_reth_rkey(const struct sroce_reth *reth)
{
	return be32_to_cpu(reth->rkey);
}

static inline void sroce_reth_set_rkey(struct sroce_reth *reth, u32 rkey)
{
	reth->rkey = cpu_to_be32(rkey);
}

static inline u32 sroce_reth_len(const struct sroce_reth *reth)
{
	return be32_to_cpu(reth->len);
}

static inline void sroce_reth_set_len(struct sroce_reth *reth, u32 len)
{
	reth->len = cpu_to_be32(len);
}

/* ACK Extended Transport Header (IBA 9.3.5), 4 bytes. */
struct sroce_aeth {
	__be32 smsn;		/* Syndrome, MSN */
};

#define SROCE_AETH_SYNDROME	GENMASK(31, 24)
#define SROCE_AETH_TYPE		GENMASK(30, 29)	/* syndrome bits 6:5 */
#define SROCE_AETH_CODE		GENMASK(28, 24)	/* syndrome bits 4:0 */
#define SROCE_AETH_MSN		GENMASK(23, 0)

static_assert(sizeof(struct sroce_aeth) == 4);

/* AETH syndrome type; what SROCE_AETH_CODE then holds is noted per type. */
enum sroce_aeth_type {
	SROCE_AETH_ACK		= 0,	/* credit count */
	SROCE_AETH_RNR_NAK	= 1,	/* RNR timer, IB_RNR_TIMER_* */
	SROCE_AETH_RESERVED	= 2,
	SROCE_AETH_NAK		= 3,	/* enum sroce_nak_code */
};

/* NAK codes, the SROCE_AETH_CODE of a SROCE_AETH_NAK. */
enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR		= 0,
	SROCE_NAK_INVALID_REQ		= 1,
	SROCE_NAK_REM_ACCESS_ERR	= 2,
	SROCE_NAK_REM_OP_ERR		= 3,
	SROCE_NAK_INVALID_RD_REQ	= 4,
};

/* Credit count of an ACK when end-to-end flow control is not used. */
#define SROCE_AETH_CREDITS_INVALID	0x1f

static inline u8 sroce_aeth_syndrome(const struct sroce_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, SROCE_AETH_SYNDROME);
}

static inline void sroce_aeth_set_syndrome(struct sroce_aeth *aeth, u8 syn)
{
	be32p_replace_bits(&aeth->smsn, syn, SROCE_AETH_SYNDROME);
}

static inline enum sroce_aeth_type
sroce_aeth_type(const struct sroce_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, SROCE_AETH_TYPE);
}

static inline void sroce_aeth_set_type(struct sroce_aeth *aeth,
				       enum sroce_aeth_type type)
{
	be32p_replace_bits(&aeth->smsn, type, SROCE_AETH_TYPE);
}

/* Credit count (ACK), RNR timer (RNR NAK) or NAK code (NAK). */
static inline u8 sroce_aeth_code(const struct sroce_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, SROCE_AETH_CODE);
}

static inline void sroce_aeth_set_code(struct sroce_aeth *aeth, u8 code)
{
	be32p_replace_bits(&aeth->smsn, code, SROCE_AETH_CODE);
}

static inline u32 sroce_aeth_msn(const struct sroce_aeth *aeth)
{
	return be32_get_bits(aeth->smsn, SROCE_AETH_MSN);
}

static inline void sroce_aeth_set_msn(struct sroce_aeth *aeth, u32 msn)
{
	be32p_replace_bits(&aeth->smsn, msn, SROCE_AETH_MSN);
}

/* Atomic Extended Transport Header (IBA 9.3.4), 28 bytes. */
struct sroce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;	/* swap (CmpSwap) or add (FetchAdd) data */
	__be64 compare;		/* compare data (CmpSwap only) */
} __packed __aligned(4);

static_assert(sizeof(struct sroce_atmeth) == 28);

static inline u64 sroce_atmeth_va(const struct sroce_atmeth *atm)
{
	return be64_to_cpu(atm->va);
}

static inline void sroce_atmeth_set_va(struct sroce_atmeth *atm, u64 va)
{
	atm->va = cpu_to_be64(va);
}

static inline u32 sroce_atmeth_rkey(const struct sroce_atmeth *atm)
{
	return be32_to_cpu(atm->rkey);
}

static inline void sroce_atmeth_set_rkey(struct sroce_atmeth *atm, u32 rkey)
{
	atm->rkey = cpu_to_be32(rkey);
}

static inline u64 sroce_atmeth_swap_add(const struct sroce_atmeth *atm)
{
	return be64_to_cpu(atm->swap_add);
}

static inline void sroce_atmeth_set_swap_add(struct sroce_atmeth *atm, u64 v)
{
	atm->swap_add = cpu_to_be64(v);
}

static inline u64 sroce_atmeth_compare(const struct sroce_atmeth *atm)
{
	return be64_to_cpu(atm->compare);
}

static inline void sroce_atmeth_set_compare(struct sroce_atmeth *atm, u64 v)
{
	atm->compare = cpu_to_be64(v);
}

/* Atomic ACK Extended Transport Header (IBA 9.3.6), 8 bytes. */
struct sroce_atmack {
	__be64 orig;		/* original remote data */
} __packed __aligned(4);

static_assert(sizeof(struct sroce_atmack) == 8);

static inline u64 sroce_atmack_orig(const struct sroce_atmack *ack)
{
	return be64_to_cpu(ack->orig);
}

static inline void sroce_atmack_set_orig(struct sroce_atmack *ack, u64 orig)
{
	ack->orig = cpu_to_be64(orig);
}

/* Datagram Extended Transport Header (IBA 9.3.2), 8 bytes. */
struct sroce_deth {
	__be32 qkey;
	__be32 sqp;		/* resv8, SrcQP */
};

#define SROCE_DETH_RESV8	GENMASK(31, 24)
#define SROCE_DETH_SQP		GENMASK(23, 0)

static_assert(sizeof(struct sroce_deth) == 8);
static_assert(SROCE_DETH_SQP == SROCE_QPN_MASK);

static inline u32 sroce_deth_qkey(const struct sroce_deth *deth)
{
	return be32_to_cpu(deth->qkey);
}

static inline void sroce_deth_set_qkey(struct sroce_deth *deth, u32 qkey)
{
	deth->qkey = cpu_to_be32(qkey);
}

static inline u32 sroce_deth_sqp(const struct sroce_deth *deth)
{
	return be32_get_bits(deth->sqp, SROCE_DETH_SQP);
}

static inline void sroce_deth_set_sqp(struct sroce_deth *deth, u32 qpn)
{
	be32p_replace_bits(&deth->sqp, qpn, SROCE_DETH_SQP);
}

/*
 * Immediate Data Extended Transport Header (IBA 9.3.7), 4 bytes. The data
 * is opaque and travels in network order up to the ib_wc, so it stays
 * __be32.
 */
struct sroce_immdt {
	__be32 imm;
};

static_assert(sizeof(struct sroce_immdt) == 4);

static inline __be32 sroce_immdt_imm(const struct sroce_immdt *immdt)
{
	return immdt->imm;
}

static inline void sroce_immdt_set_imm(struct sroce_immdt *immdt, __be32 imm)
{
	immdt->imm = imm;
}

/* Invalidate Extended Transport Header (IBA 9.3.8), 4 bytes. */
struct sroce_ieth {
	__be32 rkey;
};

static_assert(sizeof(struct sroce_ieth) == 4);

static inline u32 sroce_ieth_rkey(const struct sroce_ieth *ieth)
{
	return be32_to_cpu(ieth->rkey);
}

static inline void sroce_ieth_set_rkey(struct sroce_ieth *ieth, u32 rkey)
{
	ieth->rkey = cpu_to_be32(rkey);
}

#endif /* SROCE_HDR_H */
