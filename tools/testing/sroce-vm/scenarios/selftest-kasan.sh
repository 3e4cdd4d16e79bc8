#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness (debug kernel): a slab out-of-bounds
# write that KASAN must report; run.sh must report FAIL.  On other kernels
# it does nothing (the write would corrupt memory silently).
# sroce-vm: build-module selftest-module
# sroce-vm: timeout 60

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

[ "$SROCE_KERNEL" = debug ] || { sroce_log "needs KASAN: skipped"; exit 0; }
insmod "$SROCE_MODULES/sroce_vm_selftest.ko" mode=kasan
sroce_log "out-of-bounds write done"
