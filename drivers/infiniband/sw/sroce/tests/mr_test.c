// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for sroce memory regions and windows (sroce_mr.[ch],
 * sroce_mw.[ch]).
 *
 * The pure parts (key layout, access flags, page geometry, ranges) are
 * checked against values worked out by hand from the rules: a key is a
 * 24-bit index then an 8-bit variant; IB_ACCESS_* are the uverbs ABI bits
 * (local write 1, remote write 2, remote read 4, remote atomic 8, MW bind
 * 16, zero-based 32, on-demand 64, hugetlb 128, optional 1 << 20 ..
 * 1 << 29). The object tests run the verbs on a fake, unregistered
 * device with real kernel pages: a fast-reg MR is mapped, registered,
 * copied through across page boundaries and invalidated; windows are
 * bound, used through their rkeys and invalidated.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/wait_bit.h>
#include <rdma/ib_pack.h>

#include "core/sroce_dev.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mr_io.h"
#include "mem/sroce_mw.h"
#include "test_util.h"

/* ---- keys --------------------------------------------------------------- */

struct key_case {
	const char *name;
	u32 index;
	u32 variant;
	u32 key;
};

static const struct key_case key_cases[] = {
	{ "smallest index", 1, 0x01, 0x00000101 },
	{ "largest index, variant ff", 0xffffff, 0xff, 0xffffffff },
	{ "middle", 0x123456, 0x78, 0x12345678 },
	{ "variant zero", 0x000abc, 0x00, 0x000abc00 },
	{ "variant above 8 bits is cut", 0x000005, 0x1ab, 0x000005ab },
};

static void key_desc(const struct key_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(key, key_cases, key_desc);

static void key_layout_test(struct kunit *test)
{
	const struct key_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_key_compose(t->index, t->variant), t->key);
	KUNIT_EXPECT_EQ(test, sroce_key_index(t->key), t->index);
	KUNIT_EXPECT_EQ(test, sroce_key_variant(t->key), t->variant & 0xff);
}

struct key_change_case {
	const char *name;
	u32 old_key;
	u32 new_key;
	bool allowed;
};

static const struct key_change_case key_change_cases[] = {
	{ "same key", 0x12345678, 0x12345678, true },
	{ "next variant", 0x12345678, 0x12345679, true },
	{ "variant wraps to zero", 0x000001ff, 0x00000100, true },
	{ "any variant", 0x00abcd01, 0x00abcdfe, true },
	{ "index + 1", 0x12345678, 0x12345778, false },
	{ "top byte differs", 0x12345678, 0x13345678, false },
	{ "index 1 vs 2", 0x00000100, 0x00000200, false },
};

static void key_change_desc(const struct key_change_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(key_change, key_change_cases, key_change_desc);

static void key_change_test(struct kunit *test)
{
	const struct key_change_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_key_same_object(t->old_key, t->new_key),
			t->allowed);
	KUNIT_EXPECT_EQ(test, sroce_key_same_object(t->new_key, t->old_key),
			t->allowed);
}

static void key_first_test(struct kunit *test)
{
	static const u32 indices[] = { 1, 2, 0x7fff, 0x800000, 0xffffff };
	unsigned int i, round;

	for (i = 0; i < ARRAY_SIZE(indices); i++) {
		for (round = 0; round < 64; round++) {
			u32 key = sroce_key_first(indices[i]);

			KUNIT_EXPECT_EQ(test, key >> 8, indices[i]);
			KUNIT_EXPECT_NE(test, key & 0xff, 0U);
		}
	}
}

/* ---- access flags -------------------------------------------------------- */

struct access_case {
	const char *name;
	int access;
	int err;
};

