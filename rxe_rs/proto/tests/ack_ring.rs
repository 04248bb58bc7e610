// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

use crate::proto::ack_ring::{AckRing, ACK_LEN, ACK_RING_LEN};
use proptest::prelude::*;
use std::collections::VecDeque;

fn ack(n: u8) -> [u8; ACK_LEN] {
    [n; ACK_LEN]
}

#[test]
fn fifo_up_to_its_length_then_refuses() {
    let mut ring = AckRing::new();
    for n in 0..ACK_RING_LEN as u8 {
        assert!(ring.has_room());
        assert!(ring.push(ack(n)));
    }
    assert!(!ring.has_room());
    assert!(!ring.push(ack(99)));
    for n in 0..ACK_RING_LEN as u8 {
        assert_eq!(ring.pop(), Some(ack(n)));
    }
    assert_eq!(ring.pop(), None);
    assert!(ring.is_empty());
}

#[test]
fn closed_ring_is_empty_and_refuses() {
    let mut ring = AckRing::new();
    assert!(ring.push(ack(1)));
    ring.close();
    assert!(ring.is_empty());
    assert!(!ring.has_room());
    assert!(!ring.push(ack(2)));
    assert_eq!(ring.pop(), None);
}

#[test]
fn cleared_ring_takes_pushes_again() {
    let mut ring = AckRing::new();
    for n in 0..5 {
        assert!(ring.push(ack(n)));
    }
    ring.clear();
    assert_eq!(ring.pop(), None);
    assert!(ring.push(ack(7)));
    assert_eq!(ring.pop(), Some(ack(7)));
}

proptest! {
    /// Any interleaving of pushes and pops behaves as a bounded FIFO.
    #[test]
    fn behaves_as_a_bounded_fifo(ops in proptest::collection::vec(any::<Option<u8>>(), 0..200)) {
        let mut ring = AckRing::new();
        let mut model = VecDeque::new();
        for op in ops {
            match op {
                Some(n) => {
                    let fits = model.len() < ACK_RING_LEN;
                    prop_assert_eq!(ring.push(ack(n)), fits);
                    if fits {
                        model.push_back(ack(n));
                    }
                }
                None => prop_assert_eq!(ring.pop(), model.pop_front()),
            }
            prop_assert_eq!(ring.is_empty(), model.is_empty());
            prop_assert_eq!(ring.has_room(), model.len() < ACK_RING_LEN);
        }
    }
}
