#!/bin/bash
# Guest test (--driver rs): the rdma-core python modules rxe-rs supports so far give the same
# ok/fail/error/skipped counts as the C driver (Documentation/baseline.md).
set -u
. "$(dirname "$0")/lib.sh"
expect "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
"$(dirname "$0")/pytests.sh" rxe0 test_device test_pd test_cq test_addr test_qp | tee /tmp/pytests.out
# module -> "ok fail error skipped": the C driver's counts. test_cq's resize test ERRORs on both:
# on the C driver a known flake, on rxe-rs because it goes on to post_send (no data path yet).
declare -A expected=([test_device]="14 0 0 9" [test_pd]="4 0 0 0" [test_cq]="3 0 1 0" [test_addr]="3 0 0 0" [test_qp]="21 0 0 5")
for m in "${!expected[@]}"; do
	got=$(awk -v m="$m" '$1==m{print $3, $5, $7, $9}' /tmp/pytests.out)
	expect "$m: ok/fail/error/skipped = ${expected[$m]} (got $got)" test "$got" = "${expected[$m]}"
done
summary
