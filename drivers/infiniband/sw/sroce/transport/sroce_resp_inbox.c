// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce responder: its inbox. Received request packets join the QP's
 * queue here, and here it is decided where the responder runs for them:
 * in the receive softirq, on a worker, or on a worker on another CPU.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/skbuff.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_rcv.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_inbox.h"
#include "transport/sroce_resp_read.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

/**
 * sroce_resp_kick() - let the responder run, here if it can
 * @qp: the QP
 *
 * Runs the responder in the caller when interrupts are on (so that a
 * flush of the RQ is done when post_recv or modify_qp returns), else
 * schedules it. A call from a completion handler the responder runs only
 * asks for one more run.
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_resp_kick(struct sroce_qp *qp)
{
	if (in_hardirq() || irqs_disabled())
		sroce_task_schedule(&qp->resp.task);
	else
		sroce_task_run(&qp->resp.task);
}

/**
 * sroce_resp_queue() - hand a request packet to the responder
 * @qp: the QP it is for (the caller holds a reference)
 * @skb: the parsed packet, skb->data at the BTH, its headers linear;
 *	consumed
 *
 * Past SROCE_RESP_BACKLOG packets waiting, the packet is dropped and
 * counted (dropped_backlog); an RC requester sends it again.
 *
 * A packet that finds nothing queued before it is executed in the
 * receive softirq when the task allows it (sroce_task_may_inline()),
 * with SROCE_RESP_INLINE_CALLS calls: one executes it, the next finds
 * the responder idle, so no worker is woken for it. Its work is bounded
 * by one packet's payload. A READ request is left to the worker: its
 * responses are up to SROCE_RESP_READ_BUDGET packets a call. So is a
 * long message past its first SROCE_RESP_STREAK bytes, and its worker
 * is woken on another CPU (sroce_task_schedule_away()): it copies the
 * message while this one goes back to the network.
 *
 * An RC responder is bound to one CPU when its first READ or atomic
 * request arrives, not the one the request arrived on
 * (sroce_task_bind_away()). Its responses and ACKs must then leave in
 * order: on a veth a packet waits in the backlog of the CPU that sent it,
 * where one sent later from another CPU can overtake it, and a READ
 * response overtaken reads as lost. Until then only ACKs leave, and a
 * stale ACK is harmless, so lone packets may run inline wherever they
 * arrive; afterwards a request that arrives on another CPU is queued for
 * the responder there.
 *
 * Context: any.
 */
void sroce_resp_queue(struct sroce_qp *qp, struct sk_buff *skb)
{
	/* more of its message follows */
	bool more = !(sroce_skb_pkt(skb)->info->flags & SROCE_OPF_LAST);
	bool closed, full, lone = false, away = false;
	bool rd_atomic = sroce_skb_pkt(skb)->info->flags &
			 (SROCE_OPF_READ | SROCE_OPF_ATOMIC);
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;

	spin_lock_irqsave(&resp->rxq.lock, flags);
	full = skb_queue_len(&resp->rxq) >= SROCE_RESP_BACKLOG;
	closed = resp->closed;
	if (!closed && !full) {
		sroce_resp_mark_queued(resp, sroce_skb_pkt(skb));
		resp->streak = more ? resp->streak +
				      sroce_skb_pkt(skb)->paylen : 0;
		away = more && resp->streak > SROCE_RESP_STREAK;
		lone = skb_queue_empty(&resp->rxq) && !away &&
		       !(sroce_skb_pkt(skb)->info->flags & SROCE_OPF_READ);
		__skb_queue_tail(&resp->rxq, skb);
	}
	spin_unlock_irqrestore(&resp->rxq.lock, flags);
	if (closed || full) {
		sroce_rcv_refuse(to_sroce_dev(qp->ibqp.device), skb,
				 full ? SROCE_CNT_DROPPED_BACKLOG : SROCE_CNT_NR);
		return;
	}
	if (rd_atomic && qp->ibqp.qp_type == IB_QPT_RC)
		sroce_task_bind_away(&resp->task);
	if (lone && sroce_task_may_inline(&resp->task))
		sroce_task_run_budget(&resp->task, SROCE_RESP_INLINE_CALLS);
	else if (away)
		sroce_task_schedule_away(&resp->task);
	else
		sroce_task_schedule(&resp->task);
}
