/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce payload movement: the SGE cursor that gathers a message from, or
 * scatters it into, the memory an SGE list names, packet by packet.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_COPY_H
#define SROCE_COPY_H

#include <linux/minmax.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"

struct sk_buff;
struct sroce_dev;

/**
 * struct sroce_sge_cursor - position in an SGE list, kept across packets
 * @cur_sge: index of the current SGE
 * @sge_offset: bytes of the current SGE already used
 * @resid: bytes still to move: the rest of the message (gather), or the
 *	room left in the buffers (scatter)
 */
struct sroce_sge_cursor {
	u32 cur_sge;
	u32 sge_offset;
	u32 resid;
};

/* Entries of a key cache: enough for a packet that spans a few SGEs. */
#define SROCE_KEY_CACHE_SIZE	4

/**
 * struct sroce_key_cache_entry - one cached translation
 * @lkey: the key it was found by
 * @mr: the MR, holding a reference; NULL for a free entry
 */
struct sroce_key_cache_entry {
	u32 lkey;
	struct sroce_mr *mr;
};

/**
 * struct sroce_key_cache - the last few lkey translations of one engine
 * @ent: the entries
 * @victim: the entry the next miss replaces (round robin)
 * @lookups: translations asked for (statistics and tests)
 * @hits: of those, answered without the key xarray
 *
 * Each engine of a QP (requester, completer, responder) owns one and
 * serialises its use; there is no lock. An entry holds a reference on
 * its MR, which keeps the MR from being freed but also keeps
 * sroce_dereg_mr() waiting: the owner must sroce_key_cache_flush() when
 * the message it serves ends (completed or failed) and when the QP is
 * reset, moved to the error state or destroyed.
 *
 * A hit is used only while the MR still carries the key it was cached
 * under (a fast-reg with a new key makes it miss). Everything else - PD,
 * VALID state, access, bounds - is checked again on every use by
 * sroce_mr_check() and sroce_mr_copy(); an entry whose MR turns out not
 * to be VALID is dropped at once.
 */
struct sroce_key_cache {
	struct sroce_key_cache_entry ent[SROCE_KEY_CACHE_SIZE];
	unsigned int victim;
	u64 lookups;
	u64 hits;
};

void sroce_key_cache_init(struct sroce_key_cache *kc);
void sroce_key_cache_flush(struct sroce_key_cache *kc);

void sroce_cursor_init(struct sroce_sge_cursor *cur, u32 length);
int sroce_copy_data(struct sroce_dev *sdev, struct ib_pd *pd,
		    struct sroce_key_cache *kc, const struct rxe_sge *sges,
		    u32 num_sge, struct sroce_sge_cursor *cur, void *buf,
		    u32 len, enum sroce_copy_dir dir);
int sroce_lend_data(struct sroce_dev *sdev, struct ib_pd *pd,
		    struct sroce_key_cache *kc, const struct rxe_sge *sges,
		    u32 num_sge, struct sroce_sge_cursor *cur, u32 len,
		    struct sroce_mr_frag *frags, unsigned int max);
int sroce_copy_skb(struct sroce_dev *sdev, struct ib_pd *pd,
		   struct sroce_key_cache *kc, const struct rxe_sge *sges,
		   u32 num_sge, struct sroce_sge_cursor *cur,
		   const struct sk_buff *skb, unsigned int offset, u32 len);

/**
 * sroce_pkt_payload() - payload bytes of the next packet of a message
 * @resid: bytes of the message not yet sent
 * @mtu: the path MTU in bytes
 *
 * Context: any.
 * Return: the smaller of @mtu and @resid.
 */
static inline u32 sroce_pkt_payload(u32 resid, u32 mtu)
{
	return min(resid, mtu);
}

#endif /* SROCE_COPY_H */
