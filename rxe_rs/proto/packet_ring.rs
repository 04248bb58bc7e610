// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Looped-back packets held as their bytes for a QP's engine, without a socket buffer.
//!
//! A packet from a QP of the same device to another needs no socket buffer: its UDP payload
//! (BTH, extension headers, payload, a zero ICRC) goes into a small ring of the destination QP,
//! which its engine reads before its skb queue: ACKs for the completer ([`AckRing`]), small
//! requests for the responder ([`RequestRing`]). Order with the queued skbs holds because the
//! sender puts a packet here only while that queue is empty: every entry is then older than
//! every queued skb. A full or closed ring refuses the packet, which then goes as an skb.
//!
//! A larger request whose payload lies in one pinned user MR goes into a third ring as its
//! headers and a reference to that payload ([`RingIndex`] keeps its order; the ring itself, which
//! holds MR references, is `rxe::packet_rings::RefRing`). The responder copies the payload from
//! the sender's MR when it handles the request. A sender puts a request into the bytes ring only
//! while the reference ring is empty, so every reference is newer than every request of the
//! bytes ring, which the responder reads first; a small request the full bytes ring refuses can
//! go into the reference ring. A positive ACK supersedes a positive ACK of an earlier PSN at the
//! ring's end ([`AckRing::push_ack`]).

use core::cmp::Ordering;

use super::hdr::{Aeth, Bth, Header, Syndrome, BTH_LEN};
use super::opcode::RC_ACKNOWLEDGE;
use super::psn::psn_cmp;

/// BTH, AETH and a (zero) ICRC: the UDP payload of an ACKNOWLEDGE.
pub const ACK_LEN: usize = 20;

/// Entries of an [`AckRing`]: 320 bytes of packets per QP.
pub const ACK_RING_LEN: usize = 16;

/// The largest request packet a [`RequestRing`] holds: a SEND of 112 bytes, an RDMA WRITE of 96.
pub const REQUEST_LEN: usize = 128;

/// Entries of a [`RequestRing`]: 1 KiB of packets per QP.
pub const REQUEST_RING_LEN: usize = 8;

/// The headers of a packet whose payload goes by reference: BTH, RETH and immediate data (RDMA
/// WRITE ONLY with immediate) at most.
pub const REF_HEADER_LEN: usize = 32;

/// Entries of the ring of requests with referenced payloads: the requester's window of
/// unacknowledged packets (`MAX_UNACKED_PSNS`), so that a streaming sender does not fill it.
pub const REF_RING_LEN: usize = 128;

/// ACKs for a QP's completer.
pub type AckRing = PacketRing<ACK_LEN, ACK_RING_LEN>;

/// Small requests for a QP's responder.
pub type RequestRing = PacketRing<REQUEST_LEN, REQUEST_RING_LEN>;

/// One packet: its first `len` bytes, and a tag the sender chose.
#[derive(Clone, Copy)]
pub struct Entry<const SLOT: usize> {
    bytes: [u8; SLOT],
    len: usize,
    tag: u8,
}

impl<const SLOT: usize> Entry<SLOT> {
    /// The packet.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The sender's tag.
    pub fn tag(&self) -> u8 {
        self.tag
    }
}

/// The order of a FIFO of at most `N` slots kept elsewhere: which slot a push writes, which
/// slot is the oldest, and whether the FIFO was closed (it then refuses every push).
#[derive(Clone, Copy, Debug, Default)]
pub struct RingIndex<const N: usize> {
    head: usize,
    len: usize,
    closed: bool,
}

impl<const N: usize> RingIndex<N> {
    /// Empty and open.
    pub const fn new() -> Self {
        Self {
            head: 0,
            len: 0,
            closed: false,
        }
    }

    /// Whether a push now would be taken.
    pub fn has_room(&self) -> bool {
        !self.closed && self.len < N
    }

    /// How many slots are in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no slot is in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slot a push writes, if there is room; [`Self::commit`] makes it the newest entry.
    pub fn next_free(&self) -> Option<usize> {
        self.has_room().then_some((self.head + self.len) % N)
    }

    /// The slot [`Self::next_free`] named now holds the newest entry.
    pub fn commit(&mut self) {
        if self.has_room() {
            self.len += 1;
        }
    }

    /// The oldest entry's slot.
    pub fn front(&self) -> Option<usize> {
        (self.len > 0).then_some(self.head)
    }

    /// The newest entry's slot.
    pub fn back(&self) -> Option<usize> {
        (self.len > 0).then(|| (self.head + self.len - 1) % N)
    }

    /// Removes the oldest entry; the slot it was in.
    pub fn drop_front(&mut self) -> Option<usize> {
        let slot = self.front()?;
        self.head = (self.head + 1) % N;
        self.len -= 1;
        Some(slot)
    }

    /// Removes every entry; the slots they were in, oldest first.
    pub fn clear(&mut self) -> Slots<N> {
        let slots = Slots {
            next: self.head,
            left: self.len,
        };
        self.len = 0;
        slots
    }

    /// Removes every entry (the slots they were in, as [`Self::clear`]) and refuses every
    /// later push.
    pub fn close(&mut self) -> Slots<N> {
        self.closed = true;
        self.clear()
    }
}

