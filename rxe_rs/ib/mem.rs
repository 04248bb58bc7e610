// SPDX-License-Identifier: GPL-2.0

//! The memory behind memory regions (`rxe_mr.c`): the pinned pages of a user MR, and kernel
//! virtual addresses for DMA MRs (rxe's DMA addresses are kernel virtual addresses, as
//! `ib_uses_virt_dma`).
//!
//! Pages stay pinned as long as the [`Umem`] they come from; [`PageList`] only names them.
//! Its users never reach a page after the MR is invalidated: they check the MR's state and copy
//! inside one RCU read-side section, and deregistration waits for a grace period before it
//! unpins (see `rxe/mr.rs`).

use super::mr::Umem;
use crate::ffi;
use crate::net::skb::PayloadSink;
use core::ptr::NonNull;
use kernel::{prelude::*, sync::rcu};

const PAGE_SHIFT: u32 = 12;
const PAGE_SIZE: usize = 1 << PAGE_SHIFT;

/// The pages of a user MR, in order, and where the MR starts in the first one.
pub(crate) struct PageList {
    pages: KVec<NonNull<ffi::page>>,
    first_offset: usize,
    /// Every page is in the direct map (no highmem), so [`Self::map`] can read them in place.
    direct: bool,
}

// SAFETY: `struct page` pointers are plain names of pinned memory, usable from any context.
unsafe impl Send for PageList {}
// SAFETY: as above; copying through them is synchronised by the MR's users.
unsafe impl Sync for PageList {}

impl PageList {
    /// The pages of `umem` (`rxe_mr_fill_pages_from_sgt`).
    pub(crate) fn new(umem: &Umem) -> Result<Self> {
        // SAFETY: `umem` is a valid pinned umem.
        let n = unsafe { ffi::rxe_rs_umem_num_pages(umem.as_raw()) } as usize;
        let mut pages: KVec<NonNull<ffi::page>> = KVec::with_capacity(n, GFP_KERNEL)?;
        let mut raw: KVec<*mut ffi::page> = KVec::with_capacity(n, GFP_KERNEL)?;
        raw.resize(n, core::ptr::null_mut(), GFP_KERNEL)?;
        // SAFETY: `raw` has room for `n` pointers; the shim writes at most `n`.
        let got = unsafe { ffi::rxe_rs_umem_pages(umem.as_raw(), raw.as_mut_ptr(), n) };
        let got = usize::try_from(got).map_err(|_| EINVAL)?;
        for p in raw.iter().take(got) {
            pages.push(NonNull::new(*p).ok_or(EINVAL)?, GFP_KERNEL)?;
        }
        // SAFETY: `umem` is valid.
        let first_offset = unsafe { ffi::rxe_rs_umem_offset(umem.as_raw()) } as usize;
        // SAFETY: `umem` is valid.
        let direct = unsafe { ffi::rxe_rs_umem_in_direct_map(umem.as_raw()) };
        Ok(Self {
            pages,
            first_offset,
            direct,
        })
    }

    /// Walks `len` bytes from byte `offset` of the MR, page by page: `f(page, offset in page,
    /// range in the caller's buffer)`. `EFAULT` past the end.
    fn walk(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(NonNull<ffi::page>, usize, core::ops::Range<usize>),
    ) -> Result {
        walk_pages(
            self.first_offset,
            self.pages.len(),
            offset,
            len,
            |i, in_page, range| {
                let page = *self.pages.get(i).ok_or(EFAULT)?;
                f(page, in_page, range);
                Ok(())
            },
        )
    }

    /// Copies `buf.len()` bytes at `offset` of the MR into `buf`.
    pub(crate) fn read(&self, offset: usize, buf: &mut [u8]) -> Result {
        let ptr = buf.as_mut_ptr();
        self.walk(offset, buf.len(), |page, in_page, r| {
            // SAFETY: `page` is pinned (see the module doc); `in_page + r.len() <= PAGE_SIZE`;
            // `r` lies in `buf`.
            unsafe {
                ffi::rxe_rs_page_copy(
                    page.as_ptr(),
                    in_page as u32,
                    ptr.add(r.start).cast(),
                    r.len() as u32,
                    false,
                )
            }
        })
    }

    /// Copies `buf` to `offset` of the MR.
    pub(crate) fn write(&self, offset: usize, buf: &[u8]) -> Result {
        let ptr = buf.as_ptr();
        self.walk(offset, buf.len(), |page, in_page, r| {
            // SAFETY: as in `read`; the shim only reads `buf`.
            unsafe {
                ffi::rxe_rs_page_copy(
                    page.as_ptr(),
                    in_page as u32,
                    ptr.add(r.start).cast_mut().cast(),
                    r.len() as u32,
                    true,
                )
            }
        })
    }

    /// Whether every page is in the direct map: [`Self::map`] can read any of them.
    pub(crate) fn in_direct_map(&self) -> bool {
        self.direct
    }

