// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the SGE cursor (sroce_copy.[ch]).
 *
 * The two walkthroughs of the design chapters are replayed with their own
 * numbers: a 7,680-byte SEND gathered from 1 KiB (MR 1), 6 KiB (MR 2) and
 * 512 B (MR 1 again) at a 4,096-byte MTU, and the same SEND scattered
 * into a 2 KiB (MR 3) and an 8 KiB (MR 4) receive buffer. The MRs are
 * fast-reg MRs over separately allocated pages, so copies cross real page
 * boundaries, on a fake unregistered device; the edge cases use a DMA MR
 * over a kmalloc'd arena. Memory that must stay untouched is filled with
 * a sentinel byte first; payload byte i of a message is pattern(i).
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "core/sroce_dev.h"
#include "mem/sroce_copy.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "test_util.h"

#define SENTINEL	0xa5
#define GATHER		SROCE_COPY_FROM_MR
#define SCATTER		SROCE_COPY_TO_MR
#define ACC_LW		IB_ACCESS_LOCAL_WRITE

static u8 pattern(u32 i)
{
	return (u8)(i * 13 + 7);
}

/* ---- a fake device and its MRs ------------------------------------------- */

struct fake {
	struct sroce_test_dev t;
	struct sroce_dev *sdev;
	struct ib_pd *pd;
	struct ib_pd *pd2;
	struct sroce_key_cache kc;
	struct sroce_sge_cursor cur;
};

static void fake_init(struct kunit *test, struct fake *f)
{
	sroce_test_dev_init(test, &f->t);
	f->sdev = f->t.sdev;
	f->pd = f->t.pd;
	f->pd2 = f->t.pd2;
	sroce_key_cache_init(&f->kc);
}

/* The cache is flushed and every MR deregistered: nothing is left. */
static void fake_done(struct kunit *test, struct fake *f)
{
	sroce_test_dev_check_empty(test, &f->t);
}

static int fake_copy(struct fake *f, const struct rxe_sge *sges, u32 num_sge,
		     void *buf, u32 len, enum sroce_copy_dir dir)
{
	return sroce_copy_data(f->sdev, f->pd, &f->kc, sges, num_sge, &f->cur,
			       buf, len, dir);
}

static void expect_cursor(struct kunit *test, const struct sroce_sge_cursor *cur,
			  u32 sge, u32 off, u32 resid)
{
	KUNIT_EXPECT_EQ(test, cur->cur_sge, sge);
	KUNIT_EXPECT_EQ(test, cur->sge_offset, off);
	KUNIT_EXPECT_EQ(test, cur->resid, resid);
}

/* sroce_test_mr_create() fills its pages with SENTINEL. */
static_assert(SENTINEL == SROCE_TEST_SENTINEL);

static u8 *tmr_at(struct sroce_test_mr *m, u32 off)
{
	return page_address(m->page[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

/* References on the MR besides the registration's own. */
static unsigned int tmr_extra_refs(struct sroce_test_mr *m)
{
	return kref_read(&to_sroce_mr(m->ibmr)->ref) - 1;
}

static struct rxe_sge tmr_sge(struct sroce_test_mr *m, u32 off, u32 len)
{
	struct rxe_sge sge = {
		.addr = m->ibmr->iova + off,
		.length = len,
		.lkey = m->ibmr->lkey,
	};

	return sge;
}

/* [off, off + len) of the MR := message bytes first, first + 1, ... */
static void tmr_fill(struct sroce_test_mr *m, u32 off, u32 len, u32 first)
{
	u32 i;

	for (i = 0; i < len; i++)
		*tmr_at(m, off + i) = pattern(first + i);
}

/* Does [off, off + len) hold message bytes first, first + 1, ...? */
static bool tmr_holds(struct sroce_test_mr *m, u32 off, u32 len, u32 first)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*tmr_at(m, off + i) != pattern(first + i))
			return false;
	return true;
}

static bool tmr_untouched(struct sroce_test_mr *m, u32 off, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*tmr_at(m, off + i) != SENTINEL)
			return false;
	return true;
}

