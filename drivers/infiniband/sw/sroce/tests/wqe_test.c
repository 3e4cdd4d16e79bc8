// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the work request checks and conversions of sroce_wqe.c.
 *
 * Slots are built by hand in kzalloc'd buffers of a real slot size, so
 * that KASAN catches a check reading beyond the slot. The expectations
 * come from the rules of the rxe user ABI (user-abi.md 2.4, 2.5) and the
 * IBA operation set of each QP type, written out by hand: which opcode is
 * valid where and the status of each refusal. Slot sizes and what a slot
 * holds are the sroce_wqe_size suite's (wqe_size_test.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/string.h>

#include "obj/sroce_wqe.h"
#include "test_util.h"

/* A send slot for 63 SGEs: 208 + 63 * 16 = 1216, rounded up to 2048. */
#define WQE_SLOT_SIZE		2048
#define WQE_GIB			0x40000000U

static struct rxe_send_wqe *wqe_send_slot(struct kunit *test, size_t size)
{
	struct rxe_send_wqe *slot = kunit_kzalloc(test, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slot);
	return slot;
}

/* QP type bits of the opcode matrix */
#define Q_RC	BIT(0)
#define Q_UC	BIT(1)
#define Q_UD	BIT(2)
#define Q_GSI	BIT(3)
#define Q_CONN	(Q_RC | Q_UC)
#define Q_ALL	(Q_RC | Q_UC | Q_UD | Q_GSI)

static const enum ib_qp_type wqe_qp_types[] = {
	IB_QPT_RC, IB_QPT_UC, IB_QPT_UD, IB_QPT_GSI,
};

struct wqe_op_case {
	const char *name;
	u32 opcode;
	u8 user_qps;		/* QP types user space may post it on */
	u8 kernel_qps;		/* QP types the kernel may post it on */
	bool atomic;		/* needs one 8-byte SGE */
	enum ib_wc_opcode wc;	/* send completion opcode */
};

static const struct wqe_op_case wqe_op_cases[] = {
	{ "RDMA_WRITE", 0, Q_CONN, Q_CONN, false, IB_WC_RDMA_WRITE },
	{ "RDMA_WRITE_WITH_IMM", 1, Q_CONN, Q_CONN, false, IB_WC_RDMA_WRITE },
	{ "SEND", 2, Q_ALL, Q_ALL, false, IB_WC_SEND },
	{ "SEND_WITH_IMM", 3, Q_ALL, Q_ALL, false, IB_WC_SEND },
	{ "RDMA_READ", 4, Q_RC, Q_RC, false, IB_WC_RDMA_READ },
	{ "ATOMIC_CMP_AND_SWP", 5, Q_RC, Q_RC, true, IB_WC_COMP_SWAP },
	{ "ATOMIC_FETCH_AND_ADD", 6, Q_RC, Q_RC, true, IB_WC_FETCH_ADD },
	{ "LOCAL_INV", 7, Q_ALL, Q_ALL, false, IB_WC_LOCAL_INV },
	{ "BIND_MW", 8, Q_CONN, Q_CONN, false, IB_WC_BIND_MW },
	{ "SEND_WITH_INV", 9, Q_RC, Q_RC, false, IB_WC_SEND },
	{ "LSO", 10, 0, 0, false, IB_WC_SEND },
	{ "RDMA_READ_WITH_INV", 11, 0, 0, false, IB_WC_SEND },
	{ "MASKED_ATOMIC_CMP_AND_SWP", 12, 0, 0, true, IB_WC_SEND },
	{ "MASKED_ATOMIC_FETCH_AND_ADD", 13, 0, 0, true, IB_WC_SEND },
	{ "14", 14, 0, 0, false, IB_WC_SEND },
	{ "librxe ATOMIC_WRITE", 15, 0, 0, true, IB_WC_SEND },
	{ "REG_MR", 0x20, 0, Q_ALL, false, IB_WC_REG_MR },
	{ "REG_MR_INTEGRITY", 0x21, 0, 0, false, IB_WC_SEND },
	{ "driver reserved 0xf0", 0xf0, 0, 0, false, IB_WC_SEND },
	{ "SEND + 256", 0x102, 0, 0, false, IB_WC_SEND },
	{ "0xffffffff", 0xffffffff, 0, 0, false, IB_WC_SEND },
};

static void wqe_op_desc(const struct wqe_op_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wqe_op, wqe_op_cases, wqe_op_desc);

/* A WQE that breaks no other rule: one SGE, and an AH for UD sends. */
static void wqe_fill_valid(struct rxe_send_wqe *slot, u32 opcode, bool atomic)
{
	u32 len = atomic ? 8 : 100;

	memset(slot, 0, sizeof(*slot));
	slot->wr.wr_id = 0x1234;
	slot->wr.opcode = opcode;
	slot->wr.wr.ud.ah_num = 7;
	slot->dma.num_sge = 1;
	slot->dma.length = len;
	slot->dma.sge[0].length = len;
}

