// SPDX-License-Identifier: GPL-2.0

//! One step of a QP's machines ([`Step`]): what every stage of the requester, completer and
//! responder works with, held in one place so that no stage passes it on to the next.

use super::{engine::Engine, outbox::Outbox, qp::QpShared};
use core::sync::atomic::Ordering;
use kernel::sync::{rcu, Arc};

/// The context of one step, the receiver of every stage of the three machines (`req.rs`,
/// `comp.rs`, `resp.rs`, `local.rs`): the QP, its engine state locked for the step, the RCU
/// read-side section the step's key lookups live in, and the outbox its packets go to.
///
/// The C driver's stages take the QP and a packet info and reach everything from there, taking
/// the QP's locks inside them; here the engine lock is taken once a step, and a `Step` borrows
/// the engine mutably, which only that lock hands out: no stage runs without it held.
pub(crate) struct Step<'a> {
    pub(crate) qp: &'a Arc<QpShared>,
    pub(crate) eng: &'a mut Engine,
    pub(crate) rcu: &'a rcu::Guard,
    pub(crate) out: &'a mut Outbox,
}

impl<'a> Step<'a> {
    pub(crate) fn new(
        qp: &'a Arc<QpShared>,
        eng: &'a mut Engine,
        rcu: &'a rcu::Guard,
        out: &'a mut Outbox,
    ) -> Self {
        Self { qp, eng, rcu, out }
    }
}

impl Step<'_> {
    /// The machines of one step: each called up to [`Outbox::CAPACITY`] times while it has
    /// more and the outbox has room, the completer once more for a WQE the requester finished
    /// that needs no response; whether a next step may find work (see `QpShared::step`).
    pub(crate) fn machines(&mut self) -> bool {
        // A machine steps again only when it has more: a call that finds nothing costs more
        // than the question. The requester goes on within a message only (perftest rings a
        // doorbell per WQE, whose inline run takes it).
        let mut progress = false;
        for _ in 0..Outbox::CAPACITY {
            if !self.responder() {
                break;
            }
            progress = true;
            if self.responder_idle() {
                break;
            }
        }
        for _ in 0..Outbox::CAPACITY {
            if !self.completer() {
                break;
            }
            progress = true;
            if !self.qp.responses_waiting() {
                break;
            }
        }
        let mut requested = false;
        for _ in 0..Outbox::CAPACITY {
            if !self.requester() {
                break;
            }
            requested = true;
            if !self.mid_message() {
                break;
            }
        }
        progress |= requested;
        // As C's sender, which runs its completer right after its requester: a WQE the
        // requester finished without a response (a local operation, a WQE failed here, an
        // unreliable send) completes in this step, not after the next step's responder, which
        // could move the QP to error first and flush it.
        if requested && self.head_completes_alone() {
            self.completer();
        }
        // Whether the ACKs looped back to this QP may wait for its next run: published, when
        // it changes, under the ACK ring's lock its producers read it under. ACKs left there
        // while they could wait are taken by a next step once they cannot.
        let quiet = self.acks_may_wait();
        let mut acks_left = false;
        let qp = self.qp;
        if quiet != qp.acks_quiet.load(Ordering::Relaxed) {
            acks_left = qp.responses.ring.with(|r| {
                qp.acks_quiet.store(quiet, Ordering::Relaxed);
                !quiet && !r.is_empty()
            });
        }
        (progress || acks_left)
            && !(self.responder_idle() && self.completer_idle() && self.requester_idle())
    }
}
