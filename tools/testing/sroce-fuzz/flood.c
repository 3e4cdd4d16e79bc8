// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pktfuzz -f N: a flood of valid-looking frames, as fast as AF_PACKET
 * takes them, for measuring what the device's receive queues pin.
 *
 * Three targets in turn, every frame well formed with a valid ICRC and
 * 256 bytes of payload, so that all of them pass the device's validation
 * and land in a QP's responder inbox:
 *
 *   gsi  UD SEND_ONLY to QP1 with the GSI Q_Key, which anyone may send
 *        to; the payload is a MAD (base version 1, SubnAdm, GetResp) with
 *        a transaction ID no agent owns, which the MAD layer drops
 *        without an answer;
 *   ud   UD SEND_ONLY to pktfuzz's own UD QP with its Q_Key; in flood
 *        mode that QP has no receive WQE posted, so each datagram is
 *        dropped (dropped_ud_msg) once its responder gets to it;
 *   rc   requests to the live RC QP, from the peer it is connected to:
 *        one WRITE_ONLY in four at the PSN the responder expects (with
 *        the live rkey, inside the MR, executed), the others SEND_ONLY
 *        and WRITE_ONLY duplicates of the 64 PSNs before it. None asks
 *        for an ACK, so the device answers nothing but the odd PSN
 *        sequence NAK, which fz_sniff() reads to follow the ePSN.
 *
 * Frames go out in batches by sendmmsg(); "sent" counts the frames the
 * veth took, those it dropped (nobufs) included. The output names the
 * frames sent to each target and their lengths, so that the scenario can
 * work out what a full inbox holds; with -H pktfuzz keeps its QPs after the
 * flood until standard input reaches EOF, so that the inboxes drain
 * into live QPs while memory is measured.
 *
 * Copyright (c) 2026 The sroce authors
 */
#define _GNU_SOURCE		/* sendmmsg() */
#include <errno.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pktfuzz.h"

#define FL_BATCH	32
#define FL_PAYLOAD	256
#define FL_DUP_SPAN	64
#define FL_GSI_QPN	1
#define FL_GSI_QKEY	0x80010000u

enum { FL_GSI, FL_UD, FL_RC_NEXT, FL_RC_DUP, FL_NR };

static const char *const fl_names[FL_NR] = { "gsi", "ud", "rc_next", "rc_dup" };

struct fl_batch {
	uint8_t buf[FL_BATCH][FZ_MAX_FRAME];
	struct iovec iov[FL_BATCH];
	struct mmsghdr msg[FL_BATCH];
	unsigned int kind[FL_BATCH];
	unsigned int n;
};

struct fl_run {
	struct sockaddr_ll to;
	uint64_t sent[FL_NR];
	int len[FL_NR];		/* frame length, Ethernet header included */
	uint64_t nobufs;	/* sent, and dropped by the veth */
	uint64_t rc_sends;
	unsigned int dup;
};

static const struct fz_lie fl_no_lie = { .flip_bit = -1 };

static double fl_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * A MAD the MAD layer validates and then drops without an answer: a
 * response (GetResp of SubnAdm) whose transaction ID no agent owns.
 */
static void fl_mad(struct fz *f, struct fz_pkt *p)
{
	static uint8_t mad[FL_PAYLOAD];

	mad[0] = 1;			/* base version */
	mad[1] = 0x03;			/* SubnAdm */
	mad[2] = 2;			/* class version */
	mad[3] = 0x81;			/* GetResp */
	memset(mad + 8, 0xff, 4);	/* TID, high half: no agent's */
	mad[15] = 1;
	fz_pkt_init(f, p, OP_UD_SEND_ONLY, FL_GSI_QPN);
	p->qkey = FL_GSI_QKEY;
	p->src_qp = FL_GSI_QPN;
	p->psn = fz_rand(f) & 0xffffff;
	p->paylen = FL_PAYLOAD;
	p->payload = mad;
}

static int fl_build(struct fz *f, struct fl_run *r, unsigned int kind)
{
	struct fz_qp *q = &f->rc;
	struct fz_pkt p;

	switch (kind) {
	case FL_GSI:
		fl_mad(f, &p);
		break;
	case FL_UD:
		fz_pkt_init(f, &p, OP_UD_SEND_ONLY, f->ud.qpn);
		p.src_qp = f->ud.peer_qpn;
		p.psn = fz_rand(f) & 0xffffff;
		p.paylen = FL_PAYLOAD;
		break;
	case FL_RC_NEXT:
		fz_pkt_init(f, &p, OP_RC_WRITE_ONLY, q->qpn);
		p.psn = q->rq_psn;
		q->rq_psn = (q->rq_psn + 1) & 0xffffff;
		p.va = (uintptr_t)f->buf + fz_below(f, FZ_MR_LEN / FL_PAYLOAD) *
		       FL_PAYLOAD;
		p.dma_len = p.paylen = FL_PAYLOAD;
		break;
	default:
		/* alternately a SEND and a WRITE the responder has seen */
		fz_pkt_init(f, &p, r->rc_sends++ & 1 ? OP_RC_SEND_ONLY :
			    OP_RC_WRITE_ONLY, q->qpn);
		p.psn = (q->rq_psn - 1 - r->dup++ % FL_DUP_SPAN) & 0xffffff;
		p.dma_len = p.paylen = FL_PAYLOAD;
	}
	return fz_build(f, &p, &fl_no_lie);
}

