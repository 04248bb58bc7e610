/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rxe-rs's FFI layer: the headers bindgen turns into rxe_rs/ffi's raw
 * bindings, and the prototypes of the C shims (rxe_rs/ffi/shim.c) that wrap static inline
 * functions and macros Rust cannot call directly.
 */
#ifndef RXE_RS_FFI_H
#define RXE_RS_FFI_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_addr.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rdma_user_rxe.h>
#include <net/udp_tunnel.h>
#include <net/ip6_route.h>

/* netdev_name() is a static inline. */
const char *rxe_rs_netdev_name(const struct net_device *ndev);

#endif /* RXE_RS_FFI_H */
