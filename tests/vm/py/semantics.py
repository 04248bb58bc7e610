# SPDX-License-Identifier: GPL-2.0
"""
Verbs semantics the rdma-core suite does not reach (run by tests/vm/semantics.sh, against
either driver): one case per run, an RC pair from DEV_A (requester) to DEV_B (responder).

  python3 semantics.py CASE DEV_A GID_A DEV_B GID_B

Cases (IBA 1.7 chapters 9-11):
  bad_lkey         a receive WQE whose lkey names no MR: the receive completes LOC_PROT_ERR,
                   the responder NAKs remote operational error, the requester completes
                   REM_OP_ERR (responder class A), both QPs end in ERROR.
  stop_at_error    a 16 KiB RDMA WRITE, one with a bad lkey and a 64 B one, posted with one
                   doorbell: the third is never executed (it completes WR_FLUSH_ERR, its target
                   untouched), the failed one completes in error, the QP ends in ERROR.
  atomic_sges      a fetch-and-add whose local data is two 4-byte SGEs: the original value is
                   scattered over both, nothing written past the first.
  cq_resize        ibv_resize_cq below the completions waiting: EINVAL; at their number: they
                   stay, in order.
  post_states      ibv_post_send in INIT and in RTR: EINVAL; in RTS it is sent.
  cq_overflow      a receive CQ smaller than the messages sent, never polled while they arrive
                   (C11-37/38): the responder QP goes to ERROR and the request whose completion
                   was lost is not acknowledged, so the requester never has more successful
                   sends than the responder has successful receives.
  solicited_error  a CQ armed solicited-only (ibv_req_notify_cq(cq, 1)) wakes on an
                   unsuccessful completion (IBA 11.4.2.2): an RDMA WRITE with a wrong rkey, then
                   the flush of the next WR.
  lossy_write      three 1 MiB RDMA WRITEs at path MTU 256 (4096 packets each), retry_cnt 6, over a
                   lossy link (semantics.sh puts netem on the requester's egress): every
                   acknowledgement that moves the completer on restores the retry budget, so the
                   write completes and the data arrives whole.
  wrap             addresses whose addr + len wraps 2^64, with valid keys: an RDMA WRITE and
                   an RDMA READ to va 2^64-16 (REM_ACCESS_ERR, the MR untouched), a SEND from and
                   a receive into an SGE at 2^64-16 (LOC_PROT_ERR; the sender REM_OP_ERR).
  comm_est         a responder QP in RTR (not yet RTS) receives a SEND: it completes, and the
                   QP raises IBV_EVENT_COMM_EST (IBA affiliated asynchronous events: the first
                   packet received in RTR), once: not again in RTS, and none on the requester.
  destroy_loop N   N times: two QPs on one device, a burst of SENDs and WRITEs in flight, both
                   QPs destroyed without waiting; then one clean exchange on fresh QPs.
  dereg_in_flight N  N times: a 1 MiB RDMA WRITE and a 1 MiB RDMA READ posted at path MTU 4096
                   over a slow link (semantics.sh delays both directions), then an MR they use
                   deregistered and its memory freed at once: the source on even rounds, the
                   target on odd. Packets still queued refer to that memory (rxe-rs sends
                   page-sized payloads by reference); every WR completes (successfully or
                   not) and, after the rounds, a fresh pair moves 1 MiB each way intact.
  mw_inv_in_flight a 1 MiB RDMA WRITE through a type 2 memory window over a slow link, the
                   window invalidated (LOCAL_INV on the responder) while it is under way: the
                   WRITE completes REM_ACCESS_ERR, the end of the MR is not written.
  dereg_looped N   N times, two QPs of one device at path MTU 1024: a 4 MiB RDMA WRITE into an
                   on-demand-paging MR not yet faulted in (the responder waits for its pages
                   with requests queued: rxe-rs leaves their payloads in the source MR until
                   it copies them), then the source MR deregistered and freed at once, while
                   the WRITE goes on in the background; it completes (successfully or not).
                   Then a fresh pair moves 1 MiB each way intact (RDMA WRITE and READ, 1 KiB
                   packets looped back).
  odp_small N      N times, two QPs of one device: every page of an on-demand-paging MR dropped
                   (MADV_DONTNEED), then eight 48-byte RDMA WRITEs to eight of its pages and a
                   48-byte SEND into a receive buffer in another, posted back to back. Small
                   looped-back requests go through the responder's request ring (rxe-rs), the
                   first waits for its page with the others queued behind it: every WR
                   completes successfully and every byte lands where it was sent.

Prints "ok   ..." / "FAIL ..." per check, then "N passed, M failed"; exits 1 on a failure.
Every wait is bounded.
"""
import ctypes
import errno
import os
import random
import select
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID, AHAttr, GlobalRoute
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, RecvWR, SendWR

