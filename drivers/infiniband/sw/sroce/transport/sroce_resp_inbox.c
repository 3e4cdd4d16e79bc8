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
#include "obj/sroce_cq.h"
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
 * sroce_resp_where() - where the responder runs for a request just queued
 * @pkt: the request
 * @streak: the payload of its message queued so far, its own included;
 *	0 for the last packet of a message
 * @first: nothing was queued before it
 * @armed: the QP's receive CQ is armed (sroce_cq_armed())
 *
 * A lone request runs where it arrived: its work is one packet's payload.
 * A READ request does not: its responses are up to SROCE_RESP_READ_BUDGET
 * packets a call. A long message past its first SROCE_RESP_STREAK bytes
 * runs on another CPU, which copies it while this one goes back to the
 * network; unless it came from this host (SROCE_PKT_LOCAL) into a receive
 * WQE whose CQ is not armed. That receiver polls its CQ, so its CPU is
 * busy, and a worker woken there would share it with the poll, at half
 * speed or less; the sender's CPU copies it instead. A receiver that
 * waits for an event (an armed CQ) sleeps, and its CPU is the one to copy
 * on.
 *
 * Context: any; a pure function.
 * Return: SROCE_RESP_HERE, SROCE_RESP_AWAY or SROCE_RESP_QUEUE (a worker
 * wherever the task goes).
 */
enum sroce_resp_where sroce_resp_where(const struct sroce_pkt *pkt,
				       u32 streak, bool first, bool armed)
{
	u32 f = pkt->info->flags;

	if (streak > SROCE_RESP_STREAK &&
	    !((pkt->flags & SROCE_PKT_LOCAL) && (f & SROCE_OPF_RWQE) && !armed))
		return SROCE_RESP_AWAY;
	if (first && !(f & SROCE_OPF_READ))
		return SROCE_RESP_HERE;
	return SROCE_RESP_QUEUE;
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
 * Where the responder runs for it is sroce_resp_where()'s choice. Here
 * means in the receive softirq, or in the sender's requester for the
 * same-host hand-off, when the task allows it (sroce_task_may_inline()),
 * with SROCE_RESP_INLINE_CALLS calls: one executes it, the next finds
 * the responder idle, so no worker is woken for it. Away means a worker
 * on another CPU (sroce_task_schedule_away()).
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
	struct sroce_pkt *pkt = sroce_skb_pkt(skb);
	/* more of its message follows */
	bool more = !(pkt->info->flags & SROCE_OPF_LAST);
	bool rd_atomic = pkt->info->flags & (SROCE_OPF_READ | SROCE_OPF_ATOMIC);
	bool armed = !(pkt->flags & SROCE_PKT_LOCAL) ||
		     sroce_cq_armed(qp->rcq);
	enum sroce_resp_where where = SROCE_RESP_QUEUE;
	struct sroce_resp *resp = &qp->resp;
	unsigned long flags;
	bool closed, full;

	spin_lock_irqsave(&resp->rxq.lock, flags);
	full = skb_queue_len(&resp->rxq) >= SROCE_RESP_BACKLOG;
	closed = resp->closed;
	if (!closed && !full) {
		sroce_resp_mark_queued(resp, pkt);
		resp->streak = more ? resp->streak + pkt->paylen : 0;
		where = sroce_resp_where(pkt, resp->streak,
					 skb_queue_empty(&resp->rxq), armed);
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
	if (where == SROCE_RESP_HERE && sroce_task_may_inline(&resp->task))
		sroce_task_run_budget(&resp->task, SROCE_RESP_INLINE_CALLS);
	else if (where == SROCE_RESP_AWAY)
		sroce_task_schedule_away(&resp->task);
	else
		sroce_task_schedule(&resp->task);
}
