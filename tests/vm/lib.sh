# Helpers for guest test scripts: each check prints ok/FAIL; summary exits non-zero on failure.
failures=0
# expect DESC CMD…: runs CMD, prints "ok DESC" or "FAIL DESC" with CMD's output; LAST_OK 1 or 0.
expect() {
	local what=$1 t0=$SECONDS; shift
	if "$@" >/tmp/expect.out 2>&1; then LAST_OK=1; echo "ok   $what  [$((SECONDS - t0)) s]"
	else LAST_OK=0; echo "FAIL $what: $*  [$((SECONDS - t0)) s]"; sed 's/^/     | /' /tmp/expect.out | tail -n 20; failures=$((failures + 1)); fi
}
summary() { [ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }; }

# check DESC CMD…: expect, counted for tally (one test case).
check() { checked=$((${checked:-0} + 1)); expect "$@"; }
# check_c_reported DESC CMD…: a check on rxe-rs; where the C driver takes part (DRIVER=c, or
# PEER_DRIVER=c across two VMs) the case runs and its outcome is printed as a note, not counted:
# for cases C fails, each with its reason where the test calls it (C_REASON, printed if set).
check_c_reported() {
	if [ "${DRIVER:-rs}" != c ] && [ "${PEER_DRIVER:-rs}" != c ]; then check "$@"; return; fi
	local what=$1 why=" (reported, not judged${C_REASON:+: $C_REASON})"
	shift
	if "$@" >/tmp/expect.out 2>&1; then LAST_OK=1; echo "note $what: passes on C$why"
	else LAST_OK=0; echo "note $what: fails on C$why: $*"; sed 's/^/     : /' /tmp/expect.out | tail -n 20; fi
}
# tally: "N passed, M failed" over the checks, then summary.
tally() { echo "$((${checked:-0} - failures)) passed, $failures failed"; summary; }

# tcp_listening PORT [NETNS]: something listens on TCP PORT (in network namespace NETNS). In this
# namespace, read from /proc/net/tcp{,6} by the shell itself: a poll starts no process, so a
# bench's instruction count (tests/vm/bench.sh) holds the perftest pair's work, not its
# harness's (`ss` and `grep` at every poll were millions of kernel instructions, page clearing
# and exec, as many times as the server took to listen). Each table is taken in one `read`:
# read line by line, the shell seeks back after each line, and every seek makes the kernel
# walk its whole socket hash again (7 M instructions a poll with a dozen sockets in TIME_WAIT).
tcp_listening() {
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" ss -Htln "sport = :$1" | grep -q .
		return
	fi
	local port f table
	printf -v port ':%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		IFS= read -r -d '' table <"$f"
		# A listener's line: the local port, a remote address of zeros, state 0A (LISTEN).
		[[ $table == *"$port "+(0)":0000 0A "* ]] && return 0
	done
	return 1
}

# nap SECONDS: waits SECONDS (a fraction allowed) without starting a process, as `read` times out
# on a FIFO nobody writes (opened read-write, so the open does not wait for a writer).
nap() {
	local fifo=/tmp/lib-nap.fifo
	[ -p "$fifo" ] || mkfifo "$fifo" 2>/dev/null || [ -p "$fifo" ] || { sleep "$1"; return 0; }
	read -r -t "$1" <>"$fifo"
	return 0
}

# wait_until SECONDS CONDITION: evaluates the command string CONDITION every 0.2 s until it
# succeeds (status 0) or it was tried SECONDS × 5 times (status 1). Bounded by tries, not by the
# clock: on a loaded host each try takes longer, and the wait with it.
wait_until() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		eval "$2" && return 0
		nap 0.2
	done
	return 1
}

# cm_listening COMM: an rdma_cm id of process COMM listens.
cm_listening() { rdma res show cm_id | grep -q "state LISTEN .*comm $1"; }

# counter LINK/PORT NAME: an rdma statistic counter (e.g. counter rxe0/1 completer_retry_err).
counter() { rdma statistic show link "$1" | awk -v k="$2" '{for (i = 1; i < NF; i++) if ($i == k) s += $(i + 1)} END {print s + 0}'; }

