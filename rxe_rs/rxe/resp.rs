// SPDX-License-Identifier: GPL-2.0

//! The responder (`rxe_resp.c`): executes request packets (sends into receive WQEs, RDMA writes,
//! reads, atomics), acknowledges them, completes receive WQEs, and flushes the receive queue
//! of a QP in error.

use super::{
    counters::Counter,
    engine::{
        BuildError, Cause, FaultWait, Headers, Machine, ReadReply, RecvInProgress, RxeError,
        TakenRequest, WriteTarget, BY_REFERENCE_MIN, MAX_RECV_WQE,
    },
    intake::Next,
    mr::{self, access, KeyUse, MrShared},
    outbox::OutPacket,
    packet_rings::{PayloadRef, RefFront},
    sg::{write_sges, Sges, WalkError},
    step::Step,
    task::{Payload, RingSide},
};
use crate::ib::handles::IbEvent;
use crate::net::skb::SkBuff;
use crate::proto::{
    av::AddressVector,
    hdr::GSI_QKEY,
    hdr::{
        Aeth, Atmack, Atmeth, Bth, Deth, Feth, Ieth, Immdt, NakCode, Reth, Syndrome, DEFAULT_PKEY,
    },
    opcode::{self, Mask},
    packet::Packet,
    packet_ring::{ACK_LEN, REF_HEADER_LEN, REQUEST_LEN},
    parts::Parts,
    psn::psn_add,
    qp_state::{QpState, QpType},
    queue::QueueType,
    resources::{Kind, ReadReplay, Resource},
    resp::{self as decide, Abandon, Duplicate, OpSeq, RcPsn, Reply, UcPsn},
    wqe::{
        DmaCursor, RecvWqe, UverbsWc, WcStatus, IB_WC_GRH, IB_WC_LOC_LEN_ERR, IB_WC_LOC_QP_OP_ERR,
        IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM, IB_WC_REM_INV_REQ_ERR, IB_WC_SUCCESS, IB_WC_WITH_IMM,
        IB_WC_WITH_INVALIDATE, IB_WC_WITH_NETWORK_HDR_TYPE, IB_WC_WR_FLUSH_ERR,
    },
};
use core::ops::ControlFlow::{self, Break, Continue};
use core::sync::atomic::Ordering;
use kernel::{prelude::*, sync::Arc};

/// Bytes of the GRH a UD receive buffer starts with.
const GRH_LEN: usize = 40;

/// How a request leaves the responder's stages (C's jumps to `RESPST_DONE` and
/// `RESPST_ERR_*`). The stages, in order (C `enum resp_states`): [`Step::check_psn`],
/// [`Step::check_op_seq`], [`Step::check_op_valid`], [`Step::check_resource`],
/// [`Step::check_length`], [`Step::check_rkey`], [`Step::execute`], at a message's end
/// [`Step::complete`], then [`Step::acknowledge`].
enum Exit {
    /// Done with the packet: executed and answered, answered from the resources, or dropped.
    Done,
    /// The request failed: NAK (RC), the receive WQE in progress completes with the status, the
    /// QP goes to error (C classes A, B, C).
    Fail(RxeError),
    /// On RC as [`Exit::Fail`]; on UC and UD the message is abandoned (its receive WQE as
    /// [`Step::abandon_recv`] says) and dropped to its end (C class D1E).
    Reject(RxeError),
}

/// A stage's outcome: on to the next (`Continue`) or out.
type Flow<T = ()> = ControlFlow<Exit, T>;

/// A request packet on its way through the stages (the packet by reference: a `Packet` moved
/// per request is a `memcpy`).
struct Incoming<'a> {
    /// The packet's skb; `None` for one from the request ring (`proto::packet_ring`), which is
    /// never a datagram.
    skb: Option<&'a SkBuff>,
    /// Whether a packet from the request ring came over IPv6.
    ring_ipv6: bool,
    pkt: &'a Packet<'a>,
    /// What a read's rkey resolved to: the MR (none for a zero-length read), how the key reached
    /// it, and its address.
    read: Option<(Option<Arc<MrShared>>, Option<KeyUse>, u64)>,
    /// What an atomic's rkey resolved to.
    atomic: Option<(Arc<MrShared>, u64)>,
    /// An atomic's original value, for its reply.
    orig: Option<u64>,
}

impl<'a> Incoming<'a> {
    fn new(skb: Option<&'a SkBuff>, ring_ipv6: bool, pkt: &'a Packet<'a>) -> Self {
        Self {
            skb,
            ring_ipv6,
            pkt,
            read: None,
            atomic: None,
            orig: None,
        }
    }

    fn bth(&self) -> &Bth {
        self.pkt.bth()
    }

    fn mask(&self) -> Mask {
        self.pkt.info().mask
    }

    /// The IP header the packet came with; empty for one from the request ring.
    fn ip_header(&self) -> &[u8] {
        self.skb.map_or(&[], |skb| skb.ip_header())
    }

    fn ipv6(&self) -> bool {
        match self.skb {
            Some(skb) => skb.ip_header().first().is_some_and(|b| b >> 4 == 6),
            None => self.ring_ipv6,
        }
    }
}

