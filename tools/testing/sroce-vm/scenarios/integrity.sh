#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Data-integrity scenario: sroce_integrity (tools/testing/sroce-integrity)
# moves large volumes over one RC QP pair from sroce0 to sroce1 and checks
# every byte on the receiving side (SEND, WRITE), on the requester (READ),
# and an exact FETCH_ADD/CMP_SWAP sequence (atomics):
#
#   1. every opcode at path MTU 4096 (64 KiB messages) and at path MTU 1024
#      (mixed sizes 1 B..256 KiB) on a clean veth;
#   2. every opcode with netem loss + reorder + duplicate on both veth ends:
#      retransmission must recover every byte, and the requester's retry
#      counters must have moved (else the run proved nothing);
#   3. one SEND run with netem corrupt: the ICRC check must drop and count
#      the corrupted frames (icrc_err rises) and the data still verify.
#
# and the same tool over one UC QP pair (-u: SEND_WITH_IMM and
# WRITE_WITH_IMM only, each message named by its immediate):
#
#   4. uc-send-4096, uc-write-4096 (64 KiB messages) and uc-send-1024-mixed
#      on the clean veth, with a loss budget of 0: every message must arrive
#      and verify;
#   5. uc-send-4096-netem, uc-write-4096-netem in the netem block of 2.: a
#      lost packet drops the rest of its message with no retry, so messages
#      are lost (within the -L budget, and at least one, else the drop path
#      never ran), and every message delivered must still be exact.
#
# and over one UD QP pair (-d: every message one SEND_WITH_IMM datagram of
# at most the MTU, named by its immediate, through an address handle; B
# checks the 40-byte GRH, src_qp and byte_len of each, and every byte):
#
#   6. ud-send-4096 (4 KiB datagrams, IPv4 GIDs: the GRH holds an IPv4
#      header) and ud-send-1024-mixed (1 B..1 KiB, IPv6 GIDs: an IPv6
#      header; the veth MTU is 1500 for it, so the port MTU is 1024) on the
#      clean veth: loss budget 0, no duplicate and none out of order;
#   7. ud-send-4096-netem in the netem block of 2.: datagrams are lost (at
#      least one, within sroce_integrity.ud_loss %), duplicated and
#      reordered (counted), every one delivered exact;
#   8. ud-send-4096-corrupt in the corrupt block of 3.: the ICRC check drops
#      corrupted datagrams, so corruption shows as loss (icrc_err and lost
#      rise) and never as a wrong byte.
#
#   veth0 (10.0.0.1) <-- veth pair, netdev MTU 9000 --> veth1 (10.0.0.2)
#     sroce0 (requester)                                  sroce1 (responder)
#
# Volumes are variables below; each can be overridden from the host with
#   run.sh --append "sroce_integrity.<name>=<size>" integrity
# (e.g. sroce_integrity.clean=64M), and sroce_integrity.type=rxe runs the
# same on rdma_rxe (a check of the tool itself).  sroce_integrity.only=ERE
# runs only the runs whose tag matches (e.g. only=uc), and
# sroce_integrity.uc_loss=PCT sets the UC netem runs' loss budget,
# sroce_integrity.ud_loss=PCT the UD ones'.  UC clean runs move $SMALL
# each ($UC_MIXED the mixed one), UC netem runs $CORRUPT; UD runs
# $UD_SMALL (clean, 4 KiB), $UD_MIXED (mixed) and $UD_NETEM (netem,
# corrupt); RC and UC mixed runs send up to $MIXED a message
# (sroce_integrity.mixed).  The small volume (sroce_small) runs every run
# with a few MiB each.  The summary lines
# land in $SROCE_RESULTS/integrity-summary.txt.
#
# sroce-vm: build-prog sroce-integrity
# sroce-vm: timeout 1500

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=integrity

# cmdline_var NAME DEFAULT: sroce_integrity.NAME=VALUE (sroce_cmdline_var)
cmdline_var() { sroce_cmdline_var sroce_integrity "$@"; }

