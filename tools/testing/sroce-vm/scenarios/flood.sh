#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Memory under flood: pktfuzz -f (tools/testing/sroce-fuzz/flood.c) sends
# valid-looking RoCEv2 frames with AF_PACKET from veth1 into sroce0 as
# fast as it can: UD SENDs to QP1 (the GSI Q_Key, which anyone may use)
# and to a UD QP of pktfuzz's that has no receive WQE, and in-window RC
# WRITE_ONLY/SEND_ONLY requests (expected and duplicate PSNs) to a live RC
# QP.  Every one lands in its QP's responder inbox, which sroce bounds at
# SROCE_RESP_BACKLOG (4096) packets.  For the inboxes to fill, their
# consumer is made slower than the flood: sroce is loaded with rx_inline=0
# (no responder run in the receive softirq), and the "sroce" workqueue (the
# responders' and completers' engines) is confined to CPU 1 through its
# sysfs cpumask, where a SCHED_FIFO busy loop leaves CFS tasks the RT
# throttle's 5%; pktfuzz and the sampler run on CPU 0.
#
# A fork-free background loop samples /proc/meminfo (MemAvailable, Slab,
# SUnreclaim) and /proc/slabinfo (active skbuff_head_cache, kmalloc-512,
# -1k and -2k objects) every 100 ms: the baseline is the last sample
# before the flood, the peak the most during it and the drain, and
# "after" a sample once the counters stopped moving with the busy loop
# gone and the skb caches shrunk (on KASAN that empties their quarantine).
#
# The bound on the peak growth of SUnreclaim (and of MemTotal -
# MemAvailable, with what the per-CPU page lists may hold on top):
#
#   3 QPs x 4096 packets x F        the inboxes.  F is one queued frame's
#                                   memory: its sk_buff (skbuff_head_cache)
#                                   and its data (the kmalloc cache that
#                                   16 bytes of headroom + the frame +
#                                   skb_shared_info fall in), each object's
#                                   share of its slab in /proc/slabinfo,
#                                   and two kmemleak_objects where kmemleak
#                                   runs; stock: 256 + 1024 = 1280 bytes,
#                                   the frames' truesize
#   + CPUs x netdev_max_backlog x F the softnet backlog ahead of IP
#   + wmem_default + 2 x rmem_max   pktfuzz's AF_PACKET sockets: frames
#                                   sent but not yet orphaned (ip_rcv), and
#                                   the device's answers read back; sroce's
#                                   UDP socket queues nothing (encap_rcv)
#   + 4 MiB                         the rest of the kernel meanwhile
#   + MemTotal/32 + 1 MiB x CPUs    KASAN's quarantine (debug kernel)
#
# Checks, TAP lines in flood.txt:
#   1. pktfuzz sent the frames asked for;
#   2. the inboxes filled: dropped_backlog grew;
#   3. the peak growth of SUnreclaim is within the bound;
#   4. so is that of MemTotal - MemAvailable, per-CPU page lists added;
#   5. (no KASAN) the live sk_buffs peak within the inboxes, the backlog
#      and the sockets' worth of frames, + 1024;
#   6. after the flood SUnreclaim is back within 4 MiB of the baseline
#      and the live sk_buffs within 1024;
#   7. the counters account for every frame: rcvd_pkts grew by the frames
#      sent less IP and veth drops, no other drop counter moved, and
#      rcvd_pkts - (dropped_backlog + dropped_ud_msg + duplicate_request +
#      out_of_seq_request + ack_deferred), what QP1 handed the MAD layer,
#      lies in 0..the frames sent to QP1;
#   8. ibv_rc_pingpong and ibv_ud_pingpong with data checks still pass;
#   9. the links go and sroce unloads.
#
# Full volume: 300,000 frames on the stock kernel, 100,000 on the debug
# one; small: a tenth.  "flood.frames=N" and "flood.slow=0" (no busy
# loop, no cpumask) on the kernel command line (run.sh --append) change
# that.
#
# sroce-vm: build-prog sroce-fuzz
# sroce-vm: timeout 1500
# sroce-vm: cpus 2

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=flood
TAP=flood.txt
: >"$TAP"
# shellcheck source=tools/testing/sroce-vm/counters-lib.sh
source "$(dirname "$SROCE_VM_LIB")/counters-lib.sh"
MiB=$((1024 * 1024))
WQ=/sys/devices/virtual/workqueue/sroce/cpumask
HW=/sys/class/infiniband/sroce0/ports/1/hw_counters

