// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fixtures of the rate limiter suite (rate_fix.h).
 *
 * The QP pair. Two RC QPs are made, moved to RTS and given their rate
 * limits by the driver's own verbs, on a test device that is never
 * registered. Only INIT to RTR is done by hand: an address vector comes
 * from a GID table entry (sroce_av_from_attr()), and a device that is
 * not registered has no GID table; the QP gets the parameters that
 * modify_qp would have stored, under the same locks.
 *
 * Their address is 127.0.0.1. The transmit path hands a packet for a
 * local address to the sroce device on the netdev that owns it, and no
 * sroce device owns lo: the packet is dropped, and counted in send_err.
 * The pair's "wire" is a kfree_skb probe that keeps a copy of each of
 * its QPs' packets as it is dropped; rate_pair_pump_until() hands the
 * copies to the test device's receive entry as the local hand-off would
 * (sroce_xmit_local_list()), from the test's thread. So a packet reaches
 * the other QP only when the test pumps, and nothing but the QP's own
 * engines and timers runs it in between.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <linux/xarray.h>
#include <trace/events/skb.h>

#include "core/sroce_dev.h"
#include "core/sroce_stats.h"
#include "core/sroce_task.h"
#include "obj/sroce_cq.h"
#include "rate_fix.h"
#include "test_util.h"
#include "transport/sroce_qp.h"
#include "transport/sroce_rate.h"
#include "transport/sroce_rcv.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_sport.h"

/* ---- engine tasks that note when they ran ------------------------------- */

static int rate_waiter_fn(void *arg)
{
	struct rate_waiter *w = arg;
	u64 now = ktime_get_ns();

	if (!atomic_read(&w->calls))
		w->first_ns = now;
	/* @first_ns before the count that says it is there */
	smp_mb__before_atomic();
	atomic_inc(&w->calls);
	wake_up(&w->called);
	return 0;
}

static int rate_waiter_init(struct kunit_resource *res, void *context)
{
	struct rate_waiter *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return -ENOMEM;
	init_waitqueue_head(&w->called);
	sroce_task_init(&w->task, "rate-test", rate_waiter_fn, w);
	res->data = w;
	return 0;
}

static void rate_waiter_free(struct kunit_resource *res)
{
	struct rate_waiter *w = res->data;

	sroce_task_disable(&w->task);
	sroce_task_cleanup(&w->task);
	kfree(w);
}

/**
 * rate_waiter_new() - an engine task for a bare gate
 * @test: the running test; the task is retired and freed with it
 *
 * Context: process context; asserts (ends the test) on failure.
 * Return: the task, idle; its function only counts and notes the time.
 */
struct rate_waiter *rate_waiter_new(struct kunit *test)
{
	struct rate_waiter *w;

	w = kunit_alloc_resource(test, rate_waiter_init, rate_waiter_free,
				 GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	return w;
}

/**
 * rate_waiter_wait() - wait for the first call of a waiter's function
 * @w: the waiter
 *
 * Return: true once it ran (&rate_waiter.first_ns may be read), false
 * after RATE_WAIT_MS.
 */
bool rate_waiter_wait(struct rate_waiter *w)
{
	bool ran;

	ran = wait_event_timeout(w->called, atomic_read(&w->calls),
				 msecs_to_jiffies(RATE_WAIT_MS)) > 0;
	smp_rmb();	/* pairs with rate_waiter_fn() */
	return ran;
}

/* ---- a bare gate -------------------------------------------------------- */

struct rate_gate_ctx {
	struct sroce_task *req;
	struct sroce_task *resp;
};

static int rate_gate_init(struct kunit_resource *res, void *context)
{
	const struct rate_gate_ctx *ctx = context;
	struct sroce_rate *rl = kzalloc(sizeof(*rl), GFP_KERNEL);

	if (!rl)
		return -ENOMEM;
	sroce_rate_init(rl, ctx->req, ctx->resp, 0);
	res->data = rl;
	return 0;
}

static void rate_gate_free(struct kunit_resource *res)
{
	struct sroce_rate *rl = res->data;

	sroce_rate_stop(rl);
	kfree(rl);
}

/**
 * rate_gate_new() - a gate, open, for two engine tasks
 * @test: the running test; the gate's timer is stopped and the gate
 *	freed with it, before tasks made earlier go
 * @req: the requester's task (NULL: the test never turns it away)
 * @resp: the responder's task (the same)
 *
 * Return: the gate; asserts (ends the test) on failure.
 */
struct sroce_rate *rate_gate_new(struct kunit *test, struct sroce_task *req,
				 struct sroce_task *resp)
{
	struct rate_gate_ctx ctx = { .req = req, .resp = resp };
	struct sroce_rate *rl;

