#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# RC retransmission scenario: ibv_rc_pingpong with data validation over a
# veth pair that loses, reorders and duplicates packets (netem on both
# ends). Every run must still succeed, and the requester's retry counters
# must show that retransmission did the work: sequence-error NAKs
# received and retries started.  The small volume (sroce_small) runs a
# tenth of the round trips (see below).
#
# sroce-vm: timeout 600

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=rc-loss

# pingpong SIZE ITERS MTU: one validated run over IPv4, 200 s at most.
pingpong() {
	sroce_rc_pingpong "loss-$1" 200 "$1" "$2" "$3" 4
}

sroce_modprobe ib_core ib_uverbs sch_netem
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000

# The handshake of ibv_rc_pingpong goes over TCP on the same veth; netem
# only starts once both devices are up.
for dev in veth0 veth1; do
	tc qdisc add dev "$dev" root netem loss 2% duplicate 1% \
		delay 1ms reorder 5% 50% || sroce_fail "netem on $dev"
done

# Round trips of 64 KiB (64 packets a message at MTU 1024) and of 1 MiB
# (256 at 4096).  The counters below need losses, and netem drops skbs: a
# message leaves as trains of up to 62 (MTU 1024) or 15 (MTU 4096)
# packets, so 10 and 2 round trips were only about 56 data skbs each
# way, a loss or two, and a run whose only losses were message tails
# (recovered by the timeout, no sequence NAK) failed CI once.  The small
# volume's 50 and 6 are about 210 each way (9 sequence NAKs in a debug
# run).
iters64k=200 iters1m=20
if sroce_small; then
	iters64k=50 iters1m=6
fi
failed=()
pingpong 65536 "$iters64k" 1024 || failed+=("65536 B")
pingpong 1048576 "$iters1m" 4096 || failed+=("1 MiB")

retries=0 seq=0
for dev in sroce0 sroce1; do
	retries=$((retries + $(sroce_hw_counter "$dev" completer_retry_err)))
	seq=$((seq + $(sroce_hw_counter "$dev" rcvd_seq_err)))
done
rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true
sroce_log "retries $retries, sequence NAKs received $seq"
[ "$retries" -gt 0 ] || failed+=("no retry counted")
[ "$seq" -gt 0 ] || failed+=("no sequence NAK counted")

for dev in veth0 veth1; do
	tc qdisc del dev "$dev" root || true
done
sroce_pair_remove

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "rc-loss: all passed"
