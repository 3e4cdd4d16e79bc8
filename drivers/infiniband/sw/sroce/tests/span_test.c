// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for packets that span several PSNs on a route that ends at
 * this host: the requester's shapes (sroce_req_pkt_span()), the
 * completer's reading of a READ response (sroce_comp_read_span()), the
 * responder's (sroce_resp_span(), and the RC responder executing such a
 * packet through its task), the train that carries one and must not
 * leave the host (sroce_train_send()), and how many PSNs one may span
 * (sroce_tx_span_max()).
 *
 * What must hold: a spanning packet carries one path MTU per PSN but for
 * the message's last, which carries the rest; its opcode is that of a
 * packet that starts the first of its PSNs and ends the last, so FIRST,
 * MIDDLE, LAST and ONLY keep their IBA meaning (vol 1, 9.2.1); READ
 * requests and atomics never span. Only a packet that this host's own
 * transmit path handed over (SROCE_PKT_LOCAL) may be longer than the
 * path MTU: from a wire it is an invalid request (9.7.5.2.4), however
 * its length divides. The responder moves its ePSN past every PSN the
 * packet used and acknowledges the last of them (9.7.5.1.2: an ACK
 * covers every PSN up to its own). Expected values are worked out by
 * hand from the message lengths in each case.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <rdma/ib_pack.h>
#include <trace/events/skb.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "mem/sroce_mr.h"
#include "net/sroce_train.h"
#include "net/sroce_tx.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "obj/sroce_cq.h"
#include "resp_fix.h"
#include "test_util.h"
#include "transport/sroce_comp_rules.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_resp.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

/* RC opcodes, short (IBA vol 1, table 35) */
enum {
	S_F = IB_OPCODE_RC_SEND_FIRST,
	S_M = IB_OPCODE_RC_SEND_MIDDLE,
	S_L = IB_OPCODE_RC_SEND_LAST,
	S_LI = IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
	S_LV = IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE,
	S_O = IB_OPCODE_RC_SEND_ONLY,
	S_OI = IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
	S_OV = IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
	W_F = IB_OPCODE_RC_RDMA_WRITE_FIRST,
	W_M = IB_OPCODE_RC_RDMA_WRITE_MIDDLE,
	W_L = IB_OPCODE_RC_RDMA_WRITE_LAST,
	W_LI = IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	W_O = IB_OPCODE_RC_RDMA_WRITE_ONLY,
	W_OI = IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	R_REQ = IB_OPCODE_RC_RDMA_READ_REQUEST,
	R_F = IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
	R_M = IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
	R_L = IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
	R_O = IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY,
	A_CS = IB_OPCODE_RC_COMPARE_SWAP,
	A_FA = IB_OPCODE_RC_FETCH_ADD,
};

#define SPAN_RW		(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)
#define LOCAL		SROCE_PKT_LOCAL
#define ACKREQ		SROCE_PKT_ACKREQ

/* ---- the requester's shapes (sroce_req_pkt_span()) ---------------------- */

struct span_shape_case {
	const char *name;
	u32 wr_opcode;
	u32 length;
	u32 mtu;
	u32 index;
	u32 max;
	/* the packet that starts at PSN @index of the message */
	u8 opcode;
	u32 offset;
	u32 paylen;
	u32 dmalen;
	u32 npsn;
	bool first;
	bool last;
};