    /// Hands the `len` bytes at `offset` of the MR to `push`, as slices of its pages in the
    /// direct map (one per page, in order), to be read in place while `_rcu` is held. The caller
    /// found the MR registered inside that read-side section. `EFAULT` past the end or if a page
    /// is not in the direct map; `push`'s error if it refuses a slice.
    ///
    /// The pages are user memory: user space may write them while they are read, as it may the
    /// pages of an skb fragment sent by reference, and they may be the pages the copy lands in
    /// (an RDMA WRITE within one buffer). Their reader only copies them out, landing with
    /// `memmove` where they overlap (`rxe_rs_page_copy`); a torn copy is what the C driver's
    /// copy into an skb would take.
    pub(crate) fn map<'a>(
        &'a self,
        _rcu: &'a rcu::Guard,
        offset: usize,
        len: usize,
        mut push: impl FnMut(&'a [u8]) -> Result,
    ) -> Result {
        if !self.direct {
            return Err(EFAULT);
        }
        walk_pages(
            self.first_offset,
            self.pages.len(),
            offset,
            len,
            |i, in_page, r| {
                let page = *self.pages.get(i).ok_or(EFAULT)?;
                // SAFETY: `page` is pinned (see the module doc) and in the direct map (`direct`).
                let base = unsafe { ffi::rxe_rs_page_address(page.as_ptr()) }.cast::<u8>();
                // SAFETY: `in_page < PAGE_SIZE`: inside the page's mapping.
                let start = unsafe { base.add(in_page) };
                // SAFETY: the bytes lie in the page (`in_page + r.len() <= PAGE_SIZE`), pinned
                // while `_rcu` is held (module doc), which the slice cannot outlive.
                let bytes = unsafe { core::slice::from_raw_parts(start, r.len()) };
                push(bytes)
            },
        )
    }

    /// Attaches `len` bytes at `offset` of the MR to a packet by reference (its pinned pages).
    pub(crate) fn attach(&self, offset: usize, len: usize, sink: &mut PayloadSink<'_>) -> Result {
        self.walk(offset, len, |page, in_page, r| {
            // SAFETY: `page` is pinned (see the module doc); `in_page + r.len() <= PAGE_SIZE`.
            unsafe { sink.attach_page(page, in_page, r.len()) }
        })
    }

    /// An atomic on the aligned 8 bytes at `offset`: compare-and-swap (`Some(compare)`) or
    /// fetch-and-add; the original value. `EINVAL` if misaligned.
    pub(crate) fn atomic(&self, offset: usize, compare: Option<u64>, value: u64) -> Result<u64> {
        let (i, in_page) = atomic_slot(self.first_offset, self.pages.len(), offset)?;
        let page = *self.pages.get(i).ok_or(EFAULT)?;
        let in_page = in_page as u32;
        // SAFETY: the page is pinned; the 8 aligned bytes lie inside it.
        Ok(unsafe {
            match compare {
                Some(cmp) => ffi::rxe_rs_page_atomic_cmpxchg(page.as_ptr(), in_page, cmp, value),
                None => ffi::rxe_rs_page_atomic_add(page.as_ptr(), in_page, value),
            }
        })
    }
}

/// Memory a kernel ULP reaches through a DMA MR: its addresses are kernel virtual addresses it
/// vouches for, exactly as the C driver trusts them (`rxe_mr_copy` for `IB_MR_TYPE_DMA`).
pub(crate) struct KernelMem;

impl KernelMem {
    /// Copies `buf.len()` bytes at kernel address `addr` into `buf`.
    pub(crate) fn read(addr: u64, buf: &mut [u8]) {
        // SAFETY: DMA MRs only exist for kernel PDs; their users post kernel addresses of
        // buffers they own for the duration of the work request (the verbs contract).
        unsafe { ffi::rxe_rs_kva_copy(addr, buf.as_mut_ptr().cast(), buf.len() as u32, false) }
    }

    /// Copies `buf` to kernel address `addr`.
    pub(crate) fn write(addr: u64, buf: &[u8]) {
        // SAFETY: as in `read`; the shim only reads `buf`.
        unsafe {
            ffi::rxe_rs_kva_copy(addr, buf.as_ptr().cast_mut().cast(), buf.len() as u32, true)
        }
    }
}

/// The pages of a fast-registration MR (`alloc_mr` + `map_mr_sg`): kernel virtual addresses of
/// `PAGE_SIZE` pages a kernel ULP mapped, at most as many as it allocated the MR for. Reached as
/// [`KernelMem`] is: the ULP vouches for the pages while the MR is registered.
pub(crate) struct KernelPages {
    addrs: KVec<u64>,
    max: usize,
    /// Where the mapping starts in the first page.
    first_offset: usize,
}

impl KernelPages {
    /// Room for `max` pages, allocated now: mapping never allocates.
    pub(crate) fn new(max: usize) -> Result<Self> {
        Ok(Self {
            addrs: KVec::with_capacity(max, GFP_KERNEL)?,
            max,
            first_offset: 0,
        })
    }

