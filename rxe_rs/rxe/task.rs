// SPDX-License-Identifier: GPL-2.0

//! A QP's task (`rxe_task.c`): scheduling the QP's one task, running the requester, completer
//! and responder over its [`Engine`] state, and sending the packets they built (`rxe_net.c`'s
//! `rxe_xmit_packet`, loopback included).
//!
//! Scheduling ([`crate::proto::task::TaskState`]): a doorbell runs the task inline when it is
//! idle (no trip through a workqueue, unlike the C driver, whose latency in our VM sits on
//! scheduler ticks); received packets and timers defer to the BH workqueue, the modern tasklet:
//! the engine never sleeps, and BH work runs on the softirq exit of the CPU that queued it. The
//! user QPs a run's looped-back packets go to run next in the same context
//! ([`QpShared::run_here`]).

/// Steps a run may take before it yields to the workqueue (`RXE_MAX_ITERATIONS` in C is 1024).
const BUDGET: u32 = 256;
/// Ticks a run may last before it yields, whatever its budget left: as NAPI's time limit, it
/// bounds the time a CPU spends in one softirq run (C's runs are preemptible kworkers), so that
/// threads, the RCU grace-period kthread among them, still run where steps are slow (a
/// sanitizer kernel under emulation). A run that yields is queued again on the BH workqueue,
/// which under load hands its work to ksoftirqd. Two: a run yields once at least one whole
/// tick has passed (between one and two), not at the first tick boundary, which may come after
/// one step; a short burst (a doorbell's WQE, its first packets) then runs through before the
/// packets it looped back are taken.
const RUN_JIFFIES: u64 = 2;
/// Runs one context does in turn: its own and those of the QPs its looped-back packets woke
/// ([`QpShared::run_here`]).
const LOCAL_RUNS: u32 = 8;

use super::{
    counters::Counter,
    device::RxeDev,
    engine::{BuildError, Engine, Headers},
    outbox::{OutPacket, Outbox},
    packet_rings::PayloadRef,
    qp::{QpShared, SKBS_OUT_HIGH, SKBS_OUT_LOW},
    recv,
    step::Step,
};
use crate::ib::handles::{with_bh_disabled, IbEvent};
use crate::kernel_ext::timer::{jiffies, TimerOwner};
use crate::net::{
    crc,
    skb::{PayloadSink, Route, SkBuff, SkbQueue, TxOwner, TxSkb},
};
use crate::proto::{
    av::{AddressVector, GidIp, NetworkType},
    hdr::{Bth, ICRC_LEN},
    icrc::{self, IpHeader, UDP_HDR_LEN},
    opcode::opcode_info,
    packet::pad_len,
    packet_ring::{REF_HEADER_LEN, REQUEST_LEN},
    qp_state::{QpState, QpType},
    task::{Drain, Finish, Request},
};
use core::sync::atomic::Ordering;
use kernel::{
    sync::{rcu, Arc, ArcBorrow},
    workqueue::{self, WorkItem},
};

/// How one attempt at building a packet ended, if not with the packet.
enum Attempt<E> {
    Failed(BuildError<E>),
    /// Some of the payload could not go by reference: build it by copy.
    Refused,
}

impl<E> From<BuildError<E>> for Attempt<E> {
    fn from(e: BuildError<E>) -> Self {
        Self::Failed(e)
    }
}

fn addr16(ip: GidIp) -> [u8; 16] {
    match ip {
        GidIp::V4(a) => {
            let mut out = [0u8; 16];
            out[..4].copy_from_slice(&a);
            out
        }
        GidIp::V6(a) => a,
    }
}

/// Writes the ICRC of a linear packet (`data()` at its IP header of `ip_len` bytes) in place.
fn icrc_in_place(skb: &mut TxSkb, ip_len: usize) -> bool {
    let data = skb.data_mut();
    let Some((ip, rest)) = data.split_at_mut_checked(ip_len) else {
        return false;
    };
    let Some((udp, packet)) = rest.split_at_mut_checked(UDP_HDR_LEN) else {
        return false;
    };
    match (IpHeader::parse(ip), udp.first_chunk::<UDP_HDR_LEN>()) {
        (Ok(ip), Some(udp)) => icrc::generate_with(crc::crc32_le, ip, udp, packet).is_ok(),
        _ => false,
    }
}