static const struct span_shape_case span_shape_cases[] = {
	{ "WRITE 64 KiB at 4096 from 0, max 15", IB_WR_RDMA_WRITE, 65536,
	  4096, 0, 15, W_F, 0, 61440, 65536, 15, true, false },
	{ "WRITE 64 KiB at 4096 from 15: its lone LAST", IB_WR_RDMA_WRITE,
	  65536, 4096, 15, 15, W_L, 61440, 4096, 0, 1, false, true },
	{ "WRITE 64 KiB at 4096 from 1: a LAST of 15", IB_WR_RDMA_WRITE,
	  65536, 4096, 1, 15, W_L, 4096, 61440, 0, 15, false, true },
	{ "SEND_IMM 10000 B at 1024, max 60: ONLY", IB_WR_SEND_WITH_IMM,
	  10000, 1024, 0, 60, S_OI, 0, 10000, 0, 10, true, true },
	{ "WRITE_IMM 9500 B at 1024 from 0, max 4", IB_WR_RDMA_WRITE_WITH_IMM,
	  9500, 1024, 0, 4, W_F, 0, 4096, 9500, 4, true, false },
	{ "WRITE_IMM 9500 B at 1024 from 3, max 4", IB_WR_RDMA_WRITE_WITH_IMM,
	  9500, 1024, 3, 4, W_M, 3072, 4096, 0, 4, false, false },
	{ "WRITE_IMM 9500 B at 1024 from 7, max 4", IB_WR_RDMA_WRITE_WITH_IMM,
	  9500, 1024, 7, 4, W_LI, 7168, 2332, 0, 3, false, true },
	{ "SEND_INV 5000 B at 2048, max 15: ONLY", IB_WR_SEND_WITH_INV, 5000,
	  2048, 0, 15, S_OV, 0, 5000, 0, 3, true, true },
	{ "SEND_INV 5000 B at 2048 from 1, max 15", IB_WR_SEND_WITH_INV, 5000,
	  2048, 1, 15, S_LV, 2048, 2952, 0, 2, false, true },
	{ "SEND_INV 5000 B at 2048 from 0, max 2", IB_WR_SEND_WITH_INV, 5000,
	  2048, 0, 2, S_F, 0, 4096, 0, 2, true, false },
	{ "SEND of two MTUs exactly, max 2", IB_WR_SEND, 2048, 1024, 0, 2,
	  S_O, 0, 2048, 0, 2, true, true },
	{ "SEND 10000 B at 1024 from 2, max 3", IB_WR_SEND, 10000, 1024, 2, 3,
	  S_M, 2048, 3072, 0, 3, false, false },
	{ "SEND 1 MiB at 256, max 240", IB_WR_SEND, 1 << 20, 256, 0, 240,
	  S_F, 0, 61440, 0, 240, true, false },
	/* left as sroce_req_pkt_shape() gave them */
	{ "WRITE of one packet", IB_WR_RDMA_WRITE, 4096, 4096, 0, 15, W_O, 0,
	  4096, 4096, 1, true, true },
	{ "WRITE 0 B", IB_WR_RDMA_WRITE, 0, 1024, 0, 15, W_O, 0, 0, 0, 1,
	  true, true },
	{ "SEND 1 B", IB_WR_SEND, 1, 1024, 0, 15, S_O, 0, 1, 0, 1, true,
	  true },
	{ "WRITE 64 KiB, max 1", IB_WR_RDMA_WRITE, 65536, 4096, 0, 1, W_F, 0,
	  4096, 65536, 1, true, false },
	{ "READ 64 KiB", IB_WR_RDMA_READ, 65536, 4096, 0, 15, R_REQ, 0, 0,
	  65536, 1, true, true },
	{ "READ 64 KiB resumed at 3", IB_WR_RDMA_READ, 65536, 4096, 3, 15,
	  R_REQ, 12288, 0, 53248, 1, false, true },
	{ "CMP_SWAP", IB_WR_ATOMIC_CMP_AND_SWP, 8, 1024, 0, 15, A_CS, 0, 0, 0,
	  1, true, true },
	{ "FETCH_ADD", IB_WR_ATOMIC_FETCH_AND_ADD, 8, 1024, 0, 15, A_FA, 0, 0,
	  0, 1, true, true },
};

