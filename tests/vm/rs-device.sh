#!/bin/bash
# Guest test (--driver rs): the device lifecycle of rxe-rs as a user drives it — link add/del,
# duplicate refused, port state and MTU follow the netdev, netdev removal removes the device,
# rmmod with devices present, and the C rdma_rxe never auto-loaded.
set -u
. "$(dirname "$0")/lib.sh"
ko="/src/rxe-rs/.build/$VARIANT/rdma_rxe_rs.ko"
port_field() { ibv_devinfo -d "$1" | awk -v f="$2:" '$1==f{print $2; exit}'; }

expect "module is loaded" grep -qw '^rdma_rxe_rs' /proc/modules
expect "rdma link add rxe0 netdev eth0" rdma link add rxe0 type rxe netdev eth0
expect "  listed by rdma link show" sh -c 'rdma link show | grep -q "rxe0/1 state ACTIVE"'
expect "  ibv_devices lists it" sh -c 'ibv_devices | grep -qw rxe0'
expect "  port is ACTIVE" test "$(port_field rxe0 state)" = PORT_ACTIVE
expect "  active_mtu 1024 on a 1500-byte netdev" test "$(port_field rxe0 active_mtu)" = 1024
expect "a second device on eth0 is refused (EEXIST)" sh -c 'rdma link add rxe1 type rxe netdev eth0 2>&1 | grep -q "File exists"'
expect "the C rdma_rxe did not auto-load" sh -c '! grep -qw "^rdma_rxe" /proc/modules'

ip link add d0 type dummy
expect "rdma link add on a dummy netdev (down)" rdma link add rxed type rxe netdev d0
expect "  port is DOWN while d0 is down" test "$(port_field rxed state)" = PORT_DOWN
ip link set d0 up
expect "  port is ACTIVE once d0 is up" test "$(port_field rxed state)" = PORT_ACTIVE
stat() { rdma statistic show link "$1/1" | tr ' ' '\n' | awk -v k="$2" 'prev==k{print; exit} {prev=$0}'; }
names="sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_rnr_err send_rnr_err rcvd_seq_err ack_deferred retry_exceeded_err retry_rnr_exceeded_err completer_retry_err send_err link_downed rdma_sends rdma_recvs sent_bytes rcvd_bytes"
expect "  rdma statistic show lists the 17 counters of the C driver, in order" test \
	"$(rdma statistic show link rxed/1 | awk 'NR>1{printf "%s ", $1}')" = "$names "
before=$(stat rxed link_downed)
ip link set d0 down; ip link set d0 up
expect "  link_downed counts d0 going down ($before -> $(stat rxed link_downed))" test "$(stat rxed link_downed)" -gt "${before:-0}"
ip link set d0 mtu 4200
expect "  active_mtu follows the netdev MTU (4200 -> 4096)" test "$(port_field rxed active_mtu)" = 4096
ip link set d0 mtu 1100
expect "  active_mtu follows the netdev MTU (1100 -> 512)" test "$(port_field rxed active_mtu)" = 512
# Traffic between two namespaces over a veth pair, then the pair goes under it. The
# unregistration waits for every reference to the veths: it finishes only once both rxe devices
# and their QPs are gone and no packet or QP of ours still holds one. (Routes the QPs hold do not
# count: the stack moves them to its blackhole device. Tried: a build that leaked every route
# still passes here; a leaked route is a slab count, not a stuck netdev.)
ip netns add devns
ip link add v0 type veth peer name v1 netns devns
ip addr add 10.9.9.1/24 dev v0; ip link set v0 up
ip -n devns addr add 10.9.9.2/24 dev v1; ip -n devns link set v1 up; ip -n devns link set lo up
rdma link add rxev0 type rxe netdev v0
ip netns exec devns rdma link add rxev1 type rxe netdev v1
spawn_ready 120 "tcp_listening 18600 devns" /tmp/v-srv.log \
	ip netns exec devns ibv_rc_pingpong -d rxev1 -g "$(gid_ipv4 rxev1)" -n 100000000 -p 18600
srv=$SPAWNED_PID
timeout -k 5 120 ibv_rc_pingpong -d rxev0 -g "$(gid_ipv4 rxev0)" -n 100000000 -p 18600 10.9.9.2 >/tmp/v-cli.log 2>&1 &
cli=$!
sent0=$(counter rxev0 sent_pkts)
sleep 3
expect "  traffic over a veth ($sent0 -> $(counter rxev0 sent_pkts) packets sent)" test "$(counter rxev0 sent_pkts)" -gt $((sent0 + 100))
# (An unregistration waiting for a reference sleeps uninterruptibly: poll it, do not wait.)
ip link del v0 &
del=$!
sleep 2
# The processes hold the devices' user contexts; ending them lets the unregistration finish.
kill "$srv" "$cli" 2>/dev/null
wait "$srv" "$cli" 2>/dev/null
wait_until 30 '! kill -0 "$del" 2>/dev/null'
expect "deleting the veth under traffic completes (no reference to it left)" sh -c "! kill -0 $del 2>/dev/null"
wait_until 4 '! rdma link show | grep -q rxev'
expect "  both rxe devices went with it" sh -c '! rdma link show | grep -q rxev'
ip link del d0
wait_until 4 '! rdma link show | grep -q rxed'
expect "deleting the netdev removes its device" sh -c '! rdma link show | grep -q rxed'

expect "rdma link del rxe0" rdma link del rxe0
expect "  gone" sh -c '! ibv_devices | grep -qw rxe0'
expect "rdma link add rxe0 again" rdma link add rxe0 type rxe netdev eth0
expect "rmmod with a device present" rmmod rdma_rxe_rs
expect "  the device went with it" sh -c '! rdma link show | grep -q rxe0'
expect "insmod again" insmod "$ko"
expect "  and add a device" rdma link add rxe0 type rxe netdev eth0
expect "rmmod again" rmmod rdma_rxe_rs
# Last, with no rxe device left: a namespace's exit racing a device's unregistration is an
# ib_core use-after-free, C driver and ours alike (scripts/guest/netns-unreg-race.sh; data-path.md).
ip netns del devns
summary
