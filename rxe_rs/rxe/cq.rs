// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`rxe_cq.c`, the CQ verbs of `rxe_verbs.c`): a ring of 72-byte CQEs in a
//! buffer user space maps; rxe produces, the consumer (user space or a kernel ULP) consumes.

use crate::ib::{
    consts::{IB_CQ_REPORT_MISSED_EVENTS, IB_CQ_SOLICITED_MASK},
    device::CqInit,
    uqueue::{self, MmapOffer, QueueBuf, UserReq},
};
use crate::proto::{
    params,
    queue::{
        Geometry, QueueType, RawIndex, CONSUMER_INDEX_OFFSET, CQE_SIZE, INDEX_MASK_OFFSET,
        LOG2_ELEM_SIZE_OFFSET, PRODUCER_INDEX_OFFSET,
    },
    Errno,
};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::{prelude::*, sync::Arc};

/// `struct rxe_create_cq_resp` (and `rxe_resize_cq_resp`): one `struct mminfo`.
const CREATE_CQ_RESP_LEN: usize = 16;

/// An rxe CQ.
pub(crate) struct RxeCq {
    geometry: Geometry,
    buf: Arc<QueueBuf>,
    /// `IB_CQ_SOLICITED` / `IB_CQ_NEXT_COMP` armed by `req_notify_cq`.
    notify: AtomicU32,
    /// Keeps the buffer offered for mmap until user space maps it; `None` for kernel CQs.
    _mmap: Option<MmapOffer>,
}

pub(crate) fn errno(e: Errno) -> Error {
    Error::from_errno(e.to_errno())
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
        let geometry =
            Geometry::new(attr.cqe, CQE_SIZE, uqueue::cache_line_size()).map_err(errno)?;
        let buf = QueueBuf::new(geometry.buf_size())?;
        buf.store_release(LOG2_ELEM_SIZE_OFFSET, geometry.log2_elem_size());
        buf.store_release(INDEX_MASK_OFFSET, geometry.index_mask());
        let mmap = match &user {
            Some(u) => {
                let size = geometry.mmap_size(4096).ok_or(ENOMEM)?;
                let (info, offer) = u.offer(&buf, size)?;
                // A failed copy drops `offer`, which withdraws the buffer again.
                u.respond(&info.to_bytes())?;
                Some(offer)
            }
            None => None,
        };
        let cqe = geometry.capacity();
        Ok((
            Self {
                geometry,
                buf,
                notify: AtomicU32::new(0),
                _mmap: mmap,
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
        let consumer = self
            .geometry
            .mask(RawIndex::new(self.buf.load_acquire(CONSUMER_INDEX_OFFSET)));
        let producer = RawIndex::new(self.buf.load_acquire(PRODUCER_INDEX_OFFSET));
        !self
            .geometry
            .ends(QueueType::ToUlp, consumer, producer)
            .is_empty()
    }
}
