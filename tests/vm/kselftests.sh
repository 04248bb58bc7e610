#!/bin/bash
# Guest test: the C driver's kernel selftests (tools/testing/selftests/rdma/rxe_*.sh) against
# the loaded driver. With --driver rs the only change is the module name they load
# (rdma_rxe -> rdma_rxe_rs).   kselftests.sh TEST_NAME...   (e.g. rxe_ipv6)
set -u
. "$(dirname "$0")/lib.sh"
work=/tmp/kselftest
rm -rf "$work"; cp -a /opt/kselftest "$work"
if [ "$DRIVER" = rs ]; then sed -i 's/\brdma_rxe\b/rdma_rxe_rs/g' "$work"/rdma/rxe_*.sh; fi
for t in "$@"; do
	modprobe -q tun # a real system autoloads it through the /dev/net/tun static node
	timeout "$([ "$VARIANT" = debug ] && echo 900 || echo 180)" bash "$work/rdma/$t.sh" >"/tmp/$t.log" 2>&1
	rc=$?
	expect "$t (exit $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || tail -n 15 "/tmp/$t.log"
	# The scripts unload the driver when done; the next one loads it again.
done
summary
