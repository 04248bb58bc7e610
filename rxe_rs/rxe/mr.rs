// SPDX-License-Identifier: GPL-2.0

//! Memory regions and memory windows (`rxe_mr.c`, `rxe_mw.c`, their verbs in `rxe_verbs.c`).
//!
//! An MR's shared part ([`MrShared`]) sits in the device's key table while the MR is
//! registered; the data path finds it there by key and reads or writes through it. Deregistration
//! takes it out of the table, marks it dead and waits for an RCU grace period before the pages are
//! unpinned: every data-path access checks liveness and copies inside one RCU read-side section
//! ([`kernel::sync::rcu::Guard`]), so none can reach an unpinned page. (The C driver waits for
//! the MR's reference count instead.)

use super::{device::RxeDev, pool::PoolIndex};
use crate::ib::{
    device::{Device, PdId, Umem, UserMrReq},
    mem::{KernelMem, PageList},
};
use crate::proto::params;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{prelude::*, sync::rcu, sync::Arc};

/// `IB_ACCESS_*` bits the data path checks.
pub(crate) mod access {
    pub(crate) const LOCAL_WRITE: u32 = 1;
    pub(crate) const REMOTE_WRITE: u32 = 2;
    pub(crate) const REMOTE_READ: u32 = 4;
    pub(crate) const REMOTE_ATOMIC: u32 = 8;
    pub(crate) const FLUSH_GLOBAL: u32 = 1 << 8;
    pub(crate) const FLUSH_PERSISTENT: u32 = 1 << 9;
}

/// Where an MR's bytes are.
enum MrMem {
    /// A DMA MR: kernel virtual addresses, any.
    Kernel,
    /// A user MR: its pinned pages, from `iova` for `length` bytes.
    User {
        pages: PageList,
        iova: u64,
        length: u64,
    },
}

/// What the data path knows of an MR.
pub(crate) struct MrShared {
    key: u32,
    pd: PdId,
    access: u32,
    mem: MrMem,
    alive: AtomicBool,
}

/// Why an MR access was refused (all are protection errors to the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrError {
    /// Dead, wrong key, PD or access rights.
    Key,
    /// Outside the region.
    Range,
}

impl MrShared {
    /// `lookup_mr` + `mr_check_range`: usable by `pd` with `need` rights for `len` bytes at `iova`.
    pub(crate) fn check(
        &self,
        key: u32,
        pd: PdId,
        need: u32,
        iova: u64,
        len: usize,
    ) -> Result<(), MrError> {
        if !self.alive.load(Ordering::Acquire) || self.key != key || self.pd != pd {
            return Err(MrError::Key);
        }
        if need & !self.access != 0 {
            return Err(MrError::Key);
        }
        match &self.mem {
            MrMem::Kernel => Ok(()),
            MrMem::User {
                iova: start,
                length,
                ..
            } => {
                let end = iova.checked_add(len as u64).ok_or(MrError::Range)?;
                if iova < *start || end > start + length {
                    Err(MrError::Range)
                } else {
                    Ok(())
                }
            }
        }
    }

    fn offset(&self, iova: u64) -> Result<Option<(&PageList, usize)>, MrError> {
        match &self.mem {
            MrMem::Kernel => Ok(None),
            MrMem::User {
                pages, iova: start, ..
            } => {
                let off = iova.checked_sub(*start).ok_or(MrError::Range)?;
                Ok(Some((
                    pages,
                    usize::try_from(off).map_err(|_| MrError::Range)?,
                )))
            }
        }
    }

    /// Copies from `iova` into `buf` (`rxe_mr_copy`, `RXE_FROM_MR_OBJ`). The caller checked
    /// the range; the RCU guard keeps the pages pinned for the copy.
    pub(crate) fn read(&self, _rcu: &rcu::Guard, iova: u64, buf: &mut [u8]) -> Result<(), MrError> {
        if !self.alive.load(Ordering::Acquire) {
            return Err(MrError::Key);
        }
        match self.offset(iova)? {
            None => {
                KernelMem::read(iova, buf);
                Ok(())
            }
            Some((pages, off)) => pages.read(off, buf).map_err(|_| MrError::Range),
        }
    }

    /// Copies `buf` to `iova` (`RXE_TO_MR_OBJ`).
    pub(crate) fn write(&self, _rcu: &rcu::Guard, iova: u64, buf: &[u8]) -> Result<(), MrError> {
        if !self.alive.load(Ordering::Acquire) {
            return Err(MrError::Key);
        }
        match self.offset(iova)? {
            None => {
                KernelMem::write(iova, buf);
                Ok(())
            }
            Some((pages, off)) => pages.write(off, buf).map_err(|_| MrError::Range),
        }
    }

    /// An 8-byte atomic at `iova` (`rxe_mr_do_atomic_op`): compare-and-swap or fetch-and-add;
    /// the original value. Kernel MRs are not supported targets here (`Range`).
    pub(crate) fn atomic(
        &self,
        _rcu: &rcu::Guard,
        iova: u64,
        compare: Option<u64>,
        value: u64,
    ) -> Result<u64, MrError> {
        if !self.alive.load(Ordering::Acquire) {
            return Err(MrError::Key);
        }
        match self.offset(iova)? {
            None => Err(MrError::Range),
            Some((pages, off)) => pages
                .atomic(off, compare, value)
                .map_err(|_| MrError::Range),
        }
    }
}

/// An rxe MR (ib_core's object): the pinned memory, and the shared part in the key table.
pub(crate) struct RxeMr {
    index: PoolIndex,
    shared: Arc<MrShared>,
    /// The pinned user buffer of a user MR (`None` for DMA MRs); unpinned after the grace
    /// period of `deregister`.
    umem: Option<Umem>,
}

impl RxeMr {
    fn new(
        dev: &Device<RxeDev>,
        pd: PdId,
        access: u32,
        umem: Option<Umem>,
        iova: u64,
        length: u64,
    ) -> Result<(Self, u32)> {
        let index = dev.data().mr_pool().take()?;
        let key = index.new_key();
        let mem = match &umem {
            None => MrMem::Kernel,
            Some(u) => MrMem::User {
                pages: PageList::new(u)?,
                iova,
                length,
            },
        };
        let shared = Arc::new(
            MrShared {
                key,
                pd,
                access,
                mem,
                alive: AtomicBool::new(true),
            },
            GFP_KERNEL,
        )?;
        dev.data().mrs_table().insert(index.get(), shared.clone())?;
        Ok((
            Self {
                index,
                shared,
                umem,
            },
            key,
        ))
    }

    /// `rxe_get_dma_mr`: an MR over all of kernel memory (access is not validated, as in C).
    pub(crate) fn dma(dev: &Device<RxeDev>, pd: PdId, access: i32) -> Result<(Self, u32)> {
        Self::new(dev, pd, access as u32, None, 0, 0)
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
        Self::new(dev, req.pd, access, Some(umem), req.iova, req.length)
    }

    /// `rxe_dereg_mr`: out of the table, dead, and after a grace period unpinned (on drop).
    pub(crate) fn deregister(&self, dev: &Device<RxeDev>) {
        drop(dev.data().mrs_table().remove(self.index.get()));
        self.shared.alive.store(false, Ordering::Release);
        if self.umem.is_some() {
            rcu::synchronize_rcu();
        }
    }
}

/// An rxe MW (type 1 starts valid, type 2 free until bound; binding is not implemented).
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
