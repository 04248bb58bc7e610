// SPDX-License-Identifier: GPL-2.0

//! The completer (`rxe_comp.c`): consumes acknowledgements and read/atomic responses, completes
//! send WQEs, retries, and flushes the send queue of a QP in error.
//!
//! The retransmit policy lives here, all of it (the section "Retransmission" at the end): when
//! the retransmit timer is armed and rearmed (by the requester's packets and by the completer's
//! progress), what an expiry does, when a response starts a retry, the retry and RNR budgets
//! and what restores them, and the go-back-N rewind of the requester. The pure decisions it
//! carries out are in `proto::comp` (`retry`, `spend_retry`, `rewind_wqe`, `outstanding`,
//! `retransmit_usecs`); the requester and `modify_qp` only call in here.

use super::{
    counters::Counter,
    engine::WqeState,
    engine::{Cause, Engine, FaultWait, Machine, RxeError},
    intake::Next,
    outbox::Outbox,
    qp::{QpShared, RETRANSMIT_TIMER},
    sg::{write_sges, Sges, WalkError},
};
use crate::ib::handles::IbEvent;
use crate::kernel_ext::timer::usecs_to_jiffies;
use crate::net::skb::SkBuff;
use crate::proto::{
    comp::{self as decide, Check, Resend, RewindStep},
    hdr::{Aeth, Atmack},
    packet::Packet,
    packet_ring::ACK_RING_LEN,
    parts::Parts,
    psn::{psn_add, psn_diff},
    qp_state::{QpState, QpType},
    queue::QueueType,
    wqe::{
        self, DmaCursor, SendWqe, UverbsWc, WcStatus, WrMask, IB_SEND_SIGNALED,
        IB_WC_RETRY_EXC_ERR, IB_WC_RNR_RETRY_EXC_ERR, IB_WC_SUCCESS, IB_WC_WR_FLUSH_ERR,
    },
};
use core::sync::atomic::Ordering;
use kernel::{sync::rcu, sync::Arc};

/// What a response does to the oldest WQE.
enum Outcome {
    /// Drop the packet, nothing changes.
    Drop,
    /// The packet is used up; the WQE stays.
    Consumed,
    /// Complete the WQE and look at the packet again for the next one (implicit ACK).
    CompleteAndRetry,
    /// Complete the WQE; the packet is used up.
    Complete,
    /// Retry from the PSN the responder expects.
    Retry,
    /// The responder ran out of receive WQEs: retry after `timer`.
    Rnr(u8),
    /// The WQE failed; the QP goes to error.
    Error(RxeError),
}

impl QpShared {
    /// One step of the completer.
    pub(crate) fn completer(
        self: &Arc<Self>,
        eng: &mut Engine,
        rcu: &rcu::Guard,
        _out: &mut Outbox,
    ) -> bool {
        match eng.state() {
            QpState::Err => {
                eng.comp.paused = None;
                eng.comp.fault = FaultWait::None;
                return self.flush_send_queue(eng);
            }
            QpState::Reset | QpState::Init | QpState::Rtr => {
                self.responses.purge();
                eng.comp.paused = None;
                return false;
            }
            _ => {}
        }
        if eng.comp.fault == FaultWait::Waiting {
            return false;
        }
        // A response waiting for pages is older than the ring's ACKs (they came while the
        // skb queue was empty), and those are older than every queued skb (`proto::packet_ring`).
        if let Some(skb) = eng.comp.paused.take() {
            return self.take_response(eng, rcu, skb);
        }
        let taken = self.responses.take(|next| {
            let before = eng.comp.psn;
            match next {
                // An ACK carries no data, so it never waits for pages.
                Next::Ring { bytes, len, .. } => self.handle_ack(eng, rcu, &bytes[..len]),
                // A read response whose payload is still in the responder's MR; it may wait
                // for pages of the requester's, at the ring's head. One whose MR is gone is
                // lost (`RefFront::with_packet`): the retransmit timer recovers.
                Next::Ref { hdr, front } => {
                    let waits =
                        front.with_packet(rcu, hdr, |pkt| self.handle_packet(eng, rcu, pkt));
                    if waits == Some(true) {
                        return false;
                    }
                }
                Next::Skb(skb) => return self.take_response(eng, rcu, skb),
            }
            self.response_progress(eng, before);
            true
        });
        if let Some(done) = taken {
            return done;
        }
        if !self.sq_has_wqes(eng) {
            eng.comp.timeout = false;
            self.check_sq_drained(eng);
            return false;
        }
        let head = eng.comp.consumer;
        let state = eng
            .sq
            .info_ref(head)
            .map_or(WqeState::Free, |info| info.state);
        match state {
            WqeState::Error(status) => {
                self.complete_wqe(eng, status);
                self.to_error(eng, None);
                true
            }
            WqeState::Done => {
                self.complete_wqe(eng, IB_WC_SUCCESS);
                true
            }
            // Unreliable transports complete once every packet is out.
            WqeState::Pending if self.qp_type != QpType::Rc => {
                self.complete_wqe(eng, IB_WC_SUCCESS);
                true
            }
            WqeState::Pending | WqeState::Processing if eng.comp.timeout => self.on_timeout(eng),
            _ => false,
        }
    }