static bool buf_holds(const u8 *buf, u32 len, u32 first)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern(first + i))
			return false;
	return true;
}

static bool buf_untouched(const u8 *buf, u32 len)
{
	return !memchr_inv(buf, SENTINEL, len);
}

static u8 *pattern_buf(struct kunit *test, u32 len)
{
	u8 *buf = kunit_kmalloc(test, len, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < len; i++)
		buf[i] = pattern(i);
	return buf;
}

static u8 *sentinel_buf(struct kunit *test, u32 len)
{
	u8 *buf = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf, SENTINEL, len);
	return buf;
}

/* ---- packet sizing -------------------------------------------------------- */

static void pkt_payload_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(7680, 4096), 4096U);
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(3584, 4096), 3584U);
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(4096, 4096), 4096U);
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(1, 256), 1U);
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(0, 1024), 0U);
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(U32_MAX, 2048), 2048U);
}

/* ---- the gather walkthrough ------------------------------------------------ */

static void gather_walkthrough_test(struct kunit *test)
{
	struct rxe_sge sges[3];
	struct sroce_test_mr m1, m2;
	struct fake f;
	u8 *out;
	u32 n;

	fake_init(test, &f);
	/* Gather is a local read: MRs without any access bit will do. */
	sroce_test_mr_create(test, f.pd, &m1, 4096, 0);
	sroce_test_mr_create(test, f.pd, &m2, 8192, 0);
	sges[0] = tmr_sge(&m1, 0x100, 1024);
	sges[1] = tmr_sge(&m2, 0x300, 6144);
	sges[2] = tmr_sge(&m1, 0x800, 512);
	tmr_fill(&m1, 0x100, 1024, 0);
	tmr_fill(&m2, 0x300, 6144, 1024);
	tmr_fill(&m1, 0x800, 512, 7168);
	out = sentinel_buf(test, 8192);
	sroce_cursor_init(&f.cur, 7680);

	/* Packet 1: all of SGE 0, then 3,072 bytes into SGE 1. */
	n = sroce_pkt_payload(f.cur.resid, 4096);
	KUNIT_EXPECT_EQ(test, n, 4096U);
	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 3, out, n, GATHER), 0);
	expect_cursor(test, &f.cur, 1, 3072, 3584);
	KUNIT_EXPECT_EQ(test, f.kc.lookups, 2ULL);
	KUNIT_EXPECT_EQ(test, f.kc.hits, 0ULL);

	/* Packet 2: the rest of SGE 1, then SGE 2; resid 0 at its end. */
	n = sroce_pkt_payload(f.cur.resid, 4096);
	KUNIT_EXPECT_EQ(test, n, 3584U);
	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 3, out + 4096, n, GATHER), 0);
	expect_cursor(test, &f.cur, 3, 0, 0);
	/* SGE 1 again and SGE 2 (MR 1's key) came from the cache. */
	KUNIT_EXPECT_EQ(test, f.kc.lookups, 4ULL);
	KUNIT_EXPECT_EQ(test, f.kc.hits, 2ULL);

	KUNIT_EXPECT_TRUE(test, buf_holds(out, 7680, 0));
	KUNIT_EXPECT_TRUE(test, buf_untouched(out + 7680, 8192 - 7680));
	KUNIT_EXPECT_EQ(test, sroce_pkt_payload(f.cur.resid, 4096), 0U);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 3, out, 1, GATHER), -ENOSPC);

	/* The cache holds one reference per MR until it is flushed. */
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m1), 1U);
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m2), 1U);
	sroce_key_cache_flush(&f.kc);
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m1), 0U);
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m2), 0U);

	sroce_test_mr_destroy(test, &m1);
	sroce_test_mr_destroy(test, &m2);
	fake_done(test, &f);
}

/* ---- the scatter walkthrough ----------------------------------------------- */

