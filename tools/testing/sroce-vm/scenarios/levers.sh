#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The data path's speed-ups one by one (Documentation/infiniband/sroce.rst,
# "Performance"): sroce is loaded with all of them on, with each of them
# off in turn, and with all of them off, and every time moves data over a
# veth pair with every byte checked by sroce_integrity:
#
#   - SEND, WRITE and READ of 64 KiB messages at path MTU 4096 (trains of
#     15 packets and one), WRITE of mixed sizes (1 B..64 KiB) at path MTU
#     1024 (trains of up to 62 packets), and a SEND run under netem loss,
#     reordering and duplication;
#   - the module parameters took: sent_gso (trains sent as one skb) moves
#     with tx_gso on and stays at zero with it off, and sent_lent (packets
#     that carried lent pages) with tx_lend;
#   - no retransmission on the clean runs, including a long READ run with
#     everything on (the responder's packets must leave in order: READ
#     responses that overtook each other in two CPUs' backlogs cost an
#     ACK timeout in about every 40 MiB read on the debug kernel).
#
# The levers: tx_gso (multi-packet transmit), icrc_later (the ICRC checked
# by the engine), rx_inline (lone packets executed in the receive softirq),
# req_follow (a user QP's requester moves to the CPU its application posts
# from), tx_lend (payloads sent from the registered pages, not copied).
#
# sroce-vm: timeout 900
# sroce-vm: mem 2048
# sroce-vm: build-prog sroce-integrity

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=levers
cd "$SROCE_RESULTS"

PROG=${SROCE_PROGS:?}/sroce_integrity
[ -x "$PROG" ] || sroce_fail "$PROG was not built"

VOL=16M MIXED=4M READ_LONG=64M
if sroce_small || [ "$SROCE_KERNEL" = debug ]; then
	VOL=2M MIXED=1M
fi
[ "$SROCE_KERNEL" = debug ] && READ_LONG=128M
LOSS_TIMEOUT=12
[ "$SROCE_KERNEL" = debug ] && LOSS_TIMEOUT=16
CONFIGS=("" "tx_gso=0" "icrc_later=0" "rx_inline=0" "req_follow=0"
	 "tx_lend=0" "tx_gso=0 icrc_later=0 rx_inline=0 req_follow=0 tx_lend=0")

failed=()

# integ TAG ARGS...: one sroce_integrity run from sroce0 to sroce1.
integ() {
	local tag=$1 rc=0
	shift
	sroce_log "run $tag: sroce_integrity $*"
	timeout -k 5 600 "$PROG" -a sroce0 -b sroce1 -g "$G0" -G "$G1" "$@" \
		>"integ-$tag.txt" 2>&1 || rc=$?
	grep '^sroce_integrity: op=' "integ-$tag.txt" | tail -n 1
	[ "$rc" = 0 ] || { tail -n 5 "integ-$tag.txt"; failed+=("$tag (exit $rc)"); }
}

# counter NAME: the sum of counter NAME over sroce0 and sroce1.
counter() {
	echo $(($(sroce_hw_counter sroce0 "$1") + $(sroce_hw_counter sroce1 "$1")))
}

sroce_modprobe ib_core ib_uverbs sch_netem
for cfg in "${CONFIGS[@]}"; do
	tag=${cfg:-all-on}
	tag=${tag// /+}
	sroce_log "sroce.ko ${cfg:-(defaults)}"
	# shellcheck disable=SC2086 # the parameters are words
	sroce_load_ko $cfg
	sroce_rdma_pair sroce sroce0 sroce1 9000
	G0=$(sroce_gid_index sroce0 10.0.0.1)
	G1=$(sroce_gid_index sroce1 10.0.0.2)

	for op in send write read; do
		integ "$tag-$op-4096" -o "$op" -m 4096 -n "$VOL" -s 64K -e 4
	done
	integ "$tag-write-1024-mixed" -o write -m 1024 -n "$MIXED" -x -s 64K -e 7
	if [ -z "$cfg" ]; then
		integ "$tag-read-4096-long" -o read -m 4096 -n "$READ_LONG" -s 64K
	fi
	gso=$(counter sent_gso)
	lent=$(counter sent_lent)
	retries=$(counter completer_retry_err)
	if [[ " $cfg " == *" tx_gso=0 "* ]]; then
		[ "$gso" = 0 ] || failed+=("$tag: sent_gso $gso with tx_gso=0")
	else
		[ "$gso" -gt 0 ] || failed+=("$tag: no train sent as one skb")
	fi
	if [[ " $cfg " == *" tx_lend=0 "* ]]; then
		[ "$lent" = 0 ] || failed+=("$tag: sent_lent $lent with tx_lend=0")
	else
		[ "$lent" -gt 0 ] || failed+=("$tag: no packet carried lent pages")
	fi
	[ "$retries" = 0 ] || failed+=("$tag: $retries retransmissions on a clean veth")
	sroce_log "$tag: sent_gso $gso, sent_lent $lent, completer_retry_err $retries"

	for d in veth0 veth1; do
		/usr/sbin/tc qdisc replace dev "$d" root netem delay 1ms \
			reorder 10% 50% loss 1% duplicate 1% ||
			sroce_fail "tc qdisc replace dev $d"
	done
	integ "$tag-send-4096-netem" -o send -m 4096 -n "$VOL" -s 64K -e 4 \
		-t "$LOSS_TIMEOUT" -w 60

	sroce_pair_remove
	/usr/sbin/ip link del veth0 || failed+=("ip link del veth0")
done

if [ ${#failed[@]} -gt 0 ]; then
	printf 'levers: FAILED: %s\n' "${failed[@]}"
	exit 1
fi
sroce_log "every configuration moved its data intact"
