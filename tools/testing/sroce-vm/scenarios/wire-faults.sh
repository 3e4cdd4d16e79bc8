#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Faults on the wire between two guests, sroce on both:
#
#   guest a: sroce0 on wire0 10.0.0.1 fd00::1  <-->  sroce0 on wire0 10.0.0.2 fd00::2 :guest b
#
# netem on both guests' wire0 (so requests and ACKs both suffer): loss
# 0.1%, 1% and 5%, reordering, duplication and corruption, each under RC
# traffic whose receiver checks every byte (rping -V, interop_test.py's RC
# cases, and ibv_rc_pingpong -c where no frame is lost).  Corrupted frames
# must fail the ICRC check and be counted (icrc_err), duplicates must be
# answered as duplicates.  Then a link flap (guest a's wire0 down for 2 s
# mid-transfer: the transfer completes, or fails with RETRY_EXC_ERR; a new
# one afterwards must pass), and last guest b killed mid-transfer: guest a's
# QP fails with RETRY_EXC_ERR within its retry budget, nothing hangs, and
# sroce unloads cleanly.
#
# The small volume (sroce_small) runs the debug kernel's steps with a
# twentieth of the pings and pingpong iterations (sroce_iters) and fewer
# RC cases under loss (see fault); the flap and the kill run whole.
#
# sroce-vm: hosts 2
# sroce-vm: timeout 1200
# sroce-vm: mem 1536

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/wire-lib.sh
source "$(dirname "$SROCE_VM_LIB")/wire-lib.sh"

export SROCE_SCENARIO=wire-faults PYTHONDONTWRITEBYTECODE=1
WIRE_TAP=wire-faults.txt
DEV=sroce0
COUNTERS=/sys/class/infiniband/$DEV/ports/1/hw_counters

sroce_modprobe ib_core ib_uverbs rdma_ucm sch_netem
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_wire_up 9000
wire_dev_add sroce "$DEV"
sroce_peer_sync rdma-up

counter() { cat "$COUNTERS/$1"; }

# netem STEP SPEC...: both guests put netem SPEC on their wire0 egress
# ("none" removes it) and wait for each other.
netem() {
	local step=$1
	shift
	/usr/sbin/tc qdisc del dev wire0 root 2>/dev/null || true
	if [ "$1" != none ]; then
		/usr/sbin/tc qdisc add dev wire0 root netem "$@" ||
			sroce_fail "tc qdisc add dev wire0 root netem $*"
	fi
	sroce_log "netem $step: $*"
	sroce_peer_sync "netem-$step"
}

# counted NAME BEFORE COUNTER: guest a records whether COUNTER grew since
# BEFORE on either guest (each passes its growth to the other).
counted() {
	local name=$1 before=$2 counter=$3 now peer
	now=$(counter "$counter")
	sroce_peer_put "$name" "$((now - before))"
	peer=$(sroce_peer_get "$name")
	WIRE_CASES=$((WIRE_CASES + 1))
	sroce_log "$counter grew by $((now - before)) here, $peer on the peer"
	if [ "$peer" -gt 0 ] || [ "$((now - before))" -gt 0 ]; then
		wire_record "$name" 0
	else
		wire_record "$name" 1 "$counter did not grow on either guest"
	fi
}

ITERS=$(sroce_iters 200)
# fault STEP SPEC...: under netem SPEC, RC traffic checked byte by byte:
# rping -V (guest a's client, guest b's server: rdma_cm and READ, WRITE
# and SEND) and interop_test.py's RC cases (every opcode, both directions,
# with a local ACK timeout that a stalled TCG vCPU does not exhaust).  Steps that lose frames run no ibv_rc_pingpong: it ends with
# no handshake, so a lost last ACK leaves the peer retrying against a QP
# that is gone (RETRY_EXC_ERR, correctly).
fault() {
	local step=$1 filter='^rc ' pings
	shift
	# The small volume runs under loss the RC cases of 1 B and 3 MTU + 17
	# only (and the atomics): MTU + 1 recovers from a lost first or last
	# packet as 3 MTU + 17 does.  Duplication and corruption keep every RC
	# case: their counters (counted below) need the frames.
	if sroce_small && [[ $step == loss-* ]]; then
		filter="^rc .* (1|8|$((3 * 1024 + 17)))B "
	fi
	netem "$step" "$@"
	# At 5% loss each way a lost last packet or ACK waits out rdma_cm's
	# local ACK timeout (0.5 s), about twice per ping: 100 pings took
	# 103 s of the case's 240 in one run; 50 cover the same recovery.
	pings=$(sroce_iters 100)
	[ "$step" != loss-5 ] || pings=$(sroce_iters 50)
	wire_rping b "$pings" 9000 4
	wire_matrix "$DEV" 1024 4 --filter "$filter" --ack-timeout 17
	case $step in
	reorder|duplicate)
		wire_pingpong rc b "$DEV" 10000 "$ITERS" 1024 4
		wire_pingpong rc a "$DEV" 20000 "$ITERS" 4096 6
		;;
	esac
}

