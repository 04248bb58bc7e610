// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Send WQEs (`struct rxe_send_wqe`, `struct rxe_send_wr`): the member of the `wr` union
//! ([`WrDetail`]), where the data is ([`DataKind`]), [`SendWqe::parse`] of a slot copy, and
//! [`write_send_wqe`] for the posts of kernel ULPs (C `init_send_wqe()` of `rxe_verbs.c`).

use super::bytes::{
    data_range, ex_to_imm, put, put_u16, put_u32, put_u64, u16_at, u32_at, u64_at, u8_at,
};
use super::error::WqeError;
use super::layout::{
    DMA_INFO_LENGTH_OFFSET, DMA_INFO_NUM_SGE_OFFSET, DMA_INFO_RESID_OFFSET, SEND_WQE_DATA_OFFSET,
    SEND_WQE_DMA_OFFSET, SEND_WQE_HDR_LEN, SEND_WQE_IOVA_OFFSET, SEND_WR_ATOMIC_COMPARE_ADD_OFFSET,
    SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET, SEND_WR_ATOMIC_RKEY_OFFSET, SEND_WR_ATOMIC_SWAP_OFFSET,
    SEND_WR_EX_OFFSET, SEND_WR_FLUSH_LENGTH_OFFSET, SEND_WR_FLUSH_LEVEL_OFFSET,
    SEND_WR_FLUSH_REMOTE_ADDR_OFFSET, SEND_WR_FLUSH_RKEY_OFFSET, SEND_WR_FLUSH_TYPE_OFFSET,
    SEND_WR_MW_ACCESS_OFFSET, SEND_WR_MW_ADDR_OFFSET, SEND_WR_MW_LENGTH_OFFSET,
    SEND_WR_MW_MR_LKEY_OFFSET, SEND_WR_MW_MW_RKEY_OFFSET, SEND_WR_MW_RKEY_OFFSET,
    SEND_WR_OPCODE_OFFSET, SEND_WR_RDMA_REMOTE_ADDR_OFFSET, SEND_WR_RDMA_RKEY_OFFSET,
    SEND_WR_REG_ACCESS_OFFSET, SEND_WR_REG_KEY_OFFSET, SEND_WR_SEND_FLAGS_OFFSET,
    SEND_WR_UD_AH_NUM_OFFSET, SEND_WR_UD_PKEY_INDEX_OFFSET, SEND_WR_UD_REMOTE_QKEY_OFFSET,
    SEND_WR_UD_REMOTE_QPN_OFFSET, SEND_WR_WR_ID_OFFSET, SGE_LEN,
};
use super::sges::{check_sges, sge_bytes, sum_sges, Sge};
use super::verbs::{
    IB_SEND_INLINE, IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_ATOMIC_WRITE,
    IB_WR_BIND_MW, IB_WR_FLUSH, IB_WR_RDMA_READ, IB_WR_RDMA_READ_WITH_INV, IB_WR_RDMA_WRITE,
    IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_REG_MR,
};
use super::wr_opcode::{wr_opcode_is_kernel_only, wr_opcode_mask, WrMask};
use crate::proto::qp_state::QpType;

