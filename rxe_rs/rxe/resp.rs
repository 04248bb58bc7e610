// SPDX-License-Identifier: GPL-2.0

//! The responder (`rxe_resp.c`): executes request packets (sends into receive WQEs, RDMA writes,
//! reads, atomics), acknowledges them, completes receive WQEs, and flushes the receive queue
//! of a QP in error.

use super::{
    device::Counter,
    engine::{BuildError, Engine, Headers, Outbox},
    mr::{self, access, MrShared},
    qp::QpShared,
    req::lookup_local,
};
use crate::ib::handles::IbEvent;
use crate::net::skb::SkBuff;
use crate::proto::{
    hdr::GSI_QKEY,
    hdr::{
        Aeth, Atmack, Atmeth, Bth, Deth, Feth, Ieth, Immdt, NakCode, Reth, Syndrome, DEFAULT_PKEY,
    },
    opcode::{self, Mask},
    packet::Packet,
    psn::psn_add,
    qp_state::{QpState, QpType},
    queue::{Index, QueueType},
    resources::{Kind, ReadReplay, Resource, Resources},
    resp::{self as decide, Abandon, Duplicate, OpSeq, RcPsn, Reply, UcPsn},
    wqe::{
        self, DmaCursor, RecvWqe, UverbsWc, WcStatus, IB_WC_GRH, IB_WC_LOC_LEN_ERR,
        IB_WC_LOC_PROT_ERR, IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM, IB_WC_REM_ACCESS_ERR,
        IB_WC_REM_INV_REQ_ERR, IB_WC_SUCCESS, IB_WC_WITH_IMM, IB_WC_WITH_INVALIDATE,
        IB_WC_WITH_NETWORK_HDR_TYPE, IB_WC_WR_FLUSH_ERR,
    },
};
use kernel::{prelude::*, sync::rcu, sync::Arc};

/// The largest receive WQE: header and 32 SGEs.
const MAX_RECV_WQE: usize = wqe::RECV_WQE_DATA_OFFSET + 32 * 16;
/// Bytes of the GRH a UD receive buffer starts with.
const GRH_LEN: usize = 40;

/// The receive WQE a message is landing in (copied out of the ring once).
struct RecvInProgress {
    wqe: RecvWqe,
    bytes: [u8; MAX_RECV_WQE],
    dma: DmaCursor,
    /// Taken from the RQ (consumed at completion) rather than the SRQ (consumed at take).
    from_rq: bool,
}

/// An RDMA write in progress.
struct WriteTarget {
    mr: Option<Arc<MrShared>>,
    va: u64,
    resid: u32,
    length: u32,
}

/// Read responses still to send.
struct ReadReply {
    mr: Option<Arc<MrShared>>,
    va: u64,
    resid: u32,
    psn: u32,
    /// The next response starts the read: FIRST or ONLY (else MIDDLE or LAST).
    first: bool,
    /// A replay for a duplicate request: leaves `resp.psn` and the MSN alone.
    replay: bool,
}

impl ReadReply {
    /// The reply to a read of `len` bytes at `va` (in `mr`) whose first response has PSN `psn`
    /// and is a FIRST or ONLY (`first`) or a MIDDLE or LAST (a replay resuming a read).
    ///
    /// The reply is a copy: it holds its MR, cursor and PSN, not a responder resource, so a
    /// resource slot recorded again (or the ring replaced by `modify_qp`) while it is being
    /// sent does not change it. (C sends from the resource itself, `qp->resp.res`; it cannot
    /// be recorded over while set, as no request is taken until the reply is done.)
    fn new(
        mr: Option<Arc<MrShared>>,
        va: u64,
        len: u32,
        psn: u32,
        first: bool,
        replay: bool,
    ) -> Self {
        Self {
            mr,
            va,
            resid: len,
            psn,
            first,
            replay,
        }
    }
}

/// The responder's state (`qp->resp`).
#[derive(Default)]
pub(crate) struct RespState {
    /// Next PSN expected.
    pub(crate) psn: u32,
    /// C `qp->resp.ack_psn`: `psn` as it was after the last request executed that was not a
    /// read (a read moves `psn` past its responses, not this). A duplicate SEND or WRITE is
    /// acknowledged with the PSN before it. Unlike C, which leaves it 0 until a request
    /// executes, `modify_qp` with `IB_QP_RQ_PSN` sets it too, so such an ACK never carries a
    /// PSN (0xffffff) that could acknowledge requests not yet executed.
    pub(crate) ack_psn: u32,
    msn: u32,
    /// Opcode of the last request of the message in progress.
    opcode: Option<u8>,
    sent_psn_nak: bool,
    /// UC: drop until the next first packet.
    drop_msg: bool,
    recv: Option<KBox<RecvInProgress>>,
    /// `recv`'s box between messages: one per QP, allocated at its first receive, so the data
    /// path does not allocate per message (C copies into its QP, `qp->resp.srq_wqe`).
    spare_recv: Option<KBox<RecvInProgress>>,
    write: Option<WriteTarget>,
    read: Option<ReadReply>,
    /// The responder resources (C `qp->resp.resources`): the last `max_dest_rd_atomic` reads,
    /// atomics, ATOMIC WRITEs and FLUSHes executed, from which duplicates are answered
    /// (`proto::resources`). Replaced by `modify_qp` with `IB_QP_MAX_DEST_RD_ATOMIC`.
    resources: Resources<KVec<Option<Resource>>>,
    /// The RQ's consumer index.
    rq_consumer: Index,
    /// `IB_EVENT_QP_LAST_WQE_REACHED` was raised for this error state (QPs on an SRQ).
    last_wqe_reached: bool,
}

