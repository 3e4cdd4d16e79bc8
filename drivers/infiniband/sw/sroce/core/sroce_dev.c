// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce device lifetime: creation on "rdma link add", the netdev -> device
 * map, device attributes, and removal. The verb tables a device is
 * registered with are listed in sroce_verbs.c.
 *
 * Lifetime. ib_core allocates the device (ib_alloc_device) and frees it
 * after the last put_device(). A device is in sroce_devs, keyed by the
 * netdev's ifindex, from just before ib_register_device() until its
 * dealloc_driver callback, which ib_core runs once, late in
 * unregistration. Lookups by netdev (the UDP receive path, the netdev
 * notifier) take an ib_device_try_get() reference under RCU, which fails
 * once unregistration has started; ib_core frees the device with
 * kfree_rcu(), so the RCU read side may still touch it.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "core/sroce_stats.h"

/*
 * ifindex -> struct sroce_dev. Writers hold sroce_devs_mutex (xarray's own
 * lock would do for single stores, but module exit must see a stable set).
 */
static DEFINE_XARRAY(sroce_devs);
static DEFINE_MUTEX(sroce_devs_mutex);

static const u64 sroce_device_caps =
	IB_DEVICE_BAD_QKEY_CNTR |
	IB_DEVICE_UD_AV_PORT_ENFORCE |
	IB_DEVICE_PORT_ACTIVE_EVENT |
	IB_DEVICE_SYS_IMAGE_GUID |
	IB_DEVICE_RC_RNR_NAK_GEN |
	IB_DEVICE_SRQ_RESIZE |
	IB_DEVICE_MEM_MGT_EXTENSIONS |
	IB_DEVICE_MEM_WINDOW |
	IB_DEVICE_MEM_WINDOW_TYPE_2B;

static void sroce_dev_init_attr(struct sroce_dev *sdev)
{
	struct ib_device_attr *attr = &sdev->attr;

	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_MASK & 0xffffffffULL;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->max_qp = SROCE_MAX_QP;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->device_cap_flags = sroce_device_caps;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_cq = SROCE_MAX_CQ;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mr = SROCE_MAX_MR;
	attr->max_mw = SROCE_MAX_MW;
	attr->max_pd = SROCE_MAX_PD;
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SROCE_MAX_QP * SROCE_MAX_RD_ATOMIC;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach =
		SROCE_MAX_MCAST_GRP * SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_ah = SROCE_MAX_AH;
	attr->max_srq = SROCE_MAX_SRQ;
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	attr->max_pkeys = SROCE_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = 15;
}

/**
 * sroce_udata_ucontext() - the user context a verb's udata came with
 * @udata: the udata of a verb called from user space (not NULL)
 *
 * Return: the ib_ucontext of the calling process's device file.
 */
struct ib_ucontext *sroce_udata_ucontext(struct ib_udata *udata)
{
	struct sroce_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);

	return &uc->ibuc;
}

/**
 * sroce_dev_dealloc_driver() - ib_device_ops.dealloc_driver
 * @ibdev: the device
 *
 * Takes the device out of the netdev map and frees what the device
 * itself holds. ib_core calls it once per device: late in
 * unregistration, or from ib_dealloc_device() when registration failed.
 *
 * Context: process context, may sleep.
 */
void sroce_dev_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	void *old;

	mutex_lock(&sroce_devs_mutex);
	old = xa_cmpxchg(&sroce_devs, sdev->ifindex, sdev, NULL, GFP_KERNEL);
	mutex_unlock(&sroce_devs_mutex);
	if (old == sdev)
		pr_info("%s: removed\n", dev_name(&ibdev->dev));

	/*
	 * ib_core destroyed every object of the device before this; an MR
	 * deregistered while a QP held it may still be on its way out.
	 */
	wait_var_event(&sdev->mr_zombies, !atomic_read(&sdev->mr_zombies));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->keys);
	xa_destroy(&sdev->ahs);
	sroce_mcast_cleanup(&sdev->mcast);
	sroce_stats_cleanup(sdev);
}

