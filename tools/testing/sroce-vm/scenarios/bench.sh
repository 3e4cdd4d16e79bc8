#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Benchmark scenario (make bench, not make check): perftest 4.5 over RC on
# sroce and on the kernel's rdma_rxe in one VM boot, so that they compare
# as ratios (TCG makes absolute figures meaningless).
#
# Providers, each on a fresh veth pair (IPv4 GIDs), named in
# bench.providers (default "sroce rxe"):
#   sroce          sroce.ko as a plain load gets it
#   sroce-tasklet  sroce.ko with exec=tasklet
#   rxe            rdma_rxe
#   base           the sroce.ko at bench.base=PATH (a host path), added
#                  to the providers when given: the same boot measures a
#                  change against the build before it
#
# Topology (bench.topo): "veth" (default), client on DEV0 and server on
# DEV1, every packet across the veth; "host", client and server both on
# DEV1, so that every packet's route ends at this host (rdma_rxe's
# loopback, sroce's same-host delivery).  The per-byte limit of "host" is
# the guest's memcpy speed.
#
# Rounds: bench.rounds (default 3).  In each round, for path MTU 1024
# (netdev MTU 1500) and then 4096 (netdev MTU 9000), every provider in
# turn, its order rotating from round to round, is loaded, runs each cell
# once and is unloaded.  A cell's median is over rounds that alternate the
# providers, so a drift of the boot's speed touches them alike.
#
# Cells (perftest iteration counts, -n: -D reports 0 under TCG):
#   ib_write_bw, ib_send_bw, ib_read_bw  64 B to 1 MiB by factors of 4,
#                                        and 64 KiB over 8 QPs (-q 8)
#   ib_send_lat, ib_write_lat            2 B and 4 KiB
# bench.quick=1 keeps 4 KiB and 64 KiB bandwidth and 2 B latency;
# bench.only=ERE keeps the cells whose "test size qps" matches.
#
# Providers (bench.providers, comma-separated): sroce, sroce-tasklet,
# base, rxe, and sroce:PARAM=VALUE[:PARAM=VALUE...], sroce.ko loaded with
# those module parameters (e.g. sroce:tx_gso=0: a lever off, same boot).
#
# bench.profile=TEST,SIZE (e.g. ib_write_bw,65536): in round 1, after the
# measured run of that cell, each provider runs it once more, with ten
# times its iterations (a bandwidth cell at least 1 GiB), under
# "perf record -a -g" (cpu-clock: TCG has no PMU), not counted; the flat
# profile by object and by symbol, and the call chains into the points
# where interrupts come back on and tasks switch, go to
# profile-PROVIDER-MTU.txt.
#
# Per-byte limit: speed-module times the guest kernel's memcpy and CRC-32
# once; scripts/bench-report.py turns them into the limit model.
#
# Clean link: what each run moved of the retransmission and NAK counters
# of both devices is kept (bench-counters.txt); the report says whether
# sroce's stayed at zero, and where not, in which cells.
#
# Results in $SROCE_RESULTS: bench-raw.txt ("provider mtu test size qps
# round value"), bench-speed.txt, bench-counters.txt ("provider mtu test
# size qps round device counter delta", moved counters only),
# bench-meta.txt.  The host turns them into the
# table and the chart (scripts/bench.sh, scripts/bench-report.py).
# sroce-vm: timeout 7200
# sroce-vm: mem 3072
# sroce-vm: build-module speed-module

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/perftest-lib.sh
source "$(dirname "$SROCE_VM_LIB")/perftest-lib.sh"

