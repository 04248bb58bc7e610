#!/bin/bash
# Guest test: NVMe over RDMA in loopback on rxe0 (eth0), set up as the kernel's nvmet configfs
# documents it and driven with nvme-cli, as an administrator does. The target (nvmet-rdma)
# exports one subsystem with two namespaces, a brd ramdisk (block device backend) and a file on
# tmpfs (file backend); the host (nvme-rdma) registers every data buffer with a REG_MR and the
# target answers with SEND_WITH_INV of its rkey (fast registration through a kernel ULP).
# Cases: discovery; a connection with two I/O queues; fio with crc32c verification at 4 KiB,
# 64 KiB and 1 MiB, direct and buffered, on both namespaces; a controller reset under I/O; the
# target's port removed and re-added while connected (the host reconnects, I/O resumes, fio's
# verification finds nothing lost); eth0 taken down and up under I/O within the keep-alive; 50
# connect/disconnect cycles; at path MTU 4096 (eth0 MTU 9000), where rxe-rs sends the payloads
# of the target's RDMA WRITEs and the host's READ responses by reference (page fragments of the
# ULPs' own pages; a kprobe counts them), 16 MiB written and read back; last, eth0 down under
# I/O within the keep-alive and beyond it (the host reconnects once the link is back).
#
# On C the two link cases are reported, not judged: C fails a send that finds no route (eth0
# down) with LOC_QP_OP_ERR and moves the QP to the error state, UD QPs too. The host's QPs fail,
# it reconnects at once, and the CM REQ its reconnect sends while the link is down leaves QP1 in
# ERR for good (`rdma res show qp`: GSI state ERR): no REQ goes out again, the host stays
# "connecting" until its controller loss timeout and fio fails. rxe-rs drops a UD datagram it
# cannot route, as a lossy fabric would, and QP1 keeps working.
#
# On the debug kernel the target's port is never removed: lockdep reports nvmet's own lock
# inversion (the port's removal holds nvmet_config_sem and destroys the listening rdma_cm_id,
# taking its handler_mutex; a queue's ESTABLISHED event, under handler_mutex, runs the connect
# commands that arrived before it, which take nvmet_config_sem), seen whenever the host's first
# SEND overtakes the target's RTU: usual with rxe-rs, whose receive path completes inline
# (data-path.md). There the port-removal case and the teardown are left out, and the fio runs
# and cycles are smaller (a packet takes milliseconds under KASAN and TCG).
#   nvme-rdma.sh [CYCLES]   (default 50 connect/disconnect cycles, 10 on the debug kernel)
. "$(dirname "$0")/lib.sh"
debug=0; [ "${VARIANT:-stock}" != debug ] || debug=1
cycles=${1:-$([ $debug = 1 ] && echo 10 || echo 50)}
size=$([ $debug = 1 ] && echo 4 || echo 16)     # MiB a verified fio run writes
io_size=$((2 * size))                            # MiB written under a disruption
ip=${IP:-10.0.2.15}
nqn=rxe-rs-test
cfg=/sys/kernel/config/nvmet
ss=$cfg/subsystems/$nqn
# Short reconnect delay and keep-alive, a bounded controller loss: a lost controller is seen in
# seconds, and reconnects within the cases' bounds.
conn_opts=(-t rdma -a "$ip" -s 4420 -n "$nqn" --nr-io-queues=2 --keep-alive-tmo=5 --reconnect-delay=1
	--ctrl-loss-tmo=60)
