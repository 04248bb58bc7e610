#!/bin/bash
# Guest (either driver): verbs semantics the suites do not reach (tests/vm/py/semantics.py, and
# rdma-core tools under load). IBA 1.7 chapters 9-11, each against the loaded driver:
#   - a bad lkey in a receive WQE: LOC_PROT_ERR there, NAK remote operational error, REM_OP_ERR
#     at the requester;
#   - a WR that fails locally (a bad lkey) stops the send queue: the WR posted after it is
#     never executed;
#   - an atomic's original value scattered over two 4-byte SGEs; ibv_resize_cq below the
#     completions waiting refused; ibv_post_send refused before RTS;
#   - a receive CQ overflow: the QP to ERROR, no ACK for the request whose completion was lost;
#   - a CQ armed solicited-only wakes on error and flush completions;
#   - retry budgets restored by progress: a 1 MiB WRITE at MTU 256, retry_cnt 6, 3 % loss;
#   - CQ events under event-driven traffic on both vCPUs (ibv_rc_pingpong -e, 4 pairs);
#   - addresses whose addr + len wraps 2^64 (forged RETHs, SGEs) fail their checks;
#   - QPs destroyed under loopback traffic, 200 rounds;
#   - MRs deregistered and freed under 1 MiB WRITEs and READs still queued on a slow link
#     (page-sized payloads, which rxe-rs sends by reference); a memory window invalidated under
#     a 1 MiB WRITE on that link;
#   - small WRITEs and a SEND into on-demand-paging pages dropped before each round: the first
#     waits for its page with the rest queued behind it, all complete, every byte lands;
#   then nothing left behind: the device goes, the module unloads, the skb cache is back where
#   it was.
# Where the C driver of Linux 7.3 is wrong, the case is expected to fail on C (and checked to,
# so the list stays true): C_WRONG below, with the reason.
set -u
. "$(dirname "$0")/lib.sh"
py="python3 $(cd "$(dirname "$0")" && pwd)/py/semantics.py"

# The C driver's known departures from the spec (Linux 7.3.4):
#   bad_lkey: C completes the receive IBV_WC_LOC_QP_OP_ERR (copy_data's EINVAL taken for a
#     malformed WQE, rxe_resp.c send_data_in), not LOC_PROT_ERR.
#   solicited_error: C posts error and flush completions as unsolicited (rxe_comp.c,
#     rxe_resp.c: rxe_cq_post(..., 0)), so a CQ armed solicited-only sleeps on its QP's failure.
#   wrap: C refuses the forged RETHs as it should (REM_ACCESS_ERR, the MR untouched), but a
#     SEND from a local SGE past 2^64 completes IBV_WC_WR_FLUSH_ERR (its error status is lost)
#     and a receive into one completes LOC_QP_OP_ERR.
#   comm_est: C raises no IBV_EVENT_COMM_EST when a QP in RTR receives (no driver event of that
#     type in rxe/*.c), so ib_cm never learns from the data that a connection whose RTU was
#     lost is up.
#   lossy_write: C's requester ignores sequence NAKs while a retry is under way (started_retry)
#     and leaves a packet lost in a resend to the retransmit timer, whose expiries spend the
#     budget: in our runs 1 message in 6 ended IBV_WC_RETRY_EXC_ERR (after 0.5 s, 2 of 3 such
#     WRITEs having passed). Not a constant failure, so on C the case runs and is reported, not
#     judged (C_REPORT).
#   mw_inv_in_flight: C runs the responder's LOCAL_INV in its send task and completes it in the
#     completer called right after (rxe_sender), while its receive task, on the other CPU,
#     refuses the WRITE's next packet for the rkey just invalidated and moves the QP to error
#     (do_class_ac_error, RESPST_ERROR): when that comes between the two, the LOCAL_INV, which
#     took effect, completes IBV_WC_WR_FLUSH_ERR (once in make check, 2026-12-02, after passing
#     in the runs before). A race, so on C the case runs and is reported, not judged (C_REPORT).
#   destroy_loop: C's requester can schedule the send task of a QP whose last reference a
#     concurrent destroy has dropped (rxe_xmit_packet -> rxe_sched_task, the WARN_ON(rxe_read(qp)
#     <= 0) of rxe_task.c, seen once in make check, 2026-11-26): a kernel WARN, which fails the
#     whole VM run, so on C the case is not run (C_SKIP); it runs on rxe-rs.
#   odp_small: C's __rxe_odp_mr_copy (rxe_odp.c) copies to and from the start of each page, not
#     from the address's offset in it (`offset` is computed, then memcpy(dest, src, bytes) leaves
#     it out): a WRITE or SEND into an ODP MR completes successfully and its bytes land at the
#     start of the page (in our runs 180 of 180 messages were not where they were sent).
C_WRONG=" bad_lkey solicited_error wrap comm_est odp_small "
C_REPORT=" lossy_write mw_inv_in_flight "
C_SKIP=" destroy_loop "
module=$([ "${DRIVER:-rs}" = c ] && echo rdma_rxe || echo rdma_rxe_rs)

