// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the QP state machine and modify_qp attribute checks of
 * sroce_qp_attr.c.
 *
 * The hand-written cases come from the IBA "QP State Transition
 * Properties" table (vol 1, 11.2.5) and the widths of the IBA fields;
 * the masks below are spelled out here, not taken from the driver. An
 * exhaustive pass then compares every transition and the attribute
 * combinations that matter to it with ib_core's ib_modify_qp_is_ok(),
 * allowing only the differences listed in qp_state_expected().
 */

#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <rdma/ib_verbs.h>

#include "test_util.h"
#include "transport/sroce_qp_attr.h"

#define S		IB_QP_STATE
/* Required attributes, from the spec's table. */
#define SPEC_RC_INIT	(IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define SPEC_UD_INIT	(IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY)
#define SPEC_GSI_INIT	(IB_QP_PKEY_INDEX | IB_QP_QKEY)
#define SPEC_UC_RTR	(IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
			 IB_QP_RQ_PSN)
#define SPEC_RC_RTR	(SPEC_UC_RTR | IB_QP_MAX_DEST_RD_ATOMIC | \
			 IB_QP_MIN_RNR_TIMER)
#define SPEC_RC_RTS	(IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | \
			 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC)
#define BAD_STATE	((enum ib_qp_state)(IB_QPS_ERR + 1))

struct qp_trans_case {
	const char *name;
	enum ib_qp_type type;
	enum ib_qp_state cur;
	enum ib_qp_state next;
	int mask;
	int err;
};

