// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the opcode table of sroce_opcode.c.
 *
 * opcode_cases[] restates, independently of the driver's table, the packet
 * layouts of IBA vol 1 chapter 9 for every RC, UC and UD opcode: the
 * opcode value, the byte offset of each extension header (0 when absent;
 * the BTH occupies bytes 0-11) and the total header length, typed in by
 * hand rather than computed.
 */

#include <kunit/test.h>

#include "test_util.h"
#include "wire/sroce_opcode.h"

enum opcode_pos { P_FIRST, P_MIDDLE, P_LAST, P_ONLY };
enum opcode_kind { K_ACK, K_SEND, K_WRITE, K_READ, K_ATOMIC };

struct opcode_case {
	u8 op;
	const char *name;
	/* offsets of the extension headers, 0 if absent */
	u8 deth, reth, atmeth, aeth, atmack, immdt, ieth;
	u8 len;			/* BTH and extension headers */
	enum opcode_pos pos;
	enum opcode_kind kind;
	bool resp;		/* sent by the responder */
	bool payload;
	bool rwqe;		/* consumes a receive WQE */
	bool se;		/* SE bit meaningful */
	bool ackreq;		/* RC request closing a message */
};

#define OP_SEND(_op, _name, _pos, ...)					\
	{ .op = _op, .name = _name, .pos = _pos, .kind = K_SEND,	\
	  .payload = true, .rwqe = true, __VA_ARGS__ }
#define OP_WRITE(_op, _name, _pos, ...)					\
	{ .op = _op, .name = _name, .pos = _pos, .kind = K_WRITE,	\
	  .payload = true, __VA_ARGS__ }

static const struct opcode_case opcode_cases[] = {
	OP_SEND(0x00, "RC_SEND_FIRST", P_FIRST, .len = 12),
	OP_SEND(0x01, "RC_SEND_MIDDLE", P_MIDDLE, .len = 12),
	OP_SEND(0x02, "RC_SEND_LAST", P_LAST, .len = 12, .se = true,
		.ackreq = true),
	OP_SEND(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", P_LAST, .immdt = 12,
		.len = 16, .se = true, .ackreq = true),
	OP_SEND(0x04, "RC_SEND_ONLY", P_ONLY, .len = 12, .se = true,
		.ackreq = true),
	OP_SEND(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", P_ONLY, .immdt = 12,
		.len = 16, .se = true, .ackreq = true),
	OP_WRITE(0x06, "RC_RDMA_WRITE_FIRST", P_FIRST, .reth = 12, .len = 28),
	OP_WRITE(0x07, "RC_RDMA_WRITE_MIDDLE", P_MIDDLE, .len = 12),
	OP_WRITE(0x08, "RC_RDMA_WRITE_LAST", P_LAST, .len = 12, .ackreq = true),
	OP_WRITE(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", P_LAST, .immdt = 12,
		 .len = 16, .rwqe = true, .se = true, .ackreq = true),
	OP_WRITE(0x0a, "RC_RDMA_WRITE_ONLY", P_ONLY, .reth = 12, .len = 28,
		 .ackreq = true),
	OP_WRITE(0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", P_ONLY, .reth = 12,
		 .immdt = 28, .len = 32, .rwqe = true, .se = true,
		 .ackreq = true),
	{ .op = 0x0c, .name = "RC_RDMA_READ_REQUEST", .reth = 12, .len = 28,
	  .pos = P_ONLY, .kind = K_READ, .ackreq = true },
	{ .op = 0x0d, .name = "RC_RDMA_READ_RESPONSE_FIRST", .aeth = 12,
	  .len = 16, .pos = P_FIRST, .kind = K_READ, .resp = true,
	  .payload = true },
	{ .op = 0x0e, .name = "RC_RDMA_READ_RESPONSE_MIDDLE", .len = 12,
	  .pos = P_MIDDLE, .kind = K_READ, .resp = true, .payload = true },
	{ .op = 0x0f, .name = "RC_RDMA_READ_RESPONSE_LAST", .aeth = 12,
	  .len = 16, .pos = P_LAST, .kind = K_READ, .resp = true,
	  .payload = true },
	{ .op = 0x10, .name = "RC_RDMA_READ_RESPONSE_ONLY", .aeth = 12,
	  .len = 16, .pos = P_ONLY, .kind = K_READ, .resp = true,
	  .payload = true },
	{ .op = 0x11, .name = "RC_ACKNOWLEDGE", .aeth = 12, .len = 16,
	  .pos = P_ONLY, .kind = K_ACK, .resp = true },
	{ .op = 0x12, .name = "RC_ATOMIC_ACKNOWLEDGE", .aeth = 12,
	  .atmack = 16, .len = 24, .pos = P_ONLY, .kind = K_ATOMIC,
	  .resp = true },
	{ .op = 0x13, .name = "RC_COMPARE_SWAP", .atmeth = 12, .len = 40,
	  .pos = P_ONLY, .kind = K_ATOMIC, .ackreq = true },
	{ .op = 0x14, .name = "RC_FETCH_ADD", .atmeth = 12, .len = 40,
	  .pos = P_ONLY, .kind = K_ATOMIC, .ackreq = true },
	OP_SEND(0x16, "RC_SEND_LAST_WITH_INVALIDATE", P_LAST, .ieth = 12,
		.len = 16, .se = true, .ackreq = true),
	OP_SEND(0x17, "RC_SEND_ONLY_WITH_INVALIDATE", P_ONLY, .ieth = 12,
		.len = 16, .se = true, .ackreq = true),

	OP_SEND(0x20, "UC_SEND_FIRST", P_FIRST, .len = 12),
	OP_SEND(0x21, "UC_SEND_MIDDLE", P_MIDDLE, .len = 12),
	OP_SEND(0x22, "UC_SEND_LAST", P_LAST, .len = 12, .se = true),
	OP_SEND(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", P_LAST, .immdt = 12,
		.len = 16, .se = true),
	OP_SEND(0x24, "UC_SEND_ONLY", P_ONLY, .len = 12, .se = true),
	OP_SEND(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", P_ONLY, .immdt = 12,
		.len = 16, .se = true),
	OP_WRITE(0x26, "UC_RDMA_WRITE_FIRST", P_FIRST, .reth = 12, .len = 28),
	OP_WRITE(0x27, "UC_RDMA_WRITE_MIDDLE", P_MIDDLE, .len = 12),
	OP_WRITE(0x28, "UC_RDMA_WRITE_LAST", P_LAST, .len = 12),
	OP_WRITE(0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", P_LAST, .immdt = 12,
		 .len = 16, .rwqe = true, .se = true),
	OP_WRITE(0x2a, "UC_RDMA_WRITE_ONLY", P_ONLY, .reth = 12, .len = 28),
	OP_WRITE(0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", P_ONLY, .reth = 12,
		 .immdt = 28, .len = 32, .rwqe = true, .se = true),

	OP_SEND(0x64, "UD_SEND_ONLY", P_ONLY, .deth = 12, .len = 20,
		.se = true),
	OP_SEND(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", P_ONLY, .deth = 12,
		.immdt = 20, .len = 24, .se = true),
};

