/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce work queues of a QP: posting, the start of send processing, and
 * flushing.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_WQ_H
#define SROCE_WQ_H

#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct sroce_qp;
struct sroce_send_wqe;

/* Receive WQEs a run of the responder flushes at most. */
#define SROCE_WQ_FLUSH_BATCH	32

int sroce_wq_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata, struct rxe_create_qp_resp *resp);
void sroce_wq_cleanup(struct sroce_qp *qp);

int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

void sroce_sq_kick(struct sroce_qp *qp);
enum ib_wc_status sroce_wq_exec_local(struct sroce_qp *qp,
				      const struct sroce_send_wqe *wqe);
void sroce_wq_flush_sq(struct sroce_qp *qp);
void sroce_wq_flush_rq(struct sroce_qp *qp);
int sroce_wq_flush_rq_batch(struct sroce_qp *qp);
void sroce_wq_reset(struct sroce_qp *qp);

extern const struct ib_device_ops sroce_wq_verbs;

#endif /* SROCE_WQ_H */
