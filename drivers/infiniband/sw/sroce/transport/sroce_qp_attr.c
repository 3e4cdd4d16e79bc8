// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce QP state transitions and modify_qp attribute checks: the IBA
 * "QP State Transition Properties" table (vol 1, 10.3 and 11.2.5) and the
 * range checks on the values a modify_qp hands in. Pure functions; the
 * QP code calls them with its own state lock held.
 *
 * Copyright (c) 2026 The sroce authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/errno.h>
#include <rdma/ib_verbs.h>

#include "transport/sroce_qp_attr.h"
#include "wire/sroce_hdr.h"
#include "wire/sroce_psn.h"

/*
 * The transport classes of the spec's table. QP1 (GSI) is UD, but its
 * port is fixed when it is created, so IB_QP_PORT is not an attribute of
 * its RESET->INIT and INIT->INIT transitions. QP0 (SMI) behaves the same;
 * sroce never creates one.
 */
enum sroce_qpc {
	SROCE_QPC_RC,
	SROCE_QPC_UC,
	SROCE_QPC_UD,
	SROCE_QPC_GSI,
	SROCE_QPC_NUM
};

#define SROCE_QPC_ALL		(BIT(SROCE_QPC_RC) | BIT(SROCE_QPC_UC) | \
				 BIT(SROCE_QPC_UD) | BIT(SROCE_QPC_GSI))
/* Only unreliable transports have a Send Queue Error state. */
#define SROCE_QPC_UNRELIABLE	(BIT(SROCE_QPC_UC) | BIT(SROCE_QPC_UD) | \
				 BIT(SROCE_QPC_GSI))

/* Attribute groups that recur in the table. */
#define SROCE_QPA_INIT_CONN	(IB_QP_PKEY_INDEX | IB_QP_PORT | \
				 IB_QP_ACCESS_FLAGS)
#define SROCE_QPA_INIT_UD	(IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY)
#define SROCE_QPA_INIT_GSI	(IB_QP_PKEY_INDEX | IB_QP_QKEY)
#define SROCE_QPA_DGRAM		(IB_QP_PKEY_INDEX | IB_QP_QKEY)
#define SROCE_QPA_RTR_UC	(IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
				 IB_QP_RQ_PSN)
#define SROCE_QPA_RTR_RC	(SROCE_QPA_RTR_UC | IB_QP_MAX_DEST_RD_ATOMIC | \
				 IB_QP_MIN_RNR_TIMER)
#define SROCE_QPA_RTR_CONN_OPT	(IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | \
				 IB_QP_PKEY_INDEX)
#define SROCE_QPA_RTS_RC	(IB_QP_SQ_PSN | IB_QP_TIMEOUT | \
				 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
				 IB_QP_MAX_QP_RD_ATOMIC)
/* Optional on the way into RTS and in RTS itself. */
#define SROCE_QPA_RTS_UC_OPT	(IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | \
				 IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE)
#define SROCE_QPA_RTS_RC_OPT	(SROCE_QPA_RTS_UC_OPT | IB_QP_MIN_RNR_TIMER)
#define SROCE_QPA_RTS_UD_OPT	(IB_QP_CUR_STATE | IB_QP_QKEY)
/* What a drained send queue lets a connected QP change. */
#define SROCE_QPA_SQD_UC_OPT	(IB_QP_AV | IB_QP_ALT_PATH | \
				 IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | \
				 IB_QP_PATH_MIG_STATE)
#define SROCE_QPA_SQD_RC_OPT	(SROCE_QPA_SQD_UC_OPT | IB_QP_PORT | \
				 IB_QP_TIMEOUT | IB_QP_RETRY_CNT | \
				 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC | \
				 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)

/**
 * struct sroce_qp_rule - the attributes of one transition for one class
 * @req: attributes that must be in the mask
 * @opt: attributes that may be in the mask
 *
 * IB_QP_STATE is in neither: it says whether the state changes at all.
 */
struct sroce_qp_rule {
	u32 req;
	u32 opt;
};

/**
 * struct sroce_qp_trans - one cell of the transition table
 * @classes: BIT(SROCE_QPC_*) of each class the transition exists for
 * @rule: the attributes of the transition, per class
 */
struct sroce_qp_trans {
	u8 classes;
	struct sroce_qp_rule rule[SROCE_QPC_NUM];
};

/*
 * [current state][next state]. Every state may go to RESET and to ERR
 * with no attributes ("Any state" rows of the spec's table); the other
 * cells are the spec's rows in its order.
 */