/* Each opcode on RC, UC, UD and GSI QPs, posted by user space and kernel. */
static void wqe_op_matrix_test(struct kunit *test)
{
	const struct wqe_op_case *t = test->param_value;
	struct rxe_send_wqe *slot = wqe_send_slot(test, WQE_SLOT_SIZE);
	struct sroce_wqe_limits lim = { .max_sge = 63, .max_inline = 1008 };
	struct sroce_send_wqe out;
	enum ib_wc_status want;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wqe_qp_types); i++) {
		lim.qp_type = wqe_qp_types[i];

		lim.user = true;
		want = t->user_qps & BIT(i) ? IB_WC_SUCCESS :
					      IB_WC_LOC_QP_OP_ERR;
		wqe_fill_valid(slot, t->opcode, t->atomic);
		KUNIT_EXPECT_EQ_MSG(test, sroce_wqe_check_send(slot, &lim, &out),
				    want, "user, QP type %d", lim.qp_type);
		KUNIT_EXPECT_EQ(test, out.wr_id, 0x1234);

		lim.user = false;
		want = t->kernel_qps & BIT(i) ? IB_WC_SUCCESS :
						IB_WC_LOC_QP_OP_ERR;
		wqe_fill_valid(slot, t->opcode, t->atomic);
		KUNIT_EXPECT_EQ_MSG(test, sroce_wqe_check_send(slot, &lim, &out),
				    want, "kernel, QP type %d", lim.qp_type);
	}
	KUNIT_EXPECT_EQ(test, sroce_wqe_wc_opcode(t->opcode), t->wc);
}

/* QP types without a send queue sroce serves accept no opcode at all. */
static void wqe_other_qp_types_test(struct kunit *test)
{
	static const enum ib_qp_type types[] = {
		IB_QPT_SMI, IB_QPT_RAW_PACKET, IB_QPT_XRC_INI, IB_QPT_DRIVER,
	};
	struct rxe_send_wqe *slot = wqe_send_slot(test, WQE_SLOT_SIZE);
	struct sroce_wqe_limits lim = { .max_sge = 63, .max_inline = 1008 };
	struct sroce_send_wqe out;
	unsigned int i;
	u32 op;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		lim.qp_type = types[i];
		for (op = 0; op <= 9; op++) {
			wqe_fill_valid(slot, op, op == 5 || op == 6);
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_wqe_check_send(slot, &lim, &out),
					    IB_WC_LOC_QP_OP_ERR,
					    "QP type %d opcode %u", types[i], op);
		}
	}
}

#define WQE_MAX_LISTED	4

struct wqe_len_case {
	const char *name;
	enum ib_qp_type qpt;
	u32 opcode;
	u32 flags;
	u32 num_sge;
	u32 sge_len[WQE_MAX_LISTED];	/* the first SGE lengths */
	u32 fill_len;			/* the length of the others */
	u32 length;			/* dma.length */
	u32 max_sge;
	u32 max_inline;
	u32 ah_num;
	bool user;
	enum ib_wc_status status;
	u32 out_num_sge;		/* on success */
};

#define W_SEND	IB_WR_SEND
#define W_INL	IB_SEND_INLINE
#define ST_OK	IB_WC_SUCCESS
#define ST_OP	IB_WC_LOC_QP_OP_ERR
#define ST_LEN	IB_WC_LOC_LEN_ERR

