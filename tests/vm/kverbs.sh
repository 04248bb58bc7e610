#!/bin/bash
# Guest test (either driver): the kernel-verbs paths, ib_post_send/ib_post_recv from kernel QPs,
# that otherwise only nvme-rdma exercises. tests/kmod/kverbs (rxe_kverbs.ko, built by
# scripts/build-module) connects two RC QPs of the RDMA device on eth0 to each other over its
# IPv4 RoCEv2 GID and checks, against the C driver's semantics (rxe_verbs.c validate_send_wr,
# rxe_post_send, rxe_post_recv; rxe_resp.c, rxe_mr.c): a receive posted in RESET and a send
# posted in INIT are refused; RDMA WRITE and READ through the PD's unsafe global rkey; an atomic
# through it completes with REM_ACCESS_ERR (that rkey has no REMOTE_ATOMIC); validate_send_wr's
# refusals (short atomic SGE, misaligned atomic, inline READ, too many SGEs: -EINVAL, bad_wr,
# nothing posted) leave the QP working; an inline SEND lands in the peer's receive; a
# fast-registration MR (ib_alloc_mr, REG_MR) takes an RDMA WRITE through its rkey. The module
# runs its 13 checks in init and logs one line each; this script prints them and checks the
# module's counts. Run it on both drivers, and on the debug kernel (KASAN, kmemleak):
#   scripts/build-module && scripts/vm-run --driver rs --timeout 900 -- tests/vm/kverbs.sh
#   scripts/vm-run --driver c --timeout 900 -- tests/vm/kverbs.sh
#   scripts/build-module --debug &&
#	scripts/vm-run --driver rs --debug --timeout 3000 -- tests/vm/kverbs.sh
. "$(dirname "$0")/lib.sh"
ko="$(dirname "$0")/../../.build/${VARIANT:-stock}/tests/kverbs/rxe_kverbs.ko"
params=/sys/module/rxe_kverbs/parameters
expected=13
link_up() {
	local gid=""
	rdma link add rxk0 type rxe netdev eth0 || return 1
	wait_gid rxk0 ::ffff:
	gid=$(gid_ipv4 rxk0)
	echo "rxk0 IPv4 GID index: ${gid:-none}"
	[ -n "$gid" ]
}
check "rdma link add rxk0 type rxe netdev eth0, with an IPv4 GID ($DRIVER driver)" link_up
check "insmod rxe_kverbs.ko netdev=eth0" insmod "$ko" netdev=eth0
dmesg | grep 'rxe_kverbs: '
passed=$(cat $params/passed 2>/dev/null) failed=$(cat $params/failed 2>/dev/null)
check "rxe_kverbs: no check failed ($failed)" test "$failed" = 0
check "rxe_kverbs: all $expected checks passed ($passed)" test "$passed" = "$expected"
check "rmmod rxe_kverbs" rmmod rxe_kverbs
check "rdma link del rxk0" rdma link del rxk0
tally
