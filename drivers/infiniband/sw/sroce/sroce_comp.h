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

#include "sroce_copy.h"
#include "sroce_task.h"

struct sroce_qp;
struct sroce_qp_params;

/**
 * struct sroce_comp - per-QP completer state
 * @task: the completer's execution context
 * @rxq: received responses (ACK, NAK, READ response, atomic ACK) waiting
 *	for the task; its lock also guards @closed
 * @closed: the QP is being destroyed: @rxq takes nothing more
 * @kc: key cache of READ response and atomic scatter; flushed whenever a
 *	WQE completes
 * @cur: scatter cursor in the READ at the SQ consumer index
 * @rd_psn: PSN of the next READ response expected for that READ
 * @retry_timer: local ACK timeout (4.096 us * 2^timeout), armed while
 *	request packets are unacknowledged
 * @rnr_timer: the RNR NAK delay before the requester resends
 * @retry_left: transport retries left (reset to retry_cnt on progress)
 * @rnr_left: RNR retries left (rnr_retry 7: never counted down)
 * @ack_psn: the highest PSN an ACK or READ response acknowledged; one
 *	beyond it is progress and restarts @retry_timer and @retry_left
 * @flags: SROCE_COMP_* bits, set by the timers
 */
struct sroce_comp {
	struct sroce_task task;
	struct sk_buff_head rxq;
	bool closed;
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
	u32 rd_psn;
	struct timer_list retry_timer;
	struct timer_list rnr_timer;
	u8 retry_left;
	u8 rnr_left;
	u32 ack_psn;
	unsigned long flags;
};

/* sroce_comp.flags: the local ACK timeout expired */
#define SROCE_COMP_TIMEOUT	0

/* rnr_retry value that means "retry for ever" */
#define SROCE_RNR_RETRY_INFINITE	7

void sroce_comp_init(struct sroce_qp *qp);
void sroce_comp_start(struct sroce_qp *qp, const struct sroce_qp_params *p);
void sroce_comp_stop(struct sroce_qp *qp);
void sroce_comp_reset(struct sroce_qp *qp);
void sroce_comp_cleanup(struct sroce_qp *qp);
void sroce_comp_arm_retry(struct sroce_qp *qp, const struct sroce_qp_params *p);
void sroce_comp_queue(struct sroce_qp *qp, struct sk_buff *skb);
unsigned long sroce_rnr_timer_usecs(u8 code);

#endif /* SROCE_COMP_H */
