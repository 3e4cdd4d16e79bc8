#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Congestion control (DCQCN, transport/sroce_dcqcn.c) at work: sroce0
# sends to sroce1 through a bottleneck slower than sroce, whose queue
# marks ECN instead of dropping early, and every byte is checked by
# sroce_integrity (RC WRITE, 64 KiB messages, path MTU 4096). The
# bottleneck is a hop of its own, a router in network namespace "sw":
#
#   sroce0   veth0 10.0.1.1 -- sw0 10.0.1.254 [sw] sw1 10.0.2.254 -- veth1 10.0.2.2   sroce1
#   (requester, reaction point)       tbf RATE, RED ecn ->  (responder, notification point)
#
# so that what it drops is lost on the way, as in a switch. A queue on
# sroce0's own netdev would not do: a packet it refuses fails at once
# (-ENOBUFS) and sroce sends it again without a retransmission.
# The ACKs and CNPs come back unshaped. RATE is a fifth of what sroce
# moves through the router with nothing in its way on this kernel,
# measured first (congestion.rate_mbit=N on the kernel command line sets
# it instead): with a third or a quarter, other guests that took the
# host's CPUs from this one during a run left sroce itself, not the
# bottleneck, the slower of the two. veth0 does not take sroce's trains
# whole (ethtool tx-gso-list off), so they reach the router as packets,
# and the token bucket holds 1 ms of its rate (at least 16 KiB): like a
# switch's port, the bottleneck cannot save up capacity it did not use
# and spend it later. (With 10 ms, a flow ran 10 to 30% above the rate
# for tens of ms before a queue formed and RED marked anything: DCQCN
# heard of the congestion late, cut a dozen times in a row and the
# goodput sagged to 83-87%.) RED averages the queue over a few
# packets (as a switch marks on the queue it has, not a slow average),
# marks CE between its thresholds (1 and 5 ms of queue) and, being
# ECN-capable, marks instead of dropping above them too; only a queue
# over its hard limit (40 ms, at most 256 KiB) drops. The limit is below
# what one QP keeps in flight (16 x 64 KiB), so a sender that does not
# slow down overflows it.
#
#   1. defaults: one flow, every default of /sys/class/infiniband/*/cc/.
#      CNPs must be sent and handled and the rate cut. Its goodput,
#      drops and retransmissions are reported, not judged: the defaults
#      are a RoCE NIC's, for links a thousand times faster, and at this
#      bottleneck the rate swings from 1 Mbit/s (rp_min_rate) to ten
#      times the bottleneck several times a second (see scaled_cc()).
#   2. cc-on: the same with the timers and steps scaled to the
#      bottleneck (scaled_cc(); congestion.cc=NAME=VALUE,... adds more).
#      CNPs sent, handled and the rate cut; qdisc drops at most one in
#      FEW_DROPS (200) packets (they come when the queue first fills: a
#      flow starts at sroce's full speed, and its first CNP comes a
#      queue later), at most FEW (10) retransmission rounds; the goodput
#      of its second half at least 85% of the bottleneck.
#   3. cc-off: the same with rp_enable=0 on sroce0, the sending device:
#      the wire, the queue, the marks and the CNPs are as in 2. (sroce1
#      still sends them, sroce0 counts them in cnp_rcvd), only the
#      reaction is gone, so the difference is the reaction point's.
#      (ecn_enable=0 would turn RED's marks into early drops: another
#      run altogether.) At least ten times cc-on's drops and
#      retransmissions, and at least one of each.
#   4. two: a second flow joins the first a quarter into the run, scaled
#      parameters; over the last half of their common time their
#      goodputs' Jain index must be at least 0.9, and together at least
#      70% of the bottleneck, with at most a tenth of the drops of the
#      one flow of 3. Two flows whose rates rise together overflow the
#      queue now and then, and each drop costs both go-back-N rounds:
#      their retransmissions are reported, not judged.
#
# Every byte of every run is checked by sroce_integrity. Below a
# bottleneck of 25 Mbit/s (the debug kernel's is 5 to 16 Mbit/s) the
# figures of 2.-4. (goodput, drops, retransmissions, fairness) are
# reported and not judged, see JUDGE below.
#
# Results (in $SROCE_RESULTS): congestion-summary.txt (one line a run and
# the verdicts); rate-RUN.csv, each flow's goodput per interval
# (t_s,flow,qpn,mbit_s: t from the start of the run); dcqcn-RUN.csv, the
# sroce:sroce_dcqcn tracepoint (t_s,flow,qpn,stage,rc_mbit_s,rt_mbit_s,
# alpha: every cut and increase event of the reaction points);
# qdisc-RUN.txt, tc -s of the bottleneck after the run; counters-RUN.txt,
# the counters' growth; integ-*.txt. tools/testing/sroce-vm/
# congestion-plot.py RESULTS-DIR [PNG] draws the curves on the host.
#
# The small volume runs shorter: 3, 8, 8, 8 and 14 s instead of 4, 14, 14,
# 14 and 24 (congestion.one=S and congestion.two=S set the last two).
#
# sroce-vm: build-prog sroce-integrity
# sroce-vm: timeout 600

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=congestion
cd "$SROCE_RESULTS" || exit 1

