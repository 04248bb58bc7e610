// SPDX-License-Identifier: GPL-2.0

//! Memory regions and memory windows (`rxe_mr.c`, `rxe_mw.c`, their verbs in `rxe_verbs.c`):
//! the control path — keys, access checks, pinned user memory. Reading and writing through
//! them, and binding windows, is the data path's.

use super::{device::RxeDev, pool::PoolIndex};
use crate::ib::device::{Device, Umem, UserMrReq};
use crate::proto::params;
use kernel::prelude::*;

/// An rxe MR.
pub(crate) struct RxeMr {
    _index: PoolIndex,
    /// The pinned user buffer of a user MR (`None` for DMA MRs).
    _umem: Option<Umem>,
}

impl RxeMr {
    fn new(dev: &Device<RxeDev>, umem: Option<Umem>) -> Result<(Self, u32)> {
        let index = dev.data().mr_pool().take()?;
        let key = index.new_key();
        Ok((
            Self {
                _index: index,
                _umem: umem,
            },
            key,
        ))
    }

    /// `rxe_get_dma_mr`: an MR over all of kernel memory (access is not validated, as in C).
    pub(crate) fn dma(dev: &Device<RxeDev>) -> Result<(Self, u32)> {
        Self::new(dev, None)
    }

    /// `rxe_reg_user_mr`.
    pub(crate) fn user(dev: &Device<RxeDev>, req: &UserMrReq) -> Result<(Self, u32)> {
        let access = req.access as u32;
        if req.has_dmah || access & !params::ACCESS_SUPPORTED_MR != 0 {
            return Err(EOPNOTSUPP);
        }
        // The C driver would make an ODP MR here; rxe-rs has no on-demand paging yet.
        if access & params::ACCESS_ON_DEMAND != 0 {
            return Err(EOPNOTSUPP);
        }
        let umem = Umem::get(dev, req)?;
        Self::new(dev, Some(umem))
    }
}

/// An rxe MW (type 1 starts valid, type 2 free until bound; binding is the data path's).
pub(crate) struct RxeMw {
    _index: PoolIndex,
}

impl RxeMw {
    /// `rxe_alloc_mw`: the MW and its rkey.
    pub(crate) fn new(dev: &Device<RxeDev>) -> Result<(Self, u32)> {
        let index = dev.data().mw_pool().take()?;
        let rkey = index.new_key();
        Ok((Self { _index: index }, rkey))
    }
}