    /// Handles a response taken from the skb queue; `false` if it waits for ODP pages, kept
    /// to be handled again when they are there ([`CompState::paused`]).
    fn take_response(self: &Arc<Self>, eng: &mut Engine, rcu: &rcu::Guard, skb: SkBuff) -> bool {
        let before = eng.comp.psn;
        if self.handle_response(eng, rcu, &skb) {
            eng.comp.paused = Some(skb);
            return false;
        }
        skb.consume();
        self.response_progress(eng, before);
        true
    }

    /// The QP leaves RTS (`modify_qp`): positive ACKs left in the ACK ring for the task's next
    /// run ([`QpShared::acks_quiet`]) are taken now, in the state they came in, so that a WQE
    /// they acknowledged is not flushed; from here every ACK runs the task.
    pub(crate) fn take_waiting_acks(self: &Arc<Self>, eng: &mut Engine) {
        if !self.acks_quiet.load(Ordering::Relaxed) {
            return;
        }
        self.responses
            .ring
            .with(|_| self.acks_quiet.store(false, Ordering::Relaxed));
        // A response waiting for pages is older than the ring's ACKs: they wait for it.
        if eng.comp.paused.is_some() || eng.comp.fault == FaultWait::Waiting {
            return;
        }
        let rcu = rcu::read_lock();
        for _ in 0..ACK_RING_LEN {
            if !self.take_ring_ack(eng, &rcu) {
                break;
            }
        }
    }

    /// Handles the oldest ACK of the ACK ring, if any; whether there was one.
    fn take_ring_ack(self: &Arc<Self>, eng: &mut Engine, rcu: &rcu::Guard) -> bool {
        if self.responses.ring.looks_empty() {
            return false;
        }
        let Some(ack) = self.responses.ring.with(|r| r.pop()) else {
            return false;
        };
        let before = eng.comp.psn;
        self.handle_ack(eng, rcu, ack.bytes());
        self.response_progress(eng, before);
        true
    }

    /// Handles an ACK of the ACK ring, its `bytes` taken out of it.
    #[inline]
    fn handle_ack(self: &Arc<Self>, eng: &mut Engine, rcu: &rcu::Guard, bytes: &[u8]) {
        // Read where it was parsed (moved out of the `Result`, it is copied: 128 bytes).
        if let Ok(pkt) = &Packet::parse(bytes) {
            self.handle_packet(eng, rcu, pkt);
        }
    }

    /// Whether responses are queued for the completer (its rings or its skb queue).
    pub(crate) fn responses_waiting(&self) -> bool {
        !self.responses.is_empty()
    }

