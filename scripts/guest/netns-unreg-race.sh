#!/bin/bash
# Diagnostic (asserts nothing; vm-run --debug reports what KASAN says): a namespace deleted
# while rxe devices are unregistered, for either driver. In shared rdma netns mode every device
# has a compat device in every other namespace; the namespace's exit removes them, and so does
# each device's unregistration. Both at once is the race this probes: ib_core's
# remove_one_compat_dev() takes the compat device out of the xarray under a mutex but calls
# device_del() after dropping it, so the namespace exit can finish (and free the namespace's
# uevent socket) while the unregistration still sends the compat device's remove uevent.
#   scripts/vm-run --driver c|rs --debug --timeout 1800 -- scripts/guest/netns-unreg-race.sh [rounds] [devices]
rounds=${1:-20} ndev=${2:-4}
for r in $(seq "$rounds"); do
	ip netns add race$r
	for i in $(seq "$ndev"); do
		ip link add rd$i type dummy; ip link set rd$i up
		rdma link add rxerd$i type rxe netdev rd$i
	done
	ip netns del race$r
	for i in $(seq "$ndev"); do ip link del rd$i; done
	for _ in $(seq 50); do rdma link show | grep -q rxerd || break; sleep 0.2; done
	echo "round $r: $(rdma link show | grep -c rxerd) rxe devices left"
done
sleep 5
echo "race probe done"
