#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run by the guest's init (in the chroot) between two scenarios of a boot
# group: removes what a scenario may have left behind, whether it ended
# well or not, so that the next one starts as after a boot: every RDMA
# link, every netdev but lo (a veth's peer goes with it), and the sroce
# and rdma_rxe modules.  What cannot be removed is printed; the next
# scenario then fails on it, not this script.

for d in /sys/class/infiniband/*; do
	[ -e "$d" ] || continue
	rdma link del "${d##*/}" || echo "guest-reset: rdma link del ${d##*/} failed"
done
for n in /sys/class/net/*; do
	n=${n##*/}
	[ "$n" = lo ] || [ ! -e "/sys/class/net/$n" ] || /usr/sbin/ip link del "$n" 2>/dev/null ||
		echo "guest-reset: ip link del $n failed"
done
for m in sroce rdma_rxe; do
	if grep -q "^$m " /proc/modules; then
		/usr/sbin/rmmod "$m" || echo "guest-reset: rmmod $m failed"
	fi
done
exit 0