# cmdline_var NAME DEFAULT: congestion.NAME=VALUE (sroce_cmdline_var)
cmdline_var() { sroce_cmdline_var congestion "$@"; }

PROG=${SROCE_PROGS:?}/sroce_integrity
[ -x "$PROG" ] || sroce_fail "$PROG was not built"

# Seconds of each run; the second flow of "two" joins JOIN seconds in.
MEASURE=4 ONE=14 TWO=24
if sroce_small; then
	MEASURE=3 ONE=8 TWO=14
fi
ONE=$(cmdline_var one "$ONE")
TWO=$(cmdline_var two "$TWO")
JOIN=$((TWO / 4))
RATE_MBIT=$(cmdline_var rate_mbit "")
# "Few" retransmissions (rounds of them: the requester's
# completer_retry_err, whatever started them: a sequence NAK, counted in
# rcvd_seq_err, or a timeout) for a flow under congestion control; few
# qdisc drops are at most one in FEW_DROPS of the packets it passed.
FEW=$(cmdline_var few 10)
FEW_DROPS=$(cmdline_var few_drops 200)
# RED's thresholds in us of queue at the bottleneck's rate
RED_MIN_US=$(cmdline_var red_min_us 1000)
RED_MAX_US=$(cmdline_var red_max_us 5000)
# the token bucket's depth in us at the bottleneck's rate
TBF_BURST_US=$(cmdline_var tbf_burst_us 1000)
PERIOD_MS=500
TRACE=/sys/kernel/tracing
STATS=(ecn_marked_rcvd cnp_sent cnp_rcvd cnp_handled rp_rate_decreases
       completer_retry_err rcvd_seq_err out_of_seq_request duplicate_request
       sent_pkts sent_gso)

failed=()
SUMMARY=()
declare -A C

# expect WHAT COMMAND...: a verdict line in the summary, a failure unless
# COMMAND succeeds
expect() {
	local what=$1
	shift
	if "$@"; then
		SUMMARY+=("ok: $what")
	else
		SUMMARY+=("FAILED: $what")
		failed+=("$what")
	fi
	sroce_log "${SUMMARY[-1]}"
}

# counters: every counter of STATS, both devices, into C[DEV.NAME]
counters() {
	local d n
	for d in sroce0 sroce1; do
		for n in "${STATS[@]}"; do
			read -r "C[$d.$n]" <"/sys/class/infiniband/$d/ports/1/hw_counters/$n"
		done
	done
}

# deltas RUN: the growth of every counter since counters() was last
# called, "dev.name delta" lines into counters-RUN.txt and DELTA[]
declare -A DELTA
deltas() {
	local d n v
	for d in sroce0 sroce1; do
		for n in "${STATS[@]}"; do
			read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/$n"
			DELTA[$d.$n]=$((v - ${C[$d.$n]}))
		done
	done
	for n in "${!DELTA[@]}"; do echo "$n ${DELTA[$n]}"; done | sort >"counters-$1.txt"
}

# integ TAG ARGS...: sroce_integrity from sroce0 to sroce1 in the
# background (PID in INTEG_PID), WRITE of 64 KiB messages, a progress
# line every PERIOD_MS; output in integ-TAG.txt
integ() {
	local tag=$1
	shift
	"$PROG" -a sroce0 -b sroce1 -g "$G0" -G "$G1" -o write -m 4096 -s 64K \
		-n 64G -P "$PERIOD_MS" -w 60 -t "$ACK_TIMEOUT" "$@" >"integ-$tag.txt" 2>&1 &
	INTEG_PID=$!
}

# integ_wait TAG PID: wait for it; a failure unless it passed
integ_wait() {
	local rc=0
	wait "$2" || rc=$?
	grep '^sroce_integrity: op=' "integ-$1.txt" || true
	if [ "$rc" != 0 ]; then
		tail -n 5 "integ-$1.txt"
		failed+=("$1: sroce_integrity exit $rc")
	fi
}

# field FILE NAME: a key=value field of FILE's summary line
field() {
	awk -v k="$2=" '/^sroce_integrity: op=/ {
		for (i = 2; i <= NF; i++)
			if (index($i, k) == 1) v = substr($i, length(k) + 1)
	}
	END { print v }' "$1"
}