# Per-run volumes.  Measured on the stock kernel under TCG: ~90 MB/s at
# MTU 4096 on a clean veth (1 GiB ~12 s per opcode), ~30 MB/s under netem,
# ~20,000 atomics/s; the whole scenario takes about 3 minutes.  The
# issue's 1 GiB per opcode runs clean at MTU 4096; MTU 1024, netem and
# corrupt runs are smaller (sroce_integrity.netem=1G gives the full volume
# under netem too).  The debug kernel (KASAN, lockdep, kmemleak) is 10-20x
# slower: a sixteenth to a quarter of that, about 6 minutes (it looks for
# KASAN, lockdep and kmemleak reports, which volume adds little to).
# MIXED is the largest message of the mixed-size (-x) runs.
MIXED=256K
if sroce_small; then
	# The small volume (the debug sweep): every run, the least data that
	# still reaches what it checks.  Mixed runs top out at 64 KiB (still
	# 64 packets at MTU 1024), so 2 MiB (79 messages) go through every
	# edge size of -x (1, 2, 7..9, MTU +-1, 2 MTU +-1, 3 MTU + 5, 16 MTU,
	# the largest and one less: the 57th message is the last edge); UD
	# mixed (256 KiB, 498 datagrams) needs only 32 KiB for that.
	# Under netem and corruption the counters must move and the losses
	# stay within their budgets. netem impairs skbs, and sroce sends the
	# packets of a message as trains of up to 15 packets of 4 KiB in one
	# skb (sroce_train.c): a 64 KiB message is two skbs. 32 MiB is 1,024
	# of them (about 10 lost to 1% loss or corruption, at least one
	# needed), and 500 atomics 1,000 packets.
	CLEAN=2M SMALL=2M NETEM=32M CORRUPT=32M ATOMICS=500 NETEM_ATOMICS=500
	UD_SMALL=1M UD_MIXED=256K UD_NETEM=4M UC_MIXED=2M MIXED=64K
elif [ "$SROCE_KERNEL" = debug ]; then
	CLEAN=64M SMALL=16M NETEM=64M CORRUPT=32M ATOMICS=5000 NETEM_ATOMICS=5000
	# UD: 2 ms a datagram there; UC mixed halved to make room for them
	UD_SMALL=8M UD_MIXED=2M UD_NETEM=8M UC_MIXED=8M
else
	CLEAN=1G SMALL=128M NETEM=256M CORRUPT=64M ATOMICS=100000 NETEM_ATOMICS=20000
	UD_SMALL=128M UD_MIXED=32M UD_NETEM=64M UC_MIXED=128M
fi
CLEAN=$(cmdline_var clean "$CLEAN")		# each opcode, MTU 4096, clean
SMALL=$(cmdline_var small "$SMALL")		# each opcode, MTU 1024 mixed, clean
NETEM=$(cmdline_var netem "$NETEM")		# each opcode, MTU 4096, netem
CORRUPT=$(cmdline_var corrupt "$CORRUPT")	# SEND, MTU 4096, netem corrupt
ATOMICS=$(cmdline_var atomics "$ATOMICS")
NETEM_ATOMICS=$(cmdline_var netem_atomics "$NETEM_ATOMICS")
TYPE=$(cmdline_var type sroce)
RUN_TIMEOUT=$(cmdline_var run_timeout 600)
# UC netem runs: loss budget, %.  Measured on sroce: 27-29% of 16-packet
# messages are lost to netem's 1% loss and 10% reordering (a reordered
# packet loses its message on UC), on both kernels.
UC_LOSS=$(cmdline_var uc_loss 60)
# UD: one datagram is one packet, so netem's 1% loss costs about 1% of the
# messages (reordering and duplicates are not losses on UD); corrupt 1%
# about 1% too (measured: 170 and 166 of 16384).  The UD runs use 64
# outstanding WRs: with 4 KiB messages the tool's per-message round trip
# bounds the rate (~6 MB/s at -q 16, ~20 MB/s at -q 64 on stock, RC alike).
UD_LOSS=$(cmdline_var ud_loss 5)
UC_MIXED=$(cmdline_var uc_mixed "$UC_MIXED")	# UC SEND, MTU 1024 mixed, clean
UD_SMALL=$(cmdline_var ud_small "$UD_SMALL")	# UD, 4 KiB datagrams, clean
UD_MIXED=$(cmdline_var ud_mixed "$UD_MIXED")	# UD, 1 B..1 KiB, clean
UD_NETEM=$(cmdline_var ud_netem "$UD_NETEM")	# UD, 4 KiB, netem and corrupt
MIXED=$(cmdline_var mixed "$MIXED")		# largest RC/UC -x message
ONLY=$(cmdline_var only "")			# ERE of run tags to run (default all)
IMPAIR=(delay 1ms reorder 10% 50% loss 1% duplicate 1%)