static void fl_add(struct fz *f, struct fl_run *r, struct fl_batch *b,
		   unsigned int kind)
{
	unsigned int i = b->n++;
	int len = fl_build(f, r, kind);

	r->len[kind] = len;
	memcpy(b->buf[i], f->frame, len);
	b->iov[i].iov_base = b->buf[i];
	b->iov[i].iov_len = len;
	memset(&b->msg[i], 0, sizeof(b->msg[i]));
	b->msg[i].msg_hdr.msg_name = &r->to;
	b->msg[i].msg_hdr.msg_namelen = sizeof(r->to);
	b->msg[i].msg_hdr.msg_iov = &b->iov[i];
	b->msg[i].msg_hdr.msg_iovlen = 1;
	b->kind[i] = kind;
}

/*
 * Send the batch. ENOBUFS is a frame the veth took and dropped (its
 * peer's softnet backlog was full; counted in veth1's tx_dropped): it
 * counts as sent, and as nobufs. The error of a frame after the first of
 * a call comes back from the next call, which then sends nothing, so the
 * frame is not sent twice. Any other refusal is a send_err.
 */
static void fl_flush(struct fz *f, struct fl_run *r, struct fl_batch *b)
{
	unsigned int off = 0, i;
	int n;

	while (off < b->n) {
		n = sendmmsg(f->tx_fd, b->msg + off, b->n - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && errno == ENOBUFS) {
				r->nobufs++;
				r->sent[b->kind[off]]++;
				f->sent++;
			} else {
				f->send_err++;
			}
			off++;
			continue;
		}
		for (i = off; i < off + (unsigned int)n; i++)
			r->sent[b->kind[i]]++;
		f->sent += n;
		off += n;
	}
	b->n = 0;
}

static unsigned int fl_next_kind(uint64_t i)
{
	if (i % 3 == 0)
		return FL_GSI;
	if (i % 3 == 1)
		return FL_UD;
	return (i / 3) % 4 == 0 ? FL_RC_NEXT : FL_RC_DUP;
}

static void fl_report(const struct fz *f, const struct fl_run *r, double secs)
{
	unsigned int k;

	printf("pktfuzz: flood sent=%llu nobufs=%llu send_err=%llu seconds=%.1f rate=%.0f\n",
	       (unsigned long long)f->sent, (unsigned long long)r->nobufs,
	       (unsigned long long)f->send_err, secs,
	       secs > 0 ? f->sent / secs : 0);
	printf("pktfuzz: flood targets");
	for (k = 0; k < FL_NR; k++)
		printf(" %s=%llu", fl_names[k], (unsigned long long)r->sent[k]);
	printf("\npktfuzz: flood lengths");
	for (k = 0; k < FL_NR; k++)
		printf(" %s=%d", fl_names[k], r->len[k]);
	printf("\npktfuzz: flood qps gsi=%#x ud=%#x rc=%#x\n", FL_GSI_QPN,
	       f->ud.qpn, f->rc.qpn);
	fflush(stdout);
}

/* -H: keep the QPs until standard input reaches EOF, reading answers. */
static void fl_hold(struct fz *f)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char b[256];

	printf("pktfuzz: flood holding until EOF on stdin\n");
	fflush(stdout);
	for (;;) {
		fz_sniff(f);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (read(0, b, sizeof(b)) <= 0)
			break;
	}
}

int fz_flood(struct fz *f, unsigned long long frames, bool hold)
{
	static struct fl_batch b;
	struct fl_run r = {
		.to = {
			.sll_family = AF_PACKET,
			.sll_ifindex = f->ifindex,
			.sll_halen = 6,
		},
	};
	uint64_t i;
	double t0, t1;

	memcpy(r.to.sll_addr, f->dev_mac, 6);
	/* let setup's traffic settle: the scenario samples its baseline now */
	usleep(1000000);
	fz_sniff(f);
	t0 = fl_now();
	printf("pktfuzz: flood start t=%.3f frames=%llu\n", t0, frames);
	fflush(stdout);
	for (i = 0; i < frames; i++) {
		fl_add(f, &r, &b, fl_next_kind(i));
		if (b.n == FL_BATCH) {
			fl_flush(f, &r, &b);
			fz_sniff(f);
		}
	}
	fl_flush(f, &r, &b);
	t1 = fl_now();
	printf("pktfuzz: flood end t=%.3f\n", t1);
	fl_report(f, &r, t1 - t0);
	if (hold)
		fl_hold(f);
	return f->sent == frames ? 0 : 1;
}