	rl = kunit_alloc_resource(test, rate_gate_init, rate_gate_free,
				  GFP_KERNEL, &ctx);
	KUNIT_ASSERT_NOT_NULL(test, rl);
	return rl;
}

/**
 * rate_gate_owe() - put a limited gate with a full bucket in debt
 * @test: the running test
 * @rl: the gate, limited
 * @owed: bytes beyond the full bucket
 *
 * As an engine would: the gate lets a packet through, which costs the
 * bucket's 2 ms of bytes and @owed bytes more. The debt is @owed's time,
 * to within one byte's.
 */
void rate_gate_owe(struct kunit *test, struct sroce_rate *rl, u32 owed)
{
	u64 full = mul_u64_u64_div_u64(SROCE_RATE_BURST_NS,
				       sroce_rate_bps(rl), NSEC_PER_SEC);

	KUNIT_ASSERT_TRUE(test, sroce_rate_open(rl, SROCE_RATE_REQ));
	sroce_rate_charge(rl, SROCE_RATE_REQ, full + owed);
}

/**
 * rate_gate_paid_at() - when a gate's debt is paid
 * @rl: the gate
 *
 * The bucket's stamp plus its debt, without bringing the bucket up to
 * date: while it is in debt that sum stays the same however often it is
 * brought up to date, so this is the moment its timer may fire at the
 * earliest, whenever it is asked.
 *
 * Return: ktime_get_ns() time; the stamp when it is not in debt.
 */
u64 rate_gate_paid_at(struct sroce_rate *rl)
{
	unsigned long flags;
	u64 paid;

	spin_lock_irqsave(&rl->lock, flags);
	paid = rl->tb.stamp;
	if (rl->tb.credit < 0)
		paid += -rl->tb.credit;
	spin_unlock_irqrestore(&rl->lock, flags);
	return paid;
}

/**
 * rate_gate_waiting() - the engines a gate holds back, if it still does
 * @rl: the gate
 * @paid: rate_gate_paid_at() of its debt
 * @waiting: set to &sroce_rate.waiting
 *
 * Return: true if the debt was not paid yet when @waiting was read: its
 * timer cannot have run then, and @waiting is what the gate noted.
 */
bool rate_gate_waiting(struct sroce_rate *rl, u64 paid,
		       unsigned long *waiting)
{
	unsigned long flags;
	bool held;

	spin_lock_irqsave(&rl->lock, flags);
	*waiting = rl->waiting;
	held = ktime_get_ns() < paid;
	spin_unlock_irqrestore(&rl->lock, flags);
	return held;
}

/* ---- the QP pair -------------------------------------------------------- */

#define RATE_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)
#define RATE_QP_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)
#define RATE_PSN(side)	(0x100 + (side) * 0x10000)
#define RATE_RD_ATOMIC	4

/*
 * The kfree_skb probe: a packet of the pair's QPs, dropped with skb->data
 * at its IPv4 header, is copied onto the wire. Anything else dropped
 * meanwhile, anywhere, is not ours.
 */
static void rate_wire_catch(void *data, struct sk_buff *skb, void *location,
			    enum skb_drop_reason reason)
{
	u8 h[sizeof(struct iphdr) + sizeof(struct udphdr) + SROCE_BTH_LEN]
		__aligned(4);
	const struct iphdr *iph = (const void *)h;
	const struct udphdr *uh = (const void *)(iph + 1);
	const struct sroce_bth *bth = (const void *)(uh + 1);
	struct rate_pair *f = data;
	struct sk_buff *copy;
	u32 qpn;

