// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The BTH opcode of the requester's next packet: [`next_opcode`], C `next_opcode()` of
//! `rxe_req.c` with its `next_opcode_rc()` and `next_opcode_uc()`.

use super::verbs::{
    IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_ATOMIC_WRITE, IB_WR_FLUSH,
    IB_WR_RDMA_READ, IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_SEND, IB_WR_SEND_WITH_IMM,
    IB_WR_SEND_WITH_INV,
};
use crate::proto::opcode::{
    RC_ATOMIC_WRITE, RC_COMPARE_SWAP, RC_FETCH_ADD, RC_FLUSH, RC_RDMA_READ_REQUEST,
    RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_LAST, RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
    RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_ONLY, RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, RC_SEND_FIRST,
    RC_SEND_LAST, RC_SEND_LAST_WITH_IMMEDIATE, RC_SEND_LAST_WITH_INVALIDATE, RC_SEND_MIDDLE,
    RC_SEND_ONLY, RC_SEND_ONLY_WITH_IMMEDIATE, RC_SEND_ONLY_WITH_INVALIDATE, UC_RDMA_WRITE_FIRST,
    UC_RDMA_WRITE_LAST, UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, UC_RDMA_WRITE_MIDDLE,
    UC_RDMA_WRITE_ONLY, UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, UC_SEND_FIRST, UC_SEND_LAST,
    UC_SEND_LAST_WITH_IMMEDIATE, UC_SEND_MIDDLE, UC_SEND_ONLY, UC_SEND_ONLY_WITH_IMMEDIATE,
    UD_SEND_ONLY, UD_SEND_ONLY_WITH_IMMEDIATE,
};
use crate::proto::qp_state::QpType;

/// Picks among the four packets of a multi-packet operation: `cont` says the previous packet
/// was a FIRST or MIDDLE of the same kind, `fits` that the rest fits in this packet.
const fn pick(cont: bool, fits: bool, last: u8, middle: u8, only: u8, first: u8) -> u8 {
    match (cont, fits) {
        (true, true) => last,
        (true, false) => middle,
        (false, true) => only,
        (false, false) => first,
    }
}

/// C `next_opcode_rc()`, except for REG_MR and LOCAL_INV (see [`next_opcode`]).
const fn next_opc_rc(wr_opcode: u32, prev: Option<u8>, fits: bool) -> Option<u8> {
    let write = matches!(prev, Some(RC_RDMA_WRITE_FIRST | RC_RDMA_WRITE_MIDDLE));
    let send = matches!(prev, Some(RC_SEND_FIRST | RC_SEND_MIDDLE));
    Some(match wr_opcode {
        IB_WR_RDMA_WRITE => pick(
            write,
            fits,
            RC_RDMA_WRITE_LAST,
            RC_RDMA_WRITE_MIDDLE,
            RC_RDMA_WRITE_ONLY,
            RC_RDMA_WRITE_FIRST,
        ),
        IB_WR_RDMA_WRITE_WITH_IMM => pick(
            write,
            fits,
            RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
            RC_RDMA_WRITE_MIDDLE,
            RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            RC_RDMA_WRITE_FIRST,
        ),
        IB_WR_SEND => pick(
            send,
            fits,
            RC_SEND_LAST,
            RC_SEND_MIDDLE,
            RC_SEND_ONLY,
            RC_SEND_FIRST,
        ),
        IB_WR_SEND_WITH_IMM => pick(
            send,
            fits,
            RC_SEND_LAST_WITH_IMMEDIATE,
            RC_SEND_MIDDLE,
            RC_SEND_ONLY_WITH_IMMEDIATE,
            RC_SEND_FIRST,
        ),
        IB_WR_SEND_WITH_INV => pick(
            send,
            fits,
            RC_SEND_LAST_WITH_INVALIDATE,
            RC_SEND_MIDDLE,
            RC_SEND_ONLY_WITH_INVALIDATE,
            RC_SEND_FIRST,
        ),
        IB_WR_FLUSH => RC_FLUSH,
        IB_WR_RDMA_READ => RC_RDMA_READ_REQUEST,
        IB_WR_ATOMIC_CMP_AND_SWP => RC_COMPARE_SWAP,
        IB_WR_ATOMIC_FETCH_AND_ADD => RC_FETCH_ADD,
        IB_WR_ATOMIC_WRITE => RC_ATOMIC_WRITE,
        _ => return None,
    })
}

