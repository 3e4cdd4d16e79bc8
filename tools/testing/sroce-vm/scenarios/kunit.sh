#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# KUnit scenario: every KUnit suite of sroce, run inside the debug kernel
# (KASAN, lockdep, kmemleak) by loading sroce.ko built with
# CONFIG_RDMA_SROCE_KUNIT_TEST=y ("ko kunit" below).  KUnit runs the
# suites of a module when it goes live, so they have run when insmod
# returns; their KTAP output goes to the kernel log, which the host reads
# from the console (scripts/kunit.sh turns it into one line per case).
# Then the module is removed, and the guest's kmemleak scans see whatever
# a suite left behind.  The stock kernel has no KUnit (CONFIG_KUNIT is not
# set in Debian's 6.1).
#
# "-cpu max" gives the guest PCLMULQDQ, so that the crypto API's crc32 is
# crc32-pclmul, the engine the ICRC suite compares with lib/crc32.  The
# debug kernel is allnoconfig-based, so KUNIT_DEFAULT_ENABLED is off:
# kunit.enable=1 turns KUnit on for this boot only. Two vCPUs: a case
# races a second thread against the driver (sroce_abuse's ring case).
# sroce-vm: ko kunit
# sroce-vm: cpu max
# sroce-vm: cpus 2
# sroce-vm: append kunit.enable=1
# sroce-vm: timeout 1500

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

export SROCE_SCENARIO=kunit

[ -d /sys/kernel/debug/kunit ] ||
	sroce_fail "this kernel has no KUnit (/sys/kernel/debug/kunit is missing)"
sroce_modprobe ib_core ib_uverbs crc32_pclmul
# shellcheck disable=SC2119 # no module parameters
sroce_load_ko
# One line per suite, from KUnit's own record, for the results directory.
for d in /sys/kernel/debug/kunit/sroce*; do
	[ -r "$d/results" ] || continue
	tail -n 1 "$d/results" | sed "s|\$| (${d##*/})|"
done >kunit-suites.txt
sroce_log "$(wc -l <kunit-suites.txt) suites ran"
[ -s kunit-suites.txt ] || sroce_fail "no sroce suite ran when sroce.ko was loaded"
rmmod sroce || sroce_fail "rmmod sroce"
sroce_log "done"
