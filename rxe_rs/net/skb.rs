// SPDX-License-Identifier: GPL-2.0

//! Owned socket buffers: building RoCEv2 packets (`rxe_init_packet`, `rxe_prepare`,
//! `rxe_xmit_packet`), reading received ones, and queues of them (`sk_buff_head`).

use super::netdev::NetDev;
use crate::ffi;
use crate::net::route::Dst;
use crate::proto::parts::{Parts, MAX_PARTS};
use core::ptr::NonNull;
use kernel::{page::PAGE_SIZE, prelude::*, sync::Arc, types::Opaque};

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
    /// The IPv4 header's ID: consecutive over the packets a burst may chain
    /// ([`SkBuff::burst_append`]) and the chains a receiver's GRO may make.
    pub(crate) ip_id: u16,
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

    /// A packet to send on `netdev` with `len` bytes (BTH to ICRC), zeroed from `unzeroed` on:
    /// the caller must overwrite the bytes before them before the packet leaves. Room in front for
    /// the UDP and IP headers. Atomic allocation: the requester runs in bottom halves.
    fn alloc_tx(netdev: &NetDev, ipv6: bool, len: usize, unzeroed: usize) -> Result<Self> {
        let len = u32::try_from(len).map_err(|_| EINVAL)?;
        let unzeroed = u32::try_from(unzeroed).map_err(|_| EINVAL)?;
        // SAFETY: `netdev` is valid for the call; the skb takes no reference on it (as the C
        // driver: the device outlives its QPs' packets through the device's own reference).
        let skb = unsafe { ffi::rxe_rs_skb_alloc_tx(netdev.as_raw(), ipv6, len, unzeroed) };
        NonNull::new(skb).map(Self).ok_or(ENOMEM)
    }

    /// `skb->data`, `skb->len` (the packet from `skb->data` on: linear part and page
    /// fragments) and `skb->data_len` (the fragments' part), read from the struct: on every
    /// packet's path, where a shim call cost more than the reads.
    #[inline]
    fn extent(&self) -> (*mut u8, usize, usize) {
        let skb = self.0.as_ptr();
        // SAFETY: we own the skb, valid while `self` lives; plain fields, changed only by the
        // skb's owner.
        let (data, len, data_len) = unsafe { ((*skb).data, (*skb).len, (*skb).data_len) };
        (data, len as usize, data_len as usize)
    }

    /// The packet's length from `skb->data` on: linear part and page fragments.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.extent().1
    }

    /// Whether [`Self::parts`] can read the packet in place (no fragment list, no fragment
    /// outside the direct map, few enough fragments), without building its [`Parts`].
    pub(crate) fn readable_in_place(&self) -> bool {
        // SAFETY: we own the skb.
        let nr = unsafe { ffi::rxe_rs_skb_frags_readable(self.0.as_ptr()) };
        usize::try_from(nr).is_ok_and(|nr| nr < MAX_PARTS)
    }

    /// The packet from `skb->data` on, in place: the linear part, then each page fragment. `None`
    /// if it cannot be read so (chained skbs, a fragment outside the direct map, more
    /// fragments than a [`Parts`] holds): linearize it first.
    pub(crate) fn parts(&self) -> Option<Parts<'_>> {
        // Most received packets are linear (a driver's `build_skb` of a frame).
        if let Some(bytes) = self.linear() {
            return Some(Parts::from_slice(bytes));
        }
        let mut ptrs = [core::ptr::null::<u8>(); MAX_PARTS];
        let mut lens = [0u32; MAX_PARTS];
        // SAFETY: we own the skb; both arrays hold `MAX_PARTS` entries, the most the shim fills.
        let n = unsafe {
            ffi::rxe_rs_skb_pieces(
                self.0.as_ptr(),
                ptrs.as_mut_ptr(),
                lens.as_mut_ptr(),
                MAX_PARTS as u32,
            )
        };
        let n = usize::try_from(n).ok()?;
        let mut parts = Parts::new();
        for (&ptr, &len) in ptrs.iter().zip(&lens).take(n) {
            // SAFETY: the shim gave the linear part and fragments in the direct map, `len`
            // bytes each; the skb holds their pages, and we own it for the lifetime of the
            // returned slices.
            let bytes = unsafe { core::slice::from_raw_parts(ptr, len as usize) };
            parts.push(bytes).ok()?;
        }
        Some(parts)
    }

    /// The packet from `skb->data` on, if it has no page fragments.
    #[inline]
    pub(crate) fn linear(&self) -> Option<&[u8]> {
        let (data, len, data_len) = self.extent();
        if data_len != 0 {
            return None;
        }
        // SAFETY: without fragments the skb's `len` bytes from `data` are all linear, in its
        // head; we own the skb for the lifetime of the returned slice.
        Some(unsafe { core::slice::from_raw_parts(data, len) })
    }

    /// Makes the first `len` bytes from `skb->data` (or all, if fewer) linear (`pskb_may_pull`).
    pub(crate) fn pull_headers(&mut self, len: usize) -> Result {
        let len = u32::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: we own the skb.
        kernel::error::to_result(unsafe { ffi::rxe_rs_skb_pull_headers(self.0.as_ptr(), len) })
    }

    /// The linear data, writable (the skb is ours and not cloned: we built it).
    #[inline]
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        let (data, len, data_len) = self.extent();
        // SAFETY: the linear bytes from `data` are `len - data_len` (`skb_headlen`), in the
        // skb's head; we own the skb, and `&mut self` makes this the only view.
        unsafe { core::slice::from_raw_parts_mut(data, len.saturating_sub(data_len)) }
    }

    /// Pushes the UDP and IP headers in front of the packet, which goes on `dst` (its
    /// reference passes to the packet). `skb->data` is then at the IP header.
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
                route.ip_id,
            )
        }
    }

    /// Appends the prepared packet `skb` to this prepared packet or burst: the burst goes
    /// through the IP layer, netfilter and the qdisc as one skb (UDP fraglist GSO) and is cut
    /// back into its packets, headers and ICRCs as built, before the device or at the
    /// receiving socket. Only a packet of the same family on the same route is taken, in IPv4
    /// one whose [`Route::ip_id`] is the next after the burst's last; `Err` gives any other
    /// back.
    pub(crate) fn burst_append(&mut self, skb: SkBuff) -> core::result::Result<(), SkBuff> {
        // SAFETY: we own both prepared skbs; on success the burst owns `skb` (its frag_list),
        // on failure the shim has changed neither.
        if unsafe { ffi::rxe_rs_skb_burst_append(self.0.as_ptr(), skb.0.as_ptr()) } {
            core::mem::forget(skb);
            Ok(())
        } else {
            Err(skb)
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

    /// Turns a prepared packet into a received one, `skb->data` at the UDP header (`rxe_loopback`).
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

    /// The bytes from the network header up to `skb->data` (a received packet's IP header).
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

/// A packet being built: its headers in the linear part, its payload there too (copied) or in
/// page fragments referring to the memory it comes from, then a pad and the ICRC.
pub(crate) struct TxSkb {
    skb: SkBuff,
    /// The pad-and-ICRC fragment of a packet whose payload is in fragments: our own bytes,
    /// held by the skb's reference on their page.
    trailer: Option<(NonNull<u8>, usize)>,
    /// The length of the headers, left as allocated at the start of the linear part until
    /// [`Self::write_headers`] writes them: zeroed before the packet is sent if nobody did.
    unwritten_headers: usize,
    /// Linear bytes left as allocated for the payload, until a [`PayloadSink`] hands them out
    /// to be written: zeroed before the packet is sent if nobody did.
    unwritten: Option<core::ops::Range<usize>>,
}

// SAFETY: the trailer pointer is only written through `&mut self`; the skb may move (`SkBuff`).
unsafe impl Send for TxSkb {}

impl TxSkb {
    /// A packet with `len` linear bytes: `headers` bytes of headers, which
    /// [`Self::write_headers`] writes, `payload` bytes after them, which a
    /// [`PayloadSink::by_copy`] fills, and zeroes after that (the pad and ICRC, or nothing).
    pub(crate) fn alloc(
        netdev: &NetDev,
        ipv6: bool,
        len: usize,
        headers: usize,
        payload: usize,
    ) -> Result<Self> {
        let written = headers
            .checked_add(payload)
            .filter(|&n| n <= len)
            .ok_or(EINVAL)?;
        Ok(Self {
            skb: SkBuff::alloc_tx(netdev, ipv6, len, written)?,
            trailer: None,
            unwritten_headers: headers,
            unwritten: (payload != 0).then_some(headers..written),
        })
    }

    /// Writes the headers: `write` is handed their bytes, as allocated, and writes every one or
    /// returns `false` (they are zeroed then, and the packet is not to be sent).
    pub(crate) fn write_headers(&mut self, write: impl FnOnce(&mut [u8]) -> bool) -> bool {
        let len = core::mem::take(&mut self.unwritten_headers);
        let Some(headers) = self.skb.data_mut().get_mut(..len) else {
            return false;
        };
        if write(&mut *headers) {
            return true;
        }
        headers.fill(0);
        false
    }

    /// Zeroes the headers and payload bytes nobody wrote: no packet carries bytes it was not
    /// given.
    fn zero_unwritten(&mut self) {
        let headers = core::mem::take(&mut self.unwritten_headers);
        if headers != 0 {
            if let Some(bytes) = self.skb.data_mut().get_mut(..headers) {
                bytes.fill(0);
            }
        }
        if let Some(range) = self.unwritten.take() {
            if let Some(bytes) = self.skb.data_mut().get_mut(range) {
                bytes.fill(0);
            }
        }
    }

    /// The linear bytes.
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        self.skb.data_mut()
    }

    /// The whole packet from `skb->data` on (see [`SkBuff::parts`]).
    pub(crate) fn parts(&self) -> Option<Parts<'_>> {
        self.skb.parts()
    }

    /// Appends `len` bytes of `page` from `offset` as a fragment, the skb holding a reference on
    /// the page; `false` if the skb has no fragment slot left or the page may not ride in a
    /// packet (slab memory, whose lifetime a page reference does not extend, or highmem).
    ///
    /// # Safety
    ///
    /// `page` is a valid page for the duration of the call, and `offset + len` lies within it.
    pub(crate) unsafe fn attach_page(
        &mut self,
        page: NonNull<ffi::page>,
        offset: usize,
        len: usize,
    ) -> bool {
        debug_assert!(self.trailer.is_none(), "the trailer is the last fragment");
        // SAFETY: we own the skb, built by us; the caller vouches for the page and range,
        // both below 4 GiB as they lie in one page; the shim checks the page may be held.
        unsafe {
            ffi::rxe_rs_skb_attach_page(
                self.skb.0.as_ptr(),
                page.as_ptr(),
                offset as u32,
                len as u32,
            ) == 0
        }
    }

    /// Appends `len` zeroed bytes of our own as the last fragment: the pad and ICRC of a packet
    /// whose payload is in fragments.
    pub(crate) fn attach_trailer(&mut self, len: usize) -> Result {
        if self.trailer.is_some() {
            return Err(EINVAL);
        }
        let len32 = u32::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: we own the skb; the shim allocates the bytes and gives the skb the only
        // reference on them.
        let ptr = unsafe { ffi::rxe_rs_skb_attach_trailer(self.skb.0.as_ptr(), len32) };
        self.trailer = Some((NonNull::new(ptr).ok_or(ENOMEM)?, len));
        Ok(())
    }

    /// Zeroes what nobody wrote, then pushes the UDP and IP headers (see [`SkBuff::prepare`]).
    #[inline]
    pub(crate) fn prepare(&mut self, route: &Route<'_>, dst: Dst) {
        self.zero_unwritten();
        self.skb.prepare(route, dst);
    }

    /// Writes the ICRC into the last 4 bytes of the trailer; `false` if there is no trailer of
    /// 4 bytes or more (a linear packet's ICRC is written in its linear bytes).
    pub(crate) fn set_icrc(&mut self, icrc: [u8; 4]) -> bool {
        let Some((ptr, len)) = self.trailer else {
            return false;
        };
        // SAFETY: the trailer is `len` bytes of ours, alive while the skb is (its fragment
        // holds the page), and nothing else refers to them; `&mut self` makes this the only
        // view.
        let trailer = unsafe { core::slice::from_raw_parts_mut(ptr.as_ptr(), len) };
        match trailer.last_chunk_mut::<4>() {
            Some(last) => {
                *last = icrc;
                true
            }
            None => false,
        }
    }

    /// The built packet.
    pub(crate) fn into_skb(self) -> SkBuff {
        self.skb
    }
}

