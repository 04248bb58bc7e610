#!/bin/bash
# Diagnostic, not a test (it asserts nothing): slab usage around a loopback SRQ ping-pong,
# 64 KiB at path MTU 256 (16 QPs), sampled while it runs. Run it in a VM, e.g. side by side:
#   scripts/vm-run --driver rs --debug --timeout 1500 -- env N=64 EVERY=20 TOPS=1 scripts/guest/slab-probe.sh
#   scripts/vm-run --driver c  --debug --timeout 1500 -- env N=64 EVERY=20 TOPS=1 scripts/guest/slab-probe.sh
# N: exchanges (512); EVERY: seconds between samples (2); TOPS=1: the largest caches at each sample.
N=${N:-512}
slab() {
	awk '/^(Slab|SUnreclaim)/{printf "%s %s kB  ", $1, $2}' /proc/meminfo
	awk '$1 == "rtable" {printf "rtable %d live", $2}' /proc/slabinfo; echo
}
top_slabs() { awk 'NR>2 {printf "%10d kB %s (%d objs)\n", $3*$4/1024, $1, $3}' /proc/slabinfo | sort -rn | head -8; }
rdma link add rxe0 type rxe netdev eth0
echo "before: $(slab)"
(while sleep "${EVERY:-2}"; do echo "during: $(slab)"; [ -z "${TOPS:-}" ] || top_slabs | head -4; done) &
mon=$!
timeout 600 ibv_srq_pingpong -d rxe0 -g 1 -c -m 256 -s 65536 -n "$N" -p 18800 >/tmp/srv.log 2>&1 &
srv=$!
sleep 3
timeout 600 ibv_srq_pingpong -d rxe0 -g 1 -c -m 256 -s 65536 -n "$N" -p 18800 10.0.2.15 | tail -1
echo "client rc=${PIPESTATUS[0]}"
wait "$srv"; echo "server rc=$?"; tail -1 /tmp/srv.log
echo "largest caches now:"; top_slabs
kill "$mon"
sleep 3; echo "after run: $(slab)"
rdma link del rxe0; sleep 3; echo "after link del: $(slab)"
top_slabs
