#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Teardown under same-host traffic: teardown.sh (see there) with both ends
# of sroce_teardown's WRITEs and READs on sroce1, so that every packet is
# delivered by sroce itself (net/sroce_xmit.c) and the responder copies
# from the requester's registered pages while, N times each, the link is
# deleted (rdma-link-del), the process killed (kill-9), and QPs and MRs
# destroyed with the traffic in flight (churn). No splat, no leak (the
# debug kernel's kmemleak scan), no hang, resources back at the baseline.
#
# sroce-vm: timeout 4500
# sroce-vm: build-prog sroce-teardown

SROCE_SCENARIO_NAME=teardown-local TEARDOWN_TOPO=host
# shellcheck source=tools/testing/sroce-vm/scenarios/teardown.sh
source "$(dirname "${BASH_SOURCE[0]}")/teardown.sh"
