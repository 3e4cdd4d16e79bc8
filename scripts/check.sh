#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make check`: set up what is missing, then run every test the project
# has, and end with one "N passed, N failed" line.
#
#   build       sroce.ko against Debian's 6.1 headers, W=1, no warning
#   sparse      make C=2, no sparse report
#   checkpatch  checkpatch.pl --strict: 0 errors, warnings and checks
#   kernel-doc  scripts/kernel-doc on every source file, no warning
#   shell       shellcheck on every shell script of the project
#   kunit.*     every KUnit case, in a QEMU kernel built from linux-source
#   vm:*        each VM scenario on the stock Debian kernel and on the
#               debug (KASAN, lockdep, kmemleak) kernel
#   harness     the VM harness's selftest: it must catch what it claims to
#
# SROCE_CHECK_ONLY="build sparse ..." limits the run to those groups.
# SROCE_VM_JOBS=N runs up to N scenario VMs at a time (run.sh --jobs;
# default 2: one scenario VM alone leaves much of the two cores idle).

set -uo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
cd "$SROCE_TOP" || exit 1

logdir="$SROCE_CACHE/results/check-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logdir"
# Keep the logs of the last ten runs.
find "$SROCE_CACHE/results" -mindepth 1 -maxdepth 1 -name 'check-*' |
	sort | head -n -10 | xargs -r rm -rf
passed=0
failed=0

pass() {
	passed=$((passed + 1))
	echo "PASS: $*"
}

fail() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

wanted() {
	[ -z "${SROCE_CHECK_ONLY:-}" ] || [[ " $SROCE_CHECK_ONLY " == *" $1 "* ]]
}

# run_step NAME COMMAND...: log to $logdir/NAME.log, show the tail on failure
run_step() {
	local name=$1 log="$logdir/$1.log"

	shift
	echo "== $name: $*"
	if "$@" >"$log" 2>&1; then
		return 0
	fi
	tail -n 60 "$log"
	return 1
}

# check_quiet_make STEP DESCRIPTION TARGET: make TARGET with W=1 must
# succeed without a single compiler or sparse warning.
check_quiet_make() {
	if run_step "$1" make -C "$SROCE_TOP" "$3" W=1 &&
	   ! grep -E '(warning|error):' "$logdir/$1.log"; then
		pass "$2"
	else
		fail "$2"
	fi
}

check_checkpatch() {
	if run_step checkpatch scripts/checkpatch.sh; then
		pass "checkpatch --strict"
	else
		fail "checkpatch --strict"
	fi
	tail -n 1 "$logdir/checkpatch.log"
}

check_kerneldoc() {
	if run_step kernel-doc scripts/kernel-doc.sh; then
		pass "kernel-doc"
	else
		fail "kernel-doc"
	fi
}

check_shellcheck() {
	local files

	mapfile -t files < <(git ls-files '*.sh' .ci/run)
	if run_step shellcheck shellcheck -x "${files[@]}"; then
		pass "shellcheck (${#files[@]} scripts)"
	else
		fail "shellcheck"
	fi
}

check_kunit() {
	local result="$SROCE_CACHE/kunit/last-result" line cases=0

	rm -f "$result"
	run_step kunit scripts/kunit.sh
	grep -E '^\[|Testing complete|Ran [0-9]+' "$logdir/kunit.log" | tail -n 3
	if [ ! -s "$result" ]; then
		fail "kunit (no results: see $logdir/kunit.log)"
		return
	fi
	while read -r line; do
		cases=$((cases + 1))
		case $line in
		PASS\ *) pass "kunit ${line#PASS }" ;;
		*) fail "kunit ${line#* }" ;;
		esac
	done <"$result"
	echo "kunit: $cases cases"
}

# check_vm KERNEL: every sroce scenario on one kernel. run.sh prints its
# PASS/FAIL lines on stdout, progress and failing consoles on stderr.
check_vm() {
	local kernel=$1 out line scenarios

	out="$logdir/vm-$kernel.results"

	echo "== vm-$kernel"
	mapfile -t scenarios < <(grep -v '^#' tools/testing/sroce-vm/check-scenarios |
		sed 's|^|tools/testing/sroce-vm/scenarios/|')
	tools/testing/sroce-vm/run.sh --kernel "$kernel" --jobs "${SROCE_VM_JOBS:-2}" \
		"${scenarios[@]}" \
		>"$out" 2>"$logdir/vm-$kernel.log"
	if ! grep -qE '^(PASS|FAIL): ' "$out"; then
		tail -n 60 "$logdir/vm-$kernel.log"
		fail "vm [$kernel] (harness produced no result: see $logdir/vm-$kernel.log)"
		return
	fi
	grep -q '^FAIL: ' "$out" && tail -n 80 "$logdir/vm-$kernel.log"
	while read -r line; do
		case $line in
		PASS:\ *) pass "vm ${line#PASS: }" ;;
		FAIL:\ *) fail "vm ${line#FAIL: }" ;;
		esac
	done < <(grep -E '^(PASS|FAIL): ' "$out")
	check_vm_suites "$kernel" "$logdir/vm-$kernel.log"
}