impl RespState {
    /// Back to the state of a new QP (modify to RESET, C `rxe_qp_reset`), keeping the PSNs
    /// (`psn`, `ack_psn`), the receive queue's position and the responder resources' slots,
    /// emptied (C `cleanup_rd_atomic_resources`).
    pub(crate) fn reset(&mut self) {
        let mut resources = core::mem::take(&mut self.resources);
        resources.clear();
        *self = Self {
            psn: self.psn,
            ack_psn: self.ack_psn,
            rq_consumer: self.rq_consumer,
            resources,
            spare_recv: self.spare_recv.take(),
            ..Default::default()
        };
    }

    /// Done with the receive WQE in progress: its box back to `spare_recv`. Whether there was
    /// one and it came from the RQ.
    fn release_recv(&mut self) -> bool {
        let Some(recv) = self.recv.take() else {
            return false;
        };
        let from_rq = recv.from_rq;
        self.spare_recv = Some(recv);
        from_rq
    }

    /// `modify_qp` with `IB_QP_MAX_DEST_RD_ATOMIC`: the responder resources start again, empty,
    /// in `slots` (`max_dest_rd_atomic` of them; C `free_rd_atomic_resources` +
    /// `alloc_rd_atomic_resources`, whatever the value was). Returns the old slots, for the
    /// caller to free outside its lock. (C also stops a read reply in progress, as its reply
    /// lives in a resource; a reply here is a copy and goes on.)
    pub(crate) fn replace_resources(
        &mut self,
        slots: KVec<Option<Resource>>,
    ) -> Resources<KVec<Option<Resource>>> {
        core::mem::replace(&mut self.resources, Resources::new(slots))
    }
}

/// How a request failed (`enum resp_states` errors): the NAK, the CQE status, the event.
struct Fail {
    nak: NakCode,
    status: WcStatus,
    event: IbEvent,
}

const INVALID: Fail = Fail {
    nak: NakCode::InvalidRequest,
    status: IB_WC_REM_INV_REQ_ERR,
    event: IbEvent::QpReqErr,
};
const ACCESS: Fail = Fail {
    nak: NakCode::RemoteAccessError,
    status: IB_WC_REM_ACCESS_ERR,
    event: IbEvent::QpAccessErr,
};

impl QpShared {
    /// One step of the responder.
    pub(crate) fn responder(
        self: &Arc<Self>,
        eng: &mut Engine,
        rcu: &rcu::Guard,
        out: &mut Outbox,
    ) -> bool {
        match eng.state() {
            QpState::Err => {
                self.req_pkts.purge();
                eng.resp.read = None;
                eng.resp.write = None;
                // A QP on an SRQ leaves the SRQ's WQEs alone and says it will take no more.
                if self.srq.is_some() && !eng.resp.last_wqe_reached {
                    eng.resp.last_wqe_reached = true;
                    self.handle.event(IbEvent::LastWqeReached);
                }
                return self.flush_recv_queue(eng);
            }
            QpState::Reset | QpState::Init => {
                self.req_pkts.purge();
                return false;
            }
            _ => {}
        }
        if !out.has_room() {
            return false;
        }
        if eng.resp.read.is_some() {
            return self.read_reply(eng, rcu, out);
        }
        let Some(skb) = self.req_pkts.pop() else {
            return false;
        };
        self.handle_request(eng, rcu, out, &skb);
        skb.consume();
        true
    }

