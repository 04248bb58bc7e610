// SPDX-License-Identifier: GPL-2.0

//! The receive path (`rxe_recv.c`, `rxe_udp_encap_recv`): checks a RoCEv2 packet (lengths, ICRC,
//! header shape, destination QP, transport, state, partition) and hands it to its QP's
//! responder (requests) or completer (responses). Anything malformed is dropped, and nothing is
//! trusted before it is checked: every length comes from the packet's own headers, bounded by
//! the bytes actually received.

use super::{counters::Counter, device::RxeDev, mcast::Mgid, qp::QpShared};
use crate::ib::device::{Device, DeviceRef};
use crate::net::{
    crc,
    skb::{SkBuff, SkbList},
    tunnel::PacketReceiver,
};
use crate::proto::{
    av::is_multicast_gid,
    hdr::{pkey_matches_default, QPN_MASK},
    icrc::{self, IpHeader, UDP_HDR_LEN},
    opcode::{Mask, Transport, MAX_HEADERS_LEN},
    packet::Packet,
    parts::Parts,
    qp_state::{QpState, QpType},
};
use kernel::sync::Arc;

/// Packets queued to one QP before more are dropped (a QP that does not keep up must not eat
/// the machine's memory).
const MAX_QUEUED: usize = 4096;

/// RoCEv2 packets from the tunnel sockets.
pub(crate) struct RxeReceiver;

impl PacketReceiver for RxeReceiver {
    fn receive(mut skbs: SkbList) {
        let Some(first) = skbs.next() else {
            return;
        };
        // The packets of a list came in on one device (the shim gives a chain its head's).
        let Some(dev) = first.netdev().and_then(DeviceRef::<RxeDev>::from_netdev) else {
            return;
        };
        let mut burst = Burst::new();
        for skb in core::iter::once(first).chain(skbs) {
            if let Some(skb) = readable(skb) {
                receive_on(&dev, skb, Origin::Wire, Wake::Burst(&mut burst));
            }
        }
    }
}

/// `skb` made readable in place, fragments and all (no copy into one buffer, unlike C's
/// linearising), once the headers are linear; an skb that cannot be read so is made linear.
/// Most are linear already (a driver's `build_skb` of a frame).
fn readable(mut skb: SkBuff) -> Option<SkBuff> {
    if skb.linear().is_none() {
        if !skb.readable_in_place() && skb.linearize().is_err() {
            return None;
        }
        skb.pull_headers(UDP_HDR_LEN + MAX_HEADERS_LEN).ok()?;
    }
    Some(skb)
}

/// The QP the packets of a burst went to so far, looked up once and woken once: when a packet
/// goes to another QP, or when the burst ends (on drop), not once a packet (the packets of a
/// GRO chain are one flow, one QP's).
pub(crate) struct Burst {
    qp: Option<Arc<QpShared>>,
    /// A packet was queued to `qp` since it was last woken.
    wake: bool,
}

impl Burst {
    fn new() -> Self {
        Self {
            qp: None,
            wake: false,
        }
    }

    /// The QP numbered `qpn` on `dev`: the last one's, if it is that one.
    fn qp(&mut self, dev: &Device<RxeDev>, qpn: u32) -> Option<Arc<QpShared>> {
        if let Some(qp) = self.qp.as_ref().filter(|qp| qp.qpn == qpn) {
            return Some(qp.clone());
        }
        let qp = dev.data().qps().get(qpn)?;
        self.wake_last();
        self.qp = Some(qp.clone());
        Some(qp)
    }

    fn wake_last(&mut self) {
        if core::mem::take(&mut self.wake) {
            if let Some(qp) = &self.qp {
                qp.kick_deferred();
            }
        }
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.wake_last();
    }
}

/// How [`receive_on`] finds and wakes the QP a packet is queued to.
pub(crate) enum Wake<'a> {
    /// Packets a QP's run looped back: the QPs are left in `Woken` for the sending context to
    /// run, or scheduled if it cannot.
    Here(&'a mut Woken),
    /// Packets from a net device: the QPs are woken as [`Burst`] says.
    Burst(&'a mut Burst),
}

/// Where a packet comes from, which decides whether its ICRC is checked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A net device: the ICRC is checked.
    Wire,
    /// This device, to itself ([`super::qp::QpShared::transmit`]): built here and never on a
    /// wire, so it carries no ICRC to check (as the kernel's loopback device neither computes
    /// nor checks checksums; C computes and checks it).
    Loopback,
}

