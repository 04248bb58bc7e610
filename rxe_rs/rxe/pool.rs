// SPDX-License-Identifier: GPL-2.0

//! Index pools of the device (the C driver's `rxe_pool.c` index half): MR and MW keys are
//! `index << 8 | random byte`, with indices handed out cyclically from a fixed range.

use crate::ib::mr::random_u8;
use crate::proto::index::IndexAllocator;
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

struct Indices {
    alloc: IndexAllocator,
    bits: KVec<u64>,
}

/// A pool of indices `min..=max`, shared by the objects holding them. A spinlock, and no
/// allocation after creation: address handles are created in atomic context too.
#[derive(Clone)]
pub(crate) struct IndexPool(Arc<SpinLock<Indices>>);

impl IndexPool {
    pub(crate) fn new(min: u32, max: u32) -> Result<Self> {
        let alloc = IndexAllocator::new(min, max).ok_or(EINVAL)?;
        let mut bits = KVec::with_capacity(alloc.words(), GFP_KERNEL)?;
        bits.resize(alloc.words(), 0, GFP_KERNEL)?;
        Ok(Self(Arc::pin_init(
            new_spinlock!(Indices { alloc, bits }),
            GFP_KERNEL,
        )?))
    }

    /// Takes the next free index (`EBUSY` when the range is used up, as `xa_alloc_cyclic`).
    pub(crate) fn take(&self) -> Result<PoolIndex> {
        let index = {
            let mut guard = self.0.lock();
            let Indices { alloc, bits } = &mut *guard;
            alloc.alloc(bits).ok_or(EBUSY)?
        };
        Ok(PoolIndex {
            index,
            pool: self.clone(),
        })
    }
}

/// An index taken from a pool, given back on drop.
pub(crate) struct PoolIndex {
    index: u32,
    pool: IndexPool,
}

impl PoolIndex {
    /// The index itself (AH number, QPN…).
    pub(crate) fn get(&self) -> u32 {
        self.index
    }

    /// A fresh key on this index: `index << 8 | random byte` (`rxe_mr_init`, `rxe_alloc_mw`).
    pub(crate) fn new_key(&self) -> u32 {
        (self.index << 8) | u32::from(random_u8())
    }
}

impl Drop for PoolIndex {
    fn drop(&mut self) {
        let mut guard = self.pool.0.lock();
        let Indices { alloc, bits } = &mut *guard;
        alloc.free(bits, self.index);
    }
}
