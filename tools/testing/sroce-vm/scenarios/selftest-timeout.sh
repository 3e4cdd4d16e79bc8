#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Negative self-test of the harness: outlives its 10 s limit.  run.sh must
# report FAIL (timeout).
# sroce-vm: timeout 10

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

sleep 600