/// Where a checked packet goes.
enum Dest {
    /// The QP its BTH names, by number.
    Qp(u32),
    /// Every QP of the multicast group of this GID (BTH QPN `0xFFFFFF`, `IB_MULTICAST_QPN`).
    Multicast(Mgid),
}

/// Whether `qp` takes packets of `transport` (`check_type_state`).
#[inline(always)]
fn accepts(qp: &QpShared, transport: Transport) -> bool {
    match qp.qp_type {
        QpType::Rc => transport == Transport::Rc,
        QpType::Uc => transport == Transport::Uc,
        QpType::Ud | QpType::Gsi => transport == Transport::Ud,
        QpType::Smi => false,
    }
}

/// What the checks found about a packet.
struct Checked {
    dest: Dest,
    transport: Transport,
    is_request: bool,
    /// Bytes of its IP header.
    ip_len: usize,
}

/// Where the UDP datagram whose header is `udp` ends, from that header's start.
fn udp_payload_end(udp: &[u8; UDP_HDR_LEN]) -> usize {
    usize::from(u16::from_be_bytes([udp[4], udp[5]]))
}

/// Checks a packet and finds where it goes.
fn check(skb: &SkBuff, origin: Origin) -> Option<Checked> {
    // The UDP payload, one `Parts` made for it (a linear packet's straight from its bytes).
    let (udp, payload) = match skb.linear() {
        Some(bytes) => {
            let udp = bytes.first_chunk::<UDP_HDR_LEN>()?;
            let payload = bytes.get(UDP_HDR_LEN..udp_payload_end(udp))?;
            (udp, Parts::from_slice(payload))
        }
        None => {
            let parts = skb.parts()?;
            let udp = parts.first().first_chunk::<UDP_HDR_LEN>()?;
            (udp, parts.range(UDP_HDR_LEN, udp_payload_end(udp))?)
        }
    };
    let ip_header = skb.ip_header();
    let ip_len = ip_header.len();
    let ip = IpHeader::parse(ip_header).ok()?;
    if origin == Origin::Wire {
        icrc::verify_parts(crc::crc32_le, ip, udp, &payload).ok()?;
    }
    // Where it goes, from the BTH: the engine the packet is queued to parses it.
    let route = Packet::route(&payload).ok()?;
    if !pkey_matches_default(route.pkey) {
        return None;
    }
    // The opcode's transport must be the QP's (`check_type_state`).
    let transport = route.info.transport()?;
    let is_request = route.info.mask.contains(Mask::REQ);
    if route.qpn == QPN_MASK {
        // `rxe_rcv_mcast_pkt`: the group is the one of the destination IP address, as a GID.
        let mgid = match ip {
            IpHeader::V4(h) => {
                let mut gid = [0u8; 16];
                gid[10] = 0xff;
                gid[11] = 0xff;
                gid[12..].copy_from_slice(&h[16..20]);
                gid
            }
            IpHeader::V6(h) => {
                let mut gid = [0u8; 16];
                gid.copy_from_slice(&h[24..40]);
                gid
            }
        };
        return is_multicast_gid(&mgid).then_some(Checked {
            dest: Dest::Multicast(mgid),
            transport,
            is_request,
            ip_len,
        });
    }
    Some(Checked {
        dest: Dest::Qp(route.qpn),
        transport,
        is_request,
        ip_len,
    })
}

/// User QPs that looped-back packets were queued to, for the context that sent them to run when
/// its own run is over (`QpShared::run_here`), in place of a trip through the workqueue each.
pub(crate) struct Woken {
    /// A queue: `len` QPs from `head` on, around.
    qps: [Option<Arc<QpShared>>; 4],
    head: usize,
    len: usize,
}

impl Woken {
    pub(crate) fn new() -> Self {
        Self {
            qps: [None, None, None, None],
            head: 0,
            len: 0,
        }
    }

    /// Takes `qp` to run; `qp` back if it may not run here (a kernel QP: its ULP's completion
    /// handlers keep being called from the workqueue) or there is no room (the caller then
    /// schedules it).
    pub(crate) fn take(&mut self, qp: Arc<QpShared>) -> Result<(), Arc<QpShared>> {
        if !qp.is_user {
            return Err(qp);
        }
        let n = self.qps.len();
        if (0..self.len).any(|i| {
            self.qps[(self.head + i) % n]
                .as_ref()
                .is_some_and(|held| Arc::ptr_eq(held, &qp))
        }) {
            return Ok(());
        }
        if self.len == n {
            return Err(qp);
        }
        self.qps[(self.head + self.len) % n] = Some(qp);
        self.len += 1;
        Ok(())
    }