	if (skb_copy_bits(skb, 0, h, sizeof(h)) || iph->version != 4 ||
	    iph->ihl != 5 || iph->protocol != IPPROTO_UDP ||
	    iph->saddr != htonl(INADDR_LOOPBACK) || iph->daddr != iph->saddr ||
	    uh->dest != htons(SROCE_UDP_PORT))
		return;
	qpn = sroce_bth_destqp(bth);
	if (qpn != f->qpn[RATE_A] && qpn != f->qpn[RATE_B])
		return;
	atomic_inc(&f->caught);
	copy = skb_copy(skb, GFP_ATOMIC);
	if (copy)
		skb_queue_tail(&f->wire, copy);
}

static int rate_pair_init(struct kunit_resource *res, void *context)
{
	struct rate_pair *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->test = context;
	skb_queue_head_init(&f->wire);
	res->data = f;
	return 0;
}

/* Undo rate_pair_new(), whatever part of it was done. */
static void rate_pair_free(struct kunit_resource *res)
{
	struct rate_pair *f = res->data;
	int i;

	if (f->watching) {
		unregister_trace_kfree_skb(rate_wire_catch, f);
		tracepoint_synchronize_unregister();
	}
	for (i = 0; i < 2; i++) {
		if (f->qp[i])
			sroce_destroy_qp(&f->qp[i]->ibqp, NULL);
		kfree(f->qp[i]);
	}
	skb_queue_purge(&f->wire);
	for (i = 0; i < 2; i++)
		if (f->mr_made[i])
			sroce_test_mr_destroy(f->test, &f->mr[i]);
	for (i = 0; i < 2; i++) {
		if (f->cq[i])
			sroce_destroy_cq(&f->cq[i]->ibcq, NULL);
		kfree(f->cq[i]);
	}
	if (f->t.sdev)
		xa_destroy(&f->t.sdev->qps);
	kfree(f);
}

/* What create_qp, create_cq and modify_qp read of a registered device. */
static void rate_dev_setup(struct kunit *test, struct sroce_dev *sdev)
{
	struct net_device *ndev = kunit_kzalloc(test, sizeof(*ndev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->hard_header_len = ETH_HLEN;	/* for the packets' headroom */
	sdev->ndev = ndev;
	sdev->attr.max_qp = SROCE_MAX_QP;
	sdev->attr.max_qp_wr = SROCE_MAX_QP_WR;
	sdev->attr.max_send_sge = SROCE_MAX_SGE;
	sdev->attr.max_recv_sge = SROCE_MAX_SGE;
	sdev->attr.max_cq = SROCE_MAX_CQ;
	sdev->attr.max_cqe = SROCE_MAX_CQE;
	sdev->attr.max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	sdev->attr.max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	sdev->port.active_mtu = IB_MTU_4096;
}

/* A CQ and an RC QP on it, as ib_core would allocate and create them. */
static void rate_pair_make_qp(struct kunit *test, struct rate_pair *f,
			      int side)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 8, .max_recv_wr = 8,
			.max_send_sge = 2, .max_recv_sge = 2,
		},
	};
	struct sroce_qp *qp;
	struct sroce_cq *cq;
	int err;

	cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &f->t.sdev->ibdev;
	err = sroce_create_cq(&cq->ibcq, &cq_attr, NULL);
	if (err)
		kfree(cq);
	KUNIT_ASSERT_EQ(test, err, 0);
	f->cq[side] = cq;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.device = &f->t.sdev->ibdev;
	qp->ibqp.pd = f->t.pd;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.send_cq = &cq->ibcq;
	qp->ibqp.recv_cq = &cq->ibcq;
	init.send_cq = &cq->ibcq;
	init.recv_cq = &cq->ibcq;
	err = sroce_create_qp(&qp->ibqp, &init, NULL);
	if (err)
		kfree(qp);
	KUNIT_ASSERT_EQ(test, err, 0);
	f->qp[side] = qp;
	f->qpn[side] = qp->ibqp.qp_num;
}

