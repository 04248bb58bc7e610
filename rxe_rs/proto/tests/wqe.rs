// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Work queue entries and completions: the C layouts (offsets measured with `offsetof` on
//! `rdma_user_rxe.h` and `ib_user_verbs.h`), the C tables (`rxe_wr_opcode_info[]`,
//! `wr_to_wc_opcode()`, `next_opcode()`), the C `copy_data()` walk, round trips, and hostile
//! slots.

use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use crate::proto::params::PORT_MAX_MSG_SZ;
use crate::proto::qp_state::QpType;
use crate::proto::queue::{recv_wqe_size, send_wqe_size, CQE_SIZE};
use crate::proto::wqe::*;

// ---------------------------------------------------------------------------------------------
// Layouts.
// ---------------------------------------------------------------------------------------------

/// Offsets printed by `offsetof` for the 7.3 headers on x86_64 (gcc, with and without the
/// kernel-only `reg` member, which changed no size).
#[test]
fn layouts_are_the_c_structs() {
    let table: &[(&str, usize, usize)] = &[
        ("sge.addr", SGE_ADDR_OFFSET, 0),
        ("sge.length", SGE_LENGTH_OFFSET, 8),
        ("sge.lkey", SGE_LKEY_OFFSET, 12),
        ("sizeof sge", SGE_LEN, 16),
        ("dma.length", DMA_INFO_LENGTH_OFFSET, 0),
        ("dma.resid", DMA_INFO_RESID_OFFSET, 4),
        ("dma.cur_sge", DMA_INFO_CUR_SGE_OFFSET, 8),
        ("dma.num_sge", DMA_INFO_NUM_SGE_OFFSET, 12),
        ("dma.sge_offset", DMA_INFO_SGE_OFFSET_OFFSET, 16),
        ("dma.reserved", DMA_INFO_RESERVED_OFFSET, 20),
        ("dma.sge", DMA_INFO_SGE_OFFSET, 24),
        ("sizeof dma", DMA_INFO_LEN, 24),
        ("wr.wr_id", SEND_WR_WR_ID_OFFSET, 0),
        ("wr.reserved", SEND_WR_RESERVED_OFFSET, 8),
        ("wr.opcode", SEND_WR_OPCODE_OFFSET, 12),
        ("wr.send_flags", SEND_WR_SEND_FLAGS_OFFSET, 16),
        ("wr.ex", SEND_WR_EX_OFFSET, 20),
        ("wr.wr", SEND_WR_WR_OFFSET, 24),
        ("sizeof wr.wr", SEND_WR_WR_LEN, 120),
        ("sizeof send_wr", SEND_WR_LEN, 144),
        ("rdma.remote_addr", SEND_WR_RDMA_REMOTE_ADDR_OFFSET, 24),
        ("rdma.rkey", SEND_WR_RDMA_RKEY_OFFSET, 32),
        ("atomic.remote_addr", SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET, 24),
        ("atomic.compare_add", SEND_WR_ATOMIC_COMPARE_ADD_OFFSET, 32),
        ("atomic.swap", SEND_WR_ATOMIC_SWAP_OFFSET, 40),
        ("atomic.rkey", SEND_WR_ATOMIC_RKEY_OFFSET, 48),
        ("ud.remote_qpn", SEND_WR_UD_REMOTE_QPN_OFFSET, 24),
        ("ud.remote_qkey", SEND_WR_UD_REMOTE_QKEY_OFFSET, 28),
        ("ud.pkey_index", SEND_WR_UD_PKEY_INDEX_OFFSET, 32),
        ("ud.ah_num", SEND_WR_UD_AH_NUM_OFFSET, 36),
        ("ud.av", SEND_WR_UD_AV_OFFSET, 56),
        ("sizeof av", RXE_AV_LEN, 88),
        ("flush.remote_addr", SEND_WR_FLUSH_REMOTE_ADDR_OFFSET, 24),
        ("flush.length", SEND_WR_FLUSH_LENGTH_OFFSET, 32),
        ("flush.rkey", SEND_WR_FLUSH_RKEY_OFFSET, 36),
        ("flush.type", SEND_WR_FLUSH_TYPE_OFFSET, 40),
        ("flush.level", SEND_WR_FLUSH_LEVEL_OFFSET, 41),
        ("mw.addr", SEND_WR_MW_ADDR_OFFSET, 24),
        ("mw.length", SEND_WR_MW_LENGTH_OFFSET, 32),
        ("mw.mr_lkey", SEND_WR_MW_MR_LKEY_OFFSET, 40),
        ("mw.mw_rkey", SEND_WR_MW_MW_RKEY_OFFSET, 44),
        ("mw.rkey", SEND_WR_MW_RKEY_OFFSET, 48),
        ("mw.access", SEND_WR_MW_ACCESS_OFFSET, 52),
        ("reg.mr", SEND_WR_REG_MR_OFFSET, 24),
        ("reg.key", SEND_WR_REG_KEY_OFFSET, 32),
        ("reg.access", SEND_WR_REG_ACCESS_OFFSET, 36),
        ("wqe.wr", SEND_WQE_WR_OFFSET, 0),
        ("wqe.status", SEND_WQE_STATUS_OFFSET, 144),
        ("wqe.state", SEND_WQE_STATE_OFFSET, 148),
        ("wqe.iova", SEND_WQE_IOVA_OFFSET, 152),
        ("wqe.mask", SEND_WQE_MASK_OFFSET, 160),
        ("wqe.first_psn", SEND_WQE_FIRST_PSN_OFFSET, 164),
        ("wqe.last_psn", SEND_WQE_LAST_PSN_OFFSET, 168),
        ("wqe.ack_length", SEND_WQE_ACK_LENGTH_OFFSET, 172),
        ("wqe.ssn", SEND_WQE_SSN_OFFSET, 176),
        ("wqe.has_rd_atomic", SEND_WQE_HAS_RD_ATOMIC_OFFSET, 180),
        ("wqe.dma", SEND_WQE_DMA_OFFSET, 184),
        ("sizeof send_wqe", SEND_WQE_HDR_LEN, 208),
        ("wqe.dma.sge", SEND_WQE_DATA_OFFSET, 208),
        ("recv.wr_id", RECV_WQE_WR_ID_OFFSET, 0),
        ("recv.reserved", RECV_WQE_RESERVED_OFFSET, 8),
        ("recv.padding", RECV_WQE_PADDING_OFFSET, 12),
        ("recv.dma", RECV_WQE_DMA_OFFSET, 16),
        ("sizeof recv_wqe", RECV_WQE_HDR_LEN, 40),
        ("recv.dma.sge", RECV_WQE_DATA_OFFSET, 40),
        ("wc.wr_id", UVERBS_WC_WR_ID_OFFSET, 0),
        ("wc.status", UVERBS_WC_STATUS_OFFSET, 8),
        ("wc.opcode", UVERBS_WC_OPCODE_OFFSET, 12),
        ("wc.vendor_err", UVERBS_WC_VENDOR_ERR_OFFSET, 16),
        ("wc.byte_len", UVERBS_WC_BYTE_LEN_OFFSET, 20),
        ("wc.ex", UVERBS_WC_EX_OFFSET, 24),
        ("wc.qp_num", UVERBS_WC_QP_NUM_OFFSET, 28),
        ("wc.src_qp", UVERBS_WC_SRC_QP_OFFSET, 32),
        ("wc.wc_flags", UVERBS_WC_WC_FLAGS_OFFSET, 36),
        ("wc.pkey_index", UVERBS_WC_PKEY_INDEX_OFFSET, 40),
        ("wc.slid", UVERBS_WC_SLID_OFFSET, 42),
        ("wc.sl", UVERBS_WC_SL_OFFSET, 44),
        ("wc.dlid_path_bits", UVERBS_WC_DLID_PATH_BITS_OFFSET, 45),
        ("wc.port_num", UVERBS_WC_PORT_NUM_OFFSET, 46),
        ("wc.reserved", UVERBS_WC_RESERVED_OFFSET, 47),
        ("sizeof wc", UVERBS_WC_LEN, 48),
    ];
    for &(name, ours, c) in table {
        assert_eq!(ours, c, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Verbs constants.
// ---------------------------------------------------------------------------------------------

/// `enum ib_uverbs_wr_opcode` of `ib_user_verbs.h`, which `enum ib_wr_opcode` aliases.
const IB_UVERBS_WR: &[(u32, u32)] = &[
    (IB_WR_RDMA_WRITE, 0),
    (IB_WR_RDMA_WRITE_WITH_IMM, 1),
    (IB_WR_SEND, 2),
    (IB_WR_SEND_WITH_IMM, 3),
    (IB_WR_RDMA_READ, 4),
    (IB_WR_ATOMIC_CMP_AND_SWP, 5),
    (IB_WR_ATOMIC_FETCH_AND_ADD, 6),
    (IB_WR_LOCAL_INV, 7),
    (IB_WR_BIND_MW, 8),
    (IB_WR_SEND_WITH_INV, 9),
    (IB_WR_LSO, 10), // IB_UVERBS_WR_TSO
    (IB_WR_RDMA_READ_WITH_INV, 11),
    (IB_WR_MASKED_ATOMIC_CMP_AND_SWP, 12),
    (IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, 13),
    (IB_WR_FLUSH, 14),
    (IB_WR_ATOMIC_WRITE, 15),
];

#[test]
fn wr_opcodes_agree_with_uverbs() {
    for &(ours, uverbs) in IB_UVERBS_WR {
        assert_eq!(ours, uverbs);
    }
    assert_eq!((IB_WR_REG_MR, IB_WR_REG_MR_INTEGRITY), (0x20, 0x21));
    assert_eq!(
        [
            IB_SEND_FENCE,
            IB_SEND_SIGNALED,
            IB_SEND_SOLICITED,
            IB_SEND_INLINE,
            IB_SEND_IP_CSUM
        ],
        [1, 2, 4, 8, 16]
    );
}

#[test]
fn wc_constants_are_the_c_enums() {
    let status = [
        IB_WC_SUCCESS,
        IB_WC_LOC_LEN_ERR,
        IB_WC_LOC_QP_OP_ERR,
        IB_WC_LOC_EEC_OP_ERR,
        IB_WC_LOC_PROT_ERR,
        IB_WC_WR_FLUSH_ERR,
        IB_WC_MW_BIND_ERR,
        IB_WC_BAD_RESP_ERR,
        IB_WC_LOC_ACCESS_ERR,
        IB_WC_REM_INV_REQ_ERR,
        IB_WC_REM_ACCESS_ERR,
        IB_WC_REM_OP_ERR,
        IB_WC_RETRY_EXC_ERR,
        IB_WC_RNR_RETRY_EXC_ERR,
        IB_WC_LOC_RDD_VIOL_ERR,
        IB_WC_REM_INV_RD_REQ_ERR,
        IB_WC_REM_ABORT_ERR,
        IB_WC_INV_EECN_ERR,
        IB_WC_INV_EEC_STATE_ERR,
        IB_WC_FATAL_ERR,
        IB_WC_RESP_TIMEOUT_ERR,
        IB_WC_GENERAL_ERR,
    ];
    for (i, s) in status.iter().enumerate() {
        assert_eq!(*s as usize, i);
    }
    // enum ib_wc_opcode: the IB_UVERBS_WC_* values, then REG_MR, MASKED_* after ATOMIC_WRITE.
    assert_eq!(
        [
            IB_WC_SEND,
            IB_WC_RDMA_WRITE,
            IB_WC_RDMA_READ,
            IB_WC_COMP_SWAP,
            IB_WC_FETCH_ADD,
            IB_WC_BIND_MW,
            IB_WC_LOCAL_INV,
            IB_WC_LSO,
            IB_WC_FLUSH,
            IB_WC_ATOMIC_WRITE,
            IB_WC_REG_MR,
            IB_WC_MASKED_COMP_SWAP,
            IB_WC_MASKED_FETCH_ADD,
        ],
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    );
    assert_eq!((IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM), (128, 129));
    assert_eq!(
        [
            IB_WC_GRH,
            IB_WC_WITH_IMM,
            IB_WC_WITH_INVALIDATE,
            IB_WC_IP_CSUM_OK,
            IB_WC_WITH_SMAC,
            IB_WC_WITH_VLAN,
            IB_WC_WITH_NETWORK_HDR_TYPE,
        ],
        [1, 2, 4, 8, 16, 32, 64]
    );
}

// ---------------------------------------------------------------------------------------------
// The WR opcode table.
// ---------------------------------------------------------------------------------------------

const ALL_QPT: [QpType; 5] = QpType::ALL;

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

// ---------------------------------------------------------------------------------------------
// Send WQEs built by hand at the C offsets.
// ---------------------------------------------------------------------------------------------

fn user(max_sge: u32, max_inline: u32) -> SendLimits {
    SendLimits {
        max_sge,
        max_inline,
        allow_kernel_only: false,
    }
}

fn kernel(max_sge: u32, max_inline: u32) -> SendLimits {
    SendLimits {
        allow_kernel_only: true,
        ..user(max_sge, max_inline)
    }
}

fn set32(v: &mut [u8], off: usize, x: u32) {
    v[off..off + 4].copy_from_slice(&x.to_le_bytes());
}

fn set64(v: &mut [u8], off: usize, x: u64) {
    v[off..off + 8].copy_from_slice(&x.to_le_bytes());
}

/// A send slot of `len` bytes as librxe writes it, with literal C offsets; `sges` as (addr,
/// length, lkey).
fn raw_send(
    len: usize,
    opcode: u32,
    flags: u32,
    length: u32,
    num_sge: u32,
    sges: &[(u64, u32, u32)],
) -> Vec<u8> {
    let mut v = vec![0u8; len];
    set64(&mut v, 0, 0x1122_3344_5566_7788);
    set32(&mut v, 8, 0xdead_beef); // reserved / old num_sge: ignored
    set32(&mut v, 12, opcode);
    set32(&mut v, 16, flags);
    v[20..24].copy_from_slice(&[0x12, 0x34, 0x56, 0x78]); // ex: imm as stored
    set64(&mut v, 152, 0xaaaa_0000);
    set32(&mut v, 184, length);
    set32(&mut v, 188, length);
    set32(&mut v, 196, num_sge);
    for (i, &(addr, l, lkey)) in sges.iter().enumerate() {
        let o = 208 + 16 * i;
        set64(&mut v, o, addr);
        set32(&mut v, o + 8, l);
        set32(&mut v, o + 12, lkey);
    }
    v
}

#[test]
fn parses_an_rc_send_with_sges() {
    let slot = raw_send(
        256,
        IB_WR_SEND_WITH_IMM,
        IB_SEND_SIGNALED,
        300,
        2,
        &[(0x1000, 100, 7), (0x9000, 200, 8)],
    );
    let wqe = SendWqe::parse(&slot, QpType::Rc, user(2, 0)).unwrap();
    assert_eq!(
        wqe,
        SendWqe {
            wr_id: 0x1122_3344_5566_7788,
            opcode: IB_WR_SEND_WITH_IMM,
            send_flags: IB_SEND_SIGNALED,
            ex: u32::from_le_bytes([0x12, 0x34, 0x56, 0x78]),
            detail: WrDetail::None,
            iova: 0xaaaa_0000,
            length: 300,
            num_sge: 2,
            mask: WrMask::INLINE | WrMask::SEND,
            data: DataKind::Sges,
        }
    );
    assert_eq!(wqe.imm_be_bytes(), [0x12, 0x34, 0x56, 0x78]);
    assert_eq!(wqe.imm_data(), 0x1234_5678);
    assert_eq!(imm_to_ex(wqe.imm_data()), wqe.ex);
    assert_eq!(ex_to_imm(imm_to_ex(0xcafe_f00d)), 0xcafe_f00d);
    assert!(!wqe.is_inline());
    assert_eq!(
        sge(&slot, 1),
        Some(Sge {
            addr: 0x9000,
            length: 200,
            lkey: 8
        })
    );
    assert_eq!(sge(&slot, 3), None, "past the slot");
    assert_eq!(wqe.wr().opcode, IB_WR_SEND_WITH_IMM);
}

#[test]
fn c_progress_state_in_the_slot_is_ignored() {
    let clean = raw_send(256, IB_WR_SEND, 0, 10, 1, &[(0x1000, 10, 1)]);
    let mut dirty = clean.clone();
    for off in [144, 148, 160, 164, 168, 172, 176, 180, 188, 192, 200, 204] {
        set32(&mut dirty, off, 0xffff_ffff);
    }
    let limits = user(2, 0);
    assert_eq!(
        SendWqe::parse(&clean, QpType::Rc, limits),
        SendWqe::parse(&dirty, QpType::Rc, limits)
    );
}

#[test]
fn decodes_each_union_member() {
    let mut v = raw_send(256, IB_WR_RDMA_WRITE, 0, 0, 0, &[]);
    set64(&mut v, 24, 0x0102_0304_0506_0708);
    set32(&mut v, 32, 0x1111);
    let w = SendWqe::parse(&v, QpType::Uc, user(1, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Rdma {
            remote_addr: 0x0102_0304_0506_0708,
            rkey: 0x1111
        }
    );
    assert_eq!(w.detail.remote_addr(), Some(0x0102_0304_0506_0708));

    let mut v = raw_send(256, IB_WR_ATOMIC_CMP_AND_SWP, 0, 8, 1, &[(0x40, 8, 3)]);
    set64(&mut v, 24, 0x1000);
    set64(&mut v, 32, 5);
    set64(&mut v, 40, 6);
    set32(&mut v, 48, 0x2222);
    let w = SendWqe::parse(&v, QpType::Rc, user(1, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Atomic {
            remote_addr: 0x1000,
            compare_add: 5,
            swap: 6,
            rkey: 0x2222
        }
    );
    assert_eq!(w.mask, WrMask::ATOMIC);

    for qpt in [QpType::Ud, QpType::Gsi] {
        let mut v = raw_send(256, IB_WR_SEND, 0, 0, 0, &[]);
        set32(&mut v, 24, 0x00ab_cdef);
        set32(&mut v, 28, 0x8001_0000);
        v[32..34].copy_from_slice(&3u16.to_le_bytes());
        set32(&mut v, 36, 42);
        v[56] = 0x5a;
        v[143] = 0xa5;
        let w = SendWqe::parse(&v, qpt, user(1, 0)).unwrap();
        assert_eq!(
            w.detail,
            WrDetail::Ud {
                remote_qpn: 0x00ab_cdef,
                remote_qkey: 0x8001_0000,
                pkey_index: 3,
                ah_num: 42
            }
        );
        let av = ud_av_bytes(&v).unwrap();
        assert_eq!((av.len(), av[0], av[87]), (88, 0x5a, 0xa5));
    }
    assert_eq!(ud_av_bytes(&[0; 143]), None);

    let mut v = raw_send(256, IB_WR_FLUSH, 0, 0x1234_5678, 9, &[]);
    set64(&mut v, 24, 0x7000);
    set32(&mut v, 32, 4096);
    set32(&mut v, 36, 0x3333);
    v[40] = 2;
    v[41] = 1;
    let w = SendWqe::parse(&v, QpType::Rc, user(0, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Flush {
            remote_addr: 0x7000,
            length: 4096,
            rkey: 0x3333,
            type_: 2,
            level: 1
        }
    );
    // FLUSH: dma.length passes through (the C RETH length), the SGE count is ignored.
    assert_eq!(
        (w.length, w.num_sge, w.data),
        (0x1234_5678, 0, DataKind::None)
    );

    let mut v = raw_send(256, IB_WR_BIND_MW, 0, 77, 1000, &[]);
    set64(&mut v, 24, 0x8000);
    set64(&mut v, 32, 0x1_0000_0000);
    set32(&mut v, 40, 1);
    set32(&mut v, 44, 2);
    set32(&mut v, 48, 3);
    set32(&mut v, 52, 4);
    let w = SendWqe::parse(&v, QpType::Uc, user(0, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Mw {
            addr: 0x8000,
            length: 0x1_0000_0000,
            mr_lkey: 1,
            mw_rkey: 2,
            rkey: 3,
            access: 4
        }
    );
    // Local operations have no data, whatever the dma fields say.
    assert_eq!((w.length, w.num_sge, w.data), (0, 0, DataKind::None));

    let mut v = raw_send(256, IB_WR_REG_MR, 0, 0, 0, &[]);
    set64(&mut v, 24, 0xffff_8880_0000_0000); // a kernel pointer: never read
    set32(&mut v, 32, 0x1234_56ab);
    set32(&mut v, 36, 0xf);
    let w = SendWqe::parse(&v, QpType::Rc, kernel(0, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Reg {
            key: 0x1234_56ab,
            access: 0xf
        }
    );
    assert_eq!(w.detail.remote_addr(), None);

    let w = SendWqe::parse(
        &raw_send(256, IB_WR_LOCAL_INV, 0, 0, 0, &[]),
        QpType::Rc,
        user(0, 0),
    )
    .unwrap();
    assert_eq!(w.detail, WrDetail::None);
    assert_eq!(
        w.invalidate_rkey(),
        u32::from_le_bytes([0x12, 0x34, 0x56, 0x78])
    );
}

#[test]
fn refuses_bad_opcodes() {
    let limits = kernel(4, 64);
    for (qpt, op) in [
        (QpType::Rc, IB_WR_LSO),
        (QpType::Rc, IB_WR_MASKED_ATOMIC_CMP_AND_SWP),
        (QpType::Rc, IB_WR_REG_MR_INTEGRITY),
        (QpType::Rc, 0xf0),
        (QpType::Rc, u32::MAX),
        (QpType::Uc, IB_WR_RDMA_READ),
        (QpType::Uc, IB_WR_ATOMIC_FETCH_AND_ADD),
        (QpType::Ud, IB_WR_RDMA_WRITE),
        (QpType::Gsi, IB_WR_SEND_WITH_INV),
        (QpType::Smi, IB_WR_SEND),
    ] {
        let slot = raw_send(256, op, 0, 0, 0, &[]);
        assert_eq!(
            SendWqe::parse(&slot, qpt, limits),
            Err(WqeError::BadOpcode(op)),
            "{op:#x} on {qpt:?}"
        );
    }
    let slot = raw_send(256, IB_WR_REG_MR, 0, 0, 0, &[]);
    assert_eq!(
        SendWqe::parse(&slot, QpType::Rc, user(4, 64)),
        Err(WqeError::KernelOnlyOpcode(IB_WR_REG_MR))
    );
    assert!(SendWqe::parse(&slot, QpType::Rc, kernel(4, 64)).is_ok());
}

#[test]
fn refuses_bad_sge_lists() {
    let rc = QpType::Rc;
    let ok = raw_send(240, IB_WR_RDMA_READ, 0, 30, 2, &[(0, 10, 1), (0, 20, 1)]);
    assert_eq!(SendWqe::parse(&ok, rc, user(2, 0)).unwrap().length, 30);
    assert_eq!(
        SendWqe::parse(&ok, rc, user(1, 0)),
        Err(WqeError::TooManySge {
            num_sge: 2,
            max_sge: 1
        })
    );
    assert_eq!(
        SendWqe::parse(&ok[..239], rc, user(2, 0)),
        Err(WqeError::DataOutOfSlot)
    );
    assert_eq!(
        SendWqe::parse(&ok[..207], rc, user(2, 0)),
        Err(WqeError::Truncated)
    );
    let lie = raw_send(240, IB_WR_SEND, 0, 31, 2, &[(0, 10, 1), (0, 20, 1)]);
    assert_eq!(
        SendWqe::parse(&lie, rc, user(2, 0)),
        Err(WqeError::LengthMismatch {
            length: 31,
            sum: 30
        })
    );
    let wrap = raw_send(240, IB_WR_SEND, 0, 4, 2, &[(0, 0xffff_fffe, 1), (0, 6, 1)]);
    assert_eq!(
        SendWqe::parse(&wrap, rc, user(2, 0)),
        Err(WqeError::LengthOverflow)
    );
    let big = raw_send(
        240,
        IB_WR_RDMA_WRITE,
        0,
        1 << 31,
        2,
        &[(0, 1 << 30, 1), (0, 1 << 30, 1)],
    );
    assert!(SendWqe::parse(&big, rc, user(2, 0)).is_ok());
    let big = raw_send(
        240,
        IB_WR_RDMA_WRITE,
        0,
        (1 << 31) + 1,
        2,
        &[(0, 1 << 31, 1), (0, 1, 1)],
    );
    assert_eq!(
        SendWqe::parse(&big, rc, user(2, 0)),
        Err(WqeError::MessageTooLong((1 << 31) + 1))
    );
    // A hostile SGE count cannot make the parser walk far.
    let huge = raw_send(240, IB_WR_SEND, 0, 0, u32::MAX, &[]);
    assert_eq!(
        SendWqe::parse(&huge, rc, user(u32::MAX, 0)),
        Err(WqeError::DataOutOfSlot)
    );
    // No SGEs, no data.
    let empty = raw_send(208, IB_WR_SEND, 0, 0, 0, &[]);
    let w = SendWqe::parse(&empty, rc, user(0, 0)).unwrap();
    assert_eq!((w.length, w.num_sge, w.data), (0, 0, DataKind::Sges));
}

#[test]
fn inline_data_is_bounded() {
    let mut slot = raw_send(208 + 64, IB_WR_SEND, IB_SEND_INLINE, 64, 3, &[]);
    for (i, b) in slot[208..].iter_mut().enumerate() {
        *b = i as u8;
    }
    let w = SendWqe::parse(&slot, QpType::Uc, user(0, 64)).unwrap();
    assert_eq!((w.length, w.num_sge, w.data), (64, 0, DataKind::Inline));
    assert!(w.is_inline());
    assert_eq!(inline_data(&slot, w.length).unwrap()[63], 63);
    assert_eq!(inline_data(&slot, 65), None);
    assert_eq!(
        SendWqe::parse(&slot, QpType::Uc, user(0, 63)),
        Err(WqeError::InlineTooLong {
            length: 64,
            max_inline: 63
        })
    );
    assert_eq!(
        SendWqe::parse(&slot[..271], QpType::Uc, user(0, 64)),
        Err(WqeError::DataOutOfSlot)
    );
    // The inline flag means nothing to opcodes without WR_INLINE_MASK: C ignores it too.
    let read = raw_send(224, IB_WR_RDMA_READ, IB_SEND_INLINE, 5, 1, &[(0, 5, 1)]);
    let w = SendWqe::parse(&read, QpType::Rc, user(1, 0)).unwrap();
    assert_eq!(w.data, DataKind::Sges);
}

#[test]
fn atomic_write_carries_eight_bytes() {
    let mut slot = raw_send(216, IB_WR_ATOMIC_WRITE, 0, 8, 0, &[]);
    slot[208..216].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    set64(&mut slot, 24, 0x5000);
    set32(&mut slot, 32, 9);
    let w = SendWqe::parse(&slot, QpType::Rc, user(0, 0)).unwrap();
    assert_eq!((w.length, w.data), (8, DataKind::AtomicWrite));
    assert_eq!(
        w.detail,
        WrDetail::Rdma {
            remote_addr: 0x5000,
            rkey: 9
        }
    );
    assert_eq!(atomic_write_value(&slot), Some([1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(
        SendWqe::parse(&slot[..215], QpType::Rc, user(0, 0)),
        Err(WqeError::DataOutOfSlot)
    );
    set32(&mut slot, 184, 4000);
    assert_eq!(
        SendWqe::parse(&slot, QpType::Rc, user(0, 0)),
        Err(WqeError::AtomicWriteLength(4000))
    );
}

// ---------------------------------------------------------------------------------------------
// Writers.
// ---------------------------------------------------------------------------------------------

#[test]
fn writes_what_the_c_post_path_writes() {
    let mut slot = vec![0xa5u8; 256];
    let wr = SendWr {
        wr_id: 77,
        opcode: IB_WR_RDMA_WRITE_WITH_IMM,
        send_flags: IB_SEND_SIGNALED | IB_SEND_SOLICITED,
        ex: imm_to_ex(0x0102_0304),
        detail: WrDetail::Rdma {
            remote_addr: 0x4000,
            rkey: 0x55,
        },
    };
    let sges = [
        Sge {
            addr: 0x10,
            length: 3,
            lkey: 1,
        },
        Sge {
            addr: 0x20,
            length: 4,
            lkey: 2,
        },
    ];
    let w = write_send_wqe(
        &mut slot,
        QpType::Rc,
        kernel(2, 0),
        &wr,
        SendData::Sges(&sges),
    )
    .unwrap();
    assert_eq!((w.length, w.num_sge, w.iova), (7, 2, 0x4000));
    assert_eq!(w.wr(), wr);
    // The C layout, by hand.
    assert_eq!(&slot[0..8], &77u64.to_le_bytes());
    assert_eq!(&slot[8..12], &[0; 4]);
    assert_eq!(&slot[12..16], &1u32.to_le_bytes());
    assert_eq!(&slot[20..24], &[1, 2, 3, 4]);
    assert_eq!(&slot[24..32], &0x4000u64.to_le_bytes());
    assert_eq!(&slot[32..36], &0x55u32.to_le_bytes());
    assert!(slot[36..152].iter().all(|&b| b == 0));
    assert_eq!(&slot[152..160], &0x4000u64.to_le_bytes());
    assert!(slot[160..184].iter().all(|&b| b == 0));
    assert_eq!(&slot[184..188], &7u32.to_le_bytes()); // length
    assert_eq!(&slot[188..192], &7u32.to_le_bytes()); // resid
    assert_eq!(&slot[192..196], &[0; 4]); // cur_sge
    assert_eq!(&slot[196..200], &2u32.to_le_bytes()); // num_sge
    assert_eq!(&slot[200..208], &[0; 8]); // sge_offset, reserved
    assert_eq!(&slot[224..232], &0x20u64.to_le_bytes());
    assert!(slot[240..].iter().all(|&b| b == 0xa5), "past the data");
}

/// C `validate_send_wr`: a kernel atomic has 8 bytes of SGEs and an 8-byte aligned remote
/// address; `IB_SEND_INLINE` only on an opcode that can carry inline data.
#[test]
fn writer_refuses_what_validate_send_wr_does() {
    let rc = QpType::Rc;
    let mut slot = vec![0u8; 256];
    let atomic = |remote_addr| SendWr {
        wr_id: 1,
        opcode: IB_WR_ATOMIC_FETCH_AND_ADD,
        send_flags: 0,
        ex: 0,
        detail: WrDetail::Atomic {
            remote_addr,
            compare_add: 1,
            swap: 0,
            rkey: 7,
        },
    };
    let sge = |length| Sge {
        addr: 0x100,
        length,
        lkey: 3,
    };
    let ok = write_send_wqe(
        &mut slot,
        rc,
        kernel(2, 0),
        &atomic(0x1000),
        SendData::Sges(&[sge(8)]),
    );
    assert_eq!(ok.map(|w| w.length), Ok(8));
    let halves = [sge(4), sge(4)];
    assert!(write_send_wqe(
        &mut slot,
        rc,
        kernel(2, 0),
        &atomic(0x1000),
        SendData::Sges(&halves)
    )
    .is_ok());
    for (addr, sges) in [
        (0x1004, &[sge(8)][..]),
        (0x1000, &[sge(4)][..]),
        (0x1000, &[sge(16)][..]),
    ] {
        assert_eq!(
            write_send_wqe(
                &mut slot,
                rc,
                kernel(2, 0),
                &atomic(addr),
                SendData::Sges(sges)
            ),
            Err(WqeError::BadAtomic),
            "{addr:#x} {sges:?}"
        );
    }
    let read = SendWr {
        wr_id: 2,
        opcode: IB_WR_RDMA_READ,
        send_flags: IB_SEND_INLINE,
        ex: 0,
        detail: WrDetail::Rdma {
            remote_addr: 0x2000,
            rkey: 7,
        },
    };
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(2, 16),
            &read,
            SendData::Sges(&[sge(8)])
        ),
        Err(WqeError::InlineNotAllowed(IB_WR_RDMA_READ))
    );
    let plain = SendWr {
        send_flags: 0,
        ..read
    };
    assert!(write_send_wqe(
        &mut slot,
        rc,
        kernel(2, 16),
        &plain,
        SendData::Sges(&[sge(8)])
    )
    .is_ok());
}

#[test]
fn writer_refuses_inconsistent_requests() {
    let rc = QpType::Rc;
    let mut slot = vec![0u8; 256];
    let send = SendWr {
        wr_id: 1,
        opcode: IB_WR_SEND,
        send_flags: 0,
        ex: 0,
        detail: WrDetail::None,
    };
    let inline = SendData::Inline(&[1, 2, 3]);
    assert_eq!(
        write_send_wqe(&mut slot, rc, kernel(1, 16), &send, inline),
        Err(WqeError::Inconsistent)
    );
    let flagged = SendWr {
        send_flags: IB_SEND_INLINE,
        ..send
    };
    assert!(write_send_wqe(&mut slot, rc, kernel(1, 16), &flagged, inline).is_ok());
    assert_eq!(
        write_send_wqe(&mut slot, rc, kernel(1, 2), &flagged, inline),
        Err(WqeError::InlineTooLong {
            length: 3,
            max_inline: 2
        })
    );
    let wrong_detail = SendWr {
        detail: WrDetail::Rdma {
            remote_addr: 1,
            rkey: 2,
        },
        ..send
    };
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(1, 16),
            &wrong_detail,
            SendData::Sges(&[])
        ),
        Err(WqeError::Inconsistent)
    );
    assert_eq!(
        write_send_wqe(
            &mut slot,
            QpType::Uc,
            kernel(1, 16),
            &send,
            SendData::AtomicWrite([0; 8])
        ),
        Err(WqeError::Inconsistent)
    );
    let sges = [Sge::default(); 4];
    let mut short = vec![0x77u8; 208 + 63];
    assert_eq!(
        write_send_wqe(&mut short, rc, kernel(4, 0), &send, SendData::Sges(&sges)),
        Err(WqeError::DataOutOfSlot)
    );
    assert!(short.iter().all(|&b| b == 0x77), "nothing written");
    assert_eq!(
        write_send_wqe(
            &mut short[..207],
            rc,
            kernel(4, 0),
            &send,
            SendData::Sges(&[])
        ),
        Err(WqeError::Truncated)
    );
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(4, 0),
            &send,
            SendData::Sges(&sges[..3])
        ),
        Ok(SendWqe::parse(&slot, rc, kernel(4, 0)).unwrap())
    );
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(2, 0),
            &send,
            SendData::Sges(&sges[..3])
        ),
        Err(WqeError::TooManySge {
            num_sge: 3,
            max_sge: 2
        })
    );
    let over = [
        Sge {
            length: u32::MAX,
            ..Sge::default()
        },
        Sge {
            length: 1,
            ..Sge::default()
        },
    ];
    assert_eq!(
        write_send_wqe(&mut slot, rc, kernel(2, 0), &send, SendData::Sges(&over)),
        Err(WqeError::LengthOverflow)
    );
    let reg = SendWr {
        opcode: IB_WR_REG_MR,
        detail: WrDetail::Reg { key: 5, access: 1 },
        ..send
    };
    assert_eq!(
        write_send_wqe(&mut slot, rc, user(2, 0), &reg, SendData::None),
        Err(WqeError::KernelOnlyOpcode(IB_WR_REG_MR))
    );
    let w = write_send_wqe(&mut slot, rc, kernel(2, 0), &reg, SendData::None).unwrap();
    assert_eq!(&slot[24..32], &[0; 8], "no MR pointer");
    assert_eq!(w.detail, WrDetail::Reg { key: 5, access: 1 });
}

#[test]
fn recv_wqes() {
    let sges = [
        Sge {
            addr: 0x100,
            length: 10,
            lkey: 1,
        },
        Sge {
            addr: 0x200,
            length: 0,
            lkey: 2,
        },
        Sge {
            addr: 0x300,
            length: 5,
            lkey: 3,
        },
    ];
    let mut slot = vec![0xeeu8; 128];
    let w = write_recv_wqe(&mut slot, 99, &sges, 3).unwrap();
    assert_eq!(
        w,
        RecvWqe {
            wr_id: 99,
            num_sge: 3,
            length: 15
        }
    );
    assert_eq!(&slot[0..8], &99u64.to_le_bytes());
    assert_eq!(&slot[8..16], &[0; 8]);
    assert_eq!(&slot[16..20], &15u32.to_le_bytes());
    assert_eq!(&slot[20..24], &15u32.to_le_bytes());
    assert_eq!(&slot[28..32], &3u32.to_le_bytes());
    assert_eq!(&slot[40..48], &0x100u64.to_le_bytes());
    assert_eq!(recv_sge(&slot, 2), Some(sges[2]));
    assert!(slot[88..].iter().all(|&b| b == 0xee));
    assert_eq!(RecvWqe::parse(&slot, 3), Ok(w));
    assert_eq!(
        RecvWqe::parse(&slot, 2),
        Err(WqeError::TooManySge {
            num_sge: 3,
            max_sge: 2
        })
    );
    assert_eq!(RecvWqe::parse(&slot[..87], 3), Err(WqeError::DataOutOfSlot));
    assert_eq!(RecvWqe::parse(&slot[..39], 3), Err(WqeError::Truncated));
    set32(&mut slot, 16, 16);
    assert_eq!(
        RecvWqe::parse(&slot, 3),
        Err(WqeError::LengthMismatch {
            length: 16,
            sum: 15
        })
    );
    assert_eq!(
        write_recv_wqe(&mut slot, 1, &sges, 2),
        Err(WqeError::TooManySge {
            num_sge: 3,
            max_sge: 2
        })
    );
    assert_eq!(
        write_recv_wqe(&mut slot[..87], 1, &sges, 3),
        Err(WqeError::DataOutOfSlot)
    );
    let big = [Sge {
        length: PORT_MAX_MSG_SZ + 1,
        ..Sge::default()
    }];
    assert_eq!(
        write_recv_wqe(&mut slot, 1, &big, 3),
        Err(WqeError::MessageTooLong(PORT_MAX_MSG_SZ + 1))
    );
    let w = write_recv_wqe(&mut slot, 5, &[], 0).unwrap();
    assert_eq!((w.num_sge, w.length), (0, 0));
}

// ---------------------------------------------------------------------------------------------
// Round trips and hostile slots.
// ---------------------------------------------------------------------------------------------

/// The opcodes a queue of this type accepts, kernel-only ones included.
fn allowed(qpt: QpType) -> Vec<u32> {
    (0..=0x21)
        .filter(|&op| wr_opcode_mask(op, qpt).is_some())
        .collect()
}

/// The detail `opcode` reads back on `qpt`, filled from `n`.
/// `flags`, the detail numbers `n` and the SGEs made into a WR C's `validate_send_wr` takes:
/// without [`IB_SEND_INLINE`] where the opcode carries no inline data; for an atomic, an 8-byte
/// aligned remote address (`n[0]`) and one 8-byte SGE (at the first of `sges`, if any)
/// returned in place of `sges`.
fn kernel_valid(
    mask: WrMask,
    flags: u32,
    n: [u64; 4],
    sges: &[Sge],
) -> (u32, [u64; 4], Option<Sge>) {
    let flags = if mask.contains(WrMask::INLINE) {
        flags
    } else {
        flags & !IB_SEND_INLINE
    };
    if !mask.contains(WrMask::ATOMIC) {
        return (flags, n, None);
    }
    let sge = Sge {
        length: 8,
        ..sges.first().copied().unwrap_or_default()
    };
    (flags, [n[0] & !7, n[1], n[2], n[3]], Some(sge))
}

fn detail_for(qpt: QpType, opcode: u32, n: [u64; 4]) -> WrDetail {
    let lo = |x: u64| x as u32;
    if matches!(qpt, QpType::Ud | QpType::Gsi) {
        return WrDetail::Ud {
            remote_qpn: lo(n[0]),
            remote_qkey: lo(n[1]),
            pkey_index: n[2] as u16,
            ah_num: lo(n[3]),
        };
    }
    match opcode {
        IB_WR_RDMA_WRITE
        | IB_WR_RDMA_WRITE_WITH_IMM
        | IB_WR_RDMA_READ
        | IB_WR_RDMA_READ_WITH_INV
        | IB_WR_ATOMIC_WRITE => WrDetail::Rdma {
            remote_addr: n[0],
            rkey: lo(n[1]),
        },
        IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD => WrDetail::Atomic {
            remote_addr: n[0],
            compare_add: n[1],
            swap: n[2],
            rkey: lo(n[3]),
        },
        IB_WR_FLUSH => WrDetail::Flush {
            remote_addr: n[0],
            length: lo(n[1]),
            rkey: lo(n[2]),
            type_: n[3] as u8,
            level: (n[3] >> 8) as u8,
        },
        IB_WR_BIND_MW => WrDetail::Mw {
            addr: n[0],
            length: n[1],
            mr_lkey: lo(n[2]),
            mw_rkey: (n[2] >> 32) as u32,
            rkey: lo(n[3]),
            access: (n[3] >> 32) as u32,
        },
        IB_WR_REG_MR => WrDetail::Reg {
            key: lo(n[0]),
            access: lo(n[1]),
        },
        _ => WrDetail::None,
    }
}

fn qpt() -> impl Strategy<Value = QpType> {
    prop::sample::select(vec![QpType::Gsi, QpType::Rc, QpType::Uc, QpType::Ud])
}

fn sge_strategy() -> impl Strategy<Value = Sge> {
    (any::<u64>(), 0..0x100_0000u32, any::<u32>()).prop_map(|(addr, length, lkey)| Sge {
        addr,
        length,
        lkey,
    })
}

/// What a valid parse guarantees, checked against the slot.
fn check_send(slot: &[u8], qpt: QpType, limits: SendLimits, w: &SendWqe) {
    assert_eq!(Some(w.mask), wr_opcode_mask(w.opcode, qpt));
    assert!(limits.allow_kernel_only || !wr_opcode_is_kernel_only(w.opcode));
    assert_eq!(w.data, DataKind::of(w.mask, w.send_flags));
    match w.data {
        DataKind::Sges => {
            assert!(w.num_sge <= limits.max_sge);
            let mut sum = 0u64;
            for i in 0..w.num_sge {
                sum += u64::from(sge(slot, i).unwrap().length);
            }
            assert_eq!(sum, u64::from(w.length));
            assert!(w.length <= PORT_MAX_MSG_SZ);
        }
        DataKind::Inline => {
            assert!(w.length <= limits.max_inline);
            assert_eq!(
                inline_data(slot, w.length).unwrap().len(),
                w.length as usize
            );
            assert_eq!(w.num_sge, 0);
        }
        DataKind::AtomicWrite => {
            assert_eq!((w.length, w.num_sge), (8, 0));
            assert!(atomic_write_value(slot).is_some());
        }
        DataKind::None => assert_eq!(w.num_sge, 0),
    }
    // The SGE walk of a valid WQE never runs out of SGEs or slot.
    if w.data == DataKind::Sges {
        let mut cursor = DmaCursor::new(w.length);
        while !cursor.is_done() {
            match cursor.next_chunk(|i| sge(slot, i), w.num_sge, cursor.resid.min(1 << 20)) {
                Ok(Some(_)) => {}
                Err(DmaError::AddrOverflow) => break,
                other => panic!("{other:?}"),
            }
        }
    }
}

proptest! {
    #[test]
    fn send_wqes_round_trip(
        qpt in qpt(),
        pick in any::<prop::sample::Index>(),
        wr_id in any::<u64>(),
        flags in 0..32u32,
        ex in any::<u32>(),
        n in any::<[u64; 4]>(),
        max_sge in 0..8u32,
        max_inline in 0..300u32,
        sges in prop::collection::vec(sge_strategy(), 0..8),
        inline in prop::collection::vec(any::<u8>(), 0..300),
        value in any::<[u8; 8]>(),
        fill in any::<u8>(),
    ) {
        let ops = allowed(qpt);
        let opcode = ops[pick.index(ops.len())];
        let size = send_wqe_size(max_sge, max_inline);
        let limits = kernel(size.max_sge, size.max_inline);
        let mask = wr_opcode_mask(opcode, qpt).unwrap();
        let sges = &sges[..sges.len().min(size.max_sge as usize)];
        // WRs C's `validate_send_wr` takes: an atomic's 8 bytes at an aligned address, inline
        // only where the opcode carries it (its refusals: `writer_refuses_what_validate_send_wr_does`).
        let (flags, n, atomic_sge) = kernel_valid(mask, flags, n, sges);
        let sges = atomic_sge.as_ref().map_or(sges, core::slice::from_ref);
        let wr = SendWr { wr_id, opcode, send_flags: flags, ex, detail: detail_for(qpt, opcode, n) };
        if mask.contains(WrMask::ATOMIC) && size.max_sge == 0 {
            // No room for an atomic's SGE: without one it has no 8 bytes.
            let mut slot = vec![fill; size.elem_size as usize];
            prop_assert_eq!(
                write_send_wqe(&mut slot, qpt, limits, &wr, SendData::Sges(&[])).map(|_| ()),
                Err(WqeError::BadAtomic)
            );
            return Ok(());
        }
        if DataKind::of(mask, flags) == DataKind::AtomicWrite && size.max_inline < 8 {
            // No room for an ATOMIC WRITE's 8 bytes (a send queue without data room): refused.
            let mut slot = vec![fill; size.elem_size as usize];
            prop_assert_eq!(
                write_send_wqe(&mut slot, qpt, limits, &wr, SendData::AtomicWrite(value))
                    .map(|_| ()),
                Err(WqeError::DataOutOfSlot)
            );
            return Ok(());
        }
        let inline = &inline[..inline.len().min(size.max_inline as usize)];
        let data = match DataKind::of(mask, flags) {
            DataKind::None => SendData::None,
            DataKind::Sges => SendData::Sges(sges),
            DataKind::Inline => SendData::Inline(inline),
            DataKind::AtomicWrite => SendData::AtomicWrite(value),
        };
        let mut slot = vec![fill; size.elem_size as usize];
        let w = write_send_wqe(&mut slot, qpt, limits, &wr, data).unwrap();
        prop_assert_eq!(w.wr(), wr);
        prop_assert_eq!(SendWqe::parse(&slot, qpt, limits), Ok(w));
        prop_assert_eq!(w.iova, wr.detail.remote_addr().unwrap_or(0));
        match data {
            SendData::Sges(list) => {
                prop_assert_eq!(w.num_sge as usize, list.len());
                for (i, s) in list.iter().enumerate() {
                    prop_assert_eq!(sge(&slot, i as u32), Some(*s));
                }
            }
            SendData::Inline(bytes) => {
                prop_assert_eq!(inline_data(&slot, w.length), Some(bytes));
            }
            SendData::AtomicWrite(v) => prop_assert_eq!(atomic_write_value(&slot), Some(v)),
            SendData::None => prop_assert_eq!(w.num_sge, 0),
        }
        check_send(&slot, qpt, limits, &w);
        // A user ring never gets kernel-only opcodes through.
        let as_user = SendWqe::parse(&slot, qpt, user(limits.max_sge, limits.max_inline));
        if wr_opcode_is_kernel_only(opcode) {
            prop_assert_eq!(as_user, Err(WqeError::KernelOnlyOpcode(opcode)));
        } else {
            prop_assert_eq!(as_user, Ok(w));
        }
    }

    #[test]
    fn recv_wqes_round_trip(
        wr_id in any::<u64>(),
        max_sge in 0..8u32,
        sges in prop::collection::vec(sge_strategy(), 0..8),
        fill in any::<u8>(),
    ) {
        let sges = &sges[..sges.len().min(max_sge as usize)];
        let mut slot = vec![fill; recv_wqe_size(max_sge) as usize];
        let w = write_recv_wqe(&mut slot, wr_id, sges, max_sge).unwrap();
        prop_assert_eq!(RecvWqe::parse(&slot, max_sge), Ok(w));
        prop_assert_eq!(w.wr_id, wr_id);
        prop_assert_eq!(w.num_sge as usize, sges.len());
        prop_assert_eq!(u64::from(w.length), sges.iter().map(|s| u64::from(s.length)).sum::<u64>());
        for (i, s) in sges.iter().enumerate() {
            prop_assert_eq!(recv_sge(&slot, i as u32), Some(*s));
        }
    }

    /// Any bytes: no panic, and whatever parses keeps its promises.
    #[test]
    fn hostile_send_slots(
        slot in prop::collection::vec(any::<u8>(), 0..800),
        qpt in prop::sample::select(QpType::ALL.to_vec()),
        max_sge in prop::sample::select(vec![0u32, 1, 4, 32, u32::MAX]),
        max_inline in prop::sample::select(vec![0u32, 16, 512, u32::MAX]),
        allow in any::<bool>(),
    ) {
        let limits = SendLimits { max_sge, max_inline, allow_kernel_only: allow };
        if let Ok(w) = SendWqe::parse(&slot, qpt, limits) {
            check_send(&slot, qpt, limits, &w);
        }
        for i in [0, 1, 5, u32::MAX] {
            let _ = sge(&slot, i);
            let _ = recv_sge(&slot, i);
        }
        let _ = inline_data(&slot, u32::MAX);
        let _ = atomic_write_value(&slot);
        let _ = ud_av_bytes(&slot);
        if let Ok(r) = RecvWqe::parse(&slot, max_sge) {
            prop_assert!(r.num_sge <= max_sge);
            let mut sum = 0u64;
            for i in 0..r.num_sge {
                sum += u64::from(recv_sge(&slot, i).unwrap().length);
            }
            prop_assert_eq!(sum, u64::from(r.length));
        }
        let _ = UverbsWc::read(&slot);
    }

    /// Valid slots with a few bytes changed: more of them get far into the parser.
    #[test]
    fn mutated_send_slots(
        qpt in qpt(),
        pick in any::<prop::sample::Index>(),
        flags in 0..32u32,
        sges in prop::collection::vec(sge_strategy(), 0..5),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let ops = allowed(qpt);
        let opcode = ops[pick.index(ops.len())];
        let limits = kernel(4, 80);
        let mask = wr_opcode_mask(opcode, qpt).unwrap();
        let sges = &sges[..sges.len().min(4)];
        let (flags, n, atomic_sge) = kernel_valid(mask, flags, [1, 2, 3, 4], sges);
        let sges = atomic_sge.as_ref().map_or(sges, core::slice::from_ref);
        let wr = SendWr { wr_id: 1, opcode, send_flags: flags, ex: 0, detail: detail_for(qpt, opcode, n) };
        let data = match DataKind::of(mask, flags) {
            DataKind::None => SendData::None,
            DataKind::Sges => SendData::Sges(sges),
            DataKind::Inline => SendData::Inline(&[7; 40]),
            DataKind::AtomicWrite => SendData::AtomicWrite([9; 8]),
        };
        let mut slot = vec![0u8; send_wqe_size(4, 80).elem_size as usize];
        write_send_wqe(&mut slot, qpt, limits, &wr, data).unwrap();
        for (at, byte) in edits {
            // Mostly the fields that matter: opcode, flags, dma.length, dma.num_sge, SGE lengths.
            let hot = [12, 16, 184, 185, 187, 196, 197, 216, 232, 248, 219, 235];
            let i = if byte % 2 == 0 { hot[at.index(hot.len())] } else { at.index(slot.len()) };
            slot[i] = byte;
        }
        if let Ok(w) = SendWqe::parse(&slot, qpt, limits) {
            check_send(&slot, qpt, limits, &w);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The DMA cursor.
// ---------------------------------------------------------------------------------------------

/// C `copy_data()` of `rxe_mr.c`, transliterated with `int` arithmetic, recording the
/// `rxe_mr_copy()` calls instead of copying. `dma` is (cur_sge, sge_offset, resid).
fn c_copy_data(
    sges: &[Sge],
    num_sge: u32,
    dma: &mut (u32, u32, u32),
    mut length: i64,
) -> Result<Vec<(u64, u32, u32)>, i32> {
    let mut calls = Vec::new();
    if length == 0 {
        return Ok(calls);
    }
    let mut sge = dma.0 as usize;
    let mut offset = i64::from(dma.1);
    let mut resid = i64::from(dma.2);
    if length > resid {
        return Err(-22);
    }
    while length > 0 {
        let mut bytes = length;
        if offset >= i64::from(sges[sge].length) {
            sge += 1;
            dma.0 += 1;
            offset = 0;
            if dma.0 >= num_sge {
                return Err(-28);
            }
            if sges[sge].length == 0 {
                continue;
            }
        }
        let s = sges[sge];
        if bytes > i64::from(s.length) - offset {
            bytes = i64::from(s.length) - offset;
        }
        if bytes > 0 {
            calls.push((s.addr + offset as u64, bytes as u32, s.lkey));
            offset += bytes;
            resid -= bytes;
            length -= bytes;
        }
    }
    dma.1 = offset as u32;
    dma.2 = resid as u32;
    Ok(calls)
}

/// SGEs at disjoint addresses, `lens` bytes each, lkey = index.
fn spaced(lens: &[u32]) -> Vec<Sge> {
    lens.iter()
        .enumerate()
        .map(|(i, &length)| Sge {
            addr: 0x10_0000 * (i as u64 + 1),
            length,
            lkey: i as u32,
        })
        .collect()
}

/// Copies `len` bytes with the cursor, chunk by chunk.
fn copy(
    cursor: &mut DmaCursor,
    sges: &[Sge],
    num_sge: u32,
    len: u32,
) -> Result<Vec<(u64, u32, u32)>, DmaError> {
    let mut out = Vec::new();
    let mut left = len;
    while left > 0 {
        let c = cursor
            .next_chunk(|i| sges.get(i as usize).copied(), num_sge, left)?
            .unwrap();
        out.push((c.addr, c.len, c.lkey));
        left -= c.len;
    }
    Ok(out)
}

#[test]
fn cursor_walks_like_copy_data() {
    let sges = spaced(&[5, 0, 0, 3, 10]);
    let mut cursor = DmaCursor::new(18);
    let mut dma = (0, 0, 18);
    for len in [2, 3, 4, 0, 9] {
        let ours = copy(&mut cursor, &sges, 5, len).unwrap();
        let c = c_copy_data(&sges, 5, &mut dma, i64::from(len)).unwrap();
        assert_eq!(ours, c);
        assert_eq!((cursor.cur_sge, cursor.sge_offset, cursor.resid), dma);
    }
    assert!(cursor.is_done());
    // Used up SGEs are left lazily, as in C.
    assert_eq!((cursor.cur_sge, cursor.sge_offset), (4, 10));
    assert_eq!(
        cursor.next_chunk(|i| sges.get(i as usize).copied(), 5, 1),
        Err(DmaError::TooLong)
    );
    assert_eq!(cursor.next_chunk(|_| None, 5, 0), Ok(None));
}

#[test]
fn cursor_errors() {
    let sges = spaced(&[4, 4]);
    let at = |i: u32| sges.get(i as usize).copied();
    // resid larger than the SGEs: C -ENOSPC.
    let mut cursor = DmaCursor::new(20);
    assert_eq!(cursor.advance(at, 2, 8), Ok(()));
    let before = cursor;
    assert_eq!(cursor.next_chunk(at, 2, 1), Err(DmaError::NoSpace));
    assert_eq!(cursor, before, "unchanged on error");
    assert_eq!(cursor.advance(at, 2, 12), Err(DmaError::NoSpace));
    assert_eq!(cursor, before);
    // An SGE that cannot be read.
    let mut cursor = DmaCursor::new(8);
    assert_eq!(cursor.next_chunk(|_| None, 2, 1), Err(DmaError::BadSge(0)));
    // num_sge 0.
    assert_eq!(
        DmaCursor::new(1).next_chunk(at, 0, 1),
        Err(DmaError::NoSpace)
    );
    // Addresses that would wrap.
    let top = [Sge {
        addr: u64::MAX - 1,
        length: 4,
        lkey: 0,
    }];
    let mut cursor = DmaCursor::new(4);
    assert_eq!(
        cursor.next_chunk(|i| top.get(i as usize).copied(), 1, 2),
        Ok(Some(Chunk {
            addr: u64::MAX - 1,
            len: 2,
            lkey: 0
        }))
    );
    assert_eq!(
        cursor.next_chunk(|i| top.get(i as usize).copied(), 1, 1),
        Err(DmaError::AddrOverflow)
    );
    // Inline data.
    let mut cursor = DmaCursor::new(10);
    assert_eq!(cursor.next_inline(4), Ok(0..4));
    assert_eq!(cursor.next_inline(6), Ok(4..10));
    assert_eq!(cursor.next_inline(1), Err(DmaError::TooLong));
    assert_eq!(cursor.next_inline(0), Ok(10..10));
    let mut hostile = DmaCursor {
        cur_sge: 0,
        sge_offset: u32::MAX,
        resid: 5,
    };
    assert_eq!(hostile.next_inline(5), Err(DmaError::TooLong));
}

proptest! {
    /// The chunks are the requested bytes, in order, never crossing an SGE, and the cursor ends
    /// in C's state.
    #[test]
    fn cursor_chunks_are_the_bytes(
        lens in prop::collection::vec(prop_oneof![Just(0u32), 1..40u32], 0..8),
        pieces in prop::collection::vec(0..60u32, 0..20),
    ) {
        let sges = spaced(&lens);
        let num_sge = sges.len() as u32;
        let total: u32 = lens.iter().sum();
        let flat: Vec<u64> = sges.iter().flat_map(|s| s.addr..s.addr + u64::from(s.length)).collect();
        let mut cursor = DmaCursor::new(total);
        let mut dma = (0, 0, total);
        let mut got: Vec<u64> = Vec::new();
        for p in pieces {
            let len = p.min(cursor.resid);
            let ours = copy(&mut cursor, &sges, num_sge, len);
            let c = c_copy_data(&sges, num_sge, &mut dma, i64::from(len));
            prop_assert_eq!(&ours.clone().map_err(|_| ()), &c.clone().map_err(|_| ()));
            let ours = ours.unwrap();
            for &(addr, l, lkey) in &ours {
                prop_assert!(l >= 1);
                let s = sges[lkey as usize];
                prop_assert!(addr >= s.addr && addr + u64::from(l) <= s.addr + u64::from(s.length));
                got.extend(addr..addr + u64::from(l));
            }
            prop_assert_eq!((cursor.cur_sge, cursor.sge_offset, cursor.resid), dma);
        }
        prop_assert_eq!(&got[..], &flat[..got.len()]);
        // And the rest in one go.
        let resid = cursor.resid;
        let rest = copy(&mut cursor, &sges, num_sge, resid).unwrap();
        got.extend(rest.iter().flat_map(|&(a, l, _)| a..a + u64::from(l)));
        prop_assert_eq!(got, flat);
        prop_assert!(cursor.is_done());
    }

    /// `advance` lands where copying the same bytes does.
    #[test]
    fn advance_is_copy_without_data(
        lens in prop::collection::vec(0..30u32, 1..6),
        a in 0..200u32,
        b in 0..200u32,
    ) {
        let sges = spaced(&lens);
        let n = sges.len() as u32;
        let total: u32 = lens.iter().sum();
        let a = a.min(total);
        let b = b.min(total - a);
        let mut copied = DmaCursor::new(total);
        copy(&mut copied, &sges, n, a).unwrap();
        copy(&mut copied, &sges, n, b).unwrap();
        let mut advanced = DmaCursor::new(total);
        advanced.advance(|i| sges.get(i as usize).copied(), n, a).unwrap();
        advanced.advance(|i| sges.get(i as usize).copied(), n, b).unwrap();
        prop_assert_eq!(advanced, copied);
    }

    /// Any cursor, SGEs and count: no panic, and an error leaves the cursor alone.
    #[test]
    fn hostile_cursors(
        cur_sge in any::<u32>(),
        sge_offset in any::<u32>(),
        resid in any::<u32>(),
        sges in prop::collection::vec((any::<u64>(), any::<u32>(), any::<u32>()), 0..6),
        num_sge in prop_oneof![0..8u32, Just(u32::MAX)],
        max_len in any::<u32>(),
    ) {
        let sges: Vec<Sge> = sges.into_iter().map(|(addr, length, lkey)| Sge { addr, length, lkey }).collect();
        let mut cursor = DmaCursor { cur_sge: cur_sge % 8, sge_offset, resid };
        let before = cursor;
        match cursor.next_chunk(|i| sges.get(i as usize).copied(), num_sge, max_len) {
            Ok(Some(c)) => {
                prop_assert!(c.len >= 1 && c.len <= max_len);
                prop_assert_eq!(cursor.resid, before.resid - c.len);
                prop_assert!(c.addr.checked_add(u64::from(c.len - 1)).is_some());
            }
            Ok(None) => prop_assert_eq!(max_len, 0),
            Err(_) => prop_assert_eq!(cursor, before),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Completions.
// ---------------------------------------------------------------------------------------------

fn some_wc() -> UverbsWc {
    UverbsWc {
        wr_id: 0x0102_0304_0506_0708,
        status: IB_WC_REM_ACCESS_ERR,
        opcode: IB_WC_RECV_RDMA_WITH_IMM,
        vendor_err: 0x11,
        byte_len: 0x2233,
        ex: imm_to_ex(0xaabb_ccdd),
        qp_num: 0x12,
        src_qp: 0x34,
        wc_flags: IB_WC_GRH | IB_WC_WITH_IMM,
        pkey_index: 0x5566,
        slid: 0x7788,
        sl: 9,
        dlid_path_bits: 10,
        port_num: 1,
    }
}

#[test]
fn wc_layout() {
    let mut slot = [0xffu8; 128];
    some_wc().write(&mut slot).unwrap();
    let mut want = [0u8; 72];
    want[0..8].copy_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
    want[8..12].copy_from_slice(&10u32.to_le_bytes());
    want[12..16].copy_from_slice(&129u32.to_le_bytes());
    want[16..20].copy_from_slice(&0x11u32.to_le_bytes());
    want[20..24].copy_from_slice(&0x2233u32.to_le_bytes());
    want[24..28].copy_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd]);
    want[28..32].copy_from_slice(&0x12u32.to_le_bytes());
    want[32..36].copy_from_slice(&0x34u32.to_le_bytes());
    want[36..40].copy_from_slice(&3u32.to_le_bytes());
    want[40..42].copy_from_slice(&0x5566u16.to_le_bytes());
    want[42..44].copy_from_slice(&0x7788u16.to_le_bytes());
    want[44] = 9;
    want[45] = 10;
    want[46] = 1;
    assert_eq!(&slot[..72], &want[..]);
    assert!(slot[72..].iter().all(|&b| b == 0xff), "past the CQE");
    assert_eq!(UverbsWc::read(&slot), Ok(some_wc()));
    assert_eq!(some_wc().imm_be_bytes(), [0xaa, 0xbb, 0xcc, 0xdd]);
    assert_eq!(CQE_SIZE, 72);

    let mut short = [0xffu8; 47];
    assert_eq!(some_wc().write(&mut short), Err(WqeError::Truncated));
    assert!(short.iter().all(|&b| b == 0xff));
    assert_eq!(UverbsWc::read(&short), Err(WqeError::Truncated));
    let mut exact = [0xffu8; 48];
    some_wc().write(&mut exact).unwrap();
    assert_eq!(exact[47], 0);
    assert_eq!(UverbsWc::read(&exact), Ok(some_wc()));
}

proptest! {
    #[test]
    fn wc_round_trips(
        a in any::<(u64, u32, u32, u32, u32, u32)>(),
        b in any::<(u32, u32, u32, u16, u16, u8, u8, u8)>(),
        len in 48..200usize,
        fill in any::<u8>(),
    ) {
        let wc = UverbsWc {
            wr_id: a.0, status: WcStatus::from_raw(a.1 % 22).unwrap(), opcode: a.2, vendor_err: a.3, byte_len: a.4, ex: a.5,
            qp_num: b.0, src_qp: b.1, wc_flags: b.2, pkey_index: b.3, slid: b.4, sl: b.5,
            dlid_path_bits: b.6, port_num: b.7,
        };
        let mut slot = vec![fill; len];
        wc.write(&mut slot).unwrap();
        prop_assert_eq!(UverbsWc::read(&slot), Ok(wc));
        prop_assert_eq!(slot[47], 0);
        prop_assert!(slot[48..len.min(72)].iter().all(|&x| x == 0));
        prop_assert!(slot[len.min(72)..].iter().all(|&x| x == fill));
    }
}

/// `wr_to_wc_opcode()` of `rxe_comp.c`.
#[test]
fn wr_to_wc_opcode_is_the_c_switch() {
    let c: &[(u32, u32)] = &[
        (IB_WR_RDMA_WRITE, IB_WC_RDMA_WRITE),
        (IB_WR_RDMA_WRITE_WITH_IMM, IB_WC_RDMA_WRITE),
        (IB_WR_SEND, IB_WC_SEND),
        (IB_WR_SEND_WITH_IMM, IB_WC_SEND),
        (IB_WR_RDMA_READ, IB_WC_RDMA_READ),
        (IB_WR_ATOMIC_CMP_AND_SWP, IB_WC_COMP_SWAP),
        (IB_WR_ATOMIC_FETCH_AND_ADD, IB_WC_FETCH_ADD),
        (IB_WR_LSO, IB_WC_LSO),
        (IB_WR_SEND_WITH_INV, IB_WC_SEND),
        (IB_WR_RDMA_READ_WITH_INV, IB_WC_RDMA_READ),
        (IB_WR_LOCAL_INV, IB_WC_LOCAL_INV),
        (IB_WR_REG_MR, IB_WC_REG_MR),
        (IB_WR_BIND_MW, IB_WC_BIND_MW),
        (IB_WR_ATOMIC_WRITE, IB_WC_ATOMIC_WRITE),
        (IB_WR_FLUSH, IB_WC_FLUSH),
    ];
    for op in (0..0x100).chain([u32::MAX]) {
        let want = c.iter().find(|r| r.0 == op).map(|r| r.1);
        assert_eq!(wr_to_wc_opcode(op), want, "{op:#x}");
    }
}

/// `make_send_cqe()` of `rxe_comp.c`: opcode, flags and length only on success.
#[test]
fn send_cqe_fields_are_c_make_send_cqe() {
    // (WR opcode, length) -> (WC opcode, flags, byte_len), on success.
    type Case = ((u32, u32), (u32, u32, u32));
    let ok: &[Case] = &[
        (
            (IB_WR_SEND_WITH_IMM, 100),
            (IB_WC_SEND, IB_WC_WITH_IMM, 100),
        ),
        (
            (IB_WR_RDMA_WRITE_WITH_IMM, 4096),
            (IB_WC_RDMA_WRITE, IB_WC_WITH_IMM, 4096),
        ),
        ((IB_WR_SEND, 7), (IB_WC_SEND, 0, 7)),
        ((IB_WR_RDMA_WRITE, 0), (IB_WC_RDMA_WRITE, 0, 0)),
        ((IB_WR_ATOMIC_FETCH_AND_ADD, 8), (IB_WC_FETCH_ADD, 0, 8)),
        ((IB_WR_FLUSH, 16), (IB_WC_FLUSH, 0, 16)),
        // C stores wr_to_wc_opcode's 0xff for an opcode it does not know.
        ((0x7f, 1), (0xff, 0, 1)),
    ];
    for &((op, len), want) in ok {
        assert_eq!(send_cqe_fields(op, len, IB_WC_SUCCESS), want, "{op:#x}");
    }
    for status in [
        IB_WC_WR_FLUSH_ERR,
        IB_WC_LOC_QP_OP_ERR,
        IB_WC_REM_ACCESS_ERR,
    ] {
        assert_eq!(send_cqe_fields(IB_WR_SEND_WITH_IMM, 100, status), (0, 0, 0));
    }
}

// ---------------------------------------------------------------------------------------------
// Requester opcode selection.
// ---------------------------------------------------------------------------------------------

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

#[test]
fn receive_buffer_failures_complete_with_their_status() {
    use crate::proto::wqe::{DmaError, IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR};
    assert_eq!(DmaError::TooLong.recv_status(), IB_WC_LOC_LEN_ERR);
    assert_eq!(DmaError::NoSpace.recv_status(), IB_WC_LOC_LEN_ERR);
    assert_eq!(DmaError::BadSge(3).recv_status(), IB_WC_LOC_QP_OP_ERR);
    // An SGE at 2^64 - 16 of 64 bytes: no MR holds its end.
    assert_eq!(DmaError::AddrOverflow.recv_status(), IB_WC_LOC_PROT_ERR);
}

#[test]
fn wc_status_values_are_c_enum_ib_wc_status() {
    for raw in 0..22 {
        assert_eq!(WcStatus::from_raw(raw).unwrap().raw(), raw);
    }
    assert_eq!(WcStatus::from_raw(22), None);
    assert_eq!(IB_WC_REM_OP_ERR.raw(), 11);
    assert_eq!(WcStatus::GeneralErr.raw(), 21);
    assert!(WcStatus::Success.is_success() && !IB_WC_WR_FLUSH_ERR.is_success());
}