static void span_shape_desc(const struct span_shape_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(span_shape, span_shape_cases, span_shape_desc);

static void span_shape_test(struct kunit *test)
{
	const struct span_shape_case *c = test->param_value;
	struct sroce_req_pkt pkt;

	KUNIT_ASSERT_TRUE(test, sroce_req_pkt_shape(c->wr_opcode, c->length,
						    c->mtu, c->index, &pkt));
	/* a shape of its own spans one PSN */
	KUNIT_EXPECT_EQ(test, pkt.npsn, 1U);
	sroce_req_pkt_span(c->wr_opcode, c->length, c->mtu, c->max, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode, c->opcode);
	KUNIT_EXPECT_EQ(test, pkt.offset, c->offset);
	KUNIT_EXPECT_EQ(test, pkt.paylen, c->paylen);
	KUNIT_EXPECT_EQ(test, pkt.dmalen, c->dmalen);
	KUNIT_EXPECT_EQ(test, pkt.npsn, c->npsn);
	KUNIT_EXPECT_EQ(test, pkt.first, c->first);
	KUNIT_EXPECT_EQ(test, pkt.last, c->last);
}

struct span_cover_case {
	const char *name;
	u32 wr_opcode;
	u32 length;
	u32 mtu;
	u32 max;
	u32 npsn;	/* PSNs of the message */
	u32 npkts;	/* packets it goes in */
	u8 op_first;
	u8 op_middle;	/* of the packets between, if any */
	u8 op_last;
};

static const struct span_cover_case span_cover_cases[] = {
	{ "WRITE 64 KiB at 4096, max 15", IB_WR_RDMA_WRITE, 65536, 4096, 15,
	  16, 2, W_F, 0, W_L },
	{ "WRITE 100000 B at 4096, max 15", IB_WR_RDMA_WRITE, 100000, 4096,
	  15, 25, 2, W_F, 0, W_L },
	{ "SEND 10000 B at 1024, max 4", IB_WR_SEND, 10000, 1024, 4, 10, 3,
	  S_F, S_M, S_L },
	{ "SEND_IMM 1 MiB at 256, max 240", IB_WR_SEND_WITH_IMM, 1 << 20, 256,
	  240, 4096, 18, S_F, S_M, S_LI },
	{ "WRITE_IMM 9500 B at 1024, max 60", IB_WR_RDMA_WRITE_WITH_IMM, 9500,
	  1024, 60, 10, 1, W_OI, 0, W_OI },
	{ "SEND_INV 5000 B at 2048, max 2", IB_WR_SEND_WITH_INV, 5000, 2048,
	  2, 3, 2, S_F, 0, S_LV },
	{ "SEND 0 B, max 15", IB_WR_SEND, 0, 1024, 15, 1, 1, S_O, 0, S_O },
	{ "WRITE 64 KiB at 1024, max 1", IB_WR_RDMA_WRITE, 65536, 1024, 1, 64,
	  64, W_F, W_M, W_L },
};

static void span_cover_desc(const struct span_cover_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(span_cover, span_cover_cases, span_cover_desc);

/*
 * The requester's walk: each packet starts at the PSN after the last one
 * the packet before it used. Every byte of the message goes exactly
 * once, in order, and the PSNs used are those the message has.
 */
static void span_cover_test(struct kunit *test)
{
	const struct span_cover_case *c = test->param_value;
	u32 index = 0, bytes = 0, k;
	struct sroce_req_pkt pkt;

	KUNIT_ASSERT_EQ(test, sroce_req_npkts(c->wr_opcode, c->length, c->mtu),
			c->npsn);
	for (k = 0; k < c->npkts; k++) {
		KUNIT_ASSERT_TRUE(test, sroce_req_pkt_shape(c->wr_opcode,
							    c->length, c->mtu,
							    index, &pkt));
		sroce_req_pkt_span(c->wr_opcode, c->length, c->mtu, c->max,
				   &pkt);
		KUNIT_EXPECT_EQ(test, pkt.offset, bytes);
		KUNIT_EXPECT_EQ(test, pkt.first, k == 0);
		KUNIT_EXPECT_EQ(test, pkt.last, k + 1 == c->npkts);
		KUNIT_EXPECT_GE(test, pkt.npsn, 1U);
		KUNIT_EXPECT_LE(test, pkt.npsn, c->max);
		if (k + 1 == c->npkts)
			KUNIT_EXPECT_EQ(test, pkt.opcode, c->op_last);
		else if (k)
			KUNIT_EXPECT_EQ(test, pkt.opcode, c->op_middle);
		else
			KUNIT_EXPECT_EQ(test, pkt.opcode, c->op_first);
		/* one MTU a PSN, but for the message's last */
		if (!pkt.last)
			KUNIT_EXPECT_EQ(test, pkt.paylen, pkt.npsn * c->mtu);
		bytes += pkt.paylen;
		index += pkt.npsn;
	}
	KUNIT_EXPECT_EQ(test, bytes, c->length);
	KUNIT_EXPECT_EQ(test, index, c->npsn);
	/* nothing after the last packet */
	KUNIT_EXPECT_FALSE(test, sroce_req_pkt_shape(c->wr_opcode, c->length,
						     c->mtu, index, &pkt));
}

/* ---- the completer's READ responses (sroce_comp_read_span()) ------------ */

struct span_read_case {
	const char *name;
	u32 first;	/* the READ's PSNs */
	u32 last;
	u32 psn;	/* the response's, the one expected next */
	u8 opcode;
	u32 paylen;
	bool local;
	u32 resid;	/* bytes of the READ not yet received */
	u32 want;
};

/*
 * A READ of 10000 bytes at path MTU 1024 answered at PSNs 100 to 109
 * (10000 - 9 * 1024 = 784 in the last); at PSN 100 + k, 10000 - k * 1024
 * bytes are still to come. One of 6120 bytes at PSNs 0xfffffe to 3 the
 * same way, across the wrap: 6120 - k * 1024 at PSN 0xfffffe + k.
 */
static const struct span_read_case span_read_cases[] = {
	{ "local FIRST of 4", 100, 109, 100, R_F, 4096, true, 10000, 4 },
	{ "local MIDDLE of 3", 100, 109, 104, R_M, 3072, true, 5904, 3 },
	{ "local LAST of 3, to the end", 100, 109, 107, R_L, 2832, true,
	  2832, 3 },
	{ "local ONLY of all 10", 100, 109, 100, R_O, 10000, true, 10000, 10 },
	{ "local LAST of one", 100, 109, 109, R_L, 784, true, 784, 1 },
	{ "local MIDDLE of one MTU", 100, 109, 101, R_M, 1024, true, 8976, 1 },
	{ "wire MIDDLE of one MTU", 100, 109, 104, R_M, 1024, false, 5904, 1 },
	{ "wire LAST", 100, 109, 109, R_L, 784, false, 784, 1 },
	/* malformed */
	{ "wire FIRST of two MTUs", 100, 109, 100, R_F, 2048, false, 10000,
	  0 },
	{ "wire LAST of two PSNs' rest", 100, 109, 108, R_L, 1808, false,
	  1808, 0 },
	{ "local MIDDLE past the last PSN", 100, 109, 107, R_M, 4096, true,
	  2832, 0 },
	{ "local LAST past the last PSN", 100, 109, 108, R_L, 3072, true,
	  1808, 0 },
	{ "local MIDDLE reaching the last PSN", 100, 109, 107, R_M, 2832, true,
	  2832, 0 },
	{ "local LAST short of the last PSN", 100, 109, 104, R_L, 3072, true,
	  5904, 0 },
	{ "local MIDDLE not whole MTUs", 100, 109, 104, R_M, 3000, true, 5904,
	  0 },
	{ "local LAST one byte short", 100, 109, 107, R_L, 2831, true, 2832,
	  0 },
	{ "local ONLY one byte long", 100, 109, 100, R_O, 10001, true, 10000,
	  0 },
	/* across the PSN wrap */
	{ "wrap: local FIRST of 3", 0xfffffe, 3, 0xfffffe, R_F, 3072, true,
	  6120, 3 },
	{ "wrap: local LAST of 4 from 0", 0xfffffe, 3, 0, R_L, 4072, true,
	  4072, 4 },
	{ "wrap: local ONLY of all 6", 0xfffffe, 3, 0xfffffe, R_O, 6120, true,
	  6120, 6 },
	{ "wrap: local MIDDLE of 6 past the last", 0xfffffe, 3, 0xffffff,
	  R_M, 6144, true, 5096, 0 },
	{ "wrap: local MIDDLE reaching the last", 0xfffffe, 3, 0, R_M, 4072,
	  true, 4072, 0 },
};

static void span_read_desc(const struct span_read_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(span_read, span_read_cases, span_read_desc);

static void span_read_test(struct kunit *test)
{
	const struct span_read_case *c = test->param_value;
	struct sroce_rsp_expect e = {
		.read = true, .first_psn = c->first, .last_psn = c->last,
		.next_psn = c->psn,
	};
	struct sroce_pkt pkt = {
		.info = sroce_opcode_lookup(c->opcode), .opcode = c->opcode,
		.psn = c->psn, .paylen = c->paylen,
		.flags = c->local ? LOCAL : 0,
	};

	KUNIT_ASSERT_NOT_NULL(test, pkt.info);
	KUNIT_EXPECT_EQ(test, sroce_comp_read_span(&e, &pkt, c->resid, 1024),
			c->want);
}

/* ---- the responder's span (sroce_resp_span()) -------------------------- */

struct span_resp_case {
	const char *name;
	enum ib_qp_type type;
	enum ib_mtu mtu;
	bool local;
	u32 paylen;
	u32 want;
};

static const struct span_resp_case span_resp_cases[] = {
	{ "wire RC, 4000 B at 1024", IB_QPT_RC, IB_MTU_1024, false, 4000, 1 },
	{ "local RC, 4000 B at 1024", IB_QPT_RC, IB_MTU_1024, true, 4000, 4 },
	{ "local RC, 4096 B at 1024", IB_QPT_RC, IB_MTU_1024, true, 4096, 4 },
	{ "local RC, 4097 B at 1024", IB_QPT_RC, IB_MTU_1024, true, 4097, 5 },
	{ "local RC, 1 B", IB_QPT_RC, IB_MTU_1024, true, 1, 1 },
	{ "local RC, 60 KiB at 4096", IB_QPT_RC, IB_MTU_4096, true, 61440,
	  15 },
	{ "local RC, 10000 B at 256", IB_QPT_RC, IB_MTU_256, true, 10000, 40 },
	{ "local UC, 4000 B at 1024", IB_QPT_UC, IB_MTU_1024, true, 4000, 1 },
	{ "local UD, 4000 B at 1024", IB_QPT_UD, IB_MTU_1024, true, 4000, 1 },
	{ "local RC, no payload", IB_QPT_RC, IB_MTU_1024, true, 0, 1 },
	{ "wire RC, no payload", IB_QPT_RC, IB_MTU_1024, false, 0, 1 },
};

static void span_resp_desc(const struct span_resp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(span_resp, span_resp_cases, span_resp_desc);

static void span_resp_test(struct kunit *test)
{
	const struct span_resp_case *c = test->param_value;
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct sroce_qp_params p = { .path_mtu = c->mtu };
	struct sroce_pkt pkt = {
		.paylen = c->paylen, .flags = c->local ? LOCAL : 0,
	};

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.qp_type = c->type;
	KUNIT_EXPECT_EQ(test, sroce_resp_span(qp, &p, &pkt), c->want);
}

/* ---- the RC responder, through its task -------------------------------- */

#define SPAN_MAX_ACKS	4

/*
 * The ACKNOWLEDGE packets the responder sent. They go to 127.0.0.1, where
 * no sroce device takes them: the kfree_skb tracepoint sees each one as
 * it is dropped, skb->data at its IPv4 header.
 */
struct span_acks {
	atomic_t n;
	u32 psn[SPAN_MAX_ACKS];
	u8 type[SPAN_MAX_ACKS];
	u8 code[SPAN_MAX_ACKS];
};

#define SPAN_ACK_HDRS	(sizeof(struct iphdr) + sizeof(struct udphdr))

static void span_ack_seen(void *data, struct sk_buff *skb, void *location,
			  enum skb_drop_reason reason)
{
	u8 h[SPAN_ACK_HDRS + SROCE_BTH_LEN + sizeof(struct sroce_aeth)];
	const struct udphdr *uh = (void *)(h + sizeof(struct iphdr));
	const struct sroce_bth *bth = (void *)(h + SPAN_ACK_HDRS);
	const struct sroce_aeth *aeth = (void *)(bth + 1);
	struct span_acks *a = data;
	int i;

	/* anything else freed meanwhile, anywhere, is not ours */
	if (skb_copy_bits(skb, 0, h, sizeof(h)) || h[0] != 0x45 ||
	    uh->dest != htons(ROCE_V2_UDP_DPORT) ||
	    sroce_bth_opcode(bth) != IB_OPCODE_RC_ACKNOWLEDGE ||
	    sroce_bth_destqp(bth) != TFIX_DEST_QPN)
		return;
	i = atomic_inc_return(&a->n) - 1;
	if (i >= SPAN_MAX_ACKS)
		return;
	a->psn[i] = sroce_bth_psn(bth);
	a->type[i] = sroce_aeth_type(aeth);
	a->code[i] = sroce_aeth_code(aeth);
}

static int span_acks_watch(struct kunit_resource *res, void *context)
{
	res->data = context;
	return register_trace_kfree_skb(span_ack_seen, context);
}

static void span_acks_unwatch(struct kunit_resource *res)
{
	unregister_trace_kfree_skb(span_ack_seen, res->data);
	tracepoint_synchronize_unregister();
}

/* Before the fixture goes: the responder stops, its resources go. */
static void span_rc_free(struct kunit_resource *res)
{
	struct sroce_qp *qp = res->data;

	sroce_task_disable(&qp->resp.task);
	sroce_resp_res_free(&qp->resp.res);
}

/*
 * An RC QP of resp_fix.h whose responder task runs the responder's own
 * work function, as create_qp sets it up (sroce_resp_init()): the RC
 * request path is static to sroce_resp.c and only that task reaches it.
 * Its peer is 127.0.0.1; *@acks collects what it answers.
 */
static struct sroce_tfix *span_rc_init(struct kunit *test, u32 epsn,
				       struct span_acks **acks)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_RC, epsn, SPAN_RW);
	struct sroce_qp *qp = f->qp;
	struct net_device *ndev;

	ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->hard_header_len = ETH_HLEN;	/* for the ACKs' headroom */
	f->t.sdev->ndev = ndev;
	sroce_test_loopback_av(&qp->p.av, false);
	qp->p.has_av = true;

	sroce_task_disable(&qp->resp.task);
	sroce_task_cleanup(&qp->resp.task);
	KUNIT_ASSERT_EQ(test, sroce_resp_init(qp), 0);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 span_rc_free,
							 GFP_KERNEL, qp));
	*acks = kunit_kzalloc(test, sizeof(**acks), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *acks);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, span_acks_watch,
							 span_acks_unwatch,
							 GFP_KERNEL, *acks));
	return f;
}

