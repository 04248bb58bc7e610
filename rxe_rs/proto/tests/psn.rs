// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! PSN arithmetic at the edges of the 24-bit circle.

use core::cmp::Ordering;

use crate::proto::psn::{psn_add, psn_cmp, psn_diff, psn_next, PSN_MASK};

#[test]
fn add_and_next_wrap_at_2_pow_24() {
    assert_eq!(psn_next(0), 1);
    assert_eq!(psn_next(PSN_MASK), 0);
    assert_eq!(psn_add(PSN_MASK, 2), 1);
    assert_eq!(psn_add(5, u32::MAX), 4, "adding -1");
    assert_eq!(psn_add(0x00ff_fff0, 0x20), 0x10);
    // Bits above the PSN are dropped, as the BTH drops them.
    assert_eq!(psn_add(0xff00_0001, 0), 1);
}

#[test]
fn diff_is_signed_24_bit_across_the_wrap() {
    assert_eq!(psn_diff(7, 7), 0);
    assert_eq!(psn_diff(0, PSN_MASK), 1);
    assert_eq!(psn_diff(PSN_MASK, 0), -1);
    assert_eq!(psn_diff(3, 0x00ff_fffe), 5);
    assert_eq!(psn_diff(0x7f_ffff, 0), 0x7f_ffff);
    assert_eq!(psn_diff(0x80_0000, 0), -0x80_0000);
    assert_eq!(psn_diff(0, 0x80_0000), -0x80_0000);
}

#[test]
fn cmp_orders_by_the_shorter_way_round() {
    assert_eq!(psn_cmp(1, 0), Ordering::Greater);
    assert_eq!(psn_cmp(0, 1), Ordering::Less);
    assert_eq!(psn_cmp(0, PSN_MASK), Ordering::Greater);
    assert_eq!(psn_cmp(PSN_MASK, 0), Ordering::Less);
    assert_eq!(psn_cmp(0x12_3456, 0x12_3456), Ordering::Equal);
    // Half way round each is before the other, as with the C psn_compare().
    assert_eq!(psn_cmp(0x80_0000, 0), Ordering::Less);
    assert_eq!(psn_cmp(0, 0x80_0000), Ordering::Less);
}
