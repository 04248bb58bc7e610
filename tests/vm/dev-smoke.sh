#!/bin/bash
# Development smoke test of the data path: ping-pongs of each transport, sizes, MTUs.
. "$(dirname "$0")/lib.sh"
rdma link add rxe0 type rxe netdev eth0
pp() { # NAME PROG ARGS…
	local name=$1 prog=$2; shift 2
	check "$name" serve 60 "sleep 1" $prog -d rxe0 -g 1 "$@" -- $prog -d rxe0 -g 1 "$@" localhost
}
pp "rc 1B" ibv_rc_pingpong -n 200 -s 1 -c
pp "rc 4K mtu1024" ibv_rc_pingpong -n 200 -s 4096 -m 1024 -c
pp "rc 64K mtu256" ibv_rc_pingpong -n 50 -s 65536 -m 256 -c
pp "rc 1M mtu4096" ibv_rc_pingpong -n 10 -s 1048576 -m 4096 -c
pp "uc 4K" ibv_uc_pingpong -n 200 -s 4096 -c
pp "ud 512" ibv_ud_pingpong -n 200 -s 512 -c
pp "srq 4K" ibv_srq_pingpong -n 100 -s 4096 -c
pp "rc events" ibv_rc_pingpong -n 100 -s 64 -e -c
check "ib_write_bw" serve 60 "tcp_listening 18515" ib_write_bw -d rxe0 -s 65536 -n 200 -F -- ib_write_bw -d rxe0 -s 65536 -n 200 -F localhost
check "ib_read_bw" serve 60 "tcp_listening 18515" ib_read_bw -d rxe0 -s 65536 -n 200 -F -- ib_read_bw -d rxe0 -s 65536 -n 200 -F localhost
check "ib_send_bw" serve 60 "tcp_listening 18515" ib_send_bw -d rxe0 -s 65536 -n 200 -F -- ib_send_bw -d rxe0 -s 65536 -n 200 -F localhost
check "ib_atomic_bw" serve 60 "tcp_listening 18515" ib_atomic_bw -d rxe0 -n 200 -F -- ib_atomic_bw -d rxe0 -n 200 -F localhost
check "ib_send_lat" serve 60 "tcp_listening 18515" ib_send_lat -d rxe0 -s 2 -n 200 -F -- ib_send_lat -d rxe0 -s 2 -n 200 -F localhost
rdma statistic show link rxe0/1
rdma link del rxe0
tally