/* INIT to RTR as modify_qp stores it: 127.0.0.1, the peer, MTU 4096. */
static void rate_pair_rtr(struct rate_pair *f, int side)
{
	struct sroce_qp *qp = f->qp[side];
	struct sroce_qp_params *p = &qp->p;
	unsigned long flags;

	mutex_lock(&qp->modify_mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	write_seqcount_begin(&qp->p_seq);
	sroce_test_loopback_av(&p->av, false);
	p->av_gen++;
	p->has_av = true;
	p->path_mtu = IB_MTU_4096;
	p->dest_qpn = f->qpn[!side];
	p->sport = sroce_sport_connected(p->av.flow_label, qp->ibqp.qp_num,
					 p->dest_qpn);
	p->rq_psn = RATE_PSN(!side);
	WRITE_ONCE(qp->resp.psn, p->rq_psn);
	p->max_dest_rd_atomic = RATE_RD_ATOMIC;
	p->min_rnr_timer = 1;
	p->state = IB_QPS_RTR;
	write_seqcount_end(&qp->p_seq);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	mutex_unlock(&qp->modify_mutex);
}

/* RESET to RTS; no local ACK timeout, so nothing is ever sent again. */
static void rate_pair_connect(struct kunit *test, struct rate_pair *f,
			      int side)
{
	struct ib_qp *ibqp = &f->qp[side]->ibqp;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = RATE_QP_ACCESS,
	};

	KUNIT_ASSERT_EQ(test, sroce_modify_qp(ibqp, &attr, IB_QP_STATE |
					      IB_QP_PKEY_INDEX | IB_QP_PORT |
					      IB_QP_ACCESS_FLAGS, NULL), 0);
	rate_pair_rtr(f, side);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = RATE_PSN(side);
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = RATE_RD_ATOMIC;
	KUNIT_ASSERT_EQ(test, sroce_modify_qp(ibqp, &attr, IB_QP_STATE |
					      IB_QP_SQ_PSN | IB_QP_TIMEOUT |
					      IB_QP_RETRY_CNT |
					      IB_QP_RNR_RETRY |
					      IB_QP_MAX_QP_RD_ATOMIC, NULL), 0);
}

/**
 * rate_pair_new() - two connected RC QPs in RTS, unlimited
 * @test: the running test; everything is destroyed and freed with it
 *
 * Context: process context; asserts (ends the test) on failure.
 * Return: the pair; its MRs hold SROCE_TEST_SENTINEL.
 */
struct rate_pair *rate_pair_new(struct kunit *test)
{
	struct sroce_test_dev t;
	struct rate_pair *f;
	int i;

	/* before the pair: freed after it, when no QP counts any more */
	sroce_test_dev_init(test, &t);
	sroce_test_dev_init_stats(test, &t);
	rate_dev_setup(test, t.sdev);
	f = kunit_alloc_resource(test, rate_pair_init, rate_pair_free,
				 GFP_KERNEL, test);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->t = t;
	xa_init_flags(&t.sdev->qps, XA_FLAGS_ALLOC);

	sroce_test_mr_create_slab(test, t.pd, &f->mr[RATE_A], RATE_MR_SIZE,
				  RATE_ACCESS);
	f->mr_made[RATE_A] = true;
	sroce_test_mr_create(test, t.pd, &f->mr[RATE_B], RATE_MR_SIZE,
			     RATE_ACCESS);
	f->mr_made[RATE_B] = true;
	for (i = 0; i < 2; i++)
		rate_pair_make_qp(test, f, i);
	for (i = 0; i < 2; i++)
		rate_pair_connect(test, f, i);
	KUNIT_ASSERT_EQ(test, register_trace_kfree_skb(rate_wire_catch, f), 0);
	f->watching = true;
	return f;
}

/**
 * rate_pair_limit() - IB_QP_RATE_LIMIT through modify_qp, in place
 * @test: the running test
 * @f: the pair
 * @side: which QP
 * @kbps: the limit; 0: none
 *
 * query_qp reports it back, the QP stays in RTS and its gate lets
 * @kbps * 125 bytes a second through.
 */
