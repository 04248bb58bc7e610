// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The WR opcode table, `rxe_wr_opcode_info[]` of `rxe_opcode.c`: what each `IB_WR_*` opcode
//! does on each QP type ([`WrMask`], the C `enum rxe_wr_mask`), its name, and which opcodes
//! only kernel ULPs may post.

use super::verbs::{
    IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_ATOMIC_WRITE, IB_WR_BIND_MW,
    IB_WR_FLUSH, IB_WR_LOCAL_INV, IB_WR_LSO, IB_WR_RDMA_READ, IB_WR_RDMA_READ_WITH_INV,
    IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_REG_MR, IB_WR_SEND, IB_WR_SEND_WITH_IMM,
    IB_WR_SEND_WITH_INV,
};
use crate::proto::qp_state::QpType;

/// What kind of work a WR opcode is, bit for bit the C `enum rxe_wr_mask`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrMask(u32);

impl WrMask {
    /// No bit set.
    pub const NONE: Self = Self(0);
    /// `WR_INLINE_MASK`: may carry its data inline ([`IB_SEND_INLINE`](super::IB_SEND_INLINE)).
    pub const INLINE: Self = Self(1 << 0);
    /// `WR_ATOMIC_MASK`: compare-and-swap or fetch-and-add.
    pub const ATOMIC: Self = Self(1 << 1);
    /// `WR_SEND_MASK`.
    pub const SEND: Self = Self(1 << 2);
    /// `WR_READ_MASK`.
    pub const READ: Self = Self(1 << 3);
    /// `WR_WRITE_MASK`.
    pub const WRITE: Self = Self(1 << 4);
    /// `WR_LOCAL_OP_MASK`: executed by the requester itself, no packet.
    pub const LOCAL_OP: Self = Self(1 << 5);
    /// `WR_FLUSH_MASK`.
    pub const FLUSH: Self = Self(1 << 6);
    /// `WR_ATOMIC_WRITE_MASK`.
    pub const ATOMIC_WRITE: Self = Self(1 << 7);
    /// `WR_READ_OR_WRITE_MASK`.
    pub const READ_OR_WRITE: Self = Self::READ.union(Self::WRITE);
    /// `WR_WRITE_OR_SEND_MASK`.
    pub const WRITE_OR_SEND: Self = Self::WRITE.union(Self::SEND);
    /// `WR_ATOMIC_OR_READ_MASK`.
    pub const ATOMIC_OR_READ: Self = Self::ATOMIC.union(Self::READ);
}

bit_mask_ops!(WrMask);

/// `rxe_wr_opcode_info[opcode].mask[qp_type]` (`wr_opcode_mask()`): what WR `opcode` does on a
/// QP of type `qp_type`; `None` where the C entry is 0 (not allowed on that QP type, or not
/// supported at all) and for opcodes past the end of the C table, which C would index out of
/// bounds.
pub const fn wr_opcode_mask(opcode: u32, qp_type: QpType) -> Option<WrMask> {
    use QpType::{Gsi, Rc, Uc, Ud};
    let mask = match (opcode, qp_type) {
        (IB_WR_RDMA_WRITE | IB_WR_RDMA_WRITE_WITH_IMM, Rc | Uc) => {
            WrMask::INLINE.union(WrMask::WRITE)
        }
        (IB_WR_SEND | IB_WR_SEND_WITH_IMM, Gsi | Rc | Uc | Ud) => {
            WrMask::INLINE.union(WrMask::SEND)
        }
        (IB_WR_SEND_WITH_INV, Rc | Uc | Ud) => WrMask::INLINE.union(WrMask::SEND),
        (IB_WR_RDMA_READ | IB_WR_RDMA_READ_WITH_INV, Rc) => WrMask::READ,
        (IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD, Rc) => WrMask::ATOMIC,
        (IB_WR_LOCAL_INV | IB_WR_REG_MR, Rc) => WrMask::LOCAL_OP,
        (IB_WR_BIND_MW, Rc | Uc) => WrMask::LOCAL_OP,
        (IB_WR_FLUSH, Rc) => WrMask::FLUSH,
        (IB_WR_ATOMIC_WRITE, Rc) => WrMask::ATOMIC_WRITE,
        _ => return None,
    };
    Some(mask)
}

/// `rxe_wr_opcode_info[opcode].name`, e.g. `"IB_WR_SEND"`; `None` outside the C table.
pub const fn wr_opcode_name(opcode: u32) -> Option<&'static str> {
    Some(match opcode {
        IB_WR_RDMA_WRITE => "IB_WR_RDMA_WRITE",
        IB_WR_RDMA_WRITE_WITH_IMM => "IB_WR_RDMA_WRITE_WITH_IMM",
        IB_WR_SEND => "IB_WR_SEND",
        IB_WR_SEND_WITH_IMM => "IB_WR_SEND_WITH_IMM",
        IB_WR_RDMA_READ => "IB_WR_RDMA_READ",
        IB_WR_ATOMIC_CMP_AND_SWP => "IB_WR_ATOMIC_CMP_AND_SWP",
        IB_WR_ATOMIC_FETCH_AND_ADD => "IB_WR_ATOMIC_FETCH_AND_ADD",
        IB_WR_LSO => "IB_WR_LSO",
        IB_WR_SEND_WITH_INV => "IB_WR_SEND_WITH_INV",
        IB_WR_RDMA_READ_WITH_INV => "IB_WR_RDMA_READ_WITH_INV",
        IB_WR_LOCAL_INV => "IB_WR_LOCAL_INV",
        IB_WR_REG_MR => "IB_WR_REG_MR",
        IB_WR_BIND_MW => "IB_WR_BIND_MW",
        IB_WR_FLUSH => "IB_WR_FLUSH",
        IB_WR_ATOMIC_WRITE => "IB_WR_ATOMIC_WRITE",
        _ => return None,
    })
}

/// Whether `opcode` is one only kernel ULPs may post (`IB_WR_REG_MR` and up): its C ring entry
/// holds a kernel pointer.
pub const fn wr_opcode_is_kernel_only(opcode: u32) -> bool {
    opcode >= IB_WR_REG_MR
}
