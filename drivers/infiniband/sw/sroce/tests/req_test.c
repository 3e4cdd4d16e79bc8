// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the pure rules of the RC requester and completer:
 * packetisation of a message, AckReq placement, the 24-bit PSN
 * arithmetic of ACK coverage and resume points, the local ACK timeout,
 * the RNR NAK timer table and the implied-NAK rule; and, on a bare QP,
 * how often the completer retries on implied NAKs while a retransmission
 * recovers.
 *
 * Expectations are written from IBA vol 1: opcode values from table 35
 * (RC opcodes), the timeout formula of 9.7.6.1.3, the RNR timer field of
 * table 45 in the spec's own unit (milliseconds, here in hundredths),
 * and the in-order response rule of 9.5 / 9.7.5.1.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/skbuff.h>

#include "core/sroce_stats.h"
#include "test_util.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_comp_rules.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "wire/sroce_pkt.h"
#include "wire/sroce_psn.h"

/* IBA table 35: RC opcodes (transport 000b). */
enum {
	OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE = 0x01, OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03, OP_SEND_ONLY = 0x04, OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06, OP_WRITE_MIDDLE = 0x07, OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09, OP_WRITE_ONLY = 0x0a,
	OP_WRITE_ONLY_IMM = 0x0b, OP_READ_REQ = 0x0c, OP_CMP_SWAP = 0x13,
	OP_FETCH_ADD = 0x14, OP_SEND_LAST_INV = 0x16, OP_SEND_ONLY_INV = 0x17,
	OP_READ_RSP_ONLY = 0x10,
};

/* ---- packetisation ---------------------------------------------------- */

struct pkt_case {
	const char *name;
	u32 wr_opcode;
	u32 length;
	u32 mtu;
	u32 npkts;	/* PSNs the message uses */
	u8 op_first;	/* opcode of packet 0 when there are several */
	u8 op_middle;	/* of packets 1 .. n-2 */
	u8 op_last;	/* of the last (or only) packet */
	u32 last_paylen;	/* payload of the last packet */
	u32 dmalen;	/* RETH length of packet 0 (WRITE) or the request (READ) */
};

static const struct pkt_case pkt_cases[] = {
	{ "SEND 0 B", IB_WR_SEND, 0, 256, 1, 0, 0, OP_SEND_ONLY, 0, 0 },
	{ "SEND 1 B mtu 1024", IB_WR_SEND, 1, 1024, 1, 0, 0, OP_SEND_ONLY, 1, 0 },
	{ "SEND exact fit mtu 256", IB_WR_SEND, 256, 256, 1, 0, 0,
	  OP_SEND_ONLY, 256, 0 },
	{ "SEND mtu+1", IB_WR_SEND, 257, 256, 2, OP_SEND_FIRST, 0,
	  OP_SEND_LAST, 1, 0 },
	{ "SEND 4 x mtu 256", IB_WR_SEND, 1024, 256, 4, OP_SEND_FIRST,
	  OP_SEND_MIDDLE, OP_SEND_LAST, 256, 0 },
	{ "SEND 1 MiB mtu 4096", IB_WR_SEND, 1 << 20, 4096, 256, OP_SEND_FIRST,
	  OP_SEND_MIDDLE, OP_SEND_LAST, 4096, 0 },
	{ "SEND 7680 B mtu 4096 (seed)", IB_WR_SEND, 7680, 4096, 2,
	  OP_SEND_FIRST, 0, OP_SEND_LAST, 3584, 0 },
	{ "SEND_IMM only", IB_WR_SEND_WITH_IMM, 4096, 4096, 1, 0, 0,
	  OP_SEND_ONLY_IMM, 4096, 0 },
	{ "SEND_IMM 3 pkts mtu 2048", IB_WR_SEND_WITH_IMM, 5000, 2048, 3,
	  OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST_IMM, 904, 0 },
	{ "SEND_INV only", IB_WR_SEND_WITH_INV, 10, 512, 1, 0, 0,
	  OP_SEND_ONLY_INV, 10, 0 },
	{ "SEND_INV 3 pkts mtu 1024", IB_WR_SEND_WITH_INV, 3000, 1024, 3,
	  OP_SEND_FIRST, OP_SEND_MIDDLE, OP_SEND_LAST_INV, 952, 0 },
	{ "WRITE 0 B", IB_WR_RDMA_WRITE, 0, 1024, 1, 0, 0, OP_WRITE_ONLY, 0, 0 },
	{ "WRITE 7680 B mtu 4096", IB_WR_RDMA_WRITE, 7680, 4096, 2,
	  OP_WRITE_FIRST, 0, OP_WRITE_LAST, 3584, 7680 },
	{ "WRITE 2 MiB mtu 512", IB_WR_RDMA_WRITE, 2 << 20, 512, 4096,
	  OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, 512, 2 << 20 },
	{ "WRITE_IMM only", IB_WR_RDMA_WRITE_WITH_IMM, 100, 256, 1, 0, 0,
	  OP_WRITE_ONLY_IMM, 100, 100 },
	{ "WRITE_IMM 3 pkts mtu 256", IB_WR_RDMA_WRITE_WITH_IMM, 600, 256, 3,
	  OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST_IMM, 88, 600 },
	{ "READ 10000 B mtu 4096", IB_WR_RDMA_READ, 10000, 4096, 3, 0, 0,
	  OP_READ_REQ, 0, 10000 },
	{ "READ 0 B", IB_WR_RDMA_READ, 0, 4096, 1, 0, 0, OP_READ_REQ, 0, 0 },
	{ "READ 1 MiB mtu 1024", IB_WR_RDMA_READ, 1 << 20, 1024, 1024, 0, 0,
	  OP_READ_REQ, 0, 1 << 20 },
	{ "CMP_SWAP", IB_WR_ATOMIC_CMP_AND_SWP, 8, 1024, 1, 0, 0, OP_CMP_SWAP,
	  0, 0 },
	{ "FETCH_ADD", IB_WR_ATOMIC_FETCH_AND_ADD, 8, 256, 1, 0, 0,
	  OP_FETCH_ADD, 0, 0 },
};

