// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity: UC (and UD) receive accounting (self-naming messages,
 * loss, duplicates, late arrivals and the loss budget).
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "unreliable.h"
#include "xfer.h"

/*
 * UC, UD: declare messages r->verified..@upto-1 lost.  A WRITE that was dropped
 * may have landed in part: what landed must be right, and its slot is
 * reset for the message that reuses it.  (A SEND's remains stay in the
 * receive WQE it was being scattered into: see uc_check_send().)
 */
int uc_lose(struct run *r, uint64_t upto)
{
	struct pat_result res;
	uint64_t k;

	for (k = r->verified; k < upto; k++) {
		if (r->o.op == OP_WRITE) {
			uint8_t *base = slot_base(&r->s[1], r, k);
			uint32_t len = msg_len(r, (uint32_t)k);
			struct pat_layout one = {
				.n = 1, .p = { { remote_off((uint32_t)k), len } },
			};

			pat_check_partial(base, r->span, &one, (uint32_t)k, len, &res);
			if (!res.ok)
				return report_bad(r, "lost UC WRITE (responder, the part that landed)",
						  (uint32_t)k, len, base, &res);
			pat_restore(base, r->span, &one, len);
		}
		r->lost++;
		if (r->o.verbose)
			fprintf(stderr, "sroce_integrity: message %" PRIu64 " lost\n", k);
	}
	if (upto > r->verified)
		r->verified = upto;
	return 0;
}

/*
 * UC SEND: message @seq landed in receive WQE #@n.  The WQE may have taken
 * part of messages dropped since the last delivered one before it was
 * reused; past the end of @seq, bytes those messages put there are allowed.
 */
static int uc_check_send(struct run *r, uint64_t n, uint32_t seq, uint32_t len, int dup)
{
	struct rcv_slot *rs = &r->rv[n % r->o.depth];
	uint8_t *base = slot_base(&r->s[1], r, n);
	uint32_t lo = (uint32_t)(r->last_seq + 1);
	struct pat_result res;
	size_t cleaned = 0;

	if (!dup && lo < seq)
		cleaned = pat_clean_stale(base, &rs->lay, len, lo, seq);
	pat_check(base, r->span, &rs->lay, seq, len, &res);
	if (!res.ok)
		return report_bad(r, "UC SEND (responder)", seq, len, base, &res);
	if (cleaned)
		memset(base, PAT_CANARY, r->span);
	else
		pat_restore(base, r->span, &rs->lay, len);
	return 0;
}

/*
 * UC WRITE_WITH_IMM: message @seq in its own slot.  A duplicate may have
 * landed again before or after the first copy was checked and the slot
 * reset, and a late one (declared lost) before or after its slot was reset,
 * so these are held to the partial check (whatever is there is right).
 */
static int uc_check_write(struct run *r, uint32_t seq, uint32_t len, int dup)
{
	uint8_t *base = slot_base(&r->s[1], r, seq);
	struct pat_layout one = { .n = 1, .p = { { remote_off(seq), len } } };
	struct pat_result res;

	if (seq < r->verified && seq + r->o.depth < r->posted) {
		fail(r, "responder: WRITE seq %u delivered after it was declared lost and its slot reused (raise -I)",
		     seq);
		return -1;
	}
	if (dup || seq < r->verified)
		pat_check_partial(base, r->span, &one, seq, len, &res);
	else
		pat_check(base, r->span, &one, seq, len, &res);
	if (!res.ok)
		return report_bad(r, dup ? "UC WRITE duplicate (responder)" :
				  "UC WRITE (responder)", seq, len, base, &res);
	pat_restore(base, r->span, &one, len);
	return 0;
}

/*
 * UC, UD: message @seq arrived whole and verified, and is no duplicate.
 * One that had been declared lost is late, not lost; one past the next
 * expected declares everything between lost.
 *
 * Return: 0, or -1 when the loss budget is exceeded (reported).
 */
int unrel_delivered(struct run *r, uint32_t seq)
{
	if (seq < r->verified) {
		r->lost--;
		r->late++;
	} else if (uc_lose(r, seq)) {
		return -1;
	}
	if (r->verified < seq + 1)
		r->verified = seq + 1;
	if (r->last_seq < (int64_t)seq)
		r->last_seq = seq;
	r->delivered++;
	return 0;
}

/*
 * UC: a receive completion is one delivered message, named by its
 * immediate.  Seqs must rise; the same seq again is a duplicate (allowed on
 * UC, counted, checked); seqs skipped over are lost.  A seq that was
 * declared lost after the quiet period and arrives after all is late.
 */
int uc_recv(struct run *r, const struct ibv_wc *wc)
{
	enum ibv_wc_opcode want = r->o.op == OP_SEND ? IBV_WC_RECV :
				  IBV_WC_RECV_RDMA_WITH_IMM;
	uint32_t seq, len;
	int dup, err;

	if (wc->opcode != want || !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		fail(r, "responder: receive #%" PRIu64 " opcode %d flags 0x%x, want %s with an immediate",
		     wc->wr_id, wc->opcode, wc->wc_flags,
		     r->o.op == OP_SEND ? "RECV" : "RECV_RDMA_WITH_IMM");
		return -1;
	}
	seq = ntohl(wc->imm_data);
	if (seq >= r->posted || (int64_t)seq < r->last_seq) {
		fail(r, "responder: UC message %u delivered %s (last delivered %" PRId64
		     ", posted %" PRIu64 ")", seq,
		     seq >= r->posted ? "but never posted" : "out of order",
		     r->last_seq, r->posted);
		return -1;
	}
	dup = (int64_t)seq == r->last_seq;
	len = msg_len(r, seq);
	if (wc->byte_len != len) {
		fail(r, "responder: UC message %u byte_len %u, want %u", seq,
		     wc->byte_len, len);
		return -1;
	}
	err = r->o.op == OP_SEND ? uc_check_send(r, wc->wr_id, seq, len, dup) :
				   uc_check_write(r, seq, len, dup);
	if (err)
		return err;
	if (dup) {
		r->dups++;
		return 0;
	}
	return unrel_delivered(r, seq);
}

/*
 * UC, UD: everything posted has completed on the requester and nothing has
 * arrived for the quiet period: the tail of the burst is lost.
 */
int uc_quiet(struct run *r, double idle)
{
	if (!is_unrel(r) || r->posted <= r->verified || r->completed < r->posted ||
	    idle * 1000 < r->o.quiet_ms)
		return 0;
	if (r->o.verbose)
		fprintf(stderr, "sroce_integrity: %.0f ms quiet: messages %" PRIu64
			"..%" PRIu64 " lost\n", idle * 1000, r->verified, r->posted - 1);
	return uc_lose(r, r->posted) ? -1 : 1;
}

/* UC, UD: every message delivered or lost, some delivered, losses in budget. */
void uc_verdict(struct run *r)
{
	const char *t = is_ud(r) ? "UD" : "UC";

	if (r->delivered + r->lost != r->nmsgs)
		fail(r, "%s accounting: %" PRIu64 " delivered + %" PRIu64
		     " lost != %" PRIu64 " messages", t, r->delivered, r->lost, r->nmsgs);
	else if (!r->delivered)
		fail(r, "%s: not one of %" PRIu64 " messages was delivered", t, r->nmsgs);
	else if (r->lost * 100.0 > r->o.loss_pct * r->nmsgs)
		fail(r, "%s: %" PRIu64 " of %" PRIu64 " messages lost (%.2f%%), over the -L budget of %g%%",
		     t, r->lost, r->nmsgs, r->lost * 100.0 / r->nmsgs, r->o.loss_pct);
}
