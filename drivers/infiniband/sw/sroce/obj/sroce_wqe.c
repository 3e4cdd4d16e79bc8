// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Send and receive work requests: what a WQE slot of the rxe user ABI may
 * contain, how a kernel work request becomes one, and how big a slot is.
 *
 * One table, sroce_wr_infos[], says for every work request opcode on which
 * QP types it is valid, whether user space may post it, whether it carries
 * outgoing data, and which part of the rxe_send_wr union it uses. Both the
 * check of user slots and the conversion of kernel WRs go through it, so
 * that user and kernel posts obey the same rules.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/string.h>

#include "obj/sroce_wqe.h"

/*
 * The rxe user ABI fixes these sizes (user-abi.md 2.4, 2.5): librxe
 * computes slot addresses and SGE positions from them.
 */
static_assert(sizeof(struct rxe_send_wqe) == 208);
static_assert(sizeof(struct rxe_recv_wqe) == 40);
static_assert(sizeof(struct rxe_sge) == 16);

/* QP types of sroce_wr_info.qp_types; GSI QPs send like UD QPs. */
#define SROCE_WQE_RC		BIT(0)
#define SROCE_WQE_UC		BIT(1)
#define SROCE_WQE_UD		BIT(2)

/* Bits of sroce_wr_info.flags */
#define SROCE_WRF_USER		BIT(0)	/* in the user ABI */
#define SROCE_WRF_DATA		BIT(1)	/* sends payload: may be inline */
#define SROCE_WRF_IMM		BIT(2)	/* ex is immediate data */
#define SROCE_WRF_INV		BIT(3)	/* ex is an rkey to invalidate */
#define SROCE_WRF_ATOMIC	BIT(4)	/* 8 bytes back into one SGE */

/* The send flags a WQE keeps; IP_CSUM (LSO offload) means nothing here. */
#define SROCE_WQE_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/**
 * enum sroce_wr_part - which member of the rxe_send_wr union an opcode uses
 * @SROCE_PART_NONE: none
 * @SROCE_PART_RDMA: wr.rdma
 * @SROCE_PART_ATOMIC: wr.atomic
 * @SROCE_PART_SEND: wr.ud on UD and GSI QPs, none on RC and UC QPs
 * @SROCE_PART_MW: wr.mw
 * @SROCE_PART_REG: wr.reg
 */
enum sroce_wr_part {
	SROCE_PART_NONE,
	SROCE_PART_RDMA,
	SROCE_PART_ATOMIC,
	SROCE_PART_SEND,
	SROCE_PART_MW,
	SROCE_PART_REG,
};

/**
 * struct sroce_wr_info - what sroce supports of one work request opcode
 * @qp_types: SROCE_WQE_* QP types the opcode is valid on; 0 for an opcode
 *	sroce does not implement
 * @flags: SROCE_WRF_*
 * @part: the union member the opcode uses
 * @wc_opcode: the enum ib_wc_opcode of its send completion
 */
struct sroce_wr_info {
	u8 qp_types;
	u8 flags;
	u8 part;
	u8 wc_opcode;
};

#define SROCE_WR(op, _types, _flags, _part, wc)				\
	[IB_WR_##op] = {						\
		.qp_types = (_types),					\
		.flags = (_flags),					\
		.part = SROCE_PART_##_part,				\
		.wc_opcode = IB_WC_##wc,				\
	}

#define SROCE_RC_UC		(SROCE_WQE_RC | SROCE_WQE_UC)
#define SROCE_ALL_QPS		(SROCE_WQE_RC | SROCE_WQE_UC | SROCE_WQE_UD)

/*
 * Which operations a transport service carries follows from the BTH
 * opcodes IBA vol 1 chapter 9 defines for it (sroce_opcode.c): UD has only
 * SEND and SEND with immediate; UC adds RDMA WRITE (with immediate); RC
 * adds RDMA READ, the atomics and SEND with invalidate (IETH opcodes exist
 * for RC only). The local operations, invalidate and fast register, send
 * no packet and work on every type; binding a window needs a connected QP
 * (ibv_bind_mw(3)). Missing here, so refused: LSO, READ_WITH_INV and the
 * masked atomics (not implemented), REG_MR_INTEGRITY, and 15, librxe 44's
 * ATOMIC_WRITE, which kernel 6.1 does not have (user-abi.md 2.8).
 */
