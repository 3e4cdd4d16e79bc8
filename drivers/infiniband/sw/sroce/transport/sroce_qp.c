// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce queue pairs: creation, the QPN index, the IBA state machine
 * (modify_qp, query_qp), errors, and destruction.
 *
 * Lifetime. ib_core allocates the QP and frees it when destroy_qp
 * returns. The QP is in the device's QPN xarray from the end of
 * create_qp (its number is reserved first and the QP published last) to
 * the start of destroy_qp (sroce_qp_index.c). destroy_qp takes it out of
 * the index, which returns when no packet can reach it any more, before
 * it stops the engines and frees the rings.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "core/sroce_task.h"
#include "net/sroce_train.h"
#include "net/sroce_tx.h"
#include "obj/sroce_ah.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_srq.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_qp_attr.h"
#include "transport/sroce_qp_index.h"
#include "transport/sroce_wq.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_sport.h"

/**
 * sroce_qp_state() - the current state of a QP
 * @qp: the QP
 *
 * Context: any.
 *
 * Return: the state; it may change as soon as the lock is dropped.
 */
enum ib_qp_state sroce_qp_state(struct sroce_qp *qp)
{
	unsigned long flags;
	enum ib_qp_state state;

	spin_lock_irqsave(&qp->state_lock, flags);
	state = qp->p.state;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return state;
}

/**
 * sroce_qp_params_get() - a consistent snapshot of a QP's parameters
 * @qp: the QP
 * @p: filled with them
 *
 * The engines and the receive path take one per run or packet, so it
 * takes no lock: a copy that a modify overlapped is made again. The
 * copy's traffic class has the ECN bits the device sends with
 * (sroce_cc_tclass()), so that a change in sysfs applies at once.
 *
 * Context: any.
 */
void sroce_qp_params_get(struct sroce_qp *qp, struct sroce_qp_params *p)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&qp->p_seq);
		*p = qp->p;
	} while (read_seqcount_retry(&qp->p_seq, seq));
	p->av.traffic_class = sroce_cc_tclass(&to_sroce_dev(qp->ibqp.device)->cc,
					      p->av.traffic_class);
}

/**
 * sroce_qp_pkt_alloc() - a packet of a connected QP to its peer
 * @qp: the sending QP
 * @p: a snapshot of its parameters (destination QP, AV)
 * @opcode: BTH opcode; must be in the opcode table
 * @psn: BTH PSN
 * @paylen: payload bytes (the pad is added)
 * @ackreq: BTH AckReq
 * @se: BTH SE
 *
 * sroce_tx_alloc() for the QP's device, peer address and peer QP: a
 * request of the requester or a response of the responder.
 *
 * Context: any; allocates with GFP_ATOMIC.
 * Return: the skb, or NULL when memory is short.
 */
struct sk_buff *sroce_qp_pkt_alloc(struct sroce_qp *qp,
				   const struct sroce_qp_params *p, u8 opcode,
				   u32 psn, u32 paylen, bool ackreq, bool se)
{
	return sroce_tx_alloc(to_sroce_dev(qp->ibqp.device), &p->av,
			      p->dest_qpn, opcode, psn, paylen, ackreq, se);
}

/**
 * sroce_qp_pkt_send() - send a packet of a connected QP to its peer
 * @qp: the QP
 * @p: the snapshot of its parameters the packet was built from
 * @skb: the packet; consumed
 *
 * Context: any.
 * Return: as sroce_tx_send().
 */
int sroce_qp_pkt_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		      struct sk_buff *skb)
{
	return sroce_tx_send(to_sroce_dev(qp->ibqp.device), &p->av,
			     sroce_route_get(&qp->route, &p->av, p->av_gen),
			     p->sport, skb);
}

/**
 * sroce_qp_train_send() - send a train of packets of a connected QP
 * @qp: the QP
 * @p: the snapshot of its parameters the packets were built from
 * @t: the packets; empty afterwards
 *
 * Context: any.
 * Return: as sroce_train_send().
 */
int sroce_qp_train_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
			struct sroce_train *t)
{
	return sroce_train_send(to_sroce_dev(qp->ibqp.device), &p->av,
				sroce_route_get(&qp->route, &p->av, p->av_gen),
				p->sport, t);
}

/* Stop the engines (tasks, then the timers that schedule them). */
static void sroce_qp_engines_stop(struct sroce_qp *qp)
{
	sroce_task_disable(&qp->req.task);
	sroce_task_disable(&qp->comp.task);
	sroce_task_disable(&qp->resp.task);
	sroce_comp_stop(qp);
	sroce_dcqcn_stop(&qp->cc);
	sroce_rate_stop(&qp->rate);
}

