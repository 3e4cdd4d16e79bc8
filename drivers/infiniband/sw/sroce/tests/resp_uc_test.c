// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the UC data path: the responder's packet verdict and
 * its execution of UC SEND and RDMA WRITE messages (sroce_resp_uc.c), and
 * the RC <-> UC opcode mapping the requester sends with.
 *
 * Expectations come from IBA vol 1: 9.8.3 (a UC responder executes
 * packets in PSN order; a first or only packet ahead of the expected PSN
 * starts a message; any other packet out of place is dropped with the
 * rest of its message; nothing is acknowledged or resent; messages stay
 * in order, so a packet from behind changes nothing), 9.9.3 (UC responder
 * errors: no receive WQE, R_Key, bounds, access or length violations of
 * a WRITE and a SEND longer than its receive WQE lose the message
 * silently; a receive WQE with a bad local key completes in error and
 * the QP goes to ERR, 10.3.1) and table 38 (the UC opcodes are the RC
 * ones with transport 001b).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_wqe.h"
#include "resp_fix.h"
#include "test_util.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp_uc.h"
#include "transport/sroce_wq.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

#define NEXT	SROCE_UC_NEXT
#define RESTART	SROCE_UC_RESTART
#define DROP	SROCE_UC_DROP
#define STALE	SROCE_UC_STALE

/* No packet of the message in progress: a message boundary. */
#define NONE	-1

/* ---- the verdict (sroce_resp_uc_verdict()) -------------------------------- */

/* UC opcodes, short */
enum {
	S_F = IB_OPCODE_UC_SEND_FIRST,
	S_M = IB_OPCODE_UC_SEND_MIDDLE,
	S_L = IB_OPCODE_UC_SEND_LAST,
	S_LI = IB_OPCODE_UC_SEND_LAST_WITH_IMMEDIATE,
	S_O = IB_OPCODE_UC_SEND_ONLY,
	S_OI = IB_OPCODE_UC_SEND_ONLY_WITH_IMMEDIATE,
	W_F = IB_OPCODE_UC_RDMA_WRITE_FIRST,
	W_M = IB_OPCODE_UC_RDMA_WRITE_MIDDLE,
	W_L = IB_OPCODE_UC_RDMA_WRITE_LAST,
	W_LI = IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	W_O = IB_OPCODE_UC_RDMA_WRITE_ONLY,
	W_OI = IB_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
};

struct uc_verdict_case {
	const char *name;
	u32 epsn;
	bool dropping;
	int prev;	/* opcode of the last packet executed, or NONE */
	u32 psn;
	u8 op;
	enum sroce_uc_verdict want;
};

