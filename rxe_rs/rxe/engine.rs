// SPDX-License-Identifier: GPL-2.0

//! A QP's engine state: what the requester, completer and responder (`rxe_req.c`,
//! `rxe_comp.c`, `rxe_resp.c`) keep between steps, under the QP's one lock ([`Engine`]). The
//! machines' steps are in `req.rs`, `comp.rs` and `resp.rs`; `task.rs` runs them and sends the
//! packets a step builds (`outbox.rs`).
//!
//! The C driver has two tasks per QP (send: requester + completer; receive: responder) and takes
//! the QP's locks between them. Here one task runs all three, so their shared state sits under
//! one lock that only the task takes in the data path; `modify_qp` and `query_qp` take it with
//! bottom halves disabled.

use super::mr::{KeyUse, MrError, MrShared};
use crate::ib::{handles::IbEvent, qp::QpAttrs};
use crate::net::skb::SkBuff;
pub(crate) use crate::proto::error::{Absent, Cause, MemFault, QpEvent, RxeError};
use crate::proto::{
    av::AddressVector,
    packet_ring::REQUEST_LEN,
    qp_state::{QpState, IB_QP_AV, IB_QP_RQ_PSN, IB_QP_SQ_PSN},
    queue::{Geometry, Index},
    resources::{Resource, Resources},
    wqe::{self, DmaCursor, RecvWqe, SendWqe},
};
use kernel::{prelude::*, sync::Arc};

/// The engine's state: attributes and the three machines.
pub(crate) struct Engine {
    /// The attributes as `modify_qp` stored them; the state and the path MTU are read decoded
    /// (`state`, `path_mtu`): `modify_qp` calls [`Self::decode_attrs`] after storing them, and
    /// the state is changed through [`Self::set_state`].
    pub(crate) attrs: QpAttrs,
    /// `attrs.qp_state`, decoded: asked several times a step.
    state: QpState,
    /// `attrs.path_mtu` in bytes (256 for a value outside the enum), asked for every packet.
    path_mtu: u32,
    pub(crate) pri_av: Option<AddressVector>,
    pub(crate) alt_av: Option<AddressVector>,
    pub(crate) req: ReqState,
    pub(crate) comp: CompState,
    pub(crate) resp: RespState,
    pub(crate) sq: SendQueue,
    /// RC or UC (path MTU, PSN checks).
    connected: bool,
    /// The IPv4 ID of the first packet the next step builds: the QP's packets count up by one
    /// from step to step, so that a receiver's GRO may chain them past a step's burst
    /// (`ffi/shim.c`, bursts on receive).
    pub(crate) next_ip_id: u16,
}

impl Engine {
    pub(crate) fn new(attrs: QpAttrs, sq: &Geometry, connected: bool) -> Result<Self> {
        let mut eng = Self {
            attrs,
            state: QpState::Reset,
            path_mtu: 256,
            pri_av: None,
            alt_av: None,
            req: ReqState::default(),
            comp: CompState::default(),
            resp: RespState::default(),
            sq: SendQueue::new(sq)?,
            connected,
            next_ip_id: 0,
        };
        eng.decode_attrs();
        Ok(eng)
    }

    pub(crate) fn state(&self) -> QpState {
        self.state
    }

    /// Moves the engine to `state` (`attrs.qp_state` with it).
    pub(crate) fn set_state(&mut self, state: QpState) {
        self.attrs.qp_state = state as u32;
        self.state = state;
    }

    /// Decodes what the machines read of `attrs` (after `modify_qp` stored new ones).
    pub(crate) fn decode_attrs(&mut self) {
        self.state = QpState::from_raw(self.attrs.qp_state).unwrap_or(QpState::Reset);
        self.path_mtu =
            crate::proto::params::IbMtu::from_raw(self.attrs.path_mtu).map_or(256, |m| m.bytes());
    }

    /// Side effects of `modify_qp` on the machines (`rxe_qp_from_attr`).
    pub(crate) fn modified(&mut self, mask: u32, old: QpState, new: QpState) {
        if mask & IB_QP_SQ_PSN != 0 {
            self.req.psn = self.attrs.sq_psn;
            self.comp.psn = self.attrs.sq_psn;
            self.comp.retry_psn = None;
        }
        if mask & IB_QP_RQ_PSN != 0 {
            self.resp.psn = self.attrs.rq_psn;
            // Unlike C, which leaves `ack_psn` at 0 until a request executes (see `RespState`).
            self.resp.ack_psn = self.attrs.rq_psn;
        }
        if mask & IB_QP_AV != 0 {
            // The C driver keeps no cached route either way; nothing to do.
        }
        if new == QpState::Reset && old != QpState::Reset {
            self.req = ReqState {
                psn: self.req.psn,
                ..Default::default()
            };
            self.resp.reset();
        }
        if new == QpState::Sqd && old != QpState::Sqd {
            self.req.sq_draining = true;
        }
        if new != QpState::Sqd {
            self.req.sq_draining = false;
        }
        if new == QpState::Rts && old != QpState::Rts {
            self.req.rd_atomic = u32::from(self.attrs.max_rd_atomic);
            self.restore_retries();
        }
    }

