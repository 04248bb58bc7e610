#!/bin/bash
# Guest test (either driver): on-demand paging MRs under invalidation (tests/vm/py/odp_stress.py):
# RC WRITE, READ and atomics on ODP MRs, data checked, while their pages are dropped
# (MADV_DONTNEED) and remapped (munmap + mmap MAP_FIXED), and WRITEs racing a thread that keeps
# dropping the pages they land in; then a WRITE to unmapped memory fails REM_ACCESS_ERR. No MR
# is left behind, nor by 20 processes exiting with faults in flight. Then advise_mr's prefetch
# (tests/vm/py/advise_mr.py).
#   odp.sh [ITERATIONS]   odp.sh advise   (advise_mr only: the C driver fails the stress part,
#   Documentation/data-path.md, "On-demand paging")
. "$(dirname "$0")/lib.sh"
rxe0_with_gid
rc=0
if [ "${1:-}" != advise ]; then
	timeout 900 python3 "$(dirname "$0")/py/odp_stress.py" rxe0 "$GID" "${1:-300}" || rc=$?
	# Processes that exit with faults in flight: nothing may be left behind.
	for _ in $(seq 20); do
		timeout 60 python3 "$(dirname "$0")/py/odp_stress.py" rxe0 "$GID" exit-early || rc=$?
	done
	sleep 1
	qps=$(rdma res show qp | grep -c 'type RC' || :)
	echo "RC QPs left after 20 processes exited with faults in flight: $qps"
	[ "$qps" = 0 ] || rc=1
fi
timeout 300 python3 "$(dirname "$0")/py/advise_mr.py" rxe0 || rc=$?
res=$(rdma res show mr | grep -c . || :)
echo "MRs left on rxe0: $res"
rdma link del rxe0
[ "$rc" = 0 ] || { echo "odp_stress.py or advise_mr.py failed"; exit 1; }
[ "$res" = 0 ] || { echo "FAIL MRs left behind"; exit 1; }
