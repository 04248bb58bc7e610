#!/bin/bash
# Guest test (either driver): the kernel's rereg_user_mr through libibverbs' private
# ibv_cmd_rereg_mr (tests/vm/py/rereg_mr.py; librxe has no rereg_mr op, so ibv_rereg_mr itself
# never reaches the kernel): access and PD changed in place with the keys kept, checked by RC
# traffic from QPs on either PD; translation changes EOPNOTSUPP with the MR unchanged; the
# arguments ib_uverbs, ib_umem_check_rereg and the driver refuse.
. "$(dirname "$0")/lib.sh"
rxe0_with_gid
rc=0
timeout 300 python3 "$(dirname "$0")/py/rereg_mr.py" rxe0 "$GID" || rc=$?
res=$(rdma res show mr | grep -c . || :)
echo "MRs left on rxe0: $res"
rdma link del rxe0
[ "$rc" = 0 ] || { echo "rereg_mr.py exit $rc"; exit 1; }
