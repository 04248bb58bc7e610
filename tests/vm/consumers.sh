#!/bin/bash
# Guest test: the programs users run over a soft-RoCE device, as a user runs them, over rxe0 on
# eth0, on the driver vm-run loaded (rs or c): in one VM (loopback through the device), or across
# two (vm-run --two, the same command on both VMs: B runs every server, A every client, in step
# over lib.sh's control channel; mpirun on A starts B's rank through tests/vm/py/rsh.py).
# Each case is judged by the program's own success output and by rxe0's counters (sent_pkts must
# move: a silent fall-back to TCP or shared memory does not count); across two VMs, on each side,
# and it passes only if both sides' commands succeed. Every case prints a line
#   result PROGRAM CASE ok|FAIL
# that scripts/check-consumers turns into the table of both drivers.
#   consumers.sh [quick]   quick: one case of each program (make check); default: all of them
# Programs: UCX (ucx_info, ucx_perftest over rc_v and ud_v), Open MPI over UCX (mpi4py, point
# to point and collectives, data checked), libfabric (fi_info, fi_pingpong over verbs msg and
# verbs;ofi_rxm rdm), NFS over RDMA (v3 and v4.2, fio --verify), iSER (LIO's ib_isert,
# open-iscsi's iser transport), rsockets (rstream, riostream, librspreload.so under an ordinary
# TCP program). SMB Direct: Debian's kernel builds neither CONFIG_SMB_SERVER_SMBDIRECT nor
# CONFIG_CIFS_SMB_DIRECT, so there is nothing to run.
. "$(dirname "$0")/lib.sh"
mode=${1:-all}
here=$(cd "$(dirname "$0")" && pwd)
# side: both (one VM), server (B of two) or client (A); srv_ip: where the servers listen.
if [ -n "${PEER_IP:-}" ]; then
	if [ "$ROLE" = b ]; then side=server srv_ip=$IP; else side=client srv_ip=$PEER_IP; fi
	peer_listen || { echo "FAIL control channel: no listener on $PEER_PORT"; exit 1; }
else
	side=both srv_ip=${IP:-10.0.2.15}
fi

# The guest root is read-only: daemons and tools get writable copies of their state.
if [ ! -w /etc ]; then cp -a /etc /tmp/etc-rw && mount --bind /tmp/etc-rw /etc; fi