static const struct qp_trans_case qp_trans_cases[] = {
	/* Every RC transition, with its required attributes. */
	{ "rc reset->init", IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_RC_INIT, 0 },
	{ "rc init->init", IB_QPT_RC, IB_QPS_INIT, IB_QPS_INIT, S, 0 },
	{ "rc init->init, all optional", IB_QPT_RC, IB_QPS_INIT, IB_QPS_INIT,
	  S | SPEC_RC_INIT, 0 },
	{ "rc init in place", IB_QPT_RC, IB_QPS_INIT, IB_QPS_INIT,
	  IB_QP_ACCESS_FLAGS, 0 },
	{ "rc init->rtr", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	  S | SPEC_RC_RTR, 0 },
	{ "rc init->rtr, pkey and access", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	  S | SPEC_RC_RTR | IB_QP_PKEY_INDEX | IB_QP_ACCESS_FLAGS, 0 },
	{ "rc rtr->rts", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS,
	  S | SPEC_RC_RTS, 0 },
	{ "rc rtr->rts, optional", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS,
	  S | SPEC_RC_RTS | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS |
	  IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE, 0 },
	{ "rc rts->rts", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, S, 0 },
	{ "rc rts in place", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS,
	  IB_QP_MIN_RNR_TIMER | IB_QP_ACCESS_FLAGS, 0 },
	{ "rc rts->sqd", IB_QPT_RC, IB_QPS_RTS, IB_QPS_SQD, S, 0 },
	{ "rc rts->sqd, notify", IB_QPT_RC, IB_QPS_RTS, IB_QPS_SQD,
	  S | IB_QP_EN_SQD_ASYNC_NOTIFY, 0 },
	{ "rc sqd->rts", IB_QPT_RC, IB_QPS_SQD, IB_QPS_RTS, S, 0 },
	{ "rc sqd->rts, optional", IB_QPT_RC, IB_QPS_SQD, IB_QPS_RTS,
	  S | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | IB_QP_MIN_RNR_TIMER, 0 },
	{ "rc sqd->sqd", IB_QPT_RC, IB_QPS_SQD, IB_QPS_SQD, S, 0 },
	{ "rc sqd->sqd, path and timers", IB_QPT_RC, IB_QPS_SQD, IB_QPS_SQD,
	  S | IB_QP_PORT | IB_QP_AV | IB_QP_PKEY_INDEX | IB_QP_TIMEOUT |
	  IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC |
	  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER |
	  IB_QP_ACCESS_FLAGS, 0 },
	{ "rc reset->err (spec)", IB_QPT_RC, IB_QPS_RESET, IB_QPS_ERR, S, 0 },
	{ "rc path mig state", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS,
	  S | IB_QP_PATH_MIG_STATE, 0 },

	/* Every UD transition, with its required attributes. */
	{ "ud reset->init", IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_UD_INIT, 0 },
	{ "ud init->init", IB_QPT_UD, IB_QPS_INIT, IB_QPS_INIT, S, 0 },
	{ "ud init->init, all optional", IB_QPT_UD, IB_QPS_INIT, IB_QPS_INIT,
	  S | SPEC_UD_INIT, 0 },
	{ "ud init->rtr", IB_QPT_UD, IB_QPS_INIT, IB_QPS_RTR, S, 0 },
	{ "ud init->rtr, qkey and pkey", IB_QPT_UD, IB_QPS_INIT, IB_QPS_RTR,
	  S | IB_QP_QKEY | IB_QP_PKEY_INDEX, 0 },
	{ "ud rtr->rts", IB_QPT_UD, IB_QPS_RTR, IB_QPS_RTS,
	  S | IB_QP_SQ_PSN, 0 },
	{ "ud rtr->rts, optional", IB_QPT_UD, IB_QPS_RTR, IB_QPS_RTS,
	  S | IB_QP_SQ_PSN | IB_QP_CUR_STATE | IB_QP_QKEY, 0 },
	{ "ud rts->rts", IB_QPT_UD, IB_QPS_RTS, IB_QPS_RTS, S, 0 },
	{ "ud rts in place, qkey", IB_QPT_UD, IB_QPS_RTS, IB_QPS_RTS,
	  IB_QP_QKEY, 0 },
	{ "ud rts->sqd", IB_QPT_UD, IB_QPS_RTS, IB_QPS_SQD,
	  S | IB_QP_EN_SQD_ASYNC_NOTIFY, 0 },
	{ "ud sqd->rts", IB_QPT_UD, IB_QPS_SQD, IB_QPS_RTS,
	  S | IB_QP_QKEY, 0 },
	{ "ud sqd->sqd", IB_QPT_UD, IB_QPS_SQD, IB_QPS_SQD,
	  S | IB_QP_PKEY_INDEX | IB_QP_QKEY, 0 },
	{ "ud sqe->rts", IB_QPT_UD, IB_QPS_SQE, IB_QPS_RTS, S, 0 },
	{ "ud sqe->rts, optional", IB_QPT_UD, IB_QPS_SQE, IB_QPS_RTS,
	  S | IB_QP_CUR_STATE | IB_QP_QKEY, 0 },

	/* UC, GSI and SMI where they differ from RC and UD. */
	{ "uc init->rtr", IB_QPT_UC, IB_QPS_INIT, IB_QPS_RTR,
	  S | SPEC_UC_RTR, 0 },
	{ "uc init->rtr, min rnr timer", IB_QPT_UC, IB_QPS_INIT, IB_QPS_RTR,
	  S | SPEC_UC_RTR | IB_QP_MIN_RNR_TIMER, -EINVAL },
	{ "uc rtr->rts", IB_QPT_UC, IB_QPS_RTR, IB_QPS_RTS,
	  S | IB_QP_SQ_PSN, 0 },
	{ "uc rtr->rts, timeout", IB_QPT_UC, IB_QPS_RTR, IB_QPS_RTS,
	  S | IB_QP_SQ_PSN | IB_QP_TIMEOUT, -EINVAL },
	{ "uc sqe->rts, access", IB_QPT_UC, IB_QPS_SQE, IB_QPS_RTS,
	  S | IB_QP_ACCESS_FLAGS, 0 },
	{ "gsi reset->init", IB_QPT_GSI, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_GSI_INIT, 0 },
	{ "gsi reset->init, port", IB_QPT_GSI, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_GSI_INIT | IB_QP_PORT, -EINVAL },
	{ "smi reset->init", IB_QPT_SMI, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_GSI_INIT, 0 },

	/* Transitions the spec does not have. */
	{ "rc reset->rtr", IB_QPT_RC, IB_QPS_RESET, IB_QPS_RTR,
	  S | SPEC_RC_RTR, -EINVAL },
	{ "rc reset->rts", IB_QPT_RC, IB_QPS_RESET, IB_QPS_RTS,
	  S | SPEC_RC_RTS, -EINVAL },
	{ "rc init->rts", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTS,
	  S | SPEC_RC_RTS, -EINVAL },
	{ "rc rtr->rtr", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTR, S, -EINVAL },
	{ "rc rtr in place", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTR,
	  IB_QP_MIN_RNR_TIMER, -EINVAL },
	{ "rc rts->rtr", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTR, S, -EINVAL },
	{ "rc sqd->init", IB_QPT_RC, IB_QPS_SQD, IB_QPS_INIT, S, -EINVAL },
	{ "rc err->rts", IB_QPT_RC, IB_QPS_ERR, IB_QPS_RTS, S, -EINVAL },
	{ "rc err->init", IB_QPT_RC, IB_QPS_ERR, IB_QPS_INIT,
	  S | SPEC_RC_INIT, -EINVAL },
	{ "rc sqe->rts", IB_QPT_RC, IB_QPS_SQE, IB_QPS_RTS, S, -EINVAL },
	{ "ud sqe in place", IB_QPT_UD, IB_QPS_SQE, IB_QPS_SQE,
	  IB_QP_QKEY, -EINVAL },
	{ "state change without IB_QP_STATE", IB_QPT_RC, IB_QPS_INIT,
	  IB_QPS_RTR, SPEC_RC_RTR, -EINVAL },

	/* Missing required attributes. */
	{ "rc reset->init, no access", IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT,
	  S | IB_QP_PKEY_INDEX | IB_QP_PORT, -EINVAL },
	{ "rc init->rtr, no av", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	  S | (SPEC_RC_RTR & ~IB_QP_AV), -EINVAL },
	{ "rc init->rtr, no min rnr timer", IB_QPT_RC, IB_QPS_INIT,
	  IB_QPS_RTR, S | (SPEC_RC_RTR & ~IB_QP_MIN_RNR_TIMER), -EINVAL },
	{ "rc init->rtr, no dest qpn", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	  S | (SPEC_RC_RTR & ~IB_QP_DEST_QPN), -EINVAL },
	{ "rc rtr->rts, no sq psn", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS,
	  S | (SPEC_RC_RTS & ~IB_QP_SQ_PSN), -EINVAL },
	{ "rc rtr->rts, no rnr retry", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS,
	  S | (SPEC_RC_RTS & ~IB_QP_RNR_RETRY), -EINVAL },
	{ "ud reset->init, no qkey", IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT,
	  S | IB_QP_PKEY_INDEX | IB_QP_PORT, -EINVAL },
	{ "ud rtr->rts, no sq psn", IB_QPT_UD, IB_QPS_RTR, IB_QPS_RTS,
	  S, -EINVAL },

	/* Attributes the transition does not take. */
	{ "rc reset->init, qkey", IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_RC_INIT | IB_QP_QKEY, -EINVAL },
	{ "rc reset->init, cap", IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_RC_INIT | IB_QP_CAP, -EINVAL },
	{ "rc init->init, cur state", IB_QPT_RC, IB_QPS_INIT, IB_QPS_INIT,
	  S | IB_QP_CUR_STATE, -EINVAL },
	{ "rc init->rtr, port", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	  S | SPEC_RC_RTR | IB_QP_PORT, -EINVAL },
	{ "rc rts->rts, path mtu", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS,
	  S | IB_QP_PATH_MTU, -EINVAL },
	{ "rc rts->sqd, timeout", IB_QPT_RC, IB_QPS_RTS, IB_QPS_SQD,
	  S | IB_QP_TIMEOUT, -EINVAL },
	{ "rc rts->err, cur state", IB_QPT_RC, IB_QPS_RTS, IB_QPS_ERR,
	  S | IB_QP_CUR_STATE, -EINVAL },
	{ "rc err->err, qkey", IB_QPT_RC, IB_QPS_ERR, IB_QPS_ERR,
	  S | IB_QP_QKEY, -EINVAL },
	{ "ud init->rtr, av", IB_QPT_UD, IB_QPS_INIT, IB_QPS_RTR,
	  S | IB_QP_AV, -EINVAL },
	{ "ud reset->init, access", IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_UD_INIT | IB_QP_ACCESS_FLAGS, -EINVAL },
	{ "ud rts->rts, min rnr timer", IB_QPT_UD, IB_QPS_RTS, IB_QPS_RTS,
	  S | IB_QP_MIN_RNR_TIMER, -EINVAL },
	{ "ud sqe->rts, access", IB_QPT_UD, IB_QPS_SQE, IB_QPS_RTS,
	  S | IB_QP_ACCESS_FLAGS, -EINVAL },

	/* Alternate paths, non-IBA bits, bad arguments. */
	{ "rc rtr->rts, alt path", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS,
	  S | SPEC_RC_RTS | IB_QP_ALT_PATH, -EOPNOTSUPP },
	{ "rc reset->init, alt path", IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_RC_INIT | IB_QP_ALT_PATH, -EINVAL },
	{ "rate limit", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS,
	  S | IB_QP_RATE_LIMIT, 0 },
	{ "rate limit alone", IB_QPT_UD, IB_QPS_RTS, IB_QPS_RTS,
	  IB_QP_RATE_LIMIT, 0 },
	{ "rate limit, rtr->rts", IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS,
	  S | SPEC_RC_RTS | IB_QP_RATE_LIMIT, 0 },
	{ "rate limit in rtr", IB_QPT_UC, IB_QPS_RTR, IB_QPS_RTR,
	  IB_QP_RATE_LIMIT, -EINVAL },
	{ "reserved bit", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS,
	  S | IB_QP_RESERVED1, -EOPNOTSUPP },
	{ "sign bit", IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, S | (int)BIT(31),
	  -EOPNOTSUPP },
	{ "bad current state", IB_QPT_RC, BAD_STATE, IB_QPS_ERR, S, -EINVAL },
	{ "bad next state", IB_QPT_RC, IB_QPS_RTS, BAD_STATE, S, -EINVAL },
	{ "xrc initiator", IB_QPT_XRC_INI, IB_QPS_RESET, IB_QPS_INIT,
	  S | SPEC_RC_INIT, -EINVAL },
	{ "raw packet", IB_QPT_RAW_PACKET, IB_QPS_RESET, IB_QPS_INIT,
	  S | IB_QP_PORT, -EINVAL },
};

