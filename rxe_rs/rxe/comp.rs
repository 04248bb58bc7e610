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
    step::Step,
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
        // The completer sends nothing: the outbox stays empty.
        let mut out = Outbox::new();
        let mut step = Step::new(self, eng, &rcu, &mut out);
        for _ in 0..ACK_RING_LEN {
            if !step.take_ring_ack() {
                break;
            }
        }
    }

    /// Whether responses are queued for the completer (its rings or its skb queue).
    pub(crate) fn responses_waiting(&self) -> bool {
        !self.responses.is_empty()
    }
}

impl Step<'_> {
    /// One step of the completer.
    pub(crate) fn completer(&mut self) -> bool {
        match self.eng.state() {
            QpState::Err => {
                self.eng.comp.paused = None;
                self.eng.comp.fault = FaultWait::None;
                return self.flush_send_queue();
            }
            QpState::Reset | QpState::Init | QpState::Rtr => {
                self.qp.responses.purge();
                self.eng.comp.paused = None;
                return false;
            }
            _ => {}
        }
        if self.eng.comp.fault == FaultWait::Waiting {
            return false;
        }
        // A response waiting for pages is older than the ring's ACKs (they came while the
        // skb queue was empty), and those are older than every queued skb (`proto::packet_ring`).
        if let Some(skb) = self.eng.comp.paused.take() {
            return self.take_response(skb);
        }
        let taken = self.qp.responses.take(|next| {
            let before = self.eng.comp.psn;
            match next {
                // An ACK carries no data, so it never waits for pages.
                Next::Ring { bytes, len, .. } => self.handle_ack(&bytes[..len]),
                // A read response whose payload is still in the responder's MR; it may wait
                // for pages of the requester's, at the ring's head. One whose MR is gone is
                // lost (`RefFront::with_packet`): the retransmit timer recovers.
                Next::Ref { hdr, front } => {
                    let waits =
                        front.with_packet(self.rcu, hdr, |pkt| self.handle_parsed_response(pkt));
                    if waits == Some(true) {
                        return false;
                    }
                }
                Next::Skb(skb) => return self.take_response(skb),
            }
            self.response_progress(before);
            true
        });
        if let Some(done) = taken {
            return done;
        }
        if !self.sq_has_wqes() {
            self.eng.comp.timeout = false;
            self.check_sq_drained();
            return false;
        }
        let head = self.eng.comp.consumer;
        let state = self
            .eng
            .sq
            .info_ref(head)
            .map_or(WqeState::Free, |info| info.state);
        match state {
            WqeState::Error(status) => {
                self.complete_wqe(status);
                self.qp.to_error(self.eng, None);
                true
            }
            WqeState::Done => {
                self.complete_wqe(IB_WC_SUCCESS);
                true
            }
            // Unreliable transports complete once every packet is out.
            WqeState::Pending if self.qp.qp_type != QpType::Rc => {
                self.complete_wqe(IB_WC_SUCCESS);
                true
            }
            WqeState::Pending | WqeState::Processing if self.eng.comp.timeout => self.on_timeout(),
            _ => false,
        }
    }

    /// Handles a response taken from the skb queue; `false` if it waits for ODP pages, kept
    /// to be handled again when they are there ([`CompState::paused`]).
    fn take_response(&mut self, skb: SkBuff) -> bool {
        let before = self.eng.comp.psn;
        if self.handle_response(&skb) {
            self.eng.comp.paused = Some(skb);
            return false;
        }
        skb.consume();
        self.response_progress(before);
        true
    }

    /// Handles the oldest ACK of the ACK ring, if any; whether there was one.
    fn take_ring_ack(&mut self) -> bool {
        if self.qp.responses.ring.looks_empty() {
            return false;
        }
        let Some(ack) = self.qp.responses.ring.with(|r| r.pop()) else {
            return false;
        };
        let before = self.eng.comp.psn;
        self.handle_ack(ack.bytes());
        self.response_progress(before);
        true
    }

    /// Handles an ACK of the ACK ring, its `bytes` taken out of it.
    #[inline]
    fn handle_ack(&mut self, bytes: &[u8]) {
        // Read where it was parsed (moved out of the `Result`, it is copied: 128 bytes).
        if let Ok(pkt) = &Packet::parse(bytes) {
            self.handle_parsed_response(pkt);
        }
    }

    /// Whether a completer step would find nothing to do; `false` when unsure. A response
    /// queued later wakes the task itself; a timeout left set is cleared by a step.
    pub(crate) fn completer_idle(&self) -> bool {
        match self.eng.state() {
            QpState::Rts => {}
            // A step only empties the response queues: a receive-only QP (in RTR, as perftest's
            // servers are) would otherwise take a second, empty step after every request.
            QpState::Reset | QpState::Init | QpState::Rtr => return !self.qp.responses_waiting(),
            _ => return false,
        }
        if self.eng.comp.fault == FaultWait::Waiting {
            return true;
        }
        if self.eng.comp.paused.is_some() || self.eng.comp.timeout || self.qp.responses_waiting() {
            return false;
        }
        !self.head_completes_alone()
    }

    /// Whether the WQE at the completer's index completes without a response: a local operation
    /// done, a WQE that failed here, an unreliable send all out.
    pub(crate) fn head_completes_alone(&self) -> bool {
        if !self.sq_has_wqes() {
            return false;
        }
        let state = self
            .eng
            .sq
            .info_ref(self.eng.comp.consumer)
            .map_or(WqeState::Free, |info| info.state);
        match state {
            WqeState::Error(_) | WqeState::Done => true,
            WqeState::Pending => self.qp.qp_type != QpType::Rc,
            _ => false,
        }
    }

    /// Acts on a response; `true` if it waits for pages of an ODP MR (nothing of it done but
    /// WQEs it completed already, which it will not complete again).
    fn handle_response(&mut self, skb: &SkBuff) -> bool {
        let parsed = super::recv::parse_queued(skb);
        let Some(pkt) = &parsed else {
            return false;
        };
        self.handle_parsed_response(pkt)
    }

    /// [`Self::handle_response`] on a parsed response.
    fn handle_parsed_response(&mut self, pkt: &Packet<'_>) -> bool {
        // An ACK for every WQE up to its PSN; loop while one response completes several.
        for _ in 0..self.qp.sq.geometry().num_slots() + 1 {
            let outcome = self.check_response(pkt);
            match outcome {
                Outcome::Drop | Outcome::Consumed => return false,
                Outcome::CompleteAndRetry => {
                    self.complete_wqe(IB_WC_SUCCESS);
                }
                Outcome::Complete => {
                    self.complete_wqe(IB_WC_SUCCESS);
                    return false;
                }
                Outcome::Retry => {
                    self.retry(false);
                    return false;
                }
                Outcome::Rnr(timer) => {
                    self.rnr_retry(timer);
                    return false;
                }
                Outcome::Error(e) if self.qp.await_fault(self.eng, Machine::Completer, &e) => {
                    return true
                }
                Outcome::Error(e) => {
                    self.complete_wqe(e.status);
                    self.qp.to_error(self.eng, None);
                    return false;
                }
            }
        }
        false
    }

    /// Whether the send queue holds a WQE not yet completed (the producer is user space's: its
    /// index is read masked).
    fn sq_has_wqes(&self) -> bool {
        let ends = self.qp.sq.geometry().ends(
            QueueType::FromClient,
            self.eng.comp.consumer,
            self.qp.sq.shared_producer(),
        );
        !ends.is_empty()
    }

    /// `check_psn` + `check_ack` + `do_read` / `do_atomic`: what `pkt` does to the oldest WQE.
    /// The decision is [`decide::check_response`]'s; this carries it out.
    fn check_response(&mut self, pkt: &Packet<'_>) -> Outcome {
        if !self.sq_has_wqes() {
            return Outcome::Drop;
        }
        let head = self.eng.comp.consumer;
        // What the decision reads of the WQE, not a copy of it: it is taken again below when a
        // response carries data for it.
        let Some(view) = self.eng.sq.info_ref(head).and_then(|info| {
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
        let check = decide::check_response(self.eng.comp.psn, &view, &response);
        if check.restores_retries(self.eng.comp.psn) {
            self.eng.restore_retries();
        }
        match check {
            Check::Drop => Outcome::Drop,
            Check::CompleteAndRetry => Outcome::CompleteAndRetry,
            Check::Retry => Outcome::Retry,
            Check::Error(status) => Outcome::Error(RxeError::wqe(status, Cause::Check)),
            Check::Read { comp_psn, end } => {
                let Some((wqe, rx_dma)) = self
                    .eng
                    .sq
                    .info_ref(head)
                    .and_then(|i| Some((i.wqe.as_ref()?, i.rx_dma)))
                else {
                    return Outcome::Drop;
                };
                let slot = self.eng.sq.slot(head);
                let dma = match self.read_data(wqe, slot, rx_dma, pkt.payload()) {
                    Ok(dma) => dma,
                    Err(e) => return Outcome::Error(e),
                };
                if let Some(i) = self.eng.sq.info_mut(head) {
                    i.rx_dma = dma;
                }
                self.eng.comp.psn = comp_psn;
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
                let Some(wqe) = self.eng.sq.info_ref(head).and_then(|i| i.wqe.as_ref()) else {
                    return Outcome::Drop;
                };
                let mut dma = DmaCursor::new(wqe.length);
                let orig = ack.orig.to_ne_bytes();
                if let Err(e) = self.scatter(wqe, self.eng.sq.slot(head), &mut dma, &orig) {
                    return Outcome::Error(e);
                }
                self.eng.comp.psn = comp_psn;
                Outcome::Complete
            }
            Check::Ack { comp_psn, complete } => {
                self.eng.comp.psn = comp_psn;
                if complete {
                    Outcome::Complete
                } else {
                    Outcome::Consumed
                }
            }
            Check::Rnr { timer, comp_psn } => {
                self.eng.comp.psn = comp_psn;
                Outcome::Rnr(timer)
            }
            Check::SeqNak { comp_psn } => {
                // Counted only when the NAK moves `comp.psn` forward, as C.
                if comp_psn != self.eng.comp.psn {
                    self.qp.dev.count(Counter::RcvSeqErr);
                }
                self.eng.comp.psn = comp_psn;
                Outcome::Retry
            }
        }
    }

    /// Writes read response data into the WQE's SGEs from `dma` on (`do_read`); the cursor
    /// after it.
    fn read_data(
        &self,
        wqe: &SendWqe,
        slot: &[u8],
        mut dma: DmaCursor,
        payload: &Parts<'_>,
    ) -> Result<DmaCursor, RxeError> {
        for data in payload.iter() {
            self.scatter(wqe, slot, &mut dma, data)?;
        }
        Ok(dma)
    }

    /// Writes `data` into the WQE's SGEs from `dma` on (C `copy_data` to the MRs); past the
    /// SGEs' end it is `LOC_PROT_ERR`.
    fn scatter(
        &self,
        wqe: &SendWqe,
        slot: &[u8],
        dma: &mut DmaCursor,
        data: &[u8],
    ) -> Result<(), RxeError> {
        write_sges(self.qp, self.rcu, Sges::Send(slot, wqe.num_sge), dma, data).map_err(|e| match e
        {
            WalkError::Sges(e) => RxeError::local_protection(Cause::Dma(e)),
            WalkError::Mem(e) => e,
        })
    }

    /// Completes the oldest WQE (`do_complete`): a CQE if signalled or failed, then frees its
    /// slot and publishes the consumer index.
    pub(crate) fn complete_wqe(&mut self, status: WcStatus) {
        let head = self.eng.comp.consumer;
        // What is read of the WQE's info, in place (it is reset below; a copy of it is 152
        // bytes).
        let (wqe, rd_atomic_credit, sent, last_psn) =
            self.eng
                .sq
                .info_ref(head)
                .map_or((None, false, false, 0), |i| {
                    (
                        i.wqe
                            .as_ref()
                            .map(|w| (w.wr_id, w.opcode, w.send_flags, w.length, w.mask)),
                        i.rd_atomic_credit,
                        i.sent,
                        i.last_psn,
                    )
                });
        let g = *self.qp.sq.geometry();
        let slot = self.eng.sq.slot(head);
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
        let wc = (!status.is_success() || flags & IB_SEND_SIGNALED != 0 || self.qp.sq_sig_all)
            .then(|| UverbsWc {
                wr_id,
                status,
                opcode: wc_opcode,
                wc_flags,
                byte_len,
                qp_num: self.qp.qpn,
                ..Default::default()
            });
        if rd_atomic_credit {
            self.eng.req.rd_atomic += 1;
        }
        if status.is_success() && mask.contains(WrMask::SEND) {
            self.qp.dev.count(Counter::RdmaSend);
        }
        if let Some(i) = self.eng.sq.info_mut(head) {
            *i = Default::default();
        }
        // A completed WQE is acknowledged to its last PSN even when a later PSN did it
        // (implicitly): the completer expects nothing before the next one. (Left behind, a
        // later retry would rewind the requester into PSNs the responder already has, shifting
        // the next message's packets.)
        if sent && psn_diff(self.eng.comp.psn, psn_add(last_psn, 1)) < 0 {
            self.eng.comp.psn = psn_add(last_psn, 1);
        }
        // The requester never stays behind the consumer: if it was (re)sending this WQE, it
        // goes on with the next one at the PSN after this one's last, the PSN the responder
        // expects next (sending the next WQE under this one's PSNs would make it a duplicate).
        if self.eng.req.wqe_index == head {
            self.eng.req.wqe_index = g.next_index(head);
            self.eng.req.opcode = None;
            if sent && psn_diff(self.eng.req.psn, psn_add(last_psn, 1)) < 0 {
                self.eng.req.psn = psn_add(last_psn, 1);
            }
        }
        // The slot is free before the CQE says so (as C): a user that posts on seeing the
        // completion of a full send queue's WQE must find room.
        self.eng.comp.consumer = g.next_index(head);
        self.qp.sq.publish_consumer(self.eng.comp.consumer);
        if let Some(wc) = wc {
            if self.qp.scq.post(&wc, false).is_err() {
                self.qp.to_error(self.eng, Some(IbEvent::QpFatal));
            }
        }
        // Progress: a fresh retry budget (C resets on every ACK).
        self.eng.restore_retries();
    }

    /// In the error state every WQE left completes with `WR_FLUSH_ERR` (`flush_send_queue`).
    fn flush_send_queue(&mut self) -> bool {
        self.qp.responses.purge();
        let g = *self.qp.sq.geometry();
        let mut progress = false;
        for _ in 0..g.num_slots() {
            let ends = g.ends(
                QueueType::FromClient,
                self.eng.comp.consumer,
                self.qp.sq.shared_producer(),
            );
            if ends.is_empty() {
                break;
            }
            let head = self.eng.comp.consumer;
            let status = match self.eng.sq.info(head).state {
                // Never read: copy it in to learn its wr_id and opcode.
                WqeState::Free => {
                    self.fetch_wqe(head);
                    IB_WC_WR_FLUSH_ERR
                }
                WqeState::Error(s) => s,
                _ => IB_WC_WR_FLUSH_ERR,
            };
            self.complete_wqe(status);
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

impl Step<'_> {
    /// (Re)arms the retransmit timer for `timeout` ([`decide::retransmit_usecs`]), if set.
    fn arm_retransmit(&self, timeout: u8) {
        if let Some(usecs) = decide::retransmit_usecs(timeout) {
            self.qp
                .retransmit_timer
                .arm(self.qp, usecs_to_jiffies(usecs).max(1));
        }
    }

    /// The requester sent an RC packet: the timer runs from it, and an expiry flagged before
    /// it is stale.
    pub(crate) fn request_sent(&mut self) {
        self.eng.comp.timeout = false;
        self.arm_retransmit(self.eng.attrs.timeout);
    }

    /// A response moved `comp.psn` from `before`: progress restarts the retransmit timer while
    /// packets are outstanding.
    fn response_progress(&mut self, before: u32) {
        if self.eng.comp.psn != before && decide::outstanding(self.eng.req.psn, self.eng.comp.psn) {
            self.eng.comp.timeout = false;
            self.arm_retransmit(self.eng.attrs.timeout);
        }
    }

    /// The retransmit timer expired with a WQE in flight. Timeouts may be stale (the timer is
    /// pushed on, not stopped): retry only with packets outstanding.
    fn on_timeout(&mut self) -> bool {
        self.eng.comp.timeout = false;
        if decide::outstanding(self.eng.req.psn, self.eng.comp.psn) {
            self.retry(true)
        } else {
            false
        }
    }

    /// `req_retry`: resend from the oldest unacknowledged PSN; `RETRY_EXC_ERR` when the retry
    /// budget is spent (7 = infinite). A response asks for one only if no retry started since
    /// the last progress; a timeout always does ([`decide::retry`]).
    fn retry(&mut self, timeout: bool) -> bool {
        let decision = decide::retry(
            self.eng.comp.retry_cnt,
            self.eng.comp.retry_psn,
            self.eng.comp.psn,
            timeout,
        );
        match decision {
            decide::Retry::Ignore => false,
            decide::Retry::Exceeded => {
                self.eng.comp.retry_psn = Some(self.eng.comp.psn);
                self.qp.dev.count(Counter::RetryExceeded);
                self.complete_wqe(IB_WC_RETRY_EXC_ERR);
                self.qp.to_error(self.eng, None);
                true
            }
            decide::Retry::Rewind { retries_left } => {
                self.eng.comp.retry_psn = Some(self.eng.comp.psn);
                self.eng.comp.retry_cnt = retries_left;
                self.qp.dev.count(Counter::CompRetry);
                self.rewind();
                true
            }
        }
    }

    fn rnr_retry(&mut self, timer: u8) {
        let Some(left) = decide::spend_retry(self.eng.comp.rnr_retry) else {
            self.qp.dev.count(Counter::RnrRetryExceeded);
            self.complete_wqe(IB_WC_RNR_RETRY_EXC_ERR);
            self.qp.to_error(self.eng, None);
            return;
        };
        self.eng.comp.rnr_retry = left;
        self.qp.dev.count(Counter::RcvRnr);
        self.rewind();
        self.eng.req.rnr_wait = true;
        self.eng.req.rnr_probe = Some(self.eng.comp.psn);
        let usecs = crate::proto::hdr::rnr_timer_usec(timer);
        self.qp
            .rnr_timer
            .arm(self.qp, usecs_to_jiffies(usecs).max(1));
    }

    /// Rewinds the requester to `comp.psn`: every WQE copied in so far, from the oldest, is
    /// resent from the packet the responder expects (`req_retry`'s per-WQE reset), as
    /// [`decide::rewind_wqe`] plans it. That includes the one the requester is in the middle
    /// of: left half-sent, its resend would start mid-data under its first PSN and shift every
    /// PSN after it.
    fn rewind(&mut self) {
        let g = *self.qp.sq.geometry();
        let mtu = self.eng.mtu(self.qp.dev.active_mtu_bytes());
        let comp_psn = self.eng.comp.psn;
        let mut i = self.eng.comp.consumer;
        let fetched = g
            .ends(QueueType::FromClient, i, self.qp.sq.shared_producer())
            .count();
        for _ in 0..fetched {
            let Some(info) = self.eng.sq.info_mut(i) else {
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
            let resend = match decide::rewind_wqe(comp_psn, i == self.eng.comp.consumer, &view, mtu)
            {
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
                    let slot_bytes = self.eng.sq.slot(i);
                    let mut rx = wqe::DmaCursor::new(wqe.length);
                    if rx
                        .advance(|k| wqe::sge(slot_bytes, k), wqe.num_sge, skip)
                        .is_ok()
                    {
                        if let Some(info) = self.eng.sq.info_mut(i) {
                            info.rx_dma = rx;
                            info.read_offset = skip;
                        }
                    }
                }
                Resend::DataFrom { skip } => {
                    let slot_bytes = self.eng.sq.slot(i);
                    let mut dma = wqe::DmaCursor::new(wqe.length);
                    let ok = match wqe.data {
                        wqe::DataKind::Sges => dma
                            .advance(|k| wqe::sge(slot_bytes, k), wqe.num_sge, skip)
                            .is_ok(),
                        _ => dma.next_inline(skip).is_ok(),
                    };
                    if let Some(info) = self.eng.sq.info_mut(i) {
                        if ok {
                            info.dma = dma;
                        }
                    }
                }
            }
            i = g.next_index(i);
        }
        self.eng.req.wqe_index = self.eng.comp.consumer;
        self.eng.req.psn = comp_psn;
        // A partly acknowledged WQE continues with a MIDDLE packet.
        let head = self.eng.sq.info(self.eng.comp.consumer);
        self.eng.req.opcode = head
            .wqe
            .and_then(|w| decide::resume_opcode(self.qp.qp_type, w.mask, w.length, head.dma.resid));
    }
}
