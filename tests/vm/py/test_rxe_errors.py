# SPDX-License-Identifier: GPL-2.0
"""
Error flows of an RC connection, checked the same way against the C rdma_rxe and rxe-rs
(run by tests/vm/errors.sh through rdma-core's tests/run_tests.py):

- a wrong rkey: REM_ACCESS_ERR on the requester, both QPs in ERROR, the rest flushed;
- a receiver that posts its receive late: RNR NAKs retried until it does (rnr_retry = 7);
- rnr_retry = 1 with no receive ever: RNR_RETRY_EXC_ERR;
- several SENDs to a receiver without receive WQEs: each RNR retry resends the NAKed request
  alone until it is acknowledged, not the whole window the responder would drop (C resends the
  window, so this one fails on C), and every SEND completes once the receives are posted;
- RTS -> SQD raises IBV_EVENT_SQ_DRAINED once the send queue is drained, and SQD -> RTS resumes
  (the C driver raises the event but never sends a WR that SQD held back: its send task is not
  scheduled on SQD -> RTS, so this one fails on C);
- unsignaled SENDs (sq_sig_all = 0): a signaled one after them completes at once, alone; all
  received, SQD drains at once and ERROR flushes none of them (rxe-rs leaves a looped-back ACK
  of such sends for the task's next run: these are what must not wait for it);
- a QP on an SRQ moved to ERROR raises IBV_EVENT_QP_LAST_WQE_REACHED;
- an RDMA READ to a QP with max_dest_rd_atomic = 0: NAK invalid request (C check_resource,
  RESPST_ERR_TOO_MANY_RDMA_ATM_REQ), REM_INV_REQ_ERR on the requester, the responder in ERROR;
- a UD message too big for the receive buffer (C rxe_resp_check_length): dropped, the receive
  WQE reused for the next message that fits, the QP still in RTS (a remote sender cannot break
  a UD QP);
- a UD message longer than the path MTU (C10-93.1.1, C "fake a successful UD send"): no packet
  sent, the send completes successfully, nothing received;
- send completions as C make_send_cqe fills them: opcode, IBV_WC_WITH_IMM for SEND and WRITE
  with immediate, byte_len the message length;
- fences (C rxe_wqe_is_fenced): an RDMA READ and an IBV_SEND_FENCE SEND of the bytes it reads,
  posted together: the SEND waits for the READ and carries what it brought.
"""
import subprocess
import threading
import time

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.qp import QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR
from tests.base import RCResources, RDMATestCase, UDResources
import tests.utils as u

REMOTE = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ


def with_base(name, value, fn):
    """fn() with tests.base's `name` set to value (to_rts takes its defaults from there)."""
    import tests.base as b
    orig = getattr(b, name)
    setattr(b, name, value)
    try:
        return fn()
    finally:
        setattr(b, name, orig)


class RcRemote(RCResources):
    rnr_retry = None

    def create_mr(self):
        self.mr = MR(self.pd, self.msg_size, REMOTE)

    def create_qp_attr(self):
        attr = super().create_qp_attr()
        attr.qp_access_flags = REMOTE
        return attr

    def to_rts(self):
        if self.rnr_retry is None:
            return super().to_rts()
        # base.set_rnr_attributes() is what to_rts uses: wrap it for this QP.
        import tests.base as b
        orig = b.set_rnr_attributes
        def with_rnr(attr):
            orig(attr)
            attr.rnr_retry = self.rnr_retry
        return with_base('set_rnr_attributes', with_rnr, super().to_rts)


class RcRnrOnce(RcRemote):
    rnr_retry = 1


class RcNoDestRdAtomic(RcRemote):
    """Both QPs with max_dest_rd_atomic = 0: no responder resources for reads."""

    def to_rts(self):
        return with_base('MAX_DEST_RD_ATOMIC', 0, super().to_rts)


