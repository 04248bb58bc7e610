// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Shared-ring arithmetic: the C driver's queue sizes, the role of each queue type, hostile
//! indices from user space, and resize planning.

use proptest::prelude::*;

use crate::proto::queue::{
    recv_wqe_size, send_wqe_size, Ends, Geometry, Index, QueueType, RawIndex, SlotCopy,
    CONSUMER_INDEX_OFFSET, CQE_SIZE, DEFAULT_CACHE_LINE_SIZE, INDEX_MASK_OFFSET,
    LOG2_ELEM_SIZE_OFFSET, MAX_BUF_SIZE, PRODUCER_INDEX_OFFSET, QUEUE_BUF_HDR_SIZE, RECV_WQE_SIZE,
    SEND_WQE_SIZE, SGE_SIZE,
};
use crate::proto::Errno;

const CL: u32 = DEFAULT_CACHE_LINE_SIZE;

const ALL_TYPES: [QueueType; 4] = [
    QueueType::ToClient,
    QueueType::FromClient,
    QueueType::FromUlp,
    QueueType::ToUlp,
];

fn geom(num_elem: u32, elem_size: u32) -> Geometry {
    Geometry::new(num_elem, elem_size, CL).unwrap()
}

/// Ends with the given producer and consumer values as a CQ producer (rxe) sees them.
fn cq_ends(g: &Geometry, prod: u32, cons: u32) -> Ends {
    g.ends(
        QueueType::ToClient,
        g.mask(RawIndex::new(prod)),
        RawIndex::new(cons),
    )
}

/// The C expressions of `rxe_queue.h`, on unmasked values.
fn c_count(mask: u32, prod: u32, cons: u32) -> u32 {
    prod.wrapping_sub(cons) & mask
}
fn c_full(mask: u32, prod: u32, cons: u32) -> bool {
    prod.wrapping_add(1).wrapping_sub(cons) & mask == 0
}

#[test]
fn header_layout_is_struct_rxe_queue_buf() {
    assert_eq!(QUEUE_BUF_HDR_SIZE, 384);
    assert_eq!(LOG2_ELEM_SIZE_OFFSET, 0);
    assert_eq!(INDEX_MASK_OFFSET, 4);
    assert_eq!(PRODUCER_INDEX_OFFSET, 128);
    assert_eq!(CONSUMER_INDEX_OFFSET, 256);
}

// Each index alone in its 128-byte block, both before the data.
const _: () = assert!(CONSUMER_INDEX_OFFSET - PRODUCER_INDEX_OFFSET >= 128);
const _: () = assert!(QUEUE_BUF_HDR_SIZE - CONSUMER_INDEX_OFFSET >= 128);

#[test]
fn element_sizes_are_the_c_structs() {
    assert_eq!(
        (CQE_SIZE, SEND_WQE_SIZE, RECV_WQE_SIZE, SGE_SIZE),
        (72, 208, 40, 16)
    );
    // rxe_init_sq: the data area is max(16 * sge, inline), both reported back.
    let s = send_wqe_size(1, 0);
    assert_eq!((s.elem_size, s.max_sge, s.max_inline), (224, 1, 16));
    let s = send_wqe_size(32, 0);
    assert_eq!((s.elem_size, s.max_sge, s.max_inline), (720, 32, 512));
    let s = send_wqe_size(0, 512);
    assert_eq!((s.elem_size, s.max_sge, s.max_inline), (720, 32, 512));
    let s = send_wqe_size(2, 100);
    assert_eq!((s.elem_size, s.max_sge, s.max_inline), (308, 6, 100));
    let s = send_wqe_size(0, 0);
    assert_eq!((s.elem_size, s.max_sge, s.max_inline), (208, 0, 0));
    assert_eq!(recv_wqe_size(1), 56);
    assert_eq!(recv_wqe_size(4), 104);
    assert_eq!(recv_wqe_size(32), 552);
    // Hostile sizes saturate and are then refused by the geometry.
    assert_eq!(send_wqe_size(u32::MAX, u32::MAX).elem_size, u32::MAX);
    assert_eq!(recv_wqe_size(u32::MAX), u32::MAX);
    assert_eq!(Geometry::new(1, u32::MAX, CL), Err(Errno::NoMem));
}

