#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# RC scenario: ibv_rc_pingpong between two sroce devices on a veth pair,
# with data validation, at several message sizes.
#
#   veth0 (10.0.0.1) <-- veth pair --> veth1 (10.0.0.2)
#     sroce0 (client)                    sroce1 (server)
#
# sroce-vm: timeout 300

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=rc

# pingpong SIZE ITERS [MTU]: one server/client run; both must exit 0.
pingpong() {
	local size=$1 iters=$2 mtu=${3:-1024} port=$((18515 + RANDOM % 1000))
	local srv cli spid

	sroce_log "rc_pingpong size $size iters $iters mtu $mtu"
	timeout 60 ibv_rc_pingpong -d sroce1 -g 1 -c -m "$mtu" -p "$port" \
		-s "$size" -n "$iters" >"rc-srv-$size.txt" 2>&1 &
	spid=$!
	sleep 1
	set +e
	timeout 60 ibv_rc_pingpong -d sroce0 -g 1 -c -m "$mtu" -p "$port" \
		-s "$size" -n "$iters" 10.0.0.2 >"rc-cli-$size.txt" 2>&1
	cli=$?
	wait "$spid"
	srv=$?
	set -e
	cat "rc-srv-$size.txt" "rc-cli-$size.txt"
	sroce_log "rc_pingpong size $size: server exit $srv, client exit $cli"
	[ "$srv" = 0 ] && [ "$cli" = 0 ]
}

sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
sroce_veth veth0 veth1
sroce_wait_link_up veth0
sroce_wait_link_up veth1
rdma link add sroce0 type sroce netdev veth0 || sroce_fail "rdma link add sroce0"
rdma link add sroce1 type sroce netdev veth1 || sroce_fail "rdma link add sroce1"
sroce_wait_rdma_ready sroce0
sroce_wait_rdma_ready sroce1

# Both addresses are local to this host, but a route with the GID's
# netdev as oif goes out on the veth: give each side a permanent neighbour
# (ib_core's ARP would be dropped as coming from a local address) and
# accept packets whose source is local.
mac() { cat "/sys/class/net/$1/address"; }
/usr/sbin/ip neigh replace 10.0.0.1 lladdr "$(mac veth0)" dev veth1 nud permanent
/usr/sbin/ip neigh replace 10.0.0.2 lladdr "$(mac veth1)" dev veth0 nud permanent
for c in all veth0 veth1; do
	sysctl -qw "net.ipv4.conf.$c.accept_local=1" "net.ipv4.conf.$c.rp_filter=0"
done

failed=()
for size in 1 4096 65536; do
	pingpong "$size" 100 || failed+=("size $size")
done
pingpong 65536 50 4096 || failed+=("size 65536 mtu 4096")

rdma statistic show link sroce0/1 || true
rdma statistic show link sroce1/1 || true

rdma link del sroce1 || failed+=("rdma link del sroce1")
rdma link del sroce0 || failed+=("rdma link del sroce0")
rmmod sroce || failed+=("rmmod sroce")

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "rc: all passed"
