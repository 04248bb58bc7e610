// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The decisions of the responder (`rxe_resp.c`) before it executes a request: the PSN check
//! (in sequence, out of sequence, duplicate), the opcode sequence (IBA 9.8.3), the QP's remote
//! access rights, and what a duplicate request gets. Pure functions of PSNs, opcodes and
//! masks; the engine (`rxe/resp.rs`) sends the NAKs and ACKs, replays, and keeps the state.

use super::hdr::NakCode;
use super::mw::{ACCESS_REMOTE_ATOMIC, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use super::opcode::{
    Mask, RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_LAST, RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    RC_RDMA_WRITE_MIDDLE, RC_SEND_FIRST, RC_SEND_LAST, RC_SEND_LAST_WITH_IMMEDIATE,
    RC_SEND_LAST_WITH_INVALIDATE, RC_SEND_MIDDLE,
};
use super::psn::{psn_add, psn_diff, PSN_MASK};
use super::wqe::{WcStatus, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR};

/// `IB_ACCESS_FLUSH_GLOBAL`.
pub const ACCESS_FLUSH_GLOBAL: u32 = 1 << 8;
/// `IB_ACCESS_FLUSH_PERSISTENT`.
pub const ACCESS_FLUSH_PERSISTENT: u32 = 1 << 9;

/// Where an RC request's PSN stands ([`check_psn_rc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcPsn {
    /// The PSN expected: go on (and clear `sent_psn_nak`).
    Expected,
    /// Ahead of the PSN expected: packets were lost. Drop it; NAK "PSN sequence error" with
    /// the expected PSN if `nak` (the first time since the last packet in sequence), and set
    /// `sent_psn_nak` (C `RESPST_ERR_PSN_OUT_OF_SEQ`, or `RESPST_CLEANUP` once NAKed).
    OutOfSequence {
        /// Send the NAK.
        nak: bool,
    },
    /// Behind the PSN expected: a request already executed (C `RESPST_DUPLICATE_REQUEST`).
    Duplicate,
}

/// C `check_psn`, RC: `psn` of a request against `expected` (`resp.psn`); `sent_psn_nak` says
/// the out-of-sequence NAK was already sent. (The engine counts the NAKed ones in
/// `OutOfSeqReq`, as C.)
pub const fn check_psn_rc(psn: u32, expected: u32, sent_psn_nak: bool) -> RcPsn {
    let diff = psn_diff(psn, expected);
    if diff > 0 {
        RcPsn::OutOfSequence { nak: !sent_psn_nak }
    } else if diff < 0 {
        RcPsn::Duplicate
    } else {
        RcPsn::Expected
    }
}

/// Where a UC request's PSN stands ([`check_psn_uc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UcPsn {
    /// The PSN expected, no message being dropped: go on.
    InSequence,
    /// A lost packet or a message being dropped, and this packet starts a new message: start
    /// over from it (`resp.psn` = its PSN, `drop_msg` cleared, the message in progress
    /// abandoned).
    Restart,
    /// A lost packet or a message being dropped, inside a message: drop it and the rest of
    /// the message (`drop_msg` set).
    Drop,
}

/// C `check_psn`, UC: UC has no retries, so a gap drops the rest of the message and the
/// responder resynchronises at the next FIRST or ONLY packet (`start`). Unlike C, which leaves
/// `resp.opcode` as it was, the restart forgets the message in progress, so the new message's
/// first packet passes [`check_op_seq`] (C drops it as "missing last", class D1E). The receive
/// WQE of the message forgotten goes as C's class D1E says ([`abandon_recv`]).
pub const fn check_psn_uc(psn: u32, expected: u32, drop_msg: bool, start: bool) -> UcPsn {
    if psn == expected && !drop_msg {
        UcPsn::InSequence
    } else if start {
        UcPsn::Restart
    } else {
        UcPsn::Drop
    }
}

/// What becomes of the receive WQE of a UC message the responder abandons part-way
/// ([`abandon_recv`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandon {
    /// Put it back: an RQ WQE is consumed only when it completes, so the next message starts
    /// it again from its first byte (C class D1: `do_class_d1e_error` resets its DMA state).
    Reuse,
    /// Complete it with this `IB_WC_*` status: an SRQ WQE left the SRQ when the message took
    /// it, and would otherwise be lost (C class E: `do_class_d1e_error` → `RESPST_COMPLETE`).
    /// The QP stays as it is.
    Complete(WcStatus),
}

