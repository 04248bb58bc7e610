// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The one error of the engines ([`RxeError`]): how a request or a WQE failed, said the way the
//! QP reports it: the work completion status, the NAK the responder answers with, and the
//! asynchronous event the QP raises as it moves to the error state.
//!
//! The layers below (WQE parsing, the DMA cursor, the MR checks, the control-path errnos) have
//! their own errors; each converts into an `RxeError` with the status the engines give it, and
//! the conversion keeps the layer's error as [`Cause`], so a failure can still be told apart
//! from another with the same status.

use super::hdr::NakCode;
use super::wqe::{
    DmaError, WcStatus, WqeError, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR, IB_WC_MW_BIND_ERR,
    IB_WC_REM_ACCESS_ERR, IB_WC_REM_INV_REQ_ERR,
};
use super::Errno;

/// The asynchronous event a failure raises on its QP (a subset of `enum ib_event_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpEvent {
    /// `IB_EVENT_QP_FATAL`: the QP cannot go on (a local error, a CQ overflow).
    Fatal,
    /// `IB_EVENT_QP_REQ_ERR`: a request the responder cannot accept.
    ReqErr,
    /// `IB_EVENT_QP_ACCESS_ERR`: a remote access the responder refused.
    AccessErr,
}

/// What a lower layer said when it refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The engine's own check refused it (PSN, opcode, rights, length, alignment).
    Check,
    /// A WQE that could not be parsed or validated.
    Wqe(WqeError),
    /// The DMA cursor could not go on through the SGEs or the inline data.
    Dma(DmaError),
    /// A memory region or window refused the access.
    Memory(MemFault),
    /// A control-path operation (bind, invalidate, fast registration) failed with an errno.
    Errno(Errno),
    /// The packet could not be built (no route, headers that do not fit the opcode).
    Unsendable,
}

/// Why a memory region or window refused an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemFault {
    /// No such key, or the region is gone, of another PD or without the rights (an rkey that
    /// does not resolve for the access is reported so, its range included).
    Key,
    /// The addresses lie outside the region.
    Range,
    /// Pages of an on-demand paging region are not mapped: the access waits for them to be
    /// faulted in (from process context) and is tried again; nothing was accessed.
    Absent(Absent),
}

/// The part of an on-demand paging region an access found not mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Absent {
    /// The region's key.
    pub key: u32,
    /// Where the access starts, as the region's addresses go (its iova).
    pub iova: u64,
    /// Its length.
    pub len: u32,
    /// Whether it writes.
    pub write: bool,
}

/// How an engine step failed: what the QP reports, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxeError {
    /// The status the WQE concerned completes with.
    pub status: WcStatus,
    /// The NAK the responder answers an RC request with (`None`: the requester's side).
    pub nak: Option<NakCode>,
    /// The event raised when the QP moves to error (`None`: none, as C's requester).
    pub event: Option<QpEvent>,
    /// The lower layer's error, kept for the reader of a failure.
    pub cause: Cause,
}

impl RxeError {
    /// A request the responder cannot accept (C `RESPST_ERR_*` of class C: invalid request).
    pub const INVALID_REQUEST: Self = Self {
        status: IB_WC_REM_INV_REQ_ERR,
        nak: Some(NakCode::InvalidRequest),
        event: Some(QpEvent::ReqErr),
        cause: Cause::Check,
    };

    /// A remote access the responder refused (C `RESPST_ERR_RKEY_VIOLATION`).
    pub const REMOTE_ACCESS: Self = Self {
        status: IB_WC_REM_ACCESS_ERR,
        nak: Some(NakCode::RemoteAccessError),
        event: Some(QpEvent::AccessErr),
        cause: Cause::Check,
    };

    /// A send WQE the requester fails with `status`: no NAK, no event (the completer completes
    /// it and moves the QP to error).
    pub const fn wqe(status: WcStatus, cause: Cause) -> Self {
        Self {
            status,
            nak: None,
            event: None,
            cause,
        }
    }

    /// A WQE the requester cannot carry out: `LOC_QP_OP_ERR`.
    pub const fn local_op(cause: Cause) -> Self {
        Self::wqe(IB_WC_LOC_QP_OP_ERR, cause)
    }

    /// A local buffer refused (an lkey, an SGE outside its MR): `LOC_PROT_ERR`.
    pub const fn local_protection(cause: Cause) -> Self {
        Self::wqe(IB_WC_LOC_PROT_ERR, cause)
    }

    /// A memory window bind that failed: `MW_BIND_ERR`.
    pub const fn bind(cause: Cause) -> Self {
        Self::wqe(IB_WC_MW_BIND_ERR, cause)
    }

    /// The same failure, as the responder reports it for a receive WQE: the request NAK'ed as
    /// [`crate::proto::resp::recv_failure_nak`] says for the status, the QP fatal.
    pub const fn on_receive(self) -> Self {
        Self {
            nak: Some(super::resp::recv_failure_nak(self.status)),
            event: Some(QpEvent::Fatal),
            ..self
        }
    }

    /// The pages of an on-demand paging region the failed access needs, if that is why it
    /// failed (then it waits for them and is tried again, see [`MemFault::Absent`]).
    pub const fn absent(&self) -> Option<Absent> {
        match self.cause {
            Cause::Memory(MemFault::Absent(a)) => Some(a),
            _ => None,
        }
    }

    /// The same status and NAK, for another cause.
    pub const fn because(self, cause: Cause) -> Self {
        Self { cause, ..self }
    }

    /// The errno a verb returns for this failure: the control path's own for an errno, else
    /// `-EINVAL` (a WQE or buffer the caller got wrong).
    pub const fn to_errno(self) -> i32 {
        match self.cause {
            Cause::Errno(e) => e.to_errno(),
            _ => Errno::Inval.to_errno(),
        }
    }
}

/// A WQE the requester refuses: `LOC_QP_OP_ERR`, as C completes a bad opcode or `num_sge`.
impl From<WqeError> for RxeError {
    fn from(e: WqeError) -> Self {
        Self::wqe(e.wc_status(), Cause::Wqe(e))
    }
}

/// A receive buffer that cannot take the data, with [`DmaError::recv_status`]'s status.
impl From<DmaError> for RxeError {
    fn from(e: DmaError) -> Self {
        Self::wqe(e.recv_status(), Cause::Dma(e))
    }
}

/// A local operation (invalidate, fast registration) refused by the control path:
/// `LOC_QP_OP_ERR`, as C.
impl From<Errno> for RxeError {
    fn from(e: Errno) -> Self {
        Self::local_op(Cause::Errno(e))
    }
}