static void pkt_desc(const struct pkt_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pkt, pkt_cases, pkt_desc);

/* SEND and WRITE: one request packet per PSN. */
static void pkt_data_test(struct kunit *test, const struct pkt_case *t)
{
	struct sroce_req_pkt pkt;
	u32 i, total = 0;

	for (i = 0; i < t->npkts; i++) {
		KUNIT_ASSERT_TRUE(test, sroce_req_pkt_shape(t->wr_opcode,
							    t->length, t->mtu,
							    i, &pkt));
		KUNIT_EXPECT_EQ(test, pkt.offset, total);
		KUNIT_EXPECT_EQ(test, pkt.first, i == 0);
		KUNIT_EXPECT_EQ(test, pkt.last, i + 1 == t->npkts);
		if (i + 1 == t->npkts) {
			KUNIT_EXPECT_EQ(test, pkt.opcode, t->op_last);
			KUNIT_EXPECT_EQ(test, pkt.paylen, t->last_paylen);
		} else {
			KUNIT_EXPECT_EQ(test, pkt.opcode,
					i ? t->op_middle : t->op_first);
			KUNIT_EXPECT_EQ(test, pkt.paylen, t->mtu);
		}
		/* The RETH rides on the first packet of a WRITE only. */
		KUNIT_EXPECT_EQ(test, pkt.dmalen, i ? 0 : t->dmalen);
		total += pkt.paylen;
	}
	KUNIT_EXPECT_EQ(test, total, t->length);
}

static void pkt_test(struct kunit *test)
{
	const struct pkt_case *t = test->param_value;
	struct sroce_req_pkt pkt;

	KUNIT_EXPECT_EQ(test, sroce_req_npkts(t->wr_opcode, t->length, t->mtu),
			t->npkts);
	/* Nothing past the message. */
	KUNIT_EXPECT_FALSE(test, sroce_req_pkt_shape(t->wr_opcode, t->length,
						     t->mtu, t->npkts, &pkt));
	if (t->wr_opcode != IB_WR_RDMA_READ &&
	    t->wr_opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	    t->wr_opcode != IB_WR_ATOMIC_FETCH_AND_ADD) {
		pkt_data_test(test, t);
		return;
	}
	/* READ and atomics: one request packet, no payload. */
	KUNIT_ASSERT_TRUE(test, sroce_req_pkt_shape(t->wr_opcode, t->length,
						    t->mtu, 0, &pkt));
	KUNIT_EXPECT_EQ(test, pkt.opcode, t->op_last);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0);
	KUNIT_EXPECT_EQ(test, pkt.dmalen, t->dmalen);
	KUNIT_EXPECT_TRUE(test, pkt.first && pkt.last);
}

