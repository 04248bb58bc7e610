// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The completer's decisions (`proto::comp`) against the cases of C `rxe_comp.c`, PSN
//! wraparound, and a model check of the go-back-N rewind.

use std::vec::Vec;

use proptest::prelude::*;

use crate::proto::comp::{
    acks_may_wait, check_response, completes_unseen, nak_status, outstanding, reached,
    resume_opcode, retransmit_usecs, retry, rewind_wqe, rnr_probe_window, spend_retry, AckWait,
    Check, HeadWqe, Resend, Response, Retry, RewindStep, RewindWqe, WqeState, RETRY_INFINITE,
};
use crate::proto::hdr::{NakCode, Syndrome};
use crate::proto::opcode::{self, opcode_info, Mask};
use crate::proto::psn::{psn_add, psn_diff, PSN_MASK};
use crate::proto::qp_state::QpType;
use crate::proto::resp::{check_op_seq, OpSeq};
use crate::proto::wqe::{
    next_opcode, wr_opcode_mask, WrMask, IB_WC_BAD_RESP_ERR, IB_WC_REM_ACCESS_ERR,
    IB_WC_REM_INV_REQ_ERR, IB_WC_REM_OP_ERR, IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD,
    IB_WR_ATOMIC_WRITE, IB_WR_FLUSH, IB_WR_LOCAL_INV, IB_WR_RDMA_READ, IB_WR_RDMA_WRITE,
    IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_REG_MR, IB_WR_SEND, IB_WR_SEND_WITH_IMM, IB_WR_SEND_WITH_INV,
};

fn head(wr_opcode: u32, state: WqeState, sent: bool, last_psn: u32) -> HeadWqe {
    HeadWqe {
        state,
        wr_opcode,
        mask: wr_opcode_mask(wr_opcode, QpType::Rc).unwrap(),
        sent,
        last_psn,
    }
}

/// A SEND whose packets are all out, last PSN `last_psn`.
fn send(last_psn: u32) -> HeadWqe {
    head(IB_WR_SEND, WqeState::Pending, true, last_psn)
}

fn resp(op: u8, psn: u32, syndrome: Option<Syndrome>) -> Response {
    Response {
        psn,
        opcode: op,
        mask: opcode_info(op).unwrap().mask,
        syndrome,
        has_atmack: op == opcode::RC_ATOMIC_ACKNOWLEDGE,
    }
}

fn ack(psn: u32) -> Response {
    resp(opcode::RC_ACKNOWLEDGE, psn, Some(Syndrome::ACK_UNLIMITED))
}

fn nak(psn: u32, code: NakCode) -> Response {
    resp(opcode::RC_ACKNOWLEDGE, psn, Some(Syndrome::Nak(code)))
}

// --- check_response: C check_psn -------------------------------------------------------------

#[test]
fn ack_behind_comp_psn_is_a_duplicate_and_ignored() {
    // C check_psn: psn_compare(pkt->psn, comp.psn) < 0 and not the WQE's last PSN → DONE.
    assert_eq!(check_response(100, &send(110), &ack(99)), Check::Drop);
    assert_eq!(check_response(100, &send(110), &ack(50)), Check::Drop);
    // Also across the wrap: 0xfffffe is two behind 1.
    assert_eq!(check_response(1, &send(5), &ack(0xff_fffe)), Check::Drop);
}

#[test]
fn ack_past_the_last_psn_completes_the_wqe_implicitly() {
    // C check_psn: psn after wqe->last_psn, WQE pending, not read/atomic → COMP_WQE.
    assert_eq!(
        check_response(100, &send(103), &ack(105)),
        Check::CompleteAndRetry
    );
    // Across the wrap.
    assert_eq!(
        check_response(PSN_MASK, &send(PSN_MASK), &ack(2)),
        Check::CompleteAndRetry
    );
}

#[test]
fn response_past_a_read_or_atomic_retries() {
    // C check_psn: past the last PSN of a read or atomic → ERROR_RETRY (its response was lost).
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 103);
    assert_eq!(check_response(100, &read, &ack(104)), Check::Retry);
    let atomic = head(IB_WR_ATOMIC_FETCH_AND_ADD, WqeState::Pending, true, 100);
    assert_eq!(check_response(100, &atomic, &ack(101)), Check::Retry);
}

#[test]
fn response_past_a_wqe_not_fully_sent_does_not_complete_it() {
    // C check_psn: `diff > 0` but the WQE is still processing → not complete. Here the
    // `last_psn` of a WQE not yet sent whole is not final; the ACK moves comp.psn on.
    let w = head(IB_WR_SEND, WqeState::Processing, false, 101);
    assert_eq!(
        check_response(100, &w, &ack(103)),
        Check::Ack {
            comp_psn: 104,
            complete: false
        }
    );
}

// --- check_response: C check_ack, ACKs -------------------------------------------------------

#[test]
fn ack_of_the_last_psn_completes_a_send() {
    // C: COMPST_WRITE_SEND with wqe pending and last_psn == psn → COMP_ACK.
    assert_eq!(
        check_response(100, &send(103), &ack(103)),
        Check::Ack {
            comp_psn: 104,
            complete: true
        }
    );
}

#[test]
fn ack_inside_a_message_moves_comp_psn_only() {
    // C: COMPST_WRITE_SEND → UPDATE_COMP: comp.psn = psn + 1.
    assert_eq!(
        check_response(100, &send(110), &ack(104)),
        Check::Ack {
            comp_psn: 105,
            complete: false
        }
    );
    // At the wrap, psn + 1 is 0.
    assert_eq!(
        check_response(PSN_MASK - 3, &send(2), &ack(PSN_MASK)),
        Check::Ack {
            comp_psn: 0,
            complete: false
        }
    );
}

