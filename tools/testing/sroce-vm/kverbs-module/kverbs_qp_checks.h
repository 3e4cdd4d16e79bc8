/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce_vm_kverbs: the checks of QPs, their queues and fast registration
 * (kverbs_qp_checks.c). Each records its first difference in c->why.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_VM_KVERBS_QP_CHECKS_H
#define SROCE_VM_KVERBS_QP_CHECKS_H

struct kv_ctx;

/**
 * kv_check_rc_create() - an RC QP's capabilities, a refused transition,
 *	the way to RTS and the attributes it reports there
 * @c: the run
 */
void kv_check_rc_create(struct kv_ctx *c);

/**
 * kv_check_ud_create() - a UD QP's capabilities, a refused transition and
 *	the way to RTS
 * @c: the run
 */
void kv_check_ud_create(struct kv_ctx *c);

/**
 * kv_check_recv_flush() - receives flush in order on the move to ERR, and
 *	at once in ERR
 * @c: the run
 */
void kv_check_recv_flush(struct kv_ctx *c);

/**
 * kv_check_send_flush() - SENDs refused in INIT, outstanding in RTS and
 *	flushed in order on the move to ERR
 * @c: the run
 */
void kv_check_send_flush(struct kv_ctx *c);

/**
 * kv_check_sq_full() - one WR more than the send queue holds: -ENOMEM at
 *	exactly that WR
 * @c: the run
 */
void kv_check_sq_full(struct kv_ctx *c);

/**
 * kv_check_fast_reg() - REG_MR, LOCAL_INV, REG_MR again with the next key:
 *	all succeed
 * @c: the run
 */
void kv_check_fast_reg(struct kv_ctx *c);

/**
 * kv_check_fast_reg_pd() - REG_MR of another PD's MR: a local protection
 *	error, the QP in ERR and the SEND behind it flushed
 * @c: the run
 */
void kv_check_fast_reg_pd(struct kv_ctx *c);

#endif /* SROCE_VM_KVERBS_QP_CHECKS_H */