/* Queue @s, flags @flags added, as the receive path does; run the task. */
static void span_rc_rx(struct kunit *test, struct sroce_tfix *f,
		       const struct sroce_tfix_step *s, u8 flags)
{
	struct sk_buff *skb = sroce_tfix_skb(test, f, s);

	sroce_skb_pkt(skb)->flags |= flags;
	skb_queue_tail(&f->qp->resp.rxq, skb);
	sroce_task_run(&f->qp->resp.task);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&f->qp->resp.rxq), 0U);
}

/* Answer @i was of @type and @code, about @psn. */
static void span_expect_ack(struct kunit *test, const struct span_acks *a,
			    int i, u32 psn, enum sroce_aeth_type type, u8 code)
{
	KUNIT_ASSERT_LT(test, i, SPAN_MAX_ACKS);
	KUNIT_EXPECT_EQ(test, a->psn[i], psn);
	KUNIT_EXPECT_EQ(test, a->type[i], (u8)type);
	KUNIT_EXPECT_EQ(test, a->code[i], code);
}

/* Index of the first of @len bytes at @mem not message @msg's, or @len. */
static u32 span_first_wrong(const u8 *mem, u8 msg, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (mem[i] != sroce_tfix_pattern(msg, i))
			break;
	return i;
}

/*
 * A WRITE of 3048 bytes at path MTU 1024, PSNs 100 to 102: a FIRST this
 * host handed over carries 2048 of them for PSNs 100 and 101, a LAST the
 * other 1000. Each asks for an ACK: of 101, then of 102.
 */
