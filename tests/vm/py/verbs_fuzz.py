# SPDX-License-Identifier: GPL-2.0
"""
A verbs fuzzer (run by tests/vm/verbs-fuzz.sh, either driver): several processes issue random
sequences of verbs on random objects of one device, with well-formed and malformed attributes,
post traffic between their own QPs and to the QPs other workers publish, and are killed at
random points; new workers take their place until the time is up.
  python3 verbs_fuzz.py DEV GID_INDEX --seed S --seconds T [--workers N] [--faults]
--faults: each worker marks itself for fault injection (/proc/self/make-it-fail), for
failslab and fail_page_alloc with task-filter set (verbs-fuzz.sh sets their probability).

Every worker's random stream comes from (seed, worker number); the parent's choice of when to
kill whom from the seed, so a run is reproduced by its seed as far as the kernel's timing
allows. Errors from the verbs are the point (any errno is accepted); what is judged is outside
this program: the kernel log (vm-run: KASAN, lockdep, WARN, oops), kmemleak, and the device
and module surviving (verbs-fuzz.sh). The program prints the seed, how many workers were
started and ended, and whether an RC SEND between fresh QPs works after them.
"""
import ctypes
import os
import random
import signal
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

import qp_masks

BOARD = '/tmp/verbs-fuzz-board'  # "qpn rkey addr" lines the workers publish for each other

QP_TYPES = [e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD]
STATES = [e.IBV_QPS_RESET, e.IBV_QPS_INIT, e.IBV_QPS_RTR, e.IBV_QPS_RTS, e.IBV_QPS_SQD,
          e.IBV_QPS_SQE, e.IBV_QPS_ERR]
OPCODES = [e.IBV_WR_SEND, e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE,
           e.IBV_WR_RDMA_WRITE_WITH_IMM, e.IBV_WR_RDMA_READ, e.IBV_WR_ATOMIC_CMP_AND_SWP,
           e.IBV_WR_ATOMIC_FETCH_AND_ADD, e.IBV_WR_LOCAL_INV, e.IBV_WR_BIND_MW,
           e.IBV_WR_SEND_WITH_INV]
ACCESS = [e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE, e.IBV_ACCESS_REMOTE_READ,
          e.IBV_ACCESS_REMOTE_ATOMIC, e.IBV_ACCESS_MW_BIND, e.IBV_ACCESS_ON_DEMAND]
# Lengths near the limits: zero, small, a page, MTU edges, 2^31, 2^32 - 1.
LENGTHS = [0, 1, 7, 8, 63, 1024, 1025, 4095, 4096, 65536, 1 << 20, (1 << 31) - 1, 1 << 31,
           (1 << 32) - 1]


