// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! `proto::range`: every answer as exact 128-bit arithmetic gives it, at the ends of the
//! address space above all.

use proptest::prelude::*;

use crate::proto::range::offset_in;

/// The answer in 128 bits, where nothing wraps.
fn reference(start: u64, length: u64, addr: u64, len: u64) -> Option<u64> {
    let (s, l, a, n) = (
        u128::from(start),
        u128::from(length),
        u128::from(addr),
        u128::from(len),
    );
    (a >= s && a + n <= s + l).then(|| addr - start)
}

/// Values near the edges, where a wrapping sum would go wrong.
fn edgy() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(4096),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(u64::MAX - 4095),
        Just(1 << 63),
        (u64::MAX - 8192..=u64::MAX),
        (0..8192u64),
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]
    #[test]
    fn offset_in_is_exact(start in edgy(), length in edgy(), addr in edgy(), len in edgy()) {
        prop_assert_eq!(offset_in(start, length, addr, len), reference(start, length, addr, len));
    }
}

#[test]
fn a_range_that_wraps_2_pow_64_is_outside() {
    // The C driver's bug: iova + length wraps to a small number and passes `<= end`.
    let start = 0x1000;
    let length = 0x2000;
    assert_eq!(offset_in(start, length, u64::MAX - 0xfff, 0x2000), None);
    assert_eq!(offset_in(start, length, 0x1800, u64::MAX), None);
    // A region registered at the very top of the address space (iova as reg_user_mr takes it).
    let top = u64::MAX - 0xfff;
    assert_eq!(offset_in(top, 0x1000, top, 0x1000), Some(0));
    assert_eq!(offset_in(top, 0x1000, u64::MAX, 1), Some(0xfff));
    assert_eq!(offset_in(top, 0x1000, u64::MAX, 2), None);
    // A region whose own end passes 2^64: only what lies below 2^64 is in it.
    assert_eq!(offset_in(top, 0x2000, u64::MAX, 1), Some(0xfff));
    assert_eq!(offset_in(top, 0x2000, 0, 1), None);
    // Empty ranges at the edges.
    assert_eq!(offset_in(start, length, start + length, 0), Some(length));
    assert_eq!(offset_in(start, length, start + length + 1, 0), None);
}
