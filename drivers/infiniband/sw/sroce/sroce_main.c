// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce: software RDMA over Converged Ethernet (RoCEv2).
 *
 * Module entry points: the "sroce" rdma link type, the netdev notifier
 * that makes devices follow their netdevs, and the order in which the
 * module's parts come up and go down.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/rdma_netlink.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "core/sroce_task.h"
#include "net/sroce_net.h"
#include "sroce_main.h"
#include "sroce_verbs.h"
#include "transport/sroce_rcv.h"
#include "wire/sroce_icrc.h"

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return sroce_dev_add(ibdev_name, ndev, sroce_verbs);
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	sdev = sroce_dev_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	if (event == NETDEV_UNREGISTER)
		/* ib_core must drop its netdev reference: it cannot wait here. */
		ib_unregister_device_queued(&sdev->ibdev);
	else
		sroce_port_netdev_event(&sdev->ibdev, &sdev->port, ndev, event);

	sroce_dev_put(sdev);
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

/* Users of the engines' shared state: module init, and KUnit suites. */
static DEFINE_MUTEX(sroce_engines_lock);
static unsigned int sroce_engines_users;

/**
 * sroce_engines_get() - make the engines' module-wide state exist
 *
 * The workqueues the QP engines run on and the ICRC's CRC engine are
 * shared by every device. Module init takes the first reference. KUnit
 * runs the suites of a modular build when the module is coming, before
 * its init function, so the suites that drive engines take their own.
 *
 * Return: 0, or the errno of the part that could not be set up.
 *
 * Context: process context; may sleep.
 */
int sroce_engines_get(void)
{
	int err = 0;

	mutex_lock(&sroce_engines_lock);
	if (sroce_engines_users) {
		sroce_engines_users++;
		goto unlock;
	}
	err = sroce_task_module_init();
	if (err)
		goto unlock;
	err = sroce_icrc_init();
	if (err) {
		sroce_task_module_exit();
		goto unlock;
	}
	sroce_engines_users = 1;
unlock:
	mutex_unlock(&sroce_engines_lock);
	return err;
}

/**
 * sroce_engines_put() - drop a reference taken by sroce_engines_get()
 *
 * The last one tears the state down, so no engine may run afterwards.
 *
 * Context: process context; may sleep.
 */
void sroce_engines_put(void)
{
	mutex_lock(&sroce_engines_lock);
	if (!WARN_ON_ONCE(!sroce_engines_users) && !--sroce_engines_users) {
		sroce_icrc_exit();
		sroce_task_module_exit();
	}
	mutex_unlock(&sroce_engines_lock);
}

static int __init sroce_init(void)
{
	int err;

	/* QP engines run on the workqueue: it outlives every device. */
	err = sroce_engines_get();
	if (err)
		return err;

	err = sroce_net_init(sroce_rcv_skb);
	if (err)
		goto err_engines_put;

	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err) {
		pr_err("cannot register the netdev notifier: %d\n", err);
		goto err_net_exit;
	}

	rdma_link_register(&sroce_link_ops);
	pr_info("loaded\n");
	return 0;

err_net_exit:
	sroce_net_exit();
err_engines_put:
	sroce_engines_put();
	return err;
}

static void __exit sroce_exit(void)
{
	/* No new device after this; then take the existing ones down. */
	rdma_link_unregister(&sroce_link_ops);
	sroce_dev_remove_all();
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	sroce_net_exit();
	sroce_engines_put();
	pr_info("unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce authors");
MODULE_DESCRIPTION("Software RDMA over Converged Ethernet (RoCEv2) driver");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
/* The ICRC engine prefers the crypto API crc32 (PCLMULQDQ) when present. */
MODULE_SOFTDEP("pre: crc32");
