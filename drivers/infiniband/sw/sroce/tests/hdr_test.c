// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the transport header accessors of sroce_hdr.h.
 *
 * hdr_fields[] gives, for every accessor pair, the bytes of its header the
 * field occupies, transcribed from the header diagrams of IBA vol 1
 * chapter 9 (BTH 9.2, RETH 9.3.3, AtomicETH 9.3.4, AETH 9.3.5,
 * AtomicAckETH 9.3.6, DETH 9.3.2, ImmDt 9.3.7, IETH 9.3.8).
 * hdr_vectors[] are whole headers as they appear on the wire, one of them
 * from a ConnectX-4 Lx capture.
 */

#include <kunit/test.h>

#include "test_util.h"
#include "wire/sroce_hdr.h"

/* Longest header: AtomicETH. */
#define HDR_MAX		sizeof(struct sroce_atmeth)
/* Headers are 4-byte aligned in packets, not 8-byte aligned. */
#define HDR_OFFSET	4

#define HDR_FIELD_OPS(hdr, field)					\
static u64 hdr##_##field##_get(const void *h)				\
{									\
	return sroce_##hdr##_##field(h);				\
}									\
static void hdr##_##field##_set(void *h, u64 v)				\
{									\
	sroce_##hdr##_set_##field(h, v);				\
}

HDR_FIELD_OPS(bth, opcode)
HDR_FIELD_OPS(bth, se)
HDR_FIELD_OPS(bth, mig)
HDR_FIELD_OPS(bth, pad)
HDR_FIELD_OPS(bth, tver)
HDR_FIELD_OPS(bth, pkey)
HDR_FIELD_OPS(bth, fecn)
HDR_FIELD_OPS(bth, becn)
HDR_FIELD_OPS(bth, destqp)
HDR_FIELD_OPS(bth, ackreq)
HDR_FIELD_OPS(bth, psn)
HDR_FIELD_OPS(reth, va)
HDR_FIELD_OPS(reth, rkey)
HDR_FIELD_OPS(reth, len)
HDR_FIELD_OPS(aeth, syndrome)
HDR_FIELD_OPS(aeth, type)
HDR_FIELD_OPS(aeth, code)
HDR_FIELD_OPS(aeth, msn)
HDR_FIELD_OPS(atmeth, va)
HDR_FIELD_OPS(atmeth, rkey)
HDR_FIELD_OPS(atmeth, swap_add)
HDR_FIELD_OPS(atmeth, compare)
HDR_FIELD_OPS(atmack, orig)
HDR_FIELD_OPS(deth, qkey)
HDR_FIELD_OPS(deth, sqp)
HDR_FIELD_OPS(ieth, rkey)

/* Immediate data is opaque: compare it in wire order. */
static u64 immdt_imm_get(const void *h)
{
	return be32_to_cpu(sroce_immdt_imm(h));
}

static void immdt_imm_set(void *h, u64 v)
{
	sroce_immdt_set_imm(h, cpu_to_be32(v));
}

enum hdr_field_id {
	F_BTH_OPCODE, F_BTH_SE, F_BTH_MIG, F_BTH_PAD, F_BTH_TVER, F_BTH_PKEY,
	F_BTH_FECN, F_BTH_BECN, F_BTH_DESTQP, F_BTH_ACKREQ, F_BTH_PSN,
	F_RETH_VA, F_RETH_RKEY, F_RETH_LEN,
	F_AETH_SYNDROME, F_AETH_TYPE, F_AETH_CODE, F_AETH_MSN,
	F_ATMETH_VA, F_ATMETH_RKEY, F_ATMETH_SWAP_ADD, F_ATMETH_COMPARE,
	F_ATMACK_ORIG,
	F_DETH_QKEY, F_DETH_SQP,
	F_IMMDT_IMM,
	F_IETH_RKEY,
	F_NR
};

struct hdr_field {
	const char *name;
	size_t hdr_len;
	u64 (*get)(const void *h);
	void (*set)(void *h, u64 v);
	u64 max;		/* the field with all bits set */
	u8 bits[HDR_MAX];	/* where those bits are in the header */
};

