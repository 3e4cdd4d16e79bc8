#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run guest scenarios of sroce in QEMU, one VM boot per scenario and kernel.
#
# Usage: tools/testing/sroce-vm/run.sh [options] SCENARIO...
#   SCENARIO            a name from scenarios/ (smoke, demo, ...) or a path
#                       to a bash script; A+B+C runs the single-guest
#                       scenarios A, B and C one after the other in one
#                       boot (a boot group, see below)
#   --kernel K          stock, debug, or both as "stock,debug" (default stock)
#   --timeout S         per-scenario time limit inside the guest (default: the
#                       scenario's "# sroce-vm: timeout S" line, else 300)
#   --boot-timeout S    until the guest's init is up (stock 120, debug 300)
#   --total-timeout S   for the whole invocation (default 7200)
#   --cpus N            vCPUs (default 2, or 1 with --jobs 2 or more;
#                       two-guest scenarios: 1 each)
#   --jobs N            run up to N scenario VMs of one kernel at a time
#                       (default 1); a two-guest scenario takes two
#   --mem MIB           guest memory (default: the scenario's
#                       "# sroce-vm: mem MIB" line, else 2048)
#   --accel A           auto|tcg|kvm (default auto: KVM only if it works)
#   --append ARGS       extra kernel command-line arguments
#   --volume V          full (default) or small: how much traffic each
#                       scenario moves (SROCE_VOLUME in the guest; small is
#                       the debug sweep of make check, see tiers)
#   --results DIR       run directory (default $SROCE_CACHE/vm-runs/<time>)
#   --no-build          do not build sroce.ko (SROCE_KO is empty)
#   --show-console      print every console log, not only those of failures
#
# Stdout gets exactly one line per scenario and kernel:
#   PASS: <scenario> [<kernel>]
#   FAIL: <scenario> [<kernel>] (<reason>)
# Progress, timings and failing console logs go to stderr.  Per run
# directory: <kernel>/<scenario>/{console.log,dmesg.txt,qemu.log,job.env,
# results/}, summary.txt, and times.txt ("<scenario> <kernel> <seconds>"
# per scenario, its VMs' wall time including module builds).
# Exit: 0 all passed, 1 a scenario failed, 2 usage or setup error.
#
# A boot group (A+B+C) saves the boot and the kmemleak scans of all but
# one scenario: the guest runs each in turn, taking down between them what
# one may have left (guest-reset.sh: processes, RDMA links, netdevs, the
# sroce and rdma_rxe modules), then scans once.  Each member gets its own
# line, judged on its exit and on the splats printed while it ran; the
# group gets one more, "PASS: A+B+C [<kernel>]", for the boot as a whole
# (boot, kmemleak, every splat of the boot).  Its time limit is the sum of
# the members', its memory their largest.  Member results are in
# <kernel>/A+B+C/<member>/, with a <kernel>/<member> link to each.
#
# A boot whose first kernel splat comes before the guest's init started
# the scenario (an early-boot report under TCG, before any sroce code ran)
# is run once more, and stderr says so; a second such boot, or any splat
# once the scenario has started, fails.
#
# A scenario with a "# sroce-vm: hosts 2" line runs on two guests, "a" and
# "b", of one vCPU each, joined by one virtual Ethernet link and nothing
# else: QEMU's stream netdev over a unix socket (a listens, b connects).
# Both run the same script (SROCE_ROLE tells which they are) and meet in a
# shared directory (SROCE_SHARED); each has its own job directory
# <scenario>/{a,b}/ and is judged on its own.  A guest that writes
# kill-a or kill-b into the shared directory has the host kill that guest's
# QEMU at once (a peer that vanishes mid-transfer); the killed guest is
# judged on the splats it printed before, and killed-<role> appears.
#
# A scenario FAILs on a non-zero exit, a timeout, a guest that dies or hangs,
# and on any kernel splat in its console or dmesg (see SPLAT_PATTERNS in
# lib.sh; "# sroce-vm: ignore-splat ERE" lines in a scenario exempt lines).

set -euo pipefail

# shellcheck source=tools/testing/sroce-vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNELS=stock
TIMEOUT=""
BOOT_TIMEOUT=""
TOTAL_TIMEOUT=7200
MEM=""
VM_MEM=2048
ACCEL=auto
RUN=""
BUILD_KO=1
SHOW_CONSOLE=0
APPEND=""
SCENARIOS=()
VOLUME=full

