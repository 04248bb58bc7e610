// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The requester's next opcode (`proto/wqe/req_opcode.rs`) against C `next_opcode()` of
//! `rxe_req.c`, and the messages it builds against the opcode table.

use std::vec;
use std::vec::Vec;

use super::{allowed, ALL_QPT};
use crate::proto::qp_state::QpType;
use crate::proto::wqe::*;

/// One `case` of C `next_opcode_rc()` / `next_opcode_uc()`, with the `IB_OPCODE_*` numbers of
/// `ib_pack.h`.
enum Case {
    /// `if (qp->req.opcode == cont[0] || == cont[1]) fits ? last : middle; else fits ? only :
    /// first`.
    Multi {
        cont: [u8; 2],
        last: u8,
        middle: u8,
        only: u8,
        first: u8,
    },
    /// `return op`.
    Single(u8),
}

const fn multi(base: u8, cont: [u8; 2], last: u8, middle: u8, only: u8, first: u8) -> Case {
    Case::Multi {
        cont: [base + cont[0], base + cont[1]],
        last: base + last,
        middle: base + middle,
        only: base + only,
        first: base + first,
    }
}

fn c_cases(qpt: QpType) -> Vec<(u32, Case)> {
    let (w, s) = ([0x06, 0x07], [0x00, 0x01]);
    match qpt {
        QpType::Rc => vec![
            (IB_WR_RDMA_WRITE, multi(0, w, 0x08, 0x07, 0x0a, 0x06)),
            (
                IB_WR_RDMA_WRITE_WITH_IMM,
                multi(0, w, 0x09, 0x07, 0x0b, 0x06),
            ),
            (IB_WR_SEND, multi(0, s, 0x02, 0x01, 0x04, 0x00)),
            (IB_WR_SEND_WITH_IMM, multi(0, s, 0x03, 0x01, 0x05, 0x00)),
            (IB_WR_FLUSH, Case::Single(0x1c)),
            (IB_WR_RDMA_READ, Case::Single(0x0c)),
            (IB_WR_ATOMIC_CMP_AND_SWP, Case::Single(0x13)),
            (IB_WR_ATOMIC_FETCH_AND_ADD, Case::Single(0x14)),
            (IB_WR_SEND_WITH_INV, multi(0, s, 0x16, 0x01, 0x17, 0x00)),
            (IB_WR_ATOMIC_WRITE, Case::Single(0x1d)),
            // C: `case IB_WR_REG_MR: case IB_WR_LOCAL_INV: return opcode;` is deliberately
            // not ported (never used; see `next_opcode`).
        ],
        QpType::Uc => vec![
            (IB_WR_RDMA_WRITE, multi(0x20, w, 0x08, 0x07, 0x0a, 0x06)),
            (
                IB_WR_RDMA_WRITE_WITH_IMM,
                multi(0x20, w, 0x09, 0x07, 0x0b, 0x06),
            ),
            (IB_WR_SEND, multi(0x20, s, 0x02, 0x01, 0x04, 0x00)),
            (IB_WR_SEND_WITH_IMM, multi(0x20, s, 0x03, 0x01, 0x05, 0x00)),
        ],
        QpType::Ud | QpType::Gsi => vec![
            (IB_WR_SEND, Case::Single(0x64)),
            (IB_WR_SEND_WITH_IMM, Case::Single(0x65)),
        ],
        QpType::Smi => vec![],
    }
}

fn c_next_opcode(qpt: QpType, wr: u32, prev: Option<u8>, fits: bool) -> Option<u8> {
    let cases = c_cases(qpt);
    let (_, case) = cases.iter().find(|c| c.0 == wr)?;
    Some(match *case {
        Case::Single(op) => op,
        Case::Multi {
            cont,
            last,
            middle,
            only,
            first,
        } => {
            let c = prev.is_some_and(|p| cont.contains(&p));
            match (c, fits) {
                (true, true) => last,
                (true, false) => middle,
                (false, true) => only,
                (false, false) => first,
            }
        }
    })
}

