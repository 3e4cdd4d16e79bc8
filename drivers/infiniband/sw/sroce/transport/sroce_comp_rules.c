// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce RC completer rules: the spec's timer values and the verdicts on
 * responses, as pure functions of their arguments, so that the KUnit
 * suites check them against the IBA tables without a QP.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/jiffies.h>
#include <linux/minmax.h>

#include "transport/sroce_comp_rules.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_pkt.h"
#include "wire/sroce_psn.h"

/* IBA vol 1, table 45 (9.7.5.2.8): the RNR NAK timer field, in us. */
static const u32 sroce_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/**
 * sroce_rnr_timer_usecs() - the delay an RNR NAK timer code asks for
 * @code: the 5-bit timer field of an RNR NAK
 *
 * Context: any.
 * Return: microseconds (IBA table 45; code 0 is the longest, 655.36 ms).
 */
unsigned long sroce_rnr_timer_usecs(u8 code)
{
	return sroce_rnr_usecs[code & 31];
}

/**
 * sroce_ack_timeout_ns() - the local ACK timeout a QP attribute names
 * @timeout: the 5-bit Local ACK Timeout attribute
 *
 * IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 means the timer never fires.
 *
 * Context: any.
 * Return: nanoseconds, or 0 for an infinite timeout.
 */
u64 sroce_ack_timeout_ns(u8 timeout)
{
	if (!timeout)
		return 0;
	return 4096ULL << min_t(u8, timeout, 31);
}

/**
 * sroce_ack_timeout() - the local ACK timeout a QP attribute names
 * @timeout: the 5-bit Local ACK Timeout attribute, not 0
 *
 * Context: any.
 * Return: jiffies, at least one.
 */
unsigned long sroce_ack_timeout(u8 timeout)
{
	return max(1UL, nsecs_to_jiffies(sroce_ack_timeout_ns(timeout)));
}

/**
 * sroce_comp_ack_covers() - does an ACK retire a message?
 * @ack_psn: the PSN of the ACK (everything up to it was executed)
 * @last_psn: the last PSN of the message
 *
 * In 24-bit serial order, across the wrap.
 *
 * Context: any.
 * Return: true if @last_psn is @ack_psn or before it.
 */
bool sroce_comp_ack_covers(u32 ack_psn, u32 last_psn)
{
	return !sroce_psn_after(last_psn, ack_psn);
}

/**
 * sroce_comp_judge() - what a response means for an outstanding READ or
 *	atomic
 * @e: the oldest WQE (a READ or an atomic) and the response expected next
 * @kind: the response's kind
 * @psn: its PSN
 *
 * The responder answers requests in PSN order (IBA 9.5), so any packet
 * with a PSN past the WQE's last one, or a READ response past the one
 * expected, shows that the expected response was lost: an implied NAK
 * (IBA 9.7.5.1.4). An ACK inside or before the WQE's PSNs, or a response
 * before the one expected, is an old copy.
 *
 * Context: any.
 * Return: the verdict.
 */
enum sroce_rsp_verdict sroce_comp_judge(const struct sroce_rsp_expect *e,
					enum sroce_rsp_kind kind, u32 psn)
{
	bool is_read = kind == SROCE_RSP_READ;

	if (sroce_psn_after(psn, e->last_psn))
		return SROCE_RSP_IMPLIED_NAK;
	if (kind == SROCE_RSP_ACK || is_read != e->read)
		return SROCE_RSP_STALE;
	if (psn == e->next_psn)
		return SROCE_RSP_ACCEPT;
	if (sroce_psn_after(psn, e->next_psn))
		return SROCE_RSP_IMPLIED_NAK;
	return SROCE_RSP_STALE;
}

/**
 * sroce_comp_nak_status() - the completion status of a NAK
 * @code: the AETH code of a NAK other than a PSN sequence error
 *
 * Return: the status the WQE it names completes with (IBA 9.7.5.2.4).
 */
enum ib_wc_status sroce_comp_nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/**
 * sroce_comp_read_span() - does a READ response carry what it must?
 * @e: the READ it answers; its response at @e->next_psn is expected
 * @pkt: the response packet, at @e->next_psn
 * @resid: bytes of the READ not yet received
 * @mtu: path MTU in bytes
 *
 * A response packet carries one path MTU, but the READ's last, which
 * carries the rest; its opcode ends the response exactly when its PSN is
 * the READ's last. A response a device of this host handed over
 * (SROCE_PKT_LOCAL) may span several PSNs, one path MTU each, and is
 * judged by its last.
 *
 * Context: any.
 * Return: the PSNs the packet covers, or 0 when it is malformed.
 */
u32 sroce_comp_read_span(const struct sroce_rsp_expect *e,
			 const struct sroce_pkt *pkt, u32 resid, u32 mtu)
{
	bool ends = pkt->opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST ||
		    pkt->opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
	u32 span = 1, end;
	bool last;

	if ((pkt->flags & SROCE_PKT_LOCAL) && pkt->paylen > mtu)
		span = DIV_ROUND_UP(pkt->paylen, mtu);
	end = sroce_psn_add(pkt->psn, span - 1);
	if (sroce_psn_diff(end, e->next_psn) > sroce_psn_diff(e->last_psn,
							      e->next_psn))
		return 0;	/* past the READ's last PSN */
	last = end == e->last_psn;
	if (ends != last || pkt->paylen != (last ? resid : span * mtu))
		return 0;
	return span;
}