static const struct access_case access_cases[] = {
	{ "none (local read only)", 0, 0 },
	{ "local write", 0x01, 0 },
	{ "remote read", 0x04, 0 },
	{ "mw bind", 0x10, 0 },
	{ "local + remote write", 0x03, 0 },
	{ "local write + remote atomic", 0x09, 0 },
	{ "all known", 0x1f, 0 },
	{ "remote write alone", 0x02, -EINVAL },
	{ "remote atomic alone", 0x08, -EINVAL },
	{ "remote read + write, no local", 0x06, -EINVAL },
	{ "zero based", 0x20, -EINVAL },
	{ "on demand", 0x40, -EOPNOTSUPP },
	{ "on demand + local write", 0x41, -EOPNOTSUPP },
	{ "hugetlb hint", 0x80, 0 },
	{ "relaxed ordering", 1 << 20, 0 },
	{ "last optional bit", 1 << 29, 0 },
	{ "bit 8", 1 << 8, -EINVAL },
	{ "bit 19", 1 << 19, -EINVAL },
	{ "bit 30", 1 << 30, -EINVAL },
	{ "bit 31", (int)BIT(31), -EINVAL },
};

static void access_desc(const struct access_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(access, access_cases, access_desc);

static void access_check_test(struct kunit *test)
{
	const struct access_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_mr_access_check(t->access), t->err);
}

/* ---- page geometry ------------------------------------------------------- */

struct geom_case {
	const char *name;
	u64 start;		/* user address (its page offset matters) */
	u64 length;
	unsigned int page_shift;
	u64 pages;		/* pages the region spans */
	u64 off;		/* a byte offset from the iova */
	u64 index;		/* its page */
	u64 in_page;		/* its offset in that page */
};

static const struct geom_case geom_cases[] = {
	{ "aligned, one page", 0x10000, 0x1000, 12, 1, 0xfff, 0, 0xfff },
	{ "aligned, two pages", 0x10000, 0x1001, 12, 2, 0x1000, 1, 0 },
	{ "unaligned, 32 bytes over a boundary", 0x1000ff0, 0x20, 12, 2,
	  0x10, 1, 0 },
	{ "unaligned, last byte of first page", 0x1000ff0, 0x20, 12, 2,
	  0xf, 0, 0xfff },
	{ "unaligned, one byte", 0x7fff0123, 1, 12, 1, 0, 0, 0x123 },
	{ "unaligned, exactly one page long", 0x1234, 0x1000, 12, 2,
	  0xdcb, 0, 0xfff },
	{ "5 GiB at an odd address", 0x7f0000000123, 5ULL << 30, 12,
	  1310721, (4ULL << 30) + 0x10, 1048576, 0x133 },
	{ "3 GiB, last byte", 0x40000000, 3ULL << 30, 12, 786432,
	  (3ULL << 30) - 1, 786431, 0xfff },
	{ "2 MiB pages", 0x200100, 0x400000, 21, 3, 0x1fff00, 1, 0 },
};

