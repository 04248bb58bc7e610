#!/bin/bash
# Guest test (--two): two rxe drivers talking to each other on the wire, meant for rxe-rs against
# the C rdma_rxe. Run on both VMs with the same arguments:
#   scripts/vm-run --two --driver rs --peer-driver c --timeout 1500 \
#       --peer tests/vm/interop.sh -- tests/vm/interop.sh [--pcap]
# Both VMs set eth0 to MTU 9000 (so path MTU 4096 fits) and add rxe0 on it. Every case runs
# twice: B's side as server and A's as client, then the reverse; with --driver rs --peer-driver c
# that is a C server with an rs client, then an rs server with a C client. Cases, with data checks
# where the tool has them: ibv_{rc,uc,srq}_pingpong -c at 1 B / 4 KiB / 64 KiB and path MTU
# 1024 / 4096, ibv_ud_pingpong -c at 1 B and 4 KiB (40 exchanges each), perftest ib_write_bw, ib_read_bw,
# ib_send_bw, ib_atomic_bw (fetch-and-add and compare-and-swap), rping -V, and RDMA ATOMIC WRITE
# and FLUSH (tests/vm/py/flush_aw_pair.py, pyverbs: ATOMIC WRITE, FLUSH each placement type the
# server's MR allows at both selectivity levels, RDMA READ back; FLUSHes with a wrong rkey, of
# type PERSISTENT to a FLUSH_GLOBAL-only MR, and of a range past the MR's end must complete
# REM_ACCESS_ERR; the server checks its MRs byte for byte and its QPs' states);
# then bursts on the wire: eth0 captured whole on both VMs while messages of 2, 3, 5 and 64
# packets go each way, every RoCEv2 packet of the capture checked as a receiver would (lengths,
# IP checksum, ICRC: py/pcap_icrc.py), and on the rs side fewer IP sends than packets sent;
# then the same without a capture, on the rs side fewer IP receives than packets received;
# then, between GIDs of IPv6 addresses, ibv_rc_pingpong, ibv_ud_pingpong and rping; then, with
# netem loss 2% on both eth0 (bare ACKs/NAKs spared: lib.sh netem_data), ib_read_bw and
# ib_atomic_bw each way, and the retransmission counters must have moved.
# The sides keep in step over a TCP control channel (lib.sh peer_*): for case N the server side
# starts its server and says "ready N", the client side runs its client, each side says "done N
# STATUS", and the case passes (on both sides) only if both exited 0; a server whose client
# failed is stopped at once. --pcap: tcpdump of RoCEv2 (UDP 4791, first 128 B of each packet) to
# /mnt/run/rocev2.pcap (the host's $RXE_CACHE/runs/run.*/{a,b}/, kept with RXE_KEEP_RUN=1).
# Each side prints ok/FAIL per check and "N passed, M failed"; exits 1 on a failure.
# A case is run once more, and says so, only when it failed on C's requester stall: C's
# retransmit timer (67 ms in the pingpongs) fires while the ACK of a whole message is on its
# way; C rewinds to its oldest unacknowledged PSN, the ACK then moves its completer past the
# requester, and C neither resends nor arms its timer again (the WQE never completes). It needs
# only a loaded host, C on both ends shows it too, and the responder's answers are C's (a
# duplicate SEND is ACKed with the last PSN executed, C9-105). Told apart by the two QPs'
# PSNs taken while the case hangs: the C side's next send PSN behind the PSN the rs side's
# responder expects, which no fault of the responder's can produce. Or by the rs side having
# finished (exit 0; its QP is gone then) while the C side hangs to its timeout: C then waits
# on a WQE it neither completes nor retransmits (a lost ACK would end in a retry error within
# seconds), which is the same stall whatever the peer did.
set -u
. "$(dirname "$0")/lib.sh"

pcap=0
[ "${1:-}" != --pcap ] || pcap=1
T=120 LOSS_T=300 # seconds per case (client, and server); KASAN + lockdep under TCG ≈ 5 × slower
[ "${VARIANT:-stock}" != debug ] || { T=$((T * 5)); LOSS_T=$((LOSS_T * 5)); }
# Exchanges per pingpong and rping, messages per perftest (a two-VM round trip: about 2 ms).
ITERS=${ITERS:-100} PP_ITERS=${PP_ITERS:-$ITERS}
pyd=$(dirname "$0")/py
case_t=$T port=18600 n=0 tag=0 again=0 c_stall=0
other=b
[ "$ROLE" = a ] || other=a
drv() { if [ "$1" = "$ROLE" ]; then echo "$DRIVER"; else echo "$PEER_DRIVER"; fi; }
addr() { if [ "$1" = "$ROLE" ]; then echo "$IP"; else echo "$PEER_IP"; fi; }
# barrier TAG: both sides have got here.
barrier() { peer_tell "$1" && peer_hear "$1" "${2:-$T}" >/dev/null; }