    fn handle_request(
        self: &Arc<Self>,
        eng: &mut Engine,
        rcu: &rcu::Guard,
        out: &mut Outbox,
        skb: &SkBuff,
    ) {
        let Some(pkt) = skb.data().get(8..).and_then(|p| Packet::parse(p).ok()) else {
            return;
        };
        let bth = *pkt.bth();
        let op = bth.opcode;
        let mask = pkt.info().mask;
        let psn = bth.psn;
        let rxe = self.dev.data();
        match self.qp_type {
            QpType::Rc => match decide::check_psn_rc(psn, eng.resp.psn, eng.resp.sent_psn_nak) {
                RcPsn::OutOfSequence { nak } => {
                    if nak {
                        // Counted once per NAK, as C: the packets after it are dropped silently.
                        rxe.count(Counter::OutOfSeqReq);
                        eng.resp.sent_psn_nak = true;
                        let expected = eng.resp.psn;
                        self.send_ack(eng, out, Syndrome::Nak(NakCode::PsnSequenceError), expected);
                    }
                    return;
                }
                RcPsn::Duplicate => {
                    rxe.count(Counter::DupReq);
                    self.duplicate(eng, out, &pkt);
                    return;
                }
                RcPsn::Expected => eng.resp.sent_psn_nak = false,
            },
            QpType::Uc => match decide::check_psn_uc(
                psn,
                eng.resp.psn,
                eng.resp.drop_msg,
                mask.contains(Mask::START),
            ) {
                UcPsn::InSequence => {}
                UcPsn::Restart => {
                    // The message in progress lost its LAST (C: class D1E).
                    self.abandon_recv(eng, IB_WC_REM_INV_REQ_ERR);
                    eng.resp.psn = psn;
                    eng.resp.drop_msg = false;
                    eng.resp.opcode = None;
                    eng.resp.write = None;
                }
                UcPsn::Drop => {
                    eng.resp.drop_msg = true;
                    return;
                }
            },
            QpType::Ud | QpType::Gsi | QpType::Smi => {
                let qkey = if self.qp_type == QpType::Gsi {
                    GSI_QKEY
                } else {
                    eng.attrs.qkey
                };
                if pkt.header::<Deth>().is_none_or(|d| d.qkey != qkey) {
                    return;
                }
            }
        }
        let connected = matches!(self.qp_type, QpType::Rc | QpType::Uc);
        if connected && decide::check_op_seq(eng.resp.opcode, op) != OpSeq::Ok {
            if self.qp_type == QpType::Rc {
                self.fail(eng, out, psn, INVALID);
            } else {
                // UC: class D1E (a missing LAST) or a MIDDLE/LAST without FIRST.
                self.abandon_recv(eng, IB_WC_REM_INV_REQ_ERR);
                eng.resp.drop_msg = true;
            }
            return;
        }
        // check_op_valid: the QP's remote access rights.
        let placement = flush_placement(&pkt);
        if !decide::check_op_valid(eng.attrs.qp_access_flags, mask, placement) {
            if self.qp_type == QpType::Rc {
                self.fail(eng, out, psn, INVALID);
            } else {
                self.abandon_recv(eng, IB_WC_REM_INV_REQ_ERR);
                eng.resp.drop_msg = true;
            }
            return;
        }
        // check_resource: a responder resource for reads, atomics and atomic writes.
        if !decide::has_rd_atomic_resource(mask, eng.attrs.max_dest_rd_atomic) {
            self.fail(eng, out, psn, INVALID);
            return;
        }
        // check_resource: a receive WQE for sends and writes with immediate.
        if mask.contains(Mask::RWR) && eng.resp.recv.is_none() {
            match self.take_recv_wqe(eng) {
                Some(recv) => eng.resp.recv = Some(recv),
                None => {
                    if self.qp_type == QpType::Rc {
                        rxe.count(Counter::SndRnr);
                        let timer = eng.attrs.min_rnr_timer;
                        self.send_ack(eng, out, Syndrome::RnrNak { timer }, psn);
                    }
                    return;
                }
            }
            if matches!(self.qp_type, QpType::Ud | QpType::Gsi) {
                // rxe_resp_check_length (UD): too big for the buffer is the sender's fault,
                // not a reason to move this QP to ERROR.
                let recv_len = eng.resp.recv.as_ref().map_or(0, |r| r.wqe.length);
                if !decide::ud_fits(pkt.payload().len() as u32, recv_len) {
                    self.abandon_recv(eng, IB_WC_REM_INV_REQ_ERR);
                    return;
                }
                let mut grh = [0u8; GRH_LEN];
                let ip = skb.ip_header();
                if ip.len() >= 40 && ip[0] >> 4 == 6 {
                    grh.copy_from_slice(&ip[..40]);
                } else if ip.len() >= 20 {
                    grh[20..].copy_from_slice(&ip[..20]);
                }
                if self.recv_data(eng, rcu, &grh).is_err() {
                    self.fail(eng, out, psn, local(IB_WC_LOC_LEN_ERR));
                    return;
                }
            }
        }
        // rxe_resp_check_length (RC, UC): packet sizes against the MTU, the RETH length.
        let payload_len = pkt.payload().len() as u32;
        if connected {
            let reth_len = pkt.header::<Reth>().map(|r| r.len);
            if !decide::check_length(mask, payload_len, eng.mtu(rxe), reth_len) {
                self.length_error(eng, out, psn);
                return;
            }
        }
        if mask.contains(Mask::RETH) {
            let Some(reth) = pkt.header::<Reth>() else {
                return;
            };
            // RETH requests: a read, a write, an atomic write or a flush.
            let need = decide::required_access(mask, placement);
            // A flush of the whole MR names no range (`IB_FLUSH_MR`).
            let whole_mr = mask.contains(Mask::FLUSH)
                && pkt
                    .header::<Feth>()
                    .is_some_and(|f| f.selectivity_level == 1);
            let len = if whole_mr { 0 } else { reth.len as usize };
            let (mr, va) = if reth.len == 0 && !mask.contains(Mask::FLUSH) {
                (None, reth.va)
            } else {
                match self.lookup_remote(reth.rkey, need, reth.va, len) {
                    Some((mr, va)) => (Some(mr), va),
                    None => {
                        if self.qp_type == QpType::Rc {
                            self.fail(eng, out, psn, ACCESS);
                        } else {
                            // UC: C class D (SRQ) / E (RQ) of RESPST_ERR_RKEY_VIOLATION.
                            self.abandon_recv(eng, IB_WC_REM_ACCESS_ERR);
                            eng.resp.drop_msg = true;
                        }
                        return;
                    }
                }
            };
            if mask.contains(Mask::READ) {
                // C rxe_prepare_res: the read is recorded for its duplicates, by its RETH.
                let mtu = eng.mtu(rxe);
                let res = Resource::read(psn, reth.va, reth.len, reth.rkey, mtu);
                eng.resp.resources.record(res);
                eng.resp.read = Some(ReadReply::new(mr, va, reth.len, psn, true, false));
                // (`ack_psn` stays: C moves it for every request executed but a read.)
                eng.resp.psn = psn_add(res.last_psn, 1);
                eng.resp.opcode = None;
                return;
            }
            eng.resp.write = Some(WriteTarget {
                mr,
                va,
                resid: reth.len,
                length: reth.len,
            });
        }
        if mask.contains(Mask::ATOMIC) {
            let Some(at) = pkt.header::<Atmeth>() else {
                return;
            };
            if at.va % 8 != 0 {
                self.fail(eng, out, psn, INVALID);
                return;
            }
            let Some((mr, va)) = self.lookup_remote(at.rkey, access::REMOTE_ATOMIC, at.va, 8)
            else {
                self.fail(eng, out, psn, ACCESS);
                return;
            };
            let compare = (op & 0x1f == opcode::RC_COMPARE_SWAP).then_some(at.compare);
            let Ok(orig) = mr.atomic(rcu, va, compare, at.swap_add) else {
                self.fail(eng, out, psn, ACCESS);
                return;
            };
            eng.resp
                .resources
                .record(Resource::single(psn, Kind::Atomic { orig }));
            eng.resp.msn = eng.resp.msn.wrapping_add(1);
            eng.resp.psn = psn_add(psn, 1);
            eng.resp.ack_psn = eng.resp.psn;
            eng.resp.opcode = None;
            self.send_atomic_ack(eng, out, psn, orig);
            return;
        }
        // execute: the payload.
        let payload = pkt.payload();
        if mask.contains(Mask::SEND) {
            if let Err(status) = self.recv_data(eng, rcu, payload) {
                self.fail(eng, out, psn, local(status));
                return;
            }
        } else if mask.contains(Mask::ATOMIC_WRITE) {
            // IBA oA19-28: exactly 8 bytes, to an aligned address.
            let ok = payload.len() == 8
                && eng
                    .resp
                    .write
                    .as_ref()
                    .is_some_and(|w| w.resid == 8 && w.va % 8 == 0);
            if !ok {
                self.fail(eng, out, psn, INVALID);
                return;
            }
            let ok = eng.resp.write.as_ref().is_some_and(|w| {
                w.mr.as_ref()
                    .is_some_and(|mr| mr.write(rcu, w.va, payload).is_ok())
            });
            if !ok {
                self.fail(eng, out, psn, ACCESS);
                return;
            }
        } else if mask.contains(Mask::WRITE) {
            // check_rkey: the payload against what the write still expects.
            let mtu = eng.mtu(rxe);
            let fits =
                eng.resp.write.as_ref().map(|w| {
                    decide::check_write_length(w.resid, payload.len() as u32, bth.pad, mtu)
                });
            if fits == Some(false) {
                self.length_error(eng, out, psn);
                return;
            }
            let Some(w) = eng.resp.write.as_mut() else {
                self.fail(eng, out, psn, INVALID);
                return;
            };
            if payload.len() as u32 > w.resid {
                self.fail(eng, out, psn, INVALID);
                return;
            }
            if !payload.is_empty() {
                let ok =
                    w.mr.as_ref()
                        .is_some_and(|mr| mr.write(rcu, w.va, payload).is_ok());
                if !ok {
                    self.fail(eng, out, psn, ACCESS);
                    return;
                }
                w.va += payload.len() as u64;
                w.resid -= payload.len() as u32;
            }
        }
        // SEND_WITH_INV: invalidate the rkey it names. Class J error, as C: the receive WQE
        // completes with REM_INV_REQ_ERR, the request is acknowledged (no NAK: C's
        // `acknowledge` still sees the ACK syndrome) and the QP goes to error.
        if let Some(ieth) = pkt.header::<Ieth>() {
            if mr::invalidate_key(rxe, ieth.rkey).is_err() {
                if eng.resp.recv.is_some() {
                    self.complete_recv_status(eng, IB_WC_REM_INV_REQ_ERR);
                }
                if self.qp_type == QpType::Rc && bth.ack_req {
                    self.send_ack(eng, out, Syndrome::ACK_UNLIMITED, psn);
                }
                eng.resp.write = None;
                self.to_error(eng, None);
                return;
            }
        }
        eng.resp.psn = psn_add(psn, 1);
        eng.resp.ack_psn = eng.resp.psn;
        let end = mask.contains(Mask::END);
        eng.resp.opcode = if end { None } else { Some(op) };
        if end {
            eng.resp.msn = eng.resp.msn.wrapping_add(1);
            if mask.contains(Mask::COMP)
                || (mask.contains(Mask::WRITE) && mask.contains(Mask::IMMDT))
            {
                // `RDMA_NETWORK_IPV4` = 2, `RDMA_NETWORK_IPV6` = 3, by the IP version.
                let net_type = match skb.ip_header().first() {
                    Some(b) if b >> 4 == 6 => 3,
                    _ => 2,
                };
                // C11-37/38: a completion that cannot be written moves the QP to error
                // (done) and the request is not acknowledged: the sender must not see
                // success for a message whose completion was lost.
                if !self.complete_recv(eng, &pkt, IB_WC_SUCCESS, net_type) {
                    eng.resp.write = None;
                    return;
                }
            }
            eng.resp.write = None;
        }
        if self.qp_type != QpType::Rc {
            return;
        }
        // C `acknowledge`: a FLUSH or an ATOMIC WRITE is answered with a zero-length READ
        // RESPONSE ONLY, and recorded so that a duplicate is answered again (C `rxe_prepare_res`).
        match decide::reply(mask, bth.ack_req) {
            Reply::ReadResponseAck => {
                let kind = if mask.contains(Mask::FLUSH) {
                    Kind::Flush
                } else {
                    Kind::AtomicWrite
                };
                eng.resp.resources.record(Resource::single(psn, kind));
                self.send_read_response_ack(eng, out, psn);
            }
            Reply::Ack => self.send_ack(eng, out, Syndrome::ACK_UNLIMITED, psn),
            // Atomics are answered where they execute.
            Reply::AtomicAck | Reply::None => {}
        }
    }

