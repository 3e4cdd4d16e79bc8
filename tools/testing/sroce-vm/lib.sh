# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-side helpers of sroce's VM harness; sourced by run.sh and selftest.sh.
# Defines functions and variables only.
# shellcheck disable=SC2034 # K_* and friends are used by run.sh

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/env.sh
source "$VM_DIR/../../../scripts/env.sh"

VM_RUNS=$SROCE_CACHE/vm-runs
VM_KEEP_RUNS=${VM_KEEP_RUNS:-30}

vm_say() { printf 'sroce-vm: %s\n' "$*" >&2; }
vm_die() { vm_say "error: $*"; exit 2; }

now() { printf '%s\n' "${EPOCHREALTIME/,/.}"; }
# elapsed START -> seconds with one decimal
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# POSIX single-quoted form of $1, for files read by the guest's busybox sh.
shq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# ---------------------------------------------------------------------------
# Kernels.  kernel_resolve NAME sets:
#   K_NAME      stock | debug
#   K_ID        stock-<kver> | debug-<srcver>-<hash> (cache key)
#   K_VMLINUX   uncompressed kernel (PVH boot), may be empty
#   K_BZIMAGE   compressed kernel (fallback)
#   K_RELEASE   uname -r of that kernel
#   K_MODTREE   its /lib/modules/<release> tree on the host
#   K_KDIR      where to build external modules against it
#   K_CMDLINE   kernel command-line additions
#   K_BOOT_TIMEOUT  default boot timeout (s)
#   K_POST_TIMEOUT  time the guest gets for its checks after the scenario

kernel_resolve_stock() {
	local stock=$SROCE_CACHE/stock/$SROCE_KVER
	[ -n "$SROCE_KVER" ] || vm_die "SROCE_KVER unknown: run scripts/setup.sh"
	if [ ! -f "$stock/vmlinux.stamp" ]; then
		vm_say "stock kernel not fetched yet: running scripts/setup.sh --stock-only"
		"$SROCE_TOP/scripts/setup.sh" --stock-only || vm_die "scripts/setup.sh failed"
	fi
	K_ID=stock-$SROCE_KVER
	K_VMLINUX=$stock/vmlinux
	K_BZIMAGE=$stock/root/boot/vmlinuz-$SROCE_KVER
	K_RELEASE=$SROCE_KVER
	K_MODTREE=$stock/root/lib/modules/$SROCE_KVER
	K_KDIR=$SROCE_KDIR
	K_CMDLINE=""
	K_BOOT_TIMEOUT=120
	K_POST_TIMEOUT=30
}

kernel_resolve_debug() {
	local dir
	vm_say "checking the debug kernel (scripts/debug-kernel.sh --ensure; a cold build takes ~15-20 min)"
	"$SROCE_TOP/scripts/debug-kernel.sh" --ensure >/dev/null || vm_die "debug kernel build failed"
	dir=$("$SROCE_TOP/scripts/debug-kernel.sh" --print-dir)
	K_ID=debug-$(basename "$dir")
	# No PVH boot: the PVH entry's C code (xen_prepare_pvh, and memcmp from
	# lib/string.c that it calls) is KASAN-instrumented and runs before
	# KASAN's early shadow exists, so QEMU's direct vmlinux boot faults at
	# once.  The bzImage sets the shadow up first.
	K_VMLINUX=""
	K_BZIMAGE=$dir/build/arch/x86/boot/bzImage
	K_RELEASE=$(cat "$dir/release")
	K_MODTREE=$dir/modroot/lib/modules/$K_RELEASE
	K_KDIR=$dir/build
	# acpi=noirq: evaluating ACPI _PRT (AML) for each PCI device takes ~25 s
	# under KASAN+kmemleak+TCG and trips RCU stall warnings; the PIRQ table
	# routes the virtio INTx just as well.
	K_CMDLINE="panic_on_warn=1 acpi=noirq"
	K_BOOT_TIMEOUT=300
	K_POST_TIMEOUT=180
}

kernel_resolve() {
	K_NAME=$1
	case $1 in
	stock) kernel_resolve_stock ;;
	debug) kernel_resolve_debug ;;
	*) vm_die "unknown kernel '$1' (stock or debug)" ;;
	esac
	[ -d "$K_MODTREE" ] || vm_die "module tree $K_MODTREE missing"
	[ -f "$K_BZIMAGE" ] || vm_die "kernel image $K_BZIMAGE missing"
	if [ -n "$K_VMLINUX" ] && ! has_pvh_note "$K_VMLINUX"; then
		vm_say "$K_VMLINUX has no PVH note: booting the bzImage"
		K_VMLINUX=""
	fi
}

