// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Completions (`proto/wqe/cqe.rs`): the CQE layout, round trips, and C `wr_to_wc_opcode()` and
//! `make_send_cqe()` of `rxe_comp.c`.

use std::vec;

use proptest::prelude::*;

use crate::proto::queue::CQE_SIZE;
use crate::proto::wqe::*;

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
