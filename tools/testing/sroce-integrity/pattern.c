// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: pattern fill/check over scatter/gather layouts.
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <stdio.h>
#include <string.h>

#include "pattern.h"

static uint8_t canary_block[PAT_TAIL_CHECK];

/*
 * Cut @len bytes into up to @pieces pieces of varying length, each placed
 * after a gap of 0 or an odd number of bytes (the first piece too, so some
 * layouts start at offset 0 of the slot and some at an odd one).  @key
 * makes the layout reproducible.
 */
void pat_layout_make(struct pat_layout *l, uint64_t key, uint32_t len,
		     unsigned int pieces)
{
	uint32_t left = len, base;
	size_t pos = 0;
	unsigned int i, n;

	n = pieces ? pieces : 1;
	if (n > PAT_MAX_PIECES)
		n = PAT_MAX_PIECES;
	if (len && n > len)
		n = len;
	base = len / n;
	for (i = 0; i < n; i++) {
		uint64_t h = pat_hash(key * PAT_MAX_PIECES + i);
		uint32_t gap, plen;

		if (i == 0)
			gap = (key & 1) ? (uint32_t)(h >> 40) % PAT_GAP_MAX | 1 : 0;
		else
			gap = ((h >> 20) & 3) ? (uint32_t)(h >> 40) % PAT_GAP_MAX | 1 : 0;
		if (i == n - 1) {
			plen = left;
		} else {
			uint32_t most = left - (n - 1 - i);

			plen = base / 2 + (uint32_t)(h % ((uint64_t)base + 1));
			if (plen < 1)
				plen = 1;
			if (plen > most)
				plen = most;
		}
		pos += gap;
		l->p[i].off = pos;
		l->p[i].len = plen;
		pos += plen;
		left -= plen;
	}
	l->n = n;
}

/* Bytes a slot needs for any layout of up to @maxlen bytes. */
size_t pat_layout_span(uint32_t maxlen, unsigned int pieces)
{
	return (size_t)maxlen + (size_t)(pieces + 1) * PAT_GAP_MAX + PAT_TAIL_CHECK;
}

static void fill_run(uint8_t *dst, uint32_t seq, uint64_t off, uint32_t n)
{
	while (n && (off & 7)) {
		*dst++ = pat_byte(seq, off++);
		n--;
	}
	while (n >= 8) {
		uint64_t w = pat_word(seq, off >> 3);

		memcpy(dst, &w, 8);
		dst += 8;
		off += 8;
		n -= 8;
	}
	while (n--)
		*dst++ = pat_byte(seq, off++);
}

/* Write the first @len bytes of message @seq into the pieces of @l. */
void pat_fill(uint8_t *slot, const struct pat_layout *l, uint32_t seq,
	      uint32_t len)
{
	uint64_t mo = 0;
	unsigned int i;

	for (i = 0; i < l->n && mo < len; i++) {
		uint32_t n = l->p[i].len;

		if (n > len - mo)
			n = (uint32_t)(len - mo);
		fill_run(slot + l->p[i].off, seq, mo, n);
		mo += n;
	}
}

static void note_bad(struct pat_result *r, uint64_t mo, size_t pos,
		     uint8_t want, uint8_t got, int canary)
{
	if (r->ok) {
		r->ok = 0;
		r->bad_off = mo;
		r->bad_pos = pos;
		r->want = want;
		r->got = got;
		r->canary = canary;
	}
	r->nbad++;
}

static void check_run(const uint8_t *src, size_t pos, uint32_t seq,
		      uint64_t off, uint32_t n, struct pat_result *r)
{
	while (n) {
		uint8_t want;

		if (!(off & 7) && n >= 8) {
			uint64_t w = pat_word(seq, off >> 3), got;

			memcpy(&got, src, 8);
			if (got == w) {
				src += 8;
				pos += 8;
				off += 8;
				n -= 8;
				continue;
			}
		}
		want = pat_byte(seq, off);
		if (*src != want)
			note_bad(r, off, pos, want, *src, 0);
		src++;
		pos++;
		off++;
		n--;
	}
}

static void check_canary(const uint8_t *slot, size_t from, size_t to,
			 struct pat_result *r)
{
	size_t pos;

	while (from < to) {
		size_t n = to - from;

		if (n > sizeof(canary_block))
			n = sizeof(canary_block);
		if (memcmp(slot + from, canary_block, n)) {
			for (pos = from; pos < from + n; pos++)
				if (slot[pos] != PAT_CANARY)
					note_bad(r, ~0ull, pos, PAT_CANARY,
						 slot[pos], 1);
		}
		from += n;
	}
}

/* Slot position just past the last byte of a @len-byte message in @l. */
static size_t layout_end(const struct pat_layout *l, uint32_t len)
{
	uint64_t mo = 0;
	size_t end = 0;
	unsigned int i;

	for (i = 0; i < l->n && mo < len; i++) {
		uint32_t n = l->p[i].len;

		if (n > len - mo)
			n = (uint32_t)(len - mo);
		end = l->p[i].off + n;
		mo += n;
	}
	if (!len && l->n)
		end = l->p[0].off;
	return end;
}