class RcDeepSq(RcRemote):
    """RcRemote with room for several send WRs (the base resources hold one)."""

    def create_qp_cap(self):
        return QPCap(max_send_wr=8, max_recv_wr=self.num_msgs)


class RcUnsignaled(RcDeepSq):
    """RcDeepSq whose send WRs complete unseen unless they ask (sq_sig_all = 0), with a
    retransmit timeout of 4 s (timeout 20): what happens within a second is not the timer's."""

    def create_qp_init_attr(self):
        return QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, srq=self.srq,
                          cap=self.create_qp_cap(), sq_sig_all=0)

    def to_rts(self):
        return with_base('TIMEOUT', 20, super().to_rts)


def post_sends(res, n, signal_last=False):
    """n SEND WRs of res's message, unsignaled but the last if signal_last."""
    for i in range(n):
        wr, _ = u.get_send_elements(res, False)
        wr.send_flags = e.IBV_SEND_SIGNALED if signal_last and i == n - 1 else 0
        u.post_send(res, wr)


def completions(cq, within):
    """Every completion cq gives within `within` seconds."""
    wcs, end = [], time.monotonic() + within
    while time.monotonic() < end:
        n, got = cq.poll(8)
        wcs += got[:n]
        time.sleep(0.01)
    return wcs


def counters(dev):
    """The port's counters by name (`rdma statistic`)."""
    out = subprocess.run(['rdma', 'statistic', 'show', 'link', f'{dev}/1'],
                         capture_output=True, text=True, check=True).stdout.split()
    return {k: int(v) for k, v in zip(out, out[1:]) if v.isdigit() and not k.isdigit()}


def counter(dev, name):
    return counters(dev)[name]


def qp_state(res):
    attr, _ = res.qp.query(e.IBV_QP_STATE)
    return attr.qp_state


def async_event(ctx, timeout=20):
    """The next async event of ctx (acked), or a failure after timeout seconds."""
    box = []
    t = threading.Thread(target=lambda: box.append(ctx.get_async_event()), daemon=True)
    t.start()
    t.join(timeout)
    if not box:
        raise AssertionError(f'no async event within {timeout} s')
    box[0].ack()
    return box[0].event_type


