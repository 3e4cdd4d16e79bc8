// SPDX-License-Identifier: GPL-2.0-only
/*
 * Deliberately buggy module for the VM harness's self-test
 * (tools/testing/sroce-vm/selftest.sh): on load it does what "mode" says,
 * and run.sh must turn each into a FAIL.
 *
 *   mode=warn   WARN() (the debug kernel panics: panic_on_warn=1)
 *   mode=kasan  a one-byte slab out-of-bounds write (debug kernel only:
 *               elsewhere it silently corrupts the slab)
 *   mode=leak   leaks four allocations (kmemleak, debug kernel)
 *   mode=hang   sleeps uninterruptibly for 70 s (the hung-task detector,
 *               set to 30 s by run.sh, reports insmod as blocked)
 *
 * Never load it outside the test VM.
 */

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *mode = "none";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "none, warn, kasan, leak or hang");

static noinline void selftest_leak(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		void *p = kmalloc(512, GFP_KERNEL);

		if (p)
			memset(p, 0x5a, 512);
	}
	pr_info("sroce_vm_selftest: leaked 4 x 512 bytes\n");
}

static noinline void selftest_kasan(void)
{
	char *p = kmalloc(16, GFP_KERNEL);

	if (!p)
		return;
	/* Keep the compiler from seeing (and rejecting) the overflow. */
	OPTIMIZER_HIDE_VAR(p);
	p[16] = 1;
	kfree(p);
}

static int __init selftest_init(void)
{
	if (!strcmp(mode, "warn"))
		WARN(1, "sroce_vm_selftest: deliberate warning\n");
	else if (!strcmp(mode, "kasan"))
		selftest_kasan();
	else if (!strcmp(mode, "leak"))
		selftest_leak();
	else if (!strcmp(mode, "hang"))
		msleep(70 * MSEC_PER_SEC);
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("sroce VM harness self-test: deliberate splats");
MODULE_LICENSE("GPL");