static const struct wqe_len_case wqe_len_cases[] = {
	{ "SEND, no SGE, length 0", IB_QPT_RC, W_SEND, 0, 0, {}, 0, 0,
	  1, 0, 0, true, ST_OK, 0 },
	{ "SEND, one SGE", IB_QPT_RC, W_SEND, 0, 1, { 100 }, 0, 100,
	  1, 0, 0, true, ST_OK, 1 },
	{ "length one above the SGE", IB_QPT_RC, W_SEND, 0, 1, { 100 }, 0, 101,
	  1, 0, 0, true, ST_LEN },
	{ "length one below the SGE", IB_QPT_RC, W_SEND, 0, 1, { 100 }, 0, 99,
	  1, 0, 0, true, ST_LEN },
	{ "length without SGEs (inline data, no INLINE flag)", IB_QPT_RC,
	  W_SEND, 0, 0, {}, 0, 16, 1, 64, 0, true, ST_LEN },
	{ "three SGEs add up", IB_QPT_UC, W_SEND, 0, 3, { 100, 20, 30 }, 0, 150,
	  4, 0, 0, true, ST_OK, 3 },
	{ "librxe wr_set_sge_list: 3 x first length", IB_QPT_RC, W_SEND, 0, 3,
	  { 100, 20, 30 }, 0, 300, 4, 0, 0, true, ST_LEN },
	{ "SGE sum 4 GiB wraps to 0 in 32 bits", IB_QPT_RC, W_SEND, 0, 2,
	  { 0x80000000, 0x80000000 }, 0, 0, 2, 0, 0, true, ST_LEN },
	{ "SGE sum 2^32 wraps to 0 in 32 bits", IB_QPT_RC, W_SEND, 0, 2,
	  { 0xffffffff, 1 }, 0, 0, 2, 0, 0, true, ST_LEN },
	{ "1 GiB: the largest message", IB_QPT_RC, IB_WR_RDMA_WRITE, 0, 1,
	  { WQE_GIB }, 0, WQE_GIB, 1, 0, 0, true, ST_OK, 1 },
	{ "1 GiB + 1", IB_QPT_RC, IB_WR_RDMA_WRITE, 0, 2, { WQE_GIB, 1 }, 0,
	  WQE_GIB + 1, 2, 0, 0, true, ST_LEN },
	{ "63 SGEs, max 63", IB_QPT_RC, W_SEND, 0, 63, { 16, 16, 16, 16 }, 16,
	  1008, 63, 0, 0, true, ST_OK, 63 },
	{ "64 SGEs, max 63", IB_QPT_RC, W_SEND, 0, 64, { 16, 16, 16, 16 }, 16,
	  1024, 63, 0, 0, true, ST_OP },
	{ "2 SGEs, max 1", IB_QPT_RC, W_SEND, 0, 2, { 1, 1 }, 0, 2,
	  1, 0, 0, true, ST_OP },
	{ "huge num_sge", IB_QPT_RC, W_SEND, 0, 0xffffffff, {}, 0, 0,
	  63, 0, 0, true, ST_OP },
	{ "inline at max_inline", IB_QPT_RC, W_SEND, W_INL, 0, {}, 0, 48,
	  3, 48, 0, true, ST_OK, 0 },
	{ "inline one above max_inline", IB_QPT_RC, W_SEND, W_INL, 0, {}, 0, 49,
	  3, 48, 0, true, ST_LEN },
	{ "inline, stale num_sge of the old API", IB_QPT_RC, W_SEND, W_INL, 5, {},
	  0, 16, 1, 48, 0, true, ST_OK, 0 },
	{ "inline, librxe wr_set_inline_data_list length 0", IB_QPT_RC, W_SEND,
	  W_INL, 0, {}, 0, 0, 1, 48, 0, true, ST_OK, 0 },
	{ "inline RDMA_WRITE_WITH_IMM", IB_QPT_UC, IB_WR_RDMA_WRITE_WITH_IMM,
	  W_INL, 0, {}, 0, 32, 1, 48, 0, true, ST_OK, 0 },
	{ "inline SEND_WITH_INV", IB_QPT_RC, IB_WR_SEND_WITH_INV, W_INL, 0, {},
	  0, 32, 1, 48, 0, true, ST_OK, 0 },
	{ "inline RDMA_READ", IB_QPT_RC, IB_WR_RDMA_READ, W_INL, 0, {}, 0, 8,
	  1, 48, 0, true, ST_OP },
	{ "inline ATOMIC_CMP_AND_SWP", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP,
	  W_INL, 1, { 8 }, 0, 8, 1, 48, 0, true, ST_OP },
	{ "inline LOCAL_INV", IB_QPT_RC, IB_WR_LOCAL_INV, W_INL, 0, {}, 0, 0,
	  1, 48, 0, true, ST_OP },
	{ "inline BIND_MW", IB_QPT_RC, IB_WR_BIND_MW, W_INL, 0, {}, 0, 0,
	  1, 48, 0, true, ST_OP },
	{ "inline REG_MR", IB_QPT_RC, IB_WR_REG_MR, W_INL, 0, {}, 0, 0,
	  1, 48, 0, false, ST_OP },
	{ "RDMA_READ of 0 bytes", IB_QPT_RC, IB_WR_RDMA_READ, 0, 0, {}, 0, 0,
	  1, 0, 0, true, ST_OK, 0 },
	{ "CMP_AND_SWP, one 8-byte SGE", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP,
	  0, 1, { 8 }, 0, 8, 2, 0, 0, true, ST_OK, 1 },
	{ "FETCH_AND_ADD, one 8-byte SGE", IB_QPT_RC,
	  IB_WR_ATOMIC_FETCH_AND_ADD, 0, 1, { 8 }, 0, 8, 2, 0, 0, true, ST_OK, 1 },
	{ "atomic, 7 bytes", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP, 0, 1, { 7 },
	  0, 7, 2, 0, 0, true, ST_LEN },
	{ "atomic, 9 bytes", IB_QPT_RC, IB_WR_ATOMIC_FETCH_AND_ADD, 0, 1,
	  { 9 }, 0, 9, 2, 0, 0, true, ST_LEN },
	{ "atomic, 8 bytes in two SGEs", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP,
	  0, 2, { 4, 4 }, 0, 8, 2, 0, 0, true, ST_LEN },
	{ "atomic, no SGE", IB_QPT_RC, IB_WR_ATOMIC_FETCH_AND_ADD, 0, 0, {}, 0,
	  0, 2, 0, 0, true, ST_LEN },
	{ "UD SEND, ah_num 1", IB_QPT_UD, W_SEND, 0, 1, { 64 }, 0, 64,
	  1, 0, 1, true, ST_OK, 1 },
	{ "UD SEND, ah_num 0 (AV in WQE)", IB_QPT_UD, W_SEND, 0, 1, { 64 }, 0,
	  64, 1, 0, 0, true, ST_OP },
	{ "GSI SEND_WITH_IMM, ah_num 0", IB_QPT_GSI, IB_WR_SEND_WITH_IMM, 0, 1,
	  { 64 }, 0, 64, 1, 0, 0, false, ST_OP },
	{ "UD LOCAL_INV needs no AH", IB_QPT_UD, IB_WR_LOCAL_INV, 0, 0, {}, 0,
	  0, 1, 0, 0, true, ST_OK, 0 },
	{ "RC SEND ignores ah_num 0", IB_QPT_RC, W_SEND, 0, 0, {}, 0, 0,
	  1, 0, 0, true, ST_OK, 0 },
};