static void opcode_desc(const struct opcode_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%#04x %s", t->op, t->name);
}

KUNIT_ARRAY_PARAM(opcode, opcode_cases, opcode_desc);

static void expect_hdr(struct kunit *test,
		       const struct sroce_opcode_info *info,
		       enum sroce_hdr_id id, const char *name, u8 offset)
{
	KUNIT_EXPECT_EQ_MSG(test, sroce_opcode_has_hdr(info, id), !!offset,
			    "%s presence", name);
	if (offset)
		KUNIT_EXPECT_EQ_MSG(test, sroce_opcode_hdr_offset(info, id),
				    offset, "%s offset", name);
}

static void opcode_layout_test(struct kunit *test)
{
	const struct opcode_case *t = test->param_value;
	const struct sroce_opcode_info *info = sroce_opcode_lookup(t->op);

	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_EXPECT_EQ(test, info->opcode, t->op);
	KUNIT_EXPECT_STREQ(test, info->name, t->name);

	expect_hdr(test, info, SROCE_HDR_DETH, "DETH", t->deth);
	expect_hdr(test, info, SROCE_HDR_RETH, "RETH", t->reth);
	expect_hdr(test, info, SROCE_HDR_ATMETH, "AtomicETH", t->atmeth);
	expect_hdr(test, info, SROCE_HDR_AETH, "AETH", t->aeth);
	expect_hdr(test, info, SROCE_HDR_ATMACK, "AtomicAckETH", t->atmack);
	expect_hdr(test, info, SROCE_HDR_IMMDT, "ImmDt", t->immdt);
	expect_hdr(test, info, SROCE_HDR_IETH, "IETH", t->ieth);
	KUNIT_EXPECT_EQ(test, sroce_opcode_hdr_len(info), t->len);
	/* The payload starts where an absent trailing header would. */
	KUNIT_EXPECT_EQ(test, sroce_opcode_hdr_offset(info, SROCE_HDR_NR),
			t->len);
}