static const struct sroce_qp_trans
sroce_qp_trans_table[IB_QPS_ERR + 1][IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = {
		[IB_QPS_INIT] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .req = SROCE_QPA_INIT_CONN },
			[SROCE_QPC_UC] = { .req = SROCE_QPA_INIT_CONN },
			[SROCE_QPC_UD] = { .req = SROCE_QPA_INIT_UD },
			[SROCE_QPC_GSI] = { .req = SROCE_QPA_INIT_GSI } } },
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
	[IB_QPS_INIT] = {
		[IB_QPS_INIT] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .opt = SROCE_QPA_INIT_CONN },
			[SROCE_QPC_UC] = { .opt = SROCE_QPA_INIT_CONN },
			[SROCE_QPC_UD] = { .opt = SROCE_QPA_INIT_UD },
			[SROCE_QPC_GSI] = { .opt = SROCE_QPA_INIT_GSI } } },
		[IB_QPS_RTR] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .req = SROCE_QPA_RTR_RC,
					   .opt = SROCE_QPA_RTR_CONN_OPT },
			[SROCE_QPC_UC] = { .req = SROCE_QPA_RTR_UC,
					   .opt = SROCE_QPA_RTR_CONN_OPT },
			[SROCE_QPC_UD] = { .opt = SROCE_QPA_DGRAM },
			[SROCE_QPC_GSI] = { .opt = SROCE_QPA_DGRAM } } },
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
	[IB_QPS_RTR] = {
		[IB_QPS_RTS] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .req = SROCE_QPA_RTS_RC,
					   .opt = SROCE_QPA_RTS_RC_OPT },
			[SROCE_QPC_UC] = { .req = IB_QP_SQ_PSN,
					   .opt = SROCE_QPA_RTS_UC_OPT },
			[SROCE_QPC_UD] = { .req = IB_QP_SQ_PSN,
					   .opt = SROCE_QPA_RTS_UD_OPT },
			[SROCE_QPC_GSI] = { .req = IB_QP_SQ_PSN,
					    .opt = SROCE_QPA_RTS_UD_OPT } } },
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
	[IB_QPS_RTS] = {
		[IB_QPS_RTS] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .opt = SROCE_QPA_RTS_RC_OPT },
			[SROCE_QPC_UC] = { .opt = SROCE_QPA_RTS_UC_OPT },
			[SROCE_QPC_UD] = { .opt = SROCE_QPA_RTS_UD_OPT },
			[SROCE_QPC_GSI] = { .opt = SROCE_QPA_RTS_UD_OPT } } },
		[IB_QPS_SQD] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .opt = IB_QP_EN_SQD_ASYNC_NOTIFY },
			[SROCE_QPC_UC] = { .opt = IB_QP_EN_SQD_ASYNC_NOTIFY },
			[SROCE_QPC_UD] = { .opt = IB_QP_EN_SQD_ASYNC_NOTIFY },
			[SROCE_QPC_GSI] = { .opt = IB_QP_EN_SQD_ASYNC_NOTIFY } } },
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
	[IB_QPS_SQD] = {
		[IB_QPS_RTS] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .opt = SROCE_QPA_RTS_RC_OPT },
			[SROCE_QPC_UC] = { .opt = SROCE_QPA_RTS_UC_OPT },
			[SROCE_QPC_UD] = { .opt = SROCE_QPA_RTS_UD_OPT },
			[SROCE_QPC_GSI] = { .opt = SROCE_QPA_RTS_UD_OPT } } },
		[IB_QPS_SQD] = { .classes = SROCE_QPC_ALL, .rule = {
			[SROCE_QPC_RC] = { .opt = SROCE_QPA_SQD_RC_OPT },
			[SROCE_QPC_UC] = { .opt = SROCE_QPA_SQD_UC_OPT },
			[SROCE_QPC_UD] = { .opt = SROCE_QPA_DGRAM },
			[SROCE_QPC_GSI] = { .opt = SROCE_QPA_DGRAM } } },
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
	[IB_QPS_SQE] = {
		[IB_QPS_RTS] = { .classes = SROCE_QPC_UNRELIABLE, .rule = {
			[SROCE_QPC_UC] = { .opt = IB_QP_CUR_STATE |
						  IB_QP_ACCESS_FLAGS },
			[SROCE_QPC_UD] = { .opt = SROCE_QPA_RTS_UD_OPT },
			[SROCE_QPC_GSI] = { .opt = SROCE_QPA_RTS_UD_OPT } } },
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
	[IB_QPS_ERR] = {
		[IB_QPS_RESET] = { .classes = SROCE_QPC_ALL },
		[IB_QPS_ERR] = { .classes = SROCE_QPC_ALL },
	},
};

static int sroce_qp_class(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return SROCE_QPC_RC;
	case IB_QPT_UC:
		return SROCE_QPC_UC;
	case IB_QPT_UD:
		return SROCE_QPC_UD;
	case IB_QPT_GSI:
	case IB_QPT_SMI:
		return SROCE_QPC_GSI;
	default:
		return -EINVAL;
	}
}

