// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the RC responder's pure rules (sroce_resp_res.c): PSN
 * classification against the ePSN, READ response geometry and restart
 * offsets, admission of READ/atomic requests against max_dest_rd_atomic
 * and the retirement of responder resources; and the responder's side of
 * go-back-N on a duplicate READ (sroce_resp_read.c): which queued
 * requests are marked, which READs in front of a duplicate lose their
 * response, and which response in progress stops.
 *
 * Expectations come from IBA vol 1 9.7.5.1 (the 2^23 duplicate window
 * before the ePSN, the 2^23 - 1 PSNs after it out of sequence), 9.7.5.1.3
 * (a duplicate READ restarts its response at its own PSN, every packet
 * but the last one MTU long) and from the retirement rule written down
 * at the top of sroce_resp_res.c. The go-back cases follow 9.7.5.1.3 (the
 * requester resends every request from the one whose response it lost,
 * so a duplicate READ request means what was asked for after it will be
 * asked for again) and the rule at the top of sroce_resp_read.c.
 * Last, the responder's task serving a long READ yields its CPU after
 * SROCE_TASK_BUDGET packets, not SROCE_TASK_BUDGET trains of them, and
 * an RC responder is bound to one CPU by its first READ request.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "test_util.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_inbox.h"
#include "transport/sroce_resp_read.h"
#include "transport/sroce_resp_res.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"
#include "wire/sroce_psn.h"

struct resp_class_case {
	const char *name;
	u32 epsn;
	u32 psn;
	enum sroce_psn_class want;
};

static const struct resp_class_case resp_class_cases[] = {
	{ "the ePSN", 0x000100, 0x000100, SROCE_PSN_EXPECTED },
	{ "ePSN 0 is expected", 0, 0, SROCE_PSN_EXPECTED },
	{ "one behind", 0x000100, 0x0000ff, SROCE_PSN_DUPLICATE },
	{ "one ahead", 0x000100, 0x000101, SROCE_PSN_AHEAD },
	{ "ahead across the wrap", 0xfffffe, 0x000001, SROCE_PSN_AHEAD },
	{ "0 after 0xffffff", 0xffffff, 0x000000, SROCE_PSN_AHEAD },
	{ "duplicate across the wrap", 0x000001, 0xffffff,
	  SROCE_PSN_DUPLICATE },
	{ "0xffffff before 0", 0x000000, 0xffffff, SROCE_PSN_DUPLICATE },
	{ "last PSN ahead: ePSN + 2^23 - 1", 0x000000, 0x7fffff,
	  SROCE_PSN_AHEAD },
	{ "ePSN + 2^23 is a duplicate", 0x000000, 0x800000,
	  SROCE_PSN_DUPLICATE },
	{ "oldest duplicate: ePSN - 2^23", 0x400000, 0xc00000,
	  SROCE_PSN_DUPLICATE },
	{ "ePSN - 2^23 - 1 is ahead", 0x400000, 0xbfffff, SROCE_PSN_AHEAD },
	{ "half window, wrapped ePSN", 0x800000, 0x000001,
	  SROCE_PSN_DUPLICATE },
	{ "half window, wrapped ePSN, ahead", 0x800000, 0xffffff,
	  SROCE_PSN_AHEAD },
};

static void resp_class_desc(const struct resp_class_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(resp_class, resp_class_cases, resp_class_desc);

static void resp_class_test(struct kunit *test)
{
	const struct resp_class_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_resp_psn_class(t->psn, t->epsn), t->want);
}

struct resp_read_case {
	const char *name;
	u32 len;
	u32 mtu;
	u32 npkts;	/* response packets of the READ */
	u32 first_psn;
	u32 dup_psn;	/* a duplicate inside the READ */
	u32 offset;	/* where the restarted response begins */
};

static const struct resp_read_case resp_read_cases[] = {
	{ "zero-length READ: one empty packet", 0, 4096, 1, 10, 10, 0 },
	{ "one byte", 1, 1024, 1, 10, 10, 0 },
	{ "exactly one MTU", 1024, 1024, 1, 10, 10, 0 },
	{ "one byte over an MTU", 1025, 1024, 2, 10, 11, 1024 },
	{ "restart at the first PSN", 16384, 4096, 4, 100, 100, 0 },
	{ "restart in the middle", 16384, 4096, 4, 100, 102, 8192 },
	{ "restart at the last packet", 10000, 1024, 10, 100, 109, 9216 },
	{ "restart across the PSN wrap", 8 * 4096, 4096, 8, 0xfffffe,
	  0x000001, 3 * 4096 },
	{ "MTU 256", 1000, 256, 4, 5, 7, 512 },
	{ "1 GiB at MTU 256", 1U << 30, 256, 1U << 22, 0, 0x3fffff,
	  (1U << 30) - 256 },
};

