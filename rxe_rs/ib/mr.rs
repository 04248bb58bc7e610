// SPDX-License-Identifier: GPL-2.0

//! Memory regions and memory windows: the verbs a driver implements for them ([`MrOps`]), their
//! `ib_device_ops` callbacks, and pinned user memory ([`Umem`]).
//!
//! ib_core has no `size_ib_mr`: the driver allocates MRs itself, an [`Object`] in a `KBox`
//! ([`MrObject`]), freed by `dereg_mr`.

use super::{
    device::{Device, DeviceOps, PdId},
    object::Object,
};
use crate::ffi;
use kernel::{error::from_result, prelude::*, types::Opaque};

/// A scatter/gather element of a kernel work request (`struct ib_sge`): bytes of an MR.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    /// Start address, in the address space of the MR named by `lkey`.
    pub(crate) addr: u64,
    /// Bytes.
    pub(crate) length: u32,
    /// Local key of the MR.
    pub(crate) lkey: u32,
}

/// The arguments of `reg_user_mr`.
pub(crate) struct UserMrReq {
    /// The protection domain.
    pub(crate) pd: PdId,
    /// The address the MR is known by in work requests (`virt_addr`).
    pub(crate) iova: u64,
    /// Start of the user buffer.
    pub(crate) start: u64,
    /// Its length.
    pub(crate) length: u64,
    /// `IB_ACCESS_*`.
    pub(crate) access: i32,
    /// A DMA handle was given (`ib_dmah`): not supported by a soft device.
    pub(crate) has_dmah: bool,
}

/// The arguments of `rereg_user_mr`.
pub(crate) struct ReregMrReq {
    /// `IB_MR_REREG_*` (the C `int`, as bits).
    pub(crate) flags: u32,
    /// The PD to move to (with `IB_MR_REREG_PD`; else the MR's own).
    pub(crate) pd: PdId,
    /// The new `IB_ACCESS_*` (with `IB_MR_REREG_ACCESS`).
    pub(crate) access: i32,
}

/// One range of `advise_mr` (`struct ib_sge`).
#[derive(Clone, Copy)]
pub(crate) struct AdviseSge {
    pub(crate) addr: u64,
    pub(crate) length: u32,
    pub(crate) lkey: u32,
}

/// The memory region and memory window verbs of a driver. Methods run in process context
/// but the `map_mr_*` steps, which run in the context of the ULP's `ib_map_mr_sg`.
#[vtable]
pub(crate) trait MrOps: DeviceOps {
    /// Per memory region data.
    type Mr: Send + Sync;
    /// Per memory window data.
    type Mw: Send + Sync;

    /// `get_dma_mr` (kernel users): the data and its key (lkey = rkey).
    fn get_dma_mr(dev: &Device<Self>, pd: PdId, access: i32) -> Result<(Self::Mr, u32)>;
    /// `reg_user_mr`: the data and its key (lkey = rkey).
    fn reg_user_mr(dev: &Device<Self>, req: &UserMrReq) -> Result<(Self::Mr, u32)>;
    /// `alloc_mr` (kernel ULPs) of type `mr_type` (`IB_MR_TYPE_*`) for `max_num_sg` pages: the
    /// data and its key (lkey = rkey).
    fn alloc_mr(
        dev: &Device<Self>,
        pd: PdId,
        mr_type: u32,
        max_num_sg: u32,
    ) -> Result<(Self::Mr, u32)>;
    /// `map_mr_sg` starts: the MR's page list is emptied, for pages of `page_size` bytes.
    fn map_mr_sg_start(mr: &Self::Mr, page_size: u32) -> Result;
    /// `map_mr_sg`: the next page (`ib_sg_to_pages`' `set_page`), at kernel address `addr`.
    fn map_mr_page(mr: &Self::Mr, addr: u64) -> Result;
    /// `map_mr_sg` is done: the mapped pages hold `length` bytes from `iova`.
    fn map_mr_sg_end(mr: &Self::Mr, iova: u64, length: u64);
    /// `rereg_user_mr` (optional), in place only (the C driver's PD and access changes): the MR
    /// stays the same object (the callback returns NULL to ib_uverbs, which moves `ib_mr.pd`
    /// and the PDs' use counts itself).
    fn rereg_user_mr(_dev: &Device<Self>, _mr: &Self::Mr, _req: &ReregMrReq) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `advise_mr` (optional): `IB_UVERBS_ADVISE_MR_ADVICE_*` `advice` for the ranges
    /// `sges` of MRs of `pd`, with `IB_UVERBS_ADVISE_MR_FLAG_*` `flags`.
    fn advise_mr(
        _dev: &Device<Self>,
        _pd: PdId,
        _advice: u32,
        _flags: u32,
        _sges: &[AdviseSge],
    ) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `dereg_mr`; on success the data is dropped after it.
    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result;