# nap SECONDS: sleep without a fork (a fork costs up to a second on the
# debug kernel): a read that times out on a FIFO nobody writes
nap() {
	read -r -t "$1" -u "$NAP_FD" _ || true
}

# mem_sample: the S_* globals from /proc/meminfo and /proc/slabinfo
# (kB, objects); builtins only, and mapfile: a read loop reads a /proc
# file a byte at a time
mem_sample() {
	local l w
	S_skb=0 S_k512=0 S_k1k=0 S_k2k=0
	mapfile -t MEM_LINES </proc/meminfo
	for l in "${MEM_LINES[@]}"; do
		# shellcheck disable=SC2206 # split on blanks
		w=($l)
		case ${w[0]} in
		MemAvailable:) S_avail=${w[1]} ;;
		Slab:) S_slab=${w[1]} ;;
		SUnreclaim:) S_sunr=${w[1]} ;;
		esac
	done
	mapfile -t MEM_LINES </proc/slabinfo
	for l in "${MEM_LINES[@]}"; do
		case $l in
		skbuff_head_cache\ *|kmalloc-512\ *|kmalloc-1k\ *|kmalloc-2k\ *) ;;
		*) continue ;;
		esac
		# shellcheck disable=SC2206 # split on blanks
		w=($l)
		case ${w[0]} in
		skbuff_head_cache) S_skb=${w[1]} ;;
		kmalloc-512) S_k512=${w[1]} ;;
		kmalloc-1k) S_k1k=${w[1]} ;;
		kmalloc-2k) S_k2k=${w[1]} ;;
		esac
	done
}

# sampler FILE STOP: a sample every 100 ms into FILE until STOP exists
sampler() {
	while [ ! -e "$2" ]; do
		mem_sample
		echo "$EPOCHREALTIME $S_avail $S_slab $S_sunr $S_skb $S_k512 $S_k1k $S_k2k" >>"$1"
		nap 0.1
	done
}

# shrink_skb_caches: give the skb caches' free slabs (and, on KASAN,
# their quarantined objects) back, so that what stays is what is live
shrink_skb_caches() {
	local d
	for d in /sys/kernel/slab/skbuff_* /sys/kernel/slab/kmalloc-* \
		/sys/kernel/slab/kmemleak_object; do
		if [ -d "$d" ] && [ ! -L "$d" ] && [ -w "$d/shrink" ]; then
			echo 1 >"$d/shrink" || true
		fi
	done
}

# slab_fp CACHE: bytes of slab memory one object of CACHE takes
slab_fp() {
	awk -v c="$1" '$1 == c { print int($6 * 4096 / $5); f = 1 }
		END { if (!f) print 0 }' /proc/slabinfo
}

# out_line PREFIX: OUT_LINE is the first line of flood-out.txt starting
# with PREFIX; false if none (builtins only)
out_line() {
	local l
	OUT_LINE=
	[ -f flood-out.txt ] || return 1
	while IFS= read -r l; do
		if [[ $l == "$1"* ]]; then OUT_LINE=$l; return 0; fi
	done <flood-out.txt
	return 1
}

# fuzz_alive: pktfuzz runs (a zombie does not)
fuzz_alive() {
	local st=Z
	{ read -r _ _ st _ <"/proc/$FUZZ_PID/stat"; } 2>/dev/null || true
	[ "$st" != Z ]
}

# wait_line PREFIX SECONDS: wait until pktfuzz printed PREFIX, or it died
wait_line() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		out_line "$1" && return 0
		fuzz_alive || { out_line "$1"; return; }
		nap 0.1
	done
	return 1
}

# field LINE KEY: the value of KEY=VALUE in LINE
field() {
	local w
	for w in $1; do
		if [[ $w == "$2="* ]]; then echo "${w#*=}"; return; fi
	done
	echo 0
}

