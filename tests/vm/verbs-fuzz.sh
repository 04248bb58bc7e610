#!/bin/bash
# Guest test (either driver): the verbs fuzzer (tests/vm/py/verbs_fuzz.py): four processes issue
# random verbs with well-formed and malformed attributes on rxe0, post traffic to their own and
# each other's QPs, and are killed at random. On the debug kernel, failslab and fail_page_alloc
# fail 1 % of the workers' allocations meanwhile (task-filter: the workers only). Afterwards the
# device's object counts are back to what they were, an RC pingpong with data checked runs,
# the device and the module go, and kmemleak finds nothing; vm-run judges the kernel log.
# The fuzzer itself ends with an RC SEND between fresh QPs, data compared.
#   verbs-fuzz.sh [SECONDS [SEED]]   (default 120 s, a random seed; the seed is printed)
. "$(dirname "$0")/lib.sh"
seconds=${1:-120}
seed=${2:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "verbs-fuzz: seed $seed (reproduce: tests/vm/verbs-fuzz.sh $seconds $seed)"
dbg=/sys/kernel/debug
rxe0_with_gid >/dev/null
mod=$(rxe_module "$DRIVER")
faults=()
if [ -d $dbg/failslab ] && [ -d $dbg/fail_page_alloc ]; then
	for a in failslab fail_page_alloc; do
		echo N >$dbg/$a/ignore-gfp-wait && echo 0 >$dbg/$a/verbose && echo Y >$dbg/$a/task-filter &&
			echo 1 >$dbg/$a/interval && echo -1 >$dbg/$a/times && echo 1 >$dbg/$a/probability
	done
	echo 0 >$dbg/fail_page_alloc/min-order
	faults=(--faults)
fi
# counts: the device's object counts (rdma res: pd, cq, qp, mr, ctx, srq, …).
counts() { rdma res show rxe0 | sed 's/^[0-9]*: rxe0: //'; }
before=$(counts)
check "verbs_fuzz: seed $seed, $seconds s, 4 workers killed at random${faults:+, 1 % of their allocations failing}" \
	timeout $((seconds + 300)) python3 "$(dirname "$0")/py/verbs_fuzz.py" rxe0 "$GID" --seed "$seed" \
	--seconds "$seconds" --workers 4 "${faults[@]}"
grep '^verbs_fuzz' /tmp/expect.out
for a in failslab fail_page_alloc; do [ ! -d $dbg/$a ] || echo 0 >$dbg/$a/probability; done
# The allocator reports the failures it was made to give; anything else stays for vm-run.
[ ${#faults[@]} = 0 ] || check "kernel log: only the allocator's reports of injected failures" injected_failures_only
grep 'injected allocation' /tmp/expect.out
# Objects of killed processes are released by their file's release (may take a moment).
same_counts() {
	wait_until 20 '[ "$(counts)" = "$before" ]' && return 0
	echo "before: $before"; echo "after:  $(counts)"; return 1
}
check "rxe0's object counts as before the fuzzer ($before)" same_counts
# With faults, nothing new is started from the guest's root afterwards (9p: see verbs_fuzz.py's
# worker_main); without, ibv_rc_pingpong runs too.
[ ${#faults[@]} != 0 ] || check "ibv_rc_pingpong -c 4 KiB x 100 afterwards" serve 120 "tcp_listening 18515" \
	ibv_rc_pingpong -d rxe0 -g "$GID" -n 100 -s 4096 -c -- ibv_rc_pingpong -d rxe0 -g "$GID" -n 100 -s 4096 -c 127.0.0.1
check "rdma link del rxe0" rdma link del rxe0
check "rmmod $mod" rmmod "$mod"
check "kmemleak: nothing" no_new_leaks
tally
