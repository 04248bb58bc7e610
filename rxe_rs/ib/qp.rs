// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: the verbs a driver implements for them ([`QpOps`]), `ib_qp_init_attr`,
//! `ib_qp_attr` and kernel work requests as plain Rust values, and the QP callbacks of
//! `ib_device_ops` (`post_srq_recv` included: it shares the receive WR chain walk).

use super::ah::GlobalRoute;
use super::{
    ah::{parse_ah_attr, write_ah_attr, AhInit, AhObject, AhOps},
    cq::{CqObject, CqOps},
    device::{Device, PdId},
    handles::QpHandle,
    mr::{MrObject, MrOps, Sge},
    object::Object,
    srq::{SrqObject, SrqOps},
    ucontext::pd_context,
    uqueue::UserReq,
};
use crate::ffi;
use kernel::{error::from_result, prelude::*};

/// The queue sizes of a QP (`struct ib_qp_cap`): asked for at create, reported by query.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpCap {
    /// Send work requests.
    pub(crate) max_send_wr: u32,
    /// Receive work requests.
    pub(crate) max_recv_wr: u32,
    /// SGEs per send work request.
    pub(crate) max_send_sge: u32,
    /// SGEs per receive work request.
    pub(crate) max_recv_sge: u32,
    /// Bytes of inline data per send work request.
    pub(crate) max_inline_data: u32,
}

/// A kernel ULP's send work request without its SGEs (`struct ib_send_wr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendWr {
    /// Caller's cookie (`wr_id`, or the `wr_cqe` pointer in its place).
    pub(crate) wr_id: u64,
    /// `IB_WR_*`.
    pub(crate) opcode: u32,
    /// `IB_SEND_*` bits.
    pub(crate) send_flags: u32,
    /// `ex` as the ULP left it: the immediate data (network byte order) or the rkey to
    /// invalidate.
    pub(crate) ex: u32,
    /// What the container of the WR holds for its opcode and QP type.
    pub(crate) detail: WrDetail,
}

