// SPDX-License-Identifier: GPL-2.0

//! A QP's rings of looped-back packets (`proto::packet_ring`), shared between the QP's engine
//! (their one consumer) and its peer's (their producer): small packets as their bytes
//! ([`SharedRing`]), larger requests, and small ones a full bytes ring refused, as their headers
//! and a reference to their payload ([`RefRing`]).

use super::mr::MrShared;
use crate::proto::{
    packet::Packet,
    packet_ring::{PacketRing, RingIndex, REF_HEADER_LEN, REF_RING_LEN},
    parts::Parts,
};
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{rcu, Arc, SpinLock},
};

/// A [`PacketRing`] under a spinlock taken in BH context (process context disables bottom
/// halves first), with its length readable without the lock: every step of the consumer looks
/// whether the ring holds anything, most often for nothing.
#[pin_data]
pub(crate) struct SharedRing<const SLOT: usize, const N: usize> {
    #[pin]
    ring: SpinLock<PacketRing<SLOT, N>>,
    /// The ring's length as the last change under the lock left it.
    len: AtomicUsize,
}

impl<const SLOT: usize, const N: usize> SharedRing<SLOT, N> {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            ring <- new_spinlock!(PacketRing::new()),
            len: AtomicUsize::new(0),
        })
    }

    /// Whether the ring looks empty, without the lock. A stale `true` is harmless: the producer
    /// wakes the consumer's task after its push, which then looks again.
    pub(crate) fn looks_empty(&self) -> bool {
        self.len.load(Relaxed) == 0
    }

    /// Empties the ring; one that looks empty is left without taking the lock (a packet pushed
    /// after that look is one pushed after the clear).
    pub(crate) fn clear(&self) {
        if !self.looks_empty() {
            self.with(|r| r.clear());
        }
    }

    /// Runs `f` on the ring under its lock.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut PacketRing<SLOT, N>) -> R) -> R {
        let mut ring = self.ring.lock();
        let r = f(&mut ring);
        self.len.store(ring.len(), Relaxed);
        r
    }
}

/// A packet's payload left in the sender's memory: `len` bytes at `iova` of `mr`, a pinned user
/// MR the sender may read (checked when the packet was built).
pub(crate) struct PayloadRef {
    pub(crate) mr: Arc<MrShared>,
    pub(crate) iova: u64,
    pub(crate) len: u32,
}

/// The oldest packet of a [`RefRing`], as its receiver handles it.
pub(crate) struct RefFront {
    /// Bytes of the header buffer in use: the BTH and extension headers.
    pub(crate) len: usize,
    pub(crate) tag: u8,
    pub(crate) payload: PayloadRef,
}

