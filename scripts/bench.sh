#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make bench`: one stock-kernel VM boot that runs perftest on sroce and on
# rdma_rxe in alternating rounds at path MTU 1024 and 4096 (guest scenario
# tools/testing/sroce-vm/scenarios/bench.sh), then prints the table, the
# clean-link check and the targets (scripts/bench-report.py) and keeps
# table and chart as $SROCE_CACHE/bench/<date>.{txt,png}.  Not part of
# `make check`.
#
# Usage: scripts/bench.sh [--rounds N] [--quick] [--topo T] [--providers "P..."]
#                         [--base REV] [run.sh option...]
#   --rounds N        rounds of the matrix (default 3)
#   --quick           4 KiB and 64 KiB bandwidth and 2 B latency only
#   --only ERE        only the cells whose "test size qps" matches
#   --topo host       client and server on one device (same-host
#                     delivery); default "veth", across a veth pair
#   --providers "P"   of sroce, sroce-tasklet, rxe (default "sroce rxe"),
#                     and sroce:PARAM=VALUE[:...] (sroce.ko with those
#                     module parameters, e.g. sroce:tx_gso=0)
#   --base REV        also measure sroce.ko built from git revision REV,
#                     in the same boot ("base": a change against the
#                     build before it)
#   --profile T,S     profile cell T S (e.g. ib_write_bw,65536) with perf
#                     for each provider and MTU (profile-*.txt)
# Other options go to run.sh (e.g. --cpus 4).  BENCH_ARGS in the
# environment is read first (make bench BENCH_ARGS=--quick).
# Exit: 0 if every run completed and sroce left no retransmission.

set -euo pipefail

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

VM=$SROCE_TOP/tools/testing/sroce-vm

die() { echo "bench: $*" >&2; exit 2; }

# build_base REV: sroce.ko of git revision REV for the stock kernel; prints
# its path.
build_base() {
	local rev=$1 sha dir paths=()

	sha=$(git -C "$SROCE_TOP" rev-parse --verify "$rev^{commit}") ||
		die "no such revision: $rev"
	dir=$SROCE_CACHE/bench/base-$sha
	if [ ! -s "$dir/drivers/infiniband/sw/sroce/sroce.ko" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		# what build_ko (tools/testing/sroce-vm/lib.sh) syncs, as far as
		# REV has it
		mapfile -t paths < <(git -C "$SROCE_TOP" ls-tree --name-only "$sha" |
			grep -xE 'Kbuild|Kconfig|drivers|include')
		git -C "$SROCE_TOP" archive "$sha" "${paths[@]}" | tar -x -C "$dir"
		make -C "$SROCE_KDIR" M="$dir" -j"$(nproc)" modules \
			>"$dir.log" 2>&1 || die "base $rev did not build; see $dir.log"
	fi
	echo "$dir/drivers/infiniband/sw/sroce/sroce.ko"
}

main() {
	local run res out rev rc=0 append=() runargs=() args=()

	# shellcheck disable=SC2206 # BENCH_ARGS is a word list
	args=(${BENCH_ARGS:-} "$@")
	set -- "${args[@]}"
	while [ $# -gt 0 ]; do
		case $1 in
		--rounds) append+=("bench.rounds=$2"); shift 2 ;;
		--quick) append+=(bench.quick=1); shift ;;
		--only) append+=("bench.only=$2"); shift 2 ;;
		--topo) append+=("bench.topo=$2"); shift 2 ;;
		--profile) append+=("bench.profile=$2"); shift 2 ;;
		--providers) append+=("bench.providers=${2// /,}"); shift 2 ;;
		--base)
			append+=("bench.base=$(build_base "$2")"
				 "bench.base_rev=$(git -C "$SROCE_TOP" rev-parse --short=12 "$2")")
			shift 2 ;;
		*) runargs+=("$1"); shift ;;
		esac
	done
	rev=$(git -C "$SROCE_TOP" describe --always --dirty 2>/dev/null || echo unknown)
	mkdir -p "$SROCE_CACHE/vm-runs" "$SROCE_CACHE/bench"
	run=$(mktemp -d "$SROCE_CACHE/vm-runs/$(date +%Y%m%d-%H%M%S)-bench-XXXX")
	[ ${#append[@]} -eq 0 ] || runargs+=(--append "${append[*]}")
	"$VM/run.sh" --kernel stock --total-timeout 9000 --results "$run" \
		"${runargs[@]}" bench || rc=$?
	res=$run/stock/bench/results
	[ -s "$res/bench-raw.txt" ] ||
		die "no results (see $run/stock/bench/console.log)"
	out=$SROCE_CACHE/bench/$(date +%Y%m%d-%H%M%S)
	{
		echo "# sroce $rev; host $(hostname), $(nproc) CPUs," \
			"load average $(cut -d' ' -f1-3 /proc/loadavg)"
		/usr/bin/python3 "$SROCE_TOP/scripts/bench-report.py" "$res" "$out.png" ||
			rc=1
	} >"$out.txt"
	cat "$out.txt"
	for f in "$res"/profile-*.txt; do
		[ -e "$f" ] || continue
		echo
		head -n 25 "$f"
	done
	echo "bench: table $out.txt, chart $out.png; every run in $res/"
	return "$rc"
}

main "$@"
