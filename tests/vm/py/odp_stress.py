# SPDX-License-Identifier: GPL-2.0
"""
On-demand paging under invalidation (run by tests/vm/odp.sh, either driver):
  python3 odp_stress.py DEV GID_INDEX [ITERATIONS]

Two ODP MRs, A (the requester's buffers) and B (the responder's target), each over an mmap'ed
region of NPAGES pages, and a loopback RC QP pair. Each region has a checked part (its first
CHECKED pages) and a racing part (the rest).

Every iteration first changes the checked memory the way a process changes memory under a
registration: MADV_DONTNEED of random pages of A and of B (they read back as zeros and are
faulted in anew), or munmap and mmap(MAP_FIXED) of all of B (new pages at the same address).
Then, data checked:
  - an RDMA WRITE of a fresh pattern from A to B (several packets, across pages);
  - an RDMA READ of it back into A, zeroed first;
  - an ATOMIC FETCH_AND_ADD and a COMPARE_AND_SWAP on a word of B.
And, status checked: an RDMA WRITE over the racing parts (A's to B's), while a thread keeps
dropping the racing pages of both (MADV_DONTNEED) for the whole run, so invalidations race with
the faults and copies of the data path. Every work request must succeed.

At the end B is unmapped for good: an RDMA WRITE to it must fail with REM_ACCESS_ERR (its
pages cannot be faulted in; C answers so too), and the requester's QP goes to error. Then
ranges that wrap 2^64: a WRITE to va 2^64-16 of B (REM_ACCESS_ERR, B untouched) and one from
an SGE at 2^64-16 with A's lkey (LOC_PROT_ERR).

Every check prints "ok   ..." or "FAIL ..."; a summary line ends the run.
"""
import ctypes
import os
import random
import sys
import threading
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

from guestcheck import DRIVER, check, failures, tally, wc_name

PAGE = 4096
NPAGES = 16
CHECKED = 8  # pages 0..7 are data-checked, 8..15 race with invalidation
MSG = 3 * PAGE + 512  # several 1024-byte packets, across page boundaries
ODP_ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ |
              e.IBV_ACCESS_REMOTE_ATOMIC | e.IBV_ACCESS_ON_DEMAND)

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_RW, MAP_PRIVATE, MAP_ANONYMOUS, MAP_FIXED, MADV_DONTNEED = 3, 2, 0x20, 0x10, 4


def mmap(addr=None, fixed=False):
    flags = MAP_PRIVATE | MAP_ANONYMOUS | (MAP_FIXED if fixed else 0)
    p = libc.mmap(addr, NPAGES * PAGE, PROT_RW, flags, -1, 0)
    if p in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), 'mmap')
    return p


def dontneed(addr, npages):
    if libc.madvise(addr, npages * PAGE, MADV_DONTNEED):
        raise OSError(ctypes.get_errno(), 'madvise')


