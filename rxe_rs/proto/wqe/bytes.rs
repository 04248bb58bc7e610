// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Byte access to a slot copy: little-endian reads and writes at an offset, the bounds check of
//! a range of the slot, and the byte order of the immediate data in `ex`. Every caller checks
//! the length first; out of range reads 0 / writes nothing.

use core::ops::Range;

use super::error::WqeError;

fn arr<const N: usize>(bytes: &[u8], off: usize) -> [u8; N] {
    bytes
        .get(off..)
        .and_then(|rest| rest.first_chunk::<N>())
        .copied()
        .unwrap_or([0; N])
}

pub(super) fn u8_at(bytes: &[u8], off: usize) -> u8 {
    let [b] = arr::<1>(bytes, off);
    b
}

pub(super) fn u16_at(bytes: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(arr(bytes, off))
}

pub(super) fn u32_at(bytes: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(arr(bytes, off))
}

pub(super) fn u64_at(bytes: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(arr(bytes, off))
}

pub(super) fn put<const N: usize>(bytes: &mut [u8], off: usize, value: [u8; N]) {
    if let Some(dst) = bytes
        .get_mut(off..)
        .and_then(|rest| rest.first_chunk_mut::<N>())
    {
        *dst = value;
    }
}

pub(super) fn put_u16(bytes: &mut [u8], off: usize, value: u16) {
    put(bytes, off, value.to_le_bytes());
}

pub(super) fn put_u32(bytes: &mut [u8], off: usize, value: u32) {
    put(bytes, off, value.to_le_bytes());
}

pub(super) fn put_u64(bytes: &mut [u8], off: usize, value: u64) {
    put(bytes, off, value.to_le_bytes());
}

/// `start..start + len` if it lies within `slot_len` bytes.
pub(super) fn data_range(
    slot_len: usize,
    start: usize,
    len: usize,
) -> Result<Range<usize>, WqeError> {
    match start.checked_add(len) {
        Some(end) if end <= slot_len => Ok(start..end),
        _ => Err(WqeError::DataOutOfSlot),
    }
}

/// `ex` as stored (read little endian) from the big-endian immediate value, as the IMMDT header
/// ([`hdr::Immdt::imm`](crate::proto::hdr::Immdt::imm)) holds it.
pub const fn imm_to_ex(imm: u32) -> u32 {
    u32::from_le_bytes(imm.to_be_bytes())
}

/// The big-endian immediate value, as [`hdr::Immdt::imm`](crate::proto::hdr::Immdt::imm) holds it,
/// from `ex` as stored.
pub const fn ex_to_imm(ex: u32) -> u32 {
    u32::from_be_bytes(ex.to_le_bytes())
}
