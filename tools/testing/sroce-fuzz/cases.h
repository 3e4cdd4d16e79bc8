/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pktfuzz: helpers shared by the case families of cases.c and
 * cases_qp.c.
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef PKTFUZZ_CASES_H
#define PKTFUZZ_CASES_H

#include "pktfuzz.h"

enum {
	FAM_OPCODE, FAM_HDR_MISMATCH, FAM_TRUNCATE, FAM_LENGTHS, FAM_PAD,
	FAM_RETH, FAM_ATOMIC, FAM_FORGED_RESP, FAM_CNP, FAM_MCAST_FLOOD,
	FAM_DUP_FLOOD, FAM_VALID, FAM_BITFLIP, FAM_BAD_ICRC, FAM_FIELDS,
	FAM_IPV6,
};

extern const struct fz_lie no_lie;

void send1(struct fz *f, const struct fz_pkt *p, const struct fz_lie *l);
uint32_t near(struct fz *f, uint32_t psn);
struct fz_qp *pick_qp(struct fz *f);
uint32_t pick_qpn(struct fz *f, struct fz_qp **qp);
void scramble(struct fz *f, struct fz_pkt *p);
void random_pkt(struct fz *f, struct fz_pkt *p, uint8_t opcode);
uint8_t known_opcode(struct fz *f);

/* cases_qp.c: the families aimed at one live QP's state */
void case_reth(struct fz *f);
void case_atomic(struct fz *f);
void case_forged_resp(struct fz *f);
void case_cnp(struct fz *f);
void case_mcast_flood(struct fz *f);
void case_dup_flood(struct fz *f);
void case_valid(struct fz *f);
void case_bitflip(struct fz *f);
void case_bad_icrc(struct fz *f);
void case_fields(struct fz *f);
void case_ipv6(struct fz *f);

#endif /* PKTFUZZ_CASES_H */
