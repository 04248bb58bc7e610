#!/bin/bash
# Guest test (rxe-rs only): transmit skb allocations that fail, as GFP_ATOMIC ones do under
# memory pressure. tests/kmod/skbfail fails one in 7 of rxe-rs's transmit allocations (requests,
# read responses, atomic ACKs; not bare ACKs, as lossy.sh keeps those off netem: a pingpong whose
# last ACK is lost retries forever after its peer has gone) through a kretprobe; RC, UC, UD and
# SRQ traffic between two namespaces must finish with correct data, and the kernel log must stay
# silent. A requester or a read response without an skb runs again a jiffy later; C fails the
# WQE with LOC_QP_OP_ERR instead, so this script does not run against it.
. "$(dirname "$0")/lib.sh"
ko="$(dirname "$0")/../../.build/${VARIANT:-stock}/tests/skbfail/rxe_rs_skbfail.ko"
T=200
[ "${VARIANT:-stock}" != debug ] || T=1000
setup() {
	veth_netns rxaf va0 va1 10.21.0 && rdma link add rxa0 type rxe netdev va0 &&
		ip netns exec rxaf rdma link add rxa1 type rxe netdev va1
}
check "netns rxaf + veth, rxe-rs on both ends" setup
gid0=$(gid_ipv4 rxa0); gid1=$(gid_ipv4 rxa1)
check "fault injector loaded (one in 7 transmit skbs fails)" insmod "$ko" every=7
for t in rc uc; do
	check "ibv_${t}_pingpong -c 500 x 4 KiB" serve "$T" "tcp_listening 18515 rxaf" \
		ip netns exec rxaf ibv_${t}_pingpong -d rxa1 -g "$gid1" -n 500 -s 4096 -c -- \
		ibv_${t}_pingpong -d rxa0 -g "$gid0" -n 500 -s 4096 -c 10.21.0.2
done
check "ibv_rc_pingpong -c 100 x 64 KiB mtu 1024" serve "$T" "tcp_listening 18515 rxaf" \
	ip netns exec rxaf ibv_rc_pingpong -d rxa1 -g "$gid1" -n 100 -s 65536 -m 1024 -c -- \
	ibv_rc_pingpong -d rxa0 -g "$gid0" -n 100 -s 65536 -m 1024 -c 10.21.0.2
check "ibv_ud_pingpong -c 500 x 1 KiB" serve "$T" "tcp_listening 18515 rxaf" \
	ip netns exec rxaf ibv_ud_pingpong -d rxa1 -g "$gid1" -n 500 -s 1024 -c -- \
	ibv_ud_pingpong -d rxa0 -g "$gid0" -n 500 -s 1024 -c 10.21.0.2
check "ibv_srq_pingpong -c 200 x 4 KiB" serve "$T" "tcp_listening 18515 rxaf" \
	ip netns exec rxaf ibv_srq_pingpong -d rxa1 -g "$gid1" -n 200 -s 4096 -c -- \
	ibv_srq_pingpong -d rxa0 -g "$gid0" -n 200 -s 4096 -c 10.21.0.2
for bw in write read send; do
	check "ib_${bw}_bw 200 x 64 KiB" serve "$T" "tcp_listening 18515 rxaf" \
		ip netns exec rxaf ib_${bw}_bw -d rxa1 -x "$gid1" -s 65536 -n 200 -F -- \
		ib_${bw}_bw -d rxa0 -x "$gid0" -s 65536 -n 200 -F 10.21.0.2
done
check "ib_atomic_bw 500 fetch-and-add" serve "$T" "tcp_listening 18515 rxaf" \
	ip netns exec rxaf ib_atomic_bw -d rxa1 -x "$gid1" -n 500 -F -- \
	ib_atomic_bw -d rxa0 -x "$gid0" -n 500 -F 10.21.0.2
failed=$(cat /sys/module/rxe_rs_skbfail/parameters/failed)
echo "allocations failed: $failed"
rdma statistic show link rxa0/1; rdma statistic show link rxa1/1
check "allocations did fail ($failed > 500)" test "$failed" -gt 500
check "fault injector unloaded" rmmod rxe_rs_skbfail
check "cleanup" sh -ec 'rdma link del rxa0; ip netns exec rxaf rdma link del rxa1; ip link del va0; ip netns del rxaf'
tally
