# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Helpers for guest scenarios of sroce's VM harness.  A scenario is a bash
# script run as root inside the VM, chrooted into the host's root
# filesystem (read-only; /tmp, /run, /var/tmp, /dev/shm are tmpfs), with
# cwd $SROCE_RESULTS.  Exit 0 means pass.  Environment:
#   SROCE_KERNEL    stock | debug
#   SROCE_VOLUME    full | small: small is the debug sweep of make check
#                   (every code path of the scenario, the least traffic
#                   that reaches it; see tools/testing/sroce-vm/tiers)
#   SROCE_KO        sroce.ko built for the running kernel ("" if it did not
#                   build; SROCE_KO_ERROR then says why)
#   SROCE_RESULTS   writable directory, kept on the host after the run
#   SROCE_TOP       the checkout (read-only)
#   SROCE_VM_LIB    this file
#   SROCE_MODULES   .ko files built for this kernel from the scenario's
#                   "# sroce-vm: build-module DIR" lines (DIR relative to
#                   tools/testing/sroce-vm)
#   SROCE_PROGS     host programs built from the scenario's
#                   "# sroce-vm: build-prog DIR" lines (DIR relative to
#                   tools/testing)
# Optional header lines in a scenario, read by run.sh:
#   # sroce-vm: timeout SECONDS
#   # sroce-vm: ignore-splat EXTENDED-REGEXP   (expected kernel lines)
#   # sroce-vm: build-module DIR
#   # sroce-vm: build-prog DIR
#
# Module autoload is refused in the VM: load modules explicitly
# (sroce_modprobe, sroce_load_ko) or allow one alias (sroce_allow_autoload).
# Debian's busybox is not in the way here: this is the host's userspace.

set -euo pipefail

sroce_log() { printf '%s: %s\n' "${SROCE_SCENARIO:-scenario}" "$*"; }
sroce_fail() { printf '%s: FAILED: %s\n' "${SROCE_SCENARIO:-scenario}" "$*" >&2; exit 1; }

# sroce_modprobe MODULE...: load modules from the running kernel's tree;
# succeeds for built-in ones.
sroce_modprobe() {
	local m
	for m in "$@"; do
		/usr/sbin/modprobe "$m" || sroce_fail "modprobe $m"
	done
}

