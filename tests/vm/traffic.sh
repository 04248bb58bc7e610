#!/bin/bash
# Guest (--driver rs or c): the data-path acceptance matrix for the loaded rxe driver.
#   scripts/vm-run --driver rs --timeout 3000 -- tests/vm/traffic.sh [quick|full]
# Three topologies: loopback (rxe0 on eth0, server and client in this namespace), two network
# namespaces joined by a veth pair at MTU 9000 (rxev0 on veth0 here, rxev1 on veth1 in ns
# rxens; shared rdma netns mode, as the kernel's rxe_rping_between_netns.sh), and the same pair
# over IPv6 (GIDs of fd00::1 and fd00::2, packets in IPv6; path MTU 1024 only). In each:
# ibv_{rc,uc,srq}_pingpong -c over SIZES x path MTUs 256/1024/4096, ibv_ud_pingpong -c at the
# sizes that fit the port's active MTU (and at the active MTU), rping -V, ucmatose, udaddy,
# mckey; over IPv6 also RC between the link-local GIDs (fe80::, index 0). The pingpongs poll
# their CQs in loopback and wait for completion events (-e) in the other two topologies.
# One line "ok NAME" / "FAIL NAME" per case, then "N passed, M failed"; exits 1 on a failure.
set -u
. "$(dirname "$0")/lib.sh"

mode=${1:-quick}
# One case or a few: TOPOS, PROGS, MTUS, SIZES and EXTRAS=0 (no UD/CM cases) narrow the matrix,
#   e.g. TOPOS=netns PROGS=ibv_uc_pingpong MTUS=256 SIZES=1048576 EXTRAS=0 traffic.sh full
MTUS=${MTUS:-256 1024 4096}
TOPOS=${TOPOS:-loopback netns ipv6}
PROGS=${PROGS:-ibv_rc_pingpong ibv_uc_pingpong ibv_srq_pingpong}
EXTRAS=${EXTRAS:-1}
case "$mode" in
quick) SIZES=${SIZES:-1 4096 65536} ITERS=200 CASE_TIMEOUT=${CASE_TIMEOUT:-60} ;;
# full: ITERS exchanges per case, but at most BYTES_PER_CASE bytes each way (1 MiB: 32 exchanges),
# and messages smaller than every path MTU (1 B) only at MTU 1024: the run stays under 20 min.
full) SIZES=${SIZES:-1 4096 65536 1048576} ITERS=10000 CASE_TIMEOUT=${CASE_TIMEOUT:-600} SMALL_AT_ONE_MTU=1 ;;
*) echo "usage: $0 [quick|full]" >&2; exit 2 ;;
esac
# The debug kernel (KASAN + lockdep under TCG) moves a packet between the netns in 2.6 to 10 ms,
# by machine (10 ms for rxe-rs, 17 ms for C on one: scripts/guest/netns-stall.sh): 64 KiB at MTU
# 256 then takes up to 5 s per exchange, so it moves at most 2 MiB per case, with 8× the time,
# and between the netns the pingpongs run at path MTU 1024 only (loopback keeps every MTU: the
# segmentation the debug kernel checks is the same code whatever the netdev).
NETNS_MTUS=$MTUS
if [ "${VARIANT:-stock}" = debug ]; then
	BYTES_PER_CASE=${BYTES_PER_CASE:-2097152} CASE_TIMEOUT=$((CASE_TIMEOUT * 8))
	NETNS_MTUS=${NETNS_MTUS_DEBUG:-1024}
fi
BYTES_PER_CASE=${BYTES_PER_CASE:-33554432} # 32 MiB
SMALL_AT_ONE_MTU=${SMALL_AT_ONE_MTU:-0}
RPING_COUNT=1000 CM_COUNT=100
port=18600 # TCP port of the pingpongs' out-of-band exchange: a new one per case

# iters SIZE: exchanges for one case of SIZE bytes.
iters() { local n=$((BYTES_PER_CASE / $1)); echo $((n < ITERS ? n : ITERS)); }
# cm_exists COMM: process COMM has an rdma_cm id (mckey's receiver has bound and is joining).
cm_exists() { rdma res show cm_id | grep -q "comm $1"; }

