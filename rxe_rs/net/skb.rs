// SPDX-License-Identifier: GPL-2.0

//! Owned socket buffers: building RoCEv2 packets (`rxe_init_packet`, `rxe_prepare`,
//! `rxe_xmit_packet`), reading received ones, and queues of them (`sk_buff_head`).

use crate::ffi;
use crate::ib::netdev::NetDev;
use crate::net::route::Dst;
use core::ptr::NonNull;
use kernel::{prelude::*, sync::Arc, types::Opaque};

/// A socket buffer we own; freed (as dropped, not consumed) unless handed on.
pub(crate) struct SkBuff(NonNull<ffi::sk_buff>);

// SAFETY: an owned skb may move between contexts; nothing else references it.
unsafe impl Send for SkBuff {}

/// The sender of a packet, told when the stack lets go of it (`rxe_skb_tx_dtor`): freed,
/// dropped, or orphaned by the receiving IP layer; so it learns how many of its packets still
/// sit in queues between it and the peer.
pub(crate) trait TxOwner: Send + Sync + Sized {
    /// One packet given to [`SkBuff::set_tx_owner`] left the stack's hands (softirq or process
    /// context, never hard irq).
    fn tx_released(this: Arc<Self>);
}

/// Where a transmitted packet goes: the addresses and fields of its IP and UDP headers.
pub(crate) struct Route<'a> {
    /// IPv6 (16-byte addresses) or IPv4 (the first 4 bytes of each address).
    pub(crate) ipv6: bool,
    pub(crate) saddr: &'a [u8; 16],
    pub(crate) daddr: &'a [u8; 16],
    /// The QP's UDP source port.
    pub(crate) sport: u16,
    pub(crate) traffic_class: u8,
    pub(crate) hop_limit: u8,
}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is a valid socket buffer whose ownership passes to the returned value.
    pub(crate) unsafe fn from_raw(skb: *mut ffi::sk_buff) -> Option<Self> {
        NonNull::new(skb).map(Self)
    }

    fn into_raw(self) -> *mut ffi::sk_buff {
        let ptr = self.0.as_ptr();
        core::mem::forget(self);
        ptr
    }

    /// A packet to send on `netdev` with `len` zeroed bytes (BTH to ICRC) and room in front for
    /// the UDP and IP headers. Atomic allocation: the requester runs in bottom halves.
    pub(crate) fn alloc_tx(netdev: &NetDev, ipv6: bool, len: usize) -> Result<Self> {
        let len = u32::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: `netdev` is valid for the call; the skb takes no reference on it (as the C
        // driver: the device outlives its QPs' packets through the device's own reference).
        let skb = unsafe { ffi::rxe_rs_skb_alloc_tx(netdev.as_raw(), ipv6, len) };
        NonNull::new(skb).map(Self).ok_or(ENOMEM)
    }

    /// The linear data, `skb->data` onwards.
    pub(crate) fn data(&self) -> &[u8] {
        let mut len = 0u32;
        // SAFETY: we own the skb; its linear data is valid for `skb_headlen` bytes while we do.
        unsafe {
            let ptr = ffi::rxe_rs_skb_data(self.0.as_ptr(), &mut len);
            core::slice::from_raw_parts(ptr, len as usize)
        }
    }

    /// The linear data, writable (the skb is ours and not cloned: we built it).
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        let mut len = 0u32;
        // SAFETY: as `data`; `&mut self` makes this the only view.
        unsafe {
            let ptr = ffi::rxe_rs_skb_data(self.0.as_ptr(), &mut len);
            core::slice::from_raw_parts_mut(ptr, len as usize)
        }
    }

    /// Pushes the UDP and IP headers in front of the packet, which goes on `dst` (its
    /// reference passes to the packet). `data()` then starts at the IP header.
    pub(crate) fn prepare(&mut self, route: &Route<'_>, dst: Dst) {
        // SAFETY: we own the skb, made by `alloc_tx` with room for both headers; the address
        // buffers are 16 bytes, of which the shim reads 4 or 16; the route's reference is
        // given to the skb (`skb_dst_set`).
        unsafe {
            ffi::rxe_rs_skb_prepare(
                self.0.as_ptr(),
                dst.into_raw(),
                route.ipv6,
                route.saddr.as_ptr(),
                route.daddr.as_ptr(),
                route.sport,
                route.traffic_class,
                route.hop_limit,
            )
        }
    }

    /// Sends a prepared packet (`ip_local_out`); `Err` when the stack dropped it.
    pub(crate) fn xmit(self) -> Result {
        // SAFETY: the skb is prepared (routed, headers pushed); ownership passes to the stack.
        kernel::error::to_result(unsafe { ffi::rxe_rs_skb_xmit(self.into_raw()) })
    }

    /// Makes `owner` the packet's sender: it holds a reference until the stack lets go of the
    /// packet, then [`TxOwner::tx_released`] runs (as C's `rxe_send` with its per-QP socket).
    pub(crate) fn set_tx_owner<T: TxOwner>(&mut self, owner: Arc<T>) {
        let arg = Arc::into_raw(owner).cast_mut().cast::<core::ffi::c_void>();
        // SAFETY: we own the skb, which we allocated: it has no destructor and no zero-copy
        // state, so `destructor_arg` is free. `tx_release::<T>` turns `arg` back into the
        // `Arc<T>` exactly once, when the stack calls the destructor.
        unsafe { ffi::rxe_rs_skb_set_tx_destructor(self.0.as_ptr(), Some(tx_release::<T>), arg) };
    }

    /// Turns a prepared packet into a received one, `data()` at the UDP header (`rxe_loopback`).
    pub(crate) fn loopback(&mut self) {
        // SAFETY: the skb is prepared, so its IP header is there to pull.
        unsafe { ffi::rxe_rs_skb_loopback(self.0.as_ptr()) };
    }

    /// A private copy of the packet (`skb_copy`, atomic): headers, offsets and device as this
    /// one's, its own data (so the copy, unlike an `skb_clone`, may be written).
    pub(crate) fn copy(&self) -> Option<Self> {
        // SAFETY: we own the skb; `skb_copy` only reads it and returns a new one (or NULL).
        NonNull::new(unsafe { ffi::rxe_rs_skb_copy(self.0.as_ptr()) }).map(Self)
    }

    /// Makes a received packet linear (`skb_linearize`).
    pub(crate) fn linearize(&mut self) -> Result {
        // SAFETY: we own the skb.
        kernel::error::to_result(unsafe { ffi::rxe_rs_skb_linearize(self.0.as_ptr()) })
    }

    /// The bytes from the network header up to `data()` (a received packet's IP header).
    pub(crate) fn ip_header(&self) -> &[u8] {
        let mut len = 0u32;
        // SAFETY: the network header of a received (or prepared) skb lies in its linear data,
        // `len` bytes before `skb->data`.
        unsafe {
            let ptr = ffi::rxe_rs_skb_network_header(self.0.as_ptr(), &mut len);
            core::slice::from_raw_parts(ptr, len as usize)
        }
    }

    /// The net device the packet came in on (or goes out on).
    pub(crate) fn netdev(&self) -> Option<&NetDev> {
        // SAFETY: we own the skb; `skb->dev` is valid while the skb is being processed.
        let dev = unsafe { ffi::rxe_rs_skb_dev(self.0.as_ptr()) };
        // SAFETY: non-null `skb->dev` is a valid net device for the skb's lifetime.
        (!dev.is_null()).then(|| unsafe { NetDev::from_raw(dev) })
    }

    /// Frees a packet that was used as intended (not a drop).
    pub(crate) fn consume(self) {
        // SAFETY: we own the skb.
        unsafe { ffi::rxe_rs_consume_skb(self.into_raw()) };
    }
}

