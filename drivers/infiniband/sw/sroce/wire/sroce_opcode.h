/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-opcode properties of the RC, UC and UD transports (IBA vol 1,
 * chapter 9): which extension headers follow the BTH, where a packet sits
 * in its message, and what it asks of the receiver.
 *
 * The table stores only which headers are present. Offsets and lengths are
 * derived from that set and the header sizes in sroce_hdr.h, because IBA
 * always places the extension headers in one canonical order.
 */

#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <rdma/ib_pack.h>

#include "wire/sroce_hdr.h"

/* Extension headers, numbered in the order they follow the BTH. */
enum sroce_hdr_id {
	SROCE_HDR_DETH,
	SROCE_HDR_RETH,
	SROCE_HDR_ATMETH,
	SROCE_HDR_AETH,
	SROCE_HDR_ATMACK,
	SROCE_HDR_IMMDT,
	SROCE_HDR_IETH,
	SROCE_HDR_NR
};

/* Bits of sroce_opcode_info.hdrs */
#define SROCE_HAS_DETH		BIT(SROCE_HDR_DETH)
#define SROCE_HAS_RETH		BIT(SROCE_HDR_RETH)
#define SROCE_HAS_ATMETH	BIT(SROCE_HDR_ATMETH)
#define SROCE_HAS_AETH		BIT(SROCE_HDR_AETH)
#define SROCE_HAS_ATMACK	BIT(SROCE_HDR_ATMACK)
#define SROCE_HAS_IMMDT		BIT(SROCE_HDR_IMMDT)
#define SROCE_HAS_IETH		BIT(SROCE_HDR_IETH)

#define SROCE_BTH_LEN		sizeof(struct sroce_bth)

/**
 * sroce_ext_hdrs_len() - total length of a set of extension headers
 * @hdrs: SROCE_HAS_* mask
 *
 * Return: the sum of the sizes of the headers in @hdrs.
 */
static inline unsigned int sroce_ext_hdrs_len(unsigned int hdrs)
{
	return (hdrs & SROCE_HAS_DETH ? sizeof(struct sroce_deth) : 0) +
	       (hdrs & SROCE_HAS_RETH ? sizeof(struct sroce_reth) : 0) +
	       (hdrs & SROCE_HAS_ATMETH ? sizeof(struct sroce_atmeth) : 0) +
	       (hdrs & SROCE_HAS_AETH ? sizeof(struct sroce_aeth) : 0) +
	       (hdrs & SROCE_HAS_ATMACK ? sizeof(struct sroce_atmack) : 0) +
	       (hdrs & SROCE_HAS_IMMDT ? sizeof(struct sroce_immdt) : 0) +
	       (hdrs & SROCE_HAS_IETH ? sizeof(struct sroce_ieth) : 0);
}

/* Transport field of an opcode: IB_OPCODE_RC, _UC or _UD. */
#define SROCE_OPCODE_TRANSPORT	GENMASK(7, 5)

/*
 * Bits of sroce_opcode_info.flags. A single-packet message is marked
 * SROCE_OPF_ONLY, which is FIRST and LAST at once; a packet that neither
 * opens nor closes a message is MIDDLE.
 */
#define SROCE_OPF_FIRST		BIT(0)	/* opens a message */
#define SROCE_OPF_MIDDLE	BIT(1)	/* continues one */
#define SROCE_OPF_LAST		BIT(2)	/* closes it */
#define SROCE_OPF_ONLY		(SROCE_OPF_FIRST | SROCE_OPF_LAST)
#define SROCE_OPF_PAYLOAD	BIT(3)	/* may carry payload */
#define SROCE_OPF_REQ		BIT(4)	/* sent by the requester */
#define SROCE_OPF_RESP		BIT(5)	/* sent by the responder: ACK or data */
#define SROCE_OPF_SEND		BIT(6)
#define SROCE_OPF_WRITE		BIT(7)
#define SROCE_OPF_READ		BIT(8)
#define SROCE_OPF_ATOMIC	BIT(9)
#define SROCE_OPF_RWQE		BIT(10)	/* consumes a receive WQE */
#define SROCE_OPF_SOLICIT	BIT(11)	/* the BTH SE bit is meaningful */

