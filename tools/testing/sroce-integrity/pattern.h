/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Data pattern and scatter/gather layouts of sroce_integrity.
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef SROCE_INTEGRITY_PATTERN_H
#define SROCE_INTEGRITY_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* Filler of every byte that no message may touch. */
#define PAT_CANARY 0xcb

/* Upper bound of the gap before each piece of a layout. */
#define PAT_GAP_MAX 32

/* Bytes checked beyond the end of a message (they must keep the canary). */
#define PAT_TAIL_CHECK 4096

/* Most pieces (SGEs) of one layout. */
#define PAT_MAX_PIECES 63

/*
 * The 8-byte word at word index @w of message @seq.  Readable on purpose:
 * the high half is the sequence number with bit 31 set, the low half the
 * word index xor 0x5a000000, so a wrong word in a report shows at a glance
 * which message and offset it came from.  Byte o of a message is byte
 * (o & 7) of word (o >> 3), little-endian.
 */
static inline uint64_t pat_word(uint32_t seq, uint64_t w)
{
	return ((uint64_t)(0x80000000u | seq) << 32) | (uint32_t)(0x5a000000u ^ w);
}

static inline uint8_t pat_byte(uint32_t seq, uint64_t off)
{
	return (uint8_t)(pat_word(seq, off >> 3) >> (8 * (off & 7)));
}

/* A cheap 64-bit mixer for sizes, cuts and operands derived from a seq. */
static inline uint64_t pat_hash(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* One scatter/gather piece: its offset in a slot and its length. */
struct pat_piece {
	size_t off;
	uint32_t len;
};

/* How a message (or a receive buffer) is laid out in its slot. */
struct pat_layout {
	unsigned int n;
	struct pat_piece p[PAT_MAX_PIECES];
};

/* Outcome of a check; bad_off is a message offset, or ~0 for a canary. */
struct pat_result {
	int ok;
	uint64_t bad_off;	/* first bad message offset */
	size_t bad_pos;		/* its position in the slot */
	uint8_t want, got;
	uint64_t nbad;		/* bad bytes in this message */
	int canary;		/* the first bad byte is outside the message */
};

void pat_layout_make(struct pat_layout *l, uint64_t key, uint32_t len,
		     unsigned int pieces);
size_t pat_layout_span(uint32_t maxlen, unsigned int pieces);
void pat_fill(uint8_t *slot, const struct pat_layout *l, uint32_t seq,
	      uint32_t len);
void pat_check(const uint8_t *slot, size_t slot_len,
	       const struct pat_layout *l, uint32_t seq, uint32_t len,
	       struct pat_result *r);
void pat_check_partial(const uint8_t *slot, size_t slot_len,
		       const struct pat_layout *l, uint32_t seq, uint32_t len,
		       struct pat_result *r);
size_t pat_clean_stale(uint8_t *slot, const struct pat_layout *l,
		       uint32_t len, uint32_t lo, uint32_t hi);
void pat_restore(uint8_t *slot, size_t slot_len, const struct pat_layout *l,
		 uint32_t len);
void pat_describe(const struct pat_result *r, const uint8_t *slot,
		  size_t slot_len, char *buf, size_t buflen);
int pat_selftest(void);

#endif /* SROCE_INTEGRITY_PATTERN_H */