#[test]
fn atomic_acknowledge_completes_only_its_atomic() {
    // C check_ack: ATOMIC_ACKNOWLEDGE → COMPST_ATOMIC for CMP_AND_SWP / FETCH_AND_ADD.
    let atomic = head(IB_WR_ATOMIC_CMP_AND_SWP, WqeState::Pending, true, 100);
    let aack = resp(
        opcode::RC_ATOMIC_ACKNOWLEDGE,
        100,
        Some(Syndrome::ACK_UNLIMITED),
    );
    assert_eq!(
        check_response(100, &atomic, &aack),
        Check::Atomic { comp_psn: 101 }
    );
    // For a WQE that is no atomic: a bad response (C: COMPST_ERROR); another PSN: ignored.
    assert_eq!(
        check_response(100, &send(100), &aack),
        Check::Error(IB_WC_BAD_RESP_ERR)
    );
    let later = head(IB_WR_ATOMIC_CMP_AND_SWP, WqeState::Pending, false, 101);
    assert_eq!(check_response(100, &later, &aack), Check::Drop);
    // Without its AtomicAckETH: ignored.
    let bare = Response {
        has_atmack: false,
        ..aack
    };
    assert_eq!(check_response(100, &atomic, &bare), Check::Drop);
}

// --- check_response: read responses ----------------------------------------------------------

#[test]
fn read_responses_in_order_fill_the_read() {
    // C check_ack: READ_RESPONSE_* → COMPST_READ; the END one completes (do_read).
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 102);
    let first = resp(
        opcode::RC_RDMA_READ_RESPONSE_FIRST,
        100,
        Some(Syndrome::ACK_UNLIMITED),
    );
    let middle = resp(opcode::RC_RDMA_READ_RESPONSE_MIDDLE, 101, None);
    let last = resp(
        opcode::RC_RDMA_READ_RESPONSE_LAST,
        102,
        Some(Syndrome::ACK_UNLIMITED),
    );
    assert_eq!(
        check_response(100, &read, &first),
        Check::Read {
            comp_psn: 101,
            end: false
        }
    );
    assert_eq!(
        check_response(101, &read, &middle),
        Check::Read {
            comp_psn: 102,
            end: false
        }
    );
    assert_eq!(
        check_response(102, &read, &last),
        Check::Read {
            comp_psn: 103,
            end: true
        }
    );
}

#[test]
fn read_response_ahead_retries_and_one_behind_is_dropped() {
    // A lost read response: the next one is ahead of comp.psn. Deliberate difference: C drops
    // it (check_psn: diff > 0 on a read → DONE) and waits for the timer; we retry at once
    // (once per lack of progress, see `retry`).
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 103);
    let middle = resp(opcode::RC_RDMA_READ_RESPONSE_MIDDLE, 102, None);
    assert_eq!(check_response(101, &read, &middle), Check::Retry);
    assert_eq!(check_response(103, &read, &middle), Check::Drop);
}

#[test]
fn read_response_for_a_wqe_that_is_not_a_read_is_a_bad_response() {
    // IBA: an unexpected opcode is a bad response (C: IB_WC_FATAL_ERR).
    let only = resp(
        opcode::RC_RDMA_READ_RESPONSE_ONLY,
        100,
        Some(Syndrome::ACK_UNLIMITED),
    );
    assert_eq!(
        check_response(100, &send(100), &only),
        Check::Error(IB_WC_BAD_RESP_ERR)
    );
}

#[test]
fn plain_ack_never_completes_a_read_or_an_atomic() {
    // A plain ACK where a read's responses are due (a responder re-acknowledging a duplicate
    // with its last PSN executed, C9-105, after the responses were lost): retried, as past it.
    // Deliberate difference: C completes the READ as a success without its data.
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 103);
    assert_eq!(check_response(100, &read, &ack(100)), Check::Retry);
    assert_eq!(check_response(100, &read, &ack(102)), Check::Retry);
    let atomic = head(IB_WR_ATOMIC_FETCH_AND_ADD, WqeState::Pending, true, 100);
    assert_eq!(check_response(100, &atomic, &ack(100)), Check::Retry);
    // Behind it: old, dropped.
    assert_eq!(check_response(100, &read, &ack(99)), Check::Drop);
}

#[test]
fn flush_and_atomic_write_complete_on_a_read_response_only() {
    // C check_ack: READ_RESPONSE_ONLY with an ACK syndrome: IB_WR_ATOMIC_WRITE →
    // COMPST_WRITE_SEND; IB_WR_FLUSH → COMPST_READ (no data, END → complete). C's responder
    // sends exactly that (rxe_resp.c acknowledge → send_read_response_ack).
    let only = resp(
        opcode::RC_RDMA_READ_RESPONSE_ONLY,
        100,
        Some(Syndrome::ACK_UNLIMITED),
    );
    for op in [IB_WR_FLUSH, IB_WR_ATOMIC_WRITE] {
        let wqe = head(op, WqeState::Pending, true, 100);
        assert_eq!(
            check_response(100, &wqe, &only),
            Check::Ack {
                comp_psn: 101,
                complete: true
            }
        );
        // The plain ACK an older rxe-rs responder sends completes it as well.
        assert_eq!(
            check_response(100, &wqe, &ack(100)),
            Check::Ack {
                comp_psn: 101,
                complete: true
            }
        );
        // A NAK in the AETH fails it (C: COMPST_ERROR).
        let naked = resp(
            opcode::RC_RDMA_READ_RESPONSE_ONLY,
            100,
            Some(Syndrome::Nak(NakCode::RemoteAccessError)),
        );
        assert_eq!(
            check_response(100, &wqe, &naked),
            Check::Error(IB_WC_REM_ACCESS_ERR)
        );
        // Other read responses are not theirs: a bad response.
        let first = resp(
            opcode::RC_RDMA_READ_RESPONSE_FIRST,
            100,
            Some(Syndrome::ACK_UNLIMITED),
        );
        assert_eq!(
            check_response(100, &wqe, &first),
            Check::Error(IB_WC_BAD_RESP_ERR)
        );
        // Behind comp.psn: old.
        assert_eq!(check_response(101, &wqe, &only), Check::Drop);
    }
}

