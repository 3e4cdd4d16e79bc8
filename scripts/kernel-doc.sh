#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs the 6.1 tree's scripts/kernel-doc over the driver: every kernel-doc
# comment must parse and describe each parameter, member and return value.

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"

kdir=$("$SROCE_TOP/scripts/kernel-scripts.sh")
cd "$SROCE_TOP"
# What git tracks: build products (sroce.mod.c, ...) are not sources.
mapfile -t files < <(git ls-files 'drivers/*.[ch]' 'include/*.[ch]')
out=$("$kdir/scripts/kernel-doc" -none "${files[@]}" 2>&1 || true)
if [ -n "$out" ]; then
	echo "$out"
	echo "kernel-doc: $(echo "$out" | wc -l) problems in ${#files[@]} files"
	exit 1
fi
echo "kernel-doc: ${#files[@]} files clean"
