// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The decisions of the completer (`rxe_comp.c`) and of its go-back-N retry (`req_retry` of
//! `rxe_req.c`), as pure functions of PSNs, opcodes and the state of the send WQEs.
//!
//! The engine (`rxe/comp.rs`) reads its state and the response packet into the plain values
//! here, asks for a decision, and carries it out: it writes read data and atomic results,
//! completes WQEs, moves `comp.psn`, arms timers and resets the requester. Nothing here moves
//! data or touches a queue.
//!
//! The engine's structure differs from C's state machine (`enum comp_state`): one function,
//! [`check_response`], decides what a response does to the oldest WQE, where C walks
//! `check_psn` → `check_ack` → `do_read` / `do_atomic` / `complete_ack` → `update_comp`.

use super::hdr::{NakCode, Syndrome};
use super::opcode::{
    self, Mask, RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_ONLY, RC_RDMA_WRITE_MIDDLE,
    RC_SEND_MIDDLE, UC_RDMA_WRITE_MIDDLE, UC_SEND_MIDDLE,
};
use super::psn::{psn_add, psn_diff};
use super::qp_state::QpType;
use super::wqe::{
    WcStatus, WrMask, IB_WC_BAD_RESP_ERR, IB_WC_REM_ACCESS_ERR, IB_WC_REM_INV_REQ_ERR,
    IB_WC_REM_OP_ERR, IB_WR_RDMA_READ, IB_WR_RDMA_READ_WITH_INV,
};

/// The retransmit timeout for the QP attribute `timeout`: 4.096 µs × 2^timeout (IBA 9.7.6.1.3),
/// counted as 4 µs << timeout and saturated at `u32::MAX`; `None` for 0, which the IBA defines
/// as infinite (no timer).
pub const fn retransmit_usecs(timeout: u8) -> Option<u32> {
    if timeout == 0 {
        return None;
    }
    let shift = if timeout < 31 { timeout } else { 31 };
    let usecs = 4u64 << shift;
    Some(if usecs > u32::MAX as u64 {
        u32::MAX
    } else {
        usecs as u32
    })
}

/// Whether a send WQE may complete unseen: an unsignaled SEND or RDMA WRITE, which a plain ACK
/// completes without a work completion. Nothing the user can observe waits for its ACK: IBA
/// frees an unsignaled WQE's send queue slot only at a later signaled completion
/// (`ibv_post_send(3)`), and a read, an atomic, a FLUSH or a local operation is never one.
pub const fn completes_unseen(mask: WrMask, signaled: bool) -> bool {
    !signaled
        && mask.intersects(WrMask::WRITE_OR_SEND)
        && !mask.intersects(
            WrMask::ATOMIC_OR_READ
                .union(WrMask::FLUSH)
                .union(WrMask::ATOMIC_WRITE)
                .union(WrMask::LOCAL_OP),
        )
}

/// What decides whether the positive ACKs looped back to an RC QP may wait in its ACK ring for
/// the task's next run (a doorbell, a later signaled completion, the retransmit timer) rather
/// than each run the task ([`acks_may_wait`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckWait {
    /// The QP is in RTS with a retransmit timeout (not 0, infinite): the timer, armed by every
    /// request sent, runs the task at the latest one timeout after the last.
    pub rts_with_timer: bool,
    /// The requester has sent every WQE posted and waits for nothing (an RNR wait, a page
    /// fault, a window or a fence an ACK would open).
    pub requester_done: bool,
    /// `comp.psn` at which the last WQE that must complete promptly is acknowledged (a WQE
    /// not [`completes_unseen`], a local operation after outstanding packets), if any.
    pub awaited: Option<u32>,
    /// The completer's next expected PSN.
    pub comp_psn: u32,
}

/// Whether positive ACKs may wait for the task's next run ([`AckWait`]): only when nothing but
/// unseen completions waits for them. Any other ACK, and every NAK, runs the task as it comes.
pub const fn acks_may_wait(w: &AckWait) -> bool {
    w.rts_with_timer
        && w.requester_done
        && match w.awaited {
            Some(psn) => reached(w.comp_psn, psn),
            None => true,
        }
}

