// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around the network stack: socket buffers, routes and the RoCEv2 UDP tunnel
//! sockets.

pub(crate) mod crc;
pub(crate) mod netdev;
pub(crate) mod route;
pub(crate) mod skb;
pub(crate) mod tunnel;
