#!/bin/bash
# Guest test (vm-run --driver rs --icount 0 --profile): the profiler's guest side. A profile of
# an RC ping-pong over rxe-rs is saved as .build/insn-prof/prof-smoke.{counts,syms}, for the
# host to read back (tests/run: scripts/prof-report finds rxe-rs's symbols in it).
set -u
. "$(dirname "$0")/lib.sh"
check "rdma link add rxe0" rdma link add rxe0 type rxe netdev eth0
check "prof_reset (the plugin answers)" prof_reset
spawn_ready 300 "tcp_listening 18515" /tmp/srv.log ibv_rc_pingpong -d rxe0 -g 1 -n 50 -s 4096 -c
check "ibv_rc_pingpong -c loopback, 50 x 4 KiB" ibv_rc_pingpong -d rxe0 -g 1 -n 50 -s 4096 -c localhost
check "  server side finished too" wait "$SPAWNED_PID"
check "prof_dump prof-smoke (counts and the kernel's symbols)" prof_dump prof-smoke
check "  both saved, not empty" test -s /src/rxe-rs/.build/insn-prof/prof-smoke.counts -a \
	-s /src/rxe-rs/.build/insn-prof/prof-smoke.syms
check "rdma link del rxe0" rdma link del rxe0
tally
