// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pktfuzz: the live QPs of the device under test. An RC, a UC and two UD
 * QPs (one attached to a multicast group) are connected to a fictitious
 * peer that pktfuzz plays: the other veth end's addresses, QPNs and PSNs
 * of its choosing. Between cases the QPs are kept alive: completions are
 * reaped, receive WQEs reposted, requests posted so that forged ACKs and
 * responses meet outstanding work, and a QP that a case drove into the
 * error state is reset and connected again. The frames the device sends
 * to the peer are read back (fz_sniff()), so that the expected PSNs are
 * known.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_util.h"
#include "pktfuzz.h"

#define FZ_QKEY		0x11111111u
#define FZ_SEND_DEPTH	64

/* The GID index that holds the device's IPv4 address, IPv4-mapped. */
static int find_gid(struct fz *f)
{
	union ibv_gid gid;
	int i;

	for (i = 0; i < 256; i++) {
		if (ibv_query_gid(f->ctx, 1, i, &gid))
			break;
		if (!memcmp(gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) &&
		    !memcmp(gid.raw + 12, &f->dev4, 4))
			return i;
	}
	fz_die("no GID holds the device's IPv4 address");
}

static void mapped_gid(union ibv_gid *g, uint32_t be_addr)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	memcpy(g->raw + 12, &be_addr, 4);
}

static void create_qp(struct fz *f, struct fz_qp *q, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.qp_type = type,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = FZ_SEND_DEPTH,
			.max_recv_wr = FZ_RECV_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	q->type = type;
	q->qp = ibv_create_qp(f->pd, &a);
	if (!q->qp)
		fz_die("ibv_create_qp type %d: %s", type, strerror(errno));
	q->qpn = q->qp->qp_num;
	q->qkey = FZ_QKEY;
}

static int to_init(struct fz_qp *q)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.pkey_index = 0,
		.qkey = q->qkey,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			(q->type == IBV_QPT_RC ?
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0),
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= q->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(q->qp, &a, mask);
}

/* RTR then RTS; for RC and UC toward the fictitious peer. */
static int to_rts(struct fz *f, struct fz_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (q->type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = q->rq_psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.sgid_index = f->gid_index;
		mapped_gid(&a.ah_attr.grh.dgid, f->peer4.s_addr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (q->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (q->type == IBV_QPT_RC) {
		a.timeout = 12;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(q->qp, &a, mask);
}

static void post_recvs(struct fz *f, struct fz_qp *q)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)f->buf + FZ_MR_LEN,
		.length = 4096 + 40,
		.lkey = f->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (q == &f->ud && f->ud_no_recv)
		return;
	while (q->posted_recv < FZ_RECV_DEPTH) {
		wr.wr_id = (uintptr_t)q;
		if (ibv_post_recv(q->qp, &wr, &bad))
			break;
		q->posted_recv++;
	}
}

/* Bring @q (new or in any state) to RTS with fresh PSNs. */
static void connect_qp(struct fz *f, struct fz_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE))
		fz_die("QP %#x to RESET: %s", q->qpn, strerror(errno));
	q->posted_recv = 0;
	q->posted_send = 0;
	q->rq_psn = fz_rand(f) & 0xffffff;
	q->sq_psn = fz_rand(f) & 0xffffff;
	if (to_init(q) || to_rts(f, q))
		fz_die("QP %#x to RTS: %s", q->qpn, strerror(errno));
	post_recvs(f, q);
}

static void setup_mcast(struct fz *f)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };

	mapped_gid(&f->mgid, htonl(FZ_MCAST4));
	if (ibv_attach_mcast(f->ud_mc.qp, &f->mgid, 0))
		fz_die("ibv_attach_mcast: %s", strerror(errno));
	mapped_gid(&aa.grh.dgid, f->peer4.s_addr);
	aa.grh.sgid_index = f->gid_index;
	aa.grh.hop_limit = 64;
	f->ah = ibv_create_ah(f->pd, &aa);
	if (!f->ah)
		fz_die("ibv_create_ah: %s", strerror(errno));
}

void fz_verbs_setup(struct fz *f, const char *dev)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct fz_qp *qs[] = { &f->rc, &f->uc, &f->ud, &f->ud_mc };
	enum ibv_qp_type ts[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
				  IBV_QPT_UD };
	unsigned int i;

	f->ctx = fuzz_open_dev(dev);
	if (!f->ctx)
		fz_die("cannot open RDMA device %s: %s", dev, strerror(errno));
	f->gid_index = find_gid(f);
	f->pd = ibv_alloc_pd(f->ctx);
	f->cq = ibv_create_cq(f->ctx, 4 * (FZ_SEND_DEPTH + FZ_RECV_DEPTH) * 2,
			      NULL, NULL, 0);
	if (!f->pd || !f->cq)
		fz_die("PD or CQ: %s", strerror(errno));
	/* the MR's first FZ_MR_LEN bytes are the target, the rest a sink */
	f->buf = aligned_alloc(4096, 2 * FZ_MR_LEN);
	if (!f->buf)
		fz_die("out of memory");
	memset(f->buf, 0, 2 * FZ_MR_LEN);
	f->mr = ibv_reg_mr(f->pd, f->buf, 2 * FZ_MR_LEN, acc);
	if (!f->mr)
		fz_die("ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < 4; i++) {
		create_qp(f, qs[i], ts[i]);
		qs[i]->peer_qpn = (0x100000 + i * 0x1111 + fz_below(f, 0x1000)) &
				  0xffffff;
		connect_qp(f, qs[i]);
	}
	setup_mcast(f);
}

