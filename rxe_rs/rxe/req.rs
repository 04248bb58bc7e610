// SPDX-License-Identifier: GPL-2.0

//! The requester (`rxe_req.c`): turns send WQEs into request packets.
//!
//! The C driver keeps each WQE's progress (state, PSNs, DMA cursor) inside the WQE in the ring
//! user space maps, and reads the WQE from there every time. Here each WQE is copied out of the
//! ring once, validated, and kept with its progress in [`SendQueue`], kernel memory parallel to
//! the ring: user space can no longer change a WQE it has posted.

use super::{
    device::Counter,
    engine::{BuildError, Engine, Headers, Outbox},
    mr::MrShared,
    qp::QpShared,
};
use crate::proto::{
    av::AddressVector,
    hdr::{Atmeth, Bth, Deth, Feth, Ieth, Immdt, Reth, DEFAULT_PKEY, GSI_QKEY},
    opcode::{self, opcode_info, Mask},
    psn::{psn_add, psn_diff},
    qp_state::{QpState, QpType},
    queue::{Geometry, Index, QueueType},
    wqe::{
        self, next_opcode, DataKind, DmaCursor, SendLimits, SendWqe, WcStatus, WrDetail, WrMask,
        IB_SEND_FENCE, IB_SEND_SOLICITED, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR,
    },
};
use kernel::{prelude::*, sync::rcu, sync::Arc};

/// Unacknowledged PSNs the requester may have in flight (`RXE_MAX_UNACKED_PSNS`).
const MAX_UNACKED_PSNS: u32 = 128;
/// Packets without an ACK request between two with one (`RXE_MAX_PKT_PER_ACK`).
const MAX_PKT_PER_ACK: u32 = 64;

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
    slot_size: usize,
    bytes: KVVec<u8>,
    info: KVVec<WqeInfo>,
}

