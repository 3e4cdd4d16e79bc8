// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pktfuzz: sends crafted RoCEv2 frames into a live sroce device.
 *
 *   pktfuzz -d sroce0 -t veth0 -i veth1 -4 10.0.0.1 -P 10.0.0.2 \
 *           -6 fd00::1 -Q fd00::2 -n 1000000 [-s SEED]
 *   pktfuzz ... -f FRAMES [-H]
 *
 * The device DEV sits on netdev TARGET; the frames leave through IFACE,
 * the other end of a veth pair, by AF_PACKET, so that they come in on the
 * device's receive path as if from the wire. pktfuzz plays the peer of
 * the device's live QPs (verbs.c), picks a case family for each case
 * (cases.c) and prints, at the end, how many frames it sent, how many of
 * them it expects the IP and UDP layers to drop and how many to reach
 * the device, per family. The same seed sends the same frames as long as
 * the device answers the same (PSNs are learnt from its answers).
 * With -f, pktfuzz floods the device with valid-looking frames instead
 * (flood.c).
 *
 * Copyright (c) 2026 The sroce authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "pktfuzz.h"

struct fz_opts {
	const char *dev, *iface, *target;
	const char *dev4, *peer4, *dev6, *peer6;
	unsigned long long frames, flood;
	uint64_t seed;
	bool hold;
};

void fz_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("pktfuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

uint64_t fz_rand(struct fz *f)
{
	return fuzz_rand(&f->rng);
}

uint32_t fz_below(struct fz *f, uint32_t n)
{
	return fuzz_below(&f->rng, n);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pktfuzz -d DEV -t TARGET -i IFACE -4 DEV4 -P PEER4 -6 DEV6 -Q PEER6\n"
		"               [-n FRAMES] [-s SEED] | [-f FRAMES [-H]]\n");
	exit(2);
}

static void parse_opts(int argc, char **argv, struct fz_opts *o)
{
	int c;

	o->frames = 20000;
	o->seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	while ((c = getopt(argc, argv, "d:t:i:4:P:6:Q:n:s:f:H")) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 't': o->target = optarg; break;
		case 'i': o->iface = optarg; break;
		case '4': o->dev4 = optarg; break;
		case 'P': o->peer4 = optarg; break;
		case '6': o->dev6 = optarg; break;
		case 'Q': o->peer6 = optarg; break;
		case 'n': o->frames = strtoull(optarg, NULL, 0); break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 'f': o->flood = strtoull(optarg, NULL, 0); break;
		case 'H': o->hold = true; break;
		default: usage();
		}
	}
	if (!o->dev || !o->target || !o->iface || !o->dev4 || !o->peer4 ||
	    !o->dev6 || !o->peer6 || optind != argc || (o->hold && !o->flood))
		usage();
	if (!o->seed)
		o->seed = 1;
}

static void get_mac(const char *ifname, uint8_t *mac)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr))
		fz_die("MAC of %s: %s", ifname, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
}

static int packet_socket(int ifindex, int proto)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(proto),
		.sll_ifindex = ifindex,
	};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(proto));
	int sz = 4 << 20;

	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		fz_die("AF_PACKET socket: %s", strerror(errno));
	if (proto) {
		int one = 1;

		/* the frames we send are no answers of the device */
		if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
			       sizeof(one)))
			fz_die("PACKET_IGNORE_OUTGOING: %s", strerror(errno));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	return fd;
}

/*
 * The device's netdev joins the multicast group in IP, so that IPv4
 * delivers the group's frames to the RoCEv2 UDP socket.
 */
static int join_group(struct fz *f, const char *target)
{
	struct ip_mreqn m = {
		.imr_multiaddr.s_addr = htonl(FZ_MCAST4),
		.imr_address = f->dev4,
		.imr_ifindex = if_nametoindex(target),
	};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m,
				 sizeof(m)))
		fz_die("IP_ADD_MEMBERSHIP on %s: %s", target, strerror(errno));
	return fd;
}

