// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Looped-back ACKNOWLEDGE packets held as their bytes for a QP's completer.
//!
//! An ACK from a QP of the same device needs no socket buffer: its UDP payload (BTH, AETH and
//! a zero ICRC, 20 bytes) goes into a small ring of the acknowledged QP, which its completer
//! reads before its queue of skb responses. Order with those responses holds because the
//! sender puts an ACK here only while that queue is empty: every entry is then older than every
//! queued skb. A full or closed ring refuses the ACK, which then goes as an skb.

/// BTH, AETH and a (zero) ICRC: the UDP payload of an ACKNOWLEDGE.
pub const ACK_LEN: usize = 20;

/// Entries of an [`AckRing`]: 320 bytes per QP.
pub const ACK_RING_LEN: usize = 16;

/// A FIFO of at most [`ACK_RING_LEN`] ACKs, which refuses every push once closed.
pub struct AckRing {
    acks: [[u8; ACK_LEN]; ACK_RING_LEN],
    head: usize,
    len: usize,
    closed: bool,
}

impl Default for AckRing {
    fn default() -> Self {
        Self::new()
    }
}

impl AckRing {
    /// An empty, open ring.
    pub const fn new() -> Self {
        Self {
            acks: [[0; ACK_LEN]; ACK_RING_LEN],
            head: 0,
            len: 0,
            closed: false,
        }
    }

    /// Whether a push now would be taken.
    pub fn has_room(&self) -> bool {
        !self.closed && self.len < ACK_RING_LEN
    }

    /// Whether it holds no ACK.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `ack`; `false` if the ring is full or closed.
    pub fn push(&mut self, ack: [u8; ACK_LEN]) -> bool {
        if !self.has_room() {
            return false;
        }
        self.acks[(self.head + self.len) % ACK_RING_LEN] = ack;
        self.len += 1;
        true
    }

    /// The oldest ACK.
    pub fn pop(&mut self) -> Option<[u8; ACK_LEN]> {
        if self.len == 0 {
            return None;
        }
        let ack = self.acks[self.head];
        self.head = (self.head + 1) % ACK_RING_LEN;
        self.len -= 1;
        Some(ack)
    }

    /// Drops every ACK it holds (the completer leaving RTS, as its skb queue is purged).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Drops every ACK and refuses every later push (the QP being destroyed).
    pub fn close(&mut self) {
        self.clear();
        self.closed = true;
    }
}
