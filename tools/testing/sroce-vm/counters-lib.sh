#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What the packet fuzzer's scenarios (pktfuzz, flood) share: TAP lines,
# their knobs on the kernel command line, and snapshots of every counter
# their accounting reads, and the checks after the run (finish). Sourced
# after guest-lib.sh, with SROCE_SCENARIO set and TAP naming the results
# file; tap() appends to the arrays and counters below.

tap_n=0
failed=()
declare -A D

# tap OK NAME [WHY]: one TAP line (OK is 0 for ok, "skip" for a skip)
tap() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $tap_n - $2" | tee -a "$TAP"
	elif [ "$1" = skip ]; then
		echo "ok $tap_n - $2 # SKIP $3" | tee -a "$TAP"
	else
		echo "not ok $tap_n - $2: $3" | tee -a "$TAP"
		failed+=("$2")
	fi
}

# cmdline_var NAME DEFAULT: $SROCE_SCENARIO.NAME=VALUE (sroce_cmdline_var)
cmdline_var() { sroce_cmdline_var "$SROCE_SCENARIO" "$@"; }

# snapshot FILE: sroce0's counters and the IP, UDP and veth drops,
# "name value" a line
snapshot() {
	local f v
	{
		for f in /sys/class/infiniband/sroce0/ports/1/hw_counters/*; do
			read -r v <"$f"
			echo "sroce.${f##*/} $v"
		done
		awk '{ if (h[$1] == "") { for (i = 2; i <= NF; i++) n[$1, i] = $i; h[$1] = NF }
		       else for (i = 2; i <= NF; i++) print substr($1, 1, length($1) - 1) "." n[$1, i], $i }' \
			/proc/net/snmp /proc/net/netstat
		awk '{ print "snmp6." $1, $2 }' /proc/net/snmp6
		for f in veth0/statistics/rx_dropped veth1/statistics/tx_dropped; do
			read -r v <"/sys/class/net/$f"
			echo "${f%%/*}.${f##*/} $v"
		done
	} >"$1"
}

# deltas: every counter's growth between before.txt and after.txt into
# the array D (one awk: a fork costs up to a second on the debug kernel)
deltas() {
	local n v
	while read -r n v; do
		D[$n]=$v
	done < <(awk 'NR == FNR { a[$1] = $2; next } { print $1, $2 - a[$1] }' \
		before.txt after.txt)
}

# sum NAME...: the sum of their growths
sum() {
	local n s=0
	for n in "$@"; do s=$((s + ${D[$n]:-0})); done
	echo "$s"
}

# finish TAG WHAT: patterned RC and UD pingpongs between the two devices
# after WHAT ("the fuzz"), logs rc-*-TAG.txt and ud-*-TAG.txt; then both
# links removed and sroce unloaded; fails the scenario if any TAP failed
finish() {
	local tag=$1 what=$2 iters removed

	iters=$(sroce_iters 200)
	if sroce_rc_pingpong "$tag" 120 4096 "$iters" 1024; then
		tap 0 "rc_pingpong with data check after $what"
	else
		tap 1 "rc_pingpong with data check after $what" "see rc-*-$tag.txt"
	fi
	if sroce_pingpong ud "$tag" 120 1024 "$iters" 1024; then
		tap 0 "ud_pingpong with data check after $what"
	else
		tap 1 "ud_pingpong with data check after $what" "see ud-*-$tag.txt"
	fi

	removed=${#failed[@]}
	sroce_pair_remove
	if [ ${#failed[@]} = "$removed" ]; then
		tap 0 "links removed, rmmod sroce"
	else
		tap 1 "links removed, rmmod sroce" "${failed[*]:$removed}"
	fi
	[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
}