has_pvh_note() {
	# XEN_ELFNOTE_PHYS32_ENTRY: note type 18 (0x12) of owner "Xen".
	readelf -n "$1" 2>/dev/null | grep -E '^ *Xen' | grep -q '0x00000012'
}

# ---------------------------------------------------------------------------
# sroce.ko for the resolved kernel.  The checkout's Kbuild, Kconfig,
# drivers/ and include/ are mirrored into $SROCE_CACHE/modbuild/<K_ID>-<co>/
# and built there (never inside the checkout).  <co> names the checkout, so
# runs from two checkouts (worktrees, CI clones) never share a build tree
# and cannot pick up each other's module.
#
# build_ko [VARIANT]: VARIANT "kunit" builds the module with its KUnit
# suites (CONFIG_RDMA_SROCE_KUNIT_TEST=y), in a tree of its own
# (<K_ID>-<co>-kunit/); the suites run when that module is loaded.  Sets
# KO_PATH (empty on failure) and KO_ERROR.

checkout_id() {
	printf '%s' "$SROCE_TOP" | md5sum | cut -c1-8
}

build_ko() {
	local variant=${1:-} dst log ko extra=()
	dst=$SROCE_CACHE/modbuild/$K_ID-$(checkout_id)${variant:+-$variant}
	log=$dst.log
	case $variant in
	'') ;;
	kunit) extra=(CONFIG_RDMA_SROCE_KUNIT_TEST=y) ;;
	*) vm_die "unknown sroce.ko variant '$variant'" ;;
	esac
	KO_PATH=""
	KO_ERROR=""
	mkdir -p "$dst"
	# The module is copied out under the lock, to a file of this call's
	# own: another run from this checkout, or another job of this run,
	# may rebuild the tree (and its sroce.ko) right after.
	ko=$(mktemp --suffix=.ko "$RUN/$K_NAME/sroce${variant:+-$variant}-XXXXXX")
	(
		flock 9
		sync_sources "$dst" &&
			nice -n 5 make -C "$K_KDIR" M="$dst" -j"$(nproc)" "${extra[@]}" \
				modules >"$log" 2>&1 &&
			! grep -q 'Error [0-9]' "$log" &&
			cp "$dst/drivers/infiniband/sw/sroce/sroce.ko" "$ko"
	) 9>"$dst.lock" || rm -f "$ko"
	if [ -s "$ko" ]; then
		KO_PATH=$ko
		vm_say "sroce.ko${variant:+ ($variant)} for $K_ID: $KO_PATH"
	else
		KO_ERROR="sroce.ko${variant:+ ($variant)} did not build for $K_ID; see $log"
		vm_say "warning: $KO_ERROR"
		grep -E 'error|Error' "$log" | head -n 5 >&2 || true
	fi
}

sync_sources() {
	local dst=$1
	rsync -a --delete --filter=':- .gitignore' \
		--include=/Kbuild --include=/Kconfig --include='/drivers/***' --include='/include/***' \
		--exclude='*' "$SROCE_TOP/" "$dst/"
}

# build_module DIR: build the out-of-tree module in DIR (with a Kbuild) for
# the resolved kernel, in $SROCE_CACHE/modbuild/<K_ID>-<co>-<name>/, which
# it prints.  Used by scenarios' "# sroce-vm: build-module DIR" lines.
build_module() {
	local src=$1 dst log
	dst=$SROCE_CACHE/modbuild/$K_ID-$(checkout_id)-$(basename "$src")
	log=$dst.log
	mkdir -p "$dst"
	if ! (
		flock 9
		rsync -a --include='*/' --include='*.[ch]' --include=Kbuild --include=Makefile \
			--exclude='*' "$src/" "$dst/" &&
			nice -n 5 make -C "$K_KDIR" M="$dst" -j"$(nproc)" modules >"$log" 2>&1
	) 9>"$dst.lock"; then
		vm_say "module $src did not build for $K_ID; see $log"
		tail -n 20 "$log" >&2
		return 1
	fi
	echo "$dst"
}

