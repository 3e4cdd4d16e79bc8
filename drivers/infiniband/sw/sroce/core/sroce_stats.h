/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device counters, reported as the port's hardware counters ("rdma
 * statistic show", /sys/class/infiniband/DEV/ports/1/hw_counters).
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_STATS_H
#define SROCE_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"

/*
 * The counters. The first fifteen have the names and the order of
 * rdma_rxe's, so that tools written for rxe read the same thing; the
 * rest are sroce's own. Their names are user-visible: only append.
 */
enum sroce_counter {
	SROCE_CNT_SENT_PKTS,		/* RoCEv2 packets sent */
	SROCE_CNT_RCVD_PKTS,		/* packets that passed validation */
	SROCE_CNT_DUP_REQ,		/* duplicate requests (responder) */
	SROCE_CNT_OUT_OF_SEQ_REQ,	/* requests with a PSN ahead */
	SROCE_CNT_RCVD_RNR,		/* RNR NAKs received */
	SROCE_CNT_SENT_RNR,		/* RNR NAKs sent */
	SROCE_CNT_RCVD_SEQ_ERR,		/* PSN sequence error NAKs received */
	SROCE_CNT_ACK_DEFERRED,		/* ACKs left for the completer */
	SROCE_CNT_RETRY_EXCEEDED,	/* transport retries exhausted */
	SROCE_CNT_RNR_RETRY_EXCEEDED,	/* RNR retries exhausted */
	SROCE_CNT_COMPLETER_RETRY,	/* retransmissions started */
	SROCE_CNT_SEND_ERR,		/* packets the netdev refused */
	SROCE_CNT_LINK_DOWNED,		/* port went down */
	SROCE_CNT_RDMA_SENDS,		/* RDMA READ and atomic requests sent */
	SROCE_CNT_RDMA_RECVS,		/* RDMA READ requests admitted */
	SROCE_CNT_ICRC_ERR,		/* SROCE_DROP_ICRC */
	SROCE_CNT_MALFORMED,		/* other malformed packets */
	SROCE_CNT_CNP_RCVD,		/* RoCEv2 CNPs received */
	SROCE_CNT_PKEY_VIOLATIONS,	/* SROCE_DROP_PKEY */
	SROCE_CNT_QKEY_VIOLATIONS,	/* SROCE_DROP_QKEY */
	SROCE_CNT_DROPPED_NO_QP,	/* SROCE_DROP_NO_QP */
	SROCE_CNT_DROPPED_QP_STATE,	/* SROCE_DROP_QP_STATE */
	SROCE_CNT_DROPPED_ADDR,		/* SROCE_DROP_ADDR */
	SROCE_CNT_DROPPED_NOMEM,	/* SROCE_DROP_NOMEM */
	SROCE_CNT_SENT_BYTES,		/* UDP payload bytes of sent_pkts */
	SROCE_CNT_RCVD_BYTES,		/* UDP payload bytes of rcvd_pkts */
	SROCE_CNT_SENT_SEQ_NAK,		/* PSN sequence error NAKs sent */
	SROCE_CNT_READ_ABANDONED,	/* READ responses a duplicate cut short */
	SROCE_CNT_DROPPED_UC_MSG,	/* UC messages lost (sroce_resp_uc.c) */
	SROCE_CNT_DROPPED_UD_MSG,	/* datagrams without a fitting WQE */
	SROCE_CNT_DROPPED_BACKLOG,	/* packets a QP's full inbox refused */
	SROCE_CNT_DROPPED_UNSENT,	/* responses to PSNs never sent */
	SROCE_CNT_SENT_GSO,		/* trains sent as one skb (sroce_train.c) */
	SROCE_CNT_SENT_LENT,		/* requests carrying lent MR pages */
	SROCE_CNT_SENT_SPAN,		/* packets spanning PSNs, same host */
	SROCE_CNT_ECN_MARKED,		/* packets received marked CE */
	SROCE_CNT_CNP_SENT,		/* CNPs sent (notification point) */
	SROCE_CNT_CNP_HANDLED,		/* CNPs a QP's reaction point took */
	SROCE_CNT_RP_DECREASES,		/* rate cuts of the reaction points */
	SROCE_CNT_NR
};

/**
 * struct sroce_stats - one CPU's share of a device's counters
 * @cnt: the counters, indexed by enum sroce_counter
 */
struct sroce_stats {
	u64 cnt[SROCE_CNT_NR];
};

int sroce_stats_init(struct sroce_dev *sdev);
void sroce_stats_cleanup(struct sroce_dev *sdev);
u64 sroce_stats_read(struct sroce_dev *sdev, enum sroce_counter c);
const char *sroce_counter_name(enum sroce_counter c);

/**
 * sroce_stats_add() - add to a device counter
 * @sdev: the device; its counters must be allocated (sroce_stats_init())
 * @c: the counter
 * @n: the amount
 *
 * Context: any, including hard interrupts; this_cpu_add() is atomic with
 * respect to the local CPU.
 */
static inline void sroce_stats_add(struct sroce_dev *sdev,
				   enum sroce_counter c, u64 n)
{
	this_cpu_add(sdev->stats->cnt[c], n);
}

/**
 * sroce_stats_inc() - count one event
 * @sdev: the device
 * @c: the counter
 *
 * Context: any, as sroce_stats_add().
 */
static inline void sroce_stats_inc(struct sroce_dev *sdev,
				   enum sroce_counter c)
{
	this_cpu_inc(sdev->stats->cnt[c]);
}

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index);

extern const struct ib_device_ops sroce_stats_verbs;

#endif /* SROCE_STATS_H */
