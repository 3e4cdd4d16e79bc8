// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the rings of sroce_queue.[ch].
 *
 * The expectations come from the shared-ring ABI of rdma_user_rxe.h as
 * librxe uses it: 2^n slots, empty is prod == cons, full is
 * cons == prod + 1 (so 2^n - 1 entries), slot i at data + (i << log2),
 * indices compared modulo the slot count. Where a test plays user space
 * it does what librxe does: it reads the geometry from the header and
 * moves its own index with a store-release. The mmap path needs a user
 * context and is left to the VM scenarios.
 */

#include <kunit/test.h>
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/sizes.h>

#include "obj/sroce_queue.h"
#include "test_util.h"

/* Pure ring arithmetic. */

struct ring_case {
	const char *name;
	u32 prod, cons, mask;
	u32 count;
	bool empty, full;
};

static const struct ring_case ring_cases[] = {
	{ "new ring", 0, 0, 7, 0, true, false },
	{ "three in", 3, 0, 7, 3, false, false },
	{ "full from zero", 7, 0, 7, 7, false, true },
	{ "full across the wrap", 0, 1, 7, 7, false, true },
	{ "wrapped, five in", 2, 5, 7, 5, false, false },
	{ "wrapped, full", 4, 5, 7, 7, false, true },
	{ "empty at the last slot", 7, 7, 7, 0, true, false },
	{ "two slots, one in", 1, 0, 1, 1, false, true },
	{ "two slots, one in, wrapped", 0, 1, 1, 1, false, true },
	{ "garbage above the mask, empty", 0x103, 0xff03, 7, 0, true, false },
	{ "all ones producer is slot 7", 0xffffffff, 0, 7, 7, false, true },
	{ "garbage producer, one in", 0xfffffff8, 7, 7, 1, false, false },
	{ "64k slots, garbage consumer", 0, 0x10000, 0xffff, 0, true, false },
	{ "64k slots, full", 0xffff, 0, 0xffff, 0xffff, false, true },
	{ "64k slots, wrapped", 0x10, 0xfff0, 0xffff, 0x20, false, false },
};

static void ring_desc(const struct ring_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ring, ring_cases, ring_desc);

static void ring_arith_test(struct kunit *test)
{
	const struct ring_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_ring_count(t->prod, t->cons, t->mask),
			t->count);
	KUNIT_EXPECT_EQ(test, sroce_ring_empty(t->prod, t->cons, t->mask),
			t->empty);
	KUNIT_EXPECT_EQ(test, sroce_ring_full(t->prod, t->cons, t->mask),
			t->full);
}

/*
 * The requester's SQ head walks from the consumer index to the producer
 * index, which user space may move anywhere, backwards too.
 */
struct holds_case {
	const char *name;
	u32 prod, cons, index, mask;
	bool holds;
};

static const struct holds_case holds_cases[] = {
	{ "empty ring", 3, 3, 3, 7, false },
	{ "the oldest of three", 3, 0, 0, 7, true },
	{ "the newest of three", 3, 0, 2, 7, true },
	{ "the producer's slot", 3, 0, 3, 7, false },
	{ "wrapped, inside", 2, 5, 0, 7, true },
	{ "wrapped, behind the consumer", 2, 5, 4, 7, false },
	{ "producer moved back behind the head", 1, 0, 3, 7, false },
	{ "producer moved back to the consumer", 0, 0, 2, 7, false },
	{ "producer moved back, wrapped", 6, 5, 0, 7, false },
	{ "full ring, its last slot", 4, 5, 3, 7, true },
	{ "garbage above the mask", 0xff03, 0x100, 0x2, 7, true },
};

static void holds_desc(const struct holds_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(holds, holds_cases, holds_desc);

static void ring_holds_test(struct kunit *test)
{
	const struct holds_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_ring_holds(t->prod, t->cons, t->index,
					       t->mask), t->holds);
}

struct next_case {
	u32 index, mask, next;
};