#[test]
fn slot_sizes_of_section_3_2() {
    // (element size, slot size, log2)
    for (elem, slot, log2) in [
        (CQE_SIZE, 128, 7),
        (send_wqe_size(1, 0).elem_size, 256, 8),
        (send_wqe_size(32, 0).elem_size, 1024, 10),
        (recv_wqe_size(1), 64, 6),
        (recv_wqe_size(4), 128, 7),
        (recv_wqe_size(32), 1024, 10),
        (0, 64, 6),
        (1, 64, 6),
        (64, 64, 6),
        (65, 128, 7),
    ] {
        let g = geom(1, elem);
        assert_eq!(
            (g.slot_size(), g.log2_elem_size(), g.elem_size()),
            (slot, log2, elem)
        );
    }
    // A wider cache line pads further; none at all still gives 1-byte slots, no panic.
    assert_eq!(Geometry::new(1, 72, 256).unwrap().slot_size(), 256);
    let g = Geometry::new(1, 0, 0).unwrap();
    assert_eq!((g.slot_size(), g.log2_elem_size()), (1, 0));
}

#[test]
fn slots_are_next_power_of_two_of_num_elem_plus_one() {
    // Reported cqe of §2.12: 1→1, 2→3, 100→127, 32767→32767; 0 is one slot, no room.
    for (asked, slots) in [(0, 1), (1, 2), (2, 4), (3, 4), (100, 128), (32767, 32768)] {
        let g = geom(asked, CQE_SIZE);
        assert_eq!(g.num_slots(), slots, "num_elem {asked}");
        assert_eq!(g.index_mask(), slots - 1);
        assert_eq!(g.capacity(), slots - 1);
    }
}

#[test]
fn buffer_size_and_mmap_size() {
    // §3.2: a CQ of 10 → 16 slots of 128 bytes, 2432 bytes, mapped as one page.
    let g = geom(10, CQE_SIZE);
    assert_eq!(g.num_slots(), 16);
    assert_eq!(g.buf_size(), 2432);
    assert_eq!(g.data_range(), 384..2432);
    assert_eq!(g.mmap_size(4096), Some(4096));
    assert_eq!(g.mmap_size(65536), Some(65536));
    assert_eq!(g.mmap_size(3000), None);
    assert_eq!(g.mmap_size(0), None);
    // Exactly one page of data plus the header spills into a second page.
    let g = geom(63, 64);
    assert_eq!(g.buf_size(), 384 + 4096);
    assert_eq!(g.mmap_size(4096), Some(8192));
}

#[test]
fn largest_queues_the_c_limits_allow() {
    // max_send_wr 2^20 with 32 SGEs: 2^21 slots of 1024 bytes (and a reported 2^21 - 1 WRs).
    let g = geom(1 << 20, send_wqe_size(32, 0).elem_size);
    assert_eq!(g.num_slots(), 1 << 21);
    assert_eq!(g.capacity(), (1 << 21) - 1);
    assert_eq!(g.buf_size(), (1 << 31) + 384);
    assert_eq!(g.mmap_size(4096), Some((1 << 31) + 4096));
    // The largest CQ.
    assert_eq!(geom(32767, CQE_SIZE).buf_size(), 384 + 32768 * 128);
}