/* A READ resumed after k responses asks for the rest only. */
struct read_resume_case {
	const char *name;
	u32 length;
	u32 mtu;
	u32 index;
	u32 offset;
	u32 dmalen;
};

static const struct read_resume_case read_resume_cases[] = {
	{ "from the start", 10000, 4096, 0, 0, 10000 },
	{ "after one response", 10000, 4096, 1, 4096, 5904 },
	{ "only the last short one", 10000, 4096, 2, 8192, 1808 },
	{ "exact multiple, last one", 4096, 1024, 3, 3072, 1024 },
	{ "mtu 256, half way", 2048, 256, 4, 1024, 1024 },
};

static void read_resume_desc(const struct read_resume_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(read_resume, read_resume_cases, read_resume_desc);

static void read_resume_test(struct kunit *test)
{
	const struct read_resume_case *t = test->param_value;
	struct sroce_req_pkt pkt;

	KUNIT_ASSERT_TRUE(test, sroce_req_pkt_shape(IB_WR_RDMA_READ, t->length,
						    t->mtu, t->index, &pkt));
	KUNIT_EXPECT_EQ(test, pkt.opcode, OP_READ_REQ);
	KUNIT_EXPECT_EQ(test, pkt.offset, t->offset);
	KUNIT_EXPECT_EQ(test, pkt.dmalen, t->dmalen);
	/* The PSNs it still uses end where the whole READ's did. */
	KUNIT_EXPECT_EQ(test, t->index + sroce_req_npkts(IB_WR_RDMA_READ,
							 t->dmalen, t->mtu),
			sroce_req_npkts(IB_WR_RDMA_READ, t->length, t->mtu));
}

/* ---- AckReq ------------------------------------------------------------ */

struct ackreq_case {
	const char *name;
	u32 npkts;
	u32 nack;
	u32 at[5];	/* packet indices that ask for an ACK */
};

static const struct ackreq_case ackreq_cases[] = {
	{ "one packet", 1, 1, { 0 } },
	{ "31 packets", 31, 1, { 30 } },
	{ "32 packets", 32, 1, { 31 } },
	{ "33 packets", 33, 2, { 31, 32 } },
	{ "64 packets", 64, 2, { 31, 63 } },
	{ "100 packets", 100, 4, { 31, 63, 95, 99 } },
};

static void ackreq_desc(const struct ackreq_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ackreq, ackreq_cases, ackreq_desc);

static void ackreq_test(struct kunit *test)
{
	const struct ackreq_case *t = test->param_value;
	u32 i, since = 0, n = 0;
	bool ack;

	for (i = 0; i < t->npkts; i++) {
		ack = sroce_req_want_ackreq(i + 1 == t->npkts, since);
		since = ack ? 0 : since + 1;
		if (!ack)
			continue;
		KUNIT_ASSERT_LT(test, n, t->nack);
		KUNIT_EXPECT_EQ(test, i, t->at[n]);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, t->nack);
}

/* ---- PSN arithmetic of the completer ----------------------------------- */

struct cover_case {
	const char *name;
	u32 first;	/* a message's first PSN */
	u32 npkts;
	u32 ack;
	bool covers;
	bool resume_inside;	/* ack + 1 lies inside the message */
};

static const struct cover_case cover_cases[] = {
	{ "ACK of the last PSN", 100, 4, 103, true, false },
	{ "ACK one short", 100, 4, 102, false, true },
	{ "ACK before the message", 100, 4, 50, false, false },
	{ "ACK well after", 100, 4, 1000, true, false },
	{ "range across the wrap, ACK at its end", 0xfffffe, 4, 0x000001,
	  true, false },
	{ "range across the wrap, ACK at 0", 0xfffffe, 4, 0x000000, false,
	  true },
	{ "range across the wrap, ACK at 0xffffff", 0xfffffe, 4, 0xffffff,
	  false, true },
	{ "ACK after the wrap, range before it", 0xfffff0, 2, 0x000003, true,
	  false },
	{ "ACK before the wrap, range after it", 0x000002, 2, 0xfffffd,
	  false, false },
};

static void cover_desc(const struct cover_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cover, cover_cases, cover_desc);

static void cover_test(struct kunit *test)
{
	const struct cover_case *t = test->param_value;
	u32 last = sroce_psn_add(t->first, t->npkts - 1);
	u32 una = sroce_psn_next(t->ack);

	KUNIT_EXPECT_EQ(test, sroce_comp_ack_covers(t->ack, last), t->covers);
	/* Resume from the first unacknowledged PSN if it is the message's. */
	KUNIT_EXPECT_EQ(test, sroce_req_resume_psn(una, t->first, last),
			t->resume_inside ? una : t->first);
}

/* A NAK's completion status; a reserved code is a remote operation error. */
static void nak_status_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_comp_nak_status(SROCE_NAK_INVALID_REQ),
			IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, sroce_comp_nak_status(SROCE_NAK_REM_ACCESS_ERR),
			IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, sroce_comp_nak_status(SROCE_NAK_INVALID_RD_REQ),
			IB_WC_REM_INV_RD_REQ_ERR);
	KUNIT_EXPECT_EQ(test, sroce_comp_nak_status(SROCE_NAK_REM_OP_ERR),
			IB_WC_REM_OP_ERR);
	KUNIT_EXPECT_EQ(test, sroce_comp_nak_status(0x1f), IB_WC_REM_OP_ERR);
}

