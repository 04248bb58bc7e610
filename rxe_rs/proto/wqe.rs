// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Work queue entries and completions in the layouts of the rings shared with user space
//! (`rdma_user_rxe.h`, `ib_user_verbs.h`), and the pure parts of the requester and completer
//! that only depend on them.
//!
//! - Send WQEs ([`SendWqe`], `struct rxe_send_wqe`) and receive WQEs ([`RecvWqe`],
//!   `struct rxe_recv_wqe`), read from a slot, and written for the kernel's own posts
//!   ([`write_send_wqe`], [`write_recv_wqe`]). The WR opcode table of `rxe_opcode.c` is
//!   [`wr_opcode_mask`].
//! - The walk over a WQE's scatter/gather list of `copy_data()` in `rxe_mr.c`: [`DmaCursor`].
//! - Completions ([`UverbsWc`], `struct ib_uverbs_wc`) and `wr_to_wc_opcode()` of `rxe_comp.c`.
//! - The BTH opcode of the requester's next packet, `next_opcode()` of `rxe_req.c`.
//!
//! A slot handed to the parsers must be the kernel's private copy of a ring slot: user space can
//! rewrite the shared ring at any moment, so the caller copies the slot out once and every check
//! and every later read ([`sge`], [`inline_data`], ...) uses that copy. The C driver reads the
//! shared WQE again and again and trusts most of it (`dma.length`, `num_sge`, the opcode as an
//! index into `rxe_wr_opcode_info[]`, `wr.reg.mr` as a kernel pointer); the parsers here check
//! all of that once, so that the rest of the driver can trust a parsed [`SendWqe`] or
//! [`RecvWqe`].
//!
//! All layouts are x86_64 (little endian, `__aligned_u64`); the offsets are `pub`, and the
//! module build asserts every one of them against bindgen's layout (`ffi/layout.rs`).

use core::ops::Range;