#define FIELD(id, _name, hdr, field, _max, ...)				\
	[id] = {							\
		.name = _name,						\
		.hdr_len = sizeof(struct sroce_##hdr),			\
		.get = hdr##_##field##_get,				\
		.set = hdr##_##field##_set,				\
		.max = _max,						\
		.bits = { __VA_ARGS__ },				\
	}

static const struct hdr_field hdr_fields[F_NR] = {
	FIELD(F_BTH_OPCODE, "BTH OpCode", bth, opcode, 0xff, [0] = 0xff),
	FIELD(F_BTH_SE, "BTH SE", bth, se, 1, [1] = 0x80),
	FIELD(F_BTH_MIG, "BTH M", bth, mig, 1, [1] = 0x40),
	FIELD(F_BTH_PAD, "BTH PadCnt", bth, pad, 3, [1] = 0x30),
	FIELD(F_BTH_TVER, "BTH TVer", bth, tver, 0xf, [1] = 0x0f),
	FIELD(F_BTH_PKEY, "BTH P_Key", bth, pkey, 0xffff, [2 ... 3] = 0xff),
	FIELD(F_BTH_FECN, "BTH FECN", bth, fecn, 1, [4] = 0x80),
	FIELD(F_BTH_BECN, "BTH BECN", bth, becn, 1, [4] = 0x40),
	FIELD(F_BTH_DESTQP, "BTH DestQP", bth, destqp, 0xffffff,
	      [5 ... 7] = 0xff),
	FIELD(F_BTH_ACKREQ, "BTH AckReq", bth, ackreq, 1, [8] = 0x80),
	FIELD(F_BTH_PSN, "BTH PSN", bth, psn, 0xffffff,
	      [9 ... 11] = 0xff),
	FIELD(F_RETH_VA, "RETH VA", reth, va, U64_MAX, [0 ... 7] = 0xff),
	FIELD(F_RETH_RKEY, "RETH R_Key", reth, rkey, U32_MAX,
	      [8 ... 11] = 0xff),
	FIELD(F_RETH_LEN, "RETH DMA Length", reth, len, U32_MAX,
	      [12 ... 15] = 0xff),
	FIELD(F_AETH_SYNDROME, "AETH Syndrome", aeth, syndrome, 0xff,
	      [0] = 0xff),
	FIELD(F_AETH_TYPE, "AETH Syndrome type", aeth, type, 3, [0] = 0x60),
	FIELD(F_AETH_CODE, "AETH Syndrome code", aeth, code, 0x1f, [0] = 0x1f),
	FIELD(F_AETH_MSN, "AETH MSN", aeth, msn, 0xffffff,
	      [1 ... 3] = 0xff),
	FIELD(F_ATMETH_VA, "AtomicETH VA", atmeth, va, U64_MAX,
	      [0 ... 7] = 0xff),
	FIELD(F_ATMETH_RKEY, "AtomicETH R_Key", atmeth, rkey, U32_MAX,
	      [8 ... 11] = 0xff),
	FIELD(F_ATMETH_SWAP_ADD, "AtomicETH Swap/Add Data", atmeth, swap_add,
	      U64_MAX, [12 ... 19] = 0xff),
	FIELD(F_ATMETH_COMPARE, "AtomicETH Compare Data", atmeth, compare,
	      U64_MAX, [20 ... 27] = 0xff),
	FIELD(F_ATMACK_ORIG, "AtomicAckETH Orig Remote Data", atmack, orig,
	      U64_MAX, [0 ... 7] = 0xff),
	FIELD(F_DETH_QKEY, "DETH Q_Key", deth, qkey, U32_MAX,
	      [0 ... 3] = 0xff),
	FIELD(F_DETH_SQP, "DETH SrcQP", deth, sqp, 0xffffff,
	      [5 ... 7] = 0xff),
	FIELD(F_IMMDT_IMM, "ImmDt", immdt, imm, U32_MAX,
	      [0 ... 3] = 0xff),
	FIELD(F_IETH_RKEY, "IETH R_Key", ieth, rkey, U32_MAX,
	      [0 ... 3] = 0xff),
};

static void hdr_field_desc(const struct hdr_field *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hdr_field, hdr_fields, hdr_field_desc);

/* A header buffer placed like in a packet: 4-byte but not 8-byte aligned. */
static u8 *hdr_buf(struct kunit *test, int fill)
{
	u64 *buf = kunit_kmalloc(test, HDR_OFFSET + HDR_MAX, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	memset(buf, fill, HDR_OFFSET + HDR_MAX);
	return (u8 *)buf + HDR_OFFSET;
}

static void expect_bytes(struct kunit *test, const u8 *got, const u8 *want,
			 size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		KUNIT_EXPECT_EQ_MSG(test, got[i], want[i], "byte %zu", i);
}

/*
 * Setting a field to all ones in a zeroed header must set exactly its bits;
 * clearing it in a header of all ones must clear exactly those.
 */
static void hdr_field_bits_test(struct kunit *test)
{
	const struct hdr_field *f = test->param_value;
	u8 want[HDR_MAX];
	u8 *h;
	size_t i;

	h = hdr_buf(test, 0);
	f->set(h, f->max);
	expect_bytes(test, h, f->bits, f->hdr_len);
	KUNIT_EXPECT_EQ(test, f->get(h), f->max);

	h = hdr_buf(test, 0xff);
	f->set(h, 0);
	for (i = 0; i < f->hdr_len; i++)
		want[i] = ~f->bits[i];
	expect_bytes(test, h, want, f->hdr_len);
	KUNIT_EXPECT_EQ(test, f->get(h), 0);
}

/* Values round-trip; values wider than the field are cut to it. */
static void hdr_field_roundtrip_test(struct kunit *test)
{
	const struct hdr_field *f = test->param_value;
	const u64 pattern = 0x0123456789abcdefULL;
	u8 *h = hdr_buf(test, 0);

	f->set(h, pattern & f->max);
	KUNIT_EXPECT_EQ(test, f->get(h), pattern & f->max);
	f->set(h, ~pattern & f->max);
	KUNIT_EXPECT_EQ(test, f->get(h), ~pattern & f->max);

	/* Flags take a bool; full words have nothing to cut off. */
	if (f->max == 1 || f->max == U32_MAX || f->max == U64_MAX)
		return;
	f->set(h, f->max + 1);
	KUNIT_EXPECT_EQ(test, f->get(h), 0);
}

struct hdr_vector_field {
	enum hdr_field_id id;
	u64 val;
};

struct hdr_vector {
	const char *name;
	size_t len;
	u8 bytes[HDR_MAX];
	struct hdr_vector_field fields[12];
	unsigned int nfields;
};

#define VECTOR_FIELDS(...)						\
	.fields = { __VA_ARGS__ },					\
	.nfields = ARRAY_SIZE(((struct hdr_vector_field[]){ __VA_ARGS__ }))

static const struct hdr_vector hdr_vectors[] = {
	{
		/* The BTH of the CNP in the ConnectX-4 Lx capture. */
		.name = "BTH of a captured CNP",
		.len = 12,
		.bytes = { 0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
			   0x00, 0x00, 0x00, 0x00 },
		VECTOR_FIELDS({ F_BTH_OPCODE, 0x81 }, { F_BTH_SE, 0 },
			      { F_BTH_MIG, 0 }, { F_BTH_PAD, 0 },
			      { F_BTH_TVER, 0 }, { F_BTH_PKEY, 0xffff },
			      { F_BTH_FECN, 0 }, { F_BTH_BECN, 1 },
			      { F_BTH_DESTQP, 0x118 }, { F_BTH_ACKREQ, 0 },
			      { F_BTH_PSN, 0 }),
	},
	{
		.name = "BTH RC SEND_ONLY with AckReq",
		.len = 12,
		.bytes = { 0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
			   0x80, 0x00, 0x00, 0x01 },
		VECTOR_FIELDS({ F_BTH_OPCODE, 0x04 }, { F_BTH_SE, 0 },
			      { F_BTH_PAD, 0 }, { F_BTH_PKEY, 0xffff },
			      { F_BTH_DESTQP, 0x11 }, { F_BTH_ACKREQ, 1 },
			      { F_BTH_PSN, 1 }),
	},
	{
		.name = "BTH with distinct fields",
		.len = 12,
		.bytes = { 0x0b, 0xa0, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef,
			   0x00, 0x12, 0x34, 0x56 },
		VECTOR_FIELDS({ F_BTH_OPCODE, 0x0b }, { F_BTH_SE, 1 },
			      { F_BTH_MIG, 0 }, { F_BTH_PAD, 2 },
			      { F_BTH_TVER, 0 }, { F_BTH_PKEY, 0x8001 },
			      { F_BTH_FECN, 1 }, { F_BTH_BECN, 0 },
			      { F_BTH_DESTQP, 0xabcdef }, { F_BTH_ACKREQ, 0 },
			      { F_BTH_PSN, 0x123456 }),
	},
	{
		.name = "BTH with every field set",
		.len = 12,
		.bytes = { 0xff, 0xff, 0xff, 0xff, 0xc0, 0xff, 0xff, 0xff,
			   0x80, 0xff, 0xff, 0xff },
		VECTOR_FIELDS({ F_BTH_OPCODE, 0xff }, { F_BTH_SE, 1 },
			      { F_BTH_MIG, 1 }, { F_BTH_PAD, 3 },
			      { F_BTH_TVER, 0xf }, { F_BTH_PKEY, 0xffff },
			      { F_BTH_FECN, 1 }, { F_BTH_BECN, 1 },
			      { F_BTH_DESTQP, 0xffffff }, { F_BTH_ACKREQ, 1 },
			      { F_BTH_PSN, 0xffffff }),
	},
	{
		.name = "RETH",
		.len = 16,
		.bytes = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
			   0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x10, 0x00 },
		VECTOR_FIELDS({ F_RETH_VA, 0x0123456789abcdefULL },
			      { F_RETH_RKEY, 0xdeadbeef },
			      { F_RETH_LEN, 0x1000 }),
	},
	{
		.name = "AETH ACK without credits",
		.len = 4,
		.bytes = { 0x1f, 0x00, 0x00, 0x2a },
		VECTOR_FIELDS({ F_AETH_SYNDROME, 0x1f },
			      { F_AETH_TYPE, SROCE_AETH_ACK },
			      { F_AETH_CODE, SROCE_AETH_CREDITS_INVALID },
			      { F_AETH_MSN, 0x2a }),
	},
	{
		.name = "AETH RNR NAK",
		.len = 4,
		.bytes = { 0x2e, 0x12, 0x34, 0x56 },
		VECTOR_FIELDS({ F_AETH_SYNDROME, 0x2e },
			      { F_AETH_TYPE, SROCE_AETH_RNR_NAK },
			      { F_AETH_CODE, 0x0e }, { F_AETH_MSN, 0x123456 }),
	},
	{
		.name = "AETH NAK remote access error",
		.len = 4,
		.bytes = { 0x62, 0xff, 0xff, 0xff },
		VECTOR_FIELDS({ F_AETH_SYNDROME, 0x62 },
			      { F_AETH_TYPE, SROCE_AETH_NAK },
			      { F_AETH_CODE, SROCE_NAK_REM_ACCESS_ERR },
			      { F_AETH_MSN, 0xffffff }),
	},
	{
		.name = "AETH NAK PSN sequence error",
		.len = 4,
		.bytes = { 0x60, 0x00, 0x00, 0x05 },
		VECTOR_FIELDS({ F_AETH_SYNDROME, 0x60 },
			      { F_AETH_TYPE, SROCE_AETH_NAK },
			      { F_AETH_CODE, SROCE_NAK_PSN_SEQ_ERR },
			      { F_AETH_MSN, 5 }),
	},
	{
		.name = "AtomicETH",
		.len = 28,
		.bytes = { 0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x50, 0x00,
			   0x00, 0x00, 0x12, 0x34,
			   0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44,
			   0x55, 0x55, 0x66, 0x66, 0x77, 0x77, 0x88, 0x88 },
		VECTOR_FIELDS({ F_ATMETH_VA, 0x00007f0012345000ULL },
			      { F_ATMETH_RKEY, 0x1234 },
			      { F_ATMETH_SWAP_ADD, 0x1111222233334444ULL },
			      { F_ATMETH_COMPARE, 0x5555666677778888ULL }),
	},
	{
		.name = "AtomicAckETH",
		.len = 8,
		.bytes = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 },
		VECTOR_FIELDS({ F_ATMACK_ORIG, 0x0102030405060708ULL }),
	},
	{
		.name = "DETH of a GSI datagram",
		.len = 8,
		.bytes = { 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 },
		VECTOR_FIELDS({ F_DETH_QKEY, SROCE_GSI_QKEY },
			      { F_DETH_SQP, 1 }),
	},
	{
		.name = "DETH with distinct fields",
		.len = 8,
		.bytes = { 0x11, 0x22, 0x33, 0x44, 0x00, 0xfe, 0xdc, 0xba },
		VECTOR_FIELDS({ F_DETH_QKEY, 0x11223344 },
			      { F_DETH_SQP, 0xfedcba }),
	},
	{
		.name = "ImmDt",
		.len = 4,
		.bytes = { 0xfe, 0xed, 0xfa, 0xce },
		VECTOR_FIELDS({ F_IMMDT_IMM, 0xfeedface }),
	},
	{
		.name = "IETH",
		.len = 4,
		.bytes = { 0xab, 0xcd, 0x01, 0x02 },
		VECTOR_FIELDS({ F_IETH_RKEY, 0xabcd0102 }),
	},
};

