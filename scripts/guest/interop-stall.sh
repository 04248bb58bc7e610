#!/bin/bash
# Diagnostic (--two): interop.sh case #3 alone, ibv_rc_pingpong -c -m 1024 -s 65536 across the
# QEMU wire, B server and A client; when both sides' counters stand still for 30 s, dumps the QPs
# (rdma res) and the last packets captured (tcpdump -x: decode BTH/AETH by hand). Shows the
# debug-kernel stall of Documentation/roadmap.md. scripts/vm-run --two --debug --driver rs
# --peer-driver c --timeout 1200 --peer scripts/guest/interop-stall.sh -- scripts/guest/interop-stall.sh
set -u
. "$(dirname "$0")/../../tests/vm/lib.sh"
N=${N:-100}
ip link set eth0 mtu 9000; rdma link add rxe0 type rxe netdev eth0
gid=$(gid_ipv4 rxe0)
peer_listen
peer_tell "hello $ROLE"; peer_hear "hello" 300
tcpdump -i eth0 -s 96 -U -w /tmp/r.pcap udp port 4791 >/dev/null 2>&1 &
stats() { rdma statistic show link rxe0/1 | tr -s ' \n' ' ' | sed 's/link rxe0\/1 //'; }
if [ "$ROLE" = b ]; then
	timeout 300 ibv_rc_pingpong -d rxe0 -g "$gid" -p 18603 -c -m 1024 -s 65536 -n "$N" > /tmp/p.log 2>&1 &
	pid=$!
	sleep 3; peer_tell "ready"
else
	peer_hear "ready" 300
	timeout 300 ibv_rc_pingpong -d rxe0 -g "$gid" -p 18603 -c -m 1024 -s 65536 -n "$N" "$PEER_IP" > /tmp/p.log 2>&1 &
	pid=$!
fi
prev="" same=0
while kill -0 $pid 2>/dev/null; do
	sleep 10
	cur=$(stats)
	if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
	prev=$cur
	if [ $same -ge 3 ]; then
		echo "=== STALL on $ROLE at $(date +%T): $cur"
		rdma res show qp -dd
		rdma -d res show qp -dd 2>/dev/null | head -5
		pkill tcpdump; sleep 1
		tcpdump -r /tmp/r.pcap -nn -tt -x 2>/dev/null | tail -n 150
		break
	fi
done
wait $pid; echo "pingpong exit $?"; cat /tmp/p.log
echo "final: $(stats)"
peer_tell "bye $ROLE"; peer_hear "bye" 500