/// C `do_class_d1e_error` (a UC message left without its LAST packet: a new FIRST or ONLY
/// after a gap, or out of sequence) and the UC cases of `RESPST_ERR_RKEY_VIOLATION` and
/// `RESPST_ERR_LENGTH`: the receive WQE in progress, taken from an SRQ (`from_srq`) or the RQ,
/// is completed with `status` or reused. C uses `IB_WC_REM_INV_REQ_ERR` for a missing LAST or a
/// length error and `IB_WC_REM_ACCESS_ERR` for an rkey violation.
pub const fn abandon_recv(from_srq: bool, status: WcStatus) -> Abandon {
    if from_srq {
        Abandon::Complete(status)
    } else {
        Abandon::Reuse
    }
}

/// An opcode sequence violation ([`check_op_seq`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpSeq {
    /// The packet may follow the one before.
    Ok,
    /// A MIDDLE or LAST with no message in progress (C `RESPST_ERR_MISSING_OPCODE_FIRST`; on
    /// UC: drop the message).
    MissingFirst,
    /// A message in progress and this packet is not its MIDDLE or LAST (C
    /// `RESPST_ERR_MISSING_OPCODE_LAST_C`, UC `_D1E`).
    MissingLast,
}

/// C `check_op_seq` (IBA 9.8.3, C9-93 … C9-96): whether opcode `op` may follow `prev`, the
/// opcode of the last packet of the message in progress (`None` between messages). A SEND
/// continues with SEND MIDDLE or LAST (with immediate or invalidate), an RDMA WRITE with WRITE
/// MIDDLE or LAST (with immediate); between messages no MIDDLE or LAST may come. Compares the
/// low five bits, so it serves RC and UC alike (the receive path has checked the transport).
pub const fn check_op_seq(prev: Option<u8>, op: u8) -> OpSeq {
    let base = op & 0x1f;
    let in_send =
        matches!(prev, Some(p) if p & 0x1f == RC_SEND_FIRST || p & 0x1f == RC_SEND_MIDDLE);
    let in_write = matches!(
        prev,
        Some(p) if p & 0x1f == RC_RDMA_WRITE_FIRST || p & 0x1f == RC_RDMA_WRITE_MIDDLE
    );
    let cont_send = matches!(
        base,
        RC_SEND_MIDDLE | RC_SEND_LAST | RC_SEND_LAST_WITH_IMMEDIATE | RC_SEND_LAST_WITH_INVALIDATE
    );
    let cont_write = matches!(
        base,
        RC_RDMA_WRITE_MIDDLE | RC_RDMA_WRITE_LAST | RC_RDMA_WRITE_LAST_WITH_IMMEDIATE
    );
    if in_send {
        if cont_send {
            OpSeq::Ok
        } else {
            OpSeq::MissingLast
        }
    } else if in_write {
        if cont_write {
            OpSeq::Ok
        } else {
            OpSeq::MissingLast
        }
    } else if cont_send || cont_write {
        OpSeq::MissingFirst
    } else {
        OpSeq::Ok
    }
}

/// The remote rights (`IB_ACCESS_*`) a request of opcode mask `mask` needs, of the QP
/// (`check_op_valid`) and of the MR its RETH names (`check_rkey`): REMOTE_READ for a read,
/// REMOTE_ATOMIC for an atomic, REMOTE_WRITE for a write or an atomic write, for a FLUSH the
/// rights of its FETH placement type `flush_placement` (bit 0 global, bit 1 persistent); none
/// for a SEND.
pub const fn required_access(mask: Mask, flush_placement: u8) -> u32 {
    if mask.contains(Mask::READ) {
        ACCESS_REMOTE_READ
    } else if mask.contains(Mask::ATOMIC) {
        ACCESS_REMOTE_ATOMIC
    } else if mask.contains(Mask::WRITE) || mask.contains(Mask::ATOMIC_WRITE) {
        ACCESS_REMOTE_WRITE
    } else if mask.contains(Mask::FLUSH) {
        let mut need = 0;
        if flush_placement & 1 != 0 {
            need |= ACCESS_FLUSH_GLOBAL;
        }
        if flush_placement & 2 != 0 {
            need |= ACCESS_FLUSH_PERSISTENT;
        }
        need
    } else {
        0
    }
}

