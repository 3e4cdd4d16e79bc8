#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make check` (the CI tier) and `make check-full` (scripts/check.sh
# --full): set up what is missing, then run the tier's tests, print each
# step's time and the total, and end with one "N passed, N failed" line.
#
#   build       sroce.ko against Debian's 6.1 headers, W=1, no warning
#   sparse      make C=2, no sparse report
#   checkpatch  checkpatch.pl --strict: 0 errors, warnings and checks
#   kernel-doc  scripts/kernel-doc on every source file, no warning
#   layers      the driver's layer rule: no include goes up a layer, no
#               cycle between its folders (scripts/layers.sh)
#   shell       shellcheck on every shell script of the project
#   tiers       every scenario has its line in tools/testing/sroce-vm/tiers
#   in-tree     the driver dropped into linux-source-6.1, RDMA_SROCE=m with
#               its KUnit suites, W=1, no warning (scripts/intree.sh)
#   kunit.*     every KUnit case, as a module in the debug kernel (its VM
#               runs beside the first scenarios of vm-debug)
#   vm-stock    the tier's VM scenarios on the stock Debian kernel, at
#               its "stock" volume in make check (full, or small)
#   vm-debug    the same on the debug (KASAN, lockdep, kmemleak) kernel:
#               make check runs each at its "debug" volume of the tiers
#               file (small: the debug sweep), make check-full at full
#   harness     the VM harness's selftest: it must catch what it claims to
#
# Which scenario runs in which tier, at which volume, is read from the
# tiers file only.  make check warns when it took longer than its
# 50-minute budget, and when a scenario exceeded its budget there.
#
# SROCE_CHECK_ONLY="build sparse ..." limits the run to those groups.
# SROCE_VM_JOBS=N runs up to N scenario VMs at a time (run.sh --jobs;
# default 2: one scenario VM alone leaves much of the two cores idle).

set -uo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
cd "$SROCE_TOP" || exit 1

TIER=ci
case ${1:-} in
'') ;;
--full) TIER=full ;;
*) echo "usage: $0 [--full]" >&2; exit 2 ;;
esac
TIERS=tools/testing/sroce-vm/tiers
# make check's budget: 50 minutes with the kernels cached, 75 when the
# debug kernel had to be built (an empty SROCE_CACHE); CI's hard limit is
# 90. The fuzzers and the teardown loops took it from 36.5 to 45 minutes.
CI_BUDGET=3000
CI_BUDGET_COLD=4500
T0=$SECONDS
declare -a STEP_TIMES=()

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

# timed NAME COMMAND...: run COMMAND, print and record how long it took.
timed() {
	local name=$1 t0=$SECONDS rc=0

	shift
	"$@" || rc=$?
	echo "-- $name: $((SECONDS - t0)) s"
	STEP_TIMES+=("$name $((SECONDS - t0))")
	return "$rc"
}

# tier_lines: the tiers file without comments, one scenario a line.
tier_lines() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TIERS"
}

# tier_scenarios KERNEL: "name volume budget" of each scenario this tier
# runs on KERNEL through check_vm (kunit has a step of its own); in make
# check's debug sweep, a boot group's members as one "A+B+C" at the place
# of its first member, with the sum of their budgets; longest first.
tier_scenarios() {
	local kernel=$1 name tier stock debug boot budget vol g pair
	local -a order=()
	local -A members=() sums=() vols=()

	while read -r name tier stock debug boot budget; do
		[ "$name" != kunit ] || continue
		case $TIER/$tier in
		ci/ci) ;;
		full/ci|full/full) ;;
		*) continue ;;
		esac
		if [ "$kernel" = stock ]; then vol=$stock; budget=${budget%/*}; else vol=$debug; budget=${budget#*/}; fi
		[ "$TIER" = ci ] || vol=full
		[ "$vol" = - ] && continue
		g=$name
		if [ "$TIER/$kernel" = ci/debug ] && [ "$boot" != - ]; then g=group:$boot; fi
		if [ -z "${members[$g]:-}" ]; then
			order+=("$g")
			sums[$g]=0
		fi
		members[$g]+=${members[$g]:++}$name
		vols[$g]=$vol
		if [ "$budget" = - ] || [ "${sums[$g]}" = - ]; then
			sums[$g]=-
		else
			sums[$g]=$((sums[$g] + budget))
		fi
	done < <(tier_lines)
	# Longest first, so that two VMs at a time end together; a two-guest
	# scenario takes both slots, so those come last.
	for g in "${order[@]}"; do
		grep -qx '# sroce-vm: hosts 2' "tools/testing/sroce-vm/scenarios/${members[$g]%%+*}.sh" &&
			pair=1 || pair=0
		echo "$pair ${sums[$g]/-/0} ${members[$g]} ${vols[$g]} ${sums[$g]}"
	done | sort -k1,1n -k2,2nr -s | cut -d' ' -f3-
}

