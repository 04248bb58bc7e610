// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Looped-back packets held as their bytes for a QP's engine, without a socket buffer.
//!
//! A packet from a QP of the same device to another needs no socket buffer: its UDP payload
//! (BTH, extension headers, payload, a zero ICRC) goes into a small ring of the destination QP,
//! which its engine reads before its skb queue: ACKs for the completer ([`AckRing`]), small
//! requests for the responder ([`RequestRing`]). Order with the queued skbs holds because the
//! sender puts a packet here only while that queue is empty: every entry is then older than
//! every queued skb. A full or closed ring refuses the packet, which then goes as an skb.

/// BTH, AETH and a (zero) ICRC: the UDP payload of an ACKNOWLEDGE.
pub const ACK_LEN: usize = 20;

/// Entries of an [`AckRing`]: 320 bytes of packets per QP.
pub const ACK_RING_LEN: usize = 16;

/// The largest request packet a [`RequestRing`] holds: a SEND of 112 bytes, an RDMA WRITE of 96.
pub const REQUEST_LEN: usize = 128;

/// Entries of a [`RequestRing`]: 1 KiB of packets per QP.
pub const REQUEST_RING_LEN: usize = 8;

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

/// A FIFO of at most `N` packets of at most `SLOT` bytes, which refuses every push once closed.
pub struct PacketRing<const SLOT: usize, const N: usize> {
    entries: [Entry<SLOT>; N],
    head: usize,
    len: usize,
    closed: bool,
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
            head: 0,
            len: 0,
            closed: false,
        }
    }

    /// Whether a push now would be taken.
    pub fn has_room(&self) -> bool {
        !self.closed && self.len < N
    }

    /// Whether it holds no packet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many packets it holds.
    pub fn len(&self) -> usize {
        self.len
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
        if !self.has_room() || len > SLOT {
            return false;
        }
        let entry = &mut self.entries[(self.head + self.len) % N];
        if !write(&mut entry.bytes[..len]) {
            return false;
        }
        entry.len = len;
        entry.tag = tag;
        self.len += 1;
        true
    }

    /// A copy of the oldest packet, left in the ring.
    pub fn front(&self) -> Option<Entry<SLOT>> {
        (self.len > 0).then(|| self.entries[self.head])
    }

    /// Copies the oldest packet, left in the ring, to the start of `to`: its length and tag.
    /// Copies only the packet's bytes, where [`Self::front`] copies a whole slot.
    pub fn copy_front(&self, to: &mut [u8; SLOT]) -> Option<(usize, u8)> {
        if self.len == 0 {
            return None;
        }
        let entry = &self.entries[self.head];
        to[..entry.len].copy_from_slice(entry.bytes());
        Some((entry.len, entry.tag))
    }

    /// Removes the oldest packet.
    pub fn drop_front(&mut self) {
        if self.len > 0 {
            self.head = (self.head + 1) % N;
            self.len -= 1;
        }
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
        self.len = 0;
    }

    /// Drops every packet and refuses every later push (the QP being destroyed).
    pub fn close(&mut self) {
        self.clear();
        self.closed = true;
    }
}
