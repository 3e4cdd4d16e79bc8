#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness: exits 0 but puts a fake WARNING splat
# into the kernel log.  run.sh must report FAIL for it.

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

echo 'WARNING: CPU: 0 PID: 1 at fake/sroce-vm-selftest.c:1 selftest+0x0/0x0' >/dev/kmsg
sroce_log "injected a fake splat"
