/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce UD requester: datagram sends of UD and GSI QPs.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_REQ_UD_H
#define SROCE_REQ_UD_H

#include <linux/types.h>

struct sroce_qp;
struct sroce_qp_params;

u32 sroce_ud_qkey(u32 wr_qkey, u32 qp_qkey);
int sroce_req_ud_send(struct sroce_qp *qp, const struct sroce_qp_params *p);

#endif /* SROCE_REQ_UD_H */
