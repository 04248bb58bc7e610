// SPDX-License-Identifier: GPL-2.0
/*
 * C shims: static inline functions and macros of the kernel headers, made callable from
 * Rust. Each is a one-line forwarder; the logic lives in Rust.
 */
#include "rxe_rs_ffi.h"

const char *rxe_rs_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}