# build_prog DIR: build the host program in DIR (a directory under
# tools/testing with a Makefile whose default target builds executables)
# in $SROCE_CACHE/progbuild/<co>-<name>/, which it prints.  Programs run in
# the guest on the host's userspace, so one build serves every kernel.
# Used by scenarios' "# sroce-vm: build-prog DIR" lines.
build_prog() {
	local src=$1 dst log
	dst=$SROCE_CACHE/progbuild/$(checkout_id)-$(basename "$src")
	log=$dst.log
	mkdir -p "$dst"
	if ! (
		flock 9
		rsync -a --include='*/' --include='*.[ch]' --include=Makefile \
			--exclude='*' "$src/" "$dst/" &&
			nice -n 5 make -C "$dst" -j"$(nproc)" \
				CFLAGS="-O2 -Wall -Wextra -Werror" >"$log" 2>&1
	) 9>"$dst.lock"; then
		vm_say "program $src did not build; see $log"
		tail -n 20 "$log" >&2
		return 1
	fi
	echo "$dst"
}

# ---------------------------------------------------------------------------
# Initramfs: busybox-static, the guest init, the autoload guard, and the
# modules the kernel needs to reach the 9p root (stock: as modules; debug:
# built in, so none).  Written uncompressed: every kernel can unpack it.

# Modules needed to mount the 9p root, in load order, as paths.
initramfs_modules() {
	local base=${K_MODTREE%/lib/modules/*}
	modprobe -d "$base" -S "$K_RELEASE" -a --show-depends 9p 9pnet_virtio virtio_pci 2>/dev/null |
		awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

make_initramfs() {
	local out=$1 stage mod
	stage=$(mktemp -d "${out%/*}/initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,host,job,modules,etc}
	cp /bin/busybox "$stage/bin/busybox"
	install -m 0755 "$VM_DIR/init.sh" "$stage/init"
	install -m 0755 "$VM_DIR/modprobe-guard.sh" "$stage/sbin/sroce-modprobe-guard"
	: >"$stage/modules/load.list"
	while IFS= read -r mod; do
		cp "$mod" "$stage/modules/"
		basename "$mod" >>"$stage/modules/load.list"
	done < <(initramfs_modules)
	echo "$K_RELEASE" >"$stage/etc/sroce-vm-release"
	(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet -R 0:0) >"$out"
	rm -rf "$stage"
}

# ---------------------------------------------------------------------------
# Judging a run from its console log.

# Kernel lines that mean something went wrong (extended regexps).  They are
# matched only on lines that carry a printk timestamp, so a scenario's own
# output cannot trip them.
SPLAT_PATTERNS=(
	'BUG:'
	'WARNING:'
	'KASAN'
	'UBSAN'
	'Oops'
	'general protection'
	'Call Trace'
	'Kernel panic'
	'kernel BUG at'
	'Unable to handle'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'lockdep'
	'INFO: '
	'sleeping function called from invalid context'
	'refcount_t'
	'list_(add|del) corruption'
	'unreferenced object'
	'Kernel memory leak detector disabled'
	'double fault'
)

# Benign kernel lines that match a pattern above.
SPLAT_IGNORE=(
	'rcu:[[:space:]]+RCU lockdep checking is enabled\.'
)

KERNEL_LINE='\[ *[0-9]+\.[0-9]+\]'

# splat_lines CONSOLE_LOG [DMESG] [EXTRA_IGNORE_ERE...]
# Prints the offending lines (kernel lines + kmemleak report in the console).
splat_lines() {
	local console=$1 dmesg=$2 pat ign=""
	shift 2
	local ignores=("${SPLAT_IGNORE[@]}" "$@")
	pat=$(IFS='|'; echo "${SPLAT_PATTERNS[*]}")
	if [ ${#ignores[@]} -gt 0 ]; then ign=$(IFS='|'; echo "${ignores[*]}"); fi
	{
		grep -E "$KERNEL_LINE" "$console" || true
		if [ -f "$dmesg" ]; then cat "$dmesg"; fi
		sed -n '/^SROCE-KMEMLEAK-BEGIN /,/^SROCE-KMEMLEAK-END /p' "$console"
	} | grep -E -- "$pat" | { if [ -n "$ign" ]; then grep -Ev -- "$ign"; else cat; fi; } |
		sed -E "s/^.*($KERNEL_LINE) */\1 /" | awk '!seen[$0]++' || true
}

# Values of "# sroce-vm: KEY VALUE" lines of a scenario (of a boot group
# A+B+C: those of all its members).
scenario_header() {
	local f
	while IFS= read -r f; do
		sed -n "s/^# sroce-vm: $2 \(.*\)$/\1/p" "$f"
	done < <(tr '+' '\n' <<<"$1")
}

prune_runs() {
	local old
	[ -d "$VM_RUNS" ] || return 0
	# shellcheck disable=SC2012 # names are timestamps without blanks
	old=$(ls -1d "$VM_RUNS"/*/ 2>/dev/null | sort | head -n "-$VM_KEEP_RUNS")
	[ -z "$old" ] || echo "$old" | xargs rm -rf
}