/// Where a packet's payload goes while the packet is built: copied into its linear part, or
/// (by reference) attached as page fragments of the memory it comes from. A source that cannot
/// be referenced refuses, and the packet is then built again by copy.
pub(crate) struct PayloadSink<'s> {
    skb: &'s mut TxSkb,
    /// By copy: where the payload lies in the linear part.
    copy: Option<core::ops::Range<usize>>,
    /// By reference: bytes still to attach.
    left: usize,
    /// By reference: fragments attached.
    frags: usize,
    refused: bool,
}

/// The most payload fragments a packet of ours carries: with its linear part and trailer, a
/// [`Parts`] holds it, so the receiving end reads it in place.
const MAX_PAYLOAD_FRAGS: usize = MAX_PARTS - 2;

impl<'s> PayloadSink<'s> {
    /// The payload is copied into the linear bytes `skb` was allocated to leave for it
    /// ([`TxSkb::alloc`]).
    pub(crate) fn by_copy(skb: &'s mut TxSkb) -> Self {
        Self {
            copy: Some(skb.unwritten.clone().unwrap_or_default()),
            skb,
            left: 0,
            frags: 0,
            refused: false,
        }
    }

    /// The payload, `len` bytes, is attached to `skb` by reference.
    pub(crate) fn by_reference(skb: &'s mut TxSkb, len: usize) -> Self {
        Self {
            skb,
            copy: None,
            left: len,
            frags: 0,
            refused: false,
        }
    }