    /// Whether a completer step would find nothing to do; `false` when unsure. A response
    /// queued later wakes the task itself; a timeout left set is cleared by a step.
    pub(crate) fn completer_idle(&self, eng: &Engine) -> bool {
        match eng.state() {
            QpState::Rts => {}
            // A step only empties the response queues: a receive-only QP (in RTR, as perftest's
            // servers are) would otherwise take a second, empty step after every request.
            QpState::Reset | QpState::Init | QpState::Rtr => return !self.responses_waiting(),
            _ => return false,
        }
        if eng.comp.fault == FaultWait::Waiting {
            return true;
        }
        if eng.comp.paused.is_some() || eng.comp.timeout || self.responses_waiting() {
            return false;
        }
        !self.head_completes_alone(eng)
    }

    /// Whether the WQE at the completer's index completes without a response: a local operation
    /// done, a WQE that failed here, an unreliable send all out.
    pub(crate) fn head_completes_alone(&self, eng: &Engine) -> bool {
        if !self.sq_has_wqes(eng) {
            return false;
        }
        let state = eng
            .sq
            .info_ref(eng.comp.consumer)
            .map_or(WqeState::Free, |info| info.state);
        match state {
            WqeState::Error(_) | WqeState::Done => true,
            WqeState::Pending => self.qp_type != QpType::Rc,
            _ => false,
        }
    }

    /// Acts on a response; `true` if it waits for pages of an ODP MR (nothing of it done but
    /// WQEs it completed already, which it will not complete again).
    fn handle_response(self: &Arc<Self>, eng: &mut Engine, rcu: &rcu::Guard, skb: &SkBuff) -> bool {
        let parsed = super::recv::parse_queued(skb);
        let Some(pkt) = &parsed else {
            return false;
        };
        self.handle_packet(eng, rcu, pkt)
    }

    /// [`Self::handle_response`] on a parsed response.
    fn handle_packet(
        self: &Arc<Self>,
        eng: &mut Engine,
        rcu: &rcu::Guard,
        pkt: &Packet<'_>,
    ) -> bool {
        // An ACK for every WQE up to its PSN; loop while one response completes several.
        for _ in 0..self.sq.geometry().num_slots() + 1 {
            let outcome = self.check_response(eng, rcu, pkt);
            match outcome {
                Outcome::Drop | Outcome::Consumed => return false,
                Outcome::CompleteAndRetry => {
                    self.complete_wqe(eng, IB_WC_SUCCESS);
                }
                Outcome::Complete => {
                    self.complete_wqe(eng, IB_WC_SUCCESS);
                    return false;
                }
                Outcome::Retry => {
                    self.retry(eng, false);
                    return false;
                }
                Outcome::Rnr(timer) => {
                    self.rnr_retry(eng, timer);
                    return false;
                }
                Outcome::Error(e) if self.await_fault(eng, Machine::Completer, &e) => return true,
                Outcome::Error(e) => {
                    self.complete_wqe(eng, e.status);
                    self.to_error(eng, None);
                    return false;
                }
            }
        }
        false
    }

    /// Whether the send queue holds a WQE not yet completed (the producer is user space's: its
    /// index is read masked).
    fn sq_has_wqes(&self, eng: &Engine) -> bool {
        let ends = self.sq.geometry().ends(
            QueueType::FromClient,
            eng.comp.consumer,
            self.sq.shared_producer(),
        );
        !ends.is_empty()
    }