use super::opcode::{
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
use super::params::PORT_MAX_MSG_SZ;
use super::qp_state::QpType;
use super::queue::{CQE_SIZE, RECV_WQE_SIZE, SEND_WQE_SIZE, SGE_SIZE};

// ---------------------------------------------------------------------------------------------
// Layouts.
// ---------------------------------------------------------------------------------------------

/// `offsetof(struct rxe_sge, addr)` (`__aligned_u64`).
pub const SGE_ADDR_OFFSET: usize = 0;
/// `offsetof(struct rxe_sge, length)` (`__u32`).
pub const SGE_LENGTH_OFFSET: usize = 8;
/// `offsetof(struct rxe_sge, lkey)` (`__u32`).
pub const SGE_LKEY_OFFSET: usize = 12;
/// `sizeof(struct rxe_sge)`, the same as `struct ib_sge` and `struct ibv_sge`.
pub const SGE_LEN: usize = SGE_SIZE as usize;

/// `offsetof(struct rxe_dma_info, length)` (`__u32`): bytes of the whole message.
pub const DMA_INFO_LENGTH_OFFSET: usize = 0;
/// `offsetof(struct rxe_dma_info, resid)` (`__u32`): bytes left (C progress state, not read).
pub const DMA_INFO_RESID_OFFSET: usize = 4;
/// `offsetof(struct rxe_dma_info, cur_sge)` (`__u32`, C progress state, not read).
pub const DMA_INFO_CUR_SGE_OFFSET: usize = 8;
/// `offsetof(struct rxe_dma_info, num_sge)` (`__u32`).
pub const DMA_INFO_NUM_SGE_OFFSET: usize = 12;
/// `offsetof(struct rxe_dma_info, sge_offset)` (`__u32`, C progress state, not read).
pub const DMA_INFO_SGE_OFFSET_OFFSET: usize = 16;
/// `offsetof(struct rxe_dma_info, reserved)` (`__u32`).
pub const DMA_INFO_RESERVED_OFFSET: usize = 20;
/// `offsetof(struct rxe_dma_info, sge)`: the flexible union of `sge[]`, `inline_data[]` and
/// `atomic_wr[]` (8-byte aligned because of `sge`).
pub const DMA_INFO_SGE_OFFSET: usize = 24;
/// `sizeof(struct rxe_dma_info)`, without the flexible array.
pub const DMA_INFO_LEN: usize = 24;

/// `offsetof(struct rxe_send_wr, wr_id)` (`__aligned_u64`).
pub const SEND_WR_WR_ID_OFFSET: usize = 0;
/// `offsetof(struct rxe_send_wr, reserved)` (`__u32`; `num_sge` in old providers, not read).
pub const SEND_WR_RESERVED_OFFSET: usize = 8;
/// `offsetof(struct rxe_send_wr, opcode)` (`__u32`, an `IB_WR_*`).
pub const SEND_WR_OPCODE_OFFSET: usize = 12;
/// `offsetof(struct rxe_send_wr, send_flags)` (`__u32`, `IB_SEND_*` bits).
pub const SEND_WR_SEND_FLAGS_OFFSET: usize = 16;
/// `offsetof(struct rxe_send_wr, ex)`: `__be32 imm_data` or `__u32 invalidate_rkey`.
pub const SEND_WR_EX_OFFSET: usize = 20;
/// `offsetof(struct rxe_send_wr, wr)`: the union of the per-operation members.
pub const SEND_WR_WR_OFFSET: usize = 24;
/// `sizeof(((struct rxe_send_wr *)0)->wr)`: the union, as large as its `ud` member. The
/// kernel-only `reg` member (16 bytes) does not change it.
pub const SEND_WR_WR_LEN: usize = 120;
/// `sizeof(struct rxe_send_wr)`.
pub const SEND_WR_LEN: usize = SEND_WR_WR_OFFSET + SEND_WR_WR_LEN;

/// `offsetof(struct rxe_send_wr, wr.rdma.remote_addr)` (`__aligned_u64`).
pub const SEND_WR_RDMA_REMOTE_ADDR_OFFSET: usize = SEND_WR_WR_OFFSET;
/// `offsetof(struct rxe_send_wr, wr.rdma.rkey)` (`__u32`).
pub const SEND_WR_RDMA_RKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 8;

/// `offsetof(struct rxe_send_wr, wr.atomic.remote_addr)` (`__aligned_u64`).
pub const SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET: usize = SEND_WR_WR_OFFSET;
/// `offsetof(struct rxe_send_wr, wr.atomic.compare_add)` (`__aligned_u64`).
pub const SEND_WR_ATOMIC_COMPARE_ADD_OFFSET: usize = SEND_WR_WR_OFFSET + 8;
/// `offsetof(struct rxe_send_wr, wr.atomic.swap)` (`__aligned_u64`).
pub const SEND_WR_ATOMIC_SWAP_OFFSET: usize = SEND_WR_WR_OFFSET + 16;
/// `offsetof(struct rxe_send_wr, wr.atomic.rkey)` (`__u32`).
pub const SEND_WR_ATOMIC_RKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 24;

/// `offsetof(struct rxe_send_wr, wr.ud.remote_qpn)` (`__u32`).
pub const SEND_WR_UD_REMOTE_QPN_OFFSET: usize = SEND_WR_WR_OFFSET;
/// `offsetof(struct rxe_send_wr, wr.ud.remote_qkey)` (`__u32`).
pub const SEND_WR_UD_REMOTE_QKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 4;
/// `offsetof(struct rxe_send_wr, wr.ud.pkey_index)` (`__u16`).
pub const SEND_WR_UD_PKEY_INDEX_OFFSET: usize = SEND_WR_WR_OFFSET + 8;
/// `offsetof(struct rxe_send_wr, wr.ud.ah_num)` (`__u32`).
pub const SEND_WR_UD_AH_NUM_OFFSET: usize = SEND_WR_WR_OFFSET + 12;
/// `offsetof(struct rxe_send_wr, wr.ud.av)` (`struct rxe_av`, after `__u32 pad[4]`).
pub const SEND_WR_UD_AV_OFFSET: usize = SEND_WR_WR_OFFSET + 32;
/// `sizeof(struct rxe_av)`: 8 bytes of port, network type and MAC, the 24-byte
/// `struct rxe_global_route`, then two 28-byte socket-address unions.
pub const RXE_AV_LEN: usize = 88;

/// `offsetof(struct rxe_send_wr, wr.flush.remote_addr)` (`__aligned_u64`).
pub const SEND_WR_FLUSH_REMOTE_ADDR_OFFSET: usize = SEND_WR_WR_OFFSET;
/// `offsetof(struct rxe_send_wr, wr.flush.length)` (`__u32`).
pub const SEND_WR_FLUSH_LENGTH_OFFSET: usize = SEND_WR_WR_OFFSET + 8;
/// `offsetof(struct rxe_send_wr, wr.flush.rkey)` (`__u32`).
pub const SEND_WR_FLUSH_RKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 12;
/// `offsetof(struct rxe_send_wr, wr.flush.type)` (`__u8`).
pub const SEND_WR_FLUSH_TYPE_OFFSET: usize = SEND_WR_WR_OFFSET + 16;
/// `offsetof(struct rxe_send_wr, wr.flush.level)` (`__u8`).
pub const SEND_WR_FLUSH_LEVEL_OFFSET: usize = SEND_WR_WR_OFFSET + 17;

/// `offsetof(struct rxe_send_wr, wr.mw.addr)` (`__aligned_u64`).
pub const SEND_WR_MW_ADDR_OFFSET: usize = SEND_WR_WR_OFFSET;
/// `offsetof(struct rxe_send_wr, wr.mw.length)` (`__aligned_u64`).
pub const SEND_WR_MW_LENGTH_OFFSET: usize = SEND_WR_WR_OFFSET + 8;
/// `offsetof(struct rxe_send_wr, wr.mw.mr_lkey)` (`__u32`).
pub const SEND_WR_MW_MR_LKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 16;
/// `offsetof(struct rxe_send_wr, wr.mw.mw_rkey)` (`__u32`).
pub const SEND_WR_MW_MW_RKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 20;
/// `offsetof(struct rxe_send_wr, wr.mw.rkey)` (`__u32`).
pub const SEND_WR_MW_RKEY_OFFSET: usize = SEND_WR_WR_OFFSET + 24;
/// `offsetof(struct rxe_send_wr, wr.mw.access)` (`__u32`).
pub const SEND_WR_MW_ACCESS_OFFSET: usize = SEND_WR_WR_OFFSET + 28;

/// `offsetof(struct rxe_send_wr, wr.reg.mr)`: a `struct ib_mr *` in the C kernel ring, never
/// read here (written as 0); see [`WrDetail::Reg`].
pub const SEND_WR_REG_MR_OFFSET: usize = SEND_WR_WR_OFFSET;
/// `offsetof(struct rxe_send_wr, wr.reg.key)` (`__u32`).
pub const SEND_WR_REG_KEY_OFFSET: usize = SEND_WR_WR_OFFSET + 8;
/// `offsetof(struct rxe_send_wr, wr.reg.access)` (`__u32`).
pub const SEND_WR_REG_ACCESS_OFFSET: usize = SEND_WR_WR_OFFSET + 12;

/// `offsetof(struct rxe_send_wqe, wr)`.
pub const SEND_WQE_WR_OFFSET: usize = 0;
/// `offsetof(struct rxe_send_wqe, status)` (C state, not read).
pub const SEND_WQE_STATUS_OFFSET: usize = 144;
/// `offsetof(struct rxe_send_wqe, state)` (C state, not read).
pub const SEND_WQE_STATE_OFFSET: usize = 148;
/// `offsetof(struct rxe_send_wqe, iova)` (`__aligned_u64`).
pub const SEND_WQE_IOVA_OFFSET: usize = 152;
/// `offsetof(struct rxe_send_wqe, mask)` (C state, not read).
pub const SEND_WQE_MASK_OFFSET: usize = 160;
/// `offsetof(struct rxe_send_wqe, first_psn)` (C state, not read).
pub const SEND_WQE_FIRST_PSN_OFFSET: usize = 164;
/// `offsetof(struct rxe_send_wqe, last_psn)` (C state, not read).
pub const SEND_WQE_LAST_PSN_OFFSET: usize = 168;
/// `offsetof(struct rxe_send_wqe, ack_length)` (C state, not read).
pub const SEND_WQE_ACK_LENGTH_OFFSET: usize = 172;
/// `offsetof(struct rxe_send_wqe, ssn)` (C state, not read).
pub const SEND_WQE_SSN_OFFSET: usize = 176;
/// `offsetof(struct rxe_send_wqe, has_rd_atomic)` (C state, not read).
pub const SEND_WQE_HAS_RD_ATOMIC_OFFSET: usize = 180;
/// `offsetof(struct rxe_send_wqe, dma)` (`struct rxe_dma_info`).
pub const SEND_WQE_DMA_OFFSET: usize = 184;
/// `sizeof(struct rxe_send_wqe)`: the fixed part of a send slot.
pub const SEND_WQE_HDR_LEN: usize = SEND_WQE_DMA_OFFSET + DMA_INFO_LEN;
/// `offsetof(struct rxe_send_wqe, dma.sge)`: where the SGEs, the inline data or the atomic
/// write value start.
pub const SEND_WQE_DATA_OFFSET: usize = SEND_WQE_DMA_OFFSET + DMA_INFO_SGE_OFFSET;

/// `offsetof(struct rxe_recv_wqe, wr_id)` (`__aligned_u64`).
pub const RECV_WQE_WR_ID_OFFSET: usize = 0;
/// `offsetof(struct rxe_recv_wqe, reserved)` (`__u32`; `num_sge` in old providers, not read).
pub const RECV_WQE_RESERVED_OFFSET: usize = 8;
/// `offsetof(struct rxe_recv_wqe, padding)` (`__u32`).
pub const RECV_WQE_PADDING_OFFSET: usize = 12;
/// `offsetof(struct rxe_recv_wqe, dma)` (`struct rxe_dma_info`).
pub const RECV_WQE_DMA_OFFSET: usize = 16;
/// `sizeof(struct rxe_recv_wqe)`: the fixed part of a receive slot.
pub const RECV_WQE_HDR_LEN: usize = RECV_WQE_DMA_OFFSET + DMA_INFO_LEN;
/// `offsetof(struct rxe_recv_wqe, dma.sge)`: where the SGEs start.
pub const RECV_WQE_DATA_OFFSET: usize = RECV_WQE_DMA_OFFSET + DMA_INFO_SGE_OFFSET;

/// `offsetof(struct ib_uverbs_wc, wr_id)` (`__aligned_u64`).
pub const UVERBS_WC_WR_ID_OFFSET: usize = 0;
/// `offsetof(struct ib_uverbs_wc, status)` (`__u32`).
pub const UVERBS_WC_STATUS_OFFSET: usize = 8;
/// `offsetof(struct ib_uverbs_wc, opcode)` (`__u32`).
pub const UVERBS_WC_OPCODE_OFFSET: usize = 12;
/// `offsetof(struct ib_uverbs_wc, vendor_err)` (`__u32`).
pub const UVERBS_WC_VENDOR_ERR_OFFSET: usize = 16;
/// `offsetof(struct ib_uverbs_wc, byte_len)` (`__u32`).
pub const UVERBS_WC_BYTE_LEN_OFFSET: usize = 20;
/// `offsetof(struct ib_uverbs_wc, ex)`: `__be32 imm_data` or `__u32 invalidate_rkey`.
pub const UVERBS_WC_EX_OFFSET: usize = 24;
/// `offsetof(struct ib_uverbs_wc, qp_num)` (`__u32`).
pub const UVERBS_WC_QP_NUM_OFFSET: usize = 28;
/// `offsetof(struct ib_uverbs_wc, src_qp)` (`__u32`).
pub const UVERBS_WC_SRC_QP_OFFSET: usize = 32;
/// `offsetof(struct ib_uverbs_wc, wc_flags)` (`__u32`).
pub const UVERBS_WC_WC_FLAGS_OFFSET: usize = 36;
/// `offsetof(struct ib_uverbs_wc, pkey_index)` (`__u16`).
pub const UVERBS_WC_PKEY_INDEX_OFFSET: usize = 40;
/// `offsetof(struct ib_uverbs_wc, slid)` (`__u16`).
pub const UVERBS_WC_SLID_OFFSET: usize = 42;
/// `offsetof(struct ib_uverbs_wc, sl)` (`__u8`).
pub const UVERBS_WC_SL_OFFSET: usize = 44;
/// `offsetof(struct ib_uverbs_wc, dlid_path_bits)` (`__u8`).
pub const UVERBS_WC_DLID_PATH_BITS_OFFSET: usize = 45;
/// `offsetof(struct ib_uverbs_wc, port_num)` (`__u8`).
pub const UVERBS_WC_PORT_NUM_OFFSET: usize = 46;
/// `offsetof(struct ib_uverbs_wc, reserved)` (`__u8`, written as 0).
pub const UVERBS_WC_RESERVED_OFFSET: usize = 47;
/// `sizeof(struct ib_uverbs_wc)`.
pub const UVERBS_WC_LEN: usize = 48;

const _: () = assert!(SEND_WQE_HDR_LEN == SEND_WQE_SIZE as usize);
const _: () = assert!(RECV_WQE_HDR_LEN == RECV_WQE_SIZE as usize);
const _: () = assert!(SEND_WQE_DMA_OFFSET == SEND_WQE_HAS_RD_ATOMIC_OFFSET + 4);
const _: () = assert!(SEND_WQE_STATUS_OFFSET == SEND_WR_LEN);
// `ud` is the largest member of the union and ends it.
const _: () = assert!(SEND_WR_UD_AV_OFFSET + RXE_AV_LEN == SEND_WR_LEN);
const _: () = assert!(SEND_WR_MW_ACCESS_OFFSET + 4 <= SEND_WR_LEN);
const _: () = assert!(UVERBS_WC_RESERVED_OFFSET + 1 == UVERBS_WC_LEN);
const _: () = assert!(UVERBS_WC_LEN <= CQE_SIZE as usize);

// ---------------------------------------------------------------------------------------------
// Verbs constants.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// The WR opcode table.
// ---------------------------------------------------------------------------------------------

/// What kind of work a WR opcode is, bit for bit the C `enum rxe_wr_mask`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WrMask(u32);

impl WrMask {
    /// No bit set.
    pub const NONE: Self = Self(0);
    /// `WR_INLINE_MASK`: may carry its data inline ([`IB_SEND_INLINE`]).
    pub const INLINE: Self = Self(1 << 0);
    /// `WR_ATOMIC_MASK`: compare-and-swap or fetch-and-add.
    pub const ATOMIC: Self = Self(1 << 1);
    /// `WR_SEND_MASK`.
    pub const SEND: Self = Self(1 << 2);
    /// `WR_READ_MASK`.
    pub const READ: Self = Self(1 << 3);
    /// `WR_WRITE_MASK`.
    pub const WRITE: Self = Self(1 << 4);
    /// `WR_LOCAL_OP_MASK`: executed by the requester itself, no packet.
    pub const LOCAL_OP: Self = Self(1 << 5);
    /// `WR_FLUSH_MASK`.
    pub const FLUSH: Self = Self(1 << 6);
    /// `WR_ATOMIC_WRITE_MASK`.
    pub const ATOMIC_WRITE: Self = Self(1 << 7);
    /// `WR_READ_OR_WRITE_MASK`.
    pub const READ_OR_WRITE: Self = Self::READ.union(Self::WRITE);
    /// `WR_WRITE_OR_SEND_MASK`.
    pub const WRITE_OR_SEND: Self = Self::WRITE.union(Self::SEND);
    /// `WR_ATOMIC_OR_READ_MASK`.
    pub const ATOMIC_OR_READ: Self = Self::ATOMIC.union(Self::READ);
}

bit_mask_ops!(WrMask);

/// `rxe_wr_opcode_info[opcode].mask[qp_type]` (`wr_opcode_mask()`): what WR `opcode` does on a
/// QP of type `qp_type`; `None` where the C entry is 0 (not allowed on that QP type, or not
/// supported at all) and for opcodes past the end of the C table, which C would index out of
/// bounds.
pub const fn wr_opcode_mask(opcode: u32, qp_type: QpType) -> Option<WrMask> {
    use QpType::{Gsi, Rc, Uc, Ud};
    let mask = match (opcode, qp_type) {
        (IB_WR_RDMA_WRITE | IB_WR_RDMA_WRITE_WITH_IMM, Rc | Uc) => {
            WrMask::INLINE.union(WrMask::WRITE)
        }
        (IB_WR_SEND | IB_WR_SEND_WITH_IMM, Gsi | Rc | Uc | Ud) => {
            WrMask::INLINE.union(WrMask::SEND)
        }
        (IB_WR_SEND_WITH_INV, Rc | Uc | Ud) => WrMask::INLINE.union(WrMask::SEND),
        (IB_WR_RDMA_READ | IB_WR_RDMA_READ_WITH_INV, Rc) => WrMask::READ,
        (IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD, Rc) => WrMask::ATOMIC,
        (IB_WR_LOCAL_INV | IB_WR_REG_MR, Rc) => WrMask::LOCAL_OP,
        (IB_WR_BIND_MW, Rc | Uc) => WrMask::LOCAL_OP,
        (IB_WR_FLUSH, Rc) => WrMask::FLUSH,
        (IB_WR_ATOMIC_WRITE, Rc) => WrMask::ATOMIC_WRITE,
        _ => return None,
    };
    Some(mask)
}

/// `rxe_wr_opcode_info[opcode].name`, e.g. `"IB_WR_SEND"`; `None` outside the C table.
pub const fn wr_opcode_name(opcode: u32) -> Option<&'static str> {
    Some(match opcode {
        IB_WR_RDMA_WRITE => "IB_WR_RDMA_WRITE",
        IB_WR_RDMA_WRITE_WITH_IMM => "IB_WR_RDMA_WRITE_WITH_IMM",
        IB_WR_SEND => "IB_WR_SEND",
        IB_WR_SEND_WITH_IMM => "IB_WR_SEND_WITH_IMM",
        IB_WR_RDMA_READ => "IB_WR_RDMA_READ",
        IB_WR_ATOMIC_CMP_AND_SWP => "IB_WR_ATOMIC_CMP_AND_SWP",
        IB_WR_ATOMIC_FETCH_AND_ADD => "IB_WR_ATOMIC_FETCH_AND_ADD",
        IB_WR_LSO => "IB_WR_LSO",
        IB_WR_SEND_WITH_INV => "IB_WR_SEND_WITH_INV",
        IB_WR_RDMA_READ_WITH_INV => "IB_WR_RDMA_READ_WITH_INV",
        IB_WR_LOCAL_INV => "IB_WR_LOCAL_INV",
        IB_WR_REG_MR => "IB_WR_REG_MR",
        IB_WR_BIND_MW => "IB_WR_BIND_MW",
        IB_WR_FLUSH => "IB_WR_FLUSH",
        IB_WR_ATOMIC_WRITE => "IB_WR_ATOMIC_WRITE",
        _ => return None,
    })
}

