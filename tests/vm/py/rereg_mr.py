# SPDX-License-Identifier: GPL-2.0
"""
The kernel's rereg_user_mr, driven from user space (run by tests/vm/rereg.sh, either driver):
  python3 rereg_mr.py DEV GID_INDEX

librxe (rdma-core 56) has no rereg_mr provider op, so ibv_rereg_mr() answers EOPNOTSUPP in
libibverbs and the python suite's test_mr_rereg_* skip. This calls libibverbs' private
ibv_cmd_rereg_mr() (IBVERBS_PRIVATE_*, the helper providers use), which issues the uverbs
REREG_MR command itself:

  int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
                       uint64_t hca_va, int access, struct ibv_pd *pd,
                       struct ibv_rereg_mr *cmd, size_t cmd_sz,
                       struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz);

It returns 0 or an errno, and stores the keys of the response in vmr->ibv_mr. librxe's MRs are
plain struct verbs_mr (struct ibv_mr first); the function reads vmr->ibv_mr.handle and .context
and, with IBV_REREG_MR_CHANGE_PD, pd->handle. struct ibv_rereg_mr is the 8-byte write header
and struct ib_uverbs_rereg_mr (48 bytes); the response is lkey, rkey (8 bytes).

pyverbs does not hand out its C pointers: the struct ibv_mr * of an MR object is found among
the object's fields as the one pointer whose ibv_mr has the MR's address, length, lkey and rkey
(memory read through /proc/self/mem, so a non-pointer field cannot fault); PDs' pointers come
from MRs registered in them (ibv_mr.pd).

Every check prints "ok   ..." or "FAIL ...". Traffic runs over fresh loopback RC QP pairs (a
requester and a responder, each on a chosen PD), one work request each: the status of its
completion is what is checked.
"""
import ctypes
import errno
import os
import struct
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

from guestcheck import DRIVER, check, tally, wc_name

# enum ibv_rereg_mr_flags
CHANGE_TRANSLATION, CHANGE_PD, CHANGE_ACCESS = 1, 2, 4
LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
RR = e.IBV_ACCESS_REMOTE_READ
ZERO_BASED = 1 << 5  # IB_ACCESS_ZERO_BASED: valid for ib_core, not in RXE_ACCESS_SUPPORTED_MR
SIZE = 4096
BIG = 16 << 20
CMD_SZ, RESP_SZ = 8 + 48, 8


# --- raw pointers behind pyverbs objects, and ibv_cmd_rereg_mr ------------------------------

MEM = os.open('/proc/self/mem', os.O_RDONLY)


class IbvMr(ctypes.Structure):
    _fields_ = [('context', ctypes.c_void_p), ('pd', ctypes.c_void_p),
                ('addr', ctypes.c_void_p), ('length', ctypes.c_size_t),
                ('handle', ctypes.c_uint32), ('lkey', ctypes.c_uint32),
                ('rkey', ctypes.c_uint32)]


class IbvPd(ctypes.Structure):
    _fields_ = [('context', ctypes.c_void_p), ('handle', ctypes.c_uint32)]


def ibv_mr_of(mr):
    """The struct ibv_mr * inside pyverbs MR object mr."""
    raw = ctypes.string_at(id(mr), type(mr).__basicsize__)
    found = []
    for off in range(16, len(raw) - 7, 8):
        p = int.from_bytes(raw[off:off + 8], 'little')
        if p < 0x10000 or p >= 1 << 47 or p % 8:
            continue
        try:
            b = os.pread(MEM, ctypes.sizeof(IbvMr), p)
        except OSError:
            continue
        if len(b) < ctypes.sizeof(IbvMr):
            continue
        _, _, addr, length, _, lkey, rkey = struct.unpack_from('<QQQQIII', b)
        if (addr, length, lkey, rkey) == (mr.buf, mr.length, mr.lkey, mr.rkey):
            found.append(p)
    assert len(found) == 1, f'struct ibv_mr * of {mr}: {found}'
    return IbvMr.from_address(found[0])


libibverbs = ctypes.CDLL('libibverbs.so.1', use_errno=True)
cmd_rereg = libibverbs.ibv_cmd_rereg_mr
cmd_rereg.restype = ctypes.c_int
cmd_rereg.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                      ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p,
                      ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]


