#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Same-host delivery (net/sroce_xmit.c): both ends of every run on one
# device, sroce1 (10.0.0.2 and fd00::2 on veth1), so that every packet's
# route ends at this host and sroce hands it to the receiving QP itself,
# with no IP stack and no ICRC.  The data-checked runs of the veth
# scenarios, in three passes: "local" (as loaded: an RC packet carries up
# to 60 KiB of its message, several PSNs, see sroce_tx_span_max()),
# "unspanned" (local_span=0: one path MTU a packet) and "forced" (the
# force_wire parameter on: every packet carries an ICRC, filled and
# checked, on the same hand-off, and spans no PSNs):
#
#   rc, uc and ud pingpong -c (the server checks every byte), IPv4 and
#   IPv6; sroce_integrity SEND, WRITE and READ at path MTU 4096 (64 KiB
#   messages in 4 SGEs) and SEND, WRITE and READ at 1024 (mixed sizes, 7
#   SGEs), atomics, UC WRITE and UD SEND, every byte checked; rping -V
#   through rdma_cm; perftest ib_write_bw, ib_read_bw, ib_send_bw and
#   ib_atomic_bw.
#
# After each pass: none of it went through the IP stack (its UDP counted
# no datagram received), sroce1 counted no ICRC error and received every
# packet it sent (rcvd_pkts rose by as much as sent_pkts), and sent_span
# (packets that spanned PSNs) rose in the local pass only.  One "ok N - name" /
# "not ok N - name: why" line per run in local.txt.  The small volume
# (sroce_small) moves a few MiB a run.
#
# sroce-vm: timeout 1500
# sroce-vm: build-prog sroce-integrity

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/perftest-lib.sh
source "$(dirname "$SROCE_VM_LIB")/perftest-lib.sh"

export SROCE_SCENARIO=local
export SROCE_PP_CLIENT=sroce1
REPORT=$SROCE_RESULTS/local.txt
PROG=${SROCE_PROGS:?}/sroce_integrity

if sroce_small; then
	BULK=4M MIXED_VOL=2M ATOMICS=200 PP_ITERS=50 PINGS=20 PERF_ITERS=100
elif [ "$SROCE_KERNEL" = debug ]; then
	BULK=32M MIXED_VOL=8M ATOMICS=2000 PP_ITERS=200 PINGS=100 PERF_ITERS=500
else
	BULK=256M MIXED_VOL=64M ATOMICS=20000 PP_ITERS=1000 PINGS=500 PERF_ITERS=2000
fi


# integ TAG ARGS...: sroce_integrity with both ends on sroce1.
integ() {
	local tag=$1 rc=0 line
	shift
	timeout -k 5 600 "$PROG" -a sroce1 -b sroce1 -g "$G1" -G "$G1" "$@" \
		>"integ-$tag.txt" 2>&1 || rc=$?
	line=$(grep '^sroce_integrity: op=' "integ-$tag.txt" | tail -n 1 || true)
	sroce_log "$tag: ${line:-no summary} (exit $rc)"
	if [ "$rc" = 0 ] && [[ $line == *result=PASS* ]]; then
		sroce_tap 0 "$PASS integrity $tag"
	else
		tail -n 5 "integ-$tag.txt"
		sroce_tap 1 "$PASS integrity $tag" "exit $rc, ${line:-no summary}"
	fi
}

# pp KIND FAMILY SIZE: one pingpong -c run on sroce1.
pp() {
	local rc=0
	sroce_pingpong "$1" "$PASS-$1-$2-$3" 120 "$3" "$PP_ITERS" 4096 "$2" \
		>/dev/null 2>&1 || rc=1
	sroce_tap "$rc" "$PASS $1_pingpong -c IPv$2 $3 B" "see $1-*-$PASS-$1-$2-$3.txt"
}