/// The member of the `wr` union a send WQE uses, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrDetail {
    /// No member: SEND, SEND_WITH_IMM, SEND_WITH_INV and LOCAL_INV on RC and UC QPs.
    None,
    /// `wr.rdma`: RDMA WRITE (with or without immediate), RDMA READ (with or without
    /// invalidate), and ATOMIC WRITE.
    Rdma {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `wr.atomic`: compare-and-swap and fetch-and-add.
    Atomic {
        /// Remote virtual address, 8-byte aligned.
        remote_addr: u64,
        /// Value to compare with (compare-and-swap) or to add (fetch-and-add).
        compare_add: u64,
        /// Value to swap in (compare-and-swap).
        swap: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `wr.ud`: every WQE of a UD or GSI QP, whatever the opcode.
    Ud {
        /// Destination QP number.
        remote_qpn: u32,
        /// Destination Q_Key.
        remote_qkey: u32,
        /// P_Key index (GSI only).
        pkey_index: u16,
        /// Address handle number; 0 means the address vector is in the WQE
        /// ([`ud_av_bytes`](super::ud_av_bytes)).
        ah_num: u32,
    },
    /// `wr.flush`.
    Flush {
        /// Remote virtual address.
        remote_addr: u64,
        /// `wr.flush.length` (the C requester sends `dma.length` instead, see
        /// [`SendWqe::length`]).
        length: u32,
        /// Remote key.
        rkey: u32,
        /// Placement type (`IB_FLUSH_GLOBAL`, `IB_FLUSH_PERSISTENT`).
        type_: u8,
        /// Selectivity level (`IB_FLUSH_RANGE`, `IB_FLUSH_MR`).
        level: u8,
    },
    /// `wr.mw`: BIND_MW.
    Mw {
        /// Start of the window.
        addr: u64,
        /// Length of the window.
        length: u64,
        /// Local key of the MR the window is bound to.
        mr_lkey: u32,
        /// Current rkey of the window.
        mw_rkey: u32,
        /// New rkey of the window.
        rkey: u32,
        /// Access flags of the window.
        access: u32,
    },
    /// `wr.reg`: REG_MR, kernel rings only. The C entry also holds the `struct ib_mr *`, which
    /// is neither read nor written here: the MR is the one whose key index is `key >> 8` (C
    /// `rxe_reg_fast_mr()` requires `(mr->lkey & ~0xff) == (key & ~0xff)`).
    Reg {
        /// New lkey / rkey of the MR.
        key: u32,
        /// Access flags.
        access: u32,
    },
}

impl WrDetail {
    /// The member the C requester reads for `opcode` on a `qp_type` QP.
    fn read(hdr: &[u8], opcode: u32, qp_type: QpType) -> Self {
        if matches!(qp_type, QpType::Ud | QpType::Gsi) {
            return Self::Ud {
                remote_qpn: u32_at(hdr, SEND_WR_UD_REMOTE_QPN_OFFSET),
                remote_qkey: u32_at(hdr, SEND_WR_UD_REMOTE_QKEY_OFFSET),
                pkey_index: u16_at(hdr, SEND_WR_UD_PKEY_INDEX_OFFSET),
                ah_num: u32_at(hdr, SEND_WR_UD_AH_NUM_OFFSET),
            };
        }
        match opcode {
            IB_WR_RDMA_WRITE
            | IB_WR_RDMA_WRITE_WITH_IMM
            | IB_WR_RDMA_READ
            | IB_WR_RDMA_READ_WITH_INV
            | IB_WR_ATOMIC_WRITE => Self::Rdma {
                remote_addr: u64_at(hdr, SEND_WR_RDMA_REMOTE_ADDR_OFFSET),
                rkey: u32_at(hdr, SEND_WR_RDMA_RKEY_OFFSET),
            },
            IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD => Self::Atomic {
                remote_addr: u64_at(hdr, SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET),
                compare_add: u64_at(hdr, SEND_WR_ATOMIC_COMPARE_ADD_OFFSET),
                swap: u64_at(hdr, SEND_WR_ATOMIC_SWAP_OFFSET),
                rkey: u32_at(hdr, SEND_WR_ATOMIC_RKEY_OFFSET),
            },
            IB_WR_FLUSH => Self::Flush {
                remote_addr: u64_at(hdr, SEND_WR_FLUSH_REMOTE_ADDR_OFFSET),
                length: u32_at(hdr, SEND_WR_FLUSH_LENGTH_OFFSET),
                rkey: u32_at(hdr, SEND_WR_FLUSH_RKEY_OFFSET),
                type_: u8_at(hdr, SEND_WR_FLUSH_TYPE_OFFSET),
                level: u8_at(hdr, SEND_WR_FLUSH_LEVEL_OFFSET),
            },
            IB_WR_BIND_MW => Self::Mw {
                addr: u64_at(hdr, SEND_WR_MW_ADDR_OFFSET),
                length: u64_at(hdr, SEND_WR_MW_LENGTH_OFFSET),
                mr_lkey: u32_at(hdr, SEND_WR_MW_MR_LKEY_OFFSET),
                mw_rkey: u32_at(hdr, SEND_WR_MW_MW_RKEY_OFFSET),
                rkey: u32_at(hdr, SEND_WR_MW_RKEY_OFFSET),
                access: u32_at(hdr, SEND_WR_MW_ACCESS_OFFSET),
            },
            IB_WR_REG_MR => Self::Reg {
                key: u32_at(hdr, SEND_WR_REG_KEY_OFFSET),
                access: u32_at(hdr, SEND_WR_REG_ACCESS_OFFSET),
            },
            _ => Self::None,
        }
    }

    /// Writes the member into the `wr` union of `hdr`, whose other bytes the caller zeroed.
    fn write(&self, hdr: &mut [u8]) {
        match *self {
            Self::None => {}
            Self::Rdma { remote_addr, rkey } => {
                put_u64(hdr, SEND_WR_RDMA_REMOTE_ADDR_OFFSET, remote_addr);
                put_u32(hdr, SEND_WR_RDMA_RKEY_OFFSET, rkey);
            }
            Self::Atomic {
                remote_addr,
                compare_add,
                swap,
                rkey,
            } => {
                put_u64(hdr, SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET, remote_addr);
                put_u64(hdr, SEND_WR_ATOMIC_COMPARE_ADD_OFFSET, compare_add);
                put_u64(hdr, SEND_WR_ATOMIC_SWAP_OFFSET, swap);
                put_u32(hdr, SEND_WR_ATOMIC_RKEY_OFFSET, rkey);
            }
            Self::Ud {
                remote_qpn,
                remote_qkey,
                pkey_index,
                ah_num,
            } => {
                put_u32(hdr, SEND_WR_UD_REMOTE_QPN_OFFSET, remote_qpn);
                put_u32(hdr, SEND_WR_UD_REMOTE_QKEY_OFFSET, remote_qkey);
                put_u16(hdr, SEND_WR_UD_PKEY_INDEX_OFFSET, pkey_index);
                put_u32(hdr, SEND_WR_UD_AH_NUM_OFFSET, ah_num);
            }
            Self::Flush {
                remote_addr,
                length,
                rkey,
                type_,
                level,
            } => {
                put_u64(hdr, SEND_WR_FLUSH_REMOTE_ADDR_OFFSET, remote_addr);
                put_u32(hdr, SEND_WR_FLUSH_LENGTH_OFFSET, length);
                put_u32(hdr, SEND_WR_FLUSH_RKEY_OFFSET, rkey);
                put(hdr, SEND_WR_FLUSH_TYPE_OFFSET, [type_]);
                put(hdr, SEND_WR_FLUSH_LEVEL_OFFSET, [level]);
            }
            Self::Mw {
                addr,
                length,
                mr_lkey,
                mw_rkey,
                rkey,
                access,
            } => {
                put_u64(hdr, SEND_WR_MW_ADDR_OFFSET, addr);
                put_u64(hdr, SEND_WR_MW_LENGTH_OFFSET, length);
                put_u32(hdr, SEND_WR_MW_MR_LKEY_OFFSET, mr_lkey);
                put_u32(hdr, SEND_WR_MW_MW_RKEY_OFFSET, mw_rkey);
                put_u32(hdr, SEND_WR_MW_RKEY_OFFSET, rkey);
                put_u32(hdr, SEND_WR_MW_ACCESS_OFFSET, access);
            }
            Self::Reg { key, access } => {
                put_u32(hdr, SEND_WR_REG_KEY_OFFSET, key);
                put_u32(hdr, SEND_WR_REG_ACCESS_OFFSET, access);
            }
        }
    }

    /// The remote address of an RDMA, atomic or flush member: the `iova` a fresh WQE starts
    /// from, and what the C `req_retry()` resets it to.
    pub const fn remote_addr(&self) -> Option<u64> {
        match *self {
            Self::Rdma { remote_addr, .. }
            | Self::Atomic { remote_addr, .. }
            | Self::Flush { remote_addr, .. } => Some(remote_addr),
            _ => None,
        }
    }
}

/// Where the data of a send WQE is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// No data: local operations ([`WrMask::LOCAL_OP`]) and FLUSH.
    None,
    /// Behind [`SendWqe::num_sge`] SGEs ([`sge`](super::sge)); walk them with a
    /// [`DmaCursor`](super::DmaCursor). Also the buffers an RDMA READ or atomic response lands in.
    Sges,
    /// [`SendWqe::length`] bytes in the WQE ([`inline_data`](super::inline_data)):
    /// [`IB_SEND_INLINE`] on an opcode with [`WrMask::INLINE`]. On other opcodes the C driver
    /// ignores the flag, and so does this.
    Inline,
    /// The 8 bytes of an ATOMIC WRITE ([`atomic_write_value`](super::atomic_write_value)).
    AtomicWrite,
}

