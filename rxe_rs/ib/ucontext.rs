// SPDX-License-Identifier: GPL-2.0

//! User contexts and protection domains: the `alloc_ucontext` / `alloc_pd` callbacks and their
//! counterparts, and `mmap` of the queues a user context was offered. Their verbs are part of
//! [`DeviceOps`].

use super::{
    device::{Device, DeviceOps},
    object::Object,
};
use crate::ffi;
use kernel::error::from_result;

type UcontextObject<T> = Object<ffi::ib_ucontext, <T as DeviceOps>::Ucontext>;
type PdObject<T> = Object<ffi::ib_pd, <T as DeviceOps>::Pd>;

// The callbacks below are only installed in the ops table of a `Device<T>` (`register`):
// ib_core calls them as their op, with every pointer argument valid for the call and naming
// objects of this device, which outlives them.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn alloc_ucontext<T: DeviceOps>(
    uc: *mut ffi::ib_ucontext,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_ucontext` zeroed bytes on one of our devices.
    let dev = unsafe { Device::<T>::of(uc) };
    from_result(|| {
        let data = T::alloc_ucontext(dev)?;
        // SAFETY: the data slot of the new object is unwritten until now.
        unsafe { UcontextObject::<T>::init(uc, data) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn dealloc_ucontext<T: DeviceOps>(uc: *mut ffi::ib_ucontext) {
    // SAFETY: `alloc_ucontext` succeeded for this object, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(uc), UcontextObject::<T>::data(uc)) };
    T::dealloc_ucontext(dev, data);
    // SAFETY: this is the last call for the object.
    unsafe { UcontextObject::<T>::drop_data(uc) };
}

/// Having it lets ib_core move the device between namespaces; a soft device has no hardware
/// mappings to revoke (the C driver's is empty too).
///
/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn disassociate_ucontext(_uc: *mut ffi::ib_ucontext) {}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn alloc_pd<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_pd` zeroed bytes on one of our devices.
    let dev = unsafe { Device::<T>::of(pd) };
    from_result(|| {
        let data = T::alloc_pd(dev)?;
        // SAFETY: the data slot of the new object is unwritten until now.
        unsafe { PdObject::<T>::init(pd, data) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn dealloc_pd<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `alloc_pd` succeeded for this object, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(pd), PdObject::<T>::data(pd)) };
    T::dealloc_pd(dev, data);
    // SAFETY: this is the last call for the object.
    unsafe { PdObject::<T>::drop_data(pd) };
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn mmap<T: DeviceOps>(
    uc: *mut ffi::ib_ucontext,
    vma: *mut ffi::vm_area_struct,
) -> kernel::ffi::c_int {
    // SAFETY: ib_uverbs passes the caller's ucontext of one of our devices.
    let dev = unsafe { Device::<T>::of(uc) };
    // SAFETY: `uc` and `vma` are the caller's context and the VMA it maps, valid for the call.
    from_result(|| unsafe { dev.mmaps().mmap(uc, vma) }.map(|()| 0))
}

/// The user context a PD belongs to (null for kernel PDs): the context of the user objects
/// created in it, whose queues it may map.
///
/// # Safety
///
/// `pd` is null or a valid PD.
pub(super) unsafe fn pd_context(pd: *mut ffi::ib_pd) -> *mut ffi::ib_ucontext {
    if pd.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: `pd` is valid (the caller's contract).
    let uobject = unsafe { (*pd).uobject };
    if uobject.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: a user PD's `uobject` is valid while the PD lives.
    unsafe { (*uobject).context }
}
