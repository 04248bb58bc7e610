// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The members of a multicast group (`struct rxe_mcg`'s list of `struct rxe_mca`): the numbers
//! of the QPs attached to it, in attach order, at most `RXE_MAX_MCAST_QP_ATTACH`.

use super::{params::MAX_MCAST_QP_ATTACH, Errno};

/// QPs per group (`RXE_MAX_MCAST_QP_ATTACH`).
pub const MAX_QPS: usize = MAX_MCAST_QP_ATTACH as usize;

/// The QP numbers of one group, in attach order; a plain value (copied out by the receive path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Members {
    qpns: [u32; MAX_QPS],
    len: usize,
}

impl Default for Members {
    fn default() -> Self {
        Self::new()
    }
}

impl Members {
    /// No member.
    pub const fn new() -> Self {
        Self {
            qpns: [0; MAX_QPS],
            len: 0,
        }
    }

    /// The QP numbers, in attach order.
    pub fn qpns(&self) -> &[u32] {
        self.qpns.get(..self.len).unwrap_or(&[])
    }

    /// Whether `qpn` is a member.
    pub fn contains(&self, qpn: u32) -> bool {
        self.qpns().contains(&qpn)
    }

    /// Whether the group has no member left.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `qpn` last (the caller checked it is not a member): [`Errno::NoMem`] when the group
    /// is full, as `__rxe_init_mca`.
    pub fn push(&mut self, qpn: u32) -> Result<(), Errno> {
        let slot = self.qpns.get_mut(self.len).ok_or(Errno::NoMem)?;
        *slot = qpn;
        self.len += 1;
        Ok(())
    }

    /// Removes `qpn`, keeping the order of the others; whether it was a member.
    pub fn remove(&mut self, qpn: u32) -> bool {
        let Some(i) = self.qpns().iter().position(|&q| q == qpn) else {
            return false;
        };
        self.qpns.copy_within(i + 1..self.len, i);
        self.len -= 1;
        true
    }
}
