/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce device limits. They are what the verbs layer enforces; the values
 * are reported through query_device/query_port and must only ever grow in
 * a compatible way. A header of its own so that the object code can size
 * its arrays without seeing the device.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_PARAM_H
#define SROCE_PARAM_H

#include <linux/sizes.h>

#define SROCE_MAX_SGE			63
#define SROCE_MAX_INLINE_DATA		1008	/* SROCE_MAX_SGE * 16 */
#define SROCE_MAX_MSG_SIZE		SZ_1G
#define SROCE_MAX_QP			131072
#define SROCE_MAX_QP_WR			32768
#define SROCE_MAX_CQ			65536
#define SROCE_MAX_CQE			131071
#define SROCE_MAX_MR			262144
#define SROCE_MAX_MW			65536
#define SROCE_MAX_PD			65536
#define SROCE_MAX_AH			65536
#define SROCE_MAX_SRQ			65536
#define SROCE_MAX_SRQ_WR		32768
#define SROCE_MAX_RD_ATOMIC		128
#define SROCE_MAX_FAST_REG_PAGES	512
#define SROCE_MAX_MCAST_GRP		8192
#define SROCE_MAX_MCAST_QP_ATTACH	56
/*
 * Received packets one QP's responder and completer may have waiting.
 * A flood (QP1's Q_Key is public; anyone may send to it) is dropped past
 * them and counted in dropped_backlog. The completer's is larger: it
 * holds the responses of up to SROCE_MAX_RD_ATOMIC outstanding READs, 64
 * KiB each at path MTU 1024 in perftest's defaults.
 */
#define SROCE_RESP_BACKLOG		4096
#define SROCE_COMP_BACKLOG		16384

#define SROCE_VENDOR_ID			0xffffff

/* QPNs handed out to QPs other than QP0/QP1; 24 bits on the wire. */
#define SROCE_MIN_QPN			16
#define SROCE_MAX_QPN			((1U << 24) - 1)
/* MR and MW keys: a 24-bit index, then an 8-bit variant. */
#define SROCE_MIN_KEY_INDEX		1
#define SROCE_MAX_KEY_INDEX		((1U << 24) - 1)
#define SROCE_MAX_AH_NUM		((1U << 24) - 1)

#endif /* SROCE_PARAM_H */
