// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_cm_scale: many rdma_cm connections to one listener, for the scale
 * scenario (sroce-vm scenarios/scale.sh).
 *
 *   sroce_cm_scale ADDR PORT NCONNS WINDOW
 *
 * One process listens on ADDR:PORT and connects NCONNS RC QPs to itself
 * through the IB CM, at most WINDOW connection attempts in flight at
 * once: a client that fires every request at once (ucmatose) makes the
 * last ones wait behind all the others' setup, longer than the CM's
 * retries last on a slow kernel, whatever the server does. Then:
 *
 *   connect      NCONNS connections, each ESTABLISHED on both sides; the
 *                client's private data carries its index, which the
 *                server's side of the connection keeps
 *   traffic      on every connection a SEND of MSG bytes carrying a
 *                pattern of its index, client to server, WINDOW in flight;
 *                every completion a success, every byte checked where the
 *                server's side received it
 *   disconnect   every connection disconnected, both sides told, every QP
 *                and cm_id destroyed
 *
 * Progress at every tenth of a phase, with the time per 1,000 steps of
 * that tenth, so that a cost that grows with the connections shows.
 * Summary line:
 *
 *   sroce_cm_scale: conns=N connect=..s traffic=..s disconnect=..s
 *   result=PASS
 *
 * The first failure ends the run (result=FAIL, exit status 1), saying the
 * phase, the connection and what it saw.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bytes of each SEND. */
#define MSG		64
/* Completion queues shared by all QPs, and the room in each. */
#define NCQ		8
#define CQ_DEPTH	8192
/* Milliseconds for address and route resolution. */
#define RESOLVE_MS	5000
/* Seconds without any event or completion before a phase gives up. */
#define STALL_S		120

struct conn {
	struct rdma_cm_id *id;
	unsigned int index;
	int server;		/* the listener's side of the connection */
	int established;
	int disconnected;
};

static const char *phase = "setup";
static unsigned long nconns, window;
static struct rdma_event_channel *ch;
static struct rdma_cm_id *listener;
static struct ibv_pd *pd;
static struct ibv_cq *cq[NCQ];
static struct ibv_mr *mr;
static unsigned char *buf;	/* nconns send slots, then nconns receive slots */
static struct conn *cli, *srv;	/* by index */
static struct sockaddr_storage dst;
static int failures;
static double t_connect, t_traffic, t_disconnect;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void summary(void)
{
	printf("sroce_cm_scale: conns=%lu connect=%.2fs traffic=%.2fs disconnect=%.2fs result=%s\n",
	       nconns, t_connect, t_traffic, t_disconnect,
	       failures ? "FAIL" : "PASS");
}

static void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	printf("sroce_cm_scale: FAILED in %s: ", phase);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
	summary();
	exit(1);
}

/* Progress: at every tenth of @total, the seconds per 1,000 of that tenth. */
static void progress(unsigned long done, unsigned long total, double t0,
		     double *last)
{
	unsigned long step = total >= 10 ? total / 10 : 1;
	double t = now();

	if (done % step && done != total)
		return;
	printf("sroce_cm_scale: %s %lu/%lu at %.2fs (%.3fs per 1000)\n", phase,
	       done, total, t - t0, (t - *last) * 1000.0 / step);
	fflush(stdout);
	*last = t;
}

static unsigned char pattern(unsigned int index, unsigned int i)
{
	return (unsigned char)(index * 7 + i * 13 + 1);
}

/* The QP of one side of a connection, with one receive posted. */
static void conn_qp(struct conn *c)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq[c->index % NCQ],
		.recv_cq = cq[c->index % NCQ],
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)(buf + (nconns + c->index) * MSG),
		.length = MSG,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = c->index, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (rdma_create_qp(c->id, pd, &attr))
		die("conn %u: rdma_create_qp: %s", c->index, strerror(errno));
	if (c->server && ibv_post_recv(c->id->qp, &wr, &bad))
		die("conn %u: ibv_post_recv: %s", c->index, strerror(errno));
}

/* Start client connection @i: its address is resolved first. */
static void conn_start(unsigned long i)
{
	struct conn *c = &cli[i];

	c->index = i;
	if (rdma_create_id(ch, &c->id, c, RDMA_PS_TCP))
		die("conn %lu: rdma_create_id: %s", i, strerror(errno));
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst,
			      RESOLVE_MS))
		die("conn %lu: rdma_resolve_addr: %s", i, strerror(errno));
}