static const u32 opcode_pos_flags[] = {
	[P_FIRST] = SROCE_OPF_FIRST,
	[P_MIDDLE] = SROCE_OPF_MIDDLE,
	[P_LAST] = SROCE_OPF_LAST,
	[P_ONLY] = SROCE_OPF_FIRST | SROCE_OPF_LAST,
};

static const u32 opcode_kind_flags[] = {
	[K_ACK] = 0,
	[K_SEND] = SROCE_OPF_SEND,
	[K_WRITE] = SROCE_OPF_WRITE,
	[K_READ] = SROCE_OPF_READ,
	[K_ATOMIC] = SROCE_OPF_ATOMIC,
};

static void opcode_flags_test(struct kunit *test)
{
	const struct opcode_case *t = test->param_value;
	const struct sroce_opcode_info *info = sroce_opcode_lookup(t->op);
	u32 f;

	KUNIT_ASSERT_NOT_NULL(test, info);
	f = info->flags;
	KUNIT_EXPECT_EQ(test, f & (SROCE_OPF_FIRST | SROCE_OPF_MIDDLE |
				   SROCE_OPF_LAST), opcode_pos_flags[t->pos]);
	KUNIT_EXPECT_EQ(test, sroce_opcode_starts_msg(info),
			t->pos == P_FIRST || t->pos == P_ONLY);
	KUNIT_EXPECT_EQ(test, sroce_opcode_ends_msg(info),
			t->pos == P_LAST || t->pos == P_ONLY);
	KUNIT_EXPECT_EQ(test, f & (SROCE_OPF_SEND | SROCE_OPF_WRITE |
				   SROCE_OPF_READ | SROCE_OPF_ATOMIC),
			opcode_kind_flags[t->kind]);
	KUNIT_EXPECT_EQ(test, !!(f & SROCE_OPF_RESP), t->resp);
	KUNIT_EXPECT_EQ(test, !!(f & SROCE_OPF_REQ), !t->resp);
	KUNIT_EXPECT_EQ(test, !!(f & SROCE_OPF_PAYLOAD), t->payload);
	KUNIT_EXPECT_EQ(test, !!(f & SROCE_OPF_RWQE), t->rwqe);
	KUNIT_EXPECT_EQ(test, !!(f & SROCE_OPF_SOLICIT), t->se);
	KUNIT_EXPECT_EQ(test, sroce_opcode_wants_ackreq(info), t->ackreq);
	KUNIT_EXPECT_EQ(test, sroce_opcode_has_imm(info), !!t->immdt);
	KUNIT_EXPECT_EQ(test, sroce_opcode_has_inv(info), !!t->ieth);
	KUNIT_EXPECT_EQ(test, sroce_opcode_transport(info), t->op & 0xe0);
}

/* Exactly the opcodes of opcode_cases[] are known, all 256 checked. */
static void opcode_lookup_all_test(struct kunit *test)
{
	const struct sroce_opcode_info *info;
	unsigned int op, i, known = 0;
	bool listed;

	for (op = 0; op <= U8_MAX; op++) {
		listed = false;
		for (i = 0; i < ARRAY_SIZE(opcode_cases); i++)
			listed |= opcode_cases[i].op == op;
		info = sroce_opcode_lookup(op);
		KUNIT_EXPECT_EQ_MSG(test, !!info, listed, "opcode %#x", op);
		if (info) {
			KUNIT_EXPECT_EQ(test, info->opcode, op);
			known++;
		}
	}
	KUNIT_EXPECT_EQ(test, known, ARRAY_SIZE(opcode_cases));
}

struct opcode_unknown_case {
	u8 op;
	const char *why;
};

static const struct opcode_unknown_case opcode_unknown_cases[] = {
	{ 0x15, "RC reserved" },
	{ 0x18, "RC reserved" },
	{ 0x1c, "RC FLUSH, not in this IBA version" },
	{ 0x1f, "RC reserved" },
	{ 0x2c, "UC has no RDMA READ" },
	{ 0x31, "UC has no ACKNOWLEDGE" },
	{ 0x33, "UC has no atomics" },
	{ 0x36, "UC has no SEND with invalidate" },
	{ 0x40, "RD SEND_FIRST" },
	{ 0x4c, "RD RDMA_READ_REQUEST" },
	{ 0x60, "UD has no SEND_FIRST" },
	{ 0x66, "UD has no RDMA WRITE" },
	{ 0x80, "CNP transport" },
	{ 0x81, "RoCEv2 CNP" },
	{ 0xa0, "reserved transport" },
	{ 0xe0, "manufacturer specific" },
	{ 0xff, "manufacturer specific" },
};