static void geom_desc(const struct geom_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(geom, geom_cases, geom_desc);

static void page_geometry_test(struct kunit *test)
{
	const struct geom_case *t = test->param_value;
	u64 first = t->start & ((1ULL << t->page_shift) - 1);
	u64 index, in_page;

	KUNIT_EXPECT_EQ(test,
			sroce_mr_page_count(t->start, t->length, t->page_shift),
			t->pages);
	sroce_mr_page_pos(first, t->page_shift, t->off, &index, &in_page);
	KUNIT_EXPECT_EQ(test, index, t->index);
	KUNIT_EXPECT_EQ(test, in_page, t->in_page);
}

/* ---- ranges (MR and window bounds) --------------------------------------- */

struct range_case {
	const char *name;
	u64 base;
	u64 size;
	u64 addr;
	u64 len;
	bool inside;
};

static const struct range_case range_cases[] = {
	{ "whole", 0x1000, 0x100, 0x1000, 0x100, true },
	{ "one byte too long", 0x1000, 0x100, 0x1000, 0x101, false },
	{ "starts before", 0x1000, 0x100, 0xfff, 1, false },
	{ "last byte", 0x1000, 0x100, 0x10ff, 1, true },
	{ "empty at the end", 0x1000, 0x100, 0x1100, 0, true },
	{ "past the end", 0x1000, 0x100, 0x1100, 1, false },
	{ "length wraps", 0x1000, 0x100, 0x1080, U64_MAX, false },
	{ "region ends at 2^64", 0xfffffffffffff000ULL, 0x1000,
	  0xffffffffffffff00ULL, 0x100, true },
	{ "one past 2^64", 0xfffffffffffff000ULL, 0x1000,
	  0xffffffffffffff00ULL, 0x101, false },
	{ "DMA MR, top 8 bytes", 0, U64_MAX, U64_MAX - 8, 8, true },
	{ "DMA MR, byte 2^64 - 1", 0, U64_MAX, U64_MAX, 1, false },
	{ "empty region", 0x1000, 0, 0x1000, 1, false },
};

static void range_desc(const struct range_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(range, range_cases, range_desc);

static void range_test(struct kunit *test)
{
	const struct range_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test,
			sroce_range_within(t->base, t->size, t->addr, t->len),
			t->inside);
}

/* ---- a fake device ------------------------------------------------------- */

#define ACC_LW		IB_ACCESS_LOCAL_WRITE
#define ACC_RW		IB_ACCESS_REMOTE_WRITE
#define ACC_RR		IB_ACCESS_REMOTE_READ
#define ACC_RA		IB_ACCESS_REMOTE_ATOMIC
#define ACC_BIND	IB_ACCESS_MW_BIND

struct fake {
	struct sroce_test_dev t;
	struct sroce_dev *sdev;
	struct ib_pd *pd;
	struct ib_pd *pd2;
};

static void fake_init(struct kunit *test, struct fake *f)
{
	sroce_test_dev_init(test, &f->t);
	f->sdev = f->t.sdev;
	f->pd = f->t.pd;
	f->pd2 = f->t.pd2;
}

/* Every object gone: no key left, counts back to zero. */
static void fake_check_empty(struct kunit *test, struct fake *f)
{
	sroce_test_dev_check_empty(test, &f->t);
}

static u8 pattern(u64 i)
{
	return (u8)(i * 7 + 3);
}

/* A lookup returned @got: it must be @want; drop what it returned. */
static void expect_ref(struct kunit *test, struct sroce_mr *got,
		       struct sroce_mr *want)
{
	KUNIT_EXPECT_PTR_EQ(test, got, want);
	if (got)
		sroce_mr_put(got);
}

static void alloc_mr_args_test(struct kunit *test)
{
	struct fake f;

	fake_init(test, &f);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR(sroce_alloc_mr(f.pd, IB_MR_TYPE_SG_GAPS, 4)),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR(sroce_alloc_mr(f.pd, IB_MR_TYPE_MEM_REG, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR(sroce_alloc_mr(f.pd, IB_MR_TYPE_MEM_REG,
					       SROCE_MAX_FAST_REG_PAGES + 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(sroce_get_dma_mr(f.pd, ACC_RW)),
			-EINVAL);
	fake_check_empty(test, &f);
}

/*
 * Three separately allocated pages, mapped as: page 0 from byte 0x100 on,
 * all of page 1, the first 0x200 bytes of page 2.
 */
#define FR_OFF0		0x100
#define FR_LEN2		0x200
#define FR_LEN		(PAGE_SIZE - FR_OFF0 + PAGE_SIZE + FR_LEN2)

struct frmr_pages {
	struct page *page[3];
	struct scatterlist sg[3];
};

static void frmr_pages_init(struct kunit *test, struct frmr_pages *p)
{
	static const unsigned int off[3] = { FR_OFF0, 0, 0 };
	static const unsigned int len[3] = {
		PAGE_SIZE - FR_OFF0, PAGE_SIZE, FR_LEN2
	};
	int i;

	sg_init_table(p->sg, 3);
	for (i = 0; i < 3; i++) {
		p->page[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p->page[i]);
		memset(page_address(p->page[i]), 0xee, PAGE_SIZE);
		sg_set_page(&p->sg[i], p->page[i], len[i], off[i]);
		/* virtual DMA: the "DMA address" is the kernel address */
		sg_dma_address(&p->sg[i]) =
			(uintptr_t)page_address(p->page[i]) + off[i];
		sg_dma_len(&p->sg[i]) = len[i];
	}
}

static void frmr_pages_free(struct frmr_pages *p)
{
	int i;

	for (i = 0; i < 3; i++)
		__free_page(p->page[i]);
}

static void frmr_register_test(struct kunit *test)
{
	struct frmr_pages p;
	struct sroce_mr *mr;
	struct ib_mr *ibmr;
	struct fake f;
	u32 key, key2;

	fake_init(test, &f);
	frmr_pages_init(test, &p);

	ibmr = sroce_alloc_mr(f.pd, IB_MR_TYPE_MEM_REG, 3);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	mr = to_sroce_mr(ibmr);
	key = ibmr->lkey;
	KUNIT_EXPECT_EQ(test, ibmr->rkey, key);
	KUNIT_EXPECT_GE(test, key >> 8, (u32)SROCE_MIN_KEY_INDEX);
	KUNIT_EXPECT_NE(test, key & 0xff, 0U);
	expect_ref(test, sroce_mr_get_lkey(f.sdev, key), mr);
	/* Not registered yet. */
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, ibmr->iova, 1, 0),
			-EACCES);

	ibmr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, sroce_map_mr_sg(ibmr, p.sg, 3, NULL), 3);
	KUNIT_EXPECT_EQ(test, ibmr->iova,
			(u64)(uintptr_t)page_address(p.page[0]) + FR_OFF0);
	KUNIT_EXPECT_EQ(test, ibmr->length, (u64)FR_LEN);

	key2 = sroce_key_compose(key >> 8, (key & 0xff) + 1);
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(f.pd2, ibmr, key2, ACC_LW),
			IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(f.pd, ibmr, key2 + 0x100,
						ACC_LW),
			IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(f.pd, ibmr, key2, ACC_RW),
			IB_WC_LOC_QP_OP_ERR);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(f.pd, ibmr, key2,
						ACC_LW | ACC_RW),
			IB_WC_SUCCESS);
	/* Registering a VALID MR again is refused. */
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(f.pd, ibmr, key2,
						ACC_LW | ACC_RW),
			IB_WC_LOC_QP_OP_ERR);

	/* Only the new key names it now. */
	expect_ref(test, sroce_mr_get_lkey(f.sdev, key), NULL);
	expect_ref(test, sroce_mr_get_lkey(f.sdev, key2), mr);

	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, ibmr->iova, FR_LEN,
					     ACC_LW | ACC_RW), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, ibmr->iova,
					     FR_LEN + 1, 0), -EFAULT);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, ibmr->iova - 1, 1, 0),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd2, ibmr->iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, ibmr->iova, 1, ACC_RR),
			-EACCES);

	/* Invalidate: stale key refused, right key accepted, twice is ok. */
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, key),
			IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd2, key2),
			IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, key2),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, ibmr->iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, key2),
			IB_WC_SUCCESS);

	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	fake_check_empty(test, &f);
	frmr_pages_free(&p);
}