from guestcheck import DRIVER, check, tally, wc_name

REMOTE = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
ATOMIC = e.IBV_ACCESS_REMOTE_ATOMIC
WC_TIMEOUT = 30


def event_fds():
    """This process's uverbs event files (a context's async events, completion channels)."""
    fds = set()
    for f in os.listdir('/proc/self/fd'):
        try:
            if os.readlink(f'/proc/self/fd/{f}') == 'anon_inode:[infinibandevent]':
                fds.add(int(f))
        except OSError:
            pass  # the directory's own fd, closed by now
    return fds


def opened_event_fd(make):
    """make() and the one uverbs event file it opened (None if not exactly one)."""
    before = event_fds()
    obj = make()
    new = event_fds() - before
    return obj, (new.pop() if len(new) == 1 else None)


class End:
    """One side: a context, a PD, a CQ (with a completion channel if asked), an MR, RC QPs."""

    def __init__(self, dev, gid_index, cqe=64, channel=False, mr_len=4096, max_send_wr=16,
                 max_recv_wr=16, max_send_sge=1, mr_access=REMOTE):
        # The context's async event file, to wait on with select.
        self.ctx, self.async_fd = opened_event_fd(lambda: Context(name=dev))
        self.pd = PD(self.ctx)
        self.gid_index = gid_index
        self.gid = self.ctx.query_gid(1, gid_index)
        self.channel, self.channel_fd = None, None
        if channel:
            # pyverbs does not expose the channel's fd: the one event file the channel opened.
            self.channel, self.channel_fd = opened_event_fd(lambda: CompChannel(self.ctx))
        self.cq = CQ(self.ctx, cqe, None, self.channel, 0)
        self.mr = MR(self.pd, mr_len, e.IBV_ACCESS_LOCAL_WRITE | mr_access)
        self.cap = QPCap(max_send_wr=max_send_wr, max_recv_wr=max_recv_wr,
                         max_send_sge=max_send_sge, max_recv_sge=1)
        self.qp = self.new_qp()

    def new_qp(self):
        return QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                                      cap=self.cap))

    def connect(self, qp, peer, peer_qp, mtu=e.IBV_MTU_1024, retry_cnt=6, timeout=14,
                rtr_only=False):
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | REMOTE | ATOMIC
        attr.path_mtu = mtu
        attr.dest_qp_num = peer_qp.qp_num
        attr.rq_psn = attr.sq_psn = 0x1000
        attr.max_dest_rd_atomic = attr.max_rd_atomic = 1
        attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, timeout, \
            retry_cnt, 6
        gr = GlobalRoute(dgid=peer.gid, sgid_index=self.gid_index)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        if rtr_only:
            qp.to_rtr(attr)
        else:
            qp.to_rts(attr)


def pair(dev_a, gid_a, dev_b, gid_b, a=None, b=None, **connect):
    a = a or End(dev_a, gid_a)
    b = b or End(dev_b, gid_b)
    a.connect(a.qp, b, b.qp, **connect)
    b.connect(b.qp, a, a.qp, **connect)
    return a, b


def poll(cq, n=1, timeout=WC_TIMEOUT):
    """Up to n completions, within timeout seconds."""
    wcs, deadline = [], time.monotonic() + timeout
    while len(wcs) < n and time.monotonic() < deadline:
        got, polled = cq.poll(n - len(wcs))
        if got:
            wcs.extend(polled)
        else:
            time.sleep(0.001)
    return wcs


def drain(cq, settle=2.0):
    """Every completion there is, waiting until none came for `settle` seconds."""
    wcs, quiet = [], time.monotonic() + settle
    while time.monotonic() < quiet:
        got, polled = cq.poll(16)
        if got:
            wcs.extend(polled)
            quiet = time.monotonic() + settle
        else:
            time.sleep(0.005)
    return wcs


def qp_state(qp, want, timeout=5):
    deadline = time.monotonic() + timeout
    while True:
        state = qp.query(e.IBV_QP_STATE)[0].qp_state
        if state == want or time.monotonic() > deadline:
            return state
        time.sleep(0.02)


def send_wr(end, wr_id, length=64, opcode=e.IBV_WR_SEND, rkey=None, raddr=None):
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[SGE(end.mr.buf, length, end.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    if rkey is not None:
        wr.set_wr_rdma(rkey, raddr)
    return wr


def recv_wr(end, wr_id, length=4096, lkey=None):
    lkey = end.mr.lkey if lkey is None else lkey
    return RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(end.mr.buf, length, lkey)])


def status_of(wcs):
    return wcs[0].status if wcs else None


