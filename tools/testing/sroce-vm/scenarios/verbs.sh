#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Verbs scenario: the verbs objects of an sroce device (PD, CQ, QP, SRQ, AH,
# MR, MW, rings, QP state machine, restrack) through stock rdma-core's
# pyverbs, then the 1,000-object stress (100 at the small volume), then
# removal of the devices and the module (which must not be held by
# anything the tests left behind).
#
#   veth0 (10.0.0.1) <-- veth pair --> veth1 (10.0.0.2)
#     sroce0 (tested)                    sroce1 (the peer GID)
#
# The suite is tools/testing/sroce-verbs/verbs_test.py; its TAP-like
# output is kept in $SROCE_RESULTS/verbs.txt and verbs-stress.txt.
# sroce-vm: timeout 420
# sroce-vm: mem 4096

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=verbs PYTHONDONTWRITEBYTECODE=1
SUITE=${SROCE_TOP:?}/tools/testing/sroce-verbs/verbs_test.py
PY=/usr/bin/python3

# suite NAME ARGS...: run the suite, output to the console and NAME.txt.
suite() {
	local name=$1 rc

	shift
	sroce_log "running $name: $PY -u $SUITE $*"
	set +e
	"$PY" -u "$SUITE" "$@" 2>&1 | tee "$SROCE_RESULTS/$name.txt"
	rc=${PIPESTATUS[0]}
	set -e
	sroce_log "$name: exit $rc"
	return "$rc"
}

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_veth veth0 veth1
sroce_wait_link_up veth0
sroce_wait_link_up veth1
rdma link add sroce0 type sroce netdev veth0 || sroce_fail "rdma link add sroce0"
rdma link add sroce1 type sroce netdev veth1 || sroce_fail "rdma link add sroce1"
sroce_wait_rdma_ready sroce0
sroce_wait_rdma_ready sroce1

# The peer address the QPs and AHs point at: not a local address (ib_core
# cannot resolve a MAC for an address on another interface of this host)
# but a neighbour with a permanent entry, so no packet is ever needed.
PEER4=10.0.0.9
/usr/sbin/ip neigh replace "$PEER4" lladdr 02:00:00:00:00:09 dev veth0 nud permanent ||
	sroce_fail "static neighbour $PEER4"
PEER_GID=0000:0000:0000:0000:0000:ffff:0a00:0009

args=(--peer-dev sroce1 --peer-gid "$PEER_GID" --netdev veth0 --peer-netdev veth1 sroce0 1)
# The small volume stresses with 100 QPs and 100 MRs instead of 1,000: past
# 64, so the QPN and key xarrays still grow a level, and every object still
# goes through create, restrack and destroy (kmemleak's part).
stress=()
sroce_small && stress=(--objects 100)
failed=()
suite verbs "${args[@]}" || failed+=(verbs)
suite verbs-stress --group stress "${stress[@]}" "${args[@]}" || failed+=(verbs-stress)

# Nothing may still hold the devices or the module.
rdma -j resource show || failed+=("rdma resource show")
sroce_pair_remove
/usr/sbin/ip link del veth0 || true

[ ${#failed[@]} -eq 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "all passed"