/* The whole region in one go lands in the three pages. */
static void frmr_copy_to_pages(struct kunit *test, struct sroce_mr *mr,
			       const struct frmr_pages *p, u8 *in, u64 iova)
{
	u8 *mem;

	KUNIT_ASSERT_EQ(test, sroce_mr_copy(mr, iova, in, FR_LEN,
					    SROCE_COPY_TO_MR), 0);
	mem = page_address(p->page[0]);
	KUNIT_EXPECT_EQ(test, mem[FR_OFF0 - 1], 0xee);
	KUNIT_EXPECT_EQ(test, memcmp(mem + FR_OFF0, in, PAGE_SIZE - FR_OFF0),
			0);
	mem = page_address(p->page[1]);
	KUNIT_EXPECT_EQ(test, memcmp(mem, in + PAGE_SIZE - FR_OFF0, PAGE_SIZE),
			0);
	mem = page_address(p->page[2]);
	KUNIT_EXPECT_EQ(test, memcmp(mem, in + 2 * PAGE_SIZE - FR_OFF0,
				     FR_LEN2), 0);
	KUNIT_EXPECT_EQ(test, mem[FR_LEN2], 0xee);
}

/* Read back a piece that crosses both page boundaries; then out of it. */
static void frmr_copy_from_pages(struct kunit *test, struct sroce_mr *mr,
				 const u8 *in, u8 *out, u64 iova)
{
	u64 start, len;

	start = PAGE_SIZE - FR_OFF0 - 8;
	len = PAGE_SIZE + 16;
	KUNIT_ASSERT_EQ(test, sroce_mr_copy(mr, iova + start, out, len,
					    SROCE_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, in + start, len), 0);

	/* Out of the region. */
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, iova + FR_LEN - 4, out, 8,
					    SROCE_COPY_FROM_MR), -EFAULT);
	KUNIT_EXPECT_EQ(test, sroce_mr_copy(mr, iova - 1, out, 1,
					    SROCE_COPY_FROM_MR), -EFAULT);
}

