// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Completions: [`UverbsWc`] (`struct ib_uverbs_wc`, the start of the `struct rxe_cqe` in a CQ
//! slot), and what a send WQE completes with: C `wr_to_wc_opcode()` and `make_send_cqe()` of
//! `rxe_comp.c`.

use super::bytes::{put, put_u16, put_u32, put_u64, u16_at, u32_at, u64_at, u8_at};
use super::error::WqeError;
use super::layout::{
    UVERBS_WC_BYTE_LEN_OFFSET, UVERBS_WC_DLID_PATH_BITS_OFFSET, UVERBS_WC_EX_OFFSET, UVERBS_WC_LEN,
    UVERBS_WC_OPCODE_OFFSET, UVERBS_WC_PKEY_INDEX_OFFSET, UVERBS_WC_PORT_NUM_OFFSET,
    UVERBS_WC_QP_NUM_OFFSET, UVERBS_WC_SLID_OFFSET, UVERBS_WC_SL_OFFSET, UVERBS_WC_SRC_QP_OFFSET,
    UVERBS_WC_STATUS_OFFSET, UVERBS_WC_VENDOR_ERR_OFFSET, UVERBS_WC_WC_FLAGS_OFFSET,
    UVERBS_WC_WR_ID_OFFSET,
};
use super::verbs::{
    WcStatus, IB_WC_ATOMIC_WRITE, IB_WC_BIND_MW, IB_WC_COMP_SWAP, IB_WC_FETCH_ADD, IB_WC_FLUSH,
    IB_WC_LOCAL_INV, IB_WC_LSO, IB_WC_RDMA_READ, IB_WC_RDMA_WRITE, IB_WC_REG_MR, IB_WC_SEND,
    IB_WC_WITH_IMM, IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_ATOMIC_WRITE,
    IB_WR_BIND_MW, IB_WR_FLUSH, IB_WR_LOCAL_INV, IB_WR_LSO, IB_WR_RDMA_READ,
    IB_WR_RDMA_READ_WITH_INV, IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_REG_MR,
    IB_WR_SEND, IB_WR_SEND_WITH_IMM, IB_WR_SEND_WITH_INV,
};
use crate::proto::queue::CQE_SIZE;

/// A completion as user space reads it from a CQ slot (`struct ib_uverbs_wc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UverbsWc {
    /// The WR's cookie.
    pub wr_id: u64,
    /// `IB_WC_*` status.
    pub status: WcStatus,
    /// `IB_WC_*` opcode.
    pub opcode: u32,
    /// Vendor error (0 in rxe).
    pub vendor_err: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// `ex` as stored: the immediate data in network byte order ([`imm_to_ex`](super::imm_to_ex))
    /// or the invalidated rkey.
    pub ex: u32,
    /// Local QP number.
    pub qp_num: u32,
    /// Source QP number (UD receives).
    pub src_qp: u32,
    /// `IB_WC_*` flags ([`IB_WC_GRH`](super::IB_WC_GRH), [`IB_WC_WITH_IMM`], ...).
    pub wc_flags: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Source LID (0 on RoCE).
    pub slid: u16,
    /// Service level.
    pub sl: u8,
    /// Destination LID path bits (0 on RoCE).
    pub dlid_path_bits: u8,
    /// Port number.
    pub port_num: u8,
}

impl UverbsWc {
    /// Reads the completion at the start of `slot`; [`WqeError::Truncated`] when shorter than
    /// [`UVERBS_WC_LEN`].
    pub fn read(slot: &[u8]) -> Result<Self, WqeError> {
        let wc = slot.get(..UVERBS_WC_LEN).ok_or(WqeError::Truncated)?;
        Ok(Self {
            wr_id: u64_at(wc, UVERBS_WC_WR_ID_OFFSET),
            status: {
                let raw = u32_at(wc, UVERBS_WC_STATUS_OFFSET);
                WcStatus::from_raw(raw).ok_or(WqeError::BadStatus(raw))?
            },
            opcode: u32_at(wc, UVERBS_WC_OPCODE_OFFSET),
            vendor_err: u32_at(wc, UVERBS_WC_VENDOR_ERR_OFFSET),
            byte_len: u32_at(wc, UVERBS_WC_BYTE_LEN_OFFSET),
            ex: u32_at(wc, UVERBS_WC_EX_OFFSET),
            qp_num: u32_at(wc, UVERBS_WC_QP_NUM_OFFSET),
            src_qp: u32_at(wc, UVERBS_WC_SRC_QP_OFFSET),
            wc_flags: u32_at(wc, UVERBS_WC_WC_FLAGS_OFFSET),
            pkey_index: u16_at(wc, UVERBS_WC_PKEY_INDEX_OFFSET),
            slid: u16_at(wc, UVERBS_WC_SLID_OFFSET),
            sl: u8_at(wc, UVERBS_WC_SL_OFFSET),
            dlid_path_bits: u8_at(wc, UVERBS_WC_DLID_PATH_BITS_OFFSET),
            port_num: u8_at(wc, UVERBS_WC_PORT_NUM_OFFSET),
        })
    }

