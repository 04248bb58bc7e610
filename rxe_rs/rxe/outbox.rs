// SPDX-License-Identifier: GPL-2.0

//! The packets a step builds under its QP's engine lock, sent by `QpShared::transmit` once
//! the lock is released ([`Outbox`]).

use super::qp::QpShared;
use crate::net::skb::SkBuff;
use crate::proto::{
    av::{AddressVector, NetworkType},
    icrc::{IPV4_HDR_LEN, IPV6_HDR_LEN, UDP_HDR_LEN},
};
use core::mem::ManuallyDrop;
use kernel::sync::Arc;

/// A built packet, ready to go.
pub(crate) enum OutPacket {
    Skb {
        skb: SkBuff,
        loopback: bool,
    },
    /// A looped-back packet already in a ring of `to` (`proto::packet_ring`): the QP to wake
    /// (unless `wake` is false: a positive ACK its next run takes, `QpShared::acks_quiet`), and
    /// what the counters count.
    Delivered {
        to: Arc<QpShared>,
        wake: bool,
        /// The IP packet it stands for, as the byte counters count it.
        wire_len: usize,
    },
}

impl OutPacket {
    /// A packet of `len` bytes from its BTH to its ICRC, put into a ring of `to` and addressed
    /// by `av`; `wake`: whether `to`'s task is to run for it.
    pub(crate) fn delivered(to: Arc<QpShared>, av: &AddressVector, len: usize, wake: bool) -> Self {
        let ip_len = match av.network_type {
            NetworkType::Ipv4 => IPV4_HDR_LEN,
            NetworkType::Ipv6 => IPV6_HDR_LEN,
        };
        Self::Delivered {
            to,
            wake,
            wire_len: ip_len + UDP_HDR_LEN + len,
        }
    }
}

/// Packets a step built, sent after the engine lock is released.
pub(crate) struct Outbox {
    /// The first `len` are `Some`, the others `None`: only those are dropped ([`Outbox`]'s
    /// `Drop`), not every slot as the array's own drop would (a step's outbox is usually
    /// empty by then: `transmit` drained it).
    packets: ManuallyDrop<[Option<OutPacket>; Outbox::CAPACITY]>,
    len: usize,
    /// One of them is an skb (asked for every packet built: kept, not searched for).
    skbs: bool,
    /// The IPv4 ID of the first packet ([`Engine::next_ip_id`](super::engine::Engine)).
    first_ip_id: u16,
}

impl Outbox {
    /// The most packets a step builds.
    pub(crate) const CAPACITY: usize = 16;

    pub(super) fn new() -> Self {
        Self {
            packets: ManuallyDrop::new([const { None }; Outbox::CAPACITY]),
            len: 0,
            skbs: false,
            first_ip_id: 0,
        }
    }

    /// Builds the first packet with IPv4 ID `id` (the next ones count up from it).
    pub(super) fn start_ip_ids_at(&mut self, id: u16) {
        self.first_ip_id = id;
    }

    /// Queues `pkt`; `false` if the outbox is full (the caller retries next step). Inlined: a
    /// few stores, called for every packet built (a call cost more).
    #[inline(always)]
    pub(crate) fn push(&mut self, pkt: OutPacket) -> bool {
        let Some(slot) = self.packets.get_mut(self.len) else {
            return false;
        };
        self.skbs |= matches!(pkt, OutPacket::Skb { .. });
        *slot = Some(pkt);
        self.len += 1;
        true
    }

    /// Whether another packet fits.
    pub(crate) fn has_room(&self) -> bool {
        self.len < self.packets.len()
    }

    /// The IPv4 ID the next packet is built with: the first one's plus its place, so that
    /// packets of a step that follow each other on one route may go as one burst
    /// (`SkBuff::burst_append`).
    pub(crate) fn next_ip_id(&self) -> u16 {
        self.first_ip_id.wrapping_add(self.len as u16)
    }

    /// Whether it holds a packet that is an skb.
    pub(crate) fn has_skb(&self) -> bool {
        self.skbs
    }

    pub(super) fn drain(&mut self) -> impl Iterator<Item = OutPacket> + '_ {
        self.skbs = false;
        let len = core::mem::take(&mut self.len);
        self.packets.iter_mut().take(len).filter_map(Option::take)
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.drain().for_each(drop);
    }
}