class Worker:
    def __init__(self, dev, gid_index, rng):
        self.r = rng
        self.dev, self.gid_index = dev, gid_index
        self.ctx = Context(name=dev)
        self.gid = self.ctx.query_gid(1, gid_index)
        self.objs = {'pd': [PD(self.ctx)], 'cq': [], 'qp': [], 'srq': [], 'mr': [], 'mw': [],
                     'ah': []}

    def pick(self, kind):
        lst = self.objs[kind]
        return self.r.choice(lst) if lst else None

    def flags(self, choices):
        v = 0
        for f in choices:
            if self.r.random() < 0.4:
                v |= f
        return v

    def num(self):
        r = self.r.random()
        if r < 0.6:
            return self.r.randint(0, 64)
        if r < 0.9:
            return self.r.choice(LENGTHS)
        return self.r.getrandbits(32)

    def key(self):
        """An lkey/rkey: one of ours, one published, or random."""
        r = self.r.random()
        mr = self.pick('mr')
        if r < 0.5 and mr:
            return mr.lkey if self.r.random() < 0.5 else mr.rkey
        if r < 0.7:
            peer = self.peer()
            if peer:
                return peer[1]
        return self.r.getrandbits(32)

    def peer(self):
        try:
            with open(BOARD) as f:
                lines = f.read().split('\n')[-64:]
            lines = [ln.split() for ln in lines if ln.strip()]
            return [int(x, 0) for x in self.r.choice(lines)] if lines else None
        except (OSError, ValueError, IndexError):
            return None

    def sges(self, mapped=False):
        """SGEs: over our MRs, or (unless mapped) anywhere with any key and length."""
        if mapped:
            mr = self.pick('mr')
            if not mr:
                return []
            off = self.r.randint(0, mr.length - 1)
            return [SGE(mr.buf + off, self.r.randint(0, min(256, mr.length - off)), mr.lkey)]
        out = []
        for _ in range(self.r.choice([0, 1, 1, 2, 3, 8, 33])):
            mr = self.pick('mr')
            base = mr.buf if mr and self.r.random() < 0.8 else self.r.getrandbits(64)
            out.append(SGE(base + self.r.choice([0, 0, 1, 8, 4096]) % (1 << 64),
                           self.r.choice(LENGTHS) if self.r.random() < 0.3 else self.r.randint(0, 4096),
                           self.key()))
        return out

    # --- the verbs -------------------------------------------------------------------------

    def size(self, small):
        """A queue size: one of small, or now and then anything (num)."""
        return self.r.choice(small) if self.r.random() < 0.9 else self.num()

    def keep(self, kind, obj, big):
        """Pools keep objects of small queues; a big one (up to 16 MiB of ring) goes at once,
        so that four workers stay within the VM's memory."""
        if big:
            obj.close()
        else:
            self.objs[kind].append(obj)

    def create_cq(self):
        n = self.size([1, 2, 16, 256, 4096])
        self.keep('cq', CQ(self.ctx, n, None, None, 0), n > 4096)

    def create_qp(self):
        cq, pd = self.pick('cq'), self.pick('pd')
        if not cq or not pd:
            return
        cap = QPCap(max_send_wr=self.size([0, 1, 16, 256]), max_recv_wr=self.size([0, 1, 16]),
                    max_send_sge=self.size([0, 1, 4, 32]), max_recv_sge=self.size([1, 4]),
                    max_inline_data=self.size([0, 64, 256]))
        srq = self.pick('srq') if self.r.random() < 0.2 else None
        qp = QP(pd, QPInitAttr(qp_type=self.r.choice(QP_TYPES), scq=cq,
                               rcq=self.pick('cq'), srq=srq, cap=cap,
                               sq_sig_all=self.r.randint(0, 1)))
        if cap.max_send_wr > 256 or cap.max_recv_wr > 256:
            qp.close()
            return
        self.objs['qp'].append(qp)
        mr = self.pick('mr')
        if mr and self.r.random() < 0.5:
            with open(BOARD, 'a') as f:
                f.write(f'{qp.qp_num} {mr.rkey} {mr.buf}\n')

    def modify_qp(self):
        qp = self.pick('qp')
        if not qp:
            return
        a = QPAttr(port_num=self.r.choice([1, 1, 1, 0, 2]))
        a.qp_state = self.r.choice(STATES)
        a.qp_access_flags = self.flags(ACCESS)
        a.path_mtu = self.r.choice([e.IBV_MTU_256, e.IBV_MTU_1024, e.IBV_MTU_4096])
        peer = self.peer()
        a.dest_qp_num = peer[0] if peer and self.r.random() < 0.5 else self.pick('qp').qp_num
        a.rq_psn = a.sq_psn = self.r.getrandbits(24)
        a.max_dest_rd_atomic = a.max_rd_atomic = self.r.choice([0, 1, 16, 128])
        a.min_rnr_timer = self.r.randint(0, 31)
        a.timeout, a.retry_cnt, a.rnr_retry = self.r.randint(0, 31), self.r.randint(0, 7), \
            self.r.randint(0, 7)
        a.qkey = self.r.getrandbits(32)
        a.ah_attr = AHAttr(port_num=1, is_global=1,
                           gr=GlobalRoute(dgid=self.gid, sgid_index=self.r.choice([self.gid_index, 0, 1, 200])))
        mask = qp_masks.required(qp.qp_type, a.qp_state) if self.r.random() < 0.7 \
            else self.flags(qp_masks.ALL)
        qp.modify(a, mask)


    def reg_mr(self):
        pd = self.pick('pd')
        length = self.r.choice([1, 64, 4096, 65536, 65536, 1 << 20])
        self.keep('mr', MR(pd, length, self.flags(ACCESS) | e.IBV_ACCESS_LOCAL_WRITE), length > 65536)

    def alloc_mw(self):
        self.objs['mw'].append(MW(self.pick('pd'), self.r.choice([e.IBV_MW_TYPE_1, e.IBV_MW_TYPE_2])))

    def create_srq(self):
        n = self.size([1, 16, 256])
        self.keep('srq', SRQ(self.pick('pd'), SrqInitAttr(SrqAttr(
            max_wr=n, max_sge=self.size([1, 4]), srq_limit=self.size([0, 1, 8])))), n > 256)

    def modify_srq(self):
        srq = self.pick('srq')
        if srq:
            srq.modify(SrqAttr(max_wr=self.size([16, 256]), srq_limit=self.size([0, 4, 300])),
                       self.r.choice([e.IBV_SRQ_LIMIT, e.IBV_SRQ_MAX_WR, 3]))

    def create_ah(self):
        self.objs['ah'].append(AH(self.pick('pd'), attr=AHAttr(
            port_num=self.r.choice([1, 1, 2]), is_global=1,
            gr=GlobalRoute(dgid=self.gid, sgid_index=self.r.choice([self.gid_index, 0, 1, 255])))))

    def resize_cq(self):
        cq = self.pick('cq')
        if cq:
            n = self.size([1, 16, 4096])
            cq.resize(n)
            if n > 4096:
                cq.resize(64)  # back to small (see keep)

    def post_send(self):
        qp = self.pick('qp')
        if not qp:
            return
        wrs = []
        for i in range(self.r.choice([1, 1, 2, 8])):
            op = self.r.choice(OPCODES)
            flags = self.flags([e.IBV_SEND_SIGNALED, e.IBV_SEND_FENCE, e.IBV_SEND_INLINE,
                                e.IBV_SEND_SOLICITED])
            # librxe copies inline data in user space: inline only from memory that is there.
            sg = self.sges(mapped=bool(flags & e.IBV_SEND_INLINE))
            wr = SendWR(wr_id=self.r.getrandbits(64), opcode=op, num_sge=len(sg), sg=sg or None,
                        send_flags=flags)
            peer = self.peer()
            if op in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_WRITE_WITH_IMM, e.IBV_WR_RDMA_READ):
                wr.set_wr_rdma(self.key(), peer[2] if peer and self.r.random() < 0.5 else self.r.getrandbits(64))
            elif op in (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD):
                wr.set_wr_atomic(self.key(), self.r.getrandbits(64) & ~self.r.choice([0, 7]),
                                 self.r.getrandbits(64), self.r.getrandbits(64))
            elif op == e.IBV_WR_BIND_MW:
                mw, mr = self.pick('mw'), self.pick('mr')
                if not mw or not mr:
                    return  # librxe reads the bind's MR in user space
                wr.set_bind_wr(mw, MWBindInfo(mr, mr.buf, self.r.choice([0, 1, mr.length, mr.length + 1]),
                                              self.flags(ACCESS)))
            if qp.qp_type == e.IBV_QPT_UD:
                # librxe dereferences a UD WR's AH in user space: without one, no post.
                ah = self.pick('ah')
                if not ah:
                    return
                wr.set_wr_ud(ah, peer[0] if peer else self.r.getrandbits(24), self.r.getrandbits(32))
            wrs.append(wr)
        for a, b in zip(wrs, wrs[1:]):
            a.next_wr = b
        qp.post_send(wrs[0])

    def post_recv(self):
        target = self.pick('srq') if self.r.random() < 0.3 else self.pick('qp')
        if target:
            sg = self.sges()
            target.post_recv(RecvWR(wr_id=self.r.getrandbits(64), num_sge=len(sg), sg=sg or None))

    def poll(self):
        cq = self.pick('cq')
        if cq:
            cq.poll(self.r.choice([1, 16]))

    def destroy(self):
        """Destroys an object nothing else of ours depends on (pyverbs closes the dependants
        of a PD, CQ or SRQ with it, and a closed object must not be used again: reset)."""
        kind = self.r.choice(['qp', 'qp', 'mr', 'mw', 'ah'])
        lst = self.objs[kind]
        if lst:
            o = lst.pop(self.r.randrange(len(lst)))
            o.close()  # EBUSY and the like are answers too; the object is dropped either way

    def reset(self):
        """Closes the context with everything in it, and opens a fresh one."""
        ctx = self.ctx
        for kind in self.objs:
            self.objs[kind] = []
        try:
            ctx.close()
        except Exception:
            pass
        self.ctx = Context(name=self.dev)
        self.objs['pd'] = [PD(self.ctx)]

    def step(self):
        verbs = [(self.create_cq, 3), (self.create_qp, 4), (self.modify_qp, 8), (self.reg_mr, 3),
                 (self.alloc_mw, 1), (self.create_srq, 1), (self.modify_srq, 1),
                 (self.create_ah, 1), (self.resize_cq, 1), (self.post_send, 10),
                 (self.post_recv, 5), (self.poll, 6), (self.destroy, 5), (self.reset, 0.2),
                 (lambda: self.objs['pd'].append(PD(self.ctx)), 1)]
        fn = self.r.choices([v for v, _ in verbs], [w for _, w in verbs])[0]
        try:
            fn()
        except Exception:  # every errno is an answer
            pass


