// SPDX-License-Identifier: GPL-2.0

//! Completion queues: the verbs a driver implements for them ([`CqOps`]) and their
//! `ib_device_ops` callbacks, `poll_cq`'s translation of completions into `struct ib_wc`
//! included.

use super::{
    device::{Device, DeviceOps},
    handles::{CqHandle, QpHandle},
    object::Object,
    uqueue::UserReq,
};
use crate::ffi;
use kernel::{error::from_result, prelude::*};

/// A work completion (`struct ib_wc` but its QP, which [`PolledWc`] names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wc {
    /// The WR's cookie (`wr_id`, or its `wr_cqe` pointer).
    pub(crate) wr_id: u64,
    /// `enum ib_wc_status`.
    pub(crate) status: u32,
    /// `enum ib_wc_opcode`.
    pub(crate) opcode: u32,
    /// Vendor error.
    pub(crate) vendor_err: u32,
    /// Bytes transferred.
    pub(crate) byte_len: u32,
    /// `ex`: the immediate data (network byte order) or the invalidated rkey.
    pub(crate) ex: u32,
    /// The local QP's number (ib_core gets the QP itself, [`PolledWc::qp`]).
    pub(crate) qp_num: u32,
    /// Source QP number (UD receives).
    pub(crate) src_qp: u32,
    /// `IB_WC_*` flags.
    pub(crate) wc_flags: u32,
    /// P_Key index.
    pub(crate) pkey_index: u16,
    /// Source LID.
    pub(crate) slid: u16,
    /// Service level.
    pub(crate) sl: u8,
    /// Destination LID path bits.
    pub(crate) dlid_path_bits: u8,
    /// Port number.
    pub(crate) port_num: u8,
}

/// `struct ib_cq_init_attr`.
pub(crate) struct CqInit {
    /// Completions asked for. (`comp_vector` is checked by ib_uverbs; rxe ignores it.)
    pub(crate) cqe: u32,
    /// `IB_UVERBS_CQ_FLAGS_*`.
    pub(crate) flags: u32,
}

/// A completion of a kernel CQ: the CQE, its QP, and the network header type of a datagram.
#[derive(Clone, Copy, Default)]
pub(crate) struct PolledWc {
    pub(crate) wc: Wc,
    pub(crate) qp: Option<QpHandle>,
    /// `RDMA_NETWORK_*` for UD/GSI receives (`IB_WC_WITH_NETWORK_HDR_TYPE`), else 0.
    pub(crate) network_hdr_type: u8,
}

/// The completion queue verbs of a driver. Methods run in process context, but `poll_cq` and
/// `req_notify_cq`, which kernel users call from any context.
#[vtable]
pub(crate) trait CqOps: DeviceOps {
    /// Per completion queue data.
    type Cq: Send + Sync;