impl SendQueue {
    pub(crate) fn new(g: &Geometry) -> Result<Self> {
        let slots = g.num_slots() as usize;
        let slot_size = g.slot_size() as usize;
        let mut bytes = KVVec::new();
        bytes.resize(slots * slot_size, 0, GFP_KERNEL)?;
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

    fn slot_mut(&mut self, i: Index) -> &mut [u8] {
        let start = i.get() as usize * self.slot_size;
        self.bytes
            .get_mut(start..start + self.slot_size)
            .unwrap_or(&mut [])
    }

    pub(crate) fn info(&self, i: Index) -> WqeInfo {
        self.info.get(i.get() as usize).copied().unwrap_or_default()
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
    /// In SQD, until the WQEs already started are acknowledged (`attr.sq_draining`); then
    /// `IB_EVENT_SQ_DRAINED`.
    pub(crate) sq_draining: bool,
}

/// The address a packet of this QP goes to: the primary path, or a UD WQE's address handle.
fn dest_av(qp: &QpShared, eng: &Engine, wqe: &SendWqe) -> Option<AddressVector> {
    match wqe.detail {
        WrDetail::Ud { ah_num, .. } => qp.dev.data().ah_av(ah_num),
        _ => eng.pri_av,
    }
}

impl QpShared {
    /// One step of the requester: copy in the next WQE if needed, send its next packet.
    pub(crate) fn requester(
        self: &Arc<Self>,
        eng: &mut Engine,
        rcu: &rcu::Guard,
        out: &mut Outbox,
    ) -> bool {
        let sqd = match eng.state() {
            QpState::Rts => false,
            QpState::Sqd => true,
            _ => return false,
        };
        if eng.req.rnr_wait || !out.has_room() {
            return false;
        }
        let g = *self.sq.geometry();
        let ends = g.ends(
            QueueType::FromClient,
            eng.comp.consumer,
            self.sq.shared_producer(),
        );
        // The requester's index must lie in [consumer, producer).
        let ahead = eng.req.wqe_index.get().wrapping_sub(ends.consumer().get()) & g.index_mask();
        if ahead >= ends.count() {
            return false;
        }
        let idx = eng.req.wqe_index;
        let mut info = eng.sq.info(idx);
        // SQD: finish (and resend) what was started, start nothing new.
        if sqd && !info.started {
            self.check_sq_drained(eng);
            return false;
        }
        if info.state == WqeState::Free {
            info = self.fetch_wqe(eng, idx);
        }
        match info.state {
            WqeState::Processing => {}
            // Finished or failed WQEs are the completer's; move on to the next.
            _ => {
                eng.req.wqe_index = g.next_index(idx);
                return true;
            }
        }
        let Some(wqe) = info.wqe else {
            return false;
        };
        // Fences (C `rxe_wqe_is_fenced`): a LOCAL_INV waits until every earlier WQE has
        // completed (IBA 10.6.5.1, made mandatory as C does); an `IB_SEND_FENCE` WQE until no
        // read or atomic is outstanding (IBA 10.8.3.3). The completer's next completion runs
        // the requester again (one task).
        if !info.started {
            let fenced = if wqe.opcode == wqe::IB_WR_LOCAL_INV {
                idx != eng.comp.consumer
            } else {
                wqe.send_flags & IB_SEND_FENCE != 0
                    && eng.req.rd_atomic != u32::from(eng.attrs.max_rd_atomic)
            };
            if fenced {
                return false;
            }
        }
        if wqe.mask.contains(WrMask::LOCAL_OP) {
            return self.local_op(eng, idx, &wqe);
        }
        let rc = self.qp_type == QpType::Rc;
        // Window of unacknowledged PSNs.
        if rc && psn_diff(eng.req.psn, psn_add(eng.comp.psn, MAX_UNACKED_PSNS)) > 0 {
            return false;
        }
        // Packets still in the stack (any QP type: UC and UD have no window).
        if !self.may_send() {
            return false;
        }
        let mtu = eng.mtu(self.dev.data());
        let fits = info.dma.resid <= mtu;
        // C10-93.1.1: a UD message longer than the MTU emits no packet and is no error: it
        // completes successfully, one PSN consumed (C's "fake a successful UD send").
        if !fits && matches!(self.qp_type, QpType::Ud | QpType::Gsi) {
            if let Some(info) = eng.sq.info_mut(idx) {
                info.first_psn = eng.req.psn;
                info.last_psn = eng.req.psn;
                info.started = true;
                info.sent = true;
                info.state = WqeState::Pending;
            }
            eng.req.psn = psn_add(eng.req.psn, 1);
            eng.req.opcode = Some(opcode::UD_SEND_ONLY);
            eng.req.wqe_index = g.next_index(idx);
            return true;
        }
        let Some(opcode) = next_opcode(self.qp_type, wqe.opcode, eng.req.opcode, fits) else {
            self.fail_wqe(eng, idx, IB_WC_LOC_QP_OP_ERR);
            return true;
        };
        let Some(op_info) = opcode_info(opcode) else {
            self.fail_wqe(eng, idx, IB_WC_LOC_QP_OP_ERR);
            return true;
        };
        let Some(av) = dest_av(self, eng, &wqe) else {
            self.fail_wqe(eng, idx, IB_WC_LOC_QP_OP_ERR);
            return true;
        };
        let mask = op_info.mask;
        let needs_credit = rc
            && mask.contains(Mask::START)
            // As C `check_init_depth`: an ATOMIC WRITE takes a credit too.
            && wqe
                .mask
                .intersects(WrMask::ATOMIC_OR_READ.union(WrMask::ATOMIC_WRITE))
            && !info.rd_atomic_credit;
        if needs_credit && eng.req.rd_atomic == 0 {
            return false;
        }
        let is_read = mask.contains(Mask::READ);
        let is_atomic = mask.contains(Mask::ATOMIC);
        let payload = if mask.contains(Mask::PAYLOAD) {
            info.dma.resid.min(mtu)
        } else {
            0
        };
        let end = mask.contains(Mask::END);
        // Packets of a read: one request, `npsn` responses.
        let npsn = if is_read {
            (wqe.length - info.read_offset).div_ceil(mtu).max(1)
        } else {
            1
        };
        let psn = eng.req.psn;
        eng.req.noack_pkts += 1;
        let ack_req = rc && (end || eng.req.noack_pkts > MAX_PKT_PER_ACK);
        if ack_req {
            eng.req.noack_pkts = 0;
        }
        let dest_qpn = match wqe.detail {
            WrDetail::Ud { remote_qpn, .. } => remote_qpn,
            _ => eng.attrs.dest_qp_num,
        };
        let bth = Bth {
            opcode,
            // As C: solicited only on the last packet of a SEND or an RDMA WRITE with immediate.
            se: end
                && wqe.send_flags & IB_SEND_SOLICITED != 0
                && (mask.contains(Mask::SEND) || mask.contains(Mask::WRITE.union(Mask::IMMDT))),
            pkey: DEFAULT_PKEY,
            qpn: dest_qpn,
            ack_req,
            psn,
            ..Default::default()
        };
        let mut hdrs = Headers::default();
        if mask.contains(Mask::RETH) {
            let (va, rkey, len) = match wqe.detail {
                WrDetail::Rdma { remote_addr, rkey } if is_read => (
                    remote_addr.wrapping_add(u64::from(info.read_offset)),
                    rkey,
                    wqe.length - info.read_offset,
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
                _ if self.qp_type == QpType::Gsi => GSI_QKEY,
                _ => eng.attrs.qkey,
            };
            hdrs.deth = Some(Deth {
                qkey,
                sqp: self.qpn,
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
        // The payload: the next `payload` bytes of the WQE's data.
        let mut dma = info.dma;
        let slot = eng.sq.slot(idx);
        let res = self.build_packet(&av, bth, &hdrs, payload as usize, |buf| {
            fill_payload(self, rcu, &wqe, slot, &mut dma, buf)
        });
        match res {
            Ok(pkt) => {
                out.push(pkt);
            }
            Err(BuildError::NoMemory) => {
                self.resume_later(eng);
                return false;
            }
            // A datagram nobody can be sent to is lost on the way, as on hardware; C fails the
            // WQE and errors the QP, which on QP1 would end the device's CM traffic.
            Err(BuildError::Unsendable) if matches!(self.qp_type, QpType::Ud | QpType::Gsi) => {
                self.dev.data().count(Counter::SendErr);
            }
            Err(BuildError::Unsendable) => {
                self.fail_wqe(eng, idx, IB_WC_LOC_QP_OP_ERR);
                return true;
            }
            Err(BuildError::Fill(status)) => {
                self.fail_wqe(eng, idx, status);
                return true;
            }
        }
        // Progress (`update_wqe_state`, `update_wqe_psn`, `update_state`).
        let Some(info) = eng.sq.info_mut(idx) else {
            return true;
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
        info.dma = dma;
        if is_read || is_atomic {
            info.dma.resid = 0;
        }
        if end {
            info.state = WqeState::Pending;
            info.sent = true;
        }
        if needs_credit {
            eng.req.rd_atomic = eng.req.rd_atomic.saturating_sub(1);
            info.rd_atomic_credit = true;
        }
        eng.req.psn = psn_add(psn, npsn);
        eng.req.opcode = Some(opcode);
        if end {
            eng.req.wqe_index = g.next_index(idx);
        }
        if rc {
            // The timer now runs from this packet: an expiry flagged before it is stale.
            eng.comp.timeout = false;
            self.arm_retransmit(eng.attrs.timeout);
        }
        true
    }

    /// `IB_EVENT_SQ_DRAINED` once, when in SQD every WQE the requester started has completed
    /// (acknowledged, on RC): the completer has caught up with the requester, which starts
    /// nothing new in SQD. (C compares PSNs, which a UD or UC send queue never matches.)
    pub(crate) fn check_sq_drained(&self, eng: &mut Engine) {
        if !eng.req.sq_draining
            || eng.state() != QpState::Sqd
            || eng.comp.consumer != eng.req.wqe_index
        {
            return;
        }
        eng.req.sq_draining = false;
        self.handle.event(crate::ib::handles::IbEvent::SqDrained);
    }

    /// Copies WQE `idx` out of the ring and validates it (once per post).
    pub(crate) fn fetch_wqe(&self, eng: &mut Engine, idx: Index) -> WqeInfo {
        let limits = SendLimits {
            max_sge: self.cap.max_send_sge,
            max_inline: self.cap.max_inline_data,
            allow_kernel_only: !self.is_user,
        };
        let slot = eng.sq.slot_mut(idx);
        let parsed = match self.sq.read_slot(idx, slot) {
            Ok(()) => SendWqe::parse(slot, self.qp_type, limits).ok(),
            Err(_) => None,
        };
        let info = match parsed {
            Some(wqe) => WqeInfo {
                wqe: Some(wqe),
                state: WqeState::Processing,
                dma: DmaCursor::new(wqe.length),
                rx_dma: DmaCursor::new(wqe.length),
                ..Default::default()
            },
            // Unparseable: its wr_id is whatever the bytes say; completed with an error.
            None => WqeInfo {
                wqe: None,
                state: WqeState::Error(IB_WC_LOC_QP_OP_ERR),
                ..Default::default()
            },
        };
        if let Some(slot_info) = eng.sq.info_mut(idx) {
            *slot_info = info;
        }
        info
    }

    /// Marks WQE `idx` failed; the completer completes it with `status` and errors the QP.
    fn fail_wqe(&self, eng: &mut Engine, idx: Index, status: WcStatus) {
        if let Some(info) = eng.sq.info_mut(idx) {
            info.state = WqeState::Error(status);
        }
        eng.req.wqe_index = self.sq.geometry().next_index(idx);
        eng.req.opcode = None;
    }
}

/// Copies the next `buf.len()` bytes of a WQE's data (inline or through its SGEs) into `buf`.
fn fill_payload(
    qp: &QpShared,
    rcu: &rcu::Guard,
    wqe: &SendWqe,
    slot: &[u8],
    dma: &mut DmaCursor,
    buf: &mut [u8],
) -> core::result::Result<(), WcStatus> {
    match wqe.data {
        DataKind::Inline => {
            let range = dma
                .next_inline(buf.len() as u32)
                .map_err(|_| IB_WC_LOC_QP_OP_ERR)?;
            let data = wqe::inline_data(slot, wqe.length).ok_or(IB_WC_LOC_QP_OP_ERR)?;
            buf.copy_from_slice(data.get(range).ok_or(IB_WC_LOC_QP_OP_ERR)?);
            Ok(())
        }
        DataKind::AtomicWrite => {
            let v = wqe::atomic_write_value(slot).ok_or(IB_WC_LOC_QP_OP_ERR)?;
            let n = buf.len().min(8);
            buf[..n].copy_from_slice(&v[..n]);
            dma.resid = dma.resid.saturating_sub(n as u32);
            Ok(())
        }
        DataKind::None => Ok(()),
        DataKind::Sges => {
            let mut done = 0usize;
            let sge_at = |i| wqe::sge(slot, i);
            while done < buf.len() {
                let chunk = dma
                    .next_chunk(sge_at, wqe.num_sge, (buf.len() - done) as u32)
                    .map_err(|_| IB_WC_LOC_PROT_ERR)?
                    .ok_or(IB_WC_LOC_PROT_ERR)?;
                let len = chunk.len as usize;
                let mr = lookup_local(qp, chunk.lkey, 0, chunk.addr, len)?;
                mr.read(rcu, chunk.addr, &mut buf[done..done + len])
                    .map_err(|_| IB_WC_LOC_PROT_ERR)?;
                done += len;
            }
            Ok(())
        }
    }
}

/// An MR of this QP's PD for a local access (`lookup_mr` with an lkey).
pub(crate) fn lookup_local(
    qp: &QpShared,
    lkey: u32,
    access: u32,
    addr: u64,
    len: usize,
) -> core::result::Result<Arc<MrShared>, WcStatus> {
    let mr = qp.dev.data().mr(lkey).ok_or(IB_WC_LOC_PROT_ERR)?;
    mr.check(lkey, qp.pd, access, addr, len)
        .map_err(|_| IB_WC_LOC_PROT_ERR)?;
    Ok(mr)
}