/* ---- timers -------------------------------------------------------------- */

struct timeout_case {
	u8 timeout;
	u64 ns;
};

/* 4.096 us * 2^timeout (IBA 9.7.6.1.3); 0 is infinite. */
static const struct timeout_case timeout_cases[] = {
	{ 0, 0 },
	{ 1, 8192 },
	{ 2, 16384 },
	{ 8, 1048576 },
	{ 14, 67108864 },
	{ 18, 1073741824 },
	{ 31, 8796093022208ULL },
};

static void timeout_desc(const struct timeout_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "timeout %u", t->timeout);
}

KUNIT_ARRAY_PARAM(timeout, timeout_cases, timeout_desc);

static void timeout_test(struct kunit *test)
{
	const struct timeout_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(t->timeout), t->ns);
}

/* IBA table 45, in hundredths of a millisecond, code 0 .. 31. */
static const u32 rnr_table_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12,
	16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072,
	4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

static void rnr_table_test(struct kunit *test)
{
	u32 code;

	for (code = 0; code < 32; code++) {
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_usecs(code),
				    (unsigned long)rnr_table_10us[code] * 10,
				    "RNR timer code %u", code);
		/* Only the 5-bit field counts. */
		KUNIT_EXPECT_EQ(test, sroce_rnr_timer_usecs(code | 0xe0),
				sroce_rnr_timer_usecs(code));
	}
	/* The table grows from code 1 on; code 0 is the longest. */
	for (code = 2; code < 32; code++)
		KUNIT_EXPECT_GT(test, sroce_rnr_timer_usecs(code),
				sroce_rnr_timer_usecs(code - 1));
	KUNIT_EXPECT_GT(test, sroce_rnr_timer_usecs(0),
			sroce_rnr_timer_usecs(31));
}

/* ---- implied NAK ---------------------------------------------------------- */

struct judge_case {
	const char *name;
	bool read;
	u32 first;
	u32 last;
	u32 next;
	enum sroce_rsp_kind kind;
	u32 psn;
	enum sroce_rsp_verdict verdict;
};