static void scatter_walkthrough_test(struct kunit *test)
{
	struct rxe_sge sges[2];
	struct sroce_test_mr m3, m4;
	struct fake f;
	u8 *in;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &m3, 4096, ACC_LW);
	sroce_test_mr_create(test, f.pd, &m4, 12288, ACC_LW);
	sges[0] = tmr_sge(&m3, 0x400, 2048);
	sges[1] = tmr_sge(&m4, 0x100, 8192);
	in = pattern_buf(test, 7680);
	sroce_cursor_init(&f.cur, 2048 + 8192);

	/* SEND_FIRST, 4,096 bytes: SGE 0 filled, the rest at SGE 1's start. */
	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 2, in, 4096, SCATTER), 0);
	expect_cursor(test, &f.cur, 1, 2048, 6144);
	KUNIT_EXPECT_TRUE(test, tmr_holds(&m3, 0x400, 2048, 0));
	KUNIT_EXPECT_TRUE(test, tmr_holds(&m4, 0x100, 2048, 2048));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m4, 0x100 + 2048, 6144));

	/* SEND_LAST, 3,584 bytes: at offset 2,048 of SGE 1. */
	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 2, in + 4096, 3584, SCATTER),
			0);
	expect_cursor(test, &f.cur, 1, 5632, 2560);
	KUNIT_EXPECT_EQ(test, 2048 + 8192 - f.cur.resid, 7680U);
	KUNIT_EXPECT_TRUE(test, tmr_holds(&m4, 0x100 + 2048, 3584, 4096));
	/* The last 2,560 bytes of SGE 1, and all around the SGEs, untouched. */
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m4, 0x100 + 5632, 2560));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m4, 0, 0x100));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m4, 0x2100, 12288 - 0x2100));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m3, 0, 0x400));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m3, 0xc00, 4096 - 0xc00));
	KUNIT_EXPECT_EQ(test, f.kc.lookups, 3ULL);
	KUNIT_EXPECT_EQ(test, f.kc.hits, 1ULL);

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &m3);
	sroce_test_mr_destroy(test, &m4);
	fake_done(test, &f);
}

/* A SEND larger than all the receive buffers is refused, not truncated. */
static void scatter_too_long_test(struct kunit *test)
{
	struct rxe_sge sges[2];
	struct sroce_test_mr m3, m4;
	struct fake f;
	u8 *in;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &m3, 4096, ACC_LW);
	sroce_test_mr_create(test, f.pd, &m4, 12288, ACC_LW);
	sges[0] = tmr_sge(&m3, 0x400, 2048);
	sges[1] = tmr_sge(&m4, 0x100, 8192);
	in = pattern_buf(test, 10340);
	sroce_cursor_init(&f.cur, 2048 + 8192);

	/* 10,340 bytes at MTU 4096: the third packet no longer fits. */
	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 2, in, 4096, SCATTER), 0);
	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 2, in + 4096, 4096, SCATTER),
			0);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 2, in + 8192, 2148, SCATTER),
			-ENOSPC);
	expect_cursor(test, &f.cur, 2, 0, 0);
	/* What fitted is there; nothing beyond the buffers. */
	KUNIT_EXPECT_TRUE(test, tmr_holds(&m3, 0x400, 2048, 0));
	KUNIT_EXPECT_TRUE(test, tmr_holds(&m4, 0x100, 8192, 2048));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m3, 0xc00, 4096 - 0xc00));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m4, 0x2100, 12288 - 0x2100));

	/* The same in one go. */
	sroce_cursor_init(&f.cur, 2048 + 8192);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 2, in, 10340, SCATTER),
			-ENOSPC);
	expect_cursor(test, &f.cur, 2, 0, 0);
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m4, 0x2100, 12288 - 0x2100));

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &m3);
	sroce_test_mr_destroy(test, &m4);
	fake_done(test, &f);
}

/* ---- layouts over a DMA MR -------------------------------------------------- */

#define ARENA_SIZE	16384
#define ARENA_GAP	16
#define MAX_LAYOUT_SGE	6

/* A DMA MR and an arena in which SGEs are laid out with gaps between. */
struct arena {
	struct ib_mr *ibmr;
	u8 *mem;
	u8 *want;	/* what mem should hold after a scatter */
	struct rxe_sge sge[SROCE_MAX_SGE];
	u32 num_sge;
};

