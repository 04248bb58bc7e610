// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

use crate::proto::packet_ring::{
    AckRing, PacketRing, RequestRing, RingIndex, ACK_LEN, ACK_RING_LEN,
};
use proptest::prelude::*;
use std::collections::VecDeque;

fn ack(n: u8) -> [u8; ACK_LEN] {
    [n; ACK_LEN]
}

fn pop_bytes(ring: &mut AckRing) -> Option<std::vec::Vec<u8>> {
    ring.pop().map(|e| e.bytes().to_vec())
}

#[test]
fn fifo_up_to_its_length_then_refuses() {
    let mut ring = AckRing::new();
    for n in 0..ACK_RING_LEN as u8 {
        assert!(ring.has_room());
        assert!(ring.push(&ack(n), n));
    }
    assert!(!ring.has_room());
    assert!(!ring.push(&ack(99), 0));
    for n in 0..ACK_RING_LEN as u8 {
        let e = ring.pop().unwrap();
        assert_eq!(e.bytes(), &ack(n)[..]);
        assert_eq!(e.tag(), n);
    }
    assert!(ring.pop().is_none());
    assert!(ring.is_empty());
}

#[test]
fn closed_ring_is_empty_and_refuses() {
    let mut ring = AckRing::new();
    assert!(ring.push(&ack(1), 0));
    ring.close();
    assert!(ring.is_empty());
    assert!(!ring.has_room());
    assert!(!ring.push(&ack(2), 0));
    assert!(ring.pop().is_none());
}

#[test]
fn cleared_ring_takes_pushes_again() {
    let mut ring = AckRing::new();
    for n in 0..5 {
        assert!(ring.push(&ack(n), 0));
    }
    ring.clear();
    assert!(ring.pop().is_none());
    assert!(ring.push(&ack(7), 0));
    assert_eq!(pop_bytes(&mut ring), Some(ack(7).to_vec()));
}

#[test]
fn entries_keep_their_length_and_refuse_longer_than_a_slot() {
    let mut ring = RequestRing::new();
    assert!(ring.push(&[1, 2, 3], 1));
    assert!(ring.push(&[9; 128], 0));
    assert!(!ring.push(&[9; 129], 0));
    assert_eq!(ring.front().unwrap().bytes(), &[1, 2, 3]);
    // `front` leaves it in place.
    assert_eq!(ring.front().unwrap().bytes(), &[1, 2, 3]);
    ring.drop_front();
    assert_eq!(ring.pop().unwrap().bytes().len(), 128);
}

#[test]
fn copy_front_copies_the_packet_only_and_leaves_it() {
    let mut ring = RequestRing::new();
    let mut to = [7u8; 128];
    assert_eq!(ring.copy_front(&mut to), None);
    assert_eq!(to, [7; 128]);
    assert!(ring.push(&[1, 2, 3], 4));
    assert!(ring.push(&[5; 128], 0));
    assert_eq!(ring.copy_front(&mut to), Some((3, 4)));
    assert_eq!(to[..4], [1, 2, 3, 7]);
    assert_eq!(ring.len(), 2);
    ring.drop_front();
    assert_eq!(ring.copy_front(&mut to), Some((128, 0)));
    assert_eq!(to, [5; 128]);
}

#[test]
fn a_failed_write_appends_nothing() {
    let mut ring = RequestRing::new();
    assert!(!ring.push_with(10, 0, |b| {
        b.fill(5);
        false
    }));
    assert!(ring.is_empty());
    assert!(ring.push_with(4, 3, |b| {
        b.copy_from_slice(&[4, 3, 2, 1]);
        true
    }));
    let e = ring.pop().unwrap();
    assert_eq!((e.bytes(), e.tag()), (&[4u8, 3, 2, 1][..], 3));
}

proptest! {
    /// Any interleaving of pushes, pops and dropped fronts behaves as a bounded FIFO.
    #[test]
    fn behaves_as_a_bounded_fifo(ops in proptest::collection::vec(any::<Option<(u8, u8)>>(), 0..200)) {
        let mut ring = PacketRing::<8, 5>::new();
        let mut model = VecDeque::new();
        for op in ops {
            match op {
                Some((n, len)) => {
                    let len = usize::from(len % 12);
                    let bytes = std::vec![n; len];
                    let fits = model.len() < 5 && len <= 8;
                    prop_assert_eq!(ring.push(&bytes, n), fits);
                    if fits {
                        model.push_back(bytes);
                    }
                }
                None if model.len() % 2 == 0 => {
                    prop_assert_eq!(ring.pop().map(|e| e.bytes().to_vec()), model.pop_front());
                }
                None => {
                    let mut to = [0; 8];
                    let front = ring.copy_front(&mut to).map(|(len, _)| to[..len].to_vec());
                    prop_assert_eq!(&front, &model.front().cloned());
                    prop_assert_eq!(ring.front().map(|e| e.bytes().to_vec()), front);
                    ring.drop_front();
                    model.pop_front();
                }
            }
            prop_assert_eq!(ring.is_empty(), model.is_empty());
            prop_assert_eq!(ring.has_room(), model.len() < 5);
        }
    }
}

proptest! {
    /// `RingIndex` hands out slots as a bounded FIFO of `N` does: a push writes the slot after
    /// the newest, the front is the oldest, and `clear`/`close` name every slot in use, oldest
    /// first.
    #[test]
    fn ring_index_orders_slots_as_a_fifo(ops in proptest::collection::vec(0u8..5, 0..200)) {
        const N: usize = 5;
        let mut index = RingIndex::<N>::new();
        let mut slots = [0u32; N];
        let mut model = VecDeque::new();
        let mut next = 1u32;
        let mut closed = false;
        for op in ops {
            match op {
                0 | 1 => {
                    let free = index.next_free();
                    prop_assert_eq!(free.is_some(), !closed && model.len() < N);
                    if let Some(slot) = free {
                        slots[slot] = next;
                        index.commit();
                        model.push_back(next);
                        next += 1;
                    }
                }
                2 => {
                    let front = index.drop_front().map(|slot| slots[slot]);
                    prop_assert_eq!(front, model.pop_front());
                }
                3 => {
                    let cleared: std::vec::Vec<u32> = index.clear().map(|slot| slots[slot]).collect();
                    prop_assert_eq!(cleared, model.drain(..).collect::<std::vec::Vec<_>>());
                }
                _ => {
                    prop_assert_eq!(index.front().map(|slot| slots[slot]), model.front().copied());
                    if next % 7 == 0 {
                        let closed_slots: std::vec::Vec<u32> =
                            index.close().map(|slot| slots[slot]).collect();
                        prop_assert_eq!(closed_slots, model.drain(..).collect::<std::vec::Vec<_>>());
                        closed = true;
                    }
                }
            }
            prop_assert_eq!(index.len(), model.len());
            prop_assert_eq!(index.is_empty(), model.is_empty());
            prop_assert_eq!(index.has_room(), !closed && model.len() < N);
        }
    }
}