# nvme-cli keeps its host NQN and ID in /etc/nvme; the guest root is read-only.
if [ ! -w /etc ]; then cp -a /etc /tmp/etc-rw && mount --bind /tmp/etc-rw /etc; fi
mkdir -p /etc/nvme
[ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn >/etc/nvme/hostnqn
[ -s /etc/nvme/hostid ] || cat /proc/sys/kernel/random/uuid >/etc/nvme/hostid

check "rdma link add rxe0 type rxe netdev eth0" rdma link add rxe0 type rxe netdev eth0
check "modules nvmet-rdma nvme-rdma brd" sh -ec "modprobe -a nvmet nvmet-rdma nvme-rdma; modprobe brd rd_nr=1 rd_size=65536"
truncate -s 64M /tmp/nvmet-ns2.img
port_add() {
	mkdir $cfg/ports/1 &&
		echo rdma >$cfg/ports/1/addr_trtype && echo ipv4 >$cfg/ports/1/addr_adrfam &&
		echo "$ip" >$cfg/ports/1/addr_traddr && echo 4420 >$cfg/ports/1/addr_trsvcid &&
		ln -s $ss $cfg/ports/1/subsystems/$nqn
}
port_del() { rm -f $cfg/ports/1/subsystems/$nqn && rmdir $cfg/ports/1; }
check "nvmet: subsystem with a ramdisk and a file namespace on rdma port $ip:4420" sh -ec "
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir $ss
	echo 1 > $ss/attr_allow_any_host
	mkdir $ss/namespaces/1 $ss/namespaces/2
	echo /dev/ram0 > $ss/namespaces/1/device_path
	echo /tmp/nvmet-ns2.img > $ss/namespaces/2/device_path
	echo 1 > $ss/namespaces/1/enable
	echo 1 > $ss/namespaces/2/enable"
check "nvmet: port up" port_add

check "nvme discover lists the subsystem" sh -ec "
	nvme discover -t rdma -a $ip -s 4420 >/tmp/discover.out
	cat /tmp/discover.out
	grep -q 'subnqn: *$nqn' /tmp/discover.out && grep -q 'trtype: *rdma' /tmp/discover.out"

ctrl() { grep -lx "$nqn" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -n 1 | xargs -r dirname; }
# ns N: the block device of namespace N (nvmeXnN, the multipath head where there is one; one
# subsystem here).
ns() { local d; d=$(ls /sys/block | grep -E -m 1 "^nvme[0-9]+n$1\$") && echo "/dev/$d"; }
connected() {
	wait_until 30 '[ -n "$(ctrl)" ] && [ "$(cat "$(ctrl)/state" 2>/dev/null)" = live ] && [ -b "$(ns 1)" ] && [ -b "$(ns 2)" ]' &&
		return 0
	echo "controller: $(ctrl) state $(cat "$(ctrl)/state" 2>/dev/null)"; return 1
}
connect() { nvme connect "${conn_opts[@]}" >/dev/null && connected; }
disconnect() {
	nvme disconnect -n "$nqn" >/dev/null || return
	wait_until 30 '[ -z "$(ctrl)" ]' && return 0
	echo "controller still there: $(ctrl)"; return 1
}
# fio_verify DEV NAME FIO_ARGS…: $size MiB of random writes with crc32c checksums, read back, checked.
fio_verify() {
	local dev=$1; shift
	[ -b "$dev" ] || { echo "no block device $dev"; return 1; }
	fio --name="$1" --filename="$dev" --size=${size}M --rw=randwrite --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 "${@:2}" >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; return 1; }
}
reconnects() { dmesg | grep -c 'Successfully reconnected'; }
# reconnected_after N: the host logged a reconnect since it had logged N.
reconnected_after() { [ "$(reconnects)" -gt "$1" ] || { echo "no reconnect logged"; return 1; }; }
# under_io WHAT CMD…: fio writes $io_size MiB of namespace 1 with checksums while CMD runs, then reads
# it all back and checks it. WHAT names the disruption in the messages.
under_io() {
	local what=$1; shift
	fio --name=under-io --filename="$(ns 1)" --size=${io_size}M --rw=write --bs=64k --direct=1 \
		--ioengine=libaio --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--rate=4m >/tmp/fio-io.out 2>&1 &
	local pid=$! t0=$SECONDS rc=0
	sleep 2
	kill -0 $pid 2>/dev/null || { echo "fio ended before $what"; cat /tmp/fio-io.out; return 1; }
	"$@" || { echo "$what failed"; rc=1; }
	# fio ends within 120 s, unless the controller stays down: not live for 30 s in a row after
	# the disruption is over, it is not coming back within the cases' bounds.
	local down=0
	while kill -0 $pid 2>/dev/null; do
		[ $((SECONDS - t0)) -lt 120 ] && [ $down -lt 60 ] || break
		if [ "$(cat "$(ctrl)/state" 2>/dev/null)" = live ]; then down=0; else down=$((down + 1)); fi
		sleep 0.5
	done
	if kill -0 $pid 2>/dev/null; then
		# Not waited for: a process blocked in I/O outlives SIGKILL.
		echo "fio still running $((SECONDS - t0)) s after $what began; the host's controller: $(cat "$(ctrl)/state" 2>/dev/null)"
		kill -9 $pid
		return 1
	fi
	wait $pid || { echo "fio failed across $what:"; tail -n 20 /tmp/fio-io.out; rc=1; }
	connected || rc=1
	return $rc
}

check "nvme connect (2 I/O queues): controller live, namespaces 1 and 2" connect
check "2 I/O queues and the admin queue" sh -ec "test \$(cat $(ctrl)/queue_count) = 3"
for bs in 4k 64k 1M; do
	check "ns 1 (ramdisk) fio bs=$bs direct, crc32c verified" \
		fio_verify "$(ns 1)" "d-$bs" --bs=$bs --direct=1 --ioengine=libaio --iodepth=16
	check "ns 1 (ramdisk) fio bs=$bs buffered, crc32c verified" \
		fio_verify "$(ns 1)" "b-$bs" --bs=$bs --direct=0 --ioengine=psync
done
check "ns 2 (file) fio bs=64k direct, crc32c verified" \
	fio_verify "$(ns 2)" d-file --bs=64k --direct=1 --ioengine=libaio --iodepth=16
