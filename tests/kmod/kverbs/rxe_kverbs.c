// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for tests/vm/kverbs.sh: the kernel-verbs paths of a soft-RoCE device
 * (ib_post_send/ib_post_recv from kernel QPs), with the C driver rdma_rxe's semantics as the
 * expectation (rxe_verbs.c: validate_send_wr, rxe_post_send, rxe_post_recv; rxe_resp.c and
 * rxe_mr.c for the DMA MR behind the PD's global rkey).
 *
 * `insmod rxe_kverbs.ko netdev=NAME` finds the RDMA device on net device NAME and, in module
 * init, connects two RC QPs on port 1 to each other over RoCEv2 (its IPv4 GID), one PD with an
 * unsafe global rkey, one CQ polled directly. Each check prints "rxe_kverbs: ok   NAME" or
 * "rxe_kverbs: FAIL NAME: DETAIL" and the run ends with "rxe_kverbs: N passed, M failed"; the
 * read-only parameters `passed` and `failed` keep the counts. Init succeeds once the cases have
 * run, whatever their results, and frees everything it allocated.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *netdev;
module_param(netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "net device whose RDMA device is tested");

static int passed;
module_param(passed, int, 0444);
MODULE_PARM_DESC(passed, "checks passed");

static int failed;
module_param(failed, int, 0444);
MODULE_PARM_DESC(failed, "checks failed");

#define KV_PORT		1
#define KV_DEPTH	16
#define KV_STASH	8
#define KV_TIMEOUT	(5 * HZ)
#define KV_TARGET	0x1122334455667788ULL

/* What the QPs read and write: one kmalloc'd, DMA-mapped block (8-byte aligned fields). */
struct kv_buf {
	u8 src[64];
	u8 dst[64];
	u8 rd[64];
	u64 target;
	u64 result;
	u8 msg[32];
	u8 rcv[64];
};

struct kv_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	u32 max_send_sge;
	union ib_gid gid;
	u32 gid_index;
	u8 dmac[ETH_ALEN];
	struct kv_buf *buf;
	u64 dma;
	bool mapped;
	/* A QP may be in ERROR (error completion, failed wait): reconnect before the next case. */
	bool broken;
	/* Completions polled while waiting for another one. */
	struct ib_wc stash[KV_STASH];
	int nstash;
};

/* The buffer field F as an SGE address (DMA address) and as a remote address (rxe's DMA MR). */
#define KV_DMA(c, f)	((c)->dma + offsetof(struct kv_buf, f))
#define KV_VA(c, f)	((u64)(uintptr_t)&(c)->buf->f)

static void kv_ok(const char *name)
{
	passed++;
	pr_info("ok   %s\n", name);
}

static __printf(2, 3) void kv_fail(const char *name, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("FAIL %s: %pV\n", name, &vaf);
	va_end(args);
	failed++;
}

static struct ib_sge kv_sge(struct kv_ctx *c, u64 addr, u32 len)
{
	return (struct ib_sge){ .addr = addr, .length = len, .lkey = c->pd->local_dma_lkey };
}

/* Waits up to KV_TIMEOUT for the completion of @wr_id; others are kept for a later wait. */
static int kv_wait(struct kv_ctx *c, u64 wr_id, struct ib_wc *wc)
{
	unsigned long end = jiffies + KV_TIMEOUT;
	int i, n;

	for (i = 0; i < c->nstash; i++) {
		if (c->stash[i].wr_id == wr_id) {
			*wc = c->stash[i];
			c->stash[i] = c->stash[--c->nstash];
			return 0;
		}
	}
	for (;;) {
		n = ib_poll_cq(c->cq, 1, wc);
		if (n < 0)
			return n;
		if (n && wc->wr_id == wr_id)
			return 0;
		if (n && c->nstash < KV_STASH) {
			c->stash[c->nstash++] = *wc;
		} else if (n) {
			pr_info("dropped completion wr_id %llu status %d\n", wc->wr_id, wc->status);
		} else {
			if (time_after(jiffies, end))
				return -ETIMEDOUT;
			usleep_range(100, 200);
		}
	}
}

