#!/bin/bash
# Guest test (debug kernel, either driver): every allocation of each control operation failing
# in turn, through the task's fail-nth (failslab and fail_page_alloc, syzkaller's method; the
# sweep itself is tests/vm/py/fault_sweep.py). Families, in order: the verbs (ucontext, PD, CQ
# create/resize/destroy, SRQ create/modify/destroy, QP create for RC/UC/UD with every modify_qp
# transition and destroy, MR user/ODP/rereg/dereg, MW alloc and bind, AH, multicast attach and
# detach), rdma link add and del, the kernel verbs of tests/kmod/kverbs (a PD with the DMA MR of
# its global rkey, a fast-registration MR, kernel CQs and QPs: its module init under faults),
# and the driver module's own load and init. After each family kmemleak must find nothing, and
# at the end the driver module unloads. vm-run judges the kernel log (KASAN, lockdep, WARN).
#   fault-sweep.sh [quick]   quick: the first 25 fault positions of each operation (make check
#                            DEBUG=1); default: every position, until each operation succeeds
. "$(dirname "$0")/lib.sh"
mode=${1:-all}
py=$(dirname "$0")/py
limit=()
[ "$mode" != quick ] || limit=(--limit 25)
dbg=/sys/kernel/debug
if [ ! -d $dbg/failslab ] || [ ! -d $dbg/fail_page_alloc ]; then
	echo "FAIL no failslab/fail_page_alloc in debugfs (the debug kernel has them)"; exit 1
fi
# fail-nth alone decides: no probability, sleeping allocations too, every page order, no report
# per fault (a stack dump per injected fault would read as a kernel problem).
for a in failslab fail_page_alloc; do
	echo N >$dbg/$a/ignore-gfp-wait && echo 0 >$dbg/$a/verbose && echo 0 >$dbg/$a/probability
done
echo 0 >$dbg/fail_page_alloc/min-order
echo N >$dbg/fail_page_alloc/ignore-gfp-highmem

# sweep FAMILY…: fault_sweep.py on rxe0; rdma link add/del go to $NETDEV (a veth of its own:
# eth0 has rxe0 already, and a second rxe on one net device is EEXIST).
sweep() { python3 "$py/fault_sweep.py" rxe0 "$GID" "${NETDEV:-eth0}" "$@" "${limit[@]}"; }
family() {
	check "sweep $1" sweep "$1"
	grep -E '^fault positions|stopped after' /tmp/expect.out
	[ "$LAST_OK" = 1 ] || grep '^FAIL' /tmp/expect.out | head -n 40
	check "no leak after $1" no_new_leaks
}

rxe0_with_gid >/dev/null
mod=$(rxe_module "$DRIVER")
for f in ctx pd cq srq qp mr mw ah mcast; do family $f; done
check "veth fsv0/fsv1 for rdma link add/del" \
	sh -c 'ip link add fsv0 type veth peer name fsv1 && ip link set fsv0 up && ip link set fsv1 up'
NETDEV=fsv0 family link
ip link del fsv0
kverbs=$(dirname "$0")/../../.build/${VARIANT:-stock}/tests/kverbs/rxe_kverbs.ko
check "sweep kernel verbs (rxe_kverbs init: DMA MR, fast-registration MR, CQ, QPs)" \
	sweep "module=$kverbs:netdev=eth0"
grep '^fault positions' /tmp/expect.out
check "no leak after the kernel verbs" no_new_leaks
check "rdma link del rxe0" rdma link del rxe0
ko=$(modinfo -n "$mod")
check "rmmod $mod" rmmod "$mod"
check "sweep module load ($mod)" sweep "module=$ko"
grep '^fault positions' /tmp/expect.out
check "no leak after the module loads" no_new_leaks
check "modprobe $mod, rdma link add, rdma link del, rmmod" \
	sh -c "modprobe $mod && rdma link add rxe0 type rxe netdev eth0 && rdma link del rxe0 && rmmod $mod"
# A user ring's vmalloc_user made to fail prints the allocator's warning and stack (warn_alloc;
# C's rxe_queue_init allocates the same way): that is the injected failure, not a problem.
check "kernel log: only the allocator's reports of injected failures" injected_failures_only
tally
