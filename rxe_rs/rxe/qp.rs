// SPDX-License-Identifier: GPL-2.0

//! Queue pairs, control path (`rxe_qp.c`, the QP verbs of `rxe_verbs.c`): creation with the
//! send and receive rings user space maps, the attribute checks and state table of
//! `modify_qp`, and `query_qp`. Moving work through the rings is the data path's.

use super::{
    ah::RxeAh,
    cq::{CqShared, RxeCq},
    engine::Engine,
    ib_values,
    intake::{Requests, Responses},
    mr::{MrShared, RxeMr},
    pool::{IndexPool, PoolIndex},
    ring::{errno, Ring},
    shared::DevShared,
    srq::{RxeSrq, SrqShared},
    table::Table,
};
use crate::ib::mem::KernelMem;
use crate::ib::{
    device::{DevicePart, PdId},
    handles::{BhDisabled, QpHandle},
    mr::Sge as IbSge,
    qp::{KernelSendWr, QpAttrs, QpAv, QpCap as IbQpCap, QpInit, QpLinks, QpOps},
    uqueue::{MmapInfo, MmapOffer, UserReq},
};
use crate::kernel_ext::{arc_slot::ArcSlot, timer::Timer};
use crate::net::route::RouteCache;
use crate::proto::{
    av::{AddressVector, NetworkType},
    params::{self, IbMtu},
    qp_state::{self, QpCap, QpState, QpType},
    queue::{recv_wqe_size, send_wqe_size, Index, QueueType},
    task::TaskState,
    wqe::{self, SendData, SendLimits, Sge},
};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{
    new_spinlock, new_spinlock_irq, new_work,
    prelude::*,
    sync::{Arc, Completion, SpinLock, SpinLockIrq},
    workqueue::Work,
};

/// `struct rxe_create_qp_resp { struct mminfo rq_mi, sq_mi; }`.
const CREATE_QP_RESP_LEN: usize = 32;
/// The GSI QP's number.
const GSI_QPN: u32 = 1;

/// The device's QPs: their numbers (the QP pool and the port's one GSI QP) and the QPs by
/// number, which packets name.
pub(crate) struct Qps {
    pool: IndexPool,
    /// The port's one GSI QP exists.
    gsi_taken: AtomicBool,
    table: Pin<KBox<Table<QpShared>>>,
}

impl Qps {
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            pool: IndexPool::new(params::MIN_QP_INDEX, params::MAX_QP_INDEX)?,
            gsi_taken: AtomicBool::new(false),
            table: KBox::pin_init(Table::new(), GFP_KERNEL)?,
        })
    }

    /// The QP numbered `qpn`.
    pub(crate) fn get(&self, qpn: u32) -> Option<Arc<QpShared>> {
        self.table.get(qpn)
    }

    /// A number for a new QP of type `qp_type`.
    fn take(&self, qp_type: QpType) -> Result<Qpn> {
        if !matches!(qp_type, QpType::Gsi) {
            return Ok(Qpn::Pool(self.pool.take()?));
        }
        if self.gsi_taken.swap(true, Ordering::AcqRel) {
            return Err(EINVAL);
        }
        Ok(Qpn::Gsi)
    }

    /// Gives `qpn` back: the pool's on drop, the GSI number here (the C driver never does: a
    /// second GSI QP could never be made).
    fn give_back(&self, qpn: &Qpn) {
        if matches!(qpn, Qpn::Gsi) {
            self.gsi_taken.store(false, Ordering::Release);
        }
    }
}

/// How a QP is numbered: from the QP pool, or the one GSI QP of the port.
enum Qpn {
    Pool(PoolIndex),
    Gsi,
}

/// Timer ids of a QP.
pub(crate) const RETRANSMIT_TIMER: u8 = 0;
pub(crate) const RNR_TIMER: u8 = 1;

/// An rxe QP: the object in ib_core's allocation. The data path holds [`QpShared`].
pub(crate) struct RxeQp {
    qpn: Qpn,
    shared: Arc<QpShared>,
    /// The mmap offers of the rings, withdrawn (process context) when the QP goes.
    _offers: [Option<MmapOffer>; 2],
    /// The capabilities as made (`sq.max_wr`…), reported by `query_qp`.
    cap: QpCap,
}

