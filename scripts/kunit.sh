#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Usage: scripts/kunit.sh [kunit.py run arguments, e.g. 'sroce_icrc.*']
#
# Runs sroce's KUnit suites (make kunit) in an x86_64 kernel built from
# Debian's linux-source-6.1 and booted by kunit.py in QEMU (TCG: no KVM is
# needed). Everything lives outside the checkout:
#
#   $SROCE_CACHE/kunit/<SROCE_SRCVER>/src           the tree, extracted once,
#                                                   with the driver overlaid
#   $SROCE_CACHE/kunit/<SROCE_SRCVER>/build-<hash>  kunit.py's O= directory;
#                                                   <hash> is of .kunitconfig
#   $SROCE_CACHE/kunit/last-result                  one line per test case
#
# last-result holds "PASS <suite>.<case>" or "FAIL <suite>.<case>" (and
# "SKIP <suite>.<case>" for skipped cases), one per KUnit case, and one
# per parameter ("<suite>.<case>/<parameter>") for a parameterised case.
# It is made by parsing the raw kernel log kunit.py keeps in the build
# directory (test.log) with the tree's own kunit_parser. A kernel that did
# not build or boot leaves "FAIL kunit.build" or "FAIL kunit.boot".
#
# Exit status: 0 only if the kernel built, booted, and every case passed.
# SROCE_KUNIT_TIMEOUT overrides the time allowed for the run in QEMU.

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

say() { printf 'kunit: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

KUNITCONFIG=$SROCE_TOP/drivers/infiniband/sw/sroce/.kunitconfig
TOPDIR=$SROCE_CACHE/kunit
RESULT=$TOPDIR/last-result
# Kernel reports that fail the run even when every case passed.
SPLATS='BUG:|WARNING:|Oops|general protection|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|unreferenced object|refcount_t:'
TIMEOUT=${SROCE_KUNIT_TIMEOUT:-1200}

set_paths() {
	[ -n "$SROCE_SRCVER" ] || die "linux-source-6.1 is not installed (run scripts/setup.sh)"
	[ -f "$SROCE_SRC_TAR" ] || die "$SROCE_SRC_TAR missing (run scripts/setup.sh)"
	[ -f "$KUNITCONFIG" ] || die "$KUNITCONFIG missing"
	VERDIR=$TOPDIR/$SROCE_SRCVER
	SRC=$VERDIR/src
	BUILD=$VERDIR/build-$(sha256sum "$KUNITCONFIG" | cut -c1-12)
}

# One run at a time: two would fight over the tree and the CPUs.
lock() {
	mkdir -p "$TOPDIR"
	exec 9>"$TOPDIR/lock"
	if ! flock -n 9; then
		say "waiting for another kunit run to finish"
		flock 9
	fi
}

# Extract into a temporary directory and rename it, so that an
# interrupted extraction never leaves a partial tree behind.
extract() {
	local tmp

	[ -d "$SRC" ] && return 0
	mkdir -p "$VERDIR"
	rm -rf "$VERDIR"/src.tmp.*
	tmp=$(mktemp -d "$VERDIR/src.tmp.XXXXXX")
	say "extracting $SROCE_SRC_TAR into $SRC"
	tar -xJf "$SROCE_SRC_TAR" -C "$tmp" --strip-components=1
	mv -T "$tmp" "$SRC"
}

# kunit.py's exit status, without tripping set -e. "-cpu max" gives the
# guest PCLMULQDQ, so that crc32-pclmul is the crypto crc32 under test.
run_kunit() {
	local rc=0

	rm -f "$BUILD/test.log"
	(cd "$SRC" && nice -n 10 python3 tools/testing/kunit/kunit.py run \
		--arch=x86_64 \
		--kunitconfig=drivers/infiniband/sw/sroce \
		--build_dir="$BUILD" \
		--jobs="$(nproc)" \
		--timeout="$TIMEOUT" \
		--qemu_args='-cpu max' \
		"$@") || rc=$?
	return "$rc"
}

# Turn $BUILD/test.log into $RESULT; print the totals.
write_result() {
	local tmp=$RESULT.tmp

	if [ ! -s "$BUILD/test.log" ]; then
		echo "FAIL kunit.build" >"$tmp"
	else
		python3 - "$SRC/tools/testing/kunit" "$BUILD/test.log" "$tmp" \
			>/dev/null <<'EOF'
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
if not root.subtests or root.status == TestStatus.FAILURE_TO_PARSE_TESTS:
    lines.append('FAIL kunit.boot')
with open(sys.argv[3], 'w') as out:
    out.write(''.join(line + '\n' for line in lines))
EOF
	fi
	# KASAN fails the running case by itself; other splats do not.
	if grep -qE "$SPLATS" "$BUILD/test.log" 2>/dev/null; then
		grep -E "$SPLATS" "$BUILD/test.log" | head -n 5
		echo "FAIL kunit.kernel-splat" >>"$tmp"
	fi
	mv "$tmp" "$RESULT"
	say "$(grep -c '^PASS' "$RESULT" || true) passed," \
		"$(grep -c '^FAIL' "$RESULT" || true) failed," \
		"$(grep -c '^SKIP' "$RESULT" || true) skipped cases; see $RESULT"
	! grep -q '^FAIL' "$RESULT"
}

# boot_splat: prints the first splat line of test.log if it came before
# the first test ran (before KTAP's header, so before any sroce code: the
# driver is built in, but its tests and its module init run later).  Under
# TCG, KASAN has been seen to report a wild access in the interrupt entry
# during identify_boot_cpu(); that says nothing about sroce.
boot_splat() {
	awk -v re="$SPLATS" '
		/K?TAP version/ { exit }
		$0 ~ re { print; exit }' "$BUILD/test.log" 2>/dev/null
}

main() {
	local rc=0 early

	set_paths
	lock
	extract
	"$SROCE_TOP/scripts/overlay.sh" "$SRC"
	run_kunit "$@" || rc=$?
	early=$(boot_splat)
	if [ -n "$early" ]; then
		say "kernel splat during boot, before any test started: $early"
		say "running the suites once more (a second boot splat fails the run)"
		cp "$BUILD/test.log" "$BUILD/test.log.boot-splat"
		rc=0
		run_kunit "$@" || rc=$?
	fi
	if ! write_result && [ "$rc" -eq 0 ]; then
		rc=1
	fi
	return "$rc"
}

main "$@"
