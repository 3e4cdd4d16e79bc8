/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce_integrity: UD mode: address handle, Q_Key, receive WQEs with a
 * GRH in front of the payload, and the check of every datagram delivered.
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef SROCE_INTEGRITY_UD_H
#define SROCE_INTEGRITY_UD_H

#include "sroce_integrity.h"

/* Bytes of the GRH (or its RoCEv2 stand-in) in front of every payload. */
#define UD_GRH_LEN	40

/* Room in front of each receive slot's layout for the GRH. */
#define UD_PREFIX	64

/* The Q_Key both QPs are given at INIT and every SEND carries. */
#define UD_QKEY		0x11111111u

void ud_connect(struct run *r);
unsigned int ud_recv_sges(struct run *r, uint64_t n, struct ibv_sge *sge);
void ud_prep_send(struct run *r, uint32_t seq, struct ibv_send_wr *wr);
int ud_recv(struct run *r, const struct ibv_wc *wc);
const char *ud_grh_form(const struct run *r);
int ud_selftest(void);

#endif /* SROCE_INTEGRITY_UD_H */