/*
 * Check message @seq (@len bytes) in the pieces of @l, and that every other
 * slot byte before its end and PAT_TAIL_CHECK bytes after it still hold the
 * canary: lost, duplicated, reordered, shifted and stray data all show.
 */
void pat_check(const uint8_t *slot, size_t slot_len,
	       const struct pat_layout *l, uint32_t seq, uint32_t len,
	       struct pat_result *r)
{
	uint64_t mo = 0;
	size_t pos = 0, end;
	unsigned int i;

	if (!canary_block[0])
		memset(canary_block, PAT_CANARY, sizeof(canary_block));
	memset(r, 0, sizeof(*r));
	r->ok = 1;
	for (i = 0; i < l->n && mo < len; i++) {
		uint32_t n = l->p[i].len;

		if (n > len - mo)
			n = (uint32_t)(len - mo);
		check_canary(slot, pos, l->p[i].off, r);
		check_run(slot + l->p[i].off, l->p[i].off, seq, mo, n, r);
		mo += n;
		pos = l->p[i].off + n;
	}
	end = pos + PAT_TAIL_CHECK;
	if (end > slot_len)
		end = slot_len;
	check_canary(slot, pos, end, r);
}

/*
 * The check of a message that was dropped on the way (UC): whatever part of
 * it landed must be right.  Every byte of its pieces must hold either the
 * canary (never written) or the right byte of message @seq; the gaps and
 * PAT_TAIL_CHECK bytes after the end must hold the canary.
 */
void pat_check_partial(const uint8_t *slot, size_t slot_len,
		       const struct pat_layout *l, uint32_t seq, uint32_t len,
		       struct pat_result *r)
{
	uint64_t mo = 0;
	size_t pos = 0, end, k;
	unsigned int i;

	if (!canary_block[0])
		memset(canary_block, PAT_CANARY, sizeof(canary_block));
	memset(r, 0, sizeof(*r));
	r->ok = 1;
	for (i = 0; i < l->n && mo < len; i++) {
		uint32_t n = l->p[i].len;

		if (n > len - mo)
			n = (uint32_t)(len - mo);
		check_canary(slot, pos, l->p[i].off, r);
		for (k = 0; k < n; k++) {
			uint8_t got = slot[l->p[i].off + k];
			uint8_t want = pat_byte(seq, mo + k);

			if (got != PAT_CANARY && got != want)
				note_bad(r, mo + k, l->p[i].off + k, want, got, 0);
		}
		mo += n;
		pos = l->p[i].off + n;
	}
	end = pos + PAT_TAIL_CHECK;
	if (end > slot_len)
		end = slot_len;
	check_canary(slot, pos, end, r);
}

/*
 * A receive buffer of a UC QP may hold the remains of messages that were
 * dropped while they were being scattered into it (the WQE is then reused
 * for the next message).  Past message offset @len, put the canary back
 * over every byte of @l's pieces that holds exactly what one of messages
 * @lo..@hi-1 put at that offset, so that pat_check() still catches any
 * other stray byte.  Returns the number of bytes cleaned.
 */
size_t pat_clean_stale(uint8_t *slot, const struct pat_layout *l,
		       uint32_t len, uint32_t lo, uint32_t hi)
{
	uint64_t mo = 0;
	size_t cleaned = 0;
	unsigned int i;
	uint32_t k, s;

	for (i = 0; i < l->n; i++) {
		uint8_t *p = slot + l->p[i].off;

		for (k = 0; k < l->p[i].len; k++, mo++) {
			if (mo < len || p[k] == PAT_CANARY)
				continue;
			for (s = lo; s != hi; s++)
				if (p[k] == pat_byte(s, mo)) {
					p[k] = PAT_CANARY;
					cleaned++;
					break;
				}
		}
	}
	return cleaned;
}

/* Put the canary back over everything pat_check() looked at. */
void pat_restore(uint8_t *slot, size_t slot_len, const struct pat_layout *l,
		 uint32_t len)
{
	size_t end = layout_end(l, len) + PAT_TAIL_CHECK;

	if (end > slot_len)
		end = slot_len;
	memset(slot, PAT_CANARY, end);
}

/* A one-line account of the first bad byte of @r. */
void pat_describe(const struct pat_result *r, const uint8_t *slot,
		  size_t slot_len, char *buf, size_t buflen)
{
	size_t at = r->bad_pos;
	uint64_t w;
	int n;

	if (r->canary) {
		n = snprintf(buf, buflen,
			     "byte outside the message changed at slot byte %zu: want 0x%02x got 0x%02x (%llu bad bytes)",
			     at, r->want, r->got, (unsigned long long)r->nbad);
	} else {
		n = snprintf(buf, buflen,
			     "first bad byte at message offset %llu (slot byte %zu): want 0x%02x got 0x%02x (%llu bad bytes)",
			     (unsigned long long)r->bad_off, at, r->want, r->got,
			     (unsigned long long)r->nbad);
		at -= r->bad_off & 7;
	}
	if (n < 0 || (size_t)n >= buflen || at + 8 > slot_len)
		return;
	memcpy(&w, slot + at, 8);
	if ((w >> 63) && ((uint32_t)w ^ 0x5a000000u) < (1u << 26))
		snprintf(buf + n, buflen - n,
			 "; the word there reads as message %llu offset %llu",
			 (unsigned long long)((w >> 32) & 0x7fffffff),
			 (unsigned long long)((uint32_t)w ^ 0x5a000000u) * 8);
	else
		snprintf(buf + n, buflen - n, "; the word there is 0x%016llx",
			 (unsigned long long)w);
}