// --- check_response: NAKs --------------------------------------------------------------------

#[test]
fn nak_psn_sequence_error_retries_from_the_nak_psn() {
    // C check_ack: AETH_NAK_PSN_SEQ_ERROR: comp.psn = pkt->psn if after it, ERROR_RETRY.
    assert_eq!(
        check_response(100, &send(110), &nak(104, NakCode::PsnSequenceError)),
        Check::SeqNak { comp_psn: 104 }
    );
    assert_eq!(
        check_response(100, &send(110), &nak(100, NakCode::PsnSequenceError)),
        Check::SeqNak { comp_psn: 100 }
    );
    // Past the WQE's last PSN the NAK first acknowledges the WQE (C check_psn runs first).
    assert_eq!(
        check_response(100, &send(103), &nak(104, NakCode::PsnSequenceError)),
        Check::CompleteAndRetry
    );
}

#[test]
fn rnr_nak_waits_and_acknowledges_what_came_before() {
    // C check_ack: AETH_RNR_NAK → COMPST_RNR_RETRY with the timer code of the syndrome.
    // Deliberate difference: comp.psn moves to the NAK'd PSN (C leaves it).
    let rnr = resp(
        opcode::RC_ACKNOWLEDGE,
        105,
        Some(Syndrome::RnrNak { timer: 14 }),
    );
    assert_eq!(
        check_response(100, &send(110), &rnr),
        Check::Rnr {
            timer: 14,
            comp_psn: 105
        }
    );
}

#[test]
fn other_naks_fail_the_wqe_with_their_status() {
    // C check_ack: AETH_NAK_INVALID_REQ / REM_ACC_ERR / REM_OP_ERR / default.
    for (code, status) in [
        (NakCode::InvalidRequest, IB_WC_REM_INV_REQ_ERR),
        (NakCode::RemoteAccessError, IB_WC_REM_ACCESS_ERR),
        (NakCode::RemoteOperationalError, IB_WC_REM_OP_ERR),
        (NakCode::InvalidRdRequest, IB_WC_REM_OP_ERR),
        (NakCode::Reserved(17), IB_WC_REM_OP_ERR),
    ] {
        assert_eq!(nak_status(code), Some(status));
        assert_eq!(
            check_response(100, &send(110), &nak(100, code)),
            Check::Error(status)
        );
    }
    assert_eq!(nak_status(NakCode::PsnSequenceError), None);
    // A NAK in a read response's AETH, too.
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 100);
    let only = resp(
        opcode::RC_RDMA_READ_RESPONSE_ONLY,
        100,
        Some(Syndrome::Nak(NakCode::RemoteAccessError)),
    );
    assert_eq!(
        check_response(100, &read, &only),
        Check::Error(IB_WC_REM_ACCESS_ERR)
    );
}

#[test]
fn reserved_syndromes_fail_the_wqe_and_missing_aeth_is_dropped() {
    // C check_ack, RC_ACKNOWLEDGE: `default: return COMPST_ERROR` for the reserved AETH type
    // (010xxxxx): the WQE fails and the QP goes to error (C leaves its status at success).
    let r = resp(opcode::RC_ACKNOWLEDGE, 100, Some(Syndrome::Reserved(0x40)));
    assert_eq!(
        check_response(100, &send(110), &r),
        Check::Error(IB_WC_BAD_RESP_ERR)
    );
    // An old one is still just old.
    assert_eq!(check_response(101, &send(110), &r), Check::Drop);
    // C check_ack, read responses: `(syn & AETH_TYPE_MASK) != AETH_ACK` → COMPST_ERROR.
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 100);
    for syndrome in [Syndrome::Reserved(0x5f), Syndrome::RnrNak { timer: 3 }] {
        for op in [
            opcode::RC_RDMA_READ_RESPONSE_ONLY,
            opcode::RC_RDMA_READ_RESPONSE_FIRST,
        ] {
            let r = resp(op, 100, Some(syndrome));
            assert_eq!(
                check_response(100, &read, &r),
                Check::Error(IB_WC_BAD_RESP_ERR)
            );
        }
        let flush = head(IB_WR_FLUSH, WqeState::Pending, true, 100);
        let r = resp(opcode::RC_RDMA_READ_RESPONSE_ONLY, 100, Some(syndrome));
        assert_eq!(
            check_response(100, &flush, &r),
            Check::Error(IB_WC_BAD_RESP_ERR)
        );
    }
    let r = resp(opcode::RC_ACKNOWLEDGE, 100, None);
    assert_eq!(check_response(100, &send(110), &r), Check::Drop);
}

#[test]
fn head_state_decides_first() {
    // C get_wqe: a done local operation is completed (COMPST_COMP_WQE), whatever the packet.
    let done = head(IB_WR_SEND, WqeState::Done, false, 0);
    assert_eq!(check_response(100, &done, &ack(5)), Check::CompleteAndRetry);
    // Not started, or failed: the packet is not for it.
    for state in [WqeState::Free, WqeState::Error(IB_WC_REM_OP_ERR)] {
        let w = head(IB_WR_SEND, state, false, 0);
        assert_eq!(check_response(100, &w, &ack(100)), Check::Drop);
    }
}

// --- retries ---------------------------------------------------------------------------------