static void wqe_len_desc(const struct wqe_len_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wqe_len, wqe_len_cases, wqe_len_desc);

static void wqe_len_test(struct kunit *test)
{
	const struct wqe_len_case *t = test->param_value;
	struct rxe_send_wqe *slot = wqe_send_slot(test, WQE_SLOT_SIZE);
	struct sroce_wqe_limits lim = {
		.qp_type = t->qpt,
		.max_sge = t->max_sge,
		.max_inline = t->max_inline,
		.user = t->user,
	};
	struct sroce_send_wqe out;
	enum ib_wc_status status;
	u32 i;

	slot->wr.wr_id = 0xfeedULL << 32;
	slot->wr.opcode = t->opcode;
	slot->wr.send_flags = t->flags;
	slot->wr.wr.ud.ah_num = t->ah_num;
	slot->dma.num_sge = t->num_sge;
	slot->dma.length = t->length;
	if (!(t->flags & IB_SEND_INLINE)) {
		/* Fill what the slot holds; the check reads no further. */
		for (i = 0; i < min_t(u32, t->num_sge, 115); i++)
			slot->dma.sge[i].length = i < WQE_MAX_LISTED ?
						  t->sge_len[i] : t->fill_len;
	}

	status = sroce_wqe_check_send(slot, &lim, &out);
	KUNIT_EXPECT_EQ(test, status, t->status);
	KUNIT_EXPECT_EQ(test, out.wr_id, 0xfeedULL << 32);
	KUNIT_EXPECT_EQ(test, out.opcode, t->opcode);
	if (status != IB_WC_SUCCESS)
		return;
	KUNIT_EXPECT_EQ(test, out.length, t->length);
	KUNIT_EXPECT_EQ(test, out.num_sge, t->out_num_sge);
	KUNIT_EXPECT_EQ(test, out.send_flags, t->flags);
}

/*
 * Slots of exactly the size the ring gives them: 256 bytes hold 3 SGEs
 * or 48 inline bytes. KASAN reports any read past them.
 */
static void wqe_slot_bounds_test(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_send_slot(test, 256);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_RC, .max_sge = 3, .max_inline = 48,
		.user = true,
	};
	struct sroce_send_wqe out;

	slot->wr.opcode = IB_WR_SEND;
	slot->dma.num_sge = 3;
	slot->dma.sge[0].length = 1;
	slot->dma.sge[1].length = 2;
	slot->dma.sge[2].length = 3;
	slot->dma.length = 6;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_send(slot, &lim, &out),
			IB_WC_SUCCESS);

	slot->dma.num_sge = 4;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_send(slot, &lim, &out),
			IB_WC_LOC_QP_OP_ERR);

	slot->wr.send_flags = IB_SEND_INLINE;
	slot->dma.length = 48;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_send(slot, &lim, &out),
			IB_WC_SUCCESS);
}

/* Unknown send flags are dropped; the four IBA ones are kept. */
static void wqe_send_flags_test(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_send_slot(test, WQE_SLOT_SIZE);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_RC, .max_sge = 1, .max_inline = 64,
		.user = true,
	};
	struct sroce_send_wqe out;

	slot->wr.opcode = IB_WR_SEND;
	slot->wr.send_flags = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | BIT(26) | BIT(31);
	slot->dma.length = 10;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_send(slot, &lim, &out),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, out.send_flags, 0xf);
}

/* A union full of garbage, and garbage in ex. */
static struct rxe_send_wqe *wqe_dirty_slot(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_send_slot(test, WQE_SLOT_SIZE);

	memset(&slot->wr.wr, 0xa5, sizeof(slot->wr.wr));
	slot->wr.ex.invalidate_rkey = 0x11223344;
	return slot;
}

/* What lands in the copy of a send: its union member, nothing else. */
static void wqe_copy_send_test(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_dirty_slot(test);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_RC, .max_sge = 1, .max_inline = 64,
		.user = true,
	};
	struct sroce_send_wqe out, want;

	/* RC SEND: no union member, no ex. */
	slot->wr.opcode = IB_WR_SEND;
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out), ST_OK);
	memset(&want.wr, 0, sizeof(want.wr));
	KUNIT_EXPECT_EQ(test, memcmp(&out.wr, &want.wr, sizeof(want.wr)), 0);
	KUNIT_EXPECT_EQ(test, out.ex, 0);

	/* RC SEND_WITH_IMM: ex kept as the bytes in the slot. */
	slot->wr.opcode = IB_WR_SEND_WITH_IMM;
	slot->wr.ex.imm_data = cpu_to_be32(0x01020304);
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out), ST_OK);
	KUNIT_EXPECT_EQ(test, memcmp(&out.ex, "\x01\x02\x03\x04", 4), 0);

	/* UD SEND: the ud member. */
	lim.qp_type = IB_QPT_UD;
	slot->wr.opcode = IB_WR_SEND;
	slot->wr.wr.ud.remote_qpn = 0x123456;
	slot->wr.wr.ud.remote_qkey = 0x80010000;
	slot->wr.wr.ud.pkey_index = 3;
	slot->wr.wr.ud.ah_num = 42;
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out), ST_OK);
	memset(&want.wr, 0, sizeof(want.wr));
	want.wr.ud.remote_qpn = 0x123456;
	want.wr.ud.remote_qkey = 0x80010000;
	want.wr.ud.pkey_index = 3;
	want.wr.ud.ah_num = 42;
	KUNIT_EXPECT_EQ(test, memcmp(&out.wr, &want.wr, sizeof(want.wr)), 0);
}