    /// A request already executed (`duplicate_request`): re-acknowledge it, or answer a read,
    /// an atomic, an ATOMIC WRITE or a FLUSH again from the responder resource that recorded it
    /// (`proto::resources`). Not found there (evicted, never executed), not of its kind, or a
    /// read outside the one recorded or with another rkey: dropped, as C's class D.
    fn duplicate(&self, eng: &mut Engine, out: &mut Outbox, pkt: &Packet<'_>) {
        let mask = pkt.info().mask;
        let psn = pkt.bth().psn;
        match decide::duplicate(mask, eng.resp.ack_psn) {
            Duplicate::ReplayRead => {
                let Some(reth) = pkt.header::<Reth>() else {
                    return;
                };
                if let Ok(replay) = eng
                    .resp
                    .resources
                    .replay_read(psn, reth.va, reth.len, reth.rkey)
                {
                    self.replay_read(eng, out, replay);
                }
            }
            Duplicate::ReplayAtomic => {
                if let Ok(orig) = eng.resp.resources.replay_atomic(psn) {
                    self.send_atomic_ack(eng, out, psn, orig);
                }
            }
            Duplicate::ReplayReadResponseAck => {
                let flush = mask.contains(Mask::FLUSH);
                if eng.resp.resources.replay_ack(psn, flush).is_ok() {
                    self.send_read_response_ack(eng, out, psn);
                }
            }
            Duplicate::Ack { psn } => self.send_ack(eng, out, Syndrome::ACK_UNLIMITED, psn),
        }
    }