static void qp_trans_desc(const struct qp_trans_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qp_trans, qp_trans_cases, qp_trans_desc);

static void qp_trans_test(struct kunit *test)
{
	const struct qp_trans_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_qp_attr_check_transition(t->type, t->cur,
							     t->next, t->mask),
			t->err);
}

static const enum ib_qp_type qp_types[] = {
	IB_QPT_RC, IB_QPT_UC, IB_QPT_UD, IB_QPT_GSI, IB_QPT_SMI,
};

static void qp_type_desc(const enum ib_qp_type *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "qp type %d", *t);
}

KUNIT_ARRAY_PARAM(qp_type, qp_types, qp_type_desc);

/* "Any state -> Reset" and "Any state -> Error": no attributes at all. */
static void qp_to_reset_err(struct kunit *test, enum ib_qp_type type,
			    enum ib_qp_state cur, enum ib_qp_state next)
{
	static const int extra[] = {
		IB_QP_CUR_STATE, IB_QP_QKEY, IB_QP_PKEY_INDEX, IB_QP_PORT,
	};
	unsigned int i;
	int mask, err;

	err = sroce_qp_attr_check_transition(type, cur, next, S);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "%d->%d", cur, next);
	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		mask = S | extra[i];
		err = sroce_qp_attr_check_transition(type, cur, next, mask);
		KUNIT_EXPECT_EQ_MSG(test, err, -EINVAL, "%d->%d mask %#x",
				    cur, next, mask);
	}
}

