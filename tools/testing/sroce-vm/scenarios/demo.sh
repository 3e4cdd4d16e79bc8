#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Demo: load sroce.ko, create sroce0 on a veth and show it with stock
# rdma-core.  Everything printed is also kept in $SROCE_RESULTS/demo.txt,
# which scripts/demo.sh shows.
# sroce-vm: timeout 300

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

exec > >(tee "$SROCE_RESULTS/demo.txt") 2>&1

# show CMD...: print the command, then run it.
show() {
	echo "# $*"
	"$@"
}

# wait_gid DEV INDEX: GIDs appear asynchronously, once ib_core has seen
# the netdev's addresses.
wait_gid() {
	local _

	for _ in $(seq 1 100); do
		[ -s "/sys/class/infiniband/$1/ports/1/gids/$2" ] &&
			! grep -q '^0000:0000:0000:0000:0000:0000:0000:0000$' \
				"/sys/class/infiniband/$1/ports/1/gids/$2" && return 0
		sleep 0.1
	done
	sroce_fail "$1 has no GID at index $2"
}

sroce_veth veth0 veth1
sroce_modprobe ib_core ib_uverbs
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
show rdma link add sroce0 type sroce netdev veth0
show rdma link add sroce1 type sroce netdev veth1
wait_gid sroce0 1
show rdma link show
show ibv_devices
show ibv_devinfo -d sroce0
echo "# ibv_devinfo -v -d sroce0 | grep GID"
ibv_devinfo -v -d sroce0 | grep GID
ibv_devinfo -d sroce0 | grep -q 'state:.*PORT_ACTIVE' ||
	sroce_fail "sroce0 is not PORT_ACTIVE"
echo
echo "sroce0 and sroce1 sit on the two ends of a veth pair; RDMA traffic"
echo "between them arrives with the data path (see README.md, Status)."