static void span_rc_write_test(struct kunit *test)
{
	struct sroce_tfix_step first = {
		W_F, 100, 3, 0, 2048, K_BUF, 3048,
	};
	struct sroce_tfix_step last = { W_L, 102, 3, 2048, 1000 };
	struct span_acks *acks;
	struct sroce_tfix *f = span_rc_init(test, 100, &acks);
	const u8 *mem = f->buf + TFIX_WOFF;

	span_rc_rx(test, f, &first, LOCAL | ACKREQ);
	KUNIT_EXPECT_EQ(test, f->qp->resp.psn, 102U);
	KUNIT_EXPECT_EQ(test, f->qp->resp.resid, 1000U);
	span_rc_rx(test, f, &last, LOCAL | ACKREQ);
	KUNIT_EXPECT_EQ(test, f->qp->resp.psn, 103U);
	KUNIT_EXPECT_EQ(test, f->qp->resp.msn, 1U);
	KUNIT_EXPECT_EQ(test, f->qp->p.state, IB_QPS_RTS);

	KUNIT_EXPECT_EQ(test, span_first_wrong(mem, 3, 3048), 3048U);
	KUNIT_EXPECT_EQ(test, f->buf[TFIX_WOFF - 1], TFIX_SENTINEL);
	KUNIT_EXPECT_EQ(test, mem[3048], TFIX_SENTINEL);
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(f->buf_mr)->ref), 1U);

	KUNIT_EXPECT_EQ(test, atomic_read(&acks->n), 2);
	span_expect_ack(test, acks, 0, 101, SROCE_AETH_ACK,
			SROCE_AETH_CREDITS_INVALID);
	span_expect_ack(test, acks, 1, 102, SROCE_AETH_ACK,
			SROCE_AETH_CREDITS_INVALID);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_SEND_ERR), 2ULL);
}

