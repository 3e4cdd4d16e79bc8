#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Proves the VM harness: the guest userspace, a veth pair, the RDMA core
# and the autoload guard, on either kernel.  Needs no sroce driver.
# sroce-vm: timeout 180

# shellcheck source=tools/testing/sroce-vm/guest-lib.sh
source "$SROCE_VM_LIB"

sroce_log "kernel $(uname -r) ($SROCE_KERNEL), results in $SROCE_RESULTS"

# The host's userspace is there.
for f in /usr/bin/ibv_devinfo /usr/bin/rdma /usr/bin/python3 /usr/sbin/ip; do
	[ -x "$f" ] || sroce_fail "$f not visible in the guest"
done
python3 -c 'import pyverbs.device' || sroce_fail "python3 cannot import pyverbs"

# The results directory is writable and reaches the host.
echo "smoke ran on $(uname -r)" >"$SROCE_RESULTS/smoke.txt"

# veth pair with guest-internal addresses.
sroce_veth veth0 veth1
sroce_wait_link_up veth0
sroce_wait_link_up veth1
/usr/sbin/ip -br addr show veth0 | grep -q '10\.0\.0\.1/24' || sroce_fail "veth0 has no 10.0.0.1"
/usr/sbin/ip -br addr show veth1 | grep -q 'fd00::2/64' || sroce_fail "veth1 has no fd00::2"
/usr/sbin/ip -br link show

# RDMA core (modules on stock, built in on debug).
sroce_modprobe ib_core ib_uverbs
rdma dev show || sroce_fail "rdma dev show"
rdma link show || sroce_fail "rdma link show"
[ -d /sys/class/infiniband_verbs ] || sroce_fail "ib_uverbs is not there"

# Autoload is refused and logged: an ifb link needs rtnl-link-ifb, a module
# on the stock kernel and absent from the debug kernel.
if /usr/sbin/ip link add ifb9 type ifb 2>/dev/null; then
	sroce_fail "module autoload was not refused"
fi
dmesg | grep -q 'refused autoload: .*rtnl-link-ifb' || sroce_fail "guard did not log the refusal"
sroce_log "autoload of rtnl-link-dummy was refused"

# rdma_rxe is there to load by hand (not autoloaded).
/usr/sbin/modinfo rdma_rxe >/dev/null || sroce_fail "rdma_rxe.ko not in the module tree"
! grep -q '^rdma_rxe ' /proc/modules || sroce_fail "rdma_rxe got loaded"

sroce_log "ok"