    /// A duplicate read found among the responder resources: its responses again, from
    /// `replay` (the duplicate's PSN and RETH), without moving `resp.psn` or the MSN. The rkey
    /// is resolved again, as C `rxe_recheck_mr` does (here with the rights and bounds of a new
    /// read too): gone, it is C's `RESPST_ERR_RKEY_VIOLATION`, a NAK and the QP to error.
    fn replay_read(&self, eng: &mut Engine, out: &mut Outbox, replay: ReadReplay) {
        let ReadReplay {
            psn,
            va,
            len,
            rkey,
            from_start,
        } = replay;
        let (mr, va) = if len == 0 {
            (None, va)
        } else {
            match self.lookup_remote(rkey, access::REMOTE_READ, va, len as usize) {
                Some((mr, va)) => (Some(mr), va),
                None => {
                    self.fail(eng, out, psn, ACCESS);
                    return;
                }
            }
        };
        // (Requests wait in the queue while a reply is being sent: no reply in progress.)
        eng.resp.read = Some(ReadReply::new(mr, va, len, psn, from_start, true));
    }

    /// Sends the next read response packet (`read_reply`); whether it made progress.
    fn read_reply(self: &Arc<Self>, eng: &mut Engine, rcu: &rcu::Guard, out: &mut Outbox) -> bool {
        let mtu = eng.mtu(self.dev.data());
        let Some(r) = eng.resp.read.as_mut() else {
            return false;
        };
        let len = r.resid.min(mtu);
        let last = r.resid <= mtu;
        let op = match (r.first, last) {
            (true, true) => opcode::RC_RDMA_READ_RESPONSE_ONLY,
            (true, false) => opcode::RC_RDMA_READ_RESPONSE_FIRST,
            (false, true) => opcode::RC_RDMA_READ_RESPONSE_LAST,
            (false, false) => opcode::RC_RDMA_READ_RESPONSE_MIDDLE,
        };
        let (psn, va, mr, replay) = (r.psn, r.va, r.mr.clone(), r.replay);
        let msn = if last && !replay {
            eng.resp.msn.wrapping_add(1)
        } else {
            eng.resp.msn
        };
        let mut hdrs = Headers::default();
        if op != opcode::RC_RDMA_READ_RESPONSE_MIDDLE {
            hdrs.aeth = Some(Aeth {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn,
            });
        }
        let Some(av) = eng.pri_av else {
            eng.resp.read = None;
            return true;
        };
        let bth = self.resp_bth(eng, op, psn);
        let res = self.build_packet(&av, bth, &hdrs, len as usize, |buf| match &mr {
            Some(mr) => mr.read(rcu, va, buf).map_err(|_| ()),
            None => Ok(()),
        });
        match res {
            Ok(pkt) => {
                out.push(pkt);
            }
            // No skb, or no route for now: the same packet again later, not a busy loop. (C
            // answers with an RNR NAK, which needs the same skb and route.)
            Err(BuildError::NoMemory | BuildError::Unsendable) => {
                self.resume_later(eng);
                return false;
            }
            Err(BuildError::Fill(())) => {
                // The MR went away under the read: NAK it and stop.
                eng.resp.read = None;
                self.fail(eng, out, psn, ACCESS);
                return true;
            }
        }
        let Some(r) = eng.resp.read.as_mut() else {
            return true;
        };
        r.first = false;
        r.psn = psn_add(r.psn, 1);
        r.va += u64::from(len);
        r.resid -= len;
        if last {
            eng.resp.read = None;
            if !replay {
                eng.resp.msn = msn;
            }
        }
        true
    }

