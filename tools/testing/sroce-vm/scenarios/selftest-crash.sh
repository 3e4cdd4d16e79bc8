#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness: crashes the kernel (sysrq 'c').  run.sh
# must report FAIL (kernel panic) and not wait for the timeout.
# sroce-vm: timeout 60

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

sroce_log "crashing the kernel"
echo 1 >/proc/sys/kernel/sysrq
echo c >/proc/sysrq-trigger
sleep 30
