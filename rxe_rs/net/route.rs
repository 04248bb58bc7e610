// SPDX-License-Identifier: GPL-2.0

//! Routes (`struct dst_entry`): looked up from a source to a destination address out of a
//! device (`rxe_find_route4`, `rxe_find_route6`), and kept per QP while they stay valid.
//!
//! The C driver keeps an RC QP's route in the QP's socket (`sk_dst_set`, checked with the
//! QP's `dst_cookie`) and looks one up for every packet of the other QP types. [`RouteCache`]
//! keeps the last route of any QP, under its addresses: a UD QP talking to one peer reuses
//! it too, and a new address vector (`modify_qp`, another AH) is a different key, so no reset
//! is needed when it changes.

use super::netdev::NetDev;
use crate::ffi;
use core::ptr::NonNull;
use kernel::{new_spinlock, prelude::*, sync::SpinLock};

/// A held route; released when dropped.
pub(crate) struct Dst {
    ptr: NonNull<ffi::dst_entry>,
    /// What `dst_check` compares (IPv6's route cookie; 0 for IPv4).
    cookie: u32,
}

// SAFETY: a `dst_entry` is reference counted and its operations may run on any CPU; we only
// hold a reference.
unsafe impl Send for Dst {}
// SAFETY: `&Dst` only reads the route (`dst_check`) or takes another reference.
unsafe impl Sync for Dst {}

impl Dst {
    /// The route from `saddr` to `daddr` out of `netdev` (IPv6: 16-byte addresses; IPv4: the
    /// first 4 bytes of each); `None` without one.
    pub(crate) fn lookup(
        netdev: &NetDev,
        ipv6: bool,
        saddr: &[u8; 16],
        daddr: &[u8; 16],
    ) -> Option<Self> {
        let mut cookie = 0u32;
        // SAFETY: `netdev` is valid for the call; the addresses are 16 bytes, of which the
        // shim reads 4 or 16. A non-NULL result is a route we hold a reference to.
        let ptr = unsafe {
            ffi::rxe_rs_route_lookup(
                netdev.as_raw(),
                ipv6,
                saddr.as_ptr(),
                daddr.as_ptr(),
                &mut cookie,
            )
        };
        NonNull::new(ptr).map(|ptr| Self { ptr, cookie })
    }

    /// Whether the route may still be used: a routing change (a new address, a route
    /// removed, the device going down) obsoletes it (`dst_check`).
    fn is_valid(&self) -> bool {
        // SAFETY: we hold a reference to the route.
        unsafe { ffi::rxe_rs_dst_valid(self.ptr.as_ptr(), self.cookie) }
    }

    /// Gives up the reference without releasing it: the caller passes it on.
    pub(crate) fn into_raw(self) -> *mut ffi::dst_entry {
        let ptr = self.ptr.as_ptr();
        core::mem::forget(self);
        ptr
    }
}

impl Clone for Dst {
    fn clone(&self) -> Self {
        // SAFETY: we hold a reference, so the route is alive to take another.
        unsafe { ffi::rxe_rs_dst_hold(self.ptr.as_ptr()) };
        Self {
            ptr: self.ptr,
            cookie: self.cookie,
        }
    }
}

impl Drop for Dst {
    fn drop(&mut self) {
        // SAFETY: we hold a reference and give it up; `dst_release` may run in any context.
        unsafe { ffi::rxe_rs_dst_release(self.ptr.as_ptr()) };
    }
}

/// What a cached route was looked up for.
#[derive(Clone, Copy, PartialEq, Eq)]
struct RouteKey {
    ipv6: bool,
    saddr: [u8; 16],
    daddr: [u8; 16],
}

/// The last route a QP used, reused while its addresses match and it stays valid.
#[pin_data]
pub(crate) struct RouteCache {
    /// Taken with bottom halves disabled (packets are built in the QP's engine), never held
    /// across anything but a route lookup.
    #[pin]
    last: SpinLock<Option<(RouteKey, Dst)>>,
}

impl RouteCache {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            last <- new_spinlock!(None, "rxe_rs_route_cache"),
        })
    }

    /// A route from `saddr` to `daddr` out of `netdev`: the cached one if it is for these
    /// addresses and still valid, else a fresh lookup, which replaces it.
    pub(crate) fn get(
        &self,
        netdev: &NetDev,
        ipv6: bool,
        saddr: &[u8; 16],
        daddr: &[u8; 16],
    ) -> Option<Dst> {
        let key = RouteKey {
            ipv6,
            saddr: *saddr,
            daddr: *daddr,
        };
        let mut last = self.last.lock();
        if let Some((k, dst)) = last.as_ref() {
            if *k == key && dst.is_valid() {
                return Some(dst.clone());
            }
        }
        // The old route (if any) is released here, under the lock: `dst_release` only drops
        // a count (the route itself is freed after an RCU grace period).
        let dst = Dst::lookup(netdev, ipv6, saddr, daddr);
        *last = dst.clone().map(|d| (key, d));
        dst
    }
}
