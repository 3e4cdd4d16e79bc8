// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The opcode table: one entry per RC, UC and UD opcode of IBA vol 1,
 * chapter 9. Opcodes missing here (RD, CNP, the reserved and
 * manufacturer-specific ranges) are not supported and sroce_opcode_lookup()
 * reports them as such.
 */

#include <linux/kernel.h>
#include <linux/nospec.h>

#include "wire/sroce_opcode.h"

#define SROCE_OP(op, _hdrs, _flags)					\
	[IB_OPCODE_##op] = {						\
		.name = #op,						\
		.flags = (_flags),					\
		.opcode = IB_OPCODE_##op,				\
		.hdrs = (_hdrs),					\
	}

/* What every packet of a message of one kind has in common. */
#define SROCE_SEND	(SROCE_OPF_REQ | SROCE_OPF_SEND | SROCE_OPF_PAYLOAD | \
			 SROCE_OPF_RWQE)
#define SROCE_WRITE	(SROCE_OPF_REQ | SROCE_OPF_WRITE | SROCE_OPF_PAYLOAD)
#define SROCE_READ_REQ	(SROCE_OPF_REQ | SROCE_OPF_READ)
#define SROCE_READ_RSP	(SROCE_OPF_RESP | SROCE_OPF_READ | SROCE_OPF_PAYLOAD)
#define SROCE_ATOMIC	(SROCE_OPF_REQ | SROCE_OPF_ATOMIC)
#define SROCE_ATOMIC_RSP (SROCE_OPF_RESP | SROCE_OPF_ATOMIC)

/* Message ends at which the SE bit counts; WRITEs only with immediate. */
#define SROCE_SEND_END	(SROCE_OPF_LAST | SROCE_OPF_SOLICIT)
#define SROCE_SEND_ONLY	(SROCE_OPF_ONLY | SROCE_OPF_SOLICIT)
#define SROCE_IMM_END	(SROCE_OPF_LAST | SROCE_OPF_SOLICIT | SROCE_OPF_RWQE)
#define SROCE_IMM_ONLY	(SROCE_OPF_ONLY | SROCE_OPF_SOLICIT | SROCE_OPF_RWQE)