#[test]
fn sizes_past_the_limits_are_enomem() {
    // Negative as the C `int`.
    for n in [1 << 31, u32::MAX, 0x8000_0001] {
        assert_eq!(Geometry::new(n, 8, CL), Err(Errno::NoMem), "{n:#x}");
    }
    // i32::MAX elements: 2^31 slots, of 2 bytes too big a buffer, of 1 byte not.
    assert_eq!(Geometry::new(i32::MAX as u32, 2, 1), Err(Errno::NoMem));
    assert_eq!(
        Geometry::new(i32::MAX as u32, 1, 1).unwrap().num_slots(),
        1 << 31
    );
    // Slot size that does not round up in u32.
    assert_eq!(Geometry::new(0, (1 << 31) + 1, CL), Err(Errno::NoMem));
    // Product past u32, and just past MAX_BUF_SIZE.
    assert_eq!(Geometry::new(1 << 22, 1024, CL), Err(Errno::NoMem));
    assert_eq!(Geometry::new(1, 1 << 31, CL), Err(Errno::NoMem));
    assert_eq!(
        Geometry::new(0, 1 << 31, CL).unwrap().buf_size(),
        (1 << 31) + 384
    );
    // 2^26 slots of 64 = 2^32: overflow. 2^25 * 128 = 2^32 too.
    assert_eq!(Geometry::new((1 << 26) - 1, 64, CL), Err(Errno::NoMem));
    assert_eq!(Geometry::new((1 << 25) - 1, 128, CL), Err(Errno::NoMem));
    // The largest accepted buffer is within MAX_BUF_SIZE.
    let g = Geometry::new((1 << 25) - 1, 64, CL).unwrap();
    assert!(g.buf_size() <= MAX_BUF_SIZE as usize);
}

#[test]
fn roles_of_the_queue_types() {
    assert_eq!(ALL_TYPES.map(|t| t as u32), [0, 1, 2, 3]);
    assert_eq!(
        ALL_TYPES.map(QueueType::caller_produces),
        [true, false, true, false]
    );
    assert_eq!(
        ALL_TYPES.map(QueueType::own_index_is_private),
        [true, true, false, false]
    );
    assert_eq!(
        ALL_TYPES.map(QueueType::peer_may_be_user),
        [true, true, false, false]
    );
}

#[test]
fn ends_put_own_and_peer_index_on_the_right_side() {
    let g = geom(7, 64); // 8 slots
    let own = g.mask(RawIndex::new(5));
    for ty in ALL_TYPES {
        let e = g.ends(ty, own, RawIndex::new(2));
        let (p, c) = (e.producer().get(), e.consumer().get());
        if ty.caller_produces() {
            assert_eq!((p, c), (5, 2), "{ty:?}");
            assert_eq!(e.count(), 3);
        } else {
            assert_eq!((p, c), (2, 5), "{ty:?}");
            assert_eq!(e.count(), 5);
        }
    }
}

#[test]
fn producer_and_consumer_walk_the_ring() {
    // A CQ of 3 (4 slots), rxe producing, the client consuming, several times round.
    let g = geom(3, CQE_SIZE);
    let mut prod = Index::ZERO;
    let mut cons = 0u32; // what the client stores
    let mut produced = 0u32;
    let mut consumed = 0u32;
    for step in 0..40u32 {
        let e = g.ends(QueueType::ToClient, prod, RawIndex::new(cons));
        assert_eq!(e.count(), produced - consumed);
        assert_eq!(e.is_empty(), produced == consumed);
        assert_eq!(e.is_full(), produced - consumed == 3);
        assert_eq!(g.producer_offset(&e), 384 + 128 * (produced % 4) as usize);
        if step % 3 != 2 && !e.is_full() {
            prod = g.next_index(prod);
            produced += 1;
        } else if let Some(head) = g.head(&e) {
            assert_eq!(head, 384 + 128 * (consumed % 4) as usize);
            // The client's view (TO_ULP-like) of the same ring.
            let client = g.ends(
                QueueType::ToUlp,
                g.mask(RawIndex::new(cons)),
                RawIndex::new(prod.get()),
            );
            assert_eq!(g.consumer_offset(&client), head);
            cons = g.next_index(g.mask(RawIndex::new(cons))).get();
            consumed += 1;
        }
    }
    assert!(consumed > 8, "wrapped round several times");
}

#[test]
fn full_leaves_one_slot_free() {
    let g = geom(7, 64);
    let e = cq_ends(&g, 7, 0);
    assert!(e.is_full());
    assert_eq!(e.count(), 7);
    assert!(!e.is_empty());
    let e = cq_ends(&g, 2, 3);
    assert!(e.is_full());
    let e = cq_ends(&g, 3, 3);
    assert!(e.is_empty() && !e.is_full());
    // One slot: always empty and always full.
    let g = geom(0, 64);
    let e = cq_ends(&g, 0, 0);
    assert!(e.is_empty() && e.is_full());
    assert_eq!(g.head(&e), None);
}

