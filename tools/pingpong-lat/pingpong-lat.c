// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong-lat: busy-polling latency between two RC QPs of one RDMA device, driven by ONE
 * thread. Each round trip: QP A sends (or writes) SIZE bytes to QP B, the thread polls B until
 * they arrive, B answers, the thread polls A. Reported as perftest's latency tests report it
 * (half a round trip, microseconds), in perftest's result-line layout:
 *
 *   #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
 *
 * Why one thread (tests/vm/bench.sh, cells pingpong_*_lat): perftest's ib_send_lat runs two
 * busy-polling processes, and under QEMU's single-threaded TCG (so under -icount) a completion
 * written on one vCPU is seen by the other only when TCG next switches vCPUs, a tick later:
 * the measure is TCG's switching, not a driver. Here the only poller waits for work the
 * driver does wherever it runs: inline in the post (rxe-rs), or in a kworker on the other vCPU
 * (the C rdma_rxe), whose wake-up makes TCG switch to it at once. Under -icount the time of a
 * round trip is then the instructions executed for it on both vCPUs; with the vCPUs in parallel
 * it is what two cores take.
 *
 *   pingpong-lat -d DEV -x GID_INDEX [-m send|write] [-s SIZE] [-n ITERS]
 *
 * send: SEND with inline data into a posted receive, each side polling its CQ (ib_send_lat).
 * write: RDMA WRITE with inline data, each side polling the last byte of its buffer for the
 * iteration's mark (ib_write_lat). Sends are signaled every SIGNAL_EVERY posts and those
 * completions reaped as they come. Built against libibverbs in the guest by bench.sh.
 */
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 64	   /* send and receive queue depth of each QP */
#define SIGNAL_EVERY 16	   /* a signaled send every this many posts */
#define WARMUP 100	   /* round trips before the measured ones */
#define BUF_SIZE 4096	   /* each side's buffer: receives land and writes go here */
#define MAX_SIZE 64	   /* a message goes inline */

enum mode { SEND, WRITE };

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;	      /* BUF_SIZE bytes of the one MR */
	unsigned posted;      /* sends posted, for the signaling period */
	unsigned unreaped;    /* signaled sends whose completion is not polled yet */
};

static struct ibv_mr *mr;
static size_t size = 2;
static enum mode mode = SEND;

static void fail(const char *what, int err)
{
	fprintf(stderr, "pingpong-lat: %s: %s\n", what, strerror(err));
	exit(1);
}

static void check_wc(const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "pingpong-lat: completion %s (opcode %d)\n",
			ibv_wc_status_str(wc->status), wc->opcode);
		exit(1);
	}
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = BUF_SIZE, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = ibv_post_recv(s->qp, &wr, &bad);

	if (err)
		fail("ibv_post_recv", err);
}

/* Polls s's CQ once: reaps send completions; returns 1 for a receive (reposted), else 0. */
static int poll_once(struct side *s)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(s->cq, 1, &wc);

	if (n < 0)
		fail("ibv_poll_cq", EIO);
	if (n == 0)
		return 0;
	check_wc(&wc);
	if (wc.opcode & IBV_WC_RECV) {
		post_recv(s);
		return 1;
	}
	s->unreaped--;
	return 0;
}

/* Sends (or writes) the message marked `mark` from `from` to `to`. */
static void post(struct side *from, struct side *to, uint8_t mark)
{
	uint8_t msg[MAX_SIZE];
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = size };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_INLINE },
			   *bad;
	int err;

	memset(msg, 0, size);
	msg[size - 1] = mark;
	if (mode == WRITE) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)to->buf;
		wr.wr.rdma.rkey = mr->rkey;
	} else {
		wr.opcode = IBV_WR_SEND;
	}
	if (++from->posted % SIGNAL_EVERY == 0) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		from->unreaped++;
	}
	/* Room in the send queue: its signaled sends' completions reaped. */
	while (from->unreaped > DEPTH / SIGNAL_EVERY - 1)
		poll_once(from);
	err = ibv_post_send(from->qp, &wr, &bad);
	if (err)
		fail("ibv_post_send", err);
}