/// C `next_opcode_uc()`.
const fn next_opc_uc(wr_opcode: u32, prev: Option<u8>, fits: bool) -> Option<u8> {
    let write = matches!(prev, Some(UC_RDMA_WRITE_FIRST | UC_RDMA_WRITE_MIDDLE));
    let send = matches!(prev, Some(UC_SEND_FIRST | UC_SEND_MIDDLE));
    Some(match wr_opcode {
        IB_WR_RDMA_WRITE => pick(
            write,
            fits,
            UC_RDMA_WRITE_LAST,
            UC_RDMA_WRITE_MIDDLE,
            UC_RDMA_WRITE_ONLY,
            UC_RDMA_WRITE_FIRST,
        ),
        IB_WR_RDMA_WRITE_WITH_IMM => pick(
            write,
            fits,
            UC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
            UC_RDMA_WRITE_MIDDLE,
            UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            UC_RDMA_WRITE_FIRST,
        ),
        IB_WR_SEND => pick(
            send,
            fits,
            UC_SEND_LAST,
            UC_SEND_MIDDLE,
            UC_SEND_ONLY,
            UC_SEND_FIRST,
        ),
        IB_WR_SEND_WITH_IMM => pick(
            send,
            fits,
            UC_SEND_LAST_WITH_IMMEDIATE,
            UC_SEND_MIDDLE,
            UC_SEND_ONLY_WITH_IMMEDIATE,
            UC_SEND_FIRST,
        ),
        _ => return None,
    })
}

/// The BTH opcode of the requester's next packet for a WQE of `wr_opcode` on a `qp_type` QP
/// (C `next_opcode()` of `rxe_req.c`); `None` where C returns `-EINVAL` (the requester then
/// completes the WQE with `IB_WC_LOC_QP_OP_ERR`).
///
/// `prev` is C `qp->req.opcode`: the BTH opcode of the last packet the QP's requester built,
/// whatever its WQE, and `None` (C: -1) after a reset and at the start of a retry (C
/// `req_retry()`, which then replays this function over the packets already acknowledged).
/// Only RDMA WRITE FIRST / MIDDLE and SEND FIRST / MIDDLE of the QP's transport continue a
/// message: the previous WQE always ends with a LAST or ONLY packet. After C fakes a
/// too-large UD send it sets `UD_SEND_ONLY`. `fits` is C `wqe->dma.resid <= qp->mtu`.
///
/// Unlike C, REG_MR and LOCAL_INV give `None` on RC: C returns the WR opcode itself there (as
/// if it were a BTH opcode), which the requester never uses because it executes local
/// operations before choosing an opcode. SEND_WITH_INV is allowed on UD QPs by
/// [`wr_opcode_mask`](super::wr_opcode_mask) but has no UD opcode, as in C.
pub const fn next_opcode(
    qp_type: QpType,
    wr_opcode: u32,
    prev: Option<u8>,
    fits: bool,
) -> Option<u8> {
    match qp_type {
        QpType::Rc => next_opc_rc(wr_opcode, prev, fits),
        QpType::Uc => next_opc_uc(wr_opcode, prev, fits),
        QpType::Ud | QpType::Gsi => match wr_opcode {
            IB_WR_SEND => Some(UD_SEND_ONLY),
            IB_WR_SEND_WITH_IMM => Some(UD_SEND_ONLY_WITH_IMMEDIATE),
            _ => None,
        },
        QpType::Smi => None,
    }
}
