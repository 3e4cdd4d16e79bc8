// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device counters.
 *
 * Each CPU bumps its own copy of the counters, so that the data path
 * never shares a cache line for them; a reader sums the copies. The sum
 * is not a snapshot: counters move while it is taken, and on 32-bit
 * machines a 64-bit addend may be read half updated. Both are fine for
 * statistics.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#include "core/sroce_dev.h"
#include "core/sroce_port.h"
#include "core/sroce_stats.h"

static const struct rdma_stat_desc sroce_stat_descs[] = {
	[SROCE_CNT_SENT_PKTS] = { .name = "sent_pkts" },
	[SROCE_CNT_RCVD_PKTS] = { .name = "rcvd_pkts" },
	[SROCE_CNT_DUP_REQ] = { .name = "duplicate_request" },
	[SROCE_CNT_OUT_OF_SEQ_REQ] = { .name = "out_of_seq_request" },
	[SROCE_CNT_RCVD_RNR] = { .name = "rcvd_rnr_err" },
	[SROCE_CNT_SENT_RNR] = { .name = "send_rnr_err" },
	[SROCE_CNT_RCVD_SEQ_ERR] = { .name = "rcvd_seq_err" },
	[SROCE_CNT_ACK_DEFERRED] = { .name = "ack_deferred" },
	[SROCE_CNT_RETRY_EXCEEDED] = { .name = "retry_exceeded_err" },
	[SROCE_CNT_RNR_RETRY_EXCEEDED] = { .name = "retry_rnr_exceeded_err" },
	[SROCE_CNT_COMPLETER_RETRY] = { .name = "completer_retry_err" },
	[SROCE_CNT_SEND_ERR] = { .name = "send_err" },
	[SROCE_CNT_LINK_DOWNED] = { .name = "link_downed" },
	[SROCE_CNT_RDMA_SENDS] = { .name = "rdma_sends" },
	[SROCE_CNT_RDMA_RECVS] = { .name = "rdma_recvs" },
	[SROCE_CNT_ICRC_ERR] = { .name = "icrc_err" },
	[SROCE_CNT_MALFORMED] = { .name = "malformed_pkts" },
	[SROCE_CNT_CNP_RCVD] = { .name = "cnp_rcvd" },
	[SROCE_CNT_PKEY_VIOLATIONS] = { .name = "pkey_violations" },
	[SROCE_CNT_QKEY_VIOLATIONS] = { .name = "qkey_violations" },
	[SROCE_CNT_DROPPED_NO_QP] = { .name = "dropped_no_qp" },
	[SROCE_CNT_DROPPED_QP_STATE] = { .name = "dropped_qp_state" },
	[SROCE_CNT_DROPPED_ADDR] = { .name = "dropped_addr" },
	[SROCE_CNT_DROPPED_NOMEM] = { .name = "dropped_nomem" },
	[SROCE_CNT_SENT_BYTES] = { .name = "sent_bytes" },
	[SROCE_CNT_RCVD_BYTES] = { .name = "rcvd_bytes" },
	[SROCE_CNT_SENT_SEQ_NAK] = { .name = "send_seq_err" },
	[SROCE_CNT_READ_ABANDONED] = { .name = "read_resp_abandoned" },
	[SROCE_CNT_DROPPED_UC_MSG] = { .name = "dropped_uc_msg" },
	[SROCE_CNT_DROPPED_UD_MSG] = { .name = "dropped_ud_msg" },
	[SROCE_CNT_DROPPED_BACKLOG] = { .name = "dropped_backlog" },
	[SROCE_CNT_DROPPED_UNSENT] = { .name = "dropped_unsent_psn" },
	[SROCE_CNT_SENT_GSO] = { .name = "sent_gso" },
	[SROCE_CNT_SENT_LENT] = { .name = "sent_lent" },
	[SROCE_CNT_SENT_SPAN] = { .name = "sent_span" },
	[SROCE_CNT_ECN_MARKED] = { .name = "ecn_marked_rcvd" },
	[SROCE_CNT_CNP_SENT] = { .name = "cnp_sent" },
	[SROCE_CNT_CNP_HANDLED] = { .name = "cnp_handled" },
	[SROCE_CNT_RP_DECREASES] = { .name = "rp_rate_decreases" },
};

static_assert(ARRAY_SIZE(sroce_stat_descs) == SROCE_CNT_NR);

/**
 * sroce_stats_init() - allocate a device's counters, all zero
 * @sdev: the device, not yet registered
 *
 * Context: process context, may sleep.
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_stats_init(struct sroce_dev *sdev)
{
	sdev->stats = alloc_percpu(struct sroce_stats);
	return sdev->stats ? 0 : -ENOMEM;
}

/**
 * sroce_stats_cleanup() - free a device's counters
 * @sdev: the device; nothing may count or read any more
 *
 * Safe on a device whose counters were never allocated.
 */
void sroce_stats_cleanup(struct sroce_dev *sdev)
{
	free_percpu(sdev->stats);
	sdev->stats = NULL;
}

/**
 * sroce_stats_read() - the current value of a device counter
 * @sdev: the device
 * @c: the counter
 *
 * Context: any.
 *
 * Return: the sum of every possible CPU's share of @c.
 */
u64 sroce_stats_read(struct sroce_dev *sdev, enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->stats, cpu)->cnt[c]);
	return sum;
}

/**
 * sroce_counter_name() - the user-visible name of a counter
 * @c: the counter
 *
 * Return: the name "rdma statistic show" prints, or NULL for an invalid @c.
 */
const char *sroce_counter_name(enum sroce_counter c)
{
	return (unsigned int)c < SROCE_CNT_NR ? sroce_stat_descs[c].name : NULL;
}

/**
 * sroce_alloc_hw_port_stats() - ib_device_ops.alloc_hw_port_stats
 * @ibdev: the device
 * @port_num: the port; sroce has only port 1
 *
 * Context: process context, may sleep.
 *
 * Return: a struct rdma_hw_stats for every sroce counter, which ib_core
 * owns and frees, or NULL.
 */
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port_num)
{
	if (port_num != SROCE_PORT_NUM)
		return NULL;
	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_CNT_NR,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * sroce_get_hw_stats() - ib_device_ops.get_hw_stats
 * @ibdev: the device
 * @stats: what sroce_alloc_hw_port_stats() returned; ib_core holds its
 *	lock
 * @port_num: the port
 * @index: the counter ib_core wants; all are refreshed anyway
 *
 * Context: process context.
 *
 * Return: the number of counters refreshed, or -EINVAL.
 */
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port_num, int index)
{
	struct sroce_dev *sdev = to_sroce_dev(ibdev);
	int c;

	if (port_num != SROCE_PORT_NUM || stats->num_counters != SROCE_CNT_NR)
		return -EINVAL;

	for (c = 0; c < SROCE_CNT_NR; c++)
		stats->value[c] = sroce_stats_read(sdev, c);
	return SROCE_CNT_NR;
}

/* The verbs on the port's counters, registered by sroce_verbs.c. */
const struct ib_device_ops sroce_stats_verbs = {
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,
};