impl Step<'_> {
    /// One step of the responder: flush in error, the next read response, or the next request.
    pub(crate) fn responder(&mut self) -> bool {
        let state = self.eng.state();
        match state {
            QpState::Err => {
                self.qp.requests.purge();
                self.eng.resp.paused = None;
                self.eng.resp.fault = FaultWait::None;
                self.eng.resp.read = None;
                self.eng.resp.write = None;
                // A QP on an SRQ leaves the SRQ's WQEs alone and says it will take no more.
                if self.qp.srq.is_some() && !self.eng.resp.last_wqe_reached {
                    self.eng.resp.last_wqe_reached = true;
                    self.qp.handle.event(IbEvent::LastWqeReached);
                }
                return self.flush_recv_queue();
            }
            QpState::Reset | QpState::Init => {
                self.qp.requests.purge();
                self.eng.resp.paused = None;
                return false;
            }
            _ => {}
        }
        if !self.out.has_room() || self.eng.resp.fault == FaultWait::Waiting {
            return false;
        }
        if self.eng.resp.read.is_some() {
            return self.read_reply();
        }
        // A request waiting for pages is older than the ring's (they came while the skb queue
        // was empty), and those are older than every queued skb (`proto::packet_ring`).
        if let Some(paused) = self.eng.resp.paused.take() {
            return self.handle_taken(paused);
        }
        let taken = self.qp.requests.take(|next| {
            self.communication_established(state);
            match next {
                Next::Ring { bytes, len, tag } => self.handle_ring_request(bytes, len, tag),
                // One waiting for pages stays at the ring's head.
                Next::Ref { hdr, front } => !self.handle_referenced(hdr, front),
                Next::Skb(skb) => self.handle_taken(TakenRequest::Skb(skb)),
            }
        });
        taken.unwrap_or(false)
    }

    /// Handles a request of the request ring, taken out of it; `true` if done with it, `false`
    /// if it waits for pages ([`RespState::paused`]).
    fn handle_ring_request(&mut self, bytes: &[u8; REQUEST_LEN], len: usize, tag: u8) -> bool {
        // Read where it was parsed (moved out of the `Result`, it is copied: 128 bytes).
        if let Ok(pkt) = &Packet::parse(&bytes[..len]) {
            if self.handle_parsed_request(None, tag != 0, pkt) {
                let bytes = *bytes;
                self.eng.resp.paused = Some(TakenRequest::Ring { bytes, len, tag });
                return false;
            }
        }
        true
    }

    /// Handles `request`, older than every request still queued; `true` if done with it,
    /// `false` if it waits for pages (again, if it was [`RespState::paused`]).
    fn handle_taken(&mut self, request: TakenRequest) -> bool {
        match request {
            TakenRequest::Ring { bytes, len, tag } => self.handle_ring_request(&bytes, len, tag),
            TakenRequest::Skb(skb) => {
                if self.handle_request(&skb) {
                    self.eng.resp.paused = Some(TakenRequest::Skb(skb));
                    return false;
                }
                skb.consume();
                true
            }
        }
    }

    /// The first packet a connected QP receives in RTR raises Communication Established (IBA
    /// affiliated asynchronous events; ib_cm moves its connection on with it when the RTU was
    /// lost, `ib_cm_notify`). C raises none.
    fn communication_established(&mut self, state: QpState) {
        if state == QpState::Rtr && self.connected() && !self.eng.resp.comm_est {
            self.eng.resp.comm_est = true;
            self.qp.handle.event(IbEvent::CommEst);
        }
    }

    /// Whether a responder step would find nothing to do; `false` when unsure. A packet queued
    /// later wakes the task itself.
    pub(crate) fn responder_idle(&self) -> bool {
        if !matches!(self.eng.state(), QpState::Rtr | QpState::Rts | QpState::Sqd) {
            return false;
        }
        self.eng.resp.fault == FaultWait::Waiting
            || (self.eng.resp.read.is_none()
                && self.eng.resp.paused.is_none()
                && self.qp.requests.is_empty())
    }

    /// Runs a request through the stages until one is done with it. `true`: it waits for pages
    /// of an ODP MR, having changed nothing the same stages would not do again.
    fn handle_request(&mut self, skb: &SkBuff) -> bool {
        // Read where it was parsed (moved out of the `Option`, it is copied: 128 bytes).
        let parsed = super::recv::parse_queued(skb);
        let Some(pkt) = &parsed else {
            return false;
        };
        self.handle_parsed_request(Some(skb), false, pkt)
    }

    /// [`Self::handle_request`] for a request of the reference ring (`QpShared::requests`) ([`RefFront::with_packet`]:
    /// dropped as a lost packet if its payload's MR is gone).
    fn handle_referenced(&mut self, hdr: &[u8; REF_HEADER_LEN], front: &RefFront) -> bool {
        front
            .with_packet(self.rcu, hdr, |pkt| {
                self.handle_parsed_request(None, front.tag != 0, pkt)
            })
            .unwrap_or(false)
    }

    /// [`Self::handle_request`] on a parsed request, from an skb or the request ring.
    fn handle_parsed_request(
        &mut self,
        skb: Option<&SkBuff>,
        ring_ipv6: bool,
        pkt: &Packet<'_>,
    ) -> bool {
        let mut req = Incoming::new(skb, ring_ipv6, pkt);
        match self.request(&mut req) {
            Continue(()) | Break(Exit::Done) => false,
            Break(Exit::Fail(e) | Exit::Reject(e))
                if self.qp.await_fault(self.eng, Machine::Responder, &e) =>
            {
                true
            }
            Break(Exit::Fail(e)) => {
                self.fail(req.bth().psn, e);
                false
            }
            Break(Exit::Reject(e)) => {
                self.reject(req.bth().psn, e);
                false
            }
        }
    }

    /// The stages of one request (C `rxe_responder`'s state machine, in its order).
    fn request(&mut self, req: &mut Incoming<'_>) -> Flow {
        self.check_psn(req)?;
        self.check_op_seq(req)?;
        self.check_op_valid(req)?;
        self.check_resource(req)?;
        self.check_length(req)?;
        self.check_rkey(req)?;
        if self.execute(req)? {
            self.complete(req)?;
        }
        self.acknowledge(req);
        Continue(())
    }

    /// C `check_psn`. In sequence goes on; RC: a duplicate is answered again, a PSN ahead NAK'ed
    /// once; UC: a message that lost packets is dropped to its end. A datagram needs its Q_Key
    /// instead.
    fn check_psn(&mut self, req: &Incoming<'_>) -> Flow {
        let psn = req.bth().psn;
        let rxe = &*self.qp.dev;
        match self.qp.qp_type {
            QpType::Rc => {
                match decide::check_psn_rc(psn, self.eng.resp.psn, self.eng.resp.sent_psn_nak) {
                    RcPsn::OutOfSequence { nak } => {
                        if nak {
                            // Counted once per NAK, as C: the packets after it are dropped silently.
                            rxe.count(Counter::OutOfSeqReq);
                            self.eng.resp.sent_psn_nak = true;
                            let expected = self.eng.resp.psn;
                            let nak = Syndrome::Nak(NakCode::PsnSequenceError);
                            self.send_ack(nak, expected);
                        }
                        return Break(Exit::Done);
                    }
                    RcPsn::Duplicate => {
                        rxe.count(Counter::DupReq);
                        self.duplicate(req.pkt);
                        return Break(Exit::Done);
                    }
                    RcPsn::Expected => self.eng.resp.sent_psn_nak = false,
                }
            }
            QpType::Uc => {
                let start = req.mask().contains(Mask::START);
                match decide::check_psn_uc(psn, self.eng.resp.psn, self.eng.resp.drop_msg, start) {
                    UcPsn::InSequence => {}
                    UcPsn::Restart => {
                        // The message in progress lost its LAST (C: class D1E).
                        self.abandon_recv(IB_WC_REM_INV_REQ_ERR);
                        self.eng.resp.psn = psn;
                        self.eng.resp.drop_msg = false;
                        self.eng.resp.opcode = None;
                        self.eng.resp.write = None;
                    }
                    UcPsn::Drop => {
                        self.eng.resp.drop_msg = true;
                        return Break(Exit::Done);
                    }
                }
            }
            QpType::Ud | QpType::Gsi | QpType::Smi => {
                let qkey = if self.qp.qp_type == QpType::Gsi {
                    GSI_QKEY
                } else {
                    self.eng.attrs.qkey
                };
                if req.pkt.header::<Deth>().is_none_or(|d| d.qkey != qkey) {
                    return Break(Exit::Done);
                }
            }
        }
        Continue(())
    }

    /// C `check_op_seq`: a connected QP's opcode must continue the message in progress (or start
    /// one). On UC a violation is C's class D1E (a missing LAST) or a MIDDLE/LAST without FIRST.
    fn check_op_seq(&self, req: &Incoming<'_>) -> Flow {
        if self.connected()
            && decide::check_op_seq(self.eng.resp.opcode, req.bth().opcode) != OpSeq::Ok
        {
            return Break(Exit::Reject(RxeError::INVALID_REQUEST));
        }
        Continue(())
    }

    /// C `check_op_valid`: the QP's remote access rights allow the operation.
    fn check_op_valid(&self, req: &Incoming<'_>) -> Flow {
        let placement = flush_placement(req.pkt);
        if !decide::check_op_valid(self.eng.attrs.qp_access_flags, req.mask(), placement) {
            return Break(Exit::Reject(RxeError::INVALID_REQUEST));
        }
        Continue(())
    }

    /// C `check_resource`: a responder resource for a read, an atomic or an atomic write; a
    /// receive WQE for a send or a write with immediate (none: RNR NAK on RC, dropped
    /// otherwise); a datagram must fit its receive buffer with the GRH (which lands with the
    /// payload, in `land_payload`).
    fn check_resource(&mut self, req: &Incoming<'_>) -> Flow {
        let mask = req.mask();
        if !decide::has_rd_atomic_resource(mask, self.eng.attrs.max_dest_rd_atomic) {
            return Break(Exit::Fail(RxeError::INVALID_REQUEST));
        }
        if !mask.contains(Mask::RWR) || self.eng.resp.recv.is_some() {
            return Continue(());
        }
        match self.take_recv_wqe() {
            // Responder class A, malformed WQE (C `RESPST_ERR_MALFORMED_WQE`): the receive
            // completes LOC_QP_OP_ERR, the NAK is *remote operational error*, the QP errors.
            // C checks `num_sge` so; a `length` that is not the SGEs' sum it trusts.
            Some(recv) => {
                let malformed = recv.malformed;
                self.eng.resp.recv = Some(recv);
                if let Some(err) = malformed {
                    let e = RxeError::wqe(IB_WC_LOC_QP_OP_ERR, Cause::Wqe(err));
                    return Break(Exit::Fail(e.on_receive()));
                }
            }
            None => {
                if self.qp.qp_type == QpType::Rc {
                    self.qp.dev.count(Counter::SndRnr);
                    let timer = self.eng.attrs.min_rnr_timer;
                    self.send_ack(Syndrome::RnrNak { timer }, req.bth().psn);
                }
                return Break(Exit::Done);
            }
        }
        if matches!(self.qp.qp_type, QpType::Ud | QpType::Gsi) {
            // Too big for the buffer is the sender's fault, not a reason to move this QP to
            // ERROR.
            let recv_len = self.eng.resp.recv.as_ref().map_or(0, |r| r.wqe.length);
            if !decide::ud_fits(req.pkt.payload().len() as u32, recv_len) {
                self.abandon_recv(IB_WC_REM_INV_REQ_ERR);
                return Break(Exit::Done);
            }
        }
        Continue(())
    }

    /// C `rxe_resp_check_length`. RC and UC: packet sizes against the MTU, the RETH length against
    /// what the IBA allows.
    fn check_length(&mut self, req: &Incoming<'_>) -> Flow {
        if self.connected() {
            let reth_len = req.pkt.header::<Reth>().map(|r| r.len);
            let payload_len = req.pkt.payload().len() as u32;
            if !decide::check_length(
                req.mask(),
                payload_len,
                self.eng.mtu(self.qp.dev.active_mtu_bytes()),
                reth_len,
            ) {
                return Break(self.length_error());
            }
        }
        Continue(())
    }

    /// `RESPST_ERR_LENGTH`: on RC class C (NAK invalid request, the receive WQE completes
    /// `REM_INV_REQ_ERR`, QP to error); on UC the message is forgotten and dropped to its end,
    /// its receive WQE completed `REM_INV_REQ_ERR` (SRQ, class E) or reused (RQ, class D).
    fn length_error(&mut self) -> Exit {
        if self.qp.qp_type != QpType::Rc {
            self.eng.resp.opcode = None;
            self.eng.resp.write = None;
        }
        Exit::Reject(RxeError::INVALID_REQUEST)
    }

    /// C `check_rkey`: the MR (or window) a RETH or an atomic names, with the rights the operation
    /// needs: a write's target is set up, a read's and an atomic's kept for [`Step::execute`].
    fn check_rkey(&mut self, req: &mut Incoming<'_>) -> Flow {
        let mask = req.mask();
        if mask.contains(Mask::RETH) {
            let Some(reth) = req.pkt.header::<Reth>() else {
                return Break(Exit::Done);
            };
            let need = decide::required_access(mask, flush_placement(req.pkt));
            // A flush of the whole MR names no range (`IB_FLUSH_MR`).
            let whole_mr = mask.contains(Mask::FLUSH)
                && req
                    .pkt
                    .header::<Feth>()
                    .is_some_and(|f| f.selectivity_level == 1);
            let len = if whole_mr { 0 } else { reth.len as usize };
            let (mr, key, va) = if reth.len == 0 && !mask.contains(Mask::FLUSH) {
                (None, None, reth.va)
            } else {
                match self.lookup_remote(reth.rkey, need, reth.va, len) {
                    Some((mr, va, key)) => (Some(mr), Some(key), va),
                    // UC: C class D (SRQ) / E (RQ) of RESPST_ERR_RKEY_VIOLATION.
                    None => return Break(Exit::Reject(RxeError::REMOTE_ACCESS)),
                }
            };
            if mask.contains(Mask::READ) {
                req.read = Some((mr, key, va));
            } else {
                self.eng.resp.write = Some(WriteTarget {
                    mr,
                    key,
                    va,
                    resid: reth.len,
                    length: reth.len,
                });
            }
        }
        if mask.contains(Mask::ATOMIC) {
            let Some(at) = req.pkt.header::<Atmeth>() else {
                return Break(Exit::Done);
            };
            // As C: the key and range first (remote access error), then the alignment of the
            // address in the MR (invalid request; a zero-based window's base counts).
            let Some((mr, va, _)) = self.lookup_remote(at.rkey, access::REMOTE_ATOMIC, at.va, 8)
            else {
                return Break(Exit::Fail(RxeError::REMOTE_ACCESS));
            };
            if va % 8 != 0 {
                return Break(Exit::Fail(RxeError::INVALID_REQUEST));
            }
            req.atomic = Some((mr, va));
        }
        Continue(())
    }

    /// C `execute`: carries the request out: a read starts its replies (sent by later steps), an
    /// atomic operates, a send or write lands its payload, a SEND_WITH_INV invalidates its
    /// rkey; the PSN moves on. `Continue(true)` at the end of a message, which then completes.
    fn execute(&mut self, req: &mut Incoming<'_>) -> Flow<bool> {
        let (mask, psn) = (req.mask(), req.bth().psn);
        let rxe = &*self.qp.dev;
        if let Some((mr, key, va)) = req.read.take() {
            let Some(reth) = req.pkt.header::<Reth>() else {
                return Break(Exit::Done);
            };
            // C rxe_prepare_res: the read is recorded for its duplicates, by its RETH.
            let res = Resource::read(
                psn,
                reth.va,
                reth.len,
                reth.rkey,
                self.eng.mtu(rxe.active_mtu_bytes()),
            );
            self.eng.resp.resources.record(res);
            self.eng.resp.read = Some(ReadReply::new((mr, key), va, reth.len, psn, true, false));
            // (`ack_psn` stays: C moves it for every request executed but a read.)
            self.eng.resp.psn = psn_add(res.last_psn, 1);
            self.eng.resp.opcode = None;
            return Break(Exit::Done);
        }
        if let Some((mr, va)) = req.atomic.take() {
            let Some(at) = req.pkt.header::<Atmeth>() else {
                return Break(Exit::Done);
            };
            let compare =
                (req.bth().opcode & 0x1f == opcode::RC_COMPARE_SWAP).then_some(at.compare);
            let orig = match mr.atomic(self.rcu, va, compare, at.swap_add) {
                Ok(orig) => orig,
                Err(e) => return Break(Exit::Fail(RxeError::REMOTE_ACCESS.because(e.into()))),
            };
            let res = Resource::single(psn, Kind::Atomic { orig });
            self.eng.resp.resources.record(res);
            req.orig = Some(orig);
        }
        if let Err(exit) = self.land_payload(req) {
            return Break(exit);
        }
        // SEND_WITH_INV: invalidate the rkey it names. Class J error, as C: the receive WQE
        // completes with REM_INV_REQ_ERR, the request is acknowledged (no NAK: C's
        // `acknowledge` still sees the ACK syndrome) and the QP goes to error.
        if let Some(ieth) = req.pkt.header::<Ieth>() {
            if mr::invalidate_key(rxe.keys(), ieth.rkey).is_err() {
                if self.eng.resp.recv.is_some() {
                    self.complete_recv_status(IB_WC_REM_INV_REQ_ERR);
                }
                if self.qp.qp_type == QpType::Rc && req.bth().ack_req {
                    self.send_ack(Syndrome::ACK_UNLIMITED, psn);
                }
                self.eng.resp.write = None;
                self.qp.to_error(self.eng, None);
                return Break(Exit::Done);
            }
        }
        self.eng.resp.psn = psn_add(psn, 1);
        self.eng.resp.ack_psn = self.eng.resp.psn;
        let end = mask.contains(Mask::END);
        self.eng.resp.opcode = if end { None } else { Some(req.bth().opcode) };
        Continue(end)
    }

    /// The payload of a send (into the receive WQE), a write or an atomic write (into the
    /// target MR); `Err` with where the request goes if it cannot land.
    fn land_payload(&mut self, req: &Incoming<'_>) -> core::result::Result<(), Exit> {
        let payload = req.pkt.payload();
        let mask = req.mask();
        if mask.contains(Mask::SEND) && matches!(self.qp.qp_type, QpType::Ud | QpType::Gsi) {
            // A datagram's receive buffer starts with the GRH (the IP header, IPv4 in its last
            // 20 bytes); the two land together, so a wait for ODP pages repeats both.
            let mut grh = [0u8; GRH_LEN];
            let ip = req.ip_header();
            if ip.len() >= 40 && ip[0] >> 4 == 6 {
                grh.copy_from_slice(&ip[..40]);
            } else if ip.len() >= 20 {
                grh[20..].copy_from_slice(&ip[..20]);
            }
            self.recv_data(Some(&grh), payload).map_err(|(part, e)| {
                // The GRH that does not fit is a length error, as before the payload.
                let e = if part == 0 {
                    RxeError {
                        status: IB_WC_LOC_LEN_ERR,
                        ..e
                    }
                } else {
                    e
                };
                Exit::Fail(e.on_receive())
            })?;
        } else if mask.contains(Mask::SEND) {
            self.recv_data(None, payload)
                .map_err(|(_, e)| Exit::Fail(e.on_receive()))?;
        } else if mask.contains(Mask::ATOMIC_WRITE) {
            // IBA oA19-28: exactly 8 bytes, to an aligned address.
            let w = self
                .eng
                .resp
                .write
                .as_ref()
                .filter(|w| payload.len() == 8 && w.resid == 8 && w.va % 8 == 0)
                .ok_or(Exit::Fail(RxeError::INVALID_REQUEST))?;
            let mr = w.mr.as_ref().ok_or(Exit::Fail(RxeError::REMOTE_ACCESS))?;
            mr.write_parts(self.rcu, w.va, payload)
                .map_err(|e| Exit::Fail(RxeError::REMOTE_ACCESS.because(e.into())))?;
        } else if mask.contains(Mask::WRITE) {
            // The payload against what the write still expects.
            let mtu = self.eng.mtu(self.qp.dev.active_mtu_bytes());
            let (len, pad) = (payload.len() as u32, req.bth().pad);
            let fits = self
                .eng
                .resp
                .write
                .as_ref()
                .map(|w| decide::check_write_length(w.resid, len, pad, mtu));
            if fits == Some(false) {
                return Err(self.length_error());
            }
            let w = self
                .eng
                .resp
                .write
                .as_mut()
                .filter(|w| len <= w.resid)
                .ok_or(Exit::Fail(RxeError::INVALID_REQUEST))?;
            if !payload.is_empty() {
                let mr = w.mr.as_ref().ok_or(Exit::Fail(RxeError::REMOTE_ACCESS))?;
                // The first packet's key was checked by `check_rkey` just now.
                let later = !mask.contains(Mask::RETH);
                if later && w.key.as_ref().is_some_and(|key| !key.still_allows(mr)) {
                    return Err(Exit::Fail(RxeError::REMOTE_ACCESS));
                }
                mr.write_parts(self.rcu, w.va, payload)
                    .map_err(|e| Exit::Fail(RxeError::REMOTE_ACCESS.because(e.into())))?;
                w.va += u64::from(len);
                w.resid -= len;
            }
        }
        Ok(())
    }

    /// C `do_complete`: the end of a message: the MSN moves on, and a send or a write with
    /// immediate completes its receive WQE.
    fn complete(&mut self, req: &Incoming<'_>) -> Flow {
        let mask = req.mask();
        self.eng.resp.msn = self.eng.resp.msn.wrapping_add(1);
        if mask.contains(Mask::COMP) || (mask.contains(Mask::WRITE) && mask.contains(Mask::IMMDT)) {
            // `RDMA_NETWORK_IPV4` = 2, `RDMA_NETWORK_IPV6` = 3, by the IP version.
            let net_type = if req.ipv6() { 3 } else { 2 };
            // C11-37/38: a completion that cannot be written moves the QP to error (done) and
            // the request is not acknowledged: the sender must not see success for a message
            // whose completion was lost.
            if !self.complete_recv(req.pkt, IB_WC_SUCCESS, net_type) {
                self.eng.resp.write = None;
                return Break(Exit::Done);
            }
        }
        self.eng.resp.write = None;
        Continue(())
    }

    /// C `acknowledge`. RC: the answer to an executed request. A FLUSH or an ATOMIC WRITE is
    /// answered with a zero-length READ RESPONSE ONLY and recorded, so that a duplicate is answered
    /// again (C `rxe_prepare_res`); an atomic with its original value; anything else with an ACK if
    /// it asked for one.
    fn acknowledge(&mut self, req: &Incoming<'_>) {
        if self.qp.qp_type != QpType::Rc {
            return;
        }
        let (mask, psn) = (req.mask(), req.bth().psn);
        match decide::reply(mask, req.bth().ack_req) {
            Reply::ReadResponseAck => {
                let kind = if mask.contains(Mask::FLUSH) {
                    Kind::Flush
                } else {
                    Kind::AtomicWrite
                };
                self.eng.resp.resources.record(Resource::single(psn, kind));
                self.send_read_response_ack(psn);
            }
            Reply::Ack => self.send_ack(Syndrome::ACK_UNLIMITED, psn),
            Reply::AtomicAck => {
                if let Some(orig) = req.orig {
                    self.send_atomic_ack(psn, orig);
                }
            }
            Reply::None => {}
        }
    }
}

