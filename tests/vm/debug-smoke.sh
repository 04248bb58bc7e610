#!/bin/bash
# Guest test for the debug kernel (KASAN, lockdep, kmemleak): a short data-path run of each
# transport, rdma_cm and RDMA READ, whose point is the kernel log vm-run checks afterwards.
. "$(dirname "$0")/lib.sh"
rdma link add rxe0 type rxe netdev eth0
check "rc_pingpong -c 100 x 4 KiB" serve 300 "tcp_listening 18515" ibv_rc_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c -- ibv_rc_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c localhost
check "ud_pingpong -c 100 x 512" serve 300 "tcp_listening 18515" ibv_ud_pingpong -d rxe0 -g 1 -n 100 -s 512 -c -- ibv_ud_pingpong -d rxe0 -g 1 -n 100 -s 512 -c localhost
check "srq_pingpong -c 100 x 4 KiB" serve 300 "tcp_listening 18515" ibv_srq_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c -- ibv_srq_pingpong -d rxe0 -g 1 -n 100 -s 4096 -c localhost
check "rping 20" serve 300 "cm_listening rping" rping -s -a 10.0.2.15 -C 20 -- rping -c -a 10.0.2.15 -C 20 -v
check "ib_read_bw 100 x 64 KiB" serve 300 "tcp_listening 18515" ib_read_bw -d rxe0 -s 65536 -n 100 -F -- ib_read_bw -d rxe0 -s 65536 -n 100 -F localhost
rdma link del rxe0
tally
