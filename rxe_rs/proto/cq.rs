// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Completion notification of a CQ (IBA 10.8.6, C10-111/112; `rxe_req_notify_cq` and the end
//! of `rxe_cq_post`).
//!
//! The arm (`req_notify_cq`), a CQE being written and the decision to call the completion
//! handler form one protocol; the driver runs each of [`CqNotify::arm`] and
//! [`CqNotify::completion`] in the same critical section as the ring update it goes with, so
//! that one arm raises at most one event and an arm never misses a CQE written before it
//! (with `IB_CQ_REPORT_MISSED_EVENTS` the caller learns it, under the same lock).

/// `IB_CQ_SOLICITED`: the next solicited (or unsuccessful) completion raises an event.
pub const IB_CQ_SOLICITED: u32 = 1;
/// `IB_CQ_NEXT_COMP`: the next completion raises an event.
pub const IB_CQ_NEXT_COMP: u32 = 2;
/// `IB_CQ_SOLICITED_MASK`: the arm bits of `req_notify_cq`'s flags.
pub const IB_CQ_SOLICITED_MASK: u32 = IB_CQ_SOLICITED | IB_CQ_NEXT_COMP;

/// The arm state of one CQ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CqNotify {
    armed: u32,
}

impl CqNotify {
    /// Not armed.
    pub const fn new() -> Self {
        Self { armed: 0 }
    }

    /// `req_notify_cq(flags)`: arms for the next completion or the next solicited one (the
    /// stronger arm wins until an event fires).
    pub fn arm(&mut self, flags: u32) {
        self.armed |= flags & IB_CQ_SOLICITED_MASK;
    }

    /// Whether the CQ is armed at all.
    pub const fn is_armed(&self) -> bool {
        self.armed != 0
    }

    /// A CQE was written: whether it raises the completion event, which disarms the CQ.
    ///
    /// A completion with an error status counts as solicited (IBA 11.4.2.2, `ibv_req_notify_cq`
    /// with `solicited_only`): a consumer armed for solicited completions must learn that its QP
    /// failed. (The C driver posts error and flush completions as unsolicited, so such a consumer
    /// sleeps forever; rxe-rs differs here on purpose.)
    pub fn completion(&mut self, solicited: bool, success: bool) -> bool {
        let fire = self.armed & IB_CQ_NEXT_COMP != 0
            || (self.armed & IB_CQ_SOLICITED != 0 && (solicited || !success));
        if fire {
            self.armed = 0;
        }
        fire
    }
}