/// The destructor [`SkBuff::set_tx_owner`] installs.
///
/// # Safety
///
/// Called by the stack, once, for an skb whose `destructor_arg` came from `Arc::<T>::into_raw`.
unsafe extern "C" fn tx_release<T: TxOwner>(skb: *mut ffi::sk_buff) {
    // SAFETY: per the function's contract, the argument is an `Arc<T>` given up by
    // `set_tx_owner`, reclaimed here exactly once.
    let owner = unsafe { Arc::from_raw(ffi::rxe_rs_skb_tx_destructor_arg(skb).cast::<T>()) };
    T::tx_released(owner);
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own the skb; the caller of `drop` gives it up.
        unsafe { ffi::rxe_rs_kfree_skb(self.0.as_ptr()) };
    }
}

/// A queue of packets (`struct sk_buff_head`, with its own irq-safe lock).
#[pin_data(PinnedDrop)]
pub(crate) struct SkbQueue {
    #[pin]
    head: Opaque<ffi::sk_buff_head>,
    /// Set by [`Self::close`]; read and written only under the queue's lock.
    closed: Opaque<bool>,
}

// SAFETY: the queue's lock serialises all access to it.
unsafe impl Send for SkbQueue {}
// SAFETY: as above.
unsafe impl Sync for SkbQueue {}

impl SkbQueue {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `skb_queue_head_init` initialises the pinned slot completely.
            head <- Opaque::ffi_init(|h| unsafe { ffi::rxe_rs_skb_queue_init(h) }),
            closed: Opaque::new(false),
        })
    }

    /// Appends `skb`, or drops it if the queue is closed; whether it was queued.
    pub(crate) fn push(&self, skb: SkBuff) -> bool {
        // SAFETY: the queue is initialised and `closed` is its flag, which the callee reads
        // under the queue's lock; ownership of the skb passes to the callee.
        unsafe {
            ffi::rxe_rs_skb_queue_tail_open(self.head.get(), self.closed.get(), skb.into_raw())
        }
    }

    /// Frees every packet waiting and refuses (drops) every packet pushed from now on.
    pub(crate) fn close(&self) {
        // SAFETY: the queue is initialised and `closed` is its flag, written under its lock.
        unsafe { ffi::rxe_rs_skb_queue_close(self.head.get(), self.closed.get()) };
    }

    /// Takes the first packet.
    pub(crate) fn pop(&self) -> Option<SkBuff> {
        // SAFETY: the queue is initialised; a dequeued skb is ours.
        unsafe { SkBuff::from_raw(ffi::rxe_rs_skb_dequeue(self.head.get())) }
    }

    /// How many packets wait (a hint: other contexts may push meanwhile).
    pub(crate) fn len(&self) -> usize {
        // SAFETY: the queue is initialised; a lockless read of its length.
        unsafe { ffi::rxe_rs_skb_queue_len(self.head.get()) as usize }
    }

    /// Frees every packet waiting.
    pub(crate) fn purge(&self) {
        // SAFETY: the queue is initialised.
        unsafe { ffi::rxe_rs_skb_queue_purge(self.head.get()) };
    }
}

#[pinned_drop]
impl PinnedDrop for SkbQueue {
    fn drop(self: Pin<&mut Self>) {
        self.purge();
    }
}