impl DataKind {
    /// Where the data of a WQE with this mask and these `send_flags` is.
    pub const fn of(mask: WrMask, send_flags: u32) -> Self {
        if mask.intersects(WrMask::LOCAL_OP.union(WrMask::FLUSH)) {
            Self::None
        } else if mask.contains(WrMask::ATOMIC_WRITE) {
            Self::AtomicWrite
        } else if mask.contains(WrMask::INLINE) && send_flags & IB_SEND_INLINE != 0 {
            Self::Inline
        } else {
            Self::Sges
        }
    }
}

/// The send queue's limits a WQE is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendLimits {
    /// `sq.max_sge`.
    pub max_sge: u32,
    /// `sq.max_inline`.
    pub max_inline: u32,
    /// Whether kernel-only opcodes ([`wr_opcode_is_kernel_only`]) are allowed: `true` for the
    /// ring of a kernel QP only, never for a ring user space writes.
    pub allow_kernel_only: bool,
}

/// A send work request as a kernel ULP posts it: what [`write_send_wqe`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWr {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// `IB_WR_*`.
    pub opcode: u32,
    /// `IB_SEND_*` bits.
    pub send_flags: u32,
    /// `ex` as stored: see [`imm_to_ex`](super::imm_to_ex) for an immediate value; the invalidate
    /// rkey as is.
    pub ex: u32,
    /// The member of the `wr` union the opcode uses on this QP type.
    pub detail: WrDetail,
}

