// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce verbs: the ib_device_ops table every sroce device is registered
 * with, and the device-wide verbs that belong to no object (query and
 * modify the device, user contexts).
 *
 * This file sits above every layer: the table names a function of each
 * object, so it includes their headers, and nothing includes it but
 * sroce_main.c.
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

/*
 * The verbs of every sroce device, grouped by the object they work on;
 * each group's functions live in the file named beside it.
 */
const struct ib_device_ops sroce_verbs_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,	/* the user ABI of librxe */
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,
	/*
	 * cc/ in the device's sysfs directory. ib_core asks new drivers for
	 * netlink instead, but RDMA netlink has no command for a driver's
	 * congestion control parameters; sysfs is what RoCE NICs use for
	 * theirs.
	 */
	.device_group = &sroce_cc_group,

	/* registration and teardown */
	.enable_driver = sroce_enable_driver,
	.dealloc_driver = sroce_dev_dealloc_driver,

	/* the device */
	.query_device = sroce_query_device,
	.modify_device = sroce_modify_device,

	/* its counters (core/sroce_stats.c) */
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,

	/* its port (core/sroce_port.c) */
	.get_port_immutable = sroce_get_port_immutable,
	.get_link_layer = sroce_get_link_layer,
	.query_port = sroce_query_port,
	.modify_port = sroce_modify_port,
	.query_pkey = sroce_query_pkey,

	/* user contexts (here) and their ring mappings (obj/sroce_queue.c) */
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	.alloc_ucontext = sroce_alloc_ucontext,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,

	/* protection domains (obj/sroce_pd.c) */
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,

	/* address handles (obj/sroce_ah.c) */
	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	.create_ah = sroce_create_ah,
	.create_user_ah = sroce_create_ah,
	.query_ah = sroce_query_ah,
	.destroy_ah = sroce_destroy_ah,

	/* multicast groups (core/sroce_mcast.c) */
	.attach_mcast = sroce_attach_mcast,
	.detach_mcast = sroce_detach_mcast,

	/* completion queues (obj/sroce_cq.c) */
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	.create_cq = sroce_create_cq,
	.destroy_cq = sroce_destroy_cq,
	.resize_cq = sroce_resize_cq,
	.poll_cq = sroce_poll_cq,
	.peek_cq = sroce_peek_cq,
	.req_notify_cq = sroce_req_notify_cq,

	/* shared receive queues (obj/sroce_srq.c) */
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	.create_srq = sroce_create_srq,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,
	.post_srq_recv = sroce_post_srq_recv,

	/*
	 * queue pairs (transport/sroce_qp.c) and their work queues
	 * (transport/sroce_wq.c)
	 */
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	.create_qp = sroce_create_qp,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,

	/* memory regions (mem/sroce_mr.c) and windows (mem/sroce_mw.c) */
	.get_dma_mr = sroce_get_dma_mr,
	.reg_user_mr = sroce_reg_user_mr,
	.dereg_mr = sroce_dereg_mr,
	.alloc_mr = sroce_alloc_mr,
	.map_mr_sg = sroce_map_mr_sg,
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,
};
