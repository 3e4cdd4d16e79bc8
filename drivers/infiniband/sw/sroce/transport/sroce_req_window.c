// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce requester: the send window of an RC QP.
 *
 * The requester sends no packet more than SROCE_REQ_WINDOW PSNs
 * (SROCE_REQ_WINDOW_LOCAL when the QP's route ends at this host) past the
 * oldest one not yet acknowledged, and no READ whose responses would end
 * SROCE_READ_WINDOW past it. It waits with SROCE_REQ_WINDOW_WAIT set,
 * and the completer kicks it when the oldest unacknowledged PSN moves.
 *
 * An empty window also tells when the requester of a user QP may move to
 * the CPU the application posts from (sroce_req_doorbell()).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/moduleparam.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_param.h"
#include "core/sroce_task.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_req_window.h"
#include "wire/sroce_psn.h"

/* a QP alone never fills the responder's queue, even one PSN a packet */
static_assert(2 * SROCE_REQ_WINDOW_LOCAL <= SROCE_RESP_BACKLOG);

/**
 * sroce_req_read_may_go() - may a READ request be sent now?
 * @una: the oldest unacknowledged PSN
 * @first_psn: the READ's first PSN
 * @last_psn: the PSN of its last response
 *
 * The responses a READ asks for must end fewer than SROCE_READ_WINDOW
 * PSNs past @una, unless the READ is the oldest WQE in flight itself: a
 * READ larger than the window must still go.
 *
 * Context: any.
 * Return: true if the request may be sent.
 */
bool sroce_req_read_may_go(u32 una, u32 first_psn, u32 last_psn)
{
	return !sroce_psn_after(first_psn, una) ||
	       sroce_psn_diff(last_psn, una) < SROCE_READ_WINDOW;
}

/*
 * Is the packet at @psn of @ctx outside the send window? A READ request
 * is as sroce_req_read_may_go() says. Other packets are if they lie
 * SROCE_REQ_WINDOW (or _LOCAL) past the oldest unacknowledged PSN, but
 * only while no READ or atomic is outstanding: their PSN ranges are
 * acknowledged by responses, and that window over them would serialise
 * large READs.
 */
static bool sroce_req_window_full(struct sroce_qp *qp,
				  const struct sroce_send_ctx *ctx, u32 psn)
{
	u32 una = READ_ONCE(qp->comp.una_psn);

	if (ctx->wqe.opcode == IB_WR_RDMA_READ)
		return !sroce_req_read_may_go(una, ctx->first_psn,
					      ctx->last_psn);
	return !qp->req.rd_atomic &&
	       sroce_psn_diff(psn, una) >= (sroce_route_local(&qp->route) ?
					    SROCE_REQ_WINDOW_LOCAL :
					    SROCE_REQ_WINDOW);
}

/**
 * sroce_req_window_wait() - wait for the completer to open the window
 * @qp: the QP
 * @ctx: the WQE being sent
 * @psn: the PSN of its next packet
 *
 * Context: the requester's task.
 * Return: true when the packet must wait (the requester is kicked when
 * the window moves); false when it may go now.
 */
bool sroce_req_window_wait(struct sroce_qp *qp,
			   const struct sroce_send_ctx *ctx, u32 psn)
{
	if (!sroce_req_window_full(qp, ctx, psn))
		return false;
	set_bit(SROCE_REQ_WINDOW_WAIT, &qp->req.flags);
	/* pairs with sroce_req_window_kick(): see una move, or be kicked */
	smp_mb__after_atomic();
	if (sroce_req_window_full(qp, ctx, psn))
		return true;
	clear_bit(SROCE_REQ_WINDOW_WAIT, &qp->req.flags);
	return false;
}

/**
 * sroce_req_window_kick() - the oldest unacknowledged PSN moved
 * @qp: the QP
 *
 * Wakes the requester if it waits for the send window to open.
 *
 * Context: the completer, after it moved &sroce_comp.una_psn.
 */
void sroce_req_window_kick(struct sroce_qp *qp)
{
	/* pairs with sroce_req_window_wait() */
	smp_mb__before_atomic();
	if (test_and_clear_bit(SROCE_REQ_WINDOW_WAIT, &qp->req.flags))
		sroce_task_schedule(&qp->req.task);
}

static bool sroce_req_follow = true;
module_param_named(req_follow, sroce_req_follow, bool, 0644);
MODULE_PARM_DESC(req_follow,
		 "let a user RC QP's requester move to the CPU its application posts from, when nothing it sent is unacknowledged (default on)");

/**
 * sroce_req_doorbell() - run the requester in a user QP's post_send
 * @qp: the QP, a user QP in RTS
 *
 * The requester is bound to one CPU so that its packets leave in order
 * (see sroce_task.c), and runs in the system call only on that CPU; from
 * any other CPU, post_send wakes a worker there, which may wait behind
 * the very application polling for the answer. An application that
 * moved posts from elsewhere for good, so the requester moves with it
 * when that cannot reorder anything: on an RC QP whose packets are all
 * acknowledged, none of them is still queued on the old CPU.
 *
 * Context: process, bottom halves disabled (so the CPU stays).
 */
void sroce_req_doorbell(struct sroce_qp *qp)
{
	if (READ_ONCE(sroce_req_follow) && qp->ibqp.qp_type == IB_QPT_RC &&
	    READ_ONCE(qp->comp.una_psn) == READ_ONCE(qp->req.sent_psn))
		sroce_task_move_here(&qp->req.task);
	sroce_task_run(&qp->req.task);
}
