// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The WR opcode table of `proto/wqe/wr_opcode.rs` against `rxe_wr_opcode_info[]` of
//! `rxe_opcode.c`.

use std::vec::Vec;

use super::ALL_QPT;
use crate::proto::qp_state::QpType;
use crate::proto::wqe::*;

const INL: u32 = 1 << 0;
const ATO: u32 = 1 << 1;
const SND: u32 = 1 << 2;
const RD: u32 = 1 << 3;
const WR: u32 = 1 << 4;
const LOC: u32 = 1 << 5;
const FL: u32 = 1 << 6;
const AW: u32 = 1 << 7;

/// `rxe_wr_opcode_info[]` of `rxe_opcode.c`: per opcode, the mask for SMI, GSI, RC, UC, UD.
const C_WR_OPCODE_INFO: &[(u32, &str, [u32; 5])] = &[
    (0, "IB_WR_RDMA_WRITE", [0, 0, INL | WR, INL | WR, 0]),
    (
        1,
        "IB_WR_RDMA_WRITE_WITH_IMM",
        [0, 0, INL | WR, INL | WR, 0],
    ),
    (
        2,
        "IB_WR_SEND",
        [0, INL | SND, INL | SND, INL | SND, INL | SND],
    ),
    (
        3,
        "IB_WR_SEND_WITH_IMM",
        [0, INL | SND, INL | SND, INL | SND, INL | SND],
    ),
    (4, "IB_WR_RDMA_READ", [0, 0, RD, 0, 0]),
    (5, "IB_WR_ATOMIC_CMP_AND_SWP", [0, 0, ATO, 0, 0]),
    (6, "IB_WR_ATOMIC_FETCH_AND_ADD", [0, 0, ATO, 0, 0]),
    (10, "IB_WR_LSO", [0, 0, 0, 0, 0]),
    (
        9,
        "IB_WR_SEND_WITH_INV",
        [0, 0, INL | SND, INL | SND, INL | SND],
    ),
    (11, "IB_WR_RDMA_READ_WITH_INV", [0, 0, RD, 0, 0]),
    (7, "IB_WR_LOCAL_INV", [0, 0, LOC, 0, 0]),
    (0x20, "IB_WR_REG_MR", [0, 0, LOC, 0, 0]),
    (8, "IB_WR_BIND_MW", [0, 0, LOC, LOC, 0]),
    (14, "IB_WR_FLUSH", [0, 0, FL, 0, 0]),
    (15, "IB_WR_ATOMIC_WRITE", [0, 0, AW, 0, 0]),
];

fn c_mask(opcode: u32, qpt: QpType) -> Option<u32> {
    C_WR_OPCODE_INFO
        .iter()
        .find(|row| row.0 == opcode)
        .map(|row| row.2[qpt as usize])
        .filter(|&m| m != 0)
}

#[test]
fn wr_opcode_mask_is_the_c_table() {
    let mut opcodes: Vec<u32> = (0..=0x100).collect();
    opcodes.extend([0xf0, 0xff, 0x1000, i32::MAX as u32, u32::MAX]);
    for &qpt in &ALL_QPT {
        for &op in &opcodes {
            let ours = wr_opcode_mask(op, qpt).map(WrMask::bits);
            assert_eq!(ours, c_mask(op, qpt), "opcode {op:#x} on {qpt:?}");
        }
    }
    for &(op, name, _) in C_WR_OPCODE_INFO {
        assert_eq!(wr_opcode_name(op), Some(name));
    }
    assert_eq!(wr_opcode_name(12), None);
    assert_eq!(wr_opcode_name(0x21), None);
    assert!(wr_opcode_is_kernel_only(IB_WR_REG_MR));
    assert!(wr_opcode_is_kernel_only(IB_WR_REG_MR_INTEGRITY));
    assert!(!wr_opcode_is_kernel_only(IB_WR_ATOMIC_WRITE));
}

#[test]
fn wr_mask_bits_are_enum_rxe_wr_mask() {
    assert_eq!(
        [
            WrMask::INLINE,
            WrMask::ATOMIC,
            WrMask::SEND,
            WrMask::READ,
            WrMask::WRITE,
            WrMask::LOCAL_OP,
            WrMask::FLUSH,
            WrMask::ATOMIC_WRITE,
        ]
        .map(WrMask::bits),
        [INL, ATO, SND, RD, WR, LOC, FL, AW]
    );
    assert_eq!(WrMask::READ_OR_WRITE.bits(), RD | WR);
    assert_eq!(WrMask::WRITE_OR_SEND.bits(), WR | SND);
    assert_eq!(WrMask::ATOMIC_OR_READ.bits(), ATO | RD);
    assert_eq!((WrMask::READ | WrMask::WRITE), WrMask::READ_OR_WRITE);
    assert!(WrMask::READ_OR_WRITE.contains(WrMask::READ));
    assert!(!WrMask::READ.contains(WrMask::READ_OR_WRITE));
    assert!(WrMask::READ.intersects(WrMask::READ_OR_WRITE));
    assert_eq!(WrMask::from_bits(0x55).bits(), 0x55);
}
