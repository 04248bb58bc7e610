#!/bin/bash
# Guest test: SRP (SCSI RDMA Protocol) in loopback on rxe0 (eth0), as a storage administrator sets
# it up with LIO: the ib_srpt target exports a ramdisk LUN (rd_mcp backstore, configfs) and
# listens through rdma_cm (its discovery_auth/rdma_cm_port); the ib_srp initiator logs in by
# writing the target's address to its sysfs add_target (ib_srp.c's options: id_ext and
# ioc_guid are ib_srpt's service GUID, dest the IP and port) and gets a SCSI disk. Cases: login,
# fio with crc32c verification (direct and buffered), logout through the remote port's delete,
# 20 login/logout cycles, a session deleted under I/O (fio ends with an error, nothing hangs, a
# new login works), and the target's portal group disabled under I/O (the initiator's remote
# port fails, then is removed; the target logs every channel out).
# On the debug kernel (a packet takes milliseconds under KASAN and TCG) the fio runs are smaller
# and the cycles fewer.
#   srp.sh [CYCLES]   (default 20 login/logout cycles, 5 on the debug kernel)
. "$(dirname "$0")/lib.sh"
debug=0; [ "${VARIANT:-stock}" != debug ] || debug=1
cycles=${1:-$([ $debug = 1 ] && echo 5 || echo 20)}
size=$([ $debug = 1 ] && echo 4 || echo 16)     # MiB a verified fio run writes
ip=${IP:-10.0.2.15}
port=5555
tgt=/sys/kernel/config/target
rd=$tgt/core/rd_mcp_0/ramdisk0
lun_mb=64

rxe0_with_gid >/dev/null
check "modules ib_srpt ib_srp sd_mod" modprobe -a ib_srpt ib_srp sd_mod
# The target port's configfs name is its port GUID (the interface ID of GID 0, "%04x:…"), and
# an SRP login must name ib_srpt's service GUID (by default the first device's node GUID).
gid0=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)
port_guid=$(cut -d: -f5-8 <<<"$gid0")
svc=$(printf '%016x' "$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)")
tpg=$tgt/srpt/$port_guid/tpg_1
echo "target port $port_guid, service GUID $svc"
check "LIO: ramdisk LUN ($lun_mb MiB) exported by ib_srpt over rdma_cm port $port" sh -ec "
	mkdir -p $rd
	echo rd_pages=$((lun_mb * 256)) >$rd/control
	echo 1 >$rd/enable
	mkdir -p $tgt/srpt
	echo $port >$tgt/srpt/discovery_auth/rdma_cm_port
	mkdir -p $tpg/lun/lun_0
	ln -s $rd $tpg/lun/lun_0/ramdisk0
	mkdir -p $tpg/acls/$ip/lun_0
	ln -s $tpg/lun/lun_0 $tpg/acls/$ip/lun_0/lun_0
	echo 1 >$tpg/enable"

srp_host=/sys/class/infiniband_srp/srp-rxe0-1
target_spec="id_ext=$svc,ioc_guid=$svc,dest=$ip:$port"
# srp_disk: the block device of the LUN ib_srp added (sdX whose SCSI host is an SRP one).
srp_disk() {
	local d
	for d in /sys/class/scsi_host/host*/device/target*/*/block/*; do
		[ -e "$d" ] || continue
		grep -qx 'ib_srp' "${d%%/device/*}/proc_name" 2>/dev/null && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
rports() { ls -d /sys/class/srp_remote_ports/port-* 2>/dev/null; }
login() {
	# A logged-out target leaves ib_srp's list asynchronously (srp_remove_work): until then
	# add_target answers EEXIST.
	local i
	for i in $(seq 50); do
		echo "$target_spec" >"$srp_host/add_target" 2>/dev/null && break
		[ "$i" -lt 50 ] || { echo "add_target refused 50 times"; return 1; }
		sleep 0.2
	done
	wait_until 30 'd=$(srp_disk) && [ -b "$d" ]' && return 0
	echo "no SCSI disk from ib_srp"; return 1
}
logout() {
	local r
	for r in $(rports); do echo 1 >"$r/delete"; done
	wait_until 30 '[ -z "$(rports)" ] && ! srp_disk >/dev/null' && return 0
	echo "remote ports left: $(rports)"; return 1
}
# fio_verify NAME FIO_ARGS…: writes the LUN's first $size MiB with crc32c checksums, reads and checks.
fio_verify() {
	local dev
	dev=$(srp_disk) || { echo "no SRP disk"; return 1; }
	fio --name="$1" --filename="$dev" --size=${size}M --rw=randwrite --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 --output-format=terse "${@:2}" >/tmp/fio.out 2>&1 ||
		{ cat /tmp/fio.out; return 1; }
}

check "ib_srp logs in through $srp_host/add_target ($target_spec)" login
echo "SRP disk: $(srp_disk || echo none)"
check "SCSI inquiry of the LUN names LIO's ramdisk" sh -ec "
	d=\$(basename $(srp_disk || echo /dev/none))
	grep -q LIO-ORG /sys/block/\$d/device/vendor"
for bs in 4k 64k 1M; do
	check "fio bs=$bs direct, crc32c verified" fio_verify "direct-$bs" --bs=$bs --direct=1 --ioengine=libaio --iodepth=16
	check "fio bs=$bs buffered, crc32c verified" fio_verify "buffered-$bs" --bs=$bs --direct=0 --ioengine=psync
done
check "logout (srp_remote_ports/*/delete)" logout

