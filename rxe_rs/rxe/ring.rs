// SPDX-License-Identifier: GPL-2.0

//! A ring of a CQ, QP or SRQ (`rxe_queue_init` + `do_mmap_info`): its geometry, its buffer,
//! and for user-space queues the offer to mmap it.

use crate::ib::uqueue::{self, MmapInfo, MmapOffer, QueueBuf, UserReq};
use crate::proto::{
    queue::{
        Geometry, Index, QueueType, RawIndex, CONSUMER_INDEX_OFFSET, INDEX_MASK_OFFSET,
        LOG2_ELEM_SIZE_OFFSET, PRODUCER_INDEX_OFFSET,
    },
    Errno,
};
use kernel::{prelude::*, sync::Arc};

/// The C errno of a pure check as a kernel error.
pub(crate) fn errno(e: Errno) -> Error {
    Error::from_errno(e.to_errno())
}

/// One ring. Its mmap offer (for user-space queues) is kept apart by the verb object that made
/// it: withdrawing an offer takes a mutex, and rings may be dropped in softirq context.
pub(crate) struct Ring {
    geometry: Geometry,
    buf: Arc<QueueBuf>,
}

impl Ring {
    /// A ring of at least `num_elem` elements of `elem_size` bytes; for a user queue, offered
    /// for mmap, with the `mminfo` to tell user space and the offer to keep.
    pub(crate) fn new_offered(
        num_elem: u32,
        elem_size: u32,
        user: Option<&UserReq>,
    ) -> Result<(Self, MmapInfo, Option<MmapOffer>)> {
        let geometry =
            Geometry::new(num_elem, elem_size, uqueue::cache_line_size()).map_err(errno)?;
        let buf = QueueBuf::new(geometry.buf_size())?;
        buf.store_release(LOG2_ELEM_SIZE_OFFSET, geometry.log2_elem_size());
        buf.store_release(INDEX_MASK_OFFSET, geometry.index_mask());
        let (info, offer) = match user {
            Some(u) => {
                let (info, offer) = u.offer(&buf, geometry.mmap_size(4096).ok_or(ENOMEM)?)?;
                (info, Some(offer))
            }
            None => (MmapInfo::default(), None),
        };
        Ok((Self { geometry, buf }, info, offer))
    }

    /// The kernel's own copy of the sizes (never the user-writable header's).
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }
}

impl Ring {
    /// The producer index in the shared header, as loaded (acquire): untrusted.
    pub(crate) fn shared_producer(&self) -> RawIndex {
        RawIndex::new(self.buf.load_acquire(PRODUCER_INDEX_OFFSET))
    }

    /// The consumer index in the shared header, as loaded (acquire): untrusted.
    pub(crate) fn shared_consumer(&self) -> RawIndex {
        RawIndex::new(self.buf.load_acquire(CONSUMER_INDEX_OFFSET))
    }

    /// Publishes our producer index (release: the slot is written before).
    pub(crate) fn publish_producer(&self, index: Index) {
        self.buf.store_release(PRODUCER_INDEX_OFFSET, index.get());
    }

    /// Publishes our consumer index (release: we are done reading the slot).
    pub(crate) fn publish_consumer(&self, index: Index) {
        self.buf.store_release(CONSUMER_INDEX_OFFSET, index.get());
    }

    /// Copies slot `index` (at most `out.len()` bytes of it) into `out`.
    pub(crate) fn read_slot(&self, index: Index, out: &mut [u8]) -> Result {
        let slot = self.geometry.slot(index);
        let n = out.len().min(slot.len());
        self.buf.read(slot.start, &mut out[..n])
    }

    /// Writes `bytes` (at most a slot) into slot `index`.
    pub(crate) fn write_slot(&self, index: Index, bytes: &[u8]) -> Result {
        let slot = self.geometry.slot(index);
        if bytes.len() > slot.len() {
            return Err(EINVAL);
        }
        self.buf.write(slot.start, bytes)
    }
}

impl Ring {
    /// `resize_finish` (under the queue's lock), for a CQ ([`QueueType::ToClient`]) or an SRQ
    /// ([`QueueType::FromClient`]): copies the elements waiting in `self` into `new` (oldest
    /// first, from slot 0 on), publishes `new`'s producer index, and returns the new private
    /// copy of the index rxe owns (`own` is the current one): the producer for a CQ, the
    /// consumer for an SRQ. The peer's index is read from the shared header and masked, so a
    /// scribbled one moves at most a ring's worth of (untrusted) bytes. `EINVAL` when the
    /// elements do not fit in `new`; `self` is left as it was on any error.
    pub(crate) fn carry_over(&self, ty: QueueType, own: Index, new: &Ring) -> Result<Index> {
        let g = self.geometry;
        let peer = if ty.caller_produces() {
            self.shared_consumer()
        } else {
            self.shared_producer()
        };
        let ends = g.ends(ty, own, peer);
        let new_start = if ty.caller_produces() {
            Index::ZERO
        } else {
            new.geometry.mask(new.shared_producer())
        };
        let plan = g
            .resize(ty, &ends, &new.geometry, new_start)
            .map_err(errno)?;
        for copy in plan.copies() {
            new.buf.copy_from(&self.buf, copy.from, copy.to)?;
        }
        new.publish_producer(plan.new_producer());
        Ok(plan.new_private_index())
    }
}