/* A connection request on the listener: its side of connection i. */
static void conn_request(struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					  .initiator_depth = 1 };
	uint32_t index;
	struct conn *c;

	if (ev->param.conn.private_data_len < sizeof(index))
		die("a request without the client's index");
	memcpy(&index, ev->param.conn.private_data, sizeof(index));
	if (index >= nconns || srv[index].id)
		die("a request for connection %u, out of range or twice",
		    index);
	c = &srv[index];
	c->index = index;
	c->server = 1;
	c->id = ev->id;
	c->id->context = c;
	conn_qp(c);
	if (rdma_accept(c->id, &param))
		die("conn %u: rdma_accept: %s", index, strerror(errno));
}

/* The next rdma_cm event, acknowledged after @fn handled it. */
static void next_event(void (*fn)(struct rdma_cm_event *ev))
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, STALL_S * 1000) <= 0)
		die("no rdma_cm event for %d s", STALL_S);
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event: %s", strerror(errno));
	fn(ev);
	rdma_ack_cm_event(ev);
}

static unsigned long up;	/* sides ESTABLISHED */
static unsigned long down;	/* sides DISCONNECTED */

static void connect_event(struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					  .initiator_depth = 1,
					  .retry_count = 7,
					  .rnr_retry_count = 7 };
	struct conn *c = ev->id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		conn_request(ev);
		return;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(c->id, RESOLVE_MS))
			die("conn %u: rdma_resolve_route: %s", c->index,
			    strerror(errno));
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		conn_qp(c);
		param.private_data = &c->index;
		param.private_data_len = sizeof(c->index);
		if (rdma_connect(c->id, &param))
			die("conn %u: rdma_connect: %s", c->index,
			    strerror(errno));
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established = 1;
		up++;
		return;
	default:
		die("conn %u (%s side): %s, status %d", c ? c->index : 0,
		    c && c->server ? "server" : "client",
		    rdma_event_str(ev->event), ev->status);
	}
}

/* connect: NCONNS connections, WINDOW attempts in flight. */
static void do_connect(void)
{
	unsigned long started = 0, done = 0;
	double t0 = now(), last = t0;

	phase = "connect";
	while (done < nconns) {
		/* a client is up once its own side is: count those */
		while (started < nconns && started - done < window)
			conn_start(started++);
		next_event(connect_event);
		while (done < started && cli[done].established &&
		       srv[done].established) {
			done++;
			progress(done, nconns, t0, &last);
		}
	}
	t_connect = now() - t0;
	if (up != 2 * nconns)
		die("%lu sides established, not %lu", up, 2 * nconns);
}

/* One completion of any CQ, a success; @idle: when the last one came. */
static void reap(struct ibv_wc *wc, double *idle)
{
	int i, n;

	for (;;) {
		for (i = 0; i < NCQ; i++) {
			n = ibv_poll_cq(cq[i], 1, wc);
			if (n < 0)
				die("ibv_poll_cq: %d", n);
			if (!n)
				continue;
			if (wc->wr_id >= nconns)
				die("a completion for connection %llu",
				    (unsigned long long)wc->wr_id);
			if (wc->status != IBV_WC_SUCCESS)
				die("conn %llu: %s on a %s",
				    (unsigned long long)wc->wr_id,
				    ibv_wc_status_str(wc->status),
				    wc->opcode & IBV_WC_RECV ? "receive" : "send");
			*idle = now();
			return;
		}
		if (now() - *idle > STALL_S)
			die("no completion for %d s", STALL_S);
	}
}

/* Is connection @i's message where the server's side received it? */
static void check_msg(unsigned int i, unsigned int len)
{
	const unsigned char *got = buf + (nconns + i) * MSG;
	unsigned int k;

	if (len != MSG)
		die("conn %u: %u bytes received, not %d", i, len, MSG);
	for (k = 0; k < MSG; k++)
		if (got[k] != pattern(i, k))
			die("conn %u: byte %u is 0x%02x, not 0x%02x", i, k,
			    got[k], pattern(i, k));
}

/* Post connection @i's SEND, from its send slot. */
static void send_msg(unsigned long i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(buf + i * MSG),
			       .length = MSG, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (ibv_post_send(cli[i].id->qp, &wr, &bad))
		die("conn %lu: ibv_post_send: %s", i, strerror(errno));
}

