#!/bin/bash
# Guest test (--two, either driver): RC ping-pong between two VMs joined by a QEMU stream network.
# Run on both VMs: B (ROLE=b) is the server, A the client. B says "ready" on the control channel
# once its server listens, so A never connects before it, however slowly either VM boots.
set -u
. "$(dirname "$0")/lib.sh"
expect "rdma link add rxe0 ($DRIVER driver), IPv4 GID" rxe0_with_gid
args=(-d rxe0 -g "$GID" -n 100 -s 4096 -c)
if [ "$ROLE" = b ]; then
	spawn_ready 600 "tcp_listening 18515" /tmp/server.log ibv_rc_pingpong "${args[@]}"
	server=$SPAWNED_PID
	expect "ibv_rc_pingpong server listening (TCP 18515)" tcp_listening 18515
	expect "told the client" peer_tell ready
	[ "$failures" = 0 ] || kill "$server" 2>/dev/null
	wait "$server"
	rc=$?
	sed 's/^/[server] /' /tmp/server.log
	expect "ibv_rc_pingpong server" test "$rc" = 0
else
	expect "control channel listening (TCP $PEER_PORT)" peer_listen
	expect "server on $PEER_IP ready" peer_hear ready 600
	expect "ibv_rc_pingpong client to $PEER_IP" ibv_rc_pingpong "${args[@]}" "$PEER_IP"
fi
summary
