// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce verbs: the list of verb tables every sroce device is registered
 * with, and the device-wide verbs that belong to no object (query and
 * modify the device, user contexts).
 *
 * This file sits above every layer: the list names a table of each
 * object's file, so it includes their headers, and nothing includes it
 * but sroce_main.c.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_cc.h"
#include "core/sroce_dev.h"
#include "core/sroce_mcast.h"
#include "core/sroce_port.h"
#include "core/sroce_stats.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "mem/sroce_mw.h"
#include "obj/sroce_ah.h"
#include "obj/sroce_cq.h"
#include "obj/sroce_pd.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_srq.h"
#include "sroce_verbs.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_wq.h"

/* The user ABI version of librxe's provider, whose ABI sroce speaks. */
#define SROCE_UVERBS_ABI_VERSION	2

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	/* No driver-specific extension is defined for this verb. */
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	*attr = to_sroce_dev(ibdev)->attr;
	return 0;
}

static int sroce_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *props)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);

	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;

	if (mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID)
		sdev->attr.sys_image_guid = cpu_to_be64(props->sys_image_guid);
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, props->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

/*
 * A user context pins the module, so that "rmmod sroce" is refused while
 * a process uses a device. ib_uverbs takes no module reference for a
 * driver that can disassociate (see sroce_disassociate_ucontext()), and
 * rmmod would otherwise unplug every device under its users; unplugging
 * is what "ip link del" and "rdma link del" are for. The reference goes
 * with the context: at close, or when the device is removed.
 */
static int sroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	return 0;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	module_put(THIS_MODULE);
}

/**
 * sroce_disassociate_ucontext() - ib_device_ops.disassociate_ucontext
 * @ibuc: the context of a process that still holds the removed device
 *
 * Having this op tells ib_uverbs that the device may be unregistered
 * while processes hold its file (the netdev is deleted, "rdma link del"):
 * instead of waiting for them to close it, ib_uverbs destroys every
 * object of the context with RDMA_REMOVE_DRIVER_REMOVE, calls this, then
 * dealloc_ucontext, and answers later verbs calls with -EIO.
 *
 * Nothing is left for the driver to cut off here. The objects are gone,
 * so no engine reads or writes a ring any more, and their mmap entries
 * are removed. What user space still reaches is its ring mappings: their
 * pages were inserted with vm_insert_page(), so each mapping holds its
 * own page references (see sroce_mmap()). Once the rings' buffers are
 * freed those pages belong to the mappings alone, memory no device and
 * no kernel path uses, returned when the process unmaps them. ib_core's
 * own zapping of user mappings (uverbs_user_mmap_disassociate()) covers
 * the PFN mappings of rdma_user_mmap_io() only and does not apply.
 *
 * Context: process context, ib_uverbs' hw_destroy_rwsem held for writing.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int sroce_enable_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);

	/* Netdev events before registration finished were not followed. */
	sroce_port_refresh(&sdev->port, sdev->ndev);
	return 0;
}

/* The verbs of the device itself and of its user contexts. */
static const struct ib_device_ops sroce_device_verbs = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,	/* the user ABI of librxe */
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,
	.enable_driver = sroce_enable_driver,
	.dealloc_driver = sroce_dev_dealloc_driver,
	.query_device = sroce_query_device,
	.modify_device = sroce_modify_device,
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	.alloc_ucontext = sroce_alloc_ucontext,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.disassociate_ucontext = sroce_disassociate_ucontext,
};

/*
 * Every file that implements verbs of an object keeps their table beside
 * them; a device is registered with all of them (ib_set_device_ops() per
 * table, in sroce_dev_add()). No verb is in two tables.
 */
const struct ib_device_ops *const sroce_verbs[] = {
	&sroce_device_verbs,
	&sroce_cc_verbs,	/* core/sroce_cc.c: cc/ in sysfs */
	&sroce_stats_verbs,
	&sroce_port_verbs,
	&sroce_queue_verbs,	/* obj/sroce_queue.c: ring mappings */
	&sroce_pd_verbs,
	&sroce_ah_verbs,
	&sroce_mcast_verbs,
	&sroce_cq_verbs,
	&sroce_srq_verbs,
	&sroce_qp_verbs,
	&sroce_wq_verbs,	/* transport/sroce_wq.c: posting */
	&sroce_mr_verbs,
	&sroce_frmr_verbs,
	&sroce_mw_verbs,
	NULL
};
