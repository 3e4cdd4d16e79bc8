/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce completion queues.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "obj/sroce_queue.h"

/**
 * union sroce_cqe - one CQ slot
 * @ibwc: the form kernel consumers poll (ib_wc, with the QP pointer)
 * @uwc: the form librxe reads from a user CQ's ring
 */
union sroce_cqe {
	struct ib_wc ibwc;
	struct ib_uverbs_wc uwc;
};

/**
 * struct sroce_cq - a completion queue
 * @ibcq: ib_core's CQ, allocated by ib_core
 * @lock: protects the producer side of @queue, @notify and @overflow;
 *	for a kernel CQ also its consumer side (poll_cq). Taken with
 *	interrupts saved: completions are made in any context.
 * @queue: the ring of union sroce_cqe
 * @notify: 0, IB_CQ_NEXT_COMP or IB_CQ_SOLICITED: what req_notify_cq armed;
 *	read without @lock by sroce_cq_armed()
 * @overflow: a completion did not fit; the CQ is in error (IBA 11.4.2.1)
 *	and takes no more completions
 * @user: the ring is shared with user space
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock; /* see above */
	struct sroce_queue queue;
	u8 notify;
	bool overflow;
	bool user;
};

static inline struct sroce_cq *to_sroce_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

/**
 * sroce_cq_armed() - does the CQ's consumer wait for an event?
 * @cq: the CQ
 *
 * A CQ armed by req_notify_cq has a consumer that will sleep until its
 * next completion, or is about to; one that is not armed has a consumer
 * that polls it, or is busy with what it polled. A hint: it may change
 * as soon as it is read.
 *
 * Context: any.
 * Return: true if it is armed.
 */
static inline bool sroce_cq_armed(const struct sroce_cq *cq)
{
	return READ_ONCE(cq->notify);
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited);

extern const struct ib_device_ops sroce_cq_verbs;

#endif /* SROCE_CQ_H */
