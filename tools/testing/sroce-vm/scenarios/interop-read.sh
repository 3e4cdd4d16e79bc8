#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A deep READ pipeline against a slower responder, across two guests:
#
#   guest a: sroce0 on wire0 10.0.0.1 (MTU 1500)  <-->  rxe0 on wire0 10.0.0.2 :guest b
#
# ib_read_bw with its defaults (64 KiB messages, as many outstanding reads
# as the devices allow: 128) at path MTU 1024, sroce requesting from
# rdma_rxe: every one of the 128 READs in flight is answered with 64
# response packets, so thousands of frames arrive faster than a TCG guest
# takes them in and some of them are lost before sroce sees them.  Each run
# must complete all of its reads (perftest checks every completion's
# status); the counters that show the recovery (retransmitted READs,
# out-of-sequence responses) are logged after each run.
#
# sroce-vm: hosts 2
# sroce-vm: timeout 900
# sroce-vm: mem 1536

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"
# shellcheck source=tools/testing/sroce-vm/wire-lib.sh
source "$(dirname "$SROCE_VM_LIB")/wire-lib.sh"

export SROCE_SCENARIO=interop-read
WIRE_TAP=interop-read.txt

sroce_modprobe ib_core ib_uverbs
if [ "$SROCE_ROLE" = a ]; then
	DEV=sroce0
	# shellcheck disable=SC2119 # no module parameters
	sroce_load_ko
	sroce_wire_up 1500
	wire_dev_add sroce "$DEV"
else
	DEV=rxe0
	sroce_load_rxe
	sroce_wire_up 1500
	wire_dev_add rxe "$DEV"
fi
sroce_peer_sync rdma-up

# read_counters: this guest's device counters that are not zero (on
# guest a, what the READ recovery did so far)
read_counters() {
	local c dir=/sys/class/infiniband/$DEV/ports/1/hw_counters v
	for c in "$dir"/*; do
		read -r v <"$c"
		[ "$v" = 0 ] || printf '%s %s ' "${c##*/}" "$v"
	done
	echo
}

# link_drops: where frames were lost in this guest (the NIC's counters,
# softnet's backlog drops, UDP's errors)
link_drops() {
	/usr/sbin/ip -s link show wire0 | sed -n '3,6p' | tr -s ' \n' ' '
	printf 'softnet %s ' "$(cut -d' ' -f1-3 /proc/net/softnet_stat | tr '\n' ' ')"
	awk '/^Udp:/ { if (!h) { split($0, n); h = 1 } else {
		for (i = 2; i <= NF; i++) printf "%s %s ", n[i], $i } }' /proc/net/snmp
	echo
}

# Ten runs at the full volume (the issue's "10 of 10"), three at the
# small one and on the debug kernel; each moves 500 reads of 64 KiB.
runs=10
if sroce_small || [ "$SROCE_KERNEL" = debug ]; then
	runs=3
fi
g=$(wire_gid "$DEV" 4)
for i in $(seq 1 "$runs"); do
	port=$((18515 + WIRE_CASES))
	wire_case "ib_read_bw-64k-o128-mtu1024-run$i" b 240 "tcp:$port" \
		-- ib_read_bw -d "$DEV" -x "$g" -F -n 500 -p "$port" \
		-- ib_read_bw -d "$DEV" -x "$g" -F -n 500 -p "$port" "$SROCE_PEER4"
	sroce_log "after run $i: $(read_counters)"
	sroce_log "after run $i: $(link_drops)"
done
[ "$SROCE_ROLE" != a ] || grep -E 'Outstand|MTU|65536' ib_read_bw-*-cli.txt | head -n 6 || true
wire_finish
rdma link del "$DEV" || sroce_fail "rdma link del $DEV"
sroce_log "all passed"