static void resp_read_desc(const struct resp_read_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(resp_read, resp_read_cases, resp_read_desc);

static void resp_read_test(struct kunit *test)
{
	const struct resp_read_case *t = test->param_value;
	u32 off = sroce_resp_read_offset(t->first_psn, t->dup_psn, t->mtu);

	KUNIT_EXPECT_EQ(test, sroce_resp_read_npkts(t->len, t->mtu), t->npkts);
	KUNIT_EXPECT_EQ(test, off, t->offset);
	/* The restart lies inside the READ and leaves a non-empty rest. */
	if (t->len)
		KUNIT_EXPECT_LT(test, off, t->len);
}

#define RESP_RING_SIZE	8

/* A ring of @held answered resources at PSNs 100, 101, ... */
static void resp_ring_fill(struct kunit *test, struct sroce_resp_res_ring *ring,
			   u32 held, bool answered, u32 mark)
{
	struct sroce_resp_res *res;
	u32 i;

	KUNIT_ASSERT_EQ(test, sroce_resp_res_init(ring, RESP_RING_SIZE,
						  GFP_KERNEL), 0);
	for (i = 0; i < held; i++) {
		res = sroce_resp_res_admit(ring, RESP_RING_SIZE, 0);
		KUNIT_ASSERT_NOT_NULL(test, res);
		res->first_psn = 100 + i;
		res->npkts = 1;
		res->answered = answered;
		res->answered_mark = mark;
	}
}

struct resp_admit_case {
	const char *name;
	u32 limit;		/* max_dest_rd_atomic */
	u32 held;		/* resources held before */
	bool answered;		/* their responses went out completely */
	u32 mark;		/* arrival number after they went out */
	u32 arrival;		/* arrival number of the new request */
	bool admitted;
	u32 count;		/* resources held after */
	u32 oldest_psn;		/* PSN of the oldest left (if any) */
};

static const struct resp_admit_case resp_admit_cases[] = {
	{ "max_dest_rd_atomic 0 refuses", 0, 0, true, 0, 0, false, 0, 0 },
	{ "first of one", 1, 0, true, 0, 0, true, 1, 0 },
	{ "room left", 4, 3, false, 0, 0, true, 4, 100 },
	{ "full, oldest answered before it arrived", 4, 4, true, 10, 10, true,
	  4, 101 },
	{ "full, answered long before", 4, 4, true, 10, 500, true, 4, 101 },
	{ "full, it arrived before the answer: too many", 4, 4, true, 10, 9,
	  false, 4, 100 },
	{ "full, oldest still being answered: too many", 4, 4, false, 0, 50,
	  false, 4, 100 },
	{ "arrival numbers wrap", 2, 2, true, 0xfffffff0, 0x00000005, true,
	  2, 101 },
	{ "arrival before a wrapped mark", 2, 2, true, 0x00000005, 0xfffffff0,
	  false, 2, 100 },
	{ "limit lowered: retire down to it", 2, 6, true, 0, 1, true, 2, 105 },
	{ "limit over the ring is the ring", 100, RESP_RING_SIZE, true, 0, 1,
	  true, RESP_RING_SIZE, 101 },
};

static void resp_admit_desc(const struct resp_admit_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(resp_admit, resp_admit_cases, resp_admit_desc);

static void resp_admit_test(struct kunit *test)
{
	const struct resp_admit_case *t = test->param_value;
	struct sroce_resp_res_ring ring;
	struct sroce_resp_res *res;

	resp_ring_fill(test, &ring, t->held, t->answered, t->mark);
	res = sroce_resp_res_admit(&ring, t->limit, t->arrival);
	KUNIT_EXPECT_EQ(test, !!res, t->admitted);
	KUNIT_EXPECT_EQ(test, ring.count, t->count);
	if (res) {
		/* A fresh entry, and the newest: a later find sees it. */
		KUNIT_EXPECT_FALSE(test, res->answered);
		KUNIT_EXPECT_EQ(test, res->npkts, 0U);
		res->first_psn = 900;
		res->npkts = 1;
		KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 900), res);
	}
	if (t->count && t->oldest_psn) {
		KUNIT_EXPECT_EQ(test, ring.slot[ring.oldest].first_psn,
				t->oldest_psn);
		/* What retired is gone: a duplicate of it finds nothing. */
		if (t->oldest_psn > 100)
			KUNIT_EXPECT_NULL(test, sroce_resp_res_find(&ring,
								    t->oldest_psn - 1));
	}
	sroce_resp_res_free(&ring);
}

