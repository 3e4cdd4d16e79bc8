#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Usage: scripts/overlay.sh KERNEL_TREE
#
# Drops the driver into a kernel source tree: copies
# drivers/infiniband/sw/sroce/ over (deleting files the checkout no longer
# has) and hooks it into drivers/infiniband/Kconfig and
# drivers/infiniband/sw/Makefile. Running it again is harmless. Every file
# it changes is replaced, never written in place, so the tree may be a
# hard-linked copy of another.
#
# Only files whose content changed are rewritten, and those get a fresh
# mtime: unchanged sources keep theirs, so make rebuilds exactly what
# changed (rsync -a would also keep the old mtime of a file reverted to an
# older copy, which make would then miss).

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

die() { printf 'overlay: error: %s\n' "$*" >&2; exit 1; }

tree=${1:?usage: $0 KERNEL_TREE}
ib=$tree/drivers/infiniband
if [ ! -f "$ib/Kconfig" ] || [ ! -f "$ib/sw/Makefile" ]; then
	die "$tree is not a kernel tree with drivers/infiniband"
fi

rsync -rlp --checksum --delete \
	"$SROCE_TOP/drivers/infiniband/sw/sroce/" "$ib/sw/sroce/"

kconfig_line='source "drivers/infiniband/sw/sroce/Kconfig"'
if ! grep -qxF "$kconfig_line" "$ib/Kconfig"; then
	grep -qxF 'source "drivers/infiniband/sw/siw/Kconfig"' "$ib/Kconfig" ||
		die "no siw line in $ib/Kconfig to add sroce after"
	sed -i "\\|^source \"drivers/infiniband/sw/siw/Kconfig\"\$|a $kconfig_line" \
		"$ib/Kconfig"
fi

# shellcheck disable=SC2016 # $(CONFIG_RDMA_SROCE) is make syntax
if ! grep -q '^obj-$(CONFIG_RDMA_SROCE)[[:space:]]*+= sroce/$' "$ib/sw/Makefile"; then
	# A new file, not an append: the tree may be a hard-linked copy.
	{ cat "$ib/sw/Makefile"; printf 'obj-$(CONFIG_RDMA_SROCE)\t\t+= sroce/\n'; } \
		>"$ib/sw/Makefile.sroce"
	mv "$ib/sw/Makefile.sroce" "$ib/sw/Makefile"
fi