static void qp_any_to_reset_err_test(struct kunit *test)
{
	const enum ib_qp_type *type = test->param_value;
	enum ib_qp_state cur;

	for (cur = IB_QPS_RESET; cur <= IB_QPS_ERR; cur++) {
		qp_to_reset_err(test, *type, cur, IB_QPS_RESET);
		qp_to_reset_err(test, *type, cur, IB_QPS_ERR);
	}
}

/*
 * A transition [cur][next] that ib_core and sroce answer
 * differently, on purpose. qp_state_expected() encodes the same list for
 * the exhaustive pass; qp_diff_test() shows each one against ib_core.
 */
struct qp_diff_case {
	const char *name;
	enum ib_qp_type type;
	enum ib_qp_state cur;
	enum ib_qp_state next;
	int mask;
	bool core_ok;
	int err;
};

static const struct qp_diff_case qp_diff_cases[] = {
	/* IBA allows "Any state -> Error"; ib_core has no RESET->ERR. */
	{ "reset->err", IB_QPT_RC, IB_QPS_RESET, IB_QPS_ERR, S, false, 0 },
	{ "ud reset->err", IB_QPT_UD, IB_QPS_RESET, IB_QPS_ERR, S, false, 0 },
	/* RC has no Send Queue Error state; ib_core lists SQE->RTS for it. */
	{ "rc sqe->rts", IB_QPT_RC, IB_QPS_SQE, IB_QPS_RTS, S, true, -EINVAL },
	/* No alternate path (APM) in sroce. */
	{ "rc init->rtr, alt path", IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	  S | SPEC_RC_RTR | IB_QP_ALT_PATH, true, -EOPNOTSUPP },
	{ "uc rts->rts, alt path", IB_QPT_UC, IB_QPS_RTS, IB_QPS_RTS,
	  S | IB_QP_ALT_PATH, true, -EOPNOTSUPP },
};

