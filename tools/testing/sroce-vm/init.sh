#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
#
# PID 1 of sroce's test VM (runs from the initramfs built by run.sh).
#
#  1. loads the modules needed for 9p (stock kernel), refuses module
#     autoload (kernel.modprobe -> /sbin/sroce-modprobe-guard);
#  2. mounts the virtio-9p shares: "job" (read-write, this run's directory,
#     with job.env), "hostroot" (the host's /, read-only) on /host,
#     "modtree" (this kernel's modules) on /host/lib/modules/<release>,
#     "top" (the checkout) at its host path; proc, sys, dev, debugfs and
#     tmpfs (/tmp, /run, /var/tmp, /dev/shm) inside /host; for a guest
#     of a two-guest scenario also "shared" (read-write, the directory
#     both guests see) at its host path;
#  3. runs the scenario in a chroot to /host under timeout(1) (a boot
#     group: each of its scenarios in turn, with guest-reset.sh between
#     them);
#  4. after it: kmemleak scans (debug kernel), dmesg to the job directory;
#  5. poweroff -f.
#
# Talks to the host through console markers, each on its own line:
#   SROCE-BOOTED <token>
#   SROCE-BEGIN <token> <scenario>
#   SROCE-RESULT <token> <scenario> <rc>
#   SROCE-KMEMLEAK-BEGIN <token> / SROCE-KMEMLEAK-END <token>
#   SROCE-DONE <token>
#   SROCE-FATAL <token> <message>
# No "set -e": PID 1 must never exit; every failure ends in poweroff.

BB=/bin/busybox
$BB mkdir -p /proc /sys /dev /bin /sbin /usr/bin /usr/sbin
$BB --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/null >/dev/console 2>&1

# Before anything can ask for a module.
echo /sbin/sroce-modprobe-guard >/proc/sys/kernel/modprobe

TOKEN=$(sed -n 's/.*sroce\.token=\([^ ]*\).*/\1/p' /proc/cmdline)
NINEP_OPTS=trans=virtio,version=9p2000.L,msize=131072

marker() {
	printf '\nSROCE-%s %s%s\n' "$1" "$TOKEN" "${2:+ $2}"
}

halt_vm() {
	sync
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
	while :; do sleep 60; done
}

fatal() {
	marker FATAL "$*"
	halt_vm
}

log() { echo "sroce-vm-init: [$(cut -d' ' -f1 /proc/uptime)] $*"; }

load_modules() {
	local m
	while read -r m; do
		insmod "/modules/$m" || fatal "insmod $m failed"
	done </modules/load.list
}

# mount9p TAG DIR OPTIONS: retried, the virtio device may still be probing.
mount9p() {
	local i=0
	while ! mount -t 9p -o "$NINEP_OPTS,$3" "$1" "$2" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 50 ] || fatal "cannot mount 9p share '$1' on $2"
		sleep 0.1
	done
}

mount_job() {
	mkdir -p /job
	mount9p job /job rw
	[ -f /job/job.env ] || fatal "no job.env in the job share"
	# shellcheck disable=SC1091 # written by run.sh
	. /job/job.env
}

# Directory $1 inside /host, created if it is on a tmpfs.
host_dir() {
	mkdir -p "/host$1" 2>/dev/null
	[ -d "/host$1" ] || fatal "mount point $1 missing on the host root"
}

mount_root() {
	mount9p hostroot /host ro,cache=loose
	mount -t proc proc /host/proc
	mount -t sysfs sysfs /host/sys
	mount -t devtmpfs devtmpfs /host/dev
	ln -sf /proc/self/fd /host/dev/fd
	ln -sf /proc/self/fd/0 /host/dev/stdin
	ln -sf /proc/self/fd/1 /host/dev/stdout
	ln -sf /proc/self/fd/2 /host/dev/stderr
	mkdir -p /host/dev/pts /host/dev/shm
	mount -t devpts devpts /host/dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /host/dev/shm
	mount -t debugfs debugfs /host/sys/kernel/debug
	mount -t tmpfs -o mode=1777 tmpfs /host/tmp
	mount -t tmpfs -o mode=0755 tmpfs /host/run
	mount -t tmpfs -o mode=1777 tmpfs /host/var/tmp
	mount -t tmpfs -o mode=0755 tmpfs /host/lib/modules
	mkdir -p "/host/lib/modules/$SROCE_RELEASE"
	mount9p modtree "/host/lib/modules/$SROCE_RELEASE" ro,cache=loose
	host_dir "$SROCE_TOP"
	mount9p top "/host$SROCE_TOP" ro,cache=loose
	host_dir "$JOB_DIR"
	mount -o bind /job "/host$JOB_DIR"
	if [ -n "$SROCE_SHARED" ]; then
		host_dir "$SROCE_SHARED"
		mount9p shared "/host$SROCE_SHARED" rw
	fi
	mkdir -p /host/run/sroce-vm
	: >/host/run/sroce-vm/autoload-allow
}

