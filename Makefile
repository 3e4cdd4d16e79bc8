# SPDX-License-Identifier: GPL-2.0-only
#
# sroce developer entry points. Each recipe is one line calling scripts/;
# `make help` lists them.

SHELL := /bin/bash
KDIR ?= $(shell bash -c 'source scripts/env.sh && echo $$SROCE_KDIR')
W ?= 1

.PHONY: all modules clean sparse checkpatch layers kunit setup debug-kernel \
	vm-test vm-test-debug check check-full demo bench help

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) C=2 modules

checkpatch:
	scripts/checkpatch.sh

layers:
	scripts/layers.sh

kunit:
	scripts/kunit.sh

setup:
	scripts/setup.sh

debug-kernel:
	scripts/debug-kernel.sh

# The CI tier's scenarios (tools/testing/sroce-vm/tiers), at full volume.
VM_SCENARIOS := $(shell \
	awk '!/^\#/ && $$2 == "ci" && $$1 != "kunit" { print $$1 }' tools/testing/sroce-vm/tiers)

vm-test:
	tools/testing/sroce-vm/run.sh --kernel stock $(VM_SCENARIOS)

vm-test-debug:
	tools/testing/sroce-vm/run.sh --kernel debug $(VM_SCENARIOS)

check:
	scripts/check.sh

check-full:
	scripts/check.sh --full

demo:
	scripts/demo.sh

bench:
	scripts/bench.sh

help:
	@echo "make              build sroce.ko against Debian's 6.1 headers (W=1)"
	@echo "make setup        install every Debian package the project needs, fetch the stock kernel"
	@echo "make demo         set up, build, boot the stock kernel in QEMU: ibv_rc_pingpong and rping between two sroce devices"
	@echo "make check        the CI tier: static checks, KUnit, every VM scenario on stock, the debug sweep (small volume)"
	@echo "make check-full   every test at full volume on both kernels, long and soak runs included"
	@echo "make bench        perftest on sroce and rdma_rxe in one QEMU boot, MTU 1024 and 4096: table, targets, chart; not in check"
	@echo "make sparse       sparse (C=2) over the driver"
	@echo "make checkpatch   scripts/checkpatch.pl --strict on drivers/ and include/"
	@echo "make layers       the driver's layer rule: no include goes up a layer (scripts/layers.sh)"
	@echo "make kunit        KUnit suites as a module in the debug kernel, in QEMU"
	@echo "make debug-kernel build the KASAN/lockdep/kmemleak kernel (cached)"
	@echo "make vm-test      device scenarios on the stock Debian kernel"
	@echo "make vm-test-debug  device scenarios on the debug kernel"
