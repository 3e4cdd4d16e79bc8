#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness: a real WARN() from a test module.  The
# stock kernel logs it and goes on, the debug kernel panics (panic_on_warn);
# run.sh must report FAIL on both.
# sroce-vm: build-module selftest-module
# sroce-vm: timeout 60

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

insmod "$SROCE_MODULES/sroce_vm_selftest.ko" mode=warn
sroce_log "the module warned and the kernel is still up"