rxe0_with_gid >/dev/null
sent() { counter rxe0/1 sent_pkts; }
# consumer [--listing] PROGRAM CASE CMD…: one case; passes when CMD succeeds and rxe0 sent
# packets (--listing: a device listing, which sends none). While $on_c is set to a reason, the
# case runs where C takes part as well but is reported there, not judged (the reason is at the
# case). xcase numbers the cases, the same on both VMs (they run the same ones in order).
on_c="" xcase=0
consumer() {
	local traffic=1
	[ "$1" != --listing ] || { traffic=0; shift; }
	local prog=$1 name=$2
	shift 2
	xcase=$((xcase + 1))
	if [ -n "$on_c" ]; then
		C_REASON=$on_c check_c_reported "$prog: $name" with_traffic $traffic "$@"
	else
		check "$prog: $name" with_traffic $traffic "$@"
	fi
	echo "result $prog $name $([ "$LAST_OK" = 1 ] && echo ok || echo FAIL)"
}
with_traffic() {
	local traffic=$1 before
	shift
	before=$(sent)
	"$@" || return
	[ "$traffic" = 0 ] || [ "$(sent)" -gt "$before" ] || { echo "rxe0 sent no packets (a fall-back transport?)"; return 1; }
}
# across T READY [SERVER_CMD…] -- CLIENT_CMD…: case $xcase's server and client, each under
# `timeout T`. In one VM: lib.sh serve (or the client alone when there is no server command: the
# server is the kernel's, set up before). Across two: B starts the server, polls READY and says
# "ready N"; A then runs the client; a server whose client failed is stopped; each side says
# "done N STATUS", and both succeed only if both commands did.
across() {
	local t=$1 ready=$2 srv=() rc st line
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	case $side in
	both)
		if [ ${#srv[@]} = 0 ]; then bounded "$t" "$@"; else serve "$t" "$ready" "${srv[@]}" -- "$@"; fi
		return ;;
	server)
		rc=0
		if [ ${#srv[@]} = 0 ]; then
			peer_tell "ready $xcase" && peer_hear "done $xcase" $((t + 60)) >/dev/null || rc=1
		else
			peer_served "$xcase" "$t" "$ready" /tmp/across.log "${srv[@]}" || rc=$?
		fi ;;
	client)
		if peer_hear "ready $xcase" "$t" >/dev/null; then bounded "$t" "$@"; rc=$?; else rc=1; fi ;;
	esac
	peer_tell "done $xcase $rc" || return 1
	line=$(peer_hear "done $xcase" $((t + 60))) || return 1
	st=${line##* }
	echo "this side ($ROLE, $DRIVER): exit $rc; peer ($PEER_DRIVER): exit $st"
	[ "$rc" = 0 ] && [ "$st" = 0 ]
}
quick() { [ "$mode" = quick ]; }

# --- UCX ---------------------------------------------------------------------------------------
# ucx_perftest: the server waits for the client's TCP connection (its out-of-band channel), then
# both run the test over the transports UCX_TLS names; -P 0: no MPI launcher.
# UCX_UD_TIMEOUT: an endpoint that hears nothing gives up after 15 s (C's cases fail sooner).
export UCX_NET_DEVICES=rxe0:1 UCX_WARN_UNUSED_ENV_VARS=n UCX_UD_TIMEOUT=15s
ucx_pair() {
	local tls=$1 port=$((13000 + xcase))
	shift
	UCX_TLS=$tls,self across 120 "tcp_listening $port" ucx_perftest -P 0 -p $port -- \
		env UCX_TLS=$tls,self ucx_perftest -P 0 -p $port "$srv_ip" "$@"
}
# UCX through 1.18 (Debian's) takes a UD receive's L3 header type from wc.sl, as mlx5 reports it
# there (2: IPv4), to find the destination GID in the GRH area (uct_ud_iface_check_grh). C leaves
# wc.sl 0, so UCX reads an IPv4 packet's header as IPv6, finds no GID of its own and drops every
# datagram: its UD transport, and its RC transport's wire-up over UD, time out ("UD endpoint …
# unhandled timeout error"). rxe-rs reports the type there (resp.rs, user_ud_sl).
consumer --listing ucx "ucx_info -d lists rxe0" sh -c 'ucx_info -d | grep -q "Device: rxe0:1"'
on_c="UCX drops every UD datagram: wc.sl 0"
for tls in rc_v ud_v; do
	consumer ucx "$tls tag_bw" ucx_pair $tls -t tag_bw -s 65536 -n 1000
	quick && continue
	consumer ucx "$tls tag_lat" ucx_pair $tls -t tag_lat -s 8 -n 1000
	consumer ucx "$tls stream_bw" ucx_pair $tls -t stream_bw -s 65536 -n 1000
	# UCX prints "error during flush: Unsupported operation" here and passes: before the last PUT
	# ucx_perftest fences, a strong fence flushes with UCT_FLUSH_FLAG_REMOTE, and rc_verbs
	# refuses that without a flush rkey, which UCX's generic verbs MD never has (only mlx5's
	# DEVX MD makes one): the same on every non-mlx5 device, whatever the driver reports.
	consumer ucx "$tls ucp_put_bw" ucx_pair $tls -t ucp_put_bw -s 65536 -n 1000
	# Over ud_v UCX emulates a GET with active messages, a round trip per fragment: about 0.35 s
	# a 64 KiB GET between two TCG VMs, so 200 of them.
	consumer ucx "$tls ucp_get" ucx_pair $tls -t ucp_get -s 65536 -n $([ $tls = ud_v ] && echo 200 || echo 1000)
	consumer ucx "$tls ucp_add" ucx_pair $tls -t ucp_add -s 8 -n 1000
done

# --- Open MPI over UCX ---------------------------------------------------------------------------
# Across two VMs, mpirun on A starts rank 1 on B through PRRTE's ssh launcher with
# tests/vm/py/rsh.py as its agent (the guests have no ssh), served on B for the MPI cases. The
# nodes go by their hostnames (rxe-a, rxe-b, in /etc/hosts): given as addresses, PRRTE counts
# one slot in all ("not enough slots"); --map-by node: one rank a node (by core, which
# --oversubscribe asks for in one VM, puts both on A).
mpi() {
	local hosts=()
	[ $side = both ] || hosts=(--host rxe-a:1,rxe-b:1 --map-by node --prtemca plm_ssh_agent "python3 $here/py/rsh.py"
		--prtemca oob_tcp_if_include eth0)
	timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "${hosts[@]}" --mca pml ucx --mca osc ucx \
		--mca btl self -x UCX_NET_DEVICES -x UCX_TLS=rc_v,ud_v,self -x UCX_WARN_UNUSED_ENV_VARS -x UCX_UD_TIMEOUT \
		python3 "$here/py/mpi_check.py" "$@"
}
rsh_pid=""
[ $side != client ] || printf '%s rxe-a\n%s rxe-b\n' "$IP" "$PEER_IP" >>/etc/hosts
if [ $side = server ]; then
	printf '%s rxe-a\n%s rxe-b\n' "$PEER_IP" "$IP" >>/etc/hosts
	spawn_ready 1800 "tcp_listening 2222" /tmp/rsh.log python3 "$here/py/rsh.py" serve 2222
	rsh_pid=$SPAWNED_PID
	check "rsh.py listening (TCP 2222) for mpirun's launcher" tcp_listening 2222
fi
consumer mpi "point to point (mpi4py, data checked)" across 330 "" -- mpi p2p
quick || consumer mpi "collectives (mpi4py, data checked)" across 330 "" -- mpi coll
[ -z "$rsh_pid" ] || kill "$rsh_pid"

on_c=""

# --- libfabric ---------------------------------------------------------------------------------
consumer --listing libfabric "fi_info -p verbs lists rxe0" sh -c 'fi_info -p verbs | grep -q "domain: rxe0"'
fi_pair() {
	local port=$((14000 + xcase))
	across 120 "sleep 2" fi_pingpong -p "$1" -e "$2" -B $port -I 100 -S 4096 -- \
		fi_pingpong -p "$1" -e "$2" -P $port -I 100 -S 4096 "$srv_ip"
}
consumer libfabric "fi_pingpong verbs msg" fi_pair verbs msg
# ofi_rxm's fi_enable opens a message CQ of (128 + 128) x its universe size (1,024) entries; C's
# max_cqe is 32,767, so it fails with EINVAL on C (works there with FI_UNIVERSE_SIZE=64; libfabric
# does not cap the CQ at the device's max_cqe). rxe-rs's max_cqe is 524,287 (proto/params.rs).
on_c="ofi_rxm's CQ is larger than C's max_cqe"
quick || consumer libfabric "fi_pingpong verbs;ofi_rxm rdm" fi_pair 'verbs;ofi_rxm' rdm
on_c=""

# --- rsockets ----------------------------------------------------------------------------------
consumer rsockets "rstream -T v (65536 B x 2000, verified)" \
	across 120 "sleep 1" rstream -T v -S 65536 -C 2000 -- rstream -s "$srv_ip" -T v -S 65536 -C 2000
quick || consumer rsockets "riostream -T v (65536 B x 2000, verified)" \
	across 120 "sleep 1" riostream -T v -S 65536 -C 2000 -- riostream -s "$srv_ip" -T v -S 65536 -C 2000
# An ordinary TCP program under the preload library: netcat (the traditional one: plain
# socket(AF_INET, SOCK_STREAM, 0); python's and perl's carry SOCK_CLOEXEC in the type, which
# librspreload.so passes to TCP, and the OpenBSD one's listener sets SO_REUSEPORT, which rsockets
# refuse) sends 16 MiB to its listener, which compares them (the same seeded bytes on both VMs).
preload=$(ls /usr/lib/*/rsocket/librspreload.so 2>/dev/null | head -n 1)
nc_data() {
	python3 -c 'import random, sys; random.seed(4791); sys.stdout.buffer.write(random.randbytes(16 << 20))' >/tmp/nc-in
}
nc_listen() {
	LD_PRELOAD=$preload timeout 120 nc.traditional -l -s "$srv_ip" -p "$1" >/tmp/nc-out && nc_data && cmp /tmp/nc-in /tmp/nc-out
}
nc_send() { nc_data && LD_PRELOAD=$preload timeout 120 nc.traditional -q 1 "$srv_ip" "$1" </tmp/nc-in; }
nc_preloaded() { local port=$((15000 + xcase)); across 120 "sleep 1" nc_listen $port -- nc_send $port; }
quick || consumer rsockets "LD_PRELOAD=librspreload.so under netcat (16 MiB, compared)" nc_preloaded

# --- NFS over RDMA -----------------------------------------------------------------------------
# The kernel's nfsd with an RDMA listener (portlist "rdma 20049", as nfs.conf's rdma=y does),
# exporting a tmpfs directory; the client mounts with proto=rdma. rpcbind and mountd serve the v3
# mount protocol (over TCP); NFS itself goes over RDMA; nfsdcld keeps the v4 clients' records,
# and a 10 s lease and grace period keep the v4 server's start short. Daemons started by hand: no
# systemd.
nfs_mib=$(quick && echo 32 || echo 256)
nfs_server() {
	modprobe -a nfsd rpcrdma nfs nfsv3 nfsv4 &&
		mkdir -p /tmp/nfs-export /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /var/lib/nfs/sm /var/lib/nfs/sm.bak &&
		{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
		{ mountpoint -q /var/lib/nfs/rpc_pipefs || mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs; } &&
		echo "/tmp/nfs-export *(rw,no_root_squash,insecure,sync,fsid=0,no_subtree_check)" >/etc/exports &&
		mkdir -p /var/lib/nfs/nfsdcld && nfsdcld &&
		echo 10 >/proc/fs/nfsd/nfsv4leasetime && echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
		rpcbind -w && exportfs -ra && rpc.mountd && rpc.nfsd 4 && echo "rdma 20049" >/proc/fs/nfsd/portlist &&
		grep -q 'rdma 20049' /proc/fs/nfsd/portlist
}
# nfs_case VERS SOURCE: (the client) mounts SOURCE with proto=rdma, runs fio with verification (buffered and
# direct), writes a file, drops the caches and compares it, unmounts.
nfs_case() {
	local m=/tmp/mnt-nfs$1
	mkdir -p $m && mount -t nfs -o vers=$1,proto=rdma,port=20049,nolock "$srv_ip:$2" $m || return
	grep -q " $m nfs.*proto=rdma" /proc/mounts || { echo "not an RDMA mount:"; grep " $m " /proc/mounts; umount $m; return 1; }
	local rc=0
	fio --name=nfs-b --directory=$m --size=$((nfs_mib / 2))M --rw=write --bs=1M --direct=0 --ioengine=psync \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 >/tmp/fio-nfs.out 2>&1 || { cat /tmp/fio-nfs.out; rc=1; }
	fio --name=nfs-d --directory=$m --size=$((nfs_mib / 2))M --rw=randwrite --bs=64k --direct=1 --ioengine=libaio \
		--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 >/tmp/fio-nfs.out 2>&1 ||
		{ cat /tmp/fio-nfs.out; rc=1; }
	head -c 48M /dev/urandom >/tmp/nfs-src && cp /tmp/nfs-src $m/file && sync && echo 3 >/proc/sys/vm/drop_caches &&
		cmp /tmp/nfs-src $m/file || { echo "48 MiB file differs after the caches were dropped"; rc=1; }
	rm -f $m/file $m/nfs-b* $m/nfs-d*
	umount $m || rc=1
	return $rc
}
[ $side = client ] || check "nfs: server (nfsd, rdma 20049 in portlist)" nfs_server
consumer nfs "v4.2 over RDMA: fio verify ${nfs_mib} MiB buffered and direct, file compared" \
	across 600 "" -- nfs_case 4.2 /
quick || consumer nfs "v3 over RDMA: fio verify ${nfs_mib} MiB buffered and direct, file compared" \
	across 600 "" -- nfs_case 3 /tmp/nfs-export
[ $side = client ] || { rpc.nfsd 0; exportfs -ua; pkill rpc.mountd; pkill rpcbind; pkill nfsdcld; }

# --- iSER ----------------------------------------------------------------------------------------
# LIO's iSCSI target with an iSER portal (configfs: np/IP:3260/iser) and a ramdisk LUN, demo-mode
# ACLs; open-iscsi's iscsid and iscsiadm over the iser interface.
T=/sys/kernel/config/target
iqn=iqn.2026-12.org.rxe-rs:target
tp=$T/iscsi/$iqn/tpgt_1
iser_target() {
	modprobe -a iscsi_target_mod ib_isert ib_iser sd_mod &&
		mkdir -p $T/core/rd_mcp_1/iser0 && echo rd_pages=$((64 * 256)) >$T/core/rd_mcp_1/iser0/control &&
		echo 1 >$T/core/rd_mcp_1/iser0/enable && mkdir -p $tp/lun/lun_0 &&
		ln -s $T/core/rd_mcp_1/iser0 $tp/lun/lun_0/iser0 && mkdir $tp/np/$srv_ip:3260 &&
		echo 1 >$tp/np/$srv_ip:3260/iser && echo 1 >$tp/attrib/generate_node_acls &&
		echo 0 >$tp/attrib/demo_mode_write_protect && echo 0 >$tp/attrib/authentication &&
		echo 1 >$tp/attrib/cache_dynamic_acls && echo 1 >$tp/enable
}
# iscsid_listening: iscsid's control socket (abstract, @ISCSIADM_ABSTRACT_NAMESPACE) is up, within
# 30 s: iscsiadm run before it gives up at once (a loaded host took more than the 1 s once slept).
iscsid_listening() {
	wait_until 30 "grep -q '@ISCSIADM_ABSTRACT_NAMESPACE' /proc/net/unix" ||
		{ echo "iscsid's control socket did not appear in 30 s"; return 1; }
}
iser_initiator() {
	modprobe -a ib_iser sd_mod && mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi &&
		echo "InitiatorName=iqn.2026-12.org.rxe-rs:initiator" >/etc/iscsi/initiatorname.iscsi &&
		iscsid && iscsid_listening && iscsiadm -m discovery -t st -p $srv_ip:3260 -I iser | tee /tmp/iser-disc.out &&
		grep -q "$iqn" /tmp/iser-disc.out
}
iser_disk() {
	local d
	for d in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$d" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
iser_login() {
	iscsiadm -m node -T $iqn -p $srv_ip:3260 -I iser --login >/dev/null || return
	iscsiadm -m session | grep -q "^iser: .*$iqn" || { echo "session not over iser:"; iscsiadm -m session; return 1; }
	wait_until 30 '[ -b "$(iser_disk)" ]' && return 0
	echo "no disk from the iSER session"; iser_logout; return 1
}
iser_logout() {
	iscsiadm -m node -T $iqn -p $srv_ip:3260 -I iser --logout >/dev/null || return
	wait_until 30 '! iser_disk >/dev/null' && return 0
	echo "disk still there"; return 1
}
iser_fio() {
	iser_login || return
	fio --name=iser --filename="$(iser_disk)" --size=48M --rw=randwrite --bs=64k --direct=1 --ioengine=libaio \
		--iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 >/tmp/fio-iser.out 2>&1 ||
		{ cat /tmp/fio-iser.out; iser_logout; return 1; }
	iser_logout
}
iser_cycles() {
	local i
	for i in $(seq 20); do iser_login && iser_logout || { echo "cycle $i failed"; return 1; }; done
}
[ $side = client ] || check "iser: LIO target, iSER portal $srv_ip:3260, ramdisk LUN" iser_target
consumer iser "discovery over iser" across 300 "" -- iser_initiator
consumer iser "login, fio verify 48 MiB, logout" across 300 "" -- iser_fio
quick || consumer iser "20 login/logout cycles" across 900 "" -- iser_cycles
[ $side = server ] || { iscsiadm -m node -o delete >/dev/null 2>&1; pkill iscsid; }
if [ $side != client ]; then
	rm -f $tp/lun/lun_0/iser0
	rmdir $tp/np/$srv_ip:3260 $tp/lun/lun_0 $tp $T/iscsi/$iqn $T/core/rd_mcp_1/iser0 $T/core/rd_mcp_1 2>/dev/null
fi

# Across two VMs, neither side removes its device while the other may still use it.
[ $side = both ] || { peer_tell end && peer_hear end 900 >/dev/null; }
check "rdma link del rxe0" rdma link del rxe0
tally
