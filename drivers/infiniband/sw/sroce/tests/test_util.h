/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared KUnit fixtures: a fake, unregistered sroce device with two PDs,
 * its counters, and bare RC QPs on it for the responder's go-back rules
 * and the completer's retry rules.
 *
 * Copyright (c) 2026 The sroce authors
 */

#ifndef SROCE_TEST_UTIL_H
#define SROCE_TEST_UTIL_H

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "wire/sroce_hdr.h"

struct sroce_av;
struct sroce_dev;
struct sroce_qp;

/**
 * struct sroce_test_dev - a device for tests that never registers
 * @sdev: zeroed device with an empty key table and the MR/MW limits set
 * @pd: a PD on @sdev
 * @pd2: a second PD on @sdev, for cross-PD checks
 *
 * Everything is kunit-managed memory: nothing to free.
 */
struct sroce_test_dev {
	struct sroce_dev *sdev;
	struct ib_pd *pd;
	struct ib_pd *pd2;
};

/* SGEs a send slot of sroce_test_comp_qp() has room for. */
#define SROCE_TEST_SQ_SGES	2

/* Pages of a test MR start out holding this byte. */
#define SROCE_TEST_SENTINEL	0xa5
#define SROCE_TEST_MR_PAGES	5

/**
 * struct sroce_test_mr - a fast-reg MR over separately allocated pages
 * @ibmr: the MR, registered
 * @page: its pages
 * @npages: how many
 * @slab: they are kmalloc() memory, which may not be lent to a packet
 *	(sendpage_ok() refuses slab pages): payloads from it are copied
 */
struct sroce_test_mr {
	struct ib_mr *ibmr;
	struct page *page[SROCE_TEST_MR_PAGES];
	unsigned int npages;
	bool slab;
};

int sroce_test_engines_init(struct kunit_suite *suite);
void sroce_test_engines_exit(struct kunit_suite *suite);
void sroce_test_dev_init(struct kunit *test, struct sroce_test_dev *t);
void sroce_test_dev_check_empty(struct kunit *test, struct sroce_test_dev *t);
void sroce_test_mr_create(struct kunit *test, struct ib_pd *pd,
			  struct sroce_test_mr *m, u32 size, int access);
void sroce_test_mr_create_slab(struct kunit *test, struct ib_pd *pd,
			       struct sroce_test_mr *m, u32 size, int access);
void sroce_test_mr_destroy(struct kunit *test, struct sroce_test_mr *m);
void sroce_test_dev_init_stats(struct kunit *test, struct sroce_test_dev *t);
struct sroce_qp *sroce_test_resp_qp(struct kunit *test,
				    struct sroce_test_dev *t, u32 nres);
struct sroce_qp *sroce_test_serve_qp(struct kunit *test,
				     struct sroce_test_dev *t);
struct sk_buff *sroce_test_parsed_skb(struct kunit *test, u8 opcode, u32 psn);
struct sroce_dev *sroce_test_xmit_dev(struct kunit *test);
void sroce_test_loopback_av(struct sroce_av *av, bool v6);
struct sroce_qp *sroce_test_comp_qp(struct kunit *test,
				    struct sroce_test_dev *t, u32 nwqe,
				    u32 sq_psn, u8 retry_cnt);
void sroce_test_claim_send(struct sroce_qp *qp, u32 npkts);
void sroce_test_ack(struct kunit *test, struct sroce_qp *qp, u32 psn,
		    enum sroce_aeth_type type, u8 code);

#endif /* SROCE_TEST_UTIL_H */