/* The same for the local operations. */
static void wqe_copy_local_test(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_dirty_slot(test);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_RC, .max_sge = 1, .max_inline = 64,
		.user = true,
	};
	struct sroce_send_wqe out, want;

	/* RC BIND_MW: the mw member. */
	slot->wr.opcode = IB_WR_BIND_MW;
	slot->wr.wr.mw.addr = 0x7f0000001000ULL;
	slot->wr.wr.mw.length = 0x100000000ULL;
	slot->wr.wr.mw.mr_lkey = 0x101;
	slot->wr.wr.mw.mw_rkey = 0x202;
	slot->wr.wr.mw.rkey = 0x203;
	slot->wr.wr.mw.access = IB_ACCESS_REMOTE_READ;
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out), ST_OK);
	memset(&want.wr, 0, sizeof(want.wr));
	want.wr.mw.addr = 0x7f0000001000ULL;
	want.wr.mw.length = 0x100000000ULL;
	want.wr.mw.mr_lkey = 0x101;
	want.wr.mw.mw_rkey = 0x202;
	want.wr.mw.rkey = 0x203;
	want.wr.mw.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, memcmp(&out.wr, &want.wr, sizeof(want.wr)), 0);
	KUNIT_EXPECT_EQ(test, out.ex, 0);

	/* LOCAL_INV: the rkey in ex, no union member. */
	slot->wr.opcode = IB_WR_LOCAL_INV;
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out), ST_OK);
	KUNIT_EXPECT_EQ(test, out.ex, 0x11223344);
	memset(&want.wr, 0, sizeof(want.wr));
	KUNIT_EXPECT_EQ(test, memcmp(&out.wr, &want.wr, sizeof(want.wr)), 0);

	/* A user REG_MR is refused before its "pointer" is read. */
	slot->wr.opcode = IB_WR_REG_MR;
	KUNIT_EXPECT_EQ(test, sroce_wqe_check_send(slot, &lim, &out), ST_OP);
	KUNIT_EXPECT_PTR_EQ(test, out.wr.reg.mr, NULL);
}

/* Which ib_*_wr container a kernel WR comes in. */
enum wqe_rt_kind { RT_PLAIN, RT_RDMA, RT_ATOMIC, RT_UD, RT_REG };

struct wqe_rt_case {
	const char *name;
	enum ib_qp_type qpt;
	enum ib_wr_opcode opcode;
	enum wqe_rt_kind kind;
	int num_sge;		/* of the SGEs 100 + 28 bytes, or one of 8 */
	u32 length;
	bool has_ex;		/* imm_data or invalidate_rkey is kept */
};

static const struct wqe_rt_case wqe_rt_cases[] = {
	{ "RC RDMA_WRITE", IB_QPT_RC, IB_WR_RDMA_WRITE, RT_RDMA, 2, 128 },
	{ "UC RDMA_WRITE_WITH_IMM", IB_QPT_UC, IB_WR_RDMA_WRITE_WITH_IMM,
	  RT_RDMA, 2, 128, true },
	{ "RC SEND", IB_QPT_RC, IB_WR_SEND, RT_PLAIN, 2, 128 },
	{ "UC SEND_WITH_IMM", IB_QPT_UC, IB_WR_SEND_WITH_IMM, RT_PLAIN, 2, 128,
	  true },
	{ "UD SEND", IB_QPT_UD, IB_WR_SEND, RT_UD, 2, 128 },
	{ "GSI SEND_WITH_IMM", IB_QPT_GSI, IB_WR_SEND_WITH_IMM, RT_UD, 2, 128,
	  true },
	{ "RC SEND_WITH_INV", IB_QPT_RC, IB_WR_SEND_WITH_INV, RT_PLAIN, 2, 128,
	  true },
	{ "RC RDMA_READ", IB_QPT_RC, IB_WR_RDMA_READ, RT_RDMA, 2, 128 },
	{ "RC ATOMIC_CMP_AND_SWP", IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP,
	  RT_ATOMIC, 1, 8 },
	{ "RC ATOMIC_FETCH_AND_ADD", IB_QPT_RC, IB_WR_ATOMIC_FETCH_AND_ADD,
	  RT_ATOMIC, 1, 8 },
	{ "UD LOCAL_INV", IB_QPT_UD, IB_WR_LOCAL_INV, RT_PLAIN, 0, 0, true },
	{ "UC REG_MR", IB_QPT_UC, IB_WR_REG_MR, RT_REG, 0, 0 },
};

