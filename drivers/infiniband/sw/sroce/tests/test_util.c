// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared KUnit fixtures: a fake, unregistered sroce device with two PDs,
 * its counters, fast-reg MRs over separate pages, and bare RC QPs on it
 * for the responder's go-back rules and the completer's retry rules.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/resource.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "mem/sroce_frmr.h"
#include "mem/sroce_mr.h"
#include "obj/sroce_ah.h"
#include "obj/sroce_queue.h"
#include "obj/sroce_wqe.h"
#include "sroce_main.h"
#include "test_util.h"
#include "transport/sroce_comp.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_req.h"
#include "transport/sroce_resp.h"
#include "transport/sroce_resp_res.h"
#include "wire/sroce_opcode.h"
#include "wire/sroce_pkt.h"
#include "wire/sroce_psn.h"

/**
 * sroce_test_engines_init() - suite_init of every sroce suite
 * @suite: the suite about to run
 *
 * A modular build's suites run before the module's init function has
 * set up the engines' workqueues and CRC engine; each suite holds them
 * for as long as it runs, whichever way the driver was built.
 *
 * Return: 0 or the errno of sroce_engines_get().
 */
int sroce_test_engines_init(struct kunit_suite *suite)
{
	return sroce_engines_get();
}

/**
 * sroce_test_engines_exit() - suite_exit of every sroce suite
 * @suite: the suite that ran
 */
void sroce_test_engines_exit(struct kunit_suite *suite)
{
	sroce_engines_put();
}

/**
 * sroce_test_dev_init() - set up a fake device and two PDs on it
 * @test: the running test; allocations are released with it
 * @t: the fixture to fill
 *
 * Only what the key, MR, MW and copy code touch is set: the key xarray,
 * the MR and MW limits, and the PDs' device pointers.
 *
 * Context: process context; asserts (ends the test) on allocation failure.
 */
void sroce_test_dev_init(struct kunit *test, struct sroce_test_dev *t)
{
	t->sdev = kunit_kzalloc(test, sizeof(*t->sdev), GFP_KERNEL);
	t->pd = kunit_kzalloc(test, sizeof(*t->pd), GFP_KERNEL);
	t->pd2 = kunit_kzalloc(test, sizeof(*t->pd2), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->sdev);
	KUNIT_ASSERT_NOT_NULL(test, t->pd);
	KUNIT_ASSERT_NOT_NULL(test, t->pd2);
	xa_init_flags(&t->sdev->keys, XA_FLAGS_ALLOC);
	t->sdev->attr.max_mr = SROCE_MAX_MR;
	t->sdev->attr.max_mw = SROCE_MAX_MW;
	t->pd->device = &t->sdev->ibdev;
	t->pd2->device = &t->sdev->ibdev;
}

/**
 * sroce_test_dev_check_empty() - every MR and MW of the fixture is gone
 * @test: the running test
 * @t: the fixture
 *
 * Expects an empty key table and MR and MW counts back at zero: a key
 * cache or a lookup that kept a reference shows up here.
 */
void sroce_test_dev_check_empty(struct kunit *test, struct sroce_test_dev *t)
{
	KUNIT_EXPECT_TRUE(test, xa_empty(&t->sdev->keys));
	KUNIT_EXPECT_EQ(test, atomic_read(&t->sdev->res.mr), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->sdev->res.mw), 0);
}

/* The pages of @m (kmalloc() memory if @m->slab) under a fast-reg MR. */
static void sroce_test_mr_register(struct kunit *test, struct ib_pd *pd,
				   struct sroce_test_mr *m, u32 size,
				   int access)
{
	struct scatterlist sg[SROCE_TEST_MR_PAGES];
	unsigned int i;
	void *va;

	m->npages = DIV_ROUND_UP(size, PAGE_SIZE);
	KUNIT_ASSERT_LE(test, m->npages, SROCE_TEST_MR_PAGES);
	sg_init_table(sg, m->npages);
	for (i = 0; i < m->npages; i++) {
		if (m->slab) {
			/* a power of two: kmalloc() aligns it to its size */
			va = kmalloc(PAGE_SIZE, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, va);
			m->page[i] = virt_to_page(va);
		} else {
			m->page[i] = alloc_page(GFP_KERNEL);
		}
		KUNIT_ASSERT_NOT_NULL(test, m->page[i]);
		memset(page_address(m->page[i]), SROCE_TEST_SENTINEL,
		       PAGE_SIZE);
		sg_set_page(&sg[i], m->page[i], PAGE_SIZE, 0);
		sg_dma_address(&sg[i]) = (uintptr_t)page_address(m->page[i]);
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	m->ibmr = sroce_alloc_mr(pd, IB_MR_TYPE_MEM_REG, m->npages);
	KUNIT_ASSERT_FALSE(test, IS_ERR(m->ibmr));
	m->ibmr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, sroce_map_mr_sg(m->ibmr, sg, m->npages, NULL),
			(int)m->npages);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(pd, m->ibmr, m->ibmr->lkey,
						access), IB_WC_SUCCESS);
}