    /// The MTU of this QP's packets: the path MTU for connected QPs, the port's for datagrams
    /// (`get_mtu`).
    pub(crate) fn mtu(&self, port_mtu: u32) -> u32 {
        if !self.connected {
            return port_mtu;
        }
        self.path_mtu.min(port_mtu)
    }
}

/// A local buffer an MR refused (dead, key, PD, rights, range): `LOC_PROT_ERR`.
impl From<MrError> for RxeError {
    fn from(e: MrError) -> Self {
        Self::local_protection(e.into())
    }
}

impl From<MrError> for Cause {
    fn from(e: MrError) -> Self {
        Cause::Memory(match e {
            MrError::Key => MemFault::Key,
            MrError::Range => MemFault::Range,
            MrError::Absent(a) => MemFault::Absent(a),
        })
    }
}

/// The event an engine error raises, as ib_core knows it.
impl From<QpEvent> for IbEvent {
    fn from(e: QpEvent) -> Self {
        match e {
            QpEvent::Fatal => Self::QpFatal,
            QpEvent::ReqErr => Self::QpReqErr,
            QpEvent::AccessErr => Self::QpAccessErr,
        }
    }
}

pub(crate) use crate::proto::packet::Headers;

/// The payload of an RC packet carrying a whole page or more (path MTU 4096) goes by reference
/// (page fragments of the memory it comes from) rather than by copy. A smaller payload is
/// copied into its skb: a fragment costs a trailer allocation, page references and reading in
/// pieces, about what a 1 KiB copy costs (`performance.md`, "Payloads by reference"); looped
/// back, it goes without an skb (`QpShared::deliver_referenced`). RC only: its requester
/// completes a work request once the responder acknowledged the data, so no buffer is reused
/// while a packet may still refer to it; UC and UD complete on sending, and a reused buffer
/// would change a packet after its ICRC.
pub(crate) const BY_REFERENCE_MIN: u32 = 4096;

/// Why [`QpShared::build_packet`] built nothing.
pub(crate) enum BuildError<E> {
    /// No socket buffer (a GFP_ATOMIC allocation under memory pressure): transient, the caller
    /// tries again later ([`QpShared::resume_later`]).
    NoMemory,
    /// No route to the destination, or headers that do not fit the opcode: C completes the
    /// WQE with `LOC_QP_OP_ERR`.
    Unsendable,
    /// `fill` failed with this.
    Fill(E),
}

// The state of each machine (`qp->req`, `qp->comp`, `qp->resp` in C). Their steps are in
// `req.rs`, `comp.rs` and `resp.rs`.

/// Where a WQE is in its life (`enum wqe_state`); the completer's decisions take it.
pub(crate) use crate::proto::comp::WqeState;

/// One WQE, as the engine knows it.
#[derive(Clone, Copy, Default)]
pub(crate) struct WqeInfo {
    pub(crate) wqe: Option<SendWqe>,
    pub(crate) state: WqeState,
    pub(crate) first_psn: u32,
    pub(crate) last_psn: u32,
    /// Where sending stands in the WQE's data.
    pub(crate) dma: DmaCursor,
    /// Where read responses / the atomic result go in the WQE's SGEs.
    pub(crate) rx_dma: DmaCursor,
    /// Every packet was sent at least once, so `last_psn` is final (a retry resends with the
    /// same PSNs, and an ACK of `last_psn` completes the WQE even while it is being resent).
    pub(crate) sent: bool,
    /// The first packet was sent at least once, so `first_psn` is set.
    pub(crate) started: bool,
    /// Bytes of a read already answered when it is resent (`req_retry` moves `iova` on).
    pub(crate) read_offset: u32,
    /// The WQE holds one of the QP's read/atomic credits until it completes
    /// (`has_rd_atomic`): retries resend without taking another.
    pub(crate) rd_atomic_credit: bool,
}

/// The kernel's copy of the send queue.
pub(crate) struct SendQueue {
    pub(super) slot_size: usize,
    pub(super) bytes: KVVec<u8>,
    pub(super) info: KVVec<WqeInfo>,
}

impl SendQueue {
    pub(crate) fn new(g: &Geometry) -> Result<Self> {
        let slots = g.num_slots() as usize;
        let slot_size = g.slot_size() as usize;
        // Zeroed by the allocator: `resize` writes a byte at a time (262 k instructions for a
        // 64 KiB queue, per QP created).
        let bytes = KVVec::zeroed(slots * slot_size, GFP_KERNEL)?;
        let mut info = KVVec::new();
        info.resize(slots, WqeInfo::default(), GFP_KERNEL)?;
        Ok(Self {
            slot_size,
            bytes,
            info,
        })
    }

