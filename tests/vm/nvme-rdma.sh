#!/bin/bash
# Guest test: fast registration (alloc_mr, map_mr_sg, REG_MR, remote and local invalidate)
# through a kernel ULP. NVMe over RDMA in loopback on rxe0 (eth0): nvmet-rdma exports a brd
# ramdisk, nvme-rdma connects to it; the host registers every data buffer with a REG_MR and the
# target answers with SEND_WITH_INV of its rkey. Writes a random pattern with O_DIRECT, reads it
# back, compares.
. "$(dirname "$0")/lib.sh"
ip=${IP:-10.0.2.15}
nqn=rxe-rs-test
cfg=/sys/kernel/config/nvmet
check "rdma link add rxe0 type rxe netdev eth0" rdma link add rxe0 type rxe netdev eth0
check "modules nvmet-rdma nvme-rdma brd" sh -ec "modprobe -a nvmet nvmet-rdma nvme-rdma; modprobe brd rd_nr=1 rd_size=65536"
check "nvmet: ramdisk subsystem on rdma port $ip:4420" sh -ec "
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir $cfg/subsystems/$nqn
	echo 1 > $cfg/subsystems/$nqn/attr_allow_any_host
	mkdir $cfg/subsystems/$nqn/namespaces/1
	echo /dev/ram0 > $cfg/subsystems/$nqn/namespaces/1/device_path
	echo 1 > $cfg/subsystems/$nqn/namespaces/1/enable
	mkdir $cfg/ports/1
	echo rdma > $cfg/ports/1/addr_trtype
	echo ipv4 > $cfg/ports/1/addr_adrfam
	echo $ip > $cfg/ports/1/addr_traddr
	echo 4420 > $cfg/ports/1/addr_trsvcid
	ln -s $cfg/subsystems/$nqn $cfg/ports/1/subsystems/$nqn"
check "nvme-rdma connects" sh -ec "
	echo transport=rdma,traddr=$ip,trsvcid=4420,nqn=$nqn > /dev/nvme-fabrics
	for i in \$(seq 50); do [ -b /dev/nvme0n1 ] && exit 0; sleep 0.2; done; exit 1"
head -c 16M /dev/urandom >/tmp/pattern
for bs in 4k 64k 1M; do
	# test -b: without the namespace, dd would write a regular file /dev/nvme0n1 and pass.
	check "write 16 MiB bs=$bs O_DIRECT" sh -ec "
		test -b /dev/nvme0n1
		dd if=/tmp/pattern of=/dev/nvme0n1 bs=$bs oflag=direct status=none"
	check "read back bs=$bs O_DIRECT, same bytes" sh -ec "
		test -b /dev/nvme0n1
		dd if=/dev/nvme0n1 of=/tmp/back bs=$bs count=\$((16 * 1024 * 1024 / \$(numfmt --from=iec $bs | tr -d ' '))) iflag=direct status=none
		cmp /tmp/pattern /tmp/back"
	[ ! -b /dev/nvme0n1 ] || dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=16 oflag=direct status=none
done
check "nvme disconnect" sh -ec "echo 1 > /sys/class/nvme/nvme0/delete_controller"
rm -f $cfg/ports/1/subsystems/$nqn; rmdir $cfg/ports/1 $cfg/subsystems/$nqn/namespaces/1 $cfg/subsystems/$nqn
check "rdma link del rxe0" rdma link del rxe0
tally