/**
 * sroce_test_mr_create() - a fast-reg MR over separately allocated pages
 * @test: the running test
 * @pd: its PD
 * @m: the MR; its pages are filled with SROCE_TEST_SENTINEL
 * @size: bytes, at most SROCE_TEST_MR_PAGES pages
 * @access: IB_ACCESS_* of the registration
 *
 * The pages are not contiguous, so an access that crosses one of their
 * boundaries crosses a real page boundary.
 */
void sroce_test_mr_create(struct kunit *test, struct ib_pd *pd,
			  struct sroce_test_mr *m, u32 size, int access)
{
	m->slab = false;
	sroce_test_mr_register(test, pd, m, size, access);
}

/**
 * sroce_test_mr_create_slab() - sroce_test_mr_create() over kmalloc() memory
 * @test: the running test
 * @pd: its PD
 * @m: the MR; its pages are filled with SROCE_TEST_SENTINEL
 * @size: bytes, at most SROCE_TEST_MR_PAGES pages
 * @access: IB_ACCESS_* of the registration
 *
 * Memory a page reference does not govern, as a kernel ULP may register:
 * a payload from it is never lent to a packet.
 */
void sroce_test_mr_create_slab(struct kunit *test, struct ib_pd *pd,
			       struct sroce_test_mr *m, u32 size, int access)
{
	m->slab = true;
	sroce_test_mr_register(test, pd, m, size, access);
}

/**
 * sroce_test_mr_destroy() - deregister the MR and free its pages
 * @test: the running test
 * @m: the MR
 */
void sroce_test_mr_destroy(struct kunit *test, struct sroce_test_mr *m)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, sroce_dereg_mr(m->ibmr, NULL), 0);
	for (i = 0; i < m->npages; i++) {
		if (m->slab)
			kfree(page_address(m->page[i]));
		else
			__free_page(m->page[i]);
	}
}

static int sroce_test_stats_init(struct kunit_resource *res, void *context)
{
	struct sroce_dev *sdev = context;

	res->data = sdev;
	return sroce_stats_init(sdev);
}

static void sroce_test_stats_free(struct kunit_resource *res)
{
	sroce_stats_cleanup(res->data);
}

/**
 * sroce_test_dev_init_stats() - give the fixture's device its counters
 * @test: the running test; the counters are freed with it
 * @t: a fixture set up by sroce_test_dev_init()
 *
 * For code that counts events (sroce_stats_inc()); every counter starts
 * at zero.
 *
 * Context: process context; asserts (ends the test) on allocation failure.
 */
void sroce_test_dev_init_stats(struct kunit *test, struct sroce_test_dev *t)
{
	KUNIT_ASSERT_NOT_NULL(test,
			      kunit_alloc_resource(test, sroce_test_stats_init,
						   sroce_test_stats_free,
						   GFP_KERNEL, t->sdev));
}

struct sroce_test_qp_ctx {
	struct sroce_test_dev *t;
	u32 nres;
};

/* A zeroed RC QP on @t's device and PD, or NULL. */
static struct sroce_qp *sroce_test_bare_qp(const struct sroce_test_dev *t)
{
	struct sroce_qp *qp = kzalloc(sizeof(*qp), GFP_KERNEL);

	if (!qp)
		return NULL;
	qp->ibqp.device = &t->sdev->ibdev;
	qp->ibqp.pd = t->pd;
	qp->ibqp.qp_type = IB_QPT_RC;
	sroce_route_init(&qp->route);
	return qp;
}

