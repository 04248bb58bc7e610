// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The verbs numbers in WQEs and completions, with the C values (`ib_verbs.h`,
//! `ib_user_verbs.h`): the WR opcodes `IB_WR_*` (`enum ib_wr_opcode`), the send flags
//! `IB_SEND_*`, the completion status [`WcStatus`] (`enum ib_wc_status`) and the completion
//! opcodes and flags `IB_WC_*` (`enum ib_wc_opcode`, `enum ib_wc_flags`).

/// `IB_WR_RDMA_WRITE` (= `IB_UVERBS_WR_RDMA_WRITE`).
pub const IB_WR_RDMA_WRITE: u32 = 0;
/// `IB_WR_RDMA_WRITE_WITH_IMM` (= `IB_UVERBS_WR_RDMA_WRITE_WITH_IMM`).
pub const IB_WR_RDMA_WRITE_WITH_IMM: u32 = 1;
/// `IB_WR_SEND` (= `IB_UVERBS_WR_SEND`).
pub const IB_WR_SEND: u32 = 2;
/// `IB_WR_SEND_WITH_IMM` (= `IB_UVERBS_WR_SEND_WITH_IMM`).
pub const IB_WR_SEND_WITH_IMM: u32 = 3;
/// `IB_WR_RDMA_READ` (= `IB_UVERBS_WR_RDMA_READ`).
pub const IB_WR_RDMA_READ: u32 = 4;
/// `IB_WR_ATOMIC_CMP_AND_SWP` (= `IB_UVERBS_WR_ATOMIC_CMP_AND_SWP`).
pub const IB_WR_ATOMIC_CMP_AND_SWP: u32 = 5;
/// `IB_WR_ATOMIC_FETCH_AND_ADD` (= `IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD`).
pub const IB_WR_ATOMIC_FETCH_AND_ADD: u32 = 6;
/// `IB_WR_LOCAL_INV` (= `IB_UVERBS_WR_LOCAL_INV`).
pub const IB_WR_LOCAL_INV: u32 = 7;
/// `IB_WR_BIND_MW` (= `IB_UVERBS_WR_BIND_MW`).
pub const IB_WR_BIND_MW: u32 = 8;
/// `IB_WR_SEND_WITH_INV` (= `IB_UVERBS_WR_SEND_WITH_INV`).
pub const IB_WR_SEND_WITH_INV: u32 = 9;
/// `IB_WR_LSO` (= `IB_UVERBS_WR_TSO`); rxe does not support it.
pub const IB_WR_LSO: u32 = 10;
/// `IB_WR_RDMA_READ_WITH_INV` (= `IB_UVERBS_WR_RDMA_READ_WITH_INV`).
pub const IB_WR_RDMA_READ_WITH_INV: u32 = 11;
/// `IB_WR_MASKED_ATOMIC_CMP_AND_SWP`; rxe does not support it.
pub const IB_WR_MASKED_ATOMIC_CMP_AND_SWP: u32 = 12;
/// `IB_WR_MASKED_ATOMIC_FETCH_AND_ADD`; rxe does not support it.
pub const IB_WR_MASKED_ATOMIC_FETCH_AND_ADD: u32 = 13;
/// `IB_WR_FLUSH` (= `IB_UVERBS_WR_FLUSH`).
pub const IB_WR_FLUSH: u32 = 14;
/// `IB_WR_ATOMIC_WRITE` (= `IB_UVERBS_WR_ATOMIC_WRITE`).
pub const IB_WR_ATOMIC_WRITE: u32 = 15;
/// `IB_WR_REG_MR`: kernel only, user space cannot issue it.
pub const IB_WR_REG_MR: u32 = 0x20;
/// `IB_WR_REG_MR_INTEGRITY`: kernel only; rxe does not support it.
pub const IB_WR_REG_MR_INTEGRITY: u32 = 0x21;

/// `IB_SEND_FENCE`.
pub const IB_SEND_FENCE: u32 = 1;
/// `IB_SEND_SIGNALED`.
pub const IB_SEND_SIGNALED: u32 = 1 << 1;
/// `IB_SEND_SOLICITED`.
pub const IB_SEND_SOLICITED: u32 = 1 << 2;
/// `IB_SEND_INLINE`: the data is in the WQE, not behind SGEs.
pub const IB_SEND_INLINE: u32 = 1 << 3;
/// `IB_SEND_IP_CSUM`.
pub const IB_SEND_IP_CSUM: u32 = 1 << 4;

