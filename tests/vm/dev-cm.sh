#!/bin/bash
# Development: rdma_cm over rxe0 (GSI QP traffic through ib_cm).
. "$(dirname "$0")/lib.sh"
rdma link add rxe0 type rxe netdev eth0
ip=10.0.2.15
check "rping 100" serve 60 "sleep 2" rping -s -a $ip -C 100 -- rping -c -a $ip -C 100 -v
check "ucmatose" serve 60 "sleep 2" ucmatose -b $ip -- ucmatose -s $ip
check "udaddy" serve 60 "sleep 2" udaddy -b $ip -- udaddy -s $ip
rdma statistic show link rxe0/1
rdma link del rxe0
tally
