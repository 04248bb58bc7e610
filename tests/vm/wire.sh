#!/bin/bash
# Guest test (either driver): RC QPs against a peer that is a python script, not an RDMA device
# (tests/vm/py/wire_packets.py): as the responder, packets to drop, each operation's answer,
# PSN sequence and RNR NAKs, duplicates, class C errors; as the requester, its requests, and
# its completions of good, bad and missing responses. Every packet of the device's read back
# whole, its ICRC checked. rxew0 on veth0 (10.20.0.1), the script's packets from veth1
# (10.20.0.2) in the namespace wirens.
. "$(dirname "$0")/lib.sh"
veth_netns wirens veth0 veth1 10.20.0
rdma link add rxew0 type rxe netdev veth0
gid=""
wait_gid rxew0 ::ffff:
gid=$(gid_ipv4 rxew0)
echo "rxew0 IPv4 GID index: ${gid:-none}"
rc=0
timeout 300 python3 "$(dirname "$0")/py/wire_packets.py" rxew0 "${gid:-1}" wirens || rc=$?
rdma link del rxew0
ip netns del wirens
[ "$rc" = 0 ] || { echo "wire_packets.py exit $rc"; exit 1; }
