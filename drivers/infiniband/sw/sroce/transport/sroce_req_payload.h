/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce requester: a request packet and its payload.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_REQ_PAYLOAD_H
#define SROCE_REQ_PAYLOAD_H

#include <linux/types.h>

struct sk_buff;
struct sroce_qp;
struct sroce_qp_params;
struct sroce_req_pkt;
struct sroce_send_ctx;

/**
 * struct sroce_req_hdr - the BTH fields of a request packet
 * @opcode: the opcode, on the QP's transport
 * @psn: its PSN
 * @ackreq: AckReq
 * @se: Solicited Event
 */
struct sroce_req_hdr {
	u8 opcode;
	u32 psn;
	bool ackreq;
	bool se;
};

int sroce_req_gather(struct sroce_qp *qp, struct sroce_send_ctx *ctx,
		     const struct sroce_req_pkt *pkt, void *buf);
struct sk_buff *sroce_req_pkt_alloc(struct sroce_qp *qp,
				    const struct sroce_qp_params *p,
				    struct sroce_send_ctx *ctx,
				    const struct sroce_req_pkt *pkt,
				    const struct sroce_req_hdr *h);

#endif /* SROCE_REQ_PAYLOAD_H */