# drain_key: DRAIN_KEY, what moves while the inboxes drain: the counters
# the responders move, and the live sk_buffs in 512s (QP1's deliveries
# to the MAD layer have no counter)
drain_key() {
	local n v s=0
	for n in dropped_ud_msg duplicate_request out_of_seq_request ack_deferred; do
		read -r v <"$HW/$n"
		s=$((s + v))
	done
	mem_sample
	DRAIN_KEY="$s/$((S_skb / 512))"
}

# wait_drained SECONDS: until the responders' counters and the live
# sk_buffs stay the same for 1.5 s
wait_drained() {
	local i same=0 last=
	for ((i = 0; i < $1 * 2; i++)); do
		drain_key
		if [ "$DRAIN_KEY" = "$last" ]; then
			same=$((same + 1))
			[ "$same" -lt 3 ] || return 0
		else
			same=0
		fi
		last=$DRAIN_KEY
		nap 0.5
	done
	return 1
}

# data_cache LEN: the kmalloc cache the data of an AF_PACKET frame of LEN
# bytes lands in: 16 bytes of headroom (LL_RESERVED_SPACE of an Ethernet
# device), the frame, cache-aligned, then skb_shared_info (320)
data_cache() {
	local need=$(( ($1 + 16 + 63) / 64 * 64 + 320 ))
	if [ "$need" -le 512 ]; then echo kmalloc-512
	elif [ "$need" -le 1024 ]; then echo kmalloc-1k
	elif [ "$need" -le 2048 ]; then echo kmalloc-2k
	else echo kmalloc-4k
	fi
}

# compute_bound MAXLEN: BOUND (bytes) and the terms of its derivation
compute_bound() {
	local cache fp_head fp_data fp_leak=0 backlog wmem rmem total_kb
	cache=$(data_cache "$1")
	fp_head=$(slab_fp skbuff_head_cache)
	fp_data=$(slab_fp "$cache")
	[ -e /sys/kernel/debug/kmemleak ] && fp_leak=$(slab_fp kmemleak_object)
	FP=$((fp_head + fp_data + 2 * fp_leak))
	backlog=$(cat /proc/sys/net/core/netdev_max_backlog)
	wmem=$(cat /proc/sys/net/core/wmem_default)
	rmem=$(cat /proc/sys/net/core/rmem_max)
	total_kb=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
	INBOX_PKTS=$((3 * 4096))
	QUEUE_PKTS=$((NCPU * backlog))
	SOCK_BYTES=$((wmem + 2 * rmem))
	QUARANTINE=0
	if [ "$KASAN" = 1 ]; then
		QUARANTINE=$((total_kb * 1024 / 32 + NCPU * MiB))
	fi
	BOUND=$((INBOX_PKTS * FP + QUEUE_PKTS * FP + SOCK_BYTES + 4 * MiB + QUARANTINE))
	SKB_BOUND=$((INBOX_PKTS + QUEUE_PKTS + SOCK_BYTES / FP + 1024))
	PCP=$(awk '$1 == "high:" { s += $2 } END { print s * 4096 }' /proc/zoneinfo)
	sroce_log "bound: frames up to $1 bytes, data in $cache;" \
		"F = $fp_head (skbuff_head_cache) + $fp_data ($cache) + 2 x $fp_leak (kmemleak_object) = $FP bytes"
	sroce_log "bound: $INBOX_PKTS inbox packets x $FP + $NCPU x $backlog backlog x $FP" \
		"+ sockets $SOCK_BYTES + 4 MiB + quarantine $QUARANTINE = $BOUND bytes" \
		"($((BOUND / 1024)) kB); per-CPU page lists up to $PCP bytes"
}

