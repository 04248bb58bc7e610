// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around ib_core.

pub(crate) mod link;
pub(crate) mod netdev;