static int sroce_dev_check_netdev(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER) {
		pr_err("%s is not an Ethernet device\n", ndev->name);
		return -EINVAL;
	}
	if (is_vlan_dev(ndev)) {
		pr_err("%s is a VLAN device: add sroce on its real device, VLAN GIDs follow\n",
		       ndev->name);
		return -EINVAL;
	}
	if (!net_eq(dev_net(ndev), &init_net)) {
		pr_err("%s is not in the initial network namespace\n",
		       ndev->name);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void sroce_dev_init_ibdev(struct sroce_dev *sdev,
				 struct net_device *ndev,
				 const struct ib_device_ops *const *verbs)
{
	struct ib_device *ibdev = &sdev->ibdev;

	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	strscpy(ibdev->node_desc, "sroce", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	for (; *verbs; verbs++)
		ib_set_device_ops(ibdev, *verbs);
}

/**
 * sroce_dev_add() - create and register a device on a netdev
 * @name: the ib_device name ("rdma link add NAME")
 * @ndev: the Ethernet netdev; the caller holds a reference
 * @verbs: the device's verbs, NULL-terminated tables that name no verb
 *	twice (sroce_verbs.c)
 *
 * Context: process context, may sleep; called by ib_core's nldev with
 * its link-ops lock held for reading, never with RTNL held.
 *
 * Return: 0, or a negative errno: -EINVAL for a non-Ethernet or VLAN
 * netdev, -EOPNOTSUPP for a netdev outside init_net, -EEXIST when the
 * netdev already has an sroce device, or what ib_register_device() says
 * (e.g. -ENFILE for a name in use).
 */
int sroce_dev_add(const char *name, struct net_device *ndev,
		  const struct ib_device_ops *const *verbs)
{
	struct sroce_dev *sdev;
	int err;

	err = sroce_dev_check_netdev(ndev);
	if (err)
		return err;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;

	sdev->ndev = ndev;
	sdev->ifindex = ndev->ifindex;
	sroce_dev_init_ibdev(sdev, ndev, verbs);
	sroce_dev_init_attr(sdev);
	sroce_port_init(&sdev->port, ndev);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->keys, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	sroce_mcast_init(&sdev->mcast);
	sroce_cc_init(&sdev->cc);

	/* dealloc_driver frees them, ib_dealloc_device() included */
	err = sroce_stats_init(sdev);
	if (err)
		goto err_dealloc;

	err = ib_device_set_netdev(&sdev->ibdev, ndev, SROCE_PORT_NUM);
	if (err)
		goto err_dealloc;

	mutex_lock(&sroce_devs_mutex);
	err = xa_insert(&sroce_devs, sdev->ifindex, sdev, GFP_KERNEL);
	mutex_unlock(&sroce_devs_mutex);
	if (err) {
		if (err == -EBUSY) {
			pr_err("%s already has an sroce device\n", ndev->name);
			err = -EEXIST;
		}
		goto err_dealloc;
	}

	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		pr_err("registering %s on %s failed: %d\n", name, ndev->name,
		       err);
		goto err_unmap;
	}
	pr_info("%s: added on %s\n", name, ndev->name);
	return 0;

err_unmap:
	/* so that dealloc_driver, run by ib_dealloc_device(), stays quiet */
	mutex_lock(&sroce_devs_mutex);
	xa_erase(&sroce_devs, sdev->ifindex);
	mutex_unlock(&sroce_devs_mutex);
err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/**
 * sroce_dev_get_by_netdev() - find the sroce device of a netdev
 * @ndev: the netdev
 *
 * Context: any; takes the RCU read lock itself.
 *
 * Return: the device with a registration reference (drop it with
 * sroce_dev_put()), or NULL if @ndev has no registered sroce device.
 */
struct sroce_dev *sroce_dev_get_by_netdev(const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = xa_load(&sroce_devs, ndev->ifindex);
	if (sdev && (sdev->ndev != ndev || !ib_device_try_get(&sdev->ibdev)))
		sdev = NULL;
	rcu_read_unlock();
	return sdev;
}

/**
 * sroce_dev_put() - drop a reference from sroce_dev_get_by_netdev()
 * @sdev: the device
 */
void sroce_dev_put(struct sroce_dev *sdev)
{
	ib_device_put(&sdev->ibdev);
}

/**
 * sroce_dev_remove_all() - unregister every sroce device
 *
 * Used at module exit, after the link type is gone so no device can be
 * added any more. Waits for each unregistration, including ones the netdev
 * notifier queued earlier, so no callback into this module runs after it
 * returns.
 *
 * Context: process context, may sleep; not under RTNL.
 */
void sroce_dev_remove_all(void)
{
	struct sroce_dev *sdev;
	unsigned long index = 0;

	mutex_lock(&sroce_devs_mutex);
	while ((sdev = xa_find(&sroce_devs, &index, ULONG_MAX, XA_PRESENT))) {
		/* dealloc_driver erases the entry; hold the memory meanwhile. */
		get_device(&sdev->ibdev.dev);
		mutex_unlock(&sroce_devs_mutex);
		ib_unregister_device(&sdev->ibdev);
		mutex_lock(&sroce_devs_mutex);
		/* An unregistration queued earlier may have done the work. */
		xa_cmpxchg(&sroce_devs, index, sdev, NULL, GFP_KERNEL);
		put_device(&sdev->ibdev.dev);
		index = 0;
	}
	mutex_unlock(&sroce_devs_mutex);
}