/* An atomic on the second page, done at its kernel address. */
static void frmr_copy_atomic(struct kunit *test, struct sroce_mr *mr,
			     const struct frmr_pages *p, u64 iova)
{
	u64 start, orig = 0;
	u64 *target;

	start = ALIGN(iova + PAGE_SIZE, 8) + 0x18;
	target = page_address(p->page[1]) + offset_in_page(start);
	*target = 41;
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, start, IB_OPCODE_RC_FETCH_ADD,
					      0, 1, &orig), 0);
	KUNIT_EXPECT_EQ(test, orig, 41ULL);
	KUNIT_EXPECT_EQ(test, *target, 42ULL);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, start,
					      IB_OPCODE_RC_COMPARE_SWAP, 41, 7,
					      &orig), 0);
	KUNIT_EXPECT_EQ(test, *target, 42ULL);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, start,
					      IB_OPCODE_RC_COMPARE_SWAP, 42, 7,
					      &orig), 0);
	KUNIT_EXPECT_EQ(test, *target, 7ULL);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, start + 4,
					      IB_OPCODE_RC_FETCH_ADD, 0, 1,
					      &orig), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_atomic(mr, iova + FR_LEN,
					      IB_OPCODE_RC_FETCH_ADD, 0, 1,
					      &orig), -EFAULT);
}

/* The rkey path: same MR, with a reference. */
static void frmr_copy_rkey(struct kunit *test, struct fake *f,
			   struct ib_mr *ibmr, struct sroce_mr *mr, u64 iova)
{
	int err;

