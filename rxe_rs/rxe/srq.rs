// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues, control path (`rxe_srq.c`, the SRQ verbs of `rxe_verbs.c`).

use super::{device::RxeDev, pool::PoolIndex, ring::Ring};
use crate::ib::{device::SrqAttr, uqueue::UserReq};
use crate::proto::{params, queue::recv_wqe_size};
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use kernel::prelude::*;

/// `struct rxe_create_srq_resp { struct mminfo mi; u32 srq_num; u32 reserved; }`.
const CREATE_SRQ_RESP_LEN: usize = 24;
/// `IB_SRQT_BASIC`.
const IB_SRQT_BASIC: u32 = 0;
/// `enum ib_srq_attr_mask`.
const IB_SRQ_MAX_WR: u32 = 1;
const IB_SRQ_LIMIT: u32 = 2;

/// An rxe SRQ.
pub(crate) struct RxeSrq {
    _srq_num: PoolIndex,
    /// The receive ring (consumed by the data path, still to come).
    ring: Ring,
    max_sge: u32,
    limit: AtomicU32,
}

impl RxeSrq {
    /// `rxe_create_srq`: checks (`rxe_srq_chk_init`), the ring, the user response; `attr.max_wr`
    /// becomes the rounded size.
    pub(crate) fn create(
        rxe: &RxeDev,
        attr: &mut SrqAttr,
        srq_type: u32,
        user: Option<UserReq>,
    ) -> Result<(Self, u32)> {
        if user
            .as_ref()
            .is_some_and(|u| u.outlen() < CREATE_SRQ_RESP_LEN)
        {
            return Err(EINVAL);
        }
        if srq_type != IB_SRQT_BASIC {
            return Err(EOPNOTSUPP);
        }
        if attr.max_wr == 0
            || attr.max_wr > params::MAX_SRQ_WR
            || attr.max_sge > params::MAX_SRQ_SGE
        {
            return Err(EINVAL);
        }
        let max_sge = attr.max_sge.max(1);
        let srq_num = rxe.srq_pool().take()?;
        let (ring, info) = Ring::new(attr.max_wr, recv_wqe_size(max_sge), user.as_ref())?;
        if let Some(u) = &user {
            let mut resp = [0u8; CREATE_SRQ_RESP_LEN];
            resp[..16].copy_from_slice(&info.to_bytes());
            resp[16..20].copy_from_slice(&srq_num.get().to_ne_bytes());
            u.respond(&resp)?;
        }
        attr.max_wr = ring.geometry().capacity();
        let num = srq_num.get();
        Ok((
            Self {
                _srq_num: srq_num,
                ring,
                max_sge,
                limit: AtomicU32::new(attr.srq_limit),
            },
            num,
        ))
    }

    /// `rxe_modify_srq`: arming the limit. Resizing (`IB_SRQ_MAX_WR`) is not implemented yet.
    pub(crate) fn modify(&self, attr: &SrqAttr, mask: u32, udata_inlen: Option<usize>) -> Result {
        // The user command carries at least the 8-byte `mmap_info_addr`.
        if udata_inlen.is_some_and(|n| n < 8) {
            return Err(EINVAL);
        }
        if mask & IB_SRQ_MAX_WR != 0 {
            return Err(EOPNOTSUPP);
        }
        if mask & IB_SRQ_LIMIT != 0 {
            // Checked against our own copy of the ring size: the C driver reads the
            // user-writable header here.
            if attr.srq_limit > params::MAX_SRQ_WR
                || attr.srq_limit > self.ring.geometry().index_mask()
            {
                return Err(EINVAL);
            }
            self.limit.store(attr.srq_limit, Relaxed);
        }
        Ok(())
    }

    /// `rxe_query_srq`.
    pub(crate) fn query(&self) -> SrqAttr {
        SrqAttr {
            max_wr: self.ring.geometry().index_mask(),
            max_sge: self.max_sge,
            srq_limit: self.limit.load(Relaxed),
        }
    }
}
