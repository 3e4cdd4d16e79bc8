#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo: make sure the machine is set up (scripts/setup.sh, as root),
# then boot Debian's stock kernel in QEMU, load sroce.ko, create sroce0 and
# sroce1 on a veth pair, show them with ibv_devinfo, run ibv_rc_pingpong
# with data validation between them and show their counters (guest
# scenario tools/testing/sroce-vm/scenarios/demo.sh).  Prints what the
# guest printed.
#
# Usage: scripts/demo.sh [run.sh options, e.g. --kernel debug]
# Exit: 0 if the demo scenario passed.

set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

VM=$SROCE_TOP/tools/testing/sroce-vm

main() {
	local run rc=0
	if [ "$(id -u)" = 0 ]; then
		"$SROCE_TOP/scripts/setup.sh"
	else
		echo "demo: not root, skipping scripts/setup.sh" >&2
	fi
	mkdir -p "$SROCE_CACHE/vm-runs"
	run=$(mktemp -d "$SROCE_CACHE/vm-runs/$(date +%Y%m%d-%H%M%S)-demo-XXXX")
	"$VM/run.sh" --kernel stock --results "$run" "$@" demo || rc=$?
	local out
	for out in "$run"/*/demo/results/demo.txt; do
		[ -f "$out" ] || continue
		echo "===== what the guest printed ($out) ====="
		cat "$out"
	done
	return "$rc"
}

main "$@"