# veth_netns NS DEV0 DEV1 NET: namespace NS and a veth pair, DEV0 here as NET.1/24 and DEV1 in
# NS as NET.2/24 (NET: three octets, e.g. 10.20.0), both up, and NS's loopback.
veth_netns() {
	local ns=$1 d0=$2 d1=$3 net=$4
	ip netns add "$ns" &&
		ip link add "$d0" type veth peer name "$d1" &&
		ip link set "$d1" netns "$ns" &&
		ip addr add "$net.1/24" dev "$d0" && ip link set "$d0" up &&
		ip netns exec "$ns" ip addr add "$net.2/24" dev "$d1" &&
		ip netns exec "$ns" ip link set "$d1" up && ip netns exec "$ns" ip link set lo up
}

# netem_data DEV NETEM_ARGS…: netem (e.g. "loss 2%") on DEV's egress for every IP packet but
# 48-byte ones (bare RoCE ACKs/NAKs): a lost ACK of a peer's last message would leave that peer
# retrying forever once the other side has exited (retry_cnt 7 is infinite in both drivers).
# Undo with `tc qdisc del dev DEV root`.
netem_data() {
	local dev=$1; shift
	tc qdisc add dev "$dev" root handle 1: prio &&
		tc qdisc add dev "$dev" parent 1:2 handle 20: netem "$@" &&
		tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 match u16 48 0xffff at 2 flowid 1:1
}

# Two VMs (scripts/vm-run --two): a line-based control channel to the peer over TCP, to order
# the two sides' steps. peer_listen (once) records every line the peer sends in $PEER_LOG;
# peer_tell LINE sends one (retrying until the peer listens, up to 120 s); peer_hear WORDS
# [SEC] waits up to SEC (60) seconds for a line starting with WORDS and prints it.
PEER_PORT=${PEER_PORT:-18399} PEER_LOG=/tmp/peer-channel.log
peer_listen() {
	: >"$PEER_LOG"
	python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1])))
s.listen(16)
while True:
    c, _ = s.accept()
    data = c.makefile(errors="replace").read()
    c.close()
    with open(sys.argv[2], "a") as f:
        f.write(data)
' "$PEER_PORT" "$PEER_LOG" >/dev/null 2>&1 &
	wait_until 30 'tcp_listening "$PEER_PORT"'
}
peer_tell() {
	local t0=$SECONDS
	until timeout 5 bash -c 'echo "$1" >"/dev/tcp/$2/$3"' _ "$1" "$PEER_IP" "$PEER_PORT" 2>/dev/null; do
		[ $((SECONDS - t0)) -lt 120 ] || { echo "peer_tell: $PEER_IP:$PEER_PORT unreachable" >&2; return 1; }
		sleep 0.2
	done
}
peer_hear() {
	local t0=$SECONDS line
	while [ $((SECONDS - t0)) -lt "${2:-60}" ]; do
		line=$(grep -m 1 "^$1\( \|\$\)" "$PEER_LOG") && { echo "$line"; return 0; }
		sleep 0.2
	done
	echo "peer_hear: no '$1' from the peer in ${2:-60} s" >&2
	return 1
}

# gid_ipv4 DEV: index of DEV's IPv4 (::ffff:a.b.c.d, RoCE v2) GID on port 1.
gid_ipv4() { gid_with_prefix "$1" ::ffff:; }
# gid_with_prefix DEV PREFIX: index of DEV's first GID on port 1 whose address, as ibv_devinfo
# prints it, starts with PREFIX (fe80: for the IPv6 link-local GID, fd00: for an address of
# that prefix).
gid_with_prefix() {
	ibv_devinfo -v -d "$1" | sed -n "s/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*$2.*/\1/p" | head -n 1
}
# wait_gid DEV PREFIX: waits up to 5 s for DEV to have a GID starting with PREFIX (a GID follows
# its address through a netdev event).
wait_gid() { wait_until 5 "[ -n \"\$(gid_with_prefix $(printf '%q %q' "$1" "$2"))\" ]"; }

# rxe0_with_gid: `rdma link add rxe0` on eth0, then waits up to 5 s for its IPv4 GID; sets GID to
# its index (1 if none appeared) and prints it.
rxe0_with_gid() {
	rdma link add rxe0 type rxe netdev eth0
	wait_gid rxe0 ::ffff:
	GID=$(gid_ipv4 rxe0)
	echo "rxe0 IPv4 GID index: ${GID:-none}"
	GID=${GID:-1}
}

