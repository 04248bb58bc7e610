# Helpers for guest test scripts: each check prints ok/FAIL; summary exits non-zero on failure.
failures=0
expect() {
	local what=$1; shift
	if "$@" >/tmp/expect.out 2>&1; then echo "ok   $what"
	else echo "FAIL $what: $*"; sed 's/^/     | /' /tmp/expect.out | tail -n 20; failures=$((failures + 1)); fi
}
summary() { [ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }; }

# check DESC CMD…: expect, counted for tally (one test case).
check() { checked=$((${checked:-0} + 1)); expect "$@"; }
# tally: "N passed, M failed" over the checks, then summary.
tally() { echo "$((${checked:-0} - failures)) passed, $failures failed"; summary; }

# tcp_listening PORT [NETNS]: something listens on TCP PORT (in network namespace NETNS).
tcp_listening() { ${2:+ip netns exec "$2"} ss -Htln "sport = :$1" | grep -q .; }

# gid_ipv4 DEV: index of DEV's IPv4 (::ffff:a.b.c.d, RoCE v2) GID on port 1.
gid_ipv4() { ibv_devinfo -v -d "$1" | sed -n 's/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:.*/\1/p' | head -n 1; }

# serve TIMEOUT READY SERVER_CMD… -- CLIENT_CMD…: a client/server pair, each under
# `timeout TIMEOUT`. Starts the server in the background, polls the command string READY (e.g.
# "tcp_listening 18515", or "sleep 2") for up to 30 s, runs the client, then waits for the
# server, which is stopped at once if the client failed. Prints the client's output, then the
# server's prefixed "[server] ". Succeeds only if both exit 0.
serve() {
	local t=$1 ready=$2 srv=() pid rc src
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	timeout -k 5 "$t" "${srv[@]}" >/tmp/serve.log 2>&1 &
	pid=$!
	for _ in $(seq 150); do
		eval "$ready" >/dev/null 2>&1 && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	timeout -k 5 "$t" "$@"
	rc=$?
	[ "$rc" = 0 ] || { echo "client exit $rc"; kill "$pid" 2>/dev/null; }
	wait "$pid"
	src=$?
	sed 's/^/[server] /' /tmp/serve.log
	[ "$src" = 0 ] || echo "server exit $src"
	[ "$rc" = 0 ] && [ "$src" = 0 ]
}