# slow_start: confine the sroce workqueue to CPU 1 and hog that CPU
slow_start() {
	local rt
	HOG_PID=
	read -r rt </proc/sys/kernel/sched_rt_runtime_us
	read -r WQ_SAVED <"$WQ" || sroce_fail "no $WQ"
	echo 2 >"$WQ" || sroce_fail "cannot confine the sroce workqueue"
	# shellcheck disable=SC2016 # expanded by the inner bash
	taskset -c 1 chrt -f 1 bash -c 'while [ "$SECONDS" -lt "$1" ]; do :; done' \
		hog 1200 {HOLD_FD}>&- &
	HOG_PID=$!
	sroce_log "slow consumer: sroce workqueue cpumask $WQ_SAVED -> 2," \
		"SCHED_FIFO busy loop $HOG_PID on CPU 1 (sched_rt_runtime_us $rt)"
}

slow_stop() {
	[ -n "${HOG_PID:-}" ] || return 0
	kill "$HOG_PID" 2>/dev/null || true
	wait "$HOG_PID" 2>/dev/null || true
	echo "$WQ_SAVED" >"$WQ"
	HOG_PID=
	sroce_log "slow consumer off: busy loop gone, cpumask $WQ_SAVED"
}

# run_flood FRAMES: pktfuzz floods and holds its QPs; the sampler runs;
# the inboxes drain; sets T_START, T_END, and the sample AFTER_*
run_flood() {
	mkfifo "$FIFOS/hold"
	"$SROCE_PROGS/pktfuzz" -d sroce0 -t veth0 -i veth1 -4 10.0.0.1 -P 10.0.0.2 \
		-6 fd00::1 -Q fd00::2 -f "$1" -H <"$FIFOS/hold" >flood-out.txt 2>flood-err.txt &
	FUZZ_PID=$!
	exec {HOLD_FD}>"$FIFOS/hold"
	wait_line "pktfuzz: flood start" 300 || sroce_fail "pktfuzz did not start: $(cat flood-err.txt)"
	[ "$SLOW" = 0 ] || slow_start
	T_START=$(field "$OUT_LINE" t)
	sroce_log "flood started at $T_START"
	wait_line "pktfuzz: flood holding" 1200 || sroce_fail "pktfuzz did not finish: $(cat flood-err.txt)"
	out_line "pktfuzz: flood end"
	T_END=$(field "$OUT_LINE" t)
	[ "$SLOW" = 0 ] || slow_stop
	taskset -pc "0-$((NCPU - 1))" $$ >/dev/null
	wait_drained 120 || sroce_log "the counters were still moving after 120 s"
	T_DRAINED=$EPOCHREALTIME
	shrink_skb_caches
	nap 1
	: >sampler.stop
	wait "$SAMPLER_PID"
	mem_sample
	AFTER=("$S_avail" "$S_slab" "$S_sunr" "$S_skb" "$S_k512" "$S_k1k" "$S_k2k")
	snapshot after.txt
	exec {HOLD_FD}>&-
	set +e
	wait "$FUZZ_PID"
	FUZZ_RC=$?
	set -e
	cat flood-out.txt flood-err.txt
}

# measure: BASE, PEAK (SUnreclaim, skbs: most; MemAvailable: least)
measure() {
	read -r -a BASE < <(awk -v t0="$T_START" '$1 < t0 { l = $0 } END { print l }' samples.txt)
	read -r -a PEAK < <(awk -v t0="$T_START" '$1 >= t0 {
		if (!n++ || $2 < a) a = $2
		for (i = 3; i <= 8; i++) if ($i > m[i]) m[i] = $i
	} END { print n, a, m[3], m[4], m[5], m[6], m[7], m[8] }' samples.txt)
	BASE=("${BASE[@]:1}")
	sroce_log "flood $(awk -v a="$T_START" -v b="$T_END" 'BEGIN { printf "%.1f", b - a }') s;" \
		"inboxes drained $(awk -v a="$T_END" -v b="$T_DRAINED" 'BEGIN { printf "%.1f", b - a }') s later;" \
		"${PEAK[0]} samples during flood and drain"
	PEAK=("${PEAK[@]:1}")
	sroce_log "kB/objects:    MemAvailable Slab SUnreclaim skbuff_head kmalloc-512 kmalloc-1k kmalloc-2k"
	sroce_log "  baseline     ${BASE[*]}"
	sroce_log "  peak         ${PEAK[*]}"
	sroce_log "  after        ${AFTER[*]}"
	SUNR_GROWTH=$(( (PEAK[2] - BASE[2]) * 1024 ))
	USED_GROWTH=$(( (BASE[0] - PEAK[0]) * 1024 ))
	SKB_GROWTH=$((PEAK[3] - BASE[3]))
	AFTER_SUNR=$(( (AFTER[2] - BASE[2]) * 1024 ))
	AFTER_SKB=$((AFTER[3] - BASE[3]))
	sroce_log "measured: SUnreclaim +$((SUNR_GROWTH / 1024)) kB at the peak," \
		"$((AFTER_SUNR / 1024)) kB after; MemTotal-MemAvailable +$((USED_GROWTH / 1024)) kB;" \
		"sk_buffs +$SKB_GROWTH at the peak, $AFTER_SKB after;" \
		"bound $((BOUND / 1024)) kB, $SKB_BOUND sk_buffs"
}