static const struct sroce_wr_info sroce_wr_infos[] = {
	SROCE_WR(RDMA_WRITE, SROCE_RC_UC, SROCE_WRF_USER | SROCE_WRF_DATA,
		 RDMA, RDMA_WRITE),
	SROCE_WR(RDMA_WRITE_WITH_IMM, SROCE_RC_UC,
		 SROCE_WRF_USER | SROCE_WRF_DATA | SROCE_WRF_IMM,
		 RDMA, RDMA_WRITE),
	SROCE_WR(SEND, SROCE_ALL_QPS, SROCE_WRF_USER | SROCE_WRF_DATA,
		 SEND, SEND),
	SROCE_WR(SEND_WITH_IMM, SROCE_ALL_QPS,
		 SROCE_WRF_USER | SROCE_WRF_DATA | SROCE_WRF_IMM, SEND, SEND),
	SROCE_WR(SEND_WITH_INV, SROCE_WQE_RC,
		 SROCE_WRF_USER | SROCE_WRF_DATA | SROCE_WRF_INV, NONE, SEND),
	SROCE_WR(RDMA_READ, SROCE_WQE_RC, SROCE_WRF_USER, RDMA, RDMA_READ),
	SROCE_WR(ATOMIC_CMP_AND_SWP, SROCE_WQE_RC,
		 SROCE_WRF_USER | SROCE_WRF_ATOMIC, ATOMIC, COMP_SWAP),
	SROCE_WR(ATOMIC_FETCH_AND_ADD, SROCE_WQE_RC,
		 SROCE_WRF_USER | SROCE_WRF_ATOMIC, ATOMIC, FETCH_ADD),
	SROCE_WR(LOCAL_INV, SROCE_ALL_QPS, SROCE_WRF_USER | SROCE_WRF_INV,
		 NONE, LOCAL_INV),
	SROCE_WR(BIND_MW, SROCE_RC_UC, SROCE_WRF_USER, MW, BIND_MW),
	/* Kernel only: wr.reg.mr is a kernel pointer (user-abi.md 2.4). */
	SROCE_WR(REG_MR, SROCE_ALL_QPS, 0, REG, REG_MR),
};

static const struct sroce_wr_info *sroce_wr_info(u32 opcode)
{
	if (opcode >= ARRAY_SIZE(sroce_wr_infos))
		return NULL;
	return &sroce_wr_infos[array_index_nospec(opcode,
						  ARRAY_SIZE(sroce_wr_infos))];
}

static unsigned int sroce_wqe_qp_bit(enum ib_qp_type qp_type)
{
	switch (qp_type) {
	case IB_QPT_RC:
		return SROCE_WQE_RC;
	case IB_QPT_UC:
		return SROCE_WQE_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_WQE_UD;
	default:
		return 0;
	}
}

/*
 * The table entry of @opcode if a QP with @lim may post it: known, valid
 * for the QP type, and in the user ABI when user space posted it.
 */
static const struct sroce_wr_info *
sroce_wqe_lookup(u32 opcode, const struct sroce_wqe_limits *lim)
{
	const struct sroce_wr_info *info = sroce_wr_info(opcode);

	if (!info || !(info->qp_types & sroce_wqe_qp_bit(lim->qp_type)))
		return NULL;
	if (lim->user && !(info->flags & SROCE_WRF_USER))
		return NULL;
	return info;
}

/* A datagram send: it goes to the address handle named by wr.ud.ah_num. */
static bool sroce_wqe_is_ud_send(const struct sroce_wr_info *info,
				 const struct sroce_wqe_limits *lim)
{
	return info->part == SROCE_PART_SEND &&
	       sroce_wqe_qp_bit(lim->qp_type) == SROCE_WQE_UD;
}

