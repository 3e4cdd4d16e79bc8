/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce protection domains.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_PD_H
#define SROCE_PD_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_pd - a protection domain
 * @ibpd: ib_core's PD, allocated by ib_core
 *
 * A PD is not named on the wire and has no index: MRs, MWs, AHs, SRQs
 * and QPs point at it, and ib_core's usecnt keeps it alive while they do.
 */
struct sroce_pd {
	struct ib_pd ibpd;
};

static inline struct sroce_pd *to_sroce_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

extern const struct ib_device_ops sroce_pd_verbs;

#endif /* SROCE_PD_H */