    /// `create_cq`: the data and the CQ size to report (`ib_cq.cqe`). `user` is there for a
    /// user-space CQ.
    fn create_cq(
        dev: &Device<Self>,
        attr: &CqInit,
        user: Option<UserReq>,
        handle: CqHandle,
    ) -> Result<(Self::Cq, u32)>;
    /// `resize_user_cq` (optional): the new size to report.
    fn resize_cq(
        _dev: &Device<Self>,
        _cq: &Self::Cq,
        _cqe: u32,
        _user: Option<UserReq>,
    ) -> Result<u32> {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `destroy_cq`; on success the data is dropped after it.
    fn destroy_cq(dev: &Device<Self>, cq: &Self::Cq) -> Result;
    /// `req_notify_cq`: arms the CQ with `flags` (`IB_CQ_*`); true when completions may have
    /// been missed (asked for with `IB_CQ_REPORT_MISSED_EVENTS`).
    fn req_notify_cq(dev: &Device<Self>, cq: &Self::Cq, flags: u32) -> Result<bool>;
    /// `poll_cq` of a kernel CQ: fills `out` from the front; how many.
    fn poll_cq(dev: &Device<Self>, cq: &Self::Cq, out: &mut [PolledWc]) -> usize;
}

pub(super) type CqObject<T> = Object<ffi::ib_cq, <T as CqOps>::Cq>;

// The callbacks below are only installed in the ops table of a `Device<T>` (`register`):
// ib_core calls them as their op, with every pointer argument valid for the call and naming
// objects of this device, which outlives them.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn create_cq<T: CqOps>(
    ibcq: *mut ffi::ib_cq,
    attr: *const ffi::ib_cq_init_attr,
    attrs: *mut ffi::uverbs_attr_bundle,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_cq` zeroed bytes on one of our devices.
    let dev = unsafe { Device::<T>::of(ibcq) };
    // SAFETY: `attr` is valid for the call.
    let init = unsafe {
        CqInit {
            cqe: (*attr).cqe,
            flags: (*attr).flags,
        }
    };
    let user = if attrs.is_null() {
        None
    } else {
        // SAFETY: `attrs` is the uverbs bundle of a user CQ, valid for the call.
        let context = unsafe { ffi::rxe_rs_udata_context(attrs) };
        // SAFETY: the bundle's first member is the driver's udata, of the caller's `context`.
        unsafe { UserReq::new(attrs.cast(), context, dev.mmaps()) }
    };
    from_result(|| {
        let handle = CqHandle::new(ibcq).ok_or(EINVAL)?;
        let (data, cqe) = T::create_cq(dev, &init, user, handle)?;
        // SAFETY: the data slot of the new CQ is unwritten until now; ib_core reads `cqe`
        // only after we return.
        unsafe {
            CqObject::<T>::init(ibcq, data);
            (*ibcq).cqe = cqe as i32;
        }
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn resize_cq<T: CqOps>(
    ibcq: *mut ffi::ib_cq,
    cqe: kernel::ffi::c_uint,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_cq` succeeded for this CQ.
    let (dev, cq) = unsafe { (Device::<T>::of(ibcq), CqObject::<T>::data(ibcq)) };
    // SAFETY: `udata` is null or valid for the call; the driver supplies the user context the
    // CQ was created by.
    let user = unsafe { UserReq::new(udata, core::ptr::null_mut(), dev.mmaps()) };
    from_result(|| {
        let cqe = T::resize_cq(dev, cq, cqe, user)?;
        // SAFETY: ib_uverbs holds the CQ's uobject exclusively during the resize.
        unsafe { (*ibcq).cqe = cqe as i32 };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn destroy_cq<T: CqOps>(
    ibcq: *mut ffi::ib_cq,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_cq` succeeded for this CQ, so its data is initialised.
    let (dev, cq) = unsafe { (Device::<T>::of(ibcq), CqObject::<T>::data(ibcq)) };
    from_result(|| {
        T::destroy_cq(dev, cq)?;
        // SAFETY: on success this is the last call for the CQ.
        unsafe { CqObject::<T>::drop_data(ibcq) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn req_notify_cq<T: CqOps>(
    ibcq: *mut ffi::ib_cq,
    flags: ffi::ib_cq_notify_flags,
) -> kernel::ffi::c_int {
    // SAFETY: `create_cq` succeeded for this CQ, so its data is initialised.
    let (dev, cq) = unsafe { (Device::<T>::of(ibcq), CqObject::<T>::data(ibcq)) };
    from_result(|| T::req_notify_cq(dev, cq, flags).map(i32::from))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn poll_cq<T: CqOps>(
    ibcq: *mut ffi::ib_cq,
    num_entries: kernel::ffi::c_int,
    wc: *mut ffi::ib_wc,
) -> kernel::ffi::c_int {
    const BATCH: usize = 16;
    let Ok(want) = usize::try_from(num_entries) else {
        return EINVAL.to_errno();
    };
    // SAFETY: `create_cq` succeeded for this CQ, so its data is initialised.
    let (dev, cq) = unsafe { (Device::<T>::of(ibcq), CqObject::<T>::data(ibcq)) };
    let mut done = 0usize;
    while done < want {
        let mut batch = [PolledWc::default(); BATCH];
        let n = (want - done).min(BATCH);
        let got = T::poll_cq(dev, cq, &mut batch[..n]);
        for p in &batch[..got] {
            // SAFETY: `wc` has room for `num_entries` entries and `done < want`.
            unsafe { wc.add(done).write(to_ib_wc(p)) };
            done += 1;
        }
        if got < n {
            break;
        }
    }
    done as kernel::ffi::c_int
}

/// A polled completion as ib_core's `struct ib_wc`.
fn to_ib_wc(p: &PolledWc) -> ffi::ib_wc {
    let mut out = ffi::ib_wc::default();
    // SAFETY: `wr_id` is a plain `u64` member of the union.
    unsafe { *out.__bindgen_anon_1.wr_id.as_mut() = p.wc.wr_id };
    out.status = p.wc.status;
    out.opcode = p.wc.opcode;
    out.vendor_err = p.wc.vendor_err;
    out.byte_len = p.wc.byte_len;
    out.qp = p.qp.map_or(core::ptr::null_mut(), |q| q.as_raw());
    // SAFETY: `imm_data` is a plain `u32` member of the union.
    unsafe { *out.ex.imm_data.as_mut() = p.wc.ex };
    out.src_qp = p.wc.src_qp;
    out.slid = u32::from(p.wc.slid);
    out.wc_flags = p.wc.wc_flags as i32;
    out.pkey_index = p.wc.pkey_index;
    out.sl = p.wc.sl;
    out.dlid_path_bits = p.wc.dlid_path_bits;
    out.port_num = u32::from(p.wc.port_num);
    out.network_hdr_type = p.network_hdr_type;
    out
}
