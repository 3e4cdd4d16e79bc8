#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel verbs scenario: sroce_vm_kverbs.ko (kverbs-module/) runs its checks
# against sroce0 through ib_core's kernel API (QPs, flushes, fast
# registration, CQ arming and overflow, SRQs, AHs in atomic context) and
# prints "sroce-kverbs: ok NAME" or "sroce-kverbs: FAIL NAME: WHY" per
# check and "sroce-kverbs: N passed, N failed" at the end.  Then
# sroce_vm_kdata.ko moves data between sroce0 and sroce1 the way a kernel
# ULP does (kmalloc'd buffers through ib_dma_*, fast-registered MRs,
# RDMA WRITE/READ, SEND_WITH_INV and LOCAL_INV), with the same line
# format ("data-*" checks).  Then the modules, the devices and sroce are
# removed, so that kmemleak (debug kernel) sees whatever a check left
# behind.
#
#   veth0 (10.0.0.1) <-- veth pair --> veth1 (10.0.0.2)
#     sroce0 (kverbs: tested alone;     sroce1 (kdata: the responder)
#     kdata: the requester); the fake peer 10.0.0.9 is a permanent neighbour
#
# The result lines are kept in $SROCE_RESULTS/kverbs.txt.
# sroce-vm: build-module kverbs-module
# sroce-vm: timeout 300

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=kverbs
KO=${SROCE_MODULES:?}/sroce_vm_kverbs.ko
KDATA=$SROCE_MODULES/sroce_vm_kdata.ko
PEER4=10.0.0.9
PEER_MAC=02:00:00:00:00:09

{ [ -f "$KO" ] && [ -f "$KDATA" ]; } || sroce_fail "the test modules were not built"
sroce_modprobe ib_core
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000
# Kernel QPs and AHs carry the caller's destination MAC: the neighbour
# entry only documents the peer; nothing resolves it or sends to it.
/usr/sbin/ip neigh replace "$PEER4" lladdr "$PEER_MAC" dev veth0 nud permanent ||
	sroce_fail "static neighbour $PEER4"

sroce_log "insmod $KO"
mark="sroce-kverbs-scenario-$$-$RANDOM"
echo "$mark" >/dev/kmsg
/usr/sbin/insmod "$KO" devname=sroce0 peer_ip="$PEER4" peer_mac="$PEER_MAC" ||
	sroce_fail "insmod $KO"
sroce_log "insmod $KDATA"
/usr/sbin/insmod "$KDATA" dev0=sroce0 dev1=sroce1 || sroce_fail "insmod $KDATA"
# The checks run inside insmod; their lines follow the mark.
dmesg | sed -n "/$mark/,\$p" | grep -o 'sroce-kverbs: .*' >"$SROCE_RESULTS/kverbs.txt" || true
cat "$SROCE_RESULTS/kverbs.txt"

failed=()
rmmod sroce_vm_kverbs || failed+=("rmmod sroce_vm_kverbs")
rmmod sroce_vm_kdata || failed+=("rmmod sroce_vm_kdata")
rdma -j resource show || failed+=("rdma resource show")
rdma link del sroce0 || failed+=("rdma link del sroce0")
rdma link del sroce1 || failed+=("rdma link del sroce1")
rmmod sroce || failed+=("rmmod sroce")
/usr/sbin/ip link del veth0 || true

summary=$(grep -E '^sroce-kverbs: [0-9]+ passed, [0-9]+ failed$' \
	"$SROCE_RESULTS/kverbs.txt" || true)
[ "$(grep -c . <<<"$summary")" = 2 ] || failed+=("not two summary lines")
if grep -q '^sroce-kverbs: FAIL' "$SROCE_RESULTS/kverbs.txt"; then
	failed+=("$(grep -c '^sroce-kverbs: FAIL' "$SROCE_RESULTS/kverbs.txt") checks")
fi
if grep -qv ' 0 failed$' <<<"$summary"; then
	failed+=("summary: $(tr '\n' ' ' <<<"$summary")")
fi
grep -q '^sroce-kverbs: ok ' "$SROCE_RESULTS/kverbs.txt" || failed+=("no check passed")

[ ${#failed[@]} -eq 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "all passed: $(tr '\n' ' ' <<<"$summary")"
