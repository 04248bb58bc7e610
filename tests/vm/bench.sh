#!/bin/bash
# Guest (--driver none; run by scripts/bench, `make bench`): perftest loopback over rxe0 on eth0
# for the C rdma_rxe and rxe-rs, one after the other in this VM with the same flags: server and
# client here, client to 127.0.0.1. Prints a table "test  c  rs  rs/c" (bandwidth: perftest's
# BW average in MB/s = MiB/s; latency: t_typical in µs) and writes it to /mnt/run/bench.txt.
# A test that fails, times out or prints no result is FAIL (ratio "-"); every other cell still
# runs. Exits 1 if any cell failed.
set -u
. "$(dirname "$0")/lib.sh"

TEST_TIMEOUT=${TEST_TIMEOUT:-120} # seconds per perftest run (server and client each)
BW_ITERS=${BW_ITERS:-5000}        # ib_*_bw at BW_SIZE: 5000 x 64 KiB = 312 MiB each
LAT_ITERS=${LAT_ITERS:-5000}      # ib_*_lat at LAT_SIZE
# _64B: 40000 messages, a second or two here; with 5000 (0.1-0.2 s) start-up weighs and the
# 8-QP rate of one build spread over 0.017-0.054 Mpps in six runs (40000: 0.028-0.057, five of
# them 0.047-0.057).
RATE_ITERS=${RATE_ITERS:-40000}
BW_SIZE=65536 LAT_SIZE=2
# A test is a perftest program with optional suffixes: _q8 (8 QPs, -q 8, iterations per QP
# divided by 8), _64B (RATE_ITERS 64-byte messages), _1M (1 MiB messages, a sixteenth of the
# iterations), _rate (the message rate in Mpps instead of the bandwidth), _ev (-e: sleep on CQ
# events). pingpong_send_lat and pingpong_write_lat: busy-polling latency as ib_send_lat and
# ib_write_lat measure it, LAT_ITERS x LAT_SIZE, between two QPs driven by one thread
# (tools/pingpong-lat: the measure that holds under -icount, where two busy-polling processes
# measure TCG's vCPU switching).
TESTS=${TESTS:-ib_write_bw ib_read_bw ib_send_bw ib_write_bw_q8 ib_read_bw_q8 ib_send_bw_q8 \
ib_send_bw_64B_rate ib_send_bw_64B_q8_rate ib_write_bw_1M ib_send_lat ib_write_lat ib_send_lat_ev \
pingpong_send_lat pingpong_write_lat}
# BUSY_POLL_LAT=0 (scripts/bench under ICOUNT): without the busy-polling latency cells.
if [ "${BUSY_POLL_LAT:-1}" = 0 ]; then
	# shellcheck disable=SC2086 # TESTS is a list
	TESTS=$(printf '%s\n' $TESTS | grep -vxE 'ib_(send|write)_lat' | tr '\n' ' ')
	echo "counted run: ib_send_lat and ib_write_lat left out (busy polling waits for a vCPU switch)"
fi
DRIVERS=${DRIVERS:-c rs}
# MTU=9000: eth0's MTU (path MTU 4096, where rxe-rs sends payloads by reference); default 1500
# (path MTU 1024).
[ -z "${MTU:-}" ] || ip link set eth0 mtu "$MTU"
# PIN=0: no CPU pinning (the scheduler places server and client).
# PROFILE=1 (under `vm-run --profile`): each test's guest instruction profile, saved by
# prof_dump DRIVER-TEST[-mtuMTU].
if [ "${PIN:-1}" = 1 ]; then SERVER_CPU="taskset -c 0" CLIENT_CPU="taskset -c 1"; else SERVER_CPU= CLIENT_CPU=; fi
port=18700 # perftest's TCP port: a new one per run (perf runs in a subshell: counted by the caller)
declare -A result

# pingpong-lat, built here against the guest's libibverbs when a cell needs it.
PINGPONG=/tmp/pingpong-lat
case " $TESTS " in *" pingpong_"*)
	gcc -O2 -Wall -o "$PINGPONG" "$(dirname "$0")/../../tools/pingpong-lat/pingpong-lat.c" -libverbs -lm ||
		echo "pingpong-lat: build failed (its cells will FAIL)" ;;
esac

# perf TEST: one perftest run on rxe0; prints the number for the table, or nothing. TEST is a
# perftest program, or ib_send_lat_ev: ib_send_lat -e (both sides sleep on CQ events instead of
# busy-polling), or pingpong_send_lat / pingpong_write_lat (one pingpong-lat process).
perf() {
	local t=$1 gid
	perftest_cell "$t"
	gid=$(gid_ipv4 rxe0)
	[ "${PROFILE:-0}" = 0 ] || prof_reset || return
	# shellcheck disable=SC2086 # the CPU prefixes are words or nothing
	if [ "$PT_PROG" = pingpong ]; then
		# One process, on the client's CPU; it takes perftest's -s and -n.
		timeout -k 5 "$TEST_TIMEOUT" $CLIENT_CPU "$PINGPONG" "${PT_ARGS[@]}" -d rxe0 -x "${gid:-1}" \
			-m "$PT_MODE" >"/tmp/$t.out" 2>&1 || { cat "/tmp/$t.out"; return 1; }
	else
		# Server on CPU 0, client on CPU 1, the same placement every run. (With the vCPUs in
		# turn, MTTCG=0, latency is bimodal per boot all the same: a busy-polling peer sees a
		# completion when TCG switches to its vCPU; see Documentation/data-path.md, "Latency
		# under TCG".)
		serve "$TEST_TIMEOUT" "tcp_listening $port" $SERVER_CPU "$PT_PROG" "${PT_ARGS[@]}" -d rxe0 -x "${gid:-1}" -F -p "$port" -- \
			$CLIENT_CPU "$PT_PROG" "${PT_ARGS[@]}" -d rxe0 -x "${gid:-1}" -F -p "$port" 127.0.0.1 >"/tmp/$t.out" 2>&1 || return
	fi
	[ "${PROFILE:-0}" = 0 ] || prof_dump "$drv-$t${MTU:+-mtu$MTU}" || return
	perftest_result "/tmp/$t.out"
}

for drv in $DRIVERS; do
	echo "=== $drv: $(rxe_module "$drv")"
	if rxe_up "$drv"; then
		for t in $TESTS; do
			port=$((port + 1))
			v=$(perf "$t")
			# The whole result line too (latency: min, max, typical, average, stdev, 99 %, 99.9 %).
			if [ -n "$v" ]; then
				result[$drv,$t]=$v
				echo "$t: $v"
				grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' "/tmp/$t.out" | tail -n 2 | sed 's/^/    | /'
			else result[$drv,$t]=FAIL; echo "$t: FAIL"; sed 's/^/    | /' "/tmp/$t.out" | tail -n 15; fi
		done
	else
		echo "could not load $(rxe_module "$drv") alone or add rxe0"
	fi
	rxe_down "$drv"
done

bench_table "loopback"
