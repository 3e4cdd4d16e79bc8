#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Usage: scripts/kunit.sh [run.sh option...]
#        scripts/kunit.sh --from RUN
#
# Runs sroce's KUnit suites (make kunit) inside the debug kernel (KASAN,
# lockdep, kmemleak; scripts/debug-kernel.sh builds it): the VM scenario
# tools/testing/sroce-vm/scenarios/kunit.sh loads sroce.ko built with
# CONFIG_RDMA_SROCE_KUNIT_TEST=y, whose suites run as it loads, and the
# harness judges the boot as any scenario's (splats, kmemleak, a boot
# splat before the scenario started retried once).  The suites' KTAP
# output is read from that VM's console with the kernel's own
# kunit_parser (tools/testing/kunit of linux-source-6.1) into
#
#   $SROCE_CACHE/kunit/last-result   one line per test case
#
# holding "PASS <suite>.<case>" or "FAIL <suite>.<case>" (and "SKIP
# <suite>.<case>" for skipped cases), one per KUnit case, and one per
# parameter ("<suite>.<case>/<parameter>") for a parameterised case.  A
# VM that fails (a splat, a leak, a crash, no output) adds "FAIL
# kunit.vm: <reason>".
#
# --from RUN reads the results of a run.sh run directory RUN in which the
# kunit scenario already ran (make check runs it beside the debug sweep's
# boot groups, so that no core idles while it runs).
#
# Exit status: 0 only if the VM passed and every case passed.

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

say() { printf 'kunit: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

TOPDIR=$SROCE_CACHE/kunit
RESULT=$TOPDIR/last-result
VM=$SROCE_TOP/tools/testing/sroce-vm

# ktap CONSOLE: the kernel lines the scenario printed, timestamps removed,
# from the first KTAP header on.  A modular build's suites run without the
# top-level header and plan that the built-in executor prints, so they
# are added here.
ktap() {
	local lines

	lines=$(sed -n '/^SROCE-BEGIN /,/^SROCE-RESULT /p' "$1" |
		sed -n 's/^\[ *[0-9]*\.[0-9]*\] //p' |
		sed -n '/KTAP version/,$p')
	printf 'KTAP version 1\n1..%s\n' "$(grep -cE '^(not )?ok [0-9]+ ' <<<"$lines")"
	printf '%s\n' "$lines"
}

# write_result KTAP OUT: one line per case (see the top of this file).
write_result() {
	python3 - "$KUNIT_TOOLS" "$1" "$2" >/dev/null <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import kunit_parser
from kunit_parser import TestStatus

with open(sys.argv[2], errors='replace') as log:
    root = kunit_parser.parse_run_tests(log)

def verdict(test):
    if test.status == TestStatus.SUCCESS:
        return 'PASS'
    if test.status == TestStatus.SKIPPED:
        return 'SKIP'
    return 'FAIL'

# A crash leaves placeholders without names for what never ran.
lines = []
for i, suite in enumerate(root.subtests, 1):
    name = suite.name or f'kunit.missing-suite-{i}'
    for j, case in enumerate(suite.subtests, 1):
        cname = f'{name}.{case.name or f"missing-case-{j}"}'
        # A parameterised case counts once per parameter, as KTAP does.
        params = [f'{verdict(p)} {cname}/{p.name or k}'
                  for k, p in enumerate(case.subtests, 1)]
        lines += params
        # The case itself, unless its parameters already told its story.
        if not params or (verdict(case) == 'FAIL' and
                          not any(p.startswith('FAIL') for p in params)):
            lines.append(f'{verdict(case)} {cname}')
    if not suite.subtests or suite.status in (TestStatus.TEST_CRASHED,
                                              TestStatus.NO_TESTS):
        lines.append(f'FAIL {name}.*')
if not root.subtests:
    lines.append('FAIL kunit.no-suites')
with open(sys.argv[3], 'w') as out:
    out.write(''.join(line + '\n' for line in lines))
EOF
}

# results RUN VERDICTS RC: $RESULT from the kunit job of run directory RUN,
# whose run.sh verdict lines are in the file VERDICTS (RC: run.sh's exit).
results() {
	local job=$1/debug/kunit verdict tmp=$RESULT.tmp

	[ -f "$KUNIT_TOOLS/kunit_parser.py" ] || die "no kunit_parser.py in $KUNIT_TOOLS"
	: >"$tmp"
	if [ -f "$job/console.log" ]; then
		ktap "$job/console.log" >"$job/kunit.ktap"
		write_result "$job/kunit.ktap" "$tmp" || echo "FAIL kunit.parse" >>"$tmp"
	fi
	verdict=$(sed -n 's/^FAIL: kunit \[debug\] //p' "$2")
	[ -z "$verdict" ] || echo "FAIL kunit.vm: $verdict" >>"$tmp"
	grep -q '^PASS: kunit \[debug\]' "$2" || [ -n "$verdict" ] ||
		echo "FAIL kunit.vm: no verdict from run.sh (exit $3)" >>"$tmp"
	mv "$tmp" "$RESULT"
	say "$(grep -c '^PASS' "$RESULT" || true) passed," \
		"$(grep -c '^FAIL' "$RESULT" || true) failed," \
		"$(grep -c '^SKIP' "$RESULT" || true) skipped cases; see $RESULT (VM: $job)"
}

main() {
	local run out rc=0

	[ -n "$SROCE_SRCVER" ] || die "linux-source-6.1 is not installed (run scripts/setup.sh)"
	KUNIT_TOOLS=$SROCE_CACHE/debug/src-$SROCE_SRCVER/tools/testing/kunit
	mkdir -p "$TOPDIR"
	rm -f "$RESULT"
	if [ "${1:-}" = --from ]; then
		run=${2:?--from needs a run directory}
		results "$run" "$run/summary.txt" 0
	else
		run=$(mktemp -d "$TOPDIR/run-$(date +%Y%m%d-%H%M%S)-XXXX")
		out=$run/stdout
		"$VM/run.sh" --kernel debug --results "$run" "$@" kunit >"$out" || rc=$?
		cat "$out" >&2
		results "$run" "$out" "$rc"
		# Keep the last five runs.
		find "$TOPDIR" -mindepth 1 -maxdepth 1 -name 'run-*' | sort | head -n -5 |
			xargs -r rm -rf
	fi
	! grep -qv '^PASS' "$RESULT"
}

main "$@"
