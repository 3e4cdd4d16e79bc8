#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Usage: scripts/intree.sh
#
# Builds the driver in-tree, as a kernel tree that took it in would: the
# checkout's driver is dropped into a copy of Debian's linux-source-6.1
# (scripts/overlay.sh), configured from the debug kernel's .config plus
# CONFIG_RDMA_SROCE=m and CONFIG_RDMA_SROCE_KUNIT_TEST=y, and its
# directory is built with W=1.  Everything lives outside the checkout:
#
#   $SROCE_CACHE/intree/<SROCE_SRCVER>/src     hard-linked copy of the
#                                              debug kernel's source tree
#   $SROCE_CACHE/intree/<SROCE_SRCVER>/build   O= directory
#
# Later runs rebuild only what changed.  Exit status: 0 if the driver and
# its KUnit suites built without a compiler warning (make's output, on
# stdout, is what check.sh greps).

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

say() { printf 'intree: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

main() {
	local dkdir pristine dir src build tmp

	dkdir=$("$SROCE_TOP/scripts/debug-kernel.sh" --print-dir)
	[ -f "$dkdir/build/.config" ] || die "no debug kernel .config (run scripts/debug-kernel.sh)"
	pristine=$SROCE_CACHE/debug/src-$SROCE_SRCVER
	dir=$SROCE_CACHE/intree/$SROCE_SRCVER
	src=$dir/src
	build=$dir/build
	mkdir -p "$dir"
	exec 9>"$dir/lock"
	flock 9
	if [ ! -f "$src/Makefile" ]; then
		# Hard links: overlay.sh replaces the files it changes, never
		# writing through a link into the debug kernel's tree.
		say "linking $pristine -> $src"
		rm -rf "$src".tmp.*
		tmp=$(mktemp -d "$src.tmp.XXXXXX")
		cp -al "$pristine/." "$tmp/"
		mv -T "$tmp" "$src"
	fi
	"$SROCE_TOP/scripts/overlay.sh" "$src"
	mkdir -p "$build"
	cp "$dkdir/build/.config" "$build/.config.new"
	"$src/scripts/config" --file "$build/.config.new" \
		--module RDMA_SROCE --enable RDMA_SROCE_KUNIT_TEST
	# An unchanged .config keeps its mtime: nothing to reconfigure.
	cmp -s "$build/.config.new" "$build/.config.base" 2>/dev/null ||
		{ cp "$build/.config.new" "$build/.config"; cp "$build/.config.new" "$build/.config.base"; }
	rm -f "$build/.config.new"
	make -s -C "$src" O="$build" olddefconfig
	grep -qx 'CONFIG_RDMA_SROCE=m' "$build/.config" ||
		die "the tree's Kconfig did not take CONFIG_RDMA_SROCE=m"
	grep -qx 'CONFIG_RDMA_SROCE_KUNIT_TEST=y' "$build/.config" ||
		die "the tree's Kconfig did not take CONFIG_RDMA_SROCE_KUNIT_TEST=y"
	nice -n 10 make -C "$src" O="$build" -j"$(nproc)" W=1 \
		drivers/infiniband/sw/sroce/
	[ -f "$build/drivers/infiniband/sw/sroce/sroce.o" ] ||
		die "no sroce.o in $build"
	say "built in-tree: $build/drivers/infiniband/sw/sroce/"
}

main "$@"
