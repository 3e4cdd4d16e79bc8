/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce fast registration and invalidation.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_FRMR_H
#define SROCE_FRMR_H

#include <linux/scatterlist.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

/* ib_device_ops */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);

/* the send queue's local operations and SEND_WITH_INV */
enum ib_wc_status sroce_mr_fast_reg(struct ib_pd *pd, struct ib_mr *ibmr,
				    u32 key, u32 access);
enum ib_wc_status sroce_key_invalidate(struct sroce_dev *sdev,
				       struct ib_pd *pd, u32 key);

extern const struct ib_device_ops sroce_frmr_verbs;

#endif /* SROCE_FRMR_H */