/**
 * sroce_qp_attr_transition_masks() - look up a QP state transition
 * @type: the QP type; RC, UC, UD, GSI or SMI
 * @cur: the state the QP is in
 * @next: the state asked for; equal to @cur for a modify in place
 * @req: set to the attributes (enum ib_qp_attr_mask) the transition needs
 * @opt: set to the attributes it may also carry
 *
 * Neither mask contains IB_QP_STATE. IB_QP_ALT_PATH and
 * IB_QP_PATH_MIG_STATE appear where the spec allows them, although sroce
 * has no alternate path (see sroce_qp_attr_check_transition()).
 *
 * Context: any.
 * Return: 0 with @req and @opt set, or -EINVAL when @cur cannot go to
 * @next, or @type, @cur or @next is out of range; then @req and @opt are
 * untouched.
 */
int sroce_qp_attr_transition_masks(enum ib_qp_type type,
				   enum ib_qp_state cur,
				   enum ib_qp_state next,
				   u32 *req, u32 *opt)
{
	const struct sroce_qp_trans *t;
	int qpc = sroce_qp_class(type);

	if (qpc < 0 || (unsigned int)cur > IB_QPS_ERR ||
	    (unsigned int)next > IB_QPS_ERR)
		return -EINVAL;
	t = &sroce_qp_trans_table[cur][next];
	if (!(t->classes & BIT(qpc)))
		return -EINVAL;
	*req = t->rule[qpc].req;
	*opt = t->rule[qpc].opt;
	return 0;
}

/**
 * sroce_qp_attr_check_transition() - check a modify_qp mask against the
 *	state machine
 * @type: the QP type; RC, UC, UD, GSI or SMI
 * @cur: the state the QP is in (or the IB_QP_CUR_STATE the caller
 *	accepted as such)
 * @next: attr->qp_state when @mask has IB_QP_STATE, otherwise @cur
 * @mask: the enum ib_qp_attr_mask bits of the modify_qp
 *
 * Without IB_QP_STATE a modify_qp changes attributes in place, which is
 * the transition from @cur to itself: allowed in RESET, INIT, RTS, SQD and
 * ERR, not in RTR or SQE. Unlike ib_modify_qp_is_ok(), this follows the
 * spec in two places: RESET->ERR is allowed ("Any state -> Error"), and an
 * RC QP has no SQE->RTS (RC has no Send Queue Error state).
 *
 * sroce keeps no alternate path: IB_QP_ALT_PATH, where the spec allows
 * it, fails with -EOPNOTSUPP. IB_QP_PATH_MIG_STATE is accepted here;
 * sroce_qp_attr_check_values() allows only IB_MIG_MIGRATED, the state of a
 * QP without an alternate path.
 *
 * IB_QP_RATE_LIMIT, not an IBA attribute, goes with any transition and
 * in place wherever an attribute may change in place: it only sets the
 * QP's send rate (sroce_rate.c).
 *
 * Context: any.
 * Return: 0 if the transition is allowed with these attributes;
 * -EOPNOTSUPP for a mask bit outside the IBA attributes (the reserved
 * bits, unknown bits) or for IB_QP_ALT_PATH; -EINVAL for an
 * unknown @type or state, a transition the table does not have, a missing
 * required attribute or an attribute the transition does not take.
 */
int sroce_qp_attr_check_transition(enum ib_qp_type type,
				   enum ib_qp_state cur,
				   enum ib_qp_state next, int mask)
{
	u32 bits = mask & ~(u32)IB_QP_RATE_LIMIT;
	u32 req, opt;
	int err;