/// Writes the ICRC of a packet whose payload is in fragments, computed over its pieces, into
/// its trailer.
fn icrc_in_pieces(skb: &mut TxSkb, ip_len: usize) -> bool {
    let icrc = {
        let Some(parts) = skb.parts() else {
            return false;
        };
        let head = parts.first();
        let (Some(ip), Some(udp)) = (
            head.get(..ip_len).and_then(|ip| IpHeader::parse(ip).ok()),
            head.get(ip_len..)
                .and_then(|h| h.first_chunk::<UDP_HDR_LEN>()),
        ) else {
            return false;
        };
        // BTH to the ICRC, which it leaves out.
        let Some(packet) = parts
            .len()
            .checked_sub(ICRC_LEN)
            .and_then(|end| parts.range(ip_len + UDP_HDR_LEN, end))
        else {
            return false;
        };
        match icrc::compute_parts(crc::crc32_le, ip, udp, &packet) {
            Ok(icrc) => icrc,
            Err(_) => return false,
        }
    };
    skb.set_icrc(icrc.to_le_bytes())
}

/// The payload of a packet to build: its length, and whether it may go by reference (page
/// fragments of the memory it comes from, zero-copy).
#[derive(Clone, Copy)]
pub(crate) struct Payload {
    pub(crate) len: usize,
    pub(crate) by_reference: bool,
}

impl Payload {
    /// A packet without payload.
    pub(crate) const NONE: Self = Self {
        len: 0,
        by_reference: false,
    };
}

/// Which way a looped-back packet goes: a request to its destination's responder, or a response
/// to its destination's completer.
#[derive(Clone, Copy)]
pub(crate) enum RingSide {
    Requests,
    Responses,
}