static void opcode_unknown_desc(const struct opcode_unknown_case *t,
				char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%#04x %s", t->op, t->why);
}

KUNIT_ARRAY_PARAM(opcode_unknown, opcode_unknown_cases, opcode_unknown_desc);

static void opcode_unknown_test(struct kunit *test)
{
	const struct opcode_unknown_case *t = test->param_value;

	KUNIT_EXPECT_NULL(test, sroce_opcode_lookup(t->op));
}

#define NONE	-1	/* no previous packet: at a message boundary */

struct opcode_follow_case {
	int prev;
	int next;
	bool ok;
};

static const struct opcode_follow_case opcode_follow_cases[] = {
	{ NONE, IB_OPCODE_RC_SEND_FIRST, true },
	{ NONE, IB_OPCODE_RC_SEND_ONLY, true },
	{ NONE, IB_OPCODE_RC_SEND_MIDDLE, false },
	{ NONE, IB_OPCODE_RC_RDMA_WRITE_LAST, false },
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_MIDDLE, true },
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_LAST, true },
	{ IB_OPCODE_RC_SEND_MIDDLE, IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
	  true },
	{ IB_OPCODE_RC_SEND_MIDDLE, IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE,
	  true },
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_FIRST, false },
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_ONLY, false },
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_RDMA_WRITE_MIDDLE, false },
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_UC_SEND_LAST, false },
	{ IB_OPCODE_RC_SEND_LAST, IB_OPCODE_RC_RDMA_WRITE_FIRST, true },
	{ IB_OPCODE_RC_SEND_LAST, IB_OPCODE_RC_SEND_MIDDLE, false },
	{ IB_OPCODE_RC_SEND_ONLY, IB_OPCODE_RC_RDMA_READ_REQUEST, true },
	{ IB_OPCODE_RC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_MIDDLE, true },
	{ IB_OPCODE_RC_RDMA_WRITE_MIDDLE,
	  IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, true },
	{ IB_OPCODE_RC_RDMA_WRITE_MIDDLE, IB_OPCODE_RC_SEND_LAST, false },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
	  IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, true },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
	  IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, true },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, IB_OPCODE_RC_ACKNOWLEDGE,
	  false },
	{ IB_OPCODE_RC_ACKNOWLEDGE, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
	  true },
	{ IB_OPCODE_UC_RDMA_WRITE_FIRST, IB_OPCODE_UC_RDMA_WRITE_LAST, true },
	{ IB_OPCODE_UC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_LAST, false },
	{ IB_OPCODE_UD_SEND_ONLY, IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, true },
};

static void opcode_follow_desc(const struct opcode_follow_case *t,
			       char *desc)
{
	const struct sroce_opcode_info *prev = NULL, *next;

	if (t->prev != NONE)
		prev = sroce_opcode_lookup(t->prev);
	next = sroce_opcode_lookup(t->next);
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s then %s",
		 prev ? prev->name : "boundary", next ? next->name : "?");
}

KUNIT_ARRAY_PARAM(opcode_follow, opcode_follow_cases, opcode_follow_desc);

static void opcode_follow_test(struct kunit *test)
{
	const struct opcode_follow_case *t = test->param_value;
	const struct sroce_opcode_info *prev = NULL, *next;

	if (t->prev != NONE) {
		prev = sroce_opcode_lookup(t->prev);
		KUNIT_ASSERT_NOT_NULL(test, prev);
	}
	next = sroce_opcode_lookup(t->next);
	KUNIT_ASSERT_NOT_NULL(test, next);
	KUNIT_EXPECT_EQ(test, sroce_opcode_may_follow(prev, next), t->ok);
}

static struct kunit_case sroce_opcode_test_cases[] = {
	KUNIT_CASE_PARAM(opcode_layout_test, opcode_gen_params),
	KUNIT_CASE_PARAM(opcode_flags_test, opcode_gen_params),
	KUNIT_CASE(opcode_lookup_all_test),
	KUNIT_CASE_PARAM(opcode_unknown_test, opcode_unknown_gen_params),
	KUNIT_CASE_PARAM(opcode_follow_test, opcode_follow_gen_params),
	{}
};

static struct kunit_suite sroce_opcode_test_suite = {
	.name = "sroce_opcode",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_opcode_test_cases,
};

kunit_test_suites(&sroce_opcode_test_suite);
