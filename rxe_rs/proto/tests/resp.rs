// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The responder's decisions (`proto::resp`) against the cases of C `rxe_resp.c` and IBA
//! 9.8.3, and PSN wraparound.

use proptest::prelude::*;

use crate::proto::mw::{ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use crate::proto::opcode::{self, opcode_info, Mask};
use crate::proto::psn::{psn_add, psn_diff, PSN_MASK};
use crate::proto::resp::{
    abandon_recv, check_length, check_op_seq, check_op_valid, check_psn_rc, check_psn_uc,
    check_write_length, duplicate, has_rd_atomic_resource, reply, required_access, ud_fits,
    Abandon, Duplicate, OpSeq, RcPsn, Reply, UcPsn, ACCESS_FLUSH_GLOBAL, ACCESS_FLUSH_PERSISTENT,
    MAX_RETH_LEN, UD_GRH_LEN,
};
use crate::proto::wqe::{IB_WC_REM_ACCESS_ERR, IB_WC_REM_INV_REQ_ERR};

fn mask(op: u8) -> Mask {
    opcode_info(op).unwrap().mask
}

// --- check_psn -------------------------------------------------------------------------------

#[test]
fn rc_psn_expected_behind_and_ahead() {
    // C check_psn, RC: diff == 0 → go on; diff < 0 → RESPST_DUPLICATE_REQUEST.
    assert_eq!(check_psn_rc(500, 500, false), RcPsn::Expected);
    assert_eq!(check_psn_rc(500, 500, true), RcPsn::Expected);
    assert_eq!(check_psn_rc(499, 500, false), RcPsn::Duplicate);
    assert_eq!(check_psn_rc(499, 500, true), RcPsn::Duplicate);
    // Across the wrap: PSN_MASK is one behind 0, 1 one ahead of 0.
    assert_eq!(check_psn_rc(PSN_MASK, 0, false), RcPsn::Duplicate);
    assert_eq!(
        check_psn_rc(0, PSN_MASK, false),
        RcPsn::OutOfSequence { nak: true }
    );
}

#[test]
fn rc_psn_ahead_is_naked_once() {
    // C check_psn, RC: diff > 0 → RESPST_ERR_PSN_OUT_OF_SEQ the first time (NAK with the
    // expected PSN), then RESPST_CLEANUP while sent_psn_nak is set.
    assert_eq!(
        check_psn_rc(503, 500, false),
        RcPsn::OutOfSequence { nak: true }
    );
    assert_eq!(
        check_psn_rc(504, 500, true),
        RcPsn::OutOfSequence { nak: false }
    );
}

#[test]
fn rc_psn_nak_once_then_again_after_recovery() {
    // A sequence of arrivals with loss, as the engine threads `sent_psn_nak`: one NAK per gap.
    let mut sent_nak = false;
    let mut naks = 0;
    let expected = 10;
    for psn in [12, 13, 14, 10] {
        match check_psn_rc(psn, expected, sent_nak) {
            RcPsn::OutOfSequence { nak } => {
                if nak {
                    naks += 1;
                    sent_nak = true;
                }
            }
            RcPsn::Expected => sent_nak = false,
            RcPsn::Duplicate => panic!("no duplicate here"),
        }
    }
    assert_eq!(naks, 1);
    assert!(!sent_nak, "the packet in sequence clears it");
    assert_eq!(
        check_psn_rc(13, 11, sent_nak),
        RcPsn::OutOfSequence { nak: true }
    );
}

#[test]
fn uc_psn_gap_drops_until_the_next_first() {
    // C check_psn, UC: in sequence → go on; a gap or drop_msg: a START packet restarts, any
    // other packet sets drop_msg and is dropped.
    assert_eq!(check_psn_uc(7, 7, false, false), UcPsn::InSequence);
    assert_eq!(check_psn_uc(9, 7, false, false), UcPsn::Drop);
    assert_eq!(check_psn_uc(10, 7, true, false), UcPsn::Drop);
    assert_eq!(check_psn_uc(7, 7, true, false), UcPsn::Drop);
    assert_eq!(check_psn_uc(11, 7, true, true), UcPsn::Restart);
    assert_eq!(check_psn_uc(7, 7, true, true), UcPsn::Restart);
    // UC has no duplicates: a packet behind is a gap too.
    assert_eq!(check_psn_uc(5, 7, false, true), UcPsn::Restart);
}

#[test]
fn uc_abandoned_message_completes_an_srq_wqe_and_reuses_an_rq_wqe() {
    // C do_class_d1e_error (a UC FIRST after a gap while SEND_FIRST/MIDDLE was in progress:
    // check_psn → CHK_OP_SEQ → RESPST_ERR_MISSING_OPCODE_LAST_D1E): with an SRQ (class E) the
    // WQE completes with IB_WC_REM_INV_REQ_ERR; without (class D1) its DMA state is reset
    // and the RQ WQE serves the next message.
    assert_eq!(
        abandon_recv(true, IB_WC_REM_INV_REQ_ERR),
        Abandon::Complete(IB_WC_REM_INV_REQ_ERR)
    );
    assert_eq!(abandon_recv(false, IB_WC_REM_INV_REQ_ERR), Abandon::Reuse);
    // RESPST_ERR_RKEY_VIOLATION on UC: SRQ → IB_WC_REM_ACCESS_ERR, RQ → cleanup (reused).
    assert_eq!(
        abandon_recv(true, IB_WC_REM_ACCESS_ERR),
        Abandon::Complete(IB_WC_REM_ACCESS_ERR)
    );
    assert_eq!(abandon_recv(false, IB_WC_REM_ACCESS_ERR), Abandon::Reuse);
    // The gap itself: a UC FIRST after lost packets restarts (and the engine abandons the
    // receive WQE of the message in progress as above).
    assert_eq!(check_psn_uc(12, 9, true, true), UcPsn::Restart);
    assert_eq!(
        check_op_seq(Some(opcode::UC_SEND_MIDDLE), opcode::UC_SEND_FIRST),
        OpSeq::MissingLast
    );
}

// --- check_op_seq (IBA 9.8.3) ----------------------------------------------------------------

#[test]
fn op_seq_inside_a_send() {
    use opcode::*;
    // C check_op_seq, RC: after SEND FIRST / MIDDLE only SEND MIDDLE / LAST* (C9-95).
    for prev in [RC_SEND_FIRST, RC_SEND_MIDDLE] {
        for op in [
            RC_SEND_MIDDLE,
            RC_SEND_LAST,
            RC_SEND_LAST_WITH_IMMEDIATE,
            RC_SEND_LAST_WITH_INVALIDATE,
        ] {
            assert_eq!(check_op_seq(Some(prev), op), OpSeq::Ok);
        }
        for op in [
            RC_SEND_FIRST,
            RC_SEND_ONLY,
            RC_RDMA_WRITE_MIDDLE,
            RC_RDMA_WRITE_LAST,
            RC_RDMA_READ_REQUEST,
            RC_COMPARE_SWAP,
        ] {
            assert_eq!(
                check_op_seq(Some(prev), op),
                OpSeq::MissingLast,
                "{prev} {op}"
            );
        }
    }
}

#[test]
fn op_seq_inside_a_write() {
    use opcode::*;
    // C check_op_seq, RC: after WRITE FIRST / MIDDLE only WRITE MIDDLE / LAST*.
    for prev in [RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_MIDDLE] {
        for op in [
            RC_RDMA_WRITE_MIDDLE,
            RC_RDMA_WRITE_LAST,
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        ] {
            assert_eq!(check_op_seq(Some(prev), op), OpSeq::Ok);
        }
        for op in [
            RC_RDMA_WRITE_FIRST,
            RC_RDMA_WRITE_ONLY,
            RC_SEND_MIDDLE,
            RC_SEND_LAST,
            RC_SEND_ONLY,
            RC_FETCH_ADD,
        ] {
            assert_eq!(
                check_op_seq(Some(prev), op),
                OpSeq::MissingLast,
                "{prev} {op}"
            );
        }
    }
}

#[test]
fn op_seq_between_messages() {
    use opcode::*;
    // C check_op_seq, RC default: no MIDDLE or LAST without a FIRST (C9-94).
    for op in [
        RC_SEND_MIDDLE,
        RC_SEND_LAST,
        RC_SEND_LAST_WITH_IMMEDIATE,
        RC_SEND_LAST_WITH_INVALIDATE,
        RC_RDMA_WRITE_MIDDLE,
        RC_RDMA_WRITE_LAST,
        RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    ] {
        assert_eq!(check_op_seq(None, op), OpSeq::MissingFirst);
    }
    for op in [
        RC_SEND_FIRST,
        RC_SEND_ONLY,
        RC_SEND_ONLY_WITH_IMMEDIATE,
        RC_SEND_ONLY_WITH_INVALIDATE,
        RC_RDMA_WRITE_FIRST,
        RC_RDMA_WRITE_ONLY,
        RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
        RC_RDMA_READ_REQUEST,
        RC_COMPARE_SWAP,
        RC_FETCH_ADD,
        RC_ATOMIC_WRITE,
        RC_FLUSH,
    ] {
        assert_eq!(check_op_seq(None, op), OpSeq::Ok);
    }
}

#[test]
fn op_seq_uc_matches_rc() {
    use opcode::*;
    // C check_op_seq, UC: the same rules on UC opcodes (violations drop the message, D1E).
    assert_eq!(check_op_seq(Some(UC_SEND_FIRST), UC_SEND_LAST), OpSeq::Ok);
    assert_eq!(
        check_op_seq(Some(UC_SEND_MIDDLE), UC_SEND_FIRST),
        OpSeq::MissingLast
    );
    assert_eq!(
        check_op_seq(Some(UC_RDMA_WRITE_FIRST), UC_RDMA_WRITE_LAST_WITH_IMMEDIATE),
        OpSeq::Ok
    );
    assert_eq!(
        check_op_seq(Some(UC_RDMA_WRITE_MIDDLE), UC_SEND_ONLY),
        OpSeq::MissingLast
    );
    assert_eq!(
        check_op_seq(None, UC_RDMA_WRITE_MIDDLE),
        OpSeq::MissingFirst
    );
    assert_eq!(check_op_seq(None, UC_SEND_ONLY_WITH_IMMEDIATE), OpSeq::Ok);
}

// --- check_op_valid --------------------------------------------------------------------------

#[test]
fn op_valid_checks_the_qp_rights() {
    use opcode::*;
    // C check_qp_attr_access.
    assert_eq!(required_access(mask(RC_SEND_ONLY), 0), 0);
    assert_eq!(
        required_access(mask(RC_RDMA_READ_REQUEST), 0),
        ACCESS_REMOTE_READ
    );
    assert_eq!(
        required_access(mask(RC_RDMA_WRITE_FIRST), 0),
        ACCESS_REMOTE_WRITE
    );
    assert_eq!(
        required_access(mask(RC_RDMA_WRITE_MIDDLE), 0),
        ACCESS_REMOTE_WRITE
    );
    assert_eq!(
        required_access(mask(RC_ATOMIC_WRITE), 0),
        ACCESS_REMOTE_WRITE
    );
    assert_eq!(required_access(mask(RC_FETCH_ADD), 0), ACCESS_REMOTE_ATOMIC);
    assert_eq!(
        required_access(mask(RC_COMPARE_SWAP), 0),
        ACCESS_REMOTE_ATOMIC
    );
    assert_eq!(required_access(mask(RC_FLUSH), 1), ACCESS_FLUSH_GLOBAL);
    assert_eq!(required_access(mask(RC_FLUSH), 2), ACCESS_FLUSH_PERSISTENT);
    assert_eq!(
        required_access(mask(RC_FLUSH), 3),
        ACCESS_FLUSH_GLOBAL | ACCESS_FLUSH_PERSISTENT
    );

    assert!(check_op_valid(0, mask(RC_SEND_ONLY), 0));
    assert!(!check_op_valid(
        ACCESS_REMOTE_WRITE,
        mask(RC_RDMA_READ_REQUEST),
        0
    ));
    assert!(check_op_valid(
        ACCESS_REMOTE_READ,
        mask(RC_RDMA_READ_REQUEST),
        0
    ));
    assert!(!check_op_valid(
        ACCESS_REMOTE_READ,
        mask(RC_RDMA_WRITE_ONLY),
        0
    ));
    assert!(!check_op_valid(ACCESS_REMOTE_WRITE, mask(RC_FETCH_ADD), 0));
    assert!(check_op_valid(ACCESS_FLUSH_GLOBAL, mask(RC_FLUSH), 1));
    assert!(!check_op_valid(ACCESS_FLUSH_GLOBAL, mask(RC_FLUSH), 3));
    // UC write without REMOTE_WRITE (C: drop_msg).
    assert!(!check_op_valid(0, mask(UC_RDMA_WRITE_FIRST), 0));
    assert!(check_op_valid(0, mask(UC_SEND_FIRST), 0));
}

// --- check_resource --------------------------------------------------------------------------

#[test]
fn reads_and_atomics_need_max_dest_rd_atomic() {
    use opcode::*;
    // C check_resource: RXE_READ_OR_ATOMIC_MASK | RXE_ATOMIC_WRITE_MASK with
    // max_dest_rd_atomic == 0 → RESPST_ERR_TOO_MANY_RDMA_ATM_REQ (class C).
    for op in [
        RC_RDMA_READ_REQUEST,
        RC_COMPARE_SWAP,
        RC_FETCH_ADD,
        RC_ATOMIC_WRITE,
    ] {
        assert!(!has_rd_atomic_resource(mask(op), 0), "{op:#x}");
        assert!(has_rd_atomic_resource(mask(op), 1), "{op:#x}");
        assert!(has_rd_atomic_resource(mask(op), 128), "{op:#x}");
    }
    // Everything else needs none (FLUSH included, as C).
    for op in [
        RC_SEND_ONLY,
        RC_RDMA_WRITE_FIRST,
        RC_FLUSH,
        UC_SEND_ONLY,
        UD_SEND_ONLY,
    ] {
        assert!(has_rd_atomic_resource(mask(op), 0), "{op:#x}");
    }
}

// --- rxe_resp_check_length, check_rkey's write lengths ---------------------------------------

#[test]
fn check_length_is_as_c_rxe_resp_check_length() {
    use opcode::*;
    let mtu = 1024;
    // ONLY (START | END): "only packet too long" above the MTU.
    for op in [
        RC_SEND_ONLY,
        RC_RDMA_WRITE_ONLY,
        UC_SEND_ONLY,
        RC_ATOMIC_WRITE,
    ] {
        assert!(check_length(mask(op), 0, mtu, None));
        assert!(check_length(mask(op), mtu, mtu, None));
        assert!(!check_length(mask(op), mtu + 1, mtu, None), "{op:#x}");
    }
    // FIRST or MIDDLE: "first or middle packet not mtu".
    for op in [
        RC_SEND_FIRST,
        RC_SEND_MIDDLE,
        RC_RDMA_WRITE_FIRST,
        RC_RDMA_WRITE_MIDDLE,
        UC_SEND_FIRST,
        UC_RDMA_WRITE_MIDDLE,
    ] {
        assert!(check_length(mask(op), mtu, mtu, None));
        assert!(!check_length(mask(op), mtu - 4, mtu, None), "{op:#x}");
        assert!(!check_length(mask(op), mtu + 4, mtu, None), "{op:#x}");
        assert!(!check_length(mask(op), 0, mtu, None), "{op:#x}");
    }
    // LAST: "last packet zero or too long".
    for op in [
        RC_SEND_LAST,
        RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        UC_SEND_LAST,
    ] {
        assert!(check_length(mask(op), 1, mtu, None));
        assert!(check_length(mask(op), mtu, mtu, None));
        assert!(!check_length(mask(op), 0, mtu, None), "{op:#x}");
        assert!(!check_length(mask(op), mtu + 1, mtu, None), "{op:#x}");
    }
    // No payload mask (READ request, FLUSH, atomics): sizes are not checked here.
    assert!(check_length(
        mask(RC_RDMA_READ_REQUEST),
        0,
        mtu,
        Some(1 << 20)
    ));
    // RETH: "dma length too long" (C9-94) above 2^31.
    assert!(check_length(
        mask(RC_RDMA_READ_REQUEST),
        0,
        mtu,
        Some(MAX_RETH_LEN)
    ));
    assert!(!check_length(
        mask(RC_RDMA_READ_REQUEST),
        0,
        mtu,
        Some(MAX_RETH_LEN + 1)
    ));
    assert!(!check_length(
        mask(RC_RDMA_WRITE_FIRST),
        mtu,
        mtu,
        Some(u32::MAX)
    ));
}

#[test]
fn write_lengths_are_as_c_check_rkey() {
    let mtu = 256;
    // resid > mtu: pktlen == mtu, no pad.
    assert!(check_write_length(1000, 256, 0, mtu));
    assert!(!check_write_length(1000, 252, 0, mtu));
    assert!(!check_write_length(1000, 256, 1, mtu));
    // resid <= mtu: pktlen == resid, pad == (-resid) & 3.
    assert!(check_write_length(200, 200, 0, mtu));
    assert!(check_write_length(201, 201, 3, mtu));
    assert!(!check_write_length(201, 201, 0, mtu));
    assert!(
        !check_write_length(200, 100, 0, mtu),
        "a LAST short of the RETH length"
    );
    assert!(!check_write_length(200, 256, 0, mtu));
    // Zero-length write: no payload.
    assert!(check_write_length(0, 0, 0, mtu));
    assert!(!check_write_length(0, 4, 0, mtu));
}

proptest! {
    /// A message segmented by the requester (FIRST/MIDDLE full MTUs, a LAST of the rest)
    /// passes both checks packet by packet.
    #[test]
    fn segmented_writes_pass_the_length_checks(len in 0u32..20_000, mtu_log in 8u32..13) {
        use opcode::*;
        let mtu = 1 << mtu_log;
        let mut resid = len;
        let mut first = true;
        loop {
            let payload = resid.min(mtu);
            let last = resid <= mtu;
            let op = match (first, last) {
                (true, true) => RC_RDMA_WRITE_ONLY,
                (true, false) => RC_RDMA_WRITE_FIRST,
                (false, false) => RC_RDMA_WRITE_MIDDLE,
                (false, true) => RC_RDMA_WRITE_LAST,
            };
            let reth = first.then_some(len);
            prop_assert!(check_length(mask(op), payload, mtu, reth));
            let pad = (payload.wrapping_neg() & 3) as u8;
            prop_assert!(check_write_length(resid, payload, pad, mtu));
            resid -= payload;
            first = false;
            if last {
                break;
            }
        }
    }
}

// --- duplicate_request -----------------------------------------------------------------------

#[test]
fn duplicates_are_reacked_or_replayed() {
    use opcode::*;
    // C duplicate_request: SEND / WRITE → ACK with the PSN before the expected one (C9-105);
    // READ → replay the responses; atomics → replay the recorded result.
    assert_eq!(
        duplicate(mask(RC_SEND_ONLY), 100),
        Duplicate::Ack { psn: 99 }
    );
    assert_eq!(
        duplicate(mask(RC_RDMA_WRITE_MIDDLE), 0),
        Duplicate::Ack { psn: PSN_MASK }
    );
    assert_eq!(
        duplicate(mask(RC_RDMA_READ_REQUEST), 100),
        Duplicate::ReplayRead
    );
    assert_eq!(duplicate(mask(RC_FETCH_ADD), 100), Duplicate::ReplayAtomic);
    assert_eq!(
        duplicate(mask(RC_COMPARE_SWAP), 100),
        Duplicate::ReplayAtomic
    );
}

#[test]
fn duplicate_flush_and_atomic_write_are_acknowledged_from_their_resource() {
    use opcode::*;
    // C duplicate_request: RXE_FLUSH_MASK → find_resource, replay → process_flush (replay) →
    // acknowledge → send_read_response_ack; the final `else` (ATOMIC WRITE) → find_resource,
    // replay → atomic_write_reply (replay) → the same. Not found: class D, dropped.
    assert_eq!(
        duplicate(mask(RC_FLUSH), 100),
        Duplicate::ReplayReadResponseAck
    );
    assert_eq!(
        duplicate(mask(RC_ATOMIC_WRITE), 100),
        Duplicate::ReplayReadResponseAck
    );
}

// --- acknowledge -----------------------------------------------------------------------------

#[test]
fn reply_is_as_c_acknowledge() {
    use opcode::*;
    // C acknowledge: RXE_ATOMIC_MASK → send_atomic_ack; RXE_FLUSH_MASK | RXE_ATOMIC_WRITE_MASK
    // → send_read_response_ack (a zero-length READ RESPONSE ONLY), with or without AckReq;
    // else send_ack if bth_ack.
    for ack_req in [false, true] {
        assert_eq!(reply(mask(RC_FLUSH), ack_req), Reply::ReadResponseAck);
        assert_eq!(
            reply(mask(RC_ATOMIC_WRITE), ack_req),
            Reply::ReadResponseAck
        );
        assert_eq!(reply(mask(RC_FETCH_ADD), ack_req), Reply::AtomicAck);
        assert_eq!(reply(mask(RC_COMPARE_SWAP), ack_req), Reply::AtomicAck);
    }
    for op in [
        RC_SEND_ONLY,
        RC_SEND_LAST,
        RC_RDMA_WRITE_ONLY,
        RC_RDMA_WRITE_MIDDLE,
    ] {
        assert_eq!(reply(mask(op), true), Reply::Ack);
        assert_eq!(reply(mask(op), false), Reply::None);
    }
}

// --- properties ------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Only PSN differences matter.
    #[test]
    fn psn_checks_are_invariant_under_shift(
        psn in 0..=PSN_MASK,
        expected in 0..=PSN_MASK,
        flag in any::<bool>(),
        start in any::<bool>(),
        k in 0..=PSN_MASK,
    ) {
        let (p, e) = (psn_add(psn, k), psn_add(expected, k));
        prop_assert_eq!(check_psn_rc(p, e, flag), check_psn_rc(psn, expected, flag));
        prop_assert_eq!(check_psn_uc(p, e, flag, start), check_psn_uc(psn, expected, flag, start));
        let op = opcode::RC_SEND_ONLY;
        let shifted = match duplicate(mask(op), e) {
            Duplicate::Ack { psn } => psn,
            other => return Err(TestCaseError::fail(std::format!("{other:?}"))),
        };
        prop_assert_eq!(shifted, psn_add(expected, k + PSN_MASK));
    }

    /// RC: behind is a duplicate, ahead out of sequence, by the sign of the 24-bit distance.
    #[test]
    fn rc_psn_classifies_by_distance(
        expected in 0..=PSN_MASK,
        d in -(1i32 << 23)..(1i32 << 23),
        flag in any::<bool>(),
    ) {
        let psn = psn_add(expected, d as u32);
        prop_assert_eq!(psn_diff(psn, expected), d);
        let want = if d > 0 {
            RcPsn::OutOfSequence { nak: !flag }
        } else if d < 0 {
            RcPsn::Duplicate
        } else {
            RcPsn::Expected
        };
        prop_assert_eq!(check_psn_rc(psn, expected, flag), want);
    }

    /// Every opcode sequence a requester sends (FIRST MIDDLE* LAST, or ONLY, per message)
    /// passes check_op_seq, and any MIDDLE/LAST spliced in between messages is refused.
    #[test]
    fn well_formed_messages_pass_op_seq(
        msgs in proptest::collection::vec((0u8..4, 0u32..5), 1..20),
        uc in any::<bool>(),
    ) {
        use opcode::*;
        let class = if uc { 0x20 } else { 0 };
        let mut prev: Option<u8> = None;
        for (kind, middles) in msgs {
            let ops: std::vec::Vec<u8> = match kind {
                0 => [RC_SEND_ONLY].to_vec(),
                1 => core::iter::once(RC_SEND_FIRST)
                    .chain(core::iter::repeat_n(RC_SEND_MIDDLE, middles as usize))
                    .chain(core::iter::once(RC_SEND_LAST_WITH_IMMEDIATE))
                    .collect(),
                2 => [RC_RDMA_WRITE_ONLY].to_vec(),
                _ => core::iter::once(RC_RDMA_WRITE_FIRST)
                    .chain(core::iter::repeat_n(RC_RDMA_WRITE_MIDDLE, middles as usize))
                    .chain(core::iter::once(RC_RDMA_WRITE_LAST))
                    .collect(),
            };
            // Between messages a LAST is refused (C9-94).
            prop_assert_eq!(check_op_seq(prev, class | RC_SEND_LAST), OpSeq::MissingFirst);
            prop_assert_eq!(check_op_seq(prev, class | RC_RDMA_WRITE_MIDDLE), OpSeq::MissingFirst);
            for op in ops {
                let op = class | op;
                prop_assert_eq!(check_op_seq(prev, op), OpSeq::Ok);
                // Inside a message a new ONLY is refused (C9-95).
                if prev.is_some() {
                    prop_assert_eq!(check_op_seq(prev, class | RC_SEND_ONLY), OpSeq::MissingLast);
                }
                let end = mask(op).contains(Mask::END);
                prev = if end { None } else { Some(op) };
            }
            prop_assert_eq!(prev, None);
        }
    }
}