export SROCE_SCENARIO=bench
PERF_TIMEOUT=240
RAW=$SROCE_RESULTS/bench-raw.txt
COUNTERS=$SROCE_RESULTS/bench-counters.txt
ROUNDS=$(sroce_cmdline_var bench rounds 3)
QUICK=$(sroce_cmdline_var bench quick 0)
ONLY=$(sroce_cmdline_var bench only "")
BASE_KO=$(sroce_cmdline_var bench base "")
BASE_REV=$(sroce_cmdline_var bench base_rev "")
TOPO=$(sroce_cmdline_var bench topo veth)
case $TOPO in
veth) CLI_DEV=dev0 ;;
host) CLI_DEV=dev1 ;;
*) sroce_fail "unknown bench.topo '$TOPO'" ;;
esac
PROFILE=$(sroce_cmdline_var bench profile "")
read -r -a PROVIDERS <<<"$(sroce_cmdline_var bench providers "sroce rxe" | tr , ' ')"
[ -z "$BASE_KO" ] || PROVIDERS+=(base)
# path MTU and the netdev MTU that carries it
MTUS=("1024 1500" "4096 9000")
# What a clean link leaves at zero: resends and their causes on the
# requester, NAKs and duplicates on the responder.
CLEAN_COUNTERS=(completer_retry_err rcvd_seq_err rcvd_rnr_err send_seq_err
		send_rnr_err duplicate_request out_of_seq_request retry_exceeded_err)

# bw_iters SIZE: about 32 MiB a run, between 50 and 5,000 messages.
bw_iters() {
	local n=$((32 * 1024 * 1024 / $1))
	((n >= 50)) || n=50
	((n <= 5000)) || n=5000
	echo "$n"
}

# cells: "test size qps iterations" per line, of those bench.only keeps.
cells() {
	all_cells | while read -r test size qps n; do
		[[ -z $ONLY || "$test $size $qps" =~ $ONLY ]] || continue
		echo "$test $size $qps $n"
	done
}

all_cells() {
	local test size sizes=(64 256 1024 4096 16384 65536 262144 1048576)
	local lat=(2 4096)

	if [ "$QUICK" = 1 ]; then
		sizes=(4096 65536) lat=(2)
	fi
	for test in ib_write_bw ib_send_bw ib_read_bw; do
		for size in "${sizes[@]}"; do
			echo "$test $size 1 $(bw_iters "$size")"
		done
		[ "$QUICK" = 1 ] || echo "$test 65536 8 128"
	done
	for test in ib_send_lat ib_write_lat; do
		for size in "${lat[@]}"; do
			echo "$test $size 1 1000"
		done
	done
}

# provider_up NAME NETDEV-MTU: load the provider and make DEV0/DEV1.
provider_up() {
	local type=sroce params

	case $1 in
	sroce) sroce_load_ko ;;
	sroce-tasklet) sroce_load_ko exec=tasklet ;;
	sroce:*) IFS=: read -r -a params <<<"${1#sroce:}"; sroce_load_ko "${params[@]}" ;;
	base) SROCE_KO=$BASE_KO sroce_load_ko ;;
	rxe) sroce_load_rxe; type=rxe ;;
	*) sroce_fail "unknown provider '$1'" ;;
	esac
	sroce_rdma_pair "$type" dev0 dev1 "$2"
}

# counter_snapshot: "device counter value" for each counter of the
# clean-link check that the provider has (builtins only: no fork).
counter_snapshot() {
	local d c f v

	for d in dev0 dev1; do
		for c in "${CLEAN_COUNTERS[@]}"; do
			f=/sys/class/infiniband/$d/ports/1/hw_counters/$c
			[ -r "$f" ] || continue
			read -r v <"$f"
			echo "$d $c $v"
		done
	done
}

# counter_deltas BEFORE TAG: what moved since the snapshot BEFORE, as
# "TAG device counter delta" lines in $COUNTERS.
counter_deltas() {
	counter_snapshot | awk -v tag="$2" '
		NR == FNR { v[$1 " " $2] = $3; next }
		$3 != v[$1 " " $2] { print tag, $1, $2, $3 - v[$1 " " $2] }' \
		<(echo "$1") - >>"$COUNTERS"
}