/* The bits that name a message kind: a message keeps them in all packets. */
#define SROCE_OPF_KIND		(SROCE_OPF_REQ | SROCE_OPF_RESP |	\
				 SROCE_OPF_SEND | SROCE_OPF_WRITE |	\
				 SROCE_OPF_READ | SROCE_OPF_ATOMIC)

/**
 * struct sroce_opcode_info - what one BTH opcode means
 * @name: IBA name, e.g. "RC_SEND_ONLY"
 * @flags: SROCE_OPF_* properties
 * @opcode: the opcode itself
 * @hdrs: SROCE_HAS_* set of the extension headers after the BTH
 */
struct sroce_opcode_info {
	const char *name;
	u32 flags;
	u8 opcode;
	u8 hdrs;
};

static_assert(SROCE_HDR_NR <=
	      BITS_PER_BYTE * sizeof_field(struct sroce_opcode_info, hdrs));

const struct sroce_opcode_info *sroce_opcode_lookup(u8 opcode);

static inline bool sroce_opcode_has_hdr(const struct sroce_opcode_info *info,
					enum sroce_hdr_id id)
{
	return info->hdrs & BIT(id);
}

/**
 * sroce_opcode_hdr_offset() - where an extension header starts
 * @info: opcode
 * @id: extension header, which need not be present in @info
 *
 * Return: offset of header @id from the start of the BTH; for a header
 * the opcode lacks, the offset it would have.
 */
static inline unsigned int
sroce_opcode_hdr_offset(const struct sroce_opcode_info *info,
			enum sroce_hdr_id id)
{
	return SROCE_BTH_LEN + sroce_ext_hdrs_len(info->hdrs & (BIT(id) - 1));
}

/**
 * sroce_opcode_hdr_len() - length of all headers of an opcode
 * @info: opcode
 *
 * Return: length of the BTH and the extension headers, which is where the
 * payload starts.
 */
static inline unsigned int
sroce_opcode_hdr_len(const struct sroce_opcode_info *info)
{
	return SROCE_BTH_LEN + sroce_ext_hdrs_len(info->hdrs);
}

static inline u8 sroce_opcode_transport(const struct sroce_opcode_info *info)
{
	return info->opcode & SROCE_OPCODE_TRANSPORT;
}

/**
 * sroce_opcode_on_transport() - the same operation on another transport
 * @opcode: an RC or UC opcode of a SEND or RDMA WRITE packet
 * @transport: IB_OPCODE_RC or IB_OPCODE_UC
 *
 * The low five bits name the operation and are the same on RC and UC
 * (IBA 9.2, table 38) for the operations both have.
 *
 * Return: @opcode with its transport field replaced.
 */
static inline u8 sroce_opcode_on_transport(u8 opcode, u8 transport)
{
	return (opcode & ~SROCE_OPCODE_TRANSPORT) | transport;
}

static inline bool sroce_opcode_starts_msg(const struct sroce_opcode_info *info)
{
	return info->flags & SROCE_OPF_FIRST;
}

static inline bool sroce_opcode_ends_msg(const struct sroce_opcode_info *info)
{
	return info->flags & SROCE_OPF_LAST;
}

static inline bool sroce_opcode_has_imm(const struct sroce_opcode_info *info)
{
	return sroce_opcode_has_hdr(info, SROCE_HDR_IMMDT);
}

static inline bool sroce_opcode_has_inv(const struct sroce_opcode_info *info)
{
	return sroce_opcode_has_hdr(info, SROCE_HDR_IETH);
}

/**
 * sroce_opcode_wants_ackreq() - whether a requester sets AckReq
 * @info: opcode of a packet about to be sent
 *
 * The last packet of every RC request message asks for an acknowledgment,
 * so that the requester can retire the WQE without waiting for a
 * coalesced ACK.
 *
 * Return: true if the BTH AckReq bit should be set.
 */
static inline bool
sroce_opcode_wants_ackreq(const struct sroce_opcode_info *info)
{
	return sroce_opcode_transport(info) == IB_OPCODE_RC &&
	       (info->flags & SROCE_OPF_REQ) && sroce_opcode_ends_msg(info);
}

bool sroce_opcode_may_follow(const struct sroce_opcode_info *prev,
			     const struct sroce_opcode_info *next);

#endif /* SROCE_OPCODE_H */