# check_memory: the TAP lines on the memory measured
check_memory() {
	if [ "$SUNR_GROWTH" -le "$BOUND" ]; then
		tap 0 "peak SUnreclaim growth $((SUNR_GROWTH / 1024)) kB within the bound $((BOUND / 1024)) kB"
	else
		tap 1 "peak SUnreclaim growth within the bound" "+$((SUNR_GROWTH / 1024)) kB > $((BOUND / 1024)) kB"
	fi
	if [ "$USED_GROWTH" -le $((BOUND + PCP)) ]; then
		tap 0 "peak MemTotal-MemAvailable growth $((USED_GROWTH / 1024)) kB within the bound + per-CPU page lists $(((BOUND + PCP) / 1024)) kB"
	else
		tap 1 "peak MemTotal-MemAvailable growth within the bound + per-CPU page lists" \
			"+$((USED_GROWTH / 1024)) kB > $(((BOUND + PCP) / 1024)) kB"
	fi
	if [ "$KASAN" = 1 ]; then
		tap skip "peak live sk_buffs within the inboxes + queues" "KASAN's quarantine keeps freed sk_buffs allocated"
	elif [ "$SKB_GROWTH" -le "$SKB_BOUND" ]; then
		tap 0 "peak live sk_buffs +$SKB_GROWTH within the inboxes + queues ($SKB_BOUND)"
	else
		tap 1 "peak live sk_buffs within the inboxes + queues" "+$SKB_GROWTH > $SKB_BOUND"
	fi
	if [ "$AFTER_SUNR" -le $((4 * MiB)) ] && [ "$AFTER_SKB" -le 1024 ]; then
		tap 0 "after the flood: SUnreclaim $((AFTER_SUNR / 1024)) kB, sk_buffs $AFTER_SKB from the baseline"
	else
		tap 1 "memory back to the baseline after the flood" \
			"SUnreclaim $((AFTER_SUNR / 1024)) kB (at most 4096), sk_buffs $AFTER_SKB (at most 1024) from the baseline"
	fi
}