#[test]
fn rnr_probe_closes_the_window_until_acknowledged() {
    // The NAKed PSN not yet acknowledged: the probe alone.
    assert_eq!(rnr_probe_window(100, 100), Some(0));
    // Acknowledged (the completer moved past it): the whole window.
    assert_eq!(rnr_probe_window(101, 100), None);
    assert_eq!(rnr_probe_window(5000, 100), None);
    // Across the 24-bit wrap.
    assert_eq!(rnr_probe_window(PSN_MASK, PSN_MASK), Some(0));
    assert_eq!(rnr_probe_window(0, PSN_MASK), None);
    assert_eq!(rnr_probe_window(3, PSN_MASK - 2), None);
}

proptest! {
    /// Whatever the PSNs, the probe holds exactly until `comp_psn` is past it.
    #[test]
    fn rnr_probe_ends_when_comp_psn_passes(probe in 0..=PSN_MASK, ahead in 0u32..(1 << 22)) {
        let comp = psn_add(probe, ahead);
        prop_assert_eq!(rnr_probe_window(comp, probe).is_none(), ahead > 0);
    }
}

#[test]
fn retry_budget_counts_down_and_seven_is_infinite() {
    // C COMPST_ERROR_RETRY / COMPST_RNR_RETRY: `if (cnt != 7) cnt--`; 0 → *_RETRY_EXC_ERR.
    assert_eq!(spend_retry(3), Some(2));
    assert_eq!(spend_retry(1), Some(0));
    assert_eq!(spend_retry(0), None);
    assert_eq!(spend_retry(RETRY_INFINITE), Some(RETRY_INFINITE));
    assert_eq!(
        retry(2, None, 100, false),
        Retry::Rewind { retries_left: 1 }
    );
    assert_eq!(retry(0, None, 100, true), Retry::Exceeded);
    assert_eq!(
        retry(7, Some(99), 100, false),
        Retry::Rewind { retries_left: 7 }
    );
}

#[test]
fn one_retry_per_lack_of_progress_but_timeouts_always_retry() {
    // C started_retry: a response does not start another retry until comp.psn moves on.
    assert_eq!(retry(5, Some(100), 100, false), Retry::Ignore);
    assert_eq!(
        retry(5, Some(100), 100, true),
        Retry::Rewind { retries_left: 4 }
    );
    assert_eq!(
        retry(5, Some(100), 101, false),
        Retry::Rewind { retries_left: 4 }
    );
    // Ignoring costs no budget, even an empty one.
    assert_eq!(retry(0, Some(100), 100, false), Retry::Ignore);
}

#[test]
fn outstanding_packets() {
    // C: psn_compare(qp->req.psn, qp->comp.psn) > 0.
    assert!(outstanding(101, 100));
    assert!(!outstanding(100, 100));
    assert!(outstanding(0, PSN_MASK));
    assert!(!outstanding(PSN_MASK, 0));
}

// --- the rewind plan -------------------------------------------------------------------------

fn rewind_view(wr_opcode: u32, state: WqeState, first_psn: u32, length: u32) -> RewindWqe {
    RewindWqe {
        state,
        started: true,
        first_psn,
        length,
        mask: wr_opcode_mask(wr_opcode, QpType::Rc).unwrap(),
    }
}

#[test]
fn rewind_resends_the_oldest_from_the_first_unacknowledged_packet() {
    // 10 packets of 1024 bytes from PSN 100 (the last one 400 bytes), 3 acknowledged.
    let w = rewind_view(IB_WR_SEND, WqeState::Pending, 100, 9 * 1024 + 400);
    assert_eq!(
        rewind_wqe(103, true, &w, 1024),
        RewindStep::Resend(Resend::DataFrom { skip: 3 * 1024 })
    );
    // The same under a wrapping PSN.
    let w2 = RewindWqe {
        first_psn: PSN_MASK - 1,
        ..w
    };
    assert_eq!(
        rewind_wqe(1, true, &w2, 1024),
        RewindStep::Resend(Resend::DataFrom { skip: 3 * 1024 })
    );
    // Nothing acknowledged: from the start.
    assert_eq!(
        rewind_wqe(100, true, &w, 1024),
        RewindStep::Resend(Resend::FromStart)
    );
    // A later WQE is always resent whole, even if comp.psn is past its first PSN.
    assert_eq!(
        rewind_wqe(103, false, &w, 1024),
        RewindStep::Resend(Resend::FromStart)
    );
    // Not started yet: whole.
    let fresh = RewindWqe {
        started: false,
        state: WqeState::Processing,
        ..w
    };
    assert_eq!(
        rewind_wqe(103, true, &fresh, 1024),
        RewindStep::Resend(Resend::FromStart)
    );
}

#[test]
fn rewind_resumes_a_read_after_its_answered_responses() {
    // C req_retry: a read moves `iova` on by the bytes answered (`wqe->iova += npsn * mtu`).
    let w = rewind_view(IB_WR_RDMA_READ, WqeState::Pending, 200, 4000);
    assert_eq!(
        rewind_wqe(202, true, &w, 1024),
        RewindStep::Resend(Resend::ReadFrom { skip: 2048 })
    );
}

#[test]
fn rewind_resends_atomics_whole_and_keeps_done_local_operations() {
    let a = rewind_view(IB_WR_ATOMIC_FETCH_AND_ADD, WqeState::Pending, 300, 8);
    assert_eq!(
        rewind_wqe(301, true, &a, 1024),
        RewindStep::Resend(Resend::FromStart)
    );
    // C req_retry: `if (wqe->state == wqe_state_done) continue`.
    let done = RewindWqe {
        state: WqeState::Done,
        ..a
    };
    assert_eq!(rewind_wqe(301, true, &done, 1024), RewindStep::Keep);
    // The requester has not reached it (or it failed): the rewind stops.
    for state in [WqeState::Free, WqeState::Error(IB_WC_REM_OP_ERR)] {
        let w = RewindWqe { state, ..a };
        assert_eq!(rewind_wqe(301, true, &w, 1024), RewindStep::Stop);
    }
}