def rereg(vmr, flags, access=0, pd=None, addr=None, length=None, hca_va=None):
    """ibv_cmd_rereg_mr on the MR whose struct ibv_mr is vmr: (errno or 0, resp lkey, rkey).
    pd is a struct ibv_pd * (an int), needed with CHANGE_PD."""
    addr = vmr.addr if addr is None else addr
    length = vmr.length if length is None else length
    hca_va = addr if hca_va is None else hca_va
    cmd = ctypes.create_string_buffer(CMD_SZ)
    resp = ctypes.create_string_buffer(RESP_SZ)
    ctypes.set_errno(0)
    ret = cmd_rereg(ctypes.addressof(vmr), flags, addr, length, hca_va, access, pd,
                    cmd, CMD_SZ, resp, RESP_SZ)
    if ret < 0:
        ret = ctypes.get_errno()
    lkey, rkey = struct.unpack('<II', resp.raw)
    return ret, lkey, rkey


def errname(n):
    if n == errno.EOPNOTSUPP:
        return 'EOPNOTSUPP'
    return errno.errorcode.get(n, str(n)) if n else '0'


# --- loopback RC traffic ------------------------------------------------------------------------

class Env:
    def __init__(self, dev, gid_index):
        self.ctx = Context(name=dev)
        self.gid_index = gid_index
        self.gid = self.ctx.query_gid(1, gid_index)
        self.lid = self.ctx.query_port(1).lid
        self.psn = 0x100

    def qp(self, pd):
        cq = CQ(self.ctx, 8, None, None, 0)
        cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
        return qp, cq

    def connect(self, a, b):
        for qp, peer in ((a, b), (b, a)):
            attr = QPAttr(port_num=1)
            attr.qp_access_flags = LW | RW | RR
            attr.path_mtu = e.IBV_MTU_1024
            attr.dest_qp_num = peer.qp_num
            attr.rq_psn = attr.sq_psn = self.psn
            attr.max_dest_rd_atomic = attr.max_rd_atomic = 1
            attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 14, 7, 7
            gr = GlobalRoute(dgid=self.gid, sgid_index=self.gid_index)
            attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr, dlid=self.lid)
            qp.to_rts(attr)

    def rdma(self, opcode, req_pd, local, resp_pd, remote, length=64, posted=None):
        """One RDMA WRITE (local -> remote) or READ (remote -> local) from a QP on req_pd to a
        QP on resp_pd, with the local SGE in MR local and the rkey of MR remote: the
        requester's completion status, and whether the data arrived. posted() is called right
        after the post."""
        req, req_cq = self.qp(req_pd)
        resp, resp_cq = self.qp(resp_pd)
        try:
            self.connect(req, resp)
            self.psn += 0x1000
            src, dst = (local, remote) if opcode == e.IBV_WR_RDMA_WRITE else (remote, local)
            pattern = os.urandom(length)
            src.write(pattern, length)
            dst.write(bytes(length), length)
            wr = SendWR(wr_id=1, opcode=opcode, num_sge=1,
                        sg=[SGE(local.buf, length, local.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED)
            wr.set_wr_rdma(remote.rkey, remote.buf)
            req.post_send(wr)
            if posted:
                posted()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                n, wcs = req_cq.poll()
                if n:
                    status = wcs[0].status
                    return status, status == e.IBV_WC_SUCCESS and dst.read(length, 0) == pattern
                time.sleep(0.001)
            return None, False
        finally:
            resp.close()
            req.close()
            resp_cq.close()
            req_cq.close()


def expect_wc(env, what, want, *args, **kw):
    """The work request completes with status want (SUCCESS: and its data arrived)."""
    status, data = env.rdma(*args, **kw)
    ok = status == want and (want != e.IBV_WC_SUCCESS or data)
    detail = f'status {wc_name(status) if status is not None else "none (timeout)"}' + \
        ('' if status != e.IBV_WC_SUCCESS or data else ', data did not arrive')
    return check(f'{what}: {wc_name(want)}', ok, detail)


def main():
    dev, gid_index = sys.argv[1], int(sys.argv[2])
    print(f'driver: {DRIVER}')
    env = Env(dev, gid_index)
    W, R = e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ
    OK, RACC = e.IBV_WC_SUCCESS, e.IBV_WC_REM_ACCESS_ERR
    pd_a, pd_b = PD(env.ctx), PD(env.ctx)
    # Peers of the MR under test, one in each PD: local buffers and remote targets.
    peer_a, peer_b = MR(pd_a, SIZE, LW | RW | RR), MR(pd_b, SIZE, LW | RW | RR)
    mr = MR(pd_a, SIZE, LW | RW | RR)
    vmr = ibv_mr_of(mr)
    pa, pb = ibv_mr_of(peer_a).pd, ibv_mr_of(peer_b).pd
    check('struct ibv_mr found, in PD A', vmr.pd == pa and vmr.handle == mr.handle,
          f'pd {vmr.pd:#x} (A {pa:#x}), handle {vmr.handle} (pyverbs {mr.handle})')
    keys = (mr.lkey, mr.rkey)

    def same_keys(what, r):
        ret, lkey, rkey = r
        check(f'{what}: returns 0', ret == 0, errname(ret))
        check(f'{what}: lkey/rkey kept (C keeps them)', (lkey, rkey) == keys
              and (vmr.lkey, vmr.rkey) == keys,
              f'resp {lkey:#x}/{rkey:#x}, ibv_mr {vmr.lkey:#x}/{vmr.rkey:#x}, '
              f'were {keys[0]:#x}/{keys[1]:#x}')

    def fails(what, r, want):
        check(f'{what}: {errname(want)}', r[0] == want, f'got {errname(r[0])}')

    print('--- CHANGE_ACCESS')
    expect_wc(env, 'RDMA WRITE to the MR before any rereg', OK, W, pd_a, peer_a, pd_a, mr)
    same_keys('rereg access LOCAL_WRITE|REMOTE_READ (REMOTE_WRITE removed)',
              rereg(vmr, CHANGE_ACCESS, LW | RR))
    expect_wc(env, '  RDMA WRITE to it now', RACC, W, pd_a, peer_a, pd_a, mr)
    expect_wc(env, '  RDMA READ from it still', OK, R, pd_a, peer_a, pd_a, mr)
    same_keys('rereg access LOCAL_WRITE only', rereg(vmr, CHANGE_ACCESS, LW))
    expect_wc(env, '  RDMA READ from it now', RACC, R, pd_a, peer_a, pd_a, mr)
    expect_wc(env, '  local use (WRITE from it as the source) still', OK, W, pd_a, mr, pd_a, peer_a)
    same_keys('rereg access LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ (added back)',
              rereg(vmr, CHANGE_ACCESS, LW | RW | RR))
    expect_wc(env, '  RDMA WRITE to it again', OK, W, pd_a, peer_a, pd_a, mr)

    # Rights removed under a message: C looks the rkey up for every packet of a WRITE, so the
    # packets after the rereg are refused and the WRITE completes REM_ACCESS_ERR. A message of
    # 16 MiB (16,384 packets) is still under way when the post returns (a doorbell's inline
    # run lasts a tick at most); a rereg that lands after its end anyway is tried again.
    big_src, big_dst = MR(pd_a, BIG, LW | RW | RR), MR(pd_a, BIG, LW | RW | RR)
    vbig = ibv_mr_of(big_dst)
    results = []
    for _ in range(3):
        status, _ = env.rdma(W, pd_a, big_src, pd_a, big_dst, BIG,
                             posted=lambda: results.append(rereg(vbig, CHANGE_ACCESS, LW | RR)[0]))
        rereg(vbig, CHANGE_ACCESS, LW | RW | RR)
        if status != OK:
            break
    check('rereg removing REMOTE_WRITE under a 16 MiB RDMA WRITE to the MR: the WRITE '
          'completes IBV_WC_REM_ACCESS_ERR', status == RACC and results[-1] == 0,
          f'status {wc_name(status) if status is not None else "none (timeout)"}, '
          f'rereg {errname(results[-1])}, attempts {len(results)}')
    big_src.close()
    big_dst.close()

    print('--- CHANGE_PD')
    same_keys('rereg PD to its own PD (ib_uverbs drops the flag: a no-op)',
              rereg(vmr, CHANGE_PD, pd=pa))
    expect_wc(env, '  RDMA WRITE to it from PD A', OK, W, pd_a, peer_a, pd_a, mr)
    same_keys('rereg PD A -> B', rereg(vmr, CHANGE_PD, pd=pb))
    expect_wc(env, '  RDMA WRITE to it, responder QP on PD A (old)', RACC, W, pd_a, peer_a, pd_a, mr)
    expect_wc(env, '  RDMA WRITE to it, responder QP on PD B (new)', OK, W, pd_b, peer_b, pd_b, mr)
    # A bad lkey at the requester: IBV_WC_LOC_PROT_ERR. The C driver reports LOC_QP_OP_ERR
    # (copy_data's -EINVAL), or the WR is overtaken by the flush of the QP it errors and
    # completes WR_FLUSH_ERR (Documentation/data-path.md): any error there.
    status, _ = env.rdma(W, pd_a, mr, pd_a, peer_a)
    if DRIVER == 'rs':
        check('  WRITE from it, requester QP on PD A (old): IBV_WC_LOC_PROT_ERR',
              status == e.IBV_WC_LOC_PROT_ERR, wc_name(status))
    else:
        check(f'  WRITE from it, requester QP on PD A (old): an error ({wc_name(status)})',
              status not in (None, OK), wc_name(status))
    expect_wc(env, '  WRITE from it, requester QP on PD B (new)', OK, W, pd_b, mr, pd_b, peer_b)
    same_keys('rereg PD B -> A and access LOCAL_WRITE|REMOTE_READ together',
              rereg(vmr, CHANGE_PD | CHANGE_ACCESS, LW | RR, pd=pa))
    expect_wc(env, '  RDMA READ from it, responder QP on PD A', OK, R, pd_a, peer_a, pd_a, mr)
    expect_wc(env, '  RDMA READ from it, responder QP on PD B', RACC, R, pd_b, peer_b, pd_b, mr)
    expect_wc(env, '  RDMA WRITE to it, responder QP on PD A', RACC, W, pd_a, peer_a, pd_a, mr)
    same_keys('rereg access back to LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ',
              rereg(vmr, CHANGE_ACCESS, LW | RW | RR))

    print('--- CHANGE_TRANSLATION')
    fails('rereg translation (same range)', rereg(vmr, CHANGE_TRANSLATION), errno.EOPNOTSUPP)
    expect_wc(env, '  RDMA WRITE to it still', OK, W, pd_a, peer_a, pd_a, mr)
    fails('rereg translation + access LOCAL_WRITE', rereg(vmr, CHANGE_TRANSLATION | CHANGE_ACCESS, LW),
          errno.EOPNOTSUPP)
    expect_wc(env, '  access unchanged: RDMA WRITE to it still', OK, W, pd_a, peer_a, pd_a, mr)
    fails('rereg translation + PD B', rereg(vmr, CHANGE_TRANSLATION | CHANGE_PD, pd=pb),
          errno.EOPNOTSUPP)
    expect_wc(env, '  PD unchanged: RDMA WRITE to it from PD A still', OK, W, pd_a, peer_a, pd_a, mr)
    fails('rereg translation, start and hca_va in different page offsets (ib_uverbs)',
          rereg(vmr, CHANGE_TRANSLATION, hca_va=vmr.addr + 8), errno.EINVAL)

    print('--- bad arguments')
    fails('rereg flags 0 (ib_uverbs)', rereg(vmr, 0), errno.EINVAL)
    fails('rereg unknown flag 1<<3 (ib_uverbs: outside IB_MR_REREG_SUPPORTED)', rereg(vmr, 8),
          errno.EOPNOTSUPP)
    fails('rereg access REMOTE_WRITE without LOCAL_WRITE (ib_check_mr_access)',
          rereg(vmr, CHANGE_ACCESS, RW), errno.EINVAL)
    fails('rereg access bit 1<<12 (outside IB_ACCESS_SUPPORTED)',
          rereg(vmr, CHANGE_ACCESS, LW | (1 << 12)), errno.EINVAL)
    fails('rereg access LOCAL_WRITE|ZERO_BASED (driver: outside RXE_ACCESS_SUPPORTED_MR)',
          rereg(vmr, CHANGE_ACCESS, LW | ZERO_BASED), errno.EOPNOTSUPP)
    bogus = IbvPd(context=vmr.context, handle=0x7ffffff0)
    fails('rereg PD with a handle that is no PD (ib_uverbs: no such object)',
          rereg(vmr, CHANGE_PD, pd=ctypes.addressof(bogus)), errno.ENOENT)
    expect_wc(env, '  MR unchanged after all these: RDMA WRITE to it', OK, W, pd_a, peer_a, pd_a, mr)
    # Pinned read-only (no write right at registration): write rights cannot be added in place
    # (ib_umem_check_rereg, called by the driver).
    ro = MR(pd_a, SIZE, RR)
    vro = ibv_mr_of(ro)
    fails('rereg access LOCAL_WRITE on an MR registered read-only (ib_umem_check_rereg)',
          rereg(vro, CHANGE_ACCESS, LW | RR), errno.EACCES)
    r = rereg(vro, CHANGE_ACCESS, 0)
    check('  rereg it to access 0 (no write right): returns 0', r[0] == 0, errname(r[0]))
    expect_wc(env, '  RDMA READ from it now', RACC, R, pd_a, peer_a, pd_a, ro)

    # pyverbs tracks MRs by the PD they were registered in: MRs first.
    for o in (ro, mr, peer_a, peer_b, pd_a, pd_b):
        o.close()
    env.ctx.close()
    return tally()


if __name__ == '__main__':
    sys.exit(main())
