// SPDX-License-Identifier: GPL-2.0
/*
 * C shims: static inline functions and macros of the kernel headers, made callable from
 * Rust. Each is a one-line forwarder; the logic lives in Rust.
 */
#include <linux/if_vlan.h>
#include "rxe_rs_ffi.h"

const char *rxe_rs_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}

void rxe_rs_dev_hold(struct net_device *ndev)
{
	dev_hold(ndev);
}

void rxe_rs_dev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

struct net *rxe_rs_dev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

bool rxe_rs_netif_is_up(const struct net_device *ndev)
{
	return netif_get_flags(ndev) & IFF_UP;
}

bool rxe_rs_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

struct net_device *rxe_rs_netdev_notifier_info_to_dev(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

void rxe_rs_ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}

enum ib_port_state rxe_rs_ib_get_curr_port_state(struct net_device *ndev)
{
	return ib_get_curr_port_state(ndev);
}

int rxe_rs_ib_no_udata_io(struct ib_udata *udata)
{
	return ib_no_udata_io(udata);
}

unsigned int rxe_rs_num_possible_cpus(void)
{
	return num_possible_cpus();
}
