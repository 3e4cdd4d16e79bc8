#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Wire interop between two guests joined by one virtual Ethernet link (see
# guest-lib.sh).  Guest a runs sroce throughout; guest b runs the kernel's
# own rdma_rxe for the first phase, then unloads it and runs sroce:
#
#   guest a: sroce0 on wire0 10.0.0.1 fd00::1  <-->  rxe0, then sroce0, on wire0 10.0.0.2 fd00::2 :guest b
#
# In each phase every case runs in both directions (guest a's requester to
# guest b's responder and the reverse) and checks data where it lands:
#   - ibv_{rc,uc,ud}_pingpong -c, rping -V over rdma_cm (IPv4, IPv6),
#     perftest -R;
#   - interop_test.py: RC SEND/SEND_IMM/WRITE/WRITE_IMM/READ/CMP_SWAP/
#     FETCH_ADD, UC and UD, at message sizes crossing the path MTU, at MTU
#     1024 and 4096 over IPv4 and IPv6 (the debug kernel: two of the four;
#     the small volume: the same two, fewer sizes at 4096, see phase);
#   - phase 1 also captures guest a's wire0 and has tshark decode every
#     frame and every ICRC verified (sroce's frames and rxe's).
#
# sroce-vm: hosts 2
# sroce-vm: timeout 1800
# sroce-vm: mem 1536

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/wire-lib.sh
source "$(dirname "$SROCE_VM_LIB")/wire-lib.sh"

export SROCE_SCENARIO=interop PYTHONDONTWRITEBYTECODE=1
WIRE_TAP=interop.txt
CHECKER=${SROCE_TOP:?}/tools/testing/sroce-verbs/roce_capture_check.py
# every opcode the first matrix run (1 B, MTU + 1 and 3 * MTU + 17 B at
# MTU 1024) puts on the wire, in each direction
EXPECT_OPS=(
	RC:send_only RC:send_only_imm RC:send_first RC:send_middle RC:send_last
	RC:send_last_imm RC:rdma_write_only RC:rdma_write_only_imm
	RC:rdma_write_first RC:rdma_write_middle RC:rdma_write_last
	RC:rdma_write_last_imm RC:rdma_read_request RC:rdma_read_response_only
	RC:rdma_read_response_first RC:rdma_read_response_middle
	RC:rdma_read_response_last RC:acknowledge RC:atomic_acknowledge
	RC:compare_swap RC:fetch_add UC:send_only UC:send_only_imm UC:send_first
	UC:send_middle UC:send_last UC:rdma_write_only UC:rdma_write_first
	UC:rdma_write_last_imm UD:send_only UD:send_only_imm
)

# capture_start / capture_check: guest a captures wire0's RoCEv2 frames;
# then roce_capture_check.py decodes them with tshark and recomputes every
# ICRC (frames of sroce and of the peer).
capture_start() {
	local _
	[ "$SROCE_ROLE" = a ] || return 0
	tshark -i wire0 -f 'udp port 4791' -w "$SROCE_RESULTS/wire0.pcap" -F pcap -q \
		>tshark.txt 2>&1 &
	TSHARK=$!
	# tshark takes 20-30 s to start under TCG
	for _ in $(seq 1 600); do
		grep -q 'Capturing on' tshark.txt && return 0
		kill -0 "$TSHARK" 2>/dev/null || break
		sleep 0.2
	done
	cat tshark.txt
	sroce_fail "tshark did not start capturing"
}

capture_check() {
	local rc=0 op args=()
	[ "$SROCE_ROLE" = a ] || return 0
	for op in "${EXPECT_OPS[@]}"; do args+=(--expect-op "$op"); done
	kill -INT "$TSHARK"
	wait "$TSHARK" || true
	tail -n 2 tshark.txt
	# 68 cases: about 180 frames
	/usr/bin/python3 "$CHECKER" --min-packets 150 "${args[@]}" \
		"$SROCE_RESULTS/wire0.pcap" >capture-check.txt 2>&1 || rc=$?
	tail -n 8 capture-check.txt
	wire_record "capture: tshark decodes every frame, every ICRC verified" "$rc" \
		"roce_capture_check.py exit $rc"
}

