// SPDX-License-Identifier: GPL-2.0

//! Queue buffers shared with user space, and the mmap offsets that hand them over
//! (the C driver's `rxe_queue.c` buffer and `rxe_mmap.c`).
//!
//! A queue lives in `vmalloc_user` memory that user space maps. Everything in it may change
//! under us at any time: the kernel side reads it only through [`QueueBuf`]'s bounds-checked
//! accessors, as untrusted bytes, and the index arithmetic in `proto::queue` masks every index
//! loaded from it.

use crate::ffi;
use core::{
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// A zeroed `vmalloc_user` buffer. Pages mapped into a process stay alive through their page
/// references after the buffer is freed (`remap_vmalloc_range` inserts them one by one).
pub(crate) struct QueueBuf {
    ptr: NonNull<u8>,
    size: usize,
}

// SAFETY: the buffer is plain memory; all accesses go through atomics or byte copies.
unsafe impl Send for QueueBuf {}
// SAFETY: as above; concurrent access (including by user space) is expected and tolerated.
unsafe impl Sync for QueueBuf {}

impl QueueBuf {
    /// Allocates `size` zeroed bytes that user space may map.
    pub(crate) fn new(size: usize) -> Result<Arc<Self>> {
        // SAFETY: plain allocation; NULL on failure.
        let raw = unsafe { ffi::rxe_rs_vmalloc_user(size) };
        let ptr = NonNull::new(raw.cast::<u8>()).ok_or(ENOMEM)?;
        // On failure `Arc::new` drops the value, whose `Drop` frees the memory.
        Ok(Arc::new(Self { ptr, size }, GFP_KERNEL)?)
    }

    fn word(&self, offset: usize) -> Option<&AtomicU32> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.size {
            return None;
        }
        // SAFETY: in bounds and 4-byte aligned (vmalloc memory is page aligned); the memory
        // lives as long as `self`, and is only ever accessed atomically at word granularity
        // by us.
        Some(unsafe { AtomicU32::from_ptr(self.ptr.as_ptr().add(offset).cast()) })
    }

    /// Reads the word at `offset` with acquire ordering (an index the other side publishes);
    /// 0 when out of bounds, which callers never ask for.
    pub(crate) fn load_acquire(&self, offset: usize) -> u32 {
        self.word(offset).map_or(0, |w| w.load(Ordering::Acquire))
    }

    /// Writes the word at `offset` with release ordering (publishing an index we own).
    pub(crate) fn store_release(&self, offset: usize, value: u32) {
        if let Some(w) = self.word(offset) {
            w.store(value, Ordering::Release);
        }
    }
}

impl QueueBuf {
    /// Copies `from` (a range of `src`) to `to` in `self`, both the same length; `EINVAL` if
    /// either leaves its buffer. For carrying elements over on resize.
    pub(crate) fn copy_from(
        &self,
        src: &QueueBuf,
        from: core::ops::Range<usize>,
        to: core::ops::Range<usize>,
    ) -> Result {
        if from.len() != to.len()
            || from.end > src.size
            || to.end > self.size
            || from.start > from.end
        {
            return Err(EINVAL);
        }
        // SAFETY: both ranges are inside their buffers (checked above); the buffers are distinct
        // allocations. User space may race with the copy, which only affects the bytes copied.
        unsafe {
            core::ptr::copy_nonoverlapping(
                src.ptr.as_ptr().add(from.start),
                self.ptr.as_ptr().add(to.start),
                from.len(),
            )
        };
        Ok(())
    }
}

impl QueueBuf {
    fn check(&self, offset: usize, len: usize) -> Result {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(EINVAL),
        }
    }

    /// Copies `out.len()` bytes at `offset` into `out`: a private snapshot of bytes user space
    /// may be changing (each byte is read once). `EINVAL` outside the buffer.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> Result {
        self.check(offset, out.len())?;
        // SAFETY: in bounds (checked); `out` is a distinct kernel buffer. Concurrent writes by
        // user space only change which bytes we copy.
        unsafe {
            core::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(())
    }

    /// Copies `bytes` to `offset`. `EINVAL` outside the buffer.
    pub(crate) fn write(&self, offset: usize, bytes: &[u8]) -> Result {
        self.check(offset, bytes.len())?;
        // SAFETY: in bounds (checked); `bytes` is a distinct kernel buffer.
        unsafe {
            core::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.ptr.as_ptr().add(offset),
                bytes.len(),
            )
        };
        Ok(())
    }
}

