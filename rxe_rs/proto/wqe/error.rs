// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! [`WqeError`]: why a slot is not a usable work queue entry or completion.

use super::verbs::{WcStatus, IB_WC_LOC_QP_OP_ERR};

/// Why a slot is not a usable work queue entry or completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeError {
    /// The slot is shorter than the fixed part of the entry.
    Truncated,
    /// A CQE whose status is not one of `enum ib_wc_status`.
    BadStatus(u32),
    /// The WR opcode is not in the C table or not allowed on this QP type
    /// ([`wr_opcode_mask`](super::wr_opcode_mask) is `None`).
    BadOpcode(u32),
    /// A kernel-only WR opcode ([`IB_WR_REG_MR`](super::IB_WR_REG_MR)) in a ring user space writes.
    KernelOnlyOpcode(u32),
    /// More SGEs than the queue was made for.
    TooManySge {
        /// `dma.num_sge` of the entry.
        num_sge: u32,
        /// The queue's limit.
        max_sge: u32,
    },
    /// The SGEs, inline data or atomic write value run past the end of the slot.
    DataOutOfSlot,
    /// More inline data than the queue was made for.
    InlineTooLong {
        /// `dma.length` of the entry.
        length: u32,
        /// The queue's limit.
        max_inline: u32,
    },
    /// The SGE lengths do not add up in 32 bits.
    LengthOverflow,
    /// `dma.length` is not the sum of the SGE lengths.
    LengthMismatch {
        /// `dma.length` of the entry.
        length: u32,
        /// The sum of the SGE lengths.
        sum: u32,
    },
    /// The message is longer than [`PORT_MAX_MSG_SZ`](crate::proto::params::PORT_MAX_MSG_SZ) (the C
    /// post paths refuse it, and C `copy_data()` keeps the residue in an `int`).
    MessageTooLong(u32),
    /// An ATOMIC WRITE whose `dma.length` is not 8.
    AtomicWriteLength(u32),
    /// A kernel compare-and-swap or fetch-and-add whose SGEs are not 8 bytes, or whose remote
    /// address is not 8-byte aligned (C `validate_send_wr`).
    BadAtomic,
    /// [`IB_SEND_INLINE`](super::IB_SEND_INLINE) on a kernel WR whose opcode cannot carry inline
    /// data (C `validate_send_wr`; user space's WQEs ignore the flag there, as C's requester does).
    InlineNotAllowed(u32),
    /// [`write_send_wqe`](super::write_send_wqe) was given data of the wrong kind for the opcode
    /// and flags, or a [`WrDetail`](super::WrDetail) that the opcode does not read back.
    Inconsistent,
}

impl WqeError {
    /// The completion status for a WQE refused by the requester: `IB_WC_LOC_QP_OP_ERR`, as the
    /// C requester completes a WQE with a bad `num_sge` or opcode.
    pub const fn wc_status(self) -> WcStatus {
        IB_WC_LOC_QP_OP_ERR
    }
}
