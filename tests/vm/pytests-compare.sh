#!/bin/bash
# Guest test (--driver none): rdma-core's whole python suite on the C rdma_rxe, then on rxe-rs, in
# the same VM. Every test that passes on C must pass on rxe-rs, except those listed in
# tests/vm/pytests-known-gaps.txt (features rxe-rs does not have yet, each with its reason). The
# per-module counts of both drivers are printed side by side.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
run() { # DRIVER MODULE: the suite on that driver; results in /tmp/py-DRIVER.txt
	modprobe "$2" && rdma link add rxe0 type rxe netdev eth0 || return 1
	"$here/pytests.sh" rxe0 >"/tmp/py-$1.out" 2>&1
	cp /tmp/pytests-results.txt "/tmp/py-$1.txt"
	rdma link del rxe0; modprobe -r "$2"
}
expect "suite on the C driver" run c rdma_rxe
expect "suite on rxe-rs" run rs rdma_rxe_rs
echo "--- C driver";  grep -aE '^test_|TOTAL|process|no result read' /tmp/py-c.out
echo "--- rxe-rs";    grep -aE '^test_|TOTAL|process|no result read' /tmp/py-rs.out
gaps=$(grep -v '^#' "$here/pytests-known-gaps.txt" | awk '{print $1}')
missing=0
while read -r id res; do
	[ "$res" = ok ] || continue
	rs=$(awk -v id="$id" '$1 == id {print $2}' /tmp/py-rs.txt)
	[ "$rs" = ok ] && continue
	if grep -qxF "$id" <<<"$gaps"; then echo "known gap: $id (rs: ${rs:-not run})"; continue; fi
	echo "REGRESSION: $id passes on C, rs: ${rs:-not run}"; missing=$((missing + 1))
done </tmp/py-c.txt
check "every test passing on C passes on rxe-rs (but the known gaps)" test "$missing" = 0
# The list stays honest: a gap that passes on rxe-rs now must leave it.
stale=0
for id in $gaps; do
	[ "$(awk -v id="$id" '$1 == id {print $2}' /tmp/py-rs.txt)" = ok ] || continue
	echo "STALE GAP: $id passes on rxe-rs: remove it from pytests-known-gaps.txt"; stale=$((stale + 1))
done
check "no known gap passes on rxe-rs ($stale stale)" test "$stale" = 0
c_ok=$(awk '$2 == "ok"' /tmp/py-c.txt | wc -l); rs_ok=$(awk '$2 == "ok"' /tmp/py-rs.txt | wc -l)
echo "passing tests: C $c_ok, rxe-rs $rs_ok"
check "rxe-rs ran the suite (passing tests: $rs_ok)" test "$rs_ok" -gt 50
tally
