/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the two fuzzers share: a seeded PRNG (so that a seed names a run)
 * and opening an RDMA device by name.
 */
#ifndef SROCE_FUZZ_UTIL_H
#define SROCE_FUZZ_UTIL_H

#include <stdint.h>

struct ibv_context;

uint64_t fuzz_rand(uint64_t *state);
uint32_t fuzz_below(uint64_t *state, uint32_t n);
struct ibv_context *fuzz_open_dev(const char *name);

#endif /* SROCE_FUZZ_UTIL_H */