static const struct uc_verdict_case uc_verdict_cases[] = {
	/* in order */
	{ "SEND ONLY at the ePSN", 100, false, NONE, 100, S_O, NEXT },
	{ "SEND ONLY imm at the ePSN", 100, false, NONE, 100, S_OI, NEXT },
	{ "SEND FIRST at the ePSN", 100, false, NONE, 100, S_F, NEXT },
	{ "WRITE ONLY at the ePSN", 100, false, NONE, 100, W_O, NEXT },
	{ "WRITE ONLY imm at the ePSN", 100, false, NONE, 100, W_OI, NEXT },
	{ "WRITE FIRST at the ePSN", 100, false, NONE, 100, W_F, NEXT },
	{ "FIRST after a LAST", 100, false, S_L, 100, S_F, NEXT },
	{ "ONLY after an ONLY", 100, false, W_O, 100, S_O, NEXT },
	{ "SEND MIDDLE after FIRST", 100, false, S_F, 100, S_M, NEXT },
	{ "SEND MIDDLE after MIDDLE", 100, false, S_M, 100, S_M, NEXT },
	{ "SEND LAST after FIRST", 100, false, S_F, 100, S_L, NEXT },
	{ "SEND LAST after MIDDLE", 100, false, S_M, 100, S_L, NEXT },
	{ "SEND LAST imm after MIDDLE", 100, false, S_M, 100, S_LI, NEXT },
	{ "WRITE MIDDLE after FIRST", 100, false, W_F, 100, W_M, NEXT },
	{ "WRITE LAST after MIDDLE", 100, false, W_M, 100, W_L, NEXT },
	{ "WRITE LAST imm after FIRST", 100, false, W_F, 100, W_LI, NEXT },
	{ "MIDDLE 0 after FIRST 0xffffff", 0x000000, false, S_F,
	  0x000000, S_M, NEXT },
	/* a PSN gap forward */
	{ "FIRST one ahead: restart", 100, false, NONE, 101, S_F, RESTART },
	{ "ONLY far ahead: restart", 100, false, NONE, 0x1000, S_O, RESTART },
	{ "WRITE FIRST ahead in a message: restart", 100, false, S_M, 105,
	  W_F, RESTART },
	{ "MIDDLE one ahead: drop", 100, false, S_F, 101, S_M, DROP },
	{ "LAST one ahead: drop", 100, false, S_M, 101, S_L, DROP },
	{ "LAST imm ahead: drop", 100, false, W_M, 102, W_LI, DROP },
	/* backward: stale, an older message must not follow a newer one */
	{ "ONLY one behind: stale", 100, false, NONE, 99, S_O, STALE },
	{ "FIRST one behind in a message: stale", 100, false, S_M, 99, S_F,
	  STALE },
	{ "FIRST 2^23 behind: stale", 0x800000, false, NONE, 0x000000,
	  S_F, STALE },
	{ "ONLY 2^23 away counts as behind: stale", 0x000000, false, NONE,
	  0x800000, W_O, STALE },
	{ "ONLY 2^23 - 1 ahead: restart", 0x000000, false, NONE, 0x7fffff,
	  W_O, RESTART },
	{ "MIDDLE one behind: stale", 100, false, S_F, 99, S_M, STALE },
	{ "LAST one behind: stale", 100, false, W_F, 99, W_L, STALE },
	/* across the 24-bit wrap */
	{ "FIRST 0 after ePSN 0xffffff: restart", 0xffffff, false, NONE,
	  0x000000, S_F, RESTART },
	{ "MIDDLE 0 after ePSN 0xffffff: drop", 0xffffff, false, S_F,
	  0x000000, S_M, DROP },
	{ "LAST 0xffffff with ePSN 0: stale", 0x000000, false, S_M, 0xffffff,
	  S_L, STALE },
	{ "ONLY 0xffffff with ePSN 1: stale", 0x000001, false, NONE,
	  0xffffff, S_O, STALE },
	/* the rest of a lost message is being dropped */
	{ "dropping: MIDDLE at the ePSN", 100, true, NONE, 100, S_M, DROP },
	{ "dropping: LAST at the ePSN", 100, true, NONE, 100, S_L, DROP },
	{ "dropping: WRITE LAST imm at the ePSN", 100, true, NONE, 100, W_LI,
	  DROP },
	{ "dropping: MIDDLE ahead", 100, true, NONE, 103, W_M, DROP },
	{ "dropping: FIRST at the ePSN restarts", 100, true, NONE, 100, S_F,
	  RESTART },
	{ "dropping: ONLY ahead restarts", 100, true, NONE, 104, S_O,
	  RESTART },
	{ "dropping: WRITE ONLY imm behind is stale", 100, true, NONE, 90,
	  W_OI, STALE },
	{ "dropping: MIDDLE behind is stale", 100, true, NONE, 99, W_M,
	  STALE },
	/* the wrong packet at the ePSN */
	{ "SEND MIDDLE after WRITE FIRST", 100, false, W_F, 100, S_M, DROP },
	{ "SEND LAST after WRITE MIDDLE", 100, false, W_M, 100, S_L, DROP },
	{ "WRITE MIDDLE after SEND FIRST", 100, false, S_F, 100, W_M, DROP },
	{ "WRITE LAST imm after SEND MIDDLE", 100, false, S_M, 100, W_LI,
	  DROP },
	{ "MIDDLE with no message begun", 100, false, NONE, 100, S_M, DROP },
	{ "LAST with no message begun", 100, false, NONE, 100, W_L, DROP },
	{ "MIDDLE after a LAST", 100, false, S_L, 100, S_M, DROP },
	{ "RC MIDDLE after UC FIRST", 100, false, S_F, 100,
	  IB_OPCODE_RC_SEND_MIDDLE, DROP },
	/* a new message at the ePSN cuts the unfinished one short */
	{ "FIRST after FIRST at the ePSN", 100, false, S_F, 100, S_F,
	  RESTART },
	{ "ONLY after MIDDLE at the ePSN", 100, false, S_M, 100, S_O,
	  RESTART },
	{ "WRITE FIRST after SEND MIDDLE at the ePSN", 100, false, S_M, 100,
	  W_F, RESTART },
	{ "SEND ONLY imm after WRITE FIRST at the ePSN", 100, false, W_F, 100,
	  S_OI, RESTART },
};

