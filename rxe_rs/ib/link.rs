// SPDX-License-Identifier: GPL-2.0

//! `rdma_link_ops`: the hook behind `rdma link add NAME type TYPE netdev DEV`.

use crate::ffi;
use crate::net::netdev::NetDev;
use core::marker::PhantomData;
use kernel::{error::from_result, prelude::*, types::Opaque};

/// What a link type does when user space asks for a new link.
pub(crate) trait LinkOps {
    /// The link type name, `type` in `rdma link add … type TYPE`.
    const TYPE: &'static CStr;

    /// Creates the ib_device `ibdev_name` on top of `netdev`. Called under RTNL by ib_core.
    fn newlink(ibdev_name: &CStr, netdev: &NetDev) -> Result;
}

/// A registered link type; unregistered on drop.
///
/// ib_core keeps the `rdma_link_ops` on a list, so it must stay pinned while registered.
#[pin_data(PinnedDrop)]
pub(crate) struct LinkRegistration<T: LinkOps> {
    #[pin]
    ops: Opaque<ffi::rdma_link_ops>,
    _ops: PhantomData<T>,
}

// SAFETY: after registration the `rdma_link_ops` is only read by ib_core, under its own lock.
unsafe impl<T: LinkOps> Send for LinkRegistration<T> {}
// SAFETY: `&LinkRegistration` gives no access to the `rdma_link_ops` at all.
unsafe impl<T: LinkOps> Sync for LinkRegistration<T> {}

impl<T: LinkOps + 'static> LinkRegistration<T> {
    /// Registers link type `T::TYPE`.
    ///
    /// ib_core WARNs if the type is already registered (e.g. by the C `rdma_rxe`): the module
    /// must never be loaded next to it.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::ffi_init(|ops: *mut ffi::rdma_link_ops| {
                // SAFETY: `ops` points to the pinned, writable slot of this registration; every
                // field is initialised before ib_core sees it, and it stays registered (and
                // pinned) until `drop` unregisters it.
                unsafe {
                    ops.write(ffi::rdma_link_ops {
                        type_: T::TYPE.as_char_ptr(),
                        newlink: Some(Self::newlink_callback),
                        ..Default::default()
                    });
                    ffi::rdma_link_register(ops);
                }
            }),
            _ops: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by ib_core as the `rdma_link_ops.newlink` of the registered link type, with
    /// `ibdev_name` a NUL-terminated string and `ndev` a net device it holds, both valid for the
    /// call.
    unsafe extern "C" fn newlink_callback(
        ibdev_name: *const kernel::ffi::c_char,
        ndev: *mut ffi::net_device,
    ) -> kernel::ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a NUL-terminated name from the netlink message.
            let name = unsafe { CStr::from_char_ptr(ibdev_name) };
            // SAFETY: ib_core holds a reference on `ndev` for the duration of the call.
            let netdev = unsafe { NetDev::from_raw(ndev) };
            T::newlink(name, netdev)?;
            Ok(0)
        })
    }
}

#[pinned_drop]
impl<T: LinkOps> PinnedDrop for LinkRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: the ops were registered in `new` and are still pinned here.
        unsafe { ffi::rdma_link_unregister(self.ops.get()) };
    }
}