check "ns 2 (file) fio bs=4k buffered, crc32c verified" \
	fio_verify "$(ns 2)" b-file --bs=4k --direct=0 --ioengine=psync

reset_twice() {
	local c; c=$(ctrl)
	echo 1 >"$c/reset_controller" && connected && sleep 1 && echo 1 >"$c/reset_controller" && connected
}
check "controller reset twice under I/O: fio completes, data verified" under_io "the resets" reset_twice
port_bounce() { local n; n=$(reconnects); port_del && sleep 4 && port_add && connected && reconnected_after "$n"; }
[ $debug = 1 ] || check "target port removed for 4 s and re-added under I/O: reconnect, data verified" \
	under_io "the port's removal" port_bounce
check "nvme disconnect" disconnect

cycle() {
	local i
	for i in $(seq "$cycles"); do
		connect || { echo "connect $i failed"; return 1; }
		disconnect || { echo "disconnect $i failed"; return 1; }
	done
}
check "$cycles connect/disconnect cycles" cycle

# At path MTU 4096: the target's WRITEs and the host's READ responses by reference (rxe-rs).
kp=/sys/kernel/tracing
head -c ${size}M /dev/urandom >/tmp/pattern
ip link set eth0 mtu 9000
if [ "${DRIVER:-rs}" != c ]; then
	echo 'p:rxe_rs_frag rxe_rs_skb_attach_page' >>"$kp/kprobe_events"
	echo 1 >"$kp/events/kprobes/rxe_rs_frag/enable"
fi
check "MTU 9000: nvme connect" connect
for bs in 4k 64k 1M; do
	check "MTU 9000: $size MiB bs=$bs O_DIRECT written and read back, same bytes" sh -ec "
		dev=$(ns 1); test -b \$dev
		dd if=/tmp/pattern of=\$dev bs=$bs oflag=direct status=none
		dd if=\$dev of=/tmp/back bs=$bs count=\$(($size * 1024 * 1024 / \$(numfmt --from=iec $bs))) iflag=direct status=none
		cmp /tmp/pattern /tmp/back
		dd if=/dev/zero of=\$dev bs=1M count=$size oflag=direct status=none"
done
check "MTU 9000: nvme disconnect" disconnect
if [ "${DRIVER:-rs}" != c ]; then
	frags=$(awk '$1 == "rxe_rs_frag" { print $2 }' "$kp/kprobe_profile")
	echo 0 >"$kp/events/kprobes/rxe_rs_frag/enable"
	echo '-:rxe_rs_frag' >>"$kp/kprobe_events"
	echo "page fragments attached: ${frags:-none}"
	check "MTU 9000: rxe-rs sent the ULPs' pages by reference (page fragments attached)" \
		test "${frags:-0}" -gt $((size * 60))
fi
ip link set eth0 mtu 1500

link_bounce() { ip link set eth0 down && sleep "$1" && ip link set eth0 up && wait_gid rxe0 ::ffff:; }
link_bounce_reconnect() { local n; n=$(reconnects); link_bounce "$1" && connected && reconnected_after "$n"; }
check "nvme connect" connect
check_c_reported "eth0 down 2 s (within the 5 s keep-alive) under I/O: data verified" \
	under_io "eth0 down 2 s" link_bounce 2
# On C, QP1 is dead once a MAD found no route (see the top): nothing connects again this boot.
if [ "${DRIVER:-rs}" = c ] && [ "$(cat "$(ctrl)/state" 2>/dev/null)" != live ]; then
	echo "note eth0 down 12 s: not run on C, whose controller is $(cat "$(ctrl)/state" 2>/dev/null) and QP1 in ERR"
	echo "note no teardown on C: its controller cannot reconnect (see the top)"
	rdma res show qp | grep GSI
	tally
	exit
fi
check_c_reported "eth0 down 12 s (beyond the keep-alive) under I/O: reconnect, data verified" \
	under_io "eth0 down 12 s" link_bounce_reconnect 12
if [ "${DRIVER:-rs}" = c ] && [ "$(cat "$(ctrl)/state" 2>/dev/null)" != live ]; then
	echo "note no teardown on C: its controller cannot reconnect (see the top)"
	tally
	exit
fi
check "nvme disconnect" disconnect

if [ $debug = 1 ]; then
	echo "debug kernel: the target's port stays (see the top), and with it nvmet-rdma"
	tally
	exit
fi
check "nvmet torn down" sh -ec "
	rm -f $cfg/ports/1/subsystems/$nqn; rmdir $cfg/ports/1
	echo 0 > $ss/namespaces/1/enable; echo 0 > $ss/namespaces/2/enable
	rmdir $ss/namespaces/1 $ss/namespaces/2 $ss"
check "modules nvme-rdma nvmet-rdma unload" modprobe -r nvme-rdma nvmet-rdma
check "rdma link del rxe0" rdma link del rxe0
tally
