#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Ring fuzzer scenario: tools/testing/sroce-fuzz/ringfuzz maps the rxe-ABI
# rings of user QPs, SRQs and CQs on sroce0 and writes into them what
# librxe never would: random WQE bytes; opcodes out of range or kernel
# only; num_sge past the limit; SGE lengths whose sum passes 2^32; inline
# data longer than max_inline; bogus, foreign-PD and out-of-MR keys and
# addresses; bad atomics; UD AH numbers that are 0, destroyed, of another
# PD or random; a scribbled ring header; producer indices moved
# backwards (audit item 17), far beyond the ring and raced by a second
# thread while doorbells ring in RTS, ERR and RESET; bad receive WQEs in
# an RQ and an SRQ, consumed by SENDs from well-behaved QPs on sroce1; CQ
# consumer indices past the producer, backwards, random and raced.  The
# tool checks the completions (each WQE once, in order, bad ones in
# error, well formed), the canaries in the ring headers and tails and
# around every MR, the slots the kernel must not write, the CQ_ERR event
# of an overflowed CQ, and after each group of families that a fresh RC
# pair still moves patterned data exactly.  Then everything is destroyed,
# both links deleted and sroce unloaded.  Results (one "ok N - family"
# line each) land in $SROCE_RESULTS/ringfuzz.txt.
#
# The small volume (sroce_small) runs 3 cases per family (every case
# family and check: about 18 s of fuzzing on the stock kernel, 30-50 s
# on the debug kernel); the full volume 60 cases per family on the stock
# kernel, 20 on the debug kernel (a case costs about 0.6 s and 0.7 s
# there).  Kernel command line: sroce_ringfuzz.cases=N overrides the
# count, sroce_ringfuzz.seed=S replays a run (the seed is printed),
# sroce_ringfuzz.only=NAME runs one family.
#
#   veth0 (10.0.0.1) <-- veth pair --> veth1 (10.0.0.2)
#     sroce0 (fuzzed rings)              sroce1 (well-behaved peers)
#
# Two vCPUs, so that the racing thread really runs beside the kernel.
#
# sroce-vm: build-prog sroce-fuzz
# sroce-vm: timeout 1200
# sroce-vm: cpus 2

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=ringfuzz

# cmdline_var NAME DEFAULT: sroce_ringfuzz.NAME=VALUE (sroce_cmdline_var)
cmdline_var() { sroce_cmdline_var sroce_ringfuzz "$@"; }

if sroce_small; then
	cases=3
elif [ "$SROCE_KERNEL" = debug ]; then
	cases=20
else
	cases=60
fi
cases=$(cmdline_var cases "$cases")
seed=$(cmdline_var seed "$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')")
only=$(cmdline_var only "")

PROG=${SROCE_PROGS:?}/ringfuzz
[ -x "$PROG" ] || sroce_fail "$PROG was not built"

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1
G0=$(sroce_gid_index sroce0 10.0.0.1)
G1=$(sroce_gid_index sroce1 10.0.0.2)

args=(-a sroce0 -b sroce1 -g "$G0" -G "$G1" -n "$cases" -s "$seed")
[ -z "$only" ] || args+=(-f "$only")
sroce_log "ringfuzz ${args[*]}"
failed=()
t0=$SECONDS
set +e
timeout -k 5 1000 "$PROG" "${args[@]}" 2>&1 | tee "$SROCE_RESULTS/ringfuzz.txt"
rc=${PIPESTATUS[0]}
set -e
sroce_log "ringfuzz: exit $rc after $((SECONDS - t0)) s"
[ "$rc" = 0 ] || failed+=("ringfuzz (exit $rc, seed $seed)")
grep -q '^ok [0-9]* - healthy-after-cq' "$SROCE_RESULTS/ringfuzz.txt" ||
	failed+=("ringfuzz did not reach its last check")

rdma statistic show link sroce0/1 || true
sroce_pair_remove

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "ringfuzz: all passed"
