// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The responder resources (`proto::resources`) against the cases of C `rxe_prepare_res`,
//! `find_resource` and `duplicate_request`, and as properties: PSN-shift invariance, capacity
//! `max_dest_rd_atomic`, the oldest evicted first.

use std::string::String;
use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use crate::proto::opcode::{self, opcode_info, Mask};
use crate::proto::psn::{psn_add, PSN_MASK};
use crate::proto::resources::{read_packets, DupDrop, Kind, ReadReplay, Resource, Resources};
use crate::proto::resp::{duplicate, Duplicate};

type Ring = Resources<Vec<Option<Resource>>>;

fn ring(cap: usize) -> Ring {
    Resources::new(vec![None; cap])
}

fn mask(op: u8) -> Mask {
    opcode_info(op).unwrap().mask
}

const MTU: u32 = 1024;
const RKEY: u32 = 0x1234;

// --- rxe_prepare_res ---------------------------------------------------------------------------

#[test]
fn a_read_takes_one_psn_per_mtu_and_at_least_one() {
    // C rxe_prepare_res: pkts = max((reth_len + mtu - 1) / mtu, 1); last_psn = psn + pkts - 1.
    assert_eq!(read_packets(0, MTU), 1);
    assert_eq!(read_packets(1, MTU), 1);
    assert_eq!(read_packets(MTU, MTU), 1);
    assert_eq!(read_packets(MTU + 1, MTU), 2);
    assert_eq!(read_packets(u32::MAX, 4096), 0x10_0000);
    let r = Resource::read(100, 0x1000, 3 * MTU, RKEY, MTU);
    assert_eq!((r.first_psn, r.last_psn), (100, 102));
    let r = Resource::read(100, 0x1000, 0, RKEY, MTU);
    assert_eq!((r.first_psn, r.last_psn), (100, 100));
    // Across the wrap.
    let r = Resource::read(PSN_MASK - 1, 0, 4 * MTU, RKEY, MTU);
    assert_eq!((r.first_psn, r.last_psn), (PSN_MASK - 1, 1));
    let a = Resource::single(7, Kind::Atomic { orig: 9 });
    assert_eq!((a.first_psn, a.last_psn), (7, 7));
}

#[test]
fn the_ring_keeps_max_dest_rd_atomic_resources_and_evicts_the_oldest() {
    // C: resources[res_head], rxe_advance_resp_resource wraps at max_dest_rd_atomic.
    let mut r = ring(4);
    assert_eq!(r.capacity(), 4);
    assert!(r.is_empty());
    for psn in 0..4 {
        r.record(Resource::single(psn, Kind::Atomic { orig: psn.into() }));
    }
    assert_eq!(r.len(), 4);
    for psn in 0..4 {
        assert_eq!(r.replay_atomic(psn), Ok(psn.into()));
    }
    r.record(Resource::single(4, Kind::Atomic { orig: 4 }));
    assert_eq!(r.len(), 4);
    assert_eq!(r.replay_atomic(0), Err(DupDrop::NotFound));
    for psn in 1..5 {
        assert_eq!(r.replay_atomic(psn), Ok(psn.into()));
    }
    let order: Vec<u32> = r.newest_first().map(|x| x.first_psn).collect();
    assert_eq!(order, [4, 3, 2, 1]);
}

#[test]
fn no_slots_record_nothing() {
    // max_dest_rd_atomic 0: reads and atomics are refused earlier (check_resource); a FLUSH
    // is not, and C's rxe_prepare_res writes past its zero-length array. Here: nothing kept.
    let mut r = ring(0);
    r.record(Resource::single(5, Kind::Flush));
    assert!(r.is_empty());
    assert_eq!(r.find(5), None);
    assert_eq!(r.replay_ack(5, true), Err(DupDrop::NotFound));
    assert_eq!(r.newest_first().count(), 0);
}

#[test]
fn reset_forgets_every_resource_and_keeps_the_capacity() {
    // C rxe_qp_reset → cleanup_rd_atomic_resources: every type set to 0.
    let mut r = ring(2);
    r.record(Resource::single(1, Kind::AtomicWrite));
    r.record(Resource::read(2, 0, 10, RKEY, MTU));
    r.clear();
    assert!(r.is_empty());
    assert_eq!(r.capacity(), 2);
    assert_eq!(r.find(1), None);
    assert_eq!(r.find(2), None);
    // A new ring over slots with something in them starts empty (alloc_rd_atomic_resources
    // zeroes its array).
    let r = Resources::new(vec![Some(Resource::single(3, Kind::Flush)); 2]);
    assert!(r.is_empty());
}

// --- find_resource -----------------------------------------------------------------------------