/*
 * A SEND ONLY of 2500 bytes this host handed over at PSN 0xffffff uses
 * three PSNs at path MTU 1024: 0xffffff, 0 and 1. The ePSN moves to 2
 * and the ACK is of 1; the receive completes with every byte.
 */
static void span_rc_send_wrap_test(struct kunit *test)
{
	struct sroce_tfix_step only = { S_O, 0xffffff, 4, 0, 2500 };
	struct span_acks *acks;
	struct sroce_tfix *f = span_rc_init(test, 0xffffff, &acks);
	const u8 *mem = f->buf + TFIX_RECV_OFF(0);
	struct ib_wc wc;

	sroce_tfix_post_recv(test, f, 0, false);
	span_rc_rx(test, f, &only, LOCAL | ACKREQ);
	KUNIT_EXPECT_EQ(test, f->qp->resp.psn, 2U);
	KUNIT_EXPECT_EQ(test, f->qp->resp.msn, 1U);
	KUNIT_EXPECT_EQ(test, f->qp->p.state, IB_QPS_RTS);

	KUNIT_ASSERT_EQ(test, sroce_poll_cq(&f->cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)TFIX_WR_ID(0));
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2500U);
	KUNIT_EXPECT_EQ(test, span_first_wrong(mem, 4, 2500), 2500U);
	KUNIT_EXPECT_EQ(test, mem[2500], TFIX_SENTINEL);

	KUNIT_EXPECT_EQ(test, atomic_read(&acks->n), 1);
	span_expect_ack(test, acks, 0, 1, SROCE_AETH_ACK,
			SROCE_AETH_CREDITS_INVALID);
}