/// The container of an `ib_send_wr` (`ib_rdma_wr`, `ib_atomic_wr`, `ib_ud_wr`, `ib_reg_wr`),
/// as the opcode and the QP type select it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrDetail {
    /// No container: SEND, SEND_WITH_IMM, SEND_WITH_INV and LOCAL_INV on RC and UC QPs.
    None,
    /// `ib_rdma_wr`: RDMA WRITE (with or without immediate), RDMA READ (with or without
    /// invalidate).
    Rdma {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `ib_atomic_wr`: compare-and-swap and fetch-and-add.
    Atomic {
        /// Remote virtual address.
        remote_addr: u64,
        /// Value to compare with (compare-and-swap) or to add (fetch-and-add).
        compare_add: u64,
        /// Value to swap in (compare-and-swap).
        swap: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `ib_ud_wr`: every WR of a UD or GSI QP, whatever the opcode (the AH is in
    /// [`KernelSendWr::ah`]).
    Ud {
        /// Destination QP number.
        remote_qpn: u32,
        /// Destination Q_Key.
        remote_qkey: u32,
        /// P_Key index (GSI only).
        pkey_index: u16,
    },
    /// `ib_reg_wr`: REG_MR (the MR is in [`KernelSendWr::reg`]).
    Reg {
        /// The MR's new lkey and rkey.
        key: u32,
        /// `IB_ACCESS_*` flags.
        access: u32,
    },
}

/// What `create_qp` asks for (`struct ib_qp_init_attr`).
pub(crate) struct QpInit {
    /// `enum ib_qp_type`.
    pub(crate) qp_type: u32,
    /// `IB_QP_CREATE_*`.
    pub(crate) create_flags: u32,
    /// Both CQs given.
    pub(crate) has_cqs: bool,
    /// Receives come from an SRQ.
    pub(crate) has_srq: bool,
    /// Port (GSI QPs).
    pub(crate) port_num: u32,
    /// Capabilities asked for; the driver writes back what it made.
    pub(crate) cap: QpCap,
    /// `udata->inlen` (the C driver takes no input).
    pub(crate) udata_inlen: usize,
    /// `IB_SIGNAL_ALL_WR`: every send WQE completes with a CQE.
    pub(crate) sq_sig_all: bool,
}

/// The objects a new QP is tied to: its CQs, its SRQ, its PD, and itself (for events).
pub(crate) struct QpLinks<'a, T: QpOps> {
    pub(crate) send_cq: &'a T::Cq,
    pub(crate) recv_cq: &'a T::Cq,
    pub(crate) srq: Option<&'a T::Srq>,
    pub(crate) pd: PdId,
    pub(crate) handle: QpHandle,
}

/// The attributes of a QP (`struct ib_qp_attr`), the RoCE address vectors included.
#[derive(Clone, Copy, Default)]
pub(crate) struct QpAttrs {
    pub(crate) qp_state: u32,
    pub(crate) cur_qp_state: u32,
    pub(crate) path_mtu: u32,
    pub(crate) path_mig_state: u32,
    pub(crate) qkey: u32,
    pub(crate) rq_psn: u32,
    pub(crate) sq_psn: u32,
    pub(crate) dest_qp_num: u32,
    pub(crate) qp_access_flags: u32,
    pub(crate) cap: QpCap,
    /// Primary path: port, route (set with `IB_QP_AV`).
    pub(crate) av: Option<QpAv>,
    /// Alternate path (`IB_QP_ALT_PATH`).
    pub(crate) alt_av: Option<QpAv>,
    pub(crate) pkey_index: u16,
    pub(crate) alt_pkey_index: u16,
    pub(crate) en_sqd_async_notify: u8,
    pub(crate) sq_draining: u8,
    pub(crate) max_rd_atomic: u8,
    pub(crate) max_dest_rd_atomic: u8,
    pub(crate) min_rnr_timer: u8,
    pub(crate) port_num: u32,
    pub(crate) timeout: u8,
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry: u8,
    pub(crate) alt_port_num: u32,
    pub(crate) alt_timeout: u8,
    pub(crate) rate_limit: u32,
}

/// A path: the address handle attributes of `IB_QP_AV` / `IB_QP_ALT_PATH`.
#[derive(Clone, Copy)]
pub(crate) struct QpAv {
    /// Port.
    pub(crate) port_num: u32,
    /// Global route; the source GID and its network type; the destination MAC.
    pub(crate) route: GlobalRoute,
    pub(crate) sgid: [u8; 16],
    pub(crate) network_type: u32,
    pub(crate) dmac: [u8; 6],
}

impl QpAv {
    fn from_init(init: AhInit) -> Option<Self> {
        let (route, sgid, network_type) = init.grh?;
        Some(Self {
            port_num: init.port_num,
            route,
            sgid,
            network_type,
            dmac: init.dmac,
        })
    }
}

fn cap_from(c: &ffi::ib_qp_cap) -> QpCap {
    QpCap {
        max_send_wr: c.max_send_wr,
        max_recv_wr: c.max_recv_wr,
        max_send_sge: c.max_send_sge,
        max_recv_sge: c.max_recv_sge,
        max_inline_data: c.max_inline_data,
    }
}

fn cap_to(c: &QpCap, out: &mut ffi::ib_qp_cap) {
    out.max_send_wr = c.max_send_wr;
    out.max_recv_wr = c.max_recv_wr;
    out.max_send_sge = c.max_send_sge;
    out.max_recv_sge = c.max_recv_sge;
    out.max_inline_data = c.max_inline_data;
}

/// Reads an `ib_qp_attr`; the address vectors only when `mask` says they are set (their
/// `sgid_attr` is only valid then).
///
/// # Safety
///
/// `a` comes from ib_core's modify_qp with this `mask`.
unsafe fn attrs_from(a: &ffi::ib_qp_attr, mask: u32) -> Result<QpAttrs> {
    let av = if mask & ffi::ib_qp_attr_mask_IB_QP_AV != 0 {
        // SAFETY: ib_core resolved `ah_attr`'s source GID for IB_QP_AV.
        Some(QpAv::from_init(unsafe { parse_ah_attr(&a.ah_attr) }?).ok_or(EINVAL)?)
    } else {
        None
    };
    let alt_av = if mask & ffi::ib_qp_attr_mask_IB_QP_ALT_PATH != 0 {
        // SAFETY: as above for IB_QP_ALT_PATH.
        Some(QpAv::from_init(unsafe { parse_ah_attr(&a.alt_ah_attr) }?).ok_or(EINVAL)?)
    } else {
        None
    };
    Ok(QpAttrs {
        qp_state: a.qp_state,
        cur_qp_state: a.cur_qp_state,
        path_mtu: a.path_mtu,
        path_mig_state: a.path_mig_state,
        qkey: a.qkey,
        rq_psn: a.rq_psn,
        sq_psn: a.sq_psn,
        dest_qp_num: a.dest_qp_num,
        qp_access_flags: a.qp_access_flags as u32,
        cap: cap_from(&a.cap),
        av,
        alt_av,
        pkey_index: a.pkey_index,
        alt_pkey_index: a.alt_pkey_index,
        en_sqd_async_notify: a.en_sqd_async_notify,
        sq_draining: a.sq_draining,
        max_rd_atomic: a.max_rd_atomic,
        max_dest_rd_atomic: a.max_dest_rd_atomic,
        min_rnr_timer: a.min_rnr_timer,
        port_num: a.port_num,
        timeout: a.timeout,
        retry_cnt: a.retry_cnt,
        rnr_retry: a.rnr_retry,
        alt_port_num: a.alt_port_num,
        alt_timeout: a.alt_timeout,
        rate_limit: a.rate_limit,
    })
}

fn attrs_to(s: &QpAttrs, a: &mut ffi::ib_qp_attr) {
    a.qp_state = s.qp_state;
    a.cur_qp_state = s.cur_qp_state;
    a.path_mtu = s.path_mtu;
    a.path_mig_state = s.path_mig_state;
    a.qkey = s.qkey;
    a.rq_psn = s.rq_psn;
    a.sq_psn = s.sq_psn;
    a.dest_qp_num = s.dest_qp_num;
    a.qp_access_flags = s.qp_access_flags as i32;
    cap_to(&s.cap, &mut a.cap);
    if let Some(av) = &s.av {
        write_ah_attr(&mut a.ah_attr, av.port_num, &av.route);
    }
    if let Some(av) = &s.alt_av {
        write_ah_attr(&mut a.alt_ah_attr, av.port_num, &av.route);
    }
    a.pkey_index = s.pkey_index;
    a.alt_pkey_index = s.alt_pkey_index;
    a.en_sqd_async_notify = s.en_sqd_async_notify;
    a.sq_draining = s.sq_draining;
    a.max_rd_atomic = s.max_rd_atomic;
    a.max_dest_rd_atomic = s.max_dest_rd_atomic;
    a.min_rnr_timer = s.min_rnr_timer;
    a.port_num = s.port_num;
    a.timeout = s.timeout;
    a.retry_cnt = s.retry_cnt;
    a.rnr_retry = s.rnr_retry;
    a.alt_port_num = s.alt_port_num;
    a.alt_timeout = s.alt_timeout;
    a.rate_limit = s.rate_limit;
}

/// The queue pair verbs of a driver. Methods run in process context but the posting ones,
/// which kernel ULPs call from any context.
#[vtable]
pub(crate) trait QpOps: CqOps + SrqOps + MrOps + AhOps {
    /// Per queue pair data.
    type Qp: Send + Sync;

    /// `create_qp`: the data and the QP number; `init.cap` is updated to what was made.
    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit,
        links: QpLinks<'_, Self>,
        user: Option<UserReq>,
    ) -> Result<(Self::Qp, u32)>;
    /// `modify_qp`.
    fn modify_qp(dev: &Device<Self>, qp: &Self::Qp, attr: &QpAttrs, mask: u32) -> Result;
    /// `query_qp`: the current attributes and capabilities.
    fn query_qp(dev: &Device<Self>, qp: &Self::Qp) -> (QpAttrs, QpCap);
    /// `destroy_qp`; on success the data is dropped after it.
    fn destroy_qp(dev: &Device<Self>, qp: &Self::Qp) -> Result;
    /// `post_send` from user space: the doorbell of a QP whose send queue user space fills.
    fn post_send_user(dev: &Device<Self>, qp: &Self::Qp) -> Result;
    /// `post_send` of one kernel work request (any context).
    fn post_send_kernel(dev: &Device<Self>, qp: &Self::Qp, wr: &KernelSendWr<'_, Self>) -> Result;
    /// After `post_send_kernel` of a chain: start sending.
    fn kick_send(dev: &Device<Self>, qp: &Self::Qp);
    /// `post_recv` of one kernel receive WR (any context).
    fn post_recv(dev: &Device<Self>, qp: &Self::Qp, wr_id: u64, sges: &[Sge]) -> Result;
    /// `attach_mcast` of a UD QP to the multicast GID `mgid` (optional, with `detach_mcast`;
    /// ib_core checked both).
    fn attach_mcast(_dev: &Device<Self>, _qp: &Self::Qp, _mgid: &[u8; 16]) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `detach_mcast`.
    fn detach_mcast(_dev: &Device<Self>, _qp: &Self::Qp, _mgid: &[u8; 16]) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

type QpObject<T> = Object<ffi::ib_qp, <T as QpOps>::Qp>;

// The callbacks below are only installed in the ops table of a `Device<T>` (`register`):
// ib_core calls them as their op, with every pointer argument valid for the call and naming
// objects of this device, which outlives them.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn create_qp<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    init: *mut ffi::ib_qp_init_attr,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_qp` zeroed bytes on one of our devices, its PD set;
    // `init` is valid and ours for the call.
    let (dev, pd, i) = unsafe { (Device::<T>::of(ibqp), (*ibqp).pd, &mut *init) };
    // SAFETY: `udata` is null (kernel) or valid for the call; for user QPs the caller's
    // ucontext is the one of the QP's PD.
    let user = unsafe { UserReq::new(udata, pd_context(pd), dev.mmaps()) };
    let udata_inlen = if udata.is_null() {
        0
    } else {
        // SAFETY: a non-null `udata` is valid for the call.
        unsafe { (*udata).inlen }
    };
    let mut req = QpInit {
        qp_type: i.qp_type,
        create_flags: i.create_flags,
        has_cqs: !i.send_cq.is_null() && !i.recv_cq.is_null(),
        has_srq: !i.srq.is_null(),
        port_num: i.port_num,
        cap: cap_from(&i.cap),
        udata_inlen,
        sq_sig_all: i.sq_sig_type == ffi::ib_sig_type_IB_SIGNAL_ALL_WR,
    };
    if !req.has_cqs {
        return EINVAL.to_errno();
    }
    // SAFETY: the CQs and SRQ are ours (same device), made by `create_cq` / `create_srq`;
    // ib_core holds them for the QP's lifetime.
    let (send_cq, recv_cq) = unsafe {
        (
            CqObject::<T>::data(i.send_cq),
            CqObject::<T>::data(i.recv_cq),
        )
    };
    // SAFETY: as above.
    let srq = (!i.srq.is_null()).then(|| unsafe { SrqObject::<T>::data(i.srq) });
    from_result(|| {
        let links = QpLinks::<T> {
            send_cq,
            recv_cq,
            srq,
            pd: PdId(pd as usize),
            handle: QpHandle::new(ibqp).ok_or(EINVAL)?,
        };
        let (data, qpn) = T::create_qp(dev, &mut req, links, user)?;
        // SAFETY: the data slot of the new QP is unwritten until now; ib_core reads `qp_num`
        // only after we return.
        unsafe {
            QpObject::<T>::init(ibqp, data);
            (*ibqp).qp_num = qpn;
        }
        cap_to(&req.cap, &mut i.cap);
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn modify_qp<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    attr: *mut ffi::ib_qp_attr,
    mask: kernel::ffi::c_int,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_qp` succeeded for this QP; `attr` is valid with `mask`.
    let (dev, data, attr) = unsafe { (Device::<T>::of(ibqp), QpObject::<T>::data(ibqp), &*attr) };
    let mask = mask as u32;
    from_result(|| {
        // SAFETY: `attr` is ib_core's, its address vectors valid where `mask` says.
        let attrs = unsafe { attrs_from(attr, mask) }?;
        T::modify_qp(dev, data, &attrs, mask).map(|()| 0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn query_qp<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    attr: *mut ffi::ib_qp_attr,
    _mask: kernel::ffi::c_int,
    init: *mut ffi::ib_qp_init_attr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_qp` succeeded for this QP; `attr` and `init` are ours to fill.
    let (dev, data, q, attr, i) = unsafe {
        (
            Device::<T>::of(ibqp),
            QpObject::<T>::data(ibqp),
            &*ibqp,
            &mut *attr,
            &mut *init,
        )
    };
    let (attrs, cap) = T::query_qp(dev, data);
    *attr = Default::default();
    attrs_to(&attrs, attr);
    i.send_cq = q.send_cq;
    i.recv_cq = q.recv_cq;
    i.srq = q.srq;
    i.qp_type = q.qp_type;
    i.port_num = 1;
    cap_to(&cap, &mut i.cap);
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn destroy_qp<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_qp` succeeded for this QP, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(ibqp), QpObject::<T>::data(ibqp)) };
    from_result(|| {
        T::destroy_qp(dev, data)?;
        // SAFETY: on success this is the last call for the QP.
        unsafe { QpObject::<T>::drop_data(ibqp) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn attach_mcast<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    gid: *mut ffi::ib_gid,
    _lid: u16,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core's contract for `attach_mcast`, as `mcast_op` requires.
    unsafe { mcast_op::<T>(ibqp, gid, T::attach_mcast) }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn detach_mcast<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    gid: *mut ffi::ib_gid,
    _lid: u16,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core's contract for `detach_mcast`, as `mcast_op` requires.
    unsafe { mcast_op::<T>(ibqp, gid, T::detach_mcast) }
}

/// `attach_mcast` / `detach_mcast`: `op` on the QP and the MGID (the MLID means nothing on RoCE).
///
/// # Safety
///
/// `create_qp` succeeded for `ibqp` and it is not being destroyed (ib_core); `gid` is a valid
/// `union ib_gid`, 16 raw bytes, for the call.
unsafe fn mcast_op<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    gid: *mut ffi::ib_gid,
    op: fn(&Device<T>, &T::Qp, &[u8; 16]) -> Result,
) -> kernel::ffi::c_int {
    // SAFETY: the caller's contract above.
    let (dev, data, mgid) = unsafe {
        (
            Device::<T>::of(ibqp),
            QpObject::<T>::data(ibqp),
            gid.cast::<[u8; 16]>().read(),
        )
    };
    from_result(|| op(dev, data, &mgid).map(|()| 0))
}

/// A kernel ULP's send work request (`struct ib_send_wr` and its `ib_ud_wr`, `ib_rdma_wr`,
/// `ib_atomic_wr` containers), as plain values.
pub(crate) struct KernelSendWr<'a, T: QpOps> {
    pub(crate) wr: SendWr,
    pub(crate) sges: &'a [Sge],
    /// The address handle of a UD send.
    pub(crate) ah: Option<&'a T::Ah>,
    /// The MR of a REG_MR, with the `iova` and `length` it is to have (as `map_mr_sg` and the
    /// ULP left them in its `ib_mr`).
    pub(crate) reg: Option<RegMr<'a, T>>,
}

/// The MR a REG_MR work request registers.
pub(crate) struct RegMr<'a, T: QpOps> {
    pub(crate) mr: &'a T::Mr,
    pub(crate) iova: u64,
    pub(crate) length: u64,
}

/// Copies up to `out.len()` SGEs of a work request; `EINVAL` for more.
///
/// # Safety
///
/// `list` points to `num` valid `ib_sge`s (or `num` is 0).
unsafe fn read_sges(list: *const ffi::ib_sge, num: i32, out: &mut [Sge]) -> Result<usize> {
    let n = usize::try_from(num).map_err(|_| EINVAL)?;
    if n > out.len() {
        return Err(EINVAL);
    }
    for (i, sge) in out.iter_mut().enumerate().take(n) {
        // SAFETY: `i < num` (caller).
        let s = unsafe { &*list.add(i) };
        *sge = Sge {
            addr: s.addr,
            length: s.length,
            lkey: s.lkey,
        };
    }
    Ok(n)
}

/// Reads one `ib_send_wr` (with its container for the opcodes that have one).
///
/// # Safety
///
/// `wr` is a valid send WR of a kernel ULP posting to a QP of type `qp_type`.
unsafe fn read_send_wr<'a, T: QpOps>(
    wr: *const ffi::ib_send_wr,
    qp_type: u32,
    sges: &'a mut [Sge; 32],
) -> Result<KernelSendWr<'a, T>> {
    // SAFETY: per the caller.
    let w = unsafe { &*wr };
    // SAFETY: `sg_list` holds `num_sge` entries (verbs contract).
    let n = unsafe { read_sges(w.sg_list, w.num_sge, sges) }?;
    // SAFETY: `ex` is a plain 32-bit union.
    let ex = unsafe { *w.ex.imm_data.as_ref() };
    // SAFETY: `wr_id` is the member kernel ULPs set, or the `wr_cqe` pointer in its place.
    let wr_id = unsafe { *w.__bindgen_anon_1.wr_id.as_ref() };
    let opcode = w.opcode;
    let mut ah = None;
    let mut reg = None;
    let detail = if qp_type == ffi::ib_qp_type_IB_QPT_UD || qp_type == ffi::ib_qp_type_IB_QPT_GSI {
        // SAFETY: UD WRs are embedded in an `ib_ud_wr`.
        let ud = unsafe { &*wr.cast::<ffi::ib_ud_wr>() };
        if !ud.ah.is_null() {
            // SAFETY: the AH is one of ours (same device), alive while the WR is posted.
            ah = Some(unsafe { AhObject::<T>::data(ud.ah) });
        }
        WrDetail::Ud {
            remote_qpn: ud.remote_qpn,
            remote_qkey: ud.remote_qkey,
            pkey_index: ud.pkey_index,
        }
    } else {
        match opcode {
            ffi::ib_wr_opcode_IB_WR_RDMA_WRITE
            | ffi::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM
            | ffi::ib_wr_opcode_IB_WR_RDMA_READ
            | ffi::ib_wr_opcode_IB_WR_RDMA_READ_WITH_INV => {
                // SAFETY: RDMA WRs are embedded in an `ib_rdma_wr`.
                let r = unsafe { &*wr.cast::<ffi::ib_rdma_wr>() };
                WrDetail::Rdma {
                    remote_addr: r.remote_addr,
                    rkey: r.rkey,
                }
            }
            ffi::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP
            | ffi::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => {
                // SAFETY: atomic WRs are embedded in an `ib_atomic_wr`.
                let a = unsafe { &*wr.cast::<ffi::ib_atomic_wr>() };
                WrDetail::Atomic {
                    remote_addr: a.remote_addr,
                    compare_add: a.compare_add,
                    swap: a.swap,
                    rkey: a.rkey,
                }
            }
            ffi::ib_wr_opcode_IB_WR_REG_MR => {
                // SAFETY: REG_MR WRs are embedded in an `ib_reg_wr`.
                let r = unsafe { &*wr.cast::<ffi::ib_reg_wr>() };
                if r.mr.is_null() {
                    return Err(EINVAL);
                }
                // SAFETY: the MR is one of ours (ib_core made it with our `alloc_mr`), alive
                // while the WR is posted (verbs contract).
                let (m, data) = unsafe { (&*r.mr, MrObject::<T>::data(r.mr)) };
                reg = Some(RegMr {
                    mr: data,
                    iova: m.iova,
                    length: m.length,
                });
                WrDetail::Reg {
                    key: r.key,
                    access: r.access as u32,
                }
            }
            _ => WrDetail::None,
        }
    };
    Ok(KernelSendWr {
        wr: SendWr {
            wr_id,
            opcode,
            send_flags: w.send_flags as u32,
            ex,
            detail,
        },
        sges: &sges[..n],
        ah,
        reg,
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn post_send<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    wr: *const ffi::ib_send_wr,
    bad_wr: *mut *const ffi::ib_send_wr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_qp` succeeded for this QP, so its data is initialised.
    let (dev, data, q) = unsafe { (Device::<T>::of(ibqp), QpObject::<T>::data(ibqp), &*ibqp) };
    // A user QP's send queue is filled by user space: uverbs calls this with no work requests
    // as its doorbell.
    if !q.uobject.is_null() {
        return from_result(|| T::post_send_user(dev, data).map(|()| 0));
    }
    let mut cur = wr;
    let mut sges = [Sge::default(); 32];
    let mut res = Ok(());
    while !cur.is_null() {
        // SAFETY: `cur` is an element of the kernel ULP's valid chain of WRs.
        let posted = unsafe { read_send_wr::<T>(cur, q.qp_type, &mut sges) }
            .and_then(|w| T::post_send_kernel(dev, data, &w));
        if let Err(e) = posted {
            // SAFETY: `bad_wr` is valid for writes (verbs contract).
            unsafe { *bad_wr = cur };
            res = Err(e);
            break;
        }
        // SAFETY: as above.
        cur = unsafe { (*cur).next };
    }
    T::kick_send(dev, data);
    from_result(|| res.map(|()| 0))
}

/// Posts a chain of receive WRs one by one with `post`; on a failure `*bad_wr` names the WR.
///
/// # Safety
///
/// `wr` is a valid chain of receive WRs and `bad_wr` valid for writes (verbs contract).
unsafe fn post_recv_chain(
    wr: *const ffi::ib_recv_wr,
    bad_wr: *mut *const ffi::ib_recv_wr,
    mut post: impl FnMut(u64, &[Sge]) -> Result,
) -> Result<kernel::ffi::c_int> {
    let mut cur = wr;
    let mut sges = [Sge::default(); 32];
    while !cur.is_null() {
        // SAFETY: `cur` is an element of the caller's chain.
        let w = unsafe { &*cur };
        // SAFETY: `wr_id` is the member kernel ULPs set, or the `wr_cqe` pointer in its place.
        let wr_id = unsafe { *w.__bindgen_anon_1.wr_id.as_ref() };
        // SAFETY: `sg_list` holds `num_sge` entries (verbs contract).
        let posted = unsafe { read_sges(w.sg_list, w.num_sge, &mut sges) }
            .and_then(|n| post(wr_id, &sges[..n]));
        if let Err(e) = posted {
            // SAFETY: per the caller.
            unsafe { *bad_wr = cur };
            return Err(e);
        }
        cur = w.next;
    }
    Ok(0)
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn post_recv<T: QpOps>(
    ibqp: *mut ffi::ib_qp,
    wr: *const ffi::ib_recv_wr,
    bad_wr: *mut *const ffi::ib_recv_wr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_qp` succeeded for this QP, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(ibqp), QpObject::<T>::data(ibqp)) };
    // SAFETY: `wr` is a valid chain of receive WRs, `bad_wr` valid for writes.
    from_result(|| unsafe {
        post_recv_chain(wr, bad_wr, |wr_id, sges| {
            T::post_recv(dev, data, wr_id, sges)
        })
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn post_srq_recv<T: SrqOps>(
    ibsrq: *mut ffi::ib_srq,
    wr: *const ffi::ib_recv_wr,
    bad_wr: *mut *const ffi::ib_recv_wr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(ibsrq), SrqObject::<T>::data(ibsrq)) };
    // SAFETY: `wr` is a valid chain of receive WRs, `bad_wr` valid for writes.
    from_result(|| unsafe {
        post_recv_chain(wr, bad_wr, |wr_id, sges| {
            T::post_srq_recv(dev, data, wr_id, sges)
        })
    })
}
