// SPDX-License-Identifier: GPL-2.0

//! The requester (`rxe_req.c`): turns send WQEs into request packets.
//!
//! The C driver keeps each WQE's progress (state, PSNs, DMA cursor) inside the WQE in the ring
//! user space maps, and reads the WQE from there every time. Here each WQE is copied out of the
//! ring once, validated, and kept with its progress in [`SendQueue`], kernel memory parallel to
//! the ring: user space can no longer change a WQE it has posted.

use super::{
    counters::Counter,
    engine::{
        BuildError, Cause, FaultWait, Headers, Machine, RxeError, WqeInfo, WqeState,
        BY_REFERENCE_MIN,
    },
    outbox::OutPacket,
    packet_rings::PayloadRef,
    qp::QpShared,
    sg::{walk_sges, with_local_mr, Sges, WalkError},
    step::Step,
    task::{Payload, RingSide},
};
use crate::net::skb::PayloadSink;
use crate::proto::{
    comp as decide,
    hdr::{Atmeth, Bth, Deth, Feth, Ieth, Immdt, Reth, DEFAULT_PKEY, GSI_QKEY},
    opcode::{self, opcode_info, Mask},
    psn::{psn_add, psn_diff},
    qp_state::{QpState, QpType},
    queue::{Index, QueueType},
    wqe::{
        self, next_opcode, DataKind, DmaCursor, SendLimits, SendWqe, WqeError, WrDetail, WrMask,
        IB_SEND_FENCE, IB_SEND_SOLICITED, IB_WC_LOC_QP_OP_ERR,
    },
};
use core::ops::ControlFlow::{self, Break, Continue};
use kernel::sync::rcu;

/// Unacknowledged PSNs the requester may have in flight (`RXE_MAX_UNACKED_PSNS`).
const MAX_UNACKED_PSNS: u32 = 128;
/// Packets without an ACK request between two with one (`RXE_MAX_PKT_PER_ACK`).
const MAX_PKT_PER_ACK: u32 = 64;

/// How the requester leaves a packet's stages before sending it (C `rxe_requester`'s exits).
/// The stages, in order: [`Step::check_fence`], a local operation or
/// [`Step::check_limits`], [`Step::next_opcode`], [`Step::build`], [`Step::update`].
enum Exit {
    /// Done for this step; whether it made progress.
    Done(bool),
    /// The WQE failed: the completer completes it with the error and moves the QP to error.
    Fail(RxeError),
}

/// A stage's outcome: on to the next (`Continue`, with what it made) or out.
type Flow<T = ()> = ControlFlow<Exit, T>;

/// The WQE the requester stands at and the packet it is making of it. What the stages read of
/// the WQE's [`WqeInfo`] is copied here, not the whole of it: this is built for every packet.
/// The [`SendWqe`] itself goes to the stages beside it, copied once out of the send queue.
struct Outgoing {
    idx: Index,
    /// The WQE's first packet was sent before ([`WqeInfo::started`]).
    started: bool,
    /// The WQE holds a read/atomic credit ([`WqeInfo::rd_atomic_credit`]).
    rd_atomic_credit: bool,
    /// Bytes of a read already answered ([`WqeInfo::read_offset`]).
    read_offset: u32,
    /// The packet's opcode and its mask ([`Step::next_opcode`]).
    opcode: u8,
    mask: Mask,
    /// The packet takes one of the QP's read/atomic credits.
    needs_credit: bool,
    /// The packet's PSN and the PSNs it uses (a read: one per response).
    psn: u32,
    npsn: u32,
    /// The path MTU in bytes ([`Engine::mtu`]), the most payload a packet carries.
    mtu: u32,
    /// The WQE's data cursor: where the packet's payload starts, and after [`Step::build`]
    /// where it ends.
    dma: DmaCursor,
}