# topology: the two devices and the router between them (see above)
topology() {
	local m0 m1 s0 s1 c
	sroce_modprobe veth
	/usr/sbin/ip netns add sw
	/usr/sbin/ip link add veth0 type veth peer name sw0 netns sw
	/usr/sbin/ip link add veth1 type veth peer name sw1 netns sw
	/usr/sbin/ip addr add 10.0.1.1/24 dev veth0
	/usr/sbin/ip addr add 10.0.2.2/24 dev veth1
	/usr/sbin/ip -n sw addr add 10.0.1.254/24 dev sw0
	/usr/sbin/ip -n sw addr add 10.0.2.254/24 dev sw1
	for c in veth0 veth1; do
		/usr/sbin/ip link set "$c" mtu 9000 up
	done
	# veth0 takes no train whole (SKB_GSO_FRAGLIST): the stack cuts
	# sroce's trains into their packets on the way out, as a NIC sends
	# them, and the bottleneck queues and marks each packet
	/usr/sbin/ethtool -K veth0 tx-gso-list off >/dev/null ||
		sroce_fail "ethtool -K veth0 tx-gso-list off"
	for c in sw0 sw1; do
		/usr/sbin/ip -n sw link set "$c" mtu 9000 up
	done
	/usr/sbin/ip -n sw link set lo up
	# Each flow's packets on one CPU into sroce1: a veth hands a packet
	# to the backlog of the CPU it is sent from, and the bottleneck's
	# qdisc runs on either vCPU, so packets of one QP overtook each
	# other (out_of_seq_request, and a go-back-N round each) with two
	# flows and no drop. RPS on veth1 queues them by their UDP ports
	# instead. (RPS on every hop cost the paced senders more CPU than
	# the two vCPUs of a loaded host had to spare.)
	printf '%x\n' $(((1 << $(nproc)) - 1)) >/sys/class/net/veth1/queues/rx-0/rps_cpus
	sroce_wait_link_up veth0
	sroce_wait_link_up veth1
	m0=$(cat /sys/class/net/veth0/address)
	m1=$(cat /sys/class/net/veth1/address)
	s0=$(/usr/sbin/ip -n sw -br link show sw0 | awk '{ print $3 }')
	s1=$(/usr/sbin/ip -n sw -br link show sw1 | awk '{ print $3 }')
	/usr/sbin/ip neigh replace 10.0.1.254 lladdr "$s0" dev veth0 nud permanent
	/usr/sbin/ip neigh replace 10.0.2.254 lladdr "$s1" dev veth1 nud permanent
	/usr/sbin/ip -n sw neigh replace 10.0.1.1 lladdr "$m0" dev sw0 nud permanent
	/usr/sbin/ip -n sw neigh replace 10.0.2.2 lladdr "$m1" dev sw1 nud permanent
	# Both addresses are local here: a route per device through the
	# router (the lookup names the GID's netdev as oif, so each device
	# takes its own), and packets from a local source accepted.
	/usr/sbin/ip route add 10.0.2.0/24 via 10.0.1.254 dev veth0 metric 100
	/usr/sbin/ip route add 10.0.1.0/24 via 10.0.2.254 dev veth1 metric 100
	for c in all veth0 veth1; do
		sysctl -qw "net.ipv4.conf.$c.accept_local=1" "net.ipv4.conf.$c.rp_filter=0"
	done
	/usr/sbin/ip netns exec sw sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.sw0.rp_filter=0 \
		net.ipv4.conf.sw1.rp_filter=0
	rdma link add sroce0 type sroce netdev veth0 || sroce_fail "rdma link add sroce0"
	rdma link add sroce1 type sroce netdev veth1 || sroce_fail "rdma link add sroce1"
	sroce_wait_rdma_ready sroce0
	sroce_wait_rdma_ready sroce1
}

