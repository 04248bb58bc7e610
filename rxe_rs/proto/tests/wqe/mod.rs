// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Work queue entries and completions: the C layouts (offsets measured with `offsetof` on
//! `rdma_user_rxe.h` and `ib_user_verbs.h`), the C tables (`rxe_wr_opcode_info[]`,
//! `wr_to_wc_opcode()`, `next_opcode()`), the C `copy_data()` walk, round trips, and hostile
//! slots.
//!
//! One file for each file of `proto/wqe/` that has tests (`send.rs` also covers the slot reads of
//! `sges.rs`); the helpers several of them use are here.

use std::vec::Vec;

use proptest::prelude::*;

use crate::proto::qp_state::QpType;
use crate::proto::wqe::*;

mod cqe;
mod dma;
mod layout;
mod recv;
mod req_opcode;
mod send;
mod verbs;
mod wr_opcode;

const ALL_QPT: [QpType; 5] = QpType::ALL;

fn set32(v: &mut [u8], off: usize, x: u32) {
    v[off..off + 4].copy_from_slice(&x.to_le_bytes());
}

fn set64(v: &mut [u8], off: usize, x: u64) {
    v[off..off + 8].copy_from_slice(&x.to_le_bytes());
}

/// The opcodes a queue of this type accepts, kernel-only ones included.
fn allowed(qpt: QpType) -> Vec<u32> {
    (0..=0x21)
        .filter(|&op| wr_opcode_mask(op, qpt).is_some())
        .collect()
}

fn sge_strategy() -> impl Strategy<Value = Sge> {
    (any::<u64>(), 0..0x100_0000u32, any::<u32>()).prop_map(|(addr, length, lkey)| Sge {
        addr,
        length,
        lkey,
    })
}