	expect_ref(test, sroce_rkey_get(f->sdev, ibmr->rkey, f->pd, 17, iova,
					FR_LEN, ACC_RW, &err), mr);
	expect_ref(test, sroce_rkey_get(f->sdev, ibmr->rkey, f->pd, 17, iova,
					FR_LEN, ACC_RR, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EACCES);
	expect_ref(test, sroce_rkey_get(f->sdev, ibmr->rkey ^ 1, f->pd, 17,
					iova, 1, ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -ENOENT);
	expect_ref(test, sroce_rkey_get(f->sdev, ibmr->rkey, f->pd, 17,
					iova + 1, FR_LEN, ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EFAULT);
}

static void frmr_copy_test(struct kunit *test)
{
	u8 *in, *out;
	struct frmr_pages p;
	struct sroce_mr *mr;
	struct ib_mr *ibmr;
	struct fake f;
	u64 iova, i;

	fake_init(test, &f);
	frmr_pages_init(test, &p);
	in = kunit_kmalloc(test, FR_LEN, GFP_KERNEL);
	out = kunit_kzalloc(test, FR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	for (i = 0; i < FR_LEN; i++)
		in[i] = pattern(i);

	ibmr = sroce_alloc_mr(f.pd, IB_MR_TYPE_MEM_REG, 3);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	mr = to_sroce_mr(ibmr);
	ibmr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, sroce_map_mr_sg(ibmr, p.sg, 3, NULL), 3);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(f.pd, ibmr, ibmr->lkey,
						ACC_LW | ACC_RW | ACC_RA),
			IB_WC_SUCCESS);
	iova = ibmr->iova;

	frmr_copy_to_pages(test, mr, &p, in, iova);
	frmr_copy_from_pages(test, mr, in, out, iova);
	frmr_copy_atomic(test, mr, &p, iova);
	frmr_copy_rkey(test, &f, ibmr, mr, iova);

	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	fake_check_empty(test, &f);
	frmr_pages_free(&p);
}

/* ---- windows ------------------------------------------------------------- */

static struct sroce_mw *fake_mw(struct kunit *test, struct fake *f,
				struct ib_pd *pd, enum ib_mw_type type)
{
	struct sroce_mw *mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->ibmw.device = &f->sdev->ibdev;
	mw->ibmw.pd = pd;
	mw->ibmw.type = type;
	KUNIT_ASSERT_EQ(test, sroce_alloc_mw(&mw->ibmw, NULL), 0);
	return mw;
}

static u32 next_key(u32 key)
{
	return sroce_key_compose(key >> 8, (key & 0xff) + 1);
}

static void mw_type2_test(struct kunit *test)
{
	struct sroce_mw_bind b = {};
	struct ib_mr *ibmr;
	struct sroce_mw *mw;
	struct fake f;
	u64 buf;
	int err;

	fake_init(test, &f);
	buf = (uintptr_t)kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NE(test, buf, 0ULL);
	ibmr = sroce_get_dma_mr(f.pd, ACC_LW | ACC_BIND);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	mw = fake_mw(test, &f, f.pd, IB_MW_TYPE_2);
	KUNIT_EXPECT_NE(test, mw->ibmw.rkey & 0xff, 0U);

	b.mw_rkey = mw->ibmw.rkey;
	b.new_rkey = next_key(b.mw_rkey);
	b.mr_lkey = ibmr->lkey;
	b.addr = buf + 64;
	b.length = 64;
	b.access = ACC_RW;

	/* Unbound: its rkey grants nothing. */
	expect_ref(test, sroce_rkey_get(f.sdev, b.mw_rkey, f.pd, 17, b.addr, 1,
					ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EACCES);

	/* Type 2 needs the QP's PD, a new key of the same index, a length. */
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd2, 17, &b),
			IB_WC_MW_BIND_ERR);
	b.new_rkey += 0x100;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 17, &b),
			IB_WC_MW_BIND_ERR);
	b.new_rkey -= 0x100;
	b.access = ACC_RW | IB_ZERO_BASED;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 17, &b),
			IB_WC_MW_BIND_ERR);
	b.access = ACC_RW;
	KUNIT_ASSERT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 17, &b),
			IB_WC_SUCCESS);

	/* Bound to QP 17, remote write only, 64 bytes at buf + 64. */
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd, 17, b.addr,
					64, ACC_RW, &err), to_sroce_mr(ibmr));
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd, 18, b.addr,
					64, ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EACCES);
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd, 17, b.addr,
					64, ACC_RR, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EACCES);
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd, 17,
					b.addr - 1, 2, ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EFAULT);
	expect_ref(test, sroce_rkey_get(f.sdev, b.mw_rkey, f.pd, 17, b.addr, 1,
					ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -ENOENT);

	/* Bound: no second bind, and the MR stays. */
	b.mw_rkey = b.new_rkey;
	b.new_rkey = next_key(b.new_rkey);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 17, &b),
			IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), -EBUSY);

	/* Invalidation unbinds it. */
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd2, b.mw_rkey),
			IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, b.mw_rkey),
			IB_WC_SUCCESS);
	expect_ref(test, sroce_rkey_get(f.sdev, b.mw_rkey, f.pd, 17, b.addr, 1,
					ACC_RW, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EACCES);

	KUNIT_EXPECT_EQ(test, sroce_dealloc_mw(&mw->ibmw), 0);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	fake_check_empty(test, &f);
}

/* A DMA MR of @pd, so windows can cover any kernel buffer. */
static struct ib_mr *fake_dma_mr(struct kunit *test, struct ib_pd *pd,
				 int access)
{
	struct ib_mr *ibmr = sroce_get_dma_mr(pd, access);

	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	return ibmr;
}

