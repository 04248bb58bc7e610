#!/bin/bash
# Guest test (--driver rs): the rdma-core python modules rxe-rs supports so far give the same
# ok/fail/error/skipped counts as the C driver (Documentation/baseline.md).
set -u
. "$(dirname "$0")/lib.sh"
expect "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
"$(dirname "$0")/pytests.sh" rxe0 test_device test_pd | tee /tmp/pytests.out
# module -> "ok fail error skipped" on the C driver, stock kernel.
declare -A c_baseline=([test_device]="14 0 0 9" [test_pd]="4 0 0 0")
for m in "${!c_baseline[@]}"; do
	got=$(awk -v m="$m" '$1==m{print $3, $5, $7, $9}' /tmp/pytests.out)
	expect "$m: ok/fail/error/skipped = ${c_baseline[$m]} as on the C driver (got $got)" test "$got" = "${c_baseline[$m]}"
done
summary
