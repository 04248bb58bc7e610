// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Packet sequence numbers: 24-bit counters that wrap.
//!
//! Two PSNs are ordered by their distance around the circle, as the C
//! driver's `psn_compare()` does: `a` is after `b` when going forward from `b`
//! reaches `a` in fewer than 2^23 steps.

use core::cmp::Ordering;

/// PSNs are 24 bits wide.
pub const PSN_MASK: u32 = 0x00ff_ffff;

/// `psn` advanced by `n` packets, wrapping at 2^24.
pub const fn psn_add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) & PSN_MASK
}

/// The PSN after `psn`.
pub const fn psn_next(psn: u32) -> u32 {
    psn_add(psn, 1)
}

/// How many packets `a` is after `b`, as a signed 24-bit value in
/// `-2^23..2^23`: negative when `a` is before `b`.
///
/// The C `psn_compare()` returns the same number shifted left by 8; only its
/// sign is ever used.
pub const fn psn_diff(a: u32, b: u32) -> i32 {
    // Shift the 24-bit difference into the top of an i32 and back down, so
    // that its bit 23 becomes the sign.
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// Orders `a` against `b` by [`psn_diff`].
///
/// Exactly opposite points of the circle (2^23 apart) each compare as before
/// the other, as in the C driver.
pub const fn psn_cmp(a: u32, b: u32) -> Ordering {
    let diff = psn_diff(a, b);
    if diff < 0 {
        Ordering::Less
    } else if diff > 0 {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}
