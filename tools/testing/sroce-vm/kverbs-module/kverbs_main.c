// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel-verbs test of sroce for the VM harness (scenarios/kverbs.sh).
 *
 * On load it registers an ib_client, takes the device named "devname"
 * (default sroce0; others are ignored) and runs its checks against it with
 * exported ib_core APIs only, as a kernel ULP would. No peer ever answers
 * (RC requests go on the wire to the fake peer), so every check lives on
 * what needs no response: QP creation and state changes, flushes, local
 * operations (fast registration and local invalidation), CQ arming and
 * overflow, SRQs, and AHs made in atomic context. Each check prints one line to the kernel log:
 *
 *   sroce-kverbs: ok <name>
 *   sroce-kverbs: FAIL <name>: <what differed>
 *
 * and the run ends with "sroce-kverbs: N passed, N failed". Every check
 * builds its own objects and destroys them all, pass or fail; polls are
 * bounded (KV_TIMEOUT_MS). The address of the fake peer (peer_ip,
 * peer_mac) must have a permanent neighbour entry: kernel QPs and AHs
 * take the destination MAC from their caller, so nothing is resolved.
 *
 * The module is made of this file (parameters, the peer, the list of
 * checks, the ib_client), kverbs_fixture.c (the context, CQ and QP
 * helpers, expectations), kverbs_qp_checks.c (QPs, their queues, fast
 * registration) and kverbs_cq_checks.c (CQs, SRQs, AHs, UD sends).
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) "sroce-kverbs: " fmt

#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kverbs_cq_checks.h"
#include "kverbs_fixture.h"
#include "kverbs_qp_checks.h"

static char *devname = "sroce0";
module_param(devname, charp, 0444);
MODULE_PARM_DESC(devname, "the ib_device to test (default sroce0)");

static char *peer_ip = "10.0.0.9";
module_param(peer_ip, charp, 0444);
MODULE_PARM_DESC(peer_ip, "IPv4 address of the fake peer");

static char *peer_mac = "02:00:00:00:00:09";
module_param(peer_mac, charp, 0444);
MODULE_PARM_DESC(peer_mac, "MAC of the fake peer (a static neighbour)");

/* The device under test, between the client's add and remove. */
static DEFINE_MUTEX(kv_mutex);
static struct ib_device *kv_dev;

static void kv_run(struct kv_ctx *c, const char *name,
		   void (*check)(struct kv_ctx *c))
{
	c->why[0] = '\0';
	check(c);
	if (c->why[0]) {
		pr_info("FAIL %s: %s\n", name, c->why);
		c->failed++;
	} else {
		pr_info("ok %s\n", name);
		c->passed++;
	}
}

/* ---- setup and the client ------------------------------------------------ */

/* The first RoCEv2 GID with an IPv4 address, and the fake peer's address. */
static int kv_setup_peer(struct kv_ctx *c)
{
	const struct ib_gid_attr *gattr;
	__be32 addr;
	u32 i;

	if (!in4_pton(peer_ip, -1, (u8 *)&addr, -1, NULL) ||
	    !mac_pton(peer_mac, c->peer_mac)) {
		pr_err("bad peer_ip or peer_mac\n");
		return -EINVAL;
	}
	ipv6_addr_set_v4mapped(addr, (struct in6_addr *)c->peer_gid.raw);

	for (i = 0; i < c->dev->port_data[KV_PORT].immutable.gid_tbl_len; i++) {
		gattr = rdma_get_gid_attr(c->dev, KV_PORT, i);
		if (IS_ERR(gattr))
			continue;
		if (gattr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)gattr->gid.raw)) {
			rdma_put_gid_attr(gattr);
			break;
		}
		rdma_put_gid_attr(gattr);
	}
	if (i == c->dev->port_data[KV_PORT].immutable.gid_tbl_len) {
		pr_err("no RoCEv2 IPv4 GID on %s\n", dev_name(&c->dev->dev));
		return -ENOENT;
	}
	c->sgid_index = i;

	memset(&c->peer, 0, sizeof(c->peer));
	c->peer.type = rdma_ah_find_type(c->dev, KV_PORT);
	rdma_ah_set_port_num(&c->peer, KV_PORT);
	rdma_ah_set_sl(&c->peer, 0);
	/* ib_core fills grh.sgid_attr from sgid_index for each use */
	rdma_ah_set_grh(&c->peer, &c->peer_gid, 0, c->sgid_index, 64, 0);
	memcpy(c->peer.roce.dmac, c->peer_mac, ETH_ALEN);
	return 0;
}

