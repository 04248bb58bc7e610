#!/bin/bash
# Guest test (either driver): RC over a lossy link (`lossy.sh quick`: only the first pingpong). Two network namespaces joined by a veth pair
# with netem (loss 5%, reorder 10%, duplicate 1%) on both ends; ibv_rc_pingpong -c and
# ib_write_bw / ib_read_bw / ib_atomic_bw must finish with correct data, and the retransmit counters must show
# the loss was seen (a test that never lost a packet proves nothing).
#
# Bare ACKs and NAKs (48-byte IP packets) bypass netem: with retry_cnt 7 (infinite, in both
# drivers) a lost ACK of a peer's *last* message leaves that peer retrying forever once the other
# side has exited, so a fully lossy link would hang either driver at the end of the run, whatever
# the transport does. Data, read responses and requests are all lossy.
. "$(dirname "$0")/lib.sh"
modprobe -q sch_netem
T=200 # seconds per case; KASAN + lockdep under TCG are ≈ 5 × slower (and retransmit more)
# Messages of the bandwidth cases. Over this link each READ response packet needed arrives about
# 23 times in either driver (a lost one makes the requester ask again from it for every read
# outstanding): 200 READs of 64 KiB take 45-60 s on the stock kernel, near the 1000 s bound on
# the debug one, which moves a quarter of the pingpongs' exchanges and 20 messages a bandwidth
# case, its READs of 16 KiB (20 READs of 64 KiB took 634 s there: each retry asks again for
# everything outstanding after the lost packet); still thousands of packets retransmitted.
N=200 PP=4 RSIZE=65536
[ "${VARIANT:-stock}" != debug ] || { T=1000; N=20; PP=1; RSIZE=16384; }
setup() {
	veth_netns rxel vl0 vl1 10.20.0 && sh -ec '
	for x in "" "ip netns exec rxel"; do
		dev=vl0; [ -z "$x" ] || dev=vl1
		$x tc qdisc add dev $dev root handle 1: prio
		$x tc qdisc add dev $dev parent 1:2 handle 20: netem delay 1ms reorder 10% loss 5% duplicate 1%
		$x tc filter add dev $dev parent 1: protocol ip prio 1 u32 match u16 48 0xffff at 2 flowid 1:1
	done
	rdma link add rxl0 type rxe netdev vl0
	ip netns exec rxel rdma link add rxl1 type rxe netdev vl1'
}
check "netns rxel + veth (netem loss 5% reorder 10% duplicate 1%)" setup
gid0=$(gid_ipv4 rxl0); gid1=$(gid_ipv4 rxl1)
check "ibv_rc_pingpong -c $((PP * 125)) x 4 KiB, lossy" serve "$T" "tcp_listening 18515 rxel" \
	ip netns exec rxel ibv_rc_pingpong -d rxl1 -g "$gid1" -n $((PP * 125)) -s 4096 -c -- \
	ibv_rc_pingpong -d rxl0 -g "$gid0" -n $((PP * 125)) -s 4096 -c 10.20.0.2
if [ "${1:-}" != quick ]; then
check "ibv_rc_pingpong -c $((PP * 25)) x 64 KiB mtu 1024, lossy" serve "$T" "tcp_listening 18515 rxel" \
	ip netns exec rxel ibv_rc_pingpong -d rxl1 -g "$gid1" -n $((PP * 25)) -s 65536 -m 1024 -c -- \
	ibv_rc_pingpong -d rxl0 -g "$gid0" -n $((PP * 25)) -s 65536 -m 1024 -c 10.20.0.2
check "ib_write_bw $N x 64 KiB, lossy" serve "$T" "ip netns exec rxel ss -Htln sport = :18515 | grep -q ." \
	ip netns exec rxel ib_write_bw -d rxl1 -x "$gid1" -s 65536 -n "$N" -F -- \
	ib_write_bw -d rxl0 -x "$gid0" -s 65536 -n "$N" -F 10.20.0.2
check "ib_read_bw $N x $((RSIZE / 1024)) KiB, lossy" serve "$T" "ip netns exec rxel ss -Htln sport = :18515 | grep -q ." \
	ip netns exec rxel ib_read_bw -d rxl1 -x "$gid1" -s "$RSIZE" -n "$N" -F -- \
	ib_read_bw -d rxl0 -x "$gid0" -s "$RSIZE" -n "$N" -F 10.20.0.2
# Duplicate and retried atomics are answered from the responder resources.
check "ib_atomic_bw $((PP * 125)) fetch-and-add, lossy" serve "$T" "ip netns exec rxel ss -Htln sport = :18515 | grep -q ." \
	ip netns exec rxel ib_atomic_bw -d rxl1 -x "$gid1" -n $((PP * 125)) -F -- \
	ib_atomic_bw -d rxl0 -x "$gid0" -n $((PP * 125)) -F 10.20.0.2
fi
retries=$(( $(counter rxl0/1 completer_retry_err) + $(counter rxl1/1 completer_retry_err) ))
dups=$(( $(counter rxl0/1 duplicate_request) + $(counter rxl1/1 duplicate_request) ))
echo "retransmits: completer_retry_err $retries, duplicate_request $dups"
rdma statistic show link rxl0/1; rdma statistic show link rxl1/1
check "retransmissions happened (completer_retry_err $retries > 0)" test "$retries" -gt 0
check "cleanup" sh -ec 'rdma link del rxl0; ip netns exec rxel rdma link del rxl1; ip link del vl0; ip netns del rxel'
tally