note=""
if sroce_small; then
	note=" (small volume: mixed sizes up to $MIXED)"
elif [ "$SROCE_KERNEL" = debug ]; then
	note=" (debug kernel: reduced volumes)"
fi
sroce_log "kernel $SROCE_KERNEL, device type $TYPE: clean $CLEAN, MTU-1024 mixed $SMALL," \
	"netem $NETEM, corrupt $CORRUPT, atomics $ATOMICS (netem $NETEM_ATOMICS)," \
	"UC mixed $UC_MIXED, UD clean $UD_SMALL, mixed $UD_MIXED, netem $UD_NETEM" \
	"per run$note"

PROG=${SROCE_PROGS:?}/sroce_integrity
[ -x "$PROG" ] || sroce_fail "$PROG was not built"
"$PROG" -T || sroce_fail "the pattern checker's self-test failed"

failed=()
SUMMARY=()
LAST=""

# field NAME: a key=value field of the last summary line.
field() {
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$LAST"
}

# integ TAG ARGS...: one sroce_integrity run from sroce0 to sroce1; records
# its summary line, and a failure if it exits non-zero.
integ() {
	local tag=$1 rc
	shift
	LAST=""
	if [ -n "$ONLY" ] && ! grep -Eq -- "$ONLY" <<<"$tag"; then
		return 0
	fi
	sroce_log "run $tag: sroce_integrity $*"
	set +e
	timeout -k 5 "$RUN_TIMEOUT" "$PROG" -a "${TYPE}0" -b "${TYPE}1" \
		-g "$G0" -G "$G1" "$@" >"integ-$tag.txt" 2>&1
	rc=$?
	set -e
	cat "integ-$tag.txt"
	LAST=$(grep '^sroce_integrity: op=' "integ-$tag.txt" | tail -n 1 || true)
	SUMMARY+=("$(printf '%-22s %s' "$tag" "${LAST#sroce_integrity: }")")
	if [ "$rc" != 0 ]; then
		failed+=("$tag (exit $rc)")
		return 1
	fi
}

# expect_none FIELD: the field FIELD of the last (passed) run is zero.
expect_none() {
	[ -n "$LAST" ] || return 0
	[ "$(field "$1")" = 0 ] ||
		failed+=("$(field op) $(field qp): $1 is not 0 on a clean veth (${LAST#sroce_integrity: })")
}

# expect_moved FIELD: the counter delta FIELD of the last (passed) run is
# above zero; a run that was skipped (sroce_integrity.only) is not checked.
expect_moved() {
	[ -n "$LAST" ] || return 0
	[ "$(field "$1")" -gt 0 ] 2>/dev/null ||
		failed+=("$(field op): $1 did not move under netem (${LAST#sroce_integrity: })")
}

# The local ACK timeout exponent of the impaired RC runs.  12 (16.7 ms)
# makes the lost tail of a message cost little.  On the debug kernel a
# 16-deep pipeline of 64 KiB messages takes longer than 67 ms (14) to be
# answered at all when another guest shares the host, so every try
# expires before its answer and the run ends in IBV_WC_RETRY_EXC_ERR:
# 268 ms (16) there.
LOSS_TIMEOUT=12
[ "$SROCE_KERNEL" = debug ] && LOSS_TIMEOUT=16

# impair ARGS...: the same netem qdisc on both ends of the veth.
impair() {
	local d
	for d in veth0 veth1; do
		/usr/sbin/tc qdisc replace dev "$d" root netem "$@" ||
			sroce_fail "tc qdisc replace dev $d root netem $*"
	done
}

# veth_mtu MTU: the netdev MTU of both veth ends (sroce's port MTU follows).
veth_mtu() {
	local d
	for d in veth0 veth1; do
		/usr/sbin/ip link set dev "$d" mtu "$1" ||
			sroce_fail "ip link set dev $d mtu $1"
	done
	sroce_wait_link_up veth0
	sroce_wait_link_up veth1
}

unimpair() {
	local d
	for d in veth0 veth1; do
		/usr/sbin/tc -s qdisc show dev "$d"
		/usr/sbin/tc qdisc del dev "$d" root || sroce_fail "tc qdisc del dev $d root"
	done
}

sroce_modprobe ib_core ib_uverbs sch_netem
if [ "$TYPE" = rxe ]; then
	sroce_load_rxe
else
	# shellcheck disable=SC2119 # no module parameters
	sroce_load_ko
fi
sroce_rdma_pair "$TYPE" "${TYPE}0" "${TYPE}1" 9000
G0=$(sroce_gid_index "${TYPE}0" 10.0.0.1)
G1=$(sroce_gid_index "${TYPE}1" 10.0.0.2)
G0_6=$(sroce_gid_index "${TYPE}0" fd00::1)
G1_6=$(sroce_gid_index "${TYPE}1" fd00::2)

t0=$SECONDS
for op in send write read; do
	integ "$op-4096" -o "$op" -m 4096 -n "$CLEAN" -s 64K -e 4 || true
done
integ atomic-4096 -o atomic -m 4096 -c "$ATOMICS" || true
for op in send write read; do
	integ "$op-1024-mixed" -o "$op" -m 1024 -n "$SMALL" -x -s "$MIXED" -e 7 || true
done
integ atomic-1024 -o atomic -m 1024 -c "$ATOMICS" -q 32 || true
for op in send write; do
	integ "uc-$op-4096" -u -o "$op" -m 4096 -n "$SMALL" -s 64K -e 4 -L 0 || true
done
integ uc-send-1024-mixed -u -o send -m 1024 -n "$UC_MIXED" -x -s "$MIXED" -e 7 -L 0 || true
integ ud-send-4096 -d -q 64 -S 16 -o send -m 4096 -n "$UD_SMALL" -s 4096 -e 4 -L 0 &&
	expect_none late && expect_none dups
veth_mtu 1500
integ ud-send-1024-mixed -d -q 64 -S 16 -o send -m 1024 -n "$UD_MIXED" -x -e 7 -L 0 \
	-g "$G0_6" -G "$G1_6" && expect_none late && expect_none dups
veth_mtu 9000
sroce_log "clean runs took $((SECONDS - t0)) s"

t0=$SECONDS
impair "${IMPAIR[@]}"
for op in send write read; do
	integ "$op-4096-netem" -o "$op" -m 4096 -n "$NETEM" -s 64K -e 4 \
		-t "$LOSS_TIMEOUT" -w 60 && expect_moved retries
done
integ atomic-4096-netem -o atomic -m 4096 -c "$NETEM_ATOMICS" -t "$LOSS_TIMEOUT" -w 60 &&
	expect_moved retries
for op in send write; do
	integ "uc-$op-4096-netem" -u -o "$op" -m 4096 -n "$CORRUPT" -s 64K -e 4 \
		-L "$UC_LOSS" -w 60 && expect_moved lost
done
integ ud-send-4096-netem -d -q 64 -S 16 -o send -m 4096 -n "$UD_NETEM" -s 4096 -e 4 \
	-L "$UD_LOSS" -w 60 && expect_moved lost
unimpair
sroce_log "netem runs took $((SECONDS - t0)) s"

t0=$SECONDS
impair corrupt 1%
integ send-4096-corrupt -o send -m 4096 -n "$CORRUPT" -s 64K -e 4 -t "$LOSS_TIMEOUT" -w 60 &&
	expect_moved icrc_err
integ ud-send-4096-corrupt -d -q 64 -S 16 -o send -m 4096 -n "$UD_NETEM" -s 4096 -e 4 \
	-L "$UD_LOSS" -w 60 && expect_moved icrc_err && expect_moved lost
unimpair
sroce_log "corrupt run took $((SECONDS - t0)) s"

printf '%s\n' "${SUMMARY[@]}" | tee integrity-summary.txt
rdma statistic show link "${TYPE}0/1" || true
rdma statistic show link "${TYPE}1/1" || true

rdma link del "${TYPE}1" || failed+=("rdma link del ${TYPE}1")
rdma link del "${TYPE}0" || failed+=("rdma link del ${TYPE}0")
if [ "$TYPE" = rxe ]; then
	rmmod rdma_rxe || failed+=("rmmod rdma_rxe")
else
	rmmod sroce || failed+=("rmmod sroce")
fi

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "integrity: all passed"
