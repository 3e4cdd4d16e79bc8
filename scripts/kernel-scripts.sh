#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Extracts the 6.1 tree's checkpatch.pl (with its data files) and
# kernel-doc from Debian's linux-source-6.1 tarball into the cache, once,
# and prints the directory that holds scripts/.

set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"

dir="$SROCE_CACHE/kernel-scripts/$SROCE_SRCVER"
if [ ! -x "$dir/scripts/checkpatch.pl" ] || [ ! -x "$dir/scripts/kernel-doc" ]; then
	echo "extracting checkpatch.pl and kernel-doc from $SROCE_SRC_TAR" >&2
	mkdir -p "$SROCE_CACHE/kernel-scripts"
	tmp=$(mktemp -d "$SROCE_CACHE/kernel-scripts/tmp.XXXXXX")
	tar -xJf "$SROCE_SRC_TAR" -C "$tmp" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch \
		linux-source-6.1/scripts/kernel-doc
	rm -rf "$dir"
	mv "$tmp" "$dir"
fi
echo "$dir"
