// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The verbs numbers of `proto/wqe/verbs.rs` against the C enums (`ib_verbs.h`,
//! `ib_user_verbs.h`).

use crate::proto::wqe::*;

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