# rping_run: rping -V (every ping's data checked) through rdma_cm.
rping_run() {
	local spid c s
	timeout 300 rping -s -a 10.0.0.2 -C "$PINGS" -V -p 7174 >"rping-$PASS-srv.txt" 2>&1 &
	spid=$!
	sroce_wait_ready "$spid" 200 sroce_cm_listening 7174 || true
	set +e
	timeout 300 rping -c -a 10.0.0.2 -C "$PINGS" -V -p 7174 >"rping-$PASS-cli.txt" 2>&1
	c=$?
	[ "$c" = 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	s=$?
	set -e
	sroce_tap $((c | s)) "$PASS rping -V x$PINGS" "server exit $s, client exit $c"
}

# perf TEST SIZE: one perftest run, both ends on sroce1; a run that
# completed with 0.00 or inf (perftest's cycle counting under TCG) runs
# once more, as in make bench.
perf() {
	if perf_run "$PASS-$1-$2" "$1" sroce1 sroce1 4 4096 "$2" "$PERF_ITERS" \
		    2>/dev/null ||
	   { [[ $PERF_WHY == result* ]] &&
	     perf_run "$PASS-$1-$2-again" "$1" sroce1 sroce1 4 4096 "$2" \
		      "$PERF_ITERS" 2>/dev/null; }; then
		sroce_tap 0 "$PASS $1 $2: $PERF_VAL $(perf_unit "$1")"
	else
		sroce_tap 1 "$PASS $1 $2" "$PERF_WHY"
	fi
}

# udp_in: the datagrams the stack's UDP received, IPv4 and IPv6 (a RoCEv2
# packet from a netdev reaches sroce's socket through it, and is counted).
udp_in() {
	echo "$(awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $2 }' /proc/net/snmp)" \
		"$(awk '$1 == "Udp6InDatagrams" { print $2 }' /proc/net/snmp6)"
}

# pass NAME: every run, then the checks of the pass.
pass() {
	local udp sent rcvd icrc span d_sent d_rcvd d_icrc d_span op fam kind ok

	PASS=$1
	udp=$(udp_in)
	sent=$(sroce_hw_counter sroce1 sent_pkts)
	rcvd=$(sroce_hw_counter sroce1 rcvd_pkts)
	icrc=$(sroce_hw_counter sroce1 icrc_err)
	span=$(sroce_hw_counter sroce1 sent_span)

	for kind in rc uc ud; do
		for fam in 4 6; do
			pp "$kind" "$fam" 4096
		done
	done
	for op in send write read; do
		integ "$op-4096" -o "$op" -m 4096 -n "$BULK" -s 64K -e 4
	done
	for op in send write read; do
		integ "$op-1024-mixed" -o "$op" -m 1024 -n "$MIXED_VOL" -x -s 64K -e 7
	done
	# CQs polled, never armed: long SENDs are copied in the sender's call
	integ send-4096-busy -o send -m 4096 -n "$BULK" -s 64K -e 4 -B
	integ atomic-4096 -o atomic -m 4096 -c "$ATOMICS"
	integ uc-write-4096 -u -o write -m 4096 -n "$MIXED_VOL" -s 64K -e 4 -L 0
	integ ud-send-4096 -d -q 64 -S 16 -o send -m 4096 -n "$MIXED_VOL" -s 4096 -e 4 -L 0
	rping_run
	perf ib_write_bw 65536
	perf ib_read_bw 65536
	perf ib_send_bw 65536
	perf ib_atomic_bw -

	ok=1
	[ "$(udp_in)" = "$udp" ] || ok=0
	sroce_tap $((1 - ok)) "$PASS: no packet went through the IP stack" \
		"UDP datagrams received (IPv4, IPv6) $udp -> $(udp_in)"
	d_sent=$(($(sroce_hw_counter sroce1 sent_pkts) - sent))
	d_rcvd=$(($(sroce_hw_counter sroce1 rcvd_pkts) - rcvd))
	d_icrc=$(($(sroce_hw_counter sroce1 icrc_err) - icrc))
	sroce_log "$PASS: sroce1 sent $d_sent, received $d_rcvd, icrc_err $d_icrc"
	ok=1
	[ "$d_sent" -gt 0 ] && [ "$d_sent" = "$d_rcvd" ] && [ "$d_icrc" = 0 ] || ok=0
	sroce_tap $((1 - ok)) "$PASS: sroce1 received all $d_sent packets it sent, no ICRC error" \
		"sent $d_sent, received $d_rcvd, icrc_err $d_icrc"
	d_span=$(($(sroce_hw_counter sroce1 sent_span) - span))
	if [ "$PASS" = local ]; then
		[ "$d_span" -gt 0 ] && ok=1 || ok=0
	else
		[ "$d_span" = 0 ] && ok=1 || ok=0
	fi
	sroce_tap $((1 - ok)) "$PASS: $d_span packets spanned PSNs" \
		"sent_span rose by $d_span"
	rdma statistic show link sroce1/1 || true
}

sroce_modprobe ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000
[ -x "$PROG" ] || sroce_fail "$PROG was not built"
G1=$(sroce_gid_index sroce1 10.0.0.2)
: >"$REPORT"

[ "$(cat /sys/module/sroce/parameters/force_wire)" = N ] ||
	sroce_fail "force_wire is not off by default"
# The control for the passes' stack check: IPv4 between the two devices
# crosses the veth, and the stack's UDP counts each packet received.
udp=$(udp_in)
if SROCE_PP_CLIENT=sroce0 sroce_pingpong rc control 120 4096 "$PP_ITERS" 4096 4 \
	>/dev/null 2>&1 && [ "$(udp_in)" != "$udp" ]; then
	sroce_tap 0 "control: rc_pingpong across the veth went through the IP stack"
else
	sroce_tap 1 "control: rc_pingpong across the veth" "UDP datagrams $udp -> $(udp_in)"
fi
[ "$(cat /sys/module/sroce/parameters/local_span)" = Y ] ||
	sroce_fail "local_span is not on by default"
pass local
echo 0 >/sys/module/sroce/parameters/local_span
pass unspanned
echo 1 >/sys/module/sroce/parameters/local_span
echo 1 >/sys/module/sroce/parameters/force_wire
pass forced
echo 0 >/sys/module/sroce/parameters/force_wire

failed=()
sroce_pair_remove
sroce_tap ${#failed[@]} "links deleted and sroce unloaded" "${failed[*]}"
[ "$SROCE_TAP_FAILED" = 0 ] || sroce_fail "$SROCE_TAP_FAILED of $SROCE_TAP_NUM failed (see $REPORT)"
sroce_log "local: all $SROCE_TAP_NUM passed"