    /// `check_psn` + `check_ack` + `do_read` / `do_atomic`: what `pkt` does to the oldest WQE.
    /// The decision is [`decide::check_response`]'s; this carries it out.
    fn check_response(&self, eng: &mut Engine, rcu: &rcu::Guard, pkt: &Packet<'_>) -> Outcome {
        if !self.sq_has_wqes(eng) {
            return Outcome::Drop;
        }
        let head = eng.comp.consumer;
        // What the decision reads of the WQE, not a copy of it: it is taken again below when a
        // response carries data for it.
        let Some(view) = eng.sq.info_ref(head).and_then(|info| {
            let wqe = info.wqe.as_ref()?;
            Some(decide::HeadWqe {
                state: info.state,
                wr_opcode: wqe.opcode,
                mask: wqe.mask,
                sent: info.sent,
                last_psn: info.last_psn,
            })
        }) else {
            return Outcome::Drop;
        };
        let response = decide::Response {
            psn: pkt.bth().psn,
            opcode: pkt.bth().opcode,
            mask: pkt.info().mask,
            syndrome: pkt.header::<Aeth>().map(|a| a.syndrome),
            has_atmack: pkt.header::<Atmack>().is_some(),
        };
        let check = decide::check_response(eng.comp.psn, &view, &response);
        if check.restores_retries(eng.comp.psn) {
            eng.restore_retries();
        }
        match check {
            Check::Drop => Outcome::Drop,
            Check::CompleteAndRetry => Outcome::CompleteAndRetry,
            Check::Retry => Outcome::Retry,
            Check::Error(status) => Outcome::Error(RxeError::wqe(status, Cause::Check)),
            Check::Read { comp_psn, end } => {
                let Some((wqe, rx_dma)) = eng
                    .sq
                    .info_ref(head)
                    .and_then(|i| Some((i.wqe.as_ref()?, i.rx_dma)))
                else {
                    return Outcome::Drop;
                };
                let slot = eng.sq.slot(head);
                let dma = match self.read_data(rcu, wqe, slot, rx_dma, pkt.payload()) {
                    Ok(dma) => dma,
                    Err(e) => return Outcome::Error(e),
                };
                if let Some(i) = eng.sq.info_mut(head) {
                    i.rx_dma = dma;
                }
                eng.comp.psn = comp_psn;
                if end {
                    Outcome::Complete
                } else {
                    Outcome::Consumed
                }
            }
            Check::Atomic { comp_psn } => {
                let Some(ack) = pkt.header::<Atmack>() else {
                    return Outcome::Drop;
                };
                // The original value goes through the SGEs as C's `do_atomic` copies it: SGEs
                // of fewer than 8 bytes are `LOC_PROT_ERR`.
                let Some(wqe) = eng.sq.info_ref(head).and_then(|i| i.wqe.as_ref()) else {
                    return Outcome::Drop;
                };
                let mut dma = DmaCursor::new(wqe.length);
                let orig = ack.orig.to_ne_bytes();
                if let Err(e) = self.scatter(rcu, wqe, eng.sq.slot(head), &mut dma, &orig) {
                    return Outcome::Error(e);
                }
                eng.comp.psn = comp_psn;
                Outcome::Complete
            }
            Check::Ack { comp_psn, complete } => {
                eng.comp.psn = comp_psn;
                if complete {
                    Outcome::Complete
                } else {
                    Outcome::Consumed
                }
            }
            Check::Rnr { timer, comp_psn } => {
                eng.comp.psn = comp_psn;
                Outcome::Rnr(timer)
            }
            Check::SeqNak { comp_psn } => {
                // Counted only when the NAK moves `comp.psn` forward, as C.
                if comp_psn != eng.comp.psn {
                    self.dev.count(Counter::RcvSeqErr);
                }
                eng.comp.psn = comp_psn;
                Outcome::Retry
            }
        }
    }

    /// Writes read response data into the WQE's SGEs from `dma` on (`do_read`); the cursor
    /// after it.
    fn read_data(
        &self,
        rcu: &rcu::Guard,
        wqe: &SendWqe,
        slot: &[u8],
        mut dma: DmaCursor,
        payload: &Parts<'_>,
    ) -> Result<DmaCursor, RxeError> {
        for data in payload.iter() {
            self.scatter(rcu, wqe, slot, &mut dma, data)?;
        }
        Ok(dma)
    }

    /// Writes `data` into the WQE's SGEs from `dma` on (C `copy_data` to the MRs); past the
    /// SGEs' end it is `LOC_PROT_ERR`.
    fn scatter(
        &self,
        rcu: &rcu::Guard,
        wqe: &SendWqe,
        slot: &[u8],
        dma: &mut DmaCursor,
        data: &[u8],
    ) -> Result<(), RxeError> {
        write_sges(self, rcu, Sges::Send(slot, wqe.num_sge), dma, data).map_err(|e| match e {
            WalkError::Sges(e) => RxeError::local_protection(Cause::Dma(e)),
            WalkError::Mem(e) => e,
        })
    }

