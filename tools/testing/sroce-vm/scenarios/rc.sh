#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# RC scenario: ibv_rc_pingpong between two sroce devices on a veth pair,
# with data validation, at sizes 1 B..1 MiB, path MTU 1024 and 4096, over
# IPv4 and IPv6 GIDs.  The small volume (sroce_small) runs a twentieth of
# the iterations (sroce_iters) and no 64 KiB run over IPv4 (see below).
#
#   veth0 (10.0.0.1) <-- veth pair --> veth1 (10.0.0.2)
#     sroce0 (client)                    sroce1 (server)
#
# sroce-vm: timeout 600

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=rc

# pingpong SIZE ITERS MTU FAMILY: one validated run, 120 s at most (fewer
# iterations on the debug kernel and at the small volume: sroce_iters).
pingpong() {
	sroce_rc_pingpong "$1-$3-v$4" 120 "$1" "$(sroce_iters "$2")" "$3" "$4"
}

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
# netdev MTU 9000, so that path MTU 4096 is really 4096 (the port's
# active MTU caps the path MTU).
sroce_rdma_pair sroce sroce0 sroce1 9000

# The small volume leaves out 64 KiB over IPv4: its multi-packet messages
# cross the veth like those of the 1 MiB run at the same MTU, and the
# IPv6 64 KiB run keeps the size.
sizes="1 4096 65536"
sroce_small && sizes="1 4096"
failed=()
for mtu in 1024 4096; do
	for size in $sizes; do
		pingpong "$size" 100 "$mtu" 4 || failed+=("size $size mtu $mtu IPv4")
	done
	pingpong 1048576 10 "$mtu" 4 || failed+=("size 1048576 mtu $mtu IPv4")
	pingpong 65536 50 "$mtu" 6 || failed+=("size 65536 mtu $mtu IPv6")
done
pingpong 1 100 1024 6 || failed+=("size 1 mtu 1024 IPv6")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true

sroce_pair_remove

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "rc: all passed"