/* A READ's PSN range is found from any of its PSNs, never outside it. */
static void resp_find_test(struct kunit *test)
{
	struct sroce_resp_res_ring ring;
	struct sroce_resp_res *rd, *atomic;

	KUNIT_ASSERT_EQ(test, sroce_resp_res_init(&ring, 4, GFP_KERNEL), 0);
	rd = sroce_resp_res_admit(&ring, 4, 0);
	KUNIT_ASSERT_NOT_NULL(test, rd);
	rd->first_psn = 0xfffffe;	/* READ over PSNs 0xfffffe..0x000001 */
	rd->npkts = 4;
	atomic = sroce_resp_res_admit(&ring, 4, 0);
	KUNIT_ASSERT_NOT_NULL(test, atomic);
	atomic->first_psn = 0x000002;
	atomic->npkts = 1;

	KUNIT_EXPECT_NULL(test, sroce_resp_res_find(&ring, 0xfffffd));
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 0xfffffe), rd);
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 0xffffff), rd);
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 0x000000), rd);
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 0x000001), rd);
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 0x000002),
			    atomic);
	KUNIT_EXPECT_NULL(test, sroce_resp_res_find(&ring, 0x000003));

	sroce_resp_res_clear(&ring);
	KUNIT_EXPECT_EQ(test, ring.count, 0U);
	KUNIT_EXPECT_NULL(test, sroce_resp_res_find(&ring, 0x000002));
	sroce_resp_res_free(&ring);
}

struct resp_stale_case {
	const char *name;
	u32 first_psn;	/* of the oldest of two resources */
	u32 npkts;
	u32 epsn;
	u32 count;	/* resources left */
};

/* The second resource is always 2 PSNs before the ePSN. */
static const struct resp_stale_case resp_stale_cases[] = {
	{ "recent: kept", 0x000010, 4, 0x000100, 2 },
	{ "last PSN exactly 2^23 behind: still a duplicate, kept",
	  0x000010, 4, 0x800013, 2 },
	{ "last PSN 2^23 + 1 behind: retired", 0x000010, 4, 0x800014, 1 },
	{ "first PSN out of the window, last in it: kept", 0x000010, 0x10,
	  0x800014, 2 },
	{ "range across the wrap: kept", 0xfffff0, 0x20, 0x000010, 2 },
	{ "across the wrap, 2^23 + 1 behind: retired", 0xfffff0, 0x20,
	  0x800010, 1 },
};

static void resp_stale_desc(const struct resp_stale_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(resp_stale, resp_stale_cases, resp_stale_desc);

static void resp_stale_test(struct kunit *test)
{
	const struct resp_stale_case *t = test->param_value;
	struct sroce_resp_res_ring ring;
	struct sroce_resp_res *res;

	KUNIT_ASSERT_EQ(test, sroce_resp_res_init(&ring, 4, GFP_KERNEL), 0);
	res = sroce_resp_res_admit(&ring, 4, 0);
	KUNIT_ASSERT_NOT_NULL(test, res);
	res->first_psn = t->first_psn;
	res->npkts = t->npkts;
	res = sroce_resp_res_admit(&ring, 4, 0);
	KUNIT_ASSERT_NOT_NULL(test, res);
	res->first_psn = (t->epsn - 2) & 0xffffff;
	res->npkts = 1;

	sroce_resp_res_retire_stale(&ring, t->epsn);
	KUNIT_EXPECT_EQ(test, ring.count, t->count);
	/* The newer one always stays, and is still found. */
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, res->first_psn),
			    res);
	sroce_resp_res_free(&ring);
}

/*
 * The retirement rule over a sequence: max_dest_rd_atomic 2, READs
 * answered in turn. A requester that keeps the limit is never refused;
 * one that sends a third request before the first answer went out is.
 */