/// Everything the data path needs of a QP; shared with the device's QP table, the task's
/// work item, and packets in flight to it.
#[pin_data]
pub(crate) struct QpShared {
    pub(crate) qpn: u32,
    /// Unique for the module's lifetime (QPNs are reused): the identity a type 2 memory window
    /// bound through this QP records.
    pub(crate) uid: u64,
    pub(crate) qp_type: QpType,
    pub(crate) pd: PdId,
    pub(crate) is_user: bool,
    /// The device, held while the QP exists (ib_core destroys QPs before it waits for the
    /// last device reference).
    pub(crate) dev: DevicePart<DevShared>,
    pub(crate) handle: QpHandle,
    /// The UDP source port of this QP's packets (`rxe_qp_init_req`).
    pub(crate) src_port: u16,
    /// Scheduling of the QP's engine (requester, completer, responder).
    pub(crate) task: TaskState,
    /// The QP state, mirrored for the receive path (which does not take the engine lock).
    pub(crate) state_mirror: AtomicU32,
    #[pin]
    pub(crate) work: Work<QpShared>,
    #[pin]
    pub(crate) drained: Completion,
    /// Requests for the responder.
    #[pin]
    pub(crate) requests: Requests,
    /// Acknowledgements and read/atomic responses for the completer.
    #[pin]
    pub(crate) responses: Responses,
    /// Positive ACKs put into the ACK ring (`responses.ring`) need not run the task: its next
    /// run takes them (`proto::comp::acks_may_wait`). Written under the engine's lock and the
    /// ring's, read by producers under the ring's and by the engine under its own.
    pub(crate) acks_quiet: AtomicBool,
    #[pin]
    pub(crate) retransmit_timer: Timer<QpShared>,
    #[pin]
    pub(crate) rnr_timer: Timer<QpShared>,
    /// The engine's state and the attributes, taken in softirq context (the engine's) or with
    /// bottom halves disabled.
    #[pin]
    pub(crate) eng: SpinLock<Engine>,
    pub(crate) sq: Ring,
    pub(crate) rq: Option<Ring>,
    pub(crate) srq: Option<Arc<SrqShared>>,
    pub(crate) scq: Arc<CqShared>,
    pub(crate) rcq: Arc<CqShared>,
    /// Limits of the send and receive WQEs (`max_sge`, `max_inline`).
    pub(crate) cap: QpCap,
    /// `IB_SIGNAL_ALL_WR`.
    pub(crate) sq_sig_all: bool,
    /// The producer indices of the send and receive rings of a kernel QP, which only its
    /// posts move (C's `sq.sq_lock` and `rq.producer_lock`); ULPs post from any context. A user
    /// QP's producers are user space's: its posts come through the rings, not here.
    #[pin]
    producers: SpinLockIrq<Producers>,
    /// The multicast groups the QP is attached to (`qp->mcg_num`), changed under the device's
    /// multicast mutex.
    pub(crate) mcast_attached: AtomicU32,
    /// Packets of this QP the stack still holds (`qp->skb_out`): queued in a qdisc or a
    /// backlog. Looped-back packets are not counted (as C): they hold no reference to the QP.
    pub(crate) skbs_out: AtomicU32,
    /// The requester stopped at [`SKBS_OUT_HIGH`] and waits for a release to wake it
    /// (`qp->need_req_skb`).
    pub(crate) need_skb: AtomicBool,
    /// The route of the QP's last packet, reused while valid (C keeps an RC QP's in its socket).
    #[pin]
    pub(crate) route_cache: RouteCache,
    /// The QP of this device the last looped-back packet went into a ring of, kept so the next
    /// one need not look it up in the QP table (`QpShared::ring_destination`); let go when a
    /// ring refuses a packet (a destroyed QP's rings are closed) and when this QP is destroyed.
    pub(crate) ring_peer: ArcSlot<QpShared>,
    /// The MR of the last local access (`sg::with_local_mr`), checked again at every use.
    pub(crate) local_mr: ArcSlot<MrShared>,
}

/// The producer indices a kernel QP's posts keep: the rings' shared copies are only published.
#[derive(Default)]
struct Producers {
    sq: Index,
    rq: Index,
}

