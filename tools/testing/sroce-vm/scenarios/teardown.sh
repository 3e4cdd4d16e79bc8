#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Teardown under traffic. Two sroce devices on a veth pair, and
# sroce_teardown (tools/testing/sroce-teardown) keeping RDMA WRITEs and
# READs of 16 KiB in flight between them from one process; then, N times
# each:
#
#   rdma-link-del  "rdma link del sroce0" under the live process
#   ip-link-del    "ip link del veth0" (both devices go) under it
#   rmmod          "rmmod sroce" refused while the process has the devices
#                  open, traffic unharmed; clean once it closed them (it
#                  lives on); the module reloaded
#   kill-9         the process killed mid-transfer; its objects gone
#   churn          create, traffic, destroy in flight: QP or MR first
#                  with WRITEs and READs outstanding, a CQ refusing to go
#                  under its QP, CQs destroyed with an event pending
#
# A removal must return within BOUND seconds (10, 20 on the debug
# kernel) while the process still lives (ib_uverbs disassociates the
# process instead of waiting for it, sroce_disassociate_ucontext()); the
# process's next verbs call on the removed device must fail with EIO, and
# it reads, writes and unmaps every page of its old ring mappings, which
# must not hurt. The RDMA resource counts are back at their baseline after
# each kind, and after each kill -9.
# N is 10 at the small volume (make check), 100 at the full volume
# (make check-full). One "ok"/"not ok" line per kind in teardown.txt.
#
# teardown-local.sh runs the same on one host (TEARDOWN_TOPO=host): both
# ends of the traffic on sroce1, so that every packet is a same-host
# delivery (net/sroce_xmit.c) whose payload pages the receiving side
# reads while the sender's QPs, MRs and link go away under it. Its kinds
# are rdma-link-del (sroce1, both ends at once), kill-9 and churn.
#
# Both kernels report a task blocked for 30 s (the hung-task detector),
# but BOUND comes first: a removal that does not return within it fails
# the scenario at once, with the stacks.
# Measured (VM wall time, 2-core host shared with other VMs): small
# volume 96 s stock, 329 s debug (at a load of 8); full volume 288 s
# stock, 1,157 s debug (at a load of 2). The timeout is for the latter.
#
# sroce-vm: timeout 4500
# sroce-vm: build-prog sroce-teardown

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=${SROCE_SCENARIO_NAME:-teardown}
TOPO=${TEARDOWN_TOPO:-veth}
# the two ends of the traffic: devices and GID indexes
if [ "$TOPO" = host ]; then
	ENDS=(sroce1 1 sroce1 1)
else
	ENDS=(sroce0 1 sroce1 1)
fi

# Measured: removals take 0.2-1.6 s on the stock kernel, up to 5 s on the
# debug kernel on a loaded 2-core host; one that waits for the process
# never returns.
BOUND=10
[ "${SROCE_KERNEL:-}" = debug ] && BOUND=20
PROG=$SROCE_PROGS/sroce_teardown
OUT=$SROCE_RESULTS/teardown.txt
READY=/tmp/teardown-ready
: >"$OUT"
tap=0
failed=()

iters=100
sroce_small && iters=10

# Every fork and exec costs under TCG, tens of milliseconds on the debug
# kernel: the loops below wait with builtins (nap), time with
# EPOCHREALTIME and read sysfs rather than run rdma and grep.
rm -f /tmp/teardown-nap
mkfifo /tmp/teardown-nap
exec 9<>/tmp/teardown-nap
nap() { read -r -t "$1" -u 9 _ || true; }

# usecs: EPOCHREALTIME in microseconds
usecs() { local now=${EPOCHREALTIME/[.,]/}; echo "$((10#$now))"; }

# set_elapsed T0: ELAPSED is the time since T0 (usecs), as seconds.cc
set_elapsed() {
	local d=$(($(usecs) - $1))
	printf -v ELAPSED '%d.%02d' $((d / 1000000)) $((d % 1000000 / 10000))
}