static const struct next_case next_cases[] = {
	{ 0, 7, 1 },
	{ 6, 7, 7 },
	{ 7, 7, 0 },
	{ 0, 1, 1 },
	{ 1, 1, 0 },
	{ 0xfffe, 0xffff, 0xffff },
	{ 0xffff, 0xffff, 0 },
	{ 0xffffffff, 0xff, 0 },
	{ 0x1234, 0xff, 0x35 },
};

static void next_desc(const struct next_case *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%#x mask %#x", t->index,
		 t->mask);
}

KUNIT_ARRAY_PARAM(next, next_cases, next_desc);

static void ring_next_test(struct kunit *test)
{
	const struct next_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_ring_next(t->index, t->mask), t->next);
}

/* Sizing. Slot sizes of 128 and up do not depend on the cache line. */

struct slots_case {
	const char *name;
	u32 num_elem;
	size_t elem_size;
	int ret;
	u32 num_slots, log2;
};

static const struct slots_case slots_cases[] = {
	{ "1 entry, 2 slots", 1, 128, 0, 2, 7 },
	{ "2 entries, 4 slots", 2, 128, 0, 4, 7 },
	{ "3 entries, 4 slots", 3, 128, 0, 4, 7 },
	{ "4 entries, 8 slots", 4, 128, 0, 8, 7 },
	{ "7 entries, 8 slots", 7, 128, 0, 8, 7 },
	{ "8 entries, 16 slots", 8, 128, 0, 16, 7 },
	{ "255 entries", 255, 128, 0, 256, 7 },
	{ "256 entries", 256, 128, 0, 512, 7 },
	{ "most CQEs", 131071, 128, 0, 131072, 7 },
	{ "most send WRs, 63 SGEs", 32768, 1216, 0, 65536, 11 },
	{ "129 bytes is 256", 4, 129, 0, 8, 8 },
	{ "200 bytes is 256", 4, 200, 0, 8, 8 },
	{ "256 bytes is 256", 4, 256, 0, 8, 8 },
	{ "257 bytes is 512", 4, 257, 0, 8, 9 },
	{ "largest ring, 1 GiB of slots", SZ_1M - 1, SZ_1K, 0, SZ_1M, 10 },
	{ "largest slot", 1, SZ_512M, 0, 2, 29 },
	{ "no entry", 0, 128, -EINVAL, 0, 0 },
	{ "empty entries", 4, 0, -EINVAL, 0, 0 },
	{ "2 GiB of slots", SZ_1M, SZ_1K, -EINVAL, 0, 0 },
	{ "1 GiB slots", 1, SZ_1G, -EINVAL, 0, 0 },
	{ "slot above 1 GiB", 1, SZ_1G + 1, -EINVAL, 0, 0 },
	{ "huge slot", 1, SIZE_MAX, -EINVAL, 0, 0 },
	{ "2^30 - 1 entries", SZ_1G - 1, 1, -EINVAL, 0, 0 },
	{ "2^31 entries", 0x80000000, 128, -EINVAL, 0, 0 },
	{ "U32_MAX entries", U32_MAX, 128, -EINVAL, 0, 0 },
};

static void slots_desc(const struct slots_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(slots, slots_cases, slots_desc);

static void queue_slots_test(struct kunit *test)
{
	const struct slots_case *t = test->param_value;
	u32 num_slots = 0xdead, log2 = 0xbeef;
	int ret;

	ret = sroce_queue_slots(t->num_elem, t->elem_size, &num_slots, &log2);
	KUNIT_EXPECT_EQ(test, ret, t->ret);
	if (ret)
		return;
	KUNIT_EXPECT_EQ(test, num_slots, t->num_slots);
	KUNIT_EXPECT_EQ(test, log2, t->log2);
}

/* Entries smaller than a cache line get a whole (power-of-two) line. */
static void queue_slots_cache_line_test(struct kunit *test)
{
	static const size_t sizes[] = { 1, 8, 16, 63 };
	unsigned int line = cache_line_size();
	u32 num_slots, log2;
	unsigned int i;

	KUNIT_ASSERT_TRUE(test, is_power_of_2(line));
	KUNIT_ASSERT_GE(test, line, 64U);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		KUNIT_EXPECT_EQ(test, sroce_queue_slots(3, sizes[i], &num_slots,
							&log2), 0);
		KUNIT_EXPECT_EQ(test, 1U << log2, line);
		KUNIT_EXPECT_EQ(test, num_slots, 4U);
	}
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(3, line, &num_slots, &log2), 0);
	KUNIT_EXPECT_EQ(test, 1U << log2, line);
	KUNIT_EXPECT_EQ(test, sroce_queue_slots(3, line + 1, &num_slots, &log2),
			0);
	KUNIT_EXPECT_EQ(test, 1U << log2, 2 * line);
}