/* traffic: a SEND on every connection, WINDOW in flight. */
static void do_traffic(void)
{
	unsigned long sent = 0, recvd = 0, acked = 0;
	double t0 = now(), last = t0, idle = t0;
	unsigned int i, k;
	struct ibv_wc wc;

	phase = "traffic";
	for (i = 0; i < nconns; i++)
		for (k = 0; k < MSG; k++)
			buf[i * MSG + k] = pattern(i, k);
	while (recvd < nconns || acked < nconns) {
		while (sent < nconns && sent - acked < window)
			send_msg(sent++);
		reap(&wc, &idle);
		if (wc.opcode & IBV_WC_RECV) {
			check_msg(wc.wr_id, wc.byte_len);
			recvd++;
			continue;
		}
		acked++;
		progress(acked, nconns, t0, &last);
	}
	t_traffic = now() - t0;
}

static void disconnect_event(struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;

	/* the IB CM's time-wait of a side not destroyed yet ended */
	if (ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)
		return;
	if (ev->event != RDMA_CM_EVENT_DISCONNECTED)
		die("conn %u (%s side): %s, status %d", c->index,
		    c->server ? "server" : "client",
		    rdma_event_str(ev->event), ev->status);
	if (c->disconnected++)
		die("conn %u: disconnected twice", c->index);
	/* the side that got the DREQ answers it (a DREP), or it times out */
	if (c->server && rdma_disconnect(c->id))
		die("conn %u: rdma_disconnect of the server's side: %s",
		    c->index, strerror(errno));
	down++;
}

/* disconnect: every connection, then every QP and cm_id destroyed. */
static void do_disconnect(void)
{
	double t0 = now(), last = t0;
	unsigned long i, started = 0, done = 0;

	phase = "disconnect";
	while (done < nconns) {
		while (started < nconns && started - done < window)
			if (rdma_disconnect(cli[started++].id))
				die("conn %lu: rdma_disconnect: %s", started - 1,
				    strerror(errno));
		next_event(disconnect_event);
		while (done < started && cli[done].disconnected &&
		       srv[done].disconnected) {
			for (i = 0; i < 2; i++) {
				struct conn *c = i ? &srv[done] : &cli[done];

				rdma_destroy_qp(c->id);
				if (rdma_destroy_id(c->id))
					die("conn %lu: rdma_destroy_id: %s",
					    done, strerror(errno));
			}
			done++;
			progress(done, nconns, t0, &last);
		}
	}
	t_disconnect = now() - t0;
}

static void setup(const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST,
				  .ai_socktype = SOCK_STREAM }, *ai;
	int i, err;

	err = getaddrinfo(addr, port, &hints, &ai);
	if (err)
		die("%s: %s", addr, gai_strerror(err));
	memcpy(&dst, ai->ai_addr, ai->ai_addrlen);
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, ai->ai_addr) ||
	    rdma_listen(listener, 1024))
		die("listening on %s:%s: %s", addr, port, strerror(errno));
	freeaddrinfo(ai);
	if (!listener->verbs)
		die("%s is not an RDMA device's address", addr);
	pd = ibv_alloc_pd(listener->verbs);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	for (i = 0; i < NCQ; i++) {
		cq[i] = ibv_create_cq(listener->verbs, CQ_DEPTH, NULL, NULL, 0);
		if (!cq[i])
			die("ibv_create_cq: %s", strerror(errno));
	}
	buf = calloc(2 * nconns, MSG);
	cli = calloc(nconns, sizeof(*cli));
	srv = calloc(nconns, sizeof(*srv));
	if (!buf || !cli || !srv)
		die("out of memory for %lu connections", nconns);
	mr = ibv_reg_mr(pd, buf, 2 * nconns * MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	int i;

	if (argc != 5) {
		fprintf(stderr, "usage: %s ADDR PORT NCONNS WINDOW\n", argv[0]);
		return 2;
	}
	nconns = strtoul(argv[3], NULL, 0);
	window = strtoul(argv[4], NULL, 0);
	if (!nconns || !window || nconns > NCQ * CQ_DEPTH / 2) {
		fprintf(stderr, "%s: NCONNS 1..%d, WINDOW at least 1\n",
			argv[0], NCQ * CQ_DEPTH / 2);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup(argv[1], argv[2]);
	do_connect();
	do_traffic();
	do_disconnect();
	ibv_dereg_mr(mr);
	for (i = 0; i < NCQ; i++)
		ibv_destroy_cq(cq[i]);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(ch);
	summary();
	return 0;
}
