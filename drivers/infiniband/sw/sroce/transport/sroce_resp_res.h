/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce RC responder resources: the RDMA READ and atomic requests a
 * responder remembers, and the pure PSN rules of the responder.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_RESP_RES_H
#define SROCE_RESP_RES_H

#include <linux/gfp.h>
#include <linux/types.h>

/**
 * enum sroce_psn_class - where a request PSN lies against the ePSN
 * @SROCE_PSN_EXPECTED: it is the ePSN: execute it
 * @SROCE_PSN_DUPLICATE: one of the 2^23 PSNs before the ePSN: answer it
 *	again, never execute it twice (IBA 9.7.5.1.3)
 * @SROCE_PSN_AHEAD: one of the 2^23 - 1 PSNs after the ePSN: a PSN
 *	sequence error (IBA 9.7.5.1.2)
 */
enum sroce_psn_class {
	SROCE_PSN_EXPECTED,
	SROCE_PSN_DUPLICATE,
	SROCE_PSN_AHEAD,
};

/**
 * struct sroce_resp_res - one responder resource
 * @first_psn: PSN of the request, the first PSN of its response
 * @npkts: PSNs the request uses: response packets of a READ, 1 for an
 *	atomic
 * @opcode: BTH opcode of the request
 * @answered: the whole response went out at least once
 * @answered_mark: arrival number of the first request that arrived after
 *	the response first went out completely (valid once @answered)
 * @start: response packet the serve in progress started at
 * @next: next response packet of the serve in progress
 * @read: for a READ: the RETH of the original request
 * @read.va: its virtual address
 * @read.rkey: its R_Key, checked again at every (re)serve
 * @read.len: its DMA length
 * @orig: for an atomic: the value before the operation
 */
struct sroce_resp_res {
	u32 first_psn;
	u32 npkts;
	u8 opcode;
	bool answered;
	u32 answered_mark;
	u32 start;
	u32 next;
	union {
		struct {
			u64 va;
			u32 rkey;
			u32 len;
		} read;
		u64 orig;
	};
};

/**
 * struct sroce_resp_res_ring - the resources of one QP, oldest first
 * @slot: @size entries
 * @size: entries allocated (the device's max_qp_rd_atom)
 * @oldest: index of the oldest entry held
 * @count: entries held, in PSN order from @oldest on
 */
struct sroce_resp_res_ring {
	struct sroce_resp_res *slot;
	u32 size;
	u32 oldest;
	u32 count;
};

enum sroce_psn_class sroce_resp_psn_class(u32 psn, u32 epsn);
u32 sroce_resp_read_npkts(u32 len, u32 mtu);
u32 sroce_resp_read_offset(u32 first_psn, u32 psn, u32 mtu);
bool sroce_resp_res_retirable(const struct sroce_resp_res *res, u32 arrival);

int sroce_resp_res_init(struct sroce_resp_res_ring *ring, u32 size,
			gfp_t gfp);
void sroce_resp_res_free(struct sroce_resp_res_ring *ring);
void sroce_resp_res_clear(struct sroce_resp_res_ring *ring);
struct sroce_resp_res *sroce_resp_res_admit(struct sroce_resp_res_ring *ring,
					    u32 limit, u32 arrival);
void sroce_resp_res_retire_stale(struct sroce_resp_res_ring *ring, u32 epsn);
struct sroce_resp_res *sroce_resp_res_find(struct sroce_resp_res_ring *ring,
					   u32 psn);

#endif /* SROCE_RESP_RES_H */