/* Back in RESET: the engines forget everything; process context. */
static void sroce_qp_engines_reset(struct sroce_qp *qp)
{
	sroce_qp_engines_stop(qp);
	sroce_req_reset(qp);
	sroce_comp_reset(qp);
	sroce_resp_reset(qp);
	sroce_rate_reset(&qp->rate);
	sroce_dcqcn_reset(&qp->cc);
	atomic64_set(&qp->cnp_last, 0);
	sroce_task_enable(&qp->resp.task);
	sroce_task_enable(&qp->comp.task);
	sroce_task_enable(&qp->req.task);
}

/* Let every engine see a new state (ERR: they drop what they hold). */
static void sroce_qp_engines_kick(struct sroce_qp *qp)
{
	sroce_task_schedule(&qp->req.task);
	sroce_task_schedule(&qp->comp.task);
	sroce_task_schedule(&qp->resp.task);
}

/**
 * sroce_qp_event() - raise an affiliated asynchronous event of a QP
 * @qp: the QP
 * @type: the event
 *
 * Context: any; the caller holds none of the QP's locks.
 */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.event = type,
		.element.qp = &qp->ibqp,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Side effects of entering a state; the state is already set. */
static void sroce_qp_entered(struct sroce_qp *qp, enum ib_qp_state state)
{
	switch (state) {
	case IB_QPS_RESET:
		sroce_qp_engines_reset(qp);
		sroce_wq_reset(qp);
		break;
	case IB_QPS_ERR:
		sroce_qp_engines_kick(qp);
		sroce_wq_flush_sq(qp);
		/*
		 * With an SRQ, the responder (kicked above) flushes the WQE
		 * it had taken, then raises LAST_WQE_REACHED.
		 */
		if (!qp->srq)
			sroce_wq_flush_rq(qp);
		break;
	case IB_QPS_SQE:
		sroce_wq_flush_sq(qp);
		break;
	case IB_QPS_SQD:
		/* The requester ends the message it is sending, no more. */
		if (qp->p.sqd_notify)
			sroce_comp_notify_drained(qp);
		break;
	case IB_QPS_RTS:
		sroce_comp_start(qp, &qp->p);
		sroce_sq_kick(qp);
		break;
	default:
		break;
	}
}

/**
 * sroce_qp_error() - move a QP to the error state
 * @qp: the QP
 *
 * For the transport: a completion in error (IBA 10.3.1), or a
 * catastrophic error. All outstanding WQEs are flushed. Does nothing if
 * the QP is in RESET or already in ERR.
 *
 * Context: any; the caller must not hold the QP's queue locks.
 */
void sroce_qp_error(struct sroce_qp *qp)
{
	enum ib_qp_state prev;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	prev = qp->p.state;
	if (prev != IB_QPS_RESET && prev != IB_QPS_ERR) {
		write_seqcount_begin(&qp->p_seq);
		qp->p.state = IB_QPS_ERR;
		write_seqcount_end(&qp->p_seq);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (prev != IB_QPS_RESET && prev != IB_QPS_ERR)
		sroce_qp_entered(qp, IB_QPS_ERR);
}

/**
 * sroce_qp_send_error() - a send WQE of a QP completed in error
 * @qp: the QP
 *
 * IBA 10.3.1: an RC QP goes to ERR (sroce_qp_error()); a UC, UD or GSI
 * QP in RTS or SQD goes to SQE, where its send queue is flushed while its
 * receive queue keeps working, until the consumer moves it back to RTS.
 *
 * Context: any; the caller must not hold the QP's queue locks.
 */
void sroce_qp_send_error(struct sroce_qp *qp)
{
	enum ib_qp_state prev;
	unsigned long flags;
	bool sqe;

	if (qp->ibqp.qp_type == IB_QPT_RC) {
		sroce_qp_error(qp);
		return;
	}
	spin_lock_irqsave(&qp->state_lock, flags);
	prev = qp->p.state;
	sqe = prev == IB_QPS_RTS || prev == IB_QPS_SQD;
	if (sqe) {
		write_seqcount_begin(&qp->p_seq);
		qp->p.state = IB_QPS_SQE;
		write_seqcount_end(&qp->p_seq);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (sqe)
		sroce_qp_entered(qp, IB_QPS_SQE);
}

/**
 * sroce_qp_port_mtu() - the active MTU of a QP's port, in bytes
 * @qp: the QP
 *
 * The largest UD message (IBA 9.8.2: a datagram is one packet).
 *
 * Context: any.
 * Return: 256..4096.
 */
u32 sroce_qp_port_mtu(const struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);

	return ib_mtu_enum_to_int(READ_ONCE(sdev->port.active_mtu));
}

/**
 * sroce_qp_fatal() - a catastrophic error of a QP's work queues
 * @qp: the QP
 *
 * A completion of the QP was lost because its CQ overflowed (IBA
 * 11.6.3: a local work queue catastrophic error). The QP's event handler
 * gets IB_EVENT_QP_FATAL, once in the QP's life, and the QP goes to ERR.
 *
 * Context: any; the caller must not hold the QP's queue locks.
 */
void sroce_qp_fatal(struct sroce_qp *qp)
{
	if (!test_and_set_bit(SROCE_QP_FATAL_SENT, &qp->flags))
		sroce_qp_event(qp, IB_EVENT_QP_FATAL);
	sroce_qp_error(qp);
}

static int sroce_qp_check_caps(struct sroce_dev *sdev,
			       const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > sdev->attr.max_qp_wr ||
	    cap->max_send_sge > sdev->attr.max_send_sge ||
	    cap->max_inline_data > SROCE_MAX_INLINE_DATA)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > sdev->attr.max_qp_wr ||
			   cap->max_recv_sge > sdev->attr.max_recv_sge))
		return -EINVAL;
	return 0;
}