#[test]
fn find_takes_any_psn_of_a_read_by_psn_order() {
    let mut r = ring(8);
    r.record(Resource::read(PSN_MASK - 1, 0x1000, 4 * MTU, RKEY, MTU));
    for psn in [PSN_MASK - 1, PSN_MASK, 0, 1] {
        assert!(r.find(psn).is_some(), "{psn:#x}");
    }
    assert_eq!(r.find(PSN_MASK - 2), None);
    assert_eq!(r.find(2), None);
}

#[test]
fn find_prefers_the_newest_of_two_matches() {
    // Possible only once PSNs wrapped (2^24 apart); C takes the first slot that matches.
    let mut r = ring(4);
    r.record(Resource::single(10, Kind::Atomic { orig: 1 }));
    r.record(Resource::single(10, Kind::Atomic { orig: 2 }));
    assert_eq!(r.replay_atomic(10), Ok(2));
}

// --- duplicate_request -------------------------------------------------------------------------

fn one_read() -> Ring {
    let mut r = ring(4);
    r.record(Resource::single(99, Kind::Atomic { orig: 0 }));
    // A read of 4 MTUs at 0x10000, PSNs 100..=103.
    r.record(Resource::read(100, 0x10000, 4 * MTU, RKEY, MTU));
    r
}

#[test]
fn duplicate_read_from_its_first_psn_replays_from_the_start() {
    // C: psn == first_psn → rdatm_res_state_new (FIRST or ONLY); cursor from the new RETH.
    let r = one_read();
    assert_eq!(
        r.replay_read(100, 0x10000, 4 * MTU, RKEY),
        Ok(ReadReplay {
            psn: 100,
            va: 0x10000,
            len: 4 * MTU,
            rkey: RKEY,
            from_start: true,
        })
    );
    // The same request asking for less (a subset) is replayed too.
    assert_eq!(
        r.replay_read(100, 0x10000, 10, RKEY)
            .map(|p| (p.len, p.from_start)),
        Ok((10, true))
    );
}

#[test]
fn duplicate_read_from_a_later_psn_resumes_with_middle_or_last() {
    // C: psn != first_psn → rdatm_res_state_replay; the requester resends the rest of a read it
    // got part of, from the first PSN it missed.
    let r = one_read();
    assert_eq!(
        r.replay_read(102, 0x10000 + 2 * u64::from(MTU), 2 * MTU, RKEY),
        Ok(ReadReplay {
            psn: 102,
            va: 0x10000 + 2 * u64::from(MTU),
            len: 2 * MTU,
            rkey: RKEY,
            from_start: false,
        })
    );
}

#[test]
fn duplicate_read_not_found_is_dropped() {
    // C: find_resource NULL → class D, RESPST_CLEANUP.
    let r = one_read();
    assert_eq!(
        r.replay_read(104, 0x10000, MTU, RKEY),
        Err(DupDrop::NotFound)
    );
    assert_eq!(
        r.replay_read(98, 0x10000, MTU, RKEY),
        Err(DupDrop::NotFound)
    );
}

#[test]
fn duplicate_read_outside_the_read_recorded_is_dropped() {
    // C: iova < va_org || resid > length || iova + resid > va_org + length → RESPST_CLEANUP.
    let r = one_read();
    let len = 4 * MTU;
    assert_eq!(r.replay_read(100, 0xffff, 1, RKEY), Err(DupDrop::NotSubset));
    assert_eq!(
        r.replay_read(100, 0x10000, len + 1, RKEY),
        Err(DupDrop::NotSubset)
    );
    assert_eq!(
        r.replay_read(101, 0x10001, len, RKEY),
        Err(DupDrop::NotSubset)
    );
    // The last byte, and the empty range at the end, are inside.
    assert!(r
        .replay_read(103, 0x10000 + u64::from(len) - 1, 1, RKEY)
        .is_ok());
    assert!(r
        .replay_read(103, 0x10000 + u64::from(len), 0, RKEY)
        .is_ok());
    // An address that would wrap 64 bits is not (C's iova + resid would wrap and pass).
    assert_eq!(
        r.replay_read(100, u64::MAX, 2, RKEY),
        Err(DupDrop::NotSubset)
    );
}

#[test]
fn duplicate_read_with_another_rkey_is_dropped() {
    // C: reth_rkey(pkt) != res->read.rkey → RESPST_CLEANUP.
    let r = one_read();
    assert_eq!(
        r.replay_read(100, 0x10000, MTU, RKEY + 1),
        Err(DupDrop::OtherRkey)
    );
}

#[test]
fn a_replay_does_not_move_the_read_recorded() {
    // C resets va_org to the replay's address but keeps length, so after replaying the tail of
    // a read, a duplicate asking for bytes past the read first executed would pass. Here the
    // resource stays as recorded.
    let r = one_read();
    let tail = 0x10000 + 3 * u64::from(MTU);
    assert!(r.replay_read(103, tail, MTU, RKEY).is_ok());
    assert_eq!(
        r.replay_read(103, tail, 4 * MTU, RKEY),
        Err(DupDrop::NotSubset)
    );
    assert!(r.replay_read(100, 0x10000, 4 * MTU, RKEY).is_ok());
}

