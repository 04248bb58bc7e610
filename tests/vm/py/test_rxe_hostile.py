# SPDX-License-Identifier: GPL-2.0
"""
A hostile user of rxe: a process that scribbles over the rings it shares with the
kernel, on purpose, and one that exits (or is killed) with work outstanding. Run by
tests/vm/hostile.sh through rdma-core's tests/run_tests.py, one test at a time.

The rings are the uverbs mappings librxe makes (struct rxe_queue_buf: log2_elem_size and
index_mask at 0/4, producer_index at 128, consumer_index at 256, slots from 384). Each
object's mappings are found by diffing /proc/self/maps around its creation, then written with
ctypes. librxe trusts the indices user space owns (it computes slot addresses from the SQ/RQ/SRQ
producer and the CQ consumer without masking them), so these are only left unmasked while librxe
does not look: the send queue's doorbell is then rung directly, with the empty post_send command
librxe itself writes to the uverbs file. The indices the kernel owns (SQ/RQ/SRQ consumer, CQ
producer) librxe only compares, so they get any value.

What is asserted: every call returns or fails, every completion comes within a timeout, the
kernel's own index wins over the scribbled one (the header is rewritten masked), malformed WQEs
complete with an error and move the QP to ERROR with the rest flushed, and a process that goes
away with work outstanding leaves no QP, CQ, MR or PD behind. A kernel oops/WARN fails the run
in scripts/vm-run; tests/vm/hostile.sh checks afterwards that the device still moves data.

Set RXE_HOSTILE_SAFE_FOR_C=1 to leave out the cases the C driver does not survive (it trusts
the WQE's opcode as an array index, the inline length, and the wr.reg.mr pointer of a REG_MR
from the user ring; random bytes in a send WQE oops it in rxe_requester): for comparison runs
only.
"""
import ctypes
import errno
import json
import os
import random
import signal
import struct
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr, QPAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, SendWR, RecvWR
from tests.base import RCResources, RDMATestCase

REMOTE = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
WR = 32            # send/recv queue depth asked for (rings get 64 slots)
CQ_DEPTH = 256     # deeper than both queues: every flush fits
MSG = 64           # bytes per SEND
MR_LEN = 64 * 1024  # bytes of each player's MR
TIMEOUT = 10       # seconds any expected completion may take
SAFE_FOR_C = os.environ.get('RXE_HOSTILE_SAFE_FOR_C') == '1'
# The driver under test is rxe-rs (its module is loaded), whose statuses are checked exactly.
RXE_RS = os.path.isdir('/sys/module/rdma_rxe_rs')

# struct rxe_queue_buf
HDR, PROD, CONS = 384, 128, 256
# struct rxe_send_wqe / rxe_recv_wqe offsets (include/uapi/rdma/rdma_user_rxe.h)
SWQE_WR_ID, SWQE_OPCODE, SWQE_FLAGS, SWQE_WR = 0, 12, 16, 24
SWQE_MASK, SWQE_DMA, SWQE_SGE = 160, 184, 208
RWQE_DMA, RWQE_SGE = 16, 40
DMA_LENGTH, DMA_RESID, DMA_NUM_SGE = 0, 4, 12
IB_WR_REG_MR = 0x20      # kernel-only opcode
WR_LOCAL_OP_MASK = 1 << 7  # rxe_wr_mask: what the C requester trusts from the ring
IBV_SEND_INLINE = 8
IB_USER_VERBS_CMD_POST_SEND = 28


def uverbs_maps():
    spans = set()
    with open('/proc/self/maps') as f:
        for line in f:
            if '/dev/infiniband/uverbs' in line:
                lo, hi = line.split()[0].split('-')
                spans.add((int(lo, 16), int(hi, 16)))
    return spans


def uverbs_fds():
    fds = set()
    for fd in os.listdir('/proc/self/fd'):
        try:
            if os.readlink(f'/proc/self/fd/{fd}').startswith('/dev/infiniband/uverbs'):
                fds.add(int(fd))
        except OSError:
            pass
    return fds


def created_rings(make):
    """Calls make() and returns its result and the rings mapped meanwhile, by slot size."""
    before = uverbs_maps()
    obj = make()
    return obj, sorted((Ring(s) for s in uverbs_maps() - before), key=lambda r: r.log2)