static void uc_verdict_desc(const struct uc_verdict_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(uc_verdict, uc_verdict_cases, uc_verdict_desc);

static void resp_uc_verdict_test(struct kunit *test)
{
	const struct uc_verdict_case *t = test->param_value;
	const struct sroce_opcode_info *prev = NULL, *info;

	if (t->prev != NONE) {
		prev = sroce_opcode_lookup(t->prev);
		KUNIT_ASSERT_NOT_NULL(test, prev);
	}
	info = sroce_opcode_lookup(t->op);
	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_EXPECT_EQ(test, sroce_resp_uc_verdict(t->epsn, t->dropping, prev,
						    t->psn, info), t->want);
}

/* ---- RC <-> UC opcodes (sroce_opcode_on_transport()) ---------------------- */

struct uc_opcode_case {
	const char *name;
	u8 rc;
	u8 uc;
};

#define UC_OP_PAIR(op) { #op, IB_OPCODE_RC_##op, IB_OPCODE_UC_##op }

static const struct uc_opcode_case uc_opcode_cases[] = {
	UC_OP_PAIR(SEND_FIRST),
	UC_OP_PAIR(SEND_MIDDLE),
	UC_OP_PAIR(SEND_LAST),
	UC_OP_PAIR(SEND_LAST_WITH_IMMEDIATE),
	UC_OP_PAIR(SEND_ONLY),
	UC_OP_PAIR(SEND_ONLY_WITH_IMMEDIATE),
	UC_OP_PAIR(RDMA_WRITE_FIRST),
	UC_OP_PAIR(RDMA_WRITE_MIDDLE),
	UC_OP_PAIR(RDMA_WRITE_LAST),
	UC_OP_PAIR(RDMA_WRITE_LAST_WITH_IMMEDIATE),
	UC_OP_PAIR(RDMA_WRITE_ONLY),
	UC_OP_PAIR(RDMA_WRITE_ONLY_WITH_IMMEDIATE),
};

static void uc_opcode_desc(const struct uc_opcode_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(uc_opcode, uc_opcode_cases, uc_opcode_desc);

static void resp_uc_opcode_test(struct kunit *test)
{
	const struct uc_opcode_case *t = test->param_value;
	const struct sroce_opcode_info *rc, *uc;

	KUNIT_EXPECT_EQ(test, sroce_opcode_on_transport(t->rc, IB_OPCODE_UC),
			t->uc);
	KUNIT_EXPECT_EQ(test, sroce_opcode_on_transport(t->uc, IB_OPCODE_RC),
			t->rc);
	KUNIT_EXPECT_EQ(test, sroce_opcode_on_transport(t->rc, IB_OPCODE_RC),
			t->rc);
	KUNIT_EXPECT_EQ(test, sroce_opcode_on_transport(t->uc, IB_OPCODE_UC),
			t->uc);

	/* The same operation: the same headers and place in the message. */
	rc = sroce_opcode_lookup(t->rc);
	uc = sroce_opcode_lookup(t->uc);
	KUNIT_ASSERT_NOT_NULL(test, rc);
	KUNIT_ASSERT_NOT_NULL(test, uc);
	KUNIT_EXPECT_EQ(test, sroce_opcode_transport(uc), IB_OPCODE_UC);
	KUNIT_EXPECT_EQ(test, uc->flags, rc->flags);
	KUNIT_EXPECT_EQ(test, uc->hdrs, rc->hdrs);
	/* UC is never acknowledged: AckReq stays 0 (IBA 9.2.3). */
	KUNIT_EXPECT_FALSE(test, sroce_opcode_wants_ackreq(uc));
	KUNIT_EXPECT_EQ(test, sroce_opcode_wants_ackreq(rc),
			sroce_opcode_ends_msg(rc));
}

/* A receive completion expected; opcode and byte_len only on success. */
struct uc_wc {
	u64 wr_id;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	u32 byte_len;
	bool imm;
};

/* @len bytes of @buf from @buf_off hold bytes from @msg_off of @msg. */
struct uc_data {
	u32 buf_off;
	u32 len;
	u8 msg;
	u32 msg_off;
};

#define UC_MAX_STEPS	8
#define UC_DATA_ANY	U32_MAX	/* what buf holds is not defined */

/**
 * struct uc_case - packets through a UC QP and what they must leave
 * @name: description
 * @epsn: the QP's ePSN before
 * @access: IB_ACCESS_REMOTE_* the QP allows
 * @nrecv: receive WQEs posted (0, 1, ...: TFIX_WR_ID(k), TFIX_RECV_OFF(k))
 * @bad_lkey: receive WQE 0 names an lkey that does not exist
 * @n: packets
 * @step: the packets, in arrival order
 * @nwc: receive completions
 * @wc: the completions, in order
 * @ndata: byte ranges of buf that hold message data; every other byte of
 *	buf and of the fast-reg MR's page is still TFIX_SENTINEL
 * @data: the ranges
 * @dropped: dropped_uc_msg
 * @oos: out_of_seq_request
 * @err: the QP is in ERR after (else still RTS)
 * @fr_tail: the last this many bytes of the fast-reg MR hold message 1
 *	from its start; the rest of its page is still TFIX_SENTINEL
 * @dup: duplicate_request (stale packets)
 */
struct uc_case {
	const char *name;
	u32 epsn;
	u32 access;
	u32 nrecv;
	bool bad_lkey;
	u32 n;
	struct sroce_tfix_step step[UC_MAX_STEPS];
	u32 nwc;
	struct uc_wc wc[3];
	u32 ndata;
	struct uc_data data[3];
	u64 dropped;
	u64 oos;
	bool err;
	u32 fr_tail;
	u64 dup;
};

#define RW	IB_ACCESS_REMOTE_WRITE
#define OK	IB_WC_SUCCESS
#define RECV	IB_WC_RECV
#define RIMM	IB_WC_RECV_RDMA_WITH_IMM
#define R0	TFIX_RECV_OFF(0)
#define R1	TFIX_RECV_OFF(1)

static const struct uc_case uc_cases[] = {
	{ "3-packet SEND delivered", 100, RW, 2, false,
	  3, { { S_F, 100, 1, 0, 1024 }, { S_M, 101, 1, 1024, 1024 },
	       { S_L, 102, 1, 2048, 500 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 2548, false } },
	  1, { { R0, 2548, 1, 0 } }, 0, 0, false },
	{ "SEND ONLY with immediate", 100, RW, 1, false,
	  1, { { S_OI, 100, 1, 0, 700 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 700, true } },
	  1, { { R0, 700, 1, 0 } }, 0, 0, false },
	{ "zero-length SEND ONLY", 100, RW, 1, false,
	  1, { { S_O, 100, 1, 0, 0 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 0, false } },
	  0, { }, 0, 0, false },
	{ "SEND across the PSN wrap", 0xffffff, RW, 1, false,
	  3, { { S_F, 0xffffff, 1, 0, 1024 }, { S_M, 0x000000, 1, 1024, 1024 },
	       { S_LI, 0x000001, 1, 2048, 1 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 2049, true } },
	  1, { { R0, 2049, 1, 0 } }, 0, 0, false },
	{ "two SENDs, two receive WQEs", 100, RW, 2, false,
	  3, { { S_O, 100, 1, 0, 300 }, { S_F, 101, 2, 0, 1024 },
	       { S_L, 102, 2, 1024, 24 } },
	  2, { { TFIX_WR_ID(0), OK, RECV, 300, false },
	       { TFIX_WR_ID(1), OK, RECV, 1048, false } },
	  2, { { R0, 300, 1, 0 }, { R1, 1048, 2, 0 } }, 0, 0, false },
	{ "MIDDLE lost: the next SEND reuses the receive WQE", 100, RW, 2,
	  false,
	  3, { { S_F, 100, 1, 0, 1024 }, { S_L, 102, 1, 2048, 500 },
	       { S_O, 103, 2, 0, 700 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 700, false } },
	  2, { { R0, 700, 2, 0 }, { R0 + 700, 324, 1, 700 } }, 1, 1, false },
	{ "LAST lost: a new FIRST restarts in the same WQE", 100, RW, 2, false,
	  4, { { S_F, 100, 1, 0, 1024 }, { S_M, 101, 1, 1024, 1024 },
	       { S_F, 103, 2, 0, 1024 }, { S_L, 104, 2, 1024, 300 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 1324, false } },
	  2, { { R0, 1324, 2, 0 }, { R0 + 1324, 724, 1, 1324 } }, 1, 1, false },
	{ "FIRST at the ePSN cuts an unfinished SEND short", 100, RW, 1, false,
	  3, { { S_F, 100, 1, 0, 1024 }, { S_F, 101, 2, 0, 1024 },
	       { S_L, 102, 2, 1024, 200 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 1224, false } },
	  1, { { R0, 1224, 2, 0 } }, 1, 0, false },
	{ "stale ONLY inside a SEND: ignored, the SEND goes on", 100, RW, 2,
	  false,
	  3, { { S_F, 100, 1, 0, 1024 }, { S_O, 50, 2, 0, 300 },
	       { S_L, 101, 1, 1024, 500 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 1524, false } },
	  1, { { R0, 1524, 1, 0 } }, 0, 0, false, 0, 1 },
	{ "WRITE imm overtaken by the next one: delivered in order only",
	  100, RW, 2, false,
	  4, { { W_F, 102, 2, 0, 1024, K_BUF, 1124 },
	       { W_LI, 103, 2, 1024, 100 },
	       { W_F, 100, 1, 0, 1024, K_BUF, 2048 },
	       { W_LI, 101, 1, 1024, 1024 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 1124, true } },
	  1, { { TFIX_WOFF, 1124, 2, 0 } }, 0, 1, false, 0, 2 },
	{ "FIRST lost: MIDDLE and LAST dropped, WQE untouched", 100, RW, 1,
	  false,
	  3, { { S_M, 101, 1, 1024, 1024 }, { S_L, 102, 1, 2048, 100 },
	       { S_O, 103, 2, 0, 10 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 10, false } },
	  1, { { R0, 10, 2, 0 } }, 1, 1, false },
	{ "SEND MIDDLE after WRITE FIRST: the message is lost", 100, RW, 1,
	  false,
	  4, { { W_F, 100, 1, 0, 1024, K_BUF, 2048 },
	       { S_M, 101, 2, 1024, 1024 }, { S_L, 102, 2, 2048, 10 },
	       { S_O, 103, 3, 0, 10 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 10, false } },
	  2, { { TFIX_WOFF, 1024, 1, 0 }, { R0, 10, 3, 0 } }, 1, 0, false },
	{ "SEND ONLY without a receive WQE: lost, counted", 100, RW, 0, false,
	  1, { { S_O, 100, 1, 0, 500 } },
	  0, { }, 0, { }, 1, 0, false },
	{ "3-packet SEND without a receive WQE: one loss, no gap", 100, RW, 0,
	  false,
	  4, { { S_F, 100, 1, 0, 1024 }, { S_M, 101, 1, 1024, 1024 },
	       { S_L, 102, 1, 2048, 10 }, { S_O, 103, 2, 0, 10 } },
	  0, { }, 0, { }, 2, 0, false },
	{ "SEND longer than the receive WQE: lost, the WQE kept", 100, RW, 2,
	  false,
	  5, { { S_F, 100, 1, 0, 1024 }, { S_M, 101, 1, 1024, 1024 },
	       { S_M, 102, 1, 2048, 1024 }, { S_L, 103, 1, 3072, 100 },
	       { S_O, 104, 2, 0, 50 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 50, false } },
	  2, { { R0, 50, 2, 0 }, { R0 + 50, 3022, 1, 50 } }, 1, 0, false },
	{ "SEND ONLY over the receive WQE: lost, the WQE kept", 100, RW, 1,
	  false,
	  2, { { S_O, 100, 1, 0, TFIX_RECV_LEN + 1 }, { S_O, 101, 2, 0, 10 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 10, false } },
	  UC_DATA_ANY, { }, 1, 0, false },
	{ "SEND MIDDLE shorter than the MTU: lost, the WQE kept", 100, RW, 1,
	  false,
	  4, { { S_F, 100, 1, 0, 1024 }, { S_M, 101, 1, 1024, 1000 },
	       { S_L, 102, 1, 2024, 100 }, { S_O, 103, 2, 0, 10 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 10, false } },
	  2, { { R0, 10, 2, 0 }, { R0 + 10, 1014, 1, 10 } }, 1, 0, false },
	{ "SEND ONLY longer than the MTU: lost, the WQE kept", 100, RW, 1,
	  false,
	  2, { { S_O, 100, 1, 0, 1100 }, { S_O, 101, 2, 0, 10 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 10, false } },
	  1, { { R0, 10, 2, 0 } }, 1, 0, false },
	{ "receive WQE with a bad lkey: LOC_PROT_ERR, QP to ERR", 100, RW, 2,
	  true,
	  1, { { S_O, 100, 1, 0, 100 } },
	  2, { { TFIX_WR_ID(0), IB_WC_LOC_PROT_ERR },
	       { TFIX_WR_ID(1), IB_WC_WR_FLUSH_ERR } },
	  0, { }, 0, 0, true },
	{ "WRITE ONLY placed, no completion", 100, RW, 1, false,
	  1, { { W_O, 100, 1, 0, 600, K_BUF, 600 } },
	  0, { }, 1, { { TFIX_WOFF, 600, 1, 0 } }, 0, 0, false },
	{ "3-packet WRITE with immediate", 100, RW, 1, false,
	  3, { { W_F, 100, 1, 0, 1024, K_BUF, 2548 },
	       { W_M, 101, 1, 1024, 1024 }, { W_LI, 102, 1, 2048, 500 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 2548, true } },
	  1, { { TFIX_WOFF, 2548, 1, 0 } }, 0, 0, false },
	{ "WRITE with a stale rkey: nothing written; WRITE imm after", 100,
	  RW, 1, false,
	  2, { { W_O, 100, 1, 0, 600, K_STALE, 600 },
	       { W_OI, 101, 2, 0, 400, K_BUF, 400 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 400, true } },
	  1, { { TFIX_WOFF, 400, 2, 0 } }, 1, 0, false },
	{ "WRITE ONLY into the fast-reg MR's last 100 bytes", 100, RW, 0,
	  false,
	  1, { { W_O, 100, 1, 0, 100, K_FR_TAIL, 100 } },
	  0, { }, 0, { }, 0, 0, false, 100 },
	{ "WRITE FIRST cut short by a WRITE ONLY at the ePSN", 100, RW, 0,
	  false,
	  2, { { W_F, 100, 1, 0, 1024, K_BUF, 2048 },
	       { W_O, 101, 2, 0, 300, K_BUF, 300 } },
	  0, { }, 2, { { TFIX_WOFF, 300, 2, 0 }, { TFIX_WOFF + 300, 724, 1, 300 } },
	  1, 0, false },
	{ "WRITE to an MR without remote write: lost", 100, RW, 1, false,
	  2, { { W_O, 100, 1, 0, 600, K_NOREMOTE, 600 },
	       { W_OI, 101, 2, 0, 400, K_BUF, 400 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 400, true } },
	  1, { { TFIX_WOFF, 400, 2, 0 } }, 1, 0, false },
	{ "WRITE past the end of the MR: lost", 100, RW, 1, false,
	  2, { { W_O, 100, 1, 0, 600, K_FR_TAIL, 600 },
	       { W_OI, 101, 2, 0, 400, K_BUF, 400 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 400, true } },
	  1, { { TFIX_WOFF, 400, 2, 0 } }, 1, 0, false },
	{ "WRITE wrapping the address space: lost", 100, RW, 1, false,
	  2, { { W_O, 100, 1, 0, 600, K_WRAP, 600 },
	       { W_OI, 101, 2, 0, 400, K_BUF, 400 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 400, true } },
	  1, { { TFIX_WOFF, 400, 2, 0 } }, 1, 0, false },
	{ "WRITE to a QP without remote write: lost; SEND after", 100, 0, 1,
	  false,
	  2, { { W_O, 100, 1, 0, 600, K_BUF, 600 }, { S_O, 101, 2, 0, 50 } },
	  1, { { TFIX_WR_ID(0), OK, RECV, 50, false } },
	  1, { { R0, 50, 2, 0 } }, 1, 0, false },
	{ "WRITE ONLY shorter than its RETH: lost", 100, RW, 1, false,
	  2, { { W_O, 100, 1, 0, 500, K_BUF, 600 },
	       { W_OI, 101, 2, 0, 400, K_BUF, 400 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 400, true } },
	  1, { { TFIX_WOFF, 400, 2, 0 } }, 1, 0, false },
	{ "WRITE MIDDLE shorter than the MTU: rest lost", 100, RW, 1, false,
	  4, { { W_F, 100, 1, 0, 1024, K_BUF, 3000 },
	       { W_M, 101, 1, 1024, 1000 }, { W_L, 102, 1, 2024, 976 },
	       { W_OI, 103, 2, 0, 0, K_BUF, 0 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 0, true } },
	  1, { { TFIX_WOFF, 1024, 1, 0 } }, 1, 0, false },
	{ "3-packet WRITE, bad rkey: one loss, no gap", 100, RW, 1, false,
	  4, { { W_F, 100, 1, 0, 1024, K_STALE, 2048 + 10 },
	       { W_M, 101, 1, 1024, 1024 }, { W_L, 102, 1, 2048, 10 },
	       { W_OI, 103, 2, 0, 400, K_BUF, 400 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 400, true } },
	  1, { { TFIX_WOFF, 400, 2, 0 } }, 1, 0, false },
	{ "WRITE imm without a receive WQE: lost", 100, RW, 0, false,
	  3, { { W_F, 100, 1, 0, 1024, K_BUF, 1034 },
	       { W_LI, 101, 1, 1024, 10 }, { W_O, 102, 2, 0, 8, K_BUF, 8 } },
	  0, { }, 2, { { TFIX_WOFF, 8, 2, 0 }, { TFIX_WOFF + 8, 1016, 1, 8 } },
	  1, 0, false },
	{ "a lost SEND's WQE takes the next WRITE's immediate", 100, RW, 1,
	  false,
	  3, { { S_F, 100, 1, 0, 1024 }, { S_L, 102, 1, 2048, 10 },
	       { W_OI, 103, 2, 0, 64, K_BUF, 64 } },
	  1, { { TFIX_WR_ID(0), OK, RIMM, 64, true } },
	  2, { { R0, 1024, 1, 0 }, { TFIX_WOFF, 64, 2, 0 } }, 1, 1, false },
};

static void uc_desc(const struct uc_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(uc, uc_cases, uc_desc);

static void uc_expect_wcs(struct kunit *test, struct sroce_tfix *f,
			  const struct uc_case *t)
{
	struct ib_wc wc[TFIX_CQ_DEPTH];
	int n, i;

	n = sroce_poll_cq(&f->cq->ibcq, TFIX_CQ_DEPTH, wc);
	KUNIT_EXPECT_EQ(test, n, (int)t->nwc);
	for (i = 0; i < n && i < (int)t->nwc; i++) {
		const struct uc_wc *w = &t->wc[i];

		KUNIT_EXPECT_EQ_MSG(test, wc[i].wr_id, w->wr_id, "wc %d", i);
		KUNIT_EXPECT_EQ_MSG(test, wc[i].status, w->status, "wc %d", i);
		KUNIT_EXPECT_PTR_EQ(test, wc[i].qp, &f->qp->ibqp);
		if (w->status != IB_WC_SUCCESS)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, wc[i].opcode, w->opcode, "wc %d", i);
		KUNIT_EXPECT_EQ_MSG(test, wc[i].byte_len, w->byte_len,
				    "wc %d", i);
		KUNIT_EXPECT_EQ(test, wc[i].src_qp, TFIX_DEST_QPN);
		KUNIT_EXPECT_EQ(test, !!(wc[i].wc_flags & IB_WC_WITH_IMM),
				w->imm);
		if (w->imm)
			KUNIT_EXPECT_EQ(test, be32_to_cpu(wc[i].ex.imm_data),
					TFIX_IMM);
	}
}

/* Where @t's data goes, every byte; the rest of buf is TFIX_SENTINEL. */
static void uc_expect_data(struct kunit *test, struct sroce_tfix *f,
			   const struct uc_case *t)
{
	u8 *want = kunit_kmalloc(test, TFIX_BUF_SIZE, GFP_KERNEL);
	const u8 *page = page_address(f->fr_page);
	u32 k, i;

	KUNIT_ASSERT_NOT_NULL(test, want);
	memset(want, TFIX_SENTINEL, TFIX_BUF_SIZE);
	for (k = 0; k < t->ndata; k++)
		for (i = 0; i < t->data[k].len; i++)
			want[t->data[k].buf_off + i] =
				sroce_tfix_pattern(t->data[k].msg, t->data[k].msg_off + i);
	for (i = 0; i < TFIX_BUF_SIZE; i++)
		if (f->buf[i] != want[i])
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, (u32)TFIX_BUF_SIZE,
			    "buf[%u] is %#x, want %#x", i,
			    i < TFIX_BUF_SIZE ? f->buf[i] : 0,
			    i < TFIX_BUF_SIZE ? want[i] : 0);
	for (i = 0; i < PAGE_SIZE; i++)
		if (page[i] != (i < PAGE_SIZE - t->fr_tail ? TFIX_SENTINEL :
				sroce_tfix_pattern(1, i - (PAGE_SIZE - t->fr_tail))))
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, (u32)PAGE_SIZE,
			    "fast-reg MR byte %u is %#x", i,
			    i < PAGE_SIZE ? page[i] : 0);
}

