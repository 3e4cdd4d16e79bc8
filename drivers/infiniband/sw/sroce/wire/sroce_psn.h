/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet sequence number arithmetic.
 *
 * A PSN is a 24-bit serial number: it wraps from
 * 0xffffff to 0, and two PSNs are only comparable when they are less than
 * half the number space (2^23) apart. All helpers take and return PSNs in
 * the low 24 bits of a u32; bits above that in an argument are ignored.
 */

#ifndef SROCE_PSN_H
#define SROCE_PSN_H

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/types.h>

#define SROCE_PSN_BITS		24
#define SROCE_PSN_MASK		GENMASK(SROCE_PSN_BITS - 1, 0)
/* Largest distance at which the order of two PSNs is still defined. */
#define SROCE_PSN_HALF		BIT(SROCE_PSN_BITS - 1)

/**
 * sroce_psn() - reduce a value to the 24-bit PSN space
 * @v: value, possibly wider than 24 bits
 *
 * Return: @v modulo 2^24.
 */
static inline u32 sroce_psn(u32 v)
{
	return v & SROCE_PSN_MASK;
}

/**
 * sroce_psn_add() - advance a PSN
 * @psn: starting PSN
 * @n: number of packets to advance by
 *
 * Return: @psn + @n modulo 2^24.
 */
static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return sroce_psn(psn + n);
}

/**
 * sroce_psn_next() - the PSN after @psn
 * @psn: current PSN
 *
 * Return: @psn + 1 modulo 2^24; 0xffffff is followed by 0.
 */
static inline u32 sroce_psn_next(u32 psn)
{
	return sroce_psn_add(psn, 1);
}

/**
 * sroce_psn_diff() - signed distance between two PSNs
 * @a: first PSN
 * @b: second PSN
 *
 * Return: the d in [-2^23, 2^23) with @b + d == @a modulo 2^24. It is
 * negative when @a lies before @b.
 */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	return sign_extend32(a - b, SROCE_PSN_BITS - 1);
}

/**
 * sroce_psn_before() - whether @a comes strictly before @b
 * @a: first PSN
 * @b: second PSN
 *
 * Return: true if @a precedes @b in serial order.
 */
static inline bool sroce_psn_before(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) < 0;
}

/**
 * sroce_psn_after() - whether @a comes strictly after @b
 * @a: first PSN
 * @b: second PSN
 *
 * Return: true if @a follows @b in serial order.
 */
static inline bool sroce_psn_after(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) > 0;
}

/**
 * sroce_psn_in_window() - whether a PSN falls in a window of PSNs
 * @psn: PSN to test
 * @first: first PSN of the window
 * @count: number of PSNs in the window, at most 2^23
 *
 * Return: true if @psn is one of @first, @first + 1, ... @first + @count - 1.
 */
static inline bool sroce_psn_in_window(u32 psn, u32 first, u32 count)
{
	return sroce_psn(psn - first) < count;
}

#endif /* SROCE_PSN_H */
