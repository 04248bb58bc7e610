#!/bin/bash
# Guest test (either driver): a hostile user process (tests/vm/py/test_rxe_hostile.py, through
# rdma-core's python test runner) scribbles over its shared rings and dies with work outstanding;
# afterwards the device must still move data and hold no more objects than before.
#   hostile.sh [TEST...]   default: every test of the module
. "$(dirname "$0")/lib.sh"
rdma link add rxe0 type rxe netdev eth0
rm -rf /tmp/rt; cp -a /opt/rdma-core-tests /tmp/rt
cp "$(dirname "$0")/py/test_rxe_hostile.py" /tmp/rt/tests/
# Objects of the device (QP1's and such) before any hostile process ran.
res_counts() { rdma res show | sed -n 's/^[0-9]*: rxe0: //p'; }
before=$(res_counts)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test_sq_corrupt_wqes test_sq_random_wqes test_sq_producer_jump test_sq_producer_huge_garbage
	test_sq_consumer_scribble test_rq_corrupt_wqes test_srq_corrupt_wqes test_rq_producer_jump
	test_srq_producer_jump test_srq_resize_scribbled test_cq_producer_scribble test_cq_consumer_full
	test_scribble_during_traffic test_exit_mid_operation test_killed_mid_operation)
cd /tmp/rt
for t in "${tests[@]}"; do
	check "$t" timeout 180 python3 tests/run_tests.py --dev rxe0 -v "tests.test_rxe_hostile.RxeHostileRings.$t"
done
cd /
# The device still works, and the hostile processes left nothing behind.
gid=$(gid_ipv4 rxe0)
check "rc_pingpong after the hostile processes" serve 60 "tcp_listening 18515" \
	ibv_rc_pingpong -d rxe0 -g "$gid" -n 20 -c -- ibv_rc_pingpong -d rxe0 -g "$gid" -n 20 -c 127.0.0.1
check "no leaked objects ($before)" test "$(res_counts)" = "$before"
res_counts
rdma link del rxe0
tally