/// Whether `opcode` is one only kernel ULPs may post (`IB_WR_REG_MR` and up): its C ring entry
/// holds a kernel pointer.
pub const fn wr_opcode_is_kernel_only(opcode: u32) -> bool {
    opcode >= IB_WR_REG_MR
}

// ---------------------------------------------------------------------------------------------
// Byte access. Every caller checks the length first; out of range reads 0 / writes nothing.
// ---------------------------------------------------------------------------------------------

fn arr<const N: usize>(bytes: &[u8], off: usize) -> [u8; N] {
    bytes
        .get(off..)
        .and_then(|rest| rest.first_chunk::<N>())
        .copied()
        .unwrap_or([0; N])
}

fn u8_at(bytes: &[u8], off: usize) -> u8 {
    let [b] = arr::<1>(bytes, off);
    b
}

fn u16_at(bytes: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(arr(bytes, off))
}

fn u32_at(bytes: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(arr(bytes, off))
}

fn u64_at(bytes: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(arr(bytes, off))
}

fn put<const N: usize>(bytes: &mut [u8], off: usize, value: [u8; N]) {
    if let Some(dst) = bytes
        .get_mut(off..)
        .and_then(|rest| rest.first_chunk_mut::<N>())
    {
        *dst = value;
    }
}

fn put_u16(bytes: &mut [u8], off: usize, value: u16) {
    put(bytes, off, value.to_le_bytes());
}

fn put_u32(bytes: &mut [u8], off: usize, value: u32) {
    put(bytes, off, value.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], off: usize, value: u64) {
    put(bytes, off, value.to_le_bytes());
}

/// `start..start + len` if it lies within `slot_len` bytes.
fn data_range(slot_len: usize, start: usize, len: usize) -> Result<Range<usize>, WqeError> {
    match start.checked_add(len) {
        Some(end) if end <= slot_len => Ok(start..end),
        _ => Err(WqeError::DataOutOfSlot),
    }
}

/// Bytes of `num_sge` SGEs, if that fits in `usize`.
fn sge_bytes(num_sge: u32) -> Result<usize, WqeError> {
    usize::try_from(num_sge)
        .ok()
        .and_then(|n| n.checked_mul(SGE_LEN))
        .ok_or(WqeError::DataOutOfSlot)
}

/// SGE `i` of the array at `base` in `slot`.
fn sge_in(slot: &[u8], base: usize, i: u32) -> Option<Sge> {
    let off = usize::try_from(i)
        .ok()?
        .checked_mul(SGE_LEN)?
        .checked_add(base)?;
    let bytes = slot.get(off..)?.first_chunk::<SGE_LEN>()?;
    Some(Sge::from_bytes(bytes))
}

/// Checks the SGE array at `base` (`num_sge` entries, at most `max_sge`) against the claimed
/// `length`: it fits in the slot and its lengths add up, without overflow, to `length`, which
/// is at most [`PORT_MAX_MSG_SZ`].
fn check_sges(
    slot: &[u8],
    base: usize,
    num_sge: u32,
    max_sge: u32,
    length: u32,
) -> Result<(), WqeError> {
    if num_sge > max_sge {
        return Err(WqeError::TooManySge { num_sge, max_sge });
    }
    let range = data_range(slot.len(), base, sge_bytes(num_sge)?)?;
    let mut sum: u32 = 0;
    for i in 0..num_sge {
        let sge = sge_in(slot, range.start, i).ok_or(WqeError::DataOutOfSlot)?;
        sum = sum
            .checked_add(sge.length)
            .ok_or(WqeError::LengthOverflow)?;
    }
    if sum != length {
        return Err(WqeError::LengthMismatch { length, sum });
    }
    if sum > PORT_MAX_MSG_SZ {
        return Err(WqeError::MessageTooLong(sum));
    }
    Ok(())
}

/// Sum of the SGE lengths, or [`WqeError::LengthOverflow`].
fn sum_sges(sges: &[Sge]) -> Result<u32, WqeError> {
    sges.iter().try_fold(0u32, |sum, sge| {
        sum.checked_add(sge.length).ok_or(WqeError::LengthOverflow)
    })
}

/// `ex` as stored (read little endian) from the big-endian immediate value, as the IMMDT header
/// ([`super::hdr::Immdt::imm`]) holds it.
pub const fn imm_to_ex(imm: u32) -> u32 {
    u32::from_le_bytes(imm.to_be_bytes())
}