/* Copy the union member @info names, each field read once. */
static void sroce_wqe_read_part(const struct rxe_send_wqe *slot,
				const struct sroce_wr_info *info,
				const struct sroce_wqe_limits *lim,
				struct sroce_send_wqe *out)
{
	const struct rxe_send_wr *wr = &slot->wr;

	switch (info->part) {
	case SROCE_PART_RDMA:
		out->wr.rdma.remote_addr = READ_ONCE(wr->wr.rdma.remote_addr);
		out->wr.rdma.rkey = READ_ONCE(wr->wr.rdma.rkey);
		break;
	case SROCE_PART_ATOMIC:
		out->wr.atomic.remote_addr =
			READ_ONCE(wr->wr.atomic.remote_addr);
		out->wr.atomic.compare_add =
			READ_ONCE(wr->wr.atomic.compare_add);
		out->wr.atomic.swap = READ_ONCE(wr->wr.atomic.swap);
		out->wr.atomic.rkey = READ_ONCE(wr->wr.atomic.rkey);
		break;
	case SROCE_PART_SEND:
		if (!sroce_wqe_is_ud_send(info, lim))
			break;
		out->wr.ud.remote_qpn = READ_ONCE(wr->wr.ud.remote_qpn);
		out->wr.ud.remote_qkey = READ_ONCE(wr->wr.ud.remote_qkey);
		out->wr.ud.ah_num = READ_ONCE(wr->wr.ud.ah_num);
		out->wr.ud.pkey_index = READ_ONCE(wr->wr.ud.pkey_index);
		break;
	case SROCE_PART_MW:
		out->wr.mw.addr = READ_ONCE(wr->wr.mw.addr);
		out->wr.mw.length = READ_ONCE(wr->wr.mw.length);
		out->wr.mw.mr_lkey = READ_ONCE(wr->wr.mw.mr_lkey);
		out->wr.mw.mw_rkey = READ_ONCE(wr->wr.mw.mw_rkey);
		out->wr.mw.rkey = READ_ONCE(wr->wr.mw.rkey);
		out->wr.mw.access = READ_ONCE(wr->wr.mw.access);
		break;
	case SROCE_PART_REG:
		/* Only reached for kernel QPs: the lookup refused users. */
		out->wr.reg.mr = READ_ONCE(wr->wr.reg.mr);
		out->wr.reg.key = READ_ONCE(wr->wr.reg.key);
		out->wr.reg.access = READ_ONCE(wr->wr.reg.access);
		break;
	}
}

/*
 * The payload rules, on the copy in @out. The SGE lengths are read once
 * each and added up in 64 bits, so that neither a slot changing under us
 * nor 63 lengths close to 4 GiB can make a wrong sum look right.
 */
static enum ib_wc_status
sroce_wqe_check_payload(const struct rxe_send_wqe *slot,
			const struct sroce_wr_info *info,
			const struct sroce_wqe_limits *lim,
			struct sroce_send_wqe *out)
{
	u64 sum = 0;
	u32 i;

	if (out->send_flags & IB_SEND_INLINE) {
		/*
		 * The data is packed in the slot, which holds max_inline
		 * bytes. num_sge is left over from the old post API, which
		 * keeps the caller's SGE count (user-abi.md 2.4): ignore it.
		 * librxe 44's wr_set_inline_data_list() posts a length of 0
		 * here; that sends an empty message, as with rxe.
		 */
		out->num_sge = 0;
		return out->length > lim->max_inline ? IB_WC_LOC_LEN_ERR :
						       IB_WC_SUCCESS;
	}