static void post_send(struct fz *f, struct fz_qp *q, enum ibv_wr_opcode op)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)f->buf + FZ_MR_LEN + 8192,
		.length = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 64,
		.lkey = f->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr_id = (uintptr_t)q,
	}, *bad;

	if (op == IBV_WR_RDMA_READ || op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = 0x10000 + fz_below(f, 0x10000);
		wr.wr.rdma.rkey = 0x1234;
	} else if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = 0x20000;
		wr.wr.atomic.rkey = 0x1234;
		wr.wr.atomic.compare_add = 1;
	}
	if (q->type == IBV_QPT_UD) {
		/*
		 * Not to the multicast group: IPv4 loops such a datagram
		 * back to the device (the netdev is a member), which would
		 * count frames pktfuzz did not send.
		 */
		wr.wr.ud.ah = f->ah;
		wr.wr.ud.remote_qpn = fz_below(f, 2) ? q->peer_qpn : 0xffffff;
		wr.wr.ud.remote_qkey = q->qkey;
	}
	if (!ibv_post_send(q->qp, &wr, &bad))
		q->posted_send++;
}

static void reap(struct fz *f)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(f->cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct fz_qp *q = (struct fz_qp *)(uintptr_t)wc[i].wr_id;

			f->completions++;
			if (wc[i].status != IBV_WC_SUCCESS)
				f->cqe_err++;
			if (wc[i].opcode & IBV_WC_RECV) {
				if (q->posted_recv)
					q->posted_recv--;
			} else if (q->posted_send) {
				q->posted_send--;
			}
		}
	}
	if (n < 0)
		fz_die("ibv_poll_cq failed");
}

static void keep_alive(struct fz *f, struct fz_qp *q)
{
	static const enum ibv_wr_opcode rc_ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia))
		fz_die("ibv_query_qp: %s", strerror(errno));
	if (a.qp_state != IBV_QPS_RTS) {
		reap(f);
		connect_qp(f, q);
		q->revived++;
		return;
	}
	post_recvs(f, q);
	if (q->posted_send >= 8)
		return;
	if (q->type == IBV_QPT_RC)
		post_send(f, q, rc_ops[fz_below(f, 4)]);
	else
		post_send(f, q, IBV_WR_SEND);
}

void fz_verbs_maintain(struct fz *f)
{
	reap(f);
	keep_alive(f, &f->rc);
	keep_alive(f, &f->uc);
	keep_alive(f, &f->ud);
	keep_alive(f, &f->ud_mc);
	fz_sniff(f);
}

/* What the device sent the peer tells the PSNs it expects and uses. */
static void sniffed(struct fz *f, const uint8_t *b, ssize_t n)
{
	uint32_t qpn, psn;
	uint8_t op;
	struct fz_qp *q;

	if (n < 14 + 20 + 8 + 12 || b[12] != 0x08 || b[13] != 0x00 ||
	    (b[14] & 0xf) != 5 || b[23] != IPPROTO_UDP ||
	    (b[36] << 8 | b[37]) != FZ_UDP_PORT)
		return;
	b += 42;
	op = b[0];
	qpn = b[5] << 16 | b[6] << 8 | b[7];
	psn = b[9] << 16 | b[10] << 8 | b[11];
	q = qpn == f->rc.peer_qpn ? &f->rc : qpn == f->uc.peer_qpn ? &f->uc : NULL;
	if (!q)
		return;
	if (op == OP_RC_ACK && n >= 42 + 16) {
		f->acks_seen++;
		/* an ACK (syndrome 0xxxxxxx with type 00) acks psn; a NAK
		 * names the PSN expected */
		if ((b[12] & 0x60) == 0)
			q->rq_psn = (psn + 1) & 0xffffff;
		else if (b[12] == 0x60)
			q->rq_psn = psn;
	} else if (op >= OP_RC_READ_RSP_FIRST && op <= OP_RC_ATOMIC_ACK) {
		q->rq_psn = (psn + 1) & 0xffffff;
	} else if (op < OP_RC_READ_RSP_FIRST || op == OP_RC_CMP_SWAP ||
		   op == OP_RC_FETCH_ADD || (op >= 0x20 && op < 0x2c)) {
		q->sq_psn = (psn + 1) & 0xffffff;
	}
}

void fz_sniff(struct fz *f)
{
	uint8_t b[2048];
	ssize_t n;

	while ((n = recv(f->rx_fd, b, sizeof(b), MSG_DONTWAIT)) > 0)
		sniffed(f, b, n);
}

void fz_verbs_teardown(struct fz *f)
{
	struct fz_qp *qs[] = { &f->rc, &f->uc, &f->ud, &f->ud_mc };
	unsigned int i;

	ibv_detach_mcast(f->ud_mc.qp, &f->mgid, 0);
	for (i = 0; i < 4; i++)
		if (ibv_destroy_qp(qs[i]->qp))
			fz_die("ibv_destroy_qp: %s", strerror(errno));
	ibv_destroy_ah(f->ah);
	ibv_dereg_mr(f->mr);
	free(f->buf);
	ibv_destroy_cq(f->cq);
	ibv_dealloc_pd(f->pd);
	ibv_close_device(f->ctx);
}