/// The big-endian immediate value, as [`super::hdr::Immdt::imm`] holds it, from `ex` as stored.
pub const fn ex_to_imm(ex: u32) -> u32 {
    u32::from_be_bytes(ex.to_le_bytes())
}

// ---------------------------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------------------------

/// Why a slot is not a usable work queue entry or completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeError {
    /// The slot is shorter than the fixed part of the entry.
    Truncated,
    /// A CQE whose status is not one of `enum ib_wc_status`.
    BadStatus(u32),
    /// The WR opcode is not in the C table or not allowed on this QP type
    /// ([`wr_opcode_mask`] is `None`).
    BadOpcode(u32),
    /// A kernel-only WR opcode ([`IB_WR_REG_MR`]) in a ring user space writes.
    KernelOnlyOpcode(u32),
    /// More SGEs than the queue was made for.
    TooManySge {
        /// `dma.num_sge` of the entry.
        num_sge: u32,
        /// The queue's limit.
        max_sge: u32,
    },
    /// The SGEs, inline data or atomic write value run past the end of the slot.
    DataOutOfSlot,
    /// More inline data than the queue was made for.
    InlineTooLong {
        /// `dma.length` of the entry.
        length: u32,
        /// The queue's limit.
        max_inline: u32,
    },
    /// The SGE lengths do not add up in 32 bits.
    LengthOverflow,
    /// `dma.length` is not the sum of the SGE lengths.
    LengthMismatch {
        /// `dma.length` of the entry.
        length: u32,
        /// The sum of the SGE lengths.
        sum: u32,
    },
    /// The message is longer than [`PORT_MAX_MSG_SZ`] (the C post paths refuse it, and C
    /// `copy_data()` keeps the residue in an `int`).
    MessageTooLong(u32),
    /// An ATOMIC WRITE whose `dma.length` is not 8.
    AtomicWriteLength(u32),
    /// A kernel compare-and-swap or fetch-and-add whose SGEs are not 8 bytes, or whose remote
    /// address is not 8-byte aligned (C `validate_send_wr`).
    BadAtomic,
    /// [`IB_SEND_INLINE`] on a kernel WR whose opcode cannot carry inline data (C
    /// `validate_send_wr`; user space's WQEs ignore the flag there, as C's requester does).
    InlineNotAllowed(u32),
    /// [`write_send_wqe`] was given data of the wrong kind for the opcode and flags, or a
    /// [`WrDetail`] that the opcode does not read back.
    Inconsistent,
}

impl WqeError {
    /// The completion status for a WQE refused by the requester: `IB_WC_LOC_QP_OP_ERR`, as the
    /// C requester completes a WQE with a bad `num_sge` or opcode.
    pub const fn wc_status(self) -> WcStatus {
        IB_WC_LOC_QP_OP_ERR
    }
}

// ---------------------------------------------------------------------------------------------
// SGEs.
// ---------------------------------------------------------------------------------------------

/// A scatter/gather element (`struct rxe_sge`, `struct ib_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Start address (an iova of the MR named by `lkey`).
    pub addr: u64,
    /// Bytes.
    pub length: u32,
    /// Local key of the MR.
    pub lkey: u32,
}

impl Sge {
    /// Decodes the 16 bytes of a `struct rxe_sge`.
    pub fn from_bytes(bytes: &[u8; SGE_LEN]) -> Self {
        Self {
            addr: u64_at(bytes, SGE_ADDR_OFFSET),
            length: u32_at(bytes, SGE_LENGTH_OFFSET),
            lkey: u32_at(bytes, SGE_LKEY_OFFSET),
        }
    }

    /// Encodes as a `struct rxe_sge`.
    pub fn to_bytes(&self) -> [u8; SGE_LEN] {
        let mut out = [0; SGE_LEN];
        put_u64(&mut out, SGE_ADDR_OFFSET, self.addr);
        put_u32(&mut out, SGE_LENGTH_OFFSET, self.length);
        put_u32(&mut out, SGE_LKEY_OFFSET, self.lkey);
        out
    }
}

/// SGE `i` of a send slot; `None` past the end of the slot. Only meaningful below the
/// [`SendWqe::num_sge`] of a WQE parsed from the same slot, where it is always `Some`.
pub fn sge(slot: &[u8], i: u32) -> Option<Sge> {
    sge_in(slot, SEND_WQE_DATA_OFFSET, i)
}

/// SGE `i` of a receive slot; `None` past the end of the slot. Only meaningful below the
/// [`RecvWqe::num_sge`] of a WQE parsed from the same slot, where it is always `Some`.
pub fn recv_sge(slot: &[u8], i: u32) -> Option<Sge> {
    sge_in(slot, RECV_WQE_DATA_OFFSET, i)
}

/// The first `len` bytes of a send slot's inline data (`dma.inline_data`); `None` past the end
/// of the slot. For a WQE parsed with [`DataKind::Inline`], `inline_data(slot, wqe.length)` is
/// always `Some`.
pub fn inline_data(slot: &[u8], len: u32) -> Option<&[u8]> {
    let end = SEND_WQE_DATA_OFFSET.checked_add(usize::try_from(len).ok()?)?;
    slot.get(SEND_WQE_DATA_OFFSET..end)
}

/// The 8 bytes an ATOMIC WRITE stores (`dma.atomic_wr`), in memory order; `None` past the end
/// of the slot (never for a WQE parsed with [`DataKind::AtomicWrite`]).
pub fn atomic_write_value(slot: &[u8]) -> Option<[u8; 8]> {
    slot.get(SEND_WQE_DATA_OFFSET..)?
        .first_chunk::<8>()
        .copied()
}

/// The [`RXE_AV_LEN`] bytes of `wr.ud.av`, the address vector old providers put in UD WQEs
/// instead of an `ah_num` (`rxe_get_av()` uses it when `ah_num` is 0); `None` for a slot too
/// short to be a send WQE. Not validated here.
pub fn ud_av_bytes(slot: &[u8]) -> Option<&[u8]> {
    slot.get(SEND_WR_UD_AV_OFFSET..SEND_WR_UD_AV_OFFSET + RXE_AV_LEN)
}

// ---------------------------------------------------------------------------------------------
// Send WQEs.
// ---------------------------------------------------------------------------------------------

