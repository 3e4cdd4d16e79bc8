#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rdma_cm scenario: rdma-core's connection-manager examples and perftest's
# rdma_cm mode over sroce, on the veth pair of sroce_rdma_pair (10.0.0.1,
# fd00::1 on sroce0; 10.0.0.2, fd00::2 on sroce1). Address and route
# resolution, the IB CM's MADs on QP1 (GSI) and the data all run over
# sroce. Both addresses are local to the guest, so rdma_cm places both
# ends on the device that owns the server's address and sroce loops the
# packets back internally; mckey's sender and receiver bind to different
# devices and its datagrams cross the veth.
#
#   rping (IPv4 and IPv6, 1,000 pings, -V: every ping's data checked),
#   ucmatose (4 connections), udaddy (UD through rdma_cm), rdma_server /
#   rdma_client, mckey (IPv4 multicast join, send, receive, leave),
#   ib_{write,send,read}_bw -R, and a connect to a port nobody listens on,
#   which must be rejected, not hang.  Then tools/testing/sroce-verbs/
#   cm_test.py drives rdma_cm event by event (private data in the request,
#   reply and reject, disconnect on both sides, IPv4 and IPv6, and
#   address resolution that must time out).
#
# One "ok N - name" / "not ok N - name: why" line per run in
# $SROCE_RESULTS/cm.txt and cm_test.txt, which make check counts.
#
# The small volume (sroce_small) runs every case with 20 pings per rping,
# 2 ucmatose connections and a twentieth of the perftest iterations
# (sroce_iters); cm_test.py moves next to no data and runs whole.
# sroce-vm: timeout 900

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/perftest-lib.sh
source "$(dirname "$SROCE_VM_LIB")/perftest-lib.sh"

export SROCE_SCENARIO=cm
REPORT=$SROCE_RESULTS/cm.txt
failed=()
# rping's pings: every one is the same exchange (SENDs, an RDMA READ and
# an RDMA WRITE, the data checked), so the small volume runs 20
PINGS=$(sroce_iters 1000)
sroce_small && PINGS=20
# ucmatose's connections: 2 at the small volume, still more than one on
# the listener
CONNS=4
sroce_small && CONNS=2


# pair NAME PORT LIMIT -- SERVER... -- CLIENT...: the server, then (once an
# rdma_cm ID listens on PORT) the client; both must exit 0 within LIMIT s.
pair() {
	local name=$1 port=$2 limit=$3 srv=() cli=() spid s c
	shift 3
	[ "$1" = -- ] && shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout "$limit" "${srv[@]}" >"cm-$name-srv.txt" 2>&1 &
	spid=$!
	sroce_wait_ready "$spid" 200 sroce_cm_listening "$port" || true
	set +e
	timeout "$limit" "${cli[@]}" >"cm-$name-cli.txt" 2>&1
	c=$?
	# a client that failed leaves its server waiting: do not wait for it
	[ "$c" = 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	s=$?
	set -e
	tail -n 5 "cm-$name-srv.txt" "cm-$name-cli.txt"
	if [ "$s" = 0 ] && [ "$c" = 0 ]; then
		return 0
	fi
	WHY="server exit $s, client exit $c"
	return 1
}

sroce_modprobe ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000
: >"$REPORT"

# expect NAME PATTERN FILE: a pair that passed must also show PATTERN.
expect() {
	if [ -z "$WHY" ] && ! grep -q -- "$2" "$3"; then
		WHY="no \"$2\" in $3"
	fi
	sroce_tap "$([ -z "$WHY" ] && echo 0 || echo 1)" "$1" "$WHY"
}

for a in 10.0.0.2 fd00::2; do
	WHY=""
	pair "rping-$a" 7174 300 -- rping -s -a "$a" -C "$PINGS" -V -- \
		rping -c -a "$a" -C "$PINGS" -V -v || true
	expect "rping $a: $PINGS pings, data validated" \
		"rdma-ping-$((PINGS - 1)):" "cm-rping-$a-cli.txt"
done

WHY=""
pair ucmatose 7471 120 -- ucmatose -c "$CONNS" -- ucmatose -s 10.0.0.2 -c "$CONNS" || true
expect "ucmatose: $CONNS connections, data, disconnect" \
	"data transfers complete" cm-ucmatose-cli.txt

WHY=""
pair udaddy 7174 120 -- udaddy -c 2 -- udaddy -s 10.0.0.2 -c 2 || true
expect "udaddy: UD through rdma_cm" "data transfers complete" cm-udaddy-cli.txt

WHY=""
pair rdma-server 7471 120 -- rdma_server -- rdma_client -s 10.0.0.2 || true
expect "rdma_server / rdma_client" "rdma_client: end 0" cm-rdma-server-cli.txt

# mckey: the receiver joins on sroce1, the sender on sroce0.
timeout 60 mckey -m 239.1.1.1 -b 10.0.0.2 -C 10 >cm-mckey-srv.txt 2>&1 &
spid=$!
for _ in $(seq 1 200); do
	/usr/sbin/ip maddr show dev veth1 | grep -q "inet  239.1.1.1" && break
	sleep 0.1
done
set +e
timeout 60 mckey -m 239.1.1.1 -b 10.0.0.1 -s -C 10 >cm-mckey-cli.txt 2>&1
c=$?
wait "$spid"
s=$?
set -e
tail -n 5 cm-mckey-srv.txt cm-mckey-cli.txt
WHY=""
[ "$s" = 0 ] && [ "$c" = 0 ] || WHY="sender exit $c, receiver exit $s"
expect "mckey: IPv4 multicast join, 10 datagrams received, leave" \
	"data transfers complete" cm-mckey-srv.txt

for t in ib_write_bw ib_send_bw ib_read_bw; do
	perf_run "$t-R" "$t" sroce0 sroce1 4 4096 65536 "$(sroce_iters 200)" -R ||
		true
	sroce_tap "$([ -z "$PERF_WHY" ] && echo 0 || echo 1)" \
		"$t -R (rdma_cm), 64 KiB: ${PERF_VAL:-0} MB/s" "$PERF_WHY"
done

# No listener on port 7999: the connect is rejected, quickly.
set +e
timeout 30 rping -c -a 10.0.0.2 -p 7999 -C 1 >cm-reject.txt 2>&1
c=$?
set -e
cat cm-reject.txt
rc=1
if [ "$c" != 0 ] && [ "$c" != 124 ]; then rc=0; fi
sroce_tap "$rc" "connect to a port with no listener is refused" "client exit $c"

sroce_log "running cm_test.py sroce0 sroce1"
set +e
PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -u \
	"${SROCE_TOP:?}/tools/testing/sroce-verbs/cm_test.py" sroce0 sroce1 2>&1 |
	tee "$SROCE_RESULTS/cm_test.txt"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || failed+=("cm_test.py")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true
sroce_pair_remove

echo "# $((SROCE_TAP_NUM - SROCE_TAP_FAILED)) passed, $SROCE_TAP_FAILED failed" | tee -a "$REPORT"
[ "$SROCE_TAP_FAILED" = 0 ] || sroce_fail "$SROCE_TAP_FAILED of $SROCE_TAP_NUM rdma_cm runs failed"
[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "cm: all passed"
