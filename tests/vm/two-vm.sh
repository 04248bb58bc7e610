#!/bin/bash
# Guest test (--two, either driver): RC ping-pong between two VMs joined by a QEMU socket network.
# Run on both VMs: B (ROLE=b) is the server, A the client.
set -u
. "$(dirname "$0")/lib.sh"
expect "rdma link add rxe0 ($DRIVER driver)" rdma link add rxe0 type rxe netdev eth0
if [ "$ROLE" = b ]; then
	expect "ibv_rc_pingpong server" ibv_rc_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c
else
	for _ in $(seq 30); do ping -c1 -W1 "$PEER_IP" >/dev/null 2>&1 && break; done
	sleep 2
	expect "ibv_rc_pingpong client to $PEER_IP" ibv_rc_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c "$PEER_IP"
fi
summary
