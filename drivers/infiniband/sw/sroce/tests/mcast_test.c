// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the multicast groups of sroce_mcast.c: what a failed
 * attach leaves behind, and the group table at the device's limit.
 *
 * The device is the fake one of test_util.c; its netdev is an Ethernet
 * netdev that is never registered, so dev_mc_add() only keeps the
 * address list (a netdev that is not up programs no filter).
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/spinlock.h>
#include <linux/netdevice.h>

#include "core/sroce_dev.h"
#include "core/sroce_mcast.h"
#include "test_util.h"

/* The IPv4-mapped MGID of 239.1.@hi.@lo. */
static void mgid_v4(union ib_gid *mgid, u8 hi, u8 lo)
{
	memset(mgid, 0, sizeof(*mgid));
	mgid->raw[10] = 0xff;
	mgid->raw[11] = 0xff;
	mgid->raw[12] = 239;
	mgid->raw[13] = 1;
	mgid->raw[14] = hi;
	mgid->raw[15] = lo;
}

struct mcast_fix {
	struct sroce_test_dev t;
	struct net_device *ndev;
	struct ib_qp qp[2];
};

static void mcast_fix_init(struct kunit *test, struct mcast_fix *f)
{
	unsigned int i;

	sroce_test_dev_init(test, &f->t);
	f->ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, f->ndev);
	/* register_netdevice() would; dev_mc_add() takes it */
	spin_lock_init(&f->ndev->addr_list_lock);
	f->t.sdev->ndev = f->ndev;
	sroce_mcast_init(&f->t.sdev->mcast);
	for (i = 0; i < ARRAY_SIZE(f->qp); i++) {
		f->qp[i].device = &f->t.sdev->ibdev;
		f->qp[i].qp_type = IB_QPT_UD;
		f->qp[i].qp_num = 0x40 + i;
	}
}

static void mcast_fix_cleanup(struct kunit *test, struct mcast_fix *f)
{
	KUNIT_EXPECT_EQ(test, f->t.sdev->mcast.ngroups, 0U);
	KUNIT_EXPECT_EQ(test, netdev_mc_count(f->ndev), 0);
	/* only an empty table: a group left would WARN (panic_on_warn) */
	if (!f->t.sdev->mcast.ngroups)
		sroce_mcast_cleanup(&f->t.sdev->mcast);
	free_netdev(f->ndev);
}

/*
 * When the netdev refuses the group's Ethernet address, the attach fails
 * and ib_core never detaches the QP: a group left listed would deliver
 * to a QPN that may be reused, and trip the cleanup's WARN. Here the
 * netdev refuses every address (an address length past MAX_ADDR_LEN).
 */
static void mcast_attach_filter_fails_test(struct kunit *test)
{
	struct sroce_mcast *mc;
	struct mcast_fix f;
	union ib_gid mgid;
	u32 qpns[SROCE_MAX_MCAST_QP_ATTACH];

	mcast_fix_init(test, &f);
	mc = &f.t.sdev->mcast;
	mgid_v4(&mgid, 1, 1);
	f.ndev->addr_len = MAX_ADDR_LEN + 1;
	KUNIT_EXPECT_EQ(test, sroce_attach_mcast(&f.qp[0], &mgid, 0), -ENOMEM);
	KUNIT_EXPECT_EQ(test, sroce_mcast_members(mc, &mgid, qpns), 0U);
	KUNIT_EXPECT_EQ(test, mc->ngroups, 0U);
	KUNIT_EXPECT_EQ(test, sroce_detach_mcast(&f.qp[0], &mgid, 0), -EINVAL);

	/* the netdev takes addresses again: the same attach works */
	f.ndev->addr_len = ETH_ALEN;
	KUNIT_EXPECT_EQ(test, sroce_attach_mcast(&f.qp[0], &mgid, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_attach_mcast(&f.qp[1], &mgid, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mcast_members(mc, &mgid, qpns), 2U);
	KUNIT_EXPECT_EQ(test, netdev_mc_count(f.ndev), 1);
	KUNIT_EXPECT_EQ(test, sroce_detach_mcast(&f.qp[0], &mgid, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mcast_members(mc, &mgid, qpns), 1U);
	KUNIT_EXPECT_EQ(test, qpns[0], f.qp[1].qp_num);
	KUNIT_EXPECT_EQ(test, sroce_detach_mcast(&f.qp[1], &mgid, 0), 0);
	mcast_fix_cleanup(test, &f);
}

/*
 * Every group up to the device's limit is found with its own members
 * (the receive path looks one up per datagram, with interrupts off), one
 * more is refused, and detaching them all leaves the table empty.
 */
static void mcast_table_full_test(struct kunit *test)
{
	u32 qpns[SROCE_MAX_MCAST_QP_ATTACH];
	unsigned int i, wrong = 0;
	struct sroce_mcast *mc;
	struct mcast_fix f;
	union ib_gid mgid;

	mcast_fix_init(test, &f);
	mc = &f.t.sdev->mcast;
	for (i = 0; i < SROCE_MAX_MCAST_GRP; i++) {
		mgid_v4(&mgid, i >> 8, i & 0xff);
		if (sroce_attach_mcast(&f.qp[i & 1], &mgid, 0))
			wrong++;
	}
	KUNIT_EXPECT_EQ(test, wrong, 0U);
	KUNIT_EXPECT_EQ(test, mc->ngroups, (unsigned int)SROCE_MAX_MCAST_GRP);
	mgid_v4(&mgid, 0xff, 0xff);
	KUNIT_EXPECT_EQ(test, sroce_attach_mcast(&f.qp[0], &mgid, 0), -ENOMEM);

	for (i = 0; i < SROCE_MAX_MCAST_GRP; i++) {
		mgid_v4(&mgid, i >> 8, i & 0xff);
		if (sroce_mcast_members(mc, &mgid, qpns) != 1 ||
		    qpns[0] != f.qp[i & 1].qp_num)
			wrong++;
	}
	KUNIT_EXPECT_EQ(test, wrong, 0U);
	mgid_v4(&mgid, 0xff, 0xfe);
	KUNIT_EXPECT_EQ(test, sroce_mcast_members(mc, &mgid, qpns), 0U);

	for (i = 0; i < SROCE_MAX_MCAST_GRP; i++) {
		mgid_v4(&mgid, i >> 8, i & 0xff);
		if (sroce_detach_mcast(&f.qp[i & 1], &mgid, 0))
			wrong++;
	}
	KUNIT_EXPECT_EQ(test, wrong, 0U);
	mcast_fix_cleanup(test, &f);
}

static struct kunit_case sroce_mcast_test_cases[] = {
	KUNIT_CASE(mcast_attach_filter_fails_test),
	KUNIT_CASE(mcast_table_full_test),
	{}
};

static struct kunit_suite sroce_mcast_test_suite = {
	.name = "sroce_mcast",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_mcast_test_cases,
};

kunit_test_suite(sroce_mcast_test_suite);