# bottleneck: tbf at RATE_MBIT on the router's way to sroce1 (sw1) with
# RED (ECN) in it, new (its counters at zero)
bottleneck() {
	local bps=$((RATE_MBIT * 125000)) min max limit burst tburst
	/usr/sbin/tc -n sw qdisc del dev sw1 root 2>/dev/null || true
	# thresholds of 1 and 5 ms of queue, at least 2 and 6 packets;
	# the hard limit at 40 ms, at most 256 KiB (a quarter of what one
	# QP keeps in flight: at 512 KiB a flow without congestion control
	# did not always overflow it), and at least 64 KiB over the upper
	# threshold
	min=$((bps * RED_MIN_US / 1000000)) max=$((bps * RED_MAX_US / 1000000))
	limit=$((bps / 25))
	# the token bucket's depth: TBF_BURST_US at the rate (see the top)
	tburst=$((bps * TBF_BURST_US / 1000000))
	[ "$tburst" -ge 16384 ] || tburst=16384
	[ "$min" -ge 8400 ] || min=8400
	[ "$max" -ge $((min + 16800)) ] || max=$((min + 16800))
	[ "$limit" -le 262144 ] || limit=262144
	[ "$limit" -gt $((max + 65536)) ] || limit=$((max + 65536))
	# tc's least burst for these thresholds: an average over ~4 packets
	burst=$((min / 4200 + 1))
	QDISC="tbf rate ${RATE_MBIT}mbit burst $tburst latency 100ms;"
	QDISC+=" red limit $limit min $min max $max avpkt 4200 burst $burst"
	QDISC+=" bandwidth ${RATE_MBIT}mbit probability 1 ecn"
	/usr/sbin/tc -n sw qdisc add dev sw1 root handle 1: tbf \
		rate "${RATE_MBIT}mbit" burst "$tburst" latency 100ms ||
		sroce_fail "tc qdisc add tbf"
	/usr/sbin/tc -n sw qdisc add dev sw1 parent 1:1 handle 10: red \
		limit "$limit" min "$min" max "$max" avpkt 4200 burst "$burst" \
		bandwidth "${RATE_MBIT}mbit" probability 1 ecn ||
		sroce_fail "tc qdisc add red"
}

# qdisc_stats RUN: tc -s of the bottleneck into qdisc-RUN.txt; DROPS (the
# root's dropped, its child's included), MARKS (RED's marked), SENT and
# PKTS (the bytes and packets it passed, retransmissions and headers
# included)
qdisc_stats() {
	/usr/sbin/tc -n sw -s qdisc show dev sw1 >"qdisc-$1.txt"
	read -r DROPS MARKS SENT PKTS < <(awk '
		/^qdisc/ { kind = $2 }
		kind == "tbf" && /^ Sent/ { b = $2; p = $4 }
		kind == "tbf" && /dropped/ { s = $0; sub(/.*dropped /, "", s); sub(/,.*/, "", s); d = s }
		/marked/ { for (i = 1; i < NF; i++) if ($i == "marked") m = $(i + 1) }
		END { print d + 0, m + 0, b + 0, p + 0 }' "qdisc-$1.txt")
}

# cc_set NAME=VALUE...: congestion control parameters of both devices
cc_set() {
	local kv d
	for kv in "$@"; do
		for d in sroce0 sroce1; do
			echo "${kv#*=}" >"/sys/class/infiniband/$d/cc/${kv%%=*}" ||
				sroce_fail "cannot set $kv on $d"
		done
	done
}

# scaled_cc: the defaults' timers and steps scaled to the bottleneck, as
# NAME=VALUE words. The defaults are a RoCE NIC's, for links of tens of
# Gbit/s, where a 4 KiB packet takes a microsecond: a CNP at most every
# 50 us, alpha updated every 55 us, a rate increase every 300 us of 5
# Mbit/s. At RATE_MBIT a packet takes PKT us (336 at 100 Mbit/s), so
# every marked packet brings a CNP and a cut, and the queue, draining
# for milliseconds after a cut, brings dozens more. Here the CNP interval
# and the alpha period are 4 packets' time, the increase timer 8, and the
# additive and hyper steps 1% and 5% of the bottleneck (at least 1). The
# least time between two cuts is 12 packets' time (2 ms at 200 Mbit/s),
# about what a cut takes to show in the marks (the queue that brought
# the CNP drains first): with 4, one episode of marks cut a dozen times
# in a row, to 60-70% of the bottleneck (goodput 87%); with 24, too
# few cuts let the queue overflow (500 drops in 80,000 packets, and
# 7,000 with two flows). CNPs within it still count for alpha. alpha's
# gain grows with its period (4/1024 per 55 us, at most 128/1024), so
# that alpha moves about as fast
# in time as with the defaults: at 4/1024 a period of a millisecond,
# alpha took seconds to follow the congestion, and cuts too small to
# matter let the queue overflow with two flows.
# rp_max_rate_mbps, where a QP's first CNP starts it and a NIC's link
# speed, is what sroce moved alone (FREE_MBIT), not 100 Gbit/s: halving
# from there takes one or two cuts to the bottleneck, not ten, while the
# queue fills from a new flow at full speed.
scaled_cc() {
	awk -v r="$RATE_MBIT" -v free="$FREE_MBIT" 'BEGIN {
		printf "rp_max_rate_mbps=%d ", free
		pkt = 4200 * 8 / r
		printf "np_cnp_interval_us=%d rp_alpha_period_us=%d", \
			(4 * pkt > 50 ? 4 * pkt : 50), (4 * pkt > 55 ? 4 * pkt : 55)
		printf " rp_time_reset_us=%d", (8 * pkt > 300 ? 8 * pkt : 300)
		printf " rp_rate_reduce_period_us=%d", (12 * pkt > 4 ? 12 * pkt : 4)
		g = int(4 * (4 * pkt > 55 ? 4 * pkt : 55) / 55)
		printf " rp_g=%d", (g < 128 ? g : 128)
		printf " rp_ai_rate_mbps=%d rp_hai_rate_mbps=%d\n", \
			(r / 100 > 1 ? r / 100 : 1), (r / 20 > 1 ? r / 20 : 1)
	}'
}