static int sroce_qp_check_init(struct ib_qp *ibqp,
			       const struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != SROCE_PORT_NUM)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;	/* no SMI on RoCE, no XRC, no raw */
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->srq && init->srq->pd != ibqp->pd)
		return -EINVAL;
	if (udata && (udata->inlen ||
		      udata->outlen < sizeof(struct rxe_create_qp_resp)))
		return -EINVAL;
	return sroce_qp_check_caps(to_sroce_dev(ibqp->device), init);
}

static void sroce_qp_init_fields(struct sroce_qp *qp,
				 const struct ib_qp_init_attr *init,
				 struct ib_udata *udata)
{
	mutex_init(&qp->modify_mutex);
	spin_lock_init(&qp->state_lock);
	seqcount_spinlock_init(&qp->p_seq, &qp->state_lock);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	sroce_route_init(&qp->route);
	qp->user = udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_sroce_cq(init->send_cq);
	qp->rcq = to_sroce_cq(init->recv_cq);
	qp->srq = init->srq ? to_sroce_srq(init->srq) : NULL;
	qp->p.state = IB_QPS_RESET;
	qp->p.path_mtu = IB_MTU_256;
	qp->p.sport = sroce_sport_default(qp->ibqp.qp_num);
	if (init->qp_type == IB_QPT_GSI)
		qp->p.qkey = SROCE_GSI_QKEY;
}

/* One CPU for the QP's requester: its request packets leave in order. */
static void sroce_qp_pin_requester(struct sroce_qp *qp)
{
	sroce_task_set_cpu(&qp->req.task, sroce_task_pick_cpu(qp->user));
}

/* Stop the engines for good and free their state; process context. */
static void sroce_qp_engines_free(struct sroce_qp *qp)
{
	sroce_qp_engines_stop(qp);
	sroce_resp_cleanup(qp);
	sroce_comp_cleanup(qp);
	sroce_req_cleanup(qp);
	sroce_route_flush(&qp->route);
}

/**
 * sroce_create_qp() - ib_device_ops.create_qp
 * @ibqp: the QP ib_core allocated (PD set)
 * @init: type, CQs, SRQ and capabilities; the capabilities the rings
 *	really have are written back, as librxe expects
 * @udata: for a user QP, room for struct rxe_create_qp_resp
 *
 * Return: 0; -EOPNOTSUPP for QP types other than RC, UC, UD and GSI or
 * any creation flag; -EINVAL for capabilities over the device limits, an
 * SRQ of another PD, a GSI QP not on port 1, or bad driver data; -EBUSY
 * for a second GSI QP; -ENOMEM.
 */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	struct rxe_create_qp_resp resp = {};
	int err;

	err = sroce_qp_check_init(ibqp, init, udata);
	if (err)
		return err;
	err = sroce_res_get(&sdev->res.qp, sdev->attr.max_qp);
	if (err)
		return err;
	err = sroce_qp_index_reserve(sdev, qp);
	if (err)
		goto err_put_count;

	sroce_qp_init_fields(qp, init, udata);
	err = sroce_wq_init(qp, init, udata, &resp);
	if (err)
		goto err_release_qpn;
	err = sroce_resp_init(qp);
	if (err)
		goto err_free_wq;
	err = sroce_req_init(qp);
	if (err)
		goto err_free_resp;
	sroce_comp_init(qp);
	sroce_rate_init(&qp->rate, &qp->req.task, &qp->resp.task,
			ibqp->qp_num);
	sroce_dcqcn_init(&qp->cc, &qp->rate, &sdev->cc, ibqp->qp_num);
	sroce_qp_pin_requester(qp);
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free_engines;
	}

	sroce_qp_index_publish(sdev, qp);
	return 0;

