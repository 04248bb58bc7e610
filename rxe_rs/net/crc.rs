// SPDX-License-Identifier: GPL-2.0

//! The kernel's CRC-32 (`lib/crc`), for the ICRC of every packet sent and received.

use crate::ffi;

/// `crc32_le(crc, data)`: the raw reflected CRC-32 of `data` continuing from `crc` (no inversion
/// on entry or exit), as `proto::icrc::compute_with` takes it. The kernel picks the fastest
/// implementation the CPU has (PCLMULQDQ on x86).
pub(crate) fn crc32_le(crc: u32, data: &[u8]) -> u32 {
    // SAFETY: `data` is valid for reads of `data.len()` bytes for the duration of the call,
    // which only reads them.
    unsafe { ffi::rxe_rs_crc32_le(crc, data.as_ptr(), data.len()) }
}