/// Slots of a [`RingIndex`] that held entries, oldest first.
pub struct Slots<const N: usize> {
    next: usize,
    left: usize,
}

impl<const N: usize> Iterator for Slots<N> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        let slot = self.next;
        self.next = (self.next + 1) % N;
        self.left -= 1;
        Some(slot)
    }
}

/// A FIFO of at most `N` packets of at most `SLOT` bytes, which refuses every push once closed.
pub struct PacketRing<const SLOT: usize, const N: usize> {
    entries: [Entry<SLOT>; N],
    index: RingIndex<N>,
}

impl<const SLOT: usize, const N: usize> Default for PacketRing<SLOT, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const SLOT: usize, const N: usize> PacketRing<SLOT, N> {
    /// An empty, open ring.
    pub const fn new() -> Self {
        Self {
            entries: [Entry {
                bytes: [0; SLOT],
                len: 0,
                tag: 0,
            }; N],
            index: RingIndex::new(),
        }
    }

    /// Whether a push now would be taken.
    pub fn has_room(&self) -> bool {
        self.index.has_room()
    }

    /// Whether it holds no packet.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// How many packets it holds.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Appends `bytes`; `false` if the ring is full or closed or `bytes` is longer than `SLOT`.
    pub fn push(&mut self, bytes: &[u8], tag: u8) -> bool {
        self.push_with(bytes.len(), tag, |slot| {
            slot.copy_from_slice(bytes);
            true
        })
    }

    /// Appends a packet of `len` bytes that `write` writes in place; `false` (nothing appended)
    /// if the ring is full or closed, `len` is longer than `SLOT`, or `write` fails.
    pub fn push_with(
        &mut self,
        len: usize,
        tag: u8,
        write: impl FnOnce(&mut [u8]) -> bool,
    ) -> bool {
        let Some(slot) = self.index.next_free().filter(|_| len <= SLOT) else {
            return false;
        };
        let entry = &mut self.entries[slot];
        if !write(&mut entry.bytes[..len]) {
            return false;
        }
        entry.len = len;
        entry.tag = tag;
        self.index.commit();
        true
    }

    /// A copy of the oldest packet, left in the ring.
    pub fn front(&self) -> Option<Entry<SLOT>> {
        self.index.front().map(|slot| self.entries[slot])
    }

    /// Copies the oldest packet, left in the ring, to the start of `to`: its length and tag.
    /// Copies only the packet's bytes, where [`Self::front`] copies a whole slot.
    pub fn copy_front(&self, to: &mut [u8; SLOT]) -> Option<(usize, u8)> {
        let entry = &self.entries[self.index.front()?];
        to[..entry.len].copy_from_slice(entry.bytes());
        Some((entry.len, entry.tag))
    }

    /// Removes the oldest packet.
    pub fn drop_front(&mut self) {
        self.index.drop_front();
    }

    /// Removes the oldest packet, copied to the start of `to` as [`Self::copy_front`] does.
    pub fn pop_into(&mut self, to: &mut [u8; SLOT]) -> Option<(usize, u8)> {
        let out = self.copy_front(to)?;
        self.drop_front();
        Some(out)
    }

    /// Removes and returns the oldest packet.
    pub fn pop(&mut self) -> Option<Entry<SLOT>> {
        let entry = self.front()?;
        self.drop_front();
        Some(entry)
    }

    /// Drops every packet it holds (the engine leaving the states that take them, as its skb
    /// queue is purged).
    pub fn clear(&mut self) {
        self.index.clear();
    }

    /// Drops every packet and refuses every later push (the QP being destroyed).
    pub fn close(&mut self) {
        self.index.close();
    }
}

impl AckRing {
    /// Appends the ACKNOWLEDGE of `bth` and `aeth`, or writes it over the newest packet when
    /// both are positive ACKs and it acknowledges at least as far: an ACK of a PSN acknowledges
    /// every request up to it (the IBA's ACK coalescing), so the completer loses nothing, and
    /// a completer that falls behind a streaming responder does not fill the ring (whose
    /// overflow goes as skbs). A NAK is never merged. `false` if neither can be done, or the
    /// headers do not encode.
    pub fn push_ack(&mut self, bth: &Bth, aeth: &Aeth) -> bool {
        let mut bytes = [0; ACK_LEN];
        let (head, rest) = bytes.split_at_mut(BTH_LEN);
        if bth.write(head).is_err() || aeth.write(rest).is_err() {
            return false;
        }
        let positive = |bth: &Bth, aeth: &Aeth| {
            bth.opcode == RC_ACKNOWLEDGE && matches!(aeth.syndrome, Syndrome::Ack { .. })
        };
        if positive(bth, aeth) {
            if let Some(back) = self.index.back() {
                let entry = &mut self.entries[back];
                let newest = Bth::parse(entry.bytes()).and_then(|b| {
                    let a = Aeth::parse(entry.bytes().get(BTH_LEN..).unwrap_or(&[]))?;
                    Ok((b, a))
                });
                if let Ok((b, a)) = newest {
                    if positive(&b, &a) && psn_cmp(bth.psn, b.psn) != Ordering::Less {
                        entry.bytes = bytes;
                        entry.len = ACK_LEN;
                        entry.tag = 0;
                        return true;
                    }
                }
            }
        }
        self.push(&bytes, 0)
    }
}