static const struct judge_case judge_cases[] = {
	{ "READ: first response", true, 100, 103, 100, SROCE_RSP_READ, 100,
	  SROCE_RSP_ACCEPT },
	{ "READ: a gap", true, 100, 103, 100, SROCE_RSP_READ, 101,
	  SROCE_RSP_IMPLIED_NAK },
	{ "READ: an older packet", true, 100, 103, 100, SROCE_RSP_READ, 99,
	  SROCE_RSP_STALE },
	{ "READ: response of a later READ", true, 100, 103, 100, SROCE_RSP_READ, 104,
	  SROCE_RSP_IMPLIED_NAK },
	{ "READ: ACK inside its PSNs", true, 100, 103, 100, SROCE_RSP_ACK, 103,
	  SROCE_RSP_STALE },
	{ "READ: ACK of a later request", true, 100, 103, 100, SROCE_RSP_ACK, 104,
	  SROCE_RSP_IMPLIED_NAK },
	{ "READ: ACK before it", true, 100, 103, 100, SROCE_RSP_ACK, 99,
	  SROCE_RSP_STALE },
	{ "READ: atomic ACK in its PSNs", true, 100, 103, 100, SROCE_RSP_ATOMIC, 100,
	  SROCE_RSP_STALE },
	{ "READ partly answered: duplicate", true, 100, 103, 102, SROCE_RSP_READ, 101,
	  SROCE_RSP_STALE },
	{ "READ partly answered: next", true, 100, 103, 102, SROCE_RSP_READ, 102,
	  SROCE_RSP_ACCEPT },
	{ "READ partly answered: gap", true, 100, 103, 102, SROCE_RSP_READ, 103,
	  SROCE_RSP_IMPLIED_NAK },
	{ "atomic: its ACK", false, 200, 200, 200, SROCE_RSP_ATOMIC, 200,
	  SROCE_RSP_ACCEPT },
	{ "atomic: older atomic ACK", false, 200, 200, 200, SROCE_RSP_ATOMIC, 199,
	  SROCE_RSP_STALE },
	{ "atomic: later atomic ACK", false, 200, 200, 200, SROCE_RSP_ATOMIC, 201,
	  SROCE_RSP_IMPLIED_NAK },
	{ "atomic: ACK of its PSN", false, 200, 200, 200, SROCE_RSP_ACK, 200,
	  SROCE_RSP_STALE },
	{ "atomic: ACK of a later request", false, 200, 200, 200, SROCE_RSP_ACK, 201,
	  SROCE_RSP_IMPLIED_NAK },
	{ "atomic: READ response of its PSN", false, 200, 200, 200, SROCE_RSP_READ,
	  200, SROCE_RSP_STALE },
	{ "wrap: next response", true, 0xfffffe, 0x000001, 0xffffff,
	  SROCE_RSP_READ, 0xffffff, SROCE_RSP_ACCEPT },
	{ "wrap: gap after the wrap", true, 0xfffffe, 0x000001, 0xffffff,
	  SROCE_RSP_READ, 0x000000, SROCE_RSP_IMPLIED_NAK },
	{ "wrap: duplicate before the wrap", true, 0xfffffe, 0x000001,
	  0xffffff, SROCE_RSP_READ, 0xfffffe, SROCE_RSP_STALE },
	{ "wrap: ACK at its last PSN", true, 0xfffffe, 0x000001, 0xffffff,
	  SROCE_RSP_ACK, 0x000001, SROCE_RSP_STALE },
	{ "wrap: ACK past it", true, 0xfffffe, 0x000001, 0xffffff,
	  SROCE_RSP_ACK, 0x000002, SROCE_RSP_IMPLIED_NAK },
};