#[test]
fn hostile_peer_indices_stay_in_range() {
    let hostile = [
        u32::MAX,
        u32::MAX - 1,
        0x8000_0000,
        0x7fff_ffff,
        16,
        17,
        31,
        32,
        1000,
        0xdead_beef,
    ];
    let g = geom(15, 100); // 16 slots of 128
    let end = g.buf_size();
    for ty in ALL_TYPES {
        for own in [0u32, 3, 15] {
            for &peer in &hostile {
                let e = g.ends(ty, g.mask(RawIndex::new(own)), RawIndex::new(peer));
                assert!(e.producer().get() < 16 && e.consumer().get() < 16);
                assert!(e.count() <= g.capacity());
                for off in [g.producer_offset(&e), g.consumer_offset(&e)] {
                    assert!(off >= 384 && off + 128 <= end, "{ty:?} {own} {peer:#x}");
                }
                assert_eq!(e.indices().count() as u32, e.count());
                for i in e.indices() {
                    assert!(g.slot(i).end <= end);
                }
                // Masking changes nothing in the C count/full of the raw values.
                let (p, c) = if ty.caller_produces() {
                    (own, peer)
                } else {
                    (peer, own)
                };
                assert_eq!(e.count(), c_count(15, p, c));
                assert_eq!(e.is_full(), c_full(15, p, c));
            }
        }
    }
}

#[test]
fn producer_behind_consumer_counts_round_the_ring() {
    let g = geom(15, 64);
    // User says producer 2, rxe's consumer is at 9: 9 elements from 9 through 1.
    let e = g.ends(
        QueueType::FromClient,
        g.mask(RawIndex::new(9)),
        RawIndex::new(2),
    );
    assert_eq!(e.count(), 9);
    let seen: std::vec::Vec<u32> = e.indices().map(Index::get).collect();
    assert_eq!(seen, [9, 10, 11, 12, 13, 14, 15, 0, 1]);
    // Producer u32::MAX (= 15 masked), consumer 0: full, 15 elements.
    let e = g.ends(QueueType::FromClient, Index::ZERO, RawIndex::new(u32::MAX));
    assert!(e.is_full());
    assert_eq!(e.indices().len(), 15);
}

#[test]
fn own_index_from_another_queue_is_masked_again() {
    let big = geom(255, 64);
    let small = geom(7, 64);
    let n = 200;
    let i = big.mask(RawIndex::new(n));
    assert_eq!(small.offset(i), 384 + (n % 8) as usize * 64);
    assert!(small.slot(i).end <= small.buf_size());
    let e = small.ends(QueueType::ToClient, i, RawIndex::new(0));
    assert_eq!(e.producer().get(), n % 8);
    assert_eq!(small.next_index(i).get(), (n + 1) % 8);
}

#[test]
fn next_index_wraps() {
    let g = geom(3, 64);
    let order: std::vec::Vec<u32> =
        core::iter::successors(Some(Index::ZERO), |&i| Some(g.next_index(i)))
            .take(9)
            .map(Index::get)
            .collect();
    assert_eq!(order, [0, 1, 2, 3, 0, 1, 2, 3, 0]);
    assert_eq!(g.next_index(g.mask(RawIndex::new(u32::MAX))).get(), 0);
}

#[test]
fn index_from_offset_inverts_offset() {
    let g = geom(15, 200); // 256-byte slots
    for n in 0..16 {
        let i = g.mask(RawIndex::new(n));
        let off = g.offset(i);
        assert_eq!(off, 384 + 256 * n as usize);
        assert_eq!(g.slot(i), off..off + 256);
        assert_eq!(g.index_from_offset(off), Some(i));
        assert_eq!(g.index_from_offset(off + 255), Some(i));
    }
    assert_eq!(g.index_from_offset(0), None);
    assert_eq!(g.index_from_offset(383), None);
    assert_eq!(g.index_from_offset(g.buf_size()), None);
    assert_eq!(g.index_from_offset(usize::MAX), None);
}