static const struct sroce_opcode_info sroce_opcodes[] = {
	SROCE_OP(RC_SEND_FIRST, 0, SROCE_SEND | SROCE_OPF_FIRST),
	SROCE_OP(RC_SEND_MIDDLE, 0, SROCE_SEND | SROCE_OPF_MIDDLE),
	SROCE_OP(RC_SEND_LAST, 0, SROCE_SEND | SROCE_SEND_END),
	SROCE_OP(RC_SEND_LAST_WITH_IMMEDIATE, SROCE_HAS_IMMDT,
		 SROCE_SEND | SROCE_SEND_END),
	SROCE_OP(RC_SEND_ONLY, 0, SROCE_SEND | SROCE_SEND_ONLY),
	SROCE_OP(RC_SEND_ONLY_WITH_IMMEDIATE, SROCE_HAS_IMMDT,
		 SROCE_SEND | SROCE_SEND_ONLY),
	SROCE_OP(RC_RDMA_WRITE_FIRST, SROCE_HAS_RETH,
		 SROCE_WRITE | SROCE_OPF_FIRST),
	SROCE_OP(RC_RDMA_WRITE_MIDDLE, 0, SROCE_WRITE | SROCE_OPF_MIDDLE),
	SROCE_OP(RC_RDMA_WRITE_LAST, 0, SROCE_WRITE | SROCE_OPF_LAST),
	SROCE_OP(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, SROCE_HAS_IMMDT,
		 SROCE_WRITE | SROCE_IMM_END),
	SROCE_OP(RC_RDMA_WRITE_ONLY, SROCE_HAS_RETH,
		 SROCE_WRITE | SROCE_OPF_ONLY),
	SROCE_OP(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		 SROCE_HAS_RETH | SROCE_HAS_IMMDT,
		 SROCE_WRITE | SROCE_IMM_ONLY),
	SROCE_OP(RC_RDMA_READ_REQUEST, SROCE_HAS_RETH,
		 SROCE_READ_REQ | SROCE_OPF_ONLY),
	SROCE_OP(RC_RDMA_READ_RESPONSE_FIRST, SROCE_HAS_AETH,
		 SROCE_READ_RSP | SROCE_OPF_FIRST),
	SROCE_OP(RC_RDMA_READ_RESPONSE_MIDDLE, 0,
		 SROCE_READ_RSP | SROCE_OPF_MIDDLE),
	SROCE_OP(RC_RDMA_READ_RESPONSE_LAST, SROCE_HAS_AETH,
		 SROCE_READ_RSP | SROCE_OPF_LAST),
	SROCE_OP(RC_RDMA_READ_RESPONSE_ONLY, SROCE_HAS_AETH,
		 SROCE_READ_RSP | SROCE_OPF_ONLY),
	SROCE_OP(RC_ACKNOWLEDGE, SROCE_HAS_AETH,
		 SROCE_OPF_RESP | SROCE_OPF_ONLY),
	SROCE_OP(RC_ATOMIC_ACKNOWLEDGE, SROCE_HAS_AETH | SROCE_HAS_ATMACK,
		 SROCE_ATOMIC_RSP | SROCE_OPF_ONLY),
	SROCE_OP(RC_COMPARE_SWAP, SROCE_HAS_ATMETH,
		 SROCE_ATOMIC | SROCE_OPF_ONLY),
	SROCE_OP(RC_FETCH_ADD, SROCE_HAS_ATMETH,
		 SROCE_ATOMIC | SROCE_OPF_ONLY),
	SROCE_OP(RC_SEND_LAST_WITH_INVALIDATE, SROCE_HAS_IETH,
		 SROCE_SEND | SROCE_SEND_END),
	SROCE_OP(RC_SEND_ONLY_WITH_INVALIDATE, SROCE_HAS_IETH,
		 SROCE_SEND | SROCE_SEND_ONLY),

	SROCE_OP(UC_SEND_FIRST, 0, SROCE_SEND | SROCE_OPF_FIRST),
	SROCE_OP(UC_SEND_MIDDLE, 0, SROCE_SEND | SROCE_OPF_MIDDLE),
	SROCE_OP(UC_SEND_LAST, 0, SROCE_SEND | SROCE_SEND_END),
	SROCE_OP(UC_SEND_LAST_WITH_IMMEDIATE, SROCE_HAS_IMMDT,
		 SROCE_SEND | SROCE_SEND_END),
	SROCE_OP(UC_SEND_ONLY, 0, SROCE_SEND | SROCE_SEND_ONLY),
	SROCE_OP(UC_SEND_ONLY_WITH_IMMEDIATE, SROCE_HAS_IMMDT,
		 SROCE_SEND | SROCE_SEND_ONLY),
	SROCE_OP(UC_RDMA_WRITE_FIRST, SROCE_HAS_RETH,
		 SROCE_WRITE | SROCE_OPF_FIRST),
	SROCE_OP(UC_RDMA_WRITE_MIDDLE, 0, SROCE_WRITE | SROCE_OPF_MIDDLE),
	SROCE_OP(UC_RDMA_WRITE_LAST, 0, SROCE_WRITE | SROCE_OPF_LAST),
	SROCE_OP(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, SROCE_HAS_IMMDT,
		 SROCE_WRITE | SROCE_IMM_END),
	SROCE_OP(UC_RDMA_WRITE_ONLY, SROCE_HAS_RETH,
		 SROCE_WRITE | SROCE_OPF_ONLY),
	SROCE_OP(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		 SROCE_HAS_RETH | SROCE_HAS_IMMDT,
		 SROCE_WRITE | SROCE_IMM_ONLY),

	SROCE_OP(UD_SEND_ONLY, SROCE_HAS_DETH, SROCE_SEND | SROCE_SEND_ONLY),
	SROCE_OP(UD_SEND_ONLY_WITH_IMMEDIATE, SROCE_HAS_DETH | SROCE_HAS_IMMDT,
		 SROCE_SEND | SROCE_SEND_ONLY),
};

/**
 * sroce_opcode_lookup() - find the properties of a BTH opcode
 * @opcode: opcode from a BTH, possibly received from the wire
 *
 * Return: the table entry, or NULL if @opcode is not an RC, UC or UD
 * opcode this driver implements.
 */
const struct sroce_opcode_info *sroce_opcode_lookup(u8 opcode)
{
	const struct sroce_opcode_info *info;

	if (opcode >= ARRAY_SIZE(sroce_opcodes))
		return NULL;
	info = &sroce_opcodes[array_index_nospec(opcode,
						 ARRAY_SIZE(sroce_opcodes))];
	return info->name ? info : NULL;
}

/**
 * sroce_opcode_may_follow() - check the packet order inside messages
 * @prev: opcode of the previous in-sequence packet of the same QP and
 *	  direction (requests, or responses), or NULL at a message boundary
 * @next: opcode of the packet that follows it
 *
 * A FIRST or MIDDLE packet must be followed by a MIDDLE or LAST packet of
 * the same message kind and transport; after a LAST or ONLY packet (or
 * none) a new message has to begin with a FIRST or ONLY packet.
 *
 * Return: true if IBA allows @next right after @prev.
 */
bool sroce_opcode_may_follow(const struct sroce_opcode_info *prev,
			     const struct sroce_opcode_info *next)
{
	if (!prev || sroce_opcode_ends_msg(prev))
		return sroce_opcode_starts_msg(next);

	return !sroce_opcode_starts_msg(next) &&
	       sroce_opcode_transport(prev) == sroce_opcode_transport(next) &&
	       (prev->flags & SROCE_OPF_KIND) == (next->flags & SROCE_OPF_KIND);
}
