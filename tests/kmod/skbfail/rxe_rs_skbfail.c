// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only fault injector for tests/vm/alloc-fail.sh: fails one in `every` of rxe-rs's transmit
 * skb allocations (rxe_rs_skb_alloc_tx) as GFP_ATOMIC does under memory pressure, through a
 * kretprobe that frees the skb returned and returns NULL instead. Our kernels have no
 * CONFIG_FAULT_INJECTION (failslab's stack filter would do the same). `failed` counts the
 * failures injected. Load it after rdma_rxe_rs, unload it before.
 *
 * Only packets of at least `min_len` bytes (BTH onwards) fail, 21 by default: not bare ACKs and
 * NAKs (20), as tests/vm/lossy.sh keeps them off netem. A lost ACK of a pingpong's last message
 * leaves its sender retrying forever once the peer has destroyed its QP, with either driver.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/sysfs.h>

static unsigned int every = 10;
module_param(every, uint, 0644);
MODULE_PARM_DESC(every, "fail one in this many allocations (0: none)");

static unsigned int min_len = 21;
module_param(min_len, uint, 0644);
MODULE_PARM_DESC(min_len, "fail only packets of at least this many bytes");

static atomic_t calls = ATOMIC_INIT(0);
static atomic_t failed = ATOMIC_INIT(0);

static int failed_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&failed));
}

static const struct kernel_param_ops failed_ops = { .get = failed_get };
module_param_cb(failed, &failed_ops, NULL, 0444);
MODULE_PARM_DESC(failed, "allocations failed so far");

/* rxe_rs_skb_alloc_tx(ndev, ipv6, len): remember whether this one may fail. */
static int skbfail_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(bool *)ri->data = regs_get_kernel_argument(regs, 2) >= READ_ONCE(min_len);
	return 0;
}

static int skbfail_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sk_buff *skb = (struct sk_buff *)regs_return_value(regs);
	unsigned int n = READ_ONCE(every);

	if (!skb || !*(bool *)ri->data || !n || atomic_inc_return(&calls) % n)
		return 0;
	/* Not sent yet and owned by nobody: rxe-rs sets its destructor only when it transmits. */
	consume_skb(skb);
	regs_set_return_value(regs, 0);
	atomic_inc(&failed);
	return 0;
}

static struct kretprobe skbfail_probe = {
	.kp.symbol_name = "rxe_rs_skb_alloc_tx",
	.entry_handler = skbfail_entry,
	.handler = skbfail_ret,
	.data_size = sizeof(bool),
	.maxactive = 64,
};

static int __init rxe_rs_skbfail_init(void)
{
	return register_kretprobe(&skbfail_probe);
}

static void __exit rxe_rs_skbfail_exit(void)
{
	unregister_kretprobe(&skbfail_probe);
	pr_info("rxe_rs_skbfail: %d of %d allocations of %u bytes or more failed\n",
		atomic_read(&failed), atomic_read(&calls), min_len);
}

module_init(rxe_rs_skbfail_init);
module_exit(rxe_rs_skbfail_exit);
MODULE_DESCRIPTION("rxe-rs test: fail a share of rxe-rs's transmit skb allocations");
MODULE_LICENSE("GPL");