# Both kernels report a task blocked for 30 s (run.sh's command line, the
# debug kernel's debug.config); the bounds below fail sooner.
[ "$(cat /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null)" = 30 ] ||
	sroce_fail "the hung-task detector is not at 30 s on this kernel"
sroce_log "hung-task detector at 30 s"

result() {	# result OK|FAIL TEXT
	tap=$((tap + 1))
	if [ "$1" = OK ]; then
		echo "ok $tap - $2" | tee -a "$OUT"
	else
		echo "not ok $tap - $2" | tee -a "$OUT"
		failed+=("$2")
	fi
}

# wait_exit SECONDS PID: PID, a child of this shell, exits within SECONDS;
# sets ELAPSED (seconds.cc) and returns its status. Exited means a zombie
# or gone (reaped already): kill -0 succeeds on a zombie, and bash reaps
# only now and then while it runs builtins alone. A process still running
# then is stuck in the kernel: show where, and fail the scenario at once.
wait_exit() {
	local limit=$1 pid=$2 t0 st="" i
	t0=$(usecs)
	for ((i = 0; i < limit * 20; i++)); do
		st=""
		read -r _ _ st _ 2>/dev/null <"/proc/$pid/stat" || break
		[ "$st" = Z ] && break
		nap 0.05
	done
	if [ -n "$st" ] && [ "$st" != Z ]; then
		sroce_log "process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) still running after $limit s, state $st:"
		cat "/proc/$pid/stack" 2>/dev/null
		echo w >/proc/sysrq-trigger
		result FAIL "process $pid did not exit within $limit s"
		sroce_fail "process $pid hangs"
	fi
	set_elapsed "$t0"
	# a job killed by a signal: no "Killed" notice on the console
	{ wait "$pid"; } 2>/dev/null
}

# bounded SECONDS COMMAND...: run COMMAND, which must return within
# SECONDS (see wait_exit); its status.
bounded() {
	local limit=$1
	shift
	"$@" &
	wait_exit "$limit" $!
}

# alive PID: PID runs (not a zombie)
alive() {
	local st=""
	read -r _ _ st _ 2>/dev/null <"/proc/$1/stat"
	[ -n "$st" ] && [ "$st" != Z ]
}


# link_ready DEV ADDR: DEV's port is ACTIVE with ADDR's IPv4-mapped GID
# at index 1 (the GID indexes of ENDS), within BOUND seconds.
link_ready() {
	local port=/sys/class/infiniband/$1/ports/1 want st gid i
	sroce_gid_of "$2"
	want=$SROCE_GID
	for ((i = 0; i < BOUND * 20; i++)); do
		st="" gid=""
		read -r st 2>/dev/null <"$port/state"
		read -r gid 2>/dev/null <"$port/gids/1"
		[[ $st == *ACTIVE* ]] && [ "$gid" = "$want" ] && return 0
		nap 0.05
	done
	sroce_fail "$1 not ready: state '$st', GID 1 '$gid'"
}

links_up() {	# links_up DEV...: rdma link add sroceN on vethN, ready
	local d
	for d in "$@"; do
		rdma link add "sroce$d" type sroce netdev "veth$d" ||
			sroce_fail "rdma link add sroce$d"
	done
	for d in "$@"; do
		link_ready "sroce$d" "10.0.0.$((d + 1))"
	done
}

# pair_up: veth0 10.0.0.1 <-> veth1 10.0.0.2 with fixed MACs and
# permanent neighbours (as sroce_rdma_pair, IPv4 only, in one ip -batch;
# the sysctls are set once for all: conf.default), sroce0 and sroce1 on
# them; GID index 1 of each is its IPv4 address.
pair_up() {
	/usr/sbin/ip -batch - <<-EOF || sroce_fail "veth pair"
		link add veth0 address 02:00:0a:00:00:01 type veth peer name veth1 address 02:00:0a:00:00:02
		addr add 10.0.0.1/24 dev veth0
		addr add 10.0.0.2/24 dev veth1
		neigh replace 10.0.0.1 lladdr 02:00:0a:00:00:01 dev veth1 nud permanent
		neigh replace 10.0.0.2 lladdr 02:00:0a:00:00:02 dev veth0 nud permanent
		link set veth0 up
		link set veth1 up
	EOF
	links_up 0 1
}

