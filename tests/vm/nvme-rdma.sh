#!/bin/bash
# Guest test: fast registration (alloc_mr, map_mr_sg, REG_MR, remote and local invalidate)
# through a kernel ULP. NVMe over RDMA in loopback on rxe0 (eth0): nvmet-rdma exports a brd
# ramdisk, nvme-rdma connects to it; the host registers every data buffer with a REG_MR and the
# target answers with SEND_WITH_INV of its rkey. Writes a random pattern with O_DIRECT, reads it
# back, compares; at two MTUs (below).
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
# Twice: at eth0's MTU 1500 (path MTU 1024: payloads copied) and 9000 (path MTU 4096: rxe-rs
# sends the payloads of the target's RDMA WRITEs and the host's READ responses by reference,
# page fragments of the ULPs' own pages; a kprobe counts them).
kp=/sys/kernel/tracing
head -c 16M /dev/urandom >/tmp/pattern
for mtu in 1500 9000; do
	ip link set eth0 mtu $mtu
	if [ "$mtu" = 9000 ] && [ "${DRIVER:-rs}" != c ]; then
		echo 'p:rxe_rs_frag rxe_rs_skb_attach_page' >>"$kp/kprobe_events"
		echo 1 >"$kp/events/kprobes/rxe_rs_frag/enable"
	fi
	check "MTU $mtu: nvme-rdma connects" sh -ec "
		echo transport=rdma,traddr=$ip,trsvcid=4420,nqn=$nqn > /dev/nvme-fabrics
		for i in \$(seq 50); do [ -b /dev/nvme0n1 ] && exit 0; sleep 0.2; done; exit 1"
	for bs in 4k 64k 1M; do
		# test -b: without the namespace, dd would write a regular file /dev/nvme0n1 and pass.
		check "MTU $mtu: write 16 MiB bs=$bs O_DIRECT" sh -ec "
			test -b /dev/nvme0n1
			dd if=/tmp/pattern of=/dev/nvme0n1 bs=$bs oflag=direct status=none"
		check "MTU $mtu: read back bs=$bs O_DIRECT, same bytes" sh -ec "
			test -b /dev/nvme0n1
			dd if=/dev/nvme0n1 of=/tmp/back bs=$bs count=\$((16 * 1024 * 1024 / \$(numfmt --from=iec $bs | tr -d ' '))) iflag=direct status=none
			cmp /tmp/pattern /tmp/back"
		[ ! -b /dev/nvme0n1 ] || dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=16 oflag=direct status=none
	done
	check "MTU $mtu: nvme disconnect" sh -ec "echo 1 > /sys/class/nvme/nvme0/delete_controller
		for i in \$(seq 50); do [ ! -e /sys/class/nvme/nvme0 ] && exit 0; sleep 0.2; done; exit 1"
	if [ "$mtu" = 9000 ] && [ "${DRIVER:-rs}" != c ]; then
		frags=$(awk '$1 == "rxe_rs_frag" { print $2 }' "$kp/kprobe_profile")
		echo 0 >"$kp/events/kprobes/rxe_rs_frag/enable"
		echo '-:rxe_rs_frag' >>"$kp/kprobe_events"
		echo "page fragments attached: ${frags:-none}"
		check "MTU 9000: rxe-rs sent the ULPs' pages by reference (page fragments attached)" \
			test "${frags:-0}" -gt 1000
	fi
done
ip link set eth0 mtu 1500
rm -f $cfg/ports/1/subsystems/$nqn; rmdir $cfg/ports/1 $cfg/subsystems/$nqn/namespaces/1 $cfg/subsystems/$nqn
check "rdma link del rxe0" rdma link del rxe0
tally