# semantic CASE DEV_A DEV_B [ARGS…]: one case of semantics.py, expected to fail on C if listed.
semantic() {
	local name=$1 a=$2 b=$3
	shift 3
	local ga gb
	ga=$(gid_ipv4 "$a") gb=$(gid_ipv4 "$b")
	if [ "${DRIVER:-rs}" = c ] && [[ "$C_SKIP" == *" $name "* ]]; then
		echo "skip $name on C: the C driver WARNs in it (see the top of $0)"
	elif [ "${DRIVER:-rs}" = c ] && [[ "$C_REPORT" == *" $name "* ]]; then
		echo "note $name on C (reported, not judged; see the top of $0):"
		timeout 600 $py "$name" "$a" "$ga" "$b" "$gb" "$@" 2>&1 | sed 's/^/     | /'
	elif [ "${DRIVER:-rs}" = c ] && [[ "$C_WRONG" == *" $name "* ]]; then
		# Known wrong: the case must run to its end and fail a check (not hang or crash).
		check "$name (the C driver is known wrong here: a check must fail)" sh -c \
			"timeout 120 $py $name $a $ga $b $gb $* | tee /tmp/sem.out; grep -Eq '^[0-9]+ passed, [1-9][0-9]* failed\$' /tmp/sem.out"
		sed 's/^/     | /' /tmp/expect.out | tail -n 8
	else
		check "$name" timeout 600 $py "$name" "$a" "$ga" "$b" "$gb" "$@"
		sed 's/^/     | /' /tmp/expect.out | tail -n 12
	fi
}

# skb_objs: socket buffers allocated now. The per-CPU slabs are flushed first, so that the
# count is of objects in use, not of slabs a CPU holds (/proc/slabinfo's active_objs).
skb_objs() {
	local c=/sys/kernel/slab/skbuff_head_cache
	echo 1 >"$c/shrink" 2>/dev/null
	cut -d' ' -f1 "$c/objects"
}
skb_before=$(skb_objs)

check "rdma link add rxe0 type rxe netdev eth0" rdma link add rxe0 type rxe netdev eth0
semantic bad_lkey rxe0 rxe0
semantic stop_at_error rxe0 rxe0
semantic atomic_sges rxe0 rxe0
semantic cq_resize rxe0 rxe0
semantic post_states rxe0 rxe0
semantic cq_overflow rxe0 rxe0
semantic solicited_error rxe0 rxe0
semantic wrap rxe0 rxe0
semantic comm_est rxe0 rxe0

# Event-driven traffic on both vCPUs: a lost or doubled completion event hangs a pair or
# makes it fail; every pair must finish.
# The debug kernel takes up to 100 ms a round trip on a loaded host: 5x the time, and up to a
# minute for a server to listen.
events() {
	local i pids=() rc=0 g t=300 listen=10
	[ "${VARIANT:-stock}" != debug ] || { t=1500 listen=60; }
	g=$(gid_ipv4 rxe0)
	for i in 0 1 2 3; do
		taskset -c $((i % 2)) timeout $t ibv_rc_pingpong -d rxe0 -g "$g" -e -p $((18700 + i)) \
			-s 64 -n 2000 >"/tmp/ev-srv$i.log" 2>&1 &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		wait_until $listen "tcp_listening $((18700 + i))"
		taskset -c $(((i + 1) % 2)) timeout $t ibv_rc_pingpong -d rxe0 -g "$g" -e \
			-p $((18700 + i)) -s 64 -n 2000 "$IP" >"/tmp/ev-cli$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	grep -h "iters in" /tmp/ev-cli*.log
	[ "$rc" = 0 ] || tail -n 3 /tmp/ev-*.log
	return $rc
}
check "CQ events: 4 pairs of ibv_rc_pingpong -e (2000 x 64 B) over both vCPUs" events
sed 's/^/     | /' /tmp/expect.out | tail -n 4

