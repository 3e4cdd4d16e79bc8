#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness: insmod sleeps uninterruptibly for 70 s
# in the selftest module's init.  The hung-task detector (30 s: run.sh's
# command line, the debug kernel's default) reports it and run.sh must
# report FAIL (kernel splat: INFO: task insmod ... blocked).
# sroce-vm: build-module selftest-module
# sroce-vm: timeout 120

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

insmod "$SROCE_MODULES/sroce_vm_selftest.ko" mode=hang
sroce_log "insmod came back after its 70 s"
