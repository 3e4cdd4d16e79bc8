/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce_integrity: UC (and UD) receive accounting (self-naming messages,
 * loss, duplicates, late arrivals and the loss budget).
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef SROCE_INTEGRITY_UNRELIABLE_H
#define SROCE_INTEGRITY_UNRELIABLE_H

#include "sroce_integrity.h"

int uc_lose(struct run *r, uint64_t upto);
int unrel_delivered(struct run *r, uint32_t seq);
int uc_recv(struct run *r, const struct ibv_wc *wc);
int uc_quiet(struct run *r, double idle);
void uc_verdict(struct run *r);

#endif /* SROCE_INTEGRITY_UNRELIABLE_H */