/*
 * Real rings. The fixture holds two rings, cleaned up by the suite's exit
 * hook even when a case stops at a failed assertion.
 */

struct queue_fixture {
	struct sroce_queue q;
	struct sroce_queue other;
};

static int queue_test_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct queue_fixture),
				   GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

static void queue_test_exit(struct kunit *test)
{
	struct queue_fixture *f = test->priv;

	sroce_queue_cleanup(&f->q);
	sroce_queue_cleanup(&f->other);
}

static const enum sroce_queue_kind queue_kinds[] = {
	SROCE_QUEUE_FROM_USER, SROCE_QUEUE_TO_USER, SROCE_QUEUE_KERNEL,
};

static void kind_desc(const enum sroce_queue_kind *kind, char *desc)
{
	static const char * const names[] = {
		[SROCE_QUEUE_FROM_USER] = "from user",
		[SROCE_QUEUE_TO_USER] = "to user",
		[SROCE_QUEUE_KERNEL] = "kernel",
	};

	strscpy(desc, names[*kind], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kind, queue_kinds, kind_desc);

#define TEST_ELEM_SIZE	128

/* The u32 at word @w of entry number @seq. */
static u32 pattern(u32 seq, unsigned int w)
{
	return (seq * 0x01000193) ^ (w << 24) ^ 0x5a5a0000;
}

static void fill_slot(void *slot, u32 seq)
{
	u32 *word = slot;
	unsigned int w;

	for (w = 0; w < TEST_ELEM_SIZE / sizeof(u32); w++)
		word[w] = pattern(seq, w);
}

static void check_slot(struct kunit *test, const void *slot, u32 seq)
{
	const u32 *word = slot;
	unsigned int w;

	for (w = 0; w < TEST_ELEM_SIZE / sizeof(u32); w++)
		KUNIT_EXPECT_EQ_MSG(test, word[w], pattern(seq, w),
				    "entry %u word %u", seq, w);
}

/* Adds entry @seq as the ring's producer: user space or the kernel. */
static void produce(struct kunit *test, struct sroce_queue *q, u32 seq)
{
	struct rxe_queue_buf *buf = q->buf;
	u32 prod, cons;

	if (q->kind != SROCE_QUEUE_FROM_USER) {
		KUNIT_ASSERT_FALSE(test, sroce_queue_full(q));
		fill_slot(sroce_queue_producer_slot(q), seq);
		sroce_queue_advance_producer(q);
		return;
	}
	/* librxe: its own index, the kernel's read with a load-acquire. */
	prod = READ_ONCE(buf->producer_index);
	/* Pairs with the kernel's release of the consumer index. */
	cons = smp_load_acquire(&buf->consumer_index);
	KUNIT_ASSERT_FALSE(test, sroce_ring_full(prod, cons, buf->index_mask));
	fill_slot(buf->data + (prod << buf->log2_elem_size), seq);
	/* Pairs with sroce_queue_load_prod()'s acquire. */
	smp_store_release(&buf->producer_index,
			  (prod + 1) & buf->index_mask);
}

/* Takes the oldest entry as the ring's consumer and checks it is @seq. */
static void consume(struct kunit *test, struct sroce_queue *q, u32 seq)
{
	struct rxe_queue_buf *buf = q->buf;
	u32 prod, cons;

	if (q->kind != SROCE_QUEUE_TO_USER) {
		KUNIT_ASSERT_FALSE(test, sroce_queue_empty(q));
		check_slot(test, sroce_queue_consumer_slot(q), seq);
		sroce_queue_advance_consumer(q);
		return;
	}
	cons = READ_ONCE(buf->consumer_index);
	/* Pairs with the kernel's release of the producer index. */
	prod = smp_load_acquire(&buf->producer_index);
	KUNIT_ASSERT_FALSE(test, sroce_ring_empty(prod, cons, buf->index_mask));
	check_slot(test, buf->data + (cons << buf->log2_elem_size), seq);
	/* Pairs with sroce_queue_load_cons()'s acquire. */
	smp_store_release(&buf->consumer_index,
			  (cons + 1) & buf->index_mask);
}

/* The header shows what the private copies say; both indices masked. */
static void check_header(struct kunit *test, struct sroce_queue *q)
{
	u32 prod = sroce_queue_load_prod(q);
	u32 cons = sroce_queue_load_cons(q);

	KUNIT_EXPECT_EQ(test, q->buf->index_mask, q->index_mask);
	KUNIT_EXPECT_EQ(test, q->buf->log2_elem_size, q->log2_elem_size);
	KUNIT_EXPECT_EQ(test, q->buf->producer_index, prod);
	KUNIT_EXPECT_EQ(test, q->buf->consumer_index, cons);
	KUNIT_EXPECT_LE(test, prod, q->index_mask);
	KUNIT_EXPECT_LE(test, cons, q->index_mask);
}

static void queue_init_test(struct kunit *test)
{
	const enum sroce_queue_kind *kind = test->param_value;
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q;

	/* 5 entries: 8 slots of 128 bytes after the 384-byte header. */
	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, *kind, 5, 100), 0);
	KUNIT_EXPECT_EQ(test, q->kind, *kind);
	KUNIT_EXPECT_EQ(test, q->buf_size, 384 + 8 * 128);
	KUNIT_EXPECT_EQ(test, sroce_queue_depth(q), 7U);
	KUNIT_EXPECT_EQ(test, sroce_queue_elem_size(q), 128);
	KUNIT_EXPECT_EQ(test, q->buf->index_mask, 7U);
	KUNIT_EXPECT_EQ(test, q->buf->log2_elem_size, 7U);
	KUNIT_EXPECT_PTR_EQ(test, sroce_queue_slot(q, 0), (void *)q->buf + 384);
	KUNIT_EXPECT_PTR_EQ(test, sroce_queue_slot(q, 7),
			    (void *)q->buf + 384 + 7 * 128);
	KUNIT_EXPECT_PTR_EQ(test, q->mmap, NULL);
	KUNIT_EXPECT_TRUE(test, sroce_queue_empty(q));
	KUNIT_EXPECT_FALSE(test, sroce_queue_full(q));
	KUNIT_EXPECT_EQ(test, sroce_queue_count(q), 0U);
	check_header(test, q);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(q->buf->data, 0, 8 * 128), NULL);
}

