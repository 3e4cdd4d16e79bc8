# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: GPL-2.0-only
# Common settings for sroce's scripts. Source it; it defines variables only.
#
#   SROCE_TOP      the checkout
#   SROCE_CACHE    kernel builds, extracted images: outside the checkout
#   SROCE_KVER     Debian's stock kernel release, e.g. 6.1.0-57-amd64
#   SROCE_KDIR     headers of that kernel (for out-of-tree builds)
#   SROCE_SRCVER   upstream version of linux-source-6.1, e.g. 6.1.192-3
#   SROCE_SRC_TAR  the linux-source-6.1 tarball

SROCE_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SROCE_CACHE=${SROCE_CACHE:-/var/cache/sroce}
SROCE_SRC_TAR=/usr/src/linux-source-6.1.tar.xz

# linux-headers-amd64 depends on exactly one linux-headers-6.1.0-N-amd64.
sroce_resolve_kver() {
	dpkg-query -W -f='${Depends}\n' linux-headers-amd64 2>/dev/null |
		tr ',' '\n' | sed -n 's/^ *linux-headers-\(6\.1\.[0-9]*-[0-9]*-amd64\).*/\1/p' |
		head -n 1 || true
}

SROCE_KVER=${SROCE_KVER:-$(sroce_resolve_kver)}
SROCE_KDIR=${SROCE_KDIR:-/usr/src/linux-headers-$SROCE_KVER}
SROCE_SRCVER=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