    /// The QP taken first of those left.
    pub(crate) fn pop(&mut self) -> Option<Arc<QpShared>> {
        if self.len == 0 {
            return None;
        }
        let qp = self.qps[self.head].take();
        self.head = (self.head + 1) % self.qps.len();
        self.len -= 1;
        qp
    }
}

/// Receives `skb` (`skb->data` at the UDP header) on `dev` (`rxe_rcv`), and wakes the QP it is
/// queued to as `wake` says.
pub(crate) fn receive_on(dev: &Device<RxeDev>, skb: SkBuff, origin: Origin, mut wake: Wake<'_>) {
    let Some(Checked {
        dest,
        transport,
        is_request,
        ip_len,
    }) = check(&skb, origin)
    else {
        return;
    };
    // As the C driver: a packet for a QP that is there, or for a multicast GID; its bytes are
    // the whole IP packet, as `sent_bytes` counts it on the other side.
    let count = |skb: &SkBuff| {
        dev.data().shared().count(Counter::RcvdPkts);
        dev.data()
            .shared()
            .count_bytes(Counter::RcvdBytes, ip_len + skb.len());
    };
    match dest {
        Dest::Qp(qpn) => {
            let qp = match wake {
                Wake::Burst(ref mut burst) => burst.qp(dev, qpn),
                Wake::Here(_) => dev.data().qps().get(qpn),
            };
            let Some(qp) = qp.filter(|qp| accepts(qp, transport)) else {
                return;
            };
            count(&skb);
            if !deliver(&qp, is_request, skb) {
                return;
            }
            match wake {
                Wake::Burst(burst) => burst.wake = true,
                Wake::Here(woken) => {
                    if let Err(qp) = woken.take(qp) {
                        qp.kick_deferred();
                    }
                }
            }
        }
        Dest::Multicast(mgid) => {
            count(&skb);
            // Dropped if no group has the address.
            let Some(members) = dev.data().mcast().members(&mgid) else {
                return;
            };
            // Every QP of the group that takes the packet gets it: a copy for all but the last,
            // which gets this one. A QP that cannot take it is skipped (unreliable datagrams).
            let mut prev: Option<Arc<QpShared>> = None;
            for &qpn in members.qpns() {
                let Some(qp) = dev.data().qps().get(qpn) else {
                    continue;
                };
                if !accepts(&qp, transport) {
                    continue;
                }
                if let Some(p) = prev.replace(qp) {
                    if let Some(copy) = skb.copy() {
                        if deliver(&p, is_request, copy) {
                            p.kick_deferred();
                        }
                    }
                }
            }
            if let Some(last) = prev {
                if deliver(&last, is_request, skb) {
                    last.kick_deferred();
                }
            }
        }
    }
}

/// The packet `skb`, queued by [`deliver`], parsed by the engine that takes it: from its UDP
/// header, read in place (the receive path made sure it can be) and checked once more.
#[inline]
pub(crate) fn parse_queued(skb: &SkBuff) -> Option<Packet<'_>> {
    if let Some(bytes) = skb.linear() {
        return Packet::parse(bytes.get(UDP_HDR_LEN..)?).ok();
    }
    Packet::parse_parts(&skb.parts()?.skip(UDP_HDR_LEN)?).ok()
}

/// Queues `skb` to `qp`'s responder (requests) or completer (responses); whether it did, and
/// so whether `qp`'s task is to run for it.
#[inline(always)]
fn deliver(qp: &Arc<QpShared>, is_request: bool, skb: SkBuff) -> bool {
    let queue = if is_request {
        &qp.requests.skbs
    } else {
        &qp.responses.skbs
    };
    if queue.len() >= MAX_QUEUED {
        return false;
    }
    // The state is read without the engine lock: a stale answer only queues a packet the engine
    // then drops, or drops one a retry brings again.
    if qp.state_hint() < QpState::Rtr {
        return false;
    }
    // A QP being destroyed has closed its queues: the packet is dropped, not left behind.
    queue.push(skb)
}