static void wqe_rt_desc(const struct wqe_rt_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wqe_rt, wqe_rt_cases, wqe_rt_desc);

union wqe_any_wr {
	struct ib_send_wr wr;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
	struct ib_ud_wr ud;
	struct ib_reg_wr reg;
};

#define WQE_RT_MR	((struct ib_mr *)0x1234)	/* never dereferenced */

static void wqe_rt_build(const struct wqe_rt_case *t, union wqe_any_wr *w,
			 struct ib_sge *sges)
{
	sges[0] = (struct ib_sge){ .addr = 0x1000, .length = 100,
				   .lkey = 0x501 };
	sges[1] = (struct ib_sge){ .addr = 0x2000, .length = 28,
				   .lkey = 0x502 };
	if (t->kind == RT_ATOMIC)
		sges[0].length = 8;

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = 0xabcdef;
	w->wr.opcode = t->opcode;
	w->wr.send_flags = IB_SEND_SIGNALED;
	w->wr.sg_list = sges;
	w->wr.num_sge = t->num_sge;
	w->wr.ex.invalidate_rkey = 0x9988;
	switch (t->kind) {
	case RT_RDMA:
		w->rdma.remote_addr = 0x5555000;
		w->rdma.rkey = 0x777;
		break;
	case RT_ATOMIC:
		w->atomic.remote_addr = 0x6666000;
		w->atomic.compare_add = 11;
		w->atomic.swap = 22;
		w->atomic.rkey = 0x888;
		break;
	case RT_UD:
		w->ud.remote_qpn = 0xabc;
		w->ud.remote_qkey = 0x1111;
		w->ud.pkey_index = 5;
		break;
	case RT_REG:
		w->reg.mr = WQE_RT_MR;
		w->reg.key = 0x4242;
		w->reg.access = IB_ACCESS_LOCAL_WRITE;
		break;
	case RT_PLAIN:
		break;
	}
}

static void wqe_rt_expect_part(struct kunit *test, const struct wqe_rt_case *t,
			       const struct sroce_send_wqe *out,
			       const struct rxe_send_wqe *slot)
{
	switch (t->kind) {
	case RT_RDMA:
		KUNIT_EXPECT_EQ(test, out->wr.rdma.remote_addr, 0x5555000);
		KUNIT_EXPECT_EQ(test, out->wr.rdma.rkey, 0x777);
		KUNIT_EXPECT_EQ(test, slot->iova, 0x5555000);
		break;
	case RT_ATOMIC:
		KUNIT_EXPECT_EQ(test, out->wr.atomic.remote_addr, 0x6666000);
		KUNIT_EXPECT_EQ(test, out->wr.atomic.compare_add, 11);
		KUNIT_EXPECT_EQ(test, out->wr.atomic.swap, 22);
		KUNIT_EXPECT_EQ(test, out->wr.atomic.rkey, 0x888);
		KUNIT_EXPECT_EQ(test, slot->iova, 0x6666000);
		break;
	case RT_UD:
		KUNIT_EXPECT_EQ(test, out->wr.ud.remote_qpn, 0xabc);
		KUNIT_EXPECT_EQ(test, out->wr.ud.remote_qkey, 0x1111);
		KUNIT_EXPECT_EQ(test, out->wr.ud.pkey_index, 5);
		KUNIT_EXPECT_EQ(test, out->wr.ud.ah_num, 9);
		break;
	case RT_REG:
		KUNIT_EXPECT_PTR_EQ(test, out->wr.reg.mr, WQE_RT_MR);
		KUNIT_EXPECT_EQ(test, out->wr.reg.key, 0x4242);
		KUNIT_EXPECT_EQ(test, out->wr.reg.access,
				IB_ACCESS_LOCAL_WRITE);
		break;
	case RT_PLAIN:
		KUNIT_EXPECT_EQ(test, slot->iova, 0);
		break;
	}
}

/* ib_send_wr -> slot -> check gives back what the WR said. */
static void wqe_roundtrip_test(struct kunit *test)
{
	const struct wqe_rt_case *t = test->param_value;
	struct rxe_send_wqe *slot = wqe_send_slot(test, WQE_SLOT_SIZE);
	struct sroce_wqe_limits lim = {
		.qp_type = t->qpt, .max_sge = 2, .max_inline = 64,
	};
	const struct rxe_sge *sge = sroce_wqe_sges(slot);
	struct sroce_send_wqe out;
	struct ib_sge sges[2];
	union wqe_any_wr w;

	wqe_rt_build(t, &w, sges);
	KUNIT_ASSERT_EQ(test, sroce_wqe_from_send_wr(&w.wr, 9, &lim, slot), 0);
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, out.wr_id, 0xabcdef);
	KUNIT_EXPECT_EQ(test, out.opcode, t->opcode);
	KUNIT_EXPECT_EQ(test, out.send_flags, IB_SEND_SIGNALED);
	KUNIT_EXPECT_EQ(test, out.length, t->length);
	KUNIT_EXPECT_EQ(test, slot->dma.resid, t->length);
	KUNIT_EXPECT_EQ(test, out.num_sge, t->num_sge);
	KUNIT_EXPECT_EQ(test, out.ex, t->has_ex ? 0x9988 : 0);
	if (t->num_sge >= 1) {
		KUNIT_EXPECT_EQ(test, sge[0].addr, 0x1000);
		KUNIT_EXPECT_EQ(test, sge[0].lkey, 0x501);
	}
	if (t->num_sge == 2) {
		KUNIT_EXPECT_EQ(test, sge[1].addr, 0x2000);
		KUNIT_EXPECT_EQ(test, sge[1].length, 28);
		KUNIT_EXPECT_EQ(test, sge[1].lkey, 0x502);
	}
	wqe_rt_expect_part(test, t, &out, slot);
}

