// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for scattering a received packet whose payload does not
 * lie in the skb head (sroce_copy_skb(), sroce_mr_copy_skb()): page
 * fragments, as a NIC with scatter-gather receive delivers them, and a
 * frag list, as IP reassembly builds it. Each shape must land byte for
 * byte where a linear packet would, with the cursor rules of
 * sroce_copy_data() (mem/sroce_copy.c) unchanged.
 *
 * A packet here is HDR bytes of header followed by PAYLOAD bytes of
 * pattern(i); it is scattered into three SGEs laid out with gaps in an
 * arena behind a DMA MR. Memory that must stay untouched holds SENTINEL.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/skbuff.h>

#include "mem/sroce_copy.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"
#include "test_util.h"

#define SENTINEL	0xa5
#define HDR		28		/* BTH + RETH */
#define PAYLOAD		3000
#define GAP		64
#define ARENA		(3 * GAP + 1000 + 1500 + 700 + GAP)

static const u32 sge_len[] = { 1000, 1500, 700 };

static u8 pattern(u32 i)
{
	return (u8)(i * 13 + 7);
}

enum shape { LINEAR, FRAGS, FRAG_LIST, FRAGS_AND_LIST };

struct shape_case {
	const char *name;
	enum shape shape;
	u32 first;	/* bytes moved by the first of two calls */
};

static const struct shape_case shape_cases[] = {
	{ "linear", LINEAR, PAYLOAD },
	{ "two page fragments", FRAGS, PAYLOAD },
	{ "a frag list frame", FRAG_LIST, PAYLOAD },
	{ "fragments and a frag list frame", FRAGS_AND_LIST, PAYLOAD },
	{ "fragments, two calls split inside a fragment", FRAGS, 1234 },
	{ "fragments and list, split at the list", FRAGS_AND_LIST, 2000 },
};

static void shape_desc(const struct shape_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shape, shape_cases, shape_desc);

/* Payload bytes [@from, @to) as a fragment at an odd page offset. */
static void add_frag(struct kunit *test, struct sk_buff *skb, u32 from, u32 to)
{
	struct page *page = alloc_page(GFP_KERNEL);
	u8 *p;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, page);
	p = page_address(page) + 11;
	for (i = from; i < to; i++)
		*p++ = pattern(i);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, 11, to - from,
			PAGE_SIZE);
}

/*
 * A packet of @shape. Fragments hold payload [0, 1000) and [1000, 2000);
 * a frag list frame holds the rest. The caller frees it.
 */
static struct sk_buff *packet(struct kunit *test, enum shape shape)
{
	u32 head_pay = shape == LINEAR ? PAYLOAD : shape == FRAG_LIST ? 1000 : 0;
	u32 listed = shape == FRAG_LIST ? PAYLOAD - 1000 :
		     shape == FRAGS_AND_LIST ? PAYLOAD - 2000 : 0;
	struct sk_buff *skb = alloc_skb(HDR + head_pay, GFP_KERNEL);
	struct sk_buff *tail;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(skb_put(skb, HDR), 0, HDR);
	for (i = 0; i < head_pay; i++)
		skb_put_u8(skb, pattern(i));
	if (shape == FRAGS || shape == FRAGS_AND_LIST) {
		add_frag(test, skb, 0, 1000);
		add_frag(test, skb, 1000, shape == FRAGS ? PAYLOAD : 2000);
	}
	if (listed) {
		tail = alloc_skb(listed, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, tail);
		for (i = PAYLOAD - listed; i < PAYLOAD; i++)
			skb_put_u8(tail, pattern(i));
		skb_shinfo(skb)->frag_list = tail;
		skb->len += tail->len;
		skb->data_len += tail->len;
		skb->truesize += tail->truesize;
	}
	KUNIT_ASSERT_EQ(test, skb->len, HDR + PAYLOAD);
	KUNIT_ASSERT_EQ(test, skb_is_nonlinear(skb), shape != LINEAR);
	return skb;
}

struct fixture {
	struct sroce_test_dev t;
	struct ib_mr *mr;
	u8 *mem;
	struct rxe_sge sge[ARRAY_SIZE(sge_len)];
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
};

static void fixture_init(struct kunit *test, struct fixture *f, int access)
{
	u32 k, off = GAP;

	sroce_test_dev_init(test, &f->t);
	f->mr = sroce_get_dma_mr(f->t.pd, access);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->mr));
	f->mem = kunit_kmalloc(test, ARENA, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->mem);
	memset(f->mem, SENTINEL, ARENA);
	for (k = 0; k < ARRAY_SIZE(sge_len); k++) {
		f->sge[k].addr = (uintptr_t)f->mem + off;
		f->sge[k].length = sge_len[k];
		f->sge[k].lkey = f->mr->lkey;
		off += sge_len[k] + GAP;
	}
	sroce_key_cache_init(&f->kc);
	sroce_cursor_init(&f->cur, 1000 + 1500 + 700);
}

/* Drop the cache's reference, then the MR: the device is empty again. */
static void fixture_done(struct kunit *test, struct fixture *f,
			 struct sk_buff *skb)
{
	kfree_skb(skb);
	sroce_key_cache_flush(&f->kc);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(f->mr, NULL), 0);
	sroce_test_dev_check_empty(test, &f->t);
}

static int scatter(struct fixture *f, struct sk_buff *skb, u32 from, u32 len)
{
	return sroce_copy_skb(f->t.sdev, f->t.pd, &f->kc, f->sge,
			      ARRAY_SIZE(f->sge), &f->cur, skb, HDR + from, len);
}