# provider_down NAME: remove the devices, the veth pair and the module,
# so that the next provider can bind UDP port 4791.
provider_down() {
	rdma link del dev1 || sroce_fail "$1: rdma link del dev1"
	rdma link del dev0 || sroce_fail "$1: rdma link del dev0"
	/usr/sbin/ip link del veth0 || sroce_fail "$1: ip link del veth0"
	case $1 in
	rxe) /usr/sbin/modprobe -r rdma_rxe || sroce_fail "modprobe -r rdma_rxe" ;;
	*) /usr/sbin/rmmod sroce || sroce_fail "rmmod sroce" ;;
	esac
}

# measure PROVIDER MTU ROUND: every cell once into $RAW.  A run that
# completes with 0.00 or inf (perftest's cycle counting under TCG) is
# measured once more.
measure() {
	local prov=$1 mtu=$2 round=$3 test size qps iters val extra tag before

	while read -r test size qps iters; do
		before=$(counter_snapshot)
		extra=()
		[ "$qps" = 1 ] || extra=(-q "$qps")
		tag=$prov-$mtu-$test-$size-$qps-$round
		if perf_run "$tag" "$test" "$CLI_DEV" dev1 4 "$mtu" "$size" "$iters" \
			    "${extra[@]}" 2>/dev/null ||
		   { [[ $PERF_WHY == result* ]] &&
		     perf_run "$tag-again" "$test" "$CLI_DEV" dev1 4 "$mtu" "$size" \
			      "$iters" "${extra[@]}" 2>/dev/null; }; then
			val=$PERF_VAL
		else
			val=fail
			sroce_log "$tag: $PERF_WHY"
		fi
		sroce_log "$tag: $val $(perf_unit "$test")"
		echo "$prov $mtu $test $size $qps $round $val" >>"$RAW"
		counter_deltas "$before" "$prov $mtu $test $size $qps $round"
		if [ "$round" = 1 ] && [ "$qps" = 1 ] && [ "$PROFILE" = "$test,$size" ]; then
			profile "$prov" "$mtu" "$test" "$size" "$iters"
		fi
	done < <(cells)
}

# profile PROVIDER MTU TEST SIZE ITERS: one more run of the cell under a
# system-wide perf record; its profile to profile-PROVIDER-MTU.txt.
profile() {
	local data=$SROCE_RESULTS/perf-$1-$2.data report=$SROCE_RESULTS/profile-$1-$2.txt pid
	local ctl=/tmp/bench-perf-ctl ack=/tmp/bench-perf-ack afd cfd n

	sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1
	rm -f "$ctl" "$ack"
	mkfifo "$ctl" "$ack"
	# Started disabled and enabled through its control FIFO, whose
	# answer says it records: under TCG perf takes seconds to start.
	perf record -q -e cpu-clock -a -g -F 2000 -D -1 \
		--control "fifo:$ctl,$ack" -o "$data" &
	pid=$!
	# Both FIFOs stay open here until perf answers: a FIFO's data is
	# dropped when its last reader and writer close it, and perf may not
	# have opened it yet.
	exec {afd}<>"$ack" {cfd}<>"$ctl"
	echo enable >&"$cfd"
	read -r -t 120 _ <&"$afd" || sroce_log "perf did not confirm it records"
	exec {afd}<&- {cfd}>&-
	# ten times the cell's iterations, and for bandwidth at least 1 GiB:
	# perftest's start and its TCP handshake would otherwise take most
	# of the samples
	n=$(($5 * 10))
	if [[ $3 == *_bw ]] && ((n * $4 < 1 << 30)); then
		n=$(((1 << 30) / $4))
	fi
	perf_run "$1-$2-$3-$4-profile" "$3" "$CLI_DEV" dev1 4 "$2" "$4" "$n" \
		2>/dev/null || sroce_log "profile run of $1 $3 $4: $PERF_WHY"
	kill -INT "$pid" 2>/dev/null || sroce_log "perf record ended early"
	wait "$pid" || true
	{
		echo "# $1, path MTU $2, $3 $4 B: cpu-clock samples of every CPU"
		echo "# by CPU:"
		perf report -i "$data" --stdio --no-children --sort cpu \
			2>/dev/null | grep -v -e '^#' -e '^$' || true
		echo "# by CPU and object:"
		perf report -i "$data" --stdio --no-children --sort cpu,dso \
			--percent-limit 0.5 2>/dev/null | grep -v -e '^#' -e '^$' || true
		echo "# by object:"
		perf report -i "$data" --stdio --no-children --sort dso \
			--percent-limit 0.5 2>/dev/null | grep -v -e '^#' -e '^$' || true
		echo "# by symbol:"
		perf report -i "$data" --stdio --no-children --sort dso,sym \
			--percent-limit 0.2 2>/dev/null | grep -v -e '^#' -e '^$' || true
		# Inclusive: a function with everything it called, which
		# says what a path (the receive softirq, a train's build,
		# the responder's run) costs as a whole.
		echo "# by symbol, with callees:"
		perf report -i "$data" --stdio --children --sort sym -g none \
			--percent-limit 1 2>/dev/null |
			grep -v -e '^#' -e '^$' || true
		# Samples taken with interrupts off land where they are turned
		# back on (cpu-clock is an hrtimer): who turned them back on,
		# and who switched tasks, says where that time went.
		echo "# call chains into the irq-enabling and task-switch points:"
		perf report -i "$data" --stdio --no-children --sort sym \
			--symbols _raw_spin_unlock_irqrestore,finish_task_switch.isra.0,_raw_spin_unlock_irq \
			-g caller,1,callee,function,percent --percent-limit 1 \
			2>/dev/null | grep -v -e '^#' -e '^$' | head -n 300 || true
	} >"$report"
	rm -f "$data" "$ctl" "$ack"
	sroce_log "profile of $1 at path MTU $2: $report"
}