static void resp_sequence_test(struct kunit *test)
{
	struct sroce_resp_res_ring ring;
	struct sroce_resp_res *a, *b, *c;

	KUNIT_ASSERT_EQ(test, sroce_resp_res_init(&ring, 128, GFP_KERNEL), 0);
	/* Requests arrive as packets 0 and 1; both answered after packet 1. */
	a = sroce_resp_res_admit(&ring, 2, 0);
	b = sroce_resp_res_admit(&ring, 2, 1);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	a->first_psn = 10;
	a->npkts = 3;
	b->first_psn = 13;
	b->npkts = 1;
	/* A third, packet 2, arrived while a's response was going out. */
	a->answered = false;
	KUNIT_EXPECT_NULL(test, sroce_resp_res_admit(&ring, 2, 2));
	/* a went out completely when packets up to 2 had arrived. */
	a->answered = true;
	a->answered_mark = 3;
	KUNIT_EXPECT_NULL(test, sroce_resp_res_admit(&ring, 2, 2));
	/* Packet 3 was sent after a's response: a retires, c takes over. */
	c = sroce_resp_res_admit(&ring, 2, 3);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->first_psn = 14;
	c->npkts = 1;
	KUNIT_EXPECT_EQ(test, ring.count, 2U);
	KUNIT_EXPECT_NULL(test, sroce_resp_res_find(&ring, 11));
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 13), b);
	KUNIT_EXPECT_PTR_EQ(test, sroce_resp_res_find(&ring, 14), c);
	/* b was never answered: the next one is too many. */
	KUNIT_EXPECT_NULL(test, sroce_resp_res_admit(&ring, 2, 100));
	KUNIT_EXPECT_FALSE(test, sroce_resp_res_retirable(c, 0));
	sroce_resp_res_free(&ring);
}

/* ---- going back on a duplicate READ (sroce_resp_read.c) ----------------- */

/* IBA table 35: RC request opcodes (transport 000b). */
enum {
	OP_SEND_ONLY = 0x04,
	OP_WRITE_ONLY = 0x0a,
	OP_READ = 0x0c,
	OP_CMP_SWAP = 0x13,
};

#define DUP	SROCE_RESP_MARK_DUP_READ
#define NOSRV	SROCE_RESP_MARK_NO_SERVE
#define GO_MAX	6	/* requests queued by one case */

/* A request packet: the parsed header the receive path leaves in cb. */
struct go_req {
	u8 opcode;
	u32 psn;
	u8 mark;	/* expected after queueing, or before and after rewind */
	u8 after;	/* expected after rewind */
};

static struct sroce_qp *go_qp(struct kunit *test, u32 epsn)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_resp_qp(test, &t, RESP_RING_SIZE);
	qp->resp.psn = epsn;
	return qp;
}

static u64 go_abandoned(struct sroce_qp *qp)
{
	return sroce_stats_read(to_sroce_dev(qp->ibqp.device),
				SROCE_CNT_READ_ABANDONED);
}

/*
 * A request skb as parsing leaves it, cb filled in; its mark starts as
 * junk, which whoever queues it must overwrite.
 */
static struct sk_buff *go_skb(struct kunit *test, const struct go_req *r)
{
	struct sk_buff *skb = sroce_test_parsed_skb(test, r->opcode, r->psn);

	sroce_skb_pkt(skb)->mark = 0xff;
	return skb;
}

/* Queue @r as sroce_resp_queue() does, marking it. */
static void go_queue(struct kunit *test, struct sroce_qp *qp,
		     const struct go_req *r)
{
	struct sk_buff *skb = go_skb(test, r);
	unsigned long flags;

	spin_lock_irqsave(&qp->resp.rxq.lock, flags);
	sroce_resp_mark_queued(&qp->resp, sroce_skb_pkt(skb));
	__skb_queue_tail(&qp->resp.rxq, skb);
	spin_unlock_irqrestore(&qp->resp.rxq.lock, flags);
}

/* Queue @r with the mark it is given, as if marked earlier. */
static void go_queue_marked(struct kunit *test, struct sroce_qp *qp,
			    const struct go_req *r)
{
	struct sk_buff *skb = go_skb(test, r);

	sroce_skb_pkt(skb)->mark = r->mark;
	skb_queue_tail(&qp->resp.rxq, skb);
}

/* The queue holds @n requests, in order, with the marks @want says. */
static void go_expect_queue(struct kunit *test, struct sroce_qp *qp,
			    const struct go_req *reqs, u32 n, bool after)
{
	struct sk_buff *skb;
	struct sroce_pkt *pkt;
	u32 i = 0;

	KUNIT_EXPECT_EQ(test, skb_queue_len(&qp->resp.rxq), n);
	skb_queue_walk(&qp->resp.rxq, skb) {
		if (i >= n)
			break;
		pkt = sroce_skb_pkt(skb);
		KUNIT_EXPECT_EQ_MSG(test, pkt->psn, reqs[i].psn, "request %u", i);
		KUNIT_EXPECT_EQ_MSG(test, pkt->mark,
				    after ? reqs[i].after : reqs[i].mark,
				    "request %u, PSN %#x", i, reqs[i].psn);
		i++;
	}
}

