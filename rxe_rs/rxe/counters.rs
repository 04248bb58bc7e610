// SPDX-License-Identifier: GPL-2.0

//! The hardware counters of an rxe device (`rdma statistic show`), in the C driver's order
//! (`rxe_hw_counters.h`): what the data path counts, and under which names.

/// The hardware counters, in the C driver's order (`rxe_hw_counters.h`); names in
/// `RxeDev`'s `COUNTER_NAMES`.
#[expect(
    dead_code,
    reason = "counters C has and rxe-rs never bumps, kept for the names and order"
)]
#[derive(Clone, Copy)]
pub(crate) enum Counter {
    SentPkts,
    RcvdPkts,
    DupReq,
    OutOfSeqReq,
    RcvRnr,
    SndRnr,
    RcvSeqErr,
    SenderSched,
    RetryExceeded,
    RnrRetryExceeded,
    CompRetry,
    SendErr,
    LinkDowned,
    RdmaSend,
    RdmaRecv,
    SentBytes,
    RcvdBytes,
}

impl Counter {
    pub(super) const COUNT: usize = Counter::RcvdBytes as usize + 1;
}