impl Step<'_> {
    /// One step of the requester: the next packet of the WQE it stands at, if it may be sent.
    pub(crate) fn requester(&mut self) -> bool {
        if self.eng.req.fault == FaultWait::Waiting {
            return false;
        }
        let idx = match self.next_wqe() {
            Ok(idx) => idx,
            Err(progress) => return progress,
        };
        // Built in place from the WQE's info (a moved `Outgoing` is a `memcpy` per packet).
        let Some(info) = self.eng.sq.info_ref(idx) else {
            return false;
        };
        let Some(wqe) = &info.wqe else {
            return false;
        };
        // Copied once: the stages take the engine mutably (a field of `w` was a second copy).
        let wqe = *wqe;
        let mut w = Outgoing {
            idx,
            started: info.started,
            rd_atomic_credit: info.rd_atomic_credit,
            read_offset: info.read_offset,
            opcode: 0,
            mask: Mask::default(),
            needs_credit: false,
            psn: self.eng.req.psn,
            npsn: 1,
            mtu: self.eng.mtu(self.qp.dev.active_mtu_bytes()),
            dma: info.dma,
        };
        match self.packet(&mut w, &wqe) {
            Continue(()) | Break(Exit::Done(true)) => true,
            Break(Exit::Done(false)) => false,
            Break(Exit::Fail(e)) => {
                self.fail_wqe(w.idx, e);
                true
            }
        }
    }

    /// The stages of one packet of the WQE `w` (C `rxe_requester`): sent (into `out`) and
    /// accounted for, or the reason not.
    fn packet(&mut self, w: &mut Outgoing, wqe: &SendWqe) -> Flow {
        self.check_fence(w, wqe)?;
        // C `rxe_do_local_ops`: BIND_MW, LOCAL_INV, REG_MR execute here and send nothing.
        if wqe.mask.contains(WrMask::LOCAL_OP) {
            // It completes once every packet before it is acknowledged.
            self.eng.req.awaited = Some(self.eng.req.psn);
            return Break(Exit::Done(self.local_op(w.idx, wqe)));
        }
        self.check_limits()?;
        self.next_opcode(w, wqe)?;
        self.build(w, wqe)?;
        self.update(w, wqe);
        Continue(())
    }

    /// C `req_next_wqe`: the index of the WQE at the requester's index, copied in and validated
    /// when first reached, with a valid WQE to send from; `Err` with the progress made when
    /// there is none to send from (not RTS or SQD, an RNR wait, a full outbox, an empty queue,
    /// SQD before a new WQE) or the WQE is already finished (the index moves on).
    fn next_wqe(&mut self) -> core::result::Result<Index, bool> {
        let sqd = match self.eng.state() {
            QpState::Rts => false,
            QpState::Sqd => true,
            _ => return Err(false),
        };
        if self.eng.req.rnr_wait || !self.out.has_room() || !self.has_posted() {
            return Err(false);
        }
        let g = *self.qp.sq.geometry();
        let idx = self.eng.req.wqe_index;
        let (state, started) = self
            .eng
            .sq
            .info_ref(idx)
            .map_or((WqeState::Free, false), |info| (info.state, info.started));
        // SQD: finish (and resend) what was started, start nothing new.
        if sqd && !started {
            self.check_sq_drained();
            return Err(false);
        }
        let fetched = state == WqeState::Free;
        if fetched {
            self.fetch_wqe(idx);
        }
        let info = self.eng.sq.info_ref(idx).ok_or(false)?;
        match info.state {
            WqeState::Processing => {}
            // A WQE that failed here stops the requester: nothing after it is sent, and the
            // completer errors the QP when it reaches it, after the WQEs before it (C errors
            // the QP at once and flushes those too). Found unreadable just now, it is progress:
            // the completer has it to complete.
            WqeState::Error(_) => return Err(fetched),
            // Finished WQEs are the completer's; move on to the next.
            _ => {
                self.eng.req.wqe_index = g.next_index(idx);
                return Err(true);
            }
        }
        if info.wqe.is_none() {
            return Err(false);
        }
        Ok(idx)
    }

    /// Whether the requester's index lies in [consumer, producer): a WQE is posted there.
    fn has_posted(&self) -> bool {
        let g = self.qp.sq.geometry();
        let ends = g.ends(
            QueueType::FromClient,
            self.eng.comp.consumer,
            self.qp.sq.shared_producer(),
        );
        let ahead = self
            .eng
            .req
            .wqe_index
            .get()
            .wrapping_sub(ends.consumer().get())
            & g.index_mask();
        ahead < ends.count()
    }

    /// Whether a requester step would find nothing to do; `false` when unsure. A doorbell, the RNR
    /// timer or the end of a page fault wakes the task itself.
    pub(crate) fn requester_idle(&self) -> bool {
        match self.eng.state() {
            QpState::Rts => {}
            QpState::Sqd => return false,
            _ => return true,
        }
        self.eng.req.fault == FaultWait::Waiting
            || self.eng.req.rnr_wait
            || !self.has_posted()
            || self
                .eng
                .sq
                .info_ref(self.eng.req.wqe_index)
                .is_some_and(|info| matches!(info.state, WqeState::Error(_)))
    }

    /// Whether positive ACKs looped back to this QP may wait in its ACK ring for the task's
    /// next run (`proto::comp::acks_may_wait`): an RC user QP whose requester has sent all that
    /// was posted, none of it waiting to be seen complete. Called at the end of every step;
    /// forgets a `ReqState::awaited` PSN the completer has reached.
    pub(crate) fn acks_may_wait(&mut self) -> bool {
        if !self.qp.is_user || self.qp.qp_type != QpType::Rc || self.eng.state() != QpState::Rts {
            return false;
        }
        if let Some(psn) = self.eng.req.awaited {
            if decide::reached(self.eng.comp.psn, psn) {
                self.eng.req.awaited = None;
            }
        }
        decide::acks_may_wait(&decide::AckWait {
            rts_with_timer: self.eng.attrs.timeout != 0,
            requester_done: self.eng.req.fault != FaultWait::Waiting
                && !self.eng.req.rnr_wait
                && !self.has_posted(),
            awaited: self.eng.req.awaited,
            comp_psn: self.eng.comp.psn,
        })
    }

    /// Whether the last packet built left its message unfinished (not an END packet): the
    /// requester has the next packet of the same WQE to build. Cheaper than
    /// [`Self::requester_idle`], which reads the user's send queue.
    pub(crate) fn mid_message(&self) -> bool {
        self.eng
            .req
            .opcode
            .and_then(opcode_info)
            .is_some_and(|info| !info.mask.contains(Mask::END))
    }

    /// C `rxe_wqe_is_fenced`. Fences: a LOCAL_INV waits until every earlier WQE has completed
    /// (IBA 10.6.5.1, made mandatory as C does); an `IB_SEND_FENCE` WQE until no read or atomic
    /// is outstanding (IBA 10.8.3.3). The completer's next completion runs the requester again
    /// (one task).
    fn check_fence(&self, w: &Outgoing, wqe: &SendWqe) -> Flow {
        if !w.started {
            let fenced = if wqe.opcode == wqe::IB_WR_LOCAL_INV {
                w.idx != self.eng.comp.consumer
            } else {
                wqe.send_flags & IB_SEND_FENCE != 0
                    && self.eng.req.rd_atomic != u32::from(self.eng.attrs.max_rd_atomic)
            };
            if fenced {
                return Break(Exit::Done(false));
            }
        }
        Continue(())
    }

    /// C's window check. RC: no more than [`MAX_UNACKED_PSNS`] unacknowledged, none after an
    /// RNR probe (`req.rnr_probe`) until it is acknowledged; any type: not too many
    /// packets still in the stack (UC and UD have no window).
    fn check_limits(&mut self) -> Flow {
        let probe_window = (self.eng.req.rnr_probe)
            .and_then(|probe| decide::rnr_probe_window(self.eng.comp.psn, probe));
        if probe_window.is_none() {
            self.eng.req.rnr_probe = None;
        }
        let window_end = psn_add(self.eng.comp.psn, probe_window.unwrap_or(MAX_UNACKED_PSNS));
        if self.qp.qp_type == QpType::Rc && psn_diff(self.eng.req.psn, window_end) > 0 {
            return Break(Exit::Done(false));
        }
        if !self.qp.may_send() {
            return Break(Exit::Done(false));
        }
        Continue(())
    }

    /// C `next_opcode` + `check_init_depth`: the packet's opcode from the WQE's and the last
    /// packet's, its destination, and the read/atomic credit a new read, atomic or atomic write
    /// takes (none left: wait).
    fn next_opcode(&mut self, w: &mut Outgoing, wqe: &SendWqe) -> Flow {
        let fits = w.dma.resid <= w.mtu;
        // C10-93.1.1: a UD message longer than the MTU emits no packet and is no error: it
        // completes successfully, one PSN consumed (C's "fake a successful UD send").
        if !fits && matches!(self.qp.qp_type, QpType::Ud | QpType::Gsi) {
            if let Some(info) = self.eng.sq.info_mut(w.idx) {
                info.first_psn = self.eng.req.psn;
                info.last_psn = self.eng.req.psn;
                info.started = true;
                info.sent = true;
                info.state = WqeState::Pending;
            }
            self.eng.req.psn = psn_add(self.eng.req.psn, 1);
            self.eng.req.opcode = Some(opcode::UD_SEND_ONLY);
            self.eng.req.wqe_index = self.qp.sq.geometry().next_index(w.idx);
            return Break(Exit::Done(true));
        }
        let unsendable = RxeError::local_op(Cause::Check);
        let Some(opcode) = next_opcode(self.qp.qp_type, wqe.opcode, self.eng.req.opcode, fits)
        else {
            return Break(Exit::Fail(unsendable));
        };
        let Some(op_info) = opcode_info(opcode) else {
            return Break(Exit::Fail(unsendable));
        };
        // The destination: a UD WQE's address handle is looked up when the packet is built.
        if !matches!(wqe.detail, WrDetail::Ud { .. }) && self.eng.pri_av.is_none() {
            return Break(Exit::Fail(unsendable));
        }
        w.opcode = opcode;
        w.mask = op_info.mask;
        w.needs_credit = self.qp.qp_type == QpType::Rc
            && w.mask.contains(Mask::START)
            // As C `check_init_depth`: an ATOMIC WRITE takes a credit too.
            && wqe
                .mask
                .intersects(WrMask::ATOMIC_OR_READ.union(WrMask::ATOMIC_WRITE))
            && !w.rd_atomic_credit;
        if w.needs_credit && self.eng.req.rd_atomic == 0 {
            return Break(Exit::Done(false));
        }
        Continue(())
    }

    /// C `init_req_packet` + `finish_packet`: the packet, its BTH, extension headers and the
    /// next bytes of the WQE's data, routed, into `out` (C `rxe_xmit_packet`: sent once the
    /// engine lock is released), or lost (a datagram nobody can be sent to). Pushed here, not
    /// returned: each layer a packet is returned through moves it once more.
    fn build(&mut self, w: &mut Outgoing, wqe: &SendWqe) -> Flow {
        let qp = self.qp;
        let out_has_skb = self.out.has_skb();
        let mtu = w.mtu;
        let mask = w.mask;
        let payload = if mask.contains(Mask::PAYLOAD) {
            w.dma.resid.min(mtu)
        } else {
            0
        };
        let end = mask.contains(Mask::END);
        // Packets of a read: one request, `npsn` responses.
        if mask.contains(Mask::READ) {
            w.npsn = (wqe.length - w.read_offset).div_ceil(mtu).max(1);
        }
        self.eng.req.noack_pkts += 1;
        let ack_req = qp.qp_type == QpType::Rc
            && (end
                || self.eng.req.noack_pkts > MAX_PKT_PER_ACK
                || self.eng.req.rnr_probe == Some(w.psn));
        if ack_req {
            self.eng.req.noack_pkts = 0;
        }
        // The address: the primary path, or a UD WQE's address handle (by reference, not
        // copied: this runs for every packet).
        let ud_av;
        let av = match wqe.detail {
            WrDetail::Ud { ah_num, .. } => {
                ud_av = qp.dev.ah(ah_num);
                ud_av.as_deref()
            }
            _ => self.eng.pri_av.as_ref(),
        };
        let Some(av) = av else {
            return Break(Exit::Fail(RxeError::local_op(Cause::Check)));
        };
        let dest_qpn = match wqe.detail {
            WrDetail::Ud { remote_qpn, .. } => remote_qpn,
            _ => self.eng.attrs.dest_qp_num,
        };
        let bth = Bth {
            opcode: w.opcode,
            // As C: solicited only on the last packet of a SEND or an RDMA WRITE with immediate.
            se: end
                && wqe.send_flags & IB_SEND_SOLICITED != 0
                && (mask.contains(Mask::SEND) || mask.contains(Mask::WRITE.union(Mask::IMMDT))),
            pkey: DEFAULT_PKEY,
            qpn: dest_qpn,
            ack_req,
            psn: w.psn,
            ..Default::default()
        };
        let mut hdrs = Headers::default();
        self.request_headers(w, wqe, &mut hdrs);
        // The payload: the next `payload` bytes of the WQE's data.
        let slot = self.eng.sq.slot(w.idx);
        let by_reference = qp.qp_type == QpType::Rc
            && matches!(wqe.data, DataKind::Sges)
            && payload >= BY_REFERENCE_MIN;
        let start = w.dma;
        let mut next = start;
        // Only a packet to this device may skip its skb: one for a wire costs no ring attempt.
        if qp.qp_type == QpType::Rc && qp.loops_back(av) {
            let fill =
                |buf: &mut [u8]| copy_payload(qp, self.rcu, wqe, slot, &mut next, buf).is_ok();
            if let Some(pkt) =
                qp.deliver_request(av, bth, &hdrs, payload as usize, out_has_skb, fill)
            {
                w.dma = next;
                self.out.push(pkt);
                return Continue(());
            }
            next = start;
            if !by_reference && payload > 0 && matches!(wqe.data, DataKind::Sges) {
                let pkt = referenced_payload(qp, wqe, slot, &mut next, payload).and_then(|r| {
                    qp.deliver_referenced(av, bth, &hdrs, r, out_has_skb, RingSide::Requests)
                });
                if let Some(pkt) = pkt {
                    w.dma = next;
                    self.out.push(pkt);
                    return Continue(());
                }
                next = start;
            }
        }
        let ip_id = self.out.next_ip_id();
        let res = qp.build_packet(
            av,
            bth,
            &hdrs,
            Payload {
                len: payload as usize,
                by_reference,
            },
            ip_id,
            |sink| {
                next = start;
                fill_payload(qp, self.rcu, wqe, slot, &mut next, sink)
            },
        );
        w.dma = next;
        self.push_built(res)
    }

    /// What [`Step::build`] built: the packet into the outbox, or what its failure does.
    fn push_built(&mut self, res: core::result::Result<OutPacket, BuildError<RxeError>>) -> Flow {
        let qp = self.qp;
        match res {
            Ok(pkt) => {
                self.out.push(pkt);
                Continue(())
            }
            Err(BuildError::NoMemory) => {
                qp.resume_later(self.eng);
                Break(Exit::Done(false))
            }
            // A datagram nobody can be sent to is lost on the way, as on hardware; C fails the
            // WQE and errors the QP, which on QP1 would end the device's CM traffic.
            Err(BuildError::Unsendable) if matches!(qp.qp_type, QpType::Ud | QpType::Gsi) => {
                qp.dev.count(Counter::SendErr);
                Continue(())
            }
            Err(BuildError::Unsendable) => Break(Exit::Fail(RxeError::local_op(Cause::Unsendable))),
            // ODP pages not mapped: this packet again once they are.
            Err(BuildError::Fill(e)) if qp.await_fault(self.eng, Machine::Requester, &e) => {
                Break(Exit::Done(false))
            }
            Err(BuildError::Fill(e)) => Break(Exit::Fail(e)),
        }
    }

    /// The extension headers of a request packet, from its WQE, into `hdrs` (none set): filled
    /// in place, where a returned `Headers` is copied out, once a packet.
    fn request_headers(&self, w: &Outgoing, wqe: &SendWqe, hdrs: &mut Headers) {
        let mask = w.mask;
        if mask.contains(Mask::RETH) {
            let (va, rkey, len) = match wqe.detail {
                WrDetail::Rdma { remote_addr, rkey } if mask.contains(Mask::READ) => (
                    remote_addr.wrapping_add(u64::from(w.read_offset)),
                    rkey,
                    wqe.length - w.read_offset,
                ),
                WrDetail::Rdma { remote_addr, rkey } => (remote_addr, rkey, wqe.length),
                // The FLUSH's length is `dma.length` (librxe puts it there and
                // leave `wr.flush.length` 0), as C `init_req_packet` sends `dma.resid`.
                WrDetail::Flush {
                    remote_addr, rkey, ..
                } => (remote_addr, rkey, wqe.length),
                _ => (0, 0, wqe.length),
            };
            hdrs.reth = Some(Reth { va, rkey, len });
        }
        if let WrDetail::Flush { type_, level, .. } = wqe.detail {
            hdrs.feth = Some(Feth {
                selectivity_level: level,
                placement_type: type_,
            });
        }
        if mask.contains(Mask::IMMDT) {
            hdrs.immdt = Some(Immdt {
                imm: u32::from_be_bytes(wqe.ex.to_ne_bytes()),
            });
        }
        if mask.contains(Mask::IETH) {
            hdrs.ieth = Some(Ieth { rkey: wqe.ex });
        }
        if mask.contains(Mask::DETH) {
            let qkey = match wqe.detail {
                WrDetail::Ud { remote_qkey, .. } if remote_qkey & 0x8000_0000 == 0 => remote_qkey,
                _ if self.qp.qp_type == QpType::Gsi => GSI_QKEY,
                _ => self.eng.attrs.qkey,
            };
            hdrs.deth = Some(Deth {
                qkey,
                sqp: self.qp.qpn,
            });
        }
        if mask.contains(Mask::ATMETH) {
            if let WrDetail::Atomic {
                remote_addr,
                compare_add,
                swap,
                rkey,
            } = wqe.detail
            {
                let cas = wqe.opcode == wqe::IB_WR_ATOMIC_CMP_AND_SWP;
                hdrs.atmeth = Some(Atmeth {
                    va: remote_addr,
                    rkey,
                    swap_add: if cas { swap } else { compare_add },
                    compare: if cas { compare_add } else { 0 },
                });
            }
        }
    }

    /// C `update_wqe_state`, `update_wqe_psn`, `update_state`: the progress of the packet sent: the
    /// WQE's PSN range and data cursor, its credit, the QP's next PSN and opcode, the next WQE once
    /// this one is all out, and (RC) the retransmit timer.
    fn update(&mut self, w: &Outgoing, wqe: &SendWqe) {
        let (mask, psn, npsn) = (w.mask, w.psn, w.npsn);
        let end = mask.contains(Mask::END);
        let Some(info) = self.eng.sq.info_mut(w.idx) else {
            return;
        };
        // A WQE's PSN range is fixed by its first transmission. A resend from its middle must
        // not move it: not its first PSN (a read resent from an offset starts with a request,
        // a START packet; the next retry counts answered responses from the first PSN) and not
        // its last (an ACK of the real last PSN would complete it short and the next WQE would
        // reuse that PSN).
        if mask.contains(Mask::START) && !info.started {
            info.first_psn = psn;
            info.started = true;
        }
        if !info.sent {
            info.last_psn = psn_add(psn, npsn - 1);
        }
        info.dma = w.dma;
        if mask.contains(Mask::READ) || mask.contains(Mask::ATOMIC) {
            info.dma.resid = 0;
        }
        if end {
            info.state = WqeState::Pending;
            info.sent = true;
            let signaled = wqe.send_flags & wqe::IB_SEND_SIGNALED != 0 || self.qp.sq_sig_all;
            if !decide::completes_unseen(wqe.mask, signaled) {
                self.eng.req.awaited = Some(psn_add(info.last_psn, 1));
            }
        }
        if w.needs_credit {
            self.eng.req.rd_atomic = self.eng.req.rd_atomic.saturating_sub(1);
            info.rd_atomic_credit = true;
        }
        self.eng.req.psn = psn_add(psn, npsn);
        self.eng.req.opcode = Some(w.opcode);
        if end {
            self.eng.req.wqe_index = self.qp.sq.geometry().next_index(w.idx);
        }
        if self.qp.qp_type == QpType::Rc {
            self.request_sent();
        }
    }
}

