/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A receiving QP for responder tests: a QP of a given type in RTS on the
 * fake device, with a receive queue, a receive CQ, a buffer behind a DMA
 * MR and a one-page fast-reg MR, and request packets built as parsing
 * leaves them and handed to the responder as its task would.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TEST_RESP_FIX_H
#define SROCE_TEST_RESP_FIX_H

#include <kunit/test.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_stats.h"
#include "test_util.h"

struct sroce_cq;

#define TFIX_SENTINEL		0xa5
#define TFIX_QPN		0x11
#define TFIX_DEST_QPN		0x22
#define TFIX_RQ_DEPTH		4
#define TFIX_CQ_DEPTH		8
#define TFIX_BUF_SIZE		16384
#define TFIX_RECV_OFF(k)	(64 + (k) * 4096)	/* receive WQE k's buffer */
#define TFIX_RECV_LEN		3072
#define TFIX_WR_ID(k)		(0x100 + (k))
#define TFIX_WOFF		(3 * 4096 + 64)		/* WRITE target in buf */
#define TFIX_IMM		0x5eed0001

/* The payload byte @i of message @msg. */
static inline u8 sroce_tfix_pattern(u8 msg, u32 i)
{
	return (u8)(i * 13 + 7 + msg * 31);
}

/**
 * struct sroce_tfix - a UC, RC or UD QP in RTS with a receive queue and CQ
 * @t: the device and PD
 * @qp: the QP; its three tasks run a function that does nothing
 * @cq: its receive CQ (a kernel CQ)
 * @buf: receive buffers and WRITE target, TFIX_SENTINEL where nothing is put
 * @buf_mr: DMA MR, local and remote write: covers @buf
 * @ro_mr: DMA MR with local write only
 * @fr_mr: a one-page fast-reg MR, local and remote write
 * @fr_page: its page, TFIX_SENTINEL
 * @cq_ring: the CQ's ring exists
 * @rq_ring: the RQ's ring exists
 * @tasks: the tasks were initialised
 * @frags: build packets whose payload lies in two page fragments and a
 *	frame on the frag list, as a NIC or IP reassembly may deliver it
 */
struct sroce_tfix {
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	struct sroce_cq *cq;
	u8 *buf;
	struct ib_mr *buf_mr;
	struct ib_mr *ro_mr;
	struct ib_mr *fr_mr;
	struct page *fr_page;
	bool cq_ring;
	bool rq_ring;
	bool tasks;
	bool frags;
};

/* Which rkey and address a WRITE's RETH names. */
enum sroce_tfix_key {
	K_BUF,		/* buf_mr at buf + TFIX_WOFF */
	K_STALE,	/* buf_mr's rkey with another key byte */
	K_NOREMOTE,	/* ro_mr (no remote write) at buf + TFIX_WOFF */
	K_FR_TAIL,	/* fr_mr, 100 bytes before its end */
	K_FR_HEAD,	/* fr_mr at its start */
	K_WRAP,		/* buf_mr at 2^64 - 100: wraps the address space */
};

/**
 * struct sroce_tfix_step - one request packet
 * @op: its opcode (of the QP's transport)
 * @psn: its PSN
 * @msg: pattern seed of its message
 * @off: offset of its payload in the message
 * @len: payload bytes
 * @key: WRITE FIRST/ONLY: the rkey and address in the RETH
 * @dmalen: WRITE FIRST/ONLY: the RETH's DMA length
 */
struct sroce_tfix_step {
	u8 op;
	u32 psn;
	u8 msg;
	u32 off;
	u32 len;
	enum sroce_tfix_key key;
	u32 dmalen;
};

struct sroce_tfix *sroce_tfix_init(struct kunit *test, enum ib_qp_type type,
				   u32 epsn, u32 access);
void sroce_tfix_post_recv(struct kunit *test, struct sroce_tfix *f, u32 k,
			  bool bad_lkey);
struct sk_buff *sroce_tfix_skb(struct kunit *test, const struct sroce_tfix *f,
			       const struct sroce_tfix_step *s);
void sroce_tfix_rx(struct kunit *test, struct sroce_tfix *f,
		   const struct sroce_tfix_step *s);
u64 sroce_tfix_count(struct sroce_tfix *f, enum sroce_counter c);

#endif /* SROCE_TEST_RESP_FIX_H */