static void judge_desc(const struct judge_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(judge, judge_cases, judge_desc);

static void judge_test(struct kunit *test)
{
	const struct judge_case *t = test->param_value;
	struct sroce_rsp_expect e = {
		.read = t->read,
		.first_psn = t->first,
		.last_psn = t->last,
		.next_psn = t->next,
	};

	KUNIT_EXPECT_EQ(test, sroce_comp_judge(&e, t->kind, t->psn), t->verdict);
}

/* ---- implied NAKs while a retransmission recovers ------------------------- */

#define RECOVER_SQ_PSN	100

enum recover_op {
	RECOVER_POST,		/* the requester sends a new 0-byte READ */
	RECOVER_RESPOND,	/* the READ response of a PSN arrives */
};

/**
 * struct recover_step - one event, and the completer's state after it
 * @what: description
 * @op: what happens
 * @psn: the PSN posted (must be the next one) or answered
 * @retries: completer_retry_err so far
 * @rewind: this step asked the requester to go back ...
 * @rewind_psn: ... to this PSN
 * @done: READs completed so far
 */
struct recover_step {
	const char *what;
	enum recover_op op;
	u32 psn;
	u64 retries;
	bool rewind;
	u32 rewind_psn;
	u32 done;
};

/*
 * 0-byte READs use one PSN each, so a response past a gap is simply the
 * response of a later READ (IBA 9.7.5.1.4: an implied NAK). After the
 * retry at step 3 the requester had sent up to 101 (recover PSN 102):
 * gaps seen before the oldest unanswered PSN reaches 102 are taken for
 * reordering or copies from before the go-back, and do not retry again.
 */
static const struct recover_step recover_steps[] = {
	{ "READ A at 100", RECOVER_POST, 100, 0, false, 0, 0 },
	{ "READ B at 101", RECOVER_POST, 101, 0, false, 0, 0 },
	{ "B answered, A's response lost: retry from 100", RECOVER_RESPOND,
	  101, 1, true, 100, 0 },
	{ "B answered again, no progress: no second retry", RECOVER_RESPOND,
	  101, 1, false, 0, 0 },
	{ "A answered: A done", RECOVER_RESPOND, 100, 1, false, 0, 1 },
	{ "READ C at 102", RECOVER_POST, 102, 1, false, 0, 1 },
	{ "C answered, B's missing, oldest 101 < 102: no retry",
	  RECOVER_RESPOND, 102, 1, false, 0, 1 },
	{ "and again: still no retry", RECOVER_RESPOND, 102, 1, false, 0, 1 },
	{ "B answered: B done, oldest reaches 102", RECOVER_RESPOND, 101, 1,
	  false, 0, 2 },
	{ "READ D at 103", RECOVER_POST, 103, 1, false, 0, 2 },
	{ "D answered, C's missing, oldest at 102: retry from 102",
	  RECOVER_RESPOND, 103, 2, true, 102, 2 },
	{ "C answered: C done", RECOVER_RESPOND, 102, 2, false, 0, 3 },
	{ "D answered: D done", RECOVER_RESPOND, 103, 2, false, 0, 4 },
};

/* The requester starts a 0-byte, unsignaled READ at @psn. */
static void recover_post(struct kunit *test, struct sroce_qp *qp, u32 psn)
{
	struct sroce_send_ctx *ctx;
	unsigned long flags;

	KUNIT_ASSERT_EQ(test, psn, qp->req.psn);
	spin_lock_irqsave(&qp->sq.lock, flags);
	ctx = &qp->req.ctx[qp->sq.queue.prod];
	memset(ctx, 0, sizeof(*ctx));
	ctx->wqe.opcode = IB_WR_RDMA_READ;
	ctx->first_psn = psn;
	ctx->last_psn = psn;
	ctx->mtu = 1024;
	qp->sq.queue.prod = sroce_ring_next(qp->sq.queue.prod,
					    qp->sq.queue.index_mask);
	qp->sq.head = qp->sq.queue.prod;
	qp->req.rd_atomic++;
	qp->req.psn = sroce_psn_next(psn);
	WRITE_ONCE(qp->req.sent_psn, qp->req.psn);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* An empty READ RESPONSE ONLY of @psn reaches the completer. */
static void recover_respond(struct kunit *test, struct sroce_qp *qp, u32 psn)
{
	struct sk_buff *skb = sroce_test_parsed_skb(test, OP_READ_RSP_ONLY, psn);

	skb_queue_tail(&qp->comp.rxq, skb);
	/* Idle, enabled: it runs here until the queue is empty. */
	sroce_task_run(&qp->comp.task);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&qp->comp.rxq), 0);
}

static void comp_recover_test(struct kunit *test)
{
	const struct recover_step *s;
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	bool rewind;
	u32 i;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, RECOVER_SQ_PSN, 7);

	for (i = 0; i < ARRAY_SIZE(recover_steps); i++) {
		s = &recover_steps[i];
		if (s->op == RECOVER_POST)
			recover_post(test, qp, s->psn);
		else
			recover_respond(test, qp, s->psn);
		/* The requester takes the rewind, as its task would. */
		rewind = test_and_clear_bit(SROCE_REQ_REWIND, &qp->req.flags);
		KUNIT_EXPECT_EQ_MSG(test, rewind, s->rewind, "step %u: %s", i,
				    s->what);
		if (rewind && s->rewind)
			KUNIT_EXPECT_EQ_MSG(test, qp->req.rewind_psn,
					    s->rewind_psn, "step %u: %s", i,
					    s->what);
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_stats_read(t.sdev,
						     SROCE_CNT_COMPLETER_RETRY),
				    s->retries, "step %u: %s", i, s->what);
		KUNIT_EXPECT_EQ_MSG(test, qp->sq.queue.cons,
				    s->done & qp->sq.queue.index_mask,
				    "step %u: %s", i, s->what);
	}
	/* Everything answered; nothing failed or ran out of retries. */
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, qp->sq.queue.prod);
	KUNIT_EXPECT_EQ(test, qp->req.rd_atomic, 0);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_RETRY_EXCEEDED),
			0);
	KUNIT_EXPECT_EQ(test, qp->comp.retry_left, 7);
}