def worker_main(dev, gid_index, seed, n, faults):
    rng = random.Random(f'{seed}/{n}')
    w = Worker(dev, gid_index, rng)
    if faults:
        # The guest's root is 9p: with the workers marked from their start, files there failed
        # to open (EINVAL) after the run. So a worker is marked only once libibverbs has loaded
        # its providers and every page it maps is in memory (mlockall: no later page fault
        # reads from 9p), and the parent opens the device before forking.
        if ctypes.CDLL(None, use_errno=True).mlockall(1) != 0:  # MCL_CURRENT
            raise OSError(ctypes.get_errno(), 'mlockall')
        with open('/proc/self/make-it-fail', 'w') as f:
            f.write('1')
    while True:
        w.step()
        if sum(len(v) for v in w.objs.values()) > 80:
            w.reset()  # keeps the pools bounded


def main():
    args = sys.argv[1:]
    faults = '--faults' in args
    if faults:
        args.remove('--faults')
    opt = {'--seed': None, '--seconds': '60', '--workers': '4'}
    for k in list(opt):
        if k in args:
            i = args.index(k)
            opt[k] = args[i + 1]
            del args[i:i + 2]
    dev, gid_index = args[0], int(args[1])
    seed = int(opt['--seed']) if opt['--seed'] is not None else random.SystemRandom().getrandbits(32)
    seconds, nworkers = float(opt['--seconds']), int(opt['--workers'])
    print(f'verbs_fuzz: seed {seed}, {seconds:.0f} s, {nworkers} workers on {dev}', flush=True)
    rng = random.Random(seed)
    open(BOARD, 'w').close()
    Context(name=dev).close()  # libibverbs loads its providers here, not after the faults
    live, started, ended = {}, 0, 0

    def spawn():
        nonlocal started
        n = started
        started += 1
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                worker_main(dev, gid_index, seed, n, faults)
            finally:
                os._exit(0)
        live[pid] = n

    for _ in range(nworkers):
        spawn()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(0.2, 3.0))
        if live:
            victim = rng.choice(sorted(live))
            os.kill(victim, rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM]))
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if not pid:
                break
            ended += 1
            live.pop(pid, None)
            spawn()
    for pid in list(live):
        os.kill(pid, signal.SIGKILL)
    for pid in list(live):
        os.waitpid(pid, 0)
        ended += 1
    print(f'verbs_fuzz: seed {seed}: {started} workers started, {ended} ended (killed at random)')
    return 0 if rc_send_works(dev, gid_index) else 1


