// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Receive WQEs of RQs and SRQs (`struct rxe_recv_wqe`): [`RecvWqe::parse`] of a slot copy, and
//! [`write_recv_wqe`] for the posts of kernel ULPs (C `post_one_recv()` of `rxe_verbs.c`).

use super::bytes::{data_range, put_u32, put_u64, u32_at, u64_at};
use super::error::WqeError;
use super::layout::{
    DMA_INFO_LENGTH_OFFSET, DMA_INFO_NUM_SGE_OFFSET, DMA_INFO_RESID_OFFSET, RECV_WQE_DATA_OFFSET,
    RECV_WQE_DMA_OFFSET, RECV_WQE_HDR_LEN, RECV_WQE_WR_ID_OFFSET, SGE_LEN,
};
use super::sges::{check_sges, sge_bytes, sum_sges, Sge};
use crate::proto::params::PORT_MAX_MSG_SZ;

/// A receive WQE read from a private copy of a receive queue (or SRQ) slot and checked by
/// [`RecvWqe::parse`]. The SGEs stay in the slot copy ([`recv_sge`](super::recv_sge)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWqe {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// SGEs, at most the queue's `max_sge`.
    pub num_sge: u32,
    /// Bytes the SGEs hold: their sum, at most [`PORT_MAX_MSG_SZ`].
    pub length: u32,
}

impl RecvWqe {
    /// Reads and checks the receive WQE in `slot`, a private copy of one slot of an RQ or SRQ
    /// made for `max_sge` SGEs: the slot holds the fixed part and `dma.num_sge` SGEs, at most
    /// `max_sge` (as C `get_srq_wqe()` checks for SRQs only), and `dma.length` is their sum (C
    /// trusts it), at most [`PORT_MAX_MSG_SZ`].
    pub fn parse(slot: &[u8], max_sge: u32) -> Result<Self, WqeError> {
        let hdr = slot.get(..RECV_WQE_HDR_LEN).ok_or(WqeError::Truncated)?;
        let length = u32_at(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET);
        let num_sge = u32_at(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET);
        check_sges(slot, RECV_WQE_DATA_OFFSET, num_sge, max_sge, length)?;
        Ok(Self {
            wr_id: u64_at(hdr, RECV_WQE_WR_ID_OFFSET),
            num_sge,
            length,
        })
    }
}

/// Writes a receive WQE into `slot` of a kernel QP's RQ or SRQ made for `max_sge` SGEs, as the
/// C `post_one_recv()` does, and returns it as [`RecvWqe::parse`] reads it back.
///
/// [`WqeError::Truncated`] or [`WqeError::DataOutOfSlot`] (before anything is written) when the
/// slot is too short; [`WqeError::TooManySge`], [`WqeError::LengthOverflow`] or
/// [`WqeError::MessageTooLong`] as C `post_one_recv()` refuses the WR.
pub fn write_recv_wqe(
    slot: &mut [u8],
    wr_id: u64,
    sges: &[Sge],
    max_sge: u32,
) -> Result<RecvWqe, WqeError> {
    let num_sge = u32::try_from(sges.len()).unwrap_or(u32::MAX);
    if num_sge > max_sge {
        return Err(WqeError::TooManySge { num_sge, max_sge });
    }
    let length = sum_sges(sges)?;
    if length > PORT_MAX_MSG_SZ {
        return Err(WqeError::MessageTooLong(length));
    }
    if slot.len() < RECV_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    let range = data_range(slot.len(), RECV_WQE_DATA_OFFSET, sge_bytes(num_sge)?)?;

    let hdr = slot
        .get_mut(..RECV_WQE_HDR_LEN)
        .ok_or(WqeError::Truncated)?;
    hdr.fill(0);
    put_u64(hdr, RECV_WQE_WR_ID_OFFSET, wr_id);
    put_u32(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET, length);
    put_u32(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_RESID_OFFSET, length);
    put_u32(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET, num_sge);
    let area = slot.get_mut(range).ok_or(WqeError::DataOutOfSlot)?;
    for (dst, sge) in area.chunks_exact_mut(SGE_LEN).zip(sges) {
        dst.copy_from_slice(&sge.to_bytes());
    }
    RecvWqe::parse(slot, max_sge)
}