impl Step<'_> {
    /// `IB_EVENT_SQ_DRAINED` once, when in SQD every WQE the requester started has completed
    /// (acknowledged, on RC): the completer has caught up with the requester, which starts
    /// nothing new in SQD. (C compares PSNs, which a UD or UC send queue never matches.)
    pub(crate) fn check_sq_drained(&mut self) {
        if !self.eng.req.sq_draining
            || self.eng.state() != QpState::Sqd
            || self.eng.comp.consumer != self.eng.req.wqe_index
        {
            return;
        }
        self.eng.req.sq_draining = false;
        self.qp.handle.event(crate::ib::handles::IbEvent::SqDrained);
    }

    /// Copies WQE `idx` out of the ring and validates it (once per post) into its [`WqeInfo`].
    pub(crate) fn fetch_wqe(&mut self, idx: Index) {
        let limits = SendLimits {
            max_sge: self.qp.cap.max_send_sge,
            max_inline: self.qp.cap.max_inline_data,
            allow_kernel_only: !self.qp.is_user,
        };
        // Parsed straight into the WQE's info: a `WqeInfo` made and moved in was two more copies
        // of the `SendWqe`.
        let Some((slot, info)) = self.eng.sq.slot_and_info_mut(idx) else {
            return;
        };
        *info = WqeInfo::default();
        info.wqe = match self.qp.sq.read_slot(idx, slot) {
            Ok(()) => SendWqe::parse(slot, self.qp.qp_type, limits).ok(),
            Err(_) => None,
        };
        match &info.wqe {
            Some(wqe) => {
                info.state = WqeState::Processing;
                info.dma = DmaCursor::new(wqe.length);
                info.rx_dma = DmaCursor::new(wqe.length);
            }
            // Unparseable: its wr_id is whatever the bytes say; completed with an error.
            None => info.state = WqeState::Error(IB_WC_LOC_QP_OP_ERR),
        }
    }

    /// Marks WQE `idx` failed; the requester stops there, and the completer completes it with
    /// the error's status and errors the QP.
    fn fail_wqe(&mut self, idx: Index, e: RxeError) {
        if let Some(info) = self.eng.sq.info_mut(idx) {
            info.state = WqeState::Error(e.status);
        }
        self.eng.req.opcode = None;
    }
}

