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
//!
//! The files:
//!
//! - `layout.rs`: the offsets and sizes of the C structs in the rings.
//! - `verbs.rs`: the verbs numbers: `IB_WR_*`, `IB_SEND_*`, [`WcStatus`] and `IB_WC_*`.
//! - `wr_opcode.rs`: the WR opcode table of `rxe_opcode.c` ([`WrMask`], [`wr_opcode_mask`]).
//! - `bytes.rs`: little-endian access to a slot copy, and the byte order of the immediate data
//!   ([`imm_to_ex`], [`ex_to_imm`]).
//! - `error.rs`: [`WqeError`].
//! - `sges.rs`: [`Sge`], the data behind a WQE's fixed part ([`sge`], [`recv_sge`],
//!   [`inline_data`], [`atomic_write_value`], [`ud_av_bytes`]), and the SGE list checks.
//! - `send.rs`: send WQEs ([`SendWqe`], [`WrDetail`], [`DataKind`], [`write_send_wqe`]).
//! - `recv.rs`: receive WQEs ([`RecvWqe`], [`write_recv_wqe`]).
//! - `dma.rs`: the `copy_data()` walk ([`DmaCursor`]).
//! - `cqe.rs`: completions ([`UverbsWc`], [`wr_to_wc_opcode`], [`send_cqe_fields`]).
//! - `req_opcode.rs`: the requester's next BTH opcode ([`next_opcode`]).
//!
//! Their host tests are in `proto/tests/wqe/`, a file of the same name for each that has tests.

mod bytes;
mod cqe;
mod dma;
mod error;
mod layout;
mod recv;
mod req_opcode;
mod send;
mod sges;
mod verbs;
mod wr_opcode;

pub use self::bytes::{ex_to_imm, imm_to_ex};
pub use self::cqe::{send_cqe_fields, wr_to_wc_opcode, UverbsWc};
pub use self::dma::{Chunk, DmaCursor, DmaError};
pub use self::error::WqeError;
pub use self::layout::*;
pub use self::recv::{write_recv_wqe, RecvWqe};
pub use self::req_opcode::next_opcode;
pub use self::send::{write_send_wqe, DataKind, SendData, SendLimits, SendWqe, SendWr, WrDetail};
pub use self::sges::{atomic_write_value, inline_data, recv_sge, sge, ud_av_bytes, Sge};
pub use self::verbs::*;
pub use self::wr_opcode::{wr_opcode_is_kernel_only, wr_opcode_mask, wr_opcode_name, WrMask};
