/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce RC completer: ACKs, NAKs and READ/atomic responses retire send
 * WQEs; the retransmission and RNR timers.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_COMP_H
#define SROCE_COMP_H

#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/types.h>

#include "core/sroce_task.h"
#include "mem/sroce_copy.h"
#include "transport/sroce_comp_rules.h"

struct sroce_qp;
struct sroce_qp_params;

/**
 * struct sroce_comp - per-QP completer state
 * @task: the completer's execution context; it alone moves the SQ
 *	consumer index and posts send CQEs (flushes included)
 * @rxq: received responses (ACK, NAK, READ response, atomic ACK) waiting
 *	for the task; its lock also guards @closed
 * @closed: the QP is being destroyed: @rxq takes nothing more
 * @kc: key cache of READ response and atomic scatter; flushed whenever a
 *	WQE completes
 * @cur: scatter cursor in the READ or atomic at the SQ consumer index
 * @rd_psn: PSN of the next response expected for that WQE
 * @rd_valid: @cur and @rd_psn are set up for the oldest WQE
 * @una_psn: the oldest PSN not yet acknowledged, as far as ACKs inside a
 *	SEND or WRITE (or a sequence NAK) tell
 * @retry_psn: where the last retransmission started
 * @retrying: a retransmission from @retry_psn is under way and no
 *	progress has been made since: another NAK naming the same PSN is
 *	a duplicate and does not retry again
 * @recover_psn: one past the highest PSN sent when the last
 *	retransmission started
 * @recovering: that retransmission is not yet acknowledged up to
 *	@recover_psn: responses past a gap may be copies from before it or
 *	reordered, and an implied NAK does not retry again (a loss is left
 *	to the local ACK timeout)
 * @retry_timer: local ACK timeout (4.096 us * 2^timeout), armed while
 *	request packets are unacknowledged
 * @rnr_timer: the RNR NAK delay before the requester resends
 * @retry_left: transport retries left (reset to retry_cnt on progress)
 * @rnr_left: RNR retries left (rnr_retry 7: never counted down)
 * @flags: SROCE_COMP_* bits, set by the timers
 */
struct sroce_comp {
	struct sroce_task task;
	struct sk_buff_head rxq;
	bool closed;
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
	u32 rd_psn;
	bool rd_valid;
	u32 una_psn;
	u32 retry_psn;
	bool retrying;
	u32 recover_psn;
	bool recovering;
	struct timer_list retry_timer;
	struct timer_list rnr_timer;
	u8 retry_left;
	u8 rnr_left;
	unsigned long flags;
};

/* sroce_comp.flags: the local ACK timeout expired */
#define SROCE_COMP_TIMEOUT	0
/* sroce_comp.flags: the RNR delay is over: resend */
#define SROCE_COMP_RNR_DONE	1
/* sroce_comp.flags: raise IB_EVENT_SQ_DRAINED once the SQ has drained */
#define SROCE_COMP_SQD_NOTIFY	2

/* rnr_retry value that means "retry for ever" */
#define SROCE_RNR_RETRY_INFINITE	7

void sroce_comp_init(struct sroce_qp *qp);
void sroce_comp_start(struct sroce_qp *qp, const struct sroce_qp_params *p);
void sroce_comp_stop(struct sroce_qp *qp);
void sroce_comp_reset(struct sroce_qp *qp);
void sroce_comp_cleanup(struct sroce_qp *qp);
void sroce_comp_kick(struct sroce_qp *qp);
void sroce_comp_notify_drained(struct sroce_qp *qp);
void sroce_comp_arm_retry(struct sroce_qp *qp, const struct sroce_qp_params *p);
void sroce_comp_queue(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_COMP_H */
