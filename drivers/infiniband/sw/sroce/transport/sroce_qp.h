/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce queue pairs.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "obj/sroce_ah.h"
#include "net/sroce_route.h"
#include "obj/sroce_queue.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_dcqcn.h"
#include "transport/sroce_rate.h"
#include "transport/sroce_req.h"
#include "transport/sroce_resp.h"

struct sroce_dev;
struct sroce_qp_handle;
struct sroce_train;

/**
 * struct sroce_qp_params - what modify_qp set, as the transport reads it
 * @state: the QP state
 * @path_mtu: path MTU, capped by the port's active MTU when it was set
 * @dest_qpn: remote QP number (connected QPs)
 * @sq_psn: first PSN the send queue uses
 * @rq_psn: first PSN the receive queue expects
 * @qkey: Q_Key (UD, GSI)
 * @pkey_index: P_Key index (always 0)
 * @access: IB_ACCESS_REMOTE_* the QP allows its peer
 * @timeout: local ACK timeout, 4.096 us * 2^timeout (0: infinite)
 * @retry_cnt: transport retries
 * @rnr_retry: RNR retries (7: infinite)
 * @min_rnr_timer: RNR NAK timer code this QP's responder sends
 * @max_rd_atomic: RDMA READ/atomic requests the requester keeps in flight
 * @max_dest_rd_atomic: responder resources for them
 * @sqd_notify: raise IB_EVENT_SQ_DRAINED when the SQ has drained in SQD
 * @has_av: @av is set (connected QPs in RTR and later)
 * @av: the primary path
 * @av_gen: counts the address vectors set: the route kept for @av is
 *	the one found for the same generation (sroce_route_get())
 * @sport: UDP source port of this QP's packets
 * @rate_limit: IB_QP_RATE_LIMIT in kbit/s (0: none), as set
 */
struct sroce_qp_params {
	enum ib_qp_state state;
	enum ib_mtu path_mtu;
	u32 dest_qpn;
	u32 sq_psn;
	u32 rq_psn;
	u32 qkey;
	u16 pkey_index;
	u32 access;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	bool sqd_notify;
	bool has_av;
	struct sroce_av av;
	u32 av_gen;
	u16 sport;
	u32 rate_limit;
};

/**
 * struct sroce_qp_sq - the send queue of a QP
 * @lock: protects the ring (both sides for a kernel QP, the consumer
 *	side for a user QP) and @head; interrupts saved
 * @queue: the ring of struct rxe_send_wqe slots
 * @head: index of the next WQE to start; WQEs from the ring's consumer
 *	index up to @head are in flight, in order
 * @max_wr: depth reported to the consumer
 * @max_sge: SGEs per WQE reported to the consumer
 * @max_inline: inline bytes per WQE reported to the consumer
 * @flush_left: WQEs the flush in progress may still complete: what the
 *	ring can hold, set by each sroce_wq_flush_sq(); guarded by @lock
 */
struct sroce_qp_sq {
	spinlock_t lock; /* see above */
	struct sroce_queue queue;
	u32 head;
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
	u32 flush_left;
};

/**
 * struct sroce_qp_rq - the receive queue of a QP without an SRQ
 * @lock: protects the ring; interrupts saved
 * @queue: the ring of struct rxe_recv_wqe slots
 * @max_wr: depth reported to the consumer
 * @max_sge: SGEs per WQE reported to the consumer
 * @flush_left: WQEs the flush in progress may still complete: what the
 *	ring can hold, set by each sroce_wq_flush_rq(); guarded by @lock
 */
struct sroce_qp_rq {
	spinlock_t lock; /* see above */
	struct sroce_queue queue;
	u32 max_wr;
	u32 max_sge;
	u32 flush_left;
};