/// The next bytes of a WQE's data (inline or through its SGEs) into a packet: copied, or
/// attached by reference (SGEs only).
fn fill_payload(
    qp: &QpShared,
    rcu: &rcu::Guard,
    wqe: &SendWqe,
    slot: &[u8],
    dma: &mut DmaCursor,
    sink: &mut PayloadSink<'_>,
) -> core::result::Result<(), RxeError> {
    if let Some(buf) = sink.copy_buf() {
        return copy_payload(qp, rcu, wqe, slot, dma, buf);
    }
    let DataKind::Sges = wqe.data else {
        sink.refuse();
        return Ok(());
    };
    let len = sink.left();
    walk_sges(qp, send_sges(wqe, slot), dma, len, 0, |mr, addr, r| {
        mr.attach(rcu, addr, r.len(), sink)?;
        // A sink that failed is built again by copy, from the start.
        Ok(if sink.failed() {
            Break(())
        } else {
            Continue(())
        })
    })
    .map_err(payload_error)
}

/// A send WQE's SGEs, in its slot copy.
fn send_sges<'a>(wqe: &SendWqe, slot: &'a [u8]) -> Sges<'a> {
    Sges::Send(slot, wqe.num_sge)
}

/// A walk over a send WQE's SGEs that failed: SGEs that end early or are malformed are a local
/// protection error, as C's `copy_data()` failing in the requester.
fn payload_error(e: WalkError) -> RxeError {
    match e {
        WalkError::Sges(e) => RxeError::local_protection(Cause::Dma(e)),
        WalkError::Mem(e) => e,
    }
}