impl QpShared {
    /// Builds a packet to `av`: `bth` (pad filled in), `hdrs`, and `payload_len` bytes given by
    /// `fill`; routed, with its ICRC (`rxe_init_packet` … `rxe_icrc_generate`), and `ip_id`
    /// its IPv4 ID ([`Outbox::next_ip_id`]).
    ///
    /// With `payload.by_reference`, `fill` is first asked to attach the payload as page fragments of the
    /// memory it comes from (zero-copy); if any of it refuses, the packet is built again with
    /// the payload copied, so `fill` must start over each time it is called.
    pub(crate) fn build_packet<E>(
        &self,
        av: &AddressVector,
        bth: Bth,
        hdrs: &Headers,
        payload: Payload,
        ip_id: u16,
        mut fill: impl FnMut(&mut PayloadSink<'_>) -> core::result::Result<(), E>,
    ) -> core::result::Result<OutPacket, BuildError<E>> {
        if payload.by_reference && payload.len > 0 {
            match self.build_once(av, bth, hdrs, payload, ip_id, &mut fill) {
                Ok(pkt) => return Ok(pkt),
                Err(Attempt::Failed(e)) => return Err(e),
                Err(Attempt::Refused) => {}
            }
        }
        let copied = Payload {
            by_reference: false,
            ..payload
        };
        self.build_once(av, bth, hdrs, copied, ip_id, &mut fill)
            .map_err(|e| match e {
                Attempt::Failed(e) => e,
                // Only a build by reference refuses.
                Attempt::Refused => BuildError::Unsendable,
            })
    }

    /// A request to a QP of this device written straight into its request ring
    /// (`proto::packet_ring`) rather than built as an skb, when the packet fits a ring slot and its
    /// order with the requests before it is sure: nothing of this step's is an skb
    /// (`out_has_skb`), the destination's skb queue is empty and its ring has room. The
    /// destination is checked as `recv::deliver` checks a packet's. `fill` writes the payload;
    /// `None` (nothing delivered) when it fails or any check does: the caller builds an skb.
    pub(crate) fn deliver_request(
        &self,
        av: &AddressVector,
        mut bth: Bth,
        hdrs: &Headers,
        payload_len: usize,
        out_has_skb: bool,
        fill: impl FnOnce(&mut [u8]) -> bool,
    ) -> Option<OutPacket> {
        let info = opcode_info(bth.opcode)?;
        let pad = pad_len(payload_len);
        let len = info.length + payload_len + pad + ICRC_LEN;
        if out_has_skb || len > REQUEST_LEN {
            return None;
        }
        let to = self.ring_destination(av, bth.qpn, |qp| &qp.requests.skbs)?;
        if !to.requests.refs.looks_empty() {
            return None;
        }
        bth.pad = pad as u8;
        let ipv6 = av.network_type == NetworkType::Ipv6;
        let write = |data: &mut [u8]| {
            let (head, rest) = data.split_at_mut(info.length);
            let Some((payload, trailer)) = rest.split_at_mut_checked(payload_len) else {
                return false;
            };
            // A slot holds an older packet's bytes: every byte is written, the headers' by
            // `Headers::write`, the pad and (zero) ICRC's, 4 to 7 bytes, by two 4-byte stores.
            if let Some(first) = trailer.first_chunk_mut::<ICRC_LEN>() {
                *first = [0; ICRC_LEN];
            }
            if let Some(last) = trailer.last_chunk_mut::<ICRC_LEN>() {
                *last = [0; ICRC_LEN];
            }
            hdrs.write(&bth, info, head) && fill(payload)
        };
        self.push_to_ring(to, av, len, |qp| {
            qp.requests
                .ring
                .with(|r| r.push_with(len, u8::from(ipv6), write))
                .then_some(true)
        })
    }

    /// A looped-back RC packet whose payload stays in the sender's MR (`payload`) until the
    /// receiver copies it from there: a request, whose headers go into the destination's
    /// `requests.refs`, or a read response (`responses.refs`), under the same
    /// conditions as [`Self::deliver_request`]'s and the ACK ring's. The request ring takes a
    /// packet only while the reference ring is empty, so every reference is newer than every
    /// request there and the responder takes those first: a small request the full request
    /// ring refuses comes here rather than as an skb. A read response comes here only while
    /// the ACK ring is empty (`proto::packet_ring`).
    #[inline]
    pub(crate) fn deliver_referenced(
        &self,
        av: &AddressVector,
        mut bth: Bth,
        hdrs: &Headers,
        payload: PayloadRef,
        out_has_skb: bool,
        side: RingSide,
    ) -> Option<OutPacket> {
        let info = opcode_info(bth.opcode)?;
        let payload_len = payload.len as usize;
        if out_has_skb || info.length > REF_HEADER_LEN {
            return None;
        }
        let to = match side {
            RingSide::Requests => self.ring_destination(av, bth.qpn, |qp| &qp.requests.skbs)?,
            RingSide::Responses => self
                .ring_destination(av, bth.qpn, |qp| &qp.responses.skbs)
                .filter(|to| to.responses.ring.looks_empty())?,
        };
        let pad = pad_len(payload_len);
        bth.pad = pad as u8;
        let mut bytes = [0u8; REF_HEADER_LEN];
        let head = &mut bytes[..info.length];
        if !hdrs.write(&bth, info, head) {
            return None;
        }
        let ipv6 = av.network_type == NetworkType::Ipv6;
        let len = info.length + payload_len + pad + ICRC_LEN;
        let refs = move |qp: &QpShared| {
            match side {
                RingSide::Requests => qp.requests.refs.push(head, u8::from(ipv6), payload),
                RingSide::Responses => qp.responses.refs.push(head, u8::from(ipv6), payload),
            }
            .then_some(true)
        };
        self.push_to_ring(to, av, len, refs)
    }

    /// Whether a packet to `av` goes to this device itself, never on a wire (as C's
    /// `rxe_xmit_packet` tells its loopback).
    #[inline]
    pub(crate) fn loops_back(&self, av: &AddressVector) -> bool {
        self.dev.netdev().is_own_mac(&av.dmac)
    }

    /// The RC QP of this device that `av` and `qpn` name, when a looped-back packet for it may go
    /// into one of its rings: it is checked as `recv::deliver` checks a packet's, and its skb
    /// queue the ring stands in front of (`queue`) must be empty, so that the packet keeps its
    /// order with those before it. The QP is the one kept in [`QpShared::ring_peer`] if that is
    /// numbered `qpn`: it was in the QP table when a packet last went into its ring, and if it
    /// has been destroyed since, its rings are closed and [`Self::push_to_ring`] lets it go.
    pub(crate) fn ring_destination(
        &self,
        av: &AddressVector,
        qpn: u32,
        queue: impl FnOnce(&QpShared) -> &SkbQueue,
    ) -> Option<Arc<QpShared>> {
        if !self.loops_back(av) {
            return None;
        }
        let to = match self.ring_peer.get_if(|peer| peer.qpn == qpn) {
            Some(peer) => peer,
            None => {
                let to = self.dev.device::<RxeDev>()?.data().qps().get(qpn)?;
                self.ring_peer.keep(&to);
                to
            }
        };
        let usable = to.qp_type == QpType::Rc && to.state_hint() >= QpState::Rtr;
        (usable && queue(&to).len() == 0).then_some(to)
    }

    /// Puts a packet of `len` bytes into a ring of `to`, a [`Self::ring_destination`] (`push`
    /// does it, saying whether `to`'s task is to run for it; `None` if the ring refuses). A ring
    /// that refuses it (full, or closed: `to` was destroyed) also lets the kept peer go, so that
    /// the next packet looks its destination up again.
    pub(crate) fn push_to_ring(
        &self,
        to: Arc<QpShared>,
        av: &AddressVector,
        len: usize,
        push: impl FnOnce(&QpShared) -> Option<bool>,
    ) -> Option<OutPacket> {
        let Some(wake) = push(&to) else {
            drop(self.ring_peer.take());
            return None;
        };
        Some(OutPacket::delivered(to, av, len, wake))
    }

    fn build_once<E>(
        &self,
        av: &AddressVector,
        mut bth: Bth,
        hdrs: &Headers,
        Payload {
            len: payload_len,
            by_reference,
        }: Payload,
        ip_id: u16,
        fill: &mut impl FnMut(&mut PayloadSink<'_>) -> core::result::Result<(), E>,
    ) -> core::result::Result<OutPacket, Attempt<E>> {
        let Some(info) = opcode_info(bth.opcode) else {
            return Err(BuildError::Unsendable.into());
        };
        let netdev = self.dev.netdev();
        let pad = pad_len(payload_len);
        bth.pad = pad as u8;
        let len = info.length + payload_len + pad + ICRC_LEN;
        let (linear, copied) = if by_reference {
            (info.length, 0)
        } else {
            (len, payload_len)
        };
        let ipv6 = av.network_type == NetworkType::Ipv6;
        let Ok(mut skb) = TxSkb::alloc(netdev, ipv6, linear, info.length, copied) else {
            return Err(BuildError::NoMemory.into());
        };
        if !skb.write_headers(|data| hdrs.write(&bth, info, data)) {
            return Err(BuildError::Unsendable.into());
        }
        if by_reference {
            let mut sink = PayloadSink::by_reference(&mut skb, payload_len);
            fill(&mut sink).map_err(|e| Attempt::Failed(BuildError::Fill(e)))?;
            if sink.failed() {
                return Err(Attempt::Refused);
            }
            if skb.attach_trailer(pad + ICRC_LEN).is_err() {
                return Err(Attempt::Refused);
            }
        } else if payload_len > 0 {
            let mut sink = PayloadSink::by_copy(&mut skb);
            fill(&mut sink).map_err(|e| Attempt::Failed(BuildError::Fill(e)))?;
        }
        let (saddr, daddr) = (addr16(av.sgid_ip), addr16(av.dgid_ip));
        let route = Route {
            ipv6,
            saddr: &saddr,
            daddr: &daddr,
            sport: self.src_port,
            traffic_class: av.grh.traffic_class,
            hop_limit: av.grh.hop_limit,
            ip_id,
        };
        let Some(dst) = self.route_cache.get(netdev, ipv6, &saddr, &daddr) else {
            return Err(BuildError::Unsendable.into());
        };
        skb.prepare(&route, dst);
        // A packet to this device goes to it directly, never on a wire: it needs no ICRC
        // (`recv::Origin::Loopback`), and its trailer keeps the zeros it was allocated with.
        let loopback = self.loops_back(av);
        if !loopback {
            let ip_len = if ipv6 { 40 } else { 20 };
            let with_icrc = if by_reference {
                icrc_in_pieces(&mut skb, ip_len)
            } else {
                icrc_in_place(&mut skb, ip_len)
            };
            if !with_icrc {
                return Err(BuildError::Unsendable.into());
            }
        }
        Ok(OutPacket::Skb {
            skb: skb.into_skb(),
            loopback,
        })
    }

    /// Sends built packets (outside the engine lock: a looped-back packet may be for this QP).
    /// Each is counted in [`QpShared::skbs_out`] until the stack lets go of it. `woken` takes
    /// the user QPs looped-back packets go to ([`QpShared::run_here`]).
    pub(crate) fn transmit(self: &Arc<Self>, packets: &mut Outbox, woken: &mut recv::Woken) {
        // Packets for the wire that follow each other in the outbox on one route go as one
        // burst (`SkBuff::burst_append`): one trip through the IP layer, netfilter and the
        // qdisc. A burst is sent once a packet cannot join it, or at the end; what else the
        // outbox holds goes to other QPs of this device, in no order with it.
        let mut burst: Option<(SkBuff, usize)> = None;
        for (place, pkt) in packets.drain().enumerate() {
            let rxe = &*self.dev;
            rxe.count(Counter::SentPkts);
            let (mut skb, loopback) = match pkt {
                OutPacket::Skb { skb, loopback } => (skb, loopback),
                OutPacket::Delivered { to, wake, wire_len } => {
                    // Counted as the skb it stands for, sent and received.
                    rxe.count_bytes(Counter::SentBytes, wire_len);
                    rxe.count(Counter::RcvdPkts);
                    rxe.count_bytes(Counter::RcvdBytes, wire_len);
                    if wake {
                        if let Err(to) = woken.take(to) {
                            to.kick_deferred();
                        }
                    }
                    continue;
                }
            };
            // As the C driver: the packet with its IP and UDP headers.
            rxe.count_bytes(Counter::SentBytes, skb.len());
            if loopback {
                // As C's `rxe_loopback`: the packet goes straight to the receiving QP's queue,
                // holding no reference to this one (a QP's own queue holding a reference to it
                // would be a cycle) and not counted as held by the stack.
                skb.loopback();
                if let Some(dev) = self.dev.device::<RxeDev>() {
                    recv::receive_on(
                        dev,
                        skb,
                        recv::Origin::Loopback,
                        recv::Wake::Here(&mut *woken),
                    );
                }
                continue;
            }
            self.skbs_out.fetch_add(1, Ordering::SeqCst);
            skb.set_tx_owner(self.clone());
            burst = match burst.take() {
                Some((mut head, last)) if last + 1 == place => match head.burst_append(skb) {
                    Ok(()) => Some((head, place)),
                    Err(skb) => {
                        self.send(head);
                        Some((skb, place))
                    }
                },
                Some((head, _)) => {
                    self.send(head);
                    Some((skb, place))
                }
                None => Some((skb, place)),
            };
        }
        if let Some((head, _)) = burst {
            self.send(head);
        }
    }

    /// Hands a packet or a burst to the IP layer.
    fn send(&self, skb: SkBuff) {
        if skb.xmit().is_err() {
            self.dev.count(Counter::SendErr);
        }
    }

    /// Work arrived from process context (a doorbell, `modify_qp`): run now if idle.
    pub(crate) fn kick(self: &Arc<Self>) {
        match self.task.request() {
            Request::RunInline => with_bh_disabled(|| self.run_here()),
            Request::Enqueue => self.enqueue(),
            Request::Pending | Request::Dead => {}
        }
    }

    /// Work arrived in softirq context (a packet, a timer): leave it to the BH workqueue.
    pub(crate) fn kick_deferred(self: &Arc<Self>) {
        if let Request::Enqueue = self.task.request_deferred() {
            self.enqueue();
        }
    }

    fn enqueue(self: &Arc<Self>) {
        // Exactly one holder of `Enqueue`/`Requeue` enqueues, so the item is never pending
        // here; if it were, the error would hand the reference back and we drop it.
        let _ = workqueue::system_bh().enqueue(self.clone());
    }

    /// The caller became the runner ([`Request::RunInline`], the work item): runs the task,
    /// then, in the order they were woken, the tasks of the user QPs its looped-back packets
    /// went to and of those theirs went to, each if idle, as the BH workqueue would have run
    /// them next on this CPU, without its queueing and dispatch. At most [`LOCAL_RUNS`] runs
    /// and about [`RUN_JIFFIES`]: the rest is scheduled. C schedules every looped-back packet.
    fn run_here(self: &Arc<Self>) {
        let mut woken = recv::Woken::new();
        let start = jiffies();
        self.run(&mut woken);
        let mut runs = 1;
        while let Some(qp) = woken.pop() {
            if runs >= LOCAL_RUNS || jiffies().wrapping_sub(start) >= RUN_JIFFIES {
                qp.kick_deferred();
                continue;
            }
            match qp.task.request() {
                Request::RunInline => {
                    runs += 1;
                    qp.run(&mut woken);
                }
                Request::Enqueue => qp.enqueue(),
                Request::Pending | Request::Dead => {}
            }
        }
    }

    /// Runs the machines until nothing is left to do, the budget is spent or a tick passed
    /// (bottom halves disabled).
    fn run(self: &Arc<Self>, woken: &mut recv::Woken) {
        let mut budget = BUDGET;
        let start = jiffies();
        loop {
            if self.step(woken) {
                budget -= 1;
                if budget > 0 && jiffies().wrapping_sub(start) < RUN_JIFFIES {
                    continue;
                }
                match self.task.out_of_budget() {
                    Finish::Requeue => self.enqueue(),
                    Finish::Drained => self.drained.complete_all(),
                    Finish::Idle | Finish::Again => {}
                }
                return;
            }
            match self.task.finish() {
                Finish::Again => continue,
                Finish::Drained => self.drained.complete_all(),
                Finish::Idle | Finish::Requeue => {}
            }
            return;
        }
    }

    /// One step: each machine called up to [`Outbox::CAPACITY`] times while it has more and the
    /// outbox has room, the completer once more for a WQE the requester finished that needs no
    /// response; whether a next step may find work. `false` also after a step that made
    /// progress when every machine says a next step would find nothing: the run ends without
    /// that step (work arriving later requests a run of its own).
    ///
    /// Several packets a step: the lock, the RCU section, the final idle checks and the trip
    /// through `transmit` are paid once for up to an outbox of packets of a stream, not per
    /// packet (C's requester and responder loop within their own task runs).
    fn step(self: &Arc<Self>, woken: &mut recv::Woken) -> bool {
        let mut out = Outbox::new();
        let more = {
            let rcu = rcu::read_lock();
            let mut eng = self.eng.lock();
            out.start_ip_ids_at(eng.next_ip_id);
            let more = Step::new(self, &mut eng, &rcu, &mut out).machines();
            eng.next_ip_id = out.next_ip_id();
            more
        };
        self.transmit(&mut out, woken);
        more
    }

    /// Stops the engine for good (`destroy_qp`), waiting for a run in progress.
    pub(crate) fn drain(&self) {
        if let Drain::Wait = self.task.drain() {
            self.drained.wait_for_completion();
        }
    }

    /// Moves the QP to the error state (`rxe_qp_error`), raising `event`; the engine then
    /// flushes both queues.
    pub(crate) fn to_error(&self, eng: &mut Engine, event: Option<IbEvent>) {
        if eng.state() != QpState::Err {
            eng.set_state(QpState::Err);
            self.state_mirror
                .store(QpState::Err as u32, Ordering::Relaxed);
            if let Some(ev) = event {
                self.handle.event(ev);
            }
        }
    }

    /// A packet could not be allocated: runs the task again in a jiffy rather than failing the
    /// WQE as C does (`LOC_QP_OP_ERR` and the QP in error for a transient GFP_ATOMIC failure).
    /// The RNR timer serves: its expiry only clears `rnr_wait` and runs the task; during an RNR
    /// wait it is armed already and runs the task when the wait ends.
    pub(crate) fn resume_later(self: &Arc<Self>, eng: &Engine) {
        if !eng.req.rnr_wait {
            self.rnr_timer.arm(self, 1);
        }
    }
}

impl WorkItem for QpShared {
    type Pointer = Arc<QpShared>;

    fn run(this: Arc<QpShared>) {
        if this.task.start_queued() {
            this.run_here();
        }
    }
}

impl TxOwner for QpShared {
    fn tx_released(this: Arc<Self>) {
        let out = this
            .skbs_out
            .fetch_sub(1, Ordering::SeqCst)
            .saturating_sub(1);
        // Pairs with `may_send`: it sets `need_skb` before it looks at the count again.
        if out < SKBS_OUT_LOW && this.need_skb.swap(false, Ordering::SeqCst) {
            this.kick_deferred();
        }
    }
}

impl QpShared {
    /// Whether the requester may hand the stack another packet (`RXE_INFLIGHT_SKBS_PER_QP_HIGH`).
    /// If not, the release that brings the count under [`SKBS_OUT_LOW`] runs the task again.
    pub(crate) fn may_send(&self) -> bool {
        if self.skbs_out.load(Ordering::SeqCst) <= SKBS_OUT_HIGH {
            return true;
        }
        self.need_skb.store(true, Ordering::SeqCst);
        // Every release before the store above is seen here; every one after sees the flag.
        self.skbs_out.load(Ordering::SeqCst) <= SKBS_OUT_HIGH
    }
}

impl TimerOwner for QpShared {
    fn timer_fired(this: ArcBorrow<'_, Self>, id: u8) {
        let this: Arc<Self> = this.into();
        this.eng.lock().timer_expired(id);
        this.kick_deferred();
    }
}