static void qp_diff_desc(const struct qp_diff_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qp_diff, qp_diff_cases, qp_diff_desc);

static void qp_diff_test(struct kunit *test)
{
	const struct qp_diff_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, ib_modify_qp_is_ok(t->cur, t->next, t->type,
						 t->mask), t->core_ok);
	KUNIT_EXPECT_EQ(test, sroce_qp_attr_check_transition(t->type, t->cur,
							     t->next, t->mask),
			t->err);
}

/* What sroce must answer, given ib_core's answer; see qp_diff_cases. */
static int qp_state_expected(enum ib_qp_type type, enum ib_qp_state cur,
			     enum ib_qp_state next, u32 mask, bool core_ok)
{
	if (cur == IB_QPS_RESET && next == IB_QPS_ERR)
		return mask == S ? 0 : -EINVAL;
	if (!core_ok)
		return -EINVAL;
	if (type == IB_QPT_RC && cur == IB_QPS_SQE && next == IB_QPS_RTS)
		return -EINVAL;
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;
	return 0;
}

struct qp_cross {
	struct kunit *test;
	enum ib_qp_type type;
	u32 attrs;	/* every attribute of sroce's table */
	unsigned int tried;
	unsigned int failed;
};

static void qp_cross_one(struct qp_cross *x, enum ib_qp_state cur,
			 enum ib_qp_state next, u32 mask)
{
	bool core_ok = ib_modify_qp_is_ok(cur, next, x->type, mask);
	int want = qp_state_expected(x->type, cur, next, mask, core_ok);
	int got = sroce_qp_attr_check_transition(x->type, cur, next, mask);

	x->tried++;
	if (got == want)
		return;
	/* Report the first few; one wrong cell would repeat thousands. */
	if (x->failed++ < 16)
		KUNIT_FAIL(x->test,
			   "type %d %d->%d mask %#x: sroce %d, want %d (ib_core %s)",
			   x->type, cur, next, mask, got, want,
			   core_ok ? "ok" : "refuses");
}