QEMU_PID=""
QEMU_EXTRA=(-nic none)
VM_CPUS=""
JOBS=1
FAILED=0
declare -A JOB_SLOTS=()
FORCE_BZIMAGE=0

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) KERNELS=${2:?}; shift ;;
		--timeout) TIMEOUT=${2:?}; shift ;;
		--boot-timeout) BOOT_TIMEOUT=${2:?}; shift ;;
		--total-timeout) TOTAL_TIMEOUT=${2:?}; shift ;;
		--cpus) VM_CPUS=${2:?}; shift ;;
		--jobs) JOBS=${2:?}; shift ;;
		--mem) MEM=${2:?}; shift ;;
		--accel) ACCEL=${2:?}; shift ;;
		--append) APPEND+=" ${2:?}"; shift ;;
		--volume) VOLUME=${2:?}; shift ;;
		--results) RUN=${2:?}; shift ;;
		--no-build) BUILD_KO=0 ;;
		--show-console) SHOW_CONSOLE=1 ;;
		-h|--help) usage ;;
		-*) vm_say "unknown option $1"; usage ;;
		*) SCENARIOS+=("$1") ;;
		esac
		shift
	done
	[ ${#SCENARIOS[@]} -gt 0 ] || { vm_say "no scenario given"; usage; }
	[[ $JOBS =~ ^[1-9][0-9]*$ ]] || vm_die "--jobs takes a positive number"
	case $VOLUME in full|small) ;; *) vm_die "--volume takes full or small" ;; esac
	# one vCPU a VM when VMs run side by side: two cores, no overcommit
	if [ -z "$VM_CPUS" ]; then
		if [ "$JOBS" -gt 1 ]; then VM_CPUS=1; else VM_CPUS=2; fi
	fi
	KERNELS=${KERNELS//,/ }
}

resolve_scenario() {
	local s=$1 m out=()
	if [[ $s == *+* ]]; then
		for m in ${s//+/ }; do out+=("$(resolve_scenario "$m")"); done
		m="${out[*]}"
		echo "${m// /+}"
		return
	fi
	if [ -f "$VM_DIR/scenarios/$s.sh" ]; then
		echo "$VM_DIR/scenarios/$s.sh"
	elif [ -f "$s" ]; then
		realpath "$s"
	else
		vm_die "no scenario '$s' (not in $VM_DIR/scenarios/, not a file)"
	fi
}

# shellcheck disable=SC2317 # called by trap
cleanup() {
	if [ -n "$QEMU_PID" ]; then kill "$QEMU_PID" 2>/dev/null || true; fi
	if [ ${#JOB_SLOTS[@]} -gt 0 ]; then kill "${!JOB_SLOTS[@]}" 2>/dev/null || true; fi
}

# ---------------------------------------------------------------------------
# QEMU

pick_accel() {
	case $ACCEL in
	tcg) ACCEL_ARGS=(-accel "tcg,thread=multi") ;;
	kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
	auto)
		if kvm_works; then
			ACCEL_ARGS=(-accel kvm -cpu host)
		else
			ACCEL_ARGS=(-accel "tcg,thread=multi")
		fi ;;
	*) vm_die "--accel must be auto, tcg or kvm" ;;
	esac
	vm_say "accelerator: ${ACCEL_ARGS[*]}"
}

# KVM is used only if a kernel really boots with it, with the CPU model
# it would get: some hosts (nested virtualisation) open /dev/kvm and
# create a VM, then abort once "-cpu host" vCPUs start (an MSR they
# refuse), or run them without a single instruction of the guest ever
# printing. The stock kernel must reach its first console line; the
# verdict is kept for the host's boot (boot_id), since each run.sh asks.
kvm_works() {
	local image verdict boot
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	verdict=$SROCE_CACHE/kvm-verdict
	if [ -f "$verdict" ] && [ "$(sed -n 1p "$verdict")" = "$boot" ]; then
		[ "$(sed -n 2p "$verdict")" = yes ]
		return
	fi
	image=$(find "$SROCE_CACHE/stock" -mindepth 2 -maxdepth 2 -name vmlinux 2>/dev/null | head -n 1)
	[ -n "$image" ] || return 1	# nothing to boot yet: TCG
	if timeout 30 qemu-system-x86_64 -accel kvm -cpu host -machine pc \
		-nodefaults -display none -m 256 -no-reboot -serial stdio \
		-kernel "$image" -append "console=ttyS0 panic=-1" </dev/null 2>/dev/null |
		grep -q -m 1 'Linux version'; then
		printf '%s\nyes\n' "$boot" >"$verdict"
		return 0
	fi
	printf '%s\nno\n' "$boot" >"$verdict"
	vm_say "KVM opens but a guest never printed under it: using TCG"
	return 1
}

