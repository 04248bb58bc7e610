// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 UDP tunnel sockets (port 4791), one IPv4 and one IPv6 per network namespace,
//! shared by the devices of that namespace (the C driver's `rxe_ns.c`).
//!
//! Each device holds a [`TunnelUser`]; the sockets of a namespace open with its first user and
//! close with its last, or when the namespace goes away first (kernel sockets hold no
//! reference on their namespace, so its exit must close them). The C driver counts users
//! through the socket refcount; here the count is explicit, and a generation number keeps a
//! late user from touching a newer namespace that reused the address.

use super::netdev::NetDev;
use super::skb::SkbList;
use crate::ffi;
use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{error::from_err_ptr, prelude::*, types::Opaque};

/// Where the packets arriving on the tunnel sockets go.
pub(crate) trait PacketReceiver: 'static {
    /// UDP datagrams for port 4791, `skb->data` at each one's UDP header; softirq context. One
    /// packet, or the packets of one flow a GRO chain brought from one device, in the order
    /// they came.
    fn receive(skbs: SkbList);
}

/// A network namespace, as a key: compared by address, never dereferenced by this module.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct NetNs(usize);

impl NetNs {
    fn from_raw(net: *mut ffi::net) -> Self {
        Self(net as usize)
    }
}

struct Socket(NonNull<ffi::socket>);

// SAFETY: the socket is only closed, from whichever thread drops the last user.
unsafe impl Send for Socket {}

impl Socket {
    fn open<R: PacketReceiver>(net: *mut ffi::net, ipv6: bool) -> Result<Self> {
        let callback = Some(encap_rcv::<R> as unsafe extern "C" fn(_, _) -> _);
        // SAFETY: `net` is a live namespace (the caller holds a device in it); the callback is a
        // plain function valid for the module's lifetime, and sockets never outlive the module
        // (`Tunnels` closes them all on drop).
        let sock = unsafe { ffi::rxe_rs_udp_tunnel_open(net, ipv6, callback) };
        let sock = from_err_ptr(sock)?;
        NonNull::new(sock).map(Self).ok_or(EINVAL)
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: we own the socket; this releases it (and stops its callback).
        unsafe { ffi::rxe_rs_udp_tunnel_close(self.0.as_ptr()) };
    }
}

/// # Safety
///
/// Installed by `Socket::open::<R>` for the shim's `encap_rcv` of a UDP tunnel socket, which
/// calls it with `sk` that socket and `skb` a list of packets linked by `next`, all valid.
unsafe extern "C" fn encap_rcv<R: PacketReceiver>(
    _sk: *mut ffi::sock,
    skb: *mut ffi::sk_buff,
) -> kernel::ffi::c_int {
    // SAFETY: the shim hands us ownership of the list; returning 0 says we took it.
    R::receive(unsafe { SkbList::from_raw(skb) });
    0
}

struct NsSockets {
    net: NetNs,
    generation: u64,
    users: usize,
    _v4: Socket,
    _v6: Option<Socket>,
}

struct Registry {
    namespaces: KVec<NsSockets>,
    next_generation: u64,
}

kernel::sync::global_lock! {
    // SAFETY: `Tunnels::new` initialises it at module init, before any device can exist.
    unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry {
        namespaces: KVec::new(),
        next_generation: 0,
    };
}

/// One device's use of the tunnel sockets of its namespace, given up by [`TunnelUser::release`]
/// or on drop, whichever comes first.
pub(crate) struct TunnelUser {
    net: NetNs,
    generation: u64,
    released: AtomicBool,
}