struct span_refused_case {
	const char *name;
	u8 flags;
	u32 paylen;
};

static const struct span_refused_case span_refused_cases[] = {
	{ "from the wire, two MTUs", ACKREQ, 2048 },
	{ "from the wire, two MTUs, no AckReq", 0, 2048 },
	{ "local, one and a half MTUs", LOCAL | ACKREQ, 1536 },
};

static void span_refused_desc(const struct span_refused_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(span_refused, span_refused_cases, span_refused_desc);

/*
 * A WRITE FIRST longer than the path MTU that did not come from this
 * host, or not of whole MTUs, is an invalid request: a NAK of its PSN,
 * the QP in ERR, the ePSN where it was and not a byte placed.
 */
static void span_rc_refused_test(struct kunit *test)
{
	const struct span_refused_case *c = test->param_value;
	struct sroce_tfix_step first = {
		W_F, 100, 3, 0, c->paylen, K_BUF, 3048,
	};
	struct span_acks *acks;
	struct sroce_tfix *f = span_rc_init(test, 100, &acks);
	const u8 *mem = f->buf + TFIX_WOFF;
	u32 i;

	span_rc_rx(test, f, &first, c->flags);
	KUNIT_EXPECT_EQ(test, f->qp->resp.psn, 100U);
	KUNIT_EXPECT_EQ(test, f->qp->p.state, IB_QPS_ERR);
	for (i = 0; i < 3048; i++)
		if (mem[i] != TFIX_SENTINEL)
			break;
	KUNIT_EXPECT_EQ(test, i, 3048U);
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(f->buf_mr)->ref), 1U);

	KUNIT_EXPECT_EQ(test, atomic_read(&acks->n), 1);
	span_expect_ack(test, acks, 0, 100, SROCE_AETH_NAK,
			SROCE_NAK_INVALID_REQ);
}

/* ---- the train of a spanning packet (sroce_train_send()) ---------------- */

static atomic_t span_freed;

static void span_count_free(struct sk_buff *skb)
{
	atomic_inc(&span_freed);
}

/*
 * A train that holds a packet spanning PSNs finds its route leaving the
 * host (its device is no loopback): none of it may reach a wire. The
 * train is dropped before the route is used, each packet freed and
 * counted in send_err, the route's reference given back.
 */