static void setup_wire(struct fz *f, const struct fz_opts *o)
{
	if (inet_pton(AF_INET, o->dev4, &f->dev4) != 1 ||
	    inet_pton(AF_INET, o->peer4, &f->peer4) != 1 ||
	    inet_pton(AF_INET6, o->dev6, &f->dev6) != 1 ||
	    inet_pton(AF_INET6, o->peer6, &f->peer6) != 1)
		fz_die("bad address");
	f->ifindex = if_nametoindex(o->iface);
	if (!f->ifindex)
		fz_die("no interface %s", o->iface);
	get_mac(o->target, f->dev_mac);
	get_mac(o->iface, f->peer_mac);
	f->tx_fd = packet_socket(f->ifindex, 0);
	f->rx_fd = packet_socket(f->ifindex, ETH_P_IP);
	f->mc_fd = join_group(f, o->target);
	f->sport = 0xc000 | fz_below(f, 0x4000);
}

static void report(const struct fz *f, double secs)
{
	const struct fz_qp *qs[] = { &f->rc, &f->uc, &f->ud, &f->ud_mc };
	static const char *const qn[] = { "rc", "uc", "ud", "ud_mc" };
	unsigned int i;

	printf("pktfuzz: sent=%llu send_err=%llu to_device=%llu ip_drop=%llu seconds=%.1f\n",
	       (unsigned long long)f->sent, (unsigned long long)f->send_err,
	       (unsigned long long)f->fate[FZ_TO_DEVICE],
	       (unsigned long long)f->fate[FZ_IP_DROP], secs);
	printf("pktfuzz: families");
	for (i = 0; i < FZ_NR_FAMILIES; i++)
		printf(" %s=%llu", fz_family_names[i],
		       (unsigned long long)f->family_sent[i]);
	printf("\npktfuzz: qps");
	for (i = 0; i < 4; i++)
		printf(" %s=%#x/revived=%u", qn[i], qs[i]->qpn, qs[i]->revived);
	printf("\npktfuzz: completions=%llu errors=%llu acks_seen=%llu\n",
	       (unsigned long long)f->completions,
	       (unsigned long long)f->cqe_err,
	       (unsigned long long)f->acks_seen);
}

static void run(struct fz *f, unsigned long long frames)
{
	unsigned long long cases = 0, next = 100000;

	while (f->sent < frames) {
		fz_run_case(f, fz_pick_family(f));
		if (++cases % 8 == 0)
			fz_sniff(f);
		if (cases % 32 == 0)
			fz_verbs_maintain(f);
		if (f->sent >= next) {
			fprintf(stderr, "pktfuzz: %llu frames\n", next);
			next += 100000;
		}
	}
}

/* -f: set up as for the fuzz, then flood (flood.c). */
static int flood_main(struct fz *f, const struct fz_opts *o)
{
	int rc;

	printf("pktfuzz: seed=%#llx flood=%llu device=%s via=%s\n",
	       (unsigned long long)o->seed, o->flood, o->dev, o->iface);
	fflush(stdout);
	f->ud_no_recv = true;
	setup_wire(f, o);
	fz_verbs_setup(f, o->dev);
	rc = fz_flood(f, o->flood, o->hold);
	fz_verbs_teardown(f);
	close(f->mc_fd);
	close(f->rx_fd);
	close(f->tx_fd);
	return rc;
}

int main(int argc, char **argv)
{
	static struct fz f;
	struct timespec t0, t1;
	struct fz_opts o = { 0 };

	parse_opts(argc, argv, &o);
	if (fz_icrc_selftest())
		fz_die("ICRC self-test failed: the reference CNP does not match");
	f.rng = o.seed;
	if (o.flood)
		return flood_main(&f, &o);
	printf("pktfuzz: seed=%#llx frames=%llu device=%s via=%s\n",
	       (unsigned long long)o.seed, o.frames, o.dev, o.iface);
	fflush(stdout);
	setup_wire(&f, &o);
	fz_verbs_setup(&f, o.dev);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run(&f, o.frames);
	/* let the device answer what is still queued, then reap it */
	usleep(200000);
	fz_verbs_maintain(&f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	report(&f, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	fz_verbs_teardown(&f);
	close(f.mc_fd);
	close(f.rx_fd);
	close(f.tx_fd);
	return 0;
}