static struct arena *arena_create(struct kunit *test, struct fake *f,
				  int access)
{
	struct arena *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, a);
	a->ibmr = sroce_get_dma_mr(f->pd, access);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a->ibmr));
	a->mem = sentinel_buf(test, ARENA_SIZE);
	a->want = sentinel_buf(test, ARENA_SIZE);
	return a;
}

static void arena_layout(struct kunit *test, struct arena *a, const u32 *lens,
			 u32 num_sge)
{
	u32 off = ARENA_GAP, k;

	for (k = 0; k < num_sge; k++) {
		a->sge[k].addr = (uintptr_t)a->mem + off;
		a->sge[k].length = lens[k];
		a->sge[k].lkey = a->ibmr->lkey;
		off += lens[k] + ARENA_GAP;
	}
	KUNIT_ASSERT_LE(test, off, ARENA_SIZE);
	a->num_sge = num_sge;
}

/* Byte @i of SGE @k, in @mem (a->mem or a->want). */
static u8 *arena_at(struct arena *a, u8 *mem, u32 k, u32 i)
{
	return mem + (a->sge[k].addr - (uintptr_t)a->mem) + i;
}

/* Fill the SGEs, in order, with message bytes 0, 1, ... */
static void arena_fill(struct arena *a)
{
	u32 k, i, g = 0;

	for (k = 0; k < a->num_sge; k++)
		for (i = 0; i < a->sge[k].length; i++)
			*arena_at(a, a->mem, k, i) = pattern(g++);
}

/*
 * After a scatter of @moved bytes: message bytes 0 .. @moved - 1 fill the
 * SGEs in order; the rest of the SGEs and the gaps are still SENTINEL.
 */
static bool arena_scattered(struct arena *a, u32 moved)
{
	u32 k, i, g = 0;

	memset(a->want, SENTINEL, ARENA_SIZE);
	for (k = 0; k < a->num_sge; k++)
		for (i = 0; i < a->sge[k].length && g < moved; i++)
			*arena_at(a, a->want, k, i) = pattern(g++);
	return !memcmp(a->mem, a->want, ARENA_SIZE);
}

static void arena_destroy(struct kunit *test, struct arena *a)
{
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(a->ibmr, NULL), 0);
}

struct layout_case {
	const char *name;
	enum sroce_copy_dir dir;
	u32 num_sge;
	u32 lens[MAX_LAYOUT_SGE];
	u32 length;		/* sroce_cursor_init() */
	u32 len;		/* bytes asked for, in one call */
	int err;
	u32 cur_sge;		/* the cursor afterwards */
	u32 sge_offset;
	u32 resid;
	u64 lookups;		/* translations done */
};

static const struct layout_case layout_cases[] = {
	{ "gather, leading zero-length SGE", GATHER, 3, { 0, 100, 50 },
	  150, 150, 0, 3, 0, 0, 2 },
	{ "gather, middle zero-length SGE", GATHER, 3, { 100, 0, 50 },
	  150, 150, 0, 3, 0, 0, 2 },
	{ "gather, trailing zero-length SGE", GATHER, 3, { 100, 50, 0 },
	  150, 150, 0, 2, 0, 0, 2 },
	{ "scatter, zero-length SGEs all over", SCATTER, 5,
	  { 0, 10, 0, 20, 0 }, 30, 30, 0, 4, 0, 0, 2 },
	{ "gather, exact fit", GATHER, 2, { 64, 64 }, 128, 128, 0, 2, 0, 0, 2 },
	{ "scatter, exact fit", SCATTER, 2, { 64, 64 }, 128, 128,
	  0, 2, 0, 0, 2 },
	{ "scatter, message shorter than the buffers", SCATTER, 2, { 64, 64 },
	  128, 100, 0, 1, 36, 28, 2 },
	{ "scatter, one byte more than the buffers", SCATTER, 2, { 64, 64 },
	  128, 129, -ENOSPC, 2, 0, 0, 2 },
	{ "scatter, only zero-length SGEs", SCATTER, 2, { 0, 0 },
	  0, 1, -ENOSPC, 0, 0, 0, 0 },
	{ "gather, length 0", GATHER, 2, { 64, 64 }, 128, 0, 0, 0, 0, 128, 0 },
	{ "gather, length 0 of nothing", GATHER, 0, { }, 0, 0, 0, 0, 0, 0, 0 },
	{ "gather, SGEs longer than the message", GATHER, 2, { 64, 64 },
	  100, 100, 0, 1, 36, 0, 2 },
	{ "gather, more than the message asked for", GATHER, 2, { 64, 64 },
	  100, 101, -ENOSPC, 1, 36, 0, 2 },
	{ "gather, SGEs shorter than the message", GATHER, 2, { 64, 64 },
	  200, 200, -ENOSPC, 2, 0, 72, 2 },
};