/* Waits for @wr_id and checks its status (and opcode if successful); reports FAIL @name. */
static bool kv_expect(struct kv_ctx *c, const char *name, u64 wr_id, enum ib_wc_status status,
		      enum ib_wc_opcode opcode, struct ib_wc *wc)
{
	int err = kv_wait(c, wr_id, wc);

	if (err) {
		c->broken = true;
		kv_fail(name, "no completion of wr_id %llu: %d", wr_id, err);
		return false;
	}
	if (wc->status != IB_WC_SUCCESS)
		c->broken = true;
	if (wc->status != status) {
		kv_fail(name, "completion status %s (%d), expected %s", ib_wc_status_msg(wc->status),
		     wc->status, ib_wc_status_msg(status));
		return false;
	}
	if (status == IB_WC_SUCCESS && wc->opcode != opcode) {
		kv_fail(name, "completion opcode %d, expected %d", wc->opcode, opcode);
		return false;
	}
	return true;
}

static bool kv_post(struct kv_ctx *c, const char *name, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad = NULL;
	int err = ib_post_send(c->qp[0], wr, &bad);

	if (err)
		kv_fail(name, "ib_post_send: %d", err);
	return !err;
}

static void kv_drain(struct kv_ctx *c)
{
	struct ib_wc wc;

	while (ib_poll_cq(c->cq, 1, &wc) > 0)
		;
	c->nstash = 0;
}

static int kv_create_qps(struct kv_ctx *c)
{
	struct ib_qp_init_attr init;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&init, 0, sizeof(init));
		init.send_cq = c->cq;
		init.recv_cq = c->cq;
		init.qp_type = IB_QPT_RC;
		init.sq_sig_type = IB_SIGNAL_ALL_WR;
		init.cap.max_send_wr = KV_DEPTH;
		init.cap.max_recv_wr = KV_DEPTH;
		init.cap.max_send_sge = 2;
		init.cap.max_recv_sge = 2;
		init.cap.max_inline_data = 64;
		c->qp[i] = ib_create_qp(c->pd, &init);
		if (IS_ERR(c->qp[i])) {
			int err = PTR_ERR(c->qp[i]);

			c->qp[i] = NULL;
			return err;
		}
		/* The driver may give more than asked for (rxe: max(2 SGEs, 64 B inline)). */
		c->max_send_sge = init.cap.max_send_sge;
	}
	return 0;
}

static void kv_destroy_qps(struct kv_ctx *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (c->qp[i])
			ib_destroy_qp(c->qp[i]);
		c->qp[i] = NULL;
	}
	if (c->cq)
		kv_drain(c);
	c->broken = false;
}

