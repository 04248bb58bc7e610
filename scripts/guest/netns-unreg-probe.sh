#!/bin/bash
# Diagnostic (asserts nothing; vm-run --debug reports what KASAN says): rs-device.sh's netns
# sequence without traffic, for either driver — rxe devices on a dummy and on a veth pair whose
# peer is in a namespace; the veth pair deleted, the namespace deleted, then the dummy.
#   scripts/vm-run --driver c|rs --debug --timeout 900 -- scripts/guest/netns-unreg-probe.sh
ip link add d0 type dummy; ip link set d0 up
rdma link add rxed type rxe netdev d0
ip netns add devns
ip link add v0 type veth peer name v1 netns devns
ip link set v0 up; ip -n devns link set v1 up
rdma link add rxev0 type rxe netdev v0
ip netns exec devns rdma link add rxev1 type rxe netdev v1
ip link del v0
for _ in $(seq 20); do rdma link show | grep -q rxev || break; sleep 0.2; done
ip netns del devns
ip link del d0
sleep 5
rdma link show
echo "probe done"