    /// Completes the oldest WQE (`do_complete`): a CQE if signalled or failed, then frees its
    /// slot and publishes the consumer index.
    pub(crate) fn complete_wqe(&self, eng: &mut Engine, status: WcStatus) {
        let head = eng.comp.consumer;
        // What is read of the WQE's info, in place (it is reset below; a copy of it is 152
        // bytes).
        let (wqe, rd_atomic_credit, sent, last_psn) =
            eng.sq.info_ref(head).map_or((None, false, false, 0), |i| {
                (
                    i.wqe
                        .as_ref()
                        .map(|w| (w.wr_id, w.opcode, w.send_flags, w.length, w.mask)),
                    i.rd_atomic_credit,
                    i.sent,
                    i.last_psn,
                )
            });
        let g = *self.sq.geometry();
        let slot = eng.sq.slot(head);
        let (wr_id, opcode, flags, length, mask) = match wqe {
            Some(fields) => fields,
            // Unparseable WQEs report the wr_id their bytes hold.
            None => (
                slot.first_chunk::<8>()
                    .map_or(0, |b| u64::from_ne_bytes(*b)),
                0,
                0,
                0,
                WrMask::NONE,
            ),
        };
        let (wc_opcode, wc_flags, byte_len) = wqe::send_cqe_fields(opcode, length, status);
        let wc =
            (!status.is_success() || flags & IB_SEND_SIGNALED != 0 || self.sq_sig_all).then(|| {
                UverbsWc {
                    wr_id,
                    status,
                    opcode: wc_opcode,
                    wc_flags,
                    byte_len,
                    qp_num: self.qpn,
                    ..Default::default()
                }
            });
        if rd_atomic_credit {
            eng.req.rd_atomic += 1;
        }
        if status.is_success() && mask.contains(WrMask::SEND) {
            self.dev.count(Counter::RdmaSend);
        }
        if let Some(i) = eng.sq.info_mut(head) {
            *i = Default::default();
        }
        // A completed WQE is acknowledged to its last PSN even when a later PSN did it
        // (implicitly): the completer expects nothing before the next one. (Left behind, a
        // later retry would rewind the requester into PSNs the responder already has, shifting
        // the next message's packets.)
        if sent && psn_diff(eng.comp.psn, psn_add(last_psn, 1)) < 0 {
            eng.comp.psn = psn_add(last_psn, 1);
        }
        // The requester never stays behind the consumer: if it was (re)sending this WQE, it
        // goes on with the next one at the PSN after this one's last, the PSN the responder
        // expects next (sending the next WQE under this one's PSNs would make it a duplicate).
        if eng.req.wqe_index == head {
            eng.req.wqe_index = g.next_index(head);
            eng.req.opcode = None;
            if sent && psn_diff(eng.req.psn, psn_add(last_psn, 1)) < 0 {
                eng.req.psn = psn_add(last_psn, 1);
            }
        }
        // The slot is free before the CQE says so (as C): a user that posts on seeing the
        // completion of a full send queue's WQE must find room.
        eng.comp.consumer = g.next_index(head);
        self.sq.publish_consumer(eng.comp.consumer);
        if let Some(wc) = wc {
            if self.scq.post(&wc, false).is_err() {
                self.to_error(eng, Some(IbEvent::QpFatal));
            }
        }
        // Progress: a fresh retry budget (C resets on every ACK).
        eng.restore_retries();
    }

