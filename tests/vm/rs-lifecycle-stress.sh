#!/bin/bash
# Guest test (--driver rs, meant for --debug): repeated create/destroy of every object rxe-rs has
# so far, and repeated link add/del and rmmod/insmod, so that kmemleak, KASAN and lockdep (which
# vm-run checks afterwards) see every path many times.   rs-lifecycle-stress.sh [CYCLES] [LINKS]
set -u
. "$(dirname "$0")/lib.sh"
cycles=${1:-1000} links=${2:-20}
expect "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
expect "$cycles x (open device; PD, 3 CQs, MR, MW, RC/UC/UD QPs to INIT; destroy all; close)" python3 - "$cycles" <<'PY'
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR, MW
from pyverbs.qp import QP, QPInitAttr, QPCap, QPAttr
import pyverbs.enums as e
n = int(sys.argv[1])

def objects(ctx):
    pd = PD(ctx)
    cqs = [CQ(ctx, c) for c in (1, 100, 4000)]
    cqs[0].req_notify()
    mr = MR(pd, 8192, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
    mw = MW(pd, e.IBV_MW_TYPE_2)
    qps = []
    for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD):
        cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=2, max_recv_sge=2)
        qp = QP(pd, QPInitAttr(qp_type=qpt, scq=cqs[1], rcq=cqs[2], cap=cap))
        attr = QPAttr(port_num=1)
        attr.qkey = 0x1234
        qp.to_init(attr)
        qps.append(qp)
    return pd, cqs, mr, mw, qps

for i in range(n):
    with Context(name='rxe0') as ctx:
        pd, cqs, mr, mw, qps = objects(ctx)
        for o in qps + [mw, mr] + cqs + [pd]:
            o.close()
# Objects left open when the context closes are cleaned up by ib_core + the driver.
ctx = Context(name='rxe0')
leftover = [objects(ctx) for _ in range(8)]
ctx.close()
print("ok", n)
PY
expect "rdma link del rxe0" rdma link del rxe0
ok=0
for i in $(seq "$links"); do
	rdma link add rxe0 type rxe netdev eth0 && ibv_devinfo -d rxe0 >/dev/null && rdma link del rxe0 &&
		rmmod rdma_rxe_rs && modprobe rdma_rxe_rs && ok=$((ok + 1))
done
expect "$links x (link add, devinfo, link del, rmmod, modprobe)" test "$ok" = "$links"
summary