/* Refused rings leave nothing behind; cleanup is idempotent. */
static void queue_init_refused_test(struct kunit *test)
{
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q;

	KUNIT_EXPECT_EQ(test, sroce_queue_init(q, SROCE_QUEUE_KERNEL, 0, 64),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, q->buf, NULL);
	KUNIT_EXPECT_EQ(test, sroce_queue_init(q, 3, 4, 64), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, q->buf, NULL);
	KUNIT_EXPECT_EQ(test, sroce_queue_init(q, SROCE_QUEUE_KERNEL, SZ_1M,
					       SZ_1K), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, q->buf, NULL);
	sroce_queue_cleanup(q);

	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, SROCE_QUEUE_KERNEL, 1, 64),
			0);
	sroce_queue_cleanup(q);
	KUNIT_EXPECT_PTR_EQ(test, q->buf, NULL);
	sroce_queue_cleanup(q);
}

/* Fill to depth, then empty again, with the counts seen on the way. */
static void queue_fill_test(struct kunit *test)
{
	const enum sroce_queue_kind *kind = test->param_value;
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q;
	u32 i;

	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, *kind, 7, TEST_ELEM_SIZE),
			0);
	KUNIT_ASSERT_EQ(test, sroce_queue_depth(q), 7U);
	for (i = 0; i < 7; i++) {
		KUNIT_EXPECT_FALSE(test, sroce_queue_full(q));
		produce(test, q, i);
		KUNIT_EXPECT_EQ(test, sroce_queue_count(q), i + 1);
		KUNIT_EXPECT_FALSE(test, sroce_queue_empty(q));
	}
	KUNIT_EXPECT_TRUE(test, sroce_queue_full(q));
	check_header(test, q);
	for (i = 0; i < 7; i++) {
		consume(test, q, i);
		KUNIT_EXPECT_EQ(test, sroce_queue_count(q), 6 - i);
		KUNIT_EXPECT_FALSE(test, sroce_queue_full(q));
	}
	KUNIT_EXPECT_TRUE(test, sroce_queue_empty(q));
	/* Both indices went once round the 8 slots, less one. */
	KUNIT_EXPECT_EQ(test, sroce_queue_load_prod(q), 7U);
	KUNIT_EXPECT_EQ(test, sroce_queue_load_cons(q), 7U);
	check_header(test, q);
}

