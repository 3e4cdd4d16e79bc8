// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the route a connected QP keeps (sroce_route.c): it is
 * looked up once and then reused, looked up again for a new address
 * vector or once the stack has invalidated it, never replaced by an
 * engine still sending with an older address vector, and let go on
 * flush. The routes are the kernel's own, to the loopback addresses.
 *
 * Copyright (c) 2026 The sroce authors
 */

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <net/dst.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

#include "net/sroce_route.h"
#include "obj/sroce_ah.h"
#include "test_util.h"

/* sroce_route_get() that must succeed; the reference goes back at once. */
static struct dst_entry *route_get(struct kunit *test, struct sroce_route *r,
				   const struct sroce_av *av, u32 gen)
{
	struct dst_entry *dst = sroce_route_get(r, av, gen);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dst), "no route: %ld",
			       PTR_ERR(dst));
	dst_release(dst);
	return dst;
}

static int route_init(struct kunit_resource *res, void *context)
{
	struct sroce_route *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return -ENOMEM;
	sroce_route_init(r);
	res->data = r;
	return 0;
}

static void route_free(struct kunit_resource *res)
{
	sroce_route_flush(res->data);
	kfree(res->data);
}

/* A route of the test's own, flushed and freed with it. */
static struct sroce_route *route_new(struct kunit *test)
{
	struct sroce_route *r;

	r = kunit_alloc_resource(test, route_init, route_free, GFP_KERNEL,
				 NULL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	return r;
}

/* The second packet of a generation takes the route the first found. */
static void route_keep_test(struct kunit *test)
{
	bool v6 = *(const bool *)test->param_value;
	struct dst_entry *first, *again;
	struct sroce_route *r = route_new(test);
	struct sroce_av av;
	int refs;

	if (v6 && !IS_ENABLED(CONFIG_IPV6))
		kunit_skip(test, "no IPv6");
	sroce_test_loopback_av(&av, v6);
	first = route_get(test, r, &av, 1);
	again = route_get(test, r, &av, 1);
	KUNIT_EXPECT_PTR_EQ(test, again, first);
	KUNIT_EXPECT_PTR_EQ(test, r->dst, first);
	/* a loopback address: the kept route ends here, until it is let go */
	KUNIT_EXPECT_TRUE(test, sroce_route_local(r));
	KUNIT_EXPECT_EQ(test, r->lookups, 2ULL);
	KUNIT_EXPECT_EQ(test, r->misses, 1ULL);
	/* the kept route holds one reference of its own, until the flush */
	refs = atomic_read(&first->__refcnt);
	sroce_route_flush(r);
	KUNIT_EXPECT_NULL(test, r->dst);
	KUNIT_EXPECT_FALSE(test, sroce_route_local(r));
	KUNIT_EXPECT_EQ(test, atomic_read(&first->__refcnt), refs - 1);
	route_get(test, r, &av, 1);
	KUNIT_EXPECT_EQ(test, r->misses, 2ULL);
}

static const bool route_families[] = { false, true };

static void route_family_desc(const bool *v6, char *desc)
{
	strscpy(desc, *v6 ? "IPv6" : "IPv4", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(route_family, route_families, route_family_desc);

/*
 * A new address vector is looked up; an engine still sending with the
 * old one gets its own route but does not push the new one out.
 */
static void route_generation_test(struct kunit *test)
{
	struct sroce_route *r = route_new(test);
	struct sroce_av av;

	sroce_test_loopback_av(&av, false);
	route_get(test, r, &av, 1);
	route_get(test, r, &av, 2);
	KUNIT_EXPECT_EQ(test, r->misses, 2ULL);
	KUNIT_EXPECT_EQ(test, r->gen, 2U);

	route_get(test, r, &av, 1);
	KUNIT_EXPECT_EQ(test, r->misses, 3ULL);
	KUNIT_EXPECT_EQ(test, r->gen, 2U);
	route_get(test, r, &av, 2);
	KUNIT_EXPECT_EQ(test, r->misses, 3ULL);

	/* across the wrap of the generation counter: 0 follows U32_MAX */
	r = route_new(test);
	route_get(test, r, &av, U32_MAX);
	route_get(test, r, &av, 0);
	KUNIT_EXPECT_EQ(test, r->gen, 0U);
	route_get(test, r, &av, U32_MAX);
	KUNIT_EXPECT_EQ(test, r->gen, 0U);
	KUNIT_EXPECT_EQ(test, r->misses, 3ULL);
}

/*
 * A route the stack has invalidated (its IPv4 routes' generation moves
 * whenever a route, an address or a netdev changes) is looked up again.
 */
static void route_invalidated_test(struct kunit *test)
{
	struct sroce_route *r = route_new(test);
	struct sroce_av av;

	sroce_test_loopback_av(&av, false);
	route_get(test, r, &av, 1);
	rt_genid_bump_ipv4(&init_net);
	route_get(test, r, &av, 1);
	KUNIT_EXPECT_EQ(test, r->misses, 2ULL);
	route_get(test, r, &av, 1);
	KUNIT_EXPECT_EQ(test, r->misses, 2ULL);
}

/* A failed lookup is the caller's error and keeps nothing. */
static void route_unreachable_test(struct kunit *test)
{
	struct sroce_route *r = route_new(test);
	struct dst_entry *dst;
	struct sroce_av av;

	sroce_test_loopback_av(&av, false);
	/* 0.0.0.0/8 is not routable */
	av.daddr.in4.sin_addr.s_addr = htonl(0x00000001);
	av.saddr.in4.sin_addr.s_addr = htonl(0x00000002);
	dst = sroce_route_get(r, &av, 1);
	KUNIT_EXPECT_TRUE(test, IS_ERR(dst));
	if (!IS_ERR(dst))
		dst_release(dst);
	KUNIT_EXPECT_NULL(test, r->dst);
	KUNIT_EXPECT_FALSE(test, sroce_route_local(r));
}

static struct kunit_case sroce_route_test_cases[] = {
	KUNIT_CASE_PARAM(route_keep_test, route_family_gen_params),
	KUNIT_CASE(route_generation_test),
	KUNIT_CASE(route_invalidated_test),
	KUNIT_CASE(route_unreachable_test),
	{}
};

static struct kunit_suite sroce_route_test_suite = {
	.name = "sroce_route",
	.test_cases = sroce_route_test_cases,
};

kunit_test_suites(&sroce_route_test_suite);