impl Drop for QueueBuf {
    fn drop(&mut self) {
        // SAFETY: we own the allocation; no kernel reference is left.
        unsafe { ffi::rxe_rs_vfree(self.ptr.as_ptr().cast()) };
    }
}

/// The size the C driver aligns mmap offsets to (`SHMLBA` on x86 = `PAGE_SIZE`).
const PAGE_SIZE: u64 = 4096;

struct Pending {
    offset: u64,
    size: u64,
    context: usize,
    buf: Arc<QueueBuf>,
}

struct MmapState {
    next_offset: u64,
    pending: KVec<Pending>,
}

/// A device's mmap offsets: each user queue is offered once at a fresh offset, to the user
/// context that created it, until mapped or withdrawn.
#[derive(Clone)]
pub(crate) struct MmapTable(Arc<Mutex<MmapState>>);

impl MmapTable {
    pub(crate) fn new() -> Result<Self> {
        // Offsets start one page in and never repeat (`rxe_create_mmap_info`).
        let state = MmapState {
            next_offset: PAGE_SIZE,
            pending: KVec::new(),
        };
        Ok(Self(Arc::pin_init(new_mutex!(state), GFP_KERNEL)?))
    }

    /// Offers `buf` (`size` bytes, page aligned) to `context`; returns the offset to mmap.
    fn offer(&self, context: usize, buf: &Arc<QueueBuf>, size: u64) -> Result<u64> {
        let mut state = self.0.lock();
        let offset = state.next_offset;
        state.pending.push(
            Pending {
                offset,
                size,
                context,
                buf: buf.clone(),
            },
            GFP_KERNEL,
        )?;
        state.next_offset = offset.checked_add(size).ok_or(ENOMEM)?;
        Ok(offset)
    }

    fn withdraw(&self, buf: &Arc<QueueBuf>) {
        let mut state = self.0.lock();
        if let Some(i) = state.pending.iter().position(|p| Arc::ptr_eq(&p.buf, buf)) {
            drop(state.pending.remove(i));
        }
    }

    /// `rxe_mmap`: hands the buffer offered at `offset` to `context` (once), `EINVAL` if none
    /// or if more than its size is asked for.
    fn take(&self, context: usize, offset: u64, size: u64) -> Result<Arc<QueueBuf>> {
        let mut state = self.0.lock();
        let i = state
            .pending
            .iter()
            .position(|p| p.context == context && p.offset == offset)
            .ok_or(EINVAL)?;
        if size > state.pending[i].size {
            return Err(EINVAL);
        }
        state.pending.remove(i).map(|p| p.buf).map_err(|_| EINVAL)
    }

    /// `ib_device_ops.mmap`.
    ///
    /// # Safety
    ///
    /// `uc` and `vma` are the valid arguments of an mmap call from ib_uverbs.
    pub(crate) unsafe fn mmap(
        &self,
        uc: *mut ffi::ib_ucontext,
        vma: *mut ffi::vm_area_struct,
    ) -> Result {
        // SAFETY: `vma` is valid per the caller.
        let (offset, size) = unsafe { (ffi::rxe_rs_vma_offset(vma), ffi::rxe_rs_vma_size(vma)) };
        let buf = self.take(uc as usize, offset as u64, size as u64)?;
        // SAFETY: `buf` is a vmalloc_user area alive for the call; the VMA is not larger than
        // the offered size, and remap_vmalloc_range checks it against the area again.
        kernel::error::to_result(unsafe {
            ffi::rxe_rs_remap_vmalloc_range(vma, buf.ptr.as_ptr().cast())
        })
    }
}

/// A user queue's offer on the device's mmap table, withdrawn when dropped (queue destroyed
/// before user space mapped it).
pub(crate) struct MmapOffer {
    table: MmapTable,
    buf: Arc<QueueBuf>,
}

impl Drop for MmapOffer {
    fn drop(&mut self) {
        self.table.withdraw(&self.buf);
    }
}

/// `struct mminfo` of the user ABI: where and how much to mmap.
#[derive(Clone, Copy, Default)]
pub(crate) struct MmapInfo {
    /// mmap offset.
    pub(crate) offset: u64,
    /// Bytes to map.
    pub(crate) size: u32,
}