/// The member of the `wr` union a send WQE uses, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrDetail {
    /// No member: SEND, SEND_WITH_IMM, SEND_WITH_INV and LOCAL_INV on RC and UC QPs.
    None,
    /// `wr.rdma`: RDMA WRITE (with or without immediate), RDMA READ (with or without
    /// invalidate), and ATOMIC WRITE.
    Rdma {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `wr.atomic`: compare-and-swap and fetch-and-add.
    Atomic {
        /// Remote virtual address, 8-byte aligned.
        remote_addr: u64,
        /// Value to compare with (compare-and-swap) or to add (fetch-and-add).
        compare_add: u64,
        /// Value to swap in (compare-and-swap).
        swap: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `wr.ud`: every WQE of a UD or GSI QP, whatever the opcode.
    Ud {
        /// Destination QP number.
        remote_qpn: u32,
        /// Destination Q_Key.
        remote_qkey: u32,
        /// P_Key index (GSI only).
        pkey_index: u16,
        /// Address handle number; 0 means the address vector is in the WQE ([`ud_av_bytes`]).
        ah_num: u32,
    },
    /// `wr.flush`.
    Flush {
        /// Remote virtual address.
        remote_addr: u64,
        /// `wr.flush.length` (the C requester sends `dma.length` instead, see
        /// [`SendWqe::length`]).
        length: u32,
        /// Remote key.
        rkey: u32,
        /// Placement type (`IB_FLUSH_GLOBAL`, `IB_FLUSH_PERSISTENT`).
        type_: u8,
        /// Selectivity level (`IB_FLUSH_RANGE`, `IB_FLUSH_MR`).
        level: u8,
    },
    /// `wr.mw`: BIND_MW.
    Mw {
        /// Start of the window.
        addr: u64,
        /// Length of the window.
        length: u64,
        /// Local key of the MR the window is bound to.
        mr_lkey: u32,
        /// Current rkey of the window.
        mw_rkey: u32,
        /// New rkey of the window.
        rkey: u32,
        /// Access flags of the window.
        access: u32,
    },
    /// `wr.reg`: REG_MR, kernel rings only. The C entry also holds the `struct ib_mr *`, which
    /// is neither read nor written here: the MR is the one whose key index is `key >> 8` (C
    /// `rxe_reg_fast_mr()` requires `(mr->lkey & ~0xff) == (key & ~0xff)`).
    Reg {
        /// New lkey / rkey of the MR.
        key: u32,
        /// Access flags.
        access: u32,
    },
}

impl WrDetail {
    /// The member the C requester reads for `opcode` on a `qp_type` QP.
    fn read(hdr: &[u8], opcode: u32, qp_type: QpType) -> Self {
        if matches!(qp_type, QpType::Ud | QpType::Gsi) {
            return Self::Ud {
                remote_qpn: u32_at(hdr, SEND_WR_UD_REMOTE_QPN_OFFSET),
                remote_qkey: u32_at(hdr, SEND_WR_UD_REMOTE_QKEY_OFFSET),
                pkey_index: u16_at(hdr, SEND_WR_UD_PKEY_INDEX_OFFSET),
                ah_num: u32_at(hdr, SEND_WR_UD_AH_NUM_OFFSET),
            };
        }
        match opcode {
            IB_WR_RDMA_WRITE
            | IB_WR_RDMA_WRITE_WITH_IMM
            | IB_WR_RDMA_READ
            | IB_WR_RDMA_READ_WITH_INV
            | IB_WR_ATOMIC_WRITE => Self::Rdma {
                remote_addr: u64_at(hdr, SEND_WR_RDMA_REMOTE_ADDR_OFFSET),
                rkey: u32_at(hdr, SEND_WR_RDMA_RKEY_OFFSET),
            },
            IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD => Self::Atomic {
                remote_addr: u64_at(hdr, SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET),
                compare_add: u64_at(hdr, SEND_WR_ATOMIC_COMPARE_ADD_OFFSET),
                swap: u64_at(hdr, SEND_WR_ATOMIC_SWAP_OFFSET),
                rkey: u32_at(hdr, SEND_WR_ATOMIC_RKEY_OFFSET),
            },
            IB_WR_FLUSH => Self::Flush {
                remote_addr: u64_at(hdr, SEND_WR_FLUSH_REMOTE_ADDR_OFFSET),
                length: u32_at(hdr, SEND_WR_FLUSH_LENGTH_OFFSET),
                rkey: u32_at(hdr, SEND_WR_FLUSH_RKEY_OFFSET),
                type_: u8_at(hdr, SEND_WR_FLUSH_TYPE_OFFSET),
                level: u8_at(hdr, SEND_WR_FLUSH_LEVEL_OFFSET),
            },
            IB_WR_BIND_MW => Self::Mw {
                addr: u64_at(hdr, SEND_WR_MW_ADDR_OFFSET),
                length: u64_at(hdr, SEND_WR_MW_LENGTH_OFFSET),
                mr_lkey: u32_at(hdr, SEND_WR_MW_MR_LKEY_OFFSET),
                mw_rkey: u32_at(hdr, SEND_WR_MW_MW_RKEY_OFFSET),
                rkey: u32_at(hdr, SEND_WR_MW_RKEY_OFFSET),
                access: u32_at(hdr, SEND_WR_MW_ACCESS_OFFSET),
            },
            IB_WR_REG_MR => Self::Reg {
                key: u32_at(hdr, SEND_WR_REG_KEY_OFFSET),
                access: u32_at(hdr, SEND_WR_REG_ACCESS_OFFSET),
            },
            _ => Self::None,
        }
    }

    /// Writes the member into the `wr` union of `hdr`, whose other bytes the caller zeroed.
    fn write(&self, hdr: &mut [u8]) {
        match *self {
            Self::None => {}
            Self::Rdma { remote_addr, rkey } => {
                put_u64(hdr, SEND_WR_RDMA_REMOTE_ADDR_OFFSET, remote_addr);
                put_u32(hdr, SEND_WR_RDMA_RKEY_OFFSET, rkey);
            }
            Self::Atomic {
                remote_addr,
                compare_add,
                swap,
                rkey,
            } => {
                put_u64(hdr, SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET, remote_addr);
                put_u64(hdr, SEND_WR_ATOMIC_COMPARE_ADD_OFFSET, compare_add);
                put_u64(hdr, SEND_WR_ATOMIC_SWAP_OFFSET, swap);
                put_u32(hdr, SEND_WR_ATOMIC_RKEY_OFFSET, rkey);
            }
            Self::Ud {
                remote_qpn,
                remote_qkey,
                pkey_index,
                ah_num,
            } => {
                put_u32(hdr, SEND_WR_UD_REMOTE_QPN_OFFSET, remote_qpn);
                put_u32(hdr, SEND_WR_UD_REMOTE_QKEY_OFFSET, remote_qkey);
                put_u16(hdr, SEND_WR_UD_PKEY_INDEX_OFFSET, pkey_index);
                put_u32(hdr, SEND_WR_UD_AH_NUM_OFFSET, ah_num);
            }
            Self::Flush {
                remote_addr,
                length,
                rkey,
                type_,
                level,
            } => {
                put_u64(hdr, SEND_WR_FLUSH_REMOTE_ADDR_OFFSET, remote_addr);
                put_u32(hdr, SEND_WR_FLUSH_LENGTH_OFFSET, length);
                put_u32(hdr, SEND_WR_FLUSH_RKEY_OFFSET, rkey);
                put(hdr, SEND_WR_FLUSH_TYPE_OFFSET, [type_]);
                put(hdr, SEND_WR_FLUSH_LEVEL_OFFSET, [level]);
            }
            Self::Mw {
                addr,
                length,
                mr_lkey,
                mw_rkey,
                rkey,
                access,
            } => {
                put_u64(hdr, SEND_WR_MW_ADDR_OFFSET, addr);
                put_u64(hdr, SEND_WR_MW_LENGTH_OFFSET, length);
                put_u32(hdr, SEND_WR_MW_MR_LKEY_OFFSET, mr_lkey);
                put_u32(hdr, SEND_WR_MW_MW_RKEY_OFFSET, mw_rkey);
                put_u32(hdr, SEND_WR_MW_RKEY_OFFSET, rkey);
                put_u32(hdr, SEND_WR_MW_ACCESS_OFFSET, access);
            }
            Self::Reg { key, access } => {
                put_u32(hdr, SEND_WR_REG_KEY_OFFSET, key);
                put_u32(hdr, SEND_WR_REG_ACCESS_OFFSET, access);
            }
        }
    }

    /// The remote address of an RDMA, atomic or flush member: the `iova` a fresh WQE starts
    /// from, and what the C `req_retry()` resets it to.
    pub const fn remote_addr(&self) -> Option<u64> {
        match *self {
            Self::Rdma { remote_addr, .. }
            | Self::Atomic { remote_addr, .. }
            | Self::Flush { remote_addr, .. } => Some(remote_addr),
            _ => None,
        }
    }
}

/// Where the data of a send WQE is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// No data: local operations ([`WrMask::LOCAL_OP`]) and FLUSH.
    None,
    /// Behind [`SendWqe::num_sge`] SGEs ([`sge`]); walk them with a [`DmaCursor`]. Also the
    /// buffers an RDMA READ or atomic response lands in.
    Sges,
    /// [`SendWqe::length`] bytes in the WQE ([`inline_data`]): [`IB_SEND_INLINE`] on an opcode
    /// with [`WrMask::INLINE`]. On other opcodes the C driver ignores the flag, and so does
    /// this.
    Inline,
    /// The 8 bytes of an ATOMIC WRITE ([`atomic_write_value`]).
    AtomicWrite,
}

impl DataKind {
    /// Where the data of a WQE with this mask and these `send_flags` is.
    pub const fn of(mask: WrMask, send_flags: u32) -> Self {
        if mask.intersects(WrMask::LOCAL_OP.union(WrMask::FLUSH)) {
            Self::None
        } else if mask.contains(WrMask::ATOMIC_WRITE) {
            Self::AtomicWrite
        } else if mask.contains(WrMask::INLINE) && send_flags & IB_SEND_INLINE != 0 {
            Self::Inline
        } else {
            Self::Sges
        }
    }
}

/// The send queue's limits a WQE is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendLimits {
    /// `sq.max_sge`.
    pub max_sge: u32,
    /// `sq.max_inline`.
    pub max_inline: u32,
    /// Whether kernel-only opcodes ([`wr_opcode_is_kernel_only`]) are allowed: `true` for the
    /// ring of a kernel QP only, never for a ring user space writes.
    pub allow_kernel_only: bool,
}

/// A send work request as a kernel ULP posts it: what [`write_send_wqe`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWr {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// `IB_WR_*`.
    pub opcode: u32,
    /// `IB_SEND_*` bits.
    pub send_flags: u32,
    /// `ex` as stored: see [`imm_to_ex`] for an immediate value; the invalidate rkey as is.
    pub ex: u32,
    /// The member of the `wr` union the opcode uses on this QP type.
    pub detail: WrDetail,
}

/// A send WQE read from a private copy of a send queue slot and checked by [`SendWqe::parse`].
/// The SGEs, inline data and atomic write value stay in the slot copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWqe {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// `IB_WR_*`, allowed on the QP type.
    pub opcode: u32,
    /// `IB_SEND_*` bits, as stored.
    pub send_flags: u32,
    /// `ex` as stored (read little endian): the immediate data in network byte order
    /// ([`Self::imm_be_bytes`], [`Self::imm_data`]) or the rkey to invalidate.
    pub ex: u32,
    /// The member of the `wr` union the opcode uses on this QP type.
    pub detail: WrDetail,
    /// `iova` as stored: the remote address of the first packet (RETH, ATMETH). Providers set
    /// it to the remote address of `detail`; the C requester uses it for the first transmission
    /// and [`WrDetail::remote_addr`] on retries.
    pub iova: u64,
    /// Bytes of the message: the sum of the SGE lengths for [`DataKind::Sges`], the inline
    /// bytes for [`DataKind::Inline`], 8 for [`DataKind::AtomicWrite`], `dma.length` as stored
    /// for FLUSH (the RETH length the C requester sends), 0 for local operations.
    pub length: u32,
    /// SGEs, for [`DataKind::Sges`]; 0 otherwise.
    pub num_sge: u32,
    /// [`wr_opcode_mask`] of the opcode on the QP type.
    pub mask: WrMask,
    /// Where the data is.
    pub data: DataKind,
}