class Ring:
    """One mapped struct rxe_queue_buf, read and written behind librxe's back."""

    def __init__(self, span):
        self.base, self.size = span[0], span[1] - span[0]
        self.log2, self.mask = self.u32(0), self.u32(4)
        self._is_cq = False
        assert HDR + ((self.mask + 1) << self.log2) <= self.size, 'not an rxe ring'

    def u32(self, off):
        return ctypes.c_uint32.from_address(self.base + off).value

    def set_u32(self, off, value):
        ctypes.c_uint32.from_address(self.base + off).value = value & 0xffffffff

    @property
    def prod(self):
        return self.u32(PROD)

    @prod.setter
    def prod(self, v):
        self.set_u32(PROD, v)

    @property
    def cons(self):
        return self.u32(CONS)

    @cons.setter
    def cons(self, v):
        self.set_u32(CONS, v)

    @property
    def slot_size(self):
        return 1 << self.log2

    @property
    def is_cq(self):
        # A CQE slot is 128 bytes, a receive WQE slot 128 (two SGEs), a send WQE slot 256:
        # callers say which it is.
        return self._is_cq

    def scribble(self, rng):
        """One random store librxe survives: any value in the index the kernel owns, a masked
        one in the index user space owns, or random bytes in a slot."""
        what = rng.randrange(2 if SAFE_FOR_C else 3)
        if what == 0:
            v = rng.getrandbits(32)
            if self.is_cq:
                self.prod = v
            else:
                self.cons = v
        elif what == 1:
            v = rng.getrandbits(32) & self.mask
            if self.is_cq:
                self.cons = v
            else:
                self.prod = v
        else:
            self.write_slot(rng.getrandbits(32), rng.randbytes(self.slot_size))

    def slot_addr(self, i):
        return self.base + HDR + ((i & self.mask) << self.log2)

    def read_slot(self, i):
        return bytearray(ctypes.string_at(self.slot_addr(i), self.slot_size))

    def write_slot(self, i, data):
        data = bytes(data)
        assert len(data) <= self.slot_size
        ctypes.memmove(self.slot_addr(i), data, len(data))