/**
 * struct go_mark_case - requests queued against an ePSN
 * @name: description
 * @epsn: the responder's ePSN while they are queued
 * @prior: a duplicate READ was noted already, at @prior_psn
 * @prior_psn: its PSN
 * @n: requests
 * @req: the requests, in arrival order, and the mark each must get
 * @rewind: the responder is asked to go back
 * @rewind_psn: to this PSN: the earliest duplicate's
 */
struct go_mark_case {
	const char *name;
	u32 epsn;
	bool prior;
	u32 prior_psn;
	u32 n;
	struct go_req req[GO_MAX];
	bool rewind;
	u32 rewind_psn;
};

static const struct go_mark_case go_mark_cases[] = {
	{ "READ one before the ePSN: duplicate", 200, false, 0,
	  1, { { OP_READ, 199, DUP } }, true, 199 },
	{ "READ at the ePSN: new", 200, false, 0,
	  1, { { OP_READ, 200, 0 } }, false, 0 },
	{ "READ after the ePSN: not a duplicate", 200, false, 0,
	  1, { { OP_READ, 205, 0 } }, false, 0 },
	{ "SEND before the ePSN: not a READ", 200, false, 0,
	  1, { { OP_SEND_ONLY, 199, 0 } }, false, 0 },
	{ "WRITE before the ePSN: not a READ", 200, false, 0,
	  1, { { OP_WRITE_ONLY, 150, 0 } }, false, 0 },
	{ "atomic before the ePSN: not a READ", 200, false, 0,
	  1, { { OP_CMP_SWAP, 199, 0 } }, false, 0 },
	{ "several: the earliest PSN, arriving second", 200, false, 0,
	  3, { { OP_READ, 190, DUP }, { OP_READ, 180, DUP }, { OP_READ, 185, DUP } },
	  true, 180 },
	{ "several: the earliest PSN, arriving first", 200, false, 0,
	  2, { { OP_READ, 180, DUP }, { OP_READ, 190, DUP } }, true, 180 },
	{ "mixed: only the READ duplicates", 200, false, 0,
	  5, { { OP_SEND_ONLY, 199, 0 }, { OP_READ, 195, DUP }, { OP_READ, 200, 0 },
	       { OP_WRITE_ONLY, 201, 0 }, { OP_READ, 198, DUP } }, true, 195 },
	{ "an earlier one noted already stays", 200, true, 150,
	  1, { { OP_READ, 160, DUP } }, true, 150 },
	{ "a later one noted already gives way", 200, true, 170,
	  1, { { OP_READ, 160, DUP } }, true, 160 },
	{ "across the wrap: 0xfffffe before 0x000001", 0x000002, false, 0,
	  2, { { OP_READ, 0x000001, DUP }, { OP_READ, 0xfffffe, DUP } },
	  true, 0xfffffe },
	{ "ePSN - 2^23: still a duplicate", 0x800000, false, 0,
	  1, { { OP_READ, 0x000000, DUP } }, true, 0x000000 },
	{ "ePSN - 2^23 - 1: ahead, not a duplicate", 0x800000, false, 0,
	  1, { { OP_READ, 0xffffff, 0 } }, false, 0 },
};