impl SendWqe {
    /// Reads and checks the send WQE in `slot`, a private copy of one slot of the send queue of
    /// a `qp_type` QP.
    ///
    /// Checks, beyond what the C requester does: the slot holds the fixed part; the opcode is
    /// in the C table and allowed on the QP type (C indexes its table with it); kernel-only
    /// opcodes only if `limits` allows them (C would use the user's `wr.reg.mr` as a kernel
    /// pointer). Then, by [`DataKind`]: SGEs are at most `limits.max_sge` and within the slot,
    /// and `dma.length` is their sum (C trusts `dma.length`), at most [`PORT_MAX_MSG_SZ`];
    /// inline data is at most `limits.max_inline` and within the slot; an ATOMIC WRITE carries
    /// exactly 8 bytes (C sends `dma.length` bytes from the slot). The C progress state in the
    /// slot (`status`, `state`, `resid`, `cur_sge`, ...) is not read.
    ///
    /// Not checked here, as in C: the semantics of the operation (atomic length and alignment,
    /// the keys, the UD address).
    ///
    /// Inlined into its one caller in the driver, so that the WQE is written where it is kept.
    #[inline(always)]
    pub fn parse(slot: &[u8], qp_type: QpType, limits: SendLimits) -> Result<Self, WqeError> {
        let hdr = slot.get(..SEND_WQE_HDR_LEN).ok_or(WqeError::Truncated)?;
        let opcode = u32_at(hdr, SEND_WR_OPCODE_OFFSET);
        let mask = wr_opcode_mask(opcode, qp_type).ok_or(WqeError::BadOpcode(opcode))?;
        if wr_opcode_is_kernel_only(opcode) && !limits.allow_kernel_only {
            return Err(WqeError::KernelOnlyOpcode(opcode));
        }
        let send_flags = u32_at(hdr, SEND_WR_SEND_FLAGS_OFFSET);
        let stored_length = u32_at(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET);
        let stored_num_sge = u32_at(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET);
        let data = DataKind::of(mask, send_flags);
        let (length, num_sge) = match data {
            DataKind::None if mask.contains(WrMask::FLUSH) => (stored_length, 0),
            DataKind::None => (0, 0),
            DataKind::AtomicWrite => {
                if stored_length != 8 {
                    return Err(WqeError::AtomicWriteLength(stored_length));
                }
                data_range(slot.len(), SEND_WQE_DATA_OFFSET, 8)?;
                (8, 0)
            }
            DataKind::Inline => {
                if stored_length > limits.max_inline {
                    return Err(WqeError::InlineTooLong {
                        length: stored_length,
                        max_inline: limits.max_inline,
                    });
                }
                let len = usize::try_from(stored_length).map_err(|_| WqeError::DataOutOfSlot)?;
                data_range(slot.len(), SEND_WQE_DATA_OFFSET, len)?;
                (stored_length, 0)
            }
            DataKind::Sges => {
                check_sges(
                    slot,
                    SEND_WQE_DATA_OFFSET,
                    stored_num_sge,
                    limits.max_sge,
                    stored_length,
                )?;
                (stored_length, stored_num_sge)
            }
        };
        Ok(Self {
            wr_id: u64_at(hdr, SEND_WR_WR_ID_OFFSET),
            opcode,
            send_flags,
            ex: u32_at(hdr, SEND_WR_EX_OFFSET),
            detail: WrDetail::read(hdr, opcode, qp_type),
            iova: u64_at(hdr, SEND_WQE_IOVA_OFFSET),
            length,
            num_sge,
            mask,
            data,
        })
    }

    /// The work request part, as [`write_send_wqe`] takes it.
    pub const fn wr(&self) -> SendWr {
        SendWr {
            wr_id: self.wr_id,
            opcode: self.opcode,
            send_flags: self.send_flags,
            ex: self.ex,
            detail: self.detail,
        }
    }

    /// The immediate data as stored, in network byte order: the IMMDT header's bytes.
    pub const fn imm_be_bytes(&self) -> [u8; 4] {
        self.ex.to_le_bytes()
    }

    /// The immediate data as [`super::hdr::Immdt::imm`] holds it.
    pub const fn imm_data(&self) -> u32 {
        ex_to_imm(self.ex)
    }

    /// The rkey to invalidate (SEND_WITH_INV, LOCAL_INV, RDMA_READ_WITH_INV).
    pub const fn invalidate_rkey(&self) -> u32 {
        self.ex
    }

    /// Whether the data is inline ([`DataKind::Inline`]).
    pub const fn is_inline(&self) -> bool {
        matches!(self.data, DataKind::Inline)
    }
}

/// The data [`write_send_wqe`] puts after the fixed part of a send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendData<'a> {
    /// None, for [`DataKind::None`].
    None,
    /// The SGE list, for [`DataKind::Sges`].
    Sges(&'a [Sge]),
    /// The inline bytes, for [`DataKind::Inline`].
    Inline(&'a [u8]),
    /// The value, for [`DataKind::AtomicWrite`].
    AtomicWrite([u8; 8]),
}

impl SendData<'_> {
    /// Which kind of data this is.
    pub const fn kind(&self) -> DataKind {
        match self {
            Self::None => DataKind::None,
            Self::Sges(_) => DataKind::Sges,
            Self::Inline(_) => DataKind::Inline,
            Self::AtomicWrite(_) => DataKind::AtomicWrite,
        }
    }
}

/// Writes a send WQE into `slot` of a kernel QP's send queue, as the C `init_send_wqe()` does
/// for `ib_post_send()`, and returns it as [`SendWqe::parse`] reads it back, with the same
/// checks (so `limits` should allow kernel-only opcodes).
///
/// Writes the whole fixed part (C progress state and padding as 0), `dma.length` and `resid`
/// as the data's length, `num_sge` for SGEs, `iova` as [`WrDetail::remote_addr`] or 0, then the
/// data. For FLUSH, `dma.length` is the detail's flush length.
///
/// [`WqeError::Inconsistent`] when `data` is not the [`DataKind`] of the opcode and flags, or
/// `wr.detail` is not the member the opcode reads back; [`WqeError::BadAtomic`] and
/// [`WqeError::InlineNotAllowed`] for what C's `validate_send_wr` refuses;
/// [`WqeError::Truncated`] or [`WqeError::DataOutOfSlot`] (checked before anything is written)
/// when the slot is too short; any error of [`SendWqe::parse`] otherwise (the slot is then
/// written but invalid).
pub fn write_send_wqe(
    slot: &mut [u8],
    qp_type: QpType,
    limits: SendLimits,
    wr: &SendWr,
    data: SendData<'_>,
) -> Result<SendWqe, WqeError> {
    let mask = wr_opcode_mask(wr.opcode, qp_type).ok_or(WqeError::BadOpcode(wr.opcode))?;
    if data.kind() != DataKind::of(mask, wr.send_flags) {
        return Err(WqeError::Inconsistent);
    }
    if slot.len() < SEND_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    let (length, num_sge, data_len) = match data {
        SendData::None => match wr.detail {
            WrDetail::Flush { length, .. } => (length, 0, 0),
            _ => (0, 0, 0),
        },
        SendData::Sges(sges) => {
            let num_sge = u32::try_from(sges.len()).map_err(|_| WqeError::TooManySge {
                num_sge: u32::MAX,
                max_sge: limits.max_sge,
            })?;
            (sum_sges(sges)?, num_sge, sge_bytes(num_sge)?)
        }
        SendData::Inline(bytes) => {
            let length = u32::try_from(bytes.len()).map_err(|_| WqeError::InlineTooLong {
                length: u32::MAX,
                max_inline: limits.max_inline,
            })?;
            (length, 0, bytes.len())
        }
        SendData::AtomicWrite(_) => (8, 0, 8),
    };
    // C `validate_send_wr`, which only kernel WRs pass through (librxe checks its own).
    if mask.contains(WrMask::ATOMIC) {
        let aligned = match wr.detail {
            WrDetail::Atomic { remote_addr, .. } => remote_addr % 8 == 0,
            _ => false,
        };
        if length != 8 || !aligned {
            return Err(WqeError::BadAtomic);
        }
    }
    if wr.send_flags & IB_SEND_INLINE != 0 && !mask.contains(WrMask::INLINE) {
        return Err(WqeError::InlineNotAllowed(wr.opcode));
    }
    let range = data_range(slot.len(), SEND_WQE_DATA_OFFSET, data_len)?;

    let hdr = slot
        .get_mut(..SEND_WQE_HDR_LEN)
        .ok_or(WqeError::Truncated)?;
    hdr.fill(0);
    put_u64(hdr, SEND_WR_WR_ID_OFFSET, wr.wr_id);
    put_u32(hdr, SEND_WR_OPCODE_OFFSET, wr.opcode);
    put_u32(hdr, SEND_WR_SEND_FLAGS_OFFSET, wr.send_flags);
    put_u32(hdr, SEND_WR_EX_OFFSET, wr.ex);
    wr.detail.write(hdr);
    put_u64(
        hdr,
        SEND_WQE_IOVA_OFFSET,
        wr.detail.remote_addr().unwrap_or(0),
    );
    put_u32(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET, length);
    put_u32(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_RESID_OFFSET, length);
    put_u32(hdr, SEND_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET, num_sge);

    let area = slot.get_mut(range).ok_or(WqeError::DataOutOfSlot)?;
    match data {
        SendData::None => {}
        SendData::Sges(sges) => {
            for (dst, sge) in area.chunks_exact_mut(SGE_LEN).zip(sges) {
                dst.copy_from_slice(&sge.to_bytes());
            }
        }
        SendData::Inline(bytes) => area.copy_from_slice(bytes),
        SendData::AtomicWrite(value) => area.copy_from_slice(&value),
    }

    let wqe = SendWqe::parse(slot, qp_type, limits)?;
    if wqe.wr() != *wr {
        return Err(WqeError::Inconsistent);
    }
    Ok(wqe)
}