	/* The slot holds max_sge SGEs; do not read beyond them. */
	if (out->num_sge > lim->max_sge)
		return IB_WC_LOC_QP_OP_ERR;
	/* The max_msg_sz the port reports: no message may be longer. */
	if (out->length > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;

	/*
	 * The length is what goes on the wire and into the completion; it
	 * must be what the SGEs describe. This refuses librxe 44's
	 * wr_set_sge_list(), which posts num_sge times the first length.
	 */
	for (i = 0; i < out->num_sge; i++)
		sum += READ_ONCE(slot->dma.sge[i].length);
	if (sum != out->length)
		return IB_WC_LOC_LEN_ERR;

	/*
	 * An atomic operates on one 64-bit quantity and returns its original
	 * value into the local buffer (IBA vol 1 chapter 9, AtomicETH and
	 * AtomicAckETH): one SGE of exactly 8 bytes.
	 */
	if ((info->flags & SROCE_WRF_ATOMIC) &&
	    (out->length != sizeof(u64) || out->num_sge != 1))
		return IB_WC_LOC_LEN_ERR;

	return IB_WC_SUCCESS;
}

/**
 * sroce_wqe_check_send() - validate a send WQE slot into a private copy
 * @slot: the slot; for a user QP, memory user space may change meanwhile
 * @lim: limits of the QP it was posted to
 * @out: the copy
 *
 * Reads each field of the slot's fixed part once into @out, fills the
 * union member of the opcode (the others stay zero) and checks the copy:
 *
 * - The opcode must be implemented, valid for the QP type (see
 *   sroce_wr_infos[]) and, for user space, part of the user ABI: REG_MR carries a kernel
 *   pointer. Otherwise IB_WC_LOC_QP_OP_ERR.
 * - IB_SEND_INLINE on an opcode without outgoing payload (READ, atomics,
 *   local operations): IB_WC_LOC_QP_OP_ERR.
 * - A UD or GSI send with ah_num 0: IB_WC_LOC_QP_OP_ERR. sroce hands out
 *   nonzero AH numbers only, so 0 means the old AV-in-WQE protocol, which
 *   is not supported (user-abi.md R9).
 * - More SGEs than @lim->max_sge: IB_WC_LOC_QP_OP_ERR.
 * - Inline data longer than @lim->max_inline, a length above
 *   SROCE_MAX_MSG_SIZE, a length other than the sum of the SGE lengths,
 *   an atomic with other than one SGE of 8 bytes: IB_WC_LOC_LEN_ERR.
 *
 * @lim->max_sge and @lim->max_inline must not exceed what the slot holds;
 * nothing beyond them is read.
 *
 * Context: any; takes no locks.
 * Return: IB_WC_SUCCESS, or the status to complete the WQE with. On
 * failure @out->wr_id and @out->opcode are valid, the rest is not.
 */
enum ib_wc_status sroce_wqe_check_send(const struct rxe_send_wqe *slot,
				       const struct sroce_wqe_limits *lim,
				       struct sroce_send_wqe *out)
{
	const struct sroce_wr_info *info;

	memset(out, 0, sizeof(*out));
	out->wr_id = READ_ONCE(slot->wr.wr_id);
	out->opcode = READ_ONCE(slot->wr.opcode);
	out->send_flags = READ_ONCE(slot->wr.send_flags) & SROCE_WQE_SEND_FLAGS;
	out->length = READ_ONCE(slot->dma.length);
	out->num_sge = READ_ONCE(slot->dma.num_sge);

	info = sroce_wqe_lookup(out->opcode, lim);
	if (!info)
		return IB_WC_LOC_QP_OP_ERR;
	if ((out->send_flags & IB_SEND_INLINE) &&
	    !(info->flags & SROCE_WRF_DATA))
		return IB_WC_LOC_QP_OP_ERR;

	/* imm_data stays in wire order: read it through the u32 member. */
	if (info->flags & (SROCE_WRF_IMM | SROCE_WRF_INV))
		out->ex = READ_ONCE(slot->wr.ex.invalidate_rkey);
	sroce_wqe_read_part(slot, info, lim, out);
	if (sroce_wqe_is_ud_send(info, lim) && !out->wr.ud.ah_num)
		return IB_WC_LOC_QP_OP_ERR;