err_free_engines:
	sroce_qp_engines_free(qp);
	goto err_free_wq;
err_free_resp:
	sroce_task_disable(&qp->resp.task);
	sroce_resp_cleanup(qp);
err_free_wq:
	sroce_wq_cleanup(qp);
err_release_qpn:
	sroce_qp_index_cancel(sdev, qp);
err_put_count:
	sroce_res_put(&sdev->res.qp);
	return err;
}

/**
 * sroce_destroy_qp() - ib_device_ops.destroy_qp
 * @ibqp: the QP; its consumer posts nothing to it any more
 * @udata: user data, unused
 *
 * Outstanding WQEs are dropped without completions (IBA 11.2.4.4).
 * The QP leaves the QPN index first (no packet finds it any more), then
 * its engine tasks are disabled and its timers stopped, then the rings
 * are freed.
 *
 * Context: process context, may sleep (packets being received for the QP,
 * running engine tasks and timer callbacks).
 *
 * Return: 0.
 */
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibqp->device);
	struct sroce_qp *qp = to_sroce_qp(ibqp);

	mutex_lock(&qp->modify_mutex);
	sroce_qp_index_remove(sdev, qp);
	mutex_unlock(&qp->modify_mutex);

	/* No packet reaches the QP any more; stop the engines, then the rings. */
	sroce_qp_engines_free(qp);
	sroce_wq_cleanup(qp);
	mutex_destroy(&qp->modify_mutex);
	sroce_res_put(&sdev->res.qp);
	return 0;
}

static bool sroce_qp_connected(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC;
}

/* Store the attributes of @mask; the transition has been checked. */
static void sroce_qp_apply(struct sroce_qp *qp, const struct ib_qp_attr *attr,
			   int mask, const struct sroce_av *av)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);
	struct sroce_qp_params *p = &qp->p;

	lockdep_assert_held(&qp->state_lock);

	if (mask & IB_QP_ACCESS_FLAGS)
		p->access = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		p->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		p->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		p->path_mtu = min(attr->path_mtu,
				  READ_ONCE(sdev->port.active_mtu));
	if (mask & IB_QP_TIMEOUT)
		p->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		p->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		p->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		p->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_RQ_PSN) {
		p->rq_psn = attr->rq_psn & SROCE_PSN_MASK;
		WRITE_ONCE(qp->resp.psn, p->rq_psn);
	}
	if (mask & IB_QP_SQ_PSN) {
		p->sq_psn = attr->sq_psn & SROCE_PSN_MASK;
		qp->req.psn = p->sq_psn;
		WRITE_ONCE(qp->req.sent_psn, p->sq_psn);
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		p->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		p->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		p->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		p->sqd_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		p->av = *av;
		p->av_gen++;
		p->has_av = true;
	}
	if ((mask & (IB_QP_AV | IB_QP_DEST_QPN)) && p->has_av &&
	    sroce_qp_connected(qp))
		p->sport = sroce_sport_connected(p->av.flow_label,
						 qp->ibqp.qp_num, p->dest_qpn);
	if (mask & IB_QP_RATE_LIMIT)
		p->rate_limit = attr->rate_limit;
	if (mask & IB_QP_STATE)
		p->state = attr->qp_state;
}

/* The gate follows the limits modify_qp set; under modify_mutex. */
static void sroce_qp_apply_rate(struct sroce_qp *qp, int mask)
{
	lockdep_assert_held(&qp->modify_mutex);

	if (mask & IB_QP_RATE_LIMIT)
		sroce_rate_set(&qp->rate, SROCE_RATE_SRC_QP,
			       sroce_rate_from_kbps(qp->p.rate_limit));
	if (mask & IB_QP_AV)
		sroce_rate_set(&qp->rate, SROCE_RATE_SRC_STATIC,
			       sroce_rate_from_static(qp->p.av.static_rate));
}