    /// By copy: the payload's bytes, as allocated: the caller writes every one of them or fails
    /// the packet. `None` when the payload goes by reference.
    pub(crate) fn copy_buf(&mut self) -> Option<&mut [u8]> {
        let range = self.copy.clone()?;
        self.skb.unwritten = None;
        self.skb.data_mut().get_mut(range)
    }

    /// By reference: how many bytes are still to attach.
    pub(crate) fn left(&self) -> usize {
        self.left
    }

    /// This payload cannot go by reference (memory of a kind or a page a packet may not hold):
    /// build the packet by copy.
    pub(crate) fn refuse(&mut self) {
        self.refused = true;
    }

    /// Whether a source refused, or the payload went by reference but not all of it.
    pub(crate) fn failed(&self) -> bool {
        self.refused || (self.copy.is_none() && self.left != 0)
    }

    /// By reference: attaches `len` bytes of `page` from `offset`, or refuses if the page may
    /// not ride in a packet, the payload is shorter, or the packet has fragments enough.
    ///
    /// # Safety
    ///
    /// `page` is valid for the duration of the call and `offset + len` lies within it.
    pub(crate) unsafe fn attach_page(
        &mut self,
        page: NonNull<ffi::page>,
        offset: usize,
        len: usize,
    ) {
        if self.refused || self.copy.is_some() || len > self.left || self.frags == MAX_PAYLOAD_FRAGS
        {
            self.refuse();
            return;
        }
        // SAFETY: the caller vouches for the page and the range.
        if unsafe { self.skb.attach_page(page, offset, len) } {
            self.left -= len;
            self.frags += 1;
        } else {
            self.refuse();
        }
    }

