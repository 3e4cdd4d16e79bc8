/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce work requests: validation of send and receive WQE slots of the
 * rxe user ABI, conversion of kernel ib_send_wr/ib_recv_wr into slots, and
 * slot sizing.
 *
 * A slot of a user QP lives in memory that user space maps writable and
 * may change at any time, also while the kernel reads it. The checks below
 * therefore read every field of the fixed part once into a private copy
 * and validate only that copy. The SGE array and the inline data stay in
 * the slot; whoever moves the payload later reads them again and must
 * treat what it finds as untrusted: never move more than the validated
 * length, never read more than the validated number of SGEs.
 *
 * Everything here is pure: no QP object, no locks, any context.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_WQE_H
#define SROCE_WQE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "core/sroce_param.h"

/**
 * struct sroce_wqe_limits - limits of the QP a WQE was posted to
 * @qp_type: IB_QPT_RC, IB_QPT_UC, IB_QPT_UD or IB_QPT_GSI; any other type
 *	has no valid opcode
 * @max_sge: the QP's reported max_send_sge or max_recv_sge; the slot must
 *	have room for this many SGEs (sroce_wqe_send_caps())
 * @max_inline: the QP's reported max_inline_data; the slot must have room
 *	for this many bytes
 * @user: the WQE was posted by user space, so kernel-only opcodes are
 *	refused
 */
struct sroce_wqe_limits {
	enum ib_qp_type qp_type;
	u32 max_sge;
	u32 max_inline;
	bool user;
};

/**
 * struct sroce_send_wqe - validated private copy of a send WQE's fixed part
 * @wr_id: the consumer's cookie, for the completion
 * @opcode: an enum ib_wr_opcode value valid for the QP
 * @send_flags: IB_SEND_FENCE, _SIGNALED, _SOLICITED and _INLINE; other
 *	bits of the slot are dropped
 * @ex: immediate data (big endian, as in the slot) of the _WITH_IMM
 *	opcodes, or the rkey to invalidate of SEND_WITH_INV and LOCAL_INV;
 *	0 for the other opcodes
 * @length: payload bytes: the inline length, or the sum of the SGE
 *	lengths as they were when checked
 * @num_sge: SGEs in the slot; 0 when the data is inline
 * @wr: opcode-specific part; only the member of @opcode is filled, the
 *	rest is zero
 * @wr.rdma: RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ
 * @wr.rdma.remote_addr: remote virtual address
 * @wr.rdma.rkey: remote key
 * @wr.atomic: ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD
 * @wr.atomic.remote_addr: remote virtual address
 * @wr.atomic.compare_add: compare value, or value to add
 * @wr.atomic.swap: swap value
 * @wr.atomic.rkey: remote key
 * @wr.ud: SEND and SEND_WITH_IMM on UD and GSI QPs
 * @wr.ud.remote_qpn: destination QP
 * @wr.ud.remote_qkey: Q_Key for the DETH
 * @wr.ud.ah_num: address handle number, never 0
 * @wr.ud.pkey_index: P_Key index (GSI)
 * @wr.mw: BIND_MW
 * @wr.mw.addr: start of the window
 * @wr.mw.length: length of the window
 * @wr.mw.mr_lkey: lkey of the MR the window is bound to
 * @wr.mw.mw_rkey: current rkey of the window
 * @wr.mw.rkey: new rkey of the window
 * @wr.mw.access: IB_ACCESS_* of the window
 * @wr.reg: REG_MR, kernel QPs only
 * @wr.reg.mr: the MR to register
 * @wr.reg.key: its new key
 * @wr.reg.access: IB_ACCESS_* for it
 */
struct sroce_send_wqe {
	u64 wr_id;
	u32 opcode;
	u32 send_flags;
	u32 ex;
	u32 length;
	u32 num_sge;
	union {
		struct {
			u64 remote_addr;
			u32 rkey;
		} rdma;
		struct {
			u64 remote_addr;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			u32 remote_qpn;
			u32 remote_qkey;
			u32 ah_num;
			u16 pkey_index;
		} ud;
		struct {
			u64 addr;
			u64 length;
			u32 mr_lkey;
			u32 mw_rkey;
			u32 rkey;
			u32 access;
		} mw;
		struct {
			struct ib_mr *mr;
			u32 key;
			u32 access;
		} reg;
	} wr;
};

/**
 * struct sroce_recv_wqe - validated private copy of a receive WQE
 * @wr_id: the consumer's cookie, for the completion
 * @num_sge: valid entries in @sge
 * @length: sum of the lengths in @sge, computed from the copy
 * @sge: the SGEs; entries from @num_sge on are undefined
 *
 * About 1 KiB: keep it in the QP or SRQ, not on the stack.
 */
struct sroce_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct rxe_sge sge[SROCE_MAX_SGE];
};

enum ib_wc_status sroce_wqe_check_send(const struct rxe_send_wqe *slot,
				       const struct sroce_wqe_limits *lim,
				       struct sroce_send_wqe *out);
int sroce_wqe_from_send_wr(const struct ib_send_wr *wr, u32 ah_num,
			   const struct sroce_wqe_limits *lim,
			   struct rxe_send_wqe *slot);
enum ib_wc_opcode sroce_wqe_wc_opcode(u32 wr_opcode);

int sroce_wqe_check_recv(const struct rxe_recv_wqe *slot, u32 max_sge,
			 struct sroce_recv_wqe *out);
int sroce_wqe_from_recv_wr(const struct ib_recv_wr *wr, u32 max_sge,
			   struct rxe_recv_wqe *slot);

size_t sroce_wqe_send_size(u32 max_sge, u32 max_inline);
size_t sroce_wqe_recv_size(u32 max_sge);
void sroce_wqe_send_caps(size_t slot_size, u32 *max_sge, u32 *max_inline);
u32 sroce_wqe_recv_caps(size_t slot_size);

/**
 * sroce_wqe_sges() - the SGE array of a send slot
 * @slot: the slot
 *
 * Return: the first SGE; only as many as the checked num_sge are valid,
 * and their lengths may have changed since the check.
 */
static inline const struct rxe_sge *
sroce_wqe_sges(const struct rxe_send_wqe *slot)
{
	return slot->dma.sge;
}

/**
 * sroce_wqe_inline() - the inline data of a send slot
 * @slot: the slot
 *
 * Return: the first inline byte; the checked length of them are in the
 * slot.
 */
static inline const void *sroce_wqe_inline(const struct rxe_send_wqe *slot)
{
	return slot->dma.inline_data;
}

#endif /* SROCE_WQE_H */
