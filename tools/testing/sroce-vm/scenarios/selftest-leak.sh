#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness (debug kernel): leaks kernel memory,
# which the kmemleak scan after the scenario must report; run.sh must
# report FAIL.  On other kernels it does nothing.
# sroce-vm: build-module selftest-module
# sroce-vm: timeout 60

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

[ "$SROCE_KERNEL" = debug ] || { sroce_log "needs kmemleak: skipped"; exit 0; }
insmod "$SROCE_MODULES/sroce_vm_selftest.ko" mode=leak
sroce_log "leaked"