/* A byte that is neither @a, @b nor the canary. */
static uint8_t other_byte(uint8_t a, uint8_t b)
{
	uint8_t v = 0x11;

	while (v == a || v == b || v == PAT_CANARY)
		v += 0x11;
	return v;
}

/*
 * UC cases: a dropped WRITE that landed in part passes the partial check
 * unless a landed byte is wrong or a byte past it changed; remains of
 * dropped messages 50 and 51 under a shorter message 52 in a reused receive
 * buffer are cleaned, but remains of message 53 (not dropped before it) and
 * a wrong byte are not.
 */
static int selftest_uc(uint8_t *slot, size_t slot_len, struct pat_layout *l,
		       uint32_t len)
{
	struct pat_layout half = *l;
	struct pat_result r;
	size_t at;
	int bad = 0;

	memset(slot, PAT_CANARY, slot_len);
	half.n = 2;		/* the first two pieces landed */
	pat_fill(slot, &half, 7, len);
	pat_check_partial(slot, slot_len, l, 7, len, &r);
	bad += !r.ok;
	pat_check(slot, slot_len, l, 7, len, &r);
	bad += r.ok;
	at = l->p[1].off + 3;
	slot[at] = other_byte(pat_byte(7, l->p[0].len + 3), PAT_CANARY);
	pat_check_partial(slot, slot_len, l, 7, len, &r);
	bad += r.ok || r.bad_pos != at;
	pat_restore(slot, slot_len, l, len);
	pat_fill(slot, l, 50, len);
	pat_fill(slot, &half, 51, len);
	pat_fill(slot, l, 52, 1000);
	pat_check(slot, slot_len, l, 52, 1000, &r);
	bad += r.ok;
	bad += !pat_clean_stale(slot, l, 1000, 50, 52);
	pat_check(slot, slot_len, l, 52, 1000, &r);
	bad += !r.ok;
	pat_fill(slot, &half, 53, len);
	pat_fill(slot, l, 52, 1000);
	pat_clean_stale(slot, l, 1000, 50, 52);
	pat_check(slot, slot_len, l, 52, 1000, &r);
	bad += r.ok || !r.canary;
	pat_restore(slot, slot_len, l, len);
	pat_fill(slot, l, 51, len);
	pat_fill(slot, l, 52, 1000);
	at = l->p[0].off + 1009;
	slot[at] = other_byte(pat_byte(50, 1009), pat_byte(51, 1009));
	pat_clean_stale(slot, l, 1000, 50, 52);
	pat_check(slot, slot_len, l, 52, 1000, &r);
	bad += r.ok || r.nbad != 1;
	pat_restore(slot, slot_len, l, len);
	return bad;
}

/*
 * The checker must be able to fail: a flipped byte, a shifted copy, a
 * stale message and a stray byte past the end are each caught, with the
 * right first bad offset.  Returns the number of failed cases.
 */
int pat_selftest(void)
{
	static uint8_t slot[2 * 65536 + 8192];
	struct pat_layout l;
	struct pat_result r;
	const uint32_t len = 65536 + 13;
	int bad = 0;

	memset(slot, PAT_CANARY, sizeof(slot));
	pat_layout_make(&l, 7, len, 5);
	pat_fill(slot, &l, 42, len);
	pat_check(slot, sizeof(slot), &l, 42, len, &r);
	bad += !r.ok;
	pat_check(slot, sizeof(slot), &l, 43, len, &r);		/* stale */
	bad += r.ok || r.bad_off != 4;
	slot[l.p[2].off + 5] ^= 0x10;				/* flipped */
	pat_check(slot, sizeof(slot), &l, 42, len, &r);
	bad += r.ok || r.canary || r.bad_off != l.p[0].len + l.p[1].len + 5 ||
	       r.nbad != 1;
	slot[l.p[2].off + 5] ^= 0x10;
	memmove(slot + l.p[3].off + 1, slot + l.p[3].off, l.p[3].len - 1);	/* shifted */
	pat_check(slot, sizeof(slot), &l, 42, len, &r);
	bad += r.ok || r.bad_off < l.p[0].len + l.p[1].len + l.p[2].len;
	pat_fill(slot, &l, 42, len);
	slot[l.p[4].off + l.p[4].len + 100] = 0;			/* stray */
	pat_check(slot, sizeof(slot), &l, 42, len, &r);
	bad += r.ok || !r.canary;
	pat_restore(slot, sizeof(slot), &l, len);
	pat_check(slot, sizeof(slot), &l, 42, 0, &r);
	bad += !r.ok;
	bad += selftest_uc(slot, sizeof(slot), &l, len);
	return bad;
}