/*
 * A QP engine can hold an MR for as long as a message is in progress, and
 * a message can stall forever (the peer is gone). dereg must not wait for
 * it: it returns at once, the key and every access through the held
 * reference fail from then on, and the holder's last put frees the MR
 * from a work item.
 */
static void dereg_while_held_test(struct kunit *test)
{
	u8 buf[8] = {};
	struct sroce_mr *mr;
	struct ib_mr *ibmr;
	struct fake f;
	long left;
	u32 key;

	fake_init(test, &f);
	ibmr = fake_dma_mr(test, f.pd, ACC_LW | ACC_RW);
	key = ibmr->lkey;
	mr = sroce_mr_get_lkey(f.sdev, key);
	KUNIT_ASSERT_PTR_EQ(test, mr, to_sroce_mr(ibmr));
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, (uintptr_t)buf, 8,
					     IB_ACCESS_REMOTE_WRITE), 0);

	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f.sdev->mr_zombies), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f.sdev->res.mr), 0);
	expect_ref(test, sroce_mr_get_lkey(f.sdev, key), NULL);
	KUNIT_EXPECT_EQ(test, sroce_mr_check(mr, f.pd, (uintptr_t)buf, 8,
					     IB_ACCESS_REMOTE_WRITE), -EACCES);
	KUNIT_EXPECT_NE(test, sroce_mr_copy(mr, (uintptr_t)buf, buf, 8,
					    SROCE_COPY_TO_MR), 0);

	sroce_mr_put(mr);
	left = wait_var_event_timeout(&f.sdev->mr_zombies,
				      !atomic_read(&f.sdev->mr_zombies),
				      10 * HZ);
	KUNIT_EXPECT_GT(test, left, 0);
	rcu_barrier();
	fake_check_empty(test, &f);
}

static void mw_type1_refuse_test(struct kunit *test)
{
	struct ib_mr *ibmr, *nobind, *readonly;
	struct sroce_mw *mw, *mw_other_pd;
	struct sroce_mw_bind b = {};
	struct fake f;

	fake_init(test, &f);
	ibmr = fake_dma_mr(test, f.pd, ACC_LW | ACC_BIND);
	nobind = fake_dma_mr(test, f.pd, ACC_LW);
	readonly = fake_dma_mr(test, f.pd, ACC_BIND | ACC_RR);
	mw = fake_mw(test, &f, f.pd, IB_MW_TYPE_1);
	mw_other_pd = fake_mw(test, &f, f.pd2, IB_MW_TYPE_1);

	b.mw_rkey = mw->ibmw.rkey;
	b.new_rkey = next_key(b.mw_rkey);
	b.addr = 0x10000;
	b.length = 128;
	b.access = ACC_RW | ACC_RR;

	/* MR without MW bind; remote write on an MR without local write. */
	b.mr_lkey = nobind->lkey;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_MW_BIND_ERR);
	b.mr_lkey = readonly->lkey;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_MW_BIND_ERR);
	/* A stale MR key, a stale window key. */
	b.mr_lkey = ibmr->lkey ^ 1;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_MW_BIND_ERR);
	b.mr_lkey = ibmr->lkey;
	b.mw_rkey ^= 1;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_MW_BIND_ERR);
	/* An MR of another PD than the window's. */
	b.mw_rkey = mw_other_pd->ibmw.rkey;
	b.new_rkey = next_key(b.mw_rkey);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd2, 0, &b),
			IB_WC_MW_BIND_ERR);
	/*
	 * Posted on a QP of another PD than the window and the MR: IBA
	 * has the QP, the MW and the MR share one PD for type 1 as well.
	 */
	b.mw_rkey = mw->ibmw.rkey;
	b.new_rkey = next_key(b.mw_rkey);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind(f.sdev, f.pd2, 0, &b),
			IB_WC_MW_BIND_ERR);
	/* Nothing was bound. */
	KUNIT_EXPECT_EQ(test, atomic_read(&to_sroce_mr(ibmr)->num_mw), 0);
	KUNIT_EXPECT_EQ(test, mw->ibmw.rkey, mw->key);

	KUNIT_EXPECT_EQ(test, sroce_dealloc_mw(&mw->ibmw), 0);
	KUNIT_EXPECT_EQ(test, sroce_dealloc_mw(&mw_other_pd->ibmw), 0);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(nobind, NULL), 0);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(readonly, NULL), 0);
	fake_check_empty(test, &f);
}

