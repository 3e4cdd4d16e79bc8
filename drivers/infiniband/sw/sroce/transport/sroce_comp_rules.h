/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce RC completer rules: timer values and response verdicts
 * (sroce_comp_rules.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_COMP_RULES_H
#define SROCE_COMP_RULES_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sroce_pkt;

/**
 * enum sroce_rsp_kind - what a packet for the completer is
 * @SROCE_RSP_ACK: an ACKNOWLEDGE (ACK or NAK)
 * @SROCE_RSP_READ: an RDMA READ response packet
 * @SROCE_RSP_ATOMIC: an ATOMIC ACKNOWLEDGE
 */
enum sroce_rsp_kind {
	SROCE_RSP_ACK,
	SROCE_RSP_READ,
	SROCE_RSP_ATOMIC,
};

/**
 * enum sroce_rsp_verdict - what a response means for the oldest WQE
 * @SROCE_RSP_STALE: nothing new (a duplicate or an older packet): drop
 * @SROCE_RSP_ACCEPT: the response expected next: take its data
 * @SROCE_RSP_IMPLIED_NAK: a response the responder can only have sent
 *	after the one expected, which was therefore lost: retry
 */
enum sroce_rsp_verdict {
	SROCE_RSP_STALE,
	SROCE_RSP_ACCEPT,
	SROCE_RSP_IMPLIED_NAK,
};

/**
 * struct sroce_rsp_expect - the oldest WQE, a READ or an atomic
 * @read: it is an RDMA READ (else an atomic)
 * @first_psn: its first PSN
 * @last_psn: its last PSN
 * @next_psn: the response PSN expected next
 */
struct sroce_rsp_expect {
	bool read;
	u32 first_psn;
	u32 last_psn;
	u32 next_psn;
};

unsigned long sroce_rnr_timer_usecs(u8 code);
u64 sroce_ack_timeout_ns(u8 timeout);
unsigned long sroce_ack_timeout(u8 timeout);
bool sroce_comp_ack_covers(u32 ack_psn, u32 last_psn);
enum ib_wc_status sroce_comp_nak_status(u8 code);
enum sroce_rsp_verdict sroce_comp_judge(const struct sroce_rsp_expect *e,
					enum sroce_rsp_kind kind, u32 psn);
u32 sroce_comp_read_span(const struct sroce_rsp_expect *e,
			 const struct sroce_pkt *pkt, u32 resid, u32 mtu);

#endif /* SROCE_COMP_RULES_H */
