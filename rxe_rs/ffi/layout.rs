// SPDX-License-Identifier: GPL-2.0

//! The ring layouts of the pure core (`proto::wqe`, `proto::queue`), checked at compile time
//! against the uapi structs as bindgen lays them out for this kernel: `struct rxe_send_wqe`,
//! `struct rxe_recv_wqe`, `struct rxe_sge`, `struct rxe_dma_info`, the unions of `struct
//! rxe_send_wr`, `struct rxe_av` and `struct ib_uverbs_wc` (`include/uapi/rdma/`). A header
//! that moved a field fails the module build here rather than corrupting a ring.

use super::{
    ib_uverbs_wc, rxe_av, rxe_dma_info, rxe_recv_wqe, rxe_send_wqe, rxe_send_wr,
    rxe_send_wr__bindgen_ty_2 as WrUnion, rxe_send_wr__bindgen_ty_2__bindgen_ty_1 as WrFlush,
    rxe_send_wr__bindgen_ty_2__bindgen_ty_2 as WrRdma,
    rxe_send_wr__bindgen_ty_2__bindgen_ty_3 as WrAtomic,
    rxe_send_wr__bindgen_ty_2__bindgen_ty_4 as WrUd,
    rxe_send_wr__bindgen_ty_2__bindgen_ty_5 as WrMw,
    rxe_send_wr__bindgen_ty_2__bindgen_ty_6 as WrReg, rxe_sge,
};
use crate::proto::{queue, wqe};
use core::mem::{offset_of, size_of};

