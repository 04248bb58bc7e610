#!/bin/bash
# Guest test (--driver none): `ibv_devinfo -v` of our device against the C driver's on the same
# netdev. Allowed differences: the GUIDs, and max_cqe (C 32767; rxe-rs 524287, the CQ libfabric's
# ofi_rxm opens: proto/params.rs MAX_LOG_CQE). On-demand paging included: its caps must be C's.
set -u
. "$(dirname "$0")/lib.sh"
ko="/src/rxe-rs/.build/$VARIANT/rdma_rxe_rs.ko"
capture() { # DRIVER_LOAD DRIVER_UNLOAD OUT
	eval "$1" && rdma link add rxe0 type rxe netdev eth0 && ibv_devinfo -v -d rxe0 >"$3" &&
		rdma link del rxe0 && eval "$2"
}
expect "C driver: link add, ibv_devinfo -v, link del, rmmod" \
	capture "modprobe rdma_rxe" "modprobe -r rdma_rxe" /tmp/devinfo-c.txt
expect "rxe-rs: link add, ibv_devinfo -v, link del, rmmod" \
	capture "modprobe -a ib_core udp_tunnel ip6_udp_tunnel && insmod $ko" "rmmod rdma_rxe_rs" /tmp/devinfo-rs.txt
# Drop the GUIDs and max_cqe.
mask() { grep -vE 'node_guid|sys_image_guid|max_cqe:' "$1"; }
expect "max_cqe: C 32767, rxe-rs 524287" sh -c \
	'grep -Eq "max_cqe:\s+32767$" /tmp/devinfo-c.txt && grep -Eq "max_cqe:\s+524287$" /tmp/devinfo-rs.txt'
mask /tmp/devinfo-c.txt >/tmp/devinfo-c.masked; mask /tmp/devinfo-rs.txt >/tmp/devinfo-rs.masked
diff -u /tmp/devinfo-c.masked /tmp/devinfo-rs.masked >/tmp/devinfo.diff
expect "diff ran" test $? -le 1
expect "both outputs describe a port" sh -c 'grep -q "port:\s*1" /tmp/devinfo-c.masked && grep -q "port:\s*1" /tmp/devinfo-rs.masked'
cat /tmp/devinfo.diff
expect "ibv_devinfo -v is the C driver's, GUIDs aside (ODP caps included)" test ! -s /tmp/devinfo.diff
summary