    /// The private bytes of slot `i`.
    pub(crate) fn slot(&self, i: Index) -> &[u8] {
        let start = i.get() as usize * self.slot_size;
        self.bytes.get(start..start + self.slot_size).unwrap_or(&[])
    }

    /// The private bytes of slot `i` and its info, both to write.
    pub(super) fn slot_and_info_mut(&mut self, i: Index) -> Option<(&mut [u8], &mut WqeInfo)> {
        let start = i.get() as usize * self.slot_size;
        let slot = self.bytes.get_mut(start..start + self.slot_size)?;
        Some((slot, self.info.get_mut(i.get() as usize)?))
    }

    pub(crate) fn info(&self, i: Index) -> WqeInfo {
        self.info.get(i.get() as usize).copied().unwrap_or_default()
    }

    pub(crate) fn info_ref(&self, i: Index) -> Option<&WqeInfo> {
        self.info.get(i.get() as usize)
    }

    pub(crate) fn info_mut(&mut self, i: Index) -> Option<&mut WqeInfo> {
        self.info.get_mut(i.get() as usize)
    }
}

/// The requester's state (`qp->req`).
#[derive(Default)]
pub(crate) struct ReqState {
    /// Next PSN to send.
    pub(crate) psn: u32,
    /// BTH opcode of the last packet sent (`qp->req.opcode`), `None` after a reset or retry.
    pub(crate) opcode: Option<u8>,
    /// Next WQE to send from (between the completer's consumer index and the producer).
    pub(crate) wqe_index: Index,
    /// Read/atomic credits left (`max_rd_atomic`).
    pub(crate) rd_atomic: u32,
    /// Packets since the last ACK request.
    pub(crate) noack_pkts: u32,
    /// Waiting for the RNR timer before retrying.
    pub(crate) rnr_wait: bool,
    /// The PSN the last RNR NAK named, until it is acknowledged: the retry sends that packet
    /// alone, with AckReq, and the rest of the window after its ACK, rather than a window a
    /// responder still without a receive WQE drops (C resends the whole window).
    pub(crate) rnr_probe: Option<u32>,
    /// In SQD, until the WQEs already started are acknowledged (`attr.sq_draining`); then
    /// `IB_EVENT_SQ_DRAINED`.
    pub(crate) sq_draining: bool,
    /// Waiting for pages of an ODP MR the next packet gathers from.
    pub(crate) fault: FaultWait,
    /// `comp.psn` at which the last WQE sent that must complete promptly is acknowledged
    /// (`proto::comp::AckWait::awaited`); `None` once reached.
    pub(crate) awaited: Option<u32>,
}

/// One of a QP's three machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Machine {
    Requester,
    Completer,
    Responder,
}

impl Engine {
    /// Machine `m`'s wait for an ODP fault.
    pub(crate) fn fault_wait(&mut self, m: Machine) -> &mut FaultWait {
        match m {
            Machine::Requester => &mut self.req.fault,
            Machine::Completer => &mut self.comp.fault,
            Machine::Responder => &mut self.resp.fault,
        }
    }
}

/// A machine's wait for pages of an on-demand paging MR (`rxe/odp.rs`): an access found them
/// not mapped, accessed nothing, and the machine stopped where it was while work faults them
/// in from process context; then it runs the same step again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FaultWait {
    /// Not waiting.
    #[default]
    None,
    /// The fault is being taken; the machine does nothing until it is done.
    Waiting,
    /// The fault of this range failed (it is not mapped in the process any more): the same
    /// access, if it finds the pages missing again, fails as C's does (`-EFAULT`); another one
    /// faults anew.
    Failed(Absent),
}

/// The completer's state (`qp->comp`).
#[derive(Default)]
pub(crate) struct CompState {
    /// Next PSN expected in a response.
    pub(crate) psn: u32,
    /// The send queue's consumer index: the oldest WQE not completed.
    pub(crate) consumer: Index,
    /// Retries left (`retry_cnt`, 7 = infinite) and RNR retries left (`rnr_retry`).
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry: u8,
    /// The retransmit timer expired.
    pub(crate) timeout: bool,
    /// `comp.psn` when the last retry started (`started_retry`): until a response moves it on,
    /// responses do not start another one — the rest of a stream that was already retried,
    /// arriving out of order, would otherwise retry once per packet and make the responder
    /// replay without end. Timeouts always retry.
    pub(crate) retry_psn: Option<u32>,
    /// Waiting for pages of an ODP MR a response lands in.
    pub(crate) fault: FaultWait,
    /// The response that waits for them, handled again when they are there.
    pub(crate) paused: Option<SkBuff>,
}

