// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`rxe_cq.c`, the CQ verbs of `rxe_verbs.c`): a ring of 72-byte CQEs in a
//! buffer user space maps; rxe produces, the consumer (user space or a kernel ULP) consumes.

use super::ring::Ring;
use crate::ib::{
    consts::{IB_CQ_REPORT_MISSED_EVENTS, IB_CQ_SOLICITED_MASK},
    device::CqInit,
    uqueue::UserReq,
};
use crate::proto::{
    params,
    queue::{QueueType, RawIndex, CONSUMER_INDEX_OFFSET, CQE_SIZE, PRODUCER_INDEX_OFFSET},
};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;

/// `struct rxe_create_cq_resp` (and `rxe_resize_cq_resp`): one `struct mminfo`.
const CREATE_CQ_RESP_LEN: usize = 16;

/// An rxe CQ.
pub(crate) struct RxeCq {
    ring: Ring,
    /// `IB_CQ_SOLICITED` / `IB_CQ_NEXT_COMP` armed by `req_notify_cq`.
    notify: AtomicU32,
}

impl RxeCq {
    /// `rxe_create_cq` + `rxe_cq_from_init`: the CQ and the size to report (rounded up to a
    /// power of two minus one).
    pub(crate) fn create(attr: &CqInit, user: Option<UserReq>) -> Result<(Self, u32)> {
        if user
            .as_ref()
            .is_some_and(|u| u.outlen() < CREATE_CQ_RESP_LEN)
        {
            return Err(EINVAL);
        }
        if attr.flags != 0 {
            return Err(EOPNOTSUPP);
        }
        if attr.cqe > (1 << params::MAX_LOG_CQE) - 1 {
            return Err(EINVAL);
        }
        let (ring, info) = Ring::new(attr.cqe, CQE_SIZE, user.as_ref())?;
        if let Some(u) = &user {
            // A failed copy drops the ring, which withdraws its mmap offer.
            u.respond(&info.to_bytes())?;
        }
        let cqe = ring.geometry().capacity();
        Ok((
            Self {
                ring,
                notify: AtomicU32::new(0),
            },
            cqe,
        ))
    }

    /// `rxe_req_notify_cq`: arms the CQ; with `IB_CQ_REPORT_MISSED_EVENTS`, says whether
    /// completions are already waiting.
    pub(crate) fn req_notify(&self, flags: u32) -> bool {
        self.notify.fetch_or(flags & IB_CQ_SOLICITED_MASK, Relaxed);
        if flags & IB_CQ_REPORT_MISSED_EVENTS == 0 {
            return false;
        }
        // The consumer's view (`QUEUE_TYPE_TO_ULP`): its index as stored, ours with acquire.
        let (g, buf) = (self.ring.geometry(), self.ring.buf());
        let consumer = g.mask(RawIndex::new(buf.load_acquire(CONSUMER_INDEX_OFFSET)));
        let producer = RawIndex::new(buf.load_acquire(PRODUCER_INDEX_OFFSET));
        !g.ends(QueueType::ToUlp, consumer, producer).is_empty()
    }
}