static void layout_desc(const struct layout_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(layout, layout_cases, layout_desc);

static void layout_test(struct kunit *test)
{
	const struct layout_case *t = test->param_value;
	struct arena *a;
	u8 *in, *out;
	struct fake f;
	u32 moved;

	fake_init(test, &f);
	a = arena_create(test, &f, ACC_LW);
	arena_layout(test, a, t->lens, t->num_sge);
	in = pattern_buf(test, 256);
	out = sentinel_buf(test, 256);
	if (t->dir == GATHER)
		arena_fill(a);
	sroce_cursor_init(&f.cur, t->length);

	KUNIT_EXPECT_EQ(test, fake_copy(&f, a->sge, a->num_sge,
					t->dir == GATHER ? out : in, t->len,
					t->dir), t->err);
	expect_cursor(test, &f.cur, t->cur_sge, t->sge_offset, t->resid);
	KUNIT_EXPECT_EQ(test, f.kc.lookups, t->lookups);

	moved = t->length - t->resid;
	if (t->dir == GATHER) {
		KUNIT_EXPECT_TRUE(test, buf_holds(out, moved, 0));
		KUNIT_EXPECT_TRUE(test, buf_untouched(out + moved, 256 - moved));
	} else {
		KUNIT_EXPECT_TRUE(test, arena_scattered(a, moved));
	}
	sroce_key_cache_flush(&f.kc);
	arena_destroy(test, a);
	fake_done(test, &f);
}

/* ---- one message at every path MTU ------------------------------------------ */

struct mtu_case {
	const char *name;
	u32 mtu;
	u32 packets;	/* of a 10,000-byte message */
	u32 last;	/* bytes in the last one */
};

static const struct mtu_case mtu_cases[] = {
	{ "256", 256, 40, 16 },
	{ "512", 512, 20, 272 },
	{ "1024", 1024, 10, 784 },
	{ "2048", 2048, 5, 1808 },
	{ "4096", 4096, 3, 1808 },
};

static void mtu_desc(const struct mtu_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mtu, mtu_cases, mtu_desc);

/* Send @a's message packet by packet; scatter each packet into @b. */
static void mtu_relay(struct kunit *test, struct fake *f, struct arena *a,
		      struct arena *b, const struct mtu_case *t, u8 *pkt)
{
	struct sroce_sge_cursor rx;
	u32 n, sum = 0, packets = 0, last = 0;
	int err;

	sroce_cursor_init(&f->cur, 10000);
	sroce_cursor_init(&rx, 10000);
	while (f->cur.resid && packets < 100) {
		n = sroce_pkt_payload(f->cur.resid, t->mtu);
		KUNIT_EXPECT_GT(test, n, 0U);
		KUNIT_EXPECT_LE(test, n, t->mtu);
		KUNIT_ASSERT_EQ(test, fake_copy(f, a->sge, a->num_sge, pkt, n,
						GATHER), 0);
		KUNIT_EXPECT_TRUE(test, buf_holds(pkt, n, sum));
		err = sroce_copy_data(f->sdev, f->pd, NULL, b->sge, b->num_sge,
				      &rx, pkt, n, SCATTER);
		KUNIT_ASSERT_EQ(test, err, 0);
		sum += n;
		packets++;
		last = n;
	}
	KUNIT_EXPECT_EQ(test, sum, 10000U);
	KUNIT_EXPECT_EQ(test, packets, t->packets);
	KUNIT_EXPECT_EQ(test, last, t->last);
	expect_cursor(test, &f->cur, 5, 0, 0);
	KUNIT_EXPECT_EQ(test, rx.cur_sge, 3U);
	KUNIT_EXPECT_EQ(test, rx.resid, 0U);
}

static void mtu_test(struct kunit *test)
{
	static const u32 tx_lens[] = { 1000, 3000, 0, 4000, 2000 };
	static const u32 rx_lens[] = { 3333, 0, 6667 };
	const struct mtu_case *t = test->param_value;
	struct arena *a, *b;
	struct fake f;
	u8 *pkt;

	fake_init(test, &f);
	a = arena_create(test, &f, 0);
	b = arena_create(test, &f, ACC_LW);
	arena_layout(test, a, tx_lens, ARRAY_SIZE(tx_lens));
	arena_layout(test, b, rx_lens, ARRAY_SIZE(rx_lens));
	arena_fill(a);
	pkt = kunit_kmalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkt);

	mtu_relay(test, &f, a, b, t, pkt);
	KUNIT_EXPECT_TRUE(test, arena_scattered(b, 10000));
	/* Without a cache the references went at once. */
	KUNIT_EXPECT_EQ(test, kref_read(&to_sroce_mr(b->ibmr)->ref), 1U);

	sroce_key_cache_flush(&f.kc);
	arena_destroy(test, a);
	arena_destroy(test, b);
	fake_done(test, &f);
}