static int kv_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = KV_PORT,
		.qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_ATOMIC,
	};

	return ib_modify_qp(qp, &attr,
			    IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

/* INIT -> RTR -> RTS, to @dest_qpn on the same GID. */
static int kv_to_rts(struct kv_ctx *c, struct ib_qp *qp, u32 dest_qpn)
{
	struct ib_qp_attr attr = {};
	int err;

	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(c->dev, KV_PORT);
	rdma_ah_set_port_num(&attr.ah_attr, KV_PORT);
	rdma_ah_set_grh(&attr.ah_attr, &c->gid, 0, c->gid_index, 1, 0);
	/* Kernel users pass a resolved destination MAC: ours (rxe loops back on it). */
	ether_addr_copy(attr.ah_attr.roce.dmac, c->dmac);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 1;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

static int kv_rts_pair(struct kv_ctx *c)
{
	return kv_to_rts(c, c->qp[0], c->qp[1]->qp_num) ?:
	       kv_to_rts(c, c->qp[1], c->qp[0]->qp_num);
}

/* A fresh pair in RTS: after an error completion both QPs may be in ERROR. */
static int kv_reconnect(struct kv_ctx *c)
{
	kv_destroy_qps(c);
	return kv_create_qps(c) ?: kv_to_init(c->qp[0]) ?: kv_to_init(c->qp[1]) ?:
	       kv_rts_pair(c);
}

static bool kv_ready(struct kv_ctx *c, const char *name)
{
	int err;

	if (!c->broken)
		return true;
	err = kv_reconnect(c);
	if (err) {
		c->broken = true;
		kv_fail(name, "reconnecting the QP pair: %d", err);
	}
	return !err;
}

/* a. Posting before the QP may: send before RTS, receive before INIT. */
static void case_a(struct kv_ctx *c)
{
	struct ib_sge rsge = kv_sge(c, KV_DMA(c, rcv), sizeof(c->buf->rcv));
	struct ib_sge ssge = kv_sge(c, KV_DMA(c, src), sizeof(c->buf->src));
	struct ib_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	struct ib_rdma_wr swr = {
		.wr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = KV_VA(c, dst),
		.rkey = c->pd->unsafe_global_rkey,
	};
	const struct ib_recv_wr *rbad = NULL;
	const struct ib_send_wr *sbad = NULL;
	const char *name;
	int err;

	name = "a1 post_recv on a QP in RESET: -EINVAL, bad_wr set";
	err = ib_post_recv(c->qp[1], &rwr, &rbad);
	if (err == -EINVAL && rbad == &rwr)
		kv_ok(name);
	else
		kv_fail(name, "returned %d, bad_wr %s", err, rbad == &rwr ? "set" : "not set");

	err = kv_to_init(c->qp[0]) ?: kv_to_init(c->qp[1]);
	if (err) {
		c->broken = true;
		kv_fail("a modify to INIT", "%d", err);
		return;
	}

	name = "a2 post_send on a QP in INIT: -EINVAL, bad_wr set";
	err = ib_post_send(c->qp[0], &swr.wr, &sbad);
	if (err == -EINVAL && sbad == &swr.wr)
		kv_ok(name);
	else
		kv_fail(name, "returned %d, bad_wr %s", err, sbad == &swr.wr ? "set" : "not set");

	name = "a3 post_recv on a QP in INIT: 0";
	rbad = NULL;
	err = ib_post_recv(c->qp[1], &rwr, &rbad);
	if (!err)
		kv_ok(name);
	else
		kv_fail(name, "returned %d", err);

	err = kv_rts_pair(c);
	if (err) {
		c->broken = true;
		kv_fail("a connect the pair (RTR, RTS)", "%d", err);
	}
}

/* b. RDMA WRITE then READ of 64 bytes through the PD's global rkey (rxe's DMA MR). */
static void case_b(struct kv_ctx *c)
{
	struct kv_buf *b = c->buf;
	struct ib_sge sge = kv_sge(c, KV_DMA(c, src), sizeof(b->src));
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 10, .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = KV_VA(c, dst),
		.rkey = c->pd->unsafe_global_rkey,
	};
	const char *name = "b1 RDMA WRITE 64 B through the global rkey: SUCCESS, bytes land";
	struct ib_wc wc;
	int i;

	if (!kv_ready(c, name))
		return;
	for (i = 0; i < sizeof(b->src); i++)
		b->src[i] = i * 7 + 1;
	memset(b->dst, 0, sizeof(b->dst));
	if (kv_post(c, name, &wr.wr) &&
	    kv_expect(c, name, 10, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc)) {
		if (memcmp(b->dst, b->src, sizeof(b->dst)))
			kv_fail(name, "target bytes differ (first %*ph)", 8, b->dst);
		else
			kv_ok(name);
	}

	name = "b2 RDMA READ 64 B through the global rkey: SUCCESS, bytes read";
	if (!kv_ready(c, name))
		return;
	for (i = 0; i < sizeof(b->dst); i++)
		b->dst[i] = 0xff - i;
	memset(b->rd, 0, sizeof(b->rd));
	sge = kv_sge(c, KV_DMA(c, rd), sizeof(b->rd));
	wr.wr.wr_id = 11;
	wr.wr.opcode = IB_WR_RDMA_READ;
	if (kv_post(c, name, &wr.wr) &&
	    kv_expect(c, name, 11, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc)) {
		if (memcmp(b->rd, b->dst, sizeof(b->rd)))
			kv_fail(name, "bytes read differ (first %*ph)", 8, b->rd);
		else
			kv_ok(name);
	}
}

/* c. An atomic through the global rkey, which has no REMOTE_ATOMIC: a remote access error. */
static void case_c(struct kv_ctx *c)
{
	struct kv_buf *b = c->buf;
	struct ib_sge sge = kv_sge(c, KV_DMA(c, result), sizeof(b->result));
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 20, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = KV_VA(c, target),
		.compare_add = 1,
		.rkey = c->pd->unsafe_global_rkey,
	};
	const char *name = "c FETCH_AND_ADD through the global rkey: REM_ACCESS_ERR, target unchanged";
	struct ib_wc wc;

	if (!kv_ready(c, name))
		return;
	b->target = KV_TARGET;
	b->result = 0;
	if (kv_post(c, name, &wr.wr) &&
	    kv_expect(c, name, 20, IB_WC_REM_ACCESS_ERR, 0, &wc)) {
		if (b->target != KV_TARGET)
			kv_fail(name, "target changed to %#llx", b->target);
		else
			kv_ok(name);
	}
	/* Both QPs may be in ERROR now (requester and responder). */
	c->broken = true;
}