/*
 * Round a 4-slot ring many times with uneven bursts: 40 produced entries
 * is ten trips round, and each burst ends at a different slot.
 */
static void queue_wrap_test(struct kunit *test)
{
	static const u32 bursts[][2] = {	/* produce, then consume */
		{ 3, 2 }, { 2, 3 }, { 1, 0 }, { 2, 2 }, { 1, 2 }, { 3, 3 },
	};
	const enum sroce_queue_kind *kind = test->param_value;
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q;
	u32 produced = 0, consumed = 0, i, n;

	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, *kind, 3, TEST_ELEM_SIZE),
			0);
	KUNIT_ASSERT_EQ(test, sroce_queue_depth(q), 3U);
	for (i = 0; produced < 40; i++) {
		const u32 *burst = bursts[i % ARRAY_SIZE(bursts)];

		for (n = 0; n < burst[0]; n++)
			produce(test, q, produced++);
		KUNIT_EXPECT_EQ(test, sroce_queue_count(q), produced - consumed);
		KUNIT_EXPECT_EQ(test, sroce_queue_full(q),
				produced - consumed == 3);
		for (n = 0; n < burst[1]; n++)
			consume(test, q, consumed++);
		KUNIT_EXPECT_EQ(test, sroce_queue_count(q), produced - consumed);
		KUNIT_EXPECT_EQ(test, sroce_queue_empty(q), produced == consumed);
		check_header(test, q);
	}
	while (consumed < produced)
		consume(test, q, consumed++);
	KUNIT_EXPECT_TRUE(test, sroce_queue_empty(q));
	KUNIT_EXPECT_EQ(test, sroce_queue_load_prod(q), produced & 3);
}

static const u32 scribbles[] = {
	0xffffffff, 0x80000000, 8, 9, 0xdeadbeef, 0x12345677, 0xfffffff8,
};

static void expect_in_ring(struct kunit *test, struct sroce_queue *q,
			   const void *slot)
{
	const void *first = q->buf->data;
	const void *end = (const void *)q->buf + q->buf_size;

	KUNIT_EXPECT_TRUE(test, slot >= first);
	KUNIT_EXPECT_TRUE(test, slot + sroce_queue_elem_size(q) <= end);
	KUNIT_EXPECT_EQ(test, (slot - first) % sroce_queue_elem_size(q), 0);
}

/*
 * User space writes nonsense into the index it owns and into the
 * geometry: the kernel still sees at most depth entries and every slot it
 * may touch lies inside the buffer.
 */
