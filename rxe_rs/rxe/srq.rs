// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues, control path (`rxe_srq.c`, the SRQ verbs of `rxe_verbs.c`).

use super::{device::RxeDev, pool::PoolIndex, ring::Ring};
use crate::ib::{
    device::SrqAttr,
    handles::{IbEvent, SrqHandle},
    uqueue::{MmapOffer, UserReq},
};
use crate::proto::{
    params,
    queue::{recv_wqe_size, Index, QueueType},
    wqe::{self, Sge},
};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{Arc, SpinLockIrq},
};

/// `struct rxe_create_srq_resp { struct mminfo mi; u32 srq_num; u32 reserved; }`.
const CREATE_SRQ_RESP_LEN: usize = 24;
/// `IB_SRQT_BASIC`.
const IB_SRQT_BASIC: u32 = 0;
/// `enum ib_srq_attr_mask`.
const IB_SRQ_MAX_WR: u32 = 1;
const IB_SRQ_LIMIT: u32 = 2;

/// An rxe SRQ.
pub(crate) struct RxeSrq {
    _srq_num: PoolIndex,
    shared: Arc<SrqShared>,
    _offer: Option<MmapOffer>,
}

/// A ring and rxe's private consumer index.
struct SrqRing {
    ring: Ring,
    consumer: Index,
}

/// What QPs on the SRQ use.
#[pin_data]
pub(crate) struct SrqShared {
    #[pin]
    ring: SpinLockIrq<SrqRing>,
    pub(crate) max_sge: u32,
    limit: AtomicU32,
    handle: SrqHandle,
}

impl SrqShared {
    /// `get_srq_wqe`: copies the oldest receive WQE into `out` and consumes it; raises
    /// `IB_EVENT_SRQ_LIMIT_REACHED` (once per arming) when fewer than the limit are left.
    pub(crate) fn take(&self, out: &mut [u8]) -> Option<()> {
        let left = {
            let mut srq = self.ring.lock();
            let g = *srq.ring.geometry();
            let ends = g.ends(
                QueueType::FromClient,
                srq.consumer,
                srq.ring.shared_producer(),
            );
            if ends.is_empty() {
                return None;
            }
            srq.ring.read_slot(srq.consumer, out).ok()?;
            srq.consumer = g.next_index(srq.consumer);
            srq.ring.publish_consumer(srq.consumer);
            ends.count() - 1
        };
        let limit = self.limit.load(Relaxed);
        if limit != 0 && left < limit && self.limit.swap(0, Relaxed) != 0 {
            self.handle.event(IbEvent::SrqLimitReached);
        }
        Some(())
    }

    /// `rxe_post_srq_recv`, one WR (kernel SRQs).
    pub(crate) fn post(&self, wr_id: u64, sges: &[Sge]) -> Result {
        let mut slot = [0u8; 2048];
        let srq = self.ring.lock();
        let g = *srq.ring.geometry();
        let slot = slot.get_mut(..g.slot_size() as usize).ok_or(EINVAL)?;
        wqe::write_recv_wqe(slot, wr_id, sges, self.max_sge).map_err(|_| EINVAL)?;
        let producer = g.mask(srq.ring.shared_producer());
        let ends = g.ends(QueueType::FromUlp, producer, srq.ring.shared_consumer());
        if ends.is_full() {
            return Err(ENOMEM);
        }
        srq.ring.write_slot(producer, slot)?;
        srq.ring.publish_producer(g.next_index(producer));
        Ok(())
    }

    /// Bytes of one WQE slot.
    pub(crate) fn slot_size(&self) -> usize {
        self.ring.lock().ring.geometry().slot_size() as usize
    }
}

impl RxeSrq {
    /// `rxe_create_srq`: checks (`rxe_srq_chk_init`), the ring, the user response; `attr.max_wr`
    /// becomes the rounded size.
    pub(crate) fn create(
        rxe: &RxeDev,
        attr: &mut SrqAttr,
        srq_type: u32,
        user: Option<UserReq>,
        handle: SrqHandle,
    ) -> Result<(Self, u32)> {
        if user
            .as_ref()
            .is_some_and(|u| u.outlen() < CREATE_SRQ_RESP_LEN)
        {
            return Err(EINVAL);
        }
        if srq_type != IB_SRQT_BASIC {
            return Err(EOPNOTSUPP);
        }
        if attr.max_wr == 0
            || attr.max_wr > params::MAX_SRQ_WR
            || attr.max_sge > params::MAX_SRQ_SGE
        {
            return Err(EINVAL);
        }
        let max_sge = attr.max_sge.max(1);
        let srq_num = rxe.srq_pool().take()?;
        let (ring, info, offer) =
            Ring::new_offered(attr.max_wr, recv_wqe_size(max_sge), user.as_ref())?;
        if let Some(u) = &user {
            let mut resp = [0u8; CREATE_SRQ_RESP_LEN];
            resp[..16].copy_from_slice(&info.to_bytes());
            resp[16..20].copy_from_slice(&srq_num.get().to_ne_bytes());
            u.respond(&resp)?;
        }
        attr.max_wr = ring.geometry().capacity();
        let num = srq_num.get();
        let shared = Arc::pin_init(
            pin_init!(SrqShared {
                ring <- new_spinlock_irq!(SrqRing { ring, consumer: Index::ZERO }),
                max_sge,
                limit: AtomicU32::new(attr.srq_limit),
                handle,
            }),
            GFP_KERNEL,
        )?;
        Ok((
            Self {
                _srq_num: srq_num,
                shared,
                _offer: offer,
            },
            num,
        ))
    }

    /// `rxe_modify_srq`: arming the limit. Resizing (`IB_SRQ_MAX_WR`) is not implemented yet.
    pub(crate) fn modify(&self, attr: &SrqAttr, mask: u32, udata_inlen: Option<usize>) -> Result {
        // The user command carries at least the 8-byte `mmap_info_addr`.
        if udata_inlen.is_some_and(|n| n < 8) {
            return Err(EINVAL);
        }
        if mask & IB_SRQ_MAX_WR != 0 {
            return Err(EOPNOTSUPP);
        }
        if mask & IB_SRQ_LIMIT != 0 {
            // Checked against our own copy of the ring size: the C driver reads the
            // user-writable header here.
            if attr.srq_limit > params::MAX_SRQ_WR
                || attr.srq_limit > self.shared.ring.lock().ring.geometry().index_mask()
            {
                return Err(EINVAL);
            }
            self.shared.limit.store(attr.srq_limit, Relaxed);
        }
        Ok(())
    }

    /// `rxe_query_srq`.
    pub(crate) fn query(&self) -> SrqAttr {
        SrqAttr {
            max_wr: self.shared.ring.lock().ring.geometry().index_mask(),
            max_sge: self.shared.max_sge,
            srq_limit: self.shared.limit.load(Relaxed),
        }
    }
}

impl RxeSrq {
    /// The part QPs hold.
    pub(crate) fn shared(&self) -> &Arc<SrqShared> {
        &self.shared
    }
}