# trace_setup: the sroce_dcqcn tracepoint on for the whole scenario, on
# the CLOCK_MONOTONIC clock the progress lines use, recording off. Runs
# turn recording on and off, not the event: turning the first event on
# or the last off patches kernel text (the event's static key and
# sched_switch's, for the comm cache), and once under TCG, with sroce
# busy on the other vCPU, that left both vCPUs stuck (one in the int3 of
# the patch in __schedule(), the other waiting for it in an IPI).
trace_setup() {
	echo 0 >"$TRACE/tracing_on"
	echo mono >"$TRACE/trace_clock"
	echo 16384 >"$TRACE/buffer_size_kb"
	echo 1 >"$TRACE/events/sroce/sroce_dcqcn/enable"
}

# trace_start: recording on, the buffer empty
trace_start() {
	echo 0 >"$TRACE/tracing_on"
	: >"$TRACE/trace"
	echo 1 >"$TRACE/tracing_on"
}

# trace_csv RUN T0 FLOWS: the events into dcqcn-RUN.csv, time from T0,
# each QP named by its flow number (FLOWS: "qpn flow ...")
trace_csv() {
	echo 0 >"$TRACE/tracing_on"
	awk -v t0="$2" -v flows="$3" '
		BEGIN {
			n = split(flows, f, " ")
			for (i = 1; i < n; i += 2) {
				q = f[i]; sub(/^0x0*/, "", q); flow[q] = f[i + 1]
			}
			print "t_s,flow,qpn,stage,rc_mbit_s,rt_mbit_s,alpha"
		}
		/sroce_dcqcn:/ {
			t = ""; q = ""; st = ""; rc = ""; rt = ""; a = ""
			for (i = 1; i <= NF; i++) {
				if ($i == "sroce_dcqcn:") { t = $(i - 1); sub(/:$/, "", t) }
				else if ($i ~ /^qpn=/) { q = substr($i, 5); sub(/^0x0*/, "", q) }
				else if ($i ~ /^stage=/) st = substr($i, 7)
				else if ($i ~ /^rc=/) rc = substr($i, 4)
				else if ($i ~ /^rt=/) rt = substr($i, 4)
				else if ($i ~ /^alpha=/) { a = substr($i, 7); sub(/\/.*/, "", a) }
			}
			printf "%.6f,%s,0x%s,%s,%.3f,%.3f,%.4f\n", t - t0, \
				(q in flow) ? flow[q] : 0, q, st, rc * 8 / 1e6, rt * 8 / 1e6, \
				a / 1048576
		}' "$TRACE/trace" >"dcqcn-$1.csv"
	: >"$TRACE/trace"
	sroce_log "$1: $(($(wc -l <"dcqcn-$1.csv") - 1)) DCQCN events in dcqcn-$1.csv"
}

# qpn TAG: the requester QPN of sroce_integrity run TAG
qpn() {
	sed -n 's/^sroce_integrity: progress start .*qpn=\(0x[0-9a-f]*\) .*/\1/p' "integ-$1.txt"
}

# start_of TAG: CLOCK_MONOTONIC of its start
start_of() {
	sed -n 's/^sroce_integrity: progress start mono=\([0-9.]*\) .*/\1/p' "integ-$1.txt"
}

# rate_csv RUN T0 TAG...: the goodput of each flow (TAG i is flow i) per
# progress interval into rate-RUN.csv, time from T0
rate_csv() {
	local run=$1 t0=$2 i=0 tag
	shift 2
	echo "t_s,flow,qpn,mbit_s" >"rate-$run.csv"
	for tag in "$@"; do
		i=$((i + 1))
		awk -v t0="$t0" -v flow="$i" -v q="$(qpn "$tag")" '
			/^sroce_integrity: progress t=/ {
				split($4, m, "="); split($5, b, "=")
				if (seen && m[2] > lt)
					printf "%.3f,%d,%s,%.3f\n", m[2] - t0, flow, q, \
						(b[2] - lb) * 8 / (m[2] - lt) / 1e6
				lt = m[2]; lb = b[2]; seen = 1
			}' "integ-$tag.txt" >>"rate-$run.csv"
	done
}