static void mw_type1_rebind_test(struct kunit *test)
{
	struct sroce_mw_bind b = {};
	struct sroce_mr *mr;
	struct ib_mr *ibmr;
	struct sroce_mw *mw;
	struct fake f;
	u64 buf;
	int err;

	fake_init(test, &f);
	buf = (uintptr_t)kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NE(test, buf, 0ULL);
	ibmr = fake_dma_mr(test, f.pd, ACC_LW | ACC_BIND);
	mr = to_sroce_mr(ibmr);
	mw = fake_mw(test, &f, f.pd, IB_MW_TYPE_1);

	b.mw_rkey = mw->ibmw.rkey;
	b.new_rkey = next_key(b.mw_rkey);
	b.mr_lkey = ibmr->lkey;
	b.addr = buf;
	b.length = 128;
	b.access = ACC_RW | ACC_RR;
	KUNIT_ASSERT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_SUCCESS);
	/* Any QP of the PD may use a type-1 window. */
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd, 99, buf + 127,
					1, ACC_RR, &err), mr);
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd2, 99, buf, 1,
					ACC_RR, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EACCES);

	/* Re-bind, smaller: the old window is gone, the MR counted once. */
	b.mw_rkey = b.new_rkey;
	b.new_rkey = next_key(b.mw_rkey);
	b.length = 16;
	KUNIT_ASSERT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_SUCCESS);
	expect_ref(test, sroce_rkey_get(f.sdev, b.new_rkey, f.pd, 0, buf, 17,
					ACC_RR, &err), NULL);
	KUNIT_EXPECT_EQ(test, err, -EFAULT);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 1);
	/* Type-1 windows are not invalidated by key. */
	KUNIT_EXPECT_EQ(test, sroce_key_invalidate(f.sdev, f.pd, b.new_rkey),
			IB_WC_MW_BIND_ERR);

	/* Length 0 unbinds, and still moves the key on. */
	b.mw_rkey = b.new_rkey;
	b.new_rkey = next_key(b.mw_rkey);
	b.length = 0;
	b.mr_lkey = 0;
	KUNIT_ASSERT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->num_mw), 0);
	KUNIT_EXPECT_EQ(test, mw->ibmw.rkey, b.new_rkey);

	/* Dealloc of a bound window releases its MR. */
	b.mw_rkey = b.new_rkey;
	b.new_rkey = next_key(b.mw_rkey);
	b.length = 8;
	b.mr_lkey = ibmr->lkey;
	KUNIT_ASSERT_EQ(test, sroce_mw_bind(f.sdev, f.pd, 0, &b),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, sroce_dealloc_mw(&mw->ibmw), 0);
	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(ibmr, NULL), 0);
	fake_check_empty(test, &f);
}

static struct kunit_case sroce_mr_test_cases[] = {
	KUNIT_CASE_PARAM(key_layout_test, key_gen_params),
	KUNIT_CASE_PARAM(key_change_test, key_change_gen_params),
	KUNIT_CASE(key_first_test),
	KUNIT_CASE_PARAM(access_check_test, access_gen_params),
	KUNIT_CASE_PARAM(page_geometry_test, geom_gen_params),
	KUNIT_CASE_PARAM(range_test, range_gen_params),
	KUNIT_CASE(alloc_mr_args_test),
	KUNIT_CASE(frmr_register_test),
	KUNIT_CASE(frmr_copy_test),
	KUNIT_CASE(dereg_while_held_test),
	KUNIT_CASE(mw_type2_test),
	KUNIT_CASE(mw_type1_refuse_test),
	KUNIT_CASE(mw_type1_rebind_test),
	{}
};

static struct kunit_suite sroce_mr_test_suite = {
	.name = "sroce_mr",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_mr_test_cases,
};

kunit_test_suites(&sroce_mr_test_suite);