# the debug kernel (about 4x slower) skips the 0.1% and 5% loss and the
# reordering steps
[ "$SROCE_KERNEL" = debug ] || fault loss-0.1 loss 0.1%
fault loss-1 loss 1%
if [ "$SROCE_KERNEL" != debug ]; then
	fault loss-5 loss 5%
	fault reorder delay 2ms reorder 25% 50%
fi
dup_before=$(counter duplicate_request)
fault duplicate duplicate 5%
counted duplicates-answered "$dup_before" duplicate_request
icrc_before=$(counter icrc_err)
fault corrupt corrupt 2%
counted corrupt-icrc-counted "$icrc_before" icrc_err
netem clean none

# transferring LOG: wait until the ibv_rc_pingpong writing LOG (through
# stdbuf -oL: stdout to a file is block-buffered) has its peer's QP (its
# traffic starts then), and a second more.
transferring() {
	local _
	for _ in $(seq 1 600); do
		grep -q 'remote address' "$1" && break
		sleep 0.2
	done
	sleep 1
}

# rc_pingpong's and perftest's failure lines for a QP that ran out of
# retries
RETRY_EXC='status transport retry counter exceeded \(12\)'
PERF_RETRY_EXC='Failed status 12:'
# rc_pingpong's retry budget: 8 local ACK timeouts (timeout 14: 67 ms) and
# 7 retries, about 0.5 s.  A QP that runs out of it must report so within
# RETRY_BOUND s of losing its peer (TCG and the debug kernel add seconds,
# not tens of them); one that keeps retrying for longer is a failure.
RETRY_BOUND=15

# flap_wait PID: wait for the ibv_rc_pingpong PID of the flap; once the
# peer's has ended, give this one 10 s more, then stop it (it waits for a
# message the peer will never send: rc_pingpong's design).  Prints
# "stopped" if it had to.
flap_wait() {
	local pid=$1 left=50
	while kill -0 "$pid" 2>/dev/null; do
		if [ -e "$SROCE_SHARED/val-flap-rc.$SROCE_PEER_ROLE" ]; then
			left=$((left - 1))
			if [ "$left" = 0 ]; then
				kill "$pid" 2>/dev/null
				echo stopped
				return 0
			fi
		fi
		sleep 0.2
	done
}

# Link flap: guest a's wire0 down for 2 s while guest a sends to guest b.
# The transfer completes, or its QP fails with RETRY_EXC_ERR;
# whichever side did not fail may wait for a message that never comes
# (rc_pingpong's design): it is stopped 10 s after the other side ended.
flap() {
	local name=link-flap-2s rc peer g port=$((18515 + 100)) iters stopped t0="" pid watcher
	iters=$(sroce_iters 1000)
	# the transfer must still run when wire0 goes down: the small volume
	# keeps the debug kernel's 200 round trips
	sroce_small && iters=200
	WIRE_CASES=$((WIRE_CASES + 1))
	g=$(wire_gid "$DEV" 4)
	set +e
	if [ "$SROCE_ROLE" = b ]; then
		timeout 150 stdbuf -oL ibv_rc_pingpong -d "$DEV" -g "$g" -c -m 1024 \
			-p "$port" -s 4096 -n "$iters" >"$name-srv.txt" 2>&1 &
		sroce_wait_ready $! 1200 sroce_tcp_listening "$port"
		sroce_peer_put flap-listen 1
		stopped=$(flap_wait $!)
		wait $!
		rc=$?
	else
		sroce_peer_get flap-listen >/dev/null
		timeout 120 stdbuf -oL ibv_rc_pingpong -d "$DEV" -g "$g" -c -m 1024 \
			-p "$port" -s 4096 -n "$iters" "$SROCE_PEER4" >"$name-cli.txt" 2>&1 &
		pid=$!
		# when it ends, whether during the outage or after
		(while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
		 date +%s >"$name-end") &
		watcher=$!
		transferring "$name-cli.txt"
		sroce_log "wire0 down for 2 s"
		t0=$(date +%s)
		/usr/sbin/ip link set wire0 down
		sleep 2
		/usr/sbin/ip link set wire0 up
		stopped=$(flap_wait "$pid")
		wait "$pid"
		rc=$?
		wait "$watcher"
		t0=$(($(cat "$name-end") - t0))
		sroce_log "$name: rc_pingpong ended $t0 s after wire0 went down"
	fi
	set -e
	tail -n 3 "$name"-*.txt
	if [ -n "$stopped" ]; then
		rc=stopped
	elif [ "$rc" != 0 ] && ! grep -Eq "$RETRY_EXC" "$name"-*.txt; then
		[ "$rc" = 124 ] && rc=timeout || rc=failed
	elif [ "$rc" != 0 ] && [ -n "$t0" ] && [ "$t0" -gt "$RETRY_BOUND" ]; then
		rc=failed	# out of retries, but far beyond the budget
	else
		rc=ok
	fi
	sroce_peer_put flap-rc "$rc"
	peer=$(sroce_peer_get flap-rc 120)
	sroce_log "$name: $rc here, $peer on the peer"
	# one side must have finished or failed properly, neither otherwise
	if { [ "$rc" = ok ] || [ "$peer" = ok ]; } && [ "$rc" != failed ] &&
		[ "$peer" != failed ]; then
		wire_record "$name" 0
	else
		wire_record "$name" 1 "$rc on $SROCE_ROLE, $peer on $SROCE_PEER_ROLE"
	fi
	sroce_wait_link_up wire0 10
	sroce_wait_rdma_ready "$DEV"
	sroce_peer_sync flap-done
}