/* ---- 63 one-byte SGEs ------------------------------------------------------- */

static void max_sge_test(struct kunit *test)
{
	u32 lens[SROCE_MAX_SGE];
	struct arena *a;
	struct fake f;
	u8 *in, *out;
	u32 k;

	fake_init(test, &f);
	a = arena_create(test, &f, ACC_LW);
	for (k = 0; k < SROCE_MAX_SGE; k++)
		lens[k] = 1;
	arena_layout(test, a, lens, SROCE_MAX_SGE);
	in = pattern_buf(test, 64);
	out = sentinel_buf(test, 64);

	/* Scatter 63 bytes: one per SGE, the gaps untouched. */
	sroce_cursor_init(&f.cur, 63);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, a->sge, 63, in, 63, SCATTER), 0);
	expect_cursor(test, &f.cur, 63, 0, 0);
	KUNIT_EXPECT_TRUE(test, arena_scattered(a, 63));
	/* One translation per SGE, all but the first from the cache. */
	KUNIT_EXPECT_EQ(test, f.kc.lookups, 63ULL);
	KUNIT_EXPECT_EQ(test, f.kc.hits, 62ULL);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, a->sge, 63, in, 1, SCATTER),
			-ENOSPC);

	/* Gather them back. */
	sroce_cursor_init(&f.cur, 63);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, a->sge, 63, out, 63, GATHER), 0);
	expect_cursor(test, &f.cur, 63, 0, 0);
	KUNIT_EXPECT_TRUE(test, buf_holds(out, 63, 0));
	KUNIT_EXPECT_EQ(test, out[63], SENTINEL);

	sroce_key_cache_flush(&f.kc);
	arena_destroy(test, a);
	fake_done(test, &f);
}

/* ---- refusals --------------------------------------------------------------- */

static void access_test(struct kunit *test)
{
	struct rxe_sge sges[2];
	struct sroce_test_mr rw, ro;
	u8 *in, *out;
	struct fake f;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &rw, 4096, ACC_LW);
	sroce_test_mr_create(test, f.pd, &ro, 4096, IB_ACCESS_REMOTE_READ);
	in = pattern_buf(test, 64);
	out = sentinel_buf(test, 64);

	/* Scatter needs local write; gather does not. */
	sges[0] = tmr_sge(&ro, 0, 32);
	sroce_cursor_init(&f.cur, 32);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 1, in, 32, SCATTER), -EACCES);
	expect_cursor(test, &f.cur, 0, 0, 32);
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&ro, 0, 4096));
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 1, out, 32, GATHER), 0);

	/* The writable SGE before it is written, the cursor stops at it. */
	sges[0] = tmr_sge(&rw, 0, 10);
	sges[1] = tmr_sge(&ro, 0, 22);
	sroce_cursor_init(&f.cur, 32);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 2, in, 32, SCATTER), -EACCES);
	expect_cursor(test, &f.cur, 1, 0, 22);
	KUNIT_EXPECT_TRUE(test, tmr_holds(&rw, 0, 10, 0));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&ro, 0, 4096));

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &rw);
	sroce_test_mr_destroy(test, &ro);
	fake_done(test, &f);
}

