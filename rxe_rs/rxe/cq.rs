// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`rxe_cq.c`, the CQ verbs of `rxe_verbs.c`): a ring of 72-byte CQEs in a
//! buffer user space maps; rxe produces, the consumer (user space or a kernel ULP) consumes.

use super::ring::errno;
use super::ring::Ring;
use crate::ib::{
    consts::{IB_CQ_REPORT_MISSED_EVENTS, IB_CQ_SOLICITED_MASK},
    device::CqInit,
    uqueue::UserReq,
};
use crate::proto::{
    params,
    queue::{Index, QueueType, RawIndex, CONSUMER_INDEX_OFFSET, CQE_SIZE, PRODUCER_INDEX_OFFSET},
};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::{new_spinlock, prelude::*, sync::SpinLock};

/// `struct rxe_create_cq_resp` (and `rxe_resize_cq_resp`): one `struct mminfo`.
const CREATE_CQ_RESP_LEN: usize = 16;

/// An rxe CQ.
pub(crate) struct RxeCq {
    /// Swapped by resize; a spinlock since kernel users arm CQs in atomic context.
    ring: Pin<KBox<SpinLock<Ring>>>,
    /// `IB_CQ_SOLICITED` / `IB_CQ_NEXT_COMP` armed by `req_notify_cq`.
    notify: AtomicU32,
    /// The user context that made it (a resized ring is offered to it); 0 for kernel CQs.
    context: usize,
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
        let context = user.as_ref().map_or(0, |u| u.context());
        let ring = KBox::pin_init(new_spinlock!(ring), GFP_KERNEL)?;
        Ok((
            Self {
                ring,
                notify: AtomicU32::new(0),
                context,
            },
            cqe,
        ))
    }

    /// `rxe_resize_cq` + `rxe_queue_resize`: a new ring, the CQEs waiting carried over, swapped
    /// in; the size to report.
    pub(crate) fn resize(&self, cqe: u32, user: Option<UserReq>) -> Result<u32> {
        let user = user.map(|u| u.for_context(self.context));
        if user
            .as_ref()
            .is_some_and(|u| u.outlen() < CREATE_CQ_RESP_LEN)
        {
            return Err(EINVAL);
        }
        if cqe > (1 << params::MAX_LOG_CQE) - 1 {
            return Err(EINVAL);
        }
        let (new, info) = Ring::new(cqe, CQE_SIZE, user.as_ref())?;
        if let Some(u) = &user {
            u.respond(&info.to_bytes())?;
        }
        let old = {
            let mut ring = self.ring.lock();
            let (g, buf) = (ring.geometry(), ring.buf());
            // rxe keeps no private producer yet (nothing produces CQEs before the data path):
            // the header's, masked, stands in for it.
            let producer = g.mask(RawIndex::new(buf.load_acquire(PRODUCER_INDEX_OFFSET)));
            let consumer = RawIndex::new(buf.load_acquire(CONSUMER_INDEX_OFFSET));
            let ends = g.ends(QueueType::ToClient, producer, consumer);
            let plan = g
                .resize(QueueType::ToClient, &ends, new.geometry(), Index::ZERO)
                .map_err(errno)?;
            for copy in plan.copies() {
                new.buf().copy_from(buf, copy.from, copy.to)?;
            }
            new.buf()
                .store_release(PRODUCER_INDEX_OFFSET, plan.new_producer().get());
            core::mem::replace(&mut *ring, new)
        };
        // The old ring is freed outside the lock (vfree may sleep); pages user space still maps
        // stay alive through their own references.
        drop(old);
        Ok(self.ring.lock().geometry().capacity())
    }

    /// `rxe_req_notify_cq`: arms the CQ; with `IB_CQ_REPORT_MISSED_EVENTS`, says whether
    /// completions are already waiting.
    pub(crate) fn req_notify(&self, flags: u32) -> bool {
        self.notify.fetch_or(flags & IB_CQ_SOLICITED_MASK, Relaxed);
        if flags & IB_CQ_REPORT_MISSED_EVENTS == 0 {
            return false;
        }
        // The consumer's view (`QUEUE_TYPE_TO_ULP`): its index as stored, ours with acquire.
        let ring = self.ring.lock();
        let (g, buf) = (ring.geometry(), ring.buf());
        let consumer = g.mask(RawIndex::new(buf.load_acquire(CONSUMER_INDEX_OFFSET)));
        let producer = RawIndex::new(buf.load_acquire(PRODUCER_INDEX_OFFSET));
        !g.ends(QueueType::ToUlp, consumer, producer).is_empty()
    }
}