# bounded T CMD…: CMD under `timeout T` (status 124 when it ran out); a shell function, which
# `timeout` cannot run, runs in the background and is stopped after T seconds.
bounded() {
	local t=$1 pid sl done rc
	shift
	[ "$(type -t "$1")" = function ] || { timeout -k 5 "$t" "$@"; return; }
	"$@" &
	pid=$!
	sleep "$t" &
	sl=$!
	wait -n -p done "$pid" "$sl"
	rc=$?
	if [ "$done" = "$sl" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 124; fi
	kill "$sl" 2>/dev/null; wait "$sl" 2>/dev/null
	return "$rc"
}

# spawn_ready TIMEOUT READY LOG CMD…: starts CMD in the background under `timeout TIMEOUT`,
# output to LOG, and polls the command string READY for up to 30 s or until CMD exits. Sets
# SPAWNED_PID (call it in the shell that waits for CMD, not in a subshell).
spawn_ready() {
	local t=$1 ready=$2 log=$3 i
	shift 3
	# A command under `timeout` (stopped with it when killed); a function under bounded.
	if [ "$(type -t "$1")" = function ]; then bounded "$t" "$@" >"$log" 2>&1 & else timeout -k 5 "$t" "$@" >"$log" 2>&1 & fi
	SPAWNED_PID=$!
	for ((i = 0; i < 150; i++)); do
		eval "$ready" >/dev/null 2>&1 && break
		kill -0 "$SPAWNED_PID" 2>/dev/null || break
		nap 0.2
	done
}

# peer_served TAG TIMEOUT READY LOG SERVER_CMD…: the server's side of a case across two VMs
# (the peer runs the client): starts SERVER_CMD as spawn_ready does, says "ready TAG", and waits
# for it; it is stopped at once when the peer says "done TAG STATUS" with a failure. Its output,
# kept in LOG, is printed prefixed "[server] "; returns its status.
peer_served() {
	local tag=$1 t=$2 ready=$3 log=$4 pid line rc
	shift 4
	spawn_ready "$t" "$ready" "$log" "$@"
	pid=$SPAWNED_PID
	peer_tell "ready $tag"
	while kill -0 "$pid" 2>/dev/null; do
		line=$(grep -m 1 "^done $tag " "$PEER_LOG") && [ "${line##* }" != 0 ] && {
			echo "the client failed: server stopped"; kill "$pid"; break; }
		sleep 0.5
	done
	wait "$pid"
	rc=$?
	sed 's/^/[server] /' "$log"
	return "$rc"
}

# serve TIMEOUT READY SERVER_CMD… -- CLIENT_CMD…: a client/server pair, each under
# `timeout TIMEOUT`. Starts the server in the background, polls the command string READY (e.g.
# "tcp_listening 18515", or "sleep 2") for up to 30 s, runs the client, then waits for the
# server, which is stopped at once if the client failed. Prints the client's output, then the
# server's prefixed "[server] ". Succeeds only if both exit 0. With SERVE_ON_STALL set (a
# command), it runs 3 s before the timeout while both are still up, and its output (a few lines)
# is printed last, prefixed "[stalled] ", if the client then fails: the state of a hung exchange.
serve() {
	local t=$1 ready=$2 srv=() pid rc src watch=
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	spawn_ready "$t" "$ready" /tmp/serve.log "${srv[@]}"
	pid=$SPAWNED_PID
	rm -f /tmp/serve.stall
	if [ -n "${SERVE_ON_STALL:-}" ] && [ "$t" -gt 3 ]; then
		# Its own output only, so that no pipe of the caller's waits on its sleep.
		(sleep $((t - 3)) && eval "$SERVE_ON_STALL") >/tmp/serve.stall 2>&1 </dev/null &
		watch=$!
	fi
	bounded "$t" "$@"
	rc=$?
	[ -z "$watch" ] || { kill "$watch" 2>/dev/null; wait "$watch" 2>/dev/null; }
	[ "$rc" = 0 ] || { echo "client exit $rc"; kill "$pid" 2>/dev/null; }
	wait "$pid"
	src=$?
	sed 's/^/[server] /' /tmp/serve.log
	[ "$src" = 0 ] || echo "server exit $src"
	# Last, so that a failed check's tail (expect's 20 lines) holds it.
	[ "$rc" = 0 ] || [ ! -s /tmp/serve.stall ] || sed 's/^/[stalled] /' /tmp/serve.stall
	[ "$rc" = 0 ] && [ "$src" = 0 ]
}

# Under `vm-run --profile` (tools/insn-prof): prof_reset zeroes the instruction counts;
# prof_dump NAME saves them and the kernel's symbols (NAME.counts, NAME.syms in
# .build/insn-prof/) for scripts/prof-report. Each waits until the plugin has done it. Each VM
# of `vm-run --two` has its own plugin, controlled through ctl-$ROLE.
prof_ctl() {
	local dir=/src/rxe-rs/.build/insn-prof n=0
	local ctl=$dir/ctl-$ROLE
	[ "${INSN_PROF:-0}" = 1 ] || { echo "prof_ctl: not under vm-run --profile"; return 1; }
	echo "$1" >"$ctl.tmp" && mv "$ctl.tmp" "$ctl"
	# Under -icount,sleep=off an idle guest's clock jumps ahead: count polls, not seconds.
	while [ -e "$ctl" ] && [ $n -lt 100000 ]; do sleep 0.1; n=$((n + 1)); done
	[ ! -e "$ctl" ] || { echo "prof_ctl $1: no answer (vm-run --profile?)"; return 1; }
}
prof_reset() { prof_ctl reset; }
prof_dump() { prof_ctl "dump $1.counts" && cat /proc/kallsyms >"/src/rxe-rs/.build/insn-prof/$1.syms"; }

# perftest_cell TEST: the perftest run of a bench cell (tests/vm/bench.sh, wire-bench.sh). TEST is
# a perftest program with optional suffixes (_q8, _64B, _1M, _rate, _ev: bench.sh's top); sets
# PT_PROG, PT_ARGS (flags, size and iterations from BW_/LAT_/RATE_ITERS, BW_SIZE, LAT_SIZE), and
# PT_SIZE and PT_COL, the client's result line and column that perftest_result reads.
perftest_cell() {
	local iters=$BW_ITERS flags=()
	PT_PROG=$(grep -oE '^ib_[a-z]+_(bw|lat)' <<<"$1") PT_SIZE=$BW_SIZE PT_COL=4 # bw: BW average
	# pingpong_MODE_lat: tools/pingpong-lat -m MODE, in perftest's latency layout.
	case $1 in pingpong_*) PT_PROG=pingpong PT_MODE=$(cut -d_ -f2 <<<"$1") ;; esac
	case $1 in *_lat | *_lat_ev) PT_SIZE=$LAT_SIZE iters=$LAT_ITERS PT_COL=5 ;; esac # t_typical
	case $1 in *_ev) flags+=(-e) ;; esac
	case $1 in *_64B*) PT_SIZE=64 iters=$RATE_ITERS ;; esac
	case $1 in *_1M*) PT_SIZE=1048576 iters=$((BW_ITERS / 16)) ;; esac
	case $1 in *_q8*) flags+=(-q 8) iters=$((iters / 8)) ;; esac
	case $1 in *_rate) PT_COL=5 ;; esac # MsgRate[Mpps]
	PT_ARGS=("${flags[@]}" -s "$PT_SIZE" -n "$iters")
}
# perftest_result FILE: the number perftest_cell's column names in the client's output FILE
# (its result line: "#bytes #iterations …" then the numbers), or nothing.
perftest_result() {
	awk -v s="$PT_SIZE" -v c="$PT_COL" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= c { print $c; exit }' "$1"
}