/*
 * Payload bytes [0, @moved) fill the SGEs in order; every other byte of
 * the arena is SENTINEL. Returns the arena offset of the first wrong
 * byte, or ARENA.
 */
static u32 first_wrong(const struct fixture *f, u32 moved)
{
	u32 k, i, g = 0, base;
	u8 want;

	for (i = 0; i < ARENA; i++) {
		want = SENTINEL;
		for (k = 0, g = 0; k < ARRAY_SIZE(sge_len); g += sge_len[k++]) {
			base = f->sge[k].addr - (uintptr_t)f->mem;
			if (i >= base && i < base + sge_len[k] &&
			    g + i - base < moved)
				want = pattern(g + i - base);
		}
		if (f->mem[i] != want)
			return i;
	}
	return ARENA;
}

/* Each shape scatters like a linear packet, in one call or two. */
static void copy_skb_shape_test(struct kunit *test)
{
	const struct shape_case *t = test->param_value;
	struct sk_buff *skb = packet(test, t->shape);
	struct fixture f;

	fixture_init(test, &f, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, scatter(&f, skb, 0, t->first), 0);
	if (t->first < PAYLOAD)
		KUNIT_EXPECT_EQ(test, scatter(&f, skb, t->first,
					      PAYLOAD - t->first), 0);
	KUNIT_EXPECT_EQ(test, first_wrong(&f, PAYLOAD), (u32)ARENA);
	/* 3,000 bytes: all of SGEs 0 and 1, 500 of SGE 2 */
	KUNIT_EXPECT_EQ(test, f.cur.cur_sge, 2U);
	KUNIT_EXPECT_EQ(test, f.cur.sge_offset, 500U);
	KUNIT_EXPECT_EQ(test, f.cur.resid, 200U);
	fixture_done(test, &f, skb);
}

/*
 * A bad lkey in the second SGE stops the scatter there, even when the
 * failing SGE's bytes come from a later piece of the packet: the first
 * SGE is filled, the cursor names the failing SGE at offset 0, and
 * nothing else is written.
 */
static void copy_skb_bad_key_test(struct kunit *test)
{
	struct sk_buff *skb = packet(test, FRAGS_AND_LIST);
	struct fixture f;

	fixture_init(test, &f, IB_ACCESS_LOCAL_WRITE);
	f.sge[1].lkey ^= 0x100;
	KUNIT_EXPECT_EQ(test, scatter(&f, skb, 0, PAYLOAD), -EINVAL);
	KUNIT_EXPECT_EQ(test, first_wrong(&f, 1000), (u32)ARENA);
	KUNIT_EXPECT_EQ(test, f.cur.cur_sge, 1U);
	KUNIT_EXPECT_EQ(test, f.cur.sge_offset, 0U);
	KUNIT_EXPECT_EQ(test, f.cur.resid, 3200U - 1000);
	fixture_done(test, &f, skb);
}

/* Asking for more bytes than the packet holds moves none of them. */
static void copy_skb_short_test(struct kunit *test)
{
	const struct shape_case *t = test->param_value;
	struct sk_buff *skb = packet(test, t->shape);
	struct fixture f;

	fixture_init(test, &f, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, scatter(&f, skb, 0, PAYLOAD + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, scatter(&f, skb, PAYLOAD + 1, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, first_wrong(&f, 0), (u32)ARENA);
	KUNIT_EXPECT_EQ(test, f.cur.resid, 3200U);
	fixture_done(test, &f, skb);
}

/* A WRITE's payload in pieces lands at its address in one MR. */
static void mr_copy_skb_test(struct kunit *test)
{
	const struct shape_case *t = test->param_value;
	struct sk_buff *skb = packet(test, t->shape);
	struct sroce_mr *mr;
	struct fixture f;
	u32 i;

	fixture_init(test, &f, IB_ACCESS_LOCAL_WRITE);
	mr = to_sroce_mr(f.mr);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, (uintptr_t)f.mem + 77,
						skb, HDR, PAYLOAD), 0);
	for (i = 0; i < ARENA; i++)
		if (f.mem[i] != (i >= 77 && i < 77 + PAYLOAD ?
				 pattern(i - 77) : SENTINEL))
			break;
	KUNIT_EXPECT_EQ(test, i, (u32)ARENA);
	/* nothing to move is no access at all */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(mr, 0, skb, HDR + PAYLOAD, 0),
			0);
	fixture_done(test, &f, skb);
}

/* Without local write nothing is written, whatever the packet's shape. */
static void mr_copy_skb_read_only_test(struct kunit *test)
{
	const struct shape_case *t = test->param_value;
	struct sk_buff *skb = packet(test, t->shape);
	struct fixture f;

	fixture_init(test, &f, 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy_skb(to_sroce_mr(f.mr),
						(uintptr_t)f.mem + 77, skb,
						HDR, PAYLOAD), -EACCES);
	KUNIT_EXPECT_EQ(test, first_wrong(&f, 0), (u32)ARENA);
	fixture_done(test, &f, skb);
}

static struct kunit_case sroce_copy_skb_test_cases[] = {
	KUNIT_CASE_PARAM(copy_skb_shape_test, shape_gen_params),
	KUNIT_CASE(copy_skb_bad_key_test),
	KUNIT_CASE_PARAM(copy_skb_short_test, shape_gen_params),
	KUNIT_CASE_PARAM(mr_copy_skb_test, shape_gen_params),
	KUNIT_CASE_PARAM(mr_copy_skb_read_only_test, shape_gen_params),
	{}
};

static struct kunit_suite sroce_copy_skb_test_suite = {
	.name = "sroce_copy_skb",
	.test_cases = sroce_copy_skb_test_cases,
};

kunit_test_suites(&sroce_copy_skb_test_suite);
