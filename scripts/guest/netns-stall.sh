#!/bin/bash
# Diagnostic (one VM): traffic.sh's netns case ibv_rc_pingpong -c -m 256 -s 65536 alone (rxev0 on
# veth0, rxev1 on veth1 in netns rxens), with both devices' counters every 10 s; when they stand
# still for 30 s, dumps the QPs (rdma res -dd).
#   scripts/vm-run --driver rs --debug --timeout 900 -- scripts/guest/netns-stall.sh
set -u
. "$(dirname "$0")/../../tests/vm/lib.sh"
N=${N:-64} M=${M:-256} S=${S:-65536}
rxe_veth_pair || { echo "netns-stall: no netns pair"; exit 1; }
sleep 2
sg=$(gid_ipv4 rxev1) cg=$(gid_ipv4 rxev0)
stats() { rdma statistic show link "$1"/1 | tr -s ' \n' ' ' | sed "s/link $1\/1 //"; }
t0=$SECONDS
ip netns exec rxens timeout 600 ibv_rc_pingpong -d rxev1 -g "$sg" -p 18632 -c -m "$M" -s "$S" -n "$N" >/tmp/s.log 2>&1 &
spid=$!
sleep 3
timeout 600 ibv_rc_pingpong -d rxev0 -g "$cg" -p 18632 -c -m "$M" -s "$S" -n "$N" 10.10.0.2 >/tmp/c.log 2>&1 &
cpid=$!
prev="" same=0
while kill -0 $cpid 2>/dev/null; do
	sleep 10
	cur="$(stats rxev0) | $(stats rxev1)"
	echo "$((SECONDS - t0)) s: rxev0: $(stats rxev0)"
	echo "        rxev1: $(stats rxev1)"
	if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
	prev=$cur
	if [ $same -ge 3 ]; then
		echo "=== STALL at $((SECONDS - t0)) s"
		rdma res show qp -dd
		break
	fi
done
wait $cpid; echo "client exit $? after $((SECONDS - t0)) s"; cat /tmp/c.log
wait $spid; echo "server exit $?"; cat /tmp/s.log
