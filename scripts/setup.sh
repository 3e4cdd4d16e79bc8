#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prepare a Debian 12 machine for building and testing sroce.  Run as root;
# non-interactive and idempotent (every step is skipped when already done).
#
#  1. apt: install the build, VM and RDMA userspace packages that are missing
#     ("apt-get update" runs only when something is missing).
#  2. Fetch Debian's stock kernel matching SROCE_KVER into
#     $SROCE_CACHE/stock/$SROCE_KVER/ (never installed as the host's kernel):
#     the .deb, its extracted tree root/, depmod, and an uncompressed vmlinux
#     (QEMU boots it through PVH, faster than the bzImage).
#
# Usage: scripts/setup.sh [--packages-only | --stock-only]
# Exit status: 0 when everything is in place.

set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

PACKAGES=(
	# kernel and module builds
	build-essential bc bison flex libelf-dev libssl-dev dwarves kmod cpio
	xz-utils rsync linux-headers-amd64 linux-source-6.1 sparse
	# VM harness
	qemu-system-x86 busybox-static util-linux coreutils binutils
	# guest userspace (the host root is the guest's root over 9p)
	rdma-core ibverbs-utils ibverbs-providers perftest rdmacm-utils
	python3-pyverbs iproute2 python3 ethtool iputils-ping
	# decoding captured RoCEv2 frames (the interop capture check)
	tshark
	# the project's own verbs test programs (built on the host, run in the guest)
	libibverbs-dev librdmacm-dev
	# linting the scripts
	shellcheck
	# make bench's chart (scripts/bench-report.py, run by /usr/bin/python3)
	python3-matplotlib
)

APT_UPDATED=0

say() { printf 'setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

apt_update_once() {
	[ "$APT_UPDATED" = 1 ] && return 0
	say "apt-get update"
	apt-get update -q >&2
	APT_UPDATED=1
}

is_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

install_packages() {
	local pkg missing=()
	for pkg in "${PACKAGES[@]}"; do
		is_installed "$pkg" || missing+=("$pkg")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		say "packages: all ${#PACKAGES[@]} installed"
		return 0
	fi
	apt_update_once
	say "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" </dev/null >&2
}

# env.sh resolves the kernel version when sourced; on a fresh machine the
# headers were not installed yet at that point.
resolve_versions() {
	[ -n "$SROCE_KVER" ] || SROCE_KVER=$(sroce_resolve_kver)
	[ -n "$SROCE_KVER" ] || die "cannot resolve SROCE_KVER from linux-headers-amd64"
	SROCE_KDIR=/usr/src/linux-headers-$SROCE_KVER
	STOCK=$SROCE_CACHE/stock/$SROCE_KVER
	say "stock kernel: $SROCE_KVER -> $STOCK"
}

download_image() {
	[ -f "$STOCK/download.stamp" ] && return 0
	local dl=$STOCK/download name ok=0
	rm -rf "$dl"
	mkdir -p "$dl"
	rm -f "$STOCK"/*.deb
	# apt drops privileges to _apt for downloads; let it write there.
	if id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
	for name in "linux-image-$SROCE_KVER" "linux-image-$SROCE_KVER-unsigned"; do
		say "apt-get download $name"
		if (cd "$dl" && apt-get download -q "$name" >&2); then ok=1; break; fi
		apt_update_once
		if (cd "$dl" && apt-get download -q "$name" >&2); then ok=1; break; fi
	done
	[ "$ok" = 1 ] || die "could not download linux-image-$SROCE_KVER"
	mv "$dl"/*.deb "$STOCK"/
	rmdir "$dl"
	touch "$STOCK/download.stamp"
}

extract_image() {
	[ -f "$STOCK/extract.stamp" ] && return 0
	local deb
	deb=$(find "$STOCK" -maxdepth 1 -name 'linux-image-*.deb' | head -n 1)
	[ -n "$deb" ] || die "no .deb in $STOCK"
	say "dpkg-deb -x $(basename "$deb") -> $STOCK/root"
	rm -rf "$STOCK/root" "$STOCK/root.tmp"
	dpkg-deb -x "$deb" "$STOCK/root.tmp"
	[ -f "$STOCK/root.tmp/boot/vmlinuz-$SROCE_KVER" ] || die "$deb has no /boot/vmlinuz-$SROCE_KVER"
	mv "$STOCK/root.tmp" "$STOCK/root"
	touch "$STOCK/extract.stamp"
}

# The .deb leaves modules.dep to its postinst.
run_depmod() {
	[ -f "$STOCK/depmod.stamp" ] && return 0
	say "depmod -b $STOCK/root $SROCE_KVER"
	depmod -b "$STOCK/root" "$SROCE_KVER"
	touch "$STOCK/depmod.stamp"
}

# extract-vmlinux is not in Debian's headers packages; take it from the
# linux-source tarball.
get_extract_vmlinux() {
	local tool=$SROCE_CACHE/stock/extract-vmlinux
	if [ ! -x "$tool" ]; then
		say "taking scripts/extract-vmlinux from $SROCE_SRC_TAR"
		tar -xJOf "$SROCE_SRC_TAR" linux-source-6.1/scripts/extract-vmlinux >"$tool.tmp"
		chmod +x "$tool.tmp"
		mv "$tool.tmp" "$tool"
	fi
	echo "$tool"
}

has_pvh_note() {
	# XEN_ELFNOTE_PHYS32_ENTRY is note type 18 (0x12) of owner "Xen".
	readelf -n "$1" 2>/dev/null | grep -A0 '^ *Xen' | grep -q '0x00000012'
}

extract_vmlinux() {
	[ -f "$STOCK/vmlinux.stamp" ] && return 0
	local tool
	tool=$(get_extract_vmlinux)
	say "extracting vmlinux from vmlinuz-$SROCE_KVER"
	"$tool" "$STOCK/root/boot/vmlinuz-$SROCE_KVER" >"$STOCK/vmlinux.tmp" ||
		die "extract-vmlinux failed"
	mv "$STOCK/vmlinux.tmp" "$STOCK/vmlinux"
	if has_pvh_note "$STOCK/vmlinux"; then
		say "vmlinux has a PVH entry note: QEMU will boot it directly"
	else
		say "warning: vmlinux has no PVH note; the harness will boot the bzImage"
	fi
	touch "$STOCK/vmlinux.stamp"
}

fetch_stock_kernel() {
	resolve_versions
	download_image
	extract_image
	run_depmod
	extract_vmlinux
	say "stock kernel ready: $STOCK/vmlinux (modules: $STOCK/root/lib/modules/$SROCE_KVER)"
}

main() {
	[ "$(id -u)" = 0 ] || die "run as root"
	case ${1:-} in
	--packages-only) install_packages ;;
	--stock-only) fetch_stock_kernel ;;
	'') install_packages; fetch_stock_kernel ;;
	*) die "usage: $0 [--packages-only | --stock-only]" ;;
	esac
}

main "$@"