/* Busy-polls until `to` has the message marked `mark`. */
static void await(struct side *to, uint8_t mark)
{
	if (mode == SEND) {
		while (!poll_once(to))
			;
		if (to->buf[size - 1] != mark) {
			fprintf(stderr, "pingpong-lat: received mark %u, expected %u\n",
				to->buf[size - 1], mark);
			exit(1);
		}
		return;
	}
	while (*(volatile uint8_t *)&to->buf[size - 1] != mark)
		poll_once(to);
}

static void connect_qp(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid, int gidx)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS);

	if (err)
		fail("modify to INIT", err);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = gidx, .hop_limit = 1 } },
	};
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					    IBV_QP_MIN_RNR_TIMER);
	if (err)
		fail("modify to RTR", err);
	/* PSNs start at 0 on both sides (the RTR's rq_psn, this sq_psn). */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				  .rnr_retry = 7, .max_rd_atomic = 1 };
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		fail("modify to RTS", err);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "pingpong-lat: cannot open device %s\n", name);
		exit(1);
	}
	return ctx;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int gidx = -1, iters = 1000, opt, bad = 0;

	while ((opt = getopt(argc, argv, "d:x:m:s:n:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'x': gidx = atoi(optarg); break;
		case 'm':
			if (!strcmp(optarg, "write"))
				mode = WRITE;
			else if (strcmp(optarg, "send"))
				bad = 1;
			break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'n': iters = atoi(optarg); break;
		default: bad = 1; break;
		}
	}
	if (bad || !dev || gidx < 0 || size < 1 || size > MAX_SIZE || iters < 1) {
		fprintf(stderr, "usage: %s -d DEV -x GID_INDEX [-m send|write] [-s 1..%d] [-n ITERS]\n",
			argv[0], MAX_SIZE);
		return 2;
	}

	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static uint8_t bufs[2 * BUF_SIZE] __attribute__((aligned(4096)));
	union ibv_gid gid;
	struct side side[2] = { { .buf = bufs }, { .buf = bufs + BUF_SIZE } };
	int err;

	if (!pd)
		fail("ibv_alloc_pd", errno);
	mr = ibv_reg_mr(pd, bufs, sizeof(bufs), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		fail("ibv_reg_mr", errno);
	err = ibv_query_gid(ctx, 1, gidx, &gid);
	if (err)
		fail("ibv_query_gid", err);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr init = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline_data = MAX_SIZE },
		};

		side[i].cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
		if (!side[i].cq)
			fail("ibv_create_cq", errno);
		init.send_cq = init.recv_cq = side[i].cq;
		side[i].qp = ibv_create_qp(pd, &init);
		if (!side[i].qp)
			fail("ibv_create_qp", errno);
	}
	connect_qp(side[0].qp, side[1].qp->qp_num, &gid, gidx);
	connect_qp(side[1].qp, side[0].qp->qp_num, &gid, gidx);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < DEPTH; j++)
			post_recv(&side[i]);

	double *t = calloc(iters, sizeof(*t));

	if (!t)
		fail("calloc", ENOMEM);
	for (int i = -WARMUP; i < iters; i++) {
		/* A mark no buffer holds yet: 1..255, never the previous one. */
		uint8_t mark = 1 + (uint8_t)((unsigned)(i + WARMUP) % 255);
		double start = now_us();

		post(&side[0], &side[1], mark);
		await(&side[1], mark);
		post(&side[1], &side[0], mark);
		await(&side[0], mark);
		if (i >= 0)
			t[i] = (now_us() - start) / 2;
	}

	double sum = 0, sq = 0;

	for (int i = 0; i < iters; i++)
		sum += t[i];
	double avg = sum / iters;

	for (int i = 0; i < iters; i++)
		sq += (t[i] - avg) * (t[i] - avg);
	qsort(t, iters, sizeof(*t), cmp_double);
	printf(" #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] "
	       "t_stdev[usec] 99%% percentile[usec] 99.9%% percentile[usec]\n");
	printf(" %zu %d %.2f %.2f %.2f %.2f %.2f %.2f %.2f\n", size, iters, t[0], t[iters - 1],
	       t[iters / 2], avg, sqrt(sq / iters), t[(int)(iters * 0.99)],
	       t[(int)(iters * 0.999)]);

	for (int i = 0; i < 2; i++) {
		ibv_destroy_qp(side[i].qp);
		ibv_destroy_cq(side[i].cq);
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(t);
	return 0;
}