#[test]
fn rewind_skip_never_exceeds_the_length() {
    let w = rewind_view(IB_WR_RDMA_WRITE, WqeState::Pending, 0, 1500);
    assert_eq!(
        rewind_wqe(5, true, &w, 1024),
        RewindStep::Resend(Resend::DataFrom { skip: 1500 })
    );
}

#[test]
fn resume_opcode_continues_a_partly_acknowledged_message_with_middle() {
    let send = wr_opcode_mask(IB_WR_SEND_WITH_INV, QpType::Rc).unwrap();
    let write = wr_opcode_mask(IB_WR_RDMA_WRITE_WITH_IMM, QpType::Rc).unwrap();
    assert_eq!(
        resume_opcode(QpType::Rc, send, 5000, 1000),
        Some(opcode::RC_SEND_MIDDLE)
    );
    assert_eq!(
        resume_opcode(QpType::Rc, write, 5000, 1000),
        Some(opcode::RC_RDMA_WRITE_MIDDLE)
    );
    assert_eq!(
        resume_opcode(QpType::Uc, send, 5000, 1000),
        Some(opcode::UC_SEND_MIDDLE)
    );
    assert_eq!(
        resume_opcode(QpType::Uc, write, 5000, 1000),
        Some(opcode::UC_RDMA_WRITE_MIDDLE)
    );
    // From the start, or nothing left: a new message (C qp->req.opcode = -1).
    assert_eq!(resume_opcode(QpType::Rc, send, 5000, 5000), None);
    assert_eq!(resume_opcode(QpType::Rc, send, 5000, 0), None);
    // Then next_opcode continues it: MIDDLE while more than an MTU is left, then LAST.
    let prev = resume_opcode(QpType::Rc, send, 5000, 1000);
    assert_eq!(
        next_opcode(QpType::Rc, IB_WR_SEND_WITH_INV, prev, true),
        Some(opcode::RC_SEND_LAST_WITH_INVALIDATE)
    );
    assert_eq!(
        next_opcode(QpType::Rc, IB_WR_SEND_WITH_INV, prev, false),
        Some(opcode::RC_SEND_MIDDLE)
    );
}

// --- properties: PSN wraparound --------------------------------------------------------------

fn shift(psn: u32, k: u32) -> u32 {
    psn_add(psn, k)
}

fn shift_check(c: Check, k: u32) -> Check {
    match c {
        Check::Read { comp_psn, end } => Check::Read {
            comp_psn: shift(comp_psn, k),
            end,
        },
        Check::Atomic { comp_psn } => Check::Atomic {
            comp_psn: shift(comp_psn, k),
        },
        Check::Ack { comp_psn, complete } => Check::Ack {
            comp_psn: shift(comp_psn, k),
            complete,
        },
        Check::Rnr { timer, comp_psn } => Check::Rnr {
            timer,
            comp_psn: shift(comp_psn, k),
        },
        Check::SeqNak { comp_psn } => Check::SeqNak {
            comp_psn: shift(comp_psn, k),
        },
        other => other,
    }
}

const RESPONSE_OPS: [u8; 6] = [
    opcode::RC_ACKNOWLEDGE,
    opcode::RC_ATOMIC_ACKNOWLEDGE,
    opcode::RC_RDMA_READ_RESPONSE_FIRST,
    opcode::RC_RDMA_READ_RESPONSE_MIDDLE,
    opcode::RC_RDMA_READ_RESPONSE_LAST,
    opcode::RC_RDMA_READ_RESPONSE_ONLY,
];

const WR_OPS: [u32; 6] = [
    IB_WR_SEND,
    IB_WR_SEND_WITH_IMM,
    IB_WR_RDMA_WRITE,
    IB_WR_RDMA_READ,
    IB_WR_ATOMIC_FETCH_AND_ADD,
    IB_WR_ATOMIC_CMP_AND_SWP,
];

fn arb_state() -> impl Strategy<Value = WqeState> {
    prop_oneof![
        Just(WqeState::Free),
        Just(WqeState::Processing),
        Just(WqeState::Pending),
        Just(WqeState::Done),
        Just(WqeState::Error(IB_WC_REM_OP_ERR)),
    ]
}

fn arb_head() -> impl Strategy<Value = HeadWqe> {
    (0..WR_OPS.len(), arb_state(), any::<bool>(), 0..=PSN_MASK)
        .prop_map(|(i, state, sent, last)| head(WR_OPS[i], state, sent, last))
}