/// Whether the completer's `comp_psn` has reached `awaited` (every PSN before it acknowledged).
pub const fn reached(comp_psn: u32, awaited: u32) -> bool {
    psn_diff(comp_psn, awaited) >= 0
}

/// `retry_cnt` / `rnr_retry` value meaning "retry for ever" (IBA 9.7.5.2.8, as C).
pub const RETRY_INFINITE: u8 = 7;

/// Where a send WQE is in its life (C `enum wqe_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WqeState {
    /// The slot holds nothing the engine has read (C `wqe_state_posted`).
    #[default]
    Free,
    /// Copied and valid, some packets sent (C `wqe_state_processing`).
    Processing,
    /// Every packet sent; waiting for its acknowledgement (RC) or completion
    /// (C `wqe_state_pending`).
    Pending,
    /// Failed locally with this status; the completer reports it (C `wqe_state_error`).
    Error(WcStatus),
    /// A local operation (BIND_MW, LOCAL_INV, REG_MR) done: the completer completes it when it
    /// reaches it, and a retry does not redo it (C `wqe_state_done`).
    Done,
}

/// The oldest send WQE (the send queue's consumer), as [`check_response`] needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadWqe {
    /// Its state.
    pub state: WqeState,
    /// `IB_WR_*` opcode.
    pub wr_opcode: u32,
    /// [`WrMask`] of the opcode.
    pub mask: WrMask,
    /// Every packet was sent at least once, so `last_psn` is final.
    pub sent: bool,
    /// PSN of its last packet (of its last read response for a read).
    pub last_psn: u32,
}

/// A response packet (BTH opcode and PSN, AETH), as [`check_response`] needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// BTH PSN.
    pub psn: u32,
    /// BTH opcode.
    pub opcode: u8,
    /// The opcode's [`Mask`].
    pub mask: Mask,
    /// The AETH syndrome, if the packet has an AETH.
    pub syndrome: Option<Syndrome>,
    /// The packet has an AtomicAckETH.
    pub has_atmack: bool,
}

/// What a response does to the oldest WQE ([`check_response`]); the engine carries it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Ignore the packet: nothing changes (C `COMPST_DONE` without an update).
    Drop,
    /// The response is past the oldest WQE, which it acknowledges implicitly: complete that
    /// WQE and look at the packet again for the next one (C `COMPST_COMP_WQE`).
    CompleteAndRetry,
    /// Retry from `comp.psn` (C `COMPST_ERROR_RETRY`).
    Retry,
    /// A read response in order: place its payload in the WQE's buffers, set `comp.psn` to
    /// `comp_psn`, and complete the WQE if `end` (C `COMPST_READ`, `do_read`).
    Read {
        /// The new `comp.psn`.
        comp_psn: u32,
        /// The last response of the read: complete the WQE.
        end: bool,
    },
    /// The atomic's acknowledgement: write the original value into the WQE's buffer, set
    /// `comp.psn` to `comp_psn` and complete the WQE (C `COMPST_ATOMIC`, `do_atomic`).
    Atomic {
        /// The new `comp.psn`.
        comp_psn: u32,
    },
    /// A positive acknowledgement: set `comp.psn` to `comp_psn`; complete the WQE if
    /// `complete` (C `COMPST_WRITE_SEND` → `COMPST_COMP_ACK` or `COMPST_UPDATE_COMP`).
    Ack {
        /// The new `comp.psn`.
        comp_psn: u32,
        /// The ACK is for the WQE's last PSN.
        complete: bool,
    },
    /// RNR NAK: set `comp.psn` to `comp_psn`, then retry after the RNR timer `timer`
    /// (C `COMPST_RNR_RETRY`).
    Rnr {
        /// The AETH's RNR timer code.
        timer: u8,
        /// The new `comp.psn`.
        comp_psn: u32,
    },
    /// NAK "PSN sequence error": everything before the NAK's PSN arrived; set `comp.psn` to
    /// `comp_psn` and retry from there (C `AETH_NAK_PSN_SEQ_ERROR` → `COMPST_ERROR_RETRY`).
    SeqNak {
        /// The new `comp.psn`.
        comp_psn: u32,
    },
    /// The WQE fails with this `IB_WC_*` status; the QP goes to error (C `COMPST_ERROR`).
    Error(WcStatus),
}

