/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce shared receive queues.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "obj/sroce_queue.h"

struct sroce_recv_wqe;

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: ib_core's SRQ, allocated by ib_core
 * @lock: protects the consumer side of @queue (the receive path taking
 *	WQEs), its producer side for a kernel SRQ, @limit and ring
 *	replacement by modify_srq; taken with interrupts saved
 * @queue: the ring of struct rxe_recv_wqe slots
 * @max_sge: SGEs per WQE, as reported to the consumer
 * @limit: the armed SRQ limit, 0 when not armed
 * @user: the ring is shared with user space
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock; /* see above */
	struct sroce_queue queue;
	u32 max_sge;
	u32 limit;
	bool user;
};

static inline struct sroce_srq *to_sroce_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_srq_take(struct sroce_srq *srq, struct sroce_recv_wqe *wqe);

extern const struct ib_device_ops sroce_srq_verbs;

#endif /* SROCE_SRQ_H */
