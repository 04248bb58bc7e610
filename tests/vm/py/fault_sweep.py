# SPDX-License-Identifier: GPL-2.0
"""
Every allocation of a control operation failing in turn (syzkaller's method), through the task's
fail-nth (Documentation/fault-injection/fault-injection.rst): run by tests/vm/fault-sweep.sh on
the debug kernel, either driver.
  python3 fault_sweep.py DEV GID_INDEX NETDEV FAMILY… [--limit N]
FAMILY: link, ctx, pd, cq, srq, qp, mr, mw, ah, mcast, or module=PATH[:PARAMS] (a module's load:
finit_module with PARAMS, and its init; unloaded after each run that loaded it).

For each operation, with N = 1, 2, 3, …: its prerequisites are made without faults, N is
written to /proc/thread-self/fail-nth, the operation runs, and fail-nth is read back (0: the
N-th fault site was reached and failed) and cleared; what the operation made is then undone
without faults. A run with a fault injected may fail (any errno) or succeed (the allocation was
optional or retried); the first run that reaches no N-th site must succeed, and ends the sweep:
"OPERATION: N fault positions". --limit N stops each sweep after N positions (the bounded part
of make check DEBUG=1); it then says so. After each family, the device must still carry an RC
SEND with its data checked. The kernel log (KASAN, lockdep, WARN) and kmemleak are judged by
scripts/vm-run and the shell script.

Families: link (rdma link add and del over netlink), ctx (ucontext), pd, cq (create, resize),
srq (create, modify limit and size), qp (create RC/UC/UD, each modify_qp transition, destroy),
mr (user, ODP, rereg, dereg), mw (alloc, bind), ah, mcast (attach, detach), module=PATH.
"""
import ctypes
import errno
import itertools
import os
import socket
import struct
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
from guestcheck import check, tally
from rereg_mr import CHANGE_ACCESS, MEM, ibv_mr_of, rereg

LW, RW, RR = e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE, e.IBV_ACCESS_REMOTE_READ
MW_BIND = e.IBV_ACCESS_MW_BIND

# The task's fail-nth, opened once: opening and closing it are outside the window.
FAIL_NTH = os.open('/proc/thread-self/fail-nth', os.O_RDWR)


def arm(n):
    os.pwrite(FAIL_NTH, str(n).encode(), 0)


def disarm():
    """True if the armed fault was injected; clears it."""
    left = int(os.pread(FAIL_NTH, 32, 0))
    os.pwrite(FAIL_NTH, b'0', 0)
    return left == 0


LIMIT = None
positions = {}


def sweep(name, op, setup=lambda: None, undo=lambda st, res: None):
    """Runs op(st) with its N-th fault site failing, for N = 1, 2, … (see the top)."""
    errs = {}
    for n in itertools.count(1):
        st = setup()
        arm(n)
        err = res = None
        try:
            res = op(st)
        except Exception as ex:  # an injected fault may surface as any error
            err = ex
        fired = disarm()
        undo(st, res)
        if not fired:
            positions[name] = n - 1
            return check(f'{name}: {n - 1} fault positions, then succeeds', err is None, repr(err))
        if err is not None:
            key = getattr(err, 'error_code', None) or type(err).__name__
            errs[key] = errs.get(key, 0) + 1
        if LIMIT and n >= LIMIT:
            positions[name] = n
            print(f'     {name}: stopped after {n} fault positions (--limit), errors {fmt(errs)}')
            return check(f'{name}: first {n} fault positions', True)


def fmt(errs):
    return ', '.join(f'{errno.errorcode.get(k, k) if isinstance(k, int) else k} x{v}'
                     for k, v in sorted(errs.items(), key=str)) or 'none'


def closing(*objs):
    for o in objs:
        if o is not None:
            try:
                o.close()
            except Exception as ex:
                check(f'close {type(o).__name__} after a faulted run', False, repr(ex))


# --- rdma link add / del over NETLINK_RDMA (include/uapi/rdma/rdma_netlink.h) -----------------

NETLINK_RDMA = 20
RDMA_NL_NLDEV = 5
NEWLINK, DELLINK = 3, 4
ATTR_DEV_INDEX, ATTR_DEV_NAME, ATTR_NDEV_NAME, ATTR_LINK_TYPE = 1, 2, 51, 65
NLM_F_REQUEST, NLM_F_ACK = 1, 4


def nl_attr(kind, value):
    data = value.encode() + b'\0' if isinstance(value, str) else struct.pack('<I', value)
    a = struct.pack('<HH', 4 + len(data), kind) + data
    return a + b'\0' * (-len(a) % 4)