impl Check {
    /// Whether this decision is progress that restores the retry budgets (`retry_cnt`,
    /// `rnr_retry`): an ACK, a read response or an atomic acknowledgement that moves `comp.psn`
    /// on from `comp_psn`, or one that acknowledges the oldest WQE implicitly (C
    /// `reset_retry_counters` in `check_psn` and `check_ack`), and a sequence NAK that moves
    /// `comp.psn` (it acknowledges every PSN before its own). Without it, a long message over a
    /// lossy link spends its budget across retries that each made progress and fails with
    /// `RETRY_EXC_ERR`.
    ///
    /// C restores only on the former and ignores sequence NAKs while a retry is under way
    /// (`started_retry`), leaving a packet lost during a resend to the retransmit timer; rxe-rs
    /// resends at once on a NAK that shows progress, so it counts that progress too. A NAK or
    /// RNR NAK at the same `comp.psn` and a timeout spend budget and never restore it.
    pub const fn restores_retries(&self, comp_psn: u32) -> bool {
        match *self {
            Self::Read { comp_psn: new, .. }
            | Self::Atomic { comp_psn: new }
            | Self::Ack { comp_psn: new, .. }
            | Self::SeqNak { comp_psn: new } => new != comp_psn,
            Self::CompleteAndRetry => true,
            Self::Drop | Self::Retry | Self::Rnr { .. } | Self::Error(_) => false,
        }
    }
}

/// The completion status for a NAK (C `check_ack`, `case AETH_NAK`); `None` for a PSN
/// sequence error, which retries instead. Unknown codes are `REM_OP_ERR`, as in C.
pub const fn nak_status(code: NakCode) -> Option<WcStatus> {
    Some(match code {
        NakCode::PsnSequenceError => return None,
        NakCode::InvalidRequest => IB_WC_REM_INV_REQ_ERR,
        NakCode::RemoteAccessError => IB_WC_REM_ACCESS_ERR,
        NakCode::RemoteOperationalError | NakCode::InvalidRdRequest | NakCode::Reserved(_) => {
            IB_WC_REM_OP_ERR
        }
    })
}

const fn nak_check(code: NakCode) -> Check {
    match nak_status(code) {
        Some(status) => Check::Error(status),
        None => Check::Retry,
    }
}

/// Whether `opcode` is an RDMA READ response (FIRST, MIDDLE, LAST or ONLY).
const fn is_read_response(opcode: u8) -> bool {
    opcode >= RC_RDMA_READ_RESPONSE_FIRST && opcode <= RC_RDMA_READ_RESPONSE_ONLY
}

