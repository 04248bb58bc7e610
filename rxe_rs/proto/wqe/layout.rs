// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The layouts of the entries of the rings shared with user space, x86_64 (little endian,
//! `__aligned_u64`): `offsetof` and `sizeof` of `struct rxe_sge`, `struct rxe_dma_info`,
//! `struct rxe_send_wr`, `struct rxe_send_wqe` and `struct rxe_recv_wqe` (`rdma_user_rxe.h`)
//! and of `struct ib_uverbs_wc` (`ib_user_verbs.h`). The module build asserts every one against
//! bindgen's layout (`ffi/layout.rs`); the asserts here tie them to the slot sizes of `queue.rs`.

use crate::proto::queue::{CQE_SIZE, RECV_WQE_SIZE, SEND_WQE_SIZE, SGE_SIZE};

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
/// read here (written as 0); see [`WrDetail::Reg`](super::WrDetail::Reg).
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