	return sroce_wqe_check_payload(slot, info, lim, out);
}

/**
 * sroce_wqe_wc_opcode() - the completion opcode of a send work request
 * @wr_opcode: an enum ib_wr_opcode value
 *
 * Context: any.
 * Return: the enum ib_wc_opcode for the send CQE; IB_WC_SEND for an opcode
 * sroce does not implement (its completion is an error, whose opcode IBA
 * leaves undefined).
 */
enum ib_wc_opcode sroce_wqe_wc_opcode(u32 wr_opcode)
{
	const struct sroce_wr_info *info = sroce_wr_info(wr_opcode);

	return info ? info->wc_opcode : IB_WC_SEND;
}

/* The union member of a kernel WR, from its ib_*_wr container. */
static void sroce_wqe_fill_part(const struct ib_send_wr *wr, u32 ah_num,
				const struct sroce_wr_info *info,
				const struct sroce_wqe_limits *lim,
				struct rxe_send_wqe *slot)
{
	struct rxe_send_wr *swr = &slot->wr;

	if (info->flags & SROCE_WRF_IMM)
		swr->ex.imm_data = wr->ex.imm_data;
	else if (info->flags & SROCE_WRF_INV)
		swr->ex.invalidate_rkey = wr->ex.invalidate_rkey;

	switch (info->part) {
	case SROCE_PART_RDMA:
		swr->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		swr->wr.rdma.rkey = rdma_wr(wr)->rkey;
		slot->iova = swr->wr.rdma.remote_addr;
		break;
	case SROCE_PART_ATOMIC:
		swr->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		swr->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		swr->wr.atomic.swap = atomic_wr(wr)->swap;
		swr->wr.atomic.rkey = atomic_wr(wr)->rkey;
		slot->iova = swr->wr.atomic.remote_addr;
		break;
	case SROCE_PART_SEND:
		if (!sroce_wqe_is_ud_send(info, lim))
			break;
		swr->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		swr->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		swr->wr.ud.pkey_index = ud_wr(wr)->pkey_index;
		swr->wr.ud.ah_num = ah_num;
		break;
	case SROCE_PART_REG:
		swr->wr.reg.mr = reg_wr(wr)->mr;
		swr->wr.reg.key = reg_wr(wr)->key;
		swr->wr.reg.access = reg_wr(wr)->access;
		break;
	}
}

/*
 * Copy the data at the SGE addresses (kernel virtual addresses) into the
 * slot. If it does not fit, copy nothing and leave a length the check
 * refuses.
 */
static void sroce_wqe_fill_inline(const struct ib_send_wr *wr,
				  const struct sroce_wqe_limits *lim,
				  struct rxe_send_wqe *slot)
{
	u8 *dst = slot->dma.inline_data;
	u64 sum = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		sum += wr->sg_list[i].length;
	slot->dma.length = min_t(u64, sum, U32_MAX);
	if (sum > lim->max_inline)
		return;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		memcpy(dst, (void *)(uintptr_t)sge->addr, sge->length);
		dst += sge->length;
	}
}

/* Copy the SGE list, unless the slot has no room for it. */
static void sroce_wqe_fill_sges(const struct ib_send_wr *wr,
				const struct sroce_wqe_limits *lim,
				struct rxe_send_wqe *slot)
{
	u64 sum = 0;
	int i;

	slot->dma.num_sge = wr->num_sge;
	if (wr->num_sge > lim->max_sge)
		return;

	for (i = 0; i < wr->num_sge; i++) {
		slot->dma.sge[i].addr = wr->sg_list[i].addr;
		slot->dma.sge[i].length = wr->sg_list[i].length;
		slot->dma.sge[i].lkey = wr->sg_list[i].lkey;
		sum += wr->sg_list[i].length;
	}
	slot->dma.length = min_t(u64, sum, U32_MAX);
}