static void recover_expect(struct kunit *test, struct sroce_qp *qp,
			   struct sroce_test_dev *t, u64 retries, bool rewind,
			   u32 rewind_psn)
{
	bool asked = test_and_clear_bit(SROCE_REQ_REWIND, &qp->req.flags);

	KUNIT_EXPECT_EQ(test, asked, rewind);
	if (asked && rewind)
		KUNIT_EXPECT_EQ(test, qp->req.rewind_psn, rewind_psn);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t->sdev,
					       SROCE_CNT_COMPLETER_RETRY),
			retries);
}

/*
 * A recovery that ended long ago does not hold back a retry: 2^23 + 1
 * PSNs later (32 GiB at MTU 4096), a PSN is "before" the old recover PSN
 * again in 24-bit serial order.
 */
static void comp_recover_stale_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	u32 x;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, RECOVER_SQ_PSN, 7);

	recover_post(test, qp, 100);
	recover_post(test, qp, 101);
	recover_respond(test, qp, 101);
	recover_expect(test, qp, &t, 1, true, 100);
	recover_respond(test, qp, 100);
	recover_respond(test, qp, 101);
	KUNIT_ASSERT_EQ(test, qp->sq.queue.cons, qp->sq.queue.prod);

	/* Traffic of 2^23 + 1 PSNs, all acknowledged without a retry. */
	qp->req.psn = sroce_psn_add(102, 0x800001);
	x = qp->req.psn;
	recover_post(test, qp, x);
	recover_post(test, qp, sroce_psn_next(x));
	recover_respond(test, qp, sroce_psn_next(x));
	recover_expect(test, qp, &t, 2, true, x);
}

/* The requester goes back: its SQ head to the oldest WQE, as a rewind. */
static void recover_rewound(struct sroce_qp *qp, bool rewound)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq.head = rewound ? qp->sq.queue.cons : qp->sq.queue.prod;
	if (rewound)
		qp->req.rd_atomic--;
	else
		qp->req.rd_atomic++;
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/*
 * The last response of a READ arrives after the requester went back and
 * before it sent the READ again: the WQE cannot complete yet, and the
 * response of the resent READ must still complete it (it used to be
 * taken for a stale copy, the completer then expecting the PSN after the
 * READ, until retry_cnt ran out).
 */
static void comp_rewound_response_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, RECOVER_SQ_PSN, 7);

	recover_post(test, qp, 100);
	recover_rewound(qp, true);
	recover_respond(test, qp, 100);
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 0);
	KUNIT_EXPECT_FALSE(test, qp->comp.rd_valid);

	recover_rewound(qp, false);
	recover_respond(test, qp, 100);
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 1);
	KUNIT_EXPECT_EQ(test, qp->req.rd_atomic, 0);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_COMPLETER_RETRY),
			0);
}

/*
 * A response that answers a request sent but is no progress (a copy
 * after a go-back-N) shows a working responder: it starts the local ACK
 * timeout again and voids an expiry not yet acted upon. A PSN past those
 * sent proves nothing. (rdma_rxe on the debug kernel answered every READ,
 * but each round of copies took it longer than the timeout, and sroce
 * retried on top of them until retry_cnt ran out.)
 */
static void comp_alive_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	unsigned long flags;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, RECOVER_SQ_PSN, 7);
	spin_lock_irqsave(&qp->state_lock, flags);
	write_seqcount_begin(&qp->p_seq);
	qp->p.timeout = 31;	/* hours: it does not fire during the test */
	write_seqcount_end(&qp->p_seq);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	recover_post(test, qp, 100);
	recover_respond(test, qp, 100);
	KUNIT_ASSERT_EQ(test, qp->sq.queue.cons, 1);
	recover_post(test, qp, 101);
	sroce_comp_arm_retry(qp, &qp->p);
	/* the timer expired; the completer has not acted on it yet */
	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	recover_respond(test, qp, 100);		/* a copy of the first one */
	recover_expect(test, qp, &t, 0, false, 0);
	KUNIT_EXPECT_TRUE(test, timer_pending(&qp->comp.retry_timer));
	KUNIT_EXPECT_FALSE(test, test_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags));

	/* nothing answers the READ at 101: an expiry stands */
	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	sroce_task_run(&qp->comp.task);
	recover_expect(test, qp, &t, 1, true, 101);

	/* recovering, a response of a PSN never sent: the expiry stands */
	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	recover_respond(test, qp, 200);
	recover_expect(test, qp, &t, 2, true, 101);
}

