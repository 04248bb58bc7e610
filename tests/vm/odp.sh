#!/bin/bash
# Guest test (either driver): on-demand paging MRs under invalidation (tests/vm/py/odp_stress.py):
# RC WRITE, READ and atomics on ODP MRs, data checked, while their pages are dropped
# (MADV_DONTNEED) and remapped (munmap + mmap MAP_FIXED), and WRITEs racing a thread that keeps
# dropping the pages they land in; then a WRITE to unmapped memory fails REM_ACCESS_ERR. No MR
# is left behind.   odp.sh [ITERATIONS]
. "$(dirname "$0")/lib.sh"
rdma link add rxe0 type rxe netdev eth0
gid=""
for _ in $(seq 50); do gid=$(gid_ipv4 rxe0); [ -n "$gid" ] && break; sleep 0.1; done
echo "rxe0 IPv4 GID index: ${gid:-none}"
rc=0
timeout 900 python3 "$(dirname "$0")/py/odp_stress.py" rxe0 "${gid:-1}" "${1:-300}" || rc=$?
res=$(rdma res show mr | grep -c . || :)
echo "MRs left on rxe0: $res"
rdma link del rxe0
[ "$rc" = 0 ] || { echo "odp_stress.py exit $rc"; exit 1; }
[ "$res" = 0 ] || { echo "FAIL MRs left behind"; exit 1; }