/* No MR is held by the responder once its messages are over. */
static void uc_expect_no_refs(struct kunit *test, struct sroce_tfix *f)
{
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(f->buf_mr)->ref), 1U);
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(f->ro_mr)->ref), 1U);
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(f->fr_mr)->ref), 1U);
}

/*
 * Post @t's receive WQEs, then hand its packets to the responder, with
 * their payloads in fragments if @frags.
 */
static struct sroce_tfix *uc_run(struct kunit *test, const struct uc_case *t,
				 bool frags)
{
	struct sroce_tfix *f = sroce_tfix_init(test, IB_QPT_UC, t->epsn, t->access);
	u32 k;

	f->frags = frags;

	for (k = 0; k < t->nrecv; k++)
		sroce_tfix_post_recv(test, f, k, t->bad_lkey && k == 0);
	for (k = 0; k < t->n; k++)
		sroce_tfix_rx(test, f, &t->step[k]);
	/* In ERR the responder's task flushes the RQ; the fixture's is idle. */
	if (sroce_qp_state(f->qp) == IB_QPS_ERR)
		while (sroce_wq_flush_rq_batch(f->qp))
			;
	return f;
}

static void uc_check(struct kunit *test, bool frags)
{
	const struct uc_case *t = test->param_value;
	struct sroce_tfix *f = uc_run(test, t, frags);
	u32 posted_left;

	uc_expect_wcs(test, f, t);
	if (t->ndata != UC_DATA_ANY)
		uc_expect_data(test, f, t);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_DROPPED_UC_MSG), t->dropped);
	/* UC answers nothing: no NAK of any kind, nothing sent */
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_SENT_PKTS), 0);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_SENT_RNR), 0);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_SENT_SEQ_NAK), 0);
	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_DUP_REQ), t->dup);
	KUNIT_EXPECT_EQ(test, sroce_qp_state(f->qp),
			t->err ? IB_QPS_ERR : IB_QPS_RTS);
	/* Receive WQEs neither completed nor flushed are still posted. */
	posted_left = t->err ? 0 : t->nrecv - t->nwc;
	KUNIT_EXPECT_EQ(test, sroce_queue_count(&f->qp->rq.queue), posted_left);
	uc_expect_no_refs(test, f);
}

