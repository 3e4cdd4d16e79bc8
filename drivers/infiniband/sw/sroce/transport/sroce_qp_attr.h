/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce QP state transitions and modify_qp attribute checks.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_QP_ATTR_H
#define SROCE_QP_ATTR_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

/**
 * struct sroce_qp_attr_limits - the bounds modify_qp checks values against
 * @max_rd_atomic: largest IB_QP_MAX_QP_RD_ATOMIC (initiator depth)
 * @max_dest_rd_atomic: largest IB_QP_MAX_DEST_RD_ATOMIC (responder
 *	resources)
 * @max_mtu: largest IB_QP_PATH_MTU the port supports
 * @pkey_tbl_len: number of P_Key table entries; IB_QP_PKEY_INDEX is below
 * @num_ports: number of ports; ports are numbered from 1
 */
struct sroce_qp_attr_limits {
	u32 max_rd_atomic;
	u32 max_dest_rd_atomic;
	enum ib_mtu max_mtu;
	u16 pkey_tbl_len;
	u8 num_ports;
};

int sroce_qp_attr_transition_masks(enum ib_qp_type type,
				   enum ib_qp_state cur,
				   enum ib_qp_state next,
				   u32 *req, u32 *opt);
int sroce_qp_attr_check_transition(enum ib_qp_type type,
				   enum ib_qp_state cur,
				   enum ib_qp_state next, int mask);
int sroce_qp_attr_check_values(const struct ib_qp_attr *attr, int mask,
			       const struct sroce_qp_attr_limits *lim);

#endif /* SROCE_QP_ATTR_H */
