// SPDX-License-Identifier: GPL-2.0

//! The receive path (`rxe_recv.c`, `rxe_udp_encap_recv`): checks a RoCEv2 packet (lengths, ICRC,
//! header shape, destination QP, transport, state, partition) and hands it to its QP's
//! responder (requests) or completer (responses). Anything malformed is dropped, and nothing is
//! trusted before it is checked: every length comes from the packet's own headers, bounded by
//! the bytes actually received.

use super::{
    device::{Counter, RxeDev},
    qp::QpShared,
};
use crate::ib::device::{Device, DeviceRef};
use crate::net::{skb::SkBuff, tunnel::PacketReceiver};
use crate::proto::{
    hdr::{DEFAULT_PKEY, QPN_MASK},
    icrc::{self, IpHeader, UDP_HDR_LEN},
    opcode::{Mask, Transport},
    packet::Packet,
    qp_state::{QpState, QpType},
};
use kernel::sync::Arc;

/// Packets queued to one QP before more are dropped (a QP that does not keep up must not eat
/// the machine's memory).
const MAX_QUEUED: usize = 4096;

/// RoCEv2 packets from the tunnel sockets.
pub(crate) struct RxeReceiver;

impl PacketReceiver for RxeReceiver {
    fn receive(mut skb: SkBuff) {
        let Some(dev) = skb.netdev().and_then(DeviceRef::<RxeDev>::from_netdev) else {
            return;
        };
        if skb.linearize().is_err() {
            return;
        }
        receive_on(&dev, skb);
    }
}

/// What the checks found: the destination QP, and whether the packet is a request.
fn check(dev: &Device<RxeDev>, skb: &SkBuff) -> Option<(Arc<QpShared>, bool)> {
    let data = skb.data();
    let (udp, rest) = data.split_first_chunk::<UDP_HDR_LEN>()?;
    let udp_len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    let payload = rest.get(..udp_len.checked_sub(UDP_HDR_LEN)?)?;
    let ip = IpHeader::parse(skb.ip_header()).ok()?;
    icrc::verify(ip, udp, payload).ok()?;
    let pkt = Packet::parse(payload).ok()?;
    let bth = pkt.bth();
    if bth.qpn == QPN_MASK {
        // Multicast: not implemented yet.
        return None;
    }
    if bth.pkey != DEFAULT_PKEY {
        return None;
    }
    let qp = dev.data().qp(bth.qpn)?;
    // The opcode's transport must be the QP's (`check_type_state`).
    let transport = pkt.info().transport()?;
    let ok = match qp.qp_type {
        QpType::Rc => transport == Transport::Rc,
        QpType::Uc => transport == Transport::Uc,
        QpType::Ud | QpType::Gsi => transport == Transport::Ud,
        QpType::Smi => false,
    };
    if !ok {
        return None;
    }
    let is_request = pkt.info().mask.contains(Mask::REQ);
    Some((qp, is_request))
}

/// Receives `skb` (`skb->data` at the UDP header) on `dev` (`rxe_rcv`).
pub(crate) fn receive_on(dev: &Device<RxeDev>, skb: SkBuff) {
    let Some((qp, is_request)) = check(dev, &skb) else {
        return;
    };
    dev.data().count(Counter::RcvdPkts);
    // As the C driver: the whole IP packet, as `sent_bytes` counts it on the other side.
    dev.data()
        .count_bytes(Counter::RcvdBytes, skb.ip_header().len() + skb.data().len());
    let queue = if is_request {
        &qp.req_pkts
    } else {
        &qp.resp_pkts
    };
    if queue.len() >= MAX_QUEUED {
        return;
    }
    // The state is read without the engine lock: a stale answer only queues a packet the engine
    // then drops, or drops one a retry brings again.
    if qp.state_hint() < QpState::Rtr {
        return;
    }
    queue.push(skb);
    qp.kick_deferred();
}