semantic destroy_loop rxe0 rxe0 200
semantic dereg_looped rxe0 rxe0 10
semantic odp_small rxe0 rxe0 20
check "rdma link del rxe0 after the destroy loop" timeout 60 rdma link del rxe0

# A lossy link between two namespaces: the requester's data packets (not its bare ACKs) lose 3 %.
netns_up() {
	veth_netns rxens veth0 veth1 10.11.0 &&
		rdma link add rxev0 type rxe netdev veth0 &&
		ip netns exec rxens rdma link add rxev1 type rxe netdev veth1 &&
		ping -c 1 -W 5 10.11.0.2
}
check "netns rxens + veth0/veth1, rxev0/rxev1" netns_up
check "netem loss 3 % on veth0" netem_data veth0 loss 3%
semantic lossy_write rxev0 rxev1
echo "rxev0 after the lossy write: rcvd_seq_err $(counter rxev0/1 rcvd_seq_err)," \
	"completer_retry_err $(counter rxev0/1 completer_retry_err), sent_pkts $(counter rxev0/1 sent_pkts)"
# Losses show as sequence NAKs, or as retries once a driver gives up on them (C: the 1 in 6
# runs where its first WRITE ends RETRY_EXC_ERR after a few NAKs).
check "the link lost packets (the requester saw sequence NAKs or retried)" \
	test $(($(counter rxev0/1 rcvd_seq_err) + $(counter rxev0/1 completer_retry_err))) -gt 6
tc qdisc del dev veth0 root 2>/dev/null

# MRs deregistered and freed while packets that use them wait in the links' queues (20 ms each
# way): at path MTU 4096 rxe-rs's payloads ride in them by reference, so their pages must
# outlive the MR.
check "MTU 9000 and netem delay 20 ms on veth0 and veth1" sh -ec '
	ip link set veth0 mtu 9000
	ip netns exec rxens ip link set veth1 mtu 9000
	tc qdisc add dev veth0 root netem delay 20ms
	ip netns exec rxens tc qdisc add dev veth1 root netem delay 20ms'
# On rxe-rs, that the payloads did go by reference: a kprobe counts the page fragments attached.
kp=/sys/kernel/tracing
[ "${DRIVER:-rs}" = c ] || {
	echo 'p:rxe_rs_frag rxe_rs_skb_attach_page' >>"$kp/kprobe_events"
	echo 1 >"$kp/events/kprobes/rxe_rs_frag/enable"
}
semantic dereg_in_flight rxev0 rxev1 10
semantic mw_inv_in_flight rxev0 rxev1
if [ "${DRIVER:-rs}" != c ]; then
	frags=$(awk '$1 == "rxe_rs_frag" { print $2 }' "$kp/kprobe_profile")
	echo "page fragments attached: ${frags:-none}"
	check "rxe-rs sent the page-sized payloads by reference (page fragments attached)" \
		test "${frags:-0}" -gt 500
	echo 0 >"$kp/events/kprobes/rxe_rs_frag/enable"
	echo '-:rxe_rs_frag' >>"$kp/kprobe_events"
fi
tc qdisc del dev veth0 root 2>/dev/null
ip netns exec rxens tc qdisc del dev veth1 root 2>/dev/null
check "rdma link del rxev0, rxev1; netns removed" sh -ec '
	rdma link del rxev0; ip netns exec rxens rdma link del rxev1; ip netns del rxens'

# Nothing held back: the module unloads and the skb cache is where it started.
check "modprobe -r $module" timeout 60 modprobe -r "$module"
sleep 2
skb_after=$(skb_objs)
echo "skbuff_head_cache objects: $skb_before before, $skb_after after"
check "no skb left behind (skbuff_head_cache within 64 objects of where it started)" \
	test "$skb_after" -le $((skb_before + 64))
tally
