// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Scatter/gather elements (`struct rxe_sge`) and the data behind a WQE's fixed part, read from
//! the slot copy: a send slot's SGEs, inline data and ATOMIC WRITE value, a UD WQE's address
//! vector, a receive slot's SGEs; and the checks of an SGE list that the send and the receive
//! parser share.

use super::bytes::{data_range, put_u32, put_u64, u32_at, u64_at};
use super::error::WqeError;
use super::layout::{
    RECV_WQE_DATA_OFFSET, RXE_AV_LEN, SEND_WQE_DATA_OFFSET, SEND_WR_UD_AV_OFFSET, SGE_ADDR_OFFSET,
    SGE_LEN, SGE_LENGTH_OFFSET, SGE_LKEY_OFFSET,
};
use crate::proto::params::PORT_MAX_MSG_SZ;

/// A scatter/gather element (`struct rxe_sge`, `struct ib_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Start address (an iova of the MR named by `lkey`).
    pub addr: u64,
    /// Bytes.
    pub length: u32,
    /// Local key of the MR.
    pub lkey: u32,
}

impl Sge {
    /// Decodes the 16 bytes of a `struct rxe_sge`.
    pub fn from_bytes(bytes: &[u8; SGE_LEN]) -> Self {
        Self {
            addr: u64_at(bytes, SGE_ADDR_OFFSET),
            length: u32_at(bytes, SGE_LENGTH_OFFSET),
            lkey: u32_at(bytes, SGE_LKEY_OFFSET),
        }
    }

    /// Encodes as a `struct rxe_sge`.
    pub fn to_bytes(&self) -> [u8; SGE_LEN] {
        let mut out = [0; SGE_LEN];
        put_u64(&mut out, SGE_ADDR_OFFSET, self.addr);
        put_u32(&mut out, SGE_LENGTH_OFFSET, self.length);
        put_u32(&mut out, SGE_LKEY_OFFSET, self.lkey);
        out
    }
}

/// SGE `i` of a send slot; `None` past the end of the slot. Only meaningful below the
/// [`SendWqe::num_sge`](super::SendWqe::num_sge) of a WQE parsed from the same slot, where it is
/// always `Some`.
pub fn sge(slot: &[u8], i: u32) -> Option<Sge> {
    sge_in(slot, SEND_WQE_DATA_OFFSET, i)
}

/// SGE `i` of a receive slot; `None` past the end of the slot. Only meaningful below the
/// [`RecvWqe::num_sge`](super::RecvWqe::num_sge) of a WQE parsed from the same slot, where it is
/// always `Some`.
pub fn recv_sge(slot: &[u8], i: u32) -> Option<Sge> {
    sge_in(slot, RECV_WQE_DATA_OFFSET, i)
}

/// The first `len` bytes of a send slot's inline data (`dma.inline_data`); `None` past the end
/// of the slot. For a WQE parsed with [`DataKind::Inline`](super::DataKind::Inline),
/// `inline_data(slot, wqe.length)` is always `Some`.
pub fn inline_data(slot: &[u8], len: u32) -> Option<&[u8]> {
    let end = SEND_WQE_DATA_OFFSET.checked_add(usize::try_from(len).ok()?)?;
    slot.get(SEND_WQE_DATA_OFFSET..end)
}

/// The 8 bytes an ATOMIC WRITE stores (`dma.atomic_wr`), in memory order; `None` past the end
/// of the slot (never for a WQE parsed with
/// [`DataKind::AtomicWrite`](super::DataKind::AtomicWrite)).
pub fn atomic_write_value(slot: &[u8]) -> Option<[u8; 8]> {
    slot.get(SEND_WQE_DATA_OFFSET..)?
        .first_chunk::<8>()
        .copied()
}

/// The [`RXE_AV_LEN`] bytes of `wr.ud.av`, the address vector old providers put in UD WQEs
/// instead of an `ah_num` (`rxe_get_av()` uses it when `ah_num` is 0); `None` for a slot too
/// short to be a send WQE. Not validated here.
pub fn ud_av_bytes(slot: &[u8]) -> Option<&[u8]> {
    slot.get(SEND_WR_UD_AV_OFFSET..SEND_WR_UD_AV_OFFSET + RXE_AV_LEN)
}

/// Bytes of `num_sge` SGEs, if that fits in `usize`.
pub(super) fn sge_bytes(num_sge: u32) -> Result<usize, WqeError> {
    usize::try_from(num_sge)
        .ok()
        .and_then(|n| n.checked_mul(SGE_LEN))
        .ok_or(WqeError::DataOutOfSlot)
}

/// SGE `i` of the array at `base` in `slot`.
fn sge_in(slot: &[u8], base: usize, i: u32) -> Option<Sge> {
    let off = usize::try_from(i)
        .ok()?
        .checked_mul(SGE_LEN)?
        .checked_add(base)?;
    let bytes = slot.get(off..)?.first_chunk::<SGE_LEN>()?;
    Some(Sge::from_bytes(bytes))
}

/// Checks the SGE array at `base` (`num_sge` entries, at most `max_sge`) against the claimed
/// `length`: it fits in the slot and its lengths add up, without overflow, to `length`, which
/// is at most [`PORT_MAX_MSG_SZ`].
pub(super) fn check_sges(
    slot: &[u8],
    base: usize,
    num_sge: u32,
    max_sge: u32,
    length: u32,
) -> Result<(), WqeError> {
    if num_sge > max_sge {
        return Err(WqeError::TooManySge { num_sge, max_sge });
    }
    let range = data_range(slot.len(), base, sge_bytes(num_sge)?)?;
    let mut sum: u32 = 0;
    for i in 0..num_sge {
        let sge = sge_in(slot, range.start, i).ok_or(WqeError::DataOutOfSlot)?;
        sum = sum
            .checked_add(sge.length)
            .ok_or(WqeError::LengthOverflow)?;
    }
    if sum != length {
        return Err(WqeError::LengthMismatch { length, sum });
    }
    if sum > PORT_MAX_MSG_SZ {
        return Err(WqeError::MessageTooLong(sum));
    }
    Ok(())
}

/// Sum of the SGE lengths, or [`WqeError::LengthOverflow`].
pub(super) fn sum_sges(sges: &[Sge]) -> Result<u32, WqeError> {
    sges.iter().try_fold(0u32, |sum, sge| {
        sum.checked_add(sge.length).ok_or(WqeError::LengthOverflow)
    })
}
