/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce_integrity: the data path: posting, completions and the main loop.
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef SROCE_INTEGRITY_XFER_H
#define SROCE_INTEGRITY_XFER_H

#include "sroce_integrity.h"

int post_recv(struct run *r);
int post_one(struct run *r);
int report_bad(struct run *r, const char *what, uint32_t seq, uint32_t len,
	       const uint8_t *slot, const struct pat_result *res);
int run_loop(struct run *r);
void progress_end(struct run *r);
int check_quiet(struct run *r);
int check_atomic_targets(struct run *r);

#endif /* SROCE_INTEGRITY_XFER_H */
