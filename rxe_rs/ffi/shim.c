// SPDX-License-Identifier: GPL-2.0
/*
 * C shims: static inline functions and macros of the kernel headers, made callable from
 * Rust. Each is a one-line forwarder; the logic lives in Rust.
 */
#include <linux/if_vlan.h>
#include <linux/etherdevice.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/cache.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ib_umem.h>
#include <linux/random.h>
#include <rdma/ib_verbs.h>
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

void rxe_rs_eth_random_addr(u8 *addr)
{
	eth_random_addr(addr);
}

struct socket *rxe_rs_udp_tunnel_open(struct net *net, bool ipv6,
				      int (*encap_rcv)(struct sock *sk, struct sk_buff *skb))
{
	struct udp_port_cfg udp_cfg = {};
	struct udp_tunnel_sock_cfg tnl_cfg = {};
	struct socket *sock;
	int err;

	if (ipv6) {
		udp_cfg.family = AF_INET6;
		udp_cfg.ipv6_v6only = 1;
	} else {
		udp_cfg.family = AF_INET;
	}
	udp_cfg.local_udp_port = htons(ROCE_V2_UDP_DPORT);
	err = udp_sock_create(net, &udp_cfg, &sock);
	if (err < 0)
		return ERR_PTR(err);
	tnl_cfg.encap_type = 1;
	tnl_cfg.encap_rcv = encap_rcv;
	setup_udp_tunnel_sock(net, sock->sk, &tnl_cfg);
	return sock;
}

void rxe_rs_udp_tunnel_close(struct socket *sock)
{
	udp_tunnel_sock_release(sock->sk);
}

void rxe_rs_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void *rxe_rs_vmalloc_user(unsigned long size)
{
	return vmalloc_user(size);
}

void rxe_rs_vfree(void *addr)
{
	vfree(addr);
}

int rxe_rs_remap_vmalloc_range(struct vm_area_struct *vma, void *addr)
{
	return remap_vmalloc_range(vma, addr, 0);
}

unsigned long rxe_rs_vma_offset(const struct vm_area_struct *vma)
{
	return vma->vm_pgoff << PAGE_SHIFT;
}

unsigned long rxe_rs_vma_size(const struct vm_area_struct *vma)
{
	return vma->vm_end - vma->vm_start;
}

int rxe_rs_ib_copy_to_udata(struct ib_udata *udata, const void *src, size_t len)
{
	return ib_copy_to_udata(udata, (void *)src, len);
}

struct ib_ucontext *rxe_rs_udata_context(struct uverbs_attr_bundle *attrs)
{
	return attrs->context;
}

unsigned int rxe_rs_cache_line_size(void)
{
	return cache_line_size();
}

struct ib_umem *rxe_rs_ib_umem_get(struct ib_device *ibdev, u64 start, u64 length, int access)
{
	return ib_umem_get_va(ibdev, start, length, access);
}

u8 rxe_rs_get_random_u8(void)
{
	return get_random_u8();
}

int rxe_rs_gid_attr_network_type(const struct ib_gid_attr *attr)
{
	return rdma_gid_attr_network_type(attr);
}
