/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce congestion notification: CNPs sent and taken (see sroce_cnp.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_CNP_H
#define SROCE_CNP_H

#include <linux/types.h>

struct sroce_qp;

void sroce_cnp_note_ce(struct sroce_qp *qp);
void sroce_cnp_react(struct sroce_qp *qp);

#endif /* SROCE_CNP_H */