static int sroce_test_qp_init(struct kunit_resource *res, void *context)
{
	const struct sroce_test_qp_ctx *ctx = context;
	struct sroce_qp *qp;
	int err;

	qp = sroce_test_bare_qp(ctx->t);
	if (!qp)
		return -ENOMEM;
	skb_queue_head_init(&qp->resp.rxq);
	err = sroce_resp_res_init(&qp->resp.res, ctx->nres, GFP_KERNEL);
	if (err) {
		kfree(qp);
		return err;
	}
	res->data = qp;
	return 0;
}

static void sroce_test_qp_free(struct kunit_resource *res)
{
	struct sroce_qp *qp = res->data;

	skb_queue_purge(&qp->resp.rxq);
	sroce_resp_res_free(&qp->resp.res);
	kfree(qp);
}

/**
 * sroce_test_resp_qp() - a bare RC QP for the responder's queue rules
 * @test: the running test; the QP, its queued skbs and its resources
 *	are freed with it
 * @t: the fixture whose device and PD the QP is on
 * @nres: room for this many responder resources
 *
 * Only the responder's request queue and resource ring are set up, and
 * the device and PD pointers: enough for the code that marks queued
 * requests and goes back on a duplicate READ. There are no tasks,
 * timers, queues or CQs: nothing that would run an engine.
 *
 * Context: process context; asserts (ends the test) on allocation failure.
 * Return: the zeroed QP, ePSN 0.
 */
struct sroce_qp *sroce_test_resp_qp(struct kunit *test,
				    struct sroce_test_dev *t, u32 nres)
{
	struct sroce_test_qp_ctx ctx = { .t = t, .nres = nres };
	struct sroce_qp *qp;

	qp = kunit_alloc_resource(test, sroce_test_qp_init, sroce_test_qp_free,
				  GFP_KERNEL, &ctx);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	return qp;
}

/* The responder's init and its task, for sroce_test_serve_qp(). */
static int sroce_test_serve_init(struct kunit_resource *res, void *context)
{
	struct sroce_qp *qp;
	int err;

	qp = sroce_test_bare_qp(context);
	if (!qp)
		return -ENOMEM;
	spin_lock_init(&qp->state_lock);
	seqcount_spinlock_init(&qp->p_seq, &qp->state_lock);
	err = sroce_resp_init(qp);
	if (err) {
		kfree(qp);
		return err;
	}
	res->data = qp;
	return 0;
}

static void sroce_test_serve_free(struct kunit_resource *res)
{
	struct sroce_qp *qp = res->data;

	sroce_task_disable(&qp->resp.task);
	sroce_resp_cleanup(qp);
	sroce_route_flush(&qp->route);
	kfree(qp);
}

/**
 * sroce_test_serve_qp() - an RC QP whose responder can run
 * @test: the running test; the QP is cleaned up and freed with it
 * @t: the fixture whose device and PD the QP is on
 *
 * The responder is set up as create_qp sets it up (sroce_resp_init()):
 * its request queue, resource ring and task, which runs its work
 * function. There is no CQ, no receive queue and no requester, and the
 * QP is in RESET with no address until the test sets its parameters.
 *
 * Context: process context; asserts (ends the test) on allocation failure.
 * Return: the QP.
 */
struct sroce_qp *sroce_test_serve_qp(struct kunit *test,
				     struct sroce_test_dev *t)
{
	struct sroce_qp *qp;

	qp = kunit_alloc_resource(test, sroce_test_serve_init,
				  sroce_test_serve_free, GFP_KERNEL, t);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	return qp;
}

/**
 * sroce_test_parsed_skb() - a packet as the receive path's parsing leaves it
 * @test: the running test
 * @opcode: its BTH opcode, one sroce knows
 * @psn: its PSN
 *
 * No headers and no payload, only the parsed form in skb->cb: enough for
 * the code that queues, orders and answers packets by opcode and PSN.
 *
 * Context: process context; asserts on allocation failure.
 * Return: the skb, owned by the caller.
 */
struct sk_buff *sroce_test_parsed_skb(struct kunit *test, u8 opcode, u32 psn)
{
	const struct sroce_opcode_info *info = sroce_opcode_lookup(opcode);
	struct sroce_pkt *pkt;
	struct sk_buff *skb;