/// What response `pkt` does to the oldest WQE `head` when the completer expects `comp_psn`
/// next: C `check_psn` + `check_ack` (+ the choice between `complete_ack` and `update_comp`).
///
/// - A response past a sent WQE's last PSN acknowledges it implicitly (C `check_psn`,
///   `diff > 0`): complete it and look again, unless it is a read or an atomic, whose
///   response was lost: retry.
/// - A response before `comp_psn` is old and ignored. (C completes the WQE when such a
///   response carries exactly its `last_psn`; here a WQE acknowledged to `last_psn` is already
///   complete, as `complete_wqe` moves `comp.psn` past it.)
/// - Read responses must come in order: one ahead of `comp_psn` retries. (C ignores it and
///   waits for the timeout; the engine starts one retry per lack of progress instead, see
///   `Documentation/data-path.md`.) A zero-length READ RESPONSE ONLY with an ACK syndrome
///   acknowledges a FLUSH or an ATOMIC WRITE, as in C (whose responder answers them so). Any
///   other read response for a WQE that is not a read is IBA's bad response: the WQE fails
///   with `IB_WC_BAD_RESP_ERR` (C: `IB_WC_FATAL_ERR`).
/// - An ATOMIC ACKNOWLEDGE for a WQE that is not an atomic is a bad response too; for an
///   atomic, it counts only at its PSN.
/// - A plain ACK moves `comp_psn` on and completes the WQE at its last PSN (a FLUSH or an
///   ATOMIC WRITE too: older rxe-rs responders answer them with one), but never a read or an
///   atomic, whose data the ACK does not carry: within one, as past one, its responses were
///   lost, and it is retried (C completes a read on such an ACK, none of its data written:
///   the ACK a responder sends for a duplicate request with its last PSN executed, C9-105).
/// - RNR NAK: the RNR retry; its PSN also acknowledges what came before (C leaves
///   `comp.psn`).
/// - NAK PSN sequence error: the responder expects the NAK's PSN, so everything before it
///   arrived; retry from there (C `AETH_NAK_PSN_SEQ_ERROR`).
/// - Other NAKs fail the WQE ([`nak_status`]). A reserved syndrome (or a read response whose
///   AETH is not an ACK) fails it with `IB_WC_BAD_RESP_ERR` and the QP goes to error: C
///   `check_ack` → `COMPST_ERROR` too, but without setting a status (the WQE completes as a
///   success, after a `WARN_ON_ONCE`).
pub fn check_response(comp_psn: u32, head: &HeadWqe, pkt: &Response) -> Check {
    // A local operation done (C get_wqe: COMPST_COMP_WQE): the response is for a later WQE.
    if head.state == WqeState::Done {
        return Check::CompleteAndRetry;
    }
    if !matches!(head.state, WqeState::Pending | WqeState::Processing) {
        return Check::Drop;
    }
    let psn = pkt.psn;
    let read_or_atomic = head.mask.intersects(WrMask::ATOMIC_OR_READ);
    // C check_psn: a response past this WQE acknowledges it.
    if head.sent && psn_diff(psn, head.last_psn) > 0 {
        if read_or_atomic {
            return Check::Retry;
        }
        return Check::CompleteAndRetry;
    }
    // Old: already handled.
    if psn_diff(psn, comp_psn) < 0 {
        return Check::Drop;
    }
    if pkt.mask.contains(Mask::READ) || is_read_response(pkt.opcode) {
        // FLUSH and ATOMIC WRITE: C's responder acknowledges them with a zero-length READ
        // RESPONSE ONLY carrying an AETH (`send_read_response_ack`), which C `check_ack` takes
        // as their acknowledgement (`COMPST_WRITE_SEND` / `COMPST_READ` without data). The
        // plain ACK below completes them as well, so responders that send one (older rxe-rs)
        // still work.
        if head
            .mask
            .intersects(WrMask::FLUSH.union(WrMask::ATOMIC_WRITE))
            && pkt.opcode == RC_RDMA_READ_RESPONSE_ONLY
        {
            return match pkt.syndrome {
                Some(Syndrome::Ack { .. }) => Check::Ack {
                    comp_psn: psn_add(psn, 1),
                    complete: head.sent && psn == head.last_psn,
                },
                Some(Syndrome::Nak(code)) => nak_check(code),
                Some(Syndrome::RnrNak { .. } | Syndrome::Reserved(_)) => {
                    Check::Error(IB_WC_BAD_RESP_ERR)
                }
                None => Check::Drop,
            };
        }
        // A read response where no read is (its PSN is this WQE's): an unexpected opcode,
        // IBA's bad response (C: `IB_WC_FATAL_ERR`).
        if head.wr_opcode != IB_WR_RDMA_READ && head.wr_opcode != IB_WR_RDMA_READ_WITH_INV {
            return Check::Error(IB_WC_BAD_RESP_ERR);
        }
        // Read responses must come in order: retry from the missing one.
        if psn != comp_psn {
            return Check::Retry;
        }
        match pkt.syndrome {
            Some(Syndrome::Nak(code)) => return nak_check(code),
            // C check_ack: a read response whose AETH is not an ACK → COMPST_ERROR.
            Some(Syndrome::RnrNak { .. } | Syndrome::Reserved(_)) => {
                return Check::Error(IB_WC_BAD_RESP_ERR)
            }
            Some(Syndrome::Ack { .. }) | None => {}
        }
        return Check::Read {
            comp_psn: psn_add(psn, 1),
            end: pkt.mask.contains(Mask::END),
        };
    }
    let Some(syndrome) = pkt.syndrome else {
        return Check::Drop;
    };
    match syndrome {
        Syndrome::Ack { .. } => {
            if pkt.opcode == opcode::RC_ATOMIC_ACKNOWLEDGE {
                // For a WQE that is no atomic: a bad response, as a read response above.
                if !head.mask.contains(WrMask::ATOMIC) {
                    return Check::Error(IB_WC_BAD_RESP_ERR);
                }
                if psn != head.last_psn || !pkt.has_atmack {
                    return Check::Drop;
                }
                return Check::Atomic {
                    comp_psn: psn_add(psn, 1),
                };
            }
            // A plain ACK where a read's or an atomic's responses are due: they were lost, as
            // for an ACK past it (above). C completes the read as a success, none of its data
            // written; moving past it here would leave it waiting for nothing, for good.
            if read_or_atomic {
                return Check::Retry;
            }
            Check::Ack {
                comp_psn: psn_add(psn, 1),
                complete: head.sent && psn == head.last_psn,
            }
        }
        Syndrome::RnrNak { timer } => Check::Rnr {
            timer,
            // Here `psn` is at or after `comp_psn` (older responses were dropped above).
            comp_psn: if psn_diff(psn, comp_psn) >= 0 {
                psn
            } else {
                comp_psn
            },
        },
        Syndrome::Nak(NakCode::PsnSequenceError) => Check::SeqNak {
            comp_psn: if psn_diff(psn, comp_psn) > 0 {
                psn
            } else {
                comp_psn
            },
        },
        Syndrome::Nak(code) => nak_check(code),
        // C: COMPST_ERROR (with the WQE's status left at success, which trips its
        // WARN_ON_ONCE); here the WQE fails with a bad response (IBA: an unexpected response).
        Syndrome::Reserved(_) => Check::Error(IB_WC_BAD_RESP_ERR),
    }
}

