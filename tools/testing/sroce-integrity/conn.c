// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: device, QP and memory setup, connection and teardown.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"

void read_counters(struct side *sd)
{
	char path[256];
	unsigned int i;

	for (i = 0; i < sizeof(cnt_names) / sizeof(cnt_names[0]); i++) {
		unsigned long long v = 0;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
			 sd->name, cnt_names[i]);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%llu", &v) != 1)
				v = 0;
			fclose(f);
		}
		sd->cnt[i] = v;
	}
}

/* ------------------------------------------------------------------ */
/* Setup */

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open RDMA device %s", name);
	return ctx;
}

void setup_side(struct run *r, struct side *sd, int gid_index)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr qia = {
		.qp_type = is_ud(r) ? IBV_QPT_UD : is_uc(r) ? IBV_QPT_UC : IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = r->o.depth,
			.max_recv_wr = r->rdepth,
			.max_send_sge = r->o.sges,
			.max_recv_sge = r->o.sges + is_ud(r),	/* UD: the GRH */
		},
	};
	int i, fl;

	sd->ctx = open_dev(sd->name);
	sd->pd = ibv_alloc_pd(sd->ctx);
	sd->ch = ibv_create_comp_channel(sd->ctx);
	if (!sd->pd || !sd->ch)
		die("%s: PD or completion channel: %s", sd->name, strerror(errno));
	fl = fcntl(sd->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(sd->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("fcntl: %s", strerror(errno));
	sd->cq = ibv_create_cq(sd->ctx, (int)(r->o.depth + r->rdepth + 8), NULL, sd->ch, 0);
	if (!sd->cq)
		die("%s: ibv_create_cq: %s", sd->name, strerror(errno));
	qia.send_cq = sd->cq;
	qia.recv_cq = sd->cq;
	sd->qp = ibv_create_qp(sd->pd, &qia);
	if (!sd->qp)
		die("%s: ibv_create_qp: %s", sd->name, strerror(errno));

	/* the receive slots (B's; A uses the first depth) and atomic targets */
	sd->len = r->rdepth * r->span + ATOMIC_TARGETS * ATOMIC_STRIDE;
	if (posix_memalign((void **)&sd->buf, 4096, sd->len))
		die("out of memory (%zu bytes)", sd->len);
	memset(sd->buf, PAT_CANARY, sd->len);
	/* the same memory twice: SGEs alternate between the two keys */
	for (i = 0; i < 2; i++) {
		sd->mr[i] = ibv_reg_mr(sd->pd, sd->buf, sd->len, access);
		if (!sd->mr[i])
			die("%s: ibv_reg_mr: %s", sd->name, strerror(errno));
	}
	if (ibv_query_gid(sd->ctx, 1, gid_index, &sd->gid))
		die("%s: GID index %d: %s", sd->name, gid_index, strerror(errno));
	/* -B: a consumer that polls never asks for an event */
	if (!r->o.busy && ibv_req_notify_cq(sd->cq, 0))
		die("%s: ibv_req_notify_cq", sd->name);
}

static enum ibv_mtu ib_mtu(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/*
 * RESET -> INIT -> RTR -> RTS.  A UC QP gets the attributes ib_core allows
 * for UC and no more: no timeout, retry, RNR or READ/atomic resources.
 */
void connect_qp(struct run *r, struct side *me, struct side *peer,
		int my_gid, uint32_t my_psn, uint32_t peer_psn,
		unsigned int rd_atomic, int uc)
{
	struct ibv_qp_attr a;
	int mask, err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!uc)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC;
	err = ibv_modify_qp(me->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		die("%s: to INIT: %s", me->name, strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ib_mtu(r->o.mtu);
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer_psn;
	a.max_dest_rd_atomic = (uint8_t)rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)my_gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	if (!uc)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	err = ibv_modify_qp(me->qp, &a, mask);
	if (err)
		die("%s: to RTR: %s", me->name, strerror(err));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)r->o.timeout;
	a.retry_cnt = (uint8_t)r->o.retry;
	a.rnr_retry = (uint8_t)r->o.rnr_retry;
	a.sq_psn = my_psn;
	a.max_rd_atomic = (uint8_t)rd_atomic;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (!uc)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	err = ibv_modify_qp(me->qp, &a, mask);
	if (err)
		die("%s: to RTS: %s", me->name, strerror(err));
}

/* ------------------------------------------------------------------ */
/* Teardown */

void teardown(struct side *sd)
{
	int i;

	if (sd->qp)
		ibv_destroy_qp(sd->qp);
	if (sd->ah)
		ibv_destroy_ah(sd->ah);
	for (i = 0; i < 2; i++)
		if (sd->mr[i])
			ibv_dereg_mr(sd->mr[i]);
	if (sd->cq) {
		ibv_ack_cq_events(sd->cq, sd->events);
		ibv_destroy_cq(sd->cq);
	}
	if (sd->ch)
		ibv_destroy_comp_channel(sd->ch);
	if (sd->pd)
		ibv_dealloc_pd(sd->pd);
	if (sd->ctx)
		ibv_close_device(sd->ctx);
	free(sd->buf);
}

