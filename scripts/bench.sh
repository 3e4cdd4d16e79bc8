#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make bench`: one stock-kernel VM boot that runs the perftest matrix on
# sroce (exec=workqueue and exec=tasklet) and on rdma_rxe (guest scenario
# tools/testing/sroce-vm/scenarios/bench.sh), then prints the table and
# keeps it as $SROCE_CACHE/bench/<date>.txt.  Not part of `make check`.
#
# Usage: scripts/bench.sh [run.sh options, e.g. --cpus 4]
# Exit: 0 if every run of the matrix completed.

set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

VM=$SROCE_TOP/tools/testing/sroce-vm

main() {
	local run table out rev rc=0

	rev=$(git -C "$SROCE_TOP" describe --always --dirty 2>/dev/null || echo unknown)
	mkdir -p "$SROCE_CACHE/vm-runs" "$SROCE_CACHE/bench"
	run=$(mktemp -d "$SROCE_CACHE/vm-runs/$(date +%Y%m%d-%H%M%S)-bench-XXXX")
	"$VM/run.sh" --kernel stock --results "$run" "$@" bench || rc=$?
	table=$run/stock/bench/results/bench.txt
	if [ ! -s "$table" ]; then
		echo "bench: no table (see $run/stock/bench/console.log)" >&2
		return 1
	fi
	out=$SROCE_CACHE/bench/$(date +%Y%m%d-%H%M%S).txt
	{
		echo "# sroce $rev; host $(hostname), $(nproc) CPUs," \
			"load average $(cut -d' ' -f1-3 /proc/loadavg)"
		cat "$table"
	} >"$out"
	cat "$out"
	echo "bench: table saved as $out; every run in $run/stock/bench/results/"
	return "$rc"
}

main "$@"