/// A send WQE read from a private copy of a send queue slot and checked by [`SendWqe::parse`].
/// The SGEs, inline data and atomic write value stay in the slot copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWqe {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// `IB_WR_*`, allowed on the QP type.
    pub opcode: u32,
    /// `IB_SEND_*` bits, as stored.
    pub send_flags: u32,
    /// `ex` as stored (read little endian): the immediate data in network byte order
    /// ([`Self::imm_be_bytes`], [`Self::imm_data`]) or the rkey to invalidate.
    pub ex: u32,
    /// The member of the `wr` union the opcode uses on this QP type.
    pub detail: WrDetail,
    /// `iova` as stored: the remote address of the first packet (RETH, ATMETH). Providers set
    /// it to the remote address of `detail`; the C requester uses it for the first transmission
    /// and [`WrDetail::remote_addr`] on retries.
    pub iova: u64,
    /// Bytes of the message: the sum of the SGE lengths for [`DataKind::Sges`], the inline
    /// bytes for [`DataKind::Inline`], 8 for [`DataKind::AtomicWrite`], `dma.length` as stored
    /// for FLUSH (the RETH length the C requester sends), 0 for local operations.
    pub length: u32,
    /// SGEs, for [`DataKind::Sges`]; 0 otherwise.
    pub num_sge: u32,
    /// [`wr_opcode_mask`] of the opcode on the QP type.
    pub mask: WrMask,
    /// Where the data is.
    pub data: DataKind,
}