/**
 * struct sroce_qp - a queue pair
 * @ibqp: ib_core's QP, allocated by ib_core
 * @handle: what the QPN index holds for the QP, with its reference count
 *	(sroce_qp_index.c)
 * @released: completed when the last reference is dropped; destroy waits
 *	for it
 * @modify_mutex: serialises modify_qp, query_qp and destroy_qp
 * @state_lock: protects @p; taken with interrupts saved, so that the
 *	transport and completion paths may read and change the state
 * @p_seq: every change of @p is a write section of it, so that
 *	sroce_qp_params_get() copies @p without taking @state_lock
 * @p: the QP's parameters
 * @sq: the send queue
 * @rq: the receive queue (unused with an SRQ)
 * @route: the route to the peer of a connected QP, kept while it is valid
 * @srq: the SRQ, or NULL
 * @scq: the send CQ
 * @rcq: the receive CQ
 * @flags: SROCE_QP_* bits
 * @sig_all: every send WQE completes, signaled or not
 * @user: the rings are shared with user space
 * @req: RC requester: per-slot state of the WQEs in flight, the gather
 *	cursor and key cache, the next PSN (sroce_req.h)
 * @comp: RC completer: the response queue, the READ scatter cursor and
 *	key cache, the retry and RNR timers and budgets (sroce_comp.h)
 * @resp: RC responder: the request queue, the ePSN and MSN, the receive
 *	WQE and scatter cursor of the message in progress, the MR of the
 *	WRITE in progress (sroce_resp.h)
 * @rate: the gate the requester's and responder's packets pass: the rate
 *	limit and its timer (sroce_rate.h); its own lock
 * @cc: the DCQCN reaction point: the rate CNPs give the QP
 *	(sroce_dcqcn.h); its own lock
 * @cnp_last: when the notification point last sent the peer a CNP, ns
 *	(sroce_cnp.c); any context
 *
 * The three engines run on their own tasks. Each engine's state is
 * touched only by its task, except where the field says otherwise;
 * destroy_qp and the move to RESET disable the tasks and stop the timers
 * before they touch it.
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_qp_handle *handle;
	struct completion released;
	struct mutex modify_mutex; /* see above */
	spinlock_t state_lock; /* see above */
	seqcount_spinlock_t p_seq;
	struct sroce_qp_params p;
	struct sroce_qp_sq sq;
	struct sroce_qp_rq rq;
	struct sroce_route route;
	struct sroce_srq *srq;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	unsigned long flags;
	bool sig_all;
	bool user;
	struct sroce_req req;
	struct sroce_comp comp;
	struct sroce_resp resp;
	struct sroce_rate rate;
	struct sroce_dcqcn cc;
	atomic64_t cnp_last;
};

/* sroce_qp.flags: IB_EVENT_QP_FATAL was dispatched (once per QP) */
#define SROCE_QP_FATAL_SENT	0

static inline struct sroce_qp *to_sroce_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/* BTH opcode transport field of packets of a QP whose data path runs. */
#define SROCE_TRANSPORT_NONE	0xff	/* no data path (yet) for its type */

/**
 * sroce_qp_transport() - the BTH transport a QP's packets use
 * @qp: the QP
 *
 * Return: IB_OPCODE_RC, IB_OPCODE_UC or IB_OPCODE_UD (UD and GSI QPs), or
 * SROCE_TRANSPORT_NONE for a QP type without a data path.
 */
static inline u8 sroce_qp_transport(const struct sroce_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return IB_OPCODE_RC;
	case IB_QPT_UC:
		return IB_OPCODE_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return IB_OPCODE_UD;
	default:
		return SROCE_TRANSPORT_NONE;
	}
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

enum ib_qp_state sroce_qp_state(struct sroce_qp *qp);
void sroce_qp_params_get(struct sroce_qp *qp, struct sroce_qp_params *p);
struct sk_buff *sroce_qp_pkt_alloc(struct sroce_qp *qp,
				   const struct sroce_qp_params *p, u8 opcode,
				   u32 psn, u32 paylen, bool ackreq, bool se);
int sroce_qp_train_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
			struct sroce_train *t);
int sroce_qp_pkt_send(struct sroce_qp *qp, const struct sroce_qp_params *p,
		      struct sk_buff *skb);
void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_send_error(struct sroce_qp *qp);
u32 sroce_qp_port_mtu(const struct sroce_qp *qp);
void sroce_qp_fatal(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);

extern const struct ib_device_ops sroce_qp_verbs;

#endif /* SROCE_QP_H */