/// Whether packets are outstanding: the requester has sent PSNs the completer has not seen
/// acknowledged (C `psn_compare(qp->req.psn, qp->comp.psn) > 0`). Only then does a timeout
/// retry, and does progress restart the retransmit timer.
pub const fn outstanding(req_psn: u32, comp_psn: u32) -> bool {
    psn_diff(req_psn, comp_psn) > 0
}

/// The requester's window after an RNR NAK that named `probe`: `Some(0)` while `probe` is
/// unacknowledged (the retry resends that request alone), `None` once the completer's
/// `comp_psn` has passed it (the probe is over, the whole window opens). A responder without a
/// receive WQE NAKs the first request and drops the ones after it, so resending the window at
/// every retry only repeats packets it drops.
pub const fn rnr_probe_window(comp_psn: u32, probe: u32) -> Option<u32> {
    if psn_diff(comp_psn, probe) > 0 {
        None
    } else {
        Some(0)
    }
}

/// One retry taken from a budget (`retry_cnt` or `rnr_retry`): the budget left, or `None`
/// when it is spent. [`RETRY_INFINITE`] never runs out (C `COMPST_ERROR_RETRY`,
/// `COMPST_RNR_RETRY`).
pub const fn spend_retry(budget: u8) -> Option<u8> {
    match budget {
        RETRY_INFINITE => Some(RETRY_INFINITE),
        0 => None,
        n => Some(n - 1),
    }
}

/// What a retry request does ([`retry`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// A retry already started at this `comp.psn` and this is not a timeout: nothing
    /// (C `started_retry && !timeout_retry`).
    Ignore,
    /// The retry budget is spent: the WQE completes with `IB_WC_RETRY_EXC_ERR`, the QP goes
    /// to error. The engine still records the retry PSN.
    Exceeded,
    /// Rewind the requester to `comp.psn` with this many retries left.
    Rewind {
        /// The new `retry_cnt`.
        retries_left: u8,
    },
}

/// Whether to retry (C `COMPST_ERROR_RETRY`): `retry_psn` is `comp.psn` when the last retry
/// started (C `started_retry`, which C clears on progress), `timeout` says the retransmit timer
/// fired. A response asks for a retry only if none started since the last progress; a timeout
/// always does. Unlike C, a retry a response asks for happens even if `req.psn` is not ahead
/// of `comp.psn` (the timeout path checks [`outstanding`] first).
pub fn retry(retry_cnt: u8, retry_psn: Option<u32>, comp_psn: u32, timeout: bool) -> Retry {
    if !timeout && retry_psn == Some(comp_psn) {
        return Retry::Ignore;
    }
    match spend_retry(retry_cnt) {
        Some(retries_left) => Retry::Rewind { retries_left },
        None => Retry::Exceeded,
    }
}