# goodput FROM TO TAG: Mbit/s of run TAG between CLOCK_MONOTONIC FROM and
# TO, from its progress lines (the samples nearest inside the window)
goodput() {
	awk -v from="$1" -v to="$2" '
		/^sroce_integrity: progress t=/ {
			split($4, m, "="); split($5, b, "=")
			if (m[2] >= from && !have) { t1 = m[2]; b1 = b[2]; have = 1 }
			if (m[2] <= to) { t2 = m[2]; b2 = b[2] }
		}
		END { printf "%.1f\n", (have && t2 > t1) ? (b2 - b1) * 8 / (t2 - t1) / 1e6 : 0 }' \
		"integ-$3.txt"
}

# rc_stats CSV FROM: the reaction point's rate (rc) after FROM seconds:
# its time-weighted mean, least and greatest, in Mbit/s
rc_stats() {
	awk -F, -v from="$2" '
		NR > 1 && $1 >= from {
			if (n++) { s += rc * ($1 - t); T += $1 - t }
			if (min == "" || $5 < min) min = $5
			if ($5 > max) max = $5
		}
		NR > 1 { t = $1; rc = $5 }
		END {
			if (T > 0) printf "mean %.1f, least %.1f, most %.1f Mbit/s", s / T, min, max
			else print "none (no event)"
		}' "$1"
}

# judge WHAT COMMAND...: expect, where the bottleneck carries enough
# packets for DCQCN's dynamics to be judged (JUDGE), else a line that
# says what was not judged
judge() {
	if [ "$JUDGE" = 1 ]; then
		expect "$@"
	else
		SUMMARY+=("not judged at $RATE_MBIT Mbit/s: $1")
		sroce_log "${SUMMARY[-1]}"
	fi
}

# at_least A B: A >= B (decimal numbers)
at_least() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

# one_flow RUN SECONDS: one flow through the bottleneck, traced
one_flow() {
	local run=$1 t0 end mid gp
	bottleneck
	counters
	trace_start
	integ "$run" -D "$2"
	integ_wait "$run" "$INTEG_PID"
	deltas "$run"
	qdisc_stats "$run"
	t0=$(start_of "$run")
	trace_csv "$run" "$t0" "$(qpn "$run") 1"
	rate_csv "$run" "$t0" "$run"
	end=$(awk -v t="$t0" -v d="$2" 'BEGIN { printf "%.6f", t + d }')
	mid=$(awk -v t="$t0" -v d="$2" 'BEGIN { printf "%.6f", t + d / 2 }')
	gp=$(goodput "$mid" "$end" "$run")
	GOODPUT=$gp
	RETRIES=${DELTA[sroce0.completer_retry_err]}
	SUMMARY+=("$(printf '%-8s goodput %s Mbit/s in the second half (%s%% of %s), whole run %s MB/s; DCQCN rate in the second half %s; the bottleneck carried %s Mbit/s; qdisc drops %s, marks %s; retransmissions %s (after %s sequence NAKs, %s requests out of sequence at the responder); ecn_marked_rcvd %s cnp_sent %s cnp_rcvd %s cnp_handled %s rp_rate_decreases %s; sent_pkts %s, sent_gso %s' \
		"$run" "$gp" "$(awk -v g="$gp" -v r="$RATE_MBIT" 'BEGIN { printf "%.0f", 100 * g / r }')" \
		"$RATE_MBIT" "$(field "integ-$run.txt" MB/s)" "$(rc_stats "dcqcn-$run.csv" "$(($2 / 2))")" \
		"$(awk -v b="$SENT" -v d="$2" 'BEGIN { printf "%.1f", b * 8 / d / 1e6 }')" \
		"$DROPS" "$MARKS" "$RETRIES" \
		"${DELTA[sroce0.rcvd_seq_err]}" "${DELTA[sroce1.out_of_seq_request]}" \
		"${DELTA[sroce1.ecn_marked_rcvd]}" "${DELTA[sroce1.cnp_sent]}" \
		"${DELTA[sroce0.cnp_rcvd]}" "${DELTA[sroce0.cnp_handled]}" \
		"${DELTA[sroce0.rp_rate_decreases]}" "${DELTA[sroce0.sent_pkts]}" \
		"${DELTA[sroce0.sent_gso]}")")
	sroce_log "${SUMMARY[-1]}"
}