/// The status of a work completion (`enum ib_wc_status`), with the C values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum WcStatus {
    /// `IB_WC_SUCCESS`.
    #[default]
    Success = 0,
    /// `IB_WC_LOC_LEN_ERR`.
    LocLenErr = 1,
    /// `IB_WC_LOC_QP_OP_ERR`.
    LocQpOpErr = 2,
    /// `IB_WC_LOC_EEC_OP_ERR`.
    LocEecOpErr = 3,
    /// `IB_WC_LOC_PROT_ERR`.
    LocProtErr = 4,
    /// `IB_WC_WR_FLUSH_ERR`.
    WrFlushErr = 5,
    /// `IB_WC_MW_BIND_ERR`.
    MwBindErr = 6,
    /// `IB_WC_BAD_RESP_ERR`.
    BadRespErr = 7,
    /// `IB_WC_LOC_ACCESS_ERR`.
    LocAccessErr = 8,
    /// `IB_WC_REM_INV_REQ_ERR`.
    RemInvReqErr = 9,
    /// `IB_WC_REM_ACCESS_ERR`.
    RemAccessErr = 10,
    /// `IB_WC_REM_OP_ERR`.
    RemOpErr = 11,
    /// `IB_WC_RETRY_EXC_ERR`.
    RetryExcErr = 12,
    /// `IB_WC_RNR_RETRY_EXC_ERR`.
    RnrRetryExcErr = 13,
    /// `IB_WC_LOC_RDD_VIOL_ERR`.
    LocRddViolErr = 14,
    /// `IB_WC_REM_INV_RD_REQ_ERR`.
    RemInvRdReqErr = 15,
    /// `IB_WC_REM_ABORT_ERR`.
    RemAbortErr = 16,
    /// `IB_WC_INV_EECN_ERR`.
    InvEecnErr = 17,
    /// `IB_WC_INV_EEC_STATE_ERR`.
    InvEecStateErr = 18,
    /// `IB_WC_FATAL_ERR`.
    FatalErr = 19,
    /// `IB_WC_RESP_TIMEOUT_ERR`.
    RespTimeoutErr = 20,
    /// `IB_WC_GENERAL_ERR`.
    GeneralErr = 21,
}

impl WcStatus {
    /// Every status, by value.
    const ALL: [Self; 22] = [
        Self::Success,
        Self::LocLenErr,
        Self::LocQpOpErr,
        Self::LocEecOpErr,
        Self::LocProtErr,
        Self::WrFlushErr,
        Self::MwBindErr,
        Self::BadRespErr,
        Self::LocAccessErr,
        Self::RemInvReqErr,
        Self::RemAccessErr,
        Self::RemOpErr,
        Self::RetryExcErr,
        Self::RnrRetryExcErr,
        Self::LocRddViolErr,
        Self::RemInvRdReqErr,
        Self::RemAbortErr,
        Self::InvEecnErr,
        Self::InvEecStateErr,
        Self::FatalErr,
        Self::RespTimeoutErr,
        Self::GeneralErr,
    ];

    /// The value in a CQE (`struct ib_uverbs_wc.status`).
    pub const fn raw(self) -> u32 {
        self as u32
    }

    /// The status a CQE holds; `None` for a value `enum ib_wc_status` does not have.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        if (raw as usize) < Self::ALL.len() {
            Some(Self::ALL[raw as usize])
        } else {
            None
        }
    }

    /// Whether the work request succeeded.
    pub const fn is_success(self) -> bool {
        matches!(self, Self::Success)
    }
}