# sroce_load_ko [PARAM=VALUE...]: load $SROCE_KO after its dependencies.
sroce_load_ko() {
	local deps
	[ -n "${SROCE_KO:-}" ] || sroce_fail "no sroce.ko for this kernel: ${SROCE_KO_ERROR:-unknown}"
	[ -f "$SROCE_KO" ] || sroce_fail "$SROCE_KO missing"
	deps=$(/usr/sbin/modinfo -F depends "$SROCE_KO")
	if [ -n "$deps" ]; then
		# shellcheck disable=SC2086 # comma-separated list
		sroce_modprobe ${deps//,/ }
	fi
	sroce_log "insmod $SROCE_KO $*"
	/usr/sbin/insmod "$SROCE_KO" "$@" || sroce_fail "insmod $SROCE_KO"
}

# sroce_allow_autoload ALIAS [MODPROBE-OPTION...]: let the kernel autoload
# this exact alias (as passed to modprobe, e.g. "rdma-link-rxe"), running
# modprobe with the given options first (e.g. -d DIR).
sroce_allow_autoload() {
	echo "$*" >>/run/sroce-vm/autoload-allow
}

# sroce_veth [A B]: veth pair A<->B (default veth0/veth1) in this netns,
# up, with 10.0.0.1/24 + fd00::1/64 on A and 10.0.0.2/24 + fd00::2/64 on B.
# Guest-internal addresses: the VM has no NIC at all.
sroce_veth() {
	local a=${1:-veth0} b=${2:-veth1}
	sroce_modprobe veth
	/usr/sbin/ip link add "$a" type veth peer name "$b"
	/usr/sbin/ip addr add 10.0.0.1/24 dev "$a"
	/usr/sbin/ip addr add 10.0.0.2/24 dev "$b"
	/usr/sbin/ip -6 addr add fd00::1/64 dev "$a" nodad
	/usr/sbin/ip -6 addr add fd00::2/64 dev "$b" nodad
	/usr/sbin/ip link set "$a" up
	/usr/sbin/ip link set "$b" up
}

# sroce_wait_link_up DEV [SECONDS]
sroce_wait_link_up() {
	local _
	for _ in $(seq 1 $((${2:-10} * 10))); do
		/usr/sbin/ip -br link show "$1" | grep -qw UP && return 0
		sleep 0.1
	done
	sroce_fail "$1 did not come up: $(/usr/sbin/ip -br link show "$1")"
}

# sroce_wait_rdma_ready DEV: port 1 of RDMA device DEV is ACTIVE and its GID
# index 1 holds an IPv4-mapped address (the netdev's IPv4 address).
sroce_wait_rdma_ready() {
	local port=/sys/class/infiniband/$1/ports/1 _

	for _ in $(seq 1 100); do
		grep -q ACTIVE "$port/state" 2>/dev/null &&
			grep -q '^0000:0000:0000:0000:0000:ffff:' "$port/gids/1" \
				2>/dev/null && return 0
		sleep 0.1
	done
	sroce_fail "$1 not ready: state $(cat "$port/state" 2>&1)," \
		"GID 1 $(cat "$port/gids/1" 2>&1)"
}

# sroce_load_rxe: load rdma_rxe for comparison runs.  rxe allocates the
# "crc32" shash per device, which the crypto API would autoload: load the
# generic implementation explicitly (autoload is refused here).
sroce_load_rxe() {
	sroce_modprobe crc32_generic rdma_rxe
}

# sroce_gid_of ADDR: sets SROCE_GID to the GID that holds ADDR as sysfs
# shows it: an IPv6 address in full ("fd00::1" ->
# "fd00:0000:0000:0000:0000:0000:0000:0001"), an IPv4 address mapped
# (::ffff:a.b.c.d).  Builtins only: a python3 start costs seconds on the
# debug kernel under TCG, and a pingpong needs two of these.
sroce_gid_of() {
	local addr=$1 g i n head tail h=() t=() out=() q=()
	if [[ $addr != *:* ]]; then
		IFS=. read -r -a q <<<"$addr"
		printf -v SROCE_GID '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' \
			"${q[0]}" "${q[1]}" "${q[2]}" "${q[3]}"
		return 0
	fi
	head=$addr tail=""
	if [[ $addr == *::* ]]; then head=${addr%%::*} tail=${addr#*::}; fi
	[ -z "$head" ] || IFS=: read -r -a h <<<"$head"
	[ -z "$tail" ] || IFS=: read -r -a t <<<"$tail"
	n=$((8 - ${#h[@]} - ${#t[@]}))
	for g in "${h[@]}"; do printf -v g '%04x' "0x$g"; out+=("$g"); done
	for ((i = 0; i < n; i++)); do out+=(0000); done
	for g in "${t[@]}"; do printf -v g '%04x' "0x$g"; out+=("$g"); done
	printf -v SROCE_GID '%s:' "${out[@]}"
	SROCE_GID=${SROCE_GID%:}
}

# sroce_gid_index DEV ADDR: print the port-1 GID index of RDMA device DEV
# that holds ADDR ("10.0.0.1" or "fd00::1"), as the GID table shows it.
sroce_gid_index() {
	local dev=$1 want f gid
	sroce_gid_of "$2"
	want=$SROCE_GID
	# read, not $(cat): a fork and exec over 9p costs up to a second under
	# TCG, and the table has 256 entries.
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		read -r gid <"$f" 2>/dev/null || continue
		if [ "$gid" = "$want" ]; then
			basename "$f"
			return 0
		fi
	done
	sroce_fail "$dev has no GID for $2"
}

# sroce_tcp_listening PORT: a TCP socket listens on PORT.  Reads
# /proc/net/tcp{,6} with builtins: ss would need the sock_diag modules
# (autoload is refused), and every fork is slow under TCG.
sroce_tcp_listening() {
	local hex f _ local_addr _rem st _rest

	printf -v hex ':%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		while read -r _ local_addr _rem st _rest; do
			[ "$st" = 0A ] && [ "${local_addr%"$hex"}" != "$local_addr" ] &&
				return 0
		done <"$f"
	done
	return 1
}

# sroce_cm_listening PORT: an rdma_cm ID listens on PORT (what a server
# started with rdma_cm, such as perftest -R, opens instead of a TCP port).
sroce_cm_listening() {
	rdma resource show cm_id 2>/dev/null |
		grep -q "state LISTEN .*src-addr [^ ]*:$1 "
}

# sroce_wait_ready PID TENTHS COMMAND...: wait until COMMAND (e.g.
# sroce_tcp_listening PORT) succeeds, for at most TENTHS tenths of a second
# of sleep; false at once if the process PID (the server) has exited.
sroce_wait_ready() {
	local pid=$1 tenths=$2 _
	shift 2
	for _ in $(seq 1 "$tenths"); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# sroce_pair_remove: delete sroce1 and sroce0 (made by sroce_rdma_pair) and
# unload sroce; nothing a scenario did may still hold them. Each step that
# fails is appended to the scenario's global array `failed`.
sroce_pair_remove() {
	rdma link del sroce1 || failed+=("rdma link del sroce1")
	rdma link del sroce0 || failed+=("rdma link del sroce0")
	rmmod sroce || failed+=("rmmod sroce")
}

# sroce_small: true for the small volume (SROCE_VOLUME=small).
sroce_small() {
	[ "${SROCE_VOLUME:-full}" = small ]
}

# sroce_cmdline_var PREFIX NAME DEFAULT: the value of PREFIX.NAME=VALUE on
# the kernel command line (run.sh --append; the last one wins), else
# DEFAULT.  How a host-side caller hands a scenario its knobs.
sroce_cmdline_var() {
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^$1\.$2=//p" | tail -n 1)
	echo "${v:-$3}"
}

# sroce_iters N: N iterations on the stock kernel, a fifth of them (at
# least 2) on the debug kernel, which runs a pingpong 10-20x slower, and a
# twentieth (at least 2) at the small volume: the same sizes, MTUs and
# address families are covered by all three.
sroce_iters() {
	if sroce_small; then
		echo $(( $1 / 20 > 2 ? $1 / 20 : 2 ))
	elif [ "${SROCE_KERNEL:-}" = debug ]; then
		echo $(( $1 / 5 > 2 ? $1 / 5 : 2 ))
	else
		echo "$1"
	fi
}

# sroce_tap OK NAME [WHY]: one result line in $REPORT, "ok N - NAME" when
# OK is 0, else "not ok N - NAME: WHY" (check.sh counts them); the lines
# so far are SROCE_TAP_NUM, SROCE_TAP_FAILED of them failures.
SROCE_TAP_NUM=0
SROCE_TAP_FAILED=0
sroce_tap() {
	SROCE_TAP_NUM=$((SROCE_TAP_NUM + 1))
	if [ "$1" = 0 ]; then
		echo "ok $SROCE_TAP_NUM - $2" | tee -a "$REPORT"
	else
		SROCE_TAP_FAILED=$((SROCE_TAP_FAILED + 1))
		echo "not ok $SROCE_TAP_NUM - $2: $3" | tee -a "$REPORT"
	fi
}

# sroce_res_counts: the RDMA resource counts of sroce0 and sroce1 (pd, cq,
# qp, cm_id, mr, ctx, srq), in that order, without the device index (a
# device added again gets a new one).
sroce_res_counts() {
	local line out0="" out1=""
	while read -r _ line; do
		case $line in
		sroce0:*) out0=$line ;;
		sroce1:*) out1=$line ;;
		esac
	done < <(rdma resource show 2>/dev/null)
	echo "$out0 / $out1"
}

# sroce_hw_counter DEV NAME: the hardware counter NAME of DEV's port 1.
sroce_hw_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# sroce_pp_lost_final_ack KIND TAG DROPS: a failed run of KIND (TAG) was
# the pingpong's own race on a lossy link, not a transport fault.  The
# server's last SEND is the last message of the exchange: the client
# exits, destroying its QP, once it has that message, and if the ACK it
# sent was lost the server's retransmissions find no QP there
# (the client device's dropped_no_qp moved from DROPS) and end in a
# retry error.
# Every message was delivered and checked: the client completed all its
# iterations.
sroce_pp_lost_final_ack() {
	local kind=$1 tag=$2 drops=$3 cdev=${SROCE_PP_CLIENT:-sroce0}
	[ "$kind" = rc ] || return 1
	grep -q ' iters in ' "$kind-cli-$tag.txt" || return 1
	grep -q '^Failed status transport retry counter exceeded (12) for wr_id 2$' \
		"$kind-srv-$tag.txt" || return 1
	[ "$(grep -c '^Failed status' "$kind-srv-$tag.txt")" = 1 ] || return 1
	[ "$(sroce_hw_counter "$cdev" dropped_no_qp)" -gt "$drops" ] || return 1
	sroce_log "${kind}_pingpong $tag: the server's last SEND lost its ACK after the client closed its QP ($cdev dropped_no_qp $drops -> $(sroce_hw_counter "$cdev" dropped_no_qp)); every message was delivered"
}

# sroce_pingpong KIND TAG TIMEOUT SIZE ITERS MTU [FAMILY [OPTION...]]: one
# ibv_KIND_pingpong run (KIND rc, uc, ud or srq; ud ignores MTU) from sroce0 (client) to sroce1
# (server) over the sroce_rdma_pair addresses of FAMILY (4, the default,
# or 6), -c: the server checks every byte; OPTIONs go to both sides (e.g.
# -q 4 for ibv_srq_pingpong). SROCE_PP_CLIENT=sroce1 puts the client on
# sroce1 too, on the server's address (same-host delivery). Logs go to
# KIND-{srv,cli}-TAG.txt and the console; true if both sides exit 0 within
# TIMEOUT seconds, or the server failed only as sroce_pp_lost_final_ack
# describes.
sroce_pingpong() {
	local kind=$1 tag=$2 limit=$3 size=$4 iters=$5 mtu=$6 fam=${7:-4}
	local port=$((18515 + RANDOM % 1000)) srv cli spid g0 g1 peer mtuopt=()
	local extra=("${@:8}") drops cdev=${SROCE_PP_CLIENT:-sroce0}

	if [ "$fam" = 6 ]; then peer=fd00::2; else peer=10.0.0.2; fi
	# ibv_ud_pingpong has no path MTU: its messages fit the port's MTU
	[ "$kind" = ud ] || mtuopt=(-m "$mtu")
	g1=$(sroce_gid_index sroce1 "$peer")
	if [ "$cdev" = sroce1 ]; then
		g0=$g1
	else
		g0=$(sroce_gid_index "$cdev" "${peer%2}1")
	fi
	sroce_log "${kind}_pingpong $tag: size $size iters $iters mtu $mtu IPv$fam (gids $g0/$g1) ${extra[*]}"
	drops=$(sroce_hw_counter "$cdev" dropped_no_qp)
	timeout "$limit" "ibv_${kind}_pingpong" -d sroce1 -g "$g1" -c "${mtuopt[@]}" \
		-p "$port" -s "$size" -n "$iters" "${extra[@]}" >"$kind-srv-$tag.txt" 2>&1 &
	spid=$!
	# the server may take seconds to start on a slow kernel
	sroce_wait_ready "$spid" 200 sroce_tcp_listening "$port" || true
	set +e
	timeout "$limit" "ibv_${kind}_pingpong" -d "$cdev" -g "$g0" -c "${mtuopt[@]}" \
		-p "$port" -s "$size" -n "$iters" "${extra[@]}" 10.0.0.2 \
		>"$kind-cli-$tag.txt" 2>&1
	cli=$?
	wait "$spid"
	srv=$?
	set -e
	cat "$kind-srv-$tag.txt" "$kind-cli-$tag.txt"
	sroce_log "${kind}_pingpong $tag: server exit $srv, client exit $cli"
	[ "$cli" = 0 ] || return 1
	[ "$srv" = 0 ] || sroce_pp_lost_final_ack "$kind" "$tag" "$drops"
}

# sroce_rc_pingpong TAG TIMEOUT SIZE ITERS MTU [FAMILY]: sroce_pingpong rc.
sroce_rc_pingpong() {
	sroce_pingpong rc "$@"
}

# sroce_rdma_pair TYPE DEV0 DEV1 [NETDEV_MTU]: two RDMA devices of link type
# TYPE (sroce or rxe; the module must be loaded) on a fresh veth pair,
#
#   veth0 10.0.0.1 fd00::1  <-- veth -->  veth1 10.0.0.2 fd00::2
#     DEV0                                  DEV1
#
# with the netdev MTU given (default 1500; 9000 lets path MTU 4096 through).
# Both addresses are local to this one kernel, so each side gets permanent
# IPv4 and IPv6 neighbours (ib_core's own resolution would drop a reply
# from a local address) and IPv4 accepts packets with a local source; a
# route with the GID's netdev as oif then leaves through the veth.
sroce_rdma_pair() {
	local type=$1 d0=$2 d1=$3 mtu=${4:-1500} m0 m1 c
	sroce_veth veth0 veth1
	/usr/sbin/ip link set veth0 mtu "$mtu"
	/usr/sbin/ip link set veth1 mtu "$mtu"
	sroce_wait_link_up veth0
	sroce_wait_link_up veth1
	m0=$(cat /sys/class/net/veth0/address)
	m1=$(cat /sys/class/net/veth1/address)
	/usr/sbin/ip neigh replace 10.0.0.1 lladdr "$m0" dev veth1 nud permanent
	/usr/sbin/ip neigh replace 10.0.0.2 lladdr "$m1" dev veth0 nud permanent
	/usr/sbin/ip -6 neigh replace fd00::1 lladdr "$m0" dev veth1 nud permanent
	/usr/sbin/ip -6 neigh replace fd00::2 lladdr "$m1" dev veth0 nud permanent
	for c in all veth0 veth1; do
		sysctl -qw "net.ipv4.conf.$c.accept_local=1" "net.ipv4.conf.$c.rp_filter=0"
	done
	rdma link add "$d0" type "$type" netdev veth0 || sroce_fail "rdma link add $d0"
	rdma link add "$d1" type "$type" netdev veth1 || sroce_fail "rdma link add $d1"
	sroce_wait_rdma_ready "$d0"
	sroce_wait_rdma_ready "$d1"
}

# ---------------------------------------------------------------------------
# Two-guest scenarios ("# sroce-vm: hosts 2"): the same script runs on guest
# a and guest b (SROCE_ROLE), which share the directory SROCE_SHARED and one
# virtio-net NIC each, joined to each other and to nothing else:
#
#   guest a: wire0 10.0.0.1 fd00::1  <-- QEMU stream netdev -->  wire0 10.0.0.2 fd00::2 :guest b

SROCE_ROLE=${SROCE_ROLE:-}
if [ "$SROCE_ROLE" = a ]; then SROCE_PEER_ROLE=b; else SROCE_PEER_ROLE=a; fi
if [ "$SROCE_ROLE" = b ]; then
	SROCE_LOCAL4=10.0.0.2 SROCE_PEER4=10.0.0.1 SROCE_LOCAL6=fd00::2 SROCE_PEER6=fd00::1
else
	SROCE_LOCAL4=10.0.0.1 SROCE_PEER4=10.0.0.2 SROCE_LOCAL6=fd00::1 SROCE_PEER6=fd00::2
fi

# Written when the script exits, so that a peer waiting in sroce_peer_sync
# gives up at once instead of at its time limit.
sroce_peer_exit_mark() {
	echo "$1" >"$SROCE_SHARED/exit-$SROCE_ROLE"
}

# sroce_wire_up [MTU]: the NIC as wire0 with this guest's addresses and MTU
# (default 1500), up; then waits for the peer to do the same and pings it.
sroce_wire_up() {
	local mtu=${1:-1500} mac dev="" d addr
	if [ -z "$SROCE_ROLE" ] || [ ! -d "${SROCE_SHARED:-}" ]; then
		sroce_fail "not a two-guest scenario (no # sroce-vm: hosts 2 line?)"
	fi
	trap 'sroce_peer_exit_mark $?' EXIT
	sroce_modprobe virtio_net
	mac=52:54:00:5e:c0:0$SROCE_ROLE
	for d in /sys/class/net/*; do
		read -r addr <"$d/address" || continue
		[ "$addr" = "$mac" ] && dev=${d##*/}
	done
	[ -n "$dev" ] || sroce_fail "no NIC with MAC $mac"
	[ "$dev" = wire0 ] || /usr/sbin/ip link set "$dev" name wire0
	/usr/sbin/ip link set wire0 mtu "$mtu"
	/usr/sbin/ip addr add "$SROCE_LOCAL4/24" dev wire0
	/usr/sbin/ip -6 addr add "$SROCE_LOCAL6/64" dev wire0 nodad
	/usr/sbin/ip link set wire0 up
	sroce_wait_link_up wire0
	sroce_peer_sync wire-up
	ping -q -c 1 -W 5 "$SROCE_PEER4" >/dev/null || sroce_fail "no IPv4 path to $SROCE_PEER4"
	ping -q -c 1 -W 5 "$SROCE_PEER6" >/dev/null || sroce_fail "no IPv6 path to $SROCE_PEER6"
	sroce_log "wire0 up (MTU $mtu): $SROCE_LOCAL4/$SROCE_LOCAL6, peer reachable"
}

# sroce_peer_sync NAME [SECONDS]: wait until the peer has reached the
# point NAME too (default limit 300 s); fails at once if the peer's script
# has ended or the peer guest was killed.
sroce_peer_sync() {
	local name=$1 limit=${2:-300} dir=$SROCE_SHARED _
	: >"$dir/sync-$name.$SROCE_ROLE"
	for _ in $(seq 1 $((limit * 5))); do
		[ -e "$dir/sync-$name.$SROCE_PEER_ROLE" ] && return 0
		[ ! -e "$dir/exit-$SROCE_PEER_ROLE" ] ||
			sroce_fail "peer's script ended (exit $(cat "$dir/exit-$SROCE_PEER_ROLE")) before '$name'"
		[ ! -e "$dir/killed-$SROCE_PEER_ROLE" ] || sroce_fail "peer was killed before '$name'"
		sleep 0.2
	done
	sroce_fail "peer did not reach '$name' within ${limit}s"
}

# sroce_peer_put KEY VALUE / sroce_peer_get KEY [SECONDS]: pass a value to
# the peer through the shared directory.
sroce_peer_put() {
	printf '%s\n' "$2" >"$SROCE_SHARED/.val-$1.$SROCE_ROLE"
	mv "$SROCE_SHARED/.val-$1.$SROCE_ROLE" "$SROCE_SHARED/val-$1.$SROCE_ROLE"
}

sroce_peer_get() {
	local f=$SROCE_SHARED/val-$1.$SROCE_PEER_ROLE _
	for _ in $(seq 1 $((${2:-300} * 5))); do
		if [ -e "$f" ]; then
			cat "$f"
			return 0
		fi
		[ ! -e "$SROCE_SHARED/exit-$SROCE_PEER_ROLE" ] ||
			sroce_fail "peer's script ended before it gave '$1'"
		sleep 0.2
	done
	sroce_fail "peer gave no '$1' within ${2:-300}s"
}

# sroce_kill_peer: have the host kill the peer guest's QEMU now (as if its
# power failed) and wait until it is gone.
sroce_kill_peer() {
	local _
	: >"$SROCE_SHARED/kill-$SROCE_PEER_ROLE"
	for _ in $(seq 1 150); do
		[ -e "$SROCE_SHARED/killed-$SROCE_PEER_ROLE" ] && return 0
		sleep 0.2
	done
	sroce_fail "the host did not kill guest $SROCE_PEER_ROLE"
}