/// The largest receive WQE: header and 32 SGEs.
pub(super) const MAX_RECV_WQE: usize = wqe::RECV_WQE_DATA_OFFSET + 32 * 16;

/// The receive WQE a message is landing in (copied out of the ring once).
pub(super) struct RecvInProgress {
    pub(super) wqe: RecvWqe,
    pub(super) bytes: [u8; MAX_RECV_WQE],
    pub(super) dma: DmaCursor,
    /// Taken from the RQ (consumed at completion) rather than the SRQ (consumed at take).
    pub(super) from_rq: bool,
    /// Why the WQE does not parse (more SGEs than the queue takes, lengths that do not add
    /// up): the message landing in it fails as a malformed WQE.
    pub(super) malformed: Option<wqe::WqeError>,
}

/// An RDMA write in progress.
pub(super) struct WriteTarget {
    pub(super) mr: Option<Arc<MrShared>>,
    /// How the rkey reached `mr`, checked again for every later packet.
    pub(super) key: Option<KeyUse>,
    pub(super) va: u64,
    pub(super) resid: u32,
    pub(super) length: u32,
}

/// Read responses still to send.
pub(super) struct ReadReply {
    pub(super) mr: Option<Arc<MrShared>>,
    /// How the rkey reached `mr`, checked again before every response after the first.
    pub(super) key: Option<KeyUse>,
    pub(super) va: u64,
    pub(super) resid: u32,
    pub(super) psn: u32,
    /// The next response starts the read: FIRST or ONLY (else MIDDLE or LAST).
    pub(super) first: bool,
    /// A replay for a duplicate request: leaves `resp.psn` and the MSN alone.
    pub(super) replay: bool,
}

impl ReadReply {
    /// The reply to a read of `len` bytes at `va` (in `mr`) whose first response has PSN `psn`
    /// and is a FIRST or ONLY (`first`) or a MIDDLE or LAST (a replay resuming a read).
    ///
    /// The reply is a copy: it holds its MR, cursor and PSN, not a responder resource, so a
    /// resource slot recorded again (or the ring replaced by `modify_qp`) while it is being
    /// sent does not change it. (C sends from the resource itself, `qp->resp.res`; it cannot
    /// be recorded over while set, as no request is taken until the reply is done.)
    pub(super) fn new(
        (mr, key): (Option<Arc<MrShared>>, Option<KeyUse>),
        va: u64,
        len: u32,
        psn: u32,
        first: bool,
        replay: bool,
    ) -> Self {
        Self {
            mr,
            key,
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
    pub(super) msn: u32,
    /// Opcode of the last request of the message in progress.
    pub(super) opcode: Option<u8>,
    pub(super) sent_psn_nak: bool,
    /// UC: drop until the next first packet.
    pub(super) drop_msg: bool,
    pub(super) recv: Option<KBox<RecvInProgress>>,
    /// `recv`'s box between messages: one per QP, allocated at its first receive, so the data
    /// path does not allocate per message (C copies into its QP, `qp->resp.srq_wqe`).
    pub(super) spare_recv: Option<KBox<RecvInProgress>>,
    pub(super) write: Option<WriteTarget>,
    pub(super) read: Option<ReadReply>,
    /// The responder resources (C `qp->resp.resources`): the last `max_dest_rd_atomic` reads,
    /// atomics, ATOMIC WRITEs and FLUSHes executed, from which duplicates are answered
    /// (`proto::resources`). Replaced by `modify_qp` with `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub(super) resources: Resources<KVec<Option<Resource>>>,
    /// The RQ's consumer index.
    pub(super) rq_consumer: Index,
    /// `IB_EVENT_QP_LAST_WQE_REACHED` was raised for this error state (QPs on an SRQ).
    pub(super) last_wqe_reached: bool,
    /// `IB_EVENT_COMM_EST` was raised: the QP received in RTR (once until a reset).
    pub(super) comm_est: bool,
    /// Waiting for pages of an ODP MR a request or a read response needs.
    pub(crate) fault: FaultWait,
    /// The request that waits for them, handled again when they are there.
    pub(crate) paused: Option<TakenRequest>,
}

/// A request taken out of the queue it came from. One that waits for pages of an ODP MR
/// ([`RespState::paused`]) is older than every request still queued, so the responder handles
/// it first.
pub(crate) enum TakenRequest {
    Skb(SkBuff),
    /// A request of the request ring (`QpShared::requests`): its first `len` bytes and tag.
    Ring {
        bytes: [u8; REQUEST_LEN],
        len: usize,
        tag: u8,
    },
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
    pub(super) fn release_recv(&mut self) -> bool {
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