static const struct {
	const char *name;
	void (*check)(struct kv_ctx *c);
} kv_checks[] = {
	{ "rc-qp-create-to-rts", kv_check_rc_create },
	{ "ud-qp-create-to-rts", kv_check_ud_create },
	{ "recv-flush", kv_check_recv_flush },
	{ "send-flush", kv_check_send_flush },
	{ "sq-full", kv_check_sq_full },
	{ "fast-reg", kv_check_fast_reg },
	{ "fast-reg-wrong-pd", kv_check_fast_reg_pd },
	{ "cq-notify", kv_check_cq_notify },
	{ "cq-overflow", kv_check_cq_overflow },
	{ "srq", kv_check_srq },
	{ "ah-atomic", kv_check_ah_atomic },
	{ "ud-send", kv_check_ud_send },
};

static void kv_run_all(struct ib_device *dev)
{
	static struct kv_ctx ctx;	/* kv_mutex serialises runs */
	struct kv_ctx *c = &ctx;
	int i;

	lockdep_assert_held(&kv_mutex);
	memset(c, 0, sizeof(*c));
	c->dev = dev;
	if (kv_setup_peer(c)) {
		pr_info("FAIL setup: no address for the peer\n");
		c->failed++;
		goto out_summary;
	}
	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		pr_info("FAIL setup: ib_alloc_pd: %ld\n", PTR_ERR(c->pd));
		c->failed++;
		goto out_summary;
	}
	pr_info("testing %s, source GID index %u, peer %s %pM\n",
		dev_name(&dev->dev), c->sgid_index, peer_ip, c->peer_mac);
	for (i = 0; i < ARRAY_SIZE(kv_checks); i++)
		kv_run(c, kv_checks[i].name, kv_checks[i].check);
	ib_dealloc_pd(c->pd);

out_summary:
	pr_info("%u passed, %u failed\n", c->passed, c->failed);
}

static int kv_client_add(struct ib_device *dev)
{
	if (strcmp(dev_name(&dev->dev), devname))
		return -EOPNOTSUPP;	/* not ours: no client data */
	mutex_lock(&kv_mutex);
	if (!kv_dev)
		kv_dev = dev;
	mutex_unlock(&kv_mutex);
	return 0;
}

static void kv_client_remove(struct ib_device *dev, void *client_data)
{
	mutex_lock(&kv_mutex);
	if (kv_dev == dev)
		kv_dev = NULL;
	mutex_unlock(&kv_mutex);
}

static struct ib_client kv_client = {
	.name = "sroce_vm_kverbs",
	.add = kv_client_add,
	.remove = kv_client_remove,
};

static int __init kv_init(void)
{
	int err;

	err = ib_register_client(&kv_client);
	if (err)
		return err;

	/* remove() waits for the mutex: the device stays while we test */
	mutex_lock(&kv_mutex);
	if (kv_dev) {
		kv_run_all(kv_dev);
	} else {
		pr_info("FAIL setup: no ib_device named %s\n", devname);
		pr_info("0 passed, 1 failed\n");
	}
	mutex_unlock(&kv_mutex);
	return 0;
}

static void __exit kv_exit(void)
{
	ib_unregister_client(&kv_client);
}

module_init(kv_init);
module_exit(kv_exit);
MODULE_DESCRIPTION("sroce VM test: kernel verbs against an sroce device");
MODULE_LICENSE("GPL");