    fn resp_bth(&self, eng: &Engine, opcode: u8, psn: u32) -> Bth {
        Bth {
            opcode,
            pkey: DEFAULT_PKEY,
            qpn: eng.attrs.dest_qp_num,
            psn,
            ..Default::default()
        }
    }

    /// Sends an ACK, RNR NAK or NAK for `psn` (`send_ack`).
    fn send_ack(&self, eng: &Engine, out: &mut Outbox, syndrome: Syndrome, psn: u32) {
        let Some(av) = eng.pri_av else { return };
        let hdrs = Headers {
            aeth: Some(Aeth {
                syndrome,
                msn: eng.resp.msn,
            }),
            ..Default::default()
        };
        let bth = self.resp_bth(eng, opcode::RC_ACKNOWLEDGE, psn);
        if let Ok(pkt) = self.build_packet::<()>(&av, bth, &hdrs, 0, |_| Ok(())) {
            out.push(pkt);
        }
    }

    /// Acknowledges a FLUSH or an ATOMIC WRITE: a zero-length RDMA READ RESPONSE ONLY with an
    /// ACK syndrome (C `send_read_response_ack`).
    fn send_read_response_ack(&self, eng: &Engine, out: &mut Outbox, psn: u32) {
        let Some(av) = eng.pri_av else { return };
        let hdrs = Headers {
            aeth: Some(Aeth {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn: eng.resp.msn,
            }),
            ..Default::default()
        };
        let bth = self.resp_bth(eng, opcode::RC_RDMA_READ_RESPONSE_ONLY, psn);
        if let Ok(pkt) = self.build_packet::<()>(&av, bth, &hdrs, 0, |_| Ok(())) {
            out.push(pkt);
        }
    }

    fn send_atomic_ack(&self, eng: &Engine, out: &mut Outbox, psn: u32, orig: u64) {
        let Some(av) = eng.pri_av else { return };
        let hdrs = Headers {
            aeth: Some(Aeth {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn: eng.resp.msn,
            }),
            atmack: Some(Atmack { orig }),
            ..Default::default()
        };
        let bth = self.resp_bth(eng, opcode::RC_ATOMIC_ACKNOWLEDGE, psn);
        if let Ok(pkt) = self.build_packet::<()>(&av, bth, &hdrs, 0, |_| Ok(())) {
            out.push(pkt);
        }
    }