class HostileRC(RCResources):
    """An RC QP (optionally on an SRQ) whose CQ, SQ, RQ and SRQ rings are located."""

    def __init__(self, dev_name, ib_port, gid_index, with_srq=False):
        self.rings = {}
        self.qp_handle = None
        super().__init__(dev_name, ib_port, gid_index, with_srq=with_srq, msg_size=MSG)

    def create_context(self):
        before = uverbs_fds()
        super().create_context()
        fds = uverbs_fds() - before
        assert len(fds) == 1, fds
        self.cmd_fd = fds.pop()

    def doorbell(self):
        """The send queue's doorbell without librxe: IB_USER_VERBS_CMD_POST_SEND with no WR
        (what librxe's post_send_db writes). The QP's handle is found by trying: any other
        handle is refused with EINVAL."""
        resp = ctypes.create_string_buffer(4)
        handles = [self.qp_handle] if self.qp_handle is not None else range(64)
        for h in handles:
            cmd = struct.pack('<IHHQIIII', IB_USER_VERBS_CMD_POST_SEND, 8, 1,
                              ctypes.addressof(resp), h, 0, 0, 128)
            try:
                os.write(self.cmd_fd, cmd)
            except OSError as ex:
                if ex.errno == errno.EINVAL and self.qp_handle is None:
                    continue
                raise
            self.qp_handle = h
            return
        raise AssertionError('no QP handle answers the doorbell')

    def create_cq(self):
        self.cq, rings = created_rings(lambda: CQ(self.ctx, CQ_DEPTH, None, None, 0))
        assert len(rings) == 1, rings
        self.rings['cq'] = rings[0]
        rings[0]._is_cq = True

    def create_srq(self):
        attr = SrqInitAttr(SrqAttr(max_wr=WR, max_sge=2))
        self.srq, rings = created_rings(lambda: SRQ(self.pd, attr))
        assert len(rings) == 1, rings
        self.rings['srq'] = rings[0]

    def create_mr(self):
        self.mr = MR(self.pd, MR_LEN, REMOTE)

    def create_qp_attr(self):
        attr = QPAttr(port_num=self.ib_port)
        attr.qp_access_flags = REMOTE
        return attr

    def create_qps(self):
        cap = QPCap(max_send_wr=WR, max_recv_wr=WR, max_send_sge=2, max_recv_sge=2)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, srq=self.srq, cap=cap)
        qp, rings = created_rings(lambda: QP(self.pd, init, self.create_qp_attr()))
        self.qps.append(qp)
        self.qps_num.append(qp.qp_num)
        self.psns.append(random.getrandbits(24))
        if self.srq:
            assert len(rings) == 1, rings
            self.rings['sq'] = rings[0]
        else:
            # RQ slot: 40 + 2 * 16 -> 128 bytes; SQ slot: 208 + 2 * 16 -> 256 bytes.
            assert len(rings) == 2, rings
            self.rings['rq'], self.rings['sq'] = rings

    def send(self, wr_id, length=MSG, opcode=e.IBV_WR_SEND, lkey=None, flags=None, raddr=0,
             rkey=0):
        sge = SGE(self.mr.buf, length, self.mr.lkey if lkey is None else lkey)
        wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[sge],
                    send_flags=e.IBV_SEND_SIGNALED if flags is None else flags)
        if opcode in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ):
            wr.set_wr_rdma(rkey, raddr)
        self.qp.post_send(wr)

    def recv(self, wr_id, length=MSG):
        wr = RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(self.mr.buf + 4096, length, self.mr.lkey)])
        (self.srq or self.qp).post_recv(wr)

    def state(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return attr.qp_state


def poll(cq, count, timeout=TIMEOUT):
    """Exactly `count` completions within `timeout` (errors included), then none more."""
    wcs, deadline = [], time.monotonic() + timeout
    while len(wcs) < count and time.monotonic() < deadline:
        _, got = cq.poll(count - len(wcs))
        wcs.extend(got)
        if not got:
            time.sleep(0.001)
    if len(wcs) < count:
        raise AssertionError(f'{len(wcs)} of {count} completions within {timeout} s: '
                             f'{[(hex(w.wr_id), w.status) for w in wcs]}')
    time.sleep(0.05)
    _, extra = cq.poll(1)
    assert not extra, f'unexpected completion {hex(extra[0].wr_id)} status {extra[0].status}'
    return wcs


def wait_state(res, state, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while res.state() != state and time.monotonic() < deadline:
        time.sleep(0.01)
    return res.state()


def res_of_pid(pid):
    """Resources `rdma res show` lists for process `pid`, by kind."""
    left = {}
    for kind in ('qp', 'cq', 'mr', 'pd', 'srq'):
        out = subprocess.run(['rdma', '-j', 'res', 'show', kind], capture_output=True,
                             text=True, check=True).stdout
        entries = json.loads(out) if out.strip() else []
        mine = [x for x in entries if x.get('pid') == pid]
        if mine:
            left[kind] = len(mine)
    return left


# Send WQE corruptions: (name, mutate(wqe bytes, resources), rs status expected, C-safe).
def fresh_send(b):
    """The progress fields as librxe's init_send_wqe leaves them (the C driver writes its
    progress into the ring, so a completed WQE is not a fresh template)."""
    struct.pack_into('<II', b, 144, 0, 0)  # status, state
    length = struct.unpack_from('<I', b, SWQE_DMA + DMA_LENGTH)[0]
    struct.pack_into('<III', b, SWQE_DMA + DMA_RESID, length, 0, 1)  # resid, cur_sge, num_sge
    struct.pack_into('<I', b, SWQE_DMA + 16, 0)  # sge_offset


def fresh_recv(b):
    length = struct.unpack_from('<I', b, RWQE_DMA + DMA_LENGTH)[0]
    struct.pack_into('<III', b, RWQE_DMA + DMA_RESID, length, 0, 1)
    struct.pack_into('<I', b, RWQE_DMA + 16, 0)


def _u32(off, v):
    return lambda b, r: struct.pack_into('<I', b, off, v & 0xffffffff)


def _sges(*sges, length, offset=0):
    def f(b, r):
        for i, (ln, lkey) in enumerate(sges):
            struct.pack_into('<QII', b, SWQE_SGE + 16 * i, r.mr.buf + offset, ln & 0xffffffff,
                             r.mr.lkey if lkey is None else lkey)
        struct.pack_into('<II', b, SWQE_DMA + DMA_LENGTH, length & 0xffffffff,
                         length & 0xffffffff)
        struct.pack_into('<I', b, SWQE_DMA + DMA_NUM_SGE, len(sges))
    return f


def _reg_mr(b, r):
    struct.pack_into('<I', b, SWQE_OPCODE, IB_WR_REG_MR)
    struct.pack_into('<I', b, SWQE_MASK, WR_LOCAL_OP_MASK)
    struct.pack_into('<Q', b, SWQE_WR, 0x4141414141414141)   # wr.reg.mr: a "kernel pointer"


def _inline_huge(b, r):
    struct.pack_into('<I', b, SWQE_FLAGS, IBV_SEND_INLINE | e.IBV_SEND_SIGNALED)
    struct.pack_into('<II', b, SWQE_DMA + DMA_LENGTH, 0xfff0, 0xfff0)


SEND_CORRUPTIONS = [
    ('bogus_opcode', _u32(SWQE_OPCODE, 0x7f), e.IBV_WC_LOC_QP_OP_ERR, True),
    ('opcode_all_ones', _u32(SWQE_OPCODE, 0xffffffff), e.IBV_WC_LOC_QP_OP_ERR, True),
    ('bad_lkey', _sges((MSG, 0xdeadbeef), length=MSG), e.IBV_WC_LOC_PROT_ERR, True),
    # Crossing the MR's end within the first packet: from the MR's start, the responder's NAK
    # of the too-long SEND could come back before the requester reaches the MR's end.
    ('sge_beyond_mr', _sges((1 << 20, None), length=1 << 20, offset=MR_LEN - 16),
     e.IBV_WC_LOC_PROT_ERR, True),
    ('num_sge_huge', _u32(SWQE_DMA + DMA_NUM_SGE, 0xffffffff), e.IBV_WC_LOC_QP_OP_ERR, True),
    ('num_sge_above_max', _sges((16, None), (16, None), (32, None), length=MSG),
     e.IBV_WC_LOC_QP_OP_ERR, True),
    ('length_not_sum', _u32(SWQE_DMA + DMA_LENGTH, 0x7fffffff), e.IBV_WC_LOC_QP_OP_ERR, True),
    ('sge_lengths_wrap', _sges((0x80000000, None), (0x80000000, None), length=0),
     e.IBV_WC_LOC_QP_OP_ERR, True),
    ('inline_beyond_slot', _inline_huge, e.IBV_WC_LOC_QP_OP_ERR, False),
    ('kernel_only_reg_mr', _reg_mr, e.IBV_WC_LOC_QP_OP_ERR, False),
]


def _rsges(*sges, length, num_sge=None):
    def f(b, r):
        for i, (ln, lkey) in enumerate(sges):
            struct.pack_into('<QII', b, RWQE_SGE + 16 * i, r.mr.buf + 4096, ln & 0xffffffff,
                             r.mr.lkey if lkey is None else lkey)
        struct.pack_into('<II', b, RWQE_DMA + DMA_LENGTH, length & 0xffffffff,
                         length & 0xffffffff)
        struct.pack_into('<I', b, RWQE_DMA + DMA_NUM_SGE,
                         len(sges) if num_sge is None else num_sge)
    return f


# Receive WQE corruptions: (name, mutate, C-safe). Each must fail the SEND landing in it.
RECV_CORRUPTIONS = [
    ('bad_lkey', _rsges((MSG, 0xdeadbeef), length=MSG), True),
    ('num_sge_huge', _rsges((MSG, None), length=MSG, num_sge=0xffffffff), True),
    ('num_sge_above_max', _rsges((16, None), (16, None), (32, None), length=MSG), True),
    ('length_beyond_sges', _rsges((8, None), length=0x7fffffff), True),
    ('sge_lengths_wrap', _rsges((0x80000000, None), (0x80000000, None), length=0), True),
]


class RxeHostileRings(RDMATestCase):
    def setUp(self):
        super().setUp()
        self.rng = random.Random(int(os.environ.get('RXE_HOSTILE_SEED', '3')))

    def players(self, with_srq=False):
        self.create_players(HostileRC, with_srq=with_srq)
        return self.client, self.server

    def warm_up(self, cli, srv):
        """One good SEND; returns the send WQE and receive WQE librxe wrote, as templates."""
        sq, rq = cli.rings['sq'], srv.rings['srq' if srv.srq else 'rq']
        s_at, r_at = sq.prod, rq.prod
        srv.recv(0x100)
        cli.send(0x101)
        self.assertEqual([(w.wr_id, w.status) for w in poll(cli.cq, 1)], [(0x101, 0)])
        self.assertEqual([(w.wr_id, w.status) for w in poll(srv.cq, 1)], [(0x100, 0)])
        return sq.read_slot(s_at), rq.read_slot(r_at)

    # --- send queue -------------------------------------------------------------------------

    def test_sq_corrupt_wqes(self):
        """Each malformed send WQE completes with an error, the QP goes to ERROR, the WR
        behind it is flushed."""
        for name, mutate, expect, c_safe in SEND_CORRUPTIONS:
            if SAFE_FOR_C and not c_safe:
                continue
            with self.subTest(name):
                cli, srv = self.players()
                tmpl, _ = self.warm_up(cli, srv)
                srv.recv(0x200)
                sq = cli.rings['sq']
                bad = bytearray(tmpl)
                struct.pack_into('<Q', bad, SWQE_WR_ID, 0xbad)
                fresh_send(bad)
                mutate(bad, cli)
                at = sq.prod
                sq.write_slot(at, bad)
                sq.prod = (at + 1) & sq.mask
                cli.send(0x202)  # librxe's doorbell
                wcs = poll(cli.cq, 2)
                self.assertEqual([(hex(w.wr_id), w.status) for w in wcs],
                                 [('0xbad', expect), ('0x202', e.IBV_WC_WR_FLUSH_ERR)], name)
                self.assertEqual(wait_state(cli, e.IBV_QPS_ERR), e.IBV_QPS_ERR, name)
                # The kernel's consumer index, published masked, caught up with the producer.
                self.assertEqual(sq.cons, sq.prod & sq.mask, name)

    def test_sq_random_wqes(self):
        """Slots full of random bytes: every one completes (error or flush), within the
        timeout; none is executed as a request on the wire that succeeds."""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        sq = cli.rings['sq']
        at, n = sq.prod, 20
        for i in range(n):
            junk = bytearray(self.rng.randbytes(sq.slot_size))
            struct.pack_into('<Q', junk, SWQE_WR_ID, 0xbad00 + i)
            # An opcode outside the table: random bytes would otherwise (1 in 2^27) make a
            # valid WQE with random addresses.
            struct.pack_into('<I', junk, SWQE_OPCODE, 0x80 | self.rng.getrandbits(7))
            sq.write_slot(at + i, junk)
        sq.prod = (at + n) & sq.mask
        cli.send(0x300)
        wcs = poll(cli.cq, n + 1)
        self.assertEqual([w.wr_id for w in wcs], [0xbad00 + i for i in range(n)] + [0x300])
        self.assertNotEqual(wcs[0].status, e.IBV_WC_SUCCESS)
        self.assertTrue(all(w.status == e.IBV_WC_WR_FLUSH_ERR for w in wcs[1:]))
        self.assertEqual(wait_state(cli, e.IBV_QPS_ERR), e.IBV_QPS_ERR)

    def test_sq_producer_jump(self):
        """A producer index far ahead (any u32), doorbell rung: the kernel masks it, runs the
        zeroed slots in between (zero-length RDMA WRITEs, C9-88: no rkey needed), publishes its
        consumer masked, and the queue stays usable."""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        sq = cli.rings['sq']
        for jump in (0xdeadbeef, 0x80000000, 0xfffffffe, self.rng.getrandbits(32)):
            # Slots the jump skips must be harmless zeroes: wipe the ones librxe used.
            for i in range(sq.mask + 1):
                sq.write_slot(i, bytes(sq.slot_size))
            if (jump - sq.cons) & sq.mask == 0:
                jump += 1
            n = (jump - sq.cons) & sq.mask
            sq.prod = jump
            cli.doorbell()
            # pyverbs QPs signal every WR (sq_sig_all): each zero WQE completes, successfully.
            wcs = poll(cli.cq, n)
            self.assertEqual({(w.wr_id, w.status, w.opcode) for w in wcs},
                             {(0, e.IBV_WC_SUCCESS, e.IBV_WC_RDMA_WRITE)}, hex(jump))
            self.assertEqual(sq.cons, jump & sq.mask, hex(jump))
            sq.prod = jump & sq.mask  # librxe's producer_addr does not mask: give it back
            srv.recv(0x400)
            cli.send(0x401)
            wcs = poll(cli.cq, 1)
            self.assertEqual([(w.wr_id, w.status) for w in wcs], [(0x401, 0)], hex(jump))
            self.assertEqual([(w.wr_id, w.status) for w in poll(srv.cq, 1)], [(0x400, 0)])
            self.assertEqual(sq.cons, (jump + 1) & sq.mask)
        self.assertEqual(cli.state(), e.IBV_QPS_RTS)

    def test_sq_producer_huge_garbage(self):
        """Random WQEs behind a producer index with random high bits, rung directly: all
        complete (error, then flushed), none hangs, the consumer is published masked."""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        sq = cli.rings['sq']
        at = sq.cons
        n = 1 + self.rng.randrange(sq.mask - 1)
        for i in range(n):
            junk = bytearray(self.rng.randbytes(sq.slot_size))
            struct.pack_into('<Q', junk, SWQE_WR_ID, 0xbad00 + i)
            struct.pack_into('<I', junk, SWQE_OPCODE, 0x80 | self.rng.getrandbits(7))
            sq.write_slot(at + i, junk)
        sq.prod = (self.rng.getrandbits(32) & ~sq.mask) | ((at + n) & sq.mask)
        cli.doorbell()
        wcs = poll(cli.cq, n)
        self.assertEqual([w.wr_id for w in wcs], [0xbad00 + i for i in range(n)])
        self.assertEqual(wcs[0].status, e.IBV_WC_LOC_QP_OP_ERR)
        self.assertTrue(all(w.status == e.IBV_WC_WR_FLUSH_ERR for w in wcs[1:]))
        self.assertEqual(sq.cons, (at + n) & sq.mask)
        self.assertEqual(wait_state(cli, e.IBV_QPS_ERR), e.IBV_QPS_ERR)

    def test_sq_consumer_scribble(self):
        """The SQ consumer index is the kernel's: a scribbled one is overwritten with the
        kernel's own (masked) value at the next WQE, and never steers the kernel."""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        sq = cli.rings['sq']
        for _ in range(3):
            real = sq.cons
            # Same low bits (librxe's fullness check stays right), garbage above them.
            sq.cons = (self.rng.getrandbits(32) & ~sq.mask) | real
            srv.recv(0x500)
            cli.send(0x501)
            self.assertEqual([(w.wr_id, w.status) for w in poll(cli.cq, 1)], [(0x501, 0)])
            poll(srv.cq, 1)
            self.assertEqual(sq.cons, (real + 1) & sq.mask)

    # --- receive queue and SRQ ------------------------------------------------------------------

    def recv_corrupt(self, with_srq):
        ring_name = 'srq' if with_srq else 'rq'
        for name, mutate, c_safe in RECV_CORRUPTIONS:
            if SAFE_FOR_C and not c_safe:
                continue
            with self.subTest(name):
                cli, srv = self.players(with_srq)
                _, tmpl = self.warm_up(cli, srv)
                rq = srv.rings[ring_name]
                bad = bytearray(tmpl)
                struct.pack_into('<Q', bad, 0, 0xbad)
                fresh_recv(bad)
                mutate(bad, srv)
                at = rq.prod
                rq.write_slot(at, bad)
                rq.prod = (at + 1) & rq.mask
                cli.send(0x601)
                wcs = poll(srv.cq, 1)
                self.assertEqual(wcs[0].wr_id, 0xbad, name)
                srv_status = wcs[0].status
                self.assertIn(srv_status, (e.IBV_WC_LOC_LEN_ERR, e.IBV_WC_LOC_PROT_ERR,
                                           e.IBV_WC_LOC_QP_OP_ERR), name)
                wcs = poll(cli.cq, 1)
                self.assertEqual(wcs[0].wr_id, 0x601, name)
                self.assertIn(wcs[0].status, (e.IBV_WC_REM_INV_REQ_ERR, e.IBV_WC_REM_OP_ERR,
                                              e.IBV_WC_REM_ACCESS_ERR), name)
                if name == 'bad_lkey' and RXE_RS:
                    # Responder class A: the buffer is the responder's fault (C completes the
                    # receive LOC_QP_OP_ERR instead; tests/vm/semantics.sh).
                    self.assertEqual((srv_status, wcs[0].status),
                                     (e.IBV_WC_LOC_PROT_ERR, e.IBV_WC_REM_OP_ERR), name)
                elif RXE_RS:
                    # A WQE that does not parse (SGEs beyond the queue's max_sge or the slot,
                    # a length that is not their sum): responder class A, malformed WQE (C
                    # checks num_sge so, and takes a wrong length for a length error).
                    self.assertEqual((srv_status, wcs[0].status),
                                     (e.IBV_WC_LOC_QP_OP_ERR, e.IBV_WC_REM_OP_ERR), name)
                self.assertEqual(wait_state(srv, e.IBV_QPS_ERR), e.IBV_QPS_ERR, name)
                self.assertEqual(wait_state(cli, e.IBV_QPS_ERR), e.IBV_QPS_ERR, name)
                self.assertEqual(rq.cons, (at + 1) & rq.mask, name)

    def test_rq_corrupt_wqes(self):
        self.recv_corrupt(with_srq=False)

    def test_srq_corrupt_wqes(self):
        self.recv_corrupt(with_srq=True)

    def recv_producer_jump(self, with_srq):
        """A receive producer index far ahead over zeroed slots: the SEND lands in a zero
        WQE (no buffer) and fails on both sides, the receiver's QP in ERROR; nothing hangs."""
        cli, srv = self.players(with_srq)
        self.warm_up(cli, srv)
        rq = srv.rings['srq' if with_srq else 'rq']
        for i in range(rq.mask + 1):
            rq.write_slot(i, bytes(rq.slot_size))
        jump = 0xdeadbeef
        n = (jump - rq.cons) & rq.mask  # zeroed WQEs the kernel now sees posted
        rq.prod = jump
        cli.send(0x701)
        # The first takes the SEND; an RQ (not an SRQ) is flushed when the QP errors.
        wcs = poll(srv.cq, 1 if with_srq else n)
        # rxe-rs: LOC_LEN_ERR, NAK'ed as an invalid request (the data does not fit); the C
        # driver: LOC_QP_OP_ERR, NAK'ed as a remote operational error (its copy_data returns
        # EINVAL for more data than the WQE's resid: "malformed WQE").
        srv_status = wcs[0].status
        self.assertEqual(wcs[0].wr_id, 0)
        self.assertTrue(all((w.wr_id, w.status) == (0, e.IBV_WC_WR_FLUSH_ERR) for w in wcs[1:]))
        wcs = poll(cli.cq, 1)
        self.assertEqual(wcs[0].wr_id, 0x701)
        self.assertIn((srv_status, wcs[0].status),
                      [(e.IBV_WC_LOC_LEN_ERR, e.IBV_WC_REM_INV_REQ_ERR),
                       (e.IBV_WC_LOC_QP_OP_ERR, e.IBV_WC_REM_OP_ERR)])
        self.assertEqual(wait_state(srv, e.IBV_QPS_ERR), e.IBV_QPS_ERR)

    def test_rq_producer_jump(self):
        self.recv_producer_jump(with_srq=False)

    def test_srq_producer_jump(self):
        self.recv_producer_jump(with_srq=True)

    def test_srq_resize_scribbled(self):
        """ibv_modify_srq(IBV_SRQ_MAX_WR) with a scribbled producer index: garbage above the
        index bits carries exactly the WQEs posted (then consumed in order from the new ring,
        which librxe remapped); a producer claiming a full ring cannot shrink it (EINVAL)."""
        cli, srv = self.players(with_srq=True)
        self.warm_up(cli, srv)
        old = srv.rings['srq']
        for i in range(3):
            srv.recv(0xb00 + i)
        old.prod = (0x5a5a0000 & ~old.mask) | (old.prod & old.mask)
        srq_attr = SrqAttr(max_wr=4 * WR)
        _, rings = created_rings(lambda: srv.srq.modify(srq_attr, e.IBV_SRQ_MAX_WR))
        self.assertEqual(len(rings), 1, 'librxe did not map a new SRQ ring')
        new = srv.rings['srq'] = rings[0]
        self.assertGreater(new.mask, old.mask)
        self.assertEqual((new.prod, new.cons), (3, 0))
        self.assertGreaterEqual(srv.srq.query().max_wr, 4 * WR)
        for i in range(3):
            cli.send(0xc00 + i)
        self.assertEqual([(w.wr_id, w.status) for w in poll(srv.cq, 3)],
                         [(0xb00 + i, 0) for i in range(3)])
        poll(cli.cq, 3)
        # A producer index one behind the consumer: a full ring, which no smaller one holds.
        new.prod = new.cons - 1
        with self.assertRaises(PyverbsRDMAError) as ctx:
            srv.srq.modify(SrqAttr(max_wr=WR), e.IBV_SRQ_MAX_WR)
        self.assertEqual(ctx.exception.error_code, errno.EINVAL)

    # --- completion queue ----------------------------------------------------------------------

    def test_cq_producer_scribble(self):
        """The CQ producer index is the kernel's: scribbled, it is rewritten at the next
        completion, which user space then polls as the only one."""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        cq = cli.rings['cq']
        for _ in range(3):
            real = cq.prod
            cq.prod = self.rng.getrandbits(32)
            srv.recv(0x800)
            cli.send(0x801)
            poll(srv.cq, 1)
            # Not polled before the kernel rewrote it: librxe would take the garbage producer
            # for completions (the C driver completes later, from a workqueue).
            deadline = time.monotonic() + TIMEOUT
            while cq.prod != (real + 1) & cq.mask and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertEqual(cq.prod, (real + 1) & cq.mask)
            self.assertEqual([(w.wr_id, w.status) for w in poll(cli.cq, 1)], [(0x801, 0)])

    def test_cq_consumer_full(self):
        """A CQ consumer index that makes the CQ look full: the completion is lost (CQ
        overrun), the QP goes to ERROR, nothing hangs, and the CQ works again once the consumer
        is sane: the next WR is flushed into it. (The C requester ignores the overrun and goes
        on; its responder errors the QP as we do on both sides.)"""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        cq = cli.rings['cq']
        real = cq.prod
        cq.cons = real + 1 + 0x12340000  # one past the producer: full, garbage high bits
        srv.recv(0x900)
        cli.send(0x901)
        poll(srv.cq, 1)
        time.sleep(0.2)
        self.assertEqual(cq.prod, real, 'a completion was written into a full CQ')
        cq.cons = real
        _, got = cli.cq.poll(1)
        self.assertEqual(got, [])
        self.assertEqual(wait_state(cli, e.IBV_QPS_ERR), e.IBV_QPS_ERR)
        cli.send(0x903)
        wcs = poll(cli.cq, 1)
        self.assertEqual((wcs[0].wr_id, wcs[0].status), (0x903, e.IBV_WC_WR_FLUSH_ERR))

    # --- concurrent scribbling and dying processes ----------------------------------------------

    def test_scribble_during_traffic(self):
        """A forked child writes random indices and random slot bytes over every ring of both
        QPs while the parent keeps posting and polling (Ring.scribble: what librxe survives);
        then every object is destroyed."""
        cli, srv = self.players()
        self.warm_up(cli, srv)
        rings = list(cli.rings.values()) + list(srv.rings.values())
        pid = os.fork()
        if pid == 0:  # the scribbler: no verbs calls, only stores into the shared mappings
            rng = random.Random(7)
            end = time.monotonic() + 4
            try:
                while time.monotonic() < end:
                    rng.choice(rings).scribble(rng)
            finally:
                os._exit(0)
        posted = polled = errors = 0
        end = time.monotonic() + 5
        while time.monotonic() < end:
            try:
                srv.recv(0xa00)
                cli.send(0xa01)
                posted += 1
            except Exception:
                errors += 1
            for res in (cli, srv):
                try:
                    polled += res.cq.poll(8)[0]
                except Exception:
                    errors += 1
        _, st = os.waitpid(pid, 0)
        self.assertEqual(st, 0)
        print(f'posted {posted}, polled {polled}, failed calls {errors}', file=sys.stderr)
        self.assertGreater(posted + errors, 0)
        # Destroy everything explicitly: no call may hang or fail in the kernel.
        for res in (cli, srv):
            res.qp.close()
            res.cq.close()
            res.mr.close()
            res.pd.close()
            res.ctx.close()

    def child(self, mode):
        """Runs this module's hostile child in a fresh process; returns its Popen."""
        top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, RXE_HOSTILE_CHILD=mode, RXE_HOSTILE_DEV=self.dev_name,
                   RXE_HOSTILE_GID=str(self.gid_index), PYTHONPATH=top)
        return subprocess.Popen([sys.executable, os.path.abspath(__file__)], env=env, cwd=top,
                                stdout=subprocess.PIPE, text=True)

    def wait_no_leak(self, pid):
        deadline = time.monotonic() + TIMEOUT
        while res_of_pid(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(res_of_pid(pid), {}, f'objects of dead process {pid} left')

    def test_exit_mid_operation(self):
        """A process exits (os._exit, nothing destroyed) with RDMA WRITEs, READs and SENDs
        outstanding and scribbled indices: its QPs, CQs, MRs and PDs all go away."""
        p = self.child('exit')
        out, _ = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, out)
        self.assertIn('posted', out)
        self.wait_no_leak(p.pid)

    def test_killed_mid_operation(self):
        """SIGKILL at random moments of a posting loop (with scribbling): no leak, no hang."""
        for delay in (0.3, 0.7, 1.1):
            p = self.child('loop')
            line = p.stdout.readline()
            self.assertIn('running', line)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.communicate(timeout=60)
            self.assertEqual(p.returncode, -signal.SIGKILL)
            self.wait_no_leak(p.pid)


def hostile_child(mode):
    """The process that dies: a loopback pair with lots in flight."""
    dev, gid = os.environ['RXE_HOSTILE_DEV'], int(os.environ['RXE_HOSTILE_GID'])
    cli = HostileRC(dev, 1, gid)
    srv = HostileRC(dev, 1, gid)
    cli.pre_run(srv.psns, srv.qps_num)
    srv.pre_run(cli.psns, cli.qps_num)
    rng = random.Random(11)
    big = 32 * 1024
    print('running', flush=True)
    posted = 0
    end = time.monotonic() + 1.5
    while True:
        for res, peer in ((cli, srv), (srv, cli)):
            try:
                peer.recv(posted)
                res.send(posted, length=big, opcode=e.IBV_WR_RDMA_WRITE, raddr=peer.mr.buf,
                         rkey=peer.mr.rkey)
                res.send(posted, length=big, opcode=e.IBV_WR_RDMA_READ, raddr=peer.mr.buf,
                         rkey=peer.mr.rkey)
                res.send(posted)
                posted += 1
            except Exception:
                pass
            if rng.random() < 0.2:
                rng.choice(list(res.rings.values())).scribble(rng)
        if mode == 'exit' and time.monotonic() > end:
            print(f'posted {posted}', flush=True)
            os._exit(0)


if __name__ == '__main__' and os.environ.get('RXE_HOSTILE_CHILD'):
    hostile_child(os.environ['RXE_HOSTILE_CHILD'])
