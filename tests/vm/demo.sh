#!/bin/bash
# Guest script of `make demo` (scripts/demo boots it with --driver none: it loads the module
# itself). What a user does with rxe-rs, every command shown as it runs with its own output:
# load, rdma link add, ibv_devinfo, ibv_rc_pingpong -c in loopback and between two network
# namespaces over a veth, rping through rdma_cm, one perftest figure, the counters, link del,
# rmmod. Stops with a non-zero exit at the first step that fails; `make check` runs it too.
set -u
. "$(dirname "$0")/lib.sh"

# fail MSG: the demo stops here.
fail() {
	echo "demo: FAILED: $*"
	exit 1
}
# step CMD…: shows "$ CMD", runs it, stops the demo if it fails.
step() {
	printf '\n$ %s\n' "$*"
	"$@" || fail "$* (exit $?)"
}
# pair [-q] [-n NETNS] READY SERVER… -- CLIENT…: a server (in NETNS) and its client through
# lib.sh's serve (client output first, then the server's as "[server] …", which -q leaves out).
# Stops the demo if either fails or reports data it did not expect.
pair() {
	local ns="" quiet=0 ready out=/tmp/demo-pair.out srv=() cli=() rc
	[ "$1" != -q ] || { quiet=1; shift; }
	[ "$1" != -n ] || { ns=$2; shift 2; }
	ready=$1; shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift; cli=("$@")
	printf '\n$ %s%s &\n$ %s\n' "${ns:+ip netns exec $ns }" "${srv[*]}" "${cli[*]}"
	serve 120 "$ready" ${ns:+ip netns exec "$ns"} "${srv[@]}" -- "${cli[@]}" >"$out" 2>&1
	rc=$?
	if [ "$quiet" = 1 ]; then grep -v '^\[server\]' "$out"; else cat "$out"; fi
	[ "$rc" = 0 ] || fail "${cli[0]} (client/server exit status)"
	! grep -qi 'invalid data\|mismatch\|fail' "$out" || fail "${cli[0]} reported bad data"
}

step uname -r
# What udev and rdma-core's service do on a booted system; this VM has neither.
modprobe -a ib_uverbs rdma_ucm || fail "modprobe ib_uverbs rdma_ucm"
step modprobe rdma_rxe_rs
step rdma link add rxe0 type rxe netdev eth0
step rdma link show
step ibv_devinfo -d rxe0
gid=$(gid_ipv4 rxe0)
[ -n "$gid" ] || fail "no RoCE v2 IPv4 GID on rxe0"

echo; echo "=== RC ping-pong, loopback on eth0 (-c: the receiver checks the data) ==="
pair "tcp_listening 18515" ibv_rc_pingpong -d rxe0 -g "$gid" -s 65536 -n 500 -c -- \
	ibv_rc_pingpong -d rxe0 -g "$gid" -s 65536 -n 500 -c "$IP"

echo; echo "=== RC ping-pong between two network namespaces over a veth pair ==="
step ip netns add rxens
step ip link add veth0 type veth peer name veth1 netns rxens
step ip addr add 10.10.0.1/24 dev veth0
step ip link set veth0 up
step ip -n rxens addr add 10.10.0.2/24 dev veth1
step ip -n rxens link set veth1 up
step rdma link add rxev0 type rxe netdev veth0
step ip netns exec rxens rdma link add rxev1 type rxe netdev veth1
g0=$(gid_ipv4 rxev0) g1=$(gid_ipv4 rxev1)
[ -n "$g0" ] && [ -n "$g1" ] || fail "no RoCE v2 IPv4 GID on rxev0/rxev1"
pair -n rxens "tcp_listening 18516 rxens" ibv_rc_pingpong -d rxev1 -g "$g1" -p 18516 -s 4096 -n 1000 -c -- \
	ibv_rc_pingpong -d rxev0 -g "$g0" -p 18516 -s 4096 -n 1000 -c 10.10.0.2

echo; echo "=== rping through rdma_cm (-V: every ping's data is verified) ==="
pair "cm_listening rping" rping -s -a "$IP" -V -C 100 -- rping -c -a "$IP" -V -C 100

echo; echo "=== perftest: RDMA WRITE bandwidth, 64 KiB messages (QEMU TCG guest: an emulated CPU) ==="
pair -q "tcp_listening 18517" ib_write_bw -d rxe0 -x "$gid" -p 18517 -s 65536 -n 2000 -F -- \
	ib_write_bw -d rxe0 -x "$gid" -p 18517 -s 65536 -n 2000 -F "$IP"

echo; echo "=== the counters moved ==="
step rdma statistic show link rxe0/1
sent=$(counter rxe0/1 sent_pkts) rcvd=$(counter rxe0/1 rcvd_pkts)
echo "rxe0: sent_pkts $sent, rcvd_pkts $rcvd"
[ "$sent" -gt 0 ] && [ "$rcvd" -gt 0 ] || fail "rxe0's packet counters did not move"

echo; echo "=== teardown ==="
step rdma link del rxe0
step rdma link del rxev0
step ip netns exec rxens rdma link del rxev1
step ip netns del rxens
step rmmod rdma_rxe_rs
step rdma link show
echo; echo "demo: every step passed"