// ---------------------------------------------------------------------------------------------
// Receive WQEs.
// ---------------------------------------------------------------------------------------------

/// A receive WQE read from a private copy of a receive queue (or SRQ) slot and checked by
/// [`RecvWqe::parse`]. The SGEs stay in the slot copy ([`recv_sge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWqe {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// SGEs, at most the queue's `max_sge`.
    pub num_sge: u32,
    /// Bytes the SGEs hold: their sum, at most [`PORT_MAX_MSG_SZ`].
    pub length: u32,
}

impl RecvWqe {
    /// Reads and checks the receive WQE in `slot`, a private copy of one slot of an RQ or SRQ
    /// made for `max_sge` SGEs: the slot holds the fixed part and `dma.num_sge` SGEs, at most
    /// `max_sge` (as C `get_srq_wqe()` checks for SRQs only), and `dma.length` is their sum (C
    /// trusts it), at most [`PORT_MAX_MSG_SZ`].
    pub fn parse(slot: &[u8], max_sge: u32) -> Result<Self, WqeError> {
        let hdr = slot.get(..RECV_WQE_HDR_LEN).ok_or(WqeError::Truncated)?;
        let length = u32_at(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET);
        let num_sge = u32_at(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET);
        check_sges(slot, RECV_WQE_DATA_OFFSET, num_sge, max_sge, length)?;
        Ok(Self {
            wr_id: u64_at(hdr, RECV_WQE_WR_ID_OFFSET),
            num_sge,
            length,
        })
    }
}

/// Writes a receive WQE into `slot` of a kernel QP's RQ or SRQ made for `max_sge` SGEs, as the
/// C `post_one_recv()` does, and returns it as [`RecvWqe::parse`] reads it back.
///
/// [`WqeError::Truncated`] or [`WqeError::DataOutOfSlot`] (before anything is written) when the
/// slot is too short; [`WqeError::TooManySge`], [`WqeError::LengthOverflow`] or
/// [`WqeError::MessageTooLong`] as C `post_one_recv()` refuses the WR.
pub fn write_recv_wqe(
    slot: &mut [u8],
    wr_id: u64,
    sges: &[Sge],
    max_sge: u32,
) -> Result<RecvWqe, WqeError> {
    let num_sge = u32::try_from(sges.len()).unwrap_or(u32::MAX);
    if num_sge > max_sge {
        return Err(WqeError::TooManySge { num_sge, max_sge });
    }
    let length = sum_sges(sges)?;
    if length > PORT_MAX_MSG_SZ {
        return Err(WqeError::MessageTooLong(length));
    }
    if slot.len() < RECV_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    let range = data_range(slot.len(), RECV_WQE_DATA_OFFSET, sge_bytes(num_sge)?)?;

    let hdr = slot
        .get_mut(..RECV_WQE_HDR_LEN)
        .ok_or(WqeError::Truncated)?;
    hdr.fill(0);
    put_u64(hdr, RECV_WQE_WR_ID_OFFSET, wr_id);
    put_u32(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_LENGTH_OFFSET, length);
    put_u32(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_RESID_OFFSET, length);
    put_u32(hdr, RECV_WQE_DMA_OFFSET + DMA_INFO_NUM_SGE_OFFSET, num_sge);
    let area = slot.get_mut(range).ok_or(WqeError::DataOutOfSlot)?;
    for (dst, sge) in area.chunks_exact_mut(SGE_LEN).zip(sges) {
        dst.copy_from_slice(&sge.to_bytes());
    }
    RecvWqe::parse(slot, max_sge)
}

// ---------------------------------------------------------------------------------------------
// The DMA cursor.
// ---------------------------------------------------------------------------------------------

/// Why a [`DmaCursor`] cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaError {
    /// More bytes asked for than are left (`resid`): C `copy_data()` returns `-EINVAL`.
    TooLong,
    /// The SGEs end before the bytes asked for: C returns `-ENOSPC`.
    NoSpace,
    /// The SGE at this index could not be read (past the end of the slot).
    BadSge(u32),
    /// The chunk's addresses would wrap around the end of the 64-bit address space.
    AddrOverflow,
}

impl DmaError {
    /// The status a receive WQE completes with when its buffer fails this way: the message
    /// does not fit (`LOC_LEN_ERR`), the WQE cannot be read (`LOC_QP_OP_ERR`), or an SGE names
    /// addresses past 2^64, which no MR holds (`LOC_PROT_ERR`, as a bad lkey or an address
    /// outside the MR).
    pub const fn recv_status(self) -> WcStatus {
        match self {
            Self::TooLong | Self::NoSpace => IB_WC_LOC_LEN_ERR,
            Self::BadSge(_) => IB_WC_LOC_QP_OP_ERR,
            Self::AddrOverflow => IB_WC_LOC_PROT_ERR,
        }
    }
}

/// A contiguous piece of one SGE: `len` bytes at `addr` in the MR of `lkey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Start address, within the SGE.
    pub addr: u64,
    /// Bytes, at least 1, within the SGE.
    pub len: u32,
    /// Local key of the SGE.
    pub lkey: u32,
}

/// The progress of a copy through a WQE's data (`cur_sge`, `sge_offset` and `resid` of
/// `struct rxe_dma_info`), kept by the kernel, never read from a shared ring.
///
/// [`next_chunk`](Self::next_chunk) walks the SGEs as C `copy_data()` does and leaves the same
/// state behind: zero-length SGEs are skipped, and an SGE that was used up is left only when the
/// next byte is asked for. On an error the cursor is unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaCursor {
    /// Index of the current SGE.
    pub cur_sge: u32,
    /// Bytes of the current SGE already used (for inline data: of the inline data).
    pub sge_offset: u32,
    /// Bytes left.
    pub resid: u32,
}

impl DmaCursor {
    /// The start of a message of `length` bytes.
    pub const fn new(length: u32) -> Self {
        Self {
            cur_sge: 0,
            sge_offset: 0,
            resid: length,
        }
    }

    /// Whether no byte is left.
    pub const fn is_done(&self) -> bool {
        self.resid == 0
    }

    /// The next contiguous chunk of at most `max_len` bytes, and the cursor moved past it.
    /// `sge_at(i)` is SGE `i` of the WQE (e.g. `|i| sge(slot, i)`), for `i < num_sge` only.
    ///
    /// To copy `n` bytes as C `copy_data(..., n, ...)`, call it with the bytes still to copy
    /// until they are done. `Ok(None)` when `max_len` is 0; [`DmaError::TooLong`] when
    /// `max_len` exceeds [`resid`](Self::resid); [`DmaError::NoSpace`] when the SGEs end first.
    /// The walk visits each SGE at most once, so it is bounded by `num_sge`.
    pub fn next_chunk(
        &mut self,
        sge_at: impl Fn(u32) -> Option<Sge>,
        num_sge: u32,
        max_len: u32,
    ) -> Result<Option<Chunk>, DmaError> {
        if max_len == 0 {
            return Ok(None);
        }
        if max_len > self.resid {
            return Err(DmaError::TooLong);
        }
        let mut cur = self.cur_sge;
        let mut offset = self.sge_offset;
        loop {
            if cur >= num_sge {
                return Err(DmaError::NoSpace);
            }
            let sge = sge_at(cur).ok_or(DmaError::BadSge(cur))?;
            if offset >= sge.length {
                // `cur < num_sge`, so this does not overflow.
                cur += 1;
                offset = 0;
                continue;
            }
            let left = sge.length - offset;
            let len = if max_len < left { max_len } else { left };
            let addr = sge
                .addr
                .checked_add(u64::from(offset))
                .ok_or(DmaError::AddrOverflow)?;
            // `len >= 1`: the last byte must be addressable.
            addr.checked_add(u64::from(len - 1))
                .ok_or(DmaError::AddrOverflow)?;
            self.cur_sge = cur;
            self.sge_offset = offset + len;
            self.resid -= len;
            return Ok(Some(Chunk {
                addr,
                len,
                lkey: sge.lkey,
            }));
        }
    }

