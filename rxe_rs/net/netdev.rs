// SPDX-License-Identifier: GPL-2.0

//! `struct net_device`: borrowed and reference-counted views, and the netdev notifier.

use crate::ffi;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    prelude::*,
    sync::aref::{ARef, AlwaysRefCounted},
    types::Opaque,
};

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

    pub(crate) fn as_raw(&self) -> *mut ffi::net_device {
        self.0.get()
    }

    /// The interface name, e.g. `eth0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `self.0` is a valid net_device; netdev_name() returns a pointer into it (or a
        // static string), NUL-terminated and valid while the device is.
        unsafe { CStr::from_char_ptr(ffi::rxe_rs_netdev_name(self.0.get())) }
    }

    /// The device MTU in bytes.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: `self.0` is valid; `mtu` is a plain integer the stack updates atomically
        // enough for readers (the C driver reads it the same way).
        unsafe { (*self.0.get()).mtu }
    }

    /// The hardware address, at most 6 bytes (empty for devices without one, e.g. tun).
    pub(crate) fn hw_addr(&self) -> Option<[u8; 6]> {
        // SAFETY: `self.0` is valid; `dev_addr` points to at least `addr_len` bytes.
        unsafe {
            let dev = &*self.0.get();
            let len = usize::from(dev.addr_len).min(6);
            if len == 0 || dev.dev_addr.is_null() {
                return None;
            }
            let mut mac = [0u8; 6];
            core::ptr::copy_nonoverlapping(dev.dev_addr, mac.as_mut_ptr(), len);
            Some(mac)
        }
    }

    /// Whether `mac` is this device's address, compared as the C driver does for its loopback
    /// test (`ether_addr_equal(dev->dev_addr, av->dmac)`): all six bytes, so a device without
    /// an address (tun) matches the all-zero MAC its neighbours resolve to.
    pub(crate) fn is_own_mac(&self, mac: &[u8; 6]) -> bool {
        // SAFETY: `self.0` is valid; `dev_addr` is an allocation of at least `MAX_ADDR_LEN`
        // (32) bytes whatever `addr_len` is (`dev_addr_init`).
        unsafe {
            let dev = &*self.0.get();
            if dev.dev_addr.is_null() {
                return false;
            }
            let mut own = [0u8; 6];
            core::ptr::copy_nonoverlapping(dev.dev_addr, own.as_mut_ptr(), 6);
            own == *mac
        }
    }

    /// The hardware address, or a random one for a device without (the GID and GUIDs need a
    /// unique one, `rxe_init_device_param`).
    pub(crate) fn hw_addr_or_random(&self) -> [u8; 6] {
        self.hw_addr().unwrap_or_else(|| {
            let mut mac = [0u8; 6];
            // SAFETY: `mac` is a 6-byte buffer.
            unsafe { ffi::rxe_rs_eth_random_addr(mac.as_mut_ptr()) };
            mac
        })
    }

    /// Whether the interface is administratively up (`IFF_UP`).
    pub(crate) fn is_up(&self) -> bool {
        // SAFETY: `self.0` is valid.
        unsafe { ffi::rxe_rs_netif_is_up(self.0.get()) }
    }

    /// Whether it is running with carrier: the IB port state of a RoCE port on it.
    pub(crate) fn port_active(&self) -> bool {
        // SAFETY: `self.0` is valid.
        unsafe {
            ffi::rxe_rs_ib_get_curr_port_state(self.0.get()) == ffi::ib_port_state_IB_PORT_ACTIVE
        }
    }

    /// Adds `mac` to the device's multicast filter (`dev_mc_add`; reference counted per
    /// address). Process context: the caller holds no spinlock.
    pub(crate) fn mc_add(&self, mac: &[u8; 6]) -> Result {
        // SAFETY: `self.0` is valid; `mac` is `ETH_ALEN` bytes, copied by the callee.
        kernel::error::to_result(unsafe { ffi::rxe_rs_dev_mc_add(self.0.get(), mac.as_ptr()) })
    }

    /// Drops one reference to `mac` in the device's multicast filter (`dev_mc_del`).
    pub(crate) fn mc_del(&self, mac: &[u8; 6]) -> Result {
        // SAFETY: `self.0` is valid; `mac` is `ETH_ALEN` bytes.
        kernel::error::to_result(unsafe { ffi::rxe_rs_dev_mc_del(self.0.get(), mac.as_ptr()) })
    }

    /// Whether it is a VLAN device.
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: `self.0` is valid.
        unsafe { ffi::rxe_rs_netdev_is_vlan(self.0.get()) }
    }
}

