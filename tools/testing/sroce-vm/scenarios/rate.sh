#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Per-QP send rate limits (transport/sroce_rate.c): the achieved rate is
# within 5% of the limit, from 10 Mbit/s up to what the path carries.
# Every QP pair has both ends on sroce1 (10.0.0.2 on veth1): the same-host
# route, which carries several Gbit/s on the stock kernel under TCG, where
# sroce0 to sroce1 over the veth pair carries about one.
#
#   sroce_vm_krate.ko (kverbs-module/krate_main.c), as a kernel ULP sets
#     IB_QP_RATE_LIMIT: the capacity with no limit first, then one QP at
#     10, 100 and 1000 Mbit/s, then eight QPs at once at 10, 20, 50, 100,
#     150, 200, 300 and 400 Mbit/s;
#   sroce_rate (tools/testing/sroce-rate), through stock rdma-core: a QP
#     whose address vector has static_rate 2.5 Gbit/s (ibv_modify_qp to
#     RTR), which ibv_query_qp reports back, against the capacity of one
#     without; and, as notes, what ibv_modify_qp_rate_limit() and
#     ibv_modify_qp(IBV_QP_RATE_LIMIT) return with stock librxe.
#
# 64 KiB RDMA WRITEs are kept in flight; each is checked byte for byte
# where it landed. A rate is counted as the gate charges it (each packet's
# BTH, RETH, payload and ICRC), over whole messages, from the end of a
# 250 ms warm-up (the bucket starts with 2 ms of credit) for 2 s. A
# limit above 80% of the capacity just measured is skipped with the
# numbers (the debug kernel, KASAN under TCG, carries a tenth of what
# the stock one does, and skips more).
#
# A throttled requester that runs later than its gate forgives (19 ms:
# the 20 ms a waiting QP's bucket gathers, less the timer's slice) loses
# the rest: under TCG, whenever the host takes the vCPU away or the
# guest's own work keeps it. A probe that wakes the same way every
# millisecond says in each line how often and by how much it ran later
# than that. A rate that misses its limit is
# measured once more; one still short by no more than the probe's lost
# time plus the 5% is skipped with both numbers (it measured the guest);
# a rate above its limit, or short by more, fails.
#
# One TAP line per check in rate.txt ("ok N - name: rate", "not ok N -
# name: why", "ok N - name # SKIP why"); notes and first tries that
# missed are "#" lines. The same volume on both kernels: the windows
# cannot be shorter and still measure 5%.
#
# sroce-vm: build-module kverbs-module
# sroce-vm: build-prog sroce-rate
# sroce-vm: timeout 300

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=rate
REPORT=$SROCE_RESULTS/rate.txt
KRATE=${SROCE_MODULES:?}/sroce_vm_krate.ko
PROG=${SROCE_PROGS:?}/sroce_rate

[ -f "$KRATE" ] || sroce_fail "the test module was not built"
[ -x "$PROG" ] || sroce_fail "sroce_rate was not built"
: >"$REPORT"

# tap_lines PREFIX FILE: the result lines "PREFIX: VERDICT NAME: TEXT" of
# FILE as TAP lines in $REPORT (notes and retries as comments).
tap_lines() {
	local verdict name text line
	while IFS= read -r line; do
		line=${line#"$1: "}
		verdict=${line%% *}
		line=${line#* }
		name=${line%%: *}
		text=${line#*: }
		case $verdict in
		ok) sroce_tap 0 "$name: $text" ;;
		FAIL) sroce_tap 1 "$name" "$text" ;;
		skip)
			SROCE_TAP_NUM=$((SROCE_TAP_NUM + 1))
			echo "ok $SROCE_TAP_NUM - $name # SKIP $text" | tee -a "$REPORT"
			;;
		note | retry) echo "# $verdict $name: $text" | tee -a "$REPORT" ;;
		esac
	done < <(grep -E "^$1: (ok|FAIL|skip|note|retry) " "$2" || true)
}

sroce_modprobe ib_core
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1 9000
G1=$(sroce_gid_index sroce1 10.0.0.2)

# run.sh --append "rate.limits=10,50 rate.multi=10,20" and so on: the
# module's parameters of those names, for a run by hand.
kargs=(dev0=sroce1 dev1=sroce1)
for k in limits multi window_ms headroom tolerance retries; do
	v=$(sroce_cmdline_var rate "$k" "")
	[ -z "$v" ] || kargs+=("$k=$v")
done

failed=()
sroce_log "insmod $KRATE ${kargs[*]} (both ends on sroce1)"
mark="sroce-krate-scenario-$$-$RANDOM"
echo "$mark" >/dev/kmsg
/usr/sbin/insmod "$KRATE" "${kargs[@]}" || failed+=("insmod sroce_vm_krate")
# The checks run inside insmod; their lines follow the mark.
dmesg | sed -n "/$mark/,\$p" | grep -o 'sroce-krate: .*' >krate.txt || true
tap_lines sroce-krate krate.txt
summary=$(grep -E '^sroce-krate: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' krate.txt || true)
[ -n "$summary" ] || failed+=("sroce_vm_krate printed no summary")
/usr/sbin/rmmod sroce_vm_krate || failed+=("rmmod sroce_vm_krate")

sroce_log "sroce_rate sroce1 $G1 (both ends on sroce1)"
rc=0
timeout 120 "$PROG" sroce1 "$G1" >user.txt 2>&1 || rc=$?
tap_lines sroce-rate user.txt
[ "$rc" = 0 ] || failed+=("sroce_rate exit $rc: $(grep -v '^sroce-rate: ' user.txt | tail -n 1)")

sroce_pair_remove
/usr/sbin/ip link del veth0 || true

[ "$SROCE_TAP_NUM" -gt 0 ] || failed+=("no result lines")
[ "$SROCE_TAP_FAILED" = 0 ] || failed+=("$SROCE_TAP_FAILED checks")
[ ${#failed[@]} -eq 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "all passed: $SROCE_TAP_NUM lines (${summary#sroce-krate: } in the kernel)"
