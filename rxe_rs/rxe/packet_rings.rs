// SPDX-License-Identifier: GPL-2.0

//! A QP's rings of small looped-back packets (`proto::packet_ring`), shared between the
//! QP's engine (their one consumer) and its peer's (their producer).

use crate::proto::packet_ring::PacketRing;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use kernel::{new_spinlock, prelude::*, sync::SpinLock};

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
