// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`rxe_cq.c`, the CQ verbs of `rxe_verbs.c`): a ring of 72-byte CQEs in a
//! buffer user space maps; rxe produces, the consumer (user space or a kernel ULP) consumes.

use super::ring::Ring;
use crate::ib::{
    consts::{IB_CQ_REPORT_MISSED_EVENTS, IB_CQ_SOLICITED_MASK},
    cq::{CqInit, PolledWc},
    handles::{CqHandle, IbEvent, QpHandle},
    uqueue::{MmapOffer, UserReq},
};
use crate::proto::{
    cq::CqNotify,
    params,
    queue::{Index, QueueType, CQE_SIZE},
    wqe::UverbsWc,
};
use kernel::{
    new_mutex, new_spinlock_irq,
    prelude::*,
    sync::{Arc, Mutex, SpinLockIrq},
};

// The pure core's arm bits are ib_core's.
const _: () = assert!(crate::proto::cq::IB_CQ_SOLICITED_MASK == IB_CQ_SOLICITED_MASK);

/// `struct rxe_create_cq_resp` (and `rxe_resize_cq_resp`): one `struct mminfo`.
const CREATE_CQ_RESP_LEN: usize = 16;

/// An rxe CQ: ib_core's object holds it; QPs hold its shared part.
pub(crate) struct RxeCq {
    shared: Arc<CqShared>,
    /// The current ring's mmap offer (user CQs), replaced on resize.
    offer: Pin<KBox<Mutex<Option<MmapOffer>>>>,
    /// The user context that made it (a resized ring is offered to it); 0 for kernel CQs.
    context: usize,
}

/// A ring, rxe's private producer index (user space may scribble over the shared one), and
/// the arm state: arming, writing a CQE and deciding to raise the event are one step under the
/// ring's lock (as C's `cq_lock`), so one arm raises at most one event and none is lost.
struct CqRing {
    ring: Ring,
    producer: Index,
    notify: CqNotify,
}

/// The part of a CQ the data path uses.
#[pin_data]
pub(crate) struct CqShared {
    /// Swapped by resize; irq-safe: completions are produced in softirq context and kernel
    /// users arm CQs from any context.
    #[pin]
    ring: SpinLockIrq<CqRing>,
    handle: CqHandle,
}

impl RxeCq {
    /// `rxe_create_cq` + `rxe_cq_from_init`: the CQ and the size to report (rounded up to a
    /// power of two minus one).
    pub(crate) fn create(
        attr: &CqInit,
        user: Option<UserReq>,
        handle: CqHandle,
    ) -> Result<(Self, u32)> {
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
        let (ring, info, offer) = Ring::new_offered(attr.cqe, CQE_SIZE, user.as_ref())?;
        if let Some(u) = &user {
            // A failed copy drops the ring, which withdraws its mmap offer.
            u.respond(&info.to_bytes())?;
        }
        let cqe = ring.geometry().capacity();
        let context = user.as_ref().map_or(0, |u| u.context());
        let shared = Arc::pin_init(
            pin_init!(CqShared {
                ring <- new_spinlock_irq!(CqRing {
                    ring,
                    producer: Index::ZERO,
                    notify: CqNotify::new(),
                }),
                handle,
            }),
            GFP_KERNEL,
        )?;
        let offer = KBox::pin_init(new_mutex!(offer), GFP_KERNEL)?;
        Ok((
            Self {
                shared,
                offer,
                context,
            },
            cqe,
        ))
    }

    /// The part QPs hold.
    pub(crate) fn shared(&self) -> &Arc<CqShared> {
        &self.shared
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
        // C: fewer entries than are waiting is `EINVAL`, even when the ring, rounded up to a
        // power of two, would hold them.
        if cqe > (1 << params::MAX_LOG_CQE) - 1 || cqe < self.shared.waiting() {
            return Err(EINVAL);
        }
        let (new, info, new_offer) = Ring::new_offered(cqe, CQE_SIZE, user.as_ref())?;
        if let Some(u) = &user {
            u.respond(&info.to_bytes())?;
        }
        let old = {
            let mut cq = self.shared.ring.lock();
            cq.producer = cq.ring.carry_over(QueueType::ToClient, cq.producer, &new)?;
            core::mem::replace(&mut cq.ring, new)
        };
        // The old ring is freed outside the lock (vfree may sleep); pages user space still maps
        // stay alive through their own references.
        drop(old);
        let old_offer = core::mem::replace(&mut *self.offer.lock(), new_offer);
        drop(old_offer);
        Ok(self.shared.ring.lock().ring.geometry().capacity())
    }