    /// By reference: attaches `len` bytes at kernel virtual address `addr` (memory a kernel ULP
    /// vouches for, as the copies of `ib::mem::KernelMem` trust it), page by page; refuses what
    /// is not in the direct map or not sendable.
    pub(crate) fn attach_kernel(&mut self, addr: u64, len: usize) {
        let mut done = 0usize;
        while done < len && !self.refused {
            let at = addr.wrapping_add(done as u64);
            let in_page = (at as usize) & (PAGE_SIZE - 1);
            let n = (PAGE_SIZE - in_page).min(len - done);
            // SAFETY: the shim only computes the page of `at` after checking it is in the
            // direct map; it dereferences nothing.
            let page = unsafe { ffi::rxe_rs_kva_sendable_page(at) };
            let Some(page) = NonNull::new(page) else {
                self.refuse();
                return;
            };
            // SAFETY: `page` is the direct-map page of memory the ULP keeps valid for its work
            // request, so for this call; `in_page + n <= PAGE_SIZE`.
            unsafe { self.attach_page(page, in_page, n) };
            done += n;
        }
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

/// Packets linked by `skb->next`, owned: each taken in turn by iterating, those left freed on
/// drop.
pub(crate) struct SkbList(Option<SkBuff>);

impl SkbList {
    /// Takes ownership of the list that starts at `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is null or a valid socket buffer, the first of a list linked by `next` and ended by
    /// a null `next`, whose ownership passes to the returned value, all of it.
    pub(crate) unsafe fn from_raw(skb: *mut ffi::sk_buff) -> Self {
        // SAFETY: the caller gives us `skb`, the list's first packet.
        Self(unsafe { SkBuff::from_raw(skb) })
    }
}

impl Iterator for SkbList {
    type Item = SkBuff;

    fn next(&mut self) -> Option<SkBuff> {
        let skb = self.0.take()?;
        // SAFETY: we own `skb`, the first of the list; it is unlinked from the rest.
        let next = unsafe { ffi::rxe_rs_skb_take_next(skb.0.as_ptr()) };
        // SAFETY: the rest of the list is ours as `skb` was, `next` its first or null.
        self.0 = unsafe { SkBuff::from_raw(next) };
        Some(skb)
    }
}

impl Drop for SkbList {
    fn drop(&mut self) {
        self.for_each(drop);
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

    /// Takes the first packet. An empty queue is seen without its lock: a packet pushed after
    /// that look wakes the consumer's task, which looks again.
    pub(crate) fn pop(&self) -> Option<SkBuff> {
        if self.len() == 0 {
            return None;
        }
        // SAFETY: the queue is initialised; a dequeued skb is ours.
        unsafe { SkBuff::from_raw(ffi::rxe_rs_skb_dequeue(self.head.get())) }
    }

    /// How many packets wait (a hint: other contexts may push meanwhile).
    pub(crate) fn len(&self) -> usize {
        let head = self.head.get();
        // SAFETY: the queue is initialised and lives as long as `self`; a volatile load of its
        // length is `skb_queue_len_lockless`'s `READ_ONCE`, read inline: every step of a QP
        // looks at its queues.
        let qlen = unsafe { core::ptr::read_volatile(&raw const (*head).qlen) };
        qlen as usize
    }

    /// Frees every packet waiting. An empty queue is seen without its lock (a receive-only QP
    /// purges its response queue at every step); a packet pushed after that look is one pushed
    /// after the purge.
    pub(crate) fn purge(&self) {
        if self.len() == 0 {
            return;
        }
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