/// C `check_op_valid` / `check_qp_attr_access`: whether QP access flags `qp_access_flags`
/// allow a request of opcode mask `mask` (FETH placement type `flush_placement`). The engine
/// applies it on RC (failure: NAK invalid request, QP to error) and on UC (failure: drop the
/// message), where C checks only the WRITE right on UC; the two agree, as UC carries no read,
/// atomic or flush.
pub const fn check_op_valid(qp_access_flags: u32, mask: Mask, flush_placement: u8) -> bool {
    required_access(mask, flush_placement) & !qp_access_flags == 0
}

/// C `check_resource`: a read, an atomic or an atomic write (opcode mask `mask`) needs a
/// responder resource, and a QP with `max_dest_rd_atomic` 0 has none. `false` is C's
/// `RESPST_ERR_TOO_MANY_RDMA_ATM_REQ`, class C: NAK "invalid request", QP to error. (A FLUSH
/// takes a resource in C too but is not refused.)
pub const fn has_rd_atomic_resource(mask: Mask, max_dest_rd_atomic: u8) -> bool {
    !(mask.intersects(Mask::READ_OR_ATOMIC.union(Mask::ATOMIC_WRITE)) && max_dest_rd_atomic == 0)
}

/// The NAK for a request whose data could not be placed in the receive WQE, by the status that
/// WQE completes with (IBA 9.9.2.2, responder class A; C `send_data_in` → `RESPST_ERR_*`): a
/// receive buffer the responder cannot use — an lkey that names no MR, or one without
/// `LOCAL_WRITE` or not covering the SGE (`LOC_PROT_ERR`), or a malformed WQE
/// (`LOC_QP_OP_ERR`) — is the responder's fault, NAK *remote operational error*, which the
/// requester completes `REM_OP_ERR`. A message longer than the buffer (`LOC_LEN_ERR`) is the
/// requester's: NAK *invalid request* (`REM_INV_REQ_ERR`).
pub const fn recv_failure_nak(status: WcStatus) -> NakCode {
    match status {
        IB_WC_LOC_PROT_ERR | IB_WC_LOC_QP_OP_ERR => NakCode::RemoteOperationalError,
        _ => NakCode::InvalidRequest,
    }
}

/// The largest RETH DMA length a request may carry (IBA C9-94, C `rxe_resp_check_length`).
pub const MAX_RETH_LEN: u32 = 1 << 31;

/// Bytes in front of a UD message in its receive buffer: the GRH (`union rdma_network_hdr`).
pub const UD_GRH_LEN: u32 = 40;

/// C `rxe_resp_check_length` for UD and GSI: the GRH and a `payload`-byte message fit a receive
/// buffer of `recv_len` bytes. If not, `RESPST_ERR_LENGTH` on UD: the packet is dropped and its
/// receive WQE goes as [`abandon_recv`] says (RQ: reused; SRQ: `IB_WC_REM_INV_REQ_ERR`); the QP
/// stays as it is, so no remote sender can break a UD QP (QP1 included) with one big packet.
pub const fn ud_fits(payload: u32, recv_len: u32) -> bool {
    payload as u64 + UD_GRH_LEN as u64 <= recv_len as u64
}

/// C `rxe_resp_check_length` for RC and UC (IBA C9-92, C9-94): a packet with a payload of
/// `payload` bytes under path MTU `mtu` is of a legal size for its place in the message (ONLY:
/// at most the MTU; FIRST and MIDDLE: exactly the MTU; LAST: 1 to MTU bytes), and a RETH's
/// DMA length `reth_len` is at most [`MAX_RETH_LEN`]. Failure is `RESPST_ERR_LENGTH`: on RC a
/// NAK "invalid request", the receive WQE in progress completes `IB_WC_REM_INV_REQ_ERR` and the
/// QP goes to error (class C); on UC the message is dropped and the WQE goes as
/// [`abandon_recv`] says. (C's other rule, for UD, is [`ud_fits`].)
pub const fn check_length(mask: Mask, payload: u32, mtu: u32, reth_len: Option<u32>) -> bool {
    if mask.contains(Mask::PAYLOAD) {
        let start = mask.contains(Mask::START);
        let end = mask.contains(Mask::END);
        let ok = if start && end {
            payload <= mtu
        } else if start || mask.contains(Mask::MIDDLE) {
            payload == mtu
        } else if end {
            payload != 0 && payload <= mtu
        } else {
            true
        };
        if !ok {
            return false;
        }
    }
    match reth_len {
        Some(len) => len <= MAX_RETH_LEN,
        None => true,
    }
}