	if (bits & ~(u32)IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (!(bits & IB_QP_STATE) && next != cur)
		return -EINVAL;
	err = sroce_qp_attr_transition_masks(type, cur, next, &req, &opt);
	if (err)
		return err;

	bits &= ~IB_QP_STATE;
	if ((bits & req) != req || (bits & ~(req | opt)))
		return -EINVAL;
	if (bits & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;
	return 0;
}

/* Widths of the IBA fields behind the attributes. */
#define SROCE_QP_MAX_TIMEOUT		31	/* 5-bit Local ACK Timeout */
#define SROCE_QP_MAX_RETRY_CNT		7	/* 3 bits */
#define SROCE_QP_MAX_RNR_RETRY		7	/* 3 bits; 7 is "infinite" */
#define SROCE_QP_MAX_MIN_RNR_TIMER	31	/* 5-bit RNR NAK timer code */

/*
 * Access flags a QP takes. Only the three remote enables mean anything
 * for a QP; LOCAL_WRITE and MW_BIND are tolerated because applications
 * commonly pass their MR access flags (ib_srpt and rdma-core's tests
 * pass LOCAL_WRITE).
 */
#define SROCE_QP_ACCESS_FLAGS	(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND)

/* True if @bit is in @mask and the value it names is above @max. */
static bool sroce_qp_attr_over(int mask, enum ib_qp_attr_mask bit,
			       u32 val, u32 max)
{
	return (mask & bit) && val > max;
}

/* The addressing attributes: port, partition, path, PSNs. */
static int sroce_qp_attr_check_path(const struct ib_qp_attr *attr, int mask,
				    const struct sroce_qp_attr_limits *lim)
{
	if ((mask & IB_QP_PORT) &&
	    (attr->port_num < 1 || attr->port_num > lim->num_ports))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= lim->pkey_tbl_len)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > lim->max_mtu))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	if (sroce_qp_attr_over(mask, IB_QP_DEST_QPN, attr->dest_qp_num,
			       SROCE_QPN_MASK) ||
	    sroce_qp_attr_over(mask, IB_QP_SQ_PSN, attr->sq_psn,
			       SROCE_PSN_MASK) ||
	    sroce_qp_attr_over(mask, IB_QP_RQ_PSN, attr->rq_psn,
			       SROCE_PSN_MASK))
		return -EINVAL;
	return 0;
}

/* The reliability attributes: timers, retry counts, RDMA read depths. */
static int sroce_qp_attr_check_rc(const struct ib_qp_attr *attr, int mask,
				  const struct sroce_qp_attr_limits *lim)
{
	if (sroce_qp_attr_over(mask, IB_QP_TIMEOUT, attr->timeout,
			       SROCE_QP_MAX_TIMEOUT) ||
	    sroce_qp_attr_over(mask, IB_QP_RETRY_CNT, attr->retry_cnt,
			       SROCE_QP_MAX_RETRY_CNT) ||
	    sroce_qp_attr_over(mask, IB_QP_RNR_RETRY, attr->rnr_retry,
			       SROCE_QP_MAX_RNR_RETRY) ||
	    sroce_qp_attr_over(mask, IB_QP_MIN_RNR_TIMER, attr->min_rnr_timer,
			       SROCE_QP_MAX_MIN_RNR_TIMER) ||
	    sroce_qp_attr_over(mask, IB_QP_MAX_QP_RD_ATOMIC,
			       attr->max_rd_atomic, lim->max_rd_atomic) ||
	    sroce_qp_attr_over(mask, IB_QP_MAX_DEST_RD_ATOMIC,
			       attr->max_dest_rd_atomic,
			       lim->max_dest_rd_atomic))
		return -EINVAL;
	return 0;
}

/**
 * sroce_qp_attr_check_values() - range-check the attributes of a modify_qp
 * @attr: the attributes; only those named in @mask are looked at
 * @mask: the enum ib_qp_attr_mask bits of the modify_qp
 * @lim: the device's and port's bounds
 *
 * Checks each attribute on its own, against the width of its IBA field
 * or against @lim: states are enum ib_qp_state values, the port is in
 * 1..@lim->num_ports, the P_Key index inside the table, the path MTU in
 * IB_MTU_256..@lim->max_mtu (the caller caps it to the active MTU), the
 * PSNs and the destination QPN fit in 24 bits, the path migration state
 * is IB_MIG_MIGRATED (no alternate path), access flags are the remote
 * enables (LOCAL_WRITE and MW_BIND tolerated), the RDMA read depths within
 * @lim, and the timers and retry counts fit their fields. It does not
 * check which attributes a transition takes (that is
 * sroce_qp_attr_check_transition()), the address vector, the Q_Key (any
 * 32-bit value) or that IB_QP_CUR_STATE matches the QP's state.
 *
 * Context: any.
 * Return: 0, or -EINVAL for the first attribute out of range.
 */
int sroce_qp_attr_check_values(const struct ib_qp_attr *attr, int mask,
			       const struct sroce_qp_attr_limits *lim)
{
	int err;

	if (sroce_qp_attr_over(mask, IB_QP_STATE, attr->qp_state,
			       IB_QPS_ERR) ||
	    sroce_qp_attr_over(mask, IB_QP_CUR_STATE, attr->cur_qp_state,
			       IB_QPS_ERR) ||
	    sroce_qp_attr_over(mask, IB_QP_EN_SQD_ASYNC_NOTIFY,
			       attr->en_sqd_async_notify, 1))
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SROCE_QP_ACCESS_FLAGS))
		return -EINVAL;

	err = sroce_qp_attr_check_path(attr, mask, lim);
	if (err)
		return err;
	return sroce_qp_attr_check_rc(attr, mask, lim);
}