impl SendWqe {
    /// Reads and checks the send WQE in `slot`, a private copy of one slot of the send queue of
    /// a `qp_type` QP.
    ///
    /// Checks, beyond what the C requester does: the slot holds the fixed part; the opcode is
    /// in the C table and allowed on the QP type (C indexes its table with it); kernel-only
    /// opcodes only if `limits` allows them (C would use the user's `wr.reg.mr` as a kernel
    /// pointer). Then, by [`DataKind`]: SGEs are at most `limits.max_sge` and within the slot,
    /// and `dma.length` is their sum (C trusts `dma.length`), at most
    /// [`PORT_MAX_MSG_SZ`](crate::proto::params::PORT_MAX_MSG_SZ); inline data is at most
    /// `limits.max_inline` and within the slot; an ATOMIC WRITE carries exactly 8 bytes (C sends
    /// `dma.length` bytes from the slot). The C progress state in the slot (`status`, `state`,
    /// `resid`, `cur_sge`, ...) is not read.
    ///
    /// Not checked here, as in C: the semantics of the operation (atomic length and alignment,
    /// the keys, the UD address).
    ///
    /// Inlined into its one caller in the driver, so that the WQE is written where it is kept.
    #[inline(always)]
    pub fn parse(slot: &[u8], qp_type: QpType, limits: SendLimits) -> Result<Self, WqeError> {
        let hdr = slot.get(..SEND_WQE_HDR_LEN).ok_or(WqeError::Truncated)?;
        let opcode = u32_at(hdr, SEND_WR_OPCODE_OFFSET);
        let mask = wr_opcode_mask(opcode, qp_type).ok_or(WqeError::BadOpcode(opcode))?;
        if wr_opcode_is_kernel_only(opcode) && !limits.allow_kernel_only {
            return Err(WqeError::KernelOnlyOpcode(opcode));
        }
        let send_flags = u32_at(hdr, SEND_WR_SEND_FLAGS_OFFSET);
        let stored_length = u32_at(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET);
        let stored_num_sge = u32_at(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET);
        let data = DataKind::of(mask, send_flags);
        let (length, num_sge) = match data {
            DataKind::None if mask.contains(WrMask::FLUSH) => (stored_length, 0),
            DataKind::None => (0, 0),
            DataKind::AtomicWrite => {
                if stored_length != 8 {
                    return Err(WqeError::AtomicWriteLength(stored_length));
                }
                data_range(slot.len(), SEND_WQE_DATA_OFFSET, 8)?;
                (8, 0)
            }
            DataKind::Inline => {
                if stored_length > limits.max_inline {
                    return Err(WqeError::InlineTooLong {
                        length: stored_length,
                        max_inline: limits.max_inline,
                    });
                }
                let len = usize::try_from(stored_length).map_err(|_| WqeError::DataOutOfSlot)?;
                data_range(slot.len(), SEND_WQE_DATA_OFFSET, len)?;
                (stored_length, 0)
            }
            DataKind::Sges => {
                check_sges(
                    slot,
                    SEND_WQE_DATA_OFFSET,
                    stored_num_sge,
                    limits.max_sge,
                    stored_length,
                )?;
                (stored_length, stored_num_sge)
            }
        };
        Ok(Self {
            wr_id: u64_at(hdr, SEND_WR_WR_ID_OFFSET),
            opcode,
            send_flags,
            ex: u32_at(hdr, SEND_WR_EX_OFFSET),
            detail: WrDetail::read(hdr, opcode, qp_type),
            iova: u64_at(hdr, SEND_WQE_IOVA_OFFSET),
            length,
            num_sge,
            mask,
            data,
        })
    }

    /// The work request part, as [`write_send_wqe`] takes it.
    pub const fn wr(&self) -> SendWr {
        SendWr {
            wr_id: self.wr_id,
            opcode: self.opcode,
            send_flags: self.send_flags,
            ex: self.ex,
            detail: self.detail,
        }
    }

    /// The immediate data as stored, in network byte order: the IMMDT header's bytes.
    pub const fn imm_be_bytes(&self) -> [u8; 4] {
        self.ex.to_le_bytes()
    }

    /// The immediate data as [`hdr::Immdt::imm`](crate::proto::hdr::Immdt::imm) holds it.
    pub const fn imm_data(&self) -> u32 {
        ex_to_imm(self.ex)
    }

    /// The rkey to invalidate (SEND_WITH_INV, LOCAL_INV, RDMA_READ_WITH_INV).
    pub const fn invalidate_rkey(&self) -> u32 {
        self.ex
    }

    /// Whether the data is inline ([`DataKind::Inline`]).
    pub const fn is_inline(&self) -> bool {
        matches!(self.data, DataKind::Inline)
    }
}

/// The data [`write_send_wqe`] puts after the fixed part of a send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendData<'a> {
    /// None, for [`DataKind::None`].
    None,
    /// The SGE list, for [`DataKind::Sges`].
    Sges(&'a [Sge]),
    /// The inline bytes, for [`DataKind::Inline`].
    Inline(&'a [u8]),
    /// The value, for [`DataKind::AtomicWrite`].
    AtomicWrite([u8; 8]),
}

impl SendData<'_> {
    /// Which kind of data this is.
    pub const fn kind(&self) -> DataKind {
        match self {
            Self::None => DataKind::None,
            Self::Sges(_) => DataKind::Sges,
            Self::Inline(_) => DataKind::Inline,
            Self::AtomicWrite(_) => DataKind::AtomicWrite,
        }
    }
}