/* IB_SEND_INLINE: the data the SGEs point at is packed into the slot. */
static void wqe_inline_test(struct kunit *test)
{
	static const char part1[] = "hello, ";
	static const char part2[] = "world";
	struct rxe_send_wqe *slot = wqe_send_slot(test, 256);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_RC, .max_sge = 3, .max_inline = 48,
	};
	struct ib_sge sges[2] = {
		{ .addr = (uintptr_t)part1, .length = 7 },
		{ .addr = (uintptr_t)part2, .length = 5 },
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_INLINE,
		.sg_list = sges, .num_sge = 2,
	};
	struct sroce_send_wqe out;

	KUNIT_ASSERT_EQ(test, sroce_wqe_from_send_wr(&wr, 0, &lim, slot), 0);
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_send(slot, &lim, &out),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, out.length, 12);
	KUNIT_EXPECT_EQ(test, out.num_sge, 0);
	KUNIT_EXPECT_EQ(test, memcmp(sroce_wqe_inline(slot), "hello, world",
				     12), 0);

	/* 48 bytes fit, 49 do not. */
	sges[0].addr = (uintptr_t)kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NE(test, sges[0].addr, 0);
	sges[0].length = 43;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(&wr, 0, &lim, slot), 0);
	sges[0].length = 44;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(&wr, 0, &lim, slot),
			-EINVAL);
}

/* Kernel WRs the check refuses; a bare ib_send_wr is never overread. */
static void wqe_from_send_wr_refusal_test(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_send_slot(test, 256);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_UD, .max_sge = 3, .max_inline = 48,
	};
	struct ib_send_wr *wr = kunit_kzalloc(test, sizeof(*wr), GFP_KERNEL);
	struct ib_sge sges[4] = {
		{ .length = 4 }, { .length = 4 }, { .length = 4 }, { .length = 4 },
	};

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, wr);
	wr->sg_list = sges;

	/* Not valid on UD: the rdma_wr() container must not be read. */
	wr->opcode = IB_WR_RDMA_READ;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 1, &lim, slot),
			-EINVAL);
	wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 1, &lim, slot),
			-EINVAL);

	/* A local operation on UD needs no AH number. */
	wr->opcode = IB_WR_LOCAL_INV;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot), 0);

	lim.qp_type = IB_QPT_RC;
	wr->opcode = IB_WR_SEND;
	wr->num_sge = 4;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot),
			-EINVAL);
	wr->num_sge = -1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot),
			-EINVAL);
	wr->num_sge = 3;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot), 0);

	/* BIND_MW has no kernel WR; masked atomics are not implemented. */
	wr->num_sge = 0;
	wr->opcode = IB_WR_BIND_MW;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot),
			-EINVAL);
	wr->opcode = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot),
			-EINVAL);

	/* REG_MR under user limits: refused before reg_wr() is read. */
	wr->opcode = IB_WR_REG_MR;
	lim.user = true;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(wr, 0, &lim, slot),
			-EINVAL);
}

static void wqe_ud_send_ah_test(struct kunit *test)
{
	struct rxe_send_wqe *slot = wqe_send_slot(test, 256);
	struct sroce_wqe_limits lim = {
		.qp_type = IB_QPT_GSI, .max_sge = 3, .max_inline = 48,
	};
	struct ib_ud_wr ud = { .wr.opcode = IB_WR_SEND, .remote_qpn = 1 };

	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(&ud.wr, 0, &lim, slot),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_send_wr(&ud.wr, 1, &lim, slot), 0);
}

struct wqe_recv_case {
	const char *name;
	u32 num_sge;
	u32 sge_len[3];		/* the first SGE lengths; the rest 16 */
	u32 max_sge;
	int ret;
	u32 length;
};

static const struct wqe_recv_case wqe_recv_cases[] = {
	{ "no SGE", 0, {}, 1, 0, 0 },
	{ "three SGEs", 3, { 1, 2, 3 }, 3, 0, 6 },
	{ "63 SGEs, max 63", 63, { 16, 16, 16 }, 63, 0, 1008 },
	{ "64 SGEs, max 63", 64, { 16, 16, 16 }, 63, -EINVAL, 0 },
	{ "2 SGEs, max 1", 2, { 1, 1 }, 1, -EINVAL, 0 },
	{ "64 SGEs, max above SROCE_MAX_SGE", 64, {}, 100, -EINVAL, 0 },
	{ "huge num_sge", 0xffffffff, {}, 63, -EINVAL, 0 },
	{ "sum 2^32", 2, { 0xffffffff, 1 }, 2, -EINVAL, 0 },
	{ "sum 4 GiB - 1", 2, { 0xfffffffe, 1 }, 2, 0, 0xffffffff },
	{ "2 GiB: above max message, harmless", 2,
	  { WQE_GIB, WQE_GIB }, 2, 0, 0x80000000 },
};