static void sroce_qp_limits(struct sroce_qp *qp,
			    struct sroce_qp_attr_limits *lim)
{
	struct sroce_dev *sdev = to_sroce_dev(qp->ibqp.device);

	lim->max_rd_atomic = sdev->attr.max_qp_init_rd_atom;
	lim->max_dest_rd_atomic = sdev->attr.max_qp_rd_atom;
	lim->max_mtu = IB_MTU_4096;
	lim->pkey_tbl_len = SROCE_PKEY_TBL_LEN;
	lim->num_ports = 1;
}

/* Check and apply under the state lock; returns the state left. */
static int sroce_qp_modify_locked(struct sroce_qp *qp,
				  const struct ib_qp_attr *attr, int mask,
				  const struct sroce_av *av,
				  enum ib_qp_state *prev)
{
	struct sroce_qp_attr_limits lim;
	enum ib_qp_state cur, next;
	int err;

	lockdep_assert_held(&qp->state_lock);

	cur = qp->p.state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = sroce_qp_attr_check_transition(qp->ibqp.qp_type, cur, next,
					     mask);
	if (err)
		return err;
	sroce_qp_limits(qp, &lim);
	err = sroce_qp_attr_check_values(attr, mask, &lim);
	if (err)
		return err;

	write_seqcount_begin(&qp->p_seq);
	sroce_qp_apply(qp, attr, mask, av);
	write_seqcount_end(&qp->p_seq);
	*prev = cur;
	return 0;
}

/**
 * sroce_modify_qp() - ib_device_ops.modify_qp
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: which attributes (IB_QP_*) are given
 * @udata: user data; librxe sends none
 *
 * Checks the transition and the attributes against IBA vol 1 (tables in
 * sroce_qp_attr.c) before anything changes: a refused modify leaves the
 * QP as it was. Entering ERR flushes every outstanding WQE with
 * IB_WC_WR_FLUSH_ERR; entering RESET drops them.
 *
 * Context: process context.
 *
 * Return: 0; -EINVAL for an invalid transition, a missing or disallowed
 * attribute, a value out of range or an address that is not RoCEv2;
 * -EOPNOTSUPP for attributes sroce does not implement.
 */
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	struct sroce_av av = {};
	enum ib_qp_state prev = IB_QPS_RESET;
	unsigned long flags;
	int err;

	if (udata && udata->inlen)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		err = sroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			return err;
	}

	mutex_lock(&qp->modify_mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	err = sroce_qp_modify_locked(qp, attr, mask, &av, &prev);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (!err)
		sroce_qp_apply_rate(qp, mask);
	if (!err && (mask & IB_QP_STATE) && attr->qp_state != prev)
		sroce_qp_entered(qp, attr->qp_state);
	mutex_unlock(&qp->modify_mutex);
	return err;
}

static void sroce_qp_query_caps(struct sroce_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	cap->max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
}

/**
 * sroce_query_qp() - ib_device_ops.query_qp
 * @ibqp: the QP
 * @attr: filled with every attribute (whatever @mask asks for)
 * @mask: the attributes the caller wants; sroce fills all
 * @init: filled with the creation attributes
 *
 * Return: 0.
 */
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sroce_qp(ibqp);
	struct sroce_qp_params p;
	unsigned long flags;

	mutex_lock(&qp->modify_mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	p = qp->p;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	mutex_unlock(&qp->modify_mutex);

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = p.state;
	attr->cur_qp_state = p.state;
	attr->path_mtu = p.path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = p.qkey;
	attr->rq_psn = p.rq_psn;
	attr->sq_psn = p.sq_psn;
	attr->dest_qp_num = p.dest_qpn;
	attr->qp_access_flags = p.access;
	sroce_qp_query_caps(qp, &attr->cap);
	if (p.has_av)
		sroce_av_to_attr(&p.av, &attr->ah_attr);
	attr->pkey_index = p.pkey_index;
	attr->en_sqd_async_notify = p.sqd_notify;
	attr->max_rd_atomic = p.max_rd_atomic;
	attr->max_dest_rd_atomic = p.max_dest_rd_atomic;
	attr->min_rnr_timer = p.min_rnr_timer;
	attr->port_num = SROCE_PORT_NUM;
	attr->timeout = p.timeout;
	attr->retry_cnt = p.retry_cnt;
	attr->rnr_retry = p.rnr_retry;
	attr->rate_limit = p.rate_limit;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = SROCE_PORT_NUM;
	sroce_qp_query_caps(qp, &init->cap);
	return 0;
}

/* The verbs on queue pairs, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_qp_verbs = {
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	.create_qp = sroce_create_qp,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,
};