/* @attrs with IB_QP_STATE and, for a modify in place, without it. */
static void qp_cross_mask(struct qp_cross *x, enum ib_qp_state cur,
			  enum ib_qp_state next, u32 attrs)
{
	qp_cross_one(x, cur, next, S | attrs);
	if (cur == next)
		qp_cross_one(x, cur, next, attrs);
}

/*
 * Every subset of the attributes sroce's table names for cur->next, each
 * alone and with one more IBA attribute that the table does not name.
 */
static void qp_cross_subsets(struct qp_cross *x, enum ib_qp_state cur,
			     enum ib_qp_state next)
{
	u32 req = 0, opt = 0, bits, sub = 0, extra;

	sroce_qp_attr_transition_masks(x->type, cur, next, &req, &opt);
	bits = req | opt;
	do {
		qp_cross_mask(x, cur, next, sub);
		for (extra = IB_QP_CUR_STATE; extra & IB_QP_ATTR_STANDARD_BITS;
		     extra <<= 1)
			if (!(extra & bits))
				qp_cross_mask(x, cur, next, sub | extra);
		sub = (sub - bits) & bits;	/* next subset of bits */
	} while (sub);
}

/*
 * Every combination of at most @room more attributes from @rest, added
 * to @mask, each combination once (bits are added in ascending order).
 */
static void qp_cross_combine(struct qp_cross *x, enum ib_qp_state cur,
			     enum ib_qp_state next, u32 mask, u32 rest,
			     unsigned int room)
{
	u32 bit;

	qp_cross_mask(x, cur, next, mask);
	if (!room)
		return;
	while (rest) {
		bit = rest & -rest;
		rest &= ~bit;
		qp_cross_combine(x, cur, next, mask | bit, rest, room - 1);
	}
}

/*
 * No transition in the spec requires more than six attributes (RC
 * INIT->RTR); trying up to this many finds the required set of any
 * transition ib_core has that sroce's table lacks, with one to spare.
 */
#define QP_CROSS_MAX_REQ	7

/*
 * A cell sroce's table refuses: ib_core must refuse every combination of
 * up to QP_CROSS_MAX_REQ attributes that any QP type takes anywhere.
 */
static void qp_cross_missing(struct qp_cross *x, enum ib_qp_state cur,
			     enum ib_qp_state next)
{
	u32 req, opt;

	if (!sroce_qp_attr_transition_masks(x->type, cur, next, &req, &opt))
		return;
	qp_cross_combine(x, cur, next, 0, x->attrs, QP_CROSS_MAX_REQ);
	cond_resched();
}

/* Every attribute sroce's table names, for any type and transition. */
static u32 qp_all_attrs(void)
{
	enum ib_qp_state cur, next;
	u32 all = 0, req, opt;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(qp_types); i++)
		for (cur = IB_QPS_RESET; cur <= IB_QPS_ERR; cur++)
			for (next = IB_QPS_RESET; next <= IB_QPS_ERR; next++)
				if (!sroce_qp_attr_transition_masks(qp_types[i],
								    cur, next,
								    &req, &opt))
					all |= req | opt;
	return all;
}

static void qp_core_cross_test(struct kunit *test)
{
	const enum ib_qp_type *type = test->param_value;
	struct qp_cross x = {
		.test = test, .type = *type, .attrs = qp_all_attrs(),
	};
	enum ib_qp_state cur, next;
	u64 start = ktime_get_ns();

	for (cur = IB_QPS_RESET; cur <= IB_QPS_ERR; cur++) {
		for (next = IB_QPS_RESET; next <= IB_QPS_ERR; next++) {
			qp_cross_subsets(&x, cur, next);
			qp_cross_missing(&x, cur, next);
		}
	}
	KUNIT_EXPECT_EQ(test, x.failed, 0);
	kunit_info(test, "%u masks compared with ib_modify_qp_is_ok() in %llu ms",
		   x.tried, div_u64(ktime_get_ns() - start, NSEC_PER_MSEC));
}

static const struct sroce_qp_attr_limits qp_test_lim = {
	.max_rd_atomic = 16,
	.max_dest_rd_atomic = 8,
	.max_mtu = IB_MTU_1024,
	.pkey_tbl_len = 2,
	.num_ports = 1,
};

