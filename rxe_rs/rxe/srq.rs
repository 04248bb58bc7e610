// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues, control path (`rxe_srq.c`, the SRQ verbs of `rxe_verbs.c`).

use super::{
    ib_values,
    pool::{IndexPool, PoolIndex},
    ring::Ring,
};
use crate::ib::{
    handles::{IbEvent, SrqHandle},
    mr::Sge as IbSge,
    srq::SrqAttr,
    uqueue::{MmapOffer, UserReq},
};
use crate::proto::{
    params,
    queue::{recv_wqe_size, Index, QueueType},
    wqe::{self, Sge},
};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::{
    new_mutex, new_spinlock_irq,
    prelude::*,
    sync::{Arc, Mutex, SpinLockIrq},
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
    /// The current ring's mmap offer (user SRQs), replaced on resize; held across a resize,
    /// which it serialises.
    offer: Pin<KBox<Mutex<Option<MmapOffer>>>>,
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
    pub(crate) fn post(&self, wr_id: u64, sges: &[IbSge]) -> Result {
        let mut ring_sges = [Sge::default(); ib_values::MAX_KERNEL_SGE];
        let sges = ib_values::ring_sges(sges, &mut ring_sges)?;
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
        pool: &IndexPool,
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
        let srq_num = pool.take()?;
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
        let offer = KBox::pin_init(new_mutex!(offer), GFP_KERNEL)?;
        Ok((
            Self {
                _srq_num: srq_num,
                shared,
                offer,
            },
            num,
        ))
    }

    /// `rxe_modify_srq`: `rxe_srq_chk_attr`, then resizing (`IB_SRQ_MAX_WR`) and arming the
    /// limit (`IB_SRQ_LIMIT`); `attr.max_wr` becomes the resized capacity.
    pub(crate) fn modify(&self, attr: &mut SrqAttr, mask: u32, user: Option<UserReq>) -> Result {
        // `struct rxe_modify_srq_cmd { __aligned_u64 mmap_info_addr; }`: where user space wants
        // the new ring's `struct mminfo` (`ib_copy_validate_udata_in`).
        let mut cmd = [0u8; 8];
        if let Some(u) = &user {
            if u.inlen() < cmd.len() {
                return Err(EINVAL);
            }
            u.read_cmd(&mut cmd)?;
        }
        let mmap_info_addr = u64::from_ne_bytes(cmd);
        if mask & IB_SRQ_MAX_WR != 0 {
            let limit = self.shared.limit.load(Relaxed);
            if attr.max_wr == 0
                || attr.max_wr > params::MAX_SRQ_WR
                || (limit != 0 && attr.max_wr < limit)
            {
                return Err(EINVAL);
            }
        }
        if mask & IB_SRQ_LIMIT != 0 {
            // Checked against our own copy of the ring size: the C driver reads the
            // user-writable header here.
            if attr.srq_limit > params::MAX_SRQ_WR
                || attr.srq_limit > self.shared.ring.lock().ring.geometry().index_mask()
            {
                return Err(EINVAL);
            }
        }
        if mask & IB_SRQ_MAX_WR != 0 {
            // As C, no mmap offer when user space gave no address for it.
            let offer_to = user.as_ref().filter(|_| mmap_info_addr != 0);
            attr.max_wr = self.resize(attr.max_wr, offer_to, mmap_info_addr)?;
        }
        if mask & IB_SRQ_LIMIT != 0 {
            self.shared.limit.store(attr.srq_limit, Relaxed);
        }
        Ok(())
    }

    /// `rxe_queue_resize` for the SRQ: a new ring of at least `max_wr` WQEs, its `mminfo`
    /// written to `mmap_info_addr` and offered to `user`'s context, the posted WQEs not yet
    /// taken carried over, swapped in. Returns the new capacity.
    fn resize(&self, max_wr: u32, user: Option<&UserReq>, mmap_info_addr: u64) -> Result<u32> {
        let mut offer = self.offer.lock();
        let (new, info, new_offer) =
            Ring::new_offered(max_wr, recv_wqe_size(self.shared.max_sge), user)?;
        if let Some(u) = user {
            // A failed copy drops the new ring, which withdraws its offer.
            u.respond_at(mmap_info_addr, &info.to_bytes())?;
        }
        let capacity = new.geometry().capacity();
        let old = {
            let mut srq = self.shared.ring.lock();
            srq.consumer = srq
                .ring
                .carry_over(QueueType::FromClient, srq.consumer, &new)?;
            core::mem::replace(&mut srq.ring, new)
        };
        // Freed outside the spinlock (vfree may sleep); pages user space still maps stay
        // alive through their own references.
        drop(old);
        let old_offer = core::mem::replace(&mut *offer, new_offer);
        drop(offer);
        drop(old_offer);
        Ok(capacity)
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
