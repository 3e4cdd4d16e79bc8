/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control fixtures: the ConnectX-4 Lx CNP capture, RoCEv2
 * packets as the UDP socket hands them to the receive path, and an RC or
 * UD QP in the device's QPN index whose packets leave through a route of
 * the test's own.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TEST_CC_FIX_H
#define SROCE_TEST_CC_FIX_H

#include <kunit/test.h>
#include <linux/if_ether.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_stats.h"
#include "net/sroce_xmit.h"
#include "obj/sroce_ah.h"
#include "wire/sroce_pkt.h"

struct dst_entry;
struct sroce_dev;
struct sroce_qp;
struct sroce_tfix;

/* The capture (icrc_reference.py): a CNP from 10.0.17.1 to 10.0.18.1. */
#define CCFIX_CX_FRAME_LEN	74
#define CCFIX_CX_IP		(sroce_ccfix_cx_frame + ETH_HLEN)
#define CCFIX_CX_LEN		(CCFIX_CX_FRAME_LEN - ETH_HLEN)	/* 60 */
#define CCFIX_CX_BTH		28	/* IPv4 and UDP headers */
#define CCFIX_CX_QPN		0x000118
#define CCFIX_CX_SRC		0x0a001101
#define CCFIX_CX_DST		0x0a001201

extern const u8 sroce_ccfix_cx_frame[CCFIX_CX_FRAME_LEN];

/* The fixture QP: the capture's receiver, its peer the capture's sender. */
#define CCFIX_QPN		CCFIX_CX_QPN
#define CCFIX_US		CCFIX_CX_DST
#define CCFIX_PEER		CCFIX_CX_SRC
#define CCFIX_STRANGER		0x0a001109	/* 10.0.17.9 */
/* rp_time_reset_us and rp_alpha_period_us of the fixture: 1 s */
#define CCFIX_LONG_US		1000000
#define CCFIX_WIRE_MAX		128

/**
 * struct sroce_ccfix_wire - the packets the fixture QP sent
 * @n: how many
 * @len: the last one's length, from its IP header on
 * @bytes: its first CCFIX_WIRE_MAX bytes
 */
struct sroce_ccfix_wire {
	unsigned int n;
	unsigned int len;
	u8 bytes[CCFIX_WIRE_MAX];
};

/**
 * struct sroce_ccfix - a QP in RTS at 10.0.18.1, its peer 10.0.17.1
 * @f: the QP's fixture (resp_fix.h): tasks that do nothing
 * @sdev: its device: default congestion control parameters but for the
 *	reaction point's timers, CCFIX_LONG_US
 * @qp: the QP, number CCFIX_QPN, in the device's QPN index, the peer's
 *	QPN CCFIX_QPN too; its gate and reaction point are set up
 * @in: the address vector of the peer's packets to the QP
 * @dst: the QP's route: it leaves the host, and what it sends is
 *	recorded in @wire instead
 * @wire: what the QP sent
 */
struct sroce_ccfix {
	struct sroce_tfix *f;
	struct sroce_dev *sdev;
	struct sroce_qp *qp;
	struct sroce_av in;
	struct dst_entry *dst;
	struct sroce_ccfix_wire wire;
};

/* CNPs from the fixture QP's peer (sroce_ccfix_cnp_rx()). */
enum sroce_ccfix_cnp {
	CCFIX_CNP,		/* from the peer */
	CCFIX_CNP_CAPTURE,	/* the capture */
	CCFIX_CNP_LOCAL,	/* handed over by this host: no ICRC */
	CCFIX_CNP_STRANGER,	/* from CCFIX_STRANGER */
	CCFIX_CNP_LONG,		/* 4 bytes more */
	CCFIX_CNP_SHORT,	/* 4 bytes less */
	CCFIX_CNP_BAD_ICRC,	/* a reserved byte changed after the ICRC */
	CCFIX_CNP_CAPTURE_FLIP,	/* the capture, a reserved bit flipped */
	CCFIX_CNP_NO_QP,	/* to the next QPN, which has no QP */
};

void sroce_ccfix_av(struct sroce_av *av, bool v6, u32 src, u32 dst);
struct sk_buff *sroce_ccfix_cnp_skb(struct kunit *test, struct sroce_dev *sdev,
				    const struct sroce_av *av, u32 qpn,
				    unsigned int len, enum sroce_xmit_how how);
struct sk_buff *sroce_ccfix_req_skb(struct kunit *test, struct sroce_dev *sdev,
				    const struct sroce_av *av, u8 opcode,
				    u32 qpn);
struct sk_buff *sroce_ccfix_ip_skb(struct kunit *test, const u8 *ip,
				   unsigned int len, int flip);
int sroce_ccfix_parse(struct sk_buff *skb, enum sroce_drop_reason *why);
struct sroce_ccfix *sroce_ccfix_init(struct kunit *test, enum ib_qp_type type,
				     bool v6);
u64 sroce_ccfix_count(struct sroce_ccfix *x, enum sroce_counter c);
void sroce_ccfix_req_rx(struct kunit *test, struct sroce_ccfix *x, u8 ecn,
			u32 src);
void sroce_ccfix_cnp_rx(struct kunit *test, struct sroce_ccfix *x,
			enum sroce_ccfix_cnp kind);

#endif /* SROCE_TEST_CC_FIX_H */