# start_traffic: sroce_teardown traffic in the background (TPID), once
# its first completions arrived; for kill-9, which needs a process of
# its own each time.
start_traffic() {
	rm -f "$READY"
	"$PROG" traffic "${ENDS[@]}" "$READY" >/tmp/teardown-traffic.txt 2>&1 &
	TPID=$!
	local i
	for ((i = 0; i < 400; i++)); do
		[ -e "$READY" ] && return 0
		alive "$TPID" || break
		nap 0.05
	done
	cat /tmp/teardown-traffic.txt
	return 1
}

# The other kinds share one sroce_teardown serve process (a coprocess):
# an exec costs seconds on the debug kernel. td_start has it open both
# devices afresh, connect and pump; td_report has it stop, print its state
# line, which must match REGEX, and close both contexts.
td_spawn() {
	coproc TD { exec "$PROG" serve "${ENDS[@]}" 2>&1; }
	SPID=$TD_PID
}

# td_expect WORD: the serve process's next line is WORD, within 20 s
td_expect() {
	local line=""
	read -r -t 20 -u "${TD[0]}" line || true
	[ "$line" = "$1" ] && return 0
	echo "serve: '$line', expected '$1'"
	return 1
}

td_start() {
	echo start >&"${TD[1]}"
	td_expect ready
}

td_report() {
	local line=""
	echo report >&"${TD[1]}"
	read -r -t "$BOUND" -u "${TD[0]}" line || true
	LAST_STATE=$line
	[[ $line =~ $1 ]] || { echo "state: '$line', expected /$1/"; return 1; }
	td_expect closed
}

# clean_state: the resource counts are back at the baseline (the
# process's objects are destroyed at its exit, perhaps a little later).
clean_state() {
	local i now
	for ((i = 0; i < BOUND * 10; i++)); do
		now=$(sroce_res_counts)
		[ "$now" = "$BASELINE" ] && return 0
		nap 0.1
	done
	echo "resources: '$now', baseline '$BASELINE'"
	return 1
}