# check_counters: the device's counters account for every frame
check_counters() {
	local rcvd backlog handled other ipd vethd qp1 rc why=
	deltas
	rcvd=${D[sroce.rcvd_pkts]:-0}
	backlog=${D[sroce.dropped_backlog]:-0}
	handled=$(sum sroce.dropped_backlog sroce.dropped_ud_msg sroce.duplicate_request \
		sroce.out_of_seq_request sroce.ack_deferred)
	other=$(sum sroce.malformed_pkts sroce.icrc_err sroce.pkey_violations \
		sroce.qkey_violations sroce.dropped_no_qp sroce.dropped_qp_state \
		sroce.dropped_addr sroce.dropped_nomem sroce.cnp_rcvd sroce.dropped_uc_msg)
	ipd=$(sum Ip.InHdrErrors Ip.InAddrErrors Ip.InDiscards IpExt.InTruncatedPkts \
		Udp.InErrors Udp.NoPorts)
	vethd=$(sum veth1.tx_dropped)
	qp1=$((rcvd - handled))
	rc=$(( $(field "$TARGETS" rc_next) + $(field "$TARGETS" rc_dup) ))
	sroce_log "counters: rcvd_pkts $rcvd of $SENT sent (IP/UDP drops $ipd," \
		"veth $vethd, of them $(field "$SENT_LINE" nobufs) refused to pktfuzz);" \
		"dropped_backlog $backlog, dropped_ud_msg ${D[sroce.dropped_ud_msg]:-0}," \
		"duplicate_request ${D[sroce.duplicate_request]:-0}, out_of_seq_request" \
		"${D[sroce.out_of_seq_request]:-0}, ack_deferred ${D[sroce.ack_deferred]:-0};" \
		"to the MAD layer $qp1; other drops $other"
	if [ "$backlog" -gt 0 ]; then
		tap 0 "the inboxes filled: dropped_backlog +$backlog"
	else
		tap 1 "the inboxes filled" "dropped_backlog did not move"
	fi
	[ "$rcvd" = $((SENT - ipd - vethd)) ] ||
		why="rcvd_pkts $rcvd != $SENT sent - $ipd - $vethd"
	[ "$other" = 0 ] || why="${why:+$why; }$other in other drop counters"
	[ "$qp1" -ge 0 ] && [ "$qp1" -le "$(field "$TARGETS" gsi)" ] ||
		why="${why:+$why; }rcvd_pkts - counted = $qp1, not in 0..$(field "$TARGETS" gsi) (QP1's)"
	[ "$(sum sroce.duplicate_request sroce.out_of_seq_request sroce.ack_deferred)" -le "$rc" ] ||
		why="${why:+$why; }more RC requests counted than the $rc sent"
	if [ -z "$why" ]; then
		tap 0 "the counters account for every frame"
	else
		tap 1 "the counters account for every frame" "$why"
	fi
}

# on the way out, whatever happened: no busy loop, no sampler left
cleanup() {
	slow_stop
	: >sampler.stop
}
trap cleanup EXIT

sroce_modprobe ib_core ib_uverbs
# Every flood frame is a lone request packet, which the receive softirq
# executes itself when the responder is idle (rx_inline): the responders
# would keep up on the flooding CPU and the inboxes never fill. Their
# bound is what this scenario loads, so their consumer must be the
# confined worker.
sroce_load_ko rx_inline=0
sroce_rdma_pair sroce sroce0 sroce1

NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || sroce_fail "needs 2 CPUs, has $NCPU"
KASAN=0
if [ "$SROCE_KERNEL" = debug ] || grep -q KernelAddressSanitizer < <(dmesg); then
	KASAN=1
fi
frames=300000
[ "$SROCE_KERNEL" = debug ] && frames=100000
sroce_small && frames=$((frames / 10))
frames=$(cmdline_var frames "$frames")
SLOW=$(cmdline_var slow 1)
# FIFOs on tmpfs: 9p (the results directory) has none
FIFOS=$(mktemp -d /tmp/flood.XXXXXX)
mkfifo "$FIFOS/nap"
exec {NAP_FD}<>"$FIFOS/nap"

# the frames are 314-330 bytes (flood.c: 256 bytes of payload)
compute_bound 330
shrink_skb_caches
snapshot before.txt
taskset -pc 0 $$ >/dev/null
sampler samples.txt sampler.stop &
SAMPLER_PID=$!
sroce_log "flood: $frames frames, slow consumer $SLOW, KASAN $KASAN, $NCPU CPUs"
run_flood "$frames"
out_line "pktfuzz: flood sent=" || true
SENT_LINE=$OUT_LINE
SENT=$(field "$SENT_LINE" sent)
out_line "pktfuzz: flood targets" || true
TARGETS=$OUT_LINE
if [ "$FUZZ_RC" = 0 ] && [ "$SENT" -ge "$frames" ]; then
	tap 0 "pktfuzz flooded $frames frames ($TARGETS)"
else
	tap 1 "pktfuzz flooded $frames frames" "exit $FUZZ_RC, sent $SENT"
fi
out_line "pktfuzz: flood lengths" && sroce_log "$OUT_LINE"
measure
check_counters
check_memory

finish after-flood "the flood"
sroce_log "flood: all passed"