#[test]
fn resize_copies_oldest_first_into_the_new_ring() {
    // A CQ of 15 with 5 CQEs wrapped round the end (consumer 14, producer 3), into a CQ of 7.
    let old = geom(15, CQE_SIZE);
    let new = geom(7, CQE_SIZE);
    let e = cq_ends(&old, 3, 14);
    let plan = old
        .resize(QueueType::ToClient, &e, &new, Index::ZERO)
        .unwrap();
    assert_eq!(plan.count(), 5);
    let copies: std::vec::Vec<SlotCopy> = plan.copies().collect();
    let expect: std::vec::Vec<SlotCopy> = [14usize, 15, 0, 1, 2]
        .iter()
        .enumerate()
        .map(|(k, &s)| SlotCopy {
            from: 384 + s * 128..384 + s * 128 + 72,
            to: 384 + k * 128..384 + k * 128 + 72,
        })
        .collect();
    assert_eq!(copies, expect);
    assert_eq!(plan.copies().len(), 5);
    assert_eq!(plan.new_producer().get(), 5);
    assert_eq!(plan.new_consumer(), Index::ZERO);
    // CQ: rxe owns the producer.
    assert_eq!(plan.new_private_index(), plan.new_producer());
}

#[test]
fn resize_refuses_a_queue_too_small() {
    let old = geom(15, CQE_SIZE);
    let e = cq_ends(&old, 8, 0); // 8 CQEs
    let new = geom(7, CQE_SIZE); // holds 7
    assert_eq!(
        old.resize(QueueType::ToClient, &e, &new, Index::ZERO).err(),
        Some(Errno::Inval)
    );
    let new = geom(8, CQE_SIZE); // 16 slots, holds 15
    assert!(old
        .resize(QueueType::ToClient, &e, &new, Index::ZERO)
        .is_ok());
    // Exactly full fits exactly.
    let new = geom(7, CQE_SIZE);
    let e = cq_ends(&old, 7, 0);
    assert_eq!(
        old.resize(QueueType::ToClient, &e, &new, Index::ZERO)
            .unwrap()
            .count(),
        7
    );
    // Empty always fits, even one slot.
    let e = cq_ends(&old, 9, 9);
    let plan = old
        .resize(QueueType::ToClient, &e, &geom(0, CQE_SIZE), Index::ZERO)
        .unwrap();
    assert_eq!((plan.count(), plan.copies().count()), (0, 0));
}

#[test]
fn resize_of_an_srq_with_a_hostile_start() {
    // SRQ: rxe consumes (private consumer 6), the user produced up to u32::MAX (7 masked).
    let wqe = recv_wqe_size(2);
    let old = geom(7, wqe);
    let e = old.ends(
        QueueType::FromClient,
        old.mask(RawIndex::new(6)),
        RawIndex::new(u32::MAX),
    );
    assert_eq!(e.count(), 1);
    let new = geom(31, wqe);
    // User space wrote the new buffer's producer index before the swap.
    let start = new.mask(RawIndex::new(0xffff_fffe));
    let plan = old.resize(QueueType::FromClient, &e, &new, start).unwrap();
    let c: std::vec::Vec<SlotCopy> = plan.copies().collect();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].from.start, old.offset(old.mask(RawIndex::new(6))));
    assert_eq!(c[0].to.start, new.offset(start));
    assert_eq!(c[0].from.len(), wqe as usize);
    assert_eq!(plan.new_producer().get(), 31); // 30 + 1
    assert_eq!(plan.new_private_index(), Index::ZERO); // rxe owns the consumer
}

#[test]
fn resize_copy_length_never_exceeds_a_slot() {
    // Asked to copy more than the old slot holds (never done by C callers): clamped.
    let old = geom(3, 64);
    let new = geom(3, 200);
    let e = cq_ends(&old, 2, 0);
    let plan = old
        .resize(QueueType::ToClient, &e, &new, Index::ZERO)
        .unwrap();
    for c in plan.copies() {
        assert_eq!(c.from.len(), 64);
        assert!(c.from.end <= old.buf_size() && c.to.end <= new.buf_size());
    }
}

