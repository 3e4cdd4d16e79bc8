#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# UC scenario: Unreliable Connected traffic between two sroce devices on a
# veth pair.
#
#   1. ibv_uc_pingpong with data validation (-c) at 1 B..64 KiB, path MTU
#      1024 and 4096, IPv4 and IPv6 GIDs;
#   2. tools/testing/sroce-verbs/uc_test.py: SEND, SEND_IMM, WRITE and
#      WRITE_IMM with data checks, and the unreliable side of UC: messages
#      dropped and counted (no receive, bad R_Key, no access), LOC_LEN_ERR
#      taking the receiver to ERR, a local send error taking the QP to SQE
#      and back to RTS.
#
#   veth0 (10.0.0.1, fd00::1) <-- veth pair --> veth1 (10.0.0.2, fd00::2)
#     sroce0 (client, requester)                  sroce1 (server, responder)
#
# Loss on the wire (netem) is covered by the integrity scenario's UC runs.
# The small volume (sroce_small) runs a twentieth of the pingpong
# iterations (sroce_iters), two pingpongs fewer (see below) and uc_test.py
# with its largest messages at 160 packets instead of 1 MiB.
# sroce-vm: timeout 600
# sroce-vm: mem 4096

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=uc PYTHONDONTWRITEBYTECODE=1
SUITE=${SROCE_TOP:?}/tools/testing/sroce-verbs/uc_test.py
PY=/usr/bin/python3

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000

failed=()
for mtu in 1024 4096; do
	for size in 1 4096 65536; do
		# The small volume runs 1 B (one packet) at MTU 1024 only and
		# 64 KiB (first, middles, last) at 4096 only; 4 KiB at both
		# (4 packets at 1024, one full packet at 4096).
		if sroce_small; then
			case $size-$mtu in
			65536-1024 | 1-4096) continue ;;
			esac
		fi
		sroce_pingpong uc "$size-$mtu-v4" 120 "$size" "$(sroce_iters 100)" "$mtu" 4 ||
			failed+=("uc_pingpong size $size mtu $mtu IPv4")
	done
done
sroce_pingpong uc "65536-4096-v6" 120 65536 "$(sroce_iters 50)" 4096 6 ||
	failed+=("uc_pingpong size 65536 mtu 4096 IPv6")

# SROCE_VOLUME (small: smaller largest messages) reaches the suite
# through the environment.
sroce_log "running $PY -u $SUITE sroce0 sroce1"
set +e
"$PY" -u "$SUITE" --filter "${UC_FILTER:-}" sroce0 sroce1 2>&1 |
	tee "$SROCE_RESULTS/uc.txt"
rc=${PIPESTATUS[0]}
set -e
sroce_log "uc_test.py: exit $rc"
[ "$rc" = 0 ] || failed+=("uc_test.py")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true

sroce_pair_remove

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "uc: all passed"
