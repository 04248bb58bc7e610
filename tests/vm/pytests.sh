#!/bin/bash
# Guest: run rdma-core's python suite (from python3-pyverbs) against DEV, one process per
# generic test module (test_flow and test_parent_domain crash python at exit on rxe), and
# print per-module counts plus a TOTAL line:  pytests.sh DEV [MODULE...]
# Every test's result goes to /tmp/pytests-results.txt as "tests.MODULE.CLASS.TEST RESULT"
# (RESULT: ok, FAIL, ERROR, skipped).
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
: >/tmp/pytests-results.txt
tp=0 tf=0 ts=0 te=0
for m in "${mods[@]}"; do
	log=/tmp/pytest-$m.log
	timeout 600 python3 tests/run_tests.py --dev "$dev" -v "tests.$m" >"$log" 2>&1
	rc=$?
	ok=$(grep -acE ' \.\.\. ok$' "$log"); fail=$(grep -acE ' \.\.\. FAIL$' "$log")
	err=$(grep -acE ' \.\.\. ERROR$' "$log"); skip=$(grep -acE ' \.\.\. skipped' "$log")
	printf '%-28s ok %3d  fail %2d  error %2d  skipped %3d  (exit %d)\n' "$m" "$ok" "$fail" "$err" "$skip" "$rc"
	grep -aE ' \.\.\. (FAIL|ERROR)$' "$log" | sed 's/^/    /'
	# "name (tests.m.Class.name)" starts a test (a docstring may follow on the next line);
	# " ... RESULT" ends it.
	awk '{ if (match($0, /\(tests\.[A-Za-z0-9_.]+\)/)) id = substr($0, RSTART + 1, RLENGTH - 2)
	       if (id != "" && match($0, / \.\.\. (ok|FAIL|ERROR|skipped)/)) {
	           r = substr($0, RSTART + 5); sub(/ .*/, "", r); print id, r; id = "" } }' "$log" \
		>>/tmp/pytests-results.txt
	tp=$((tp + ok)) tf=$((tf + fail)) te=$((te + err)) ts=$((ts + skip))
done
echo "TOTAL ok $tp fail $tf error $te skipped $ts"