    /// In the error state every WQE left completes with `WR_FLUSH_ERR` (`flush_send_queue`).
    fn flush_send_queue(&self, eng: &mut Engine) -> bool {
        self.responses.purge();
        let g = *self.sq.geometry();
        let mut progress = false;
        for _ in 0..g.num_slots() {
            let ends = g.ends(
                QueueType::FromClient,
                eng.comp.consumer,
                self.sq.shared_producer(),
            );
            if ends.is_empty() {
                break;
            }
            let head = eng.comp.consumer;
            let status = match eng.sq.info(head).state {
                // Never read: copy it in to learn its wr_id and opcode.
                WqeState::Free => {
                    self.fetch_wqe(eng, head);
                    IB_WC_WR_FLUSH_ERR
                }
                WqeState::Error(s) => s,
                _ => IB_WC_WR_FLUSH_ERR,
            };
            self.complete_wqe(eng, status);
            progress = true;
        }
        progress
    }
}

// ---------------------------------------------------------------------------------------------
// Retransmission: the retransmit timer, retries and their budgets, the go-back-N rewind.
// ---------------------------------------------------------------------------------------------

impl Engine {
    /// A QP timer expired (`retransmit_timer`, `rnr_nak_timer`): the next run of the task
    /// retries, or ends the RNR wait.
    pub(crate) fn timer_expired(&mut self, id: u8) {
        if id == RETRANSMIT_TIMER {
            self.comp.timeout = true;
        } else {
            self.req.rnr_wait = false;
        }
    }

    /// A fresh retry and RNR retry budget (C `reset_retry_counters`): on entering RTS and on
    /// every progress.
    pub(crate) fn restore_retries(&mut self) {
        self.comp.retry_cnt = self.attrs.retry_cnt;
        self.comp.rnr_retry = self.attrs.rnr_retry;
    }
}

impl QpShared {
    /// (Re)arms the retransmit timer for `timeout` ([`decide::retransmit_usecs`]), if set.
    fn arm_retransmit(self: &Arc<Self>, timeout: u8) {
        if let Some(usecs) = decide::retransmit_usecs(timeout) {
            self.retransmit_timer
                .arm(self, usecs_to_jiffies(usecs).max(1));
        }
    }

    /// The requester sent an RC packet: the timer runs from it, and an expiry flagged before
    /// it is stale.
    pub(crate) fn request_sent(self: &Arc<Self>, eng: &mut Engine) {
        eng.comp.timeout = false;
        self.arm_retransmit(eng.attrs.timeout);
    }

    /// A response moved `comp.psn` from `before`: progress restarts the retransmit timer while
    /// packets are outstanding.
    fn response_progress(self: &Arc<Self>, eng: &mut Engine, before: u32) {
        if eng.comp.psn != before && decide::outstanding(eng.req.psn, eng.comp.psn) {
            eng.comp.timeout = false;
            self.arm_retransmit(eng.attrs.timeout);
        }
    }

    /// The retransmit timer expired with a WQE in flight. Timeouts may be stale (the timer is
    /// pushed on, not stopped): retry only with packets outstanding.
    fn on_timeout(&self, eng: &mut Engine) -> bool {
        eng.comp.timeout = false;
        if decide::outstanding(eng.req.psn, eng.comp.psn) {
            self.retry(eng, true)
        } else {
            false
        }
    }

    /// `req_retry`: resend from the oldest unacknowledged PSN; `RETRY_EXC_ERR` when the retry
    /// budget is spent (7 = infinite). A response asks for one only if no retry started since
    /// the last progress; a timeout always does ([`decide::retry`]).
    fn retry(&self, eng: &mut Engine, timeout: bool) -> bool {
        let decision = decide::retry(
            eng.comp.retry_cnt,
            eng.comp.retry_psn,
            eng.comp.psn,
            timeout,
        );
        match decision {
            decide::Retry::Ignore => false,
            decide::Retry::Exceeded => {
                eng.comp.retry_psn = Some(eng.comp.psn);
                self.dev.count(Counter::RetryExceeded);
                self.complete_wqe(eng, IB_WC_RETRY_EXC_ERR);
                self.to_error(eng, None);
                true
            }
            decide::Retry::Rewind { retries_left } => {
                eng.comp.retry_psn = Some(eng.comp.psn);
                eng.comp.retry_cnt = retries_left;
                self.dev.count(Counter::CompRetry);
                self.rewind(eng);
                true
            }
        }
    }

