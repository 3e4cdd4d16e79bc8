#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# UD scenario: datagrams between two sroce devices on a veth pair:
# ibv_ud_pingpong with data validation (-c) at 1 B..4 KiB over IPv4 and
# IPv6 GIDs, and tools/testing/sroce-verbs/ud_test.py (GRH, Q_Key rules,
# lengths, drops and their counters).  The small volume (sroce_small) runs a
# twentieth of the pingpong iterations (sroce_iters) and no 2 KiB pingpong
# (a datagram is one packet at any size: 1 B and the 4 KiB MTU are the
# edges); ud_test.py is already small and runs whole.
#
#   veth0 (10.0.0.1, fd00::1) <-- veth pair --> veth1 (10.0.0.2, fd00::2)
#     sroce0 (client)                             sroce1 (server)
#
# sroce-vm: timeout 600

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=ud PYTHONDONTWRITEBYTECODE=1
SUITE=${SROCE_TOP:?}/tools/testing/sroce-verbs/ud_test.py
PY=/usr/bin/python3

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000

sizes="1 2048 4096"
sroce_small && sizes="1 4096"
failed=()
for size in $sizes; do
	sroce_pingpong ud "$size-v4" 120 "$size" "$(sroce_iters 100)" - 4 ||
		failed+=("ud_pingpong size $size IPv4")
done
sroce_pingpong ud "4096-v6" 120 4096 "$(sroce_iters 50)" - 6 ||
	failed+=("ud_pingpong size 4096 IPv6")

sroce_log "running $PY -u $SUITE sroce0 sroce1"
set +e
"$PY" -u "$SUITE" --filter "${UD_FILTER:-}" sroce0 sroce1 2>&1 |
	tee "$SROCE_RESULTS/ud.txt"
rc=${PIPESTATUS[0]}
set -e
sroce_log "ud_test.py: exit $rc"
[ "$rc" = 0 ] || failed+=("ud_test.py")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true
sroce_pair_remove

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "ud: all passed"
