#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# RC operations scenario: every RC operation between two sroce devices
# (SEND, SEND_IMM, SEND_INV, WRITE, WRITE_IMM, READ, atomics, memory
# windows, errors, RNR, timeouts, local delivery, counters) through stock
# rdma-core's pyverbs, with data, status and memory checks.
#
#   veth0 (10.0.0.1, fd00::1) <-- veth pair --> veth1 (10.0.0.2, fd00::2)
#     sroce0 (requester)                           sroce1 (responder)
#
# The suite is tools/testing/sroce-verbs/rc_test.py; its TAP-like output is
# kept in $SROCE_RESULTS/rcops.txt.  RCOPS_FILTER (a regex of test names)
# runs a subset: a wrapper scenario exports it and sources this file.  At
# the small volume (sroce_small; SROCE_VOLUME reaches the suite through the
# environment) the suite runs every test, its largest messages 160 packets
# (still past the requester's 128-packet window) instead of 1 MiB.
# sroce-vm: timeout 600
# sroce-vm: mem 4096

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=rcops PYTHONDONTWRITEBYTECODE=1
SUITE=${SROCE_TOP:?}/tools/testing/sroce-verbs/rc_test.py
PY=/usr/bin/python3

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
# netdev MTU 9000: path MTU 4096 is really 4096.
sroce_rdma_pair sroce sroce0 sroce1 9000

failed=()
sroce_log "running $PY -u $SUITE sroce0 sroce1"
set +e
"$PY" -u "$SUITE" --filter "${RCOPS_FILTER:-}" sroce0 sroce1 2>&1 |
	tee "$SROCE_RESULTS/rcops.txt"
rc=${PIPESTATUS[0]}
set -e
sroce_log "rc_test.py: exit $rc"
[ "$rc" = 0 ] || failed+=("rc_test.py")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true

# Nothing the suite did may still hold the devices or the module.
sroce_pair_remove

[ ${#failed[@]} -eq 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "rcops: all passed"