# check_vm_suites KERNEL LOG: one pass/fail per test of the scenarios that
# run a suite (verbs, rcops, uc, ud, srq, cm, perftest and, from guest a of
# the two-guest scenarios, interop, interop-sroce and wire-faults:
# "ok N - name", "not ok N - name: why";
# integrity: "tag op=... result=PASS|FAIL"; kverbs: "sroce-kverbs: ok name",
# "sroce-kverbs: FAIL name: why"), from the results the guest left in the
# run directory.
check_vm_suites() {
	local kernel=$1 run file line suite

	run=$(sed -n 's/^sroce-vm: results in //p' "$2" | head -n 1)
	[ -n "$run" ] || return 0
	for file in "$run/$kernel"/verbs/results/verbs*.txt \
		    "$run/$kernel"/rcops/results/rcops.txt \
		    "$run/$kernel"/uc/results/uc.txt \
		    "$run/$kernel"/ud/results/ud.txt \
		    "$run/$kernel"/srq/results/srq.txt \
		    "$run/$kernel"/cm/results/cm.txt \
		    "$run/$kernel"/cm/results/cm_test.txt \
		    "$run/$kernel"/perftest/results/perftest.txt \
		    "$run/$kernel"/interop/a/results/interop.txt \
		    "$run/$kernel"/interop-sroce/a/results/interop.txt \
		    "$run/$kernel"/wire-faults/a/results/wire-faults.txt; do
		[ -f "$file" ] || continue
		suite=${file#"$run/$kernel/"}
		suite=${suite%%/*}
		while read -r line; do
			case $line in
			ok\ *) pass "vm $suite [$kernel] ${line#ok }" ;;
			not\ ok\ *) fail "vm $suite [$kernel] ${line#not ok }" ;;
			esac
		done <"$file"
	done
	file=$run/$kernel/integrity/results/integrity-summary.txt
	if [ -f "$file" ]; then
		while read -r tag line; do
			case $line in
			*result=PASS*) pass "vm integrity [$kernel] $tag" ;;
			*) fail "vm integrity [$kernel] $tag: $line" ;;
			esac
		done <"$file"
	fi
	file=$run/$kernel/kverbs/results/kverbs.txt
	[ -f "$file" ] || return 0
	while read -r line; do
		case $line in
		sroce-kverbs:\ ok\ *) pass "vm kverbs [$kernel] ${line#sroce-kverbs: ok }" ;;
		sroce-kverbs:\ FAIL\ *) fail "vm kverbs [$kernel] ${line#sroce-kverbs: FAIL }" ;;
		esac
	done <"$file"
}

echo "== setup"
if ! scripts/setup.sh >"$logdir/setup.log" 2>&1; then
	tail -n 40 "$logdir/setup.log"
	echo "setup failed: see $logdir/setup.log"
	echo "0 passed, 1 failed"
	exit 1
fi

wanted build && check_quiet_make build "build (W=1, no warnings)" modules
# C=2 checks every file, whether or not it needs rebuilding.
wanted sparse && check_quiet_make sparse "sparse (C=2)" sparse
wanted checkpatch && check_checkpatch
wanted kernel-doc && check_kerneldoc
wanted shellcheck && check_shellcheck
wanted kunit && check_kunit
wanted vm-stock && check_vm stock
if wanted vm-debug; then
	if run_step debug-kernel scripts/debug-kernel.sh; then
		check_vm debug
	else
		fail "debug kernel build (see $logdir/debug-kernel.log)"
	fi
fi

if wanted harness; then
	if run_step harness tools/testing/sroce-vm/selftest.sh; then
		pass "VM harness selftest (splats, crashes, timeouts, KASAN and leaks are caught)"
	else
		fail "VM harness selftest"
	fi
	tail -n 1 "$logdir/harness.log"
fi

echo "logs: $logdir"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