static void hdr_vector_desc(const struct hdr_vector *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hdr_vector, hdr_vectors, hdr_vector_desc);

/* Every listed field reads back from the wire bytes. */
static void hdr_vector_decode_test(struct kunit *test)
{
	const struct hdr_vector *t = test->param_value;
	u8 *h = hdr_buf(test, 0);
	unsigned int i;

	memcpy(h, t->bytes, t->len);
	for (i = 0; i < t->nfields; i++) {
		const struct hdr_field *f = &hdr_fields[t->fields[i].id];

		KUNIT_EXPECT_EQ(test, f->hdr_len, t->len);
		KUNIT_EXPECT_EQ_MSG(test, f->get(h), t->fields[i].val,
				    "%s", f->name);
	}
}

/* Setting the listed fields in a zeroed header gives the wire bytes. */
static void hdr_vector_encode_test(struct kunit *test)
{
	const struct hdr_vector *t = test->param_value;
	u8 *h = hdr_buf(test, 0);
	unsigned int i;

	for (i = 0; i < t->nfields; i++)
		hdr_fields[t->fields[i].id].set(h, t->fields[i].val);
	expect_bytes(test, h, t->bytes, t->len);
}

struct pad_case {
	u32 len;
	u8 pad;
};

static const struct pad_case pad_cases[] = {
	{ 0, 0 }, { 1, 3 }, { 2, 2 }, { 3, 1 }, { 4, 0 },
	{ 4095, 1 }, { 4097, 3 }, { U32_MAX, 1 },
};

static void pad_desc(const struct pad_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "payload %u", t->len);
}

KUNIT_ARRAY_PARAM(pad, pad_cases, pad_desc);

static void hdr_pad_count_test(struct kunit *test)
{
	const struct pad_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_pad_count(t->len), t->pad);
}

static struct kunit_case sroce_hdr_test_cases[] = {
	KUNIT_CASE_PARAM(hdr_field_bits_test, hdr_field_gen_params),
	KUNIT_CASE_PARAM(hdr_field_roundtrip_test, hdr_field_gen_params),
	KUNIT_CASE_PARAM(hdr_vector_decode_test, hdr_vector_gen_params),
	KUNIT_CASE_PARAM(hdr_vector_encode_test, hdr_vector_gen_params),
	KUNIT_CASE_PARAM(hdr_pad_count_test, pad_gen_params),
	{}
};

static struct kunit_suite sroce_hdr_test_suite = {
	.name = "sroce_hdr",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_hdr_test_cases,
};

kunit_test_suites(&sroce_hdr_test_suite);