    /// `rxe_req_notify_cq`: arms the CQ; with `IB_CQ_REPORT_MISSED_EVENTS`, says whether
    /// completions are already waiting.
    pub(crate) fn req_notify(&self, flags: u32) -> bool {
        let mut cq = self.shared.ring.lock();
        cq.notify.arm(flags);
        if flags & IB_CQ_REPORT_MISSED_EVENTS == 0 {
            return false;
        }
        let ends =
            cq.ring
                .geometry()
                .ends(QueueType::ToClient, cq.producer, cq.ring.shared_consumer());
        !ends.is_empty()
    }
}

/// Where a kernel CQE keeps the network header type.
const NET_TYPE_OFFSET: usize = 48;

impl RxeCq {
    /// `rxe_poll_cq` (kernel CQs): takes up to `out.len()` completions.
    pub(crate) fn poll(
        &self,
        out: &mut [PolledWc],
        qp_of: impl Fn(u32) -> Option<QpHandle>,
    ) -> usize {
        let mut n = 0;
        let cq = self.shared.ring.lock();
        let g = *cq.ring.geometry();
        let mut consumer = g.mask(cq.ring.shared_consumer());
        for slot in out.iter_mut() {
            let ends = g.ends(QueueType::ToUlp, consumer, cq.ring.shared_producer());
            if ends.is_empty() {
                break;
            }
            let mut cqe = [0u8; CQE_SIZE as usize];
            if cq.ring.read_slot(consumer, &mut cqe).is_err() {
                break;
            }
            let Ok(wc) = UverbsWc::read(&cqe) else { break };
            *slot = PolledWc {
                wc: wc.into(),
                qp: None,
                network_hdr_type: cqe[NET_TYPE_OFFSET],
            };
            consumer = g.next_index(consumer);
            n += 1;
        }
        cq.ring.publish_consumer(consumer);
        drop(cq);
        // Outside the ring's lock (interrupts off): the QP table hands out a reference, and
        // the last one of a QP just destroyed would free its rings, which may sleep.
        for slot in &mut out[..n] {
            slot.qp = qp_of(slot.wc.qp_num);
        }
        n
    }
}

impl CqShared {
    /// Completions waiting to be polled (`queue_count`).
    fn waiting(&self) -> u32 {
        let cq = self.ring.lock();
        let g = *cq.ring.geometry();
        g.ends(QueueType::ToClient, cq.producer, cq.ring.shared_consumer())
            .count()
    }

    /// `rxe_cq_post`: writes a completion, then calls the completion handler if the CQ is
    /// armed for it ([`CqNotify::completion`]: an unsuccessful completion counts as solicited).
    /// A full CQ raises `IB_EVENT_CQ_ERR` and loses the completion (`EBUSY`).
    pub(crate) fn post(&self, wc: &UverbsWc, solicited: bool) -> Result {
        self.post_ext(wc, solicited, 0)
    }

    /// As [`Self::post`], with the network header type kernel consumers get (in the CQE bytes
    /// past `struct ib_uverbs_wc`, which user space does not read).
    pub(crate) fn post_ext(&self, wc: &UverbsWc, solicited: bool, net_type: u8) -> Result {
        let mut cqe = [0u8; CQE_SIZE as usize];
        wc.write(&mut cqe).map_err(|_| EINVAL)?;
        cqe[NET_TYPE_OFFSET] = net_type;
        {
            let mut cq = self.ring.lock();
            let g = *cq.ring.geometry();
            let ends = g.ends(QueueType::ToClient, cq.producer, cq.ring.shared_consumer());
            if ends.is_full() {
                drop(cq);
                self.handle.event(IbEvent::CqErr);
                return Err(EBUSY);
            }
            cq.ring.write_slot(cq.producer, &cqe)?;
            cq.producer = g.next_index(cq.producer);
            cq.ring.publish_producer(cq.producer);
            // Under the lock, as C: a handler (ib_uverbs, ib_cq) only queues work.
            if cq.notify.completion(solicited, wc.status.is_success()) {
                self.handle.notify();
            }
        }
        Ok(())
    }
}
