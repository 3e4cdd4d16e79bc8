/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pktfuzz: crafted RoCEv2 frames into a live sroce device.
 *
 * Copyright (c) 2026 The sroce authors
 */
#ifndef PKTFUZZ_H
#define PKTFUZZ_H

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FZ_UDP_PORT	4791
#define FZ_PKEY		0xffff
#define FZ_MAX_FRAME	4400
#define FZ_MR_LEN	65536
#define FZ_RECV_DEPTH	128
#define FZ_MCAST4	0xef010203u	/* 239.1.2.3 */

/* BTH opcodes (IBA 9.2) used by name; every other value is sent too. */
enum {
	OP_RC_SEND_FIRST = 0x00,
	OP_RC_SEND_ONLY = 0x04,
	OP_RC_WRITE_FIRST = 0x06,
	OP_RC_WRITE_ONLY = 0x0a,
	OP_RC_WRITE_ONLY_IMM = 0x0b,
	OP_RC_READ_REQ = 0x0c,
	OP_RC_READ_RSP_FIRST = 0x0d,
	OP_RC_READ_RSP_MIDDLE = 0x0e,
	OP_RC_READ_RSP_LAST = 0x0f,
	OP_RC_READ_RSP_ONLY = 0x10,
	OP_RC_ACK = 0x11,
	OP_RC_ATOMIC_ACK = 0x12,
	OP_RC_CMP_SWAP = 0x13,
	OP_RC_FETCH_ADD = 0x14,
	OP_UC_SEND_ONLY = 0x24,
	OP_UC_WRITE_ONLY = 0x2a,
	OP_UD_SEND_ONLY = 0x64,
	OP_UD_SEND_ONLY_IMM = 0x65,
	OP_CNP = 0x81,
};

/* Extension headers, in wire order (IBA 9.2, table 38). */
enum {
	FZ_H_DETH = 1 << 0,
	FZ_H_RETH = 1 << 1,
	FZ_H_ATMETH = 1 << 2,
	FZ_H_AETH = 1 << 3,
	FZ_H_ATMACK = 1 << 4,
	FZ_H_IMMDT = 1 << 5,
	FZ_H_IETH = 1 << 6,
	FZ_H_CNP = 1 << 7,	/* the 16 reserved bytes of a CNP */
};

/* One QP of the device under test, connected to the fictitious peer. */
struct fz_qp {
	struct ibv_qp *qp;
	enum ibv_qp_type type;
	uint32_t qpn;		/* the device's QPN */
	uint32_t peer_qpn;	/* the peer's (ours), fictitious */
	uint32_t rq_psn;	/* next PSN the device expects from us */
	uint32_t sq_psn;	/* next PSN the device sends, as we track it */
	uint32_t qkey;
	unsigned int posted_recv;
	unsigned int posted_send;
	unsigned int revived;
};

/* A frame as described before it is laid out. */
struct fz_pkt {
	bool ipv6;
	bool mcast;
	uint8_t opcode;
	uint8_t pad;		/* BTH PadCnt */
	uint8_t tver;
	uint8_t flags;		/* BTH byte 1 bits 7..6: SE, MigReq */
	uint16_t pkey;
	uint8_t tos;		/* IPv4 TOS / IPv6 traffic class */
	uint8_t src_host;	/* !0: the IPv4 source's last octet */
	uint32_t qpn;
	uint32_t psn;
	bool ackreq;
	unsigned int hdrs;	/* FZ_H_* */
	uint32_t qkey, src_qp;	/* DETH */
	uint64_t va;		/* RETH, AtomicETH */
	uint32_t rkey, dma_len;	/* RETH */
	uint64_t swap_add, compare;
	uint32_t aeth;		/* syndrome << 24 | MSN */
	uint64_t atmack;
	uint32_t imm;
	unsigned int paylen;	/* payload bytes, without the pad */
	const uint8_t *payload;	/* NULL: a pattern of the PSN */
};

/* How the laid-out frame is to be damaged after the ICRC. */
struct fz_lie {
	int ip_len_delta;	/* added to the IPv4 total/IPv6 payload length */
	int udp_len_delta;	/* added to the UDP length */
	int truncate_at;	/* >0: the frame is cut to this many bytes */
	bool fix_lengths;	/* after truncation, make IP/UDP lengths agree */
	bool recrc;		/* recompute the ICRC after the damage */
	bool bad_icrc;		/* flip one ICRC bit at the end */
	bool bad_ip_csum;
	int flip_bit;		/* >=0: flip this bit of the BTH.. part */
	uint16_t udp_dport;	/* 0: 4791 */
};

/* Where a frame is expected to end up, for the accounting. */
enum fz_fate {
	FZ_TO_DEVICE,		/* reaches sroce's UDP socket */
	FZ_IP_DROP,		/* dropped and counted by IP or UDP */
	FZ_NR_FATES,
};

struct fz {
	/* verbs */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	int gid_index;
	union ibv_gid mgid;
	struct fz_qp rc, uc, ud, ud_mc;
	/* wire */
	int tx_fd, rx_fd, mc_fd;
	int ifindex;
	uint8_t dev_mac[6], peer_mac[6];
	struct in_addr dev4, peer4;
	struct in6_addr dev6, peer6;
	uint16_t sport;
	/* run */
	uint64_t rng;
	uint64_t sent, send_err;
	uint64_t fate[FZ_NR_FATES];
	uint64_t family_sent[32];
	unsigned int family;	/* of the case being sent */
	unsigned int sweep_op, trunc_off;
	uint64_t completions, cqe_err, acks_seen;
	uint8_t frame[FZ_MAX_FRAME];
	int verbose;
	bool ud_no_recv;	/* flood mode: no receive WQE on f->ud */
};

/* pktfuzz.c: the xorshift64* generator, fatal errors */
uint64_t fz_rand(struct fz *f);
uint32_t fz_below(struct fz *f, uint32_t n);
void fz_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* frame.c */
uint32_t fz_crc32(uint32_t crc, const void *p, size_t len);
int fz_icrc_selftest(void);
unsigned int fz_hdrs_of(uint8_t opcode);
unsigned int fz_hdr_len(unsigned int hdrs);
int fz_build(struct fz *f, const struct fz_pkt *p, const struct fz_lie *l);
void fz_pkt_init(struct fz *f, struct fz_pkt *p, uint8_t opcode, uint32_t qpn);

/* verbs.c */
void fz_verbs_setup(struct fz *f, const char *dev);
void fz_verbs_maintain(struct fz *f);
void fz_verbs_teardown(struct fz *f);
void fz_sniff(struct fz *f);

/* flood.c */
int fz_flood(struct fz *f, unsigned long long frames, bool hold);

/* cases.c */
#define FZ_NR_FAMILIES 16
extern const char *const fz_family_names[FZ_NR_FAMILIES];
void fz_run_case(struct fz *f, unsigned int family);
unsigned int fz_pick_family(struct fz *f);
void fz_send(struct fz *f, const struct fz_pkt *p, const struct fz_lie *l,
	     enum fz_fate fate);

#endif /* PKTFUZZ_H */
