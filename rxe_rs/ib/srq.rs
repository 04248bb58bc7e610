// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: the verbs a driver implements for them ([`SrqOps`]) and their
//! `ib_device_ops` callbacks.

use super::{
    device::{Device, DeviceOps},
    handles::SrqHandle,
    mr::Sge,
    object::Object,
    ucontext::pd_context,
    uqueue::UserReq,
};
use crate::ffi;
use kernel::{error::from_result, prelude::*};

/// `struct ib_srq_attr`.
#[derive(Clone, Copy, Default)]
pub(crate) struct SrqAttr {
    /// Receive WRs.
    pub(crate) max_wr: u32,
    /// SGEs per WR.
    pub(crate) max_sge: u32,
    /// Arm the limit event below this many WRs (0: disarmed).
    pub(crate) srq_limit: u32,
}

/// The shared receive queue verbs of a driver. Methods run in process context but
/// `post_srq_recv`.
#[vtable]
pub(crate) trait SrqOps: DeviceOps {
    /// Per shared receive queue data.
    type Srq: Send + Sync;

    /// `create_srq`: the data and the SRQ number; `attr.max_wr` is updated to what was made.
    fn create_srq(
        dev: &Device<Self>,
        attr: &mut SrqAttr,
        srq_type: u32,
        user: Option<UserReq>,
        handle: SrqHandle,
    ) -> Result<(Self::Srq, u32)>;
    /// `modify_srq` with `IB_SRQ_*` `mask` (optional); `user` is the user command (a resize
    /// offers the new ring to the SRQ's user context); `attr.max_wr` is updated to what a resize
    /// made.
    fn modify_srq(
        _dev: &Device<Self>,
        _srq: &Self::Srq,
        _attr: &mut SrqAttr,
        _mask: u32,
        _user: Option<UserReq>,
    ) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `query_srq` (optional).
    fn query_srq(_dev: &Device<Self>, _srq: &Self::Srq) -> Result<SrqAttr> {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `destroy_srq`; the data is dropped after it.
    fn destroy_srq(dev: &Device<Self>, srq: &Self::Srq);
    /// `post_srq_recv` of one kernel receive WR (any context).
    fn post_srq_recv(dev: &Device<Self>, srq: &Self::Srq, wr_id: u64, sges: &[Sge]) -> Result;
}

pub(super) type SrqObject<T> = Object<ffi::ib_srq, <T as SrqOps>::Srq>;

// The callbacks below are only installed in the ops table of a `Device<T>` (`register`):
// ib_core calls them as their op, with every pointer argument valid for the call and naming
// objects of this device, which outlives them.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn create_srq<T: SrqOps>(
    srq: *mut ffi::ib_srq,
    init: *mut ffi::ib_srq_init_attr,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_srq` zeroed bytes on one of our devices, its PD set.
    let (dev, context) = unsafe { (Device::<T>::of(srq), pd_context((*srq).pd)) };
    // SAFETY: `init` is valid and ours for the call.
    let init = unsafe { &mut *init };
    let mut attr = SrqAttr {
        max_wr: init.attr.max_wr,
        max_sge: init.attr.max_sge,
        srq_limit: init.attr.srq_limit,
    };
    // SAFETY: `udata` is null or valid for the call, of the PD's user context.
    let user = unsafe { UserReq::new(udata, context, dev.mmaps()) };
    from_result(|| {
        let handle = SrqHandle::new(srq).ok_or(EINVAL)?;
        let (data, _srq_num) = T::create_srq(dev, &mut attr, init.srq_type, user, handle)?;
        // SAFETY: the data slot of the new SRQ is unwritten until now.
        unsafe { SrqObject::<T>::init(srq, data) };
        init.attr.max_wr = attr.max_wr;
        init.attr.max_sge = attr.max_sge;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn modify_srq<T: SrqOps>(
    srq: *mut ffi::ib_srq,
    attr: *mut ffi::ib_srq_attr,
    mask: ffi::ib_srq_attr_mask,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ (its PD set), so its data is initialised.
    let (dev, data, context) = unsafe {
        (
            Device::<T>::of(srq),
            SrqObject::<T>::data(srq),
            pd_context((*srq).pd),
        )
    };
    // SAFETY: `attr` is valid and ours for the call.
    let attr = unsafe { &mut *attr };
    let mut a = SrqAttr {
        max_wr: attr.max_wr,
        max_sge: attr.max_sge,
        srq_limit: attr.srq_limit,
    };
    // SAFETY: `udata` is null or valid for the call, of the PD's user context.
    let user = unsafe { UserReq::new(udata, context, dev.mmaps()) };
    from_result(|| {
        T::modify_srq(dev, data, &mut a, mask, user)?;
        attr.max_wr = a.max_wr;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn query_srq<T: SrqOps>(
    srq: *mut ffi::ib_srq,
    attr: *mut ffi::ib_srq_attr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ, so its data is initialised; `attr` is ours
    // to fill.
    let (dev, data, attr) =
        unsafe { (Device::<T>::of(srq), SrqObject::<T>::data(srq), &mut *attr) };
    from_result(|| {
        let a = T::query_srq(dev, data)?;
        attr.max_wr = a.max_wr;
        attr.max_sge = a.max_sge;
        attr.srq_limit = a.srq_limit;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn destroy_srq<T: SrqOps>(
    srq: *mut ffi::ib_srq,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(srq), SrqObject::<T>::data(srq)) };
    T::destroy_srq(dev, data);
    // SAFETY: this is the last call for the SRQ.
    unsafe { SrqObject::<T>::drop_data(srq) };
    0
}