static void queue_scribble_test(struct kunit *test)
{
	const enum sroce_queue_kind *kind = test->param_value;
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q;
	u32 i, n, count, index;

	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, *kind, 7, TEST_ELEM_SIZE),
			0);
	for (i = 0; i < ARRAY_SIZE(scribbles); i++) {
		WRITE_ONCE(q->buf->log2_elem_size, 31);
		WRITE_ONCE(q->buf->index_mask, 0xffffffff);
		if (*kind == SROCE_QUEUE_FROM_USER)
			WRITE_ONCE(q->buf->producer_index, scribbles[i]);
		else if (*kind == SROCE_QUEUE_TO_USER)
			WRITE_ONCE(q->buf->consumer_index, scribbles[i]);

		KUNIT_EXPECT_EQ(test, sroce_queue_load_prod(q),
				*kind == SROCE_QUEUE_FROM_USER ?
				scribbles[i] & 7 : q->prod);
		KUNIT_EXPECT_EQ(test, sroce_queue_load_cons(q),
				*kind == SROCE_QUEUE_TO_USER ?
				scribbles[i] & 7 : q->cons);
		count = sroce_queue_count(q);
		KUNIT_EXPECT_LE(test, count, 7U);
		KUNIT_EXPECT_EQ(test, q->index_mask, 7U);
		KUNIT_EXPECT_EQ(test, q->log2_elem_size, 7U);
		expect_in_ring(test, q, sroce_queue_slot(q, scribbles[i]));

		/* The kernel's side works through what it believes. */
		for (n = 0; n < 8; n++) {
			if (*kind == SROCE_QUEUE_TO_USER) {
				if (sroce_queue_full(q))
					break;
				expect_in_ring(test, q,
					       sroce_queue_producer_slot(q));
				sroce_queue_advance_producer(q);
			} else {
				if (sroce_queue_empty(q))
					break;
				expect_in_ring(test, q,
					       sroce_queue_consumer_slot(q));
				sroce_queue_advance_consumer(q);
			}
		}
		KUNIT_EXPECT_LE(test, n, 7U);
		KUNIT_EXPECT_EQ(test, n, *kind == SROCE_QUEUE_TO_USER ?
				7 - count : count);
	}
	for (index = 0; index < 64; index += 7)
		expect_in_ring(test, q, sroce_queue_slot(q, U32_MAX - index));
}

/*
 * A resize moves the live entries of a wrapped ring, in order, to the
 * start of the new ring, which then goes on working.
 */
static void queue_resize_test(struct kunit *test)
{
	const enum sroce_queue_kind *kind = test->param_value;
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q, *new = &f->other;
	struct rxe_queue_buf *old_buf;
	u32 seq = 0, i;

	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, *kind, 3, TEST_ELEM_SIZE),
			0);
	/* Move both indices to slot 2, then fill slots 2, 3 and 0. */
	for (i = 0; i < 6; i++) {
		produce(test, q, seq++);
		consume(test, q, i);
	}
	for (i = 0; i < 3; i++)
		produce(test, q, seq++);
	KUNIT_ASSERT_EQ(test, sroce_queue_load_prod(q), 1U);
	KUNIT_ASSERT_EQ(test, sroce_queue_load_cons(q), 2U);
	old_buf = q->buf;

	KUNIT_ASSERT_EQ(test, sroce_queue_resize_prepare(q, new, 10, NULL,
							 NULL), 0);
	KUNIT_EXPECT_EQ(test, new->kind, *kind);
	KUNIT_EXPECT_EQ(test, sroce_queue_depth(new), 15U);
	KUNIT_EXPECT_EQ(test, sroce_queue_elem_size(new), TEST_ELEM_SIZE);
	KUNIT_ASSERT_EQ(test, sroce_queue_resize_commit(q, new), 0);

	/* q is the new ring, new the old one. */
	KUNIT_EXPECT_PTR_EQ(test, new->buf, old_buf);
	KUNIT_EXPECT_EQ(test, sroce_queue_depth(new), 3U);
	KUNIT_EXPECT_EQ(test, sroce_queue_depth(q), 15U);
	KUNIT_EXPECT_EQ(test, sroce_queue_count(q), 3U);
	KUNIT_EXPECT_EQ(test, q->buf->producer_index, 3U);
	KUNIT_EXPECT_EQ(test, q->buf->consumer_index, 0U);
	check_header(test, q);
	for (i = 0; i < 3; i++)
		check_slot(test, q->buf->data + i * TEST_ELEM_SIZE, 6 + i);
	sroce_queue_cleanup(new);

	/* Entries 6..8 come out first, then the ring keeps going. */
	for (i = 0; i < 12; i++)
		produce(test, q, seq++);
	KUNIT_EXPECT_TRUE(test, sroce_queue_full(q));
	for (i = 6; i < seq; i++)
		consume(test, q, i);
	KUNIT_EXPECT_TRUE(test, sroce_queue_empty(q));
}