# speed: the guest's memcpy and CRC-32 speed (speed-module).
speed() {
	local line

	sroce_modprobe crc32_generic
	/usr/sbin/insmod "$SROCE_MODULES/sroce_vm_speed.ko" ||
		sroce_fail "insmod sroce_vm_speed.ko"
	/usr/sbin/rmmod sroce_vm_speed || sroce_fail "rmmod sroce_vm_speed"
	line=$(dmesg | grep -o 'sroce-speed: memcpy .*' | tail -n 1)
	[ -n "$line" ] || sroce_fail "no speed line from sroce_vm_speed"
	sroce_log "$line"
	echo "${line#sroce-speed: }" >"$SROCE_RESULTS/bench-speed.txt"
}

main() {
	local round mtu_pair mtu ndev i n prov

	sroce_modprobe ib_core ib_uverbs
	: >"$RAW"
	: >"$COUNTERS"
	speed
	{
		echo "perftest $(dpkg-query -W -f='${Version}' perftest 2>/dev/null)"
		echo "kernel $(uname -r)"
		echo "vcpus $(nproc)"
		echo "rounds $ROUNDS"
		echo "providers ${PROVIDERS[*]}"
		echo "quick $QUICK"
		echo "topo $TOPO"
		[ -z "$BASE_KO" ] || echo "base $BASE_KO"
		[ -z "$BASE_REV" ] || echo "base_rev $BASE_REV"
	} >"$SROCE_RESULTS/bench-meta.txt"
	n=${#PROVIDERS[@]}
	for round in $(seq 1 "$ROUNDS"); do
		for mtu_pair in "${MTUS[@]}"; do
			read -r mtu ndev <<<"$mtu_pair"
			for i in $(seq 0 $((n - 1))); do
				prov=${PROVIDERS[$(((i + round - 1) % n))]}
				sroce_log "=== round $round, path MTU $mtu: $prov"
				provider_up "$prov" "$ndev"
				measure "$prov" "$mtu" "$round"
				provider_down "$prov"
			done
		done
	done
	! grep -qw fail "$RAW" || sroce_fail "some runs failed (see $RAW)"
}

main