impl RefFront {
    /// Runs `f` on the packet, its payload read in place in the sender's MR (`MrShared::map`:
    /// one copy, from there to where it lands). `None` if that MR was deregistered since the
    /// packet was built: the packet is then lost, and the sender's retry finds the MR gone.
    pub(crate) fn with_packet<R>(
        &self,
        rcu: &rcu::Guard,
        hdr: &[u8; REF_HEADER_LEN],
        f: impl FnOnce(&Packet<'_>) -> R,
    ) -> Option<R> {
        let src = &self.payload;
        let mut payload = Parts::new();
        src.mr
            .map(rcu, src.iova, src.len as usize, &mut payload)
            .ok()?;
        // Read where it was made (moved out of the `Result`, it is copied: 128 bytes).
        let made = Packet::with_payload(hdr.get(..self.len)?, payload);
        let pkt = made.as_ref().ok()?;
        Some(f(pkt))
    }
}

struct RefEntry {
    bytes: [u8; REF_HEADER_LEN],
    len: u8,
    tag: u8,
    payload: Option<PayloadRef>,
}

struct RefSlots {
    /// Empty until the first push: most QPs never receive such a packet.
    entries: KVec<RefEntry>,
    index: RingIndex<REF_RING_LEN>,
}

/// Looped-back packets whose payload stays in the sender's MR until the receiver copies it
/// (`proto::packet_ring`): requests for a responder or read responses for a completer, under a
/// spinlock taken in BH context, as [`SharedRing`].
#[pin_data]
pub(crate) struct RefRing {
    #[pin]
    ring: SpinLock<RefSlots>,
    len: AtomicUsize,
}

impl RefRing {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            ring <- new_spinlock!(RefSlots {
                entries: KVec::new(),
                index: RingIndex::new(),
            }),
            len: AtomicUsize::new(0),
        })
    }

    /// As [`SharedRing::looks_empty`].
    #[inline]
    pub(crate) fn looks_empty(&self) -> bool {
        self.len.load(Relaxed) == 0
    }

    /// Appends a packet: its headers `bytes` (the pad and ICRC are implied) and its payload;
    /// `false` if the ring is full or closed, `bytes` too long, or its slots could not be
    /// allocated.
    pub(crate) fn push(&self, bytes: &[u8], tag: u8, payload: PayloadRef) -> bool {
        if bytes.len() > REF_HEADER_LEN {
            return false;
        }
        let mut ring = self.ring.lock();
        if ring.entries.is_empty() && ring.index.has_room() && !Self::allocate(&mut ring) {
            return false;
        }
        let Some(entry) = ring.index.next_free().and_then(|i| ring.entries.get_mut(i)) else {
            return false;
        };
        entry.bytes[..bytes.len()].copy_from_slice(bytes);
        entry.len = bytes.len() as u8;
        entry.tag = tag;
        entry.payload = Some(payload);
        ring.index.commit();
        self.len.store(ring.index.len(), Relaxed);
        true
    }

    /// Allocates the ring's slots (in BH context, under its lock: atomically).
    fn allocate(ring: &mut RefSlots) -> bool {
        let Ok(mut entries) = KVec::with_capacity(REF_RING_LEN, GFP_ATOMIC) else {
            return false;
        };
        for _ in 0..REF_RING_LEN {
            let empty = RefEntry {
                bytes: [0; REF_HEADER_LEN],
                len: 0,
                tag: 0,
                payload: None,
            };
            if entries.push(empty, GFP_ATOMIC).is_err() {
                return false;
            }
        }
        ring.entries = entries;
        true
    }

    /// Copies the oldest packet's header bytes to `to`, left in the ring, with a reference to
    /// its payload.
    pub(crate) fn copy_front(&self, to: &mut [u8; REF_HEADER_LEN]) -> Option<RefFront> {
        let ring = self.ring.lock();
        let entry = ring.entries.get(ring.index.front()?)?;
        let payload = entry.payload.as_ref()?;
        let len = usize::from(entry.len);
        to[..len].copy_from_slice(&entry.bytes[..len]);
        Some(RefFront {
            len,
            tag: entry.tag,
            payload: PayloadRef {
                mr: payload.mr.clone(),
                iova: payload.iova,
                len: payload.len,
            },
        })
    }

    /// Removes the oldest packet; the reference it held, for the caller to drop after the
    /// lock.
    pub(crate) fn drop_front(&self) -> Option<PayloadRef> {
        let mut ring = self.ring.lock();
        let slot = ring.index.drop_front();
        self.len.store(ring.index.len(), Relaxed);
        slot.and_then(|i| ring.entries.get_mut(i))
            .and_then(|e| e.payload.take())
    }

    /// Drops every packet (as [`SharedRing::clear`]); with `close`, refuses every later push
    /// (the QP being destroyed).
    #[inline]
    pub(crate) fn clear(&self, close: bool) {
        if close || !self.looks_empty() {
            self.clear_locked(close);
        }
    }

    fn clear_locked(&self, close: bool) {
        let mut ring = self.ring.lock();
        let RefSlots { entries, index } = &mut *ring;
        let slots = if close { index.close() } else { index.clear() };
        for i in slots {
            if let Some(e) = entries.get_mut(i) {
                e.payload = None;
            }
        }
        self.len.store(0, Relaxed);
    }
}