/// Writes a send WQE into `slot` of a kernel QP's send queue, as the C `init_send_wqe()` does
/// for `ib_post_send()`, and returns it as [`SendWqe::parse`] reads it back, with the same
/// checks (so `limits` should allow kernel-only opcodes).
///
/// Writes the whole fixed part (C progress state and padding as 0), `dma.length` and `resid`
/// as the data's length, `num_sge` for SGEs, `iova` as [`WrDetail::remote_addr`] or 0, then the
/// data. For FLUSH, `dma.length` is the detail's flush length.
///
/// [`WqeError::Inconsistent`] when `data` is not the [`DataKind`] of the opcode and flags, or
/// `wr.detail` is not the member the opcode reads back; [`WqeError::BadAtomic`] and
/// [`WqeError::InlineNotAllowed`] for what C's `validate_send_wr` refuses;
/// [`WqeError::Truncated`] or [`WqeError::DataOutOfSlot`] (checked before anything is written)
/// when the slot is too short; any error of [`SendWqe::parse`] otherwise (the slot is then
/// written but invalid).
pub fn write_send_wqe(
    slot: &mut [u8],
    qp_type: QpType,
    limits: SendLimits,
    wr: &SendWr,
    data: SendData<'_>,
) -> Result<SendWqe, WqeError> {
    let mask = wr_opcode_mask(wr.opcode, qp_type).ok_or(WqeError::BadOpcode(wr.opcode))?;
    if data.kind() != DataKind::of(mask, wr.send_flags) {
        return Err(WqeError::Inconsistent);
    }
    if slot.len() < SEND_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    let (length, num_sge, data_len) = match data {
        SendData::None => match wr.detail {
            WrDetail::Flush { length, .. } => (length, 0, 0),
            _ => (0, 0, 0),
        },
        SendData::Sges(sges) => {
            let num_sge = u32::try_from(sges.len()).map_err(|_| WqeError::TooManySge {
                num_sge: u32::MAX,
                max_sge: limits.max_sge,
            })?;
            (sum_sges(sges)?, num_sge, sge_bytes(num_sge)?)
        }
        SendData::Inline(bytes) => {
            let length = u32::try_from(bytes.len()).map_err(|_| WqeError::InlineTooLong {
                length: u32::MAX,
                max_inline: limits.max_inline,
            })?;
            (length, 0, bytes.len())
        }
        SendData::AtomicWrite(_) => (8, 0, 8),
    };
    // C `validate_send_wr`, which only kernel WRs pass through (librxe checks its own).
    if mask.contains(WrMask::ATOMIC) {
        let aligned = match wr.detail {
            WrDetail::Atomic { remote_addr, .. } => remote_addr % 8 == 0,
            _ => false,
        };
        if length != 8 || !aligned {
            return Err(WqeError::BadAtomic);
        }
    }
    if wr.send_flags & IB_SEND_INLINE != 0 && !mask.contains(WrMask::INLINE) {
        return Err(WqeError::InlineNotAllowed(wr.opcode));
    }
    let range = data_range(slot.len(), SEND_WQE_DATA_OFFSET, data_len)?;

    let hdr = slot
        .get_mut(..SEND_WQE_HDR_LEN)
        .ok_or(WqeError::Truncated)?;
    hdr.fill(0);
    put_u64(hdr, SEND_WR_WR_ID_OFFSET, wr.wr_id);
    put_u32(hdr, SEND_WR_OPCODE_OFFSET, wr.opcode);
    put_u32(hdr, SEND_WR_SEND_FLAGS_OFFSET, wr.send_flags);
    put_u32(hdr, SEND_WR_EX_OFFSET, wr.ex);
    wr.detail.write(hdr);
    put_u64(
        hdr,
        SEND_WQE_IOVA_OFFSET,
        wr.detail.remote_addr().unwrap_or(0),
    );
    put_u32(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET, length);
    put_u32(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_RESID_OFFSET, length);
    put_u32(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET, num_sge);

    let area = slot.get_mut(range).ok_or(WqeError::DataOutOfSlot)?;
    match data {
        SendData::None => {}
        SendData::Sges(sges) => {
            for (dst, sge) in area.chunks_exact_mut(SGE_LEN).zip(sges) {
                dst.copy_from_slice(&sge.to_bytes());
            }
        }
        SendData::Inline(bytes) => area.copy_from_slice(bytes),
        SendData::AtomicWrite(value) => area.copy_from_slice(&value),
    }

    let wqe = SendWqe::parse(slot, qp_type, limits)?;
    if wqe.wr() != *wr {
        return Err(WqeError::Inconsistent);
    }
    Ok(wqe)
}