static void go_mark_desc(const struct go_mark_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(go_mark, go_mark_cases, go_mark_desc);

static void resp_mark_queued_test(struct kunit *test)
{
	const struct go_mark_case *t = test->param_value;
	struct sroce_qp *qp = go_qp(test, t->epsn);
	u32 i;

	qp->resp.rewind = t->prior;
	qp->resp.rewind_psn = t->prior_psn;
	for (i = 0; i < t->n; i++)
		go_queue(test, qp, &t->req[i]);
	go_expect_queue(test, qp, t->req, t->n, false);
	KUNIT_EXPECT_EQ(test, qp->resp.rewind, t->rewind);
	if (t->rewind)
		KUNIT_EXPECT_EQ(test, qp->resp.rewind_psn, t->rewind_psn);
	/* Queueing does not touch the ePSN or count anything. */
	KUNIT_EXPECT_EQ(test, qp->resp.psn, t->epsn);
	KUNIT_EXPECT_EQ(test, go_abandoned(qp), 0);
}

/* A READ the responder holds a resource for. */
struct go_res {
	u32 first_psn;
	u32 npkts;
};

/**
 * struct go_rewind_case - the responder acts on a queued duplicate READ
 * @name: description
 * @nres: resources held, oldest first
 * @res: their READs
 * @serving: index in @res of the response going out, or -1
 * @next: its next response packet (first_psn + @next goes out next)
 * @rewind: a duplicate was queued since the responder last looked
 * @rewind_psn: the earliest PSN it asked for
 * @n: requests queued, in order, their marks before and after
 * @req: the requests
 * @abandoned: the response in progress stops (read_resp_abandoned + 1)
 */
struct go_rewind_case {
	const char *name;
	u32 nres;
	struct go_res res[3];
	int serving;
	u32 next;
	bool rewind;
	u32 rewind_psn;
	u32 n;
	struct go_req req[GO_MAX];
	bool abandoned;
};

/* Mostly: READs at 100..103, 104..107 and 108..111 are held (A, B, C). */
static const struct go_rewind_case go_rewind_cases[] = {
	{ "READs in front with later PSNs lose their response",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, -1, 0, true, 104,
	  6, { { OP_READ, 112, 0, NOSRV }, { OP_WRITE_ONLY, 116, 0, 0 },
	       { OP_READ, 117, 0, NOSRV }, { OP_READ, 104, DUP, DUP },
	       { OP_READ, 108, DUP, DUP }, { OP_READ, 121, 0, 0 } }, false },
	{ "earlier READs and non-READs in front are left",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, -1, 0, true, 106,
	  5, { { OP_READ, 100, 0, 0 }, { OP_CMP_SWAP, 112, 0, 0 },
	       { OP_READ, 113, 0, NOSRV }, { OP_SEND_ONLY, 114, 0, 0 },
	       { OP_READ, 106, DUP, DUP } }, false },
	{ "a later READ duplicate in front loses its response",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, -1, 0, true, 104,
	  3, { { OP_READ, 108, DUP, DUP | NOSRV }, { OP_READ, 104, DUP, DUP },
	       { OP_READ, 112, 0, 0 } }, false },
	{ "resource gone: nothing is marked or stopped",
	  1, { { 108, 4 } }, 0, 1, true, 104,
	  3, { { OP_READ, 112, 0, 0 }, { OP_READ, 104, DUP, DUP },
	       { OP_READ, 108, DUP, DUP } }, false },
	{ "no duplicate queued: nothing",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, 2, 1, false, 104,
	  2, { { OP_READ, 112, 0, 0 }, { OP_READ, 104, DUP, DUP } }, false },
	{ "duplicate already taken and being served: nothing",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, 1, 2, true, 104,
	  2, { { OP_READ, 112, 0, 0 }, { OP_READ, 113, 0, 0 } }, false },
	{ "response past the duplicate's PSN stops",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, 2, 1, true, 104,
	  1, { { OP_READ, 104, DUP, DUP } }, true },
	{ "response at the duplicate's PSN stops",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, 1, 2, true, 106,
	  1, { { OP_READ, 106, DUP, DUP } }, true },
	{ "response before the duplicate's PSN goes on",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, 0, 3, true, 104,
	  2, { { OP_READ, 112, 0, NOSRV }, { OP_READ, 104, DUP, DUP } }, false },
	{ "duplicate further into the READ served: goes on",
	  3, { { 100, 4 }, { 104, 4 }, { 108, 4 } }, 1, 1, true, 106,
	  1, { { OP_READ, 106, DUP, DUP } }, false },
	{ "across the wrap",
	  2, { { 0xfffffc, 4 }, { 0x000000, 4 } }, 1, 1, true, 0xfffffe,
	  3, { { OP_READ, 0x000004, 0, NOSRV }, { OP_READ, 0xfffff0, 0, 0 },
	       { OP_READ, 0xfffffe, DUP, DUP } }, true },
};

static void go_rewind_desc(const struct go_rewind_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(go_rewind, go_rewind_cases, go_rewind_desc);

static void resp_rewind_test(struct kunit *test)
{
	const struct go_rewind_case *t = test->param_value;
	struct sroce_qp *qp = go_qp(test, 112);
	struct sroce_resp_res *res, *serving = NULL;
	u32 i;

	for (i = 0; i < t->nres; i++) {
		res = sroce_resp_res_admit(&qp->resp.res, RESP_RING_SIZE, 0);
		KUNIT_ASSERT_NOT_NULL(test, res);
		res->first_psn = t->res[i].first_psn;
		res->npkts = t->res[i].npkts;
		res->opcode = OP_READ;
		if (t->serving == i) {
			res->start = 0;
			res->next = t->next;
			serving = res;
		}
	}
	qp->resp.serving = serving;
	qp->resp.rewind = t->rewind;
	qp->resp.rewind_psn = t->rewind_psn;
	for (i = 0; i < t->n; i++)
		go_queue_marked(test, qp, &t->req[i]);

	sroce_resp_rewind(qp);
	go_expect_queue(test, qp, t->req, t->n, true);
	KUNIT_EXPECT_FALSE(test, qp->resp.rewind);
	KUNIT_EXPECT_PTR_EQ(test, qp->resp.serving,
			    t->abandoned ? NULL : serving);
	KUNIT_EXPECT_EQ(test, go_abandoned(qp), t->abandoned ? 1 : 0);
	/* What stopped keeps its place, for the duplicate to serve again. */
	if (serving)
		KUNIT_EXPECT_EQ(test, serving->next, t->next);
	KUNIT_EXPECT_EQ(test, qp->resp.res.count, t->nres);

	/* Nothing new was queued: a second look changes nothing. */
	sroce_resp_rewind(qp);
	go_expect_queue(test, qp, t->req, t->n, true);
	KUNIT_EXPECT_EQ(test, go_abandoned(qp), t->abandoned ? 1 : 0);
}

/*
 * The whole path: while READ 108's response goes out, the requester
 * resends from 104. The READs it sent after 104 that were already
 * queued lose their response; the response at 109 stops; the copies
 * that follow are left for the responder to serve in turn.
 */
static void resp_go_back_test(struct kunit *test)
{
	static const struct go_req reqs[] = {
		{ OP_READ, 112, 0, NOSRV }, { OP_READ, 116, 0, NOSRV },
		{ OP_READ, 104, DUP, DUP }, { OP_READ, 108, DUP, DUP },
		{ OP_READ, 112, 0, 0 },
	};
	struct sroce_qp *qp = go_qp(test, 112);
	struct sroce_resp_res *res;
	u32 i;

	for (i = 0; i < 3; i++) {
		res = sroce_resp_res_admit(&qp->resp.res, RESP_RING_SIZE, 0);
		KUNIT_ASSERT_NOT_NULL(test, res);
		res->first_psn = 100 + 4 * i;
		res->npkts = 4;
		res->opcode = OP_READ;
	}
	res->next = 1;
	qp->resp.serving = res;
	for (i = 0; i < ARRAY_SIZE(reqs); i++)
		go_queue(test, qp, &reqs[i]);
	go_expect_queue(test, qp, reqs, ARRAY_SIZE(reqs), false);
	KUNIT_EXPECT_TRUE(test, qp->resp.rewind);
	KUNIT_EXPECT_EQ(test, qp->resp.rewind_psn, 104);

	sroce_resp_rewind(qp);
	go_expect_queue(test, qp, reqs, ARRAY_SIZE(reqs), true);
	KUNIT_EXPECT_NULL(test, qp->resp.serving);
	KUNIT_EXPECT_EQ(test, go_abandoned(qp), 1);
}

/* ---- serving a READ: a train counts as its packets ------------------- */

/*
 * A READ of 80 packets (20 KiB at path MTU 256) goes out in trains of
 * SROCE_RESP_READ_BUDGET packets. An inline run of the responder yields
 * (hands the rest to its worker) once SROCE_TASK_BUDGET packets are out:
 * a task that counted each train as one call kept its CPU for 64 trains,
 * and on a kernel without preemption the receive softirq it deferred to
 * ksoftirqd waited that long (READ ACK timeouts on a clean veth). The
 * worker then sends the rest. The packets go to 127.0.0.1, where no sroce
 * device takes them: only their number matters here. The READ's memory
 * may not be lent, so no packet spans PSNs although the route ends at
 * this host (sroce_tx_span_max()): each tries to and falls back to one.
 */
static void resp_serve_budget_test(struct kunit *test)
{
	const u32 mtu = 256, npkts = 80;
	struct sroce_resp_res *res;
	struct sroce_test_mr m = {};
	struct sroce_test_dev t;
	struct net_device *ndev;
	unsigned long flags, yields;
	struct sroce_qp *qp;
	unsigned int ms;

	res = kunit_kzalloc(test, sizeof(*res), GFP_KERNEL);
	ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, res);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	ndev->hard_header_len = ETH_HLEN;
	t.sdev->ndev = ndev;
	sroce_test_mr_create_slab(test, t.pd, &m, npkts * mtu,
				  IB_ACCESS_REMOTE_READ);
	qp = sroce_test_serve_qp(test, &t);

	spin_lock_irqsave(&qp->state_lock, flags);
	qp->p.state = IB_QPS_RTS;
	qp->p.path_mtu = IB_MTU_256;
	qp->p.access = IB_ACCESS_REMOTE_READ;
	qp->p.has_av = true;
	qp->p.av.network_type = RDMA_NETWORK_IPV4;
	qp->p.av.saddr.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	qp->p.av.daddr.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	res->opcode = IB_OPCODE_RC_RDMA_READ_REQUEST;
	res->npkts = npkts;
	res->read.va = m.ibmr->iova;
	res->read.rkey = m.ibmr->rkey;
	res->read.len = npkts * mtu;
	qp->resp.serving = res;

	sroce_task_run(&qp->resp.task);
	spin_lock_irqsave(&qp->resp.task.lock, flags);
	yields = qp->resp.task.yields;
	spin_unlock_irqrestore(&qp->resp.task.lock, flags);
	KUNIT_EXPECT_EQ(test, yields, 1UL);

	/* the worker sends the rest */
	for (ms = 0; ms < 10000 && READ_ONCE(qp->resp.serving); ms += 20)
		msleep(20);
	sroce_task_disable(&qp->resp.task);
	KUNIT_EXPECT_PTR_EQ(test, qp->resp.serving, NULL);
	KUNIT_EXPECT_EQ(test, res->next, npkts);
	KUNIT_EXPECT_TRUE(test, res->answered);
	KUNIT_EXPECT_EQ(test, sroce_stats_read(t.sdev, SROCE_CNT_SEND_ERR) +
			sroce_stats_read(t.sdev, SROCE_CNT_SENT_PKTS), (u64)npkts);
	/* every train took the route the QP kept: one lookup in all */
	KUNIT_EXPECT_GE(test, qp->route.lookups, 2ULL);
	KUNIT_EXPECT_EQ(test, qp->route.misses, 1ULL);
	sroce_task_enable(&qp->resp.task);
	sroce_test_mr_destroy(test, &m);
}

/*
 * An RC responder stays unbound while it only acknowledges SENDs, and is
 * bound to a CPU other than the arrival one by its first READ request:
 * from then on its responses leave from one CPU, in order. (The task is
 * disabled: the requests are only queued, never executed.)
 */
static void resp_bind_on_read_test(struct kunit *test)
{
	struct sroce_test_dev t;
	struct sroce_qp *qp;
	int here;

	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	qp = sroce_test_serve_qp(test, &t);
	sroce_task_disable(&qp->resp.task);

	migrate_disable();
	here = raw_smp_processor_id();
	sroce_resp_queue(qp, sroce_test_parsed_skb(test, IB_OPCODE_RC_SEND_ONLY,
						   0));
	KUNIT_EXPECT_EQ(test, qp->resp.task.cpu, WORK_CPU_UNBOUND);
	sroce_resp_queue(qp, sroce_test_parsed_skb(test,
						   IB_OPCODE_RC_RDMA_READ_REQUEST,
						   1));
	migrate_enable();
	skb_queue_purge(&qp->resp.rxq);
	if (num_online_cpus() < 2) {
		KUNIT_EXPECT_EQ(test, qp->resp.task.cpu, WORK_CPU_UNBOUND);
		kunit_skip(test, "one CPU: nowhere else to be bound");
	}
	KUNIT_EXPECT_NE(test, qp->resp.task.cpu, WORK_CPU_UNBOUND);
	KUNIT_EXPECT_NE(test, qp->resp.task.cpu, here);
}

static struct kunit_case sroce_resp_test_cases[] = {
	KUNIT_CASE_PARAM(resp_class_test, resp_class_gen_params),
	KUNIT_CASE_PARAM(resp_read_test, resp_read_gen_params),
	KUNIT_CASE_PARAM(resp_admit_test, resp_admit_gen_params),
	KUNIT_CASE(resp_find_test),
	KUNIT_CASE_PARAM(resp_stale_test, resp_stale_gen_params),
	KUNIT_CASE(resp_sequence_test),
	KUNIT_CASE_PARAM(resp_mark_queued_test, go_mark_gen_params),
	KUNIT_CASE_PARAM(resp_rewind_test, go_rewind_gen_params),
	KUNIT_CASE(resp_go_back_test),
	KUNIT_CASE(resp_serve_budget_test),
	KUNIT_CASE(resp_bind_on_read_test),
	{}
};

static struct kunit_suite sroce_resp_test_suite = {
	.name = "sroce_resp",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_resp_test_cases,
};

kunit_test_suites(&sroce_resp_test_suite);