/**
 * sroce_wqe_from_send_wr() - build a send WQE slot from a kernel WR
 * @wr: the work request (one, not the list behind it)
 * @ah_num: the number of the address handle of a UD or GSI send, which
 *	the caller resolved from ud_wr(@wr)->ah; ignored otherwise
 * @lim: limits of the QP; @lim->user is false
 * @slot: the slot, with room for @lim->max_sge SGEs and @lim->max_inline
 *	bytes
 *
 * Fills the fixed part, the union member of the opcode (from rdma_wr(),
 * atomic_wr(), ud_wr() or reg_wr()), iova, and either the SGEs or, for
 * IB_SEND_INLINE, the data the SGEs point at. Then checks the slot with
 * sroce_wqe_check_send(), so kernel WRs obey the rules user WQEs do. A
 * container is only read when the opcode is valid for the QP type, so a
 * bad opcode never makes us read past a smaller ib_send_wr.
 *
 * BIND_MW has no kernel WR form in 6.1 (no struct carries the window) and
 * is refused.
 *
 * Context: any; takes no locks.
 * Return: 0, or -EINVAL if sroce_wqe_check_send() refuses the slot or
 * @wr->num_sge is negative. The slot content is undefined then.
 */
int sroce_wqe_from_send_wr(const struct ib_send_wr *wr, u32 ah_num,
			   const struct sroce_wqe_limits *lim,
			   struct rxe_send_wqe *slot)
{
	const struct sroce_wr_info *info;
	struct sroce_send_wqe copy;

	if (wr->num_sge < 0)
		return -EINVAL;

	memset(slot, 0, sizeof(*slot));
	slot->wr.wr_id = wr->wr_id;
	slot->wr.opcode = wr->opcode;
	slot->wr.send_flags = wr->send_flags;

	info = sroce_wqe_lookup(wr->opcode, lim);
	if (info) {
		if (info->part == SROCE_PART_MW)
			return -EINVAL;
		sroce_wqe_fill_part(wr, ah_num, info, lim, slot);
		if ((wr->send_flags & IB_SEND_INLINE) &&
		    (info->flags & SROCE_WRF_DATA))
			sroce_wqe_fill_inline(wr, lim, slot);
		else
			sroce_wqe_fill_sges(wr, lim, slot);
		slot->dma.resid = slot->dma.length;
	}

	if (sroce_wqe_check_send(slot, lim, &copy) != IB_WC_SUCCESS)
		return -EINVAL;
	return 0;
}

/**
 * sroce_wqe_check_recv() - validate a receive WQE slot into a private copy
 * @slot: the slot of an RQ or SRQ; for user space, memory it may change
 *	meanwhile
 * @max_sge: the reported max_recv_sge of the queue; the slot must hold
 *	this many SGEs
 * @out: the copy, SGEs included
 *
 * Copies wr_id, num_sge and the SGEs once and computes the length from
 * the copy; dma.length of the slot is not trusted. More than @max_sge
 * (or SROCE_MAX_SGE) SGEs are refused: the slot holds no more. A sum of
 * lengths that does not fit in the u32 of byte_len is refused as well. A
 * buffer list larger than SROCE_MAX_MSG_SIZE is accepted: it only means
 * that no message can fill it.
 *
 * Context: any; takes no locks.
 * Return: 0, or -EINVAL; @out->wr_id is valid either way.
 */
int sroce_wqe_check_recv(const struct rxe_recv_wqe *slot, u32 max_sge,
			 struct sroce_recv_wqe *out)
{
	u64 sum = 0;
	u32 i;

	out->wr_id = READ_ONCE(slot->wr_id);
	out->num_sge = READ_ONCE(slot->dma.num_sge);
	out->length = 0;
	if (out->num_sge > min_t(u32, max_sge, SROCE_MAX_SGE))
		return -EINVAL;

	memcpy(out->sge, slot->dma.sge, out->num_sge * sizeof(out->sge[0]));
	for (i = 0; i < out->num_sge; i++)
		sum += out->sge[i].length;
	if (sum > U32_MAX)
		return -EINVAL;
	out->length = sum;
	return 0;
}

