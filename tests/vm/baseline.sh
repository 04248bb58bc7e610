#!/bin/bash
# Guest (--driver c or rs): the measurements of Documentation/baseline.md, printed as one
# report: device attributes, ibv_rc_pingpong (loopback and across two namespaces), the
# rdma-core python suite, the kernel's rxe selftests, and perftest.
set -u
here=$(dirname "$0")
. "$here/lib.sh"
section() { echo; echo "=== $* ==="; }

section "rdma link add rxe0 type rxe netdev eth0"
rdma link add rxe0 type rxe netdev eth0 && rdma link show
section "ibv_devinfo -v -d rxe0"
ibv_devinfo -v -d rxe0

section "ibv_rc_pingpong -c, 200 x 4 KiB, loopback on eth0"
ibv_rc_pingpong -d rxe0 -g 1 -n 200 -s 4096 -c >/tmp/pp-srv.log 2>&1 &
sleep 1
ibv_rc_pingpong -d rxe0 -g 1 -n 200 -s 4096 -c localhost; echo "client exit $?"
wait $!; echo "server exit $?"

section "ibv_rc_pingpong -c, 200 x 4 KiB, between two namespaces on a veth"
veth_netns ns1 veth0 veth1 10.10.0
rdma link add rxev0 type rxe netdev veth0
ip netns exec ns1 rdma link add rxev1 type rxe netdev veth1
sleep 1
ip netns exec ns1 ibv_rc_pingpong -d rxev1 -g 1 -n 200 -s 4096 -c >/tmp/pp-ns.log 2>&1 &
sleep 1
ibv_rc_pingpong -d rxev0 -g 1 -n 200 -s 4096 -c 10.10.0.2; echo "client exit $?"
wait $!; echo "server exit $?"
rdma link del rxev0; ip netns exec ns1 rdma link del rxev1
ip link del veth0; ip netns del ns1

section "perftest over rxe0 loopback (server and client in this VM)"
perf() { # NAME ARGS...
	local name=$1; shift
	"$name" -d rxe0 -x 1 -F "$@" >/tmp/perf-srv.log 2>&1 &
	sleep 1
	echo "--- $name $*"
	timeout 300 "$name" -d rxe0 -x 1 -F "$@" localhost 2>&1 | grep -E '^ *[0-9]+ +[0-9]+|bytes|#'
	wait
}
perf ib_write_bw -s 65536 -n 1000
perf ib_read_bw -s 65536 -n 1000
perf ib_send_bw -s 65536 -n 1000
perf ib_send_lat -s 2 -n 1000
perf ib_write_lat -s 2 -n 1000

section "rdma-core python suite (python3-pyverbs), one process per module"
"$here/pytests.sh" rxe0

section "kernel selftests tools/testing/selftests/rdma/rxe_*.sh"
rdma link del rxe0
for t in /opt/kselftest/rdma/rxe_*.sh; do
	modprobe -q tun # autoloaded through /dev/net/tun on a real system
	timeout 120 bash "$t" >/tmp/kst.log 2>&1; rc=$?
	case $rc in 0) r=PASS ;; 4) r=SKIP ;; *) r="FAIL ($rc)" ;; esac
	printf '%-36s %s\n' "$(basename "$t")" "$r"
done
# The selftests unload rdma_rxe when done: a clean reload proves nothing leaked.
echo "modules after selftests: $(grep -oE '^(rdma_rxe|rdma_rxe_rs) ' /proc/modules | tr '\n' ' ')"
