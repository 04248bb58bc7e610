// SPDX-License-Identifier: GPL-2.0

//! Local operations of the send queue (`rxe_req.c:rxe_do_local_ops`): BIND_MW, LOCAL_INV and
//! REG_MR execute on the requester's side, send nothing, and complete in order with the WQEs
//! around them.

use super::{
    engine::{Cause, RxeError, WqeState},
    mr,
    step::Step,
};
use crate::proto::{
    mw::Bind,
    queue::Index,
    wqe::{SendWqe, WrDetail, IB_WR_BIND_MW, IB_WR_LOCAL_INV, IB_WR_REG_MR},
};

impl Step<'_> {
    /// Executes local operation `wqe` at send queue slot `idx`; whether the requester made
    /// progress (`false`: LOCAL_INV waits for every earlier WQE to complete, C's "local
    /// invalidate fence").
    pub(crate) fn local_op(&mut self, idx: Index, wqe: &SendWqe) -> bool {
        let rxe = &*self.qp.dev;
        let status = match (wqe.opcode, wqe.detail) {
            (IB_WR_LOCAL_INV, _) => {
                if idx != self.eng.comp.consumer {
                    return false;
                }
                mr::invalidate_key(rxe.keys(), wqe.ex).map_err(RxeError::from)
            }
            (
                IB_WR_BIND_MW,
                WrDetail::Mw {
                    addr,
                    length,
                    mr_lkey,
                    mw_rkey,
                    rkey,
                    access,
                },
            ) => {
                let b = Bind {
                    addr,
                    length,
                    access,
                    rkey,
                };
                mr::bind_mw(rxe.keys(), self.qp.pd, self.qp.uid, mw_rkey, mr_lkey, &b)
                    .map_err(|e| RxeError::bind(Cause::Errno(e)))
            }
            (IB_WR_REG_MR, WrDetail::Reg { key, access }) => {
                mr::reg_fast_mr(rxe.keys(), self.qp.pd, key, access).map_err(RxeError::from)
            }
            _ => Err(RxeError::local_op(Cause::Check)),
        };
        let g = *self.qp.sq.geometry();
        if let Some(info) = self.eng.sq.info_mut(idx) {
            info.state = match status {
                Ok(()) => WqeState::Done,
                Err(e) => WqeState::Error(e.status),
            };
        }
        // A failed operation stops the requester there, as a failed send does (`next_wqe`).
        if status.is_ok() {
            self.eng.req.wqe_index = g.next_index(idx);
        } else {
            self.eng.req.opcode = None;
        }
        true
    }
}
