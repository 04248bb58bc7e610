// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Address ranges of memory regions and windows, checked without a sum that can wrap.
//!
//! Every `addr + len` of the data path comes from user space or the wire (a WQE's SGE, a RETH,
//! an MR's iova, which `reg_user_mr` takes as given). In 2026 the C driver was found to compute
//! `iova + length` in `u64` without an overflow check (`mr_check_range` and others), so that a
//! range wrapping 2^64 passed the check and an unprivileged process wrote out of bounds. Here a
//! range is checked as an offset from the region's start, and no end address is ever formed.

/// The offset of the `len` bytes at `addr` in the region of `length` bytes that starts at
/// `start`, if all of them lie inside it; `None` otherwise, including when `addr + len` or
/// `start + length` would pass 2^64.
pub const fn offset_in(start: u64, length: u64, addr: u64, len: u64) -> Option<u64> {
    let Some(off) = addr.checked_sub(start) else {
        return None;
    };
    let Some(end) = off.checked_add(len) else {
        return None;
    };
    if end > length {
        None
    } else {
        Some(off)
    }
}
