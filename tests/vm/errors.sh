#!/bin/bash
# Guest test (either driver): RC error flows (tests/vm/py/test_rxe_errors.py) through rdma-core's
# python test runner: wrong rkey, late receive (RNR retries), RNR retries that probe with one
# request, RNR retries exhausted, SQD drain (SQ_DRAINED), unsignaled sends (before a signaled one,
# SQD, ERROR), LAST_WQE_REACHED, an RDMA READ with max_dest_rd_atomic 0, UD too big for the
# receive buffer and longer than the MTU, send completion fields, fences.
. "$(dirname "$0")/lib.sh"
rdma link add rxe0 type rxe netdev eth0
rm -rf /tmp/rt; cp -a /opt/rdma-core-tests /tmp/rt
cp "$(dirname "$0")/py/test_rxe_errors.py" /tmp/rt/tests/
cd /tmp/rt
for t in test_write_bad_rkey test_rnr_late_receive test_rnr_retry_probes test_rnr_retry_exceeded test_sqd_drained \
	test_unsignaled_then_signaled test_unsignaled_then_sqd test_unsignaled_then_error \
	test_last_wqe_reached test_read_without_dest_rd_atomic test_ud_too_big_for_receive_buffer \
	test_ud_longer_than_mtu test_send_cqe_fields test_fenced_after_read; do
	check "$t" timeout 120 python3 tests/run_tests.py --dev rxe0 -v "tests.test_rxe_errors.RxeErrorFlows.$t"
done
cd /; rdma link del rxe0
tally