# run_case SERVER_ROLE READY SERVER_CMD… -- CLIENT_CMD…: this side's half of case $tag (see
# the top). On a failure sets c_stall if the QPs' PSNs show C's requester stall.
run_case() {
	local s=$1 ready=$2 srv=() rc line st watch mine theirs
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	rm -f /tmp/qp.snap
	# Where this side's RC QP stands if the case still runs 20 s before its timeout.
	(sleep $((case_t - 20)) && rdma res show qp link rxe0/1 -d | grep ' type RC ' >/tmp/qp.snap) &
	watch=$!
	if [ "$ROLE" = "$s" ]; then
		peer_served "$tag" "$case_t" "$ready" /tmp/case.log "${srv[@]}"
		rc=$?
	else
		if peer_hear "ready $tag" "$case_t" >/dev/null; then
			timeout -k 5 "$case_t" "$@"
			rc=$?
		else
			rc=1
		fi
	fi
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	peer_tell "done $tag $rc" || return 1
	line=$(peer_hear "done $tag" $((case_t + 60))) || return 1
	st=${line##* }
	echo "this side ($ROLE, $DRIVER): exit $rc; peer ($other, $PEER_DRIVER): exit $st"
	[ "$rc" = 0 ] && [ "$st" = 0 ] && return 0
	mine=$(qp_psns /tmp/qp.snap)
	peer_tell "psns $tag $mine" || return 1
	theirs=$(peer_hear "psns $tag" 60) || return 1
	theirs=${theirs#"psns $tag "}
	echo "RC QP, sq-psn rq-psn: this side $mine; peer $theirs"
	c_stall=0
	case "$DRIVER/$PEER_DRIVER" in
	c/rs) psn_behind "${mine% *}" "${theirs#* }" && c_stall=1 ;;
	rs/c) psn_behind "${theirs% *}" "${mine#* }" && c_stall=1 ;;
	esac
	case "$DRIVER/$PEER_DRIVER/$rc/$st" in
	c/rs/124/0 | rs/c/0/124) c_stall=1 ;;
	esac
	return 1
}
# qp_psns FILE: "SQ_PSN RQ_PSN" of the RC QP line in FILE (`rdma res show qp -d`), or "- -".
qp_psns() {
	local sq rq
	sq=$(sed -n 's/.* sq-psn \([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n 1)
	rq=$(sed -n 's/.* rq-psn \([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n 1)
	echo "${sq:--} ${rq:--}"
}
# psn_behind A B: PSN A is behind PSN B (24-bit serial arithmetic).
psn_behind() {
	[ "$1" != - ] && [ "$2" != - ] || return 1
	local d=$((($2 - $1) & 0xffffff))
	[ "$d" -gt 0 ] && [ "$d" -lt $((1 << 23)) ]
}
# xcase SERVER_ROLE DESC READY SERVER_CMD… -- CLIENT_CMD…: one counted case across the VMs, run
# once more if it failed on C's requester stall (see the top).
xcase() {
	local s=$1 desc=$2 c=a
	shift 2
	[ "$s" = b ] || c=b
	n=$((n + 1))
	check "#$n $(drv "$s") server ($s) / $(drv "$c") client ($c): $desc" run_twice "$s" "$@"
	[ "$again" = 0 ] || echo "     note: #$n hit C's requester stall and was run again (see interop.sh)"
}
run_twice() {
	tag=$n again=0 c_stall=0
	run_case "$@" && return 0
	[ "$c_stall" = 1 ] || return 1
	echo "C's requester stall (see interop.sh): once more"
	tag=$n.again again=1
	run_case "$@"
}
# pair SERVER_ROLE GID_OPTION PROG ARGS…: PROG on rxe0 on both VMs with our GID after
# GID_OPTION (-g for ibv_*_pingpong, -x for perftest) and ARGS, its own TCP port.
pair() {
	local s=$1 gopt=$2 prog=$3
	shift 3
	port=$((port + 1))
	xcase "$s" "$prog $*${over:-}" "tcp_listening $port" \
		"$prog" -d rxe0 "$gopt" "$gid" -p "$port" "$@" -- \
		"$prog" -d rxe0 "$gopt" "$gid" -p "$port" "$@" "$(addr "$s")"
}
# pingpong SERVER_ROLE PROG ARGS…: ibv_*_pingpong -c (data check).
pingpong() { local s=$1 prog=$2; shift 2; pair "$s" -g "$prog" -c "$@"; }
# perf SERVER_ROLE PROG ARGS…: a perftest pair (-F: no CPU-frequency warning).
perf() { local s=$1 prog=$2; shift 2; pair "$s" -x "$prog" -F "$@"; }
# driver_loaded: the module of $DRIVER is loaded, the other one is not.
driver_loaded() {
	local mods
	mods=$(lsmod | awk '$1 ~ /^rdma_rxe/ {print $1}' | sort | tr '\n' ' ')
	echo "rxe modules: $mods"
	case "$DRIVER" in
	rs) [ "$mods" = "rdma_rxe_rs " ] ;;
	c) [ "$mods" = "rdma_rxe " ] ;;
	*) false ;;
	esac
}
# hello: exchange drivers with the peer; it must run what vm-run says (PEER_DRIVER).
hello() {
	local line
	peer_tell "hello $ROLE $DRIVER" || return 1
	line=$(peer_hear "hello $other" 300) || return 1
	echo "peer says: $line"
	[ "$line" = "hello $other $PEER_DRIVER" ]
}
# ip_out_requests: the IPv4 packets (or bursts) handed to ip_local_out so far (Ip OutRequests).
ip_out_requests() {
	awk '$1 == "Ip:" && $2 ~ /^[0-9]+$/ {print $11}' /proc/net/snmp
}
# ip_in_receives: the IPv4 packets (or GRO chains) the IP layer took in so far (Ip InReceives).
ip_in_receives() {
	awk '$1 == "Ip:" && $2 ~ /^[0-9]+$/ {print $4}' /proc/net/snmp
}
# ip6_out_transmits: the IPv6 packets (or bursts) the IPv6 layer handed to the neighbour layer
# so far (Ip6OutTransmits, counted in ip6_finish_output2; Ip6OutRequests leaves out
# ip6_local_out's packets).
ip6_out_transmits() {
	awk '$1 == "Ip6OutTransmits" {print $2}' /proc/net/snmp6
}
# start_capture / stop_capture: tcpdump of RoCEv2 on eth0 to /tmp/bursts.pcap, whole packets.
start_capture() {
	tcpdump -i eth0 -s 0 -B 16384 -U -w /tmp/bursts.pcap udp port 4791 >/tmp/bursts.log 2>&1 &
	capture_pid=$!
	wait_until 10 "grep -q listening /tmp/bursts.log"
}
stop_capture() {
	sleep 1
	kill "$capture_pid" && wait "$capture_pid"
	cat /tmp/bursts.log
	grep -qx "0 packets dropped by kernel" /tmp/bursts.log
}
# loss_counters: this side's counters that move on a loss, summed.
loss_counters() {
	local k s=0
	for k in completer_retry_err rcvd_seq_err duplicate_request out_of_seq_request; do
		s=$((s + $(counter rxe0/1 "$k")))
	done
	echo "$s"
}