struct shrink_case {
	const char *name;
	u32 live;	/* entries in an 8-slot ring */
	u32 num_elem;	/* asked of the new ring */
	int ret;
};

static const struct shrink_case shrink_cases[] = {
	{ "5 entries into depth 3", 5, 3, -EINVAL },
	{ "4 entries into depth 3", 4, 2, -EINVAL },
	{ "7 entries into depth 1", 7, 1, -EINVAL },
	{ "3 entries into depth 3", 3, 3, 0 },
	{ "1 entry into depth 1", 1, 1, 0 },
	{ "empty into depth 1", 0, 1, 0 },
};

static void shrink_desc(const struct shrink_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shrink, shrink_cases, shrink_desc);

/* A resize that cannot hold the live entries changes neither ring. */
static void queue_shrink_test(struct kunit *test)
{
	const struct shrink_case *t = test->param_value;
	struct queue_fixture *f = test->priv;
	struct sroce_queue *q = &f->q, *new = &f->other;
	struct sroce_queue q_before, new_before;
	u32 i;

	KUNIT_ASSERT_EQ(test, sroce_queue_init(q, SROCE_QUEUE_FROM_USER, 7,
					       TEST_ELEM_SIZE), 0);
	for (i = 0; i < t->live; i++)
		produce(test, q, i);
	sroce_queue_load_prod(q);
	KUNIT_ASSERT_EQ(test, sroce_queue_resize_prepare(q, new, t->num_elem,
							 NULL, NULL), 0);
	q_before = *q;
	new_before = *new;

	KUNIT_EXPECT_EQ(test, sroce_queue_resize_commit(q, new), t->ret);
	if (t->ret) {
		KUNIT_EXPECT_EQ(test, memcmp(q, &q_before, sizeof(*q)), 0);
		KUNIT_EXPECT_EQ(test, memcmp(new, &new_before, sizeof(*new)),
				0);
		KUNIT_EXPECT_TRUE(test, sroce_queue_empty(new));
		KUNIT_EXPECT_EQ(test, new->buf->producer_index, 0U);
	} else {
		KUNIT_EXPECT_PTR_EQ(test, q->buf, new_before.buf);
		KUNIT_EXPECT_PTR_EQ(test, new->buf, q_before.buf);
	}
	KUNIT_EXPECT_EQ(test, sroce_queue_count(q), t->live);
	for (i = 0; i < t->live; i++)
		consume(test, q, i);
	KUNIT_EXPECT_TRUE(test, sroce_queue_empty(q));
}

static struct kunit_case sroce_queue_test_cases[] = {
	KUNIT_CASE_PARAM(ring_arith_test, ring_gen_params),
	KUNIT_CASE_PARAM(ring_holds_test, holds_gen_params),
	KUNIT_CASE_PARAM(ring_next_test, next_gen_params),
	KUNIT_CASE_PARAM(queue_slots_test, slots_gen_params),
	KUNIT_CASE(queue_slots_cache_line_test),
	KUNIT_CASE_PARAM(queue_init_test, kind_gen_params),
	KUNIT_CASE(queue_init_refused_test),
	KUNIT_CASE_PARAM(queue_fill_test, kind_gen_params),
	KUNIT_CASE_PARAM(queue_wrap_test, kind_gen_params),
	KUNIT_CASE_PARAM(queue_scribble_test, kind_gen_params),
	KUNIT_CASE_PARAM(queue_resize_test, kind_gen_params),
	KUNIT_CASE_PARAM(queue_shrink_test, shrink_gen_params),
	{}
};

static struct kunit_suite sroce_queue_test_suite = {
	.name = "sroce_queue",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.init = queue_test_init,
	.exit = queue_test_exit,
	.test_cases = sroce_queue_test_cases,
};

kunit_test_suites(&sroce_queue_test_suite);