    /// Forgets the pages (a new mapping starts).
    pub(crate) fn clear(&mut self) {
        self.addrs.clear();
        self.first_offset = 0;
    }

    /// Appends `n` pages from kernel address `addr` (a page of `n * PAGE_SIZE` bytes, split, as
    /// C `rxe_set_page`); `ENOMEM` past the MR's capacity.
    pub(crate) fn push(&mut self, addr: u64, n: usize) -> Result {
        if self.addrs.len().checked_add(n).is_none_or(|t| t > self.max) {
            return Err(ENOMEM);
        }
        for i in 0..n {
            // Within the capacity reserved in `new`: no allocation.
            self.addrs.push(addr + (i * PAGE_SIZE) as u64, GFP_ATOMIC)?;
        }
        Ok(())
    }

    /// The mapping starts at `iova`, in its first page of `page_size` bytes (the first pages
    /// pushed are that page's, from its start).
    pub(crate) fn set_start(&mut self, iova: u64, page_size: usize) {
        self.first_offset = (iova % page_size.max(1) as u64) as usize;
    }

    /// Walks `len` bytes from byte `offset` of the mapping: `f(kernel address, range in the
    /// caller's buffer)`, never across a page. `EFAULT` past the end.
    fn walk(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(u64, core::ops::Range<usize>),
    ) -> Result {
        walk_pages(
            self.first_offset,
            self.addrs.len(),
            offset,
            len,
            |i, in_page, range| {
                let page = *self.addrs.get(i).ok_or(EFAULT)?;
                f(page + in_page as u64, range);
                Ok(())
            },
        )
    }

    /// Copies `buf.len()` bytes at `offset` of the mapping into `buf`.
    pub(crate) fn read(&self, offset: usize, buf: &mut [u8]) -> Result {
        self.walk(offset, buf.len(), |addr, r| {
            KernelMem::read(addr, &mut buf[r]);
        })
    }

    /// Copies `buf` to `offset` of the mapping.
    pub(crate) fn write(&self, offset: usize, buf: &[u8]) -> Result {
        self.walk(offset, buf.len(), |addr, r| KernelMem::write(addr, &buf[r]))
    }

    /// Attaches `len` bytes at `offset` of the mapping to a packet by reference.
    pub(crate) fn attach(&self, offset: usize, len: usize, sink: &mut PayloadSink<'_>) -> Result {
        self.walk(offset, len, |addr, r| sink.attach_kernel(addr, r.len()))
    }

    /// An atomic on the aligned 8 bytes at `offset`: compare-and-swap (`Some(compare)`) or
    /// fetch-and-add; the original value. `EINVAL` if misaligned.
    pub(crate) fn atomic(&self, offset: usize, compare: Option<u64>, value: u64) -> Result<u64> {
        let (i, in_page) = atomic_slot(self.first_offset, self.addrs.len(), offset)?;
        let addr = *self.addrs.get(i).ok_or(EFAULT)? + in_page as u64;
        // SAFETY: the ULP vouches for its mapped pages while the MR is registered (as for
        // `KernelMem`); the 8 aligned bytes lie inside one page.
        Ok(unsafe { ffi::rxe_rs_kva_atomic(addr, compare.is_some(), compare.unwrap_or(0), value) })
    }
}

/// Walks `len` bytes from byte `offset` of a buffer of `npages` pages that starts
/// `first_offset` bytes into its first page: `f(page index, offset in page, range in the
/// caller's buffer)`, never across a page. `EFAULT` past the end.
fn walk_pages(
    first_offset: usize,
    npages: usize,
    offset: usize,
    len: usize,
    mut f: impl FnMut(usize, usize, core::ops::Range<usize>) -> Result,
) -> Result {
    let end = offset.checked_add(len).ok_or(EFAULT)?;
    if end > span(first_offset, npages) {
        return Err(EFAULT);
    }
    let mut pos = offset + first_offset;
    let mut done = 0;
    while done < len {
        let in_page = pos % PAGE_SIZE;
        let n = (PAGE_SIZE - in_page).min(len - done);
        f(pos / PAGE_SIZE, in_page, done..done + n)?;
        pos += n;
        done += n;
    }
    Ok(())
}

/// Where the aligned 8 bytes at byte `offset` of such a buffer lie: (page index, offset in
/// page). `EINVAL` if misaligned, `EFAULT` past the end.
fn atomic_slot(first_offset: usize, npages: usize, offset: usize) -> Result<(usize, usize)> {
    let pos = offset.checked_add(first_offset).ok_or(EFAULT)?;
    if pos % 8 != 0 {
        return Err(EINVAL);
    }
    if offset.checked_add(8).ok_or(EFAULT)? > span(first_offset, npages) {
        return Err(EFAULT);
    }
    Ok((pos / PAGE_SIZE, pos % PAGE_SIZE))
}

/// Bytes `npages` pages hold from a start `first_offset` bytes into the first.
fn span(first_offset: usize, npages: usize) -> usize {
    npages
        .saturating_mul(PAGE_SIZE)
        .saturating_sub(first_offset)
}