class RxeErrorFlows(RDMATestCase):
    def test_write_bad_rkey(self):
        self.create_players(RcRemote)
        cli, srv = self.client, self.server
        u.post_recv(srv, u.get_recv_wr(srv))
        wr, _ = u.get_send_elements(cli, False, e.IBV_WR_RDMA_WRITE)
        wr.set_wr_rdma(int(cli.rkey) ^ 0x1, int(cli.raddr))
        u.post_send(cli, wr)
        wcs = u._poll_cq(cli.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_REM_ACCESS_ERR,
                         u.wc_status_to_str(wcs[0].status))
        # The responder NAKed and went to ERROR: its posted receive is flushed.
        wcs = u._poll_cq(srv.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_WR_FLUSH_ERR,
                         u.wc_status_to_str(wcs[0].status))
        self.assertEqual(qp_state(cli), e.IBV_QPS_ERR)
        self.assertEqual(qp_state(srv), e.IBV_QPS_ERR)
        # Whatever the requester posts now is flushed.
        wr, _ = u.get_send_elements(cli, False)
        u.post_send(cli, wr)
        wcs = u._poll_cq(cli.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_WR_FLUSH_ERR,
                         u.wc_status_to_str(wcs[0].status))

    def test_read_without_dest_rd_atomic(self):
        self.create_players(RcNoDestRdAtomic)
        cli, srv = self.client, self.server
        wr, _ = u.get_send_elements(cli, False, e.IBV_WR_RDMA_READ)
        wr.set_wr_rdma(int(cli.rkey), int(cli.raddr))
        u.post_send(cli, wr)
        wcs = u._poll_cq(cli.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_REM_INV_REQ_ERR,
                         u.wc_status_to_str(wcs[0].status))
        self.assertEqual(qp_state(cli), e.IBV_QPS_ERR)
        self.assertEqual(qp_state(srv), e.IBV_QPS_ERR)

    def test_ud_too_big_for_receive_buffer(self):
        self.create_players(UDResources)
        cli, srv = self.client, self.server
        fits, GRH_SIZE = 16, UDResources.GRH_SIZE
        # One receive: the GRH and 16 bytes. The client's msg_size message does not fit.
        srv.qp.post_recv(RecvWR(num_sge=1, sg=[SGE(srv.mr.buf, GRH_SIZE + fits, srv.mr.lkey)]))
        ah = u.get_global_ah(cli, self.gid_index, self.ib_port)
        wr, _ = u.get_send_elements(cli, False)
        self.assertGreater(cli.msg_size, fits)
        u.post_send(cli, wr, ah=ah)
        u.poll_cq(cli.cq)
        time.sleep(1)
        n, _ = srv.cq.poll()
        self.assertEqual(n, 0, 'the message that does not fit must be dropped, not completed')
        self.assertEqual(qp_state(srv), e.IBV_QPS_RTS)
        # The same receive WQE takes the next message, which fits.
        cli.mr.write('x' * fits, fits)
        small = SendWR(num_sge=1, sg=[SGE(cli.mr.buf, fits, cli.mr.lkey)])
        u.post_send(cli, small, ah=ah)
        u.poll_cq(cli.cq)
        wcs = u._poll_cq(srv.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_SUCCESS, u.wc_status_to_str(wcs[0].status))
        self.assertEqual(wcs[0].byte_len, GRH_SIZE + fits)
        self.assertEqual(qp_state(srv), e.IBV_QPS_RTS)

    def test_ud_longer_than_mtu(self):
        self.create_players(UDResources, msg_size=2048)
        cli, srv = self.client, self.server
        mtu = cli.ctx.query_port(self.ib_port).active_mtu
        self.assertLess(256 << (mtu - 1), cli.msg_size)  # IBV_MTU_256 is 1
        u.post_recv(srv, u.get_recv_wr(srv))
        ah = u.get_global_ah(cli, self.gid_index, self.ib_port)
        sent = counter(self.dev_name, 'sent_pkts')
        wr, _ = u.get_send_elements(cli, False)
        u.post_send(cli, wr, ah=ah)
        wcs = u._poll_cq(cli.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_SUCCESS, u.wc_status_to_str(wcs[0].status))
        self.assertEqual(counter(self.dev_name, 'sent_pkts'), sent, 'no packet may be sent')
        time.sleep(1)
        n, _ = srv.cq.poll()
        self.assertEqual(n, 0, 'nothing may be received')
        self.assertEqual(qp_state(cli), e.IBV_QPS_RTS)

    def test_send_cqe_fields(self):
        self.create_players(RcRemote)
        cli, srv = self.client, self.server
        for opcode, want_op in ((e.IBV_WR_SEND_WITH_IMM, e.IBV_WC_SEND),
                                (e.IBV_WR_RDMA_WRITE_WITH_IMM, e.IBV_WC_RDMA_WRITE),
                                (e.IBV_WR_SEND, e.IBV_WC_SEND),
                                (e.IBV_WR_RDMA_WRITE, e.IBV_WC_RDMA_WRITE)):
            if opcode != e.IBV_WR_RDMA_WRITE:
                u.post_recv(srv, u.get_recv_wr(srv))
            wr, _ = u.get_send_elements(cli, False, opcode)
            if opcode in (e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE_WITH_IMM):
                wr.imm_data = 0x12345678
            u.post_send(cli, wr)
            wc = u._poll_cq(cli.cq)[0]
            self.assertEqual(wc.status, e.IBV_WC_SUCCESS, u.wc_status_to_str(wc.status))
            self.assertEqual(wc.opcode, want_op, f'opcode of WR {opcode}')
            self.assertEqual(wc.byte_len, cli.msg_size, f'byte_len of WR {opcode}')
            imm = opcode in (e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE_WITH_IMM)
            self.assertEqual(bool(wc.wc_flags & e.IBV_WC_WITH_IMM), imm, f'flags of WR {opcode}')
            if opcode != e.IBV_WR_RDMA_WRITE:
                u._poll_cq(srv.cq)

    def test_fenced_after_read(self):
        self.create_players(RcDeepSq)
        cli, srv = self.client, self.server
        half = cli.msg_size // 2
        srv.mem_write('r' * cli.msg_size, cli.msg_size)
        cli.mem_write('c' * cli.msg_size, cli.msg_size)
        u.post_recv(srv, u.get_recv_wr(srv))
        signaled = e.IBV_SEND_SIGNALED
        # One post (one doorbell) of two WRs: without the fence the requester would send the
        # SEND right behind the READ request, with the client's bytes ('c'); fenced, it waits
        # for the READ's response and carries the server's ('r'), which land where they were.
        send = SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1,
                      sg=[SGE(cli.mr.buf, half, cli.mr.lkey)],
                      send_flags=signaled | e.IBV_SEND_FENCE)
        read = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                      sg=[SGE(cli.mr.buf, half, cli.mr.lkey)], send_flags=signaled,
                      next_wr=send)
        read.set_wr_rdma(int(cli.rkey), int(cli.raddr))
        cli.qp.post_send(read)
        wcs = [u._poll_cq(cli.cq)[0] for _ in range(2)]
        self.assertEqual([w.wr_id for w in wcs], [1, 2])
        for w in wcs:
            self.assertEqual(w.status, e.IBV_WC_SUCCESS, u.wc_status_to_str(w.status))
        wc = u._poll_cq(srv.cq)[0]
        self.assertEqual(wc.status, e.IBV_WC_SUCCESS, u.wc_status_to_str(wc.status))
        self.assertEqual(srv.mem_read(half), b'r' * half)
        self.assertEqual(qp_state(cli), e.IBV_QPS_RTS)

    def test_rnr_late_receive(self):
        self.create_players(RcRemote)
        cli, srv = self.client, self.server
        before = counter(self.dev_name, 'rcvd_rnr_err')
        wr, _ = u.get_send_elements(cli, False)
        u.post_send(cli, wr)
        time.sleep(0.5)
        u.post_recv(srv, u.get_recv_wr(srv))
        u.poll_cq(cli.cq)
        u.poll_cq(srv.cq)
        msg = srv.mem_read(srv.msg_size)
        self.assertEqual(msg, b'c' * srv.msg_size)
        self.assertGreater(counter(self.dev_name, 'rcvd_rnr_err'), before)

    def test_rnr_retry_probes(self):
        self.create_players(RcDeepSq)
        cli, srv = self.client, self.server
        n = 8
        before = counters(self.dev_name)
        for _ in range(n):
            wr, _ = u.get_send_elements(cli, False)
            u.post_send(cli, wr)
        time.sleep(0.5)
        after = counters(self.dev_name)
        moved = {k: after[k] - before[k] for k in after if after[k] != before[k]}
        rnr, pkts = moved.get('rcvd_rnr_err', 0), moved.get('sent_pkts', 0)
        self.assertGreater(rnr, 1, 'no RNR retry within 0.5 s')
        # About a request and its RNR NAK per retry, with room for the first burst and a
        # retransmit timeout; resending the window (C) is n requests and two NAKs per retry.
        self.assertLessEqual(pkts, 2 * n + 3 * rnr, f'{pkts} packets for {rnr} RNR NAKs: {moved}')
        for _ in range(n):
            u.post_recv(srv, u.get_recv_wr(srv))
        u.poll_cq(cli.cq, n)
        u.poll_cq(srv.cq, n)
        self.assertEqual(srv.mem_read(srv.msg_size), b'c' * srv.msg_size)
        self.assertEqual(qp_state(cli), e.IBV_QPS_RTS)

    def test_rnr_retry_exceeded(self):
        self.create_players(RcRnrOnce)
        cli = self.client
        wr, _ = u.get_send_elements(cli, False)
        u.post_send(cli, wr)
        wcs = u._poll_cq(cli.cq)
        self.assertEqual(wcs[0].status, e.IBV_WC_RNR_RETRY_EXC_ERR,
                         u.wc_status_to_str(wcs[0].status))
        self.assertEqual(qp_state(cli), e.IBV_QPS_ERR)

    def test_sqd_drained(self):
        self.create_players(RcRemote)
        cli, srv = self.client, self.server
        n = 1  # the test resources' send queue holds one WR
        for _ in range(n):
            u.post_recv(srv, u.get_recv_wr(srv))
        for _ in range(n):
            wr, _ = u.get_send_elements(cli, False)
            u.post_send(cli, wr)
        cli.qp.modify(QPAttr(qp_state=e.IBV_QPS_SQD), e.IBV_QP_STATE)
        self.assertEqual(async_event(cli.ctx), e.IBV_EVENT_SQ_DRAINED)
        self.assertEqual(qp_state(cli), e.IBV_QPS_SQD)
        # Back to RTS: whatever SQD held back goes out; every send completes on both sides.
        cli.qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
        for _ in range(n):
            u.poll_cq(cli.cq)
            u.poll_cq(srv.cq)
        self.assertEqual(qp_state(cli), e.IBV_QPS_RTS)

    def unsignaled_sends_received(self, n=8, signal_last=False):
        """The client's n SENDs (unsignaled but the last if signal_last), all received; the
        client."""
        self.create_players(RcUnsignaled)
        cli, srv = self.client, self.server
        for _ in range(n):
            u.post_recv(srv, u.get_recv_wr(srv))
        post_sends(cli, n, signal_last)
        u.poll_cq(srv.cq, n)
        return cli

    def test_unsignaled_then_signaled(self):
        # Unsignaled sends, then a signaled one: one completion, at once (the retransmit timer
        # is 4 s away).
        t0 = time.monotonic()
        cli = self.unsignaled_sends_received(signal_last=True)
        wcs = []
        while not wcs and time.monotonic() < t0 + 1:
            k, got = cli.cq.poll(8)
            wcs = got[:k]
        self.assertEqual([wc.status for wc in wcs], [e.IBV_WC_SUCCESS],
                         'not one completion within 1 s')
        self.assertEqual(completions(cli.cq, 0.2), [])

    def test_unsignaled_then_sqd(self):
        # Unsignaled sends all received: SQD drains at once, nothing completes on the sender.
        cli = self.unsignaled_sends_received()
        cli.qp.modify(QPAttr(qp_state=e.IBV_QPS_SQD), e.IBV_QP_STATE)
        self.assertEqual(async_event(cli.ctx, timeout=1), e.IBV_EVENT_SQ_DRAINED)
        self.assertEqual(completions(cli.cq, 0.2), [])

    def test_unsignaled_then_error(self):
        # Unsignaled sends all received and acknowledged: moving the sender to ERROR flushes
        # none of them (a flush completion is only for a WR not completed).
        cli = self.unsignaled_sends_received()
        time.sleep(0.2)  # the last ACK's way back, on either driver
        cli.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
        self.assertEqual([wc.status for wc in completions(cli.cq, 0.3)], [])
        # A WR posted in ERROR is flushed, and seen.
        post_sends(cli, 1, signal_last=True)
        self.assertEqual([wc.status for wc in completions(cli.cq, 0.3)],
                         [e.IBV_WC_WR_FLUSH_ERR])

    def test_last_wqe_reached(self):
        self.create_players(RcRemote, with_srq=True)
        srv = self.server
        srv.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
        self.assertEqual(async_event(srv.ctx), e.IBV_EVENT_QP_LAST_WQE_REACHED)