# start_qemu JOBDIR KERNEL_IMAGE INITRD TOKEN: CPU_ARGS (from a scenario's
# "# sroce-vm: cpu MODEL" line) applies under TCG only.
start_qemu() {
	local job=$1 image=$2 initrd=$3 token=$4 cmdline cpu=()
	if [ -n "${CPU_MODEL:-}" ] && [[ " ${ACCEL_ARGS[*]} " != *" -cpu "* ]]; then
		cpu=(-cpu "$CPU_MODEL")
	fi
	# A stalled vCPU under TCG must not look like a stall of the guest (RCU
	# at 60 s, soft lockups at 2 x 30 s); a task blocked for 30 s is
	# reported (the stock kernel's default is 120) and fails the run.
	cmdline="console=ttyS0,115200 panic=-1 oops=panic printk.devkmsg=on"
	cmdline+=" rcupdate.rcu_cpu_stall_timeout=60 watchdog_thresh=30"
	cmdline+=" sysctl.kernel.hung_task_timeout_secs=30"
	cmdline+=" sroce.token=$token${K_CMDLINE:+ $K_CMDLINE}$APPEND"
	qemu-system-x86_64 -nodefaults -machine pc "${ACCEL_ARGS[@]}" "${cpu[@]}" \
		-smp "$VM_CPUS" -m "$VM_MEM" "${QEMU_EXTRA[@]}" -display none -vga none -monitor none \
		-no-reboot -serial "file:$job/console.raw" \
		-kernel "$image" -initrd "$initrd" -append "$cmdline" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$K_MODTREE,mount_tag=modtree,security_model=none,readonly=on" \
		-virtfs "local,path=$SROCE_TOP,mount_tag=top,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$job,mount_tag=job,security_model=none" \
		</dev/null >"$job/qemu.log" 2>&1 &
	QEMU_PID=$!
}

# wait_marker FILE STRING DEADLINE [KILLFILE]: 0 found, 1 deadline, 2 QEMU
# exited, 3 KILLFILE appeared.
wait_marker() {
	while :; do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		[ -z "${4:-}" ] || [ ! -e "$4" ] || return 3
		if ! kill -0 "$QEMU_PID" 2>/dev/null; then
			grep -qF -- "$2" "$1" 2>/dev/null && return 0
			return 2
		fi
		[ "$SECONDS" -lt "$3" ] || return 1
		sleep 0.3
	done
}

stop_qemu() {
	local _
	for _ in $(seq 1 "${1:-0}"); do
		kill -0 "$QEMU_PID" 2>/dev/null || break
		sleep 1
	done
	kill "$QEMU_PID" 2>/dev/null || true
	wait "$QEMU_PID" 2>/dev/null || true
	QEMU_PID=""
}

# ---------------------------------------------------------------------------
# One scenario on the resolved kernel.

# group_members SCENARIO: the scenario paths of a boot group, one a line
# (a plain scenario is a group of one).
group_members() {
	tr '+' '\n' <<<"$1"
}

# member_name PATH
member_name() {
	basename "$1" .sh
}

# write_members JOB SCENARIO TIMEOUT: the SCENARIO_<i>_* lines of job.env,
# which init.sh runs in order.  A group's members have their results in
# JOB/<member>/results, a plain scenario in JOB/results.
write_members() {
	local job=$1 scenario=$2 timeout=$3 i=0 m name results
	while IFS= read -r m; do
		i=$((i + 1))
		name=$(member_name "$m")
		results=$job/results
		if [[ $scenario == *+* ]]; then
			results=$job/$name/results
			timeout=$(scenario_timeout "$m")
		fi
		mkdir -p "$results"
		echo "SCENARIO_${i}_NAME=$(shq "$name")"
		echo "SCENARIO_${i}_PATH=$(shq "$(guest_scenario_path "$m" "$job")")"
		echo "SCENARIO_${i}_TIMEOUT=$(shq "$timeout")"
		echo "SCENARIO_${i}_RESULTS=$(shq "$results")"
	done < <(group_members "$scenario")
	echo "SCENARIO_COUNT=$i"
}

