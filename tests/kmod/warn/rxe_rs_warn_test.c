// SPDX-License-Identifier: GPL-2.0
/* Deliberately WARNs on load; tests/run uses it to check that scripts/vm-run fails on it. */
#include <linux/module.h>
#include <linux/bug.h>

static int __init rxe_rs_warn_test_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit rxe_rs_warn_test_exit(void)
{
}

module_init(rxe_rs_warn_test_init);
module_exit(rxe_rs_warn_test_exit);
MODULE_DESCRIPTION("rxe-rs test: WARN_ON on load");
MODULE_LICENSE("GPL");
