#!/bin/bash
# Guest (scripts/vm-run --driver none --mttcg -- tests/vm/cpu-split.sh): where one perftest
# loopback run spends each CPU, for the C rdma_rxe and rxe-rs in turn: server on CPU 0, client on
# CPU 1 (as make bench), /proc/stat read before and after. Prints perftest's result line and, per
# CPU, the ticks (USER_HZ) of user, system, softirq and idle time the run took; setup is
# included, so make the run long (N) next to it. Not a test: a measure for
# Documentation/performance.md.
#   PROG=ib_send_bw FLAGS="-q 8 -s 64" N=10000 DRIVERS="c rs"
set -u
. tests/vm/lib.sh

PROG=${PROG:-ib_send_bw} FLAGS=${FLAGS:--q 8 -s 64} N=${N:-10000} DRIVERS=${DRIVERS:-c rs}
port=19100
# cpu_ticks: "cpuN user system idle softirq" for each CPU.
cpu_ticks() { awk '$1 ~ /^cpu[0-9]+$/ { print $1, $2 + $3, $4, $5 + $6, $8 }' /proc/stat; }

for drv in $DRIVERS; do
	if ! rxe_up "$drv"; then
		echo "could not load $(rxe_module "$drv") alone or add rxe0"
		exit 1
	fi
	gid=$(gid_ipv4 rxe0)
	port=$((port + 1))
	cpu_ticks >/tmp/ticks.0
	# shellcheck disable=SC2086 # FLAGS are words
	serve 300 "tcp_listening $port" taskset -c 0 "$PROG" $FLAGS -d rxe0 -x "${gid:-1}" -F -n "$N" -p "$port" -- \
		taskset -c 1 "$PROG" $FLAGS -d rxe0 -x "${gid:-1}" -F -n "$N" -p "$port" 127.0.0.1 >/tmp/split.out 2>&1
	cpu_ticks >/tmp/ticks.1
	echo "=== $drv: $PROG $FLAGS -n $N"
	grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' /tmp/split.out | tail -n 2
	paste -d ' ' /tmp/ticks.0 /tmp/ticks.1 |
		awk '{ printf "%s user %d system %d idle %d softirq %d\n", $1, $7 - $2, $8 - $3, $9 - $4, $10 - $5 }'
	rxe_down "$drv"
done