# pingpong PROG ARGS…: one ibv_*_pingpong case, server on $sdev (in $ns), client on $cdev; the
# QP numbers and GIDs are exchanged over TCP to $oob (the pingpongs' server listens on IPv4).
# With EVENTS=1 both wait for completion events (-e) instead of polling the CQ: the loopback
# topology polls, the others take events, so both ways of completing are covered. Under TCG
# the vCPUs run in turn on one host thread, and two processes spinning in ibv_poll_cq keep
# the kernel's work of moving their packets waiting (a 4 KiB exchange: 4.3 ms polling, 0.65 ms
# with events, in one VM).
pingpong() {
	local prog=$1 ev=()
	shift
	[ "${EVENTS:-0}" = 0 ] || ev=(-e)
	port=$((port + 1))
	check "$topo $prog -c ${ev[*]:+${ev[*]} }$*" serve "$CASE_TIMEOUT" "tcp_listening $port $ns" \
		"${sx[@]}" "$prog" -d "$sdev" -g "$sgid" -p "$port" -c "${ev[@]}" "$@" -- \
		"$prog" -d "$cdev" -g "$cgid" -p "$port" -c "${ev[@]}" "$@" "$oob"
}

# matrix TOPO SERVER_DEV CLIENT_DEV SERVER_ADDR CLIENT_ADDR [NETNS [SERVER_IPV4]]: every case over
# one topology, between the GIDs of the addresses starting with GID_PREFIX (default: the IPv4
# ones), multicast to MCAST (default 239.1.1.1; none if empty).
matrix() {
	local topo=$1 sdev=$2 cdev=$3 addr=$4 caddr=$5 ns=${6:-} oob=${7:-$4}
	local sx=() sgid cgid mtu size prog active
	local prefix=${GID_PREFIX:-::ffff:} mcast=${MCAST-239.1.1.1}
	[ -z "$ns" ] || sx=(ip netns exec "$ns")
	# Shared rdma netns mode: every rxe device is visible here, wherever its netdev is.
	sgid=$(gid_with_prefix "$sdev" "$prefix") cgid=$(gid_with_prefix "$cdev" "$prefix")
	active=$(ibv_devinfo -d "$cdev" | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
	check "$topo: $prefix GIDs on $sdev ($sgid) and $cdev ($cgid), active MTU ${active:-?}" \
		test -n "$sgid" -a -n "$cgid" -a -n "$active"
	for prog in $PROGS; do
		for mtu in $MTUS; do
			for size in $SIZES; do
				[ "$SMALL_AT_ONE_MTU" = 0 ] || [ "$size" -ge 256 ] || [ "$mtu" = 1024 ] || continue
				pingpong "$prog" -m "$mtu" -s "$size" -n "$(iters "$size")"
			done
		done
	done
	[ "$EXTRAS" = 1 ] || return 0
	# UD has no path MTU option: a message must fit the port's active MTU.
	# shellcheck disable=SC2086 # SIZES is a list
	for size in $(printf '%s\n' $SIZES "$active" | sort -nu); do
		[ "$size" -le "${active:-0}" ] && pingpong ibv_ud_pingpong -s "$size" -n "$(iters "$size")"
	done
	check "$topo rping -V -C $RPING_COUNT" serve "$CASE_TIMEOUT" "cm_listening rping" \
		"${sx[@]}" rping -s -a "$addr" -V -C "$RPING_COUNT" -- rping -c -a "$addr" -V -v -C "$RPING_COUNT"
	check "$topo ucmatose -C $CM_COUNT -S 4096" serve "$CASE_TIMEOUT" "cm_listening ucmatose" \
		"${sx[@]}" ucmatose -b "$addr" -C "$CM_COUNT" -S 4096 -- ucmatose -s "$addr" -C "$CM_COUNT" -S 4096
	check "$topo udaddy -C $CM_COUNT" serve "$CASE_TIMEOUT" "cm_listening udaddy" \
		"${sx[@]}" udaddy -b "$addr" -C "$CM_COUNT" -- udaddy -s "$addr" -C "$CM_COUNT"
	# Multicast (UD to QPN 0xFFFFFF): the receiver joins the group on the server side and
	# waits for the sender's 10 messages; the sender (a member too) starts a second later.
	[ -n "$mcast" ] || return 0
	check "$topo mckey -m $mcast (multicast)" serve "$CASE_TIMEOUT" "cm_exists mckey" \
		"${sx[@]}" mckey -m "$mcast" -b "$addr" -- \
		sh -c "sleep 1; exec mckey -m $mcast -b $caddr -s"
}

echo "traffic.sh $mode, driver ${DRIVER:-?}: sizes $SIZES, path MTUs $MTUS, at most $ITERS exchanges per case"
# softnet_drops: packets the CPUs' input backlogs dropped since boot (/proc/net/softnet_stat,
# column 2, hex): a driver that floods a veth overflows them.
softnet_drops() {
	local n=0 _ dropped _rest
	while read -r _ dropped _rest; do n=$((n + 0x$dropped)); done </proc/net/softnet_stat
	echo "$n"
}

# stall_state: what a hung exchange is waiting on (serve's SERVE_ON_STALL): backlog drops, every rxe
# device's counters (shared rdma netns mode shows them all), the QPs with their PSNs, the veths.
stall_state() {
	echo "softnet drops since boot: $(softnet_drops)"
	rdma statistic show
	rdma -d res show qp
	ip -s -o link show veth0 2>/dev/null && ip netns exec rxens ip -s -o link show veth1
}
SERVE_ON_STALL=stall_state

case " $TOPOS " in *" loopback "*)
check "rdma link add rxe0 type rxe netdev eth0" rdma link add rxe0 type rxe netdev eth0
matrix loopback rxe0 rxe0 "${IP:-10.0.2.15}" "${IP:-10.0.2.15}"
check "rdma link del rxe0" rdma link del rxe0
esac
case " $TOPOS " in *" netns "*)
check "netns rxens + veth0/veth1 (MTU 9000)" rxe_veth_pair
EVENTS=1 MTUS=$NETNS_MTUS matrix netns rxev1 rxev0 10.10.0.2 10.10.0.1 rxens
check "rdma link del rxev0, rxev1; netns and veth removed" veth_pair_down
echo "input backlog drops (softnet_stat): $(softnet_drops)"
esac
case " $TOPOS " in *" ipv6 "*)
# nodad: the addresses (and their GIDs) are usable at once, not after duplicate detection.
ipv6_pair() {
	rxe_veth_pair && ip addr add fd00::1/64 dev veth0 nodad &&
		ip -n rxens addr add fd00::2/64 dev veth1 nodad && ping -6 -c 1 -W 5 fd00::2 >/dev/null
}
check "netns rxens + veth0/veth1 with IPv6 fd00::1 and fd00::2" ipv6_pair
check "IPv6 GIDs (fd00::, fe80::) on rxev0 and rxev1" eval \
	"wait_gid rxev0 fd00: && wait_gid rxev1 fd00: && wait_gid rxev0 fe80: && wait_gid rxev1 fe80:"