# run_kind NAME FUNCTION: FUNCTION iters times (it returns non-zero on a
# failure, after printing why); one result line with the slowest teardown.
run_kind() {
	local name=$1 fn=$2 i t0 max=0 us
	MAXT=0.00
	t0=$SECONDS
	for ((i = 1; i <= iters; i++)); do
		if ! "$fn" "$i"; then
			result FAIL "$name: iteration $i of $iters"
			return 0
		fi
		us=$((10#${ELAPSED/./}))
		((us > max)) && max=$us MAXT=$ELAPSED
	done
	# a leak of any iteration would still show: counted once per kind
	if ! clean_state; then
		result FAIL "$name: resources left after $iters iterations"
		return 0
	fi
	result OK "$name x$iters, slowest teardown $MAXT s, $((SECONDS - t0)) s"
}

# link_del DEV STATE N...: "rdma link del DEV" under the live process,
# whose state line must then match STATE; sroceN added back for each N.
link_del() {
	local dev=$1 state=$2
	shift 2
	td_start || return 1
	bounded "$BOUND" rdma link del "$dev" || { echo "rdma link del failed"; return 1; }
	# the process outlives its device: nothing waited for it
	alive "$SPID" || { echo "process gone"; return 1; }
	[ ! -e "/sys/class/infiniband/$dev" ] || { echo "$dev left"; return 1; }
	td_report "$state" || return 1
	links_up "$@"
}

one_rdma_link_del() {
	link_del sroce0 'sroce0=EIO sroce1=ok .* touched [1-9]' 0
}

# One host: the only device goes, and both ends with it.
one_local_link_del() {
	link_del sroce1 'sroce1=EIO sroce1=EIO .* touched [1-9]' 1
}

one_ip_link_del() {
	local i
	td_start || return 1
	bounded "$BOUND" /usr/sbin/ip link del veth0 || { echo "ip link del failed"; return 1; }
	alive "$SPID" || { echo "process gone"; return 1; }
	# the devices go in ib_core's unregistration work, just after
	for ((i = 0; i < BOUND * 20; i++)); do
		[ -e /sys/class/infiniband/sroce0 ] ||
			[ -e /sys/class/infiniband/sroce1 ] || break
		nap 0.05
	done
	if [ -e /sys/class/infiniband/sroce0 ] || [ -e /sys/class/infiniband/sroce1 ]; then
		echo "an sroce device is left"
		return 1
	fi
	td_report 'sroce0=EIO sroce1=EIO .* touched [1-9]' || return 1
	pair_up
}

# rmmod is refused while the process has the devices open, traffic going
# on unharmed; once it closed them (it lives on), rmmod is clean.
one_rmmod() {
	local rc
	td_start || return 1
	bounded "$BOUND" rmmod sroce 2>/dev/null
	rc=$?
	[ "$rc" != 0 ] || { echo "rmmod sroce succeeded under a live user"; return 1; }
	[ -d /sys/module/sroce ] || { echo "sroce unloaded"; return 1; }
	td_report 'sroce0=ok sroce1=ok completions [0-9]+ errors 0 touched 0' || {
		# why the traffic failed: the transport's counters
		rdma statistic show link sroce0/1
		rdma statistic show link sroce1/1
		return 1
	}
	bounded "$BOUND" rmmod sroce || { echo "rmmod sroce refused after the user closed"; return 1; }
	# its dependencies stay loaded: insmod alone brings it back
	/usr/sbin/insmod "$SROCE_KO" || { echo "insmod"; return 1; }
	links_up 0 1
}

one_kill9() {
	start_traffic || return 1
	kill -9 "$TPID"
	wait_exit "$BOUND" "$TPID"
	clean_state || return 1
}

sroce_modprobe ib_core ib_uverbs veth
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
for c in all default; do
	sysctl -qw "net.ipv4.conf.$c.accept_local=1" "net.ipv4.conf.$c.rp_filter=0"
done
pair_up
td_spawn
BASELINE=$(sroce_res_counts)
sroce_log "baseline resources: $BASELINE"
sroce_log "$iters iterations of each kind, bound $BOUND s, ends ${ENDS[*]}"

if [ "$TOPO" = host ]; then
	run_kind rdma-link-del one_local_link_del
	sroce_log "rdma-link-del: last $LAST_STATE"
else
	run_kind rdma-link-del one_rdma_link_del
	sroce_log "rdma-link-del: last $LAST_STATE"
	run_kind ip-link-del one_ip_link_del
	sroce_log "ip-link-del: last $LAST_STATE"
	run_kind rmmod one_rmmod
	sroce_log "rmmod: last $LAST_STATE"
fi
echo quit >&"${TD[1]}"
wait_exit "$BOUND" "$SPID" || result FAIL "serve process: exit status $?"
run_kind kill-9 one_kill9

t0=$SECONDS
if bounded $((iters * 3 + 30)) "$PROG" churn "${ENDS[@]}" "$iters" && clean_state; then
	result OK "churn x$iters (destroy in flight), $((SECONDS - t0)) s"
else
	result FAIL "churn x$iters"
fi

nfail=${#failed[@]}
sroce_pair_remove
if [ ${#failed[@]} = "$nfail" ] && [ ! -d /sys/module/sroce ]; then
	result OK "links deleted and sroce unloaded at the end"
else
	result FAIL "end: ${failed[*]:$nfail}"
fi

[ ${#failed[@]} = 0 ] || sroce_fail "failed: ${failed[*]}"
sroce_log "teardown: all passed"