impl MmapInfo {
    /// The 16 bytes of `struct mminfo { u64 offset; u32 size; u32 pad; }` (native endian).
    pub(crate) fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.offset.to_ne_bytes());
        b[8..12].copy_from_slice(&self.size.to_ne_bytes());
        b
    }
}

/// The user-space side of a create/resize verb: its response buffer and its user context.
pub(crate) struct UserReq {
    udata: NonNull<ffi::ib_udata>,
    context: usize,
    mmaps: MmapTable,
}

impl UserReq {
    /// # Safety
    ///
    /// `udata` is valid for the duration of the verb, and `context` is the caller's ucontext
    /// (null for verbs that offer nothing to mmap).
    pub(crate) unsafe fn new(
        udata: *mut ffi::ib_udata,
        context: *mut ffi::ib_ucontext,
        mmaps: &MmapTable,
    ) -> Option<Self> {
        Some(Self {
            udata: NonNull::new(udata)?,
            context: context as usize,
            mmaps: mmaps.clone(),
        })
    }

    /// The user context, as an opaque key: a queue resized later is offered to the same one.
    pub(crate) fn context(&self) -> usize {
        self.context
    }

    /// The same request on behalf of `context` (resize verbs only know their object).
    pub(crate) fn for_context(self, context: usize) -> Self {
        Self { context, ..self }
    }

    /// Bytes user space has room for in the response.
    pub(crate) fn outlen(&self) -> usize {
        // SAFETY: `udata` is valid for the verb (type invariant).
        unsafe { (*self.udata.as_ptr()).outlen }
    }

    /// Bytes of the driver's command user space sent.
    pub(crate) fn inlen(&self) -> usize {
        // SAFETY: `udata` is valid for the verb (type invariant).
        unsafe { (*self.udata.as_ptr()).inlen }
    }

    /// Reads the first `out.len()` bytes of the driver's command (`ib_copy_from_udata`);
    /// `EFAULT` when user space sent fewer or the copy faults.
    pub(crate) fn read_cmd(&self, out: &mut [u8]) -> Result {
        if self.inlen() < out.len() {
            return Err(EFAULT);
        }
        // SAFETY: `udata` is valid; `out` is a kernel buffer of `out.len()` bytes; the copy
        // from user memory has its own checks.
        kernel::error::to_result(unsafe {
            ffi::rxe_rs_ib_copy_from_udata(out.as_mut_ptr().cast(), self.udata.as_ptr(), out.len())
        })
    }

    /// Writes `bytes` to the user address `addr` (`copy_to_user`): the SRQ resize answers
    /// through a pointer in its command, not in the response buffer (`rxe_srq_from_attr`).
    pub(crate) fn respond_at(&self, addr: u64, bytes: &[u8]) -> Result {
        // SAFETY: `bytes` is a kernel buffer; `copy_to_user` checks the user range itself
        // (`access_ok`) and faults are returned as `EFAULT`.
        kernel::error::to_result(unsafe {
            ffi::rxe_rs_copy_to_user_addr(addr, bytes.as_ptr().cast(), bytes.len())
        })
    }

    /// Writes the response (`ib_copy_to_udata`).
    pub(crate) fn respond(&self, bytes: &[u8]) -> Result {
        // SAFETY: `udata` is valid; the copy goes to user memory with its own checks.
        kernel::error::to_result(unsafe {
            ffi::rxe_rs_ib_copy_to_udata(self.udata.as_ptr(), bytes.as_ptr().cast(), bytes.len())
        })
    }

    /// Offers `buf` for mmap by this user context, `size` bytes (page aligned).
    pub(crate) fn offer(&self, buf: &Arc<QueueBuf>, size: u32) -> Result<(MmapInfo, MmapOffer)> {
        let offset = self.mmaps.offer(self.context, buf, u64::from(size))?;
        Ok((
            MmapInfo { offset, size },
            MmapOffer {
                table: self.mmaps.clone(),
                buf: buf.clone(),
            },
        ))
    }
}

/// The CPU's cache line size, the minimum queue slot (`cache_line_size()`).
pub(crate) fn cache_line_size() -> u32 {
    // SAFETY: reads a boot-time constant.
    unsafe { ffi::rxe_rs_cache_line_size() }
}
