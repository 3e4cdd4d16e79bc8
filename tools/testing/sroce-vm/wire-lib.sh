# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Helpers of the two-guest scenarios (interop, wire-faults): one test case
# is a server on one guest and a client on the other, over wire0 (see
# "Two-guest scenarios" in guest-lib.sh, which must be sourced first).
# Guest a writes one TAP line per case to $SROCE_RESULTS/$WIRE_TAP; both
# guests must call the same cases in the same order.

WIRE_TAP=${WIRE_TAP:-wire.txt}
# prefixed to every case name (e.g. the pair of drivers)
WIRE_TAG=${WIRE_TAG:-}
# cases so far, the same on both guests (names their rendezvous), and the
# TAP lines guest a wrote so far
WIRE_CASES=0
WIRE_TAPN=0
WIRE_FAILED=()

# wire_dev_add TYPE NAME: RDMA device NAME of link type TYPE on wire0.
wire_dev_add() {
	rdma link add "$2" type "$1" netdev wire0 || sroce_fail "rdma link add $2 type $1"
	sroce_wait_rdma_ready "$2"
}

# wire_ready KIND:PORT: a server of KIND (tcp: perftest and the ibv_*
# examples exchange QP numbers over TCP; cm: an rdma_cm ID) listens on PORT.
wire_ready() {
	case $1 in
	tcp:*) sroce_tcp_listening "${1#tcp:}" ;;
	cm:*) sroce_cm_listening "${1#cm:}" ;;
	*) sroce_fail "wire_ready: bad kind '$1'" ;;
	esac
}

# wire_case NAME SERVER_ROLE LIMIT READY -- SERVER... -- CLIENT...: guest
# SERVER_ROLE runs SERVER and, once it listens (READY as for wire_ready),
# tells the peer, which runs CLIENT.  Both must exit 0 within LIMIT s; a
# client that fails stops its server.  Logs go to NAME-{srv,cli}.txt on
# each side; guest a records the case.  If WIRE_RETRY_RE is set and a
# failed side's log matches it (a known race of the tool, not of the
# driver), the case runs once more and only the second run counts.
wire_case() {
	local name=$1 srole=$2 limit=$3 ready=$4 try rc=0 peer_rc=0 again peer_again
	local t0=$SECONDS
	shift 4
	WIRE_SRV=()
	[ "$1" = -- ] && shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do WIRE_SRV+=("$1"); shift; done
	shift
	WIRE_CLI=("$@")
	WIRE_CASES=$((WIRE_CASES + 1))
	for try in 1 2; do
		wire_run_once "$name" "$srole" "$limit" "$ready" "$WIRE_CASES.$try"
		read -r rc again <"$SROCE_SHARED/val-rc-$WIRE_CASES.$try.$SROCE_ROLE"
		read -r peer_rc peer_again < <(sroce_peer_get "rc-$WIRE_CASES.$try" $((limit + 60)))
		: "${peer_rc:=none}"
		if [ "$try" = 2 ] || { [ "$again" != 1 ] && [ "$peer_again" != 1 ]; }; then
			break
		fi
		sroce_log "case $WIRE_CASES $name: failed on '$WIRE_RETRY_RE', once more"
	done
	sroce_log "case $WIRE_CASES $name: exit $rc here, $peer_rc on the peer ($((SECONDS - t0)) s of $limit)"
	if [ "$rc" = 0 ] && [ "$peer_rc" = 0 ]; then
		wire_record "$name" 0
	else
		wire_record "$name" 1 "exit $rc on $SROCE_ROLE, $peer_rc on $SROCE_PEER_ROLE"
	fi
}

# wire_dreqs_in: the DREQs this guest's connection managers took in so far
# (every RDMA device and port).
wire_dreqs_in() {
	cat /sys/class/infiniband/*/ports/*/cm_rx_msgs/dreq 2>/dev/null |
		awk '{ n += $1 } END { print n + 0 }'
}

# wire_lost_dreq PID DREQS NAME: the server PID of case NAME still runs WIRE_DREQ_GRACE s
# after its client passed.  A server of WIRE_DREQ_WAIT (rping) ends only on
# its client's DREQ, and the client destroys its rdma_cm ID as soon as it
# has sent it, which cancels the DREQ's retransmission: on a lossy wire
# that one DREQ may be lost, and the server then waits for ever (seen with
# the DREQ counters: the client sent one and never retried, the server took
# in none).  Stop the server; true (the case passes) if no DREQ came in
# since DREQS, false if one did and the server still did not end.
wire_lost_dreq() {
	local pid=$1 dreqs=$2 name=$3 _
	for _ in $(seq 1 $((WIRE_DREQ_GRACE * 5))); do
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
	done
	kill "$pid" 2>/dev/null
	wait "$pid"
	if [ "$(wire_dreqs_in)" = "$dreqs" ]; then
		sroce_log "$name: the client's only DREQ was lost on the wire; server stopped"
		return 0
	fi
	sroce_log "$name: the server took in a DREQ and did not end within ${WIRE_DREQ_GRACE}s"
	return 1
}