# check_tiers: one line per scenario file, every line a scenario file,
# and every field one the tiers file allows.
check_tiers() {
	local name tier stock debug boot budget bad=() f

	while read -r name tier stock debug boot budget; do
		[ -f "tools/testing/sroce-vm/scenarios/$name.sh" ] || bad+=("$name: no such scenario")
		[[ $tier =~ ^(ci|full|manual)$ ]] || bad+=("$name: tier '$tier'")
		[[ $stock =~ ^(full|small|-)$ ]] || bad+=("$name: stock '$stock'")
		[[ $debug =~ ^(full|small|-)$ ]] || bad+=("$name: debug '$debug'")
		[[ $boot =~ ^([a-z0-9]+|-)$ ]] || bad+=("$name: boot '$boot'")
		[[ $budget =~ ^([0-9]+|-)/([0-9]+|-)$ ]] || bad+=("$name: budget '$budget'")
	done < <(tier_lines)
	for f in tools/testing/sroce-vm/scenarios/*.sh; do
		f=$(basename "$f" .sh)
		tier_lines | awk -v n="$f" '$1 == n { found = 1 } END { exit !found }' ||
			bad+=("$f: no line in $TIERS")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		pass "tiers: every scenario has one valid line in $TIERS"
	else
		printf '  %s\n' "${bad[@]}"
		fail "tiers: $TIERS (${bad[*]})"
	fi
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

# check_quiet_script STEP DESCRIPTION COMMAND...: COMMAND must succeed
# without a single compiler warning.
check_quiet_script() {
	local step=$1 what=$2

	shift 2
	if run_step "$step" "$@" && ! grep -E '(warning|error):' "$logdir/$step.log"; then
		pass "$what"
	else
		fail "$what"
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

check_layers() {
	if run_step layers scripts/layers.sh; then
		pass "layers"
	else
		fail "layers"
	fi
	tail -n 1 "$logdir/layers.log"
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

# check_kunit [--from RUN]: one pass/fail per KUnit case (scripts/kunit.sh;
# with --from, the kunit scenario already ran in run.sh's directory RUN).
check_kunit() {
	local result="$SROCE_CACHE/kunit/last-result" line cases=0

	rm -f "$result"
	run_step kunit scripts/kunit.sh "$@"
	grep -E '^kunit: |^(PASS|FAIL): kunit' "$logdir/kunit.log" | tail -n 3
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

# run_vm KERNEL VOLUME LOGNAME SCENARIO...: run.sh on those scenarios,
# its PASS/FAIL lines to $logdir/LOGNAME.results, its stderr to .log.
run_vm() {
	local kernel=$1 volume=$2 name=$3

	shift 3
	tools/testing/sroce-vm/run.sh --kernel "$kernel" --volume "$volume" \
		--jobs "${SROCE_VM_JOBS:-2}" "$@" \
		>>"$logdir/$name.results" 2>>"$logdir/$name.log"
}

# check_vm KERNEL: the tier's scenarios on one kernel, one run.sh per
# volume. run.sh prints its PASS/FAIL lines on stdout, progress and
# failing consoles on stderr.
check_vm() {
	local kernel=$1 out line vol name volume budget run
	local -A by_volume=() budgets=()

	out="$logdir/vm-$kernel.results"
	: >"$out"
	echo "== vm-$kernel ($TIER tier)"
	while read -r name volume budget; do
		by_volume[$volume]+=" $name"
		# shellcheck disable=SC2034 # check_budgets reads it by name
		budgets[$name]=$budget
	done < <(tier_scenarios "$kernel")
	# The kunit VM runs beside the debug kernel's first scenarios, where
	# it keeps a core busy that would otherwise idle (check_kunit --from
	# reads it); its volume does not matter.
	KUNIT_RUN=""
	if [ "$kernel" = debug ] && wanted kunit; then
		vol=small
		[ -n "${by_volume[small]:-}" ] || vol=full
		by_volume[$vol]=" kunit${by_volume[$vol]:-}"
	fi
	for vol in full small; do
		[ -n "${by_volume[$vol]:-}" ] || continue
		echo "   $vol volume:${by_volume[$vol]}"
		# shellcheck disable=SC2086 # a list of names
		run_vm "$kernel" "$vol" "vm-$kernel" ${by_volume[$vol]}
		if [[ " ${by_volume[$vol]} " == *" kunit "* ]]; then
			KUNIT_RUN=$(sed -n 's/^sroce-vm: results in //p' "$logdir/vm-$kernel.log" | tail -n 1)
		fi
	done
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
	while read -r run; do
		check_vm_suites "$kernel" "$run"
		check_budgets "$kernel" "$run/times.txt" budgets
	done < <(sed -n 's/^sroce-vm: results in //p' "$logdir/vm-$kernel.log")
}

# check_budgets KERNEL TIMES BUDGETS: a warning for each scenario of the
# CI tier that took longer than its budget in the tiers file.
check_budgets() {
	local kernel=$1 times=$2 name k secs
	local -n limit=$3

	[ "$TIER" = ci ] && [ -f "$times" ] || return 0
	while read -r name k secs; do
		[ "$k" = "$kernel" ] || continue
		[[ ${limit[$name]:--} =~ ^[0-9]+$ ]] || continue
		if [ "${secs%.*}" -gt "${limit[$name]}" ]; then
			echo "WARNING: vm $name [$kernel] took ${secs%.*} s, over its budget of ${limit[$name]} s in $TIERS"
		fi
	done <"$times"
}

# check_vm_suites KERNEL RUN: one pass/fail per test of the scenarios that
# run a suite (verbs, rcops, uc, ud, srq, cm, perftest, ringfuzz, pktfuzz,
# teardown, teardown-local, local, scale, rate and, from guest a of the
# two-guest scenarios, interop, interop-read and wire-faults:
# "ok N - name", "not ok N - name: why";
# integrity: "tag op=... result=PASS|FAIL"; kverbs: "sroce-kverbs: ok name",
# "sroce-kverbs: FAIL name: why"), from the results the guest left in the
# run directory RUN.
check_vm_suites() {
	local kernel=$1 run=$2 file line suite

	for file in "$run/$kernel"/verbs/results/verbs*.txt \
		    "$run/$kernel"/rcops/results/rcops.txt \
		    "$run/$kernel"/uc/results/uc.txt \
		    "$run/$kernel"/ud/results/ud.txt \
		    "$run/$kernel"/srq/results/srq.txt \
		    "$run/$kernel"/cm/results/cm.txt \
		    "$run/$kernel"/cm/results/cm_test.txt \
		    "$run/$kernel"/perftest/results/perftest.txt \
		    "$run/$kernel"/ringfuzz/results/ringfuzz.txt \
		    "$run/$kernel"/pktfuzz/results/pktfuzz.txt \
		    "$run/$kernel"/teardown/results/teardown.txt \
		    "$run/$kernel"/teardown-local/results/teardown.txt \
		    "$run/$kernel"/local/results/local.txt \
		    "$run/$kernel"/scale/results/scale.txt \
		    "$run/$kernel"/rate/results/rate.txt \
		    "$run/$kernel"/interop/a/results/interop.txt \
		    "$run/$kernel"/interop-read/a/results/interop-read.txt \
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
if ! timed setup scripts/setup.sh >"$logdir/setup.log" 2>&1; then
	tail -n 40 "$logdir/setup.log"
	echo "setup failed: see $logdir/setup.log"
	echo "0 passed, 1 failed"
	exit 1
fi

wanted build && timed build check_quiet_make build "build (W=1, no warnings)" modules
# C=2 checks every file, whether or not it needs rebuilding.
wanted sparse && timed sparse check_quiet_make sparse "sparse (C=2)" sparse
wanted checkpatch && timed checkpatch check_checkpatch
wanted kernel-doc && timed kernel-doc check_kerneldoc
wanted layers && timed layers check_layers
wanted shellcheck && timed shellcheck check_shellcheck
wanted tiers && check_tiers
DEBUG_KERNEL=0
if wanted kunit || wanted vm-debug || wanted harness || wanted in-tree; then
	if timed debug-kernel run_step debug-kernel scripts/debug-kernel.sh; then
		DEBUG_KERNEL=1
	else
		fail "debug kernel build (see $logdir/debug-kernel.log)"
	fi
fi
if wanted in-tree; then
	if [ "$DEBUG_KERNEL" = 1 ]; then
		timed in-tree check_quiet_script in-tree "in-tree build (RDMA_SROCE=m with KUnit, W=1, no warnings)" \
			scripts/intree.sh
	else
		fail "in-tree build (no debug kernel source)"
	fi
fi
if wanted kunit && ! wanted vm-debug; then
	if [ "$DEBUG_KERNEL" = 1 ]; then timed kunit check_kunit; else fail "kunit (no debug kernel)"; fi
fi
wanted vm-stock && timed vm-stock check_vm stock
if wanted vm-debug; then
	if [ "$DEBUG_KERNEL" = 1 ]; then
		timed vm-debug check_vm debug
		if wanted kunit; then
			if [ -n "$KUNIT_RUN" ]; then check_kunit --from "$KUNIT_RUN"; else fail "kunit (it did not run)"; fi
		fi
	else
		fail "vm [debug] (no debug kernel)"
		wanted kunit && fail "kunit (no debug kernel)"
	fi
fi

if wanted harness; then
	if timed harness run_step harness tools/testing/sroce-vm/selftest.sh; then
		pass "VM harness selftest (splats, crashes, timeouts, KASAN and leaks are caught)"
	else
		fail "VM harness selftest"
	fi
	tail -n 1 "$logdir/harness.log"
fi

total=$((SECONDS - T0))
echo "== times ($TIER tier)"
for line in "${STEP_TIMES[@]}" "total $total"; do
	printf '   %-12s %5d s\n' "${line% *}" "${line##* }"
done
budget=$CI_BUDGET
for line in "${STEP_TIMES[@]}"; do
	[[ $line != debug-kernel\ * ]] || [ "${line##* }" -le 120 ] || budget=$CI_BUDGET_COLD
done
if [ "$TIER" = ci ] && [ -z "${SROCE_CHECK_ONLY:-}" ] && [ "$total" -gt "$budget" ]; then
	echo "WARNING: make check took $((total / 60)) minutes, over its $((budget / 60))-minute budget"
fi
echo "logs: $logdir"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
