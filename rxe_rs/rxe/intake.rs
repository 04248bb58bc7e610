// SPDX-License-Identifier: GPL-2.0

//! A QP's packet intakes, one a direction: the requests its responder takes and the responses
//! its completer takes. A packet from a wire comes as an skb; a looped-back one may come as its
//! bytes in a ring or as its headers with a reference to its payload (`proto::packet_ring`).
//! [`Intake::take`] alone knows which of the three holds the oldest packet.
//!
//! The producers keep the order it relies on: a packet goes into the ring or the reference ring
//! only while the skb queue is empty (`QpShared::ring_destination`), so both rings hold packets
//! older than every queued skb; the bytes ring takes one only while the reference ring is empty,
//! so every packet of the bytes ring is older than every reference. A read response goes to the
//! reference ring only while the ACK ring is empty, and an ACK to the ring only while the
//! reference ring is empty, so at most one of the completer's rings holds packets.

use super::packet_rings::{RefFront, RefRing, SharedRing};
use crate::net::skb::{SkBuff, SkbQueue};
use crate::proto::packet_ring::{
    ACK_LEN, ACK_RING_LEN, REF_HEADER_LEN, REQUEST_LEN, REQUEST_RING_LEN,
};
use kernel::prelude::*;

/// The responder's intake: requests, the small looped-back ones as their bytes.
pub(crate) type Requests = Intake<REQUEST_LEN, REQUEST_RING_LEN>;

/// The completer's intake: responses, the looped-back ACKs as their bytes.
pub(crate) type Responses = Intake<ACK_LEN, ACK_RING_LEN>;

/// The packets waiting for one engine of a QP, in three queues of one order.
#[pin_data]
pub(crate) struct Intake<const SLOT: usize, const N: usize> {
    /// Packets received from the network stack (or looped back as skbs).
    #[pin]
    pub(crate) skbs: SkbQueue,
    /// Small looped-back packets, as their bytes. Apart from the QP, whose fields every step
    /// reads: a ring is read only when a small looped-back packet comes.
    pub(crate) ring: Pin<KBox<SharedRing<SLOT, N>>>,
    /// Looped-back packets whose payload stays in the sender's MR until it is copied to where
    /// it lands.
    pub(crate) refs: Pin<KBox<RefRing>>,
}

/// The oldest packet of an [`Intake`], as [`Intake::take`] hands it to its engine.
pub(crate) enum Next<'a, const SLOT: usize> {
    /// From the ring: its first `len` bytes, taken out of it.
    Ring {
        bytes: &'a [u8; SLOT],
        len: usize,
        tag: u8,
    },
    /// The head of the reference ring, left there until the engine is done with it.
    Ref {
        hdr: &'a [u8; REF_HEADER_LEN],
        front: &'a RefFront,
    },
    /// From the skb queue, taken out of it.
    Skb(SkBuff),
}

impl<const SLOT: usize, const N: usize> Intake<SLOT, N> {
    /// The rings are allocated here, the queue initialised in place.
    pub(crate) fn new() -> Result<impl PinInit<Self>> {
        let ring = KBox::pin_init(SharedRing::new(), GFP_KERNEL)?;
        let refs = KBox::pin_init(RefRing::new(), GFP_KERNEL)?;
        Ok(pin_init!(Self {
            skbs <- SkbQueue::new(),
            ring,
            refs,
        }))
    }

    /// Hands the oldest packet to `handle`, which says whether it is done with it (`false`: the
    /// packet waits for ODP pages; one from the reference ring then stays at its head, one
    /// taken from the ring or the queue is the engine's to keep). `None` if nothing is queued.
    #[inline(always)]
    pub(crate) fn take(&self, handle: impl FnOnce(Next<'_, SLOT>) -> bool) -> Option<bool> {
        // Taking the reference ring's lock makes every packet pushed into the ring before its
        // head visible: those are older, so the ring is looked at after it.
        let mut hdr = [0; REF_HEADER_LEN];
        let front = if self.refs.looks_empty() {
            None
        } else {
            self.refs.copy_front(&mut hdr)
        };
        if !self.ring.looks_empty() {
            let mut bytes = [0; SLOT];
            if let Some((len, tag)) = self.ring.with(|r| r.pop_into(&mut bytes)) {
                return Some(handle(Next::Ring {
                    bytes: &bytes,
                    len,
                    tag,
                }));
            }
        }
        if let Some(front) = front {
            let done = handle(Next::Ref {
                hdr: &hdr,
                front: &front,
            });
            if done {
                drop(self.refs.drop_front());
            }
            return Some(done);
        }
        Some(handle(Next::Skb(self.skbs.pop()?)))
    }

    /// Whether nothing is queued; `false` when unsure.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.skbs.len() == 0 && self.ring.looks_empty() && self.refs.looks_empty()
    }

    /// Drops every queued packet (the engine in a state that takes none).
    pub(crate) fn purge(&self) {
        self.skbs.purge();
        self.ring.clear();
        self.refs.clear(false);
    }

    /// Drops every queued packet and refuses every later one (the QP being destroyed); in BH
    /// context for the rings, which the peer's engine fills there.
    pub(crate) fn close(&self) {
        self.skbs.close();
        self.ring.with(|r| r.close());
        self.refs.clear(true);
    }
}
