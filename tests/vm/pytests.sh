#!/bin/bash
# Guest: run rdma-core's python suite (from python3-pyverbs) against DEV, one process per
# generic test module (test_flow and test_parent_domain crash python at exit on rxe), and
# print per-module counts plus a TOTAL line:  pytests.sh DEV [MODULE...]
dev=${1:-rxe0}; shift || true
cd /opt/rdma-core-tests
mods=("$@")
if [ ${#mods[@]} = 0 ]; then
	for f in tests/test_*.py; do
		m=$(basename "$f" .py)
		case "$m" in test_mlx5_* | test_efa* | test_irdma*) continue ;; esac
		mods+=("$m")
	done
fi
export PYTHONDONTWRITEBYTECODE=1
tp=0 tf=0 ts=0 te=0
for m in "${mods[@]}"; do
	log=/tmp/pytest-$m.log
	timeout 600 python3 tests/run_tests.py --dev "$dev" -v "tests.$m" >"$log" 2>&1
	rc=$?
	ok=$(grep -cE ' \.\.\. ok$' "$log"); fail=$(grep -cE ' \.\.\. FAIL$' "$log")
	err=$(grep -cE ' \.\.\. ERROR$' "$log"); skip=$(grep -cE ' \.\.\. skipped' "$log")
	printf '%-28s ok %3d  fail %2d  error %2d  skipped %3d  (exit %d)\n' "$m" "$ok" "$fail" "$err" "$skip" "$rc"
	grep -aE " \.\.\. (FAIL|ERROR)$" "$log" | sed 's/^/    /'
	tp=$((tp + ok)) tf=$((tf + fail)) te=$((te + err)) ts=$((ts + skip))
done
echo "TOTAL ok $tp fail $tf error $te skipped $ts"