def nldev(cmd, *attrs):
    """One NLDEV request; its errno (0 on success)."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    try:
        body = b''.join(nl_attr(*a) for a in attrs)
        s.send(struct.pack('<IHHII', 16 + len(body), (RDMA_NL_NLDEV << 10) + cmd,
                           NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body)
        reply = s.recv(8192)
        return -struct.unpack_from('<i', reply, 16)[0]
    finally:
        s.close()


def dev_index(name):
    for line in os.popen('rdma dev show').read().splitlines():  # "N: NAME: node_type …"
        if line.split(':')[1:2] == [' ' + name]:
            return int(line.split(':')[0])
    raise LookupError(f'no RDMA device {name}')


def family_link(netdev):
    name = 'rxfs0'

    def add(_):
        err = nldev(NEWLINK, (ATTR_DEV_NAME, name), (ATTR_LINK_TYPE, 'rxe'), (ATTR_NDEV_NAME, netdev))
        if err:
            raise OSError(err, os.strerror(err))

    def gone(_, __):
        if os.path.exists(f'/sys/class/infiniband/{name}'):
            os.system(f'rdma link del {name}')

    sweep('rdma link add', add, undo=gone)

    def made():
        if os.system(f'rdma link add {name} type rxe netdev {netdev}') != 0:
            raise RuntimeError('rdma link add failed without faults')
        return dev_index(name)

    def delete(index):
        err = nldev(DELLINK, (ATTR_DEV_INDEX, index))
        if err:
            raise OSError(err, os.strerror(err))

    sweep('rdma link del', delete, setup=made, undo=gone)


# --- verbs ----------------------------------------------------------------------------------

class Dev:
    def __init__(self, name, gid_index):
        self.name, self.gid_index = name, gid_index
        self.ctx = Context(name=name)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64, None, None, 0)
        self.gid = self.ctx.query_gid(1, gid_index)

    def qp(self, qp_type=e.IBV_QPT_RC, srq=None):
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=2, max_recv_sge=2)
        return QP(self.pd, QPInitAttr(qp_type=qp_type, scq=self.cq, rcq=self.cq, srq=srq, cap=cap))

    def ah_attr(self):
        return AHAttr(port_num=1, is_global=1, gr=GlobalRoute(dgid=self.gid, sgid_index=self.gid_index))

    def attr(self, peer_qpn=None, qp_type=e.IBV_QPT_RC):
        a = QPAttr(port_num=1)
        a.qp_access_flags = LW | RW | RR | e.IBV_ACCESS_MW_BIND
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = peer_qpn or 0
        a.rq_psn = a.sq_psn = 0x100
        a.max_dest_rd_atomic = a.max_rd_atomic = 1
        a.min_rnr_timer, a.timeout, a.retry_cnt, a.rnr_retry = 12, 14, 7, 7
        a.qkey = 0x11111111
        if qp_type != e.IBV_QPT_UD:
            a.ah_attr = self.ah_attr()
        return a

    def poll(self, cq=None, timeout=20):
        cq = cq or self.cq
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            n, wcs = cq.poll()
            if n:
                return wcs[0]
            time.sleep(0.001)
        return None


# modify_qp transitions in order, each applied to a QP in the previous state.
STATE = {'RESET': e.IBV_QPS_RESET, 'INIT': e.IBV_QPS_INIT, 'RTR': e.IBV_QPS_RTR,
         'RTS': e.IBV_QPS_RTS, 'SQD': e.IBV_QPS_SQD, 'ERR': e.IBV_QPS_ERR}
PATH = ['INIT', 'RTR', 'RTS', 'SQD', 'RTS', 'ERR', 'RESET']


def to_state(d, qp, qp_type, name, prev):
    """modify_qp from prev to name, with the attributes the transition requires (SQD->RTS and
    the moves to SQD, ERR and RESET take the state alone)."""
    a = d.attr(qp.qp_num, qp_type)
    a.qp_state = STATE[name]
    qp.modify(a, qp_masks.required(qp_type, STATE[name], STATE.get(prev)))


def family_qp(d):
    kinds = {'RC': e.IBV_QPT_RC, 'UC': e.IBV_QPT_UC, 'UD': e.IBV_QPT_UD}
    for kname, kind in kinds.items():
        sweep(f'create_qp {kname}', lambda _, k=kind: d.qp(k), undo=lambda _, q: closing(q))
        path = PATH if kind == e.IBV_QPT_RC else ['INIT', 'RTR', 'RTS', 'ERR', 'RESET']
        for i, target in enumerate(path):
            def setup(k=kind, before=path[:i]):
                q = d.qp(k)
                for j, s in enumerate(before):
                    to_state(d, q, k, s, before[j - 1] if j else 'RESET')
                return q
            prev = path[i - 1] if i else 'RESET'
            sweep(f'modify_qp {kname} {prev}->{target}', lambda q, k=kind, t=target, f=prev: to_state(d, q, k, t, f),
                  setup=setup, undo=lambda q, _: closing(q))
        sweep(f'destroy_qp {kname}', lambda q: q.close(), setup=lambda k=kind: d.qp(k),
              undo=lambda q, _: closing(q))


def family_cq(d):
    sweep('create_cq', lambda _: CQ(d.ctx, 256, None, None, 0), undo=lambda _, c: closing(c))
    sweep('resize_cq', lambda c: c.resize(1024), setup=lambda: CQ(d.ctx, 16, None, None, 0),
          undo=lambda c, _: closing(c))
    sweep('destroy_cq', lambda c: c.close(), setup=lambda: CQ(d.ctx, 16, None, None, 0),
          undo=lambda c, _: closing(c))


def family_srq(d):
    def new():
        return SRQ(d.pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=2)))
    sweep('create_srq', lambda _: new(), undo=lambda _, s: closing(s))
    sweep('modify_srq limit', lambda s: s.modify(SrqAttr(srq_limit=16), e.IBV_SRQ_LIMIT), setup=new,
          undo=lambda s, _: closing(s))
    sweep('modify_srq max_wr', lambda s: s.modify(SrqAttr(max_wr=512), e.IBV_SRQ_MAX_WR), setup=new,
          undo=lambda s, _: closing(s))
    sweep('destroy_srq', lambda s: s.close(), setup=new, undo=lambda s, _: closing(s))


def family_mr(d):
    size = 64 << 10
    sweep('reg_mr user', lambda _: MR(d.pd, size, LW | RW | RR), undo=lambda _, m: closing(m))
    sweep('reg_mr ODP', lambda _: MR(d.pd, size, LW | RW | RR | e.IBV_ACCESS_ON_DEMAND),
          undo=lambda _, m: closing(m))

    def new():
        return MR(d.pd, size, LW | RW)

    def with_ptr():
        m = new()
        return m, ibv_mr_of(m)

    # Access only: both drivers refuse a change of translation (EOPNOTSUPP, rereg.sh).
    def re_access(st):
        err, _, _ = rereg(st[1], CHANGE_ACCESS, access=LW | RW | RR)
        if err:
            raise OSError(err, os.strerror(err))
    sweep('rereg_mr access', re_access, setup=with_ptr, undo=lambda st, _: closing(st[0]))
    sweep('dereg_mr', lambda m: m.close(), setup=new, undo=lambda m, _: closing(m))


def family_pd(d):
    sweep('alloc_pd', lambda _: PD(d.ctx), undo=lambda _, p: closing(p))
    sweep('dealloc_pd', lambda p: p.close(), setup=lambda: PD(d.ctx), undo=lambda p, _: closing(p))


def family_ctx(d):
    sweep('alloc_ucontext', lambda _: Context(name=d.name), undo=lambda _, c: closing(c))


def family_ah(d):
    sweep('create_ah', lambda _: AH(d.pd, attr=d.ah_attr()), undo=lambda _, a: closing(a))


class RcPair:
    """Two connected RC QPs of one device (loopback), an MR with MW_BIND access."""

    def __init__(self, d):
        self.d = d
        self.a, self.b = d.qp(), d.qp()
        for q, p in ((self.a, self.b), (self.b, self.a)):
            q.to_rts(d.attr(p.qp_num))
        self.mr = MR(d.pd, 4096, LW | RW | RR | MW_BIND)

    def close(self):
        closing(self.a, self.b, self.mr)


def family_mw(d):
    sweep('alloc_mw', lambda _: MW(d.pd, e.IBV_MW_TYPE_2), undo=lambda _, m: closing(m))

    def setup():
        return RcPair(d), MW(d.pd, e.IBV_MW_TYPE_2)

    def bind(st):
        p, mw = st
        wr = SendWR(wr_id=7, opcode=e.IBV_WR_BIND_MW, send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mw, MWBindInfo(p.mr, p.mr.buf, 4096, e.IBV_ACCESS_REMOTE_WRITE))
        p.a.post_send(wr)
        return d.poll()

    def undo(st, wc):
        if wc is None:
            d.poll(timeout=5)
        p, mw = st
        closing(mw)
        p.close()
    sweep('bind_mw', bind, setup=setup, undo=undo)


# ibv_attach_mcast / ibv_detach_mcast: pyverbs has no binding; called on the struct ibv_qp *
# found inside the QP object (its qp_num at offset 52, after six pointers and the handle).
libibverbs = ctypes.CDLL('libibverbs.so.1', use_errno=True)
for fn in (libibverbs.ibv_attach_mcast, libibverbs.ibv_detach_mcast):
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint16]


def ibv_qp_of(qp):
    raw = ctypes.string_at(id(qp), type(qp).__basicsize__)
    for off in range(16, len(raw) - 7, 8):
        p = int.from_bytes(raw[off:off + 8], 'little')
        if p < 0x10000 or p >= 1 << 47 or p % 8:
            continue
        try:
            b = os.pread(MEM, 64, p)
        except OSError:
            continue
        if len(b) == 64 and struct.unpack_from('<I', b, 52)[0] == qp.qp_num and \
                struct.unpack_from('<I', b, 60)[0] == e.IBV_QPT_UD:
            return p
    raise LookupError(f'struct ibv_qp * of {qp}')


MGID = bytes.fromhex('ff0e0000000000000000ffffe0010203')


def family_mcast(d):
    def setup():
        q = d.qp(e.IBV_QPT_UD)
        for s, prev in (('INIT', 'RESET'), ('RTR', 'INIT'), ('RTS', 'RTR')):
            to_state(d, q, e.IBV_QPT_UD, s, prev)
        return q

    def call(fn, q):
        if fn(ibv_qp_of(q), MGID, 0):
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    def detached(q, _):
        # A QP with a group attached cannot be destroyed (uverbs_free_qp: EBUSY): detached
        # first, EINVAL if the faulted call left it out of the group.
        libibverbs.ibv_detach_mcast(ibv_qp_of(q), MGID, 0)
        closing(q)

    sweep('attach_mcast', lambda q: call(libibverbs.ibv_attach_mcast, q), setup=setup, undo=detached)

    def attached():
        q = setup()
        call(libibverbs.ibv_attach_mcast, q)
        return q
    sweep('detach_mcast', lambda q: call(libibverbs.ibv_detach_mcast, q), setup=attached, undo=detached)


# --- module load (finit_module), module init included ----------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
SYS_FINIT_MODULE, SYS_DELETE_MODULE = 313, 176


def family_module(spec):
    path, _, params = spec.partition(':')
    name = os.path.basename(path).split('.')[0].replace('-', '_')

    def load(fd):
        if libc.syscall(SYS_FINIT_MODULE, fd, params.encode(), 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    def undo(fd, _):
        os.close(fd)
        if os.path.exists(f'/sys/module/{name}/initstate') and \
                libc.syscall(SYS_DELETE_MODULE, name.encode(), os.O_NONBLOCK) != 0:
            check(f'unload {name} after a faulted load', False, os.strerror(ctypes.get_errno()))

    sweep(f'load {name}{" " + params if params else ""}', load,
          setup=lambda: os.open(path, os.O_RDONLY), undo=undo)


def usable(d, family):
    """An RC SEND of 4 KiB between two fresh QPs, its data compared."""
    try:
        p = RcPair(d)
        src, dst = MR(d.pd, 4096, LW), MR(d.pd, 4096, LW)
        data = os.urandom(4096)
        src.write(data, 4096)
        p.b.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(dst.buf, 4096, dst.lkey)]))
        p.a.post_send(SendWR(wr_id=1, num_sge=1, sg=[SGE(src.buf, 4096, src.lkey)],
                             send_flags=e.IBV_SEND_SIGNALED))
        wcs = [d.poll(), d.poll()]
        ok = all(w is not None and w.status == e.IBV_WC_SUCCESS for w in wcs) and \
            dst.read(4096, 0) == data
        closing(src, dst)
        p.close()
        return check(f'after {family}: an RC SEND of 4 KiB arrives intact', ok,
                     [w and w.status for w in wcs])
    except Exception as ex:
        return check(f'after {family}: an RC SEND of 4 KiB arrives intact', False, repr(ex))


def main():
    global LIMIT
    args = sys.argv[1:]
    if '--limit' in args:
        i = args.index('--limit')
        LIMIT = int(args[i + 1])
        del args[i:i + 2]
    dev, gid_index, netdev, families = args[0], int(args[1]), args[2], args[3:]
    table = {'ctx': family_ctx, 'pd': family_pd, 'cq': family_cq, 'srq': family_srq,
             'qp': family_qp, 'mr': family_mr, 'mw': family_mw, 'ah': family_ah,
             'mcast': family_mcast}
    d = Dev(dev, gid_index) if any(f in table for f in families) else None
    for f in families:
        t0 = time.monotonic()
        if f == 'link':
            family_link(netdev)
        elif f.startswith('module='):
            family_module(f[len('module='):])
        else:
            table[f](d)
        print(f'     family {f}: {time.monotonic() - t0:.0f} s')
        if d:
            usable(d, f)
    print('fault positions: ' + ', '.join(f'{k} {v}' for k, v in positions.items()))
    if d:
        closing(d.cq, d.pd, d.ctx)
    return tally()


if __name__ == '__main__':
    sys.exit(main())
