/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce requester: the send window of an RC QP.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_REQ_WINDOW_H
#define SROCE_REQ_WINDOW_H

#include <linux/types.h>

struct sroce_qp;
struct sroce_send_ctx;

bool sroce_req_read_may_go(u32 una, u32 first_psn, u32 last_psn);
bool sroce_req_window_wait(struct sroce_qp *qp,
			   const struct sroce_send_ctx *ctx, u32 psn);
void sroce_req_window_kick(struct sroce_qp *qp);
void sroce_req_doorbell(struct sroce_qp *qp);

#endif /* SROCE_REQ_WINDOW_H */