struct qp_values_case {
	const char *name;
	int mask;
	struct ib_qp_attr attr;
	int err;
};

#define QP_OK_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

static const struct qp_values_case qp_values_cases[] = {
	{ "nothing", 0, {}, 0 },
	{ "state err", S, { .qp_state = IB_QPS_ERR }, 0 },
	{ "state past err", S, { .qp_state = BAD_STATE }, -EINVAL },
	{ "cur state sqe", IB_QP_CUR_STATE, { .cur_qp_state = IB_QPS_SQE }, 0 },
	{ "cur state past err", IB_QP_CUR_STATE,
	  { .cur_qp_state = BAD_STATE }, -EINVAL },
	{ "port 1", IB_QP_PORT, { .port_num = 1 }, 0 },
	{ "port 0", IB_QP_PORT, { .port_num = 0 }, -EINVAL },
	{ "port 2", IB_QP_PORT, { .port_num = 2 }, -EINVAL },
	{ "pkey index last", IB_QP_PKEY_INDEX, { .pkey_index = 1 }, 0 },
	{ "pkey index past table", IB_QP_PKEY_INDEX, { .pkey_index = 2 },
	  -EINVAL },
	{ "mtu 256", IB_QP_PATH_MTU, { .path_mtu = IB_MTU_256 }, 0 },
	{ "mtu at max", IB_QP_PATH_MTU, { .path_mtu = IB_MTU_1024 }, 0 },
	{ "mtu above max", IB_QP_PATH_MTU, { .path_mtu = IB_MTU_2048 },
	  -EINVAL },
	{ "mtu 0", IB_QP_PATH_MTU, { .path_mtu = 0 }, -EINVAL },
	{ "mtu past 4096", IB_QP_PATH_MTU, { .path_mtu = IB_MTU_4096 + 1 },
	  -EINVAL },
	{ "mig migrated", IB_QP_PATH_MIG_STATE,
	  { .path_mig_state = IB_MIG_MIGRATED }, 0 },
	{ "mig rearm", IB_QP_PATH_MIG_STATE,
	  { .path_mig_state = IB_MIG_REARM }, -EINVAL },
	{ "mig armed", IB_QP_PATH_MIG_STATE,
	  { .path_mig_state = IB_MIG_ARMED }, -EINVAL },
	{ "qkey any", IB_QP_QKEY, { .qkey = 0xffffffff }, 0 },
	{ "dest qpn 24 bits", IB_QP_DEST_QPN, { .dest_qp_num = 0xffffff }, 0 },
	{ "dest qpn 25 bits", IB_QP_DEST_QPN, { .dest_qp_num = 0x1000000 },
	  -EINVAL },
	{ "sq psn 24 bits", IB_QP_SQ_PSN, { .sq_psn = 0xffffff }, 0 },
	{ "sq psn 25 bits", IB_QP_SQ_PSN, { .sq_psn = 0x1000000 }, -EINVAL },
	{ "rq psn 24 bits", IB_QP_RQ_PSN, { .rq_psn = 0xffffff }, 0 },
	{ "rq psn 32 bits", IB_QP_RQ_PSN, { .rq_psn = 0xffffffff }, -EINVAL },
	{ "timeout 31", IB_QP_TIMEOUT, { .timeout = 31 }, 0 },
	{ "timeout 32", IB_QP_TIMEOUT, { .timeout = 32 }, -EINVAL },
	{ "retry 7", IB_QP_RETRY_CNT, { .retry_cnt = 7 }, 0 },
	{ "retry 8", IB_QP_RETRY_CNT, { .retry_cnt = 8 }, -EINVAL },
	{ "rnr retry 7", IB_QP_RNR_RETRY, { .rnr_retry = 7 }, 0 },
	{ "rnr retry 8", IB_QP_RNR_RETRY, { .rnr_retry = 8 }, -EINVAL },
	{ "min rnr timer 31", IB_QP_MIN_RNR_TIMER, { .min_rnr_timer = 31 }, 0 },
	{ "min rnr timer 32", IB_QP_MIN_RNR_TIMER, { .min_rnr_timer = 32 },
	  -EINVAL },
	{ "rd atomic 0", IB_QP_MAX_QP_RD_ATOMIC, { .max_rd_atomic = 0 }, 0 },
	{ "rd atomic at max", IB_QP_MAX_QP_RD_ATOMIC, { .max_rd_atomic = 16 },
	  0 },
	{ "rd atomic above max", IB_QP_MAX_QP_RD_ATOMIC,
	  { .max_rd_atomic = 17 }, -EINVAL },
	{ "dest rd atomic at max", IB_QP_MAX_DEST_RD_ATOMIC,
	  { .max_dest_rd_atomic = 8 }, 0 },
	{ "dest rd atomic above max", IB_QP_MAX_DEST_RD_ATOMIC,
	  { .max_dest_rd_atomic = 9 }, -EINVAL },
	{ "access remote", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = QP_OK_ACCESS }, 0 },
	{ "access none", IB_QP_ACCESS_FLAGS, { .qp_access_flags = 0 }, 0 },
	{ "access local write", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = QP_OK_ACCESS | IB_ACCESS_LOCAL_WRITE }, 0 },
	{ "access mw bind", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ACCESS_MW_BIND }, 0 },
	{ "access zero based", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ZERO_BASED }, -EINVAL },
	{ "access on demand", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ACCESS_ON_DEMAND }, -EINVAL },
	{ "access relaxed ordering", IB_QP_ACCESS_FLAGS,
	  { .qp_access_flags = IB_ACCESS_RELAXED_ORDERING }, -EINVAL },
	{ "access negative", IB_QP_ACCESS_FLAGS, { .qp_access_flags = -1 },
	  -EINVAL },
	{ "sqd notify 1", IB_QP_EN_SQD_ASYNC_NOTIFY,
	  { .en_sqd_async_notify = 1 }, 0 },
	{ "sqd notify 2", IB_QP_EN_SQD_ASYNC_NOTIFY,
	  { .en_sqd_async_notify = 2 }, -EINVAL },
	{ "bad values outside the mask", IB_QP_QKEY,
	  { .port_num = 9, .pkey_index = 9, .timeout = 255, .sq_psn = ~0U,
	    .path_mtu = 0, .qp_access_flags = -1, .max_rd_atomic = 255 }, 0 },
	{ "rc rtr->rts set", S | SPEC_RC_RTS,
	  { .qp_state = IB_QPS_RTS, .sq_psn = 0x123456, .timeout = 14,
	    .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1 }, 0 },
	{ "one bad among good", S | SPEC_RC_RTS,
	  { .qp_state = IB_QPS_RTS, .sq_psn = 0x123456, .timeout = 14,
	    .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 17 }, -EINVAL },
};

static void qp_values_desc(const struct qp_values_case *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qp_values, qp_values_cases, qp_values_desc);

static void qp_values_test(struct kunit *test)
{
	const struct qp_values_case *t = test->param_value;

	KUNIT_EXPECT_EQ(test, sroce_qp_attr_check_values(&t->attr, t->mask,
							 &qp_test_lim),
			t->err);
}

static struct kunit_case sroce_qp_state_test_cases[] = {
	KUNIT_CASE_PARAM(qp_trans_test, qp_trans_gen_params),
	KUNIT_CASE_PARAM(qp_any_to_reset_err_test, qp_type_gen_params),
	KUNIT_CASE_PARAM(qp_diff_test, qp_diff_gen_params),
	KUNIT_CASE_PARAM(qp_core_cross_test, qp_type_gen_params),
	KUNIT_CASE_PARAM(qp_values_test, qp_values_gen_params),
	{}
};

static struct kunit_suite sroce_qp_state_test_suite = {
	.name = "sroce_qp_state",
	.suite_init = sroce_test_engines_init,
	.suite_exit = sroce_test_engines_exit,
	.test_cases = sroce_qp_state_test_cases,
};

kunit_test_suites(&sroce_qp_state_test_suite);