fn arb_response() -> impl Strategy<Value = Response> {
    (
        0..RESPONSE_OPS.len(),
        0..=PSN_MASK,
        any::<u8>(),
        any::<bool>(),
    )
        .prop_map(|(i, psn, syn, has_aeth)| {
            let op = RESPONSE_OPS[i];
            let mut r = resp(op, psn, None);
            if has_aeth || r.mask.contains(Mask::AETH) {
                r.syndrome = Some(Syndrome::decode(syn));
            }
            r
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Only PSN differences matter: shifting every PSN by `k` (mod 2^24) shifts the decision.
    #[test]
    fn check_response_is_invariant_under_psn_shift(
        comp in 0..=PSN_MASK,
        h in arb_head(),
        r in arb_response(),
        k in 0..=PSN_MASK,
    ) {
        let moved = HeadWqe { last_psn: shift(h.last_psn, k), ..h };
        let moved_r = Response { psn: shift(r.psn, k), ..r };
        prop_assert_eq!(
            check_response(shift(comp, k), &moved, &moved_r),
            shift_check(check_response(comp, &h, &r), k)
        );
    }

    /// A response never moves `comp.psn` backwards, and moves it at most to the response's
    /// PSN + 1 (for responses less than half the circle away).
    #[test]
    fn comp_psn_only_moves_forward(
        comp in 0..=PSN_MASK,
        h in arb_head(),
        r in arb_response(),
        d in -(1i32 << 22)..(1i32 << 22),
    ) {
        let r = Response { psn: psn_add(comp, d as u32), ..r };
        let next = match check_response(comp, &h, &r) {
            Check::Read { comp_psn, .. }
            | Check::Atomic { comp_psn }
            | Check::Ack { comp_psn, .. }
            | Check::Rnr { comp_psn, .. }
            | Check::SeqNak { comp_psn } => comp_psn,
            _ => comp,
        };
        prop_assert!(psn_diff(next, comp) >= 0);
        prop_assert!(psn_diff(next, psn_add(r.psn, 1)) <= 0 || next == comp);
        // Anything behind comp.psn changes nothing (unless the head is a done local op).
        if d < 0 && h.state != WqeState::Done && !(h.sent && psn_diff(r.psn, h.last_psn) > 0) {
            prop_assert_eq!(check_response(comp, &h, &r), Check::Drop);
        }
    }

    #[test]
    fn retry_is_invariant_under_psn_shift(
        cnt in 0u8..8,
        retry_psn in proptest::option::of(0..=PSN_MASK),
        comp in 0..=PSN_MASK,
        timeout in any::<bool>(),
        k in 0..=PSN_MASK,
    ) {
        prop_assert_eq!(
            retry(cnt, retry_psn.map(|p| shift(p, k)), shift(comp, k), timeout),
            retry(cnt, retry_psn, comp, timeout)
        );
    }

    #[test]
    fn rewind_is_invariant_under_psn_shift(
        comp in 0..=PSN_MASK,
        first in 0..=PSN_MASK,
        oldest in any::<bool>(),
        started in any::<bool>(),
        state in arb_state(),
        op in 0..WR_OPS.len(),
        length in 0u32..100_000,
        mtu in prop_oneof![Just(256u32), Just(512), Just(1024), Just(2048), Just(4096)],
        k in 0..=PSN_MASK,
    ) {
        let w = RewindWqe {
            state,
            started,
            first_psn: first,
            length,
            mask: wr_opcode_mask(WR_OPS[op], QpType::Rc).unwrap(),
        };
        let moved = RewindWqe { first_psn: shift(first, k), ..w };
        let plan = rewind_wqe(comp, oldest, &w, mtu);
        prop_assert_eq!(rewind_wqe(shift(comp, k), oldest, &moved, mtu), plan);
        if let RewindStep::Resend(Resend::DataFrom { skip } | Resend::ReadFrom { skip }) = plan {
            prop_assert!(skip <= length);
            prop_assert!(skip % mtu == 0 || skip == length);
        }
    }
}

// --- model check: go-back-N over a random send queue -----------------------------------------

/// One packet on the wire: its PSN, BTH opcode, WQE, and for data the byte range it carries
/// (for a read request, the range it asks for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sent {
    psn: u32,
    opcode: u8,
    wqe: usize,
    offset: u32,
    len: u32,
}

#[derive(Clone, Copy, Debug)]
struct ModelWqe {
    wr_opcode: u32,
    mask: WrMask,
    length: u32,
    first_psn: u32,
    last_psn: u32,
}

fn npsn_read(len: u32, mtu: u32) -> u32 {
    len.div_ceil(mtu).max(1)
}

/// The requester's transmission of WQE `w` from byte `offset` at `psn`, the previous packet
/// being `prev` (as `rxe/req.rs` does it: one packet per MTU with `next_opcode`; a read is one
/// request for what is left, `npsn` PSNs; an atomic one packet). Returns the next PSN.
fn transmit(
    w: &ModelWqe,
    index: usize,
    offset: u32,
    mut psn: u32,
    mut prev: Option<u8>,
    mtu: u32,
    wire: &mut Vec<Sent>,
) -> u32 {
    if w.mask.contains(WrMask::READ) {
        let len = w.length - offset;
        let op = next_opcode(QpType::Rc, w.wr_opcode, prev, true).unwrap();
        wire.push(Sent {
            psn,
            opcode: op,
            wqe: index,
            offset,
            len,
        });
        return psn_add(psn, npsn_read(len, mtu));
    }
    if w.mask.contains(WrMask::ATOMIC) {
        let op = next_opcode(QpType::Rc, w.wr_opcode, prev, true).unwrap();
        wire.push(Sent {
            psn,
            opcode: op,
            wqe: index,
            offset: 0,
            len: w.length,
        });
        return psn_add(psn, 1);
    }
    let mut off = offset;
    loop {
        let resid = w.length - off;
        let op = next_opcode(QpType::Rc, w.wr_opcode, prev, resid <= mtu).unwrap();
        let len = resid.min(mtu);
        wire.push(Sent {
            psn,
            opcode: op,
            wqe: index,
            offset: off,
            len,
        });
        off += len;
        psn = psn_add(psn, 1);
        prev = Some(op);
        if opcode_info(op).unwrap().mask.contains(Mask::END) {
            return psn;
        }
    }
}

const MODEL_OPS: [u32; 7] = [
    IB_WR_SEND,
    IB_WR_SEND_WITH_IMM,
    IB_WR_SEND_WITH_INV,
    IB_WR_RDMA_WRITE,
    IB_WR_RDMA_WRITE_WITH_IMM,
    IB_WR_RDMA_READ,
    IB_WR_ATOMIC_FETCH_AND_ADD,
];

fn arb_queue() -> impl Strategy<Value = (Vec<(u32, u32)>, u32, u32)> {
    (
        proptest::collection::vec((0..MODEL_OPS.len(), 0u32..600), 1..7),
        prop_oneof![Just(1u32), Just(7), Just(64), Just(256)],
        0..=PSN_MASK,
    )
        .prop_map(|(ops, mtu, start)| {
            let ops = ops
                .into_iter()
                .map(|(i, len)| {
                    let op = MODEL_OPS[i];
                    let len = if op == IB_WR_ATOMIC_FETCH_AND_ADD {
                        8
                    } else {
                        len
                    };
                    (op, len)
                })
                .collect();
            (ops, mtu, start)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Send K WQEs over MTU `mtu` from PSN `start`, let the responder acknowledge the first
    /// `acked` PSNs, rewind with `rewind_wqe` + `resume_opcode`, and resend: the resend covers
    /// exactly the unacknowledged bytes of each WQE, each under the PSN and with the opcode of
    /// its first transmission, ends at the same PSN, and is a valid opcode sequence for a
    /// responder that saw the acknowledged prefix (C `check_op_seq`).
    #[test]
    fn rewind_resends_exactly_the_unacknowledged_bytes(
        (ops, mtu, start) in arb_queue(),
        pick in any::<proptest::sample::Index>(),
    ) {
        // First transmission.
        let mut wire = Vec::new();
        let mut wqes = Vec::new();
        let mut psn = start;
        for (i, &(wr_opcode, length)) in ops.iter().enumerate() {
            let mask = wr_opcode_mask(wr_opcode, QpType::Rc).unwrap();
            let first = psn;
            psn = transmit(
                &ModelWqe { wr_opcode, mask, length, first_psn: 0, last_psn: 0 },
                i, 0, psn, None, mtu, &mut wire,
            );
            wqes.push(ModelWqe {
                wr_opcode,
                mask,
                length,
                first_psn: first,
                last_psn: psn_add(psn, PSN_MASK),
            });
        }
        let end_psn = psn;
        let total = psn_diff(end_psn, start) as usize;
        // The responder acknowledges the first `acked` PSNs (fewer than all: something to
        // resend); the completer completes every WQE acknowledged to its last PSN.
        let acked = pick.index(total);
        let comp_psn = psn_add(start, acked as u32);
        let oldest = wqes
            .iter()
            .position(|w| psn_diff(w.last_psn, comp_psn) >= 0)
            .unwrap();

        // The rewind.
        let mut resend = Vec::new();
        let mut req_psn = comp_psn;
        let mut prev = None;
        for (i, w) in wqes.iter().enumerate().skip(oldest) {
            let view = RewindWqe {
                state: WqeState::Pending,
                started: true,
                first_psn: w.first_psn,
                length: w.length,
                mask: w.mask,
            };
            let RewindStep::Resend(plan) = rewind_wqe(comp_psn, i == oldest, &view, mtu) else {
                return Err(TestCaseError::fail("a pending WQE must be resent"));
            };
            let skip = match plan {
                Resend::FromStart => 0,
                Resend::ReadFrom { skip } => {
                    prop_assert!(w.mask.contains(WrMask::READ));
                    skip
                }
                Resend::DataFrom { skip } => {
                    prop_assert!(!w.mask.intersects(WrMask::ATOMIC_OR_READ));
                    skip
                }
            };
            if i == oldest {
                let resid = if matches!(plan, Resend::DataFrom { .. }) {
                    w.length - skip
                } else {
                    w.length
                };
                prev = resume_opcode(QpType::Rc, w.mask, w.length, resid);
            }
            req_psn = transmit(w, i, skip, req_psn, prev, mtu, &mut resend);
            prev = None;
        }

        // Same end PSN: no PSN reused or skipped.
        prop_assert_eq!(req_psn, end_psn);
        // The resend starts at comp.psn.
        prop_assert_eq!(resend[0].psn, comp_psn);
        for (i, w) in wqes.iter().enumerate().skip(oldest) {
            let pkts: Vec<&Sent> = resend.iter().filter(|s| s.wqe == i).collect();
            // Bytes acknowledged (or answered, for a read) before the rewind.
            let done = if i == oldest {
                let n = psn_diff(comp_psn, w.first_psn) as u32;
                if w.mask.contains(WrMask::ATOMIC) { 0 } else { (n * mtu).min(w.length) }
            } else {
                0
            };
            if w.mask.contains(WrMask::READ) {
                // One new request for exactly the bytes not answered, at the first PSN whose
                // response is missing, and its responses end at the read's last PSN.
                prop_assert_eq!(pkts.len(), 1);
                prop_assert_eq!(pkts[0].offset, done);
                prop_assert_eq!(pkts[0].len, w.length - done);
                prop_assert_eq!(pkts[0].opcode, opcode::RC_RDMA_READ_REQUEST);
                let first_missing = psn_add(w.first_psn, done / mtu);
                prop_assert_eq!(pkts[0].psn, first_missing);
                let last = psn_add(pkts[0].psn, npsn_read(pkts[0].len, mtu) - 1);
                prop_assert_eq!(last, w.last_psn);
                continue;
            }
            // Contiguous, from `done` to the end.
            let mut at = done;
            for s in &pkts {
                prop_assert_eq!(s.offset, at);
                at += s.len;
            }
            prop_assert_eq!(at, w.length);
            // Every resent packet is the packet first sent under its PSN.
            for s in &pkts {
                let orig = wire.iter().find(|o| o.psn == s.psn).unwrap();
                prop_assert_eq!(*orig, **s);
            }
        }

        // The responder saw the acknowledged prefix; the resend continues it validly. (A read
        // or atomic leaves no message open.)
        let mut resp_op: Option<u8> = wire
            .iter()
            .take_while(|s| psn_diff(s.psn, comp_psn) < 0)
            .last()
            .map(|s| s.opcode)
            .filter(|&op| !opcode_info(op).unwrap().mask.contains(Mask::END));
        for s in &resend {
            prop_assert_eq!(check_op_seq(resp_op, s.opcode), OpSeq::Ok);
            let m = opcode_info(s.opcode).unwrap().mask;
            resp_op = if m.contains(Mask::END) { None } else { Some(s.opcode) };
        }
        prop_assert_eq!(resp_op, None);
    }
}

// --- Check::restores_retries: C reset_retry_counters -----------------------------------------

#[test]
fn progress_restores_the_retry_budgets() {
    // An ACK that moves comp.psn, mid-message (a 1 MiB WRITE is 4096 packets at MTU 256).
    let write = head(IB_WR_RDMA_WRITE, WqeState::Pending, true, 4195);
    let c = check_response(100, &write, &ack(2000));
    assert_eq!(
        c,
        Check::Ack {
            comp_psn: 2001,
            complete: false
        }
    );
    assert!(c.restores_retries(100));
    // The WQE's last ACK, a read response and an atomic acknowledgement in order.
    assert!(check_response(100, &write, &ack(4195)).restores_retries(100));
    let read = head(IB_WR_RDMA_READ, WqeState::Pending, true, 103);
    let first = resp(
        opcode::RC_RDMA_READ_RESPONSE_FIRST,
        100,
        Some(Syndrome::ACK_UNLIMITED),
    );
    assert!(check_response(100, &read, &first).restores_retries(100));
    let atomic = head(IB_WR_ATOMIC_FETCH_AND_ADD, WqeState::Pending, true, 100);
    let atmack = resp(
        opcode::RC_ATOMIC_ACKNOWLEDGE,
        100,
        Some(Syndrome::ACK_UNLIMITED),
    );
    assert!(check_response(100, &atomic, &atmack).restores_retries(100));
    // An ACK past the oldest WQE acknowledges it implicitly.
    assert!(check_response(100, &send(103), &ack(105)).restores_retries(100));
}

#[test]
fn a_sequence_nak_that_moves_comp_psn_restores_the_retry_budgets() {
    // It acknowledges PSNs 100..1999: progress, although it then asks for a retry.
    let write = head(IB_WR_RDMA_WRITE, WqeState::Pending, true, 4195);
    let c = check_response(100, &write, &nak(2000, NakCode::PsnSequenceError));
    assert_eq!(c, Check::SeqNak { comp_psn: 2000 });
    assert!(c.restores_retries(100));
}

#[test]
fn naks_without_progress_and_duplicates_do_not_restore_the_retry_budgets() {
    let write = head(IB_WR_RDMA_WRITE, WqeState::Pending, true, 4195);
    for r in [
        ack(99),
        nak(100, NakCode::PsnSequenceError),
        nak(100, NakCode::RemoteAccessError),
    ] {
        let c = check_response(100, &write, &r);
        assert!(!c.restores_retries(100), "{c:?}");
    }
    let rnr = resp(
        opcode::RC_ACKNOWLEDGE,
        2000,
        Some(Syndrome::RnrNak { timer: 14 }),
    );
    let c = check_response(100, &write, &rnr);
    assert!(matches!(c, Check::Rnr { .. }), "{c:?}");
    assert!(!c.restores_retries(100));
}

/// The retransmit timeout (IBA 9.7.6.1.3): 4.096 µs × 2^timeout, 0 infinite, saturated.
#[test]
fn retransmit_timeout() {
    assert_eq!(retransmit_usecs(0), None);
    assert_eq!(retransmit_usecs(1), Some(8));
    assert_eq!(retransmit_usecs(14), Some(65_536));
    assert_eq!(retransmit_usecs(29), Some(1 << 31));
    assert_eq!(retransmit_usecs(30), Some(u32::MAX));
    assert_eq!(retransmit_usecs(255), Some(u32::MAX));
}

// --- ACKs that wait for the task's next run --------------------------------------------------

#[test]
fn unseen_completions_are_unsignaled_sends_and_writes() {
    let mask = |op| wr_opcode_mask(op, QpType::Rc).unwrap();
    for op in [
        IB_WR_SEND,
        IB_WR_SEND_WITH_IMM,
        IB_WR_SEND_WITH_INV,
        IB_WR_RDMA_WRITE,
        IB_WR_RDMA_WRITE_WITH_IMM,
    ] {
        assert!(completes_unseen(mask(op), false), "opcode {op}");
        assert!(!completes_unseen(mask(op), true), "opcode {op} signaled");
    }
    // Their responses are not plain ACKs, or they complete without one.
    for op in [
        IB_WR_RDMA_READ,
        IB_WR_ATOMIC_CMP_AND_SWP,
        IB_WR_ATOMIC_FETCH_AND_ADD,
        IB_WR_ATOMIC_WRITE,
        IB_WR_FLUSH,
        IB_WR_LOCAL_INV,
        IB_WR_REG_MR,
    ] {
        assert!(!completes_unseen(mask(op), false), "opcode {op}");
    }
}

#[test]
fn acks_wait_only_when_nothing_seen_waits_for_them() {
    let quiet = AckWait {
        rts_with_timer: true,
        requester_done: true,
        awaited: None,
        comp_psn: 100,
    };
    assert!(acks_may_wait(&quiet));
    // No timer (timeout 0) would leave an ACK unread for good; WQEs not yet sent may wait on
    // the window or a fence an ACK opens.
    assert!(!acks_may_wait(&AckWait {
        rts_with_timer: false,
        ..quiet
    }));
    assert!(!acks_may_wait(&AckWait {
        requester_done: false,
        ..quiet
    }));
    // A signaled WQE acknowledged at comp.psn 101: waits until the completer reaches it.
    let awaited = AckWait {
        awaited: Some(101),
        ..quiet
    };
    assert!(!acks_may_wait(&awaited));
    assert!(acks_may_wait(&AckWait {
        comp_psn: 101,
        ..awaited
    }));
    assert!(acks_may_wait(&AckWait {
        comp_psn: 102,
        ..awaited
    }));
    // Across the PSN wrap.
    assert!(!acks_may_wait(&AckWait {
        awaited: Some(1),
        comp_psn: PSN_MASK,
        ..quiet
    }));
    assert!(reached(0, PSN_MASK));
    assert!(!reached(PSN_MASK, 0));
}