#[test]
fn zero_length_read_replays_only_itself() {
    let mut r = ring(2);
    r.record(Resource::read(50, 0x2000, 0, 0, MTU));
    assert_eq!(
        r.replay_read(50, 0x2000, 0, 0).map(|p| p.from_start),
        Ok(true)
    );
    assert_eq!(r.replay_read(50, 0x2000, 1, 0), Err(DupDrop::NotSubset));
    assert_eq!(r.replay_read(50, 0x2001, 0, 0), Err(DupDrop::NotSubset));
}

#[test]
fn duplicate_atomic_is_answered_with_the_value_recorded_or_dropped() {
    // C: find_resource → atomic_reply with replay set → ATOMIC ACK with res->atomic.orig_val;
    // not found → class D.
    let mut r = ring(2);
    r.record(Resource::single(7, Kind::Atomic { orig: 0xdead }));
    assert_eq!(r.replay_atomic(7), Ok(0xdead));
    assert_eq!(r.replay_atomic(8), Err(DupDrop::NotFound));
    r.record(Resource::single(8, Kind::AtomicWrite));
    r.record(Resource::single(9, Kind::Flush));
    assert_eq!(r.replay_atomic(7), Err(DupDrop::NotFound));
}

#[test]
fn duplicate_atomic_write_and_flush_are_acknowledged_if_recorded() {
    // C: find_resource → atomic_write_reply / process_flush with replay set → acknowledge →
    // send_read_response_ack; not found → class D.
    let mut r = ring(4);
    r.record(Resource::single(20, Kind::AtomicWrite));
    r.record(Resource::single(21, Kind::Flush));
    assert_eq!(r.replay_ack(20, false), Ok(()));
    assert_eq!(r.replay_ack(21, true), Ok(()));
    assert_eq!(r.replay_ack(22, true), Err(DupDrop::NotFound));
}

#[test]
fn a_duplicate_is_answered_only_from_a_resource_of_its_kind() {
    // C's find_resource ignores the type, and answers from the union whatever is there. A
    // request with the PSN of another kind of request is not its duplicate: dropped.
    let mut r = ring(4);
    r.record(Resource::read(30, 0x1000, 2 * MTU, RKEY, MTU));
    r.record(Resource::single(32, Kind::Atomic { orig: 5 }));
    r.record(Resource::single(33, Kind::AtomicWrite));
    r.record(Resource::single(34, Kind::Flush));
    assert_eq!(r.replay_atomic(31), Err(DupDrop::OtherKind));
    assert_eq!(r.replay_ack(31, true), Err(DupDrop::OtherKind));
    assert_eq!(r.replay_read(32, 0x1000, 0, RKEY), Err(DupDrop::OtherKind));
    assert_eq!(r.replay_ack(32, false), Err(DupDrop::OtherKind));
    assert_eq!(r.replay_ack(33, true), Err(DupDrop::OtherKind));
    assert_eq!(r.replay_ack(34, false), Err(DupDrop::OtherKind));
    assert_eq!(r.replay_atomic(34), Err(DupDrop::OtherKind));
}

#[test]
fn duplicate_send_or_write_is_acked_before_ack_psn() {
    use opcode::*;
    // C duplicate_request: prev_psn = (qp->resp.ack_psn - 1) & BTH_PSN_MASK.
    for op in [
        RC_SEND_ONLY,
        RC_SEND_FIRST,
        RC_RDMA_WRITE_LAST,
        RC_RDMA_WRITE_ONLY,
    ] {
        assert_eq!(duplicate(mask(op), 100), Duplicate::Ack { psn: 99 });
        assert_eq!(duplicate(mask(op), 0), Duplicate::Ack { psn: PSN_MASK });
    }
}

// --- properties --------------------------------------------------------------------------------

/// A request the ring records, by its offset from a base PSN.
#[derive(Clone, Copy, Debug)]
enum Rec {
    Read { len: u32 },
    Atomic { orig: u64 },
    AtomicWrite,
    Flush,
}

fn rec() -> impl Strategy<Value = Rec> {
    prop_oneof![
        (0u32..5 * MTU).prop_map(|len| Rec::Read { len }),
        any::<u64>().prop_map(|orig| Rec::Atomic { orig }),
        Just(Rec::AtomicWrite),
        Just(Rec::Flush),
    ]
}