	KUNIT_ASSERT_NOT_NULL(test, info);
	skb = alloc_skb(0, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	pkt = sroce_skb_pkt(skb);
	memset(pkt, 0, sizeof(*pkt));
	pkt->info = info;
	pkt->opcode = opcode;
	pkt->psn = psn;
	return skb;
}

struct sroce_test_comp_ctx {
	struct sroce_test_dev *t;
	u32 nwqe;
	u32 sq_psn;
	u8 retry_cnt;
};

/* The requester of a test QP: nothing to send. */
static int sroce_test_req_idle(void *arg)
{
	return 0;
}

static int sroce_test_comp_init(struct kunit_resource *res, void *context)
{
	const struct sroce_test_comp_ctx *ctx = context;
	struct sroce_qp *qp;
	int err;

	qp = sroce_test_bare_qp(ctx->t);
	if (!qp)
		return -ENOMEM;
	spin_lock_init(&qp->state_lock);
	seqcount_spinlock_init(&qp->p_seq, &qp->state_lock);
	spin_lock_init(&qp->sq.lock);
	err = sroce_queue_init(&qp->sq.queue, SROCE_QUEUE_KERNEL, ctx->nwqe,
			       sroce_wqe_send_size(SROCE_TEST_SQ_SGES, 0));
	if (err)
		goto err_free_qp;
	qp->req.ctx = kcalloc(qp->sq.queue.index_mask + 1,
			      sizeof(*qp->req.ctx), GFP_KERNEL);
	if (!qp->req.ctx) {
		err = -ENOMEM;
		goto err_cleanup_queue;
	}
	qp->p.state = IB_QPS_RTS;
	qp->p.retry_cnt = ctx->retry_cnt;
	qp->p.rnr_retry = 7;
	qp->p.sq_psn = ctx->sq_psn;
	qp->req.psn = ctx->sq_psn;
	qp->req.sent_psn = ctx->sq_psn;
	sroce_task_init_exec(&qp->req.task, "test-req", sroce_test_req_idle,
			     qp, SROCE_TASK_WORKQUEUE);
	sroce_comp_init(qp);
	sroce_comp_start(qp, &qp->p);
	res->data = qp;
	return 0;

err_cleanup_queue:
	sroce_queue_cleanup(&qp->sq.queue);
err_free_qp:
	kfree(qp);
	return err;
}

static void sroce_test_comp_free(struct kunit_resource *res)
{
	struct sroce_qp *qp = res->data;

	sroce_task_disable(&qp->comp.task);
	sroce_task_disable(&qp->req.task);
	sroce_comp_stop(qp);
	sroce_comp_cleanup(qp);
	sroce_task_cleanup(&qp->req.task);
	kfree(qp->req.ctx);
	sroce_queue_cleanup(&qp->sq.queue);
	sroce_route_flush(&qp->route);
	kfree(qp);
}

/**
 * sroce_test_comp_qp() - a bare RC QP in RTS for the completer
 * @test: the running test; the QP is retired and freed with it
 * @t: the fixture whose device (with counters) and PD the QP is on
 * @nwqe: send queue slots at least
 * @sq_psn: the first PSN the requester uses
 * @retry_cnt: the QP's retry count
 *
 * The completer is set up as modify_qp to RTS leaves it; the local ACK
 * timeout is 0 (no timer). The requester's task runs a function that
 * does nothing: a test starts WQEs by filling &sroce_req.ctx and moving
 * the SQ's producer and head itself, and sees the rewinds the completer
 * asks for in &sroce_req.flags. There is no CQ: a test's WQEs must be
 * unsignaled and must not fail. A send slot holds SROCE_TEST_SQ_SGES
 * SGEs, for a test that has the requester gather from them.
 *
 * Context: process context; asserts (ends the test) on allocation failure.
 * Return: the QP.
 */
struct sroce_qp *sroce_test_comp_qp(struct kunit *test,
				    struct sroce_test_dev *t, u32 nwqe,
				    u32 sq_psn, u8 retry_cnt)
{
	struct sroce_test_comp_ctx ctx = {
		.t = t, .nwqe = nwqe, .sq_psn = sq_psn, .retry_cnt = retry_cnt,
	};
	struct sroce_qp *qp;

	qp = kunit_alloc_resource(test, sroce_test_comp_init,
				  sroce_test_comp_free, GFP_KERNEL, &ctx);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	return qp;
}

/**
 * sroce_test_claim_send() - the requester claims a SEND, sends nothing
 * @qp: a QP of sroce_test_comp_qp(), at its SQ head
 * @npkts: its packets, from the requester's next PSN on
 *
 * The unsignaled SEND of @npkts MTU-sized packets takes the next slot;
 * &sroce_req.sent_psn is left alone (a test moves it as it "sends").
 *
 * Context: process context.
 */
void sroce_test_claim_send(struct sroce_qp *qp, u32 npkts)
{
	struct sroce_send_ctx *ctx;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	ctx = &qp->req.ctx[qp->sq.queue.prod];
	memset(ctx, 0, sizeof(*ctx));
	ctx->wqe.opcode = IB_WR_SEND;
	ctx->wqe.length = npkts * 1024;
	ctx->first_psn = qp->req.psn;
	ctx->last_psn = sroce_psn_add(qp->req.psn, npkts - 1);
	ctx->mtu = 1024;
	qp->sq.queue.prod = sroce_ring_next(qp->sq.queue.prod,
					    qp->sq.queue.index_mask);
	qp->sq.head = qp->sq.queue.prod;
	qp->req.psn = sroce_psn_add(qp->req.psn, npkts);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/**
 * sroce_test_ack() - an ACKNOWLEDGE reaches the completer
 * @test: the running test
 * @qp: a QP of sroce_test_comp_qp()
 * @psn: its PSN
 * @type: its AETH syndrome type
 * @code: its AETH syndrome code (credits, RNR timer or NAK code)
 *
 * The packet takes the receive path's way in, sroce_comp_queue(), and
 * the completer runs until its queue is empty.
 *
 * Context: process context; asserts on allocation failure.
 */
void sroce_test_ack(struct kunit *test, struct sroce_qp *qp, u32 psn,
		    enum sroce_aeth_type type, u8 code)
{
	const struct sroce_opcode_info *info =
		sroce_opcode_lookup(IB_OPCODE_RC_ACKNOWLEDGE);
	struct sroce_pkt *pkt;
	struct sk_buff *skb;
	u32 hdr_len;

	KUNIT_ASSERT_NOT_NULL(test, info);
	hdr_len = sroce_opcode_hdr_len(info);
	skb = alloc_skb(hdr_len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_zero(skb, hdr_len);
	pkt = sroce_skb_pkt(skb);
	memset(pkt, 0, sizeof(*pkt));
	pkt->info = info;
	pkt->opcode = IB_OPCODE_RC_ACKNOWLEDGE;
	pkt->psn = psn;
	pkt->hdr_len = hdr_len;
	sroce_aeth_set_type(sroce_pkt_aeth(skb, pkt), type);
	sroce_aeth_set_code(sroce_pkt_aeth(skb, pkt), code);
	sroce_comp_queue(qp, skb);
	sroce_task_run(&qp->comp.task);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&qp->comp.rxq), 0);
}

/**
 * sroce_test_xmit_dev() - a fake device for building packets
 * @test: the running test; freed with it
 *
 * Only what sroce_xmit_alloc() reads is set: a netdev's link header
 * length, for the headroom.
 *
 * Return: the device; asserts (ends the test) on allocation failure.
 */
struct sroce_dev *sroce_test_xmit_dev(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	sdev->ndev = kunit_kzalloc(test, sizeof(*sdev->ndev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sdev->ndev);
	sdev->ndev->hard_header_len = ETH_HLEN;
	return sdev;
}

/**
 * sroce_test_loopback_av() - an address vector from a loopback address
 *	to itself
 * @av: filled in
 * @v6: ::1 rather than 127.0.0.1
 *
 * The kernel's route for it is a local one, and no sroce device owns its
 * address.
 */
void sroce_test_loopback_av(struct sroce_av *av, bool v6)
{
	memset(av, 0, sizeof(*av));
	av->hop_limit = 64;
	if (v6) {
		av->network_type = RDMA_NETWORK_IPV6;
		av->saddr.in6.sin6_family = AF_INET6;
		av->saddr.in6.sin6_addr = in6addr_loopback;
		av->daddr.in6 = av->saddr.in6;
	} else {
		av->network_type = RDMA_NETWORK_IPV4;
		av->saddr.in4.sin_family = AF_INET;
		av->saddr.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		av->daddr.in4 = av->saddr.in4;
	}
}
