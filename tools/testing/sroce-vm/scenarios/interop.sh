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
#     1024 and 4096 over IPv4 and IPv6 (the debug kernel: two of the four);
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

# phase PEER: every case against guest b's PEER (rxe or sroce).
phase() {
	local peer=$1 dev srv t
	dev=sroce0
	[ "$SROCE_ROLE" = a ] || dev=${peer}0
	WIRE_TAG="sroce-$peer "
	sroce_log "phase: sroce0 on guest a, ${peer}0 on guest b"
	for srv in b a; do
		wire_pingpong rc "$srv" "$dev" 10000 "$(sroce_iters 50)" 1024 4
		wire_pingpong rc "$srv" "$dev" 9000 "$(sroce_iters 50)" 4096 6
		wire_pingpong uc "$srv" "$dev" 4097 "$(sroce_iters 50)" 4096 4
		wire_pingpong ud "$srv" "$dev" 2048 "$(sroce_iters 50)" 4096 6
		wire_rping "$srv" "$(sroce_iters 100)" 10000 4
		wire_rping "$srv" "$(sroce_iters 100)" 3000 6
	done
	wire_matrix "$dev" 1024 4
	wire_matrix "$dev" 4096 6
	if [ "$SROCE_KERNEL" != debug ]; then
		wire_matrix "$dev" 4096 4
		wire_matrix "$dev" 1024 6
	fi
	for t in ib_send_bw ib_write_bw ib_read_bw; do
		wire_perftest "$t" b "$dev" 4 -s 65536 -n "$(sroce_iters 200)"
	done
	wire_perftest ib_write_bw a "$dev" 6 -s 65536 -n "$(sroce_iters 200)"
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
