/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce QPN index: the receive path's way to a QP by number.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_QP_INDEX_H
#define SROCE_QP_INDEX_H

#include <linux/types.h>

struct sroce_dev;
struct sroce_qp;

int sroce_qp_index_reserve(struct sroce_dev *sdev, struct sroce_qp *qp);
void sroce_qp_index_publish(struct sroce_dev *sdev, struct sroce_qp *qp);
void sroce_qp_index_cancel(struct sroce_dev *sdev, struct sroce_qp *qp);
void sroce_qp_index_remove(struct sroce_dev *sdev, struct sroce_qp *qp);
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);

#endif /* SROCE_QP_INDEX_H */
