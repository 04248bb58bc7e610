#!/bin/bash
# Guest (vm-run --two --driver none; run on both VMs by `WIRE=1 scripts/bench`): perftest between
# the two VMs, over their virtio NICs joined by a UNIX stream socket (QEMU's stream network), for the C rdma_rxe and
# rxe-rs in turn, the same driver on both sides: B serves, A is the client. Every packet is on a
# wire, with its ICRC, unlike tests/vm/bench.sh's loopback. A prints the table "test  c  rs  rs/c"
# (bandwidth: perftest's BW average in MB/s = MiB/s; _rate: Mpps; latency: t_typical in µs) and
# writes it to /mnt/run/bench.txt. Under `vm-run --profile` (PROFILE=1) each side saves each
# test's instruction profile as DRIVER-TEST[-mtuMTU]-ROLE, for scripts/bench's table of kernel
# instructions per message on either side. Tests, sizes and MTU as in bench.sh (TESTS, BW_ITERS,
# LAT_ITERS, RATE_ITERS, MTU), with fewer default iterations: each packet crosses two emulated
# NICs. A test that fails or times out is FAIL; exits 1 if any did.
# RPS=1: each side steers received packets over both CPUs by flow (Receive Packet Steering, the
# software form of a multi-queue NIC's RSS; each QP has its own UDP source port). RPS=0 or 1:
# each side prints, per test, each CPU's kernel time (system and softirq ticks of USER_HZ): where
# the QPs' work ran.
set -u
. "$(dirname "$0")/lib.sh"

TEST_TIMEOUT=${TEST_TIMEOUT:-300}
BW_ITERS=${BW_ITERS:-1000}
LAT_ITERS=${LAT_ITERS:-2000}
RATE_ITERS=${RATE_ITERS:-10000}
BW_SIZE=65536 LAT_SIZE=2
TESTS=${TESTS:-ib_write_bw ib_read_bw ib_send_bw ib_send_bw_64B_rate ib_send_lat}
DRIVERS=${DRIVERS:-c rs}
[ -z "${MTU:-}" ] || ip link set eth0 mtu "$MTU"
# No transparent huge pages: whether perftest's buffers get one, and the kernel then clears 2 MiB
# at once, varies from run to run (168 M instructions of one test's 285 M in one profile).
echo never >/sys/kernel/mm/transparent_hugepage/enabled
peer_listen || { echo "wire-bench: no control channel"; exit 1; }
[ "${RPS:-0}" = 0 ] || echo 3 >/sys/class/net/eth0/queues/rx-0/rps_cpus || exit
# cpu_kernel_ticks: "cpuN system softirq" for each CPU.
cpu_kernel_ticks() { awk '$1 ~ /^cpu[0-9]+$/ { print $1, $4, $8 }' /proc/stat; }
port=18700 n=0
declare -A result

# perf TEST: this side's half of one perftest run between the VMs (B the server, A the client);
# on A prints the number for the table, or nothing.
perf() {
	local t=$1 gid line rc cmd
	perftest_cell "$t"
	gid=$(gid_ipv4 rxe0)
	cmd=("$PT_PROG" "${PT_ARGS[@]}" -d rxe0 -x "${gid:-1}" -F -p "$port")
	[ "${PROFILE:-0}" = 0 ] || prof_reset || return
	cpu_kernel_ticks >/tmp/ticks.0
	if [ "$ROLE" = b ]; then
		spawn_ready "$TEST_TIMEOUT" "tcp_listening $port" "/tmp/$t.out" "${cmd[@]}"
		peer_tell "ready $n" || return
		wait "$SPAWNED_PID"
		rc=$?
	else
		peer_hear "ready $n" "$TEST_TIMEOUT" >/dev/null || return
		timeout -k 5 "$TEST_TIMEOUT" "${cmd[@]}" "$PEER_IP" >"/tmp/$t.out" 2>&1
		rc=$?
	fi
	cpu_kernel_ticks >/tmp/ticks.1
	[ -z "${RPS:-}" ] || paste -d ' ' /tmp/ticks.0 /tmp/ticks.1 |
		awk -v who="$drv $t $ROLE" '{ printf "%s %s: system %d softirq %d\n", who, $1, $5 - $2, $6 - $3 }' >&2
	[ "${PROFILE:-0}" = 0 ] || prof_dump "$drv-$t${MTU:+-mtu$MTU}-$ROLE" || return
	peer_tell "done $n $rc" || return
	line=$(peer_hear "done $n" "$TEST_TIMEOUT") || return
	[ "$rc" = 0 ] && [ "${line##* }" = 0 ] || { echo "exit $rc, peer's ${line##* }" >&2; return 1; }
	[ "$ROLE" = a ] || return 0
	perftest_result "/tmp/$t.out"
}

for drv in $DRIVERS; do
	echo "=== $drv: $(rxe_module "$drv")"
	n=$((n + 1))
	up=0
	rxe_up "$drv" && up=1
	peer_tell "up $n $up" && line=$(peer_hear "up $n" 120) && [ "$up" = 1 ] && [ "${line##* }" = 1 ] ||
		{ echo "could not add rxe0 over $(rxe_module "$drv") on both sides"; rxe_down "$drv"; continue; }
	for t in $TESTS; do
		port=$((port + 1)) n=$((n + 1))
		v=$(perf "$t" 2>/tmp/perf.err)
		grep -E "^$drv $t [ab] cpu[0-9]+:" /tmp/perf.err
		[ "$ROLE" = a ] || continue
		if [ -n "$v" ]; then
			result[$drv,$t]=$v
			echo "$t: $v"
			grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' "/tmp/$t.out" | tail -n 2 | sed 's/^/    | /'
		else
			result[$drv,$t]=FAIL
			echo "$t: FAIL"
			cat /tmp/perf.err "/tmp/$t.out" | tail -n 15 | sed 's/^/    | /'
		fi
	done
	rxe_down "$drv"
done
[ "$ROLE" = a ] || exit 0

bench_table "between two VMs"