check_release() {
	local rel
	rel=$(uname -r)
	[ "$rel" = "$SROCE_RELEASE" ] || fatal "booted $rel, expected $SROCE_RELEASE"
}

kmemleak_file=/host/sys/kernel/debug/kmemleak

# kmemleak must be there.  Boot leaves nothing for it to report (two scans
# right after boot find nothing), so there is no scan and "clear" here:
# such a scan cost about 20 s of every debug boot.  Should a boot ever
# leave a report, every debug scenario fails on it at once.
kmemleak_check() {
	[ "$KMEMLEAK" = 1 ] || return 0
	[ -w $kmemleak_file ] || fatal "kmemleak requested but $kmemleak_file is missing"
}

# kmemleak reports an object only from its second scan on (the first one
# records its checksum and spares it) and only once it is older than 5 s
# at the start of a scan.  Hence two scans, the second starting at least
# 6 s after the first did; on the debug kernel under TCG the first scan
# alone takes about 11 s, so it usually needs no extra wait.
kmemleak_report() {
	local t0 waited
	[ "$KMEMLEAK" = 1 ] || return 0
	log "kmemleak: scanning"
	# Fewer objects to scan: the dentries and inodes of everything the
	# scenario read (python's modules, say) go, and none of them is a leak.
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(cut -d. -f1 /proc/uptime)
	echo scan >$kmemleak_file
	waited=$(($(cut -d. -f1 /proc/uptime) - t0))
	[ "$waited" -ge 6 ] || sleep $((6 - waited))
	echo scan >$kmemleak_file
	marker KMEMLEAK-BEGIN
	cat $kmemleak_file
	marker KMEMLEAK-END
	log "kmemleak: done"
}

# reset_guest: between two scenarios of a boot group, end every process
# but this one and take down what the last scenario may have left.
reset_guest() {
	log "resetting the guest for the next scenario"
	kill -9 -1 2>/dev/null
	sleep 1
	chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash "$SROCE_TOP/tools/testing/sroce-vm/guest-reset.sh" </dev/null
}

# run_all: the job's scenarios, in order.
run_all() {
	local i=1
	while [ "$i" -le "${SCENARIO_COUNT:-0}" ]; do
		eval "SCENARIO_NAME=\$SCENARIO_${i}_NAME SCENARIO_PATH=\$SCENARIO_${i}_PATH"
		eval "SCENARIO_TIMEOUT=\$SCENARIO_${i}_TIMEOUT SROCE_RESULTS=\$SCENARIO_${i}_RESULTS"
		[ "$i" = 1 ] || reset_guest
		run_scenario
		i=$((i + 1))
	done
}

run_scenario() {
	local rc inner
	# Runs inside the chroot: cd to the results, the scenario under timeout.
	# shellcheck disable=SC2016 # expanded by that sh
	inner='cd "$SROCE_RESULTS" && exec /usr/bin/timeout -k 10 "$0" /bin/bash "$1"'
	marker BEGIN "$SCENARIO_NAME"
	chroot /host /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/tmp TERM=dumb LANG=C.UTF-8 \
		SROCE_KERNEL="$SROCE_KERNEL" SROCE_KO="$SROCE_KO" SROCE_KO_ERROR="$SROCE_KO_ERROR" \
		SROCE_RESULTS="$SROCE_RESULTS" SROCE_TOP="$SROCE_TOP" SROCE_VM_LIB="$SROCE_VM_LIB" \
		SROCE_SCENARIO="$SCENARIO_NAME" SROCE_MODULES="$SROCE_MODULES" \
		SROCE_PROGS="$SROCE_PROGS" SROCE_ROLE="$SROCE_ROLE" SROCE_SHARED="$SROCE_SHARED" \
		SROCE_VOLUME="${SROCE_VOLUME:-full}" \
		/bin/sh -c "$inner" \
		"$SCENARIO_TIMEOUT" "$SCENARIO_PATH" </dev/null
	rc=$?
	marker RESULT "$SCENARIO_NAME $rc"
}

main() {
	[ -s /modules/load.list ] && load_modules
	mount_job
	check_release
	mount_root
	log "root mounted"
	hostname "sroce-vm${SROCE_ROLE:+-$SROCE_ROLE}"
	ip link set lo up
	kmemleak_check
	marker BOOTED
	run_all
	sleep 1
	kmemleak_report
	dmesg >/job/dmesg.txt
	marker DONE
	halt_vm
}

main
