#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Self-test of the VM harness.  Scenario "smoke" must PASS and every
# negative scenario must FAIL, for the right reason:
#   selftest-splat    a fake "WARNING:" line written to /dev/kmsg (exit 0)
#   selftest-warn     a real WARN() from a test module
#   selftest-crash    a kernel panic (sysrq c)
#   selftest-timeout  outlives its 10 s limit
#   selftest-kasan    a slab out-of-bounds write (KASAN report)
#   selftest-leak     leaked allocations (kmemleak report)
#   selftest-hang     insmod blocked for 70 s (hung-task report at 30 s)
#   selftest-splat+smoke  a boot group (run.sh A+B): the splat fails its
#                     member and the group's line, not smoke after it
# The stock kernel runs the first five and the group; the debug kernel
# runs warn, crash, kasan and leak (with --quick: smoke and splat on each
# kernel).
#
# Usage: tools/testing/sroce-vm/selftest.sh [--kernel stock,debug] [--quick]
#   --quick   smoke and selftest-splat only
# SROCE_VM_JOBS=N: scenario VMs at a time (run.sh --jobs; default 2).
# Prints run.sh's lines, one "ok"/"not ok" line per check, and
# "harness selftest: N passed, N failed".  Exit: 0 only if every check held.

set -euo pipefail

# shellcheck source=tools/testing/sroce-vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNELS=stock,debug
QUICK=0
PASSED=0
FAILED=0

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) KERNELS=${2:?}; shift ;;
		--quick) QUICK=1 ;;
		*) vm_die "usage: $0 [--kernel stock,debug] [--quick]" ;;
		esac
		shift
	done
}

check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
		PASSED=$((PASSED + 1))
	else
		echo "not ok - $what"
		FAILED=$((FAILED + 1))
	fi
}

has_line() { grep -qE -- "$1" "$2"; }

# The expected verdict of each scenario, as an ERE after "PASS: "/"FAIL: ".
declare -A EXPECT=(
	[smoke]='PASS: smoke \[@K@\]$'
	[selftest-splat]='FAIL: selftest-splat \[@K@\] \(kernel splat: .*WARNING: CPU: 0 PID: 1 at fake/'
	[selftest-warn]='FAIL: selftest-warn \[@K@\] \(.*kernel splat: .*WARNING: .*sroce_vm_selftest\.c'
	[selftest-crash]='FAIL: selftest-crash \[@K@\] \(kernel panic'
	[selftest-timeout]='FAIL: selftest-timeout \[@K@\] \(timeout after 10s\)$'
	[selftest-kasan]='FAIL: selftest-kasan \[@K@\] \(.*kernel splat: .*BUG: KASAN: slab-out-of-bounds'
	[selftest-leak]='FAIL: selftest-leak \[@K@\] \(kernel splat: unreferenced object'
	[selftest-hang]='FAIL: selftest-hang \[@K@\] \(.*kernel splat: .*INFO: task insmod:[0-9]+ blocked for more than 30 seconds'
	[selftest-splat+smoke]='FAIL: selftest-splat\+smoke \[@K@\] \(kernel splat: .*WARNING: CPU: 0 PID: 1 at fake/'
)

# The debug kernel runs what only it can show (a WARN under panic_on_warn,
# a crash, KASAN and kmemleak reports, the hung-task report that its config
# turns on); the host's side (a splat line in the console, the time limit,
# results reaching the host) is the same for both kernels and is tested on
# the stock one, and every debug scenario of make check passes through it
# again.
scenarios_for() {
	if [ "$1" = debug ] && [ "$QUICK" = 0 ]; then
		echo selftest-warn selftest-crash selftest-kasan selftest-leak selftest-hang
		return 0
	fi
	echo smoke selftest-splat
	[ "$QUICK" = 1 ] && return
	echo selftest-warn selftest-crash selftest-timeout selftest-splat+smoke
}

# test_kernel RUNDIR KERNEL
test_kernel() {
	local run=$1 k=$2 out=$1/stdout.$2 rc=0 s scenarios lines
	read -r -a scenarios <<<"$(scenarios_for "$k" | tr '\n' ' ')"
	"$VM_DIR/run.sh" --kernel "$k" --jobs "${SROCE_VM_JOBS:-2}" --results "$run" \
		"${scenarios[@]}" >"$out" || rc=$?
	cat "$out"
	check "[$k] run.sh exits 1 when a scenario fails (got $rc)" [ "$rc" = 1 ]
	# a boot group A+B has a line for each member and one of its own
	lines=$(printf '%s\n' "${scenarios[@]}" | awk -F+ '{ n += NF > 1 ? NF + 1 : 1 } END { print n }')
	check "[$k] one line per scenario" \
		[ "$(grep -cE '^(PASS|FAIL): ' "$out")" = "$lines" ]
	for s in "${scenarios[@]}"; do
		check "$s [$k]: ${EXPECT[$s]//@K@/$k}" has_line "^${EXPECT[$s]//@K@/$k}" "$out"
	done
	if [[ " ${scenarios[*]} " == *" selftest-splat+smoke "* ]]; then
		check "selftest-splat+smoke [$k]: smoke after the splat passes, on its own and in the group" \
			[ "$(grep -c "^PASS: smoke \[$k\]$" "$out")" = 2 ]
	fi
	[[ " ${scenarios[*]} " == *" smoke "* ]] || return 0
	check "smoke [$k]: its results reached the host" \
		has_line "^smoke ran on " "$run/$k/smoke/results/smoke.txt"
}

# perf_run against a stand-in perftest whose first client run fails its
# clock calibration: the run is made again and its figure taken, once.
# Prints the exit status, the attempts and the figure.
perf_retry_probe() { # DIR CALIBRATION-FAILURES
	(
		cd "$1" || exit 1
		# shellcheck source=tools/testing/sroce-vm/perftest-lib.sh
		source "$VM_DIR/perftest-lib.sh"
		n=0 fails=$2
		perf_run_once() {
			n=$((n + 1))
			if [ "$n" -le "$fails" ]; then
				echo 'Correlation coefficient r^2: 0.70 < 0.9' >"perf-$1-cli.txt"
				PERF_WHY="result '0.00' is not > 0"
				return 1
			fi
			PERF_VAL=42.5 PERF_WHY=""
		}
		perf_run t ib_send_bw d0 d1 4 4096 65536 10 -R 2>/dev/null
		echo "rc=$? attempts=$n val=${PERF_VAL:-}"
	)
}

main() {
	local run k
	parse_args "$@"
	mkdir -p "$VM_RUNS"
	run=$(mktemp -d "$VM_RUNS/$(date +%Y%m%d-%H%M%S)-selftest-XXXX")
	check "perf_run runs perftest again after a failed clock calibration" \
		[ "$(perf_retry_probe "$run" 1)" = "rc=0 attempts=2 val=42.5" ]
	check "perf_run gives up after a second failed calibration" \
		[ "$(perf_retry_probe "$run" 2)" = "rc=1 attempts=2 val=" ]
	for k in ${KERNELS//,/ }; do test_kernel "$run" "$k"; done
	echo "harness selftest: $PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}

main "$@"