def rc_send_works(dev, gid_index):
    """After the workers: two fresh RC QPs of the device carry a 4 KiB SEND, data compared (in
    this process, which has libibverbs loaded: see worker_main on the guest's root)."""
    ctx = Context(name=dev)
    try:
        pd, cq = PD(ctx), CQ(ctx, 16, None, None, 0)
        cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
        a, b = (QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)) for _ in range(2))
        gid = ctx.query_gid(1, gid_index)
        for q, peer in ((a, b), (b, a)):
            attr = QPAttr(port_num=1)
            attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE
            attr.path_mtu, attr.dest_qp_num, attr.rq_psn, attr.sq_psn = e.IBV_MTU_1024, peer.qp_num, 0, 0
            attr.max_dest_rd_atomic = attr.max_rd_atomic = 1
            attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 14, 7, 7
            attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=GlobalRoute(dgid=gid, sgid_index=gid_index))
            q.to_rts(attr)
        src, dst = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE), MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
        data = os.urandom(4096)
        src.write(data, 4096)
        b.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(dst.buf, 4096, dst.lkey)]))
        a.post_send(SendWR(wr_id=1, num_sge=1, sg=[SGE(src.buf, 4096, src.lkey)],
                           send_flags=e.IBV_SEND_SIGNALED))
        statuses, deadline = [], time.monotonic() + 30
        while len(statuses) < 2 and time.monotonic() < deadline:
            n, wcs = cq.poll()
            statuses += [w.status for w in wcs[:n]]
        ok = statuses == [e.IBV_WC_SUCCESS] * 2 and dst.read(4096, 0) == data
        print(f'verbs_fuzz: afterwards an RC SEND of 4 KiB between fresh QPs: '
              f'{"arrives intact" if ok else f"FAILS (statuses {statuses})"}')
        return ok
    finally:
        ctx.close()


if __name__ == '__main__':
    sys.exit(main())