/// Packets in the stack above which the requester stops (`RXE_INFLIGHT_SKBS_PER_QP_HIGH`): a
/// 1 MiB UC message at MTU 256 is 4,096 packets, which would overflow a veth's input backlog
/// (`netdev_max_backlog`, 1,000) and lose the message.
pub(crate) const SKBS_OUT_HIGH: u32 = 64;
/// Packets in the stack below which a stopped requester runs again
/// (`RXE_INFLIGHT_SKBS_PER_QP_LOW`).
pub(crate) const SKBS_OUT_LOW: u32 = 16;

kernel::impl_has_work! {
    impl HasWork<QpShared> for QpShared { self.work }
}

/// The next [`QpShared::uid`].
static NEXT_QP_UID: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);

fn state(raw: u32) -> QpState {
    QpState::from_raw(raw).unwrap_or(QpState::Reset)
}

/// `max_rd_atomic` and `max_dest_rd_atomic` as `rxe_qp_from_attr` stores them: rounded up to a
/// power of two (0 stays 0).
fn round_rd_atomic(v: u8) -> u8 {
    if v == 0 {
        0
    } else {
        v.checked_next_power_of_two().unwrap_or(128)
    }
}

/// `rxe_qp_from_attr`: each attribute whose mask bit is set, as stored (some rounded or
/// masked). CUR_STATE takes `qp_state`: sic, as the C driver does.
fn store_attrs(cur: &mut QpAttrs, attr: &QpAttrs, mask: u32) {
    use qp_state::*;
    let round = round_rd_atomic;
    let psn = |v: u32| v & crate::proto::psn::PSN_MASK;
    macro_rules! store {
        ($($bit:ident => $($field:ident = $value:expr),+;)+) => {
            $(if mask & $bit != 0 { $(cur.$field = $value;)+ })+
        };
    }
    store! {
        IB_QP_CUR_STATE => cur_qp_state = attr.qp_state;
        IB_QP_STATE => qp_state = attr.qp_state;
        IB_QP_MAX_QP_RD_ATOMIC => max_rd_atomic = round(attr.max_rd_atomic);
        IB_QP_MAX_DEST_RD_ATOMIC => max_dest_rd_atomic = round(attr.max_dest_rd_atomic);
        IB_QP_EN_SQD_ASYNC_NOTIFY => en_sqd_async_notify = attr.en_sqd_async_notify;
        IB_QP_ACCESS_FLAGS => qp_access_flags = attr.qp_access_flags;
        IB_QP_PKEY_INDEX => pkey_index = attr.pkey_index;
        IB_QP_PORT => port_num = attr.port_num;
        IB_QP_QKEY => qkey = attr.qkey;
        IB_QP_AV => av = attr.av;
        IB_QP_ALT_PATH => alt_av = attr.alt_av, alt_port_num = attr.alt_port_num,
            alt_pkey_index = attr.alt_pkey_index, alt_timeout = attr.alt_timeout;
        IB_QP_PATH_MTU => path_mtu = attr.path_mtu;
        IB_QP_TIMEOUT => timeout = attr.timeout;
        IB_QP_RETRY_CNT => retry_cnt = attr.retry_cnt;
        IB_QP_RNR_RETRY => rnr_retry = attr.rnr_retry;
        IB_QP_RQ_PSN => rq_psn = psn(attr.rq_psn);
        IB_QP_MIN_RNR_TIMER => min_rnr_timer = attr.min_rnr_timer;
        IB_QP_SQ_PSN => sq_psn = psn(attr.sq_psn);
        IB_QP_PATH_MIG_STATE => path_mig_state = attr.path_mig_state;
        IB_QP_DEST_QPN => dest_qp_num = attr.dest_qp_num;
    }
}

/// `0xc000 | hash_32(qpn, 14)`: spreads QPs over UDP source ports (ECMP), as the C driver.
fn src_port(qpn: u32) -> u16 {
    0xc000 | ((qpn.wrapping_mul(0x61c8_8647) >> (32 - 14)) as u16 & 0x3fff)
}