static void span_train_dropped_test(struct kunit *test)
{
	static const struct { u8 op; u32 paylen; } pkts[] = {
		{ W_F, 8192 }, { W_M, 4096 }, { W_L, 100 },
	};
	struct sroce_test_dev t = { .sdev = sroce_test_xmit_dev(test) };
	struct sroce_train train;
	struct net_device *ndev;
	struct dst_entry *dst;
	struct sk_buff *skb;
	struct sroce_av av;
	unsigned int i;

	sroce_test_dev_init_stats(test, &t);
	ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);
	dst = kunit_kzalloc(test, sizeof(*dst), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	ndev->flags = IFF_UP;
	dst->dev = ndev;
	/* the reference handed over, and one that keeps it from freeing */
	atomic_set(&dst->__refcnt, 2);
	memset(&av, 0, sizeof(av));
	av.network_type = RDMA_NETWORK_IPV4;
	av.saddr.in4.sin_addr.s_addr = htonl(0x0a000001);
	av.daddr.in4.sin_addr.s_addr = htonl(0x0a000002);

	train.local_only = true;
	sroce_train_init(&train);
	KUNIT_EXPECT_FALSE(test, train.local_only);
	atomic_set(&span_freed, 0);
	for (i = 0; i < ARRAY_SIZE(pkts); i++) {
		skb = sroce_tx_alloc(t.sdev, &av, 0x11, pkts[i].op, 7 + i * 2,
				     pkts[i].paylen, false, false);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb->destructor = span_count_free;
		sroce_train_add(&train, skb);
	}
	train.local_only = true;

	KUNIT_EXPECT_EQ(test, sroce_train_send(t.sdev, &av, dst, 0xc000,
					       &train), -EHOSTUNREACH);
	KUNIT_EXPECT_EQ(test, atomic_read(&span_freed), 3);
	KUNIT_EXPECT_EQ(test, train.n, 0U);
	KUNIT_EXPECT_EQ(test, train.bytes, 0U);
	KUNIT_EXPECT_NULL(test, train.head);
	KUNIT_EXPECT_EQ(test, atomic_read(&dst->__refcnt), 1);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_SEND_ERR), 3ULL);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_SENT_PKTS),
			0ULL);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_SENT_GSO),
			0ULL);
}

/* ---- how many PSNs (sroce_tx_span_max()) ------------------------------- */

/*
 * Under the default module parameters (local_span and tx_lend on,
 * force_wire off): one PSN a packet on a wire, as many path MTUs as
 * SROCE_TX_SPAN_BYTES holds in this host.
 */
static void span_tx_max_test(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, sroce_xmit_may_span(false));
	KUNIT_EXPECT_TRUE(test, sroce_xmit_may_span(true));
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(4096, false), 1U);
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(1024, false), 1U);
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(4096, true),
			(u32)(SROCE_TX_SPAN_BYTES / 4096));
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(1024, true),
			(u32)(SROCE_TX_SPAN_BYTES / 1024));
	if (MAX_SKB_FRAGS != 17)
		kunit_skip(test, "MAX_SKB_FRAGS %lu, not 17",
			   (unsigned long)MAX_SKB_FRAGS);
	/* 16 fragments lent, 15 pages of payload however it is aligned */
	KUNIT_EXPECT_EQ(test, (u32)SROCE_TX_SPAN_BYTES, 61440U);
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(4096, true), 15U);
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(2048, true), 30U);
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(1024, true), 60U);
	KUNIT_EXPECT_EQ(test, sroce_tx_span_max(256, true), 240U);
}

static struct kunit_case sroce_span_test_cases[] = {
	KUNIT_CASE_PARAM(span_shape_test, span_shape_gen_params),
	KUNIT_CASE_PARAM(span_cover_test, span_cover_gen_params),
	KUNIT_CASE_PARAM(span_read_test, span_read_gen_params),
	KUNIT_CASE_PARAM(span_resp_test, span_resp_gen_params),
	KUNIT_CASE(span_rc_write_test),
	KUNIT_CASE(span_rc_send_wrap_test),
	KUNIT_CASE_PARAM(span_rc_refused_test, span_refused_gen_params),
	KUNIT_CASE(span_train_dropped_test),
	KUNIT_CASE(span_tx_max_test),
	{}
};

static struct kunit_suite sroce_span_test_suite = {
	.name = "sroce_span",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_span_test_cases,
};

kunit_test_suites(&sroce_span_test_suite);