cycle() {
	local i
	for i in $(seq "$cycles"); do
		login || { echo "login $i failed"; return 1; }
		dd if=/dev/urandom of=/tmp/blk bs=64k count=1 status=none
		dd if=/tmp/blk of="$(srp_disk)" bs=64k oflag=direct status=none &&
			cmp <(dd if="$(srp_disk)" bs=64k count=1 iflag=direct status=none) /tmp/blk ||
			{ echo "I/O in cycle $i failed"; return 1; }
		logout || { echo "logout $i failed"; return 1; }
	done
}
check "$cycles login/logout cycles, a 64 KiB write read back in each" cycle

# Under I/O: the session deleted by the initiator while fio writes. fio must end (with an error:
# its disk went away), within a bound, and a new session must work.
torn_down() {
	login || return
	fio --name=torn --filename="$(srp_disk)" --size=32M --rw=randwrite --bs=64k --direct=1 \
		--ioengine=libaio --iodepth=16 --time_based --runtime=60 >/tmp/fio-torn.out 2>&1 &
	local pid=$! t0=$SECONDS
	sleep 3
	kill -0 $pid || { echo "fio ended before the teardown"; cat /tmp/fio-torn.out; return 1; }
	logout || return
	while kill -0 $pid 2>/dev/null; do
		[ $((SECONDS - t0)) -lt 90 ] || { echo "fio still running after the session's deletion"; kill -9 $pid; return 1; }
		sleep 0.5
	done
	wait $pid && { echo "fio succeeded on a deleted disk"; return 1; }
	login && fio_verify after-teardown --bs=64k --direct=1 --ioengine=libaio --iodepth=8 && logout
}
check "session deleted under I/O: fio ends, a new login verifies data" torn_down

# The target side: the portal group disabled under I/O. ib_srpt disconnects the channel; ib_srp's
# remote port goes to its reconnect loop and I/O fails or waits; a logout then removes it, and the
# target, re-enabled, accepts a new login.
target_down() {
	login || return
	fio --name=tdown --filename="$(srp_disk)" --size=32M --rw=randwrite --bs=64k --direct=1 \
		--ioengine=libaio --iodepth=16 --time_based --runtime=30 >/tmp/fio-tdown.out 2>&1 &
	local pid=$! r
	sleep 3
	echo 0 >"$tpg/enable"
	sleep 5
	for r in $(rports); do echo 1 >"$r/fast_io_fail_tmo" 2>/dev/null; done
	logout || return
	wait_until 90 "! kill -0 $pid 2>/dev/null"
	kill -0 $pid 2>/dev/null && { echo "fio hangs after the logout"; kill -9 $pid; return 1; }
	wait $pid
	echo 1 >"$tpg/enable"
	login && fio_verify after-target-down --bs=4k --direct=1 --ioengine=libaio --iodepth=16 && logout
}
check "target portal group disabled under I/O: logout, re-enable, a new login verifies data" target_down

check "LIO torn down" sh -ec "
	echo 0 >$tpg/enable
	rm $tpg/acls/$ip/lun_0/lun_0; rmdir $tpg/acls/$ip/lun_0 $tpg/acls/$ip
	rm $tpg/lun/lun_0/ramdisk0; rmdir $tpg/lun/lun_0 $tpg $tgt/srpt/$port_guid
	echo 0 >$tgt/srpt/discovery_auth/rdma_cm_port
	rmdir $tgt/srpt
	rmdir $rd $tgt/core/rd_mcp_0"
check "modules ib_srp ib_srpt unload" modprobe -r ib_srp ib_srpt
check "rdma link del rxe0" rdma link del rxe0
tally
