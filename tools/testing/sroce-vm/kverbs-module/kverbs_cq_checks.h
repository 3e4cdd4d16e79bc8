/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce_vm_kverbs: the checks of CQs, SRQs, AHs and UD sends
 * (kverbs_cq_checks.c). Each records its first difference in c->why.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_VM_KVERBS_CQ_CHECKS_H
#define SROCE_VM_KVERBS_CQ_CHECKS_H

struct kv_ctx;

/**
 * kv_check_cq_notify() - CQ arming: one handler call per arm,
 *	IB_CQ_REPORT_MISSED_EVENTS, a solicited arm
 * @c: the run
 */
void kv_check_cq_notify(struct kv_ctx *c);

/**
 * kv_check_cq_overflow() - more flushed receives than the CQ holds:
 *	IB_EVENT_CQ_ERR, once
 * @c: the run
 */
void kv_check_cq_overflow(struct kv_ctx *c);

/**
 * kv_check_srq() - a full SRQ, resizes (refused, and one that keeps the
 *	WQEs), the limit, and LAST_WQE_REACHED of a QP using it
 * @c: the run
 */
void kv_check_srq(struct kv_ctx *c);

/**
 * kv_check_ah_atomic() - rdma_create_ah() and rdma_destroy_ah() without
 *	sleeping, under a spinlock
 * @c: the run
 */
void kv_check_ah_atomic(struct kv_ctx *c);

/**
 * kv_check_ud_send() - a UD SEND through an AH completes in RTS and
 *	flushes in ERR; without an AH it is refused
 * @c: the run
 */
void kv_check_ud_send(struct kv_ctx *c);

#endif /* SROCE_VM_KVERBS_CQ_CHECKS_H */