sroce_modprobe ib_core ib_uverbs sch_tbf sch_red
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
topology
G0=$(sroce_gid_index sroce0 10.0.1.1)
G1=$(sroce_gid_index sroce1 10.0.2.2)
[ -d "$TRACE/events" ] || mount -t tracefs nodev "$TRACE" ||
	sroce_fail "cannot mount tracefs on $TRACE"
[ -d "$TRACE/events/sroce/sroce_dcqcn" ] || sroce_fail "no sroce:sroce_dcqcn tracepoint"
trace_setup
for f in /sys/class/infiniband/sroce0/cc/*; do
	echo "${f##*/} $(cat "$f")"
done >cc-defaults.txt
sroce_log "cc defaults: $(tr '\n' ' ' <cc-defaults.txt)"

ACK_TIMEOUT=14
# 0. sroce's own rate on this kernel, nothing in the way
t_runs=$SECONDS
integ unlimited -D "$MEASURE"
integ_wait unlimited "$INTEG_PID"
free_mbs=$(field integ-unlimited.txt MB/s)
[ -n "$free_mbs" ] || sroce_fail "no rate measured"
FREE_MBIT=$(awk -v m="$free_mbs" 'BEGIN { printf "%d", m * 8 + 1 }')
if [ -z "$RATE_MBIT" ]; then
	RATE_MBIT=$(awk -v m="$free_mbs" 'BEGIN { r = int(m * 8 / 5); print (r > 1 ? r : 1) }')
fi
# Below 25 Mbit/s (750 packets of 4 KiB a second; the debug kernel's
# bottleneck is a few Mbit/s) a CNP interval of 4 packets is tens of
# milliseconds and the rate steps (1 Mbit/s at least) a large part of
# the bottleneck: the goodput, drop and fairness figures are reported
# there, not judged (congestion.judge=1 judges them all the same). Every
# byte is still checked, and the CNPs and cuts must happen. The queue
# at its limit is then over 100 ms long: the local ACK timeout is 268 ms
# (-t 16), not 67, so that a sender without congestion control is slowed
# by its losses and not ended by its retry count.
JUDGE=$(cmdline_var judge "$([ "$RATE_MBIT" -ge 25 ] && echo 1 || echo 0)")
ACK_TIMEOUT=14
[ "$RATE_MBIT" -ge 25 ] || ACK_TIMEOUT=16
bottleneck
SUMMARY+=("kernel $SROCE_KERNEL, volume ${SROCE_VOLUME:-full}: sroce alone $free_mbs MB/s ($(awk -v m="$free_mbs" 'BEGIN { printf "%.0f", m * 8 }') Mbit/s); bottleneck $RATE_MBIT Mbit/s: $QDISC; ACK timeout -t $ACK_TIMEOUT")
sroce_log "${SUMMARY[-1]}"

# 1. congestion control with its defaults
one_flow defaults "$ONE"
expect "defaults: CNPs sent (${DELTA[sroce1.cnp_sent]})" \
	at_least "${DELTA[sroce1.cnp_sent]}" 1
expect "defaults: CNPs handled (${DELTA[sroce0.cnp_handled]})" \
	at_least "${DELTA[sroce0.cnp_handled]}" 1
expect "defaults: rate cut (${DELTA[sroce0.rp_rate_decreases]} times)" \
	at_least "${DELTA[sroce0.rp_rate_decreases]}" 1

# 2. the same with the parameters scaled to the bottleneck
# congestion.cc=NAME=VALUE,... on the kernel command line: more of them
scaled="$(scaled_cc) $(cmdline_var cc "" | tr ',' ' ')"
# shellcheck disable=SC2086 # NAME=VALUE words
cc_set $scaled
for f in /sys/class/infiniband/sroce0/cc/*; do
	echo "${f##*/} $(cat "$f")"
done >cc-scaled.txt
SUMMARY+=("scaled parameters: $scaled")
sroce_log "${SUMMARY[-1]}"
one_flow cc-on "$ONE"
on_gp=$GOODPUT
expect "cc-on: CNPs sent (${DELTA[sroce1.cnp_sent]})" \
	at_least "${DELTA[sroce1.cnp_sent]}" 1
expect "cc-on: CNPs handled (${DELTA[sroce0.cnp_handled]})" \
	at_least "${DELTA[sroce0.cnp_handled]}" 1
expect "cc-on: rate cut (${DELTA[sroce0.rp_rate_decreases]} times)" \
	at_least "${DELTA[sroce0.rp_rate_decreases]}" 1
judge "cc-on: qdisc drops $DROPS, at most one in $FEW_DROPS of the $PKTS packets passed" \
	test "$((DROPS * FEW_DROPS))" -le "$PKTS"