# No multicast: rdma_cm refuses to join an IPv6 group on RoCE v2 (cma_iboe_join_multicast,
# ENOTSUPP), whatever the driver. The debug kernel takes 12 min over the whole IPv6 matrix: there,
# RC at 4 KiB only (and the link-local case below).
if [ "${VARIANT:-stock}" = debug ]; then
	EVENTS=1 PROGS=ibv_rc_pingpong SIZES=4096 EXTRAS=0 MTUS=1024 GID_PREFIX=fd00: \
		matrix ipv6 rxev1 rxev0 fd00::2 fd00::1 rxens 10.10.0.2
else
	EVENTS=1 MTUS=1024 GID_PREFIX=fd00: MCAST= matrix ipv6 rxev1 rxev0 fd00::2 fd00::1 rxens 10.10.0.2
fi
# The link-local GIDs (index 0, fe80::, derived from the MAC): what `ibv_rc_pingpong -g 0` uses.
EVENTS=1 topo=ipv6-link-local sdev=rxev1 cdev=rxev0 ns=rxens sx=(ip netns exec rxens) oob=10.10.0.2 \
	sgid=$(gid_with_prefix rxev1 fe80:) cgid=$(gid_with_prefix rxev0 fe80:)
pingpong ibv_rc_pingpong -s 65536 -n "$(iters 65536)"
check "rdma link del rxev0, rxev1; netns and veth removed" veth_pair_down
esac
tally