// SAFETY: `NetDev` methods only read device state the kernel lets any context read, or call
// functions that take the device's own locks.
unsafe impl Sync for NetDev {}
// SAFETY: as above; a `NetDev` is only ever handed out by reference.
unsafe impl Send for NetDev {}

// SAFETY: a `net_device` is always reference counted (`dev_hold`/`dev_put`): a held reference
// keeps it allocated until the matching put.
unsafe impl AlwaysRefCounted for NetDev {
    fn inc_ref(&self) {
        // SAFETY: `self` is valid; the reference is dropped by `dec_ref`.
        unsafe { ffi::rxe_rs_dev_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: the caller owns one reference, which it gives up.
        unsafe { ffi::rxe_rs_dev_put(obj.cast().as_ptr()) };
    }
}

/// A counted reference to a `net_device` (`dev_hold`/`dev_put`); `NetDevRef::from(&netdev)`
/// takes a new one.
pub(crate) type NetDevRef = ARef<NetDev>;

/// Takes over a reference to `ptr` the caller already holds.
///
/// # Safety
///
/// `ptr` is null or a `net_device` with a reference owned by the caller, given to us.
pub(crate) unsafe fn netdev_ref_from_raw(ptr: *mut ffi::net_device) -> Option<NetDevRef> {
    let ptr = NonNull::new(ptr.cast::<NetDev>())?;
    // SAFETY: `NetDev` is a transparent `net_device`; the caller gives us its reference.
    Some(unsafe { ARef::from_raw(ptr) })
}

/// The netdev events the driver reacts to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum NetdevEvent {
    /// The device is going away.
    Unregister,
    /// Its MTU changed.
    ChangeMtu,
    /// Administratively down.
    Down,
    /// Carrier or other state change.
    Change,
    /// Anything else.
    Other(u64),
}

impl NetdevEvent {
    fn from_raw(event: u64) -> Self {
        match event {
            e if e == u64::from(ffi::netdev_cmd_NETDEV_UNREGISTER) => Self::Unregister,
            e if e == u64::from(ffi::netdev_cmd_NETDEV_CHANGEMTU) => Self::ChangeMtu,
            e if e == u64::from(ffi::netdev_cmd_NETDEV_DOWN) => Self::Down,
            e if e == u64::from(ffi::netdev_cmd_NETDEV_CHANGE) => Self::Change,
            e => Self::Other(e),
        }
    }
}

/// Receiver of netdev notifier events.
pub(crate) trait NetdevListener: 'static {
    /// Called for every netdev event, under RTNL.
    fn event(event: NetdevEvent, netdev: &NetDev);
}

/// A registered netdev notifier; unregistered on drop.
#[pin_data(PinnedDrop)]
pub(crate) struct NetdevNotifier<T: NetdevListener> {
    #[pin]
    nb: Opaque<ffi::notifier_block>,
    _listener: PhantomData<T>,
}

// SAFETY: the notifier block is only touched by the notifier chain, under its lock.
unsafe impl<T: NetdevListener> Send for NetdevNotifier<T> {}
// SAFETY: `&NetdevNotifier` gives no access to the block.
unsafe impl<T: NetdevListener> Sync for NetdevNotifier<T> {}

impl<T: NetdevListener> NetdevNotifier<T> {
    /// Registers the notifier (the kernel replays REGISTER/UP for existing devices).
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            nb <- Opaque::try_ffi_init(|nb: *mut ffi::notifier_block| {
                // SAFETY: `nb` is this registration's pinned slot; it is fully initialised before
                // registration and unregistered in `drop` before it goes away.
                unsafe {
                    nb.write(ffi::notifier_block {
                        notifier_call: Some(Self::callback),
                        ..Default::default()
                    });
                    kernel::error::to_result(ffi::register_netdevice_notifier(nb))
                }
            }),
            _listener: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the netdev notifier chain, under RTNL, with `info` the `netdev_notifier_info` of
    /// the event, valid for the call.
    unsafe extern "C" fn callback(
        _nb: *mut ffi::notifier_block,
        event: kernel::ffi::c_ulong,
        info: *mut kernel::ffi::c_void,
    ) -> kernel::ffi::c_int {
        // SAFETY: netdev notifier calls pass a `netdev_notifier_info` whose device is valid
        // (and RTNL is held) for the duration of the call.
        let netdev = unsafe { NetDev::from_raw(ffi::rxe_rs_netdev_notifier_info_to_dev(info)) };
        T::event(NetdevEvent::from_raw(event as u64), netdev);
        ffi::NOTIFY_OK as kernel::ffi::c_int
    }
}

#[pinned_drop]
impl<T: NetdevListener> PinnedDrop for NetdevNotifier<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `new`, still pinned.
        unsafe { ffi::unregister_netdevice_notifier(self.nb.get()) };
    }
}