judge "cc-on: retransmissions $RETRIES, at most $FEW" test "$RETRIES" -le "$FEW"
on_drops=$DROPS on_retries=$RETRIES
judge "cc-on: goodput $on_gp Mbit/s, at least 85% of $RATE_MBIT" \
	at_least "$on_gp" "$(awk -v r="$RATE_MBIT" 'BEGIN { print 0.85 * r }')"

# 3. the same without the reaction point on the sending device
echo 0 >/sys/class/infiniband/sroce0/cc/rp_enable
one_flow cc-off "$ONE"
echo 1 >/sys/class/infiniband/sroce0/cc/rp_enable
expect "cc-off: no CNP handled (${DELTA[sroce0.cnp_handled]}, ${DELTA[sroce0.cnp_rcvd]} received)" \
	test "${DELTA[sroce0.cnp_handled]}" = 0
expect "cc-off: the queue overflowed: $DROPS qdisc drops" at_least "$DROPS" 1
expect "cc-off: retransmissions: $RETRIES" at_least "$RETRIES" 1
judge "cc-off: $DROPS qdisc drops, ten times cc-on's ($on_drops) and more" \
	at_least "$DROPS" $((10 * on_drops + 1))
judge "cc-off: $RETRIES retransmissions, ten times cc-on's ($on_retries) and more" \
	at_least "$RETRIES" $((10 * on_retries + 1))
off_drops=$DROPS off_retries=$RETRIES

# 4. two flows, the second joining a quarter into the run
bottleneck
counters
trace_start
integ two-1 -D "$TWO"
pid1=$INTEG_PID
sleep "$JOIN"
integ two-2 -D "$((TWO - JOIN))"
pid2=$INTEG_PID
integ_wait two-1 "$pid1"
integ_wait two-2 "$pid2"
deltas two
qdisc_stats two
t0=$(start_of two-1)
trace_csv two "$t0" "$(qpn two-1) 1 $(qpn two-2) 2"
rate_csv two "$t0" two-1 two-2
# the last half of the time both flows ran
read -r from to < <(awk -v a="$(start_of two-2)" -v t0="$t0" -v d="$TWO" \
	'BEGIN { e = t0 + d; printf "%.6f %.6f\n", (a + e) / 2, e }')
g1=$(goodput "$from" "$to" two-1)
g2=$(goodput "$from" "$to" two-2)
jain=$(awk -v a="$g1" -v b="$g2" 'BEGIN { printf "%.3f", (a + b) ^ 2 / (2 * (a ^ 2 + b ^ 2) + 1e-9) }')
sum=$(awk -v a="$g1" -v b="$g2" 'BEGIN { printf "%.1f", a + b }')
RETRIES=${DELTA[sroce0.completer_retry_err]}
SUMMARY+=("$(printf '%-7s goodput %s + %s = %s Mbit/s over the last half, Jain index %s; qdisc drops %s, marks %s; retransmissions %s (after %s sequence NAKs, %s requests out of sequence at the responder); ecn_marked_rcvd %s cnp_sent %s cnp_handled %s rp_rate_decreases %s' \
	two "$g1" "$g2" "$sum" "$jain" "$DROPS" "$MARKS" "$RETRIES" \
	"${DELTA[sroce0.rcvd_seq_err]}" "${DELTA[sroce1.out_of_seq_request]}" \
	"${DELTA[sroce1.ecn_marked_rcvd]}" "${DELTA[sroce1.cnp_sent]}" \
	"${DELTA[sroce0.cnp_handled]}" "${DELTA[sroce0.rp_rate_decreases]}")")
sroce_log "${SUMMARY[-1]}"
judge "two: Jain index $jain, at least 0.9" at_least "$jain" 0.9
judge "two: goodput $sum Mbit/s together, at least 70% of $RATE_MBIT" \
	at_least "$sum" "$(awk -v r="$RATE_MBIT" 'BEGIN { print 0.7 * r }')"
judge "two: qdisc drops $DROPS, a tenth of one flow's without congestion control ($off_drops) or less" \
	test "$((10 * DROPS))" -le "$off_drops"
SUMMARY+=("two: retransmissions $RETRIES (one flow without congestion control: $off_retries)")

/usr/sbin/tc -n sw qdisc del dev sw1 root || failed+=("tc qdisc del dev sw1 root")
SUMMARY+=("runs took $((SECONDS - t_runs)) s")
printf '%s\n' "${SUMMARY[@]}" >congestion-summary.txt
rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true
sroce_pair_remove
/usr/sbin/ip link del veth0 || failed+=("ip link del veth0")
/usr/sbin/ip link del veth1 || failed+=("ip link del veth1")
/usr/sbin/ip netns del sw || failed+=("ip netns del sw")

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "all passed"
