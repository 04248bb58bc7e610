# Helpers for guest test scripts: each check prints ok/FAIL; summary exits non-zero on failure.
failures=0
expect() {
	local what=$1; shift
	if "$@" >/tmp/expect.out 2>&1; then echo "ok   $what"
	else echo "FAIL $what: $*"; sed 's/^/     | /' /tmp/expect.out | tail -n 20; failures=$((failures + 1)); fi
}
summary() { [ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }; }
