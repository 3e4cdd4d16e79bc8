#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# SRQ scenario: shared receive queues between two sroce devices on a veth
# pair, and QPs destroyed with traffic in flight.
#
#   1. ibv_srq_pingpong with data validation (-c): 4 QPs on one SRQ at
#      path MTU 1024 over IPv4 GIDs, 16 QPs at 4096 over IPv6 GIDs;
#   2. tools/testing/sroce-verbs/srq_test.py: RC, UC and UD QPs sharing
#      one SRQ with patterned multi-packet, multi-SGE messages (qp_num,
#      byte_len and data of every receive checked, every WQE consumed
#      once), the SRQ limit event (once, disarmed, re-armed), RNR with an
#      empty SRQ, destroying the sender, the receiver or one QP of an SRQ
#      while traffic is in flight, and the device counters afterwards.
#
# The small volume (sroce_small) runs a twentieth of the pingpong
# iterations (sroce_iters), and srq_test.py (SROCE_VOLUME reaches it through
# the environment) every case, with half the QPs on the SRQ in the traffic
# tests and a quarter of the messages where a sender or one QP of the SRQ
# is destroyed.
#
#   veth0 (10.0.0.1, fd00::1) <-- veth pair --> veth1 (10.0.0.2, fd00::2)
#     sroce0 (client, senders)                    sroce1 (server, SRQ)
#
# sroce-vm: timeout 600
# sroce-vm: mem 4096

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=srq PYTHONDONTWRITEBYTECODE=1
SUITE=${SROCE_TOP:?}/tools/testing/sroce-verbs/srq_test.py
PY=/usr/bin/python3

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000

failed=()
sroce_pingpong srq "q4-4096-1024-v4" 120 4096 "$(sroce_iters 100)" 1024 4 -q 4 ||
	failed+=("srq_pingpong -q 4 size 4096 mtu 1024 IPv4")
sroce_pingpong srq "q16-65536-4096-v6" 120 65536 "$(sroce_iters 20)" 4096 6 -q 16 ||
	failed+=("srq_pingpong -q 16 size 65536 mtu 4096 IPv6")

sroce_log "running $PY -u $SUITE sroce0 sroce1"
set +e
"$PY" -u "$SUITE" --filter "${SRQ_FILTER:-}" sroce0 sroce1 2>&1 |
	tee "$SROCE_RESULTS/srq.txt"
rc=${PIPESTATUS[0]}
set -e
sroce_log "srq_test.py: exit $rc"
[ "$rc" = 0 ] || failed+=("srq_test.py")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true

sroce_pair_remove

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "srq: all passed"