/// A send WQE as the go-back-N rewind sees it ([`rewind_wqe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RewindWqe {
    /// Its state.
    pub state: WqeState,
    /// Its first packet was sent, so `first_psn` is set.
    pub started: bool,
    /// PSN of its first packet.
    pub first_psn: u32,
    /// Bytes of its message.
    pub length: u32,
    /// [`WrMask`] of its opcode.
    pub mask: WrMask,
}

/// Where the resend of one WQE starts ([`RewindStep::Resend`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resend {
    /// From its first byte, with its first packet.
    FromStart,
    /// A read partly answered: a new read request for the bytes from `skip` on (the
    /// engine moves its receive cursor and read offset by `skip`; C `req_retry` moves `iova`).
    ReadFrom {
        /// Bytes already answered.
        skip: u32,
    },
    /// A SEND or WRITE partly acknowledged: its data from byte `skip` on (the engine moves its
    /// send cursor by `skip`, C `advance_dma_data`); [`resume_opcode`] gives the packet it
    /// continues with.
    DataFrom {
        /// Bytes already acknowledged.
        skip: u32,
    },
}

/// What the rewind does with one WQE ([`rewind_wqe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RewindStep {
    /// A local operation already executed: not redone, left as it is (C `req_retry` skips
    /// `wqe_state_done`).
    Keep,
    /// Not a WQE the requester has reached: the rewind stops here.
    Stop,
    /// Back to `Processing`, resent as said.
    Resend(Resend),
}

/// The go-back-N plan for one fetched WQE when the requester rewinds to `comp_psn` (the
/// per-WQE loop of C `req_retry`). `oldest` says it is the send queue's consumer: only the
/// oldest WQE can have packets acknowledged already, `comp_psn - first_psn` of them, each of
/// `mtu` bytes (capped at its length); every later WQE is resent from its start.
///
/// Unlike C, which resets only WQEs up to the requester's position, every WQE copied in so
/// far is reset, including the one the requester is half-way through (see
/// `Documentation/data-path.md`). Atomics are resent whole.
pub fn rewind_wqe(comp_psn: u32, oldest: bool, wqe: &RewindWqe, mtu: u32) -> RewindStep {
    match wqe.state {
        WqeState::Done => return RewindStep::Keep,
        WqeState::Pending | WqeState::Processing => {}
        WqeState::Free | WqeState::Error(_) => return RewindStep::Stop,
    }
    let acked = if wqe.started && oldest {
        psn_diff(comp_psn, wqe.first_psn).max(0) as u32
    } else {
        0
    };
    if acked == 0 {
        return RewindStep::Resend(Resend::FromStart);
    }
    let skip = acked.saturating_mul(mtu).min(wqe.length);
    RewindStep::Resend(if wqe.mask.contains(WrMask::READ) {
        Resend::ReadFrom { skip }
    } else if !wqe.mask.intersects(WrMask::ATOMIC_OR_READ) {
        Resend::DataFrom { skip }
    } else {
        Resend::FromStart
    })
}

/// The BTH opcode the requester "last sent" after a rewind (`qp->req.opcode`), for the oldest
/// WQE of `length` bytes whose resend has `resid` bytes left: a partly acknowledged SEND or
/// WRITE continues with a MIDDLE packet, so [`next_opcode`](super::wqe::next_opcode) picks
/// MIDDLE or LAST; otherwise `None` (C: -1), and it starts with FIRST or ONLY. (C gets there by
/// replaying `next_opcode` over the acknowledged packets.)
pub const fn resume_opcode(qp_type: QpType, mask: WrMask, length: u32, resid: u32) -> Option<u8> {
    if resid == length || resid == 0 {
        return None;
    }
    let rc = matches!(qp_type, QpType::Rc);
    Some(if mask.contains(WrMask::SEND) {
        if rc {
            RC_SEND_MIDDLE
        } else {
            UC_SEND_MIDDLE
        }
    } else if rc {
        RC_RDMA_WRITE_MIDDLE
    } else {
        UC_RDMA_WRITE_MIDDLE
    })
}