static void wqe_recv_desc(const struct wqe_recv_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(wqe_recv, wqe_recv_cases, wqe_recv_desc);

static void wqe_recv_test(struct kunit *test)
{
	const struct wqe_recv_case *t = test->param_value;
	/* 40 + 63 * 16 = 1048, rounded up to 2048: room for 125 SGEs. */
	struct rxe_recv_wqe *slot = kunit_kzalloc(test, 2048, GFP_KERNEL);
	struct sroce_recv_wqe *out = kunit_kzalloc(test, sizeof(*out),
						   GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slot);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	slot->wr_id = 77;
	slot->dma.num_sge = t->num_sge;
	slot->dma.length = 12345;	/* never trusted */
	for (i = 0; i < min_t(u32, t->num_sge, 125); i++) {
		slot->dma.sge[i].addr = 0x1000 * i;
		slot->dma.sge[i].length = i < 3 ? t->sge_len[i] : 16;
		slot->dma.sge[i].lkey = i;
	}

	KUNIT_EXPECT_EQ(test, sroce_wqe_check_recv(slot, t->max_sge, out),
			t->ret);
	KUNIT_EXPECT_EQ(test, out->wr_id, 77);
	if (t->ret)
		return;
	KUNIT_EXPECT_EQ(test, out->length, t->length);
	KUNIT_EXPECT_EQ(test, out->num_sge, t->num_sge);
	for (i = 0; i < t->num_sge; i++) {
		KUNIT_EXPECT_EQ(test, out->sge[i].addr, 0x1000 * i);
		KUNIT_EXPECT_EQ(test, out->sge[i].lkey, i);
	}
}

static void wqe_recv_roundtrip_test(struct kunit *test)
{
	/* 40 + 2 * 16 = 72, rounded up to 128. */
	struct rxe_recv_wqe *slot = kunit_kzalloc(test, 128, GFP_KERNEL);
	struct sroce_recv_wqe *out = kunit_kzalloc(test, sizeof(*out),
						   GFP_KERNEL);
	struct ib_sge sges[3] = {
		{ .addr = 0x10, .length = 100, .lkey = 1 },
		{ .addr = 0x20, .length = 200, .lkey = 2 },
		{ .addr = 0x30, .length = 300, .lkey = 3 },
	};
	struct ib_recv_wr wr = { .wr_id = 5, .sg_list = sges, .num_sge = 2 };

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slot);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	KUNIT_ASSERT_EQ(test, sroce_wqe_from_recv_wr(&wr, 2, slot), 0);
	KUNIT_EXPECT_EQ(test, slot->dma.length, 300);
	KUNIT_EXPECT_EQ(test, slot->dma.resid, 300);
	KUNIT_ASSERT_EQ(test, sroce_wqe_check_recv(slot, 2, out), 0);
	KUNIT_EXPECT_EQ(test, out->wr_id, 5);
	KUNIT_EXPECT_EQ(test, out->num_sge, 2);
	KUNIT_EXPECT_EQ(test, out->length, 300);
	KUNIT_EXPECT_EQ(test, out->sge[1].addr, 0x20);
	KUNIT_EXPECT_EQ(test, out->sge[1].length, 200);
	KUNIT_EXPECT_EQ(test, out->sge[1].lkey, 2);

	wr.num_sge = 3;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_recv_wr(&wr, 2, slot), -EINVAL);
	wr.num_sge = -1;
	KUNIT_EXPECT_EQ(test, sroce_wqe_from_recv_wr(&wr, 2, slot), -EINVAL);
}

static struct kunit_case sroce_wqe_test_cases[] = {
	KUNIT_CASE_PARAM(wqe_op_matrix_test, wqe_op_gen_params),
	KUNIT_CASE(wqe_other_qp_types_test),
	KUNIT_CASE_PARAM(wqe_len_test, wqe_len_gen_params),
	KUNIT_CASE(wqe_slot_bounds_test),
	KUNIT_CASE(wqe_send_flags_test),
	KUNIT_CASE(wqe_copy_send_test),
	KUNIT_CASE(wqe_copy_local_test),
	KUNIT_CASE_PARAM(wqe_roundtrip_test, wqe_rt_gen_params),
	KUNIT_CASE(wqe_inline_test),
	KUNIT_CASE(wqe_from_send_wr_refusal_test),
	KUNIT_CASE(wqe_ud_send_ah_test),
	KUNIT_CASE_PARAM(wqe_recv_test, wqe_recv_gen_params),
	KUNIT_CASE(wqe_recv_roundtrip_test),
	{}
};

static struct kunit_suite sroce_wqe_test_suite = {
	.name = "sroce_wqe",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_wqe_test_cases,
};

kunit_test_suites(&sroce_wqe_test_suite);
