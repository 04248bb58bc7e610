#!/bin/bash
# Guest test (--driver rs): our module is loaded into the stock kernel, owns link type "rxe",
# answers `rdma link add` honestly (no device yet: EOPNOTSUPP), and unloads/reloads cleanly.
set -u
. "$(dirname "$0")/lib.sh"
ko="/src/rxe-rs/.build/$VARIANT/rdma_rxe_rs.ko"

expect "module is loaded" grep -qw '^rdma_rxe_rs' /proc/modules
expect "module depends on ib_core" sh -c "modinfo -F depends $ko | grep -qw ib_core"
expect "the C rdma_rxe is not loaded" sh -c '! grep -qw "^rdma_rxe" /proc/modules'
out=$(rdma link add rxe0 type rxe netdev eth0 2>&1); rc=$?
expect "rdma link add is refused for now" test "$rc" != 0
expect "  with EOPNOTSUPP" sh -c "echo '$out' | grep -q 'Operation not supported'"
expect "  and our module saw the request" sh -c "dmesg | grep -q 'rdma_rxe_rs: rdma link add rxe0 netdev eth0'"
expect "no rxe device was left behind" sh -c '! rdma link show | grep -q rxe0'
expect "the C rdma_rxe did not auto-load" sh -c '! grep -qw "^rdma_rxe" /proc/modules'
expect "rmmod" rmmod rdma_rxe_rs
expect "insmod again (link type re-registers)" insmod "$ko"
expect "rmmod again" rmmod rdma_rxe_rs
summary