/* d. One WR refused by validate_send_wr: -EINVAL, bad_wr is that WR, nothing posted. */
static void kv_refused(struct kv_ctx *c, const char *name, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad = NULL;
	int err = ib_post_send(c->qp[0], wr, &bad);

	if (err == -EINVAL && bad == wr)
		kv_ok(name);
	else
		kv_fail(name, "returned %d, bad_wr %s", err,
		     bad == wr ? "set" : bad ? "another WR" : "not set");
}

static void case_d(struct kv_ctx *c)
{
	struct kv_buf *b = c->buf;
	struct ib_sge sge = kv_sge(c, KV_DMA(c, result), 4);
	struct ib_atomic_wr awr = {
		.wr = { .wr_id = 30, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = KV_VA(c, target),
		.compare_add = 1,
		.rkey = c->pd->unsafe_global_rkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 32, .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE },
		.remote_addr = KV_VA(c, dst),
		.rkey = c->pd->unsafe_global_rkey,
	};
	const char *name = "d1 atomic with a 4-byte SGE: refused";
	struct ib_sge *sges;
	struct ib_wc wc;
	u32 i, n;

	if (!kv_ready(c, name))
		return;
	kv_refused(c, name, &awr.wr);

	sge.length = 8;
	awr.wr.wr_id = 31;
	awr.remote_addr = KV_VA(c, target) + 4;
	kv_refused(c, "d2 atomic to a remote address not 8-byte aligned: refused", &awr.wr);

	sge = kv_sge(c, KV_DMA(c, rd), sizeof(b->rd));
	kv_refused(c, "d3 RDMA READ with IB_SEND_INLINE: refused", &wr.wr);

	name = "d4 RDMA WRITE with num_sge above max_send_sge: refused";
	n = c->max_send_sge + 1;
	sges = kcalloc(n, sizeof(*sges), GFP_KERNEL);
	if (!sges) {
		kv_fail(name, "no memory for %u SGEs", n);
	} else {
		for (i = 0; i < n; i++)
			sges[i] = kv_sge(c, KV_DMA(c, src) + i % sizeof(b->src), 1);
		wr.wr.wr_id = 33;
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		wr.wr.send_flags = IB_SEND_SIGNALED;
		wr.wr.sg_list = sges;
		wr.wr.num_sge = n;
		kv_refused(c, name, &wr.wr);
		kfree(sges);
	}

	name = "d5 then a valid RDMA WRITE on the same QP: SUCCESS, first and only completion";
	for (i = 0; i < sizeof(b->src); i++)
		b->src[i] = i ^ 0x5a;
	memset(b->dst, 0, sizeof(b->dst));
	sge = kv_sge(c, KV_DMA(c, src), sizeof(b->src));
	wr.wr.wr_id = 34;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	if (!kv_post(c, name, &wr.wr) ||
	    !kv_expect(c, name, 34, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc))
		return;
	msleep(20);
	if (c->nstash || ib_poll_cq(c->cq, 1, &wc) > 0)
		kv_fail(name, "another completion: wr_id %llu status %s",
		     c->nstash ? c->stash[0].wr_id : wc.wr_id,
		     ib_wc_status_msg(c->nstash ? c->stash[0].status : wc.status));
	else if (memcmp(b->dst, b->src, sizeof(b->dst)))
		kv_fail(name, "target bytes differ (first %*ph)", 8, b->dst);
	else
		kv_ok(name);
}

