#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Device scenario: sroce registers devices that stock rdma-core lists and
# queries correctly, and that follow their netdevs.
#
#   veth0 (10.0.0.1, fd00::1) <-- veth pair --> veth1 (10.0.0.2, fd00::2)
#     sroce0                                      sroce1
#
# Runs inside the guest (see ../run.sh) with SROCE_KO pointing at the
# sroce.ko built for the running kernel. Prints one "ok"/"not ok" line per
# check and exits non-zero if any check failed.  The small volume
# (SROCE_VOLUME=small; this script does without guest-lib.sh) runs one
# load/unload cycle at the end instead of three; everything else is cheap
# and runs whole.

set -u
: "${SROCE_KO:?SROCE_KO must name the sroce.ko built for this kernel}"

IP=/usr/sbin/ip
RDMA=rdma
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
failures=0
checks=0

ok() {
	checks=$((checks + 1))
	echo "ok - $*"
}

not_ok() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	echo "not ok - $*"
}

# check DESCRIPTION COMMAND...: the command must succeed
check() {
	local what=$1

	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# check_fails DESCRIPTION COMMAND...: the command must fail
check_fails() {
	local what=$1

	shift
	if "$@" >/dev/null 2>&1; then not_ok "$what"; else ok "$what"; fi
}

# wait_for SECONDS COMMAND...: poll until the command succeeds
wait_for() {
	local tries=$(($1 * 10))

	shift
	while ! "$@" >/dev/null 2>&1; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

has_line() {
	grep -q -- "$1" "$2"
}

devinfo_field() { # DEV FIELD: value of "FIELD: value" in ibv_devinfo -v
	ibv_devinfo -v -d "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | head -n 1
}

port_state_is() { # DEV STATE
	devinfo_field "$1" state | grep -q "^$2"
}

active_mtu_is() { # DEV MTU
	[ "$(devinfo_field "$1" active_mtu | awk '{print $1}')" = "$2" ]
}

gid_is() { # DEV INDEX GID
	[ "$(cat "/sys/class/infiniband/$1/ports/1/gids/$2" 2>/dev/null)" = "$3" ]
}

dev_has_gid() { # DEV GID
	grep -qx "$2" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null
}

dev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

dev_gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

udp_port_bound() { # FILE (/proc/net/udp or udp6): 4791 = 0x12B7
	awk 'NR > 1 { split($2, a, ":"); if (a[2] == "12B7") found = 1 }
	     END { exit !found }' "$1"
}

dmesg_since_mark() {
	dmesg | sed -n "/sroce-scenario-mark $1/,\$p"
}

mark=0
dmesg_mark() {
	mark=$((mark + 1))
	echo "sroce-scenario-mark $mark" >/dev/kmsg
}

load_deps() {
	local dep

	for dep in $(modinfo -F depends "$SROCE_KO" | tr ',' ' '); do
		modprobe "$dep" || return 1
	done
	# What the scenario itself uses; module autoload is off in the VM.
	# The crc32 shash is optional for sroce (crc32_le is the fallback).
	modprobe -a veth 8021q crc32_pclmul crc32_generic 2>/dev/null
	modprobe veth
}

setup_veth() {
	$IP link add veth0 type veth peer name veth1 || return 1
	$IP addr add 10.0.0.1/24 dev veth0
	$IP addr add 10.0.0.2/24 dev veth1
	$IP -6 addr add fd00::1/64 dev veth0 nodad
	$IP -6 addr add fd00::2/64 dev veth1 nodad
	$IP link set veth0 up
	$IP link set veth1 up
}

test_module_load() {
	check "modinfo: alias rdma-link-sroce" \
		sh -c "modinfo -F alias '$SROCE_KO' | grep -qx rdma-link-sroce"
	check "dependencies load" load_deps

	if modprobe rdma_rxe 2>/dev/null; then
		dmesg_mark
		check_fails "sroce refuses to load while rdma_rxe holds UDP 4791" \
			insmod "$SROCE_KO"
		check "the refusal names the busy port" \
			sh -c "dmesg | sed -n '/sroce-scenario-mark $mark/,\$p' | grep -q 'UDP port 4791 (IPv4) is in use'"
		check "rdma_rxe unloads" modprobe -r rdma_rxe
		# modprobe -r also dropped the now unused udp_tunnel & co.
		check "dependencies load again" load_deps
	else
		not_ok "rdma_rxe available for the exclusivity check"
	fi

	check "insmod sroce.ko" insmod "$SROCE_KO"
	check "UDP 4791 bound (IPv4)" udp_port_bound /proc/net/udp
	check "UDP 4791 bound (IPv6)" udp_port_bound /proc/net/udp6
	check_fails "rdma_rxe cannot load beside sroce" modprobe rdma_rxe
}

test_link_add() {
	check "veth pair up" setup_veth
	check "rdma link add sroce0 type sroce netdev veth0" \
		$RDMA link add sroce0 type sroce netdev veth0
	check "rdma link add sroce1 type sroce netdev veth1" \
		$RDMA link add sroce1 type sroce netdev veth1
	check "sysfs has sroce0" dev_exists sroce0
	check "node_type is CA" \
		sh -c 'grep -q "^1: CA" /sys/class/infiniband/sroce0/node_type'
}

test_devinfo() {
	local out=/tmp/devinfo.sroce0 guid

	ibv_devices >/tmp/devices 2>&1
	check "ibv_devices lists sroce0" has_line "sroce0" /tmp/devices
	check "ibv_devices lists sroce1" has_line "sroce1" /tmp/devices
	guid=$(cut -c1-4,6-9,11-14,16-19 /sys/class/infiniband/sroce0/node_guid)
	check "ibv_devices shows sroce0's node GUID" has_line "$guid" /tmp/devices

	check "ibv_devinfo -v -d sroce0 (librxe opens it)" \
		sh -c "ibv_devinfo -v -d sroce0 >$out 2>&1"
	cat "$out"
	check "transport InfiniBand" has_line "transport:.*InfiniBand (0)" "$out"
	check "vendor_id 0xffffff" has_line "vendor_id:.*0xffffff" "$out"
	check "state PORT_ACTIVE" has_line "state:.*PORT_ACTIVE (4)" "$out"
	check "phys_state LINK_UP" has_line "phys_state:.*LINK_UP (5)" "$out"
	check "max_mtu 4096" has_line "max_mtu:.*4096 (5)" "$out"
	check "active_mtu 1024 at netdev MTU 1500" \
		has_line "active_mtu:.*1024 (3)" "$out"
	check "link_layer Ethernet" has_line "link_layer:.*Ethernet" "$out"
	check "max_sge 63" has_line "max_sge:.*63" "$out"
	check "max_qp_rd_atom 128" has_line "max_qp_rd_atom:.*128" "$out"
	check "atomic_cap ATOMIC_HCA" has_line "atomic_cap:.*ATOMIC_HCA" "$out"
	check "max_msg_sz 0x40000000" has_line "max_msg_sz:.*0x40000000" "$out"
	check "max_pkeys 1" has_line "max_pkeys:.*1$" "$out"
	check "GID index 0 is the link-local default" \
		has_line "GID\[  0\]:.*fe80:" "$out"
	check "GID index 1 is ::ffff:10.0.0.1, RoCE v2" \
		has_line "GID\[  1\]:.*::ffff:10.0.0.1, RoCE v2" "$out"
	check "rdma dev show: sroce0 is a CA" \
		sh -c "$RDMA dev show sroce0 -d | grep -q 'node_type ca'"
}

test_gids() {
	check "IPv4 GID at index 1 (sysfs)" wait_for 10 gid_is sroce0 1 \
		0000:0000:0000:0000:0000:ffff:0a00:0001
	check "IPv6 GID fd00::1 present" wait_for 10 dev_has_gid sroce0 \
		fd00:0000:0000:0000:0000:0000:0000:0001
	check "GID type RoCE v2" sh -c \
		'grep -q "RoCE v2" /sys/class/infiniband/sroce0/ports/1/gid_attrs/types/1'
	check "GID ndev is veth0" sh -c \
		'grep -qx veth0 /sys/class/infiniband/sroce0/ports/1/gid_attrs/ndevs/1'
	$IP addr add 10.0.1.1/24 dev veth0
	check "a new IPv4 address becomes a GID" wait_for 10 dev_has_gid \
		sroce0 0000:0000:0000:0000:0000:ffff:0a00:0101
	$IP addr del 10.0.1.1/24 dev veth0
	check "a removed address leaves the GID table" wait_for 10 sh -c \
		'! grep -qx 0000:0000:0000:0000:0000:ffff:0a00:0101 /sys/class/infiniband/sroce0/ports/1/gids/*'
}

test_mtu() {
	local mtu want

	for mtu in 9000:4096 4180:4096 4179:2048 1500:1024 1000:512 600:512 \
		   400:256 1500:1024; do
		want=${mtu#*:}
		$IP link set veth0 mtu "${mtu%:*}"
		check "netdev MTU ${mtu%:*} gives active_mtu $want" \
			wait_for 5 active_mtu_is sroce0 "$want"
	done
}

# link_downed DEV: DEV's link_downed counter
link_downed() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/link_downed"
}

test_port_state() {
	local events=/tmp/asyncwatch down0 down1

	down0=$(link_downed sroce0)
	down1=$(link_downed sroce1)
	stdbuf -oL ibv_asyncwatch -d sroce0 >"$events" 2>&1 &
	local watch=$!

	check "ibv_asyncwatch is listening" \
		wait_for 30 has_line "async event FD" "$events"
	$IP link set veth1 down
	check "peer down: sroce0 PORT_DOWN (no carrier)" \
		wait_for 10 port_state_is sroce0 PORT_DOWN
	check "peer down: sroce0 phys_state POLLING" \
		sh -c "ibv_devinfo -d sroce0 -v | grep -q 'phys_state:.*POLLING'"
	check "admin down: sroce1 phys_state DISABLED" \
		sh -c "ibv_devinfo -d sroce1 -v | grep -q 'phys_state:.*DISABLED'"
	$IP link set veth1 up
	check "peer up: sroce0 PORT_ACTIVE again" \
		wait_for 10 port_state_is sroce0 PORT_ACTIVE
	check "peer up: sroce1 PORT_ACTIVE again" \
		wait_for 10 port_state_is sroce1 PORT_ACTIVE
	# LinkDownedCounter: one each (sroce0 lost its carrier, sroce1's
	# netdev went down); coming back up does not count
	check "link_downed: sroce0 counted its link going down once" \
		test "$(link_downed sroce0)" = "$((down0 + 1))"
	check "link_downed: sroce1 counted its link going down once" \
		test "$(link_downed sroce1)" = "$((down1 + 1))"
	sleep 1
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	cat "$events"
	check "async event IBV_EVENT_PORT_ERR delivered" \
		has_line "IBV_EVENT_PORT_ERR" "$events"
	check "async event IBV_EVENT_PORT_ACTIVE delivered" \
		has_line "IBV_EVENT_PORT_ACTIVE" "$events"

	$RDMA link show sroce0/1 >/tmp/link 2>&1
	cat /tmp/link
	check "rdma link show: ACTIVE on veth0" \
		sh -c "grep -q 'state ACTIVE physical_state LINK_UP netdev veth0' /tmp/link"
}

test_bad_links() {
	dmesg_mark
	check_fails "second device on veth0 refused" \
		$RDMA link add sroce9 type sroce netdev veth0
	check "the refusal says why" sh -c \
		"dmesg | sed -n '/sroce-scenario-mark $mark/,\$p' | grep -q 'veth0 already has an sroce device'"
	check_fails "non-Ethernet netdev (lo) refused" \
		$RDMA link add sroce9 type sroce netdev lo
	check_fails "missing netdev refused" \
		$RDMA link add sroce9 type sroce netdev nosuch0
	$IP link add veth2 type veth peer name veth3
	check_fails "duplicate device name refused" \
		$RDMA link add sroce0 type sroce netdev veth2
	check "no stray device was left behind" dev_gone sroce9
	check "a VLAN netdev on veth2" \
		$IP link add link veth2 name veth2.5 type vlan id 5
	check_fails "VLAN netdev refused" \
		$RDMA link add sroce9 type sroce netdev veth2.5
	$IP link del veth2.5 2>/dev/null
}

test_removal() {
	check "rdma link del sroce1" $RDMA link del sroce1
	check "sroce1 gone" wait_for 10 dev_gone sroce1
	check "sroce0 untouched" port_state_is sroce0 PORT_ACTIVE

	check "rdma link add sroce2 on veth2" \
		$RDMA link add sroce2 type sroce netdev veth2
	$IP link del veth2
	check "deleting the netdev removes its device" wait_for 20 dev_gone sroce2

	check "sroce1 can be re-added on veth1" \
		$RDMA link add sroce1 type sroce netdev veth1
	check "rmmod sroce with two devices present" rmmod sroce
	check "all devices gone after rmmod" \
		sh -c '! ls /sys/class/infiniband/ 2>/dev/null | grep -q sroce'
	check_fails "UDP 4791 released" udp_port_bound /proc/net/udp
}

# A private module tree holding sroce.ko and the modules it needs, for
# modprobe -d: the guest kernel's own tree is read-only and lacks sroce.
make_modroot() {
	local rel root dir dep

	rel=$(uname -r)
	root=/run/sroce-vm/modroot
	dir=$root/lib/modules/$rel
	rm -rf "$root"
	mkdir -p "$dir/extra" || return 1
	cp /lib/modules/"$rel"/modules.builtin* /lib/modules/"$rel"/modules.order \
		"$dir/" 2>/dev/null
	cp "$SROCE_KO" "$dir/extra/" || return 1
	for dep in $(modinfo -F depends "$SROCE_KO" | tr ',' ' '); do
		modprobe --show-depends "$dep" | awk '$1 == "insmod" { print $2 }'
	done | sort -u | xargs -r cp -t "$dir/extra/" || return 1
	depmod -b "$root" "$rel"
}

test_autoload() {
	local allow=/run/sroce-vm/autoload-allow

	check "a module tree with sroce.ko" make_modroot
	echo "rdma-link-sroce -d /run/sroce-vm/modroot" >>"$allow"
	dmesg_mark
	check "rdma link add loads sroce through its alias" \
		$RDMA link add sroce0 type sroce netdev veth0
	check "the kernel asked for rdma-link-sroce" sh -c \
		"dmesg | sed -n '/sroce-scenario-mark $mark/,\$p' | grep -q 'allowed autoload: .*rdma-link-sroce'"
	check "sroce is loaded" grep -q '^sroce ' /proc/modules
	check "sroce0 is ACTIVE" wait_for 10 port_state_is sroce0 PORT_ACTIVE
	sed -i '/^rdma-link-sroce /d' "$allow"
	check "rmmod sroce" rmmod sroce
}

# test_reload_cycles: three load/add/query/unload cycles; one at the small
# volume (SROCE_VOLUME=small): by then sroce has been loaded and unloaded
# twice (test_module_load to test_removal, test_autoload), so one more
# cycle is the third, and more only repeat its paths.
test_reload_cycles() {
	local good=1 cycles="1 2 3" what="three load/add/query/unload cycles"

	if [ "${SROCE_VOLUME:-full}" = small ]; then
		cycles=1 what="one load/add/query/unload cycle"
	fi
	for _ in $cycles; do
		insmod "$SROCE_KO" &&
			$RDMA link add sroce0 type sroce netdev veth0 &&
			wait_for 10 port_state_is sroce0 PORT_ACTIVE &&
			ibv_devinfo -d sroce0 >/dev/null &&
			rmmod sroce || good=0
	done
	check "$what" [ "$good" = 1 ]
}

test_module_load
test_link_add
test_devinfo
test_gids
test_mtu
test_port_state
test_bad_links
test_removal
test_autoload
test_reload_cycles
$IP link del veth0 2>/dev/null

echo "device scenario: $((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