    fn rnr_retry(self: &Arc<Self>, eng: &mut Engine, timer: u8) {
        let Some(left) = decide::spend_retry(eng.comp.rnr_retry) else {
            self.dev.count(Counter::RnrRetryExceeded);
            self.complete_wqe(eng, IB_WC_RNR_RETRY_EXC_ERR);
            self.to_error(eng, None);
            return;
        };
        eng.comp.rnr_retry = left;
        self.dev.count(Counter::RcvRnr);
        self.rewind(eng);
        eng.req.rnr_wait = true;
        eng.req.rnr_probe = Some(eng.comp.psn);
        let usecs = crate::proto::hdr::rnr_timer_usec(timer);
        self.rnr_timer.arm(self, usecs_to_jiffies(usecs).max(1));
    }

    /// Rewinds the requester to `comp.psn`: every WQE copied in so far, from the oldest, is
    /// resent from the packet the responder expects (`req_retry`'s per-WQE reset), as
    /// [`decide::rewind_wqe`] plans it. That includes the one the requester is in the middle
    /// of: left half-sent, its resend would start mid-data under its first PSN and shift every
    /// PSN after it.
    fn rewind(&self, eng: &mut Engine) {
        let g = *self.sq.geometry();
        let mtu = eng.mtu(self.dev.active_mtu_bytes());
        let comp_psn = eng.comp.psn;
        let mut i = eng.comp.consumer;
        let fetched = g
            .ends(QueueType::FromClient, i, self.sq.shared_producer())
            .count();
        for _ in 0..fetched {
            let Some(info) = eng.sq.info_mut(i) else {
                break;
            };
            let Some(wqe) = info.wqe else { break };
            let view = decide::RewindWqe {
                state: info.state,
                started: info.started,
                first_psn: info.first_psn,
                length: wqe.length,
                mask: wqe.mask,
            };
            let resend = match decide::rewind_wqe(comp_psn, i == eng.comp.consumer, &view, mtu) {
                RewindStep::Keep => {
                    i = g.next_index(i);
                    continue;
                }
                RewindStep::Stop => break,
                RewindStep::Resend(resend) => resend,
            };
            info.state = WqeState::Processing;
            info.dma = wqe::DmaCursor::new(wqe.length);
            info.rx_dma = wqe::DmaCursor::new(wqe.length);
            info.read_offset = 0;
            match resend {
                Resend::FromStart => {}
                Resend::ReadFrom { skip } => {
                    // Resume the read after the responses that arrived.
                    let slot_bytes = eng.sq.slot(i);
                    let mut rx = wqe::DmaCursor::new(wqe.length);
                    if rx
                        .advance(|k| wqe::sge(slot_bytes, k), wqe.num_sge, skip)
                        .is_ok()
                    {
                        if let Some(info) = eng.sq.info_mut(i) {
                            info.rx_dma = rx;
                            info.read_offset = skip;
                        }
                    }
                }
                Resend::DataFrom { skip } => {
                    let slot_bytes = eng.sq.slot(i);
                    let mut dma = wqe::DmaCursor::new(wqe.length);
                    let ok = match wqe.data {
                        wqe::DataKind::Sges => dma
                            .advance(|k| wqe::sge(slot_bytes, k), wqe.num_sge, skip)
                            .is_ok(),
                        _ => dma.next_inline(skip).is_ok(),
                    };
                    if let Some(info) = eng.sq.info_mut(i) {
                        if ok {
                            info.dma = dma;
                        }
                    }
                }
            }
            i = g.next_index(i);
        }
        eng.req.wqe_index = eng.comp.consumer;
        eng.req.psn = comp_psn;
        // A partly acknowledged WQE continues with a MIDDLE packet.
        let head = eng.sq.info(eng.comp.consumer);
        eng.req.opcode = head
            .wqe
            .and_then(|w| decide::resume_opcode(self.qp_type, w.mask, w.length, head.dma.resid));
    }
}