impl RxeQp {
    /// `rxe_create_qp`: checks (`rxe_qp_chk_init`), numbering, the rings, the user response.
    /// `dev`: the device's shared part, held by the QP; `qps`: its QPs, which the new one joins.
    pub(crate) fn create<T: QpOps<Cq = RxeCq, Srq = RxeSrq>>(
        dev: DevicePart<DevShared>,
        qps: &Qps,
        init: &mut QpInit,
        links: QpLinks<'_, T>,
        user: Option<UserReq>,
    ) -> Result<(Self, u32)> {
        if let Some(u) = &user {
            if init.udata_inlen != 0 || u.outlen() < CREATE_QP_RESP_LEN {
                return Err(EINVAL);
            }
        }
        if init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        let qp_type = qp_state::chk_init(
            init.qp_type,
            init.has_cqs,
            &init.cap.into(),
            init.has_srq,
            init.port_num,
        )
        .map_err(errno)?;
        let qpn = qps.take(qp_type)?;
        let gsi = matches!(qpn, Qpn::Gsi);
        let qp = Self::make(dev, qp_type, init, links, user, qpn)
            .and_then(|qp| {
                qps.table.insert(qp.shared.qpn, qp.shared.clone())?;
                Ok(qp)
            })
            .inspect_err(|_| {
                if gsi {
                    qps.give_back(&Qpn::Gsi);
                }
            })?;
        let num = qp.shared.qpn;
        Ok((qp, num))
    }