echo "interop.sh on $ROLE ($IP, driver '$DRIVER'); peer $other ($PEER_IP, driver '$PEER_DRIVER')"
check "eth0 MTU 9000, rdma link add rxe0 type rxe netdev eth0" \
	sh -ec 'ip link set eth0 mtu 9000; rdma link add rxe0 type rxe netdev eth0'
check "loaded module is the '$DRIVER' driver's" driver_loaded
echo "--- lsmod (rxe)"; lsmod | grep -E '^(rdma_rxe|rdma_rxe_rs|ib_core) '
echo "--- rdma link show"; rdma link show
gid=$(gid_ipv4 rxe0)
active=$(ibv_devinfo -d rxe0 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
check "rxe0: IPv4 GID index ${gid:-?}, active MTU ${active:-?} (4096)" test -n "$gid" -a "${active:-0}" = 4096
if [ "$pcap" = 1 ]; then
	tcpdump -i eth0 -s 128 -U -w /mnt/run/rocev2.pcap udp port 4791 >/tmp/tcpdump.log 2>&1 &
	tcpdump_pid=$!
fi
check "control channel listening (TCP $PEER_PORT)" peer_listen
check "peer $other up, runs '$PEER_DRIVER'" hello
check "jumbo frames reach the peer (ping -s 8972 -M do)" ping -c 1 -W 10 -s 8972 -M "do" "$PEER_IP"

for s in b a; do
	for m in 1024 4096; do
		for size in 1 4096 65536; do
			[ "$m" = 1024 ] || [ "$size" != 1 ] || continue
			pingpong "$s" ibv_rc_pingpong -m "$m" -s "$size" -n "$PP_ITERS"
		done
	done
	pingpong "$s" ibv_uc_pingpong -m 1024 -s 4096 -n "$PP_ITERS"
	pingpong "$s" ibv_uc_pingpong -m 1024 -s 65536 -n "$PP_ITERS"
	pingpong "$s" ibv_uc_pingpong -m 4096 -s 65536 -n "$PP_ITERS"
	pingpong "$s" ibv_srq_pingpong -m 1024 -s 4096 -n "$PP_ITERS"
	pingpong "$s" ibv_srq_pingpong -m 4096 -s 65536 -n "$PP_ITERS"
	pingpong "$s" ibv_ud_pingpong -s 1 -n "$PP_ITERS"
	pingpong "$s" ibv_ud_pingpong -s 4096 -n "$PP_ITERS"
	perf "$s" ib_write_bw -s 65536 -n "$ITERS"
	perf "$s" ib_read_bw -s 65536 -n "$ITERS"
	perf "$s" ib_send_bw -s 65536 -n "$ITERS"
	perf "$s" ib_atomic_bw -A FETCH_AND_ADD -n "$ITERS"
	perf "$s" ib_atomic_bw -A CMP_AND_SWAP -n "$ITERS"
	port=$((port + 1))
	xcase "$s" "rping -C $PP_ITERS -v -V" "cm_listening rping" \
		rping -s -a "$(addr "$s")" -p "$port" -C "$PP_ITERS" -V -- \
		rping -c -a "$(addr "$s")" -p "$port" -C "$PP_ITERS" -v -V
	port=$((port + 1))
	xcase "$s" "flush_aw_pair.py: ATOMIC WRITE, FLUSH, READ back; FLUSH errors" "tcp_listening $port" \
		python3 "$pyd/flush_aw_pair.py" server rxe0 "$gid" "$port" -- \
		python3 "$pyd/flush_aw_pair.py" client rxe0 "$gid" "$(addr "$s")" "$port"
done

# Bursts: the packets rxe-rs builds in one step for one route go through its IP layer, netfilter
# and qdisc as one skb, cut back into them before the device (Documentation/data-path.md,
# "Bursts on the wire"). Each side captures eth0 whole while messages of 2, 3, 5 and 64 packets
# go both ways (WRITE, READ responses, SEND), and checks every RoCEv2 packet captured as a
# receiver would (py/pcap_icrc.py: IP and UDP lengths, IP checksum, ICRC). On the rs side the
# IP layer must have taken fewer sends than rxe0 sent packets.
check "tcpdump of eth0, whole RoCEv2 packets" start_capture
ip_before=$(ip_out_requests) sent_before=$(counter rxe0/1 sent_pkts)
# B serves the requests of A's, then A serves the reads of B's: each side's driver sends every
# shape once (a pingpong's messages go both ways).
pingpong b ibv_rc_pingpong -m 1024 -s 3072 -n 10
pingpong b ibv_rc_pingpong -m 1024 -s 5120 -n 10
perf b ib_write_bw -m 1024 -s 65536 -n 10
perf b ib_send_bw -m 1024 -s 65536 -n 10
pingpong a ibv_rc_pingpong -m 1024 -s 2048 -n 10
perf a ib_read_bw -m 1024 -s 65536 -n 10
perf b ib_read_bw -m 1024 -s 65536 -n 10
perf a ib_write_bw -m 1024 -s 65536 -n 10
ip_sends=$(($(ip_out_requests) - ip_before)) sent=$(($(counter rxe0/1 sent_pkts) - sent_before))
check "capture stopped" stop_capture
check "every RoCEv2 packet of the capture well formed, its ICRC right (pcap_icrc.py)" \
	python3 "$pyd/pcap_icrc.py" /tmp/bursts.pcap
if [ "$DRIVER" = rs ]; then
	check "bursts: $sent packets sent in $ip_sends IP sends (at least 1.5 packets a send)" \
		test $((2 * sent)) -ge $((3 * ip_sends))
fi
rm -f /tmp/bursts.pcap
# Bursts on receive: with no capture open (a tap on eth0 turns them off, so that it sees each
# packet), rxe-rs's UDP socket has GRO chain the packets of a flow that arrive together; they
# cross the IP and UDP layers as one skb, taken apart in encap_rcv (data-path.md). Messages of 64
# packets each way, the pingpong's data checked; on the rs side the IP layer must have taken
# fewer skbs (Ip InReceives) than rxe0 received packets.
ip_before=$(ip_in_receives) rcvd_before=$(counter rxe0/1 rcvd_pkts)
pingpong b ibv_rc_pingpong -m 1024 -s 65536 -n 10
perf b ib_write_bw -m 1024 -s 65536 -n 10
perf a ib_write_bw -m 1024 -s 65536 -n 10
perf a ib_read_bw -m 1024 -s 65536 -n 10
ip_rcvs=$(($(ip_in_receives) - ip_before)) rcvd=$(($(counter rxe0/1 rcvd_pkts) - rcvd_before))
if [ "$DRIVER" = rs ]; then
	check "bursts on receive: $rcvd packets received in $ip_rcvs IP receives (at least 1.5 packets one)" \
		test $((2 * rcvd)) -ge $((3 * ip_rcvs))
fi

# IPv6: GIDs of addresses fd02::a and fd02::b on eth0, so packets go in IPv6 and each driver
# checks the other's ICRC over the masked IPv6 header. The pingpongs' TCP exchange stays on IPv4.
check "IPv6 address fd02::$ROLE on eth0 and its GID" eval \
	"ip addr add fd02::$ROLE/64 dev eth0 nodad && wait_gid rxe0 fd02:"
check "peer has its IPv6 address" barrier ipv6
check "peer answers on IPv6 (ping -6 fd02::$other)" ping -6 -c 1 -W 10 "fd02::$other"
gid_ipv4=$gid gid=$(gid_with_prefix rxe0 fd02:) over=" (IPv6 GIDs)"
# Messages of 64 packets each way: on the rs side IPv6 bursts too (data-path.md), so the IPv6
# layer takes fewer sends than rxe0 sent packets; the other end checks every ICRC.
ip_before=$(ip6_out_transmits) sent_before=$(counter rxe0/1 sent_pkts)
for s in b a; do
	pingpong "$s" ibv_rc_pingpong -m 1024 -s 65536 -n "$PP_ITERS"
done
ip_sends=$(($(ip6_out_transmits) - ip_before)) sent=$(($(counter rxe0/1 sent_pkts) - sent_before))
if [ "$DRIVER" = rs ]; then
	check "IPv6 bursts: $sent packets sent in $ip_sends IPv6 sends (at least 1.5 packets a send)" \
		test "$ip_sends" -gt 0 -a $((2 * sent)) -ge $((3 * ip_sends))
fi
for s in b a; do
	pingpong "$s" ibv_ud_pingpong -s 4096 -n "$PP_ITERS"
	port=$((port + 1))
	xcase "$s" "rping over IPv6 -C $PP_ITERS -v -V" "cm_listening rping" \
		rping -s -a "fd02::$s" -p "$port" -C "$PP_ITERS" -V -- \
		rping -c -a "fd02::$s" -p "$port" -C "$PP_ITERS" -v -V
done
gid=$gid_ipv4 over=""

# Loss: retransmissions, duplicate reads and atomics (answered from the responder's atomic
# results), sequence NAKs, between the two implementations.
check "netem loss 2% on eth0 (bare ACKs/NAKs spared)" netem_data eth0 loss 2%
check "peer has netem too" barrier lossy
before=$(loss_counters)
case_t=$LOSS_T
for s in b a; do
	perf "$s" ib_read_bw -s 65536 -n 200
	perf "$s" ib_atomic_bw -A FETCH_AND_ADD -n 200
done
case_t=$T
moved=$(($(loss_counters) - before))
echo "--- rdma statistic show link rxe0/1"; rdma statistic show link rxe0/1
check "loss seen on this side: completer_retry_err + rcvd_seq_err + duplicate_request + out_of_seq_request moved by $moved (> 0)" \
	test "$moved" -gt 0
check "netem removed" tc qdisc del dev eth0 root

check "peer done" barrier end
if [ "$pcap" = 1 ]; then
	sleep 1; kill "$tcpdump_pid"; wait "$tcpdump_pid"; cat /tmp/tcpdump.log
fi
check "rdma link del rxe0" rdma link del rxe0
tally