static void bad_key_test(struct kunit *test)
{
	struct rxe_sge sge;
	struct sroce_test_mr mine, other;
	struct fake f;
	u8 *out;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &mine, 4096, ACC_LW);
	sroce_test_mr_create(test, f.pd2, &other, 4096, ACC_LW);
	out = sentinel_buf(test, 64);

	/* An MR of another PD, in both directions. */
	sge = tmr_sge(&other, 0, 64);
	sroce_cursor_init(&f.cur, 64);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 64, GATHER), -EINVAL);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 64, SCATTER),
			-EINVAL);
	expect_cursor(test, &f.cur, 0, 0, 64);
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&other, 0, 4096));
	/* and the key cache keeps no reference to it */
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&other), 0U);

	/* A stale variant of a good key, and a key nobody has. */
	sge = tmr_sge(&mine, 0, 64);
	sge.lkey ^= 1;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 64, GATHER), -EINVAL);
	sge.lkey = sroce_key_compose(0xfedcba, 0x42);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 64, GATHER), -EINVAL);
	sge.lkey = 0;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 64, GATHER), -EINVAL);
	KUNIT_EXPECT_TRUE(test, buf_untouched(out, 64));

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &mine);
	sroce_test_mr_destroy(test, &other);
	fake_done(test, &f);
}

/* Fast-register @m again under the next key; returns the key. */
static u32 tmr_rekey(struct kunit *test, struct fake *f, struct sroce_test_mr *m)
{
	u32 key = m->ibmr->lkey;

	key = sroce_key_compose(sroce_key_index(key),
				sroce_key_variant(key) + 1);
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(f->pd, m->ibmr, key, ACC_LW),
			IB_WC_SUCCESS);
	m->ibmr->lkey = key;
	m->ibmr->rkey = key;
	return key;
}

static void invalidated_test(struct kunit *test)
{
	struct rxe_sge sge;
	struct fake f;
	struct sroce_test_mr m;
	u32 old_key;
	u8 *out;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &m, 8192, ACC_LW);
	out = sentinel_buf(test, 8192);
	sge = tmr_sge(&m, 0, 8192);
	old_key = sge.lkey;

	/* First packet fine, then the MR is invalidated mid-message. */
	sroce_cursor_init(&f.cur, 8192);
	KUNIT_ASSERT_EQ(test, fake_copy(&f, &sge, 1, out, 3072, GATHER), 0);
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m), 1U);
	KUNIT_ASSERT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, old_key),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 3072, GATHER),
			-EINVAL);
	expect_cursor(test, &f.cur, 0, 3072, 5120);
	/* The cache let go of the invalid MR at once. */
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m), 0U);

	/* Registered again under a new key: the old one stays dead. */
	sge.lkey = tmr_rekey(test, &f, &m);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 1024, GATHER), 0);
	expect_cursor(test, &f.cur, 0, 4096, 4096);
	sge.lkey = old_key;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 1024, GATHER),
			-EINVAL);

	/* A cached key goes stale when the MR is re-keyed behind its back. */
	old_key = m.ibmr->lkey;
	KUNIT_ASSERT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, old_key),
			IB_WC_SUCCESS);
	tmr_rekey(test, &f, &m);
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m), 1U);
	sge.lkey = old_key;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, &sge, 1, out, 1024, GATHER),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, tmr_extra_refs(&m), 0U);
	expect_cursor(test, &f.cur, 0, 4096, 4096);

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &m);
	fake_done(test, &f);
}

