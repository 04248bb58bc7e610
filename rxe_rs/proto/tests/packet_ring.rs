// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

use crate::proto::hdr::{Aeth, Bth, Header, NakCode, Syndrome, BTH_LEN};
use crate::proto::opcode::{RC_ACKNOWLEDGE, RC_RDMA_READ_RESPONSE_ONLY};
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
fn pop_into_copies_the_oldest_packet_and_removes_it() {
    let mut ring = RequestRing::new();
    let mut to = [7u8; 128];
    assert!(ring.push(&[1, 2, 3], 4));
    assert!(ring.push(&[5, 6], 1));
    assert_eq!(ring.pop_into(&mut to), Some((3, 4)));
    assert_eq!(to[..4], [1, 2, 3, 7]);
    assert_eq!(ring.len(), 1);
    assert_eq!(ring.pop_into(&mut to), Some((2, 1)));
    assert_eq!(to[..3], [5, 6, 3]);
    assert!(ring.is_empty());
    assert_eq!(ring.pop_into(&mut to), None);
    // Room again for a whole ring.
    for i in 0..8 {
        assert!(ring.push(&[i], 0));
    }
    assert!(!ring.push(&[9], 0));
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

fn ack_headers(psn: u32, syndrome: Syndrome, msn: u32) -> (Bth, Aeth) {
    let bth = Bth {
        opcode: RC_ACKNOWLEDGE,
        qpn: 0x11,
        psn,
        ..Default::default()
    };
    (bth, Aeth { syndrome, msn })
}

/// The PSN and AETH of a packet the ring holds, read back from its bytes.
fn ack_of(bytes: &[u8]) -> (u8, u32, Aeth) {
    assert_eq!(bytes.len(), ACK_LEN);
    assert!(
        bytes[BTH_LEN + 4..].iter().all(|&b| b == 0),
        "the ICRC is left zero"
    );
    let bth = Bth::parse(bytes).unwrap();
    (bth.opcode, bth.psn, Aeth::parse(&bytes[BTH_LEN..]).unwrap())
}

fn push(ring: &mut AckRing, psn: u32, syndrome: Syndrome, msn: u32) -> bool {
    let (bth, aeth) = ack_headers(psn, syndrome, msn);
    ring.push_ack(&bth, &aeth)
}

#[test]
fn a_later_ack_supersedes_the_newest_ack() {
    let mut ring = AckRing::new();
    assert!(push(&mut ring, 5, Syndrome::ACK_UNLIMITED, 1));
    assert!(push(&mut ring, 6, Syndrome::Ack { credits: 3 }, 2));
    // The same PSN again (a duplicate request's ACK) supersedes it too.
    assert!(push(&mut ring, 6, Syndrome::Ack { credits: 4 }, 2));
    assert_eq!(ring.len(), 1);
    let (opcode, psn, aeth) = ack_of(ring.pop().unwrap().bytes());
    assert_eq!((opcode, psn), (RC_ACKNOWLEDGE, 6));
    assert_eq!(
        aeth,
        Aeth {
            syndrome: Syndrome::Ack { credits: 4 },
            msn: 2
        }
    );
    assert!(ring.is_empty());
}

#[test]
fn an_earlier_ack_does_not_overwrite_a_later_one() {
    let mut ring = AckRing::new();
    assert!(push(&mut ring, 9, Syndrome::ACK_UNLIMITED, 4));
    assert!(push(&mut ring, 8, Syndrome::ACK_UNLIMITED, 4));
    assert_eq!(ring.len(), 2);
    assert_eq!(ack_of(ring.pop().unwrap().bytes()).1, 9);
    assert_eq!(ack_of(ring.pop().unwrap().bytes()).1, 8);
}

#[test]
fn naks_are_never_merged() {
    let mut ring = AckRing::new();
    assert!(push(&mut ring, 1, Syndrome::ACK_UNLIMITED, 1));
    assert!(push(&mut ring, 2, Syndrome::RnrNak { timer: 3 }, 1));
    assert!(push(&mut ring, 2, Syndrome::RnrNak { timer: 3 }, 1));
    assert!(push(
        &mut ring,
        3,
        Syndrome::Nak(NakCode::PsnSequenceError),
        1
    ));
    assert!(push(&mut ring, 4, Syndrome::ACK_UNLIMITED, 2));
    let popped: std::vec::Vec<_> = std::iter::from_fn(|| ring.pop())
        .map(|e| ack_of(e.bytes()))
        .map(|(_, psn, aeth)| (psn, aeth.syndrome))
        .collect();
    assert_eq!(
        popped,
        [
            (1, Syndrome::ACK_UNLIMITED),
            (2, Syndrome::RnrNak { timer: 3 }),
            (2, Syndrome::RnrNak { timer: 3 }),
            (3, Syndrome::Nak(NakCode::PsnSequenceError)),
            (4, Syndrome::ACK_UNLIMITED),
        ]
    );
}

#[test]
fn only_an_acknowledge_packet_is_merged() {
    // Not pushed by the driver (a read response is longer than a slot of the ring), but a
    // packet of another opcode with an ACK syndrome must not be taken for an ACK.
    let mut ring = AckRing::new();
    let (mut bth, aeth) = ack_headers(1, Syndrome::ACK_UNLIMITED, 1);
    bth.opcode = RC_RDMA_READ_RESPONSE_ONLY;
    assert!(ring.push_ack(&bth, &aeth));
    assert!(push(&mut ring, 2, Syndrome::ACK_UNLIMITED, 1));
    assert_eq!(ring.len(), 2);
}

#[test]
fn acks_merge_across_the_psn_wrap_and_not_into_a_popped_one() {
    let mut ring = AckRing::new();
    assert!(push(&mut ring, 0xff_ffff, Syndrome::ACK_UNLIMITED, 1));
    assert!(push(&mut ring, 0, Syndrome::ACK_UNLIMITED, 2));
    assert_eq!(ring.len(), 1);
    assert_eq!(ack_of(ring.pop().unwrap().bytes()).1, 0);
    assert!(push(&mut ring, 1, Syndrome::ACK_UNLIMITED, 3));
    assert_eq!(ring.len(), 1);
    assert_eq!(ack_of(ring.front().unwrap().bytes()).1, 1);
}

#[test]
fn a_full_ring_still_takes_an_ack_it_can_merge() {
    let mut ring = AckRing::new();
    for psn in 0..ACK_RING_LEN as u32 - 1 {
        assert!(push(&mut ring, psn, Syndrome::RnrNak { timer: 1 }, 0));
    }
    assert!(push(&mut ring, 100, Syndrome::ACK_UNLIMITED, 0));
    assert!(!ring.has_room());
    assert!(push(&mut ring, 101, Syndrome::ACK_UNLIMITED, 0));
    assert!(!push(&mut ring, 102, Syndrome::RnrNak { timer: 1 }, 0));
    ring.close();
    assert!(!push(&mut ring, 103, Syndrome::ACK_UNLIMITED, 0));
}

proptest! {
    /// A responder's stream of ACKs and NAKs, read by a completer at any pace: every NAK comes
    /// out once and in order, no positive ACK comes out before a NAK pushed ahead of it, the
    /// ring never refuses while it holds fewer than half its length in NAKs (runs of ACKs
    /// between them take one entry each), and once drained the completer has seen the last
    /// ACK.
    #[test]
    fn coalescing_loses_no_nak_and_no_acknowledgement(
        ops in proptest::collection::vec(0u8..6, 0..300),
        start in 0xff_ff00u32..0xff_ffff,
    ) {
        let mut ring = AckRing::new();
        let mut psn = start;
        let mut pushed = std::vec::Vec::new();
        let mut popped = std::vec::Vec::new();
        let mut naks_held = 0;
        for op in ops {
            match op {
                0..=2 => {
                    psn = (psn + u32::from(op)) & 0xff_ffff;
                    prop_assert!(push(&mut ring, psn, Syndrome::ACK_UNLIMITED, 0));
                    pushed.push((psn, true));
                }
                3 if naks_held < (ACK_RING_LEN - 1) / 2 => {
                    let nak = Syndrome::RnrNak { timer: 2 };
                    prop_assert!(push(&mut ring, psn, nak, 0));
                    pushed.push((psn, false));
                    naks_held += 1;
                }
                _ => {
                    if let Some(e) = ring.pop() {
                        let (_, p, aeth) = ack_of(e.bytes());
                        let ack = matches!(aeth.syndrome, Syndrome::Ack { .. });
                        naks_held -= usize::from(!ack);
                        popped.push((p, ack));
                    }
                }
            }
        }
        while let Some(e) = ring.pop() {
            let (_, p, aeth) = ack_of(e.bytes());
            popped.push((p, matches!(aeth.syndrome, Syndrome::Ack { .. })));
        }
        let naks = |v: &[(u32, bool)]| v.iter().filter(|p| !p.1).count();
        prop_assert_eq!(naks(&popped), naks(&pushed));
        // Each packet that came out is one pushed, in order: the popped sequence is a
        // subsequence of the pushed one that keeps every NAK.
        let mut it = pushed.iter();
        for p in &popped {
            prop_assert!(it.any(|q| q == p), "{:?} out of order", p);
        }
        if let Some(&(last, true)) = pushed.last() {
            prop_assert_eq!(popped.last(), Some(&(last, true)));
        }
    }
}