# write_job_env JOB SCENARIO NAME TIMEOUT [ROLE SHARED]
write_job_env() {
	local job=$1 scenario=$2 name=$3 timeout=$4 role=${5:-} shared=${6:-} ko=""
	if [ -n "$KO_PATH" ]; then
		cp "$KO_PATH" "$job/sroce.ko"
		ko=$job/sroce.ko
	fi
	{
		echo "SROCE_KERNEL=$(shq "$K_NAME")"
		echo "SROCE_RELEASE=$(shq "$K_RELEASE")"
		echo "SROCE_KO=$(shq "$ko")"
		echo "SROCE_KO_ERROR=$(shq "$KO_ERROR")"
		echo "SROCE_RESULTS=$(shq "$job/results")"
		echo "SROCE_TOP=$(shq "$SROCE_TOP")"
		echo "SROCE_VM_LIB=$(shq "$VM_DIR/guest-lib.sh")"
		echo "SROCE_MODULES=$(shq "$job/modules")"
		echo "SROCE_PROGS=$(shq "$job/progs")"
		write_members "$job" "$scenario" "$timeout"
		echo "JOB_DIR=$(shq "$job")"
		echo "SROCE_ROLE=$(shq "$role")"
		echo "SROCE_SHARED=$(shq "$shared")"
		echo "SROCE_VOLUME=$(shq "$VOLUME")"
		echo "KMEMLEAK=$([ "$K_NAME" = debug ] && echo 1 || echo 0)"
	} >"$job/job.env"
}