    /// Moves past `len` bytes without copying (C `advance_dma_data()`, used to replay the
    /// packets already acknowledged on a retry), with the errors of
    /// [`next_chunk`](Self::next_chunk); unchanged on error.
    pub fn advance(
        &mut self,
        sge_at: impl Fn(u32) -> Option<Sge>,
        num_sge: u32,
        len: u32,
    ) -> Result<(), DmaError> {
        let mut cursor = *self;
        let mut left = len;
        while left > 0 {
            match cursor.next_chunk(&sge_at, num_sge, left)? {
                Some(chunk) => left -= chunk.len,
                None => break,
            }
        }
        *self = cursor;
        Ok(())
    }

    /// The next `len` bytes of inline data, as a range of the inline data ([`inline_data`]),
    /// and the cursor moved past them: the inline branch of C `finish_packet()`
    /// (`sge_offset` and `resid` only). [`DmaError::TooLong`] when `len` exceeds
    /// [`resid`](Self::resid); unchanged on error.
    pub fn next_inline(&mut self, len: u32) -> Result<Range<usize>, DmaError> {
        if len > self.resid {
            return Err(DmaError::TooLong);
        }
        let end = self.sge_offset.checked_add(len).ok_or(DmaError::TooLong)?;
        let start = self.sge_offset;
        self.sge_offset = end;
        self.resid -= len;
        Ok(start as usize..end as usize)
    }
}

// ---------------------------------------------------------------------------------------------
// Completions.
// ---------------------------------------------------------------------------------------------

/// A completion as user space reads it from a CQ slot (`struct ib_uverbs_wc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UverbsWc {
    /// The WR's cookie.
    pub wr_id: u64,
    /// `IB_WC_*` status.
    pub status: WcStatus,
    /// `IB_WC_*` opcode.
    pub opcode: u32,
    /// Vendor error (0 in rxe).
    pub vendor_err: u32,
    /// Bytes transferred.
    pub byte_len: u32,
    /// `ex` as stored: the immediate data in network byte order ([`imm_to_ex`]) or the
    /// invalidated rkey.
    pub ex: u32,
    /// Local QP number.
    pub qp_num: u32,
    /// Source QP number (UD receives).
    pub src_qp: u32,
    /// `IB_WC_*` flags ([`IB_WC_GRH`], [`IB_WC_WITH_IMM`], ...).
    pub wc_flags: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Source LID (0 on RoCE).
    pub slid: u16,
    /// Service level.
    pub sl: u8,
    /// Destination LID path bits (0 on RoCE).
    pub dlid_path_bits: u8,
    /// Port number.
    pub port_num: u8,
}

impl UverbsWc {
    /// Reads the completion at the start of `slot`; [`WqeError::Truncated`] when shorter than
    /// [`UVERBS_WC_LEN`].
    pub fn read(slot: &[u8]) -> Result<Self, WqeError> {
        let wc = slot.get(..UVERBS_WC_LEN).ok_or(WqeError::Truncated)?;
        Ok(Self {
            wr_id: u64_at(wc, UVERBS_WC_WR_ID_OFFSET),
            status: {
                let raw = u32_at(wc, UVERBS_WC_STATUS_OFFSET);
                WcStatus::from_raw(raw).ok_or(WqeError::BadStatus(raw))?
            },
            opcode: u32_at(wc, UVERBS_WC_OPCODE_OFFSET),
            vendor_err: u32_at(wc, UVERBS_WC_VENDOR_ERR_OFFSET),
            byte_len: u32_at(wc, UVERBS_WC_BYTE_LEN_OFFSET),
            ex: u32_at(wc, UVERBS_WC_EX_OFFSET),
            qp_num: u32_at(wc, UVERBS_WC_QP_NUM_OFFSET),
            src_qp: u32_at(wc, UVERBS_WC_SRC_QP_OFFSET),
            wc_flags: u32_at(wc, UVERBS_WC_WC_FLAGS_OFFSET),
            pkey_index: u16_at(wc, UVERBS_WC_PKEY_INDEX_OFFSET),
            slid: u16_at(wc, UVERBS_WC_SLID_OFFSET),
            sl: u8_at(wc, UVERBS_WC_SL_OFFSET),
            dlid_path_bits: u8_at(wc, UVERBS_WC_DLID_PATH_BITS_OFFSET),
            port_num: u8_at(wc, UVERBS_WC_PORT_NUM_OFFSET),
        })
    }

    /// Writes the completion at the start of `slot`, the reserved byte as 0, and zeroes the rest
    /// of the `struct rxe_cqe` ([`CQE_SIZE`] bytes, as far as the slot goes), as the C driver
    /// copies a zeroed `rxe_cqe`. [`WqeError::Truncated`], writing nothing, when `slot` is
    /// shorter than [`UVERBS_WC_LEN`].
    pub fn write(&self, slot: &mut [u8]) -> Result<(), WqeError> {
        if slot.len() < UVERBS_WC_LEN {
            return Err(WqeError::Truncated);
        }
        let end = if slot.len() < CQE_SIZE as usize {
            slot.len()
        } else {
            CQE_SIZE as usize
        };
        let cqe = slot.get_mut(..end).ok_or(WqeError::Truncated)?;
        cqe.fill(0);
        put_u64(cqe, UVERBS_WC_WR_ID_OFFSET, self.wr_id);
        put_u32(cqe, UVERBS_WC_STATUS_OFFSET, self.status.raw());
        put_u32(cqe, UVERBS_WC_OPCODE_OFFSET, self.opcode);
        put_u32(cqe, UVERBS_WC_VENDOR_ERR_OFFSET, self.vendor_err);
        put_u32(cqe, UVERBS_WC_BYTE_LEN_OFFSET, self.byte_len);
        put_u32(cqe, UVERBS_WC_EX_OFFSET, self.ex);
        put_u32(cqe, UVERBS_WC_QP_NUM_OFFSET, self.qp_num);
        put_u32(cqe, UVERBS_WC_SRC_QP_OFFSET, self.src_qp);
        put_u32(cqe, UVERBS_WC_WC_FLAGS_OFFSET, self.wc_flags);
        put_u16(cqe, UVERBS_WC_PKEY_INDEX_OFFSET, self.pkey_index);
        put_u16(cqe, UVERBS_WC_SLID_OFFSET, self.slid);
        put(cqe, UVERBS_WC_SL_OFFSET, [self.sl]);
        put(cqe, UVERBS_WC_DLID_PATH_BITS_OFFSET, [self.dlid_path_bits]);
        put(cqe, UVERBS_WC_PORT_NUM_OFFSET, [self.port_num]);
        Ok(())
    }

    /// The immediate data as stored, in network byte order.
    pub const fn imm_be_bytes(&self) -> [u8; 4] {
        self.ex.to_le_bytes()
    }
}

/// The completion opcode of a send WQE (C `wr_to_wc_opcode()`); `None` where C returns `0xff`
/// (unknown opcodes, the masked atomics, `IB_WR_REG_MR_INTEGRITY`).
pub const fn wr_to_wc_opcode(wr_opcode: u32) -> Option<u32> {
    Some(match wr_opcode {
        IB_WR_RDMA_WRITE | IB_WR_RDMA_WRITE_WITH_IMM => IB_WC_RDMA_WRITE,
        IB_WR_SEND | IB_WR_SEND_WITH_IMM | IB_WR_SEND_WITH_INV => IB_WC_SEND,
        IB_WR_RDMA_READ | IB_WR_RDMA_READ_WITH_INV => IB_WC_RDMA_READ,
        IB_WR_ATOMIC_CMP_AND_SWP => IB_WC_COMP_SWAP,
        IB_WR_ATOMIC_FETCH_AND_ADD => IB_WC_FETCH_ADD,
        IB_WR_LSO => IB_WC_LSO,
        IB_WR_LOCAL_INV => IB_WC_LOCAL_INV,
        IB_WR_REG_MR => IB_WC_REG_MR,
        IB_WR_BIND_MW => IB_WC_BIND_MW,
        IB_WR_ATOMIC_WRITE => IB_WC_ATOMIC_WRITE,
        IB_WR_FLUSH => IB_WC_FLUSH,
        _ => return None,
    })
}

/// What C `make_send_cqe()` puts in a send completion besides `wr_id`, status and the QP:
/// `(opcode, wc_flags, byte_len)`. A successful WQE reports its completion opcode,
/// [`IB_WC_WITH_IMM`] for the two opcodes with immediate data, and its `dma.length` (`length`:
/// a SEND's or WRITE's bytes, 8 for an atomic, a FLUSH's range); a failed one reports zeros.
pub const fn send_cqe_fields(wr_opcode: u32, length: u32, status: WcStatus) -> (u32, u32, u32) {
    if !status.is_success() {
        return (0, 0, 0);
    }
    let opcode = match wr_to_wc_opcode(wr_opcode) {
        Some(op) => op,
        None => 0xff,
    };
    let flags = match wr_opcode {
        IB_WR_RDMA_WRITE_WITH_IMM | IB_WR_SEND_WITH_IMM => IB_WC_WITH_IMM,
        _ => 0,
    };
    (opcode, flags, length)
}

// ---------------------------------------------------------------------------------------------
// Requester opcode selection.
// ---------------------------------------------------------------------------------------------

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
/// [`wr_opcode_mask`] but has no UD opcode, as in C.
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