const _: () = {
    assert!(wqe::SGE_ADDR_OFFSET == offset_of!(rxe_sge, addr));
    assert!(wqe::SGE_LENGTH_OFFSET == offset_of!(rxe_sge, length));
    assert!(wqe::SGE_LKEY_OFFSET == offset_of!(rxe_sge, lkey));
    assert!(wqe::DMA_INFO_LENGTH_OFFSET == offset_of!(rxe_dma_info, length));
    assert!(wqe::DMA_INFO_RESID_OFFSET == offset_of!(rxe_dma_info, resid));
    assert!(wqe::DMA_INFO_CUR_SGE_OFFSET == offset_of!(rxe_dma_info, cur_sge));
    assert!(wqe::DMA_INFO_NUM_SGE_OFFSET == offset_of!(rxe_dma_info, num_sge));
    assert!(wqe::DMA_INFO_SGE_OFFSET_OFFSET == offset_of!(rxe_dma_info, sge_offset));
    assert!(wqe::DMA_INFO_RESERVED_OFFSET == offset_of!(rxe_dma_info, reserved));
    assert!(wqe::DMA_INFO_SGE_OFFSET == offset_of!(rxe_dma_info, __bindgen_anon_1));
    assert!(wqe::SEND_WR_WR_ID_OFFSET == offset_of!(rxe_send_wr, wr_id));
    assert!(wqe::SEND_WR_RESERVED_OFFSET == offset_of!(rxe_send_wr, reserved));
    assert!(wqe::SEND_WR_OPCODE_OFFSET == offset_of!(rxe_send_wr, opcode));
    assert!(wqe::SEND_WR_SEND_FLAGS_OFFSET == offset_of!(rxe_send_wr, send_flags));
    assert!(wqe::SEND_WR_EX_OFFSET == offset_of!(rxe_send_wr, ex));
    assert!(wqe::SEND_WR_WR_OFFSET == offset_of!(rxe_send_wr, wr));
    assert!(
        wqe::SEND_WR_FLUSH_REMOTE_ADDR_OFFSET
            == wqe::SEND_WR_WR_OFFSET + offset_of!(WrFlush, remote_addr)
    );
    assert!(
        wqe::SEND_WR_FLUSH_LENGTH_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrFlush, length)
    );
    assert!(wqe::SEND_WR_FLUSH_RKEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrFlush, rkey));
    assert!(wqe::SEND_WR_FLUSH_TYPE_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrFlush, type_));
    assert!(wqe::SEND_WR_FLUSH_LEVEL_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrFlush, level));
    assert!(
        wqe::SEND_WR_RDMA_REMOTE_ADDR_OFFSET
            == wqe::SEND_WR_WR_OFFSET + offset_of!(WrRdma, remote_addr)
    );
    assert!(wqe::SEND_WR_RDMA_RKEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrRdma, rkey));
    assert!(
        wqe::SEND_WR_ATOMIC_REMOTE_ADDR_OFFSET
            == wqe::SEND_WR_WR_OFFSET + offset_of!(WrAtomic, remote_addr)
    );
    assert!(
        wqe::SEND_WR_ATOMIC_COMPARE_ADD_OFFSET
            == wqe::SEND_WR_WR_OFFSET + offset_of!(WrAtomic, compare_add)
    );
    assert!(wqe::SEND_WR_ATOMIC_SWAP_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrAtomic, swap));
    assert!(wqe::SEND_WR_ATOMIC_RKEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrAtomic, rkey));
    assert!(
        wqe::SEND_WR_UD_REMOTE_QPN_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrUd, remote_qpn)
    );
    assert!(
        wqe::SEND_WR_UD_REMOTE_QKEY_OFFSET
            == wqe::SEND_WR_WR_OFFSET + offset_of!(WrUd, remote_qkey)
    );
    assert!(
        wqe::SEND_WR_UD_PKEY_INDEX_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrUd, pkey_index)
    );
    assert!(wqe::SEND_WR_UD_AH_NUM_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrUd, ah_num));
    assert!(wqe::SEND_WR_UD_AV_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrUd, av));
    assert!(wqe::SEND_WR_MW_ADDR_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrMw, addr));
    assert!(wqe::SEND_WR_MW_LENGTH_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrMw, length));
    assert!(wqe::SEND_WR_MW_MR_LKEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrMw, mr_lkey));
    assert!(wqe::SEND_WR_MW_MW_RKEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrMw, mw_rkey));
    assert!(wqe::SEND_WR_MW_RKEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrMw, rkey));
    assert!(wqe::SEND_WR_MW_ACCESS_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrMw, access));
    assert!(
        wqe::SEND_WR_REG_MR_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrReg, __bindgen_anon_1)
    );
    assert!(wqe::SEND_WR_REG_KEY_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrReg, key));
    assert!(wqe::SEND_WR_REG_ACCESS_OFFSET == wqe::SEND_WR_WR_OFFSET + offset_of!(WrReg, access));
    assert!(wqe::SEND_WQE_WR_OFFSET == offset_of!(rxe_send_wqe, wr));
    assert!(wqe::SEND_WQE_STATUS_OFFSET == offset_of!(rxe_send_wqe, status));
    assert!(wqe::SEND_WQE_STATE_OFFSET == offset_of!(rxe_send_wqe, state));
    assert!(wqe::SEND_WQE_IOVA_OFFSET == offset_of!(rxe_send_wqe, iova));
    assert!(wqe::SEND_WQE_MASK_OFFSET == offset_of!(rxe_send_wqe, mask));
    assert!(wqe::SEND_WQE_FIRST_PSN_OFFSET == offset_of!(rxe_send_wqe, first_psn));
    assert!(wqe::SEND_WQE_LAST_PSN_OFFSET == offset_of!(rxe_send_wqe, last_psn));
    assert!(wqe::SEND_WQE_ACK_LENGTH_OFFSET == offset_of!(rxe_send_wqe, ack_length));
    assert!(wqe::SEND_WQE_SSN_OFFSET == offset_of!(rxe_send_wqe, ssn));
    assert!(wqe::SEND_WQE_HAS_RD_ATOMIC_OFFSET == offset_of!(rxe_send_wqe, has_rd_atomic));
    assert!(wqe::SEND_WQE_DMA_OFFSET == offset_of!(rxe_send_wqe, dma));
    assert!(wqe::RECV_WQE_WR_ID_OFFSET == offset_of!(rxe_recv_wqe, wr_id));
    assert!(wqe::RECV_WQE_RESERVED_OFFSET == offset_of!(rxe_recv_wqe, reserved));
    assert!(wqe::RECV_WQE_PADDING_OFFSET == offset_of!(rxe_recv_wqe, padding));
    assert!(wqe::RECV_WQE_DMA_OFFSET == offset_of!(rxe_recv_wqe, dma));
    assert!(wqe::UVERBS_WC_WR_ID_OFFSET == offset_of!(ib_uverbs_wc, wr_id));
    assert!(wqe::UVERBS_WC_STATUS_OFFSET == offset_of!(ib_uverbs_wc, status));
    assert!(wqe::UVERBS_WC_OPCODE_OFFSET == offset_of!(ib_uverbs_wc, opcode));
    assert!(wqe::UVERBS_WC_VENDOR_ERR_OFFSET == offset_of!(ib_uverbs_wc, vendor_err));
    assert!(wqe::UVERBS_WC_BYTE_LEN_OFFSET == offset_of!(ib_uverbs_wc, byte_len));
    assert!(wqe::UVERBS_WC_EX_OFFSET == offset_of!(ib_uverbs_wc, ex));
    assert!(wqe::UVERBS_WC_QP_NUM_OFFSET == offset_of!(ib_uverbs_wc, qp_num));
    assert!(wqe::UVERBS_WC_SRC_QP_OFFSET == offset_of!(ib_uverbs_wc, src_qp));
    assert!(wqe::UVERBS_WC_WC_FLAGS_OFFSET == offset_of!(ib_uverbs_wc, wc_flags));
    assert!(wqe::UVERBS_WC_PKEY_INDEX_OFFSET == offset_of!(ib_uverbs_wc, pkey_index));
    assert!(wqe::UVERBS_WC_SLID_OFFSET == offset_of!(ib_uverbs_wc, slid));
    assert!(wqe::UVERBS_WC_SL_OFFSET == offset_of!(ib_uverbs_wc, sl));
    assert!(wqe::UVERBS_WC_DLID_PATH_BITS_OFFSET == offset_of!(ib_uverbs_wc, dlid_path_bits));
    assert!(wqe::UVERBS_WC_PORT_NUM_OFFSET == offset_of!(ib_uverbs_wc, port_num));
    assert!(wqe::UVERBS_WC_RESERVED_OFFSET == offset_of!(ib_uverbs_wc, reserved));
    assert!(wqe::SGE_LEN == size_of::<rxe_sge>());
    assert!(wqe::DMA_INFO_LEN == size_of::<rxe_dma_info>());
    assert!(wqe::SEND_WR_LEN == size_of::<rxe_send_wr>());
    assert!(wqe::SEND_WR_WR_LEN == size_of::<WrUnion>());
    assert!(wqe::RXE_AV_LEN == size_of::<rxe_av>());
    assert!(wqe::SEND_WQE_HDR_LEN == size_of::<rxe_send_wqe>());
    assert!(wqe::RECV_WQE_HDR_LEN == size_of::<rxe_recv_wqe>());
    assert!(wqe::UVERBS_WC_LEN == size_of::<ib_uverbs_wc>());
    assert!(queue::SGE_SIZE as usize == size_of::<rxe_sge>());
    assert!(queue::RECV_WQE_SIZE as usize == size_of::<rxe_recv_wqe>());
    assert!(queue::SEND_WQE_SIZE as usize == size_of::<rxe_send_wqe>());
};
