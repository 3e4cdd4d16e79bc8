#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs the 6.1 tree's scripts/checkpatch.pl --strict over every C source and
# header under drivers/ and include/. checkpatch.pl comes from Debian's
# linux-source-6.1 tarball and is cached outside the checkout.
# Exit status: 0 only with 0 errors, 0 warnings and 0 checks.

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"

cp_dir=$("$(dirname "$0")/kernel-scripts.sh")
cd "$SROCE_TOP"
# What git tracks: build products (sroce.mod.c, ...) are not sources.
mapfile -t files < <(git ls-files 'drivers/*.[ch]' 'include/*.[ch]')
if [ "${#files[@]}" -eq 0 ]; then
	echo "checkpatch: no source files found" >&2
	exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# --no-tree: the checkout is not a kernel tree. Exit status is ignored:
# the totals below decide.
"$cp_dir/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
	--no-summary -f "${files[@]}" >"$log" 2>&1 || true

errors=$(grep -c ': ERROR:' "$log" || true)
warnings=$(grep -c ': WARNING:' "$log" || true)
checks=$(grep -c ': CHECK:' "$log" || true)
cat "$log"
echo "checkpatch: ${#files[@]} files, $errors errors, $warnings warnings, $checks checks"
[ "$errors" -eq 0 ] && [ "$warnings" -eq 0 ] && [ "$checks" -eq 0 ]