    /// A request failed: NAK it (RC), complete the receive WQE in progress with the status, and
    /// move the QP to error (`do_class_ac_error` and friends).
    fn fail(&self, eng: &mut Engine, out: &mut Outbox, psn: u32, f: Fail) {
        if self.qp_type == QpType::Rc {
            self.send_ack(eng, out, Syndrome::Nak(f.nak), psn);
        }
        if eng.resp.recv.is_some() {
            self.complete_recv_status(eng, f.status);
        }
        eng.resp.write = None;
        eng.resp.read = None;
        self.to_error(eng, Some(f.event));
    }

    /// The MR for a remote access with `rkey`, an MR's or a memory window's (`check_rkey`), and
    /// the MR address `va` stands for (a zero-based window's `va` is an offset).
    fn lookup_remote(
        &self,
        rkey: u32,
        need: u32,
        va: u64,
        len: usize,
    ) -> Option<(Arc<MrShared>, u64)> {
        mr::resolve_rkey(self.dev.data(), self.pd, self.uid, rkey, need, va, len)
    }

    /// The next receive WQE, copied out of the SRQ or the RQ into the QP's spare box.
    fn take_recv_wqe(&self, eng: &mut Engine) -> Option<KBox<RecvInProgress>> {
        let mut recv = match eng.resp.spare_recv.take() {
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
                },
                GFP_ATOMIC,
            )
            .ok()?,
        };
        if self.read_recv_wqe(eng, &mut recv).is_some() {
            Some(recv)
        } else {
            eng.resp.spare_recv = Some(recv);
            None
        }
    }

    /// Fills `recv` with the next receive WQE; `None` if there is none.
    fn read_recv_wqe(&self, eng: &mut Engine, recv: &mut RecvInProgress) -> Option<()> {
        // Bytes past the slot parse as zeros, as in a fresh box.
        recv.bytes.fill(0);
        recv.from_rq = false;
        let max_sge = if let Some(srq) = &self.srq {
            let n = srq.slot_size().min(MAX_RECV_WQE);
            srq.take(&mut recv.bytes[..n])?;
            srq.max_sge
        } else {
            let rq = self.rq.as_ref()?;
            let g = *rq.geometry();
            let ends = g.ends(
                QueueType::FromClient,
                eng.resp.rq_consumer,
                rq.shared_producer(),
            );
            if ends.is_empty() {
                return None;
            }
            let n = (g.slot_size() as usize).min(MAX_RECV_WQE);
            rq.read_slot(eng.resp.rq_consumer, &mut recv.bytes[..n])
                .ok()?;
            recv.from_rq = true;
            self.cap.max_recv_sge
        };
        // A malformed WQE (too many SGEs, lengths that do not add up) gets a zero-length buffer:
        // the data then fails with LOC_LEN_ERR, as it has nowhere to go.
        let wqe = RecvWqe::parse(&recv.bytes, max_sge.max(1)).unwrap_or(RecvWqe {
            wr_id: u64::from_ne_bytes(recv.bytes[..8].try_into().unwrap_or([0; 8])),
            num_sge: 0,
            length: 0,
        });
        recv.wqe = wqe;
        recv.dma = DmaCursor::new(wqe.length);
        Some(())
    }

    /// Copies `data` into the receive WQE in progress (`send_data_in`); the CQE status on failure.
    fn recv_data(&self, eng: &mut Engine, rcu: &rcu::Guard, data: &[u8]) -> Result<(), WcStatus> {
        let Some(recv) = eng.resp.recv.as_mut() else {
            return Err(IB_WC_LOC_LEN_ERR);
        };
        if data.len() as u32 > recv.dma.resid {
            return Err(IB_WC_LOC_LEN_ERR);
        }
        let mut done = 0usize;
        let RecvInProgress {
            wqe: recv_wqe,
            bytes,
            dma,
            ..
        } = &mut **recv;
        let num_sge = recv_wqe.num_sge;
        while done < data.len() {
            let chunk = dma
                .next_chunk(
                    |i| wqe::recv_sge(bytes, i),
                    num_sge,
                    (data.len() - done) as u32,
                )
                .map_err(|e| e.recv_status())?
                .ok_or(IB_WC_LOC_LEN_ERR)?;
            let len = chunk.len as usize;
            let mr = lookup_local(self, chunk.lkey, access::LOCAL_WRITE, chunk.addr, len)
                .map_err(|_| IB_WC_LOC_PROT_ERR)?;
            mr.write(rcu, chunk.addr, &data[done..done + len])
                .map_err(|_| IB_WC_LOC_PROT_ERR)?;
            done += len;
        }
        Ok(())
    }

    /// `RESPST_ERR_LENGTH`: on RC class C (NAK invalid request, the receive WQE completes
    /// `REM_INV_REQ_ERR`, QP to error); on UC the message is dropped and its receive WQE
    /// completed `REM_INV_REQ_ERR` (SRQ, class E) or reused (RQ, class D).
    fn length_error(&self, eng: &mut Engine, out: &mut Outbox, psn: u32) {
        if self.qp_type == QpType::Rc {
            self.fail(eng, out, psn, INVALID);
        } else {
            self.abandon_recv(eng, IB_WC_REM_INV_REQ_ERR);
            eng.resp.drop_msg = true;
            eng.resp.opcode = None;
            eng.resp.write = None;
        }
    }

    /// A UC message abandoned part-way, or a UD message too big for its buffer: its receive WQE, if it has one, is completed with
    /// `status` when it came from the SRQ (which it has left) or put back in the RQ
    /// (`proto::resp::abandon_recv`, C `do_class_d1e_error`). The message's state is the
    /// caller's.
    fn abandon_recv(&self, eng: &mut Engine, status: WcStatus) {
        let Some(from_srq) = eng.resp.recv.as_ref().map(|r| !r.from_rq) else {
            return;
        };
        match decide::abandon_recv(from_srq, status) {
            Abandon::Complete(status) => self.complete_recv_status(eng, status),
            Abandon::Reuse => {
                eng.resp.release_recv();
            }
        }
    }

    /// Completes the receive WQE of a message that arrived (`do_complete`); `false` if the CQ
    /// had no room for the completion (the QP is then in error).
    fn complete_recv(
        &self,
        eng: &mut Engine,
        pkt: &Packet<'_>,
        status: WcStatus,
        ip_net_type: u8,
    ) -> bool {
        let Some(recv) = eng.resp.recv.as_ref() else {
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
                eng.resp.write.as_ref().map_or(0, |w| w.length)
            } else {
                recv.wqe.length - recv.dma.resid
            },
            qp_num: self.qpn,
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
            if !self.is_user {
                wc.wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
                net_type = ip_net_type;
            }
        }
        self.dev.data().count(Counter::RdmaRecv);
        self.post_recv_cqe(eng, &wc, pkt.bth().se, net_type)
    }

    fn complete_recv_status(&self, eng: &mut Engine, status: WcStatus) {
        let Some(recv) = eng.resp.recv.as_ref() else {
            return;
        };
        let wc = UverbsWc {
            wr_id: recv.wqe.wr_id,
            status,
            opcode: IB_WC_RECV,
            qp_num: self.qpn,
            port_num: 1,
            ..Default::default()
        };
        self.post_recv_cqe(eng, &wc, false, 0);
    }

    /// Posts a receive CQE and frees the WQE it completes; `false` if the CQ was full (the QP
    /// goes to error, as C's `RESPST_ERR_CQ_OVERFLOW`).
    fn post_recv_cqe(
        &self,
        eng: &mut Engine,
        wc: &UverbsWc,
        solicited: bool,
        net_type: u8,
    ) -> bool {
        let from_rq = eng.resp.release_recv();
        // The slot is free before the CQE says so (as C's `do_complete`).
        if from_rq {
            if let Some(rq) = &self.rq {
                eng.resp.rq_consumer = rq.geometry().next_index(eng.resp.rq_consumer);
                rq.publish_consumer(eng.resp.rq_consumer);
            }
        }
        if self.rcq.post_ext(wc, solicited, net_type).is_err() {
            self.to_error(eng, Some(IbEvent::QpFatal));
            return false;
        }
        true
    }

    /// In the error state every posted receive completes with `WR_FLUSH_ERR`
    /// (`flush_recv_queue`; an SRQ is shared and not flushed).
    fn flush_recv_queue(&self, eng: &mut Engine) -> bool {
        if eng.resp.recv.is_some() {
            self.complete_recv_status(eng, IB_WC_WR_FLUSH_ERR);
            return true;
        }
        let Some(rq) = &self.rq else { return false };
        let g = *rq.geometry();
        let mut progress = false;
        for _ in 0..g.num_slots() {
            let ends = g.ends(
                QueueType::FromClient,
                eng.resp.rq_consumer,
                rq.shared_producer(),
            );
            if ends.is_empty() {
                break;
            }
            let mut bytes = [0u8; 8];
            let _ = rq.read_slot(eng.resp.rq_consumer, &mut bytes);
            let wc = UverbsWc {
                wr_id: u64::from_ne_bytes(bytes),
                status: IB_WC_WR_FLUSH_ERR,
                opcode: IB_WC_RECV,
                qp_num: self.qpn,
                port_num: 1,
                ..Default::default()
            };
            eng.resp.rq_consumer = g.next_index(eng.resp.rq_consumer);
            rq.publish_consumer(eng.resp.rq_consumer);
            let _ = self.rcq.post(&wc, false);
            progress = true;
        }
        progress
    }
}

/// A flush's FETH placement type (0 without a FETH), which decides the rights it needs.
fn flush_placement(pkt: &Packet<'_>) -> u8 {
    pkt.header::<Feth>().map_or(0, |f| f.placement_type)
}

/// A local failure of the responder (length, protection) completing the receive WQE with
/// `status`, NAK'ed as [`decide::recv_failure_nak`] says.
fn local(status: WcStatus) -> Fail {
    Fail {
        nak: decide::recv_failure_nak(status),
        status,
        event: IbEvent::QpFatal,
    }
}