/// `IB_WC_SUCCESS`, under its C name.
pub const IB_WC_SUCCESS: WcStatus = WcStatus::Success;
/// `IB_WC_LOC_LEN_ERR`, under its C name.
pub const IB_WC_LOC_LEN_ERR: WcStatus = WcStatus::LocLenErr;
/// `IB_WC_LOC_QP_OP_ERR`, under its C name.
pub const IB_WC_LOC_QP_OP_ERR: WcStatus = WcStatus::LocQpOpErr;
/// `IB_WC_LOC_EEC_OP_ERR`, under its C name.
pub const IB_WC_LOC_EEC_OP_ERR: WcStatus = WcStatus::LocEecOpErr;
/// `IB_WC_LOC_PROT_ERR`, under its C name.
pub const IB_WC_LOC_PROT_ERR: WcStatus = WcStatus::LocProtErr;
/// `IB_WC_WR_FLUSH_ERR`, under its C name.
pub const IB_WC_WR_FLUSH_ERR: WcStatus = WcStatus::WrFlushErr;
/// `IB_WC_MW_BIND_ERR`, under its C name.
pub const IB_WC_MW_BIND_ERR: WcStatus = WcStatus::MwBindErr;
/// `IB_WC_BAD_RESP_ERR`, under its C name.
pub const IB_WC_BAD_RESP_ERR: WcStatus = WcStatus::BadRespErr;
/// `IB_WC_LOC_ACCESS_ERR`, under its C name.
pub const IB_WC_LOC_ACCESS_ERR: WcStatus = WcStatus::LocAccessErr;
/// `IB_WC_REM_INV_REQ_ERR`, under its C name.
pub const IB_WC_REM_INV_REQ_ERR: WcStatus = WcStatus::RemInvReqErr;
/// `IB_WC_REM_ACCESS_ERR`, under its C name.
pub const IB_WC_REM_ACCESS_ERR: WcStatus = WcStatus::RemAccessErr;
/// `IB_WC_REM_OP_ERR`, under its C name.
pub const IB_WC_REM_OP_ERR: WcStatus = WcStatus::RemOpErr;
/// `IB_WC_RETRY_EXC_ERR`, under its C name.
pub const IB_WC_RETRY_EXC_ERR: WcStatus = WcStatus::RetryExcErr;
/// `IB_WC_RNR_RETRY_EXC_ERR`, under its C name.
pub const IB_WC_RNR_RETRY_EXC_ERR: WcStatus = WcStatus::RnrRetryExcErr;
/// `IB_WC_LOC_RDD_VIOL_ERR`, under its C name.
pub const IB_WC_LOC_RDD_VIOL_ERR: WcStatus = WcStatus::LocRddViolErr;
/// `IB_WC_REM_INV_RD_REQ_ERR`, under its C name.
pub const IB_WC_REM_INV_RD_REQ_ERR: WcStatus = WcStatus::RemInvRdReqErr;
/// `IB_WC_REM_ABORT_ERR`, under its C name.
pub const IB_WC_REM_ABORT_ERR: WcStatus = WcStatus::RemAbortErr;
/// `IB_WC_INV_EECN_ERR`, under its C name.
pub const IB_WC_INV_EECN_ERR: WcStatus = WcStatus::InvEecnErr;
/// `IB_WC_INV_EEC_STATE_ERR`, under its C name.
pub const IB_WC_INV_EEC_STATE_ERR: WcStatus = WcStatus::InvEecStateErr;
/// `IB_WC_FATAL_ERR`, under its C name.
pub const IB_WC_FATAL_ERR: WcStatus = WcStatus::FatalErr;
/// `IB_WC_RESP_TIMEOUT_ERR`, under its C name.
pub const IB_WC_RESP_TIMEOUT_ERR: WcStatus = WcStatus::RespTimeoutErr;
/// `IB_WC_GENERAL_ERR`, under its C name.
pub const IB_WC_GENERAL_ERR: WcStatus = WcStatus::GeneralErr;

/// `IB_WC_SEND` (`enum ib_wc_opcode`, = `IB_UVERBS_WC_SEND`).
pub const IB_WC_SEND: u32 = 0;
/// `IB_WC_RDMA_WRITE`.
pub const IB_WC_RDMA_WRITE: u32 = 1;
/// `IB_WC_RDMA_READ`.
pub const IB_WC_RDMA_READ: u32 = 2;
/// `IB_WC_COMP_SWAP`.
pub const IB_WC_COMP_SWAP: u32 = 3;
/// `IB_WC_FETCH_ADD`.
pub const IB_WC_FETCH_ADD: u32 = 4;
/// `IB_WC_BIND_MW`.
pub const IB_WC_BIND_MW: u32 = 5;
/// `IB_WC_LOCAL_INV`.
pub const IB_WC_LOCAL_INV: u32 = 6;
/// `IB_WC_LSO` (= `IB_UVERBS_WC_TSO`).
pub const IB_WC_LSO: u32 = 7;
/// `IB_WC_FLUSH`.
pub const IB_WC_FLUSH: u32 = 8;
/// `IB_WC_ATOMIC_WRITE`.
pub const IB_WC_ATOMIC_WRITE: u32 = 9;
/// `IB_WC_REG_MR` (kernel only).
pub const IB_WC_REG_MR: u32 = 10;
/// `IB_WC_MASKED_COMP_SWAP` (kernel only).
pub const IB_WC_MASKED_COMP_SWAP: u32 = 11;
/// `IB_WC_MASKED_FETCH_ADD` (kernel only).
pub const IB_WC_MASKED_FETCH_ADD: u32 = 12;
/// `IB_WC_RECV`: receive completions have this bit set.
pub const IB_WC_RECV: u32 = 1 << 7;
/// `IB_WC_RECV_RDMA_WITH_IMM`.
pub const IB_WC_RECV_RDMA_WITH_IMM: u32 = IB_WC_RECV + 1;

/// `IB_WC_GRH` (`enum ib_wc_flags`).
pub const IB_WC_GRH: u32 = 1;
/// `IB_WC_WITH_IMM`.
pub const IB_WC_WITH_IMM: u32 = 1 << 1;
/// `IB_WC_WITH_INVALIDATE`.
pub const IB_WC_WITH_INVALIDATE: u32 = 1 << 2;
/// `IB_WC_IP_CSUM_OK`.
pub const IB_WC_IP_CSUM_OK: u32 = 1 << 3;
/// `IB_WC_WITH_SMAC`.
pub const IB_WC_WITH_SMAC: u32 = 1 << 4;
/// `IB_WC_WITH_VLAN`.
pub const IB_WC_WITH_VLAN: u32 = 1 << 5;
/// `IB_WC_WITH_NETWORK_HDR_TYPE`.
pub const IB_WC_WITH_NETWORK_HDR_TYPE: u32 = 1 << 6;
