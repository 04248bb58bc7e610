#!/bin/bash
# Guest: run rdma-core's python suite (from python3-pyverbs) against DEV and print per-module
# counts plus a TOTAL line:  pytests.sh DEV [MODULE...]
# Every test's result goes to /tmp/pytests-results.txt as "tests.MODULE.CLASS.TEST RESULT"
# (RESULT: ok, FAIL, ERROR, skipped).
# The modules run in one python process, as upstream runs the suite (each process imports every
# test module: seconds under TCG), but for test_flow and test_parent_domain, after which python
# may crash at exit on rxe (either driver): each runs in a process of its own. A process that
# dies before its summary otherwise may have cut a module short: from the last module it reported on,
# each module runs again in a process of its own, whose results replace the first ones.
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
# Compiled bytecode goes to the guest's /tmp, not into the read-only guest root. Warnings
# (unittest shows each ResourceWarning) would split a test's line from its result.
export PYTHONPYCACHEPREFIX=/tmp/pycache PYTHONWARNINGS=ignore
declare -A result
# suite LOG MODULE...: one python process over MODULEs, its output to LOG; each test's result
# into result[ID]. Returns python's exit status.
suite() {
	local log=$1 rc id r
	shift
	timeout 1200 python3 tests/run_tests.py --dev "$dev" -v "${@/#/tests.}" >"$log" 2>&1
	rc=$?
	# "name (tests.m.Class.name)" starts a test (a docstring may follow on the next line);
	# " ... RESULT" ends it, or RESULT at the start of a line when another process's output came
	# in between. A test started without a result is printed with what followed it.
	while read -r id r; do result[$id]=$r; done < <(awk '
		function end(r) { sub(/ .*/, "", r); print id, r; id = "" }
		match($0, /\(tests\.[A-Za-z0-9_.]+\)/) {
			if (id != "") print "no result read for " id ":\n" text >"/dev/stderr"
			id = substr($0, RSTART + 1, RLENGTH - 2); text = "" }
		id != "" && match($0, / \.\.\. (ok|FAIL|ERROR|skipped)/) { end(substr($0, RSTART + 5)); next }
		id != "" && /^(ok|FAIL|ERROR)$|^skipped / { end($0); next }
		id != "" { text = text "    | " $0 "\n" }
		END { if (id != "") print "no result read for " id ":\n" text >"/dev/stderr" }' "$log")
	return "$rc"
}
# reported MODULE: some test of MODULE has a result.
reported() {
	local id
	for id in "${!result[@]}"; do [[ $id == "tests.$1."* ]] && return 0; done
	return 1
}
# again FROM MODULE...: MODULEs from index FROM on, each in a process of its own.
again() {
	local m id
	for m in "${@:$(($1 + 2))}"; do
		for id in "${!result[@]}"; do [[ $id == "tests.$m."* ]] && unset "result[$id]"; done
		suite "/tmp/pytest-$m.log" "$m"
		echo "$m in a process of its own: exit $?"
	done
}
group=() alone=()
for m in "${mods[@]}"; do
	case $m in test_flow | test_parent_domain) alone+=("$m") ;; *) group+=("$m") ;; esac
done
if [ ${#group[@]} -gt 0 ]; then
	suite /tmp/pytest-all.log "${group[@]}"
	rc=$?
	echo "${#group[@]} modules in one process: exit $rc"
	if ! grep -aqE '^Ran [0-9]+ tests? in' /tmp/pytest-all.log; then
		last=0
		for i in "${!group[@]}"; do reported "${group[$i]}" && last=$i; done
		again "$last" "${group[@]}"
	fi
fi
again 0 "${alone[@]}"
for id in "${!result[@]}"; do echo "$id ${result[$id]}"; done | sort >/tmp/pytests-results.txt
# count PREFIX: "ok N fail N error N skipped N" of the tests whose ID starts with PREFIX.
count() {
	awk -v p="$1" 'index($1, p) == 1 { n[$2]++ } END {
		printf "ok %3d  fail %2d  error %2d  skipped %3d\n", n["ok"], n["FAIL"], n["ERROR"], n["skipped"] }' \
		/tmp/pytests-results.txt
}
for m in "${mods[@]}"; do
	printf '%-28s %s\n' "$m" "$(count "tests.$m.")"
	awk -v p="tests.$m." 'index($1, p) == 1 && ($2 == "FAIL" || $2 == "ERROR") { print "    " $1 " ... " $2 }' \
		/tmp/pytests-results.txt
done
echo "TOTAL $(count tests. | tr -s ' ')"
