// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fuzzers' shared helpers (fuzz_util.h).
 */
#include <string.h>

#include <infiniband/verbs.h>

#include "fuzz_util.h"

/* xorshift64*: small, fast and the same everywhere for a seed. */
uint64_t fuzz_rand(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

/* Uniform enough in [0, n) from the high half; 0 when n is 0. */
uint32_t fuzz_below(uint64_t *state, uint32_t n)
{
	return n ? (uint32_t)((fuzz_rand(state) >> 32) % n) : 0;
}

/* The device called @name, opened; NULL (errno set by verbs) if none is. */
struct ibv_context *fuzz_open_dev(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}