/// C `check_rkey`, RDMA WRITE: a write packet's payload (`payload` bytes, `pad` pad bytes)
/// against the bytes of the write still to come, `resid`: a full MTU without pad while more
/// than an MTU remains, else exactly the rest with the pad that rounds it to 4 bytes. Failure
/// is `RESPST_ERR_LENGTH`, as in [`check_length`]. (C skips it for a zero-length write, which
/// has nothing to check: `resid` 0 and no payload passes.)
pub const fn check_write_length(resid: u32, payload: u32, pad: u8, mtu: u32) -> bool {
    if resid > mtu {
        payload == mtu && pad == 0
    } else {
        payload == resid && pad as u32 == resid.wrapping_neg() & 3
    }
}

/// What a duplicate RC request gets ([`duplicate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplicate {
    /// A read: look it up among the responder resources
    /// ([`Resources::replay_read`](super::resources::Resources::replay_read)) and send its
    /// responses again from there, without moving `resp.psn` or the MSN; dropped if not found.
    ReplayRead,
    /// An atomic: send the acknowledgement of the recorded result again, if the atomic is
    /// still recorded (else drop it: class D).
    ReplayAtomic,
    /// A FLUSH or an ATOMIC WRITE: if it is still recorded among the responder resources,
    /// acknowledge it again with a zero-length READ RESPONSE ONLY at its own PSN, without
    /// executing it again (else drop it: class D).
    ReplayReadResponseAck,
    /// Anything else: acknowledge again (C9-105), with the PSN before `ack_psn`.
    Ack {
        /// The PSN of the ACK.
        psn: u32,
    },
}

/// C `duplicate_request`: what a request behind `resp.psn` with opcode mask `mask` gets. A SEND
/// or a WRITE is acknowledged again with PSN `ack_psn - 1`, where `ack_psn` is C's
/// `qp->resp.ack_psn`: `resp.psn` as it was after the last request executed that was not a
/// read (a read moves `resp.psn` past its responses but leaves `ack_psn`), so after a read the
/// ACK acknowledges only what came before the read. A read, an atomic, a FLUSH or an ATOMIC
/// WRITE is looked up among the responder resources ([`super::resources`]) and answered again
/// from there, or dropped (class D).
pub const fn duplicate(mask: Mask, ack_psn: u32) -> Duplicate {
    if mask.contains(Mask::SEND) || mask.contains(Mask::WRITE) {
        Duplicate::Ack {
            psn: psn_add(ack_psn, PSN_MASK),
        }
    } else if mask.contains(Mask::FLUSH) || mask.contains(Mask::ATOMIC_WRITE) {
        Duplicate::ReplayReadResponseAck
    } else if mask.contains(Mask::READ) {
        Duplicate::ReplayRead
    } else if mask.contains(Mask::ATOMIC) {
        Duplicate::ReplayAtomic
    } else {
        Duplicate::Ack {
            psn: psn_add(ack_psn, PSN_MASK),
        }
    }
}

/// How the responder acknowledges an RC request it executed ([`reply`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Nothing (no AckReq).
    None,
    /// An ACKNOWLEDGE with an ACK syndrome.
    Ack,
    /// An ATOMIC ACKNOWLEDGE with the original value.
    AtomicAck,
    /// A zero-length RDMA READ RESPONSE ONLY with an ACK syndrome (FLUSH, ATOMIC WRITE).
    ReadResponseAck,
}

/// C `acknowledge` (successful case): an atomic gets its ATOMIC ACKNOWLEDGE, a FLUSH or ATOMIC
/// WRITE a zero-length READ RESPONSE ONLY with an AETH (`send_read_response_ack`), whether or
/// not it asked for an acknowledgement; anything else an ACK if `ack_req`.
pub const fn reply(mask: Mask, ack_req: bool) -> Reply {
    if mask.contains(Mask::ATOMIC) {
        Reply::AtomicAck
    } else if mask.contains(Mask::FLUSH) || mask.contains(Mask::ATOMIC_WRITE) {
        Reply::ReadResponseAck
    } else if ack_req {
        Reply::Ack
    } else {
        Reply::None
    }
}
