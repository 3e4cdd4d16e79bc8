// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-byte speeds of this guest for make bench's limit model.
 *
 * A RoCE data path pays two costs per payload byte on each side: a copy
 * (between the MR and the skb) and a CRC-32 pass (the ICRC). On load this
 * module times memcpy() and crc32_le(), and the crypto API's "crc32"
 * shash when one is registered (sroce picks the faster of the two CRC
 * engines), each over a 64 KiB buffer, best of several rounds so that an
 * interrupt does not decide, and prints one line:
 *
 *   sroce-speed: memcpy <N> crc32_le <N> shash <N|0> MiB/s
 *
 * Loading does nothing else; the scenario removes the module again.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) "sroce-speed: " fmt

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#define SPEED_LEN	SZ_64K
#define SPEED_LOOPS	16
#define SPEED_ROUNDS	8

enum speed_op { SPEED_MEMCPY, SPEED_CRC32_LE, SPEED_SHASH };

struct speed_ctx {
	u8 *src;
	u8 *dst;
	struct crypto_shash *tfm;
	u32 crc;
};

static int speed_shash(struct speed_ctx *s)
{
	SHASH_DESC_ON_STACK(desc, s->tfm);

	desc->tfm = s->tfm;
	return crypto_shash_digest(desc, s->src, SPEED_LEN, s->dst);
}

static int speed_once(struct speed_ctx *s, enum speed_op op)
{
	switch (op) {
	case SPEED_MEMCPY:
		memcpy(s->dst, s->src, SPEED_LEN);
		return 0;
	case SPEED_CRC32_LE:
		s->crc = crc32_le(s->crc, s->src, SPEED_LEN);
		return 0;
	case SPEED_SHASH:
		return speed_shash(s);
	}
	return -EINVAL;
}

/* MiB/s of the best round, or 0 if the operation failed. */
static u64 speed_of(struct speed_ctx *s, enum speed_op op)
{
	u64 best = U64_MAX, start, ns;
	int round, i;

	for (round = 0; round < SPEED_ROUNDS; round++) {
		start = ktime_get_ns();
		for (i = 0; i < SPEED_LOOPS; i++)
			if (speed_once(s, op))
				return 0;
		ns = ktime_get_ns() - start;
		best = min(best, ns);
		cond_resched();
	}
	/* bytes per ns times 10^9 / 2^20, without overflowing */
	return div64_u64((u64)SPEED_LEN * SPEED_LOOPS * NSEC_PER_SEC,
			 max_t(u64, best, 1) << 20);
}

static int __init speed_init(void)
{
	struct speed_ctx s = { .crc = ~0U };
	u64 copy, crc, shash = 0;
	int i;

	s.src = kmalloc(SPEED_LEN, GFP_KERNEL);
	s.dst = kmalloc(SPEED_LEN, GFP_KERNEL);
	if (!s.src || !s.dst) {
		kfree(s.src);
		kfree(s.dst);
		return -ENOMEM;
	}
	for (i = 0; i < SPEED_LEN; i++)
		s.src[i] = i * 151 + 7;

	copy = speed_of(&s, SPEED_MEMCPY);
	crc = speed_of(&s, SPEED_CRC32_LE);
	s.tfm = crypto_alloc_shash("crc32", 0, 0);
	if (!IS_ERR(s.tfm)) {
		shash = speed_of(&s, SPEED_SHASH);
		crypto_free_shash(s.tfm);
	}
	pr_info("memcpy %llu crc32_le %llu shash %llu MiB/s\n",
		copy, crc, shash);
	kfree(s.src);
	kfree(s.dst);
	return 0;
}

static void __exit speed_exit(void)
{
}

module_init(speed_init);
module_exit(speed_exit);
MODULE_DESCRIPTION("sroce VM bench: memcpy and CRC-32 speed of the guest");
MODULE_AUTHOR("The sroce authors");
MODULE_LICENSE("GPL");
