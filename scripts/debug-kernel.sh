#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build sroce's debug kernel (KASAN, lockdep, kmemleak, ...) from Debian's
# linux-source-6.1 tarball, outside the checkout:
#
#   $SROCE_CACHE/debug/src-<SROCE_SRCVER>/          pristine source (shared)
#   $SROCE_CACHE/debug/<SROCE_SRCVER>-<hash>/build  O= build directory
#   $SROCE_CACHE/debug/<SROCE_SRCVER>-<hash>/modroot  modules_install tree
#
# <hash> is a short hash of the options set in
# tools/testing/sroce-vm/debug.config (comments do not count).  The config is
# allnoconfig + that fragment (merge_config.sh -n, then olddefconfig), and
# every option of the fragment is verified afterwards.
#
# Usage: scripts/debug-kernel.sh [--ensure] [--print-dir] [-j N]
#   (default)    configure if needed, run make (incremental), modules_install
#   --ensure     do nothing if a finished build for this fragment exists
#   --print-dir  print the cache directory of this fragment and exit
#   -j N         parallel jobs (default: number of CPUs)
# On success the last line on stdout is the path of the bootable kernel
# (bzImage; build/vmlinux next to it has the symbols); progress goes to
# stderr.  The build runs under nice(1).

set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

FRAGMENT=$SROCE_TOP/tools/testing/sroce-vm/debug.config
JOBS=$(nproc)
MODE=build

say() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--ensure) MODE=ensure ;;
		--print-dir) MODE=print ;;
		-j) JOBS=${2:?-j needs a number}; shift ;;
		-j*) JOBS=${1#-j} ;;
		-h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
		*) die "unknown argument: $1" ;;
		esac
		shift
	done
}

set_paths() {
	[ -n "$SROCE_SRCVER" ] || die "linux-source-6.1 is not installed (run scripts/setup.sh)"
	[ -f "$SROCE_SRC_TAR" ] || die "$SROCE_SRC_TAR missing (run scripts/setup.sh)"
	local hash
	hash=$(fragment_options | sha256sum | cut -c1-10)
	TOPDIR=$SROCE_CACHE/debug
	SRC=$TOPDIR/src-$SROCE_SRCVER
	DIR=$TOPDIR/$SROCE_SRCVER-$hash
	BUILD=$DIR/build
	MODROOT=$DIR/modroot
	STAMP=$DIR/built.stamp
}

# Extract the tarball once: into a temporary directory, then rename, so an
# interrupted extraction is never mistaken for a complete tree.
extract_source() {
	[ -f "$SRC/Makefile" ] && return 0
	say "extracting $SROCE_SRC_TAR -> $SRC"
	rm -rf "$TOPDIR"/src-"$SROCE_SRCVER".tmp.*
	local tmp
	tmp=$(mktemp -d "$SRC.tmp.XXXXXX")
	tar -xJf "$SROCE_SRC_TAR" -C "$tmp" --strip-components=1
	mv "$tmp" "$SRC"
}

# Prints "CONFIG_X=value" for every option set by the fragment, with
# "# CONFIG_X is not set" normalised to "CONFIG_X=n".
fragment_options() {
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*=.*\)$/\1/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1=n/p' "$FRAGMENT"
}

configure() {
	local fraghash
	fraghash=$(fragment_options | sha256sum | cut -d' ' -f1)
	if [ -f "$BUILD/.config" ] && [ "$(cat "$DIR/config.stamp" 2>/dev/null)" = "$fraghash" ]; then
		return 0
	fi
	say "configuring $BUILD (allnoconfig + $(basename "$FRAGMENT"))"
	mkdir -p "$BUILD"
	(cd "$SRC" && scripts/kconfig/merge_config.sh -n -O "$BUILD" "$FRAGMENT" >"$DIR/merge_config.log" 2>&1) ||
		{ cat "$DIR/merge_config.log" >&2; die "merge_config.sh failed"; }
	make -s -C "$SRC" O="$BUILD" olddefconfig >&2
	verify_config
	echo "$fraghash" >"$DIR/config.stamp"
}

verify_config() {
	local opt want got bad=0
	while IFS= read -r opt; do
		want=${opt#*=}
		opt=${opt%%=*}
		got=$(sed -n -e "s/^$opt=\(.*\)$/\1/p" -e "s/^# $opt is not set$/n/p" "$BUILD/.config")
		[ -n "$got" ] || got=n
		if [ "$got" != "$want" ]; then
			say "config: $opt is '$got', fragment wants '$want'"
			bad=1
		fi
	done < <(fragment_options)
	[ "$bad" = 0 ] || die "the kernel did not accept the fragment (missing dependency?); see $DIR/merge_config.log"
	say "config verified: all $(fragment_options | wc -l) options of the fragment are set"
}

build() {
	local start=$SECONDS
	say "building in $BUILD with -j$JOBS (log: $DIR/build.log)"
	if ! nice -n 10 make -C "$SRC" O="$BUILD" -j"$JOBS" \
		vmlinux bzImage modules >"$DIR/build.log" 2>&1; then
		tail -n 40 "$DIR/build.log" >&2
		die "kernel build failed; full log: $DIR/build.log"
	fi
	say "make took $((SECONDS - start)) s"
}

install_modules() {
	local release
	release=$(make -s -C "$SRC" O="$BUILD" kernelrelease)
	rm -rf "$MODROOT"
	make -s -C "$SRC" O="$BUILD" INSTALL_MOD_PATH="$MODROOT" DEPMOD=/bin/true \
		modules_install >&2
	depmod -b "$MODROOT" "$release"
	[ -f "$MODROOT/lib/modules/$release/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko" ] ||
		die "rdma_rxe.ko missing from $MODROOT"
	echo "$release" >"$DIR/release"
	say "modules of $release installed in $MODROOT"
}

main() {
	parse_args "$@"
	set_paths
	if [ "$MODE" = print ]; then
		echo "$DIR"
		return 0
	fi
	mkdir -p "$TOPDIR"
	exec 9>"$TOPDIR/.lock"
	flock 9
	if [ "$MODE" = ensure ] && [ -f "$STAMP" ]; then
		echo "$BUILD/arch/x86/boot/bzImage"
		return 0
	fi
	extract_source
	mkdir -p "$DIR"
	configure
	rm -f "$STAMP"
	build
	install_modules
	touch "$STAMP"
	say "kernel: $BUILD/arch/x86/boot/bzImage (symbols: $BUILD/vmlinux)"
	echo "$BUILD/arch/x86/boot/bzImage"
}

main "$@"
