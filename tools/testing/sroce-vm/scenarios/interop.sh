#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Wire interop, two guests: sroce on guest a, the kernel's own rdma_rxe on
# guest b, joined by one virtual Ethernet link (see guest-lib.sh):
#
#   guest a: sroce0 on wire0 10.0.0.1 fd00::1  <-->  rxe0 on wire0 10.0.0.2 fd00::2 :guest b
#
# Every case runs in both directions (sroce requester to rxe responder and
# the reverse) and checks data where it lands:
#   - interop_test.py: RC SEND/SEND_IMM/WRITE/WRITE_IMM/READ/CMP_SWAP/
#     FETCH_ADD, UC and UD, at message sizes crossing the path MTU, at MTU
#     1024 and 4096 over IPv4 and IPv6;
#   - ibv_{rc,uc,ud}_pingpong -c, rping -V over rdma_cm (IPv4, IPv6),
#     perftest -R;
#   - a capture of guest a's wire0 decoded by tshark, every ICRC verified.
# WIRE_PEER=sroce runs the same on sroce <-> sroce (interop-sroce.sh).
#
# sroce-vm: hosts 2
# sroce-vm: timeout 1200
# sroce-vm: mem 1536

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/wire-lib.sh
source "$(dirname "$SROCE_VM_LIB")/wire-lib.sh"

export SROCE_SCENARIO=${SROCE_SCENARIO:-interop} PYTHONDONTWRITEBYTECODE=1
WIRE_TAP=interop.txt
PEER=${WIRE_PEER:-rxe}

sroce_modprobe ib_core ib_uverbs rdma_ucm
if [ "$SROCE_ROLE" = a ] || [ "$PEER" = sroce ]; then
	# shellcheck disable=SC2119 # no module parameters
	sroce_load_ko
	TYPE=sroce
else
	sroce_load_rxe
	TYPE=rxe
fi
DEV=${TYPE}0
sroce_wire_up 9000
wire_dev_add "$TYPE" "$DEV"
sroce_peer_sync rdma-up
sroce_log "$DEV ($TYPE) up; peer runs $([ "$SROCE_ROLE" = a ] && echo "$PEER" || echo sroce)"

# The verbs examples and rping, each way.
for srv in b a; do
	wire_pingpong rc "$srv" "$DEV" 10000 "$(sroce_iters 50)" 1024 4
	wire_pingpong rc "$srv" "$DEV" 9000 "$(sroce_iters 50)" 4096 6
	wire_pingpong uc "$srv" "$DEV" 4097 "$(sroce_iters 50)" 4096 4
	wire_pingpong ud "$srv" "$DEV" 2048 "$(sroce_iters 50)" 4096 6
	wire_rping "$srv" "$(sroce_iters 100)" 10000 4
	wire_rping "$srv" "$(sroce_iters 100)" 3000 6
done
for t in ib_send_bw ib_write_bw ib_read_bw; do
	wire_perftest "$t" b "$DEV" 4 -s 65536 -n "$(sroce_iters 200)"
done
wire_perftest ib_write_bw a "$DEV" 4 -s 65536 -n "$(sroce_iters 200)"

rdma statistic show link "$DEV/1" || true
wire_finish
sroce_log "all passed"
