# shellcheck shell=bash disable=SC2034 # PERF_VAL, PERF_WHY: for the caller
# SPDX-License-Identifier: GPL-2.0-only
#
# perftest helpers for the perftest and bench scenarios: run one perftest
# 4.5 test between two RDMA devices of a sroce_rdma_pair (server on DEV1,
# client on DEV0) and parse its result line.  Source after guest-lib.sh.
#
# The bandwidth tests (ib_*_bw) print, after a "#bytes" header line,
#   #bytes #iterations BW-peak[MB/s] BW-average[MB/s] MsgRate[Mpps]
# and the latency tests (ib_*_lat, iteration mode)
#   #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9 [usec]
# A run yields BW average (MB/s), t_typical (usec), or for ib_atomic_bw
# MsgRate (Mpps): an atomic moves 8 bytes, so its BW, printed with two
# decimals, reads 0.00 MB/s below 5,000 operations a second (the debug
# kernel under TCG does ~400), while MsgRate has six decimals.

# Server-side limit for one run; the client gets the same.
PERF_TIMEOUT=${PERF_TIMEOUT:-90}

# perf_result FILE TEST: print the figure of merit of a finished run (see
# above) from its output FILE; fail if there is none.
perf_result() {
	local col=4

	case $2 in
	*_lat | ib_atomic_bw) col=5 ;;
	esac
	awk -v col="$col" '
		/^ *#bytes/ { hdr = 1; next }
		hdr && $1 ~ /^[0-9]+$/ && NF >= col { print $col; found = 1; exit }
		END { exit !found }' "$1"
}

# perf_positive VALUE: VALUE is a number greater than zero.
perf_positive() {
	awk -v v="$1" 'BEGIN { exit !(v ~ /^[0-9]*\.?[0-9]+$/ && v + 0 > 0) }'
}

# The GID indices perf_gid found at the small volume, by "DEV ADDR".
declare -gA PERF_GIDS=()

# perf_gid VAR DEV ADDR: set VAR to DEV's GID index of ADDR (sroce_gid_index)
# and succeed, or set VAR to why not and fail.  At the small volume an index
# found once is used again: the GID table does not change during a
# scenario, and each lookup starts python3, seconds under TCG.  A full run
# looks it up for every run.
perf_gid() {
	local key="$2 $3" g

	if sroce_small && [ -n "${PERF_GIDS[$key]:-}" ]; then
		printf -v "$1" '%s' "${PERF_GIDS[$key]}"
		return 0
	fi
	if ! g=$(sroce_gid_index "$2" "$3" 2>&1); then
		printf -v "$1" '%s' "$g"
		return 1
	fi
	PERF_GIDS[$key]=$g
	printf -v "$1" '%s' "$g"
}

# perf_run TAG TEST DEV0 DEV1 FAMILY MTU SIZE ITERS [EXTRA-ARG...]
#
# One run of perftest TEST over the GIDs of FAMILY (4 or 6): server on DEV1
# (10.0.0.2 / fd00::2), client on DEV0 connecting to 10.0.0.2 for the
# out-of-band exchange; DEV0 = DEV1 puts both ends on DEV1's address.
# SIZE "-" leaves the size to the test (atomics).
# Output goes to perf-TAG-{srv,cli}.txt in the cwd.  Returns 0 only if
# both sides exited 0 within PERF_TIMEOUT and the figure is > 0; sets
# PERF_VAL to the figure, or PERF_WHY to why not (and shows both sides'
# output on stderr).  Call it directly, not in $(...): it sets globals.
#
# perftest derives its clock from a calibration loop; when the guest's vCPU
# is preempted during that loop the fit fails ("Correlation coefficient
# r^2: ... < 0.9") and the client reports 0.00 whatever moved.  Such a
# run says nothing about the device, so it is run again, once.
perf_run() {
	if perf_run_once "$@" ||
		! grep -q '^Correlation coefficient r^2' "perf-$1-cli.txt"; then
		[ -z "$PERF_WHY" ]
		return
	fi
	echo "perftest clock calibration failed; running $2 ($1) again" >&2
	mv "perf-$1-cli.txt" "perf-$1-cli-calibration.txt"
	perf_run_once "$@"
}

# perf_run_once: one attempt of perf_run.
perf_run_once() {
	local tag=$1 test=$2 d0=$3 d1=$4 fam=$5 mtu=$6 size=$7 iters=$8
	local port=$((18515 + RANDOM % 2000)) a0 a1 g0="" g1="" spid srv cli val _
	local args=() ready=sroce_tcp_listening

	shift 8
	PERF_VAL=""
	PERF_WHY=""
	if [ "$fam" = 6 ]; then
		a0=fd00::1 a1=fd00::2
	else
		a0=10.0.0.1 a1=10.0.0.2
	fi
	# one device: both ends on its address
	[ "$d0" != "$d1" ] || a0=$a1
	if ! perf_gid g0 "$d0" "$a0" || ! perf_gid g1 "$d1" "$a1"; then
		PERF_WHY="no GID for IPv$fam: $g0 $g1"
		return 1
	fi
	args=(-F -m "$mtu" -n "$iters" -p "$port")
	[ "$size" = - ] || args+=(-s "$size")
	args+=("$@")
	# with -R the server listens on rdma_cm, not TCP
	[[ " $* " != *" -R "* ]] || ready=sroce_cm_listening
	timeout "$PERF_TIMEOUT" "$test" -d "$d1" -x "$g1" "${args[@]}" \
		>"perf-$tag-srv.txt" 2>&1 &
	spid=$!
	sroce_wait_ready "$spid" 100 "$ready" "$port" || true
	set +e
	timeout "$PERF_TIMEOUT" "$test" -d "$d0" -x "$g0" "${args[@]}" 10.0.0.2 \
		>"perf-$tag-cli.txt" 2>&1
	cli=$?
	if [ "$cli" != 0 ]; then
		# A server whose client is gone would wait out its timeout.
		for _ in $(seq 1 50); do
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	srv=$?
	set -e
	if [ "$srv" != 0 ] || [ "$cli" != 0 ]; then
		PERF_WHY="server exit $srv, client exit $cli"
	elif ! val=$(perf_result "perf-$tag-cli.txt" "$test"); then
		PERF_WHY="no result line in the client's output"
	elif ! perf_positive "$val"; then
		PERF_WHY="result '$val' is not > 0"
	fi
	if [ -n "$PERF_WHY" ]; then
		{
			echo "--- $test server (gid $g1) ---"
			cat "perf-$tag-srv.txt"
			echo "--- $test client (gid $g0) ---"
			cat "perf-$tag-cli.txt"
		} >&2
		return 1
	fi
	PERF_VAL=$val
}

# perf_unit TEST: the unit of perf_run's figure for TEST.
perf_unit() {
	case $1 in
	*_lat) echo usec ;;
	ib_atomic_bw) echo Mpps ;;
	*) echo MB/s ;;
	esac
}