void rate_pair_limit(struct kunit *test, struct rate_pair *f, int side,
		     u32 kbps)
{
	struct ib_qp *ibqp = &f->qp[side]->ibqp;
	struct ib_qp_attr attr = { .rate_limit = kbps };
	struct ib_qp_init_attr init;

	KUNIT_ASSERT_EQ(test, sroce_modify_qp(ibqp, &attr, IB_QP_RATE_LIMIT,
					      NULL), 0);
	memset(&attr, 0xff, sizeof(attr));
	KUNIT_ASSERT_EQ(test, sroce_query_qp(ibqp, &attr, IB_QP_RATE_LIMIT,
					     &init), 0);
	KUNIT_EXPECT_EQ(test, attr.rate_limit, kbps);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, sroce_rate_bps(&f->qp[side]->rate),
			(u64)kbps * 125);
}

/**
 * rate_pair_throttle() - hold a QP back for 10 s
 * @test: the running test
 * @f: the pair
 * @side: which QP; nothing is posted to it yet
 *
 * Its limit becomes RATE_SLOW_KBPS, and its gate owes RATE_OWED bytes:
 * the next packet it is asked for is turned away.
 */
void rate_pair_throttle(struct kunit *test, struct rate_pair *f, int side)
{
	struct sroce_rate *rl = &f->qp[side]->rate;

	rate_pair_limit(test, f, side, RATE_SLOW_KBPS);
	rate_gate_owe(test, rl, RATE_OWED);
	f->closed0[side] = READ_ONCE(rl->closed);
	KUNIT_ASSERT_GT(test, rate_gate_paid_at(rl),
			ktime_get_ns() + 5 * NSEC_PER_SEC);
}

/**
 * rate_pair_release() - raise a throttled QP's limit to RATE_FAST_KBPS
 * @test: the running test
 * @f: the pair
 * @side: which QP
 *
 * The bytes it owes take at most 100 ms at the new rate; modify_qp has
 * only moved the gate's timer, and the timer frees the QP.
 */
void rate_pair_release(struct kunit *test, struct rate_pair *f, int side)
{
	struct sroce_rate *rl = &f->qp[side]->rate;
	unsigned long flags;
	s64 credit;

	rate_pair_limit(test, f, side, RATE_FAST_KBPS);
	spin_lock_irqsave(&rl->lock, flags);
	credit = rl->tb.credit;
	spin_unlock_irqrestore(&rl->lock, flags);
	KUNIT_EXPECT_GE(test, credit, -100LL * NSEC_PER_MSEC);
}

/**
 * rate_pair_snap() - what a pair has sent so far
 * @f: the pair
 * @s: filled in
 */
void rate_pair_snap(struct rate_pair *f, struct rate_snap *s)
{
	s->sent = sroce_stats_read(f->t.sdev, SROCE_CNT_SENT_PKTS) +
		  sroce_stats_read(f->t.sdev, SROCE_CNT_SEND_ERR);
	s->caught = atomic_read(&f->caught);
}

/**
 * rate_pair_turned_away() - has a QP's gate turned an engine away since
 *	rate_pair_throttle()?
 * @f: the pair
 * @side: which QP
 *
 * Return: true if it has.
 */
bool rate_pair_turned_away(struct rate_pair *f, int side)
{
	return READ_ONCE(f->qp[side]->rate.closed) > f->closed0[side];
}

/**
 * rate_pair_completed() - has a QP's CQ a completion?
 * @f: the pair
 * @side: which QP
 *
 * Return: true once one was polled into &rate_pair.wc[@side].
 */
bool rate_pair_completed(struct rate_pair *f, int side)
{
	if (!f->have_wc[side])
		f->have_wc[side] = sroce_poll_cq(&f->cq[side]->ibcq, 1,
						 &f->wc[side]) == 1;
	return f->have_wc[side];
}

/* Hand every packet on the wire to the device, as sroce_xmit_local_list(). */
static void rate_wire_pump(struct rate_pair *f)
{
	struct sk_buff *skb;
	bool entered;

	while ((skb = skb_dequeue(&f->wire))) {
		__skb_pull(skb, skb_transport_offset(skb));
		entered = sroce_task_local_enter();
		if (sroce_rcv_skb(f->t.sdev, skb, true))
			kfree_skb(skb);
		sroce_task_local_exit(entered);
	}
}

/**
 * rate_pair_pump_until() - carry packets until something happened
 * @f: the pair
 * @done: what; called after each round of deliveries
 * @side: its argument
 *
 * Context: process context; sleeps.
 * Return: true when @done said so, false after RATE_WAIT_MS.
 */