    /// `alloc_mw` of a window of type `mw_type` (`IB_MW_TYPE_*`) in `pd` (optional, with
    /// `dealloc_mw`): the data and the window's rkey.
    fn alloc_mw(_dev: &Device<Self>, _pd: PdId, _mw_type: u32) -> Result<(Self::Mw, u32)> {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `dealloc_mw`; the data is dropped after it.
    fn dealloc_mw(_dev: &Device<Self>, _mw: &Self::Mw) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// An MR: allocated by the driver, an `Object` in a `KBox`.
pub(super) type MrObject<T> = Object<ffi::ib_mr, <T as MrOps>::Mr>;
type MwObject<T> = Object<ffi::ib_mw, <T as MrOps>::Mw>;

/// Pinned user memory (`struct ib_umem`), released on drop.
pub(crate) struct Umem(core::ptr::NonNull<ffi::ib_umem>);

// SAFETY: an umem is a plain description of pinned pages, released from any context that may
// sleep.
unsafe impl Send for Umem {}
// SAFETY: shared references only read it.
unsafe impl Sync for Umem {}

impl Umem {
    /// Pins `req`'s user buffer (`ib_umem_get_va`): `EFAULT` and friends for bad ranges.
    pub(crate) fn get<T: DeviceOps>(dev: &Device<T>, req: &UserMrReq) -> Result<Self> {
        // SAFETY: `dev` is valid; ib_umem_get_va checks the range against the caller's mm.
        let umem = kernel::error::from_err_ptr(unsafe {
            ffi::rxe_rs_ib_umem_get(dev.as_raw(), req.start, req.length, req.access)
        })?;
        core::ptr::NonNull::new(umem).map(Self).ok_or(EINVAL)
    }

    /// `ib_umem_check_rereg`: can the pinned memory stay as it is under `flags` and `access`
    /// (`EOPNOTSUPP` for dma-buf memory, `EACCES` for write rights on memory pinned read-only).
    pub(crate) fn check_rereg(&self, flags: u32, access: i32) -> Result {
        // SAFETY: we own the umem; the function only reads it.
        let ret = unsafe { ffi::ib_umem_check_rereg(self.0.as_ptr(), flags as i32, access) };
        kernel::error::to_result(ret)
    }

    /// Whether every pinned page is persistent memory (C's `is_pmem_page`): only such memory
    /// may be registered for persistent FLUSH.
    pub(crate) fn is_pmem(&self) -> bool {
        // SAFETY: we own the umem; the shim only reads its page list and the resource tree.
        unsafe { ffi::rxe_rs_umem_is_pmem(self.0.as_ptr()) }
    }

    pub(super) fn as_raw(&self) -> *mut ffi::ib_umem {
        self.0.as_ptr()
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: we own the umem.
        unsafe { ffi::ib_umem_release(self.0.as_ptr()) };
    }
}

/// A random byte, the variable part of MR and MW keys.
pub(crate) fn random_u8() -> u8 {
    // SAFETY: no preconditions.
    unsafe { ffi::rxe_rs_get_random_u8() }
}

/// A new `ib_mr` for ib_core, carrying the driver's data and key.
fn new_mr<T: MrOps>((data, key): (T::Mr, u32)) -> Result<*mut ffi::ib_mr> {
    let obj = KBox::new(
        MrObject::<T> {
            raw: Opaque::uninit(),
            data,
        },
        GFP_KERNEL,
    )?;
    let raw = KBox::into_raw(obj).cast::<ffi::ib_mr>();
    // SAFETY: `raw` is our fresh allocation; ib_core fills in the rest of `ib_mr` after we
    // return, we give it a zeroed one with the keys set.
    unsafe {
        raw.write(ffi::ib_mr {
            lkey: key,
            rkey: key,
            page_size: 4096,
            ..Default::default()
        });
    }
    Ok(raw)
}

fn mr_result(r: Result<*mut ffi::ib_mr>) -> *mut ffi::ib_mr {
    match r {
        Ok(mr) => mr,
        Err(e) => e.to_ptr(),
    }
}

// The callbacks below are only installed in the ops table of a `Device<T>` (`register`):
// ib_core calls them as their op, with every pointer argument valid for the call and naming
// objects of this device, which outlives them.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn get_dma_mr<T: MrOps>(
    pd: *mut ffi::ib_pd,
    access: kernel::ffi::c_int,
) -> *mut ffi::ib_mr {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::of(pd) };
    mr_result(T::get_dma_mr(dev, PdId(pd as usize), access).and_then(new_mr::<T>))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn reg_user_mr<T: MrOps>(
    pd: *mut ffi::ib_pd,
    start: u64,
    length: u64,
    virt_addr: u64,
    access: kernel::ffi::c_int,
    dmah: *mut ffi::ib_dmah,
    _udata: *mut ffi::ib_udata,
) -> *mut ffi::ib_mr {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::of(pd) };
    let req = UserMrReq {
        pd: PdId(pd as usize),
        start,
        length,
        iova: virt_addr,
        access,
        has_dmah: !dmah.is_null(),
    };
    mr_result(T::reg_user_mr(dev, &req).and_then(new_mr::<T>))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn alloc_mr<T: MrOps>(
    pd: *mut ffi::ib_pd,
    mr_type: ffi::ib_mr_type,
    max_num_sg: u32,
) -> *mut ffi::ib_mr {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::of(pd) };
    mr_result(T::alloc_mr(dev, PdId(pd as usize), mr_type, max_num_sg).and_then(new_mr::<T>))
}

