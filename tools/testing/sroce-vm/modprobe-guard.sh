#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
#
# kernel.modprobe of sroce's test VM: the kernel runs this for every module
# autoload request ("modprobe -q -- ALIAS").  Autoload is refused, so a typo
# or a stray alias can never load e.g. rdma_rxe behind a test's back;
# scenarios load what they need explicitly.  A scenario may allow one alias
# by adding a line "ALIAS [MODPROBE-OPTION...]" to
# /run/sroce-vm/autoload-allow in its chroot, e.g. with sroce_allow_autoload
# from guest-lib.sh; the options (say "-d DIR" for a private module tree)
# go to modprobe before the kernel's own arguments.

BB=/bin/busybox
ALLOW=/host/run/sroce-vm/autoload-allow

alias=
for arg in "$@"; do
	case $arg in
	-*) ;;
	*) alias=$arg ;;
	esac
done

if [ -n "$alias" ] && [ -f $ALLOW ]; then
	while read -r allowed opts; do
		[ "$allowed" = "$alias" ] || continue
		echo "sroce-vm: allowed autoload: $opts $*" >/dev/kmsg
		# shellcheck disable=SC2086 # options are split on purpose
		exec $BB chroot /host /usr/sbin/modprobe $opts "$@"
	done <$ALLOW
fi
echo "sroce-vm: refused autoload: $*" >/dev/kmsg
exit 1