bool rate_pair_pump_until(struct rate_pair *f,
			  bool (*done)(struct rate_pair *f, int side),
			  int side)
{
	unsigned long end = jiffies + msecs_to_jiffies(RATE_WAIT_MS);

	for (;;) {
		rate_wire_pump(f);
		if (done(f, side))
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(200, 500);
	}
}

/**
 * rate_pair_expect_held() - a QP turned away stays held back
 * @test: the running test
 * @f: the pair
 * @side: the QP, turned away once since rate_pair_throttle()
 * @s: what the pair had sent when it was
 *
 * For RATE_QUIET_MS, with the wire carried: no packet leaves, neither QP
 * completes anything, the gate turned the QP away once (it does not ask
 * again until its timer says) and is still in debt.
 */
void rate_pair_expect_held(struct kunit *test, struct rate_pair *f, int side,
			   const struct rate_snap *s)
{
	struct sroce_rate *rl = &f->qp[side]->rate;
	struct rate_snap now;
	u64 closed;

	msleep(RATE_QUIET_MS);
	rate_wire_pump(f);
	rate_pair_snap(f, &now);
	KUNIT_EXPECT_EQ(test, now.caught, s->caught);
	KUNIT_EXPECT_EQ(test, now.sent, s->sent);
	KUNIT_EXPECT_FALSE(test, rate_pair_completed(f, RATE_A));
	KUNIT_EXPECT_FALSE(test, rate_pair_completed(f, RATE_B));
	closed = READ_ONCE(rl->closed);
	KUNIT_EXPECT_EQ(test, closed, f->closed0[side] + 1);
	KUNIT_EXPECT_GT(test, rate_gate_paid_at(rl), ktime_get_ns());
	KUNIT_EXPECT_EQ(test, sroce_qp_state(f->qp[side]), IB_QPS_RTS);
}

/* ---- the pair's memory -------------------------------------------------- */

/* Byte @i of a test message @msg. */
static u8 rate_pattern(u8 msg, u32 i)
{
	return (u8)(i * 7 + 3 + msg * 41);
}

/**
 * rate_mr_at() - where a byte of a QP's MR is
 * @f: the pair
 * @side: whose MR
 * @off: the byte's offset in it, below RATE_MR_SIZE
 *
 * Return: its kernel address.
 */
u8 *rate_mr_at(struct rate_pair *f, int side, u32 off)
{
	return (u8 *)page_address(f->mr[side].page[off / PAGE_SIZE]) +
	       off % PAGE_SIZE;
}

/**
 * rate_mr_fill() - write test message @msg into a QP's MR
 * @f: the pair
 * @side: whose MR
 * @off: where in it
 * @len: bytes
 * @msg: the message's pattern seed
 */
void rate_mr_fill(struct rate_pair *f, int side, u32 off, u32 len, u8 msg)
{
	u32 i;

	for (i = 0; i < len; i++)
		*rate_mr_at(f, side, off + i) = rate_pattern(msg, i);
}

/**
 * rate_mr_first_wrong() - the first byte of a QP's MR not as expected
 * @f: the pair
 * @side: whose MR
 * @off: where in it
 * @len: bytes
 * @msg: test message @msg's bytes are expected; -1: SROCE_TEST_SENTINEL
 *
 * Return: its index from @off, or @len when all are right.
 */
u32 rate_mr_first_wrong(struct rate_pair *f, int side, u32 off, u32 len,
			int msg)
{
	u8 want;
	u32 i;

	for (i = 0; i < len; i++) {
		want = msg < 0 ? SROCE_TEST_SENTINEL : rate_pattern(msg, i);
		if (*rate_mr_at(f, side, off + i) != want)
			break;
	}
	return i;
}

/**
 * rate_mr_iova() - the address the verbs use for a byte of a QP's MR
 * @f: the pair
 * @side: whose MR
 * @off: the byte's offset in it
 *
 * Return: the MR's iova plus @off.
 */
u64 rate_mr_iova(struct rate_pair *f, int side, u32 off)
{
	return f->mr[side].ibmr->iova + off;
}