# phase PEER: every case against guest b's PEER (rxe or sroce).  The debug
# kernel (KASAN, lockdep, kmemleak: about 4x slower) runs against rxe two of
# the four MTU/IP matrix runs and one case of each tool (ib_write_bw -R
# each way), against sroce one matrix run.  The small volume (sroce_small)
# runs the same cases as the debug kernel with 10 pings, a twentieth of
# the pingpong iterations (sroce_iters), perftest -n 10, and the 4096/v6
# matrix runs with fewer sizes (see below); the 1024/v4 run, whose capture
# must show every opcode, runs whole.
phase() {
	local peer=$1 dev srv t iters reduced=0 pings=20 perfn=40 big=()
	dev=sroce0
	[ "$SROCE_ROLE" = a ] || dev=${peer}0
	WIRE_TAG="sroce-$peer "
	iters=$(sroce_iters 50)
	if [ "$SROCE_KERNEL" = debug ] || sroce_small; then
		reduced=1
	fi
	if sroce_small; then
		pings=10 perfn=10
		# At MTU 4096 only the messages of first, middle and last
		# packets (3 MTU + 17), the atomics and UD (1 B and the MTU):
		# 1 B and MTU + 1 repeat at 4096 the packet shapes that the
		# whole 1024/v4 run (against rxe) has, both ways.
		big=(--filter "^(ud |rc (cmp_swap|fetch_add))| $((3 * 4096 + 17))B ")
	fi
	sroce_log "phase: sroce0 on guest a, ${peer}0 on guest b"
	if [ "$reduced" = 1 ] && [ "$peer" = sroce ]; then
		# wire-faults runs more of sroce to sroce on the debug kernel
		wire_matrix "$dev" 4096 6 "${big[@]}"
		return 0
	fi
	[ "$peer" != rxe ] || capture_start
	wire_matrix "$dev" 1024 4
	[ "$peer" != rxe ] || capture_check
	wire_matrix "$dev" 4096 6 "${big[@]}"
	if [ "$reduced" = 1 ]; then
		wire_pingpong rc b "$dev" 10000 "$iters" 1024 4
		wire_pingpong ud a "$dev" 2048 "$iters" 4096 6
		wire_rping b "$pings" 10000 4
		wire_perftest ib_write_bw b "$dev" 4 -s 65536 -n "$perfn"
		wire_perftest ib_write_bw a "$dev" 4 -s 65536 -n "$perfn"
		rdma statistic show link "$dev/1" || true
		return 0
	fi
	wire_matrix "$dev" 4096 4
	wire_matrix "$dev" 1024 6
	for srv in b a; do
		wire_pingpong rc "$srv" "$dev" 10000 "$iters" 1024 4
		wire_pingpong rc "$srv" "$dev" 9000 "$iters" 4096 6
		wire_pingpong uc "$srv" "$dev" 4097 "$iters" 4096 4
		wire_pingpong ud "$srv" "$dev" 2048 "$iters" 4096 6
		wire_rping "$srv" 100 10000 4
		wire_rping "$srv" 100 3000 6
	done
	# perftest -R both ways against rxe; sroce to sroce one way
	for srv in b a; do
		[ "$peer" = rxe ] || [ "$srv" = a ] || continue
		for t in ib_send_bw ib_write_bw ib_read_bw; do
			wire_perftest "$t" "$srv" "$dev" 4 -s 65536 -n 200
		done
	done
	rdma statistic show link "$dev/1" || true
}

sroce_modprobe ib_core ib_uverbs rdma_ucm
if [ "$SROCE_ROLE" = a ]; then
	# shellcheck disable=SC2119 # no module parameters
	sroce_load_ko
	sroce_wire_up 9000
	wire_dev_add sroce sroce0
else
	sroce_load_rxe
	sroce_wire_up 9000
	wire_dev_add rxe rxe0
fi
sroce_peer_sync rdma-up
phase rxe
sroce_peer_sync phase-rxe-done
if [ "$SROCE_ROLE" = b ]; then
	rdma link del rxe0 || sroce_fail "rdma link del rxe0"
	rmmod rdma_rxe || sroce_fail "rmmod rdma_rxe"
	# shellcheck disable=SC2119 # no module parameters
	sroce_load_ko
	wire_dev_add sroce sroce0
fi
sroce_peer_sync peer-sroce-up
phase sroce
wire_finish
rdma link del sroce0 || sroce_fail "rdma link del sroce0"
rmmod sroce || sroce_fail "rmmod sroce"
sroce_log "all passed"