WIRE_DREQ_GRACE=15

# wire_run_once NAME SERVER_ROLE LIMIT READY KEY: one run of WIRE_SRV /
# WIRE_CLI for wire_case; leaves "RC AGAIN" in the shared value rc-KEY.
wire_run_once() {
	local name=$1 srole=$2 limit=$3 ready=$4 key=$5 pid rc="" again=0 log peer _ dreqs
	local rcfile=$SROCE_SHARED/val-rc-$5.$SROCE_PEER_ROLE
	set +e
	if [ "$SROCE_ROLE" = "$srole" ]; then
		log=$name-srv.txt
		dreqs=$(wire_dreqs_in)
		timeout "$limit" "${WIRE_SRV[@]}" >"$log" 2>&1 &
		pid=$!
		sroce_wait_ready "$pid" 300 wire_ready "$ready"
		sroce_peer_put "listen-$key" 1
		while kill -0 "$pid" 2>/dev/null; do
			if [ -e "$rcfile" ] && read -r peer _ <"$rcfile"; then
				if [ "$peer" != 0 ]; then
					kill "$pid"
					break
				fi
				if [ -n "${WIRE_DREQ_WAIT:-}" ]; then
					if wire_lost_dreq "$pid" "$dreqs" "$name"; then rc=0; else rc=1; fi
					break
				fi
			fi
			sleep 0.2
		done
		if [ -z "$rc" ]; then
			wait "$pid"
			rc=$?
		fi
	else
		log=$name-cli.txt
		sroce_peer_get "listen-$key" "$limit" >/dev/null
		timeout "$limit" "${WIRE_CLI[@]}" >"$log" 2>&1
		rc=$?
	fi
	set -e
	tail -n 4 "$log"
	if [ "$rc" != 0 ] && [ -n "${WIRE_RETRY_RE:-}" ] && grep -Eq -- "$WIRE_RETRY_RE" "$log"; then
		again=1
	fi
	sroce_peer_put "rc-$key" "$rc $again"
}

# wire_record NAME RC [WHY]: one TAP line (guest a) and the failure list.
wire_record() {
	WIRE_TAPN=$((WIRE_TAPN + 1))
	if [ "$2" = 0 ]; then
		[ "$SROCE_ROLE" != a ] ||
			echo "ok $WIRE_TAPN - $WIRE_TAG$1" >>"$SROCE_RESULTS/$WIRE_TAP"
		return 0
	fi
	WIRE_FAILED+=("$1")
	[ "$SROCE_ROLE" != a ] ||
		echo "not ok $WIRE_TAPN - $WIRE_TAG$1: $3" >>"$SROCE_RESULTS/$WIRE_TAP"
}

# wire_gid DEV FAMILY: DEV's GID index of this guest's IPv4 or IPv6 address.
wire_gid() {
	if [ "$2" = 6 ]; then
		sroce_gid_index "$1" "$SROCE_LOCAL6"
	else
		sroce_gid_index "$1" "$SROCE_LOCAL4"
	fi
}

# wire_peer FAMILY: the peer's IPv4 or IPv6 address.
wire_peer() {
	if [ "$1" = 6 ]; then echo "$SROCE_PEER6"; else echo "$SROCE_PEER4"; fi
}

# wire_pingpong KIND SERVER_ROLE DEV SIZE ITERS MTU FAMILY [OPTION...]:
# ibv_KIND_pingpong -c (the receiver checks every byte) between the guests
# over the GIDs of FAMILY.  Its TCP exchange of QP numbers always uses
# IPv4: the server listens on the first address getaddrinfo gives.
wire_pingpong() {
	local kind=$1 srole=$2 dev=$3 size=$4 iters=$5 mtu=$6 fam=$7 g port mtuopt=()
	shift 7
	g=$(wire_gid "$dev" "$fam")
	port=$((18515 + WIRE_CASES))
	[ "$kind" = ud ] || mtuopt=(-m "$mtu")
	wire_case "${kind}_pingpong-$size-mtu$mtu-v$fam-srv$srole" "$srole" 120 "tcp:$port" \
		-- "ibv_${kind}_pingpong" -d "$dev" -g "$g" -c "${mtuopt[@]}" -p "$port" \
			-s "$size" -n "$iters" "$@" \
		-- "ibv_${kind}_pingpong" -d "$dev" -g "$g" -c "${mtuopt[@]}" -p "$port" \
			-s "$size" -n "$iters" "$@" "$SROCE_PEER4"
}