fn arb_geometry() -> impl Strategy<Value = Geometry> {
    (
        0u32..(1 << 16),
        0u32..2048,
        prop::sample::select(std::vec![1u32, 32, 64, 128]),
    )
        .prop_map(|(n, e, cl)| Geometry::new(n, e, cl).unwrap())
}

proptest! {
    #[test]
    fn geometry_never_panics_and_keeps_its_invariants(
        n in any::<u32>(), e in any::<u32>(), cl in any::<u32>(),
    ) {
        if let Ok(g) = Geometry::new(n, e, cl) {
            let slots = u64::from(g.num_slots());
            prop_assert!(slots.is_power_of_two());
            prop_assert!(slots > u64::from(n) && slots <= 2 * (u64::from(n) + 1));
            let want = u64::from(e.max(cl));
            let slot = u64::from(g.slot_size());
            prop_assert!(slot.is_power_of_two() && slot >= want && (want == 0 || slot < 2 * want));
            prop_assert_eq!(g.buf_size() as u64, 384 + slots * slot);
            prop_assert!(g.buf_size() as u64 <= u64::from(MAX_BUF_SIZE));
            prop_assert_eq!(u64::from(g.capacity()), slots - 1);
        }
    }

    #[test]
    fn any_loaded_index_addresses_inside_the_ring(
        g in arb_geometry(), own in any::<u32>(), peer in any::<u32>(), ty in 0usize..4,
    ) {
        let ty = ALL_TYPES[ty];
        let e = g.ends(ty, g.mask(RawIndex::new(own)), RawIndex::new(peer));
        let data = g.data_range();
        for off in [g.producer_offset(&e), g.consumer_offset(&e)] {
            prop_assert!(data.start <= off && off + g.slot_size() as usize <= data.end);
            prop_assert_eq!(g.index_from_offset(off).map(|i| g.offset(i)), Some(off));
        }
        let (p, c) = if ty.caller_produces() { (own, peer) } else { (peer, own) };
        prop_assert_eq!(e.count(), c_count(g.index_mask(), p, c));
        prop_assert_eq!(e.is_full(), c_full(g.index_mask(), p, c));
        prop_assert_eq!(e.is_full(), e.count() == g.capacity());
        prop_assert_eq!(e.is_empty(), e.count() == 0);
        prop_assert_eq!(g.head(&e).is_none(), e.is_empty());
        let mut n = 0u32;
        let mut expect = e.consumer();
        for i in e.indices() {
            prop_assert_eq!(i, expect);
            prop_assert!(g.slot(i).end <= data.end);
            expect = g.next_index(i);
            n += 1;
        }
        prop_assert_eq!(n, e.count());
        prop_assert_eq!(expect, if e.count() == 0 { e.consumer() } else { e.producer() });
    }

    #[test]
    fn resize_plans_stay_inside_both_buffers(
        old in arb_geometry(), new in arb_geometry(),
        own in any::<u32>(), peer in any::<u32>(), start in any::<u32>(), cq in any::<bool>(),
    ) {
        let ty = if cq { QueueType::ToClient } else { QueueType::FromClient };
        let e = old.ends(ty, old.mask(RawIndex::new(own)), RawIndex::new(peer));
        match old.resize(ty, &e, &new, new.mask(RawIndex::new(start))) {
            Err(err) => {
                prop_assert_eq!(err, Errno::Inval);
                prop_assert!(e.count() > new.capacity());
            }
            Ok(plan) => {
                prop_assert_eq!(plan.count(), e.count());
                let mut n = 0u32;
                for c in plan.copies() {
                    prop_assert!(c.from.start >= 384 && c.from.end <= old.buf_size());
                    prop_assert!(c.to.start >= 384 && c.to.end <= new.buf_size());
                    prop_assert!(c.from.len() <= old.slot_size() as usize);
                    n += 1;
                }
                prop_assert_eq!(n, e.count());
                let cons = RawIndex::new(plan.new_consumer().get());
                let ne = new.ends(QueueType::ToClient, plan.new_producer(), cons);
                // The new ring holds the start offset plus the copied elements.
                prop_assert_eq!(
                    ne.count(),
                    (new.mask(RawIndex::new(start)).get() + e.count()) & new.index_mask()
                );
            }
        }
    }
}