def case_bad_lkey(dev_a, gid_a, dev_b, gid_b):
    a, b = pair(dev_a, gid_a, dev_b, gid_b)
    bad = b.mr.lkey ^ 0x5a5a00  # another MR index: no MR has it
    b.qp.post_recv(recv_wr(b, 0xb1, lkey=bad))
    a.qp.post_send(send_wr(a, 0xa1))
    rwc, swc = poll(b.cq), poll(a.cq)
    check('receive WQE with a bad lkey completes IBV_WC_LOC_PROT_ERR',
          status_of(rwc) == e.IBV_WC_LOC_PROT_ERR and rwc[0].wr_id == 0xb1,
          f'{wc_name(status_of(rwc))}')
    check('the requester completes IBV_WC_REM_OP_ERR (NAK remote operational error)',
          status_of(swc) == e.IBV_WC_REM_OP_ERR and swc[0].wr_id == 0xa1,
          f'{wc_name(status_of(swc))}')
    check('responder QP in ERROR', qp_state(b.qp, e.IBV_QPS_ERR) == e.IBV_QPS_ERR)
    check('requester QP in ERROR', qp_state(a.qp, e.IBV_QPS_ERR) == e.IBV_QPS_ERR)


def case_stop_at_error(dev_a, gid_a, dev_b, gid_b):
    """A 16 KiB WRITE, a WRITE with a bad lkey and a 64 B WRITE, posted with one doorbell: the
    requester stops at the failed WR (a local error takes the QP to the error state), so the
    third is never executed; it completes IBV_WC_WR_FLUSH_ERR."""
    size = 16384
    a = End(dev_a, gid_a, mr_len=4 * size)
    b = End(dev_b, gid_b, mr_len=4 * size)
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b)
    a.mr.write(os.urandom(4 * size), 4 * size)
    b.mr.write(bytes(4 * size), 4 * size)

    def write(wr_id, offset, length, lkey, next_wr=None):
        wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(a.mr.buf + offset, length, lkey)], send_flags=e.IBV_SEND_SIGNALED,
                    next_wr=next_wr)
        wr.set_wr_rdma(b.mr.rkey, b.mr.buf + offset)
        return wr
    third = write(0x93, 2 * size, 64, a.mr.lkey)
    bad = write(0x92, size, 64, a.mr.lkey ^ 0x5a5a00, third)  # no MR has that lkey
    a.qp.post_send(write(0x91, 0, size, a.mr.lkey, bad))
    wcs = poll(a.cq, 3)
    status = {w.wr_id: w.status for w in wcs}
    print('completions: ' + ', '.join(f'{w.wr_id:#x} {wc_name(w.status)}' for w in wcs))
    check('three completions', len(wcs) == 3, len(wcs))
    check('the WR with the bad lkey completes in error',
          status.get(0x92, e.IBV_WC_SUCCESS) != e.IBV_WC_SUCCESS, wc_name(status.get(0x92)))
    check('the WR after it completes IBV_WC_WR_FLUSH_ERR',
          status.get(0x93) == e.IBV_WC_WR_FLUSH_ERR, wc_name(status.get(0x93)))
    check('neither the failed WR nor the one after it wrote the target',
          b.mr.read(64, size) == bytes(64) and b.mr.read(64, 2 * size) == bytes(64))
    check('requester QP in ERROR', qp_state(a.qp, e.IBV_QPS_ERR) == e.IBV_QPS_ERR)


