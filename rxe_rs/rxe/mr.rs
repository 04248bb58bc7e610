// SPDX-License-Identifier: GPL-2.0

//! Memory regions (`rxe_mr.c`, the MR verbs of `rxe_verbs.c`): the control path — keys,
//! access checks, pinned user memory. Reading and writing through an MR is the data path's.

use crate::ib::device::{random_u8, Device, Umem, UserMrReq};
use crate::proto::{index::IndexAllocator, params};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

use super::device::RxeDev;

/// MR indices in use (`mr_pool`: indices `MIN_MR_INDEX..=MAX_MR_INDEX`, key = index << 8 |
/// random byte).
pub(crate) struct MrIndices {
    alloc: IndexAllocator,
    bits: KVec<u64>,
}

/// The device's MR index pool, shared by its MRs (each frees its index when dropped).
pub(crate) type MrPool = Arc<Mutex<MrIndices>>;

pub(crate) fn new_pool() -> Result<MrPool> {
    let alloc = IndexAllocator::new(params::MIN_MR_INDEX, params::MAX_MR_INDEX).ok_or(EINVAL)?;
    let mut bits = KVec::with_capacity(alloc.words(), GFP_KERNEL)?;
    bits.resize(alloc.words(), 0, GFP_KERNEL)?;
    Arc::pin_init(new_mutex!(MrIndices { alloc, bits }), GFP_KERNEL)
}

/// An rxe MR.
pub(crate) struct RxeMr {
    index: u32,
    pool: MrPool,
    /// The pinned user buffer of a user MR (`None` for DMA MRs).
    _umem: Option<Umem>,
}

impl Drop for RxeMr {
    fn drop(&mut self) {
        let mut pool = self.pool.lock();
        let MrIndices { alloc, bits } = &mut *pool;
        alloc.free(bits, self.index);
    }
}

impl RxeMr {
    /// Takes an index from `pool` (`EBUSY` when the range is used up, as `xa_alloc_cyclic`)
    /// and makes the MR's key from it.
    fn new(pool: &MrPool, umem: Option<Umem>) -> Result<(Self, u32)> {
        let index = {
            let mut guard = pool.lock();
            let MrIndices { alloc, bits } = &mut *guard;
            alloc.alloc(bits).ok_or(EBUSY)?
        };
        let key = (index << 8) | u32::from(random_u8());
        Ok((
            Self {
                index,
                pool: pool.clone(),
                _umem: umem,
            },
            key,
        ))
    }

    /// `rxe_get_dma_mr`: an MR over all of kernel memory (access is not validated, as in C).
    pub(crate) fn dma(dev: &Device<RxeDev>) -> Result<(Self, u32)> {
        Self::new(dev.data().mr_pool(), None)
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
        Self::new(dev.data().mr_pool(), Some(umem))
    }
}
