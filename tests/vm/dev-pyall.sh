#!/bin/bash
# Development: rdma-core python modules ($@, or all) on rxe0 with the tracebacks of failures.
rdma link add rxe0 type rxe netdev eth0
/src/rxe-rs/tests/vm/pytests.sh rxe0 "$@" 2>&1
for m in "$@"; do
	awk '/^(ERROR|FAIL):/{p=1} p{print} /^-{20,}$/{if(p>0)p++} p>2{p=0}' /tmp/pytest-$m.log | grep -avE "^\s*$" | head -60
done
rdma link del rxe0
