// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control parameters of a device, in sysfs.
 *
 * Every sroce device has a directory /sys/class/infiniband/DEV/cc/ with
 * one file per parameter of its ECN marking, its notification point (CNPs
 * for packets that arrive marked CE) and its reaction point (DCQCN: CNPs
 * cut a QP's rate, timers and bytes sent raise it again; see
 * transport/sroce_dcqcn.c). A value written applies from the next event
 * that reads it; one outside the parameter's range is refused with
 * -EINVAL. The defaults follow the DCQCN paper (Zhu et al., SIGCOMM 2015)
 * and common RoCE NIC settings; Documentation/infiniband/sroce.rst lists
 * them with their units.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_cc.h"
#include "core/sroce_dev.h"

/**
 * struct sroce_cc_attr - one parameter's file
 * @dattr: the sysfs attribute
 * @param: which parameter
 * @def: its default
 * @min: the smallest value accepted
 * @max: the largest value accepted
 */
struct sroce_cc_attr {
	struct device_attribute dattr;
	enum sroce_cc_param param;
	u32 def;
	u32 min;
	u32 max;
};

static ssize_t sroce_cc_show(struct device *dev, struct device_attribute *da,
			     char *buf)
{
	struct sroce_cc_attr *a = container_of(da, struct sroce_cc_attr, dattr);
	struct sroce_dev *sdev = rdma_device_to_drv_device(dev, struct sroce_dev,
							   ibdev);

	return sysfs_emit(buf, "%u\n", sroce_cc_get(&sdev->cc, a->param));
}

static ssize_t sroce_cc_store(struct device *dev, struct device_attribute *da,
			      const char *buf, size_t count)
{
	struct sroce_cc_attr *a = container_of(da, struct sroce_cc_attr, dattr);
	struct sroce_dev *sdev = rdma_device_to_drv_device(dev, struct sroce_dev,
							   ibdev);
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (err)
		return err;
	if (val < a->min || val > a->max)
		return -EINVAL;
	WRITE_ONCE(sdev->cc.v[a->param], val);
	return count;
}

#define SROCE_CC_ATTR(_name, _param, _def, _min, _max)			\
	static struct sroce_cc_attr sroce_cc_attr_##_name = {		\
		.dattr = __ATTR(_name, 0644, sroce_cc_show, sroce_cc_store), \
		.param = _param, .def = _def, .min = _min, .max = _max,	\
	}

SROCE_CC_ATTR(ecn_enable, SROCE_CC_ECN, 1, 0, 1);
SROCE_CC_ATTR(np_enable, SROCE_CC_NP, 1, 0, 1);
SROCE_CC_ATTR(rp_enable, SROCE_CC_RP, 1, 0, 1);
SROCE_CC_ATTR(np_cnp_interval_us, SROCE_CC_CNP_INTERVAL, 50, 0, 1000000);
SROCE_CC_ATTR(rp_rate_reduce_period_us, SROCE_CC_RP_REDUCE_PERIOD, 4, 0,
	      1000000);
SROCE_CC_ATTR(rp_alpha_period_us, SROCE_CC_RP_ALPHA_PERIOD, 55, 1, 1000000);
SROCE_CC_ATTR(rp_g, SROCE_CC_RP_G, 4, 1, 1024);
SROCE_CC_ATTR(rp_initial_alpha, SROCE_CC_RP_INITIAL_ALPHA, 1024, 0, 1024);
SROCE_CC_ATTR(rp_time_reset_us, SROCE_CC_RP_TIME_RESET, 300, 1, 1000000);
SROCE_CC_ATTR(rp_byte_reset, SROCE_CC_RP_BYTE_RESET, 2097152, 4096,
	      U32_MAX);
SROCE_CC_ATTR(rp_threshold, SROCE_CC_RP_THRESHOLD, 5, 1, 31);
SROCE_CC_ATTR(rp_ai_rate_mbps, SROCE_CC_RP_AI_RATE, 5, 1, 1000000);
SROCE_CC_ATTR(rp_hai_rate_mbps, SROCE_CC_RP_HAI_RATE, 50, 1, 1000000);
SROCE_CC_ATTR(rp_min_rate_mbps, SROCE_CC_RP_MIN_RATE, 1, 1, 1000000);
SROCE_CC_ATTR(rp_max_rate_mbps, SROCE_CC_RP_MAX_RATE, 100000, 1, 10000000);
SROCE_CC_ATTR(rp_max_dec_pct, SROCE_CC_RP_MAX_DEC, 50, 1, 100);

static struct attribute *sroce_cc_sysfs[] = {
	&sroce_cc_attr_ecn_enable.dattr.attr,
	&sroce_cc_attr_np_enable.dattr.attr,
	&sroce_cc_attr_rp_enable.dattr.attr,
	&sroce_cc_attr_np_cnp_interval_us.dattr.attr,
	&sroce_cc_attr_rp_rate_reduce_period_us.dattr.attr,
	&sroce_cc_attr_rp_alpha_period_us.dattr.attr,
	&sroce_cc_attr_rp_g.dattr.attr,
	&sroce_cc_attr_rp_initial_alpha.dattr.attr,
	&sroce_cc_attr_rp_time_reset_us.dattr.attr,
	&sroce_cc_attr_rp_byte_reset.dattr.attr,
	&sroce_cc_attr_rp_threshold.dattr.attr,
	&sroce_cc_attr_rp_ai_rate_mbps.dattr.attr,
	&sroce_cc_attr_rp_hai_rate_mbps.dattr.attr,
	&sroce_cc_attr_rp_min_rate_mbps.dattr.attr,
	&sroce_cc_attr_rp_max_rate_mbps.dattr.attr,
	&sroce_cc_attr_rp_max_dec_pct.dattr.attr,
	NULL
};

static_assert(ARRAY_SIZE(sroce_cc_sysfs) == SROCE_CC_NPARAM + 1);

/* /sys/class/infiniband/DEV/cc/ */
static const struct attribute_group sroce_cc_group = {
	.name = "cc",
	.attrs = sroce_cc_sysfs,
};

/*
 * ib_core asks new drivers for netlink rather than a device_group, but
 * RDMA netlink has no command for a driver's congestion control
 * parameters; sysfs is where RoCE NICs keep theirs.
 */
const struct ib_device_ops sroce_cc_verbs = {
	.device_group = &sroce_cc_group,
};

/**
 * sroce_cc_init() - a new device's parameters: the defaults
 * @cc: the parameters
 */
void sroce_cc_init(struct sroce_cc *cc)
{
	const struct sroce_cc_attr *a;
	unsigned int i;

	for (i = 0; i < SROCE_CC_NPARAM; i++) {
		a = container_of(sroce_cc_sysfs[i], struct sroce_cc_attr,
				 dattr.attr);
		cc->v[a->param] = a->def;
	}
}