impl Step<'_> {
    /// RC or UC (PSNs, message sequence, path MTU).
    fn connected(&self) -> bool {
        matches!(self.qp.qp_type, QpType::Rc | QpType::Uc)
    }

    /// A request already executed (`duplicate_request`): re-acknowledge it, or answer a read,
    /// an atomic, an ATOMIC WRITE or a FLUSH again from the responder resource that recorded it
    /// (`proto::resources`). Not found there (evicted, never executed), not of its kind, or a
    /// read outside the one recorded or with another rkey: dropped, as C's class D.
    fn duplicate(&mut self, pkt: &Packet<'_>) {
        let mask = pkt.info().mask;
        let psn = pkt.bth().psn;
        match decide::duplicate(mask, self.eng.resp.ack_psn) {
            Duplicate::ReplayRead => {
                let Some(reth) = pkt.header::<Reth>() else {
                    return;
                };
                if let Ok(replay) = self
                    .eng
                    .resp
                    .resources
                    .replay_read(psn, reth.va, reth.len, reth.rkey)
                {
                    self.replay_read(replay);
                }
            }
            Duplicate::ReplayAtomic => {
                if let Ok(orig) = self.eng.resp.resources.replay_atomic(psn) {
                    self.send_atomic_ack(psn, orig);
                }
            }
            Duplicate::ReplayReadResponseAck => {
                let flush = mask.contains(Mask::FLUSH);
                if self.eng.resp.resources.replay_ack(psn, flush).is_ok() {
                    self.send_read_response_ack(psn);
                }
            }
            Duplicate::Ack { psn } => self.send_ack(Syndrome::ACK_UNLIMITED, psn),
        }
    }

    /// A duplicate read found among the responder resources: its responses again, from
    /// `replay` (the duplicate's PSN and RETH), without moving `resp.psn` or the MSN. The rkey
    /// is resolved again, as C `rxe_recheck_mr` does (here with the rights and bounds of a new
    /// read too): gone, it is C's `RESPST_ERR_RKEY_VIOLATION`, a NAK and the QP to error.
    fn replay_read(&mut self, replay: ReadReplay) {
        let ReadReplay {
            psn,
            va,
            len,
            rkey,
            from_start,
        } = replay;
        let (mr, key, va) = if len == 0 {
            (None, None, va)
        } else {
            match self.lookup_remote(rkey, access::REMOTE_READ, va, len as usize) {
                Some((mr, va, key)) => (Some(mr), Some(key), va),
                None => {
                    self.fail(psn, RxeError::REMOTE_ACCESS);
                    return;
                }
            }
        };
        // (Requests wait in the queue while a reply is being sent: no reply in progress.)
        self.eng.resp.read = Some(ReadReply::new((mr, key), va, len, psn, from_start, true));
    }

    /// Sends the next read response packet (`read_reply`); whether it made progress.
    fn read_reply(&mut self) -> bool {
        let mtu = self.eng.mtu(self.qp.dev.active_mtu_bytes());
        let Some(r) = self.eng.resp.read.as_ref() else {
            return false;
        };
        // C `rxe_recheck_mr`: a key that no longer allows the read ends it.
        let key_gone = r
            .key
            .as_ref()
            .zip(r.mr.as_ref())
            .is_some_and(|(key, mr)| !r.first && !key.still_allows(mr));
        if key_gone {
            let psn = r.psn;
            self.eng.resp.read = None;
            self.fail(psn, RxeError::REMOTE_ACCESS);
            return true;
        }
        let len = r.resid.min(mtu);
        let last = r.resid <= mtu;
        let op = match (r.first, last) {
            (true, true) => opcode::RC_RDMA_READ_RESPONSE_ONLY,
            (true, false) => opcode::RC_RDMA_READ_RESPONSE_FIRST,
            (false, true) => opcode::RC_RDMA_READ_RESPONSE_LAST,
            (false, false) => opcode::RC_RDMA_READ_RESPONSE_MIDDLE,
        };
        // The MR is borrowed from the reply while the packet is built (a clone of its `Arc`
        // was two atomic operations a response); the reply is updated once it is sent.
        let (psn, va, mr, replay) = (r.psn, r.va, r.mr.as_ref(), r.replay);
        let by_reference = len >= BY_REFERENCE_MIN;
        let msn = if last && !replay {
            self.eng.resp.msn.wrapping_add(1)
        } else {
            self.eng.resp.msn
        };
        let mut hdrs = Headers::default();
        if op != opcode::RC_RDMA_READ_RESPONSE_MIDDLE {
            hdrs.aeth = Some(Aeth {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn,
            });
        }
        let Some(av) = &self.eng.pri_av else {
            self.eng.resp.read = None;
            return true;
        };
        let bth = self.resp_bth(op, psn);
        // A looped-back response may leave its payload in the MR (`responses.refs`).
        let referenced = mr
            .filter(|m| {
                !by_reference
                    && len > 0
                    && self.out.has_room()
                    && m.pins_pages()
                    && self.qp.loops_back(av)
            })
            .and_then(|m| {
                let payload = PayloadRef {
                    mr: m.clone(),
                    iova: va,
                    len,
                };
                self.qp.deliver_referenced(
                    av,
                    bth,
                    &hdrs,
                    payload,
                    self.out.has_skb(),
                    RingSide::Responses,
                )
            });
        let ip_id = self.out.next_ip_id();
        let res = match referenced {
            Some(pkt) => Ok(pkt),
            None => self.qp.build_packet(
                av,
                bth,
                &hdrs,
                Payload {
                    len: len as usize,
                    by_reference,
                },
                ip_id,
                |sink| {
                    let Some(mr) = mr else { return Ok(()) };
                    if let Some(buf) = sink.copy_buf() {
                        return mr.read(self.rcu, va, buf);
                    }
                    mr.attach(self.rcu, va, len as usize, sink)
                },
            ),
        };
        match res {
            Ok(pkt) => {
                self.out.push(pkt);
            }
            // No skb, or no route for now: the same packet again later, not a busy loop. (C
            // answers with an RNR NAK, which needs the same skb and route.)
            Err(BuildError::NoMemory | BuildError::Unsendable) => {
                self.qp.resume_later(self.eng);
                return false;
            }
            Err(BuildError::Fill(e)) => {
                let e = RxeError::REMOTE_ACCESS.because(e.into());
                // ODP pages not mapped: the same response once they are.
                if self.qp.await_fault(self.eng, Machine::Responder, &e) {
                    return false;
                }
                // The MR went away under the read: NAK it and stop.
                self.eng.resp.read = None;
                self.fail(psn, e);
                return true;
            }
        }
        self.read_response_sent(len, last, (!replay).then_some(msn));
        true
    }

    /// A response of `len` bytes of the read in progress is on its way: the read moves on past
    /// it, and ends with it if it was the `last`, the MSN then set to `msn` (none for a replay).
    fn read_response_sent(&mut self, len: u32, last: bool, msn: Option<u32>) {
        let Some(r) = self.eng.resp.read.as_mut() else {
            return;
        };
        r.first = false;
        r.psn = psn_add(r.psn, 1);
        r.va += u64::from(len);
        r.resid -= len;
        if last {
            self.eng.resp.read = None;
            if let Some(msn) = msn {
                self.eng.resp.msn = msn;
            }
        }
    }

    fn resp_bth(&self, opcode: u8, psn: u32) -> Bth {
        Bth {
            opcode,
            pkey: DEFAULT_PKEY,
            qpn: self.eng.attrs.dest_qp_num,
            psn,
            ..Default::default()
        }
    }

    /// Sends an ACK, RNR NAK or NAK for `psn` (`send_ack`).
    fn send_ack(&mut self, syndrome: Syndrome, psn: u32) {
        let Some(av) = &self.eng.pri_av else { return };
        let aeth = Aeth {
            syndrome,
            msn: self.eng.resp.msn,
        };
        let bth = self.resp_bth(opcode::RC_ACKNOWLEDGE, psn);
        if let Some(pkt) = self.inline_ack(av, &bth, &aeth) {
            self.out.push(pkt);
            return;
        }
        let hdrs = Headers {
            aeth: Some(aeth),
            ..Default::default()
        };
        if let Some(pkt) = self.headers_only(av, bth, &hdrs) {
            self.out.push(pkt);
        }
    }

    /// A packet of headers only to `av` (an ACK, an atomic acknowledge, a zero-length read
    /// response), built with the outbox's next IPv4 ID; `None` if none could be built.
    fn headers_only(&self, av: &AddressVector, bth: Bth, hdrs: &Headers) -> Option<OutPacket> {
        let ip_id = self.out.next_ip_id();
        self.qp
            .build_packet::<()>(av, bth, hdrs, Payload::NONE, ip_id, |_| Ok(()))
            .ok()
    }

    /// An ACK to a QP of this device written straight into its ACK ring (`proto::packet_ring`)
    /// rather than built as an skb, when its order with the responses before it is sure:
    /// nothing of this step's is an skb, the destination's skb queue is empty and its ring has
    /// room or ends with an ACK this one supersedes (`AckRing::push_ack`). The destination is
    /// checked as `recv::deliver` checks a packet's; `None` (nothing delivered) when a check
    /// fails: the caller builds an skb.
    fn inline_ack(&self, av: &AddressVector, bth: &Bth, aeth: &Aeth) -> Option<OutPacket> {
        // The outbox must take the entry that wakes the destination.
        if self.out.has_skb() || !self.out.has_room() {
            return None;
        }
        let to = self
            .qp
            .ring_destination(av, bth.qpn, |qp| &qp.responses.skbs)?;
        if !to.responses.refs.looks_empty() {
            return None;
        }
        // A positive ACK need not run the task of a QP that takes it at its next run.
        let positive = matches!(aeth.syndrome, Syndrome::Ack { .. });
        self.qp.push_to_ring(to, av, ACK_LEN, |qp| {
            qp.responses.ring.with(|r| {
                r.push_ack(bth, aeth)
                    .then(|| !(positive && qp.acks_quiet.load(Ordering::Relaxed)))
            })
        })
    }

    /// Acknowledges a FLUSH or an ATOMIC WRITE: a zero-length RDMA READ RESPONSE ONLY with an
    /// ACK syndrome (C `send_read_response_ack`).
    fn send_read_response_ack(&mut self, psn: u32) {
        let Some(av) = &self.eng.pri_av else { return };
        let hdrs = Headers {
            aeth: Some(Aeth {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn: self.eng.resp.msn,
            }),
            ..Default::default()
        };
        let bth = self.resp_bth(opcode::RC_RDMA_READ_RESPONSE_ONLY, psn);
        if let Some(pkt) = self.headers_only(av, bth, &hdrs) {
            self.out.push(pkt);
        }
    }

    fn send_atomic_ack(&mut self, psn: u32, orig: u64) {
        let Some(av) = &self.eng.pri_av else { return };
        let hdrs = Headers {
            aeth: Some(Aeth {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn: self.eng.resp.msn,
            }),
            atmack: Some(Atmack { orig }),
            ..Default::default()
        };
        let bth = self.resp_bth(opcode::RC_ATOMIC_ACKNOWLEDGE, psn);
        if let Some(pkt) = self.headers_only(av, bth, &hdrs) {
            self.out.push(pkt);
        }
    }

    /// A request failed: NAK it (RC), complete the receive WQE in progress with the status, and
    /// move the QP to error (`do_class_ac_error` and friends).
    fn fail(&mut self, psn: u32, e: RxeError) {
        if let (QpType::Rc, Some(nak)) = (self.qp.qp_type, e.nak) {
            self.send_ack(Syndrome::Nak(nak), psn);
        }
        if self.eng.resp.recv.is_some() {
            self.complete_recv_status(e.status);
        }
        self.eng.resp.write = None;
        self.eng.resp.read = None;
        self.qp.to_error(self.eng, e.event.map(IbEvent::from));
    }

    /// A request refused: on RC as [`Self::fail`]; otherwise its message is abandoned (its
    /// receive WQE completed with the status or reused) and dropped to its end.
    fn reject(&mut self, psn: u32, e: RxeError) {
        if self.qp.qp_type == QpType::Rc {
            self.fail(psn, e);
        } else {
            self.abandon_recv(e.status);
            self.eng.resp.drop_msg = true;
        }
    }

    /// The MR for a remote access with `rkey`, an MR's or a memory window's (`check_rkey`), and
    /// the MR address `va` stands for (a zero-based window's `va` is an offset).
    fn lookup_remote(
        &self,
        rkey: u32,
        need: u32,
        va: u64,
        len: usize,
    ) -> Option<(Arc<MrShared>, u64, KeyUse)> {
        mr::resolve_rkey(
            self.qp.dev.keys(),
            self.qp.pd,
            self.qp.uid,
            rkey,
            need,
            va,
            len,
        )
    }

    /// The next receive WQE, copied out of the SRQ or the RQ into the QP's spare box.
    fn take_recv_wqe(&mut self) -> Option<KBox<RecvInProgress>> {
        let mut recv = match self.eng.resp.spare_recv.take() {
            Some(recv) => recv,
            None => KBox::new(
                RecvInProgress {
                    wqe: RecvWqe {
                        wr_id: 0,
                        num_sge: 0,
                        length: 0,
                    },
                    bytes: [0; MAX_RECV_WQE],
                    dma: DmaCursor::default(),
                    from_rq: false,
                    malformed: None,
                },
                GFP_ATOMIC,
            )
            .ok()?,
        };
        if self.read_recv_wqe(&mut recv).is_some() {
            Some(recv)
        } else {
            self.eng.resp.spare_recv = Some(recv);
            None
        }
    }

    /// Fills `recv` with the next receive WQE; `None` if there is none.
    fn read_recv_wqe(&mut self, recv: &mut RecvInProgress) -> Option<()> {
        recv.from_rq = false;
        let (max_sge, n) = if let Some(srq) = &self.qp.srq {
            let n = srq.slot_size().min(MAX_RECV_WQE);
            srq.take(&mut recv.bytes[..n])?;
            (srq.max_sge, n)
        } else {
            let rq = self.qp.rq.as_ref()?;
            let g = *rq.geometry();
            let ends = g.ends(
                QueueType::FromClient,
                self.eng.resp.rq_consumer,
                rq.shared_producer(),
            );
            if ends.is_empty() {
                return None;
            }
            let n = (g.slot_size() as usize).min(MAX_RECV_WQE);
            rq.read_slot(self.eng.resp.rq_consumer, &mut recv.bytes[..n])
                .ok()?;
            recv.from_rq = true;
            (self.qp.cap.max_recv_sge, n)
        };
        // Only the slot is parsed: an SGE past it makes the WQE malformed, so the rest of the
        // buffer (a previous WQE's bytes) is never read and needs no zeroing. A malformed WQE
        // (too many SGEs, lengths that do not add up) is kept with no buffer, so that the
        // message landing in it fails as a malformed WQE (`check_resource`).
        let (wqe, malformed) = match RecvWqe::parse(&recv.bytes[..n], max_sge.max(1)) {
            Ok(wqe) => (wqe, None),
            Err(e) => (
                RecvWqe {
                    wr_id: u64::from_ne_bytes(recv.bytes[..8].try_into().unwrap_or([0; 8])),
                    num_sge: 0,
                    length: 0,
                },
                Some(e),
            ),
        };
        recv.wqe = wqe;
        recv.malformed = malformed;
        recv.dma = DmaCursor::new(wqe.length);
        Some(())
    }

    /// Copies a datagram's GRH, if any, then the payload into the receive WQE in progress
    /// (`send_data_in`). The WQE's cursor moves only if all of it lands, so a copy that waits
    /// for ODP pages is done again from the same place. On failure, which part failed: 0 the
    /// first (the GRH if there is one), 1 the payload after a GRH.
    fn recv_data(
        &mut self,
        grh: Option<&[u8]>,
        payload: &Parts<'_>,
    ) -> Result<(), (usize, RxeError)> {
        let no_room = RxeError::wqe(IB_WC_LOC_LEN_ERR, Cause::Check);
        let Some(recv) = self.eng.resp.recv.as_mut() else {
            return Err((0, no_room));
        };
        let RecvInProgress {
            wqe: recv_wqe,
            bytes,
            dma: committed,
            ..
        } = &mut **recv;
        let mut dma = *committed;
        let num_sge = recv_wqe.num_sge;
        // Lands `data` (of part `part`) at the receive WQE's cursor.
        let land = |dma: &mut DmaCursor, part: usize, data: &[u8]| {
            write_sges(self.qp, self.rcu, Sges::Recv(bytes, num_sge), dma, data).map_err(
                |e| match e {
                    // The receive buffer cannot take the data: its status (`DmaError::recv_status`).
                    WalkError::Sges(e) => (part, RxeError::from(e)),
                    WalkError::Mem(e) => (part, e),
                },
            )
        };
        if let Some(grh) = grh {
            if grh.len() as u32 > dma.resid {
                return Err((0, no_room));
            }
            land(&mut dma, 0, grh)?;
        }
        let part = usize::from(grh.is_some());
        if u32::try_from(payload.len()).map_or(true, |len| len > dma.resid) {
            return Err((part, no_room));
        }
        for piece in payload.iter() {
            land(&mut dma, part, piece)?;
        }
        *committed = dma;
        Ok(())
    }

    /// A UC message abandoned part-way, or a UD message too big for its buffer: its receive WQE, if
    /// it has one, is completed with `status` when it came from the SRQ (which it has left) or put
    /// back in the RQ (`proto::resp::abandon_recv`, C `do_class_d1e_error`). The message's state is
    /// the caller's.
    fn abandon_recv(&mut self, status: WcStatus) {
        let Some(from_srq) = self.eng.resp.recv.as_ref().map(|r| !r.from_rq) else {
            return;
        };
        match decide::abandon_recv(from_srq, status) {
            Abandon::Complete(status) => self.complete_recv_status(status),
            Abandon::Reuse => {
                self.eng.resp.release_recv();
            }
        }
    }

    /// Completes the receive WQE of a message that arrived (`do_complete`); `false` if the CQ
    /// had no room for the completion (the QP is then in error).
    fn complete_recv(&mut self, pkt: &Packet<'_>, status: WcStatus, ip_net_type: u8) -> bool {
        let Some(recv) = self.eng.resp.recv.as_ref() else {
            return true;
        };
        let mask = pkt.info().mask;
        let is_write = mask.contains(Mask::WRITE);
        let mut wc = UverbsWc {
            wr_id: recv.wqe.wr_id,
            status,
            opcode: if is_write {
                IB_WC_RECV_RDMA_WITH_IMM
            } else {
                IB_WC_RECV
            },
            byte_len: if is_write {
                self.eng.resp.write.as_ref().map_or(0, |w| w.length)
            } else {
                recv.wqe.length - recv.dma.resid
            },
            qp_num: self.qp.qpn,
            port_num: 1,
            ..Default::default()
        };
        if let Some(imm) = pkt.header::<Immdt>() {
            wc.wc_flags |= IB_WC_WITH_IMM;
            // `ex.imm_data` is big-endian in the CQE, as on the wire.
            wc.ex = u32::from_ne_bytes(imm.imm.to_be_bytes());
        }
        if let Some(ieth) = pkt.header::<Ieth>() {
            wc.wc_flags |= IB_WC_WITH_INVALIDATE;
            wc.ex = ieth.rkey;
        }
        let mut net_type = 0;
        if let Some(deth) = pkt.header::<Deth>() {
            wc.src_qp = deth.sqp;
            wc.wc_flags |= IB_WC_GRH;
            if self.qp.is_user {
                wc.sl = user_ud_sl(ip_net_type);
            } else {
                wc.wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
                net_type = ip_net_type;
            }
        }
        self.qp.dev.count(Counter::RdmaRecv);
        self.post_recv_cqe(&wc, pkt.bth().se, net_type)
    }

    fn complete_recv_status(&mut self, status: WcStatus) {
        let Some(recv) = self.eng.resp.recv.as_ref() else {
            return;
        };
        let wc = UverbsWc {
            wr_id: recv.wqe.wr_id,
            status,
            opcode: IB_WC_RECV,
            qp_num: self.qp.qpn,
            port_num: 1,
            ..Default::default()
        };
        self.post_recv_cqe(&wc, false, 0);
    }

    /// Posts a receive CQE and frees the WQE it completes; `false` if the CQ was full (the QP
    /// goes to error, as C's `RESPST_ERR_CQ_OVERFLOW`).
    fn post_recv_cqe(&mut self, wc: &UverbsWc, solicited: bool, net_type: u8) -> bool {
        let from_rq = self.eng.resp.release_recv();
        // The slot is free before the CQE says so (as C's `do_complete`).
        if from_rq {
            if let Some(rq) = &self.qp.rq {
                self.eng.resp.rq_consumer = rq.geometry().next_index(self.eng.resp.rq_consumer);
                rq.publish_consumer(self.eng.resp.rq_consumer);
            }
        }
        if self.qp.rcq.post_ext(wc, solicited, net_type).is_err() {
            self.qp.to_error(self.eng, Some(IbEvent::QpFatal));
            return false;
        }
        true
    }

    /// In the error state every posted receive completes with `WR_FLUSH_ERR`
    /// (`flush_recv_queue`; an SRQ is shared and not flushed).
    fn flush_recv_queue(&mut self) -> bool {
        if self.eng.resp.recv.is_some() {
            self.complete_recv_status(IB_WC_WR_FLUSH_ERR);
            return true;
        }
        let Some(rq) = &self.qp.rq else { return false };
        let g = *rq.geometry();
        let mut progress = false;
        for _ in 0..g.num_slots() {
            let ends = g.ends(
                QueueType::FromClient,
                self.eng.resp.rq_consumer,
                rq.shared_producer(),
            );
            if ends.is_empty() {
                break;
            }
            let mut bytes = [0u8; 8];
            let _ = rq.read_slot(self.eng.resp.rq_consumer, &mut bytes);
            let wc = UverbsWc {
                wr_id: u64::from_ne_bytes(bytes),
                status: IB_WC_WR_FLUSH_ERR,
                opcode: IB_WC_RECV,
                qp_num: self.qp.qpn,
                port_num: 1,
                ..Default::default()
            };
            self.eng.resp.rq_consumer = g.next_index(self.eng.resp.rq_consumer);
            rq.publish_consumer(self.eng.resp.rq_consumer);
            let _ = self.qp.rcq.post(&wc, false);
            progress = true;
        }
        progress
    }
}

/// A flush's FETH placement type (0 without a FETH), which decides the rights it needs.
fn flush_placement(pkt: &Packet<'_>) -> u8 {
    pkt.header::<Feth>().map_or(0, |f| f.placement_type)
}

/// The `sl` of a UD receive completion in user space: the packet's L3 header type as mlx5
/// reports it there (`wc.sl` = 2 for RoCE v2 over IPv4, 1 over IPv6, 0 for a GRH), since the
/// user ABI's `ib_uverbs_wc` has no `network_hdr_type`. RoCE carries no SL, and UCX (through
/// 1.18) reads the type from this field to find the destination GID in the 40-byte GRH area: C
/// leaves it 0, so UCX takes an IPv4 packet's header for an IPv6 one and drops every datagram
/// (`uct_ud_iface_check_grh`), which is why its UD transport and its RC wire-up time out on C.
fn user_ud_sl(ip_net_type: u8) -> u8 {
    // `RDMA_NETWORK_IPV4` = 2 (complete_recv's callers), else IPv6.
    if ip_net_type == 2 {
        2
    } else {
        1
    }
}