/**
 * sroce_wqe_from_recv_wr() - build a receive WQE slot from a kernel WR
 * @wr: the work request (one, not the list behind it)
 * @max_sge: the queue's max_recv_sge; the slot holds this many SGEs
 * @slot: the slot
 *
 * Fills wr_id, the SGEs and dma.length/resid/num_sge, as librxe does.
 *
 * Context: any; takes no locks.
 * Return: 0, or -EINVAL for a negative num_sge, more than @max_sge SGEs,
 * or lengths whose sum does not fit in 32 bits (sroce_wqe_check_recv()
 * would refuse them). The slot is untouched then.
 */
int sroce_wqe_from_recv_wr(const struct ib_recv_wr *wr, u32 max_sge,
			   struct rxe_recv_wqe *slot)
{
	u64 sum = 0;
	int i;

	if (wr->num_sge < 0 ||
	    wr->num_sge > min_t(u32, max_sge, SROCE_MAX_SGE))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		sum += wr->sg_list[i].length;
	if (sum > U32_MAX)
		return -EINVAL;

	memset(slot, 0, sizeof(*slot));
	slot->wr_id = wr->wr_id;
	slot->dma.num_sge = wr->num_sge;
	slot->dma.length = sum;
	slot->dma.resid = sum;
	for (i = 0; i < wr->num_sge; i++) {
		slot->dma.sge[i].addr = wr->sg_list[i].addr;
		slot->dma.sge[i].length = wr->sg_list[i].length;
		slot->dma.sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/**
 * sroce_wqe_send_size() - bytes a send slot needs
 * @max_sge: SGEs it must hold
 * @max_inline: inline bytes it must hold
 *
 * The SGE array and the inline data share the room after the fixed part
 * (user-abi.md 2.4). The ring rounds this up to a power of two.
 *
 * Context: any.
 * Return: 208 + max(16 * @max_sge, @max_inline), saturated at SIZE_MAX.
 */
size_t sroce_wqe_send_size(u32 max_sge, u32 max_inline)
{
	size_t sges = array_size(max_sge, sizeof(struct rxe_sge));

	return size_add(sizeof(struct rxe_send_wqe),
			max_t(size_t, sges, max_inline));
}

/**
 * sroce_wqe_recv_size() - bytes a receive slot needs
 * @max_sge: SGEs it must hold
 *
 * Context: any.
 * Return: 40 + 16 * @max_sge, saturated at SIZE_MAX.
 */
size_t sroce_wqe_recv_size(u32 max_sge)
{
	return size_add(sizeof(struct rxe_recv_wqe),
			array_size(max_sge, sizeof(struct rxe_sge)));
}

/**
 * sroce_wqe_send_caps() - what a send slot of a given size holds
 * @slot_size: the slot size the ring uses (after rounding)
 * @max_sge: SGEs that fit, at most SROCE_MAX_SGE
 * @max_inline: inline bytes that fit, at most SROCE_MAX_INLINE_DATA
 *
 * create_qp reports these to user space, and librxe enforces them
 * (user-abi.md 2.1), so the room rounding added is not wasted.
 *
 * Context: any.
 */
void sroce_wqe_send_caps(size_t slot_size, u32 *max_sge, u32 *max_inline)
{
	size_t room = 0;

	if (slot_size > sizeof(struct rxe_send_wqe))
		room = slot_size - sizeof(struct rxe_send_wqe);
	*max_sge = min_t(size_t, room / sizeof(struct rxe_sge), SROCE_MAX_SGE);
	*max_inline = min_t(size_t, room, SROCE_MAX_INLINE_DATA);
}

/**
 * sroce_wqe_recv_caps() - SGEs a receive slot of a given size holds
 * @slot_size: the slot size the ring uses (after rounding)
 *
 * Context: any.
 * Return: the SGEs that fit, at most SROCE_MAX_SGE.
 */
u32 sroce_wqe_recv_caps(size_t slot_size)
{
	size_t room = 0;

	if (slot_size > sizeof(struct rxe_recv_wqe))
		room = slot_size - sizeof(struct rxe_recv_wqe);
	return min_t(size_t, room / sizeof(struct rxe_sge), SROCE_MAX_SGE);
}