/// `ib_sg_to_pages`' callback: one page of the MR being mapped.
///
/// # Safety
///
/// `mr` is the MR `map_mr_sg` is mapping, one of ours made by `alloc_mr`.
unsafe extern "C" fn set_page<T: MrOps>(mr: *mut ffi::ib_mr, addr: u64) -> kernel::ffi::c_int {
    // SAFETY: `mr` is a live MR of ours (the caller's contract).
    let data = unsafe { MrObject::<T>::data(mr) };
    from_result(|| T::map_mr_page(data, addr).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn map_mr_sg<T: MrOps>(
    mr: *mut ffi::ib_mr,
    sgl: *mut ffi::scatterlist,
    sg_nents: kernel::ffi::c_int,
    sg_offset: *mut kernel::ffi::c_uint,
) -> kernel::ffi::c_int {
    // SAFETY: `mr` came from `alloc_mr`; ib_core's `ib_map_mr_sg` set `page_size` before
    // calling us and the ULP does not use the MR concurrently.
    let (data, page_size) = unsafe { (MrObject::<T>::data(mr), (*mr).page_size) };
    if let Err(e) = T::map_mr_sg_start(data, page_size) {
        return e.to_errno();
    }
    // SAFETY: `sgl`, `sg_nents` and `sg_offset` are the ULP's DMA mapped scatterlist, as
    // `ib_sg_to_pages` expects them; `set_page::<T>` is called with this MR.
    let n = unsafe { ffi::ib_sg_to_pages(mr, sgl, sg_nents, sg_offset, Some(set_page::<T>)) };
    // SAFETY: `ib_sg_to_pages` set `iova` and `length`; nothing else writes them.
    let (iova, length) = unsafe { ((*mr).iova, (*mr).length) };
    T::map_mr_sg_end(data, iova, length);
    n
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn rereg_user_mr<T: MrOps>(
    mr: *mut ffi::ib_mr,
    flags: kernel::ffi::c_int,
    _start: u64,
    _length: u64,
    _virt_addr: u64,
    access: kernel::ffi::c_int,
    pd: *mut ffi::ib_pd,
    _udata: *mut ffi::ib_udata,
) -> *mut ffi::ib_mr {
    // SAFETY: ib_uverbs passes one of our MRs (from `new_mr`) under its uobject's write lock
    // (no dereg can run), and a PD of the same device: the new one with `IB_MR_REREG_PD`, else
    // the MR's own.
    let (dev, data) = unsafe { (Device::<T>::of(mr), MrObject::<T>::data(mr)) };
    let req = ReregMrReq {
        flags: flags as u32,
        pd: PdId(pd as usize),
        access,
    };
    // NULL: the MR was changed in place (translation changes are refused, so no new MR is
    // ever made).
    match T::rereg_user_mr(dev, data, &req) {
        Ok(()) => core::ptr::null_mut(),
        Err(e) => e.to_ptr(),
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn dereg_mr<T: MrOps>(
    mr: *mut ffi::ib_mr,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `mr` came from `new_mr` (a `KBox<MrObject<T>>`), so its data is initialised. The
    // data path reaches an MR through the key table (`Arc<MrShared>`, under RCU), never through
    // this box, and `T::dereg_mr` waits a grace period after taking it out of the table.
    let (dev, data) = unsafe { (Device::<T>::of(mr), MrObject::<T>::data(mr)) };
    from_result(|| {
        T::dereg_mr(dev, data)?;
        // SAFETY: on success this is the MR's last use; the box is ours (`new_mr`).
        drop(unsafe { KBox::from_raw(mr.cast::<MrObject<T>>()) });
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn alloc_mw<T: MrOps>(
    mw: *mut ffi::ib_mw,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_mw` zeroed bytes on one of our devices, with its PD
    // and type set.
    let (dev, pd, mw_type) = unsafe { (Device::<T>::of(mw), (*mw).pd, (*mw).type_) };
    from_result(|| {
        let (data, rkey) = T::alloc_mw(dev, PdId(pd as usize), mw_type)?;
        // SAFETY: the data slot of the new MW is unwritten until now; ib_core reads `rkey`
        // only after we return.
        unsafe {
            MwObject::<T>::init(mw, data);
            (*mw).rkey = rkey;
        }
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn dealloc_mw<T: MrOps>(mw: *mut ffi::ib_mw) -> kernel::ffi::c_int {
    // SAFETY: `alloc_mw` succeeded for this MW, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(mw), MwObject::<T>::data(mw)) };
    T::dealloc_mw(dev, data);
    // SAFETY: this is the last call for the MW.
    unsafe { MwObject::<T>::drop_data(mw) };
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn advise_mr<T: MrOps>(
    pd: *mut ffi::ib_pd,
    advice: ffi::ib_uverbs_advise_mr_advice,
    flags: u32,
    sg_list: *mut ffi::ib_sge,
    num_sge: u32,
    _attrs: *mut ffi::uverbs_attr_bundle,
) -> kernel::ffi::c_int {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::of(pd) };
    let raw: &[ffi::ib_sge] = if num_sge == 0 || sg_list.is_null() {
        &[]
    } else {
        // SAFETY: ib_uverbs passes `num_sge` entries it copied in, valid for the call.
        unsafe { core::slice::from_raw_parts(sg_list, num_sge as usize) }
    };
    from_result(|| {
        let mut sges = KVec::with_capacity(raw.len(), GFP_KERNEL)?;
        for s in raw {
            sges.push(
                AdviseSge {
                    addr: s.addr,
                    length: s.length,
                    lkey: s.lkey,
                },
                GFP_KERNEL,
            )?;
        }
        T::advise_mr(dev, PdId(pd as usize), advice, flags, &sges).map(|()| 0)
    })
}
