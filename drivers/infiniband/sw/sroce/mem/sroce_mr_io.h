/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce memory regions: moving bytes in and out of an MR's memory.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_MR_IO_H
#define SROCE_MR_IO_H

#include <linux/types.h>

struct page;
struct sk_buff;
struct sroce_mr;

/**
 * enum sroce_copy_dir - direction of sroce_mr_copy()
 * @SROCE_COPY_TO_MR: from the buffer into the MR
 * @SROCE_COPY_FROM_MR: from the MR into the buffer
 */
enum sroce_copy_dir {
	SROCE_COPY_TO_MR,
	SROCE_COPY_FROM_MR,
};

/**
 * struct sroce_mr_frag - a piece of an MR's memory lent to a packet
 * @page: the page, referenced
 * @off: offset of the first byte in @page
 * @len: bytes, all in @page
 */
struct sroce_mr_frag {
	struct page *page;
	u32 off;
	u32 len;
};

int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u64 len,
		  enum sroce_copy_dir dir);
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova,
		      const struct sk_buff *skb, unsigned int offset, u32 len);
int sroce_mr_lend(struct sroce_mr *mr, u64 iova, u32 len,
		  struct sroce_mr_frag *frags, unsigned int max);
void sroce_mr_frags_put(const struct sroce_mr_frag *frags, unsigned int n);
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, u8 op, u64 compare,
		    u64 swap_add, u64 *orig);

#endif /* SROCE_MR_IO_H */