# Scenarios outside the checkout are copied into the job directory, which
# the guest sees at the same path.
guest_scenario_path() {
	local scenario=$1 job=$2 name
	name=$(member_name "$scenario")
	case $scenario in
	"$SROCE_TOP"/*) echo "$scenario" ;;
	*) cp "$scenario" "$job/scenario-$name.sh"; echo "$job/scenario-$name.sh" ;;
	esac
}

# "# sroce-vm: build-module DIR" (DIR relative to this directory): build it
# for this kernel and put its .ko files in $SROCE_MODULES.
build_scenario_modules() {
	local scenario=$1 job=$2 dir out
	mkdir -p "$job/modules"
	while IFS= read -r dir; do
		out=$(build_module "$VM_DIR/$dir") || return 1
		cp "$out"/*.ko "$job/modules/"
	done < <(scenario_header "$scenario" build-module)
}

# "# sroce-vm: build-prog DIR" (DIR relative to tools/testing): build it on
# the host and put its executables in $SROCE_PROGS.
build_scenario_progs() {
	local scenario=$1 job=$2 dir out f
	mkdir -p "$job/progs"
	while IFS= read -r dir; do
		out=$(build_prog "$VM_DIR/../$dir") || return 1
		while IFS= read -r f; do
			cp "$f" "$job/progs/"
		done < <(find "$out" -maxdepth 1 -type f -perm -u+x)
	done < <(scenario_header "$scenario" build-prog)
}

# scenario_mem SCENARIO: its "mem" line (a group: its members' largest)
scenario_mem() {
	local m max=0
	if [ -n "$MEM" ]; then echo "$MEM"; return; fi
	while IFS= read -r m; do
		m=$(scenario_header "$m" mem | head -n 1)
		[ "${m:-2048}" -le "$max" ] || max=${m:-2048}
	done < <(group_members "$1")
	echo "$max"
}

# scenario_timeout SCENARIO: its "timeout" line, or --timeout (a group:
# the members' sum)
scenario_timeout() {
	local t sum=0
	while IFS= read -r t; do
		t=$(scenario_header "$t" timeout | head -n 1)
		sum=$((sum + ${TIMEOUT:-${t:-300}}))
	done < <(group_members "$1")
	echo "$sum"
}

# boot_vm JOB INITRD TOKEN: starts QEMU and waits for init; falls back to
# the bzImage once if the PVH vmlinux does not start.  Sets BOOT_STATE
# (ok|timeout|died) and BOOT_TIME.
boot_vm() {
	local job=$1 initrd=$2 token=$3 image t0 deadline rc=0
	image=$K_VMLINUX
	if [ -z "$image" ] || [ "$FORCE_BZIMAGE" = 1 ]; then image=$K_BZIMAGE; fi
	t0=$(now)
	deadline=$((SECONDS + ${BOOT_TIMEOUT:-$K_BOOT_TIMEOUT}))
	[ "$deadline" -le "$TOTAL_DEADLINE" ] || deadline=$TOTAL_DEADLINE
	start_qemu "$job" "$image" "$initrd" "$token"
	wait_marker "$job/console.raw" "SROCE-BOOTED $token" "$deadline" || rc=$?
	if [ "$rc" = 2 ] && [ "$image" = "$K_VMLINUX" ] && [ ! -s "$job/console.raw" ]; then
		vm_say "QEMU did not start the PVH vmlinux ($(head -c 200 "$job/qemu.log")); using the bzImage"
		FORCE_BZIMAGE=1
		stop_qemu
		boot_vm "$@"
		return
	fi
	BOOT_TIME=$(elapsed "$t0")
	case $rc in
	0) BOOT_STATE=ok ;;
	1) BOOT_STATE=timeout ;;
	*) BOOT_STATE=died ;;
	esac
}

# judge JOB SCENARIO NAME TOKEN TIMEOUT -> prints the failure reason, or
# nothing for a pass.
judge() {
	local job=$1 scenario=$2 name=$3 token=$4 timeout=$5 console=$1/console.log
	local reasons=() rc fatal splat ignores=()
	fatal=$(sed -n "s/^SROCE-FATAL $token //p" "$console" | head -n 1)
	[ -z "$fatal" ] || reasons+=("guest init: $fatal")
	case $BOOT_STATE in
	timeout) reasons+=("boot timeout after ${BOOT_TIME}s") ;;
	died) [ -n "$fatal" ] || reasons+=("VM died during boot") ;;
	esac
	if [ "$BOOT_STATE" = ok ] && [ "$WAIT_STATE" != killed ] && [[ $scenario == *+* ]]; then
		judge_group_end "$scenario" "$token" "$timeout" "$console" reasons
	elif [ "$BOOT_STATE" = ok ] && [ "$WAIT_STATE" != killed ]; then
		rc=$(sed -n "s/^SROCE-RESULT $token $name \([0-9]*\)$/\1/p" "$console" | tail -n 1)
		if [ -z "$rc" ]; then
			reasons+=("$(no_result "$console" "the scenario" "$timeout")")
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			reasons+=("timeout after ${timeout}s")
		elif [ "$rc" != 0 ]; then
			reasons+=("exit $rc")
		elif ! grep -q "^SROCE-DONE $token" "$console"; then
			reasons+=("post-scenario checks did not finish")
		fi
	fi
	mapfile -t ignores < <(scenario_header "$scenario" ignore-splat)
	splat=$(splat_lines "$console" "$job/dmesg.txt" "${ignores[@]}" | head -n 1)
	[ -z "$splat" ] || reasons+=("kernel splat: ${splat:0:160}")
	if [ ${#reasons[@]} -gt 0 ]; then
		local IFS=$'\x1f' joined
		joined="${reasons[*]}"
		echo "${joined//$'\x1f'/; }"
	fi
}

# no_result CONSOLE WHAT TIMEOUT: why WHAT (a scenario) printed no result.
no_result() {
	if grep -q 'Kernel panic' "$1"; then
		echo "kernel panic during $2"
	elif [ "$WAIT_STATE" = timeout ]; then
		echo "VM hung during $2: no result within ${3}s + grace"
	else
		echo "VM died during $2"
	fi
}

# judge_group_end SCENARIO TOKEN TIMEOUT CONSOLE REASONS: a boot group's
# own verdict past its boot: every member finished, then the post-scenario
# checks did (the members' exits are their own lines' business).
judge_group_end() {
	local scenario=$1 token=$2 timeout=$3 console=$4 m name
	local -n out=$5
	while IFS= read -r m; do
		name=$(member_name "$m")
		grep -q "^SROCE-RESULT $token $name [0-9]*$" "$console" && continue
		out+=("$(no_result "$console" "$name" "$timeout")")
		return
	done < <(group_members "$scenario")
	grep -q "^SROCE-DONE $token" "$console" || out+=("post-scenario checks did not finish")
}

# judge_member JOB MEMBER TOKEN -> the failure reason of one scenario of a
# boot group, or nothing: its exit, and the splats of the console lines
# printed between its start and its result.
judge_member() {
	local job=$1 member=$2 token=$3 name rc splat ignores=() why=""
	name=$(member_name "$member")
	if [ "$BOOT_STATE" != ok ]; then
		echo "the group's boot failed"
		return
	fi
	rc=$(sed -n "s/^SROCE-RESULT $token $name \([0-9]*\)$/\1/p" "$job/console.log" | tail -n 1)
	case $rc in
	'') echo "did not finish (see the group's line)"; return ;;
	124|137) why="timeout after $(scenario_timeout "$member")s" ;;
	0) ;;
	*) why="exit $rc" ;;
	esac
	mapfile -t ignores < <(scenario_header "$member" ignore-splat)
	splat=$(splat_lines <(sed -n "/^SROCE-BEGIN $token $name$/,/^SROCE-RESULT $token $name /p" \
		"$job/console.log") /dev/null "${ignores[@]}" | head -n 1)
	[ -z "$splat" ] || why+="${why:+; }kernel splat: ${splat:0:160}"
	echo "$why"
}

show_console() {
	local job=$1 n
	n=$(wc -l <"$job/console.log")
	{
		echo "----- console of $2 [$K_NAME] ($n lines, $job/console.log) -----"
		if [ "$n" -gt 400 ]; then
			echo "[... first $((n - 400)) lines omitted ...]"
		fi
		tail -n 400 "$job/console.log"
		echo "----- end of console -----"
		if [ -s "$job/qemu.log" ]; then
			echo "----- qemu.log -----"
			cat "$job/qemu.log"
		fi
	} >&2
}

# early_splat JOB TOKEN: the first splat line of the console that came
# before the guest's init said SROCE-BOOTED, if any.
early_splat() {
	splat_lines <(sed -n "1,/^SROCE-BOOTED $2/p" "$1/console.log") /dev/null |
		head -n 1
}

# run_guest SCENARIO NAME JOB TIMEOUT [ROLE SHARED]: run_guest_once, and
# once more for a single guest whose only splat came before its scenario
# started (see the top of this file); the first try's files are kept in
# JOB/boot-splat/.
run_guest() {
	local job=$3 early
	run_guest_once "$@"
	[ -z "${5:-}" ] && [ -s "$job/verdict" ] || return 0
	early=$(early_splat "$job" "$(cat "$job/token")")
	[ -n "$early" ] || return 0
	vm_say "$2 [$K_NAME]: kernel splat during boot, before the scenario started: $early"
	vm_say "$2 [$K_NAME]: booting once more (a splat in that boot fails the scenario)"
	mkdir -p "$job/boot-splat"
	find "$job" -mindepth 1 -maxdepth 1 ! -name boot-splat -exec mv -t "$job/boot-splat" {} +
	run_guest_once "$@"
}

# run_guest_once SCENARIO NAME JOB TIMEOUT [ROLE SHARED]: boot one guest on
# the job directory JOB, run the scenario, judge it; the failure reason
# (empty for a pass) goes to JOB/verdict.  A scenario's "# sroce-vm: ko
# VARIANT" line gives it that build of sroce.ko (lib.sh build_ko),
# "# sroce-vm: cpu MODEL" that QEMU CPU model under TCG, "# sroce-vm: cpus
# N" at least N vCPUs (whatever --jobs gives the others), and "# sroce-vm:
# append ARGS" those kernel command-line arguments.
run_guest_once() {
	local scenario=$1 name=$2 job=$3 timeout=$4 role=${5:-} shared=${6:-}
	local token reason t0 deadline rc=0 what=$name kill="" variant
	local KO_PATH=$KO_PATH KO_ERROR=$KO_ERROR CPU_MODEL APPEND=$APPEND arg
	local VM_CPUS=$VM_CPUS cpus
	[ -z "$role" ] || { what="$name/$role"; kill=$shared/kill-$role; }
	mkdir -p "$job/results"
	token=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	echo "$token" >"$job/token"
	variant=$(scenario_header "$scenario" ko | head -n 1)
	if [ -n "$variant" ] && [ "$BUILD_KO" = 1 ]; then build_ko "$variant"; fi
	CPU_MODEL=$(scenario_header "$scenario" cpu | head -n 1)
	cpus=$(scenario_header "$scenario" cpus | head -n 1)
	if [[ "$cpus" =~ ^[0-9]+$ ]] && [ "$cpus" -gt "$VM_CPUS" ]; then VM_CPUS=$cpus; fi
	while IFS= read -r arg; do APPEND+=" $arg"; done < <(scenario_header "$scenario" append)
	write_job_env "$job" "$scenario" "$name" "$timeout" "$role" "$shared"
	if ! build_scenario_modules "$scenario" "$job"; then
		echo "a module of its build-module lines did not build" >"$job/verdict"
		return
	fi
	if ! build_scenario_progs "$scenario" "$job"; then
		echo "a program of its build-prog lines did not build" >"$job/verdict"
		return
	fi
	vm_say "$what [$K_NAME]: booting ($job)"
	t0=$(now)
	boot_vm "$job" "$RUN/$K_NAME/initramfs.cpio" "$token"
	WAIT_STATE=none
	if [ "$BOOT_STATE" = ok ]; then
		vm_say "$what [$K_NAME]: booted in ${BOOT_TIME}s, running (timeout ${timeout}s)"
		deadline=$((SECONDS + timeout + 20 + K_POST_TIMEOUT))
		[ "$deadline" -le "$TOTAL_DEADLINE" ] || deadline=$TOTAL_DEADLINE
		wait_marker "$job/console.raw" "SROCE-DONE $token" "$deadline" "$kill" || rc=$?
		case $rc in
		0) WAIT_STATE=finished ;;
		1) WAIT_STATE=timeout ;;
		3) WAIT_STATE=killed ;;
		*) WAIT_STATE=died ;;
		esac
	fi
	if [ "$WAIT_STATE" = killed ]; then
		kill -KILL "$QEMU_PID" 2>/dev/null || true
		vm_say "$what [$K_NAME]: killed, as the scenario asked"
		: >"$shared/killed-$role"
	fi
	stop_qemu 15
	tr -d '\r' <"$job/console.raw" >"$job/console.log"
	reason=$(judge "$job" "$scenario" "$name" "$token" "$timeout")
	vm_say "$what [$K_NAME]: finished in $(elapsed "$t0")s (boot ${BOOT_TIME}s)"
	if [ -n "$reason" ] || [ "$SHOW_CONSOLE" = 1 ]; then show_console "$job" "$what"; fi
	echo "$reason" >"$job/verdict"
}

# pair_guest SCENARIO NAME JOB TIMEOUT ROLE SOCKET: one guest of run_pair,
# in the background; guest a listens on the wire's unix socket, b connects.
pair_guest() {
	local server=off mac=0b
	if [ "$5" = a ]; then server=on; mac=0a; fi
	(
		trap cleanup EXIT
		VM_CPUS=1
		QEMU_EXTRA=(-netdev "stream,id=wire,server=$server,addr.type=unix,addr.path=$6"
			-device "virtio-net-pci,netdev=wire,mac=52:54:00:5e:c0:$mac"
			-virtfs "local,path=$3/shared,mount_tag=shared,security_model=none")
		run_guest "$1" "$2" "$3/$5" "$4" "$5" "$3/shared"
	) &
}

# run_pair SCENARIO NAME JOB TIMEOUT: guests a and b on one wire (see the
# top of this file); b boots once a's end of the wire exists.
run_pair() {
	local scenario=$1 name=$2 job=$3 timeout=$4 sock role reasons=() r _
	mkdir -p "$job/shared"
	# a unix socket path must fit in 108 bytes: not under $RUN
	sock=$(mktemp -u /tmp/sroce-wire-XXXXXXXX.sock)
	pair_guest "$scenario" "$name" "$job" "$timeout" a "$sock"
	for _ in $(seq 1 300); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
	pair_guest "$scenario" "$name" "$job" "$timeout" b "$sock"
	wait
	rm -f "$sock"
	for role in a b; do
		r=$(cat "$job/$role/verdict" 2>/dev/null || echo "no verdict")
		[ -z "$r" ] || reasons+=("$role: $r")
	done
	if [ ${#reasons[@]} -gt 0 ]; then
		local IFS=$'\x1f' joined
		joined="${reasons[*]}"
		echo "${joined//$'\x1f'/; }" >"$job/verdict"
	else
		: >"$job/verdict"
	fi
}

# run_group SCENARIO NAME JOB TIMEOUT: a boot group in one guest; a line
# for each member (see the top of this file) before the group's own.
run_group() {
	local scenario=$1 job=$3 m name token reason
	[ "$(scenario_header "$scenario" hosts)" = "" ] ||
		vm_die "boot group $2: a two-guest scenario cannot be in a group"
	[ "$(scenario_header "$scenario" ko)" = "" ] ||
		vm_die "boot group $2: a scenario with a ko line cannot be in a group"
	run_guest "$@"
	token=$(cat "$job/token")
	while IFS= read -r m; do
		name=$(member_name "$m")
		reason=$(judge_member "$job" "$m" "$token")
		# (a scenario that also ran on its own keeps its directory)
		[ -e "$RUN/$K_NAME/$name" ] || ln -s "$2/$name" "$RUN/$K_NAME/$name"
		report "$name" "$reason"
	done < <(group_members "$scenario")
}

run_scenario() {
	local scenario=$1 name job timeout t0 m
	t0=$(now)
	name=""
	while IFS= read -r m; do name+=${name:++}$(member_name "$m"); done < <(group_members "$scenario")
	job=$RUN/$K_NAME/$name
	while [ -e "$job" ]; do job=$job+; done
	mkdir -p "$job"
	if [ "$SECONDS" -ge "$TOTAL_DEADLINE" ]; then
		report "$name" "total timeout (${TOTAL_TIMEOUT}s) reached before it started"
		return
	fi
	timeout=$(scenario_timeout "$scenario")
	VM_MEM=$(scenario_mem "$scenario")
	if [[ $scenario == *+* ]]; then
		run_group "$scenario" "$name" "$job" "$timeout"
	elif [ "$(scenario_header "$scenario" hosts)" = 2 ]; then
		run_pair "$scenario" "$name" "$job" "$timeout"
	else
		run_guest "$scenario" "$name" "$job" "$timeout"
	fi
	report "$name" "$(cat "$job/verdict")"
	echo "$name $K_NAME $(elapsed "$t0")" >>"$RUN/times.txt"
}

# run_scenario_job SCENARIO: run_scenario in the background once enough of
# the --jobs slots are free (a two-guest scenario takes two).
run_scenario_job() {
	local need=1 pid used
	[ "$(scenario_header "$1" hosts)" != 2 ] || need=2
	[ "$need" -le "$JOBS" ] || need=$JOBS
	while :; do
		used=0
		for pid in "${!JOB_SLOTS[@]}"; do
			if kill -0 "$pid" 2>/dev/null; then
				used=$((used + JOB_SLOTS[$pid]))
			else
				unset "JOB_SLOTS[$pid]"
			fi
		done
		[ $((used + need)) -gt "$JOBS" ] || break
		wait -n 2>/dev/null || sleep 1
	done
	(
		JOB_SLOTS=()
		trap cleanup EXIT
		run_scenario "$1"
	) &
	JOB_SLOTS[$!]=$need
}

report() {
	local line
	if [ -z "$2" ]; then
		line="PASS: $1 [$K_NAME]"
	else
		line="FAIL: $1 [$K_NAME] ($2)"
		FAILED=1
	fi
	echo "$line"
	echo "$line" >>"$RUN/summary.txt"
}

prepare_kernel() {
	kernel_resolve "$1"
	mkdir -p "$RUN/$K_NAME"
	make_initramfs "$RUN/$K_NAME/initramfs.cpio"
	KO_PATH=""
	KO_ERROR="not built (--no-build)"
	if [ "$BUILD_KO" = 1 ]; then build_ko; fi
	FORCE_BZIMAGE=0
}

main() {
	local k s scenarios=()
	parse_args "$@"
	for s in "${SCENARIOS[@]}"; do scenarios+=("$(resolve_scenario "$s")"); done
	TOTAL_DEADLINE=$((SECONDS + TOTAL_TIMEOUT))
	if [ -z "$RUN" ]; then
		prune_runs
		mkdir -p "$VM_RUNS"
		RUN=$(mktemp -d "$VM_RUNS/$(date +%Y%m%d-%H%M%S)-XXXX")
	fi
	mkdir -p "$RUN"
	RUN=$(realpath "$RUN")
	vm_say "results in $RUN"
	trap cleanup EXIT
	pick_accel
	for k in $KERNELS; do
		prepare_kernel "$k"
		for s in "${scenarios[@]}"; do
			if [ "$JOBS" = 1 ]; then
				run_scenario "$s"
			else
				run_scenario_job "$s"
			fi
		done
		wait
		JOB_SLOTS=()
	done
	grep -q '^FAIL: ' "$RUN/summary.txt" 2>/dev/null && FAILED=1
	exit "$FAILED"
}

main "$@"