# wire_rping SERVER_ROLE COUNT SIZE FAMILY: rping -V through rdma_cm (the
# client checks every ping's data after the server's RDMA READ and WRITE).
wire_rping() {
	local srole=$1 count=$2 size=$3 fam=$4 port here
	port=$((7174 + WIRE_CASES))
	if [ "$fam" = 6 ]; then here=$SROCE_LOCAL6; else here=$SROCE_LOCAL4; fi
	local WIRE_DREQ_WAIT=1
	wire_case "rping-$size-x$count-v$fam-srv$srole" "$srole" 240 "cm:$port" \
		-- rping -s -a "$here" -p "$port" -C "$count" -S "$size" -V \
		-- rping -c -a "$(wire_peer "$fam")" -p "$port" -C "$count" -S "$size" -V
}

# wire_perftest TEST SERVER_ROLE DEV FAMILY [OPTION...]: one perftest over
# rdma_cm (-R), iteration mode (duration mode can report 0 MB/s between two
# TCG guests).  perftest 4.5 resolves the server's name as IPv4 only.  With
# -R its server takes two rdma_cm connections on one port (its control
# channel, then the test's QPs): its client connects the second time as
# soon as the control channel's last message is in, while the server may
# not listen again yet.  The REQ is then rejected with reason 8 (invalid
# service ID), and perftest 4.5's own retry of that connect crashes in
# librdmacm (newer perftest retries cleanly), so a case rejected that way
# runs once more.
wire_perftest() {
	local test=$1 srole=$2 dev=$3 fam=$4 port
	local WIRE_RETRY_RE='RDMA_CM_EVENT_REJECTED; error: 8\.'
	shift 4
	port=$((19515 + WIRE_CASES))
	wire_case "$test-R-v$fam-srv$srole" "$srole" 180 "cm:$port" \
		-- "$test" -d "$dev" -R -F -p "$port" "$@" \
		-- "$test" -d "$dev" -R -F -p "$port" "$@" "$(wire_peer "$fam")"
}

# wire_matrix DEV MTU FAMILY [OPTION...]: interop_test.py between the
# guests (server on b, client on a) over the addresses of FAMILY at path
# MTU: every RC, UC and UD case in both directions with the data checked.
# Guest a adds each of its TAP lines to $WIRE_TAP as a case of its own.
wire_matrix() {
	local dev=$1 mtu=$2 fam=$3 port name here peer py line
	shift 3
	py=${SROCE_TOP:?}/tools/testing/sroce-verbs/interop_test.py
	port=$((20515 + WIRE_CASES))
	name=interop_test-mtu$mtu-v$fam
	if [ "$fam" = 6 ]; then here=$SROCE_LOCAL6; else here=$SROCE_LOCAL4; fi
	peer=$(wire_peer "$fam")
	wire_case "$name" b 600 "tcp:$port" \
		-- /usr/bin/python3 -u "$py" --role server --dev "$dev" --local "$here" \
			--port "$port" --mtu "$mtu" --deadline 540 "$@" \
		-- /usr/bin/python3 -u "$py" --role client --dev "$dev" --local "$here" \
			--peer "$peer" --port "$port" --mtu "$mtu" --deadline 540 "$@"
	[ "$SROCE_ROLE" = a ] || return 0
	while IFS= read -r line; do
		[[ $line =~ ^((not )?ok)\ [0-9]+\ -\ (.*)$ ]] || continue
		WIRE_TAPN=$((WIRE_TAPN + 1))
		echo "${BASH_REMATCH[1]} $WIRE_TAPN - $WIRE_TAG$name ${BASH_REMATCH[3]}" \
			>>"$SROCE_RESULTS/$WIRE_TAP"
	done <"$name-cli.txt"
}

# wire_finish: both guests wait for each other, then fail if a case did.
wire_finish() {
	sroce_peer_sync finish
	[ ${#WIRE_FAILED[@]} = 0 ] || sroce_fail "failed: ${WIRE_FAILED[*]}"
}