# bench_table WHERE: the perftest table of tests/vm/bench.sh and wire-bench.sh, "test  c  rs
# rs/c" over $TESTS from their array result[DRIVER,TEST] (a number or FAIL), titled "perftest
# WHERE"; printed and written to /mnt/run/bench.txt. Fails if any cell is FAIL.
bench_table() {
	local t c rs ratio
	{
		echo "=== perftest $1 over rxe0 (bw: ${BW_ITERS} x ${BW_SIZE} B, MiB/s; _rate: Mpps; lat: ${LAT_ITERS} x ${LAT_SIZE} B, typical µs)"
		printf '%-24s %10s %10s %8s\n' test c rs rs/c
		for t in $TESTS; do
			c=${result[c,$t]:-FAIL} rs=${result[rs,$t]:-FAIL} ratio=-
			[ "$c" = FAIL ] || [ "$rs" = FAIL ] || ratio=$(awk -v a="$rs" -v b="$c" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
			printf '%-24s %10s %10s %8s\n' "$t" "$c" "$rs" "$ratio"
		done
	} | tee /tmp/bench.txt
	cp /tmp/bench.txt /mnt/run/bench.txt 2>/dev/null
	! grep -qw FAIL /tmp/bench.txt
}

# rxe_veth_pair: veth_netns rxens veth0 veth1 10.10.0 at MTU 9000, with rxe devices rxev0 on
# veth0 and rxev1 on veth1 (shared rdma netns mode, as the kernel's rxe_rping_between_netns.sh);
# succeeds once 10.10.0.2 answers a ping.
rxe_veth_pair() {
	veth_netns rxens veth0 veth1 10.10.0 &&
		ip link set veth0 mtu 9000 && ip netns exec rxens ip link set veth1 mtu 9000 &&
		rdma link add rxev0 type rxe netdev veth0 &&
		ip netns exec rxens rdma link add rxev1 type rxe netdev veth1 &&
		ping -c 1 -W 5 10.10.0.2 >/dev/null
}
# veth_pair_down: undoes rxe_veth_pair (both rxe devices, the veth pair, the namespace).
veth_pair_down() {
	rdma link del rxev0 && ip netns exec rxens rdma link del rxev1 &&
		ip link del veth0 && ip netns del rxens
}

# rxe_up c|rs: loads that driver alone and adds rxe0 on eth0. No udev in the VM: the verbs user
# interfaces are loaded as scripts/guest/init does. Only one driver may be loaded: both register
# link type "rxe", and rxe0 must come from the one named. rxe_down c|rs undoes it.
rxe_module() { if [ "$1" = c ]; then echo rdma_rxe; else echo rdma_rxe_rs; fi; }
rxe_up() {
	local mod other
	mod=$(rxe_module "$1") other=$(rxe_module "$([ "$1" = c ] && echo rs || echo c)")
	modprobe "$mod" && modprobe -a ib_uverbs rdma_ucm ib_umad && grep -q "^$mod " /proc/modules &&
		! grep -q "^$other " /proc/modules && rdma link add rxe0 type rxe netdev eth0
}
rxe_down() {
	local mod
	mod=$(rxe_module "$1")
	rdma link del rxe0 2>/dev/null
	modprobe -r "$mod" || rmmod "$mod" || echo "could not unload $mod"
}

# no_new_leaks: kmemleak (debug kernel) finds nothing; objects must be older than its minimum
# age to be reported, so it scans twice. What it found is printed and cleared.
no_new_leaks() {
	local k=/sys/kernel/debug/kmemleak
	[ -w $k ] || return 0
	echo scan >$k; sleep 6; echo scan >$k
	[ -s $k ] || return 0
	head -n 40 $k; echo clear >$k; return 1
}

# injected_failures_only: under fault injection the allocator reports each failure it was made
# to give (warn_alloc: "page allocation failure", "vmalloc error", with a stack dump). Succeeds
# if every stack dump in the kernel log is such a report and nothing else in it is a problem
# (scripts/vm-run's patterns), then clears the log, so that vm-run judges what comes after;
# otherwise prints the log's problems and leaves it for vm-run.
injected_failures_only() {
	local log
	log=$(dmesg)
	if grep -qE 'BUG:|WARNING:|Oops|KASAN|UBSAN|general protection fault|Kernel panic|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|rcu: INFO|detected stall|unreferenced object' <<<"$log"; then
		echo "the kernel log has more than injected allocation failures"; return 1
	fi
	# Each "Call Trace:" must be followed, within its first frames, by warn_alloc.
	if ! awk '/Call Trace:/ { open = 1; n = 0; next }
		open && /warn_alloc\+/ { open = 0 }
		open && ++n > 8 { bad = 1; open = 0 }
		END { exit bad || open }' <<<"$log"; then
		echo "a stack dump in the kernel log is not an allocation failure's"; return 1
	fi
	echo "$(grep -c 'Call Trace:' <<<"$log") injected allocation failure(s) reported by the allocator"
	dmesg -C
}
