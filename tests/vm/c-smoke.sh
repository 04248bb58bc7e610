#!/bin/bash
# Guest test (--driver c): the C rdma_rxe over the VM's eth0, as our reference. Checks that the
# VM, rdma-core and the runner work end to end: device, port state, RC ping-pong with data check.
set -u
. "$(dirname "$0")/lib.sh"
expect "rdma link add rxe0 (C driver)" rdma link add rxe0 type rxe netdev eth0
expect "ibv_devinfo lists rxe0 port ACTIVE" sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
spawn_ready 300 "tcp_listening 18515" /tmp/srv.log ibv_rc_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c
expect "ibv_rc_pingpong -c loopback, 100 x 4 KiB" ibv_rc_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c localhost
expect "  server side finished too" wait "$SPAWNED_PID"
expect "rdma link del rxe0" rdma link del rxe0
summary