def case_atomic_sges(dev_a, gid_a, dev_b, gid_b):
    """A fetch-and-add whose local data is two 4-byte SGEs: the original value is scattered
    over them as any received data is (C `do_atomic`'s copy_data), 4 bytes each."""
    a = End(dev_a, gid_a, max_send_sge=2)
    b = End(dev_b, gid_b, mr_access=REMOTE | ATOMIC)
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b)
    value = 0x1122334455667788
    b.mr.write(value.to_bytes(8, 'little'), 8)
    a.mr.write(b'\xee' * 128, 128)
    wr = SendWR(wr_id=0xa7, opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=2,
                sg=[SGE(a.mr.buf, 4, a.mr.lkey), SGE(a.mr.buf + 64, 4, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_atomic(rkey=b.mr.rkey, addr=b.mr.buf, compare_add=1, swap=0)
    a.qp.post_send(wr)
    wcs = poll(a.cq)
    check('fetch-and-add into two 4-byte SGEs: IBV_WC_SUCCESS',
          status_of(wcs) == e.IBV_WC_SUCCESS, wc_name(status_of(wcs)))
    orig = value.to_bytes(8, 'little')
    got = (a.mr.read(4, 0), a.mr.read(4, 64))
    check('the original value: its first 4 bytes in the first SGE, the rest in the second',
          got == (orig[:4], orig[4:]), f'{got[0].hex()} {got[1].hex()}')
    check('nothing written past the first SGE', a.mr.read(60, 4) == b'\xee' * 60,
          a.mr.read(8, 4).hex())
    check('the target added 1', b.mr.read(8, 0) == (value + 1).to_bytes(8, 'little'))


def case_cq_resize(dev_a, gid_a, dev_b, gid_b):
    """ibv_resize_cq below the completions waiting is EINVAL (C: cqe < queue_count), even where
    the ring, rounded up, would hold them; at or above it they stay, in order."""
    a, b = pair(dev_a, gid_a, dev_b, gid_b)
    for i in range(5):
        a.qp.post_send(send_wr(a, 0xc0 + i, opcode=e.IBV_WR_RDMA_WRITE, rkey=b.mr.rkey,
                               raddr=b.mr.buf))
    time.sleep(1)  # every WRITE acknowledged, its completion waiting
    try:
        a.cq.resize(4)
        err = 0
    except PyverbsRDMAError as ex:
        err = ex.error_code
    check('resize to 4 with 5 completions waiting: EINVAL', err == errno.EINVAL, err)
    try:
        a.cq.resize(5)
        err = 0
    except PyverbsRDMAError as ex:
        err = ex.error_code
    check('resize to 5 with 5 waiting succeeds', err == 0, err)
    wcs = poll(a.cq, 5)
    check('the 5 completions are still there, in order, successful',
          [(w.wr_id, w.status) for w in wcs] == [(0xc0 + i, e.IBV_WC_SUCCESS) for i in range(5)],
          [(hex(w.wr_id), wc_name(w.status)) for w in wcs])


def case_post_states(dev_a, gid_a, dev_b, gid_b):
    """ibv_post_send before RTS (INIT, RTR) fails (C rxe_post_send: EINVAL from the doorbell);
    in RTS it goes."""
    a = End(dev_a, gid_a)
    b = End(dev_b, gid_b)

    def post_fails(qp, wr_id):
        try:
            qp.post_send(send_wr(a, wr_id, opcode=e.IBV_WR_RDMA_WRITE, rkey=b.mr.rkey,
                                 raddr=b.mr.buf))
            return 0
        except PyverbsRDMAError as ex:
            return ex.error_code
    in_init = a.new_qp()
    attr = QPAttr(port_num=1)
    attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | REMOTE
    in_init.to_init(attr)
    err = post_fails(in_init, 0xd1)
    check('ibv_post_send in INIT: EINVAL', err == errno.EINVAL, err)
    b.connect(b.qp, a, a.qp)
    a.connect(a.qp, b, b.qp, rtr_only=True)
    err = post_fails(a.qp, 0xd2)
    check('ibv_post_send in RTR: EINVAL', err == errno.EINVAL, err)
    attr = QPAttr()
    attr.qp_state = e.IBV_QPS_RTS
    attr.sq_psn, attr.timeout, attr.retry_cnt, attr.rnr_retry, attr.max_rd_atomic = \
        0x1000, 14, 6, 6, 1
    a.qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT
                | e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
    err = post_fails(a.qp, 0xd3)
    check('ibv_post_send in RTS succeeds', err == 0, err)
    # The WR posted in RTR is in the ring: the doorbell in RTS sends it too (as C).
    wcs = poll(a.cq, 2)
    got = {w.wr_id: w.status for w in wcs}
    check('the WR posted in RTS completes successfully', got.get(0xd3) == e.IBV_WC_SUCCESS,
          [(hex(w.wr_id), wc_name(w.status)) for w in wcs])


def case_mw_inv_in_flight(dev_a, gid_a, dev_b, gid_b):
    """A 1 MiB RDMA WRITE through a type 2 memory window over a slow link (semantics.sh delays
    both directions), the window invalidated by the responder's LOCAL_INV while the WRITE's
    packets are on their way: the rest of the message is refused (C looks the rkey up for
    every packet), the WRITE completes IBV_WC_REM_ACCESS_ERR, the MR's end is not written."""
    size = 1 << 20
    a = End(dev_a, gid_a, mr_len=size)
    b = End(dev_b, gid_b, mr_len=size, mr_access=REMOTE | e.IBV_ACCESS_MW_BIND)
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b)
    mw = MW(b.pd, e.IBV_MW_TYPE_2)
    bind = SendWR(wr_id=0xe1, opcode=e.IBV_WR_BIND_MW, send_flags=e.IBV_SEND_SIGNALED)
    bind.set_bind_wr(mw, MWBindInfo(b.mr, b.mr.buf, size, e.IBV_ACCESS_REMOTE_WRITE))
    b.qp.post_send(bind)
    wcs = poll(b.cq)
    check('BIND_MW of a type 2 window over the MR', status_of(wcs) == e.IBV_WC_SUCCESS,
          wc_name(status_of(wcs)))
    rkey = bind.rkey
    b.mr.write(bytes(size), size)
    a.mr.write(b'\x5a' * size, size)
    write = SendWR(wr_id=0xe2, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                   sg=[SGE(a.mr.buf, size, a.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    write.set_wr_rdma(rkey, b.mr.buf)
    a.qp.post_send(write)
    time.sleep(0.15)  # 1,024 packets at 128 a round trip of 40 ms: about a third on their way
    inv = SendWR(wr_id=0xe3, opcode=e.IBV_WR_LOCAL_INV, send_flags=e.IBV_SEND_SIGNALED)
    inv.imm_data = rkey
    b.qp.post_send(inv)
    wcs = poll(b.cq)
    check('LOCAL_INV of the window while the WRITE is under way',
          status_of(wcs) == e.IBV_WC_SUCCESS, wc_name(status_of(wcs)))
    wcs = poll(a.cq, timeout=60)
    check('the WRITE completes IBV_WC_REM_ACCESS_ERR', status_of(wcs) == e.IBV_WC_REM_ACCESS_ERR,
          wc_name(status_of(wcs)))
    check("the MR's last KiB was not written", b.mr.read(1024, size - 1024) == bytes(1024))
    mw.close()


def async_events(end, timeout):
    """The async events of end's context within timeout seconds (each acked), as types."""
    events, deadline = [], time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([end.async_fd], [], [], left)
        if not ready:
            break
        ev = end.ctx.get_async_event()  # does not block: one is queued
        ev.ack()
        events.append(ev.event_type)
    return events


def case_comm_est(dev_a, gid_a, dev_b, gid_b):
    a, b = End(dev_a, gid_a), End(dev_b, gid_b)
    if not check('both contexts have an async event file descriptor',
                 a.async_fd is not None and b.async_fd is not None):
        return
    a.connect(a.qp, b, b.qp)
    b.connect(b.qp, a, a.qp, rtr_only=True)
    check('responder QP in RTR', qp_state(b.qp, e.IBV_QPS_RTR) == e.IBV_QPS_RTR)
    b.qp.post_recv(recv_wr(b, 0xc1))
    a.qp.post_send(send_wr(a, 0xc2))
    rwc, swc = poll(b.cq), poll(a.cq)
    check('the SEND to a QP in RTR is received', status_of(rwc) == e.IBV_WC_SUCCESS,
          wc_name(status_of(rwc)))
    check('and acknowledged', status_of(swc) == e.IBV_WC_SUCCESS, wc_name(status_of(swc)))
    events = async_events(b, 5)
    check('the responder raises IBV_EVENT_COMM_EST, once',
          events == [e.IBV_EVENT_COMM_EST], f'events {events}')
    rts = QPAttr(qp_state=e.IBV_QPS_RTS)
    rts.sq_psn, rts.timeout, rts.retry_cnt, rts.rnr_retry, rts.max_rd_atomic = 0x1000, 14, 6, 6, 1
    b.qp.modify(rts, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
    b.qp.post_recv(recv_wr(b, 0xc3))
    a.qp.post_send(send_wr(a, 0xc4))
    rwc, swc = poll(b.cq), poll(a.cq)
    check('in RTS the next SEND completes on both sides',
          status_of(rwc) == e.IBV_WC_SUCCESS and status_of(swc) == e.IBV_WC_SUCCESS,
          f'{wc_name(status_of(rwc))} / {wc_name(status_of(swc))}')
    events = async_events(b, 2)
    check('no further event on the responder', events == [], f'events {events}')
    events = async_events(a, 1)
    check('no event on the requester (in RTS when it received)', events == [],
          f'events {events}')


def case_cq_overflow(dev_a, gid_a, dev_b, gid_b):
    n = 12
    a = End(dev_a, gid_a, cqe=64)
    b = End(dev_b, gid_b, cqe=3, max_recv_wr=n + 4)
    # retry_cnt 1, timeout 10 (4 ms): the sends the responder no longer answers fail quickly.
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b, mtu=e.IBV_MTU_4096, retry_cnt=2,
             timeout=14)
    room = b.cq.cqe
    for i in range(n):
        b.qp.post_recv(recv_wr(b, 0x100 + i))
    for i in range(n):
        a.qp.post_send(send_wr(a, 0x200 + i))
    swcs = poll(a.cq, n)
    rwcs = drain(b.cq)
    sent = sum(1 for w in swcs if w.status == e.IBV_WC_SUCCESS)
    received = sum(1 for w in rwcs if w.status == e.IBV_WC_SUCCESS)
    print(f'receive CQ of {room} entries: {sent} sends succeeded, {received} receives completed; '
          f'send statuses {[wc_name(w.status) for w in swcs]}')
    check(f'all {n} sends completed (successfully or not)', len(swcs) == n, f'{len(swcs)}')
    check('no more successful sends than successful receives (no ACK for a lost completion)',
          sent <= received, f'{sent} sends > {received} receives')
    check('the CQ held what it could', received == room, f'{received} receives, CQ of {room}')
    check('responder QP in ERROR', qp_state(b.qp, e.IBV_QPS_ERR) == e.IBV_QPS_ERR)


def case_solicited_error(dev_a, gid_a, dev_b, gid_b):
    a = End(dev_a, gid_a, channel=True)
    a, b = pair(dev_a, gid_a, dev_b, gid_b, a=a)
    if not check('the completion channel has a file descriptor', a.channel_fd is not None):
        return

    def woken(timeout=10):
        """Whether a completion event arrives within timeout seconds (taken and acked)."""
        ready, _, _ = select.select([a.channel_fd], [], [], timeout)
        if not ready:
            return False
        a.channel.get_cq_event(a.cq)  # does not block: an event is queued on the channel
        a.cq.ack_events(1)
        return True

    a.cq.req_notify(True)  # solicited only
    a.qp.post_send(send_wr(a, 0xe1, opcode=e.IBV_WR_RDMA_WRITE, rkey=b.mr.rkey ^ 0x5a5a00,
                           raddr=b.mr.buf))
    ev = woken()
    wcs = poll(a.cq)
    check('the wrong-rkey WRITE completes IBV_WC_REM_ACCESS_ERR',
          status_of(wcs) == e.IBV_WC_REM_ACCESS_ERR, wc_name(status_of(wcs)))
    check('a CQ armed solicited-only wakes on the error completion', ev,
          'no completion event within 10 s')
    # Once more: the QP is in ERROR; the next WR is flushed, which must wake the CQ too.
    a.cq.req_notify(True)
    a.qp.post_send(send_wr(a, 0xe2))
    ev = woken()
    wcs = poll(a.cq)
    check('the next WR completes IBV_WC_WR_FLUSH_ERR', status_of(wcs) == e.IBV_WC_WR_FLUSH_ERR,
          wc_name(status_of(wcs)))
    check('a CQ armed solicited-only wakes on the flush completion', ev,
          'no completion event within 10 s')


def case_lossy_write(dev_a, gid_a, dev_b, gid_b):
    size = 1 << 20
    a = End(dev_a, gid_a, mr_len=size)
    b = End(dev_b, gid_b, mr_len=size)
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b, mtu=e.IBV_MTU_256, retry_cnt=6, timeout=14)
    for i in range(3):
        pattern = os.urandom(size)
        a.mr.write(pattern, size)
        b.mr.write(bytes(size), size)
        t0 = time.monotonic()
        a.qp.post_send(send_wr(a, 0x1f, length=size, opcode=e.IBV_WR_RDMA_WRITE,
                               rkey=b.mr.rkey, raddr=b.mr.buf))
        wcs = poll(a.cq, 1, timeout=300)
        print(f'1 MiB WRITE #{i + 1} at MTU 256: {wc_name(status_of(wcs))} after '
              f'{time.monotonic() - t0:.1f} s')
        ok = check(f'1 MiB RDMA WRITE #{i + 1} at MTU 256, retry_cnt 6, lossy link: '
                   'IBV_WC_SUCCESS', status_of(wcs) == e.IBV_WC_SUCCESS, wc_name(status_of(wcs)))
        check(f'every byte of #{i + 1} arrived', b.mr.read(size, 0) == pattern)
        if not ok:
            break


def case_destroy_loop(dev_a, gid_a, dev_b, gid_b, rounds=200):
    a, b = End(dev_a, gid_a, max_send_wr=64, max_recv_wr=64), \
        End(dev_b, gid_b, max_send_wr=64, max_recv_wr=64)
    for r in range(int(rounds)):
        qa, qb = a.new_qp(), b.new_qp()
        a.connect(qa, b, qb)
        b.connect(qb, a, qa)
        for i in range(16):
            qb.post_recv(recv_wr(b, i))
        for i in range(32):
            if i % 2:
                qa.post_send(send_wr(a, i, length=4096, opcode=e.IBV_WR_RDMA_WRITE,
                                     rkey=b.mr.rkey, raddr=b.mr.buf))
            else:
                qa.post_send(send_wr(a, i, length=4096))
        # Destroy mid-flight: the responder first on even rounds, the requester first on odd.
        first, second = (qb, qa) if r % 2 == 0 else (qa, qb)
        first.close()
        second.close()
        a.cq.poll(64)
        b.cq.poll(64)
    # The device still works: a fresh pair, one exchange.
    drain(a.cq, 0.5)
    drain(b.cq, 0.5)
    a.qp, b.qp = a.new_qp(), b.new_qp()
    a.connect(a.qp, b, b.qp)
    b.connect(b.qp, a, a.qp)
    b.qp.post_recv(recv_wr(b, 0xf0))
    a.qp.post_send(send_wr(a, 0xf1))
    check(f'{rounds} rounds of destroy under traffic, then a send on new QPs succeeds',
          status_of(poll(a.cq)) == e.IBV_WC_SUCCESS and status_of(poll(b.cq)) == e.IBV_WC_SUCCESS)


def case_wrap(dev_a, gid_a, dev_b, gid_b):
    top = (1 << 64) - 16  # 64 bytes from here wrap 2^64
    # A forged request: an RDMA WRITE whose RETH va + len wraps, with a valid rkey.
    a, b = pair(dev_a, gid_a, dev_b, gid_b)
    fill = bytes(range(256)) * 16
    b.mr.write(fill, 4096)
    a.qp.post_send(send_wr(a, 0x71, opcode=e.IBV_WR_RDMA_WRITE, rkey=b.mr.rkey, raddr=top))
    wcs = poll(a.cq)
    check('RDMA WRITE to va 2^64-16, 64 bytes: IBV_WC_REM_ACCESS_ERR',
          status_of(wcs) == e.IBV_WC_REM_ACCESS_ERR, wc_name(status_of(wcs)))
    check('the target MR is untouched', b.mr.read(4096, 0) == fill)
    check('responder QP in ERROR', qp_state(b.qp, e.IBV_QPS_ERR) == e.IBV_QPS_ERR)
    # The same as an RDMA READ.
    a, b = pair(dev_a, gid_a, dev_b, gid_b)
    a.qp.post_send(send_wr(a, 0x72, opcode=e.IBV_WR_RDMA_READ, rkey=b.mr.rkey, raddr=top))
    wcs = poll(a.cq)
    check('RDMA READ from va 2^64-16, 64 bytes: IBV_WC_REM_ACCESS_ERR',
          status_of(wcs) == e.IBV_WC_REM_ACCESS_ERR, wc_name(status_of(wcs)))
    # A local SGE whose addr + length wraps, with a valid lkey.
    a, b = pair(dev_a, gid_a, dev_b, gid_b)
    b.qp.post_recv(recv_wr(b, 0x73))
    wr = SendWR(wr_id=0x74, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(top, 64, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    a.qp.post_send(wr)
    wcs = poll(a.cq)
    check('SEND from a local SGE at 2^64-16, 64 bytes: IBV_WC_LOC_PROT_ERR',
          status_of(wcs) == e.IBV_WC_LOC_PROT_ERR, wc_name(status_of(wcs)))
    # A receive SGE whose addr + length wraps.
    a, b = pair(dev_a, gid_a, dev_b, gid_b)
    b.qp.post_recv(RecvWR(wr_id=0x75, num_sge=1, sg=[SGE(top, 64, b.mr.lkey)]))
    a.qp.post_send(send_wr(a, 0x76))
    rwc, swc = poll(b.cq), poll(a.cq)
    check('receive into an SGE at 2^64-16: IBV_WC_LOC_PROT_ERR, the sender IBV_WC_REM_OP_ERR',
          status_of(rwc) == e.IBV_WC_LOC_PROT_ERR and status_of(swc) == e.IBV_WC_REM_OP_ERR,
          f'{wc_name(status_of(rwc))}, {wc_name(status_of(swc))}')


def post_write_and_read(a, b, size):
    """An RDMA WRITE of a's first `size` bytes to b's first, then an RDMA READ of b's next
    `size` bytes into a's; both signalled."""
    write = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                   sg=[SGE(a.mr.buf, size, a.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    write.set_wr_rdma(b.mr.rkey, b.mr.buf)
    read = SendWR(wr_id=2, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                  sg=[SGE(a.mr.buf + size, size, a.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    read.set_wr_rdma(b.mr.rkey, b.mr.buf + size)
    a.qp.post_send(write)
    a.qp.post_send(read)


def fresh_write_and_read(dev_a, gid_a, dev_b, gid_b, what, **connect):
    """On a new pair, a 1 MiB RDMA WRITE and a 1 MiB RDMA READ succeed and land intact."""
    size = 1 << 20
    a = End(dev_a, gid_a, mr_len=2 * size)
    b = End(dev_b, gid_b, mr_len=2 * size)
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b, **connect)
    out, back = os.urandom(size), os.urandom(size)
    a.mr.write(out, size)
    b.mr.write(back, size, size)
    post_write_and_read(a, b, size)
    wcs = poll(a.cq, 2, timeout=120)
    check(f'then {what}: a 1 MiB WRITE and READ succeed',
          len(wcs) == 2 and all(w.status == e.IBV_WC_SUCCESS for w in wcs),
          [wc_name(w.status) for w in wcs])
    check('the WRITE arrived intact', b.mr.read(size, 0) == out)
    check('the READ arrived intact', a.mr.read(size, size) == back)


def case_dereg_in_flight(dev_a, gid_a, dev_b, gid_b, rounds=10):
    size = 1 << 20
    completed = 0
    for r in range(int(rounds)):
        a = End(dev_a, gid_a, mr_len=2 * size)
        b = End(dev_b, gid_b, mr_len=2 * size)
        pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b, mtu=e.IBV_MTU_4096, retry_cnt=2,
             timeout=14)
        a.mr.write(os.urandom(size), size)
        post_write_and_read(a, b, size)
        # Deregister and free (pyverbs unmaps the buffer) while the packets are on their way.
        (a.mr if r % 2 == 0 else b.mr).close()
        wcs = poll(a.cq, 2, timeout=120)
        completed += len(wcs) == 2
        a.qp.close()
        b.qp.close()
    check(f'{rounds} rounds of an MR deregistered and freed under a 1 MiB WRITE and READ: '
          'every WR completed', completed == int(rounds), f'{completed} of {rounds} rounds')
    fresh_write_and_read(dev_a, gid_a, dev_b, gid_b, 'a fresh pair', mtu=e.IBV_MTU_4096)


def case_dereg_looped(dev_a, gid_a, dev_b, gid_b, rounds=10):
    size = 4 << 20
    completed, statuses = 0, []
    for _ in range(int(rounds)):
        a = End(dev_a, gid_a, mr_len=size)
        b = End(dev_b, gid_b, mr_len=16)
        b.mr.close()
        b.mr = MR(b.pd, size, e.IBV_ACCESS_LOCAL_WRITE | REMOTE | e.IBV_ACCESS_ON_DEMAND)
        pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b, retry_cnt=2, timeout=14)
        a.mr.write(os.urandom(size), size)
        a.qp.post_send(send_wr(a, 1, size, e.IBV_WR_RDMA_WRITE, b.mr.rkey, b.mr.buf))
        a.mr.close()
        wcs = poll(a.cq, 1, timeout=120)
        completed += len(wcs) == 1
        statuses += [wc_name(w.status) for w in wcs]
        a.qp.close()
        b.qp.close()
    print('     WRITE completions:', ' '.join(statuses))
    check(f'{rounds} rounds of a source MR deregistered and freed under a looped-back 4 MiB '
          'WRITE to an ODP MR: every WRITE completed', completed == int(rounds),
          f'{completed} of {rounds} rounds')
    fresh_write_and_read(dev_a, gid_a, dev_b, gid_b, 'a fresh looped-back pair at path MTU 1024')


def case_odp_small(dev_a, gid_a, dev_b, gid_b, rounds=20):
    page, pages, msg = 4096, 16, 48
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madv_dontneed = 4
    a = End(dev_a, gid_a, mr_len=page)
    b = End(dev_b, gid_b, mr_len=16)
    b.mr.close()
    b.mr = MR(b.pd, pages * page, e.IBV_ACCESS_LOCAL_WRITE | REMOTE | e.IBV_ACCESS_ON_DEMAND)
    pair(dev_a, gid_a, dev_b, gid_b, a=a, b=b)
    rng = random.Random(1)
    statuses, misplaced = [], []
    for r in range(int(rounds)):
        if libc.madvise(b.mr.buf, pages * page, madv_dontneed) != 0:
            raise OSError(ctypes.get_errno(), 'madvise')
        targets = rng.sample(range(pages), 9)
        landed = [(t * page + rng.randrange(0, page - msg, 8), os.urandom(msg)) for t in targets]
        recv_off, sent = landed[-1]
        b.qp.post_recv(RecvWR(wr_id=r, num_sge=1,
                              sg=[SGE(b.mr.buf + recv_off, msg, b.mr.lkey)]))
        for i, (off, data) in enumerate(landed):
            a.mr.write(data, msg, i * 64)
            wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND if i == 8 else e.IBV_WR_RDMA_WRITE,
                        num_sge=1, sg=[SGE(a.mr.buf + i * 64, msg, a.mr.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED)
            if i < 8:
                wr.set_wr_rdma(b.mr.rkey, b.mr.buf + off)
            a.qp.post_send(wr)
        statuses += [wc_name(w.status) for w in poll(a.cq, 9) + poll(b.cq, 1)]
        misplaced += [(r, off) for off, data in landed if b.mr.read(msg, off) != data]
    check(f'{rounds} rounds of 8 small WRITEs and a SEND into an ODP MR whose pages were '
          'dropped: every WR completed successfully',
          statuses == ['IBV_WC_SUCCESS'] * (10 * int(rounds)), ' '.join(sorted(set(statuses))))
    check('every byte landed where it was sent', not misplaced,
          f'{len(misplaced)} of {9 * int(rounds)} messages missing, in rounds '
          f'{sorted(set(r for r, _ in misplaced))}')


def main():
    case, dev_a, gid_a, dev_b, gid_b, *rest = sys.argv[1:]
    print(f'{case} on the {DRIVER} driver: {dev_a} (gid {gid_a}) -> {dev_b} (gid {gid_b})')
    globals()[f'case_{case}'](dev_a, int(gid_a), dev_b, int(gid_b), *rest)
    return tally()


if __name__ == '__main__':
    sys.exit(main())
