// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce protection domains: only a count against the device limit.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "obj/sroce_pd.h"

/**
 * sroce_alloc_pd() - ib_device_ops.alloc_pd
 * @ibpd: the PD ib_core allocated
 * @udata: user data; sroce defines none in either direction
 *
 * Return: 0, -EINVAL for driver data librxe never sends, or -ENOMEM when
 * the device has its maximum number of PDs.
 */
static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibpd->device);

	if (udata && udata->inlen)
		return -EINVAL;
	return sroce_res_get(&sdev->res.pd, sdev->attr.max_pd);
}

/**
 * sroce_dealloc_pd() - ib_device_ops.dealloc_pd
 * @ibpd: the PD; ib_core has checked that nothing uses it any more
 * @udata: user data, unused
 *
 * Return: 0.
 */
static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sroce_dev(ibpd->device);

	sroce_res_put(&sdev->res.pd);
	return 0;
}

/* The verbs on protection domains, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_pd_verbs = {
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
};