/// Records `recs` as a responder executing them in order from PSN `base` would (each request
/// after the previous one's responses, with a gap of sends/writes `gaps[i]` before it), and
/// returns the first PSN of each.
fn fill(r: &mut Ring, base: u32, recs: &[(Rec, u32)]) -> Vec<u32> {
    let mut psn = base;
    let mut firsts = Vec::new();
    for (i, &(rec, gap)) in recs.iter().enumerate() {
        psn = psn_add(psn, gap);
        firsts.push(psn);
        let va = 0x1000 * (i as u64 + 1);
        let res = match rec {
            Rec::Read { len } => Resource::read(psn, va, len, RKEY + i as u32, MTU),
            Rec::Atomic { orig } => Resource::single(psn, Kind::Atomic { orig }),
            Rec::AtomicWrite => Resource::single(psn, Kind::AtomicWrite),
            Rec::Flush => Resource::single(psn, Kind::Flush),
        };
        r.record(res);
        psn = psn_add(res.last_psn, 1);
    }
    firsts
}

/// Every answer the ring gives for the duplicate at `psn`, with PSNs made relative to `base`.
fn answers(r: &Ring, base: u32, psn: u32, va: u64, len: u32, rkey: u32) -> [String; 4] {
    let rel = |p: u32| psn_add(p, PSN_MASK + 1 - base);
    [
        std::format!(
            "{:?}",
            r.replay_read(psn, va, len, rkey).map(|p| ReadReplay {
                psn: rel(p.psn),
                ..p
            })
        ),
        std::format!("{:?}", r.replay_atomic(psn)),
        std::format!("{:?}", r.replay_ack(psn, false)),
        std::format!("{:?}", r.replay_ack(psn, true)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Only PSN differences matter: the same requests recorded from another base PSN (mod
    /// 2^24) give the same answers to the same duplicates.
    #[test]
    fn answers_are_invariant_under_psn_shift(
        cap_log in 0u32..8,
        recs in proptest::collection::vec((rec(), 0u32..4), 0..20),
        base in 0..=PSN_MASK,
        k in 0..=PSN_MASK,
        off in 0u32..120,
        va in 0u64..0x20000,
        len in 0u32..6 * MTU,
        rkey_i in 0u32..20,
    ) {
        let cap = 1usize << cap_log;
        let (mut a, mut b) = (ring(cap), ring(cap));
        fill(&mut a, base, &recs);
        fill(&mut b, psn_add(base, k), &recs);
        let rkey = RKEY + rkey_i;
        prop_assert_eq!(
            answers(&a, base, psn_add(base, off), va, len, rkey),
            answers(&b, psn_add(base, k), psn_add(base, k + off), va, len, rkey)
        );
    }

    /// The ring answers for exactly the last `max_dest_rd_atomic` requests recorded: each of
    /// those at every PSN of its responses, with what it recorded; the older ones not at all.
    #[test]
    fn capacity_is_max_dest_rd_atomic_and_the_oldest_go_first(
        cap_log in 0u32..8,
        recs in proptest::collection::vec((rec(), 0u32..4), 0..300),
        base in 0..=PSN_MASK,
    ) {
        let cap = 1usize << cap_log;
        let mut r = ring(cap);
        let firsts = fill(&mut r, base, &recs);
        prop_assert_eq!(r.capacity(), cap);
        prop_assert_eq!(r.len(), recs.len().min(cap));
        let kept = recs.len().saturating_sub(cap);
        for (i, (&(rec, _), &first)) in recs.iter().zip(&firsts).enumerate() {
            let va = 0x1000 * (i as u64 + 1);
            let rkey = RKEY + i as u32;
            let live = i >= kept;
            match rec {
                Rec::Read { len } => {
                    let n = read_packets(len, MTU);
                    for j in 0..n {
                        let at = u64::from(j * MTU);
                        let rest = len.saturating_sub(j * MTU);
                        let got = r.replay_read(psn_add(first, j), va + at, rest, rkey);
                        if live {
                            prop_assert_eq!(got, Ok(ReadReplay {
                                psn: psn_add(first, j),
                                va: va + at,
                                len: rest,
                                rkey,
                                from_start: j == 0,
                            }));
                        } else {
                            prop_assert_eq!(got, Err(DupDrop::NotFound));
                        }
                    }
                }
                Rec::Atomic { orig } => {
                    let want = if live { Ok(orig) } else { Err(DupDrop::NotFound) };
                    prop_assert_eq!(r.replay_atomic(first), want);
                }
                Rec::AtomicWrite | Rec::Flush => {
                    let flush = matches!(rec, Rec::Flush);
                    let want = if live { Ok(()) } else { Err(DupDrop::NotFound) };
                    prop_assert_eq!(r.replay_ack(first, flush), want);
                }
            }
        }
        // Newest first is the order of recording, backwards.
        let order: Vec<u32> = r.newest_first().map(|x| x.first_psn).collect();
        let want: Vec<u32> = firsts[kept..].iter().rev().copied().collect();
        prop_assert_eq!(order, want);
    }
}
