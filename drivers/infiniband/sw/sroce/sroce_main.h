/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: the module's shared engine state (sroce_main.c).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_MAIN_H
#define SROCE_MAIN_H

int sroce_engines_get(void);
void sroce_engines_put(void);

#endif /* SROCE_MAIN_H */
