// SPDX-License-Identifier: GPL-2.0

//! A ring of a CQ, QP or SRQ (`rxe_queue_init` + `do_mmap_info`): its geometry, its buffer,
//! and for user-space queues the offer to mmap it.

use crate::ib::uqueue::{self, MmapInfo, MmapOffer, QueueBuf, UserReq};
use crate::proto::{
    queue::{Geometry, INDEX_MASK_OFFSET, LOG2_ELEM_SIZE_OFFSET},
    Errno,
};
use kernel::{prelude::*, sync::Arc};

/// The C errno of a pure check as a kernel error.
pub(crate) fn errno(e: Errno) -> Error {
    Error::from_errno(e.to_errno())
}

/// One ring.
pub(crate) struct Ring {
    geometry: Geometry,
    buf: Arc<QueueBuf>,
    _mmap: Option<MmapOffer>,
}

impl Ring {
    /// A ring of at least `num_elem` elements of `elem_size` bytes; for a user queue, offered
    /// for mmap, with the `mminfo` to tell user space.
    pub(crate) fn new(
        num_elem: u32,
        elem_size: u32,
        user: Option<&UserReq>,
    ) -> Result<(Self, MmapInfo)> {
        let geometry =
            Geometry::new(num_elem, elem_size, uqueue::cache_line_size()).map_err(errno)?;
        let buf = QueueBuf::new(geometry.buf_size())?;
        buf.store_release(LOG2_ELEM_SIZE_OFFSET, geometry.log2_elem_size());
        buf.store_release(INDEX_MASK_OFFSET, geometry.index_mask());
        let (info, mmap) = match user {
            Some(u) => {
                let (info, offer) = u.offer(&buf, geometry.mmap_size(4096).ok_or(ENOMEM)?)?;
                (info, Some(offer))
            }
            None => (MmapInfo::default(), None),
        };
        Ok((
            Self {
                geometry,
                buf,
                _mmap: mmap,
            },
            info,
        ))
    }

    /// The kernel's own copy of the sizes (never the user-writable header's).
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The shared buffer.
    pub(crate) fn buf(&self) -> &QueueBuf {
        &self.buf
    }
}
