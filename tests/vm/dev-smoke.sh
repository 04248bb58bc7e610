#!/bin/bash
set -x
rdma link add rxe0 type rxe netdev eth0
ibv_devinfo -d rxe0 | grep -E "state|mtu"
timeout 20 ibv_rc_pingpong -d rxe0 -g 1 -n 10 -s 64 -c >/tmp/srv.log 2>&1 &
sleep 1
timeout 20 ibv_rc_pingpong -d rxe0 -g 1 -n 10 -s 64 -c localhost
echo "client rc=$?"
wait $!; echo "server rc=$?"; cat /tmp/srv.log
rdma statistic show link rxe0/1
rdma link del rxe0
