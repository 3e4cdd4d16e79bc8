/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce_integrity: device, QP and memory setup, connection and teardown.
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef SROCE_INTEGRITY_CONN_H
#define SROCE_INTEGRITY_CONN_H

#include "sroce_integrity.h"

void read_counters(struct side *sd);
void setup_side(struct run *r, struct side *sd, int gid_index);
void connect_qp(struct run *r, struct side *me, struct side *peer,
		int my_gid, uint32_t my_psn, uint32_t peer_psn,
		unsigned int rd_atomic, int uc);
void teardown(struct side *sd);

#endif /* SROCE_INTEGRITY_CONN_H */
