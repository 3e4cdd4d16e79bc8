#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Packet fuzzer: pktfuzz (tools/testing/sroce-fuzz) sends crafted RoCEv2
# frames with AF_PACKET from veth1 into sroce0 on veth0, while sroce0 has
# live RC, UC and UD QPs (one UD QP attached to a multicast group) whose
# peer pktfuzz plays with veth1's addresses:
#
#   veth0 10.0.0.1 fd00::1  <-- veth -->  veth1 10.0.0.2 fd00::2
#     sroce0 (under test)                   pktfuzz (AF_PACKET), sroce1
#
# Every opcode (undefined ones too), header sets that do not match the
# opcode, truncation at every offset, lying IP and UDP lengths, pad
# counts, RETH lengths and addresses at the MR's limits, misaligned and
# out-of-range atomics, forged ACKs/NAKs/READ responses around the
# requester's PSN, CNPs, multicast and duplicate floods, mostly with a
# valid ICRC.  Then:
#
#   1. pktfuzz sent the frames it was asked to;
#   2. every frame is accounted for: the frames that reached sroce's UDP
#      socket are each in exactly one of sroce0's counters rcvd_pkts
#      (passed validation), malformed_pkts, icrc_err, cnp_rcvd,
#      pkey_violations, dropped_nomem; the rest in the IPv4/IPv6/UDP
#      drop counters of /proc/net/snmp{,6} and netstat, or the veth's
#      drops; the sum must equal the frames sent;
#   3. sroce0 still carries validated traffic: ibv_rc_pingpong and
#      ibv_ud_pingpong with data checks to sroce1 (added on veth1);
#   4. the links are removed and sroce unloads.
#
# Full volume 1,000,000 frames, small (sroce_small) 20,000.  The seed is
# printed; run.sh --append "pktfuzz.seed=0x..." repeats a run, and
# "pktfuzz.frames=N" sets the count.  TAP lines land in pktfuzz.txt.
#
# sroce-vm: build-prog sroce-fuzz
# sroce-vm: timeout 5400

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=pktfuzz
TAP=pktfuzz.txt
: >"$TAP"
# shellcheck source=tools/testing/sroce-vm/counters-lib.sh
source "$(dirname "$SROCE_VM_LIB")/counters-lib.sh"

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_rdma_pair sroce sroce0 sroce1

frames=1000000
sroce_small && frames=20000
frames=$(cmdline_var frames "$frames")
seed=$(cmdline_var seed "$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')")

snapshot before.txt
sroce_log "pktfuzz: $frames frames, seed $seed"
start=$SECONDS
set +e
"$SROCE_PROGS/pktfuzz" -d sroce0 -t veth0 -i veth1 -4 10.0.0.1 -P 10.0.0.2 \
	-6 fd00::1 -Q fd00::2 -n "$frames" -s "$seed" >fuzz-out.txt 2>fuzz-err.txt
rc=$?
set -e
secs=$((SECONDS - start))
cat fuzz-out.txt fuzz-err.txt
sleep 1
snapshot after.txt
deltas

sent=$(sed -n 's/^pktfuzz: sent=\([0-9]*\) .*/\1/p' fuzz-out.txt)
to_dev=$(sed -n 's/^pktfuzz: .* to_device=\([0-9]*\) .*/\1/p' fuzz-out.txt)
if [ "$rc" = 0 ] && [ "${sent:-0}" -ge "$frames" ]; then
	sroce_log "pktfuzz sent $sent frames in ${secs}s (seed $seed)"
	tap 0 "pktfuzz sent $frames frames"
else
	tap 1 "pktfuzz sent $frames frames" "exit $rc, sent ${sent:-none} of $frames"
fi
sent=${sent:-0}

# what reached sroce's socket: each frame in exactly one of these
seen=$(sum sroce.rcvd_pkts sroce.malformed_pkts sroce.icrc_err \
	sroce.cnp_rcvd sroce.pkey_violations sroce.dropped_nomem)
ip_drop=$(sum Ip.InHdrErrors Ip.InAddrErrors Ip.InUnknownProtos Ip.InDiscards \
	IpExt.InTruncatedPkts Udp.InErrors Udp.NoPorts Udp.IgnoredMulti \
	snmp6.Ip6InHdrErrors snmp6.Ip6InAddrErrors snmp6.Ip6InTruncatedPkts \
	snmp6.Ip6InDiscards snmp6.Udp6InErrors snmp6.Udp6NoPorts)
veth_drop=$(sum veth1.tx_dropped)
qp_drop=$(sum sroce.dropped_no_qp sroce.dropped_qp_state sroce.qkey_violations \
	sroce.dropped_addr)
sroce_log "accounting: sent $sent = sroce $seen (pktfuzz expected $to_dev)" \
	"+ ip/udp $ip_drop + veth $veth_drop;" \
	"of sroce's rcvd_pkts ${D[sroce.rcvd_pkts]:-0}, $qp_drop dropped at the QP"
for n in "${!D[@]}"; do
	[ "${D[$n]}" = 0 ] || [[ $n == *bytes || $n == *Octets ]] ||
		echo "  $n ${D[$n]}"
done | sort
accounted=$((seen + ip_drop + veth_drop))
if [ "$sent" -gt 0 ] && [ "$accounted" = "$sent" ]; then
	tap 0 "every frame accounted for (sroce's counters, IP/UDP drops)"
else
	tap 1 "every frame accounted for (sroce's counters, IP/UDP drops)" "sroce $seen + ip/udp $ip_drop + veth $veth_drop = $accounted of $sent sent"
fi

finish after-fuzz "the fuzz"
sroce_log "pktfuzz: all passed"