/// The next `len` bytes of a WQE's data, to be left where they are, when they lie in one SGE
/// of a pinned user MR; `None` otherwise (the caller copies them, and reports errors then).
/// Only an RC request leaves its data in place: its WQE completes once the responder has
/// acknowledged it, so the buffer is not reused while the request waits in the responder's
/// ring.
fn referenced_payload(
    qp: &QpShared,
    wqe: &SendWqe,
    slot: &[u8],
    dma: &mut DmaCursor,
    len: u32,
) -> Option<PayloadRef> {
    let chunk = dma
        .next_chunk(|i| wqe::sge(slot, i), wqe.num_sge, len)
        .ok()
        .flatten()
        .filter(|c| c.len == len)?;
    with_local_mr(qp, chunk.lkey, 0, chunk.addr, len as usize, |mr| {
        mr.pins_pages().then(|| PayloadRef {
            mr: mr.clone(),
            iova: chunk.addr,
            len,
        })
    })
    .ok()
    .flatten()
}

/// Copies the next `buf.len()` bytes of a WQE's data (inline or through its SGEs) into `buf`.
fn copy_payload(
    qp: &QpShared,
    rcu: &rcu::Guard,
    wqe: &SendWqe,
    slot: &[u8],
    dma: &mut DmaCursor,
    buf: &mut [u8],
) -> core::result::Result<(), RxeError> {
    // Data the WQE's own slot should hold but does not.
    let out_of_slot = RxeError::from(WqeError::DataOutOfSlot);
    match wqe.data {
        DataKind::Inline => {
            let range = dma
                .next_inline(buf.len() as u32)
                .map_err(|e| RxeError::local_op(Cause::Dma(e)))?;
            let data = wqe::inline_data(slot, wqe.length).ok_or(out_of_slot)?;
            buf.copy_from_slice(data.get(range).ok_or(out_of_slot)?);
            Ok(())
        }
        DataKind::AtomicWrite => {
            let v = wqe::atomic_write_value(slot).ok_or(out_of_slot)?;
            let n = buf.len().min(8);
            buf[..n].copy_from_slice(&v[..n]);
            dma.resid = dma.resid.saturating_sub(n as u32);
            Ok(())
        }
        DataKind::None => Ok(()),
        DataKind::Sges => {
            let len = buf.len();
            walk_sges(qp, send_sges(wqe, slot), dma, len, 0, |mr, addr, r| {
                mr.read(rcu, addr, &mut buf[r])?;
                Ok(Continue(()))
            })
            .map_err(payload_error)
        }
    }
}