def wait(cq):
    """The status of the first completion on cq (None: none within 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        n, wcs = cq.poll()
        if n:
            return wcs[0].status
        time.sleep(0.0005)
    return None


class Pair:
    """A loopback RC QP pair: `req` sends, `resp` is the target."""

    def __init__(self, ctx, pd, gid_index):
        self.cq = CQ(ctx, 16, None, None, 0)
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, cap=cap)
        self.req, self.resp = QP(pd, init), QP(pd, init)
        gid, lid = ctx.query_gid(1, gid_index), ctx.query_port(1).lid
        for qp, peer in ((self.req, self.resp), (self.resp, self.req)):
            attr = QPAttr(port_num=1)
            attr.qp_access_flags = ODP_ACCESS & ~e.IBV_ACCESS_ON_DEMAND
            attr.path_mtu = e.IBV_MTU_1024
            attr.dest_qp_num = peer.qp_num
            attr.rq_psn = attr.sq_psn = 0x100
            attr.max_dest_rd_atomic = attr.max_rd_atomic = 4
            attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 18, 7, 7
            gr = GlobalRoute(dgid=gid, sgid_index=gid_index)
            attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr, dlid=lid)
            qp.to_rts(attr)

    def post(self, opcode, local, off, length, remote, roff, atomic=None):
        """One signalled work request; its completion status (None: none within 30 s)."""
        wr = SendWR(wr_id=1, opcode=opcode, num_sge=1,
                    sg=[SGE(local.buf + off, length, local.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        if atomic is None:
            wr.set_wr_rdma(remote.rkey, remote.buf + roff)
        else:
            wr.set_wr_atomic(remote.rkey, remote.buf + roff, atomic[0], atomic[1])
        self.req.post_send(wr)
        return wait(self.cq)


def first_diff(x, y):
    """Where bytes x and y first differ, and what each holds there."""
    i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), None)
    return 'equal' if i is None else f'from byte {i}: {x[i:i + 8].hex()} vs {y[i:i + 8].hex()}'


def exit_early(dev, gid_index):
    """Posts WRITEs and READs whose pages all need faulting in, on fresh ODP MRs, and exits at
    once: the process's teardown (QPs destroyed, MRs deregistered, the mm gone) meets faults in
    flight. Run several times by odp.sh, which then checks that nothing is left."""
    ctx = Context(name=dev)
    pd = PD(ctx)
    a = MR(pd, NPAGES * PAGE, ODP_ACCESS, address=mmap())
    b = MR(pd, NPAGES * PAGE, ODP_ACCESS, address=mmap())
    pair = Pair(ctx, pd, gid_index)
    for i, opcode in enumerate((e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ) * 3):
        wr = SendWR(wr_id=i, opcode=opcode, num_sge=1,
                    sg=[SGE(a.buf + i * PAGE, 2 * PAGE, a.lkey)], send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(b.rkey, b.buf + (NPAGES - 2 - i) * PAGE)
        pair.req.post_send(wr)
    os._exit(0)


def main():
    dev, gid_index = sys.argv[1], int(sys.argv[2])
    if len(sys.argv) > 3 and sys.argv[3] == 'exit-early':
        exit_early(dev, gid_index)
    iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    print(f'driver: {DRIVER}, {iterations} iterations')
    ctx = Context(name=dev)
    pd = PD(ctx)
    a_addr, b_addr = mmap(), mmap()
    a = MR(pd, NPAGES * PAGE, ODP_ACCESS, address=a_addr)
    b = MR(pd, NPAGES * PAGE, ODP_ACCESS, address=b_addr)
    check('two ODP MRs registered over mmap\'ed memory', a.buf == a_addr and b.buf == b_addr)
    pair = Pair(ctx, pd, gid_index)
    race_off, race_len = CHECKED * PAGE, (NPAGES - CHECKED) * PAGE

    stop = threading.Event()
    drops = [0]

    def racer():
        while not stop.is_set():
            try:
                dontneed(a_addr + race_off, NPAGES - CHECKED)
                dontneed(b_addr + race_off, NPAGES - CHECKED)
                drops[0] += 1
            except OSError:
                pass  # B between its munmap and its mmap
            time.sleep(0.0002)

    t = threading.Thread(target=racer, daemon=True)
    t.start()
    rng = random.Random(0x0D9)
    bad = {}

    def note(what, ok):
        if not ok:
            bad[what] = bad.get(what, 0) + 1
        return ok

    msg = MSG

    def offset():
        return rng.randrange(0, CHECKED * PAGE - msg, 8)

    remaps = 0
    t0 = time.monotonic()
    for i in range(iterations):
        if i % 4 == 3:
            # New pages at the same address: the old ones are gone for good.
            libc.munmap(b_addr, NPAGES * PAGE)
            mmap(b_addr, fixed=True)
            remaps += 1
        else:
            dontneed(a_addr + rng.randrange(CHECKED) * PAGE, 1)
            dontneed(b_addr + rng.randrange(CHECKED) * PAGE, 1)
        off, roff = offset(), offset()
        pattern = os.urandom(msg)
        a.write(pattern, msg, off)
        st = pair.post(e.IBV_WR_RDMA_WRITE, a, off, msg, b, roff)
        if not note('RDMA WRITE', st == e.IBV_WC_SUCCESS and b.read(msg, roff) == pattern):
            print(f'  iteration {i}: WRITE {wc_name(st)} at {off:#x} -> {roff:#x}, '
                  f'B {first_diff(b.read(msg, roff), pattern)}')
            break
        a.write(bytes(msg), msg, off)
        st = pair.post(e.IBV_WR_RDMA_READ, a, off, msg, b, roff)
        if not note('RDMA READ', st == e.IBV_WC_SUCCESS and a.read(msg, off) == pattern):
            print(f'  iteration {i}: READ {wc_name(st)}')
            break
        word = roff & ~7
        old = int.from_bytes(b.read(8, word), 'little')
        add = rng.randrange(1, 1 << 32)
        st = pair.post(e.IBV_WR_ATOMIC_FETCH_AND_ADD, a, off & ~7, 8, b, word, (add, 0))
        got = int.from_bytes(a.read(8, off & ~7), 'little')
        new = int.from_bytes(b.read(8, word), 'little')
        if not note('FETCH_AND_ADD', st == e.IBV_WC_SUCCESS and got == old and
                    new == (old + add) % (1 << 64)):
            print(f'  iteration {i}: FETCH_ADD {wc_name(st)} got {got:#x} old {old:#x} new {new:#x}')
            break
        swap = rng.randrange(1 << 64)
        st = pair.post(e.IBV_WR_ATOMIC_CMP_AND_SWP, a, off & ~7, 8, b, word, (new, swap))
        got = int.from_bytes(a.read(8, off & ~7), 'little')
        if not note('COMPARE_AND_SWAP', st == e.IBV_WC_SUCCESS and got == new and
                    int.from_bytes(b.read(8, word), 'little') == swap):
            print(f'  iteration {i}: CMP_SWP {wc_name(st)}')
            break
        st = pair.post(e.IBV_WR_RDMA_WRITE, a, race_off, race_len, b, race_off)
        if not note('RDMA WRITE over pages being dropped', st == e.IBV_WC_SUCCESS):
            print(f'  iteration {i}: racing WRITE {wc_name(st)}')
            break
    stop.set()
    t.join()
    elapsed = time.monotonic() - t0
    for what in ('RDMA WRITE', 'RDMA READ', 'FETCH_AND_ADD', 'COMPARE_AND_SWAP',
                 'RDMA WRITE over pages being dropped'):
        check(f'{what}: every iteration succeeded with the data checked', what not in bad,
              f'{bad.get(what)} failure(s)')
    print(f'{iterations} iterations in {elapsed:.1f} s: B remapped {remaps} times, '
          f'racing pages dropped {drops[0]} times')
    check('pages were dropped under the traffic', drops[0] >= iterations // 4, f'{drops[0]} times')

    if failures() == 0:
        libc.munmap(b_addr, NPAGES * PAGE)
        st = pair.post(e.IBV_WR_RDMA_WRITE, a, 0, PAGE, b, 0)
        check('RDMA WRITE to B once unmapped: IBV_WC_REM_ACCESS_ERR',
              st == e.IBV_WC_REM_ACCESS_ERR, wc_name(st))
        # Mapped again so that the MR's release finds the memory its registration had.
        mmap(b_addr, fixed=True)
    # Addresses whose range wraps 2^64, against ODP MRs (`data-path.md`, "Ranges that cannot
    # wrap"): the responder refuses the forged RETH, the requester the SGE; nothing is touched.
    top = (1 << 64) - 16
    before = b.read(PAGE, 0)
    wrap = Pair(ctx, pd, gid_index)
    wr = SendWR(wr_id=2, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(a.buf, 64, a.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(b.rkey, top)
    wrap.req.post_send(wr)
    st = wait(wrap.cq)
    check('RDMA WRITE to va 2^64-16 of an ODP MR (64 bytes): IBV_WC_REM_ACCESS_ERR',
          st == e.IBV_WC_REM_ACCESS_ERR, wc_name(st))
    check('  the MR is untouched', b.read(PAGE, 0) == before)
    wrap2 = Pair(ctx, pd, gid_index)
    wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(top, 64, a.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(b.rkey, b.buf)
    wrap2.req.post_send(wr)
    st = wait(wrap2.cq)
    check('RDMA WRITE from an SGE at 2^64-16 with an ODP lkey: IBV_WC_LOC_PROT_ERR',
          st == e.IBV_WC_LOC_PROT_ERR, wc_name(st))
    for o in (wrap.req, wrap.resp, wrap.cq, wrap2.req, wrap2.resp, wrap2.cq,
              pair.req, pair.resp, pair.cq, a, b, pd, ctx):
        o.close()
    return tally()


if __name__ == '__main__':
    sys.exit(main())
