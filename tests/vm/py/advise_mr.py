# SPDX-License-Identifier: GPL-2.0
"""
The kernel's advise_mr (prefetch of on-demand paging MRs), driven from user space (run by
tests/vm/odp.sh, either driver):  python3 advise_mr.py DEV

librxe (rdma-core 56) has no advise_mr provider op, so ibv_advise_mr() answers EOPNOTSUPP in
libibverbs and the python suite's prefetch tests skip. This calls libibverbs' private
ibv_cmd_advise_mr() (IBVERBS_PRIVATE_*), which issues the uverbs ADVISE_MR method itself:

  int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
                        struct ibv_sge *sg_list, uint32_t num_sge);

The struct ibv_pd * is found as rereg_mr.py finds it (ibv_mr.pd of an MR in the PD). Checked:
the three advices, synchronous (IBV_ADVISE_MR_FLAG_FLUSH) and queued, return 0 on an ODP MR;
an unknown lkey or an MR of another PD is EINVAL; a synchronous prefetch past the MR's end is
EFAULT (the fault's answer, as C), a queued one 0 (best effort). The C driver gives the same.
"""
import ctypes
import errno
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD

from guestcheck import DRIVER, check, tally
from rereg_mr import errname, ibv_mr_of

PAGE = 4096
NPAGES = 8
PREFETCH, PREFETCH_WRITE, PREFETCH_NO_FAULT = 0, 1, 2
FLUSH = 1
ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_ON_DEMAND


class IbvSge(ctypes.Structure):
    _fields_ = [('addr', ctypes.c_uint64), ('length', ctypes.c_uint32), ('lkey', ctypes.c_uint32)]


libibverbs = ctypes.CDLL('libibverbs.so.1', use_errno=True)
cmd_advise = libibverbs.ibv_cmd_advise_mr
cmd_advise.restype = ctypes.c_int
cmd_advise.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                       ctypes.c_uint32]


def advise(pd, advice, flags, ranges):
    """ibv_cmd_advise_mr on struct ibv_pd * pd for (addr, length, lkey) ranges: 0 or an errno."""
    sges = (IbvSge * len(ranges))(*[IbvSge(a, n, k) for a, n, k in ranges])
    ctypes.set_errno(0)
    ret = cmd_advise(pd, advice, flags, sges, len(ranges))
    if ret < 0:
        ret = ctypes.get_errno()
    return ret


def main():
    dev = sys.argv[1]
    print(f'driver: {DRIVER}')
    ctx = Context(name=dev)
    pd = PD(ctx)
    mr = MR(pd, NPAGES * PAGE, ACCESS)
    pd_ptr = ibv_mr_of(mr).pd
    whole = [(mr.buf, NPAGES * PAGE, mr.lkey)]
    two = [(mr.buf, PAGE, mr.lkey), (mr.buf + 4 * PAGE, 2 * PAGE, mr.lkey)]
    for name, advice in (('PREFETCH', PREFETCH), ('PREFETCH_WRITE', PREFETCH_WRITE),
                         ('PREFETCH_NO_FAULT', PREFETCH_NO_FAULT)):
        for how, flags in (('synchronous', FLUSH), ('queued', 0)):
            ret = advise(pd_ptr, advice, flags, whole)
            check(f'{name}, {how}, the whole ODP MR: 0', ret == 0, errname(ret))
    ret = advise(pd_ptr, PREFETCH_WRITE, FLUSH, two)
    check('PREFETCH_WRITE, synchronous, two ranges: 0', ret == 0, errname(ret))
    ret = advise(pd_ptr, PREFETCH, FLUSH, [(mr.buf, PAGE, mr.lkey ^ 0x80)])
    check('an lkey that names no MR: EINVAL', ret == errno.EINVAL, errname(ret))
    past = [(mr.buf + (NPAGES - 1) * PAGE, 2 * PAGE, mr.lkey)]
    ret = advise(pd_ptr, PREFETCH, FLUSH, past)
    check('synchronous, past the MR\'s end: EFAULT', ret == errno.EFAULT, errname(ret))
    ret = advise(pd_ptr, PREFETCH, 0, past)
    check('queued, past the MR\'s end: 0 (best effort)', ret == 0, errname(ret))
    other = PD(ctx)
    other_mr = MR(other, PAGE, e.IBV_ACCESS_LOCAL_WRITE)
    ret = advise(pd_ptr, PREFETCH, FLUSH, [(other_mr.buf, PAGE, other_mr.lkey)])
    check('an MR of another PD: EINVAL', ret == errno.EINVAL, errname(ret))
    for o in (other_mr, other, mr, pd, ctx):
        o.close()
    return tally()


if __name__ == '__main__':
    sys.exit(main())
