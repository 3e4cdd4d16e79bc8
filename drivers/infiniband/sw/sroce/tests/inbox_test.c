// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for where the responder runs for a request it is handed
 * (sroce_resp_where()): in the caller, on a worker, or on a worker on
 * another CPU.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <rdma/ib_pack.h>

#include "transport/sroce_resp.h"
#include "transport/sroce_resp_inbox.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"

/* past the streak a message stops running where it arrives */
#define LONG	(SROCE_RESP_STREAK + 1)

struct where_case {
	const char *name;
	u8 opcode;
	bool local;	/* SROCE_PKT_LOCAL: the same-host hand-off */
	u32 streak;
	bool first;
	bool armed;
	enum sroce_resp_where where;
};

static const struct where_case where_cases[] = {
	{ "lone SEND", IB_OPCODE_RC_SEND_ONLY, false, 0, true, true,
	  SROCE_RESP_HERE },
	{ "SEND behind another", IB_OPCODE_RC_SEND_ONLY, false, 0, false,
	  true, SROCE_RESP_QUEUE },
	{ "start of a SEND", IB_OPCODE_RC_SEND_FIRST, false,
	  SROCE_RESP_STREAK, true, true, SROCE_RESP_HERE },
	{ "long SEND from a wire", IB_OPCODE_RC_SEND_MIDDLE, false, LONG,
	  true, false, SROCE_RESP_AWAY },
	{ "long WRITE from a wire", IB_OPCODE_RC_RDMA_WRITE_MIDDLE, false,
	  LONG, true, true, SROCE_RESP_AWAY },
	{ "long local WRITE", IB_OPCODE_RC_RDMA_WRITE_FIRST, true, LONG, true,
	  false, SROCE_RESP_AWAY },
	{ "long local SEND, CQ armed", IB_OPCODE_RC_SEND_FIRST, true, LONG,
	  true, true, SROCE_RESP_AWAY },
	{ "long local SEND, CQ polled", IB_OPCODE_RC_SEND_FIRST, true, LONG,
	  true, false, SROCE_RESP_HERE },
	{ "long local SEND, CQ polled, behind another",
	  IB_OPCODE_RC_SEND_MIDDLE, true, LONG, false, false,
	  SROCE_RESP_QUEUE },
	{ "long local UC SEND, CQ polled", IB_OPCODE_UC_SEND_FIRST, true, LONG,
	  true, false, SROCE_RESP_HERE },
	{ "READ request", IB_OPCODE_RC_RDMA_READ_REQUEST, false, 0, true,
	  true, SROCE_RESP_QUEUE },
	{ "local READ request, CQ polled", IB_OPCODE_RC_RDMA_READ_REQUEST,
	  true, 0, true, false, SROCE_RESP_QUEUE },
	{ "lone atomic", IB_OPCODE_RC_FETCH_ADD, false, 0, true, true,
	  SROCE_RESP_HERE },
	{ "end of a long SEND", IB_OPCODE_RC_SEND_LAST, true, 0, true, false,
	  SROCE_RESP_HERE },
};

static void where_desc(const struct where_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(where, where_cases, where_desc);

static void resp_where_test(struct kunit *test)
{
	const struct where_case *c = test->param_value;
	struct sroce_pkt pkt = {
		.info = sroce_opcode_lookup(c->opcode),
		.opcode = c->opcode,
		.flags = c->local ? SROCE_PKT_LOCAL : 0,
	};

	KUNIT_ASSERT_NOT_NULL(test, pkt.info);
	KUNIT_EXPECT_EQ(test, sroce_resp_where(&pkt, c->streak, c->first,
					       c->armed), c->where);
}

static struct kunit_case sroce_inbox_test_cases[] = {
	KUNIT_CASE_PARAM(resp_where_test, where_gen_params),
	{}
};

static struct kunit_suite sroce_inbox_test_suite = {
	.name = "sroce_resp_inbox",
	.test_cases = sroce_inbox_test_cases,
};

kunit_test_suites(&sroce_inbox_test_suite);