#[test]
fn next_opcode_is_the_c_function() {
    let prevs: Vec<Option<u8>> = core::iter::once(None).chain((0..=255).map(Some)).collect();
    let mut wrs: Vec<u32> = (0..0x40).collect();
    wrs.extend([0xf0, u32::MAX]);
    let mut checked = 0;
    for &qpt in &ALL_QPT {
        for &wr in &wrs {
            for &prev in &prevs {
                for fits in [false, true] {
                    assert_eq!(
                        next_opcode(qpt, wr, prev, fits),
                        c_next_opcode(qpt, wr, prev, fits),
                        "{qpt:?} wr {wr:#x} prev {prev:?} fits {fits}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 5 * 66 * 257 * 2);
    // Spot checks against the names.
    use crate::proto::opcode::*;
    assert_eq!(
        next_opcode(QpType::Rc, IB_WR_SEND, Some(RC_SEND_FIRST), false),
        Some(RC_SEND_MIDDLE)
    );
    assert_eq!(
        next_opcode(
            QpType::Rc,
            IB_WR_RDMA_WRITE_WITH_IMM,
            Some(RC_RDMA_WRITE_MIDDLE),
            true
        ),
        Some(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE)
    );
    // A send never continues a write, nor an RC opcode a UC message.
    assert_eq!(
        next_opcode(QpType::Rc, IB_WR_SEND, Some(RC_RDMA_WRITE_FIRST), true),
        Some(RC_SEND_ONLY)
    );
    assert_eq!(
        next_opcode(QpType::Uc, IB_WR_SEND, Some(RC_SEND_FIRST), false),
        Some(UC_SEND_FIRST)
    );
    assert_eq!(
        next_opcode(QpType::Gsi, IB_WR_SEND_WITH_IMM, None, false),
        Some(UD_SEND_ONLY_WITH_IMMEDIATE)
    );
    assert_eq!(
        next_opcode(QpType::Ud, IB_WR_SEND_WITH_INV, None, true),
        None
    );
    assert_eq!(next_opcode(QpType::Rc, IB_WR_LOCAL_INV, None, true), None);
    assert_eq!(next_opcode(QpType::Rc, IB_WR_REG_MR, None, true), None);
    assert_eq!(
        next_opcode(QpType::Rc, IB_WR_RDMA_READ_WITH_INV, None, true),
        None
    );
}

/// Every opcode `next_opcode` returns is in the opcode table, is a request of the QP's
/// transport, and a message of n packets starts, continues and ends as it should.
#[test]
fn next_opcode_builds_whole_messages() {
    use crate::proto::opcode::{opcode_info, Mask, Transport};
    for &qpt in &ALL_QPT {
        for wr in allowed(qpt) {
            let Some(first) = next_opcode(qpt, wr, None, false) else {
                continue;
            };
            for packets in 1..5 {
                let mut prev = None;
                let mut chain = Vec::new();
                for i in 0..packets {
                    let op = next_opcode(qpt, wr, prev, i == packets - 1).unwrap();
                    chain.push(op);
                    prev = Some(op);
                }
                let masks: Vec<Mask> = chain
                    .iter()
                    .map(|&o| opcode_info(o).unwrap().mask)
                    .collect();
                for (&op, m) in chain.iter().zip(&masks) {
                    assert!(m.contains(Mask::REQ));
                    let want = match qpt {
                        QpType::Rc => Transport::Rc,
                        QpType::Uc => Transport::Uc,
                        _ => Transport::Ud,
                    };
                    assert_eq!(Transport::of(op), Some(want));
                }
                assert!(masks[0].contains(Mask::START), "{qpt:?} {wr} {chain:?}");
                assert!(
                    masks[masks.len() - 1].contains(Mask::END),
                    "{qpt:?} {wr} {chain:?}"
                );
                if masks[0].contains(Mask::END) {
                    // Single-packet operations: every packet is the whole message.
                    assert!(masks.iter().all(|m| m.contains(Mask::START | Mask::END)));
                } else {
                    for m in &masks[1..masks.len() - 1] {
                        assert!(m.contains(Mask::MIDDLE));
                    }
                }
                let _ = first;
            }
        }
    }
}
