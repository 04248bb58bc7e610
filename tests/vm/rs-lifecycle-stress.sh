#!/bin/bash
# Guest test (--driver rs, meant for --debug): repeated create/destroy of every object rxe-rs has
# so far, and repeated link add/del and rmmod/insmod, so that kmemleak, KASAN and lockdep (which
# vm-run checks afterwards) see every path many times.   rs-lifecycle-stress.sh [CYCLES] [LINKS]
set -u
. "$(dirname "$0")/lib.sh"
cycles=${1:-1000} links=${2:-20}
expect "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
expect "$cycles x (open device, 4 PDs, 3 CQs (mmaped by librxe), destroy all, close)" python3 - "$cycles" <<'PY'
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.cq import CQ
n = int(sys.argv[1])
for i in range(n):
    with Context(name='rxe0') as ctx:
        pds = [PD(ctx) for _ in range(4)]
        cqs = [CQ(ctx, c) for c in (1, 100, 4000)]
        for cq in cqs:
            cq.req_notify()
            cq.close()
        for pd in pds:
            pd.close()
# Objects left open when the context closes are cleaned up by ib_core + the driver.
ctx = Context(name='rxe0')
leftover = [PD(ctx) for _ in range(16)] + [CQ(ctx, 1000) for _ in range(16)]
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
