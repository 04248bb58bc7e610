// SPDX-License-Identifier: GPL-2.0

//! On-demand paging memory (`struct ib_umem_odp`, C's `rxe_odp.c`): user memory registered
//! without pinning, its pages mapped when an access faults them in and unmapped when the mm
//! invalidates them.
//!
//! The data path runs in softirq and may neither sleep nor take the umem's mutex, so it sees
//! the memory through a page table of the C glue (`ffi/odp.c`) under a spinlock: a copy either
//! finds every page it needs mapped and copies, or copies nothing and says so
//! ([`OdpMiss::Absent`]); the caller then faults the range in from process context
//! ([`OdpPages::fault`]) and tries again.
//!
//! [`OdpUmem`] owns the registration and releases it (which sleeps) on drop, in
//! `dereg_mr`; the [`OdpPages`] handles the data path and fault work keep only reach the page
//! table, which outlives them, and find every page unmapped once the umem is released.

use super::{
    device::{Device, DeviceOps},
    mr::UserMrReq,
};
use crate::ffi;
use core::ptr::NonNull;
use kernel::prelude::*;

/// Why an ODP copy did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OdpMiss {
    /// Pages of the range are not mapped (or not writable, for a write): fault them in.
    Absent,
    /// The range is not inside the umem, or misaligned for an atomic.
    Range,
}

/// A reference to an ODP umem's page table (the C `struct rxe_rs_odp`).
pub(crate) struct OdpPages(NonNull<ffi::rxe_rs_odp>);

// SAFETY: the page table is shared by design: every access takes its spinlock or rwsem.
unsafe impl Send for OdpPages {}
// SAFETY: as above.
unsafe impl Sync for OdpPages {}

impl Clone for OdpPages {
    fn clone(&self) -> Self {
        // SAFETY: we hold a reference, so the struct is alive.
        unsafe { ffi::rxe_rs_odp_get_ref(self.0.as_ptr()) };
        Self(self.0)
    }
}

impl Drop for OdpPages {
    fn drop(&mut self) {
        // SAFETY: our reference; the last one frees the struct, whose umem its owner
        // ([`OdpUmem`]) released already (never sleeps).
        unsafe { ffi::rxe_rs_odp_put(self.0.as_ptr()) };
    }
}

fn miss(ret: kernel::ffi::c_int) -> Result<(), OdpMiss> {
    match ret {
        0 => Ok(()),
        r if r == EAGAIN.to_errno() => Err(OdpMiss::Absent),
        _ => Err(OdpMiss::Range),
    }
}

impl OdpPages {
    /// Copies `buf.len()` bytes at user address `va` into `buf`, all or nothing.
    pub(crate) fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), OdpMiss> {
        let len = u32::try_from(buf.len()).map_err(|_| OdpMiss::Range)?;
        // SAFETY: the struct is alive (our reference); `buf` is valid for `len` bytes; the glue
        // copies only from pages mapped under its lock.
        miss(unsafe {
            ffi::rxe_rs_odp_copy(self.0.as_ptr(), va, buf.as_mut_ptr().cast(), len, false)
        })
    }

    /// Copies `buf` to user address `va`, all or nothing.
    pub(crate) fn write(&self, va: u64, buf: &[u8]) -> Result<(), OdpMiss> {
        let len = u32::try_from(buf.len()).map_err(|_| OdpMiss::Range)?;
        // SAFETY: as in `read`; the glue only reads `buf`.
        miss(unsafe {
            ffi::rxe_rs_odp_copy(
                self.0.as_ptr(),
                va,
                buf.as_ptr().cast_mut().cast(),
                len,
                true,
            )
        })
    }

    /// An atomic on the aligned 8 bytes at user address `va`: compare-and-swap
    /// (`Some(compare)`) or fetch-and-add; the original value.
    pub(crate) fn atomic(&self, va: u64, compare: Option<u64>, value: u64) -> Result<u64, OdpMiss> {
        let mut orig = 0u64;
        // SAFETY: the struct is alive; `orig` is valid for writing.
        miss(unsafe {
            ffi::rxe_rs_odp_atomic(
                self.0.as_ptr(),
                va,
                compare.is_some(),
                compare.unwrap_or(0),
                value,
                &mut orig,
            )
        })?;
        Ok(orig)
    }

    /// Maps `len` bytes at user address `va` (for writing if `write`), faulting missing pages
    /// in if `fault`, else taking only what is mapped already (a snapshot). Sleeps: process
    /// context only. `EFAULT` outside the umem or once it is released, `EPERM` for a write to
    /// read-only memory, the fault's error else.
    pub(crate) fn fault(&self, va: u64, len: u64, write: bool, fault: bool) -> Result {
        // SAFETY: the struct is alive; the glue checks the range and the umem under its rwsem.
        let ret = unsafe { ffi::rxe_rs_odp_fault(self.0.as_ptr(), va, len, write, fault) };
        kernel::error::to_result(ret)
    }

    /// Whether the memory was registered writable.
    pub(crate) fn writable(&self) -> bool {
        // SAFETY: the struct is alive.
        unsafe { ffi::rxe_rs_odp_writable(self.0.as_ptr()) }
    }
}

/// An ODP registration of user memory (`ib_umem_odp_get`), released on drop.
pub(crate) struct OdpUmem {
    pages: OdpPages,
}

impl OdpUmem {
    /// Registers `req`'s user range for on-demand paging, with what is mapped of it already.
    pub(crate) fn get<T: DeviceOps>(dev: &Device<T>, req: &UserMrReq) -> Result<Self> {
        // SAFETY: `dev` is valid; `ib_umem_odp_get` checks the range against the caller's mm.
        let odp = kernel::error::from_err_ptr(unsafe {
            ffi::rxe_rs_odp_get(dev.as_raw(), req.start, req.length, req.access)
        })?;
        let odp = NonNull::new(odp).ok_or(EINVAL)?;
        Ok(Self {
            pages: OdpPages(odp),
        })
    }

    /// The page table, for the data path.
    pub(crate) fn pages(&self) -> &OdpPages {
        &self.pages
    }
}

impl Drop for OdpUmem {
    fn drop(&mut self) {
        // SAFETY: the struct is alive (`self.pages`); the owner releases the umem once, in
        // process context (deregistration, or a failed registration). Faults in progress finish
        // first (the rwsem), later ones and every copy find nothing mapped.
        unsafe { ffi::rxe_rs_odp_release(self.pages.0.as_ptr()) };
    }
}
