#!/bin/bash
# Guest test (--driver rs, meant for --debug): repeated create/destroy of every object rxe-rs has
# so far, and repeated link add/del and rmmod/insmod, so that kmemleak, KASAN and lockdep (which
# vm-run checks afterwards) see every path many times.   rs-lifecycle-stress.sh [CYCLES] [LINKS]
set -u
. "$(dirname "$0")/lib.sh"
cycles=${1:-1000} links=${2:-20}
expect "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
expect "$cycles x (open device; PD, 3 CQs, MR, MW, SRQ, RC/UC/UD QPs to INIT; destroy all; close)" python3 - "$cycles" <<'PY'
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR, MW
from pyverbs.qp import QP, QPInitAttr, QPCap, QPAttr
from pyverbs.srq import SRQ, SrqInitAttr, SrqAttr
import pyverbs.enums as e
n = int(sys.argv[1])

def objects(ctx):
    pd = PD(ctx)
    cqs = [CQ(ctx, c) for c in (1, 100, 4000)]
    cqs[0].req_notify()
    cqs[1].resize(200)
    mr = MR(pd, 8192, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
    mw = MW(pd, e.IBV_MW_TYPE_2)
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=2)))
    srq.modify(SrqAttr(srq_limit=10), e.IBV_SRQ_LIMIT)
    assert srq.query().srq_limit == 10
    qps = [QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cqs[1], rcq=cqs[2], srq=srq,
                             cap=QPCap(max_send_wr=16, max_recv_wr=0)))]
    for qpt in (e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD):
        cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=2, max_recv_sge=2)
        qp = QP(pd, QPInitAttr(qp_type=qpt, scq=cqs[1], rcq=cqs[2], cap=cap))
        attr = QPAttr(port_num=1)
        attr.qkey = 0x1234
        qp.to_init(attr)
        qps.append(qp)
    return pd, cqs, mr, mw, srq, qps

for i in range(n):
    with Context(name='rxe0') as ctx:
        pd, cqs, mr, mw, srq, qps = objects(ctx)
        for o in qps + [srq, mw, mr] + cqs + [pd]:
            o.close()
# Objects left open when the context closes are cleaned up by ib_core + the driver.
ctx = Context(name='rxe0')
leftover = [objects(ctx) for _ in range(8)]
ctx.close()
print("ok", n)
PY
# Processes killed in the middle of creating and destroying objects: the kernel must clean up
# after them (ib_uverbs closes their contexts, the driver frees what they held).
cat >/tmp/churn.py <<'PY'
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.qp import QP, QPInitAttr, QPCap
import pyverbs.enums as e
ctx = Context(name='rxe0')
while True:
    pd = PD(ctx)
    cq = CQ(ctx, 256)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(max_send_wr=16, max_recv_wr=16)))
    if qp.qp_num % 2:
        qp.close(); mr.close(); cq.close(); pd.close()
PY
res_left() { rdma resource show rxe0 | tr ' ' '\n' | awk 'prev ~ /^(pd|cq|qp|mr|ctx)$/ {s += $1} {prev=$0} END {print s+0}'; }
# The kernel's own objects (the MAD layer's PD, CQ and GSI QP) stay; count only what is above them.
before=$(res_left)
for _ in 1 2 3 4 5; do
	python3 /tmp/churn.py &
	sleep 2
	kill -9 $! 2>/dev/null
	wait $! 2>/dev/null
done
expect "5 processes killed mid-churn left no objects behind ($(rdma resource show rxe0 | tr -s ' '); $before before)" test "$(res_left)" = "$before"
expect "rdma link del rxe0" rdma link del rxe0
ok=0
for i in $(seq "$links"); do
	rdma link add rxe0 type rxe netdev eth0 && ibv_devinfo -d rxe0 >/dev/null && rdma link del rxe0 &&
		rmmod rdma_rxe_rs && modprobe rdma_rxe_rs && ok=$((ok + 1))
done
expect "$links x (link add, devinfo, link del, rmmod, modprobe)" test "$ok" = "$links"
summary
