// SPDX-License-Identifier: GPL-2.0

//! A borrowed `struct net_device`.

use crate::ffi;
use kernel::{prelude::*, types::Opaque};

/// A network device that the caller holds a reference to for as long as `&NetDev` lives.
#[repr(transparent)]
pub(crate) struct NetDev(Opaque<ffi::net_device>);

impl NetDev {
    /// Borrows a `net_device` pointer handed over by the kernel.
    ///
    /// # Safety
    ///
    /// `ptr` is valid, and the device is kept alive (referenced or RTNL-protected) for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut ffi::net_device) -> &'a Self {
        // SAFETY: `NetDev` is a transparent wrapper of `net_device`; validity and lifetime are
        // guaranteed by the caller.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The interface name, e.g. `eth0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `self.0` is a valid net_device; netdev_name() returns a pointer into it (or a
        // static string), NUL-terminated and valid while the device is.
        unsafe { CStr::from_char_ptr(ffi::rxe_rs_netdev_name(self.0.get())) }
    }
}