/* e. An inline SEND from a plain kernel buffer into a receive posted on the peer. */
static void case_e(struct kv_ctx *c)
{
	struct kv_buf *b = c->buf;
	struct ib_sge rsge = kv_sge(c, KV_DMA(c, rcv), sizeof(b->rcv));
	/* Inline: the SGE address is the kernel address of the data, copied at post time. */
	struct ib_sge ssge = kv_sge(c, (u64)(uintptr_t)b->msg, sizeof(b->msg));
	struct ib_recv_wr rwr = { .wr_id = 40, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 41, .sg_list = &ssge, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE };
	const char *name = "e inline SEND 32 B lands in the peer's receive, byte_len 32";
	u8 sent[sizeof(b->msg)];
	struct ib_wc wc;
	int err, i;

	if (!kv_ready(c, name))
		return;
	for (i = 0; i < sizeof(b->msg); i++)
		b->msg[i] = 0x80 + i;
	memcpy(sent, b->msg, sizeof(sent));
	memset(b->rcv, 0, sizeof(b->rcv));
	err = ib_post_recv(c->qp[1], &rwr, NULL);
	if (err) {
		kv_fail(name, "ib_post_recv: %d", err);
		return;
	}
	if (!kv_post(c, name, &swr))
		return;
	/* The data was copied at post time: what is sent is what the buffer held then. */
	memset(b->msg, 0xee, sizeof(b->msg));
	if (!kv_expect(c, name, 41, IB_WC_SUCCESS, IB_WC_SEND, &wc) ||
	    !kv_expect(c, name, 40, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		return;
	if (wc.byte_len != sizeof(sent))
		kv_fail(name, "byte_len %u", wc.byte_len);
	else if (memcmp(b->rcv, sent, sizeof(sent)))
		kv_fail(name, "bytes received differ (first %*ph)", 8, b->rcv);
	else
		kv_ok(name);
}

/* The first IPv4 RoCEv2 GID of port 1. */
/*
 * A fast-registration MR (ib_alloc_mr, as NVMe over RDMA, iSER and SRP use): mapped over the
 * buffer's dst with ib_map_mr_sg, registered with IB_WR_REG_MR (REMOTE_WRITE), written through
 * its rkey, then invalidated with IB_WR_LOCAL_INV.
 */
static void case_f(struct kv_ctx *c)
{
	struct kv_buf *b = c->buf;
	const char *name = "f fast-registration MR: REG_MR, RDMA WRITE 64 B through its rkey lands, LOCAL_INV";
	struct ib_sge sge = kv_sge(c, KV_DMA(c, src), sizeof(b->src));
	struct ib_reg_wr reg = { .wr = { .wr_id = 50, .opcode = IB_WR_REG_MR,
					 .send_flags = IB_SEND_SIGNALED },
				 .access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE };
	struct ib_rdma_wr wr = { .wr = { .wr_id = 51, .sg_list = &sge, .num_sge = 1,
					 .opcode = IB_WR_RDMA_WRITE, .send_flags = IB_SEND_SIGNALED } };
	struct ib_send_wr inv = { .wr_id = 52, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct scatterlist sg;
	struct ib_mr *mr;
	struct ib_wc wc;
	int n, i;

	if (!kv_ready(c, name))
		return;
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr)) {
		kv_fail(name, "ib_alloc_mr: %ld", PTR_ERR(mr));
		return;
	}
	sg_init_one(&sg, b->dst, sizeof(b->dst));
	sg_dma_address(&sg) = KV_DMA(c, dst);
	sg_dma_len(&sg) = sizeof(b->dst);
	n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		kv_fail(name, "ib_map_mr_sg: %d", n);
		goto out;
	}
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.mr = mr;
	reg.key = mr->rkey;
	for (i = 0; i < sizeof(b->src); i++)
		b->src[i] = i * 5 + 3;
	memset(b->dst, 0, sizeof(b->dst));
	wr.remote_addr = mr->iova;
	wr.rkey = mr->rkey;
	inv.ex.invalidate_rkey = mr->rkey;
	if (!kv_post(c, name, &reg.wr) || !kv_expect(c, name, 50, IB_WC_SUCCESS, IB_WC_REG_MR, &wc) ||
	    !kv_post(c, name, &wr.wr) || !kv_expect(c, name, 51, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, &wc))
		goto out;
	if (memcmp(b->dst, b->src, sizeof(b->dst))) {
		kv_fail(name, "target bytes differ (first %*ph)", 8, b->dst);
		goto out;
	}
	if (kv_post(c, name, &inv) && kv_expect(c, name, 52, IB_WC_SUCCESS, IB_WC_LOCAL_INV, &wc))
		kv_ok(name);
out:
	ib_dereg_mr(mr);
}