    /// Writes the completion at the start of `slot`, the reserved byte as 0, and zeroes the rest
    /// of the `struct rxe_cqe` ([`CQE_SIZE`] bytes, as far as the slot goes), as the C driver
    /// copies a zeroed `rxe_cqe`. [`WqeError::Truncated`], writing nothing, when `slot` is
    /// shorter than [`UVERBS_WC_LEN`].
    pub fn write(&self, slot: &mut [u8]) -> Result<(), WqeError> {
        if slot.len() < UVERBS_WC_LEN {
            return Err(WqeError::Truncated);
        }
        let end = if slot.len() < CQE_SIZE as usize {
            slot.len()
        } else {
            CQE_SIZE as usize
        };
        let cqe = slot.get_mut(..end).ok_or(WqeError::Truncated)?;
        cqe.fill(0);
        put_u64(cqe, UVERBS_WC_WR_ID_OFFSET, self.wr_id);
        put_u32(cqe, UVERBS_WC_STATUS_OFFSET, self.status.raw());
        put_u32(cqe, UVERBS_WC_OPCODE_OFFSET, self.opcode);
        put_u32(cqe, UVERBS_WC_VENDOR_ERR_OFFSET, self.vendor_err);
        put_u32(cqe, UVERBS_WC_BYTE_LEN_OFFSET, self.byte_len);
        put_u32(cqe, UVERBS_WC_EX_OFFSET, self.ex);
        put_u32(cqe, UVERBS_WC_QP_NUM_OFFSET, self.qp_num);
        put_u32(cqe, UVERBS_WC_SRC_QP_OFFSET, self.src_qp);
        put_u32(cqe, UVERBS_WC_WC_FLAGS_OFFSET, self.wc_flags);
        put_u16(cqe, UVERBS_WC_PKEY_INDEX_OFFSET, self.pkey_index);
        put_u16(cqe, UVERBS_WC_SLID_OFFSET, self.slid);
        put(cqe, UVERBS_WC_SL_OFFSET, [self.sl]);
        put(cqe, UVERBS_WC_DLID_PATH_BITS_OFFSET, [self.dlid_path_bits]);
        put(cqe, UVERBS_WC_PORT_NUM_OFFSET, [self.port_num]);
        Ok(())
    }

    /// The immediate data as stored, in network byte order.
    pub const fn imm_be_bytes(&self) -> [u8; 4] {
        self.ex.to_le_bytes()
    }
}

/// The completion opcode of a send WQE (C `wr_to_wc_opcode()`); `None` where C returns `0xff`
/// (unknown opcodes, the masked atomics, `IB_WR_REG_MR_INTEGRITY`).
pub const fn wr_to_wc_opcode(wr_opcode: u32) -> Option<u32> {
    Some(match wr_opcode {
        IB_WR_RDMA_WRITE | IB_WR_RDMA_WRITE_WITH_IMM => IB_WC_RDMA_WRITE,
        IB_WR_SEND | IB_WR_SEND_WITH_IMM | IB_WR_SEND_WITH_INV => IB_WC_SEND,
        IB_WR_RDMA_READ | IB_WR_RDMA_READ_WITH_INV => IB_WC_RDMA_READ,
        IB_WR_ATOMIC_CMP_AND_SWP => IB_WC_COMP_SWAP,
        IB_WR_ATOMIC_FETCH_AND_ADD => IB_WC_FETCH_ADD,
        IB_WR_LSO => IB_WC_LSO,
        IB_WR_LOCAL_INV => IB_WC_LOCAL_INV,
        IB_WR_REG_MR => IB_WC_REG_MR,
        IB_WR_BIND_MW => IB_WC_BIND_MW,
        IB_WR_ATOMIC_WRITE => IB_WC_ATOMIC_WRITE,
        IB_WR_FLUSH => IB_WC_FLUSH,
        _ => return None,
    })
}

/// What C `make_send_cqe()` puts in a send completion besides `wr_id`, status and the QP:
/// `(opcode, wc_flags, byte_len)`. A successful WQE reports its completion opcode,
/// [`IB_WC_WITH_IMM`] for the two opcodes with immediate data, and its `dma.length` (`length`:
/// a SEND's or WRITE's bytes, 8 for an atomic, a FLUSH's range); a failed one reports zeros.
pub const fn send_cqe_fields(wr_opcode: u32, length: u32, status: WcStatus) -> (u32, u32, u32) {
    if !status.is_success() {
        return (0, 0, 0);
    }
    let opcode = match wr_to_wc_opcode(wr_opcode) {
        Some(op) => op,
        None => 0xff,
    };
    let flags = match wr_opcode {
        IB_WR_RDMA_WRITE_WITH_IMM | IB_WR_SEND_WITH_IMM => IB_WC_WITH_IMM,
        _ => 0,
    };
    (opcode, flags, length)
}