# retry_counters: the counters that show what an outage did to a QP
retry_counters() {
	local c
	for c in send_err completer_retry_err retry_exceeded_err duplicate_request; do
		printf '%s %s ' "$c" "$(counter "$c")"
	done
}

sroce_log "before the flap: $(retry_counters)"
flap
sroce_log "after the flap: $(retry_counters)"
wire_pingpong rc b "$DEV" 10000 "$ITERS" 1024 4
rdma statistic show link "$DEV/1" || true
sroce_peer_sync pre-kill

# Guest b killed mid-transfer.  Guest a: the QP fails with RETRY_EXC_ERR
# within ib_write_bw's retry budget (timeout 14, 7 retries: about 0.5 s,
# and the time the completion takes to reach the program), then the device
# and sroce go away cleanly.  ib_write_bw, not a pingpong: its client
# always has WRITEs in flight, so the peer's death always leaves it a
# request to retry; a pingpong client whose SEND was acknowledged just
# before the kill only waits for a receive that never comes, which is
# right for RC and says nothing (a debug sweep saw that: 114 s, no error).
if [ "$SROCE_ROLE" = b ]; then
	port=$((18515 + 101))
	ib_write_bw -d "$DEV" -x "$(wire_gid "$DEV" 4)" -F -m 4096 -s 65536 \
		-n 5000000 -p "$port" >peer-kill-srv.txt 2>&1 &
	sroce_wait_ready $! 1200 sroce_tcp_listening "$port" || true
	sroce_peer_put kill-listen 1
	sleep 3600
fi
sroce_peer_get kill-listen >/dev/null
set +e
: >peer-kill-cli.txt
timeout 120 stdbuf -oL ib_write_bw -d "$DEV" -x "$(wire_gid "$DEV" 4)" -F -m 4096 \
	-s 65536 -n 5000000 -p $((18515 + 101)) "$SROCE_PEER4" >peer-kill-cli.txt 2>&1 &
pid=$!
transferring peer-kill-cli.txt
sroce_kill_peer
t0=$SECONDS
wait $pid
rc=$?
t0=$((SECONDS - t0))
set -e
tail -n 3 peer-kill-cli.txt
sroce_log "peer killed: ib_write_bw ended $t0 s later, exit $rc"
WIRE_CASES=$((WIRE_CASES + 1))
if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -Eq "$PERF_RETRY_EXC" peer-kill-cli.txt &&
	[ "$t0" -le "$RETRY_BOUND" ]; then
	wire_record "peer-killed-retry-exceeded" 0
else
	wire_record "peer-killed-retry-exceeded" 1 "client exit $rc after $t0 s"
fi
WIRE_CASES=$((WIRE_CASES + 1))
if rdma link del "$DEV" && rmmod sroce; then
	wire_record "peer-killed-clean-unload" 0
else
	wire_record "peer-killed-clean-unload" 1 "rdma link del or rmmod failed"
fi
[ ${#WIRE_FAILED[@]} = 0 ] || sroce_fail "failed: ${WIRE_FAILED[*]}"
sroce_log "all passed"