static void bounds_test(struct kunit *test)
{
	struct rxe_sge sges[2];
	struct fake f;
	struct sroce_test_mr m;
	u8 *in;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &m, 4096, ACC_LW);
	in = pattern_buf(test, 64);
	sroce_cursor_init(&f.cur, 64);

	/* Runs past the end: refused even for the bytes that are inside. */
	sges[0] = tmr_sge(&m, 4096 - 10, 20);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 1, in, 5, SCATTER), -EFAULT);
	/* Wholly past the end; before the start; wrapping past 2^64. */
	sges[0] = tmr_sge(&m, 4096, 1);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 1, in, 1, GATHER), -EFAULT);
	sges[0].addr = m.ibmr->iova - 1;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 1, in, 1, GATHER), -EFAULT);
	sges[0].addr = U64_MAX - 3;
	sges[0].length = 8;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 1, in, 8, GATHER), -EFAULT);
	expect_cursor(test, &f.cur, 0, 0, 64);
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m, 0, 4096));

	/* A good SGE, then a bad one: the first is written. */
	sges[0] = tmr_sge(&m, 0, 10);
	sges[1] = tmr_sge(&m, 4090, 54);
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 2, in, 64, SCATTER), -EFAULT);
	expect_cursor(test, &f.cur, 1, 0, 54);
	KUNIT_EXPECT_TRUE(test, tmr_holds(&m, 0, 10, 0));
	KUNIT_EXPECT_TRUE(test, tmr_untouched(&m, 10, 4096 - 10));

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &m);
	fake_done(test, &f);
}

/* An SGE rewritten between packets (a user ring) is read afresh. */
static void rewritten_sge_test(struct kunit *test)
{
	struct rxe_sge sges[2];
	struct fake f;
	struct sroce_test_mr m;
	u8 *out;

	fake_init(test, &f);
	sroce_test_mr_create(test, f.pd, &m, 4096, 0);
	tmr_fill(&m, 0, 100, 0);
	/* Beyond SGE 1 too, so that a byte moved too many would show. */
	tmr_fill(&m, 1000, 300, 100);
	sges[0] = tmr_sge(&m, 0, 100);
	sges[1] = tmr_sge(&m, 1000, 100);
	out = sentinel_buf(test, 256);
	sroce_cursor_init(&f.cur, 200);

	KUNIT_ASSERT_EQ(test, fake_copy(&f, sges, 2, out, 60, GATHER), 0);
	expect_cursor(test, &f.cur, 0, 60, 140);
	/* SGE 0 shrinks below the cursor: it counts as used up. */
	sges[0].length = 50;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 2, out + 60, 40, GATHER), 0);
	expect_cursor(test, &f.cur, 1, 40, 100);
	KUNIT_EXPECT_TRUE(test, buf_holds(out + 60, 40, 100));
	/* SGE 1 grows (inside the MR): no more than the message moves. */
	sges[1].length = 2000;
	KUNIT_EXPECT_EQ(test, fake_copy(&f, sges, 2, out + 100, 120, GATHER),
			-ENOSPC);
	expect_cursor(test, &f.cur, 1, 140, 0);
	KUNIT_EXPECT_TRUE(test, buf_holds(out + 100, 100, 140));
	KUNIT_EXPECT_TRUE(test, buf_untouched(out + 200, 56));

	sroce_key_cache_flush(&f.kc);
	sroce_test_mr_destroy(test, &m);
	fake_done(test, &f);
}

static struct kunit_case sroce_copy_test_cases[] = {
	KUNIT_CASE(pkt_payload_test),
	KUNIT_CASE(gather_walkthrough_test),
	KUNIT_CASE(scatter_walkthrough_test),
	KUNIT_CASE(scatter_too_long_test),
	KUNIT_CASE_PARAM(layout_test, layout_gen_params),
	KUNIT_CASE_PARAM(mtu_test, mtu_gen_params),
	KUNIT_CASE(max_sge_test),
	KUNIT_CASE(access_test),
	KUNIT_CASE(bad_key_test),
	KUNIT_CASE(invalidated_test),
	KUNIT_CASE(bounds_test),
	KUNIT_CASE(rewritten_sge_test),
	{}
};

static struct kunit_suite sroce_copy_test_suite = {
	.name = "sroce_copy",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_copy_test_cases,
};

kunit_test_suites(&sroce_copy_test_suite);