    fn make<T: QpOps<Cq = RxeCq, Srq = RxeSrq>>(
        dev: DevicePart<DevShared>,
        qp_type: QpType,
        init: &mut QpInit,
        links: QpLinks<'_, T>,
        user: Option<UserReq>,
        qpn: Qpn,
    ) -> Result<Self> {
        let num = match &qpn {
            Qpn::Pool(index) => index.get(),
            Qpn::Gsi => GSI_QPN,
        };
        // rxe_init_sq: SGEs and inline data share the WQE's data area, reported back in full.
        let sq_size = send_wqe_size(init.cap.max_send_sge, init.cap.max_inline_data);
        let (sq, sq_mi, sq_offer) =
            Ring::new_offered(init.cap.max_send_wr, sq_size.elem_size, user.as_ref())?;
        init.cap.max_send_wr = sq.geometry().capacity();
        init.cap.max_send_sge = sq_size.max_sge;
        init.cap.max_inline_data = sq_size.max_inline;
        let (rq, rq_mi, rq_offer) = if init.has_srq {
            (None, MmapInfo::default(), None)
        } else {
            let (rq, mi, offer) = Ring::new_offered(
                init.cap.max_recv_wr,
                recv_wqe_size(init.cap.max_recv_sge),
                user.as_ref(),
            )?;
            init.cap.max_recv_wr = rq.geometry().capacity();
            (Some(rq), mi, offer)
        };
        if let Some(u) = &user {
            let mut resp = [0u8; CREATE_QP_RESP_LEN];
            resp[..16].copy_from_slice(&rq_mi.to_bytes());
            resp[16..].copy_from_slice(&sq_mi.to_bytes());
            u.respond(&resp)?;
        }
        // rxe_qp_init_misc: RESET, path MTU 256; a GSI QP sits on its port.
        let attrs = QpAttrs {
            qp_state: QpState::Reset as u32,
            cur_qp_state: QpState::Reset as u32,
            path_mtu: IbMtu::Mtu256 as u32,
            port_num: if matches!(qp_type, QpType::Gsi) {
                init.port_num
            } else {
                0
            },
            ..Default::default()
        };
        let connected = matches!(qp_type, QpType::Rc | QpType::Uc);
        let engine = Engine::new(attrs, sq.geometry(), connected)?;
        let (cap, sq_sig_all) = (init.cap.into(), init.sq_sig_all);
        let (requests, responses) = (Requests::new()?, Responses::new()?);
        let shared = Arc::pin_init(
            pin_init!(QpShared {
                qpn: num,
                uid: NEXT_QP_UID.fetch_add(1, core::sync::atomic::Ordering::Relaxed),
                qp_type,
                pd: links.pd,
                is_user: user.is_some(),
                dev,
                handle: links.handle,
                src_port: src_port(num),
                task: TaskState::new(),
                state_mirror: AtomicU32::new(QpState::Reset as u32),
                work <- new_work!("rxe_rs_qp"),
                drained <- Completion::new(),
                requests <- requests,
                responses <- responses,
                retransmit_timer <- Timer::new(RETRANSMIT_TIMER),
                rnr_timer <- Timer::new(RNR_TIMER),
                eng <- new_spinlock!(engine),
                sq,
                rq,
                srq: links.srq.map(|s| s.shared().clone()),
                scq: links.send_cq.shared().clone(),
                rcq: links.recv_cq.shared().clone(),
                cap,
                sq_sig_all,
                producers <- new_spinlock_irq!(Producers::default()),
                mcast_attached: AtomicU32::new(0),
                skbs_out: AtomicU32::new(0),
                need_skb: AtomicBool::new(false),
                acks_quiet: AtomicBool::new(false),
                route_cache <- RouteCache::new(),
                ring_peer: ArcSlot::new(),
                local_mr: ArcSlot::new(),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self {
            qpn,
            shared,
            _offers: [sq_offer, rq_offer],
            cap,
        })
    }

    /// The doorbell: the requester has work (user space posted to the send queue). Before RTS
    /// it is `EINVAL`, as C's `rxe_post_send` (the WQE stays posted, for the first doorbell in
    /// RTS).
    pub(crate) fn post_send_user(&self) -> Result {
        if self.shared.state_hint() < QpState::Rts {
            return Err(EINVAL);
        }
        self.shared.kick();
        Ok(())
    }

    /// `rxe_modify_qp`: the checks ([`Self::check_modify`]), then the attributes as
    /// `rxe_qp_from_attr` stores them ([`store_attrs`]) and what the engine takes from them.
    pub(crate) fn modify(&self, attr: &QpAttrs, mask: u32) -> Result {
        use qp_state::*;
        // `alloc_rd_atomic_resources`: the new responder resources, allocated before the lock
        // (and before any change, so ENOMEM leaves the QP as it was; C returns it half-way).
        let rd_atomic_slots = if mask & IB_QP_MAX_DEST_RD_ATOMIC != 0 {
            let n = usize::from(round_rd_atomic(attr.max_dest_rd_atomic));
            Some(KVec::from_elem(None, n, GFP_KERNEL)?)
        } else {
            None
        };
        let _bh = BhDisabled::new();
        let mut guard = self.shared.eng.lock();
        let old_state = guard.state();
        let (pri_av, alt_av) = self.check_modify(&guard, attr, mask)?;
        if mask & IB_QP_STATE != 0 && state(attr.qp_state) != QpState::Rts {
            self.shared.take_waiting_acks(&mut guard);
        }
        if pri_av.is_some() {
            guard.pri_av = pri_av;
        }
        if alt_av.is_some() {
            guard.alt_av = alt_av;
        }
        store_attrs(&mut guard.attrs, attr, mask);
        guard.decode_attrs();
        // What the engine takes from the new attributes (`rxe_qp_from_attr`'s side effects).
        let new_state = guard.state();
        guard.modified(mask, old_state, new_state);
        // `free_rd_atomic_resources` + `alloc_rd_atomic_resources` (the old slots are freed
        // here, under the lock: `kfree` does not sleep).
        drop(rd_atomic_slots.map(|slots| guard.resp.replace_resources(slots)));
        self.shared
            .state_mirror
            .store(new_state as u32, Ordering::Relaxed);
        drop(guard);
        drop(_bh);
        if new_state != old_state && matches!(new_state, QpState::Rts | QpState::Err | QpState::Sqd)
        {
            // Start sending what was posted early, flush everything, or see whether the send
            // queue is already drained.
            self.shared.kick();
        }
        Ok(())
    }

    /// The checks of `modify_qp` against the QP as it is (`proto::qp_state::chk_modify`), and
    /// the primary and alternate address vectors it sets, checked (`rxe_av_chk_attr`) and made
    /// (`rxe_init_av`). Changes nothing.
    fn check_modify(
        &self,
        eng: &Engine,
        attr: &QpAttrs,
        mask: u32,
    ) -> Result<(Option<AddressVector>, Option<AddressVector>)> {
        use qp_state::*;
        let now = QpNow {
            qp_type: self.shared.qp_type,
            state: eng.state(),
            sq_draining: eng.req.sq_draining,
            has_srq: self.shared.srq.is_some(),
        };
        let check = ModifyAttr {
            qp_state: state(attr.qp_state),
            cur_qp_state: state(attr.cur_qp_state),
            port_num: attr.port_num,
            cap: attr.cap.into(),
            qp_access_flags: attr.qp_access_flags,
            alt_port_num: attr.alt_port_num,
            alt_timeout: attr.alt_timeout,
            path_mtu: attr.path_mtu,
            max_rd_atomic: attr.max_rd_atomic,
            timeout: attr.timeout,
        };
        // States outside the enum are refused before anything else reads them.
        if (mask & IB_QP_STATE != 0 && QpState::from_raw(attr.qp_state).is_none())
            || (mask & IB_QP_CUR_STATE != 0 && QpState::from_raw(attr.cur_qp_state).is_none())
        {
            return Err(EINVAL);
        }
        chk_modify(&now, &check, mask).map_err(errno)?;
        let av_of = |av: &QpAv| -> Result<AddressVector> {
            let network = match av.network_type {
                2 => NetworkType::Ipv4,
                3 => NetworkType::Ipv6,
                _ => return Err(EINVAL),
            };
            if i32::from(av.route.sgid_index) > params::PORT_GID_TBL_LEN {
                return Err(EINVAL);
            }
            Ok(AddressVector::new(
                av.port_num,
                av.route.into(),
                av.sgid,
                network,
                av.dmac,
            ))
        };
        let pri_av = match (&attr.av, mask & IB_QP_AV != 0) {
            (Some(av), true) => Some(av_of(av)?),
            _ => None,
        };
        let alt_av = match (&attr.alt_av, mask & IB_QP_ALT_PATH != 0) {
            (Some(av), true) => Some(av_of(av)?),
            _ => None,
        };
        Ok((pri_av, alt_av))
    }

    /// `rxe_post_send_kernel`, one WR: written into the send ring as user space would.
    pub(crate) fn post_kernel<T: QpOps<Ah = RxeAh, Mr = RxeMr>>(
        &self,
        wr: &KernelSendWr<'_, T>,
    ) -> Result {
        if let Some(reg) = &wr.reg {
            reg.mr.stage_reg(reg.iova, reg.length);
        }
        let qp = &self.shared;
        if qp.is_user {
            return Err(EINVAL);
        }
        let send_wr = ib_values::send_wr(&wr.wr, wr.ah.map(|ah| ah.num()))?;
        let mut sges = [Sge::default(); ib_values::MAX_KERNEL_SGE];
        let sges = ib_values::ring_sges(wr.sges, &mut sges)?;
        // Inline data is copied from the ULP's buffers now, as the C driver does. The kind of
        // data is the opcode's: an RDMA WRITE without SGEs (ib_drain_sq's) still has SGEs, none.
        let mut inline = [0u8; crate::proto::params::MAX_INLINE_DATA as usize];
        let mask = wqe::wr_opcode_mask(send_wr.opcode, qp.qp_type).ok_or(EINVAL)?;
        let data = if wqe::DataKind::of(mask, send_wr.send_flags) == wqe::DataKind::Inline {
            let mut len = 0usize;
            for sge in sges {
                let n = sge.length as usize;
                let dst = inline.get_mut(len..len + n).ok_or(EINVAL)?;
                KernelMem::read(sge.addr, dst);
                len += n;
            }
            SendData::Inline(&inline[..len])
        } else if wqe::DataKind::of(mask, send_wr.send_flags) == wqe::DataKind::None {
            SendData::None
        } else {
            SendData::Sges(sges)
        };
        let limits = SendLimits {
            max_sge: qp.cap.max_send_sge,
            max_inline: qp.cap.max_inline_data,
            allow_kernel_only: true,
        };
        let mut slot = [0u8; 2048];
        let g = *qp.sq.geometry();
        let slot = slot.get_mut(..g.slot_size() as usize).ok_or(EINVAL)?;
        let mut producers = qp.producers.lock();
        // C `rxe_post_send`: not before RTS.
        if qp.state_hint() < QpState::Rts {
            return Err(EINVAL);
        }
        let producer = producers.sq;
        let ends = g.ends(QueueType::FromUlp, producer, qp.sq.shared_consumer());
        if ends.is_full() {
            return Err(ENOMEM);
        }
        wqe::write_send_wqe(slot, qp.qp_type, limits, &send_wr, data).map_err(|_| EINVAL)?;
        qp.sq.write_slot(producer, slot)?;
        producers.sq = g.next_index(producer);
        qp.sq.publish_producer(producers.sq);
        Ok(())
    }

    /// After a chain of kernel posts: the requester has work.
    pub(crate) fn kick_send(&self) {
        self.shared.kick_deferred();
    }

    /// `rxe_post_recv`, one WR (kernel QPs).
    pub(crate) fn post_recv(&self, wr_id: u64, sges: &[IbSge]) -> Result {
        let qp = &self.shared;
        let rq = qp.rq.as_ref().ok_or(EINVAL)?;
        // C `rxe_post_recv`: not in RESET (C10-97.2.1).
        if qp.is_user || qp.state_hint() == QpState::Reset {
            return Err(EINVAL);
        }
        let g = *rq.geometry();
        let mut slot = [0u8; 2048];
        let slot = slot.get_mut(..g.slot_size() as usize).ok_or(EINVAL)?;
        let mut ring = [Sge::default(); ib_values::MAX_KERNEL_SGE];
        let sges = ib_values::ring_sges(sges, &mut ring)?;
        wqe::write_recv_wqe(slot, wr_id, sges, qp.cap.max_recv_sge).map_err(|_| EINVAL)?;
        {
            let mut producers = qp.producers.lock();
            let producer = producers.rq;
            let ends = g.ends(QueueType::FromUlp, producer, rq.shared_consumer());
            if ends.is_full() {
                return Err(ENOMEM);
            }
            rq.write_slot(producer, slot)?;
            producers.rq = g.next_index(producer);
            rq.publish_producer(producers.rq);
        }
        if qp.state_hint() == QpState::Err {
            qp.kick_deferred();
        }
        Ok(())
    }

    /// `rxe_query_qp`: the stored attributes, the current state as both states, the PSNs the
    /// machines are at (as C: `rdma res show qp` then says where a QP stands), the caps.
    pub(crate) fn query(&self) -> (QpAttrs, IbQpCap) {
        let _bh = BhDisabled::new();
        let (mut attrs, sq_psn, rq_psn) = {
            let eng = self.shared.eng.lock();
            (eng.attrs, eng.req.psn, eng.resp.psn)
        };
        attrs.sq_psn = sq_psn;
        attrs.rq_psn = rq_psn;
        attrs.cur_qp_state = attrs.qp_state;
        attrs.cap = self.cap.into();
        (attrs, self.cap.into())
    }

    /// `rxe_destroy_qp`: out of the QP table, the engine drained and its timers stopped, the
    /// GSI number given back (the C driver never does: a second GSI QP could never be made).
    /// What the data path and the multicast groups see of the QP.
    pub(crate) fn shared(&self) -> &QpShared {
        &self.shared
    }

    pub(crate) fn destroy(&self, qps: &Qps) {
        drop(qps.table.remove(self.shared.qpn));
        // A receiver that found the QP before it left the table may still be delivering: the
        // closed queues drop what it brings, so no packet (and no page it refers to) outlives
        // the QP.
        {
            // The rings are filled in BH context by the peer's engine.
            let _bh = BhDisabled::new();
            self.shared.requests.close();
            self.shared.responses.close();
        }
        self.shared.drain();
        // Two QPs that send to each other hold each other here: the cycle ends with either.
        drop(self.shared.ring_peer.take());
        drop(self.shared.local_mr.take());
        self.shared.retransmit_timer.shutdown();
        self.shared.rnr_timer.shutdown();
        qps.give_back(&self.qpn);
    }
}

impl QpShared {
    /// The QP state as last set, without the engine lock.
    pub(crate) fn state_hint(&self) -> QpState {
        state(self.state_mirror.load(Ordering::Relaxed))
    }
}