impl TunnelUser {
    /// Joins (opening if first) the sockets of `netdev`'s namespace: IPv4 always, IPv6 unless
    /// the namespace has no IPv6 (as the C driver, which then warns and goes on).
    pub(crate) fn acquire<R: PacketReceiver>(netdev: &NetDev) -> Result<Self> {
        // SAFETY: `netdev` is valid, so is its namespace while we use it here.
        let net = unsafe { ffi::rxe_rs_dev_net(netdev.as_raw()) };
        let key = NetNs::from_raw(net);
        let mut reg = REGISTRY.lock();
        if let Some(ns) = reg.namespaces.iter_mut().find(|ns| ns.net == key) {
            ns.users += 1;
            return Ok(Self {
                net: key,
                generation: ns.generation,
                released: AtomicBool::new(false),
            });
        }
        let v4 = Socket::open::<R>(net, false).inspect_err(|_| {
            pr_err!("Failed to create IPv4 UDP tunnel\n");
        })?;
        let v6 = match Socket::open::<R>(net, true) {
            Ok(s) => Some(s),
            Err(e) if e == EAFNOSUPPORT => {
                pr_warn!("IPv6 is not supported, can not create a UDPv6 socket\n");
                None
            }
            Err(e) => {
                pr_err!("Failed to create IPv6 UDP tunnel\n");
                return Err(e);
            }
        };
        let generation = reg.next_generation;
        reg.next_generation += 1;
        reg.namespaces.push(
            NsSockets {
                net: key,
                generation,
                users: 1,
                _v4: v4,
                _v6: v6,
            },
            GFP_KERNEL,
        )?;
        Ok(Self {
            net: key,
            generation,
            released: AtomicBool::new(false),
        })
    }

    /// Gives up the sockets now (the netdev is going away: the C driver closes them from its
    /// notifier, and the selftests check the port is closed right after).
    pub(crate) fn release(&self) {
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut reg = REGISTRY.lock();
        let pos = reg
            .namespaces
            .iter()
            .position(|ns| ns.net == self.net && ns.generation == self.generation);
        // Not found: the namespace went away first and its exit closed the sockets.
        if let Some(pos) = pos {
            reg.namespaces[pos].users -= 1;
            if reg.namespaces[pos].users == 0 {
                // Dropping the entry closes its sockets.
                drop(reg.namespaces.remove(pos));
            }
        }
    }
}

impl Drop for TunnelUser {
    fn drop(&mut self) {
        self.release();
    }
}

/// Closes a namespace's sockets when the namespace exits; all of them when dropped (module
/// exit). Owned by the module.
#[pin_data(PinnedDrop)]
pub(crate) struct Tunnels {
    #[pin]
    pernet: Opaque<ffi::pernet_operations>,
    _no_send: PhantomData<*mut ()>,
}

// SAFETY: the pernet_operations are only used by the namespace core, under its own lock.
unsafe impl Send for Tunnels {}
// SAFETY: `&Tunnels` gives no access to them.
unsafe impl Sync for Tunnels {}

impl Tunnels {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        // SAFETY: called once, at module init, before any other use of REGISTRY.
        unsafe { REGISTRY.init() };
        try_pin_init!(Self {
            pernet <- Opaque::try_ffi_init(|ops: *mut ffi::pernet_operations| {
                // SAFETY: `ops` is our pinned slot, fully written before registration and
                // unregistered in `drop`.
                unsafe {
                    ops.write(ffi::pernet_operations { exit: Some(ns_exit), ..Default::default() });
                    kernel::error::to_result(ffi::register_pernet_subsys(ops))
                }
            }),
            _no_send: PhantomData,
        })
    }
}

/// # Safety
///
/// Called by the network namespace core as the `exit` of our `pernet_operations`, with `net`
/// a namespace being dismantled, valid for the call.
unsafe extern "C" fn ns_exit(net: *mut ffi::net) {
    let key = NetNs::from_raw(net);
    let mut reg = REGISTRY.lock();
    if let Some(pos) = reg.namespaces.iter().position(|ns| ns.net == key) {
        // Dropping the entry closes its sockets.
        drop(reg.namespaces.remove(pos));
    }
}

#[pinned_drop]
impl PinnedDrop for Tunnels {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: registered in `new`; unregistering runs `ns_exit` for every live namespace,
        // which closes every socket left.
        unsafe { ffi::unregister_pernet_subsys(self.pernet.get()) };
        // Statics are not dropped at module unload: free the vector's buffer ourselves.
        REGISTRY.lock().namespaces = KVec::new();
    }
}