/// C `rxe_resp_check_length`, UD/GSI: payload + GRH (40 B) must fit the receive buffer; the
/// boundary is inclusive, and no sum overflows.
#[test]
fn ud_message_must_fit_grh_and_payload_in_the_receive_buffer() {
    assert_eq!(UD_GRH_LEN, 40);
    assert!(ud_fits(0, 40));
    assert!(!ud_fits(0, 39));
    assert!(ud_fits(4056, 4096));
    assert!(!ud_fits(4057, 4096));
    assert!(!ud_fits(u32::MAX, u32::MAX));
    assert!(ud_fits(u32::MAX - 40, u32::MAX));
}

#[test]
fn receive_buffer_faults_nak_remote_operational_error() {
    use crate::proto::hdr::NakCode;
    use crate::proto::resp::recv_failure_nak;
    use crate::proto::wqe::{IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR};
    // A bad lkey or an unusable buffer in the receive WQE: the responder's fault.
    assert_eq!(
        recv_failure_nak(IB_WC_LOC_PROT_ERR),
        NakCode::RemoteOperationalError
    );
    assert_eq!(
        recv_failure_nak(IB_WC_LOC_QP_OP_ERR),
        NakCode::RemoteOperationalError
    );
    // A message longer than the buffer: the requester's.
    assert_eq!(recv_failure_nak(IB_WC_LOC_LEN_ERR), NakCode::InvalidRequest);
    // And the requester completes the NAK with REM_OP_ERR.
    assert_eq!(
        crate::proto::comp::nak_status(NakCode::RemoteOperationalError),
        Some(crate::proto::wqe::IB_WC_REM_OP_ERR)
    );
}
