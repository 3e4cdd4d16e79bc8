#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Benchmark scenario (make bench, not make check): the same perftest 4.5
# matrix, in one VM boot, on
#
#   sroce-wq       sroce.ko loaded with exec=workqueue
#   sroce-tasklet  sroce.ko loaded with exec=tasklet
#   rxe            the kernel's rdma_rxe
#
# each on a fresh veth pair with netdev MTU 9000 (path MTU 4096, IPv4
# GIDs; server on DEV1, client on DEV0).  Matrix: ib_write_bw, ib_send_bw,
# ib_read_bw at 4 KiB and 64 KiB; ib_send_lat, ib_write_lat, ib_read_lat at
# 2 B.  Every cell is measured BENCH_REPS times (TCG is noisy) and the
# median reported.  Results in $SROCE_RESULTS: bench-raw.txt (every run:
# provider test size rep value) and bench.txt (the table, also printed).
# sroce-vm: timeout 3600
# sroce-vm: mem 3072

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/perftest-lib.sh
source "$(dirname "$SROCE_VM_LIB")/perftest-lib.sh"

export SROCE_SCENARIO=bench
BENCH_REPS=${BENCH_REPS:-3}
PERF_TIMEOUT=120
RAW=$SROCE_RESULTS/bench-raw.txt
TABLE=$SROCE_RESULTS/bench.txt
# test size iterations
MATRIX=(
	"ib_write_bw 4096 2000"
	"ib_write_bw 65536 300"
	"ib_send_bw 4096 2000"
	"ib_send_bw 65536 300"
	"ib_read_bw 4096 2000"
	"ib_read_bw 65536 300"
	"ib_send_lat 2 500"
	"ib_write_lat 2 500"
	"ib_read_lat 2 500"
)
PROVIDERS=(sroce-wq sroce-tasklet rxe)

# provider_up NAME: load the provider's module and make DEV0/DEV1 on a new
# veth pair.
provider_up() {
	case $1 in
	sroce-wq) sroce_load_ko exec=workqueue ;;
	sroce-tasklet) sroce_load_ko exec=tasklet ;;
	rxe) sroce_load_rxe ;;
	esac
	case $1 in
	sroce-*)
		sroce_log "exec mode: $(cat /sys/module/sroce/parameters/exec)"
		sroce_rdma_pair sroce dev0 dev1 9000 ;;
	rxe) sroce_rdma_pair rxe dev0 dev1 9000 ;;
	esac
}

# provider_down NAME: remove the devices, the veth pair and the module, so
# that the next provider can bind UDP port 4791.
provider_down() {
	rdma statistic show link dev0/1 >"$SROCE_RESULTS/stats-$1-dev0.txt" 2>&1 || true
	rdma statistic show link dev1/1 >"$SROCE_RESULTS/stats-$1-dev1.txt" 2>&1 || true
	rdma link del dev1 || sroce_fail "$1: rdma link del dev1"
	rdma link del dev0 || sroce_fail "$1: rdma link del dev0"
	/usr/sbin/ip link del veth0 || sroce_fail "$1: ip link del veth0"
	case $1 in
	sroce-*) /usr/sbin/rmmod sroce || sroce_fail "rmmod sroce" ;;
	rxe) /usr/sbin/modprobe -r rdma_rxe || sroce_fail "modprobe -r rdma_rxe" ;;
	esac
}

# measure PROVIDER: every cell of the matrix BENCH_REPS times into $RAW.
measure() {
	local prov=$1 cell test size iters rep val

	for cell in "${MATRIX[@]}"; do
		read -r test size iters <<<"$cell"
		for rep in $(seq 1 "$BENCH_REPS"); do
			if perf_run "$prov-$test-$size-$rep" "$test" dev0 dev1 4 \
				    4096 "$size" "$iters" 2>/dev/null; then
				val=$PERF_VAL
			elif [[ $PERF_WHY == result* ]] &&
			     perf_run "$prov-$test-$size-$rep-retry" "$test" \
				      dev0 dev1 4 4096 "$size" "$iters" 2>/dev/null; then
				# 0.00 or inf from a run that completed: perftest's
				# cycle counting under TCG; measured once more.
				val=$PERF_VAL
			else
				val=fail
				sroce_log "$prov $test $size run $rep: $PERF_WHY"
			fi
			sroce_log "$prov $test $size run $rep: $val $(perf_unit "$test")"
			echo "$prov $test $size $rep $val" >>"$RAW"
		done
	done
}

# table DEFAULT-EXEC: the medians of $RAW, one row per cell, one column
# per provider, and sroce in its default exec mode against rxe.
table() {
	local def=sroce-wq

	[ "$1" != tasklet ] || def=sroce-tasklet
	awk -v provs="${PROVIDERS[*]}" -v def="$def" \
	    -v reps="$BENCH_REPS" '
	function median(list,   n, v, i, j, t) {
		n = split(list, v, " ")
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
		if (n == 0) return ""
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	{
		key = $2 " " $3
		if (!(key in seen)) { seen[key] = 1; order[++cells] = key }
		if ($5 != "fail") vals[$1, key] = vals[$1, key] " " $5
		else fails[$1, key]++
	}
	END {
		np = split(provs, p, " ")
		printf "%-13s %6s %5s", "test", "size", "unit"
		for (i = 1; i <= np; i++) printf " %13s", p[i]
		printf " %9s\n", "sroce/rxe"
		for (c = 1; c <= cells; c++) {
			split(order[c], k, " ")
			unit = k[1] ~ /_lat$/ ? "usec" : "MB/s"
			printf "%-13s %6s %5s", k[1], k[2], unit
			for (i = 1; i <= np; i++) {
				m = median(vals[p[i], order[c]])
				med[p[i]] = m
				cellv = m == "" ? "fail" : sprintf("%.2f", m)
				if (fails[p[i], order[c]])
					cellv = cellv "(" fails[p[i], order[c]] "F)"
				printf " %13s", cellv
			}
			if (med[def] != "" && med["rxe"] != "" && med["rxe"] > 0)
				printf " %9.2f\n", med[def] / med["rxe"]
			else
				printf " %9s\n", "-"
		}
	}' "$RAW"
}

sroce_modprobe ib_core ib_uverbs
: >"$RAW"
# The default exec mode, as a plain load gets it.
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
default=$(cat /sys/module/sroce/parameters/exec)
/usr/sbin/rmmod sroce || sroce_fail "rmmod sroce"

for prov in "${PROVIDERS[@]}"; do
	sroce_log "=== $prov"
	provider_up "$prov"
	measure "$prov"
	provider_down "$prov"
done

{
	echo "# sroce make bench: perftest $(dpkg-query -W -f='${Version}' perftest 2>/dev/null)," \
		"RC, path MTU 4096, IPv4 GIDs, veth pair (netdev MTU 9000)"
	echo "# kernel $(uname -r), $(nproc) vCPUs, median of $BENCH_REPS runs;" \
		"sroce default exec mode: $default"
	echo "# bandwidth: BW average (MB/s, higher is better); latency:" \
		"t_typical (usec, lower is better)"
	echo "# sroce/rxe: sroce in its default mode ($default) over rxe;" \
		"(NF): N runs of the cell failed"
	table "$default"
} >"$TABLE"
cat "$TABLE"
! grep -qw fail "$RAW" || sroce_fail "some runs failed (see $RAW)"