static void resp_uc_request_test(struct kunit *test)
{
	uc_check(test, false);
}

/*
 * The same messages with every payload of 3 bytes or more split over two
 * page fragments and a frag list frame: the responder scatters them as
 * they lie, byte for byte as from a linear packet.
 */
static void resp_uc_frags_test(struct kunit *test)
{
	uc_check(test, true);
}

/*
 * out_of_seq_request counts PSN gaps and reorderings on the wire (the
 * rule at the top of sroce_resp_uc.c: "every PSN gap"): a packet that
 * comes right after the previous one is in sequence, even when the
 * previous one was dropped or could not be executed.
 * (Before the ePSN moved past a dropped packet, every later packet of a
 * lost message and the first of the next one counted too.)
 */
static void resp_uc_oos_test(struct kunit *test)
{
	const struct uc_case *t = test->param_value;
	struct sroce_tfix *f = uc_run(test, t, false);

	KUNIT_EXPECT_EQ(test, sroce_tfix_count(f, SROCE_CNT_OUT_OF_SEQ_REQ), t->oos);
}

static struct kunit_case sroce_resp_uc_test_cases[] = {
	KUNIT_CASE_PARAM(resp_uc_verdict_test, uc_verdict_gen_params),
	KUNIT_CASE_PARAM(resp_uc_opcode_test, uc_opcode_gen_params),
	KUNIT_CASE_PARAM(resp_uc_request_test, uc_gen_params),
	KUNIT_CASE_PARAM(resp_uc_frags_test, uc_gen_params),
	KUNIT_CASE_PARAM(resp_uc_oos_test, uc_gen_params),
	{}
};

static struct kunit_suite sroce_resp_uc_test_suite = {
	.name = "sroce_resp_uc",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_resp_uc_test_cases,
};

kunit_test_suites(&sroce_resp_uc_test_suite);