static int kv_find_gid(struct kv_ctx *c)
{
	const struct ib_gid_attr *attr;
	struct ib_port_attr pattr;
	int i, err;

	err = ib_query_port(c->dev, KV_PORT, &pattr);
	if (err)
		return err;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(c->dev, KV_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw)) {
			c->gid = attr->gid;
			c->gid_index = attr->index;
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

static int kv_setup(struct kv_ctx *c)
{
	int err;

	err = kv_find_gid(c);
	if (err) {
		kv_fail("setup", "no IPv4 RoCEv2 GID on port %d: %d", KV_PORT, err);
		return err;
	}
	c->pd = ib_alloc_pd(c->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(c->pd)) {
		err = PTR_ERR(c->pd);
		c->pd = NULL;
		kv_fail("setup", "ib_alloc_pd: %d", err);
		return err;
	}
	c->cq = ib_alloc_cq(c->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq)) {
		err = PTR_ERR(c->cq);
		c->cq = NULL;
		kv_fail("setup", "ib_alloc_cq: %d", err);
		return err;
	}
	c->buf = kzalloc(sizeof(*c->buf), GFP_KERNEL);
	if (!c->buf) {
		kv_fail("setup", "no memory");
		return -ENOMEM;
	}
	c->dma = ib_dma_map_single(c->dev, c->buf, sizeof(*c->buf), DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, c->dma)) {
		kv_fail("setup", "ib_dma_map_single failed");
		return -EIO;
	}
	c->mapped = true;
	err = kv_create_qps(c);
	if (err)
		kv_fail("setup", "ib_create_qp: %d", err);
	return err;
}

static void kv_teardown(struct kv_ctx *c)
{
	kv_destroy_qps(c);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->mapped)
		ib_dma_unmap_single(c->dev, c->dma, sizeof(*c->buf), DMA_BIDIRECTIONAL);
	kfree(c->buf);
	if (c->pd)
		ib_dealloc_pd(c->pd);
}

static int __init rxe_kverbs_init(void)
{
	struct net_device *ndev;
	struct kv_ctx *c;

	if (!netdev) {
		pr_err("netdev=NAME is required\n");
		return -EINVAL;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	ndev = dev_get_by_name(&init_net, netdev);
	if (!ndev) {
		pr_err("no net device %s\n", netdev);
		kfree(c);
		return -ENODEV;
	}
	ether_addr_copy(c->dmac, ndev->dev_addr);
	c->dev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	dev_put(ndev);
	if (!c->dev) {
		pr_err("no RDMA device on %s\n", netdev);
		kfree(c);
		return -ENODEV;
	}
	pr_info("testing %s on %s\n", dev_name(&c->dev->dev), netdev);

	if (!kv_setup(c)) {
		case_a(c);
		case_b(c);
		case_c(c);
		case_d(c);
		case_e(c);
		case_f(c);
	}
	kv_teardown(c);
	ib_device_put(c->dev);
	kfree(c);
	pr_info("%d passed, %d failed\n", passed, failed);
	return 0;
}

static void __exit rxe_kverbs_exit(void)
{
}

module_init(rxe_kverbs_init);
module_exit(rxe_kverbs_exit);
MODULE_DESCRIPTION("rxe-rs test: kernel verbs semantics of a soft-RoCE device");
MODULE_LICENSE("GPL");