/*
 * retry_cnt bounds the tries that found no answer. An RNR NAK of the
 * awaited PSN is an answer: it gives the transport budget back (while
 * rnr_retry counts the RNR waits), so timeouts between RNR waits with a
 * peer that answers every request do not add up to RETRY_EXC_ERR.
 */
static void comp_rnr_restores_retry_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	unsigned long flags;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, RECOVER_SQ_PSN, 2);
	spin_lock_irqsave(&qp->state_lock, flags);
	write_seqcount_begin(&qp->p_seq);
	qp->p.rnr_retry = 3;
	write_seqcount_end(&qp->p_seq);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	qp->comp.rnr_left = 3;
	sroce_test_claim_send(qp, 1);
	WRITE_ONCE(qp->req.sent_psn, qp->req.psn);

	/* two timeouts use up retry_cnt 2 */
	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	sroce_task_run(&qp->comp.task);
	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	sroce_task_run(&qp->comp.task);
	KUNIT_ASSERT_EQ(test, qp->comp.retry_left, 0);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_COMPLETER_RETRY),
			2);

	/* the resend found the peer without a receive: RNR NAK */
	set_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags);
	sroce_test_ack(test, qp, RECOVER_SQ_PSN, SROCE_AETH_RNR_NAK, 1);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_RCVD_RNR), 1);
	KUNIT_EXPECT_EQ(test, qp->comp.retry_left, 2);
	KUNIT_EXPECT_EQ(test, qp->comp.rnr_left, 2);
	KUNIT_EXPECT_FALSE(test, test_bit(SROCE_COMP_TIMEOUT, &qp->comp.flags));
	del_timer_sync(&qp->comp.rnr_timer);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_RETRY_EXCEEDED),
			0);
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, 0);
}

static void count_event(struct ib_event *ev, void *ctx)
{
	int *drained = ctx;

	if (ev->event == IB_EVENT_SQ_DRAINED)
		(*drained)++;
}

/*
 * IB_EVENT_SQ_DRAINED (IBA 11.6.3) means no WQE is outstanding any more:
 * in SQD with a READ still unanswered it must wait for the response,
 * then come once. (It used to be raised as SQD was entered.)
 */
static void comp_sqd_drained_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	unsigned long flags;
	int drained = 0;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_comp_qp(test, &t, 8, RECOVER_SQ_PSN, 7);
	qp->ibqp.device = &t.sdev->ibdev;
	qp->ibqp.event_handler = count_event;
	qp->ibqp.qp_context = &drained;

	recover_post(test, qp, 100);
	spin_lock_irqsave(&qp->state_lock, flags);
	write_seqcount_begin(&qp->p_seq);
	qp->p.state = IB_QPS_SQD;
	write_seqcount_end(&qp->p_seq);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	/* what sroce_comp_notify_drained() asks, with the run done here */
	set_bit(SROCE_COMP_SQD_NOTIFY, &qp->comp.flags);
	sroce_task_run(&qp->comp.task);
	KUNIT_EXPECT_EQ(test, drained, 0);

	recover_respond(test, qp, 100);
	KUNIT_EXPECT_EQ(test, qp->sq.queue.cons, qp->sq.queue.prod);
	KUNIT_EXPECT_EQ(test, drained, 1);
	sroce_task_run(&qp->comp.task);
	KUNIT_EXPECT_EQ(test, drained, 1);
}

static struct kunit_case req_test_cases[] = {
	KUNIT_CASE_PARAM(pkt_test, pkt_gen_params),
	KUNIT_CASE_PARAM(read_resume_test, read_resume_gen_params),
	KUNIT_CASE_PARAM(ackreq_test, ackreq_gen_params),
	KUNIT_CASE_PARAM(cover_test, cover_gen_params),
	KUNIT_CASE_PARAM(timeout_test, timeout_gen_params),
	KUNIT_CASE(rnr_table_test),
	KUNIT_CASE_PARAM(judge_test, judge_gen_params),
	KUNIT_CASE(comp_recover_test),
	KUNIT_CASE(comp_recover_stale_test),
	KUNIT_CASE(comp_rewound_response_test),
	KUNIT_CASE(comp_alive_test),
	KUNIT_CASE(comp_rnr_restores_retry_test),
	KUNIT_CASE(comp_sqd_drained_test),
	KUNIT_CASE(nak_status_test),
	{}
};

static struct kunit_suite req_test_suite = {
	.name = "sroce_req",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = req_test_cases,
};

kunit_test_suite(req_test_suite);
