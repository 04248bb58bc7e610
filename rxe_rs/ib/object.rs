// SPDX-License-Identifier: GPL-2.0

//! Objects ib_core allocates for a driver: the `ib_*` struct first, the driver's data after it
//! ([`Object`]), their size given to ib_core in `ib_device_ops.size_ib_*`. ib_core zeroes the
//! block, fills in the `ib_*` part and calls the driver's create op, which writes the data;
//! the destroy op drops it and ib_core frees the block. MRs are the exception: the driver
//! allocates them (`ib/mr.rs`).

use crate::ffi;
use core::ptr::addr_of_mut;
use kernel::types::Opaque;

/// An ib_core object with the driver's data `D` behind its `ib_*` struct `R`.
#[repr(C)]
pub(super) struct Object<R, D> {
    pub(super) raw: Opaque<R>,
    pub(super) data: D,
}

/// An `ib_*` struct that names the device it belongs to.
pub(super) trait IbObject {
    /// The object's `device`.
    ///
    /// # Safety
    ///
    /// `this` points to a valid object whose `device` ib_core has set.
    unsafe fn device(this: *mut Self) -> *mut ffi::ib_device;
}

macro_rules! ib_object {
    ($($t:ident),*) => {$(
        impl IbObject for ffi::$t {
            /// # Safety
            ///
            /// As [`IbObject::device`].
            unsafe fn device(this: *mut Self) -> *mut ffi::ib_device {
                // SAFETY: `this` is valid (the caller's contract).
                unsafe { (*this).device }
            }
        }
    )*};
}
ib_object!(
    ib_ucontext,
    ib_pd,
    ib_cq,
    ib_srq,
    ib_qp,
    ib_ah,
    ib_mw,
    ib_mr
);

impl<R, D> Object<R, D> {
    /// The driver's data of `raw`.
    ///
    /// # Safety
    ///
    /// `raw` is the `ib_*` struct of an `Object<R, D>` whose data has been written ([`init`])
    /// and not dropped, and stays so for `'a`.
    ///
    /// [`init`]: Self::init
    pub(super) unsafe fn data<'a>(raw: *mut R) -> &'a D {
        // SAFETY: `raw` is the first field of a live `repr(C)` `Object<R, D>` (the caller's
        // contract).
        unsafe { &(*raw.cast::<Self>()).data }
    }

    /// Writes the driver's data of a new object.
    ///
    /// # Safety
    ///
    /// `raw` is the `ib_*` struct of an `Object<R, D>` allocation whose data slot has not been
    /// written, and nobody reads it concurrently.
    pub(super) unsafe fn init(raw: *mut R, data: D) {
        // SAFETY: the data slot is in bounds of the allocation and unused (the caller's
        // contract); `write` does not drop the uninitialised old value.
        unsafe { addr_of_mut!((*raw.cast::<Self>()).data).write(data) };
    }

    /// Drops the driver's data of an object being destroyed.
    ///
    /// # Safety
    ///
    /// The data of `raw` has been written and is not used after this call.
    pub(super) unsafe fn drop_data(raw: *mut R) {
        // SAFETY: the data is initialised and this is its last use (the caller's contract).
        unsafe { core::ptr::drop_in_place(addr_of_mut!((*raw.cast::<Self>()).data)) };
    }
}
