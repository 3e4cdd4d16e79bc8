/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce verbs: the verb tables of sroce devices (sroce_verbs.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_VERBS_H
#define SROCE_VERBS_H

#include <rdma/ib_verbs.h>

extern const struct ib_device_ops *const sroce_verbs[];

#endif /* SROCE_VERBS_H */
