#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Demo: load sroce.ko, create sroce0 and sroce1 on the two ends of a veth
# pair, show them with stock rdma-core, move data between them with
# ibv_rc_pingpong (RC SEND, the receiver checks every byte) and with rping
# (rdma_cm: address and route resolution, the IB CM's MADs on QP1, then
# SEND/READ/WRITE with every ping's data checked), and show the devices'
# counters.  Everything printed is also kept in
# $SROCE_RESULTS/demo.txt, which scripts/demo.sh shows.
#
#   veth0 (10.0.0.1) <-- veth pair --> veth1 (10.0.0.2)
#     sroce0 (client)                    sroce1 (server)
#
# sroce-vm: timeout 300

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=demo
exec > >(tee "$SROCE_RESULTS/demo.txt") 2>&1

# show CMD...: print the command, then run it.
show() {
	echo "# $*"
	"$@"
}

sroce_modprobe ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
echo "# rdma link add sroce0 type sroce netdev veth0 (and sroce1 on veth1)"
sroce_rdma_pair sroce sroce0 sroce1 9000
show rdma link show
show ibv_devices
show ibv_devinfo -d sroce0
ibv_devinfo -d sroce0 | grep -q 'state:.*PORT_ACTIVE' ||
	sroce_fail "sroce0 is not PORT_ACTIVE"
g0=$(sroce_gid_index sroce0 10.0.0.1)
g1=$(sroce_gid_index sroce1 10.0.0.2)

echo
echo "# ibv_rc_pingpong: 1000 round trips of a 64 KiB RC SEND, path MTU"
echo "# 4096; -c makes the receiver check the data pattern of every message"
echo "# ibv_rc_pingpong -d sroce1 -g $g1 -c -m 4096 -s 65536 -n 1000 &    (server)"
timeout 120 ibv_rc_pingpong -d sroce1 -g "$g1" -c -m 4096 -s 65536 -n 1000 \
	>/tmp/server.txt 2>&1 &
server=$!
for _ in $(seq 1 200); do
	sroce_tcp_listening 18515 && break
	sleep 0.1
done
show timeout 120 ibv_rc_pingpong -d sroce0 -g "$g0" -c -m 4096 -s 65536 \
	-n 1000 10.0.0.2 || sroce_fail "ibv_rc_pingpong client failed"
wait "$server" || { cat /tmp/server.txt; sroce_fail "ibv_rc_pingpong server failed"; }
echo "# (server side)"
cat /tmp/server.txt

echo
echo "# rping: rdma_cm connects the client on 10.0.0.1 to the server on"
echo "# 10.0.0.2 (connection request, reply and ready-to-use MADs over QP1),"
echo "# then 100 pings; -V makes both sides check every ping's data"
echo "# rping -s -a 10.0.0.2 -C 100 -V &    (server)"
timeout 120 rping -s -a 10.0.0.2 -C 100 -V >/tmp/rping-server.txt 2>&1 &
server=$!
for _ in $(seq 1 200); do
	rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN' && break
	sleep 0.1
done
echo "# rping -c -I 10.0.0.1 -a 10.0.0.2 -C 100 -V -v | (first and last 3 pings)"
timeout 120 rping -c -I 10.0.0.1 -a 10.0.0.2 -C 100 -V -v >/tmp/rping.txt 2>&1 ||
	{ cat /tmp/rping.txt; sroce_fail "rping client failed"; }
wait "$server" ||
	{ cat /tmp/rping-server.txt; sroce_fail "rping server failed"; }
head -n 3 /tmp/rping.txt
echo "..."
tail -n 3 /tmp/rping.txt
grep -q '^ping data: rdma-ping-99:' /tmp/rping.txt ||
	sroce_fail "rping: ping 99 missing"

echo
show rdma statistic show link sroce0/1
show rdma statistic show link sroce1/1
