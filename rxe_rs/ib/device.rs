// SPDX-License-Identifier: GPL-2.0

//! An `ib_device` owned by ib_core with the driver's data in the same allocation, and the
//! `ib_device_ops` trampolines that reach the driver's [`DeviceOps`].
//!
//! ib_core allocates the device (`_ib_alloc_device`) and frees it after the last reference is
//! gone; it calls `dealloc_driver` just before, which is where the driver's data is dropped.
//! Objects ib_core allocates for us (ucontext, PD) embed their `ib_*` struct first, with the
//! driver's part after it ([`Object`]); their sizes go into `ib_device_ops.size_ib_*`.

use super::handles::{CqHandle, QpHandle, SrqHandle};
use super::qp::{KernelSendWr, QpAttrs, QpInit, QpLinks};
use super::{
    netdev::{NetDev, NetDevRef},
    uqueue::{MmapTable, UserReq},
};
use crate::ffi;
use crate::proto::{
    av::GlobalRoute,
    mad,
    qp_state::QpCap,
    wqe::{Sge, UverbsWc},
};
use core::{marker::PhantomData, mem::size_of, ptr::addr_of_mut};
use kernel::{error::from_result, prelude::*, types::Opaque};

/// `struct ib_device_attr`: what `ibv_query_device` reports.
pub(crate) type DeviceAttr = ffi::ib_device_attr;
/// `struct ib_port_attr`: what `ibv_query_port` reports.
pub(crate) type PortAttr = ffi::ib_port_attr;
/// `struct ib_port_immutable`.
pub(crate) type PortImmutable = ffi::ib_port_immutable;
/// `struct ib_device_modify`.
pub(crate) type DeviceModify = ffi::ib_device_modify;
/// `struct ib_port_modify`.
pub(crate) type PortModify = ffi::ib_port_modify;

/// Port events ib_core forwards to its clients (`ib_dispatch_event`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PortEvent {
    /// `IB_EVENT_PORT_ACTIVE`.
    Active,
    /// `IB_EVENT_PORT_ERR`.
    Err,
}

/// What an RDMA driver implements for its devices. Methods run in process context.
pub(crate) trait DeviceOps: Send + Sync + Sized + 'static {
    /// Per user context data (`ibv_open_device`).
    type Ucontext: Send + Sync;
    /// Per protection domain data.
    type Pd: Send + Sync;
    /// Per completion queue data.
    type Cq: Send + Sync;
    /// Per memory region data.
    type Mr: Send + Sync;
    /// Per memory window data.
    type Mw: Send + Sync;
    /// Per address handle data.
    type Ah: Send + Sync;

    /// `ib_device_ops.driver_id`.
    const DRIVER_ID: ffi::rdma_driver_id;
    /// `ib_device_ops.uverbs_abi_ver`: the ABI the user-space provider checks.
    const UVERBS_ABI_VERSION: u32;

    /// `query_device`.
    fn query_device(dev: &Device<Self>, attr: &mut DeviceAttr) -> Result;
    /// `query_port`.
    fn query_port(dev: &Device<Self>, port: u32, attr: &mut PortAttr) -> Result;
    /// `query_pkey`.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;
    /// `modify_device`.
    fn modify_device(dev: &Device<Self>, mask: i32, attr: &DeviceModify) -> Result;
    /// `modify_port`.
    fn modify_port(dev: &Device<Self>, port: u32, mask: i32, attr: &PortModify) -> Result;
    /// `get_port_immutable`.
    fn port_immutable(dev: &Device<Self>, port: u32, imm: &mut PortImmutable) -> Result;
    /// `get_link_layer`: true for Ethernet.
    fn link_layer_is_ethernet(dev: &Device<Self>, port: u32) -> bool;
    /// `enable_driver`: the device is registered and visible.
    fn enable(dev: &Device<Self>) -> Result;

    /// Names of the hardware counters (`rdma statistic show`), in index order.
    const COUNTER_NAMES: &'static [&'static CStr];
    /// Current values of the counters, `values.len() == COUNTER_NAMES.len()`.
    fn read_counters(dev: &Device<Self>, values: &mut [u64]);

    /// `alloc_ucontext`.
    fn alloc_ucontext(dev: &Device<Self>) -> Result<Self::Ucontext>;
    /// `dealloc_ucontext`; the data is dropped after it.
    fn dealloc_ucontext(dev: &Device<Self>, uc: &Self::Ucontext);
    /// `alloc_pd`.
    fn alloc_pd(dev: &Device<Self>) -> Result<Self::Pd>;
    /// `dealloc_pd`; the data is dropped after it.
    fn dealloc_pd(dev: &Device<Self>, pd: &Self::Pd);

    /// `create_cq`: the data and the CQ size to report (`ib_cq.cqe`). `user` is there for a
    /// user-space CQ.
    fn create_cq(
        dev: &Device<Self>,
        attr: &CqInit,
        user: Option<UserReq>,
        handle: CqHandle,
    ) -> Result<(Self::Cq, u32)>;
    /// `resize_user_cq`: the new size to report.
    fn resize_cq(dev: &Device<Self>, cq: &Self::Cq, cqe: u32, user: Option<UserReq>)
        -> Result<u32>;
    /// `destroy_cq`; on success the data is dropped after it.
    fn destroy_cq(dev: &Device<Self>, cq: &Self::Cq) -> Result;
    /// `req_notify_cq`: arms the CQ with `flags` (`IB_CQ_*`); true when completions may have
    /// been missed (asked for with `IB_CQ_REPORT_MISSED_EVENTS`).
    fn req_notify_cq(dev: &Device<Self>, cq: &Self::Cq, flags: u32) -> Result<bool>;

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
    /// `rereg_user_mr`, in place only (the C driver's PD and access changes): the MR stays the
    /// same object (the trampoline returns NULL to ib_uverbs, which moves `ib_mr.pd` and the
    /// PDs' use counts itself).
    fn rereg_user_mr(dev: &Device<Self>, mr: &Self::Mr, req: &ReregMrReq) -> Result;
    /// `dereg_mr`; on success the data is dropped after it.
    fn dereg_mr(dev: &Device<Self>, mr: &Self::Mr) -> Result;

    /// `alloc_mw` of a window of type `mw_type` (`IB_MW_TYPE_*`) in `pd`: the data and the
    /// window's rkey.
    fn alloc_mw(dev: &Device<Self>, pd: PdId, mw_type: u32) -> Result<(Self::Mw, u32)>;
    /// `dealloc_mw`; the data is dropped after it.
    fn dealloc_mw(dev: &Device<Self>, mw: &Self::Mw);

    /// Per shared receive queue data.
    type Srq: Send + Sync;
    /// `create_srq`: the data and the SRQ number; `attr.max_wr` is updated to what was made.
    fn create_srq(
        dev: &Device<Self>,
        attr: &mut SrqAttr,
        srq_type: u32,
        user: Option<UserReq>,
        handle: SrqHandle,
    ) -> Result<(Self::Srq, u32)>;
    /// `modify_srq` with `IB_SRQ_*` `mask`; `user` is the user command (a resize offers the new
    /// ring to the SRQ's user context); `attr.max_wr` is updated to what a resize made.
    fn modify_srq(
        dev: &Device<Self>,
        srq: &Self::Srq,
        attr: &mut SrqAttr,
        mask: u32,
        user: Option<UserReq>,
    ) -> Result;
    /// `query_srq`.
    fn query_srq(dev: &Device<Self>, srq: &Self::Srq) -> Result<SrqAttr>;
    /// `destroy_srq`; the data is dropped after it.
    fn destroy_srq(dev: &Device<Self>, srq: &Self::Srq);

    /// Per queue pair data.
    type Qp: Send + Sync;
    /// `create_qp`: the data and the QP number; `init.cap` is updated to what was made.
    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit,
        links: QpLinks<'_, Self>,
        user: Option<UserReq>,
    ) -> Result<(Self::Qp, u32)>;
    /// `post_send` from user space: the doorbell of a QP whose send queue user space fills.
    fn post_send_user(dev: &Device<Self>, qp: &Self::Qp) -> Result;
    /// `post_send` of one kernel work request (any context).
    fn post_send_kernel(dev: &Device<Self>, qp: &Self::Qp, wr: &KernelSendWr<'_, Self>) -> Result;
    /// After `post_send_kernel` of a chain: start sending.
    fn kick_send(dev: &Device<Self>, qp: &Self::Qp);
    /// `post_recv` of one kernel receive WR (any context).
    fn post_recv(dev: &Device<Self>, qp: &Self::Qp, wr_id: u64, sges: &[Sge]) -> Result;
    /// `post_srq_recv` of one kernel receive WR (any context).
    fn post_srq_recv(dev: &Device<Self>, srq: &Self::Srq, wr_id: u64, sges: &[Sge]) -> Result;
    /// The port counters the performance management agent reports (`process_mad`).
    fn pma_counters(dev: &Device<Self>) -> PmaCounters;
    /// `poll_cq` of a kernel CQ: fills `out` from the front; how many.
    fn poll_cq(dev: &Device<Self>, cq: &Self::Cq, out: &mut [PolledWc]) -> usize;
    /// `modify_qp`.
    fn modify_qp(dev: &Device<Self>, qp: &Self::Qp, attr: &QpAttrs, mask: u32) -> Result;
    /// `query_qp`: the current attributes and capabilities.
    fn query_qp(dev: &Device<Self>, qp: &Self::Qp) -> (QpAttrs, QpCap);
    /// `destroy_qp`; on success the data is dropped after it.
    fn destroy_qp(dev: &Device<Self>, qp: &Self::Qp) -> Result;
    /// `attach_mcast` of a UD QP to the multicast GID `mgid` (ib_core checked both).
    fn attach_mcast(dev: &Device<Self>, qp: &Self::Qp, mgid: &[u8; 16]) -> Result;
    /// `detach_mcast`.
    fn detach_mcast(dev: &Device<Self>, qp: &Self::Qp, mgid: &[u8; 16]) -> Result;

    /// `create_ah` / `create_user_ah`. May be called in atomic context (no
    /// `RDMA_CREATE_AH_SLEEPABLE`): must not sleep or allocate with `GFP_KERNEL`.
    fn create_ah(dev: &Device<Self>, attr: &AhInit, user: Option<UserReq>) -> Result<Self::Ah>;
    /// `query_ah`: port and global route.
    fn query_ah(dev: &Device<Self>, ah: &Self::Ah) -> (u32, GlobalRoute);
    /// `destroy_ah`; the data is dropped after it.
    fn destroy_ah(dev: &Device<Self>, ah: &Self::Ah);
}

pub(crate) use crate::proto::mad::PmaCounters;

/// A completion of a kernel CQ: the CQE, its QP, and the network header type of a datagram.
#[derive(Clone, Copy, Default)]
pub(crate) struct PolledWc {
    pub(crate) wc: UverbsWc,
    pub(crate) qp: Option<QpHandle>,
    /// `RDMA_NETWORK_*` for UD/GSI receives (`IB_WC_WITH_NETWORK_HDR_TYPE`), else 0.
    pub(crate) network_hdr_type: u8,
}

/// `struct ib_srq_attr`.
#[derive(Clone, Copy, Default)]
pub(crate) struct SrqAttr {
    /// Receive WRs.
    pub(crate) max_wr: u32,
    /// SGEs per WR.
    pub(crate) max_sge: u32,
    /// Arm the limit event below this many WRs (0: disarmed).
    pub(crate) srq_limit: u32,
}

/// The attributes of `create_ah` (`rdma_ah_init_attr`), RoCE view.
pub(crate) struct AhInit {
    /// `ah_flags & IB_AH_GRH`: the global route, the source GID and its network type
    /// (`RDMA_NETWORK_*`). Always present for RoCE.
    pub(crate) grh: Option<(GlobalRoute, [u8; 16], u32)>,
    /// Port number.
    pub(crate) port_num: u32,
    /// Destination MAC.
    pub(crate) dmac: [u8; 6],
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

/// A protection domain's identity (its address), for the data path's PD checks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct PdId(pub(super) usize);

impl PdId {
    /// The identity as a number, for the pure checks of `proto`.
    pub(crate) fn raw(self) -> usize {
        self.0
    }
}

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
}

impl Umem {
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

/// `struct ib_cq_init_attr`.
pub(crate) struct CqInit {
    /// Completions asked for. (`comp_vector` is checked by ib_uverbs; rxe ignores it.)
    pub(crate) cqe: u32,
    /// `IB_UVERBS_CQ_FLAGS_*`.
    pub(crate) flags: u32,
}

/// Static description of a device, set before registration.
pub(crate) struct DeviceInfo<'a> {
    /// `node_desc`.
    pub(crate) node_desc: &'a CStr,
    /// `node_guid`, as it goes on the wire (big-endian bytes).
    pub(crate) node_guid: [u8; 8],
}

/// An ib_device of driver `T`: the `ib_device` followed by the driver's data.
#[repr(C)]
pub(crate) struct Device<T> {
    ib: Opaque<ffi::ib_device>,
    data: T,
    /// The counter descriptors ib_core's stats point to; they live as long as the device.
    stat_descs: StatDescs,
    /// Offsets at which user contexts map their queues.
    mmaps: MmapTable,
}

/// `rdma_stat_desc`s naming the driver's counters.
struct StatDescs(KVec<ffi::rdma_stat_desc>);

// SAFETY: the descriptors only point to `'static` C strings and are never written after setup.
unsafe impl Send for StatDescs {}
// SAFETY: as above; shared reads only.
unsafe impl Sync for StatDescs {}

impl StatDescs {
    fn new(names: &'static [&'static CStr]) -> Result<Self> {
        let mut descs = KVec::with_capacity(names.len(), GFP_KERNEL)?;
        for name in names {
            descs.push(
                ffi::rdma_stat_desc {
                    name: name.as_char_ptr(),
                    ..Default::default()
                },
                GFP_KERNEL,
            )?;
        }
        Ok(Self(descs))
    }
}

impl<T: DeviceOps> Device<T> {
    /// The driver's per-device data.
    pub(crate) fn data(&self) -> &T {
        &self.data
    }

    fn as_raw(&self) -> *mut ffi::ib_device {
        self.ib.get()
    }

    /// # Safety
    ///
    /// `ib` is the `ib_device` of a `Device<T>` whose data is initialised, valid for `'a`.
    pub(super) unsafe fn from_raw<'a>(ib: *mut ffi::ib_device) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Device<T>` (per the caller).
        unsafe { &*ib.cast::<Self>() }
    }

    /// The device name, e.g. `rxe0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array inside the device, valid while it is;
        // ib_core serialises renames against ops.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The device's mmap offsets.
    pub(super) fn mmaps(&self) -> &MmapTable {
        &self.mmaps
    }

    /// The net device of port 1, referenced.
    pub(crate) fn netdev(&self) -> Option<NetDevRef> {
        // SAFETY: `self` is a valid ib_device; ib_device_get_netdev returns a held reference.
        unsafe { NetDevRef::from_raw_owned(ffi::ib_device_get_netdev(self.as_raw(), 1)) }
    }

    /// Active speed and width of `port` from the netdev's link speed (`ib_get_eth_speed`).
    pub(crate) fn eth_speed(&self, port: u32) -> Result<(u16, u8)> {
        let (mut speed, mut width) = (0u16, 0u8);
        // SAFETY: `self` is valid; the out pointers are valid locals.
        kernel::error::to_result(unsafe {
            ffi::ib_get_eth_speed(self.as_raw(), port, &mut speed, &mut width)
        })?;
        Ok((speed, width))
    }

    /// Raises a port event to ib_core's clients.
    pub(crate) fn dispatch_port_event(&self, event: PortEvent) {
        let mut ev = ffi::ib_event {
            device: self.as_raw(),
            event: match event {
                PortEvent::Active => ffi::ib_event_type_IB_EVENT_PORT_ACTIVE,
                PortEvent::Err => ffi::ib_event_type_IB_EVENT_PORT_ERR,
            },
            ..Default::default()
        };
        // SAFETY: `element` is a plain union; port events use `port_num`.
        unsafe { *ev.element.port_num.as_mut() = 1 };
        // SAFETY: `ev` is a complete event for this registered device.
        unsafe { ffi::ib_dispatch_event(&ev) };
    }

    /// Node description (`node_desc`), as set by `modify_device`.
    pub(crate) fn set_node_desc(&self, desc: &[kernel::ffi::c_char; 64]) {
        // SAFETY: ib_core calls modify_device with no concurrent writer of node_desc.
        unsafe { (*self.as_raw()).node_desc = *desc };
    }

    /// Queues unregistration (from the netdev notifier, under RTNL).
    pub(crate) fn unregister_queued(&self) {
        // SAFETY: `self` is a registered device; the call takes its own reference.
        unsafe { ffi::ib_unregister_device_queued(self.as_raw()) };
    }
}

/// A counted reference to a registered device of driver `T` (`ib_device_put` on drop).
pub(crate) struct DeviceRef<T: DeviceOps>(*mut ffi::ib_device, PhantomData<T>);

impl<T: DeviceOps> DeviceRef<T> {
    /// The device of driver `T` bound to `netdev`, if any.
    pub(crate) fn from_netdev(netdev: &NetDev) -> Option<Self> {
        // SAFETY: `netdev` is valid; a non-null result is a referenced ib_device of `T` (the
        // driver id filter guarantees it is one of ours, hence a `Device<T>`).
        let ib = unsafe { ffi::ib_device_get_by_netdev(netdev.as_raw(), T::DRIVER_ID) };
        (!ib.is_null()).then(|| Self(ib, PhantomData))
    }
}

impl<T: DeviceOps> DeviceRef<T> {
    /// A counted reference to `dev` (`ib_device_try_get`); `None` once it is unregistering.
    pub(crate) fn get(dev: &Device<T>) -> Option<Self> {
        // SAFETY: `dev` is valid; on success we own one reference.
        unsafe { ffi::rxe_rs_ib_device_try_get(dev.as_raw()) }
            .then(|| Self(dev.as_raw(), PhantomData))
    }
}

// SAFETY: ib_device references may be taken and dropped from any context.
unsafe impl<T: DeviceOps> Send for DeviceRef<T> {}
// SAFETY: shared access only reads through `&Device<T>`, which is `Sync` for `T: Sync`.
unsafe impl<T: DeviceOps> Sync for DeviceRef<T> {}

impl<T: DeviceOps> core::ops::Deref for DeviceRef<T> {
    type Target = Device<T>;
    fn deref(&self) -> &Device<T> {
        // SAFETY: we hold a reference to a registered `Device<T>`.
        unsafe { Device::from_raw(self.0) }
    }
}

impl<T: DeviceOps> Drop for DeviceRef<T> {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { ffi::ib_device_put(self.0) };
    }
}

/// An object ib_core allocates for the driver: `ib_*` struct first, the driver's data after.
#[repr(C)]
pub(super) struct Object<R, D> {
    pub(super) raw: Opaque<R>,
    pub(super) data: D,
}

/// Allocates, sets up and registers a device named `name` over `netdev`.
pub(crate) fn register<T: DeviceOps>(
    name: &CStr,
    netdev: &NetDev,
    info: &DeviceInfo<'_>,
    data: T,
) -> Result {
    let stat_descs = StatDescs::new(T::COUNTER_NAMES)?;
    let mmaps = MmapTable::new()?;
    // SAFETY: `init_net` is the kernel's initial namespace, always valid; ib_core allocates a
    // zeroed block of the requested size with an initialised `ib_device` at its start.
    let ib = unsafe { ffi::_ib_alloc_device(size_of::<Device<T>>(), addr_of_mut!(ffi::init_net)) };
    if ib.is_null() {
        return Err(ENOMEM);
    }
    let dev = ib.cast::<Device<T>>();
    // SAFETY: `dev` points to a live allocation of `Device<T>` size whose data slots are
    // uninitialised; the block never moves.
    unsafe {
        addr_of_mut!((*dev).data).write(data);
        addr_of_mut!((*dev).stat_descs).write(stat_descs);
        addr_of_mut!((*dev).mmaps).write(mmaps);
    }

    let ops = ops::<T>();
    // SAFETY: `ib` is a valid unregistered device we own; from here on `dealloc_driver` (set by
    // `ib_set_device_ops`) drops the data when ib_core frees the device.
    let ret = unsafe {
        let d = &mut *ib;
        let desc = info.node_desc.to_bytes_with_nul();
        let n = desc.len().min(d.node_desc.len());
        for (dst, src) in d.node_desc.iter_mut().zip(&desc[..n]) {
            *dst = *src as kernel::ffi::c_char;
        }
        d.node_type = ffi::RDMA_NODE_IB_CA as u8;
        d.phys_port_cnt = 1;
        d.num_comp_vectors = ffi::rxe_rs_num_possible_cpus() as i32;
        d.local_dma_lkey = 0;
        d.node_guid = u64::from_ne_bytes(info.node_guid);
        // ib_uverbs leaves REQ_NOTIFY_CQ (user CQs are polled in user space, but armed here)
        // out of its default command mask.
        d.uverbs_cmd_mask |= 1u64 << ffi::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
        d.uverbs_cmd_mask |= 1u64 << ffi::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND;
        ffi::rxe_rs_ib_mark_name_assigned_by_user(ib);
        ffi::ib_set_device_ops(ib, &ops);
        let mut ret = ffi::ib_device_set_netdev(ib, netdev.as_raw(), 1);
        if ret == 0 {
            ret = ffi::ib_register_device(ib, name.as_char_ptr(), core::ptr::null_mut());
        }
        if ret != 0 {
            ffi::ib_dealloc_device(ib);
        }
        ret
    };
    kernel::error::to_result(ret)
}

/// Unregisters every device of driver `T` when dropped (module exit).
pub(crate) struct DriverRegistration<T: DeviceOps>(PhantomData<T>);

impl<T: DeviceOps> DriverRegistration<T> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: DeviceOps> Drop for DriverRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: unregisters (and so frees) all devices of this driver; sleeps, module exit is
        // process context.
        unsafe { ffi::ib_unregister_driver(T::DRIVER_ID) };
    }
}

/// The `ib_device_ops` of driver `T`. ib_core copies it (`ib_set_device_ops`).
fn ops<T: DeviceOps>() -> ffi::ib_device_ops {
    ffi::ib_device_ops {
        // ib_core takes a module reference per open uverbs file through `owner`.
        owner: kernel::module::this_module::<crate::LocalModule>().as_ptr(),
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VERSION,
        dealloc_driver: Some(dealloc_driver::<T>),
        enable_driver: Some(enable_driver::<T>),
        query_device: Some(query_device::<T>),
        query_port: Some(query_port::<T>),
        query_pkey: Some(query_pkey::<T>),
        modify_device: Some(modify_device::<T>),
        modify_port: Some(modify_port::<T>),
        get_port_immutable: Some(get_port_immutable::<T>),
        get_link_layer: Some(get_link_layer::<T>),
        alloc_ucontext: Some(alloc_ucontext::<T>),
        dealloc_ucontext: Some(dealloc_ucontext::<T>),
        // Having it lets ib_core move the device between namespaces; a soft device has no
        // hardware mappings to revoke (the C driver's is empty too).
        disassociate_ucontext: Some(disassociate_ucontext),
        alloc_pd: Some(alloc_pd::<T>),
        dealloc_pd: Some(dealloc_pd::<T>),
        alloc_hw_port_stats: Some(alloc_hw_port_stats::<T>),
        get_hw_stats: Some(get_hw_stats::<T>),
        mmap: Some(mmap::<T>),
        create_cq: Some(create_cq::<T>),
        destroy_cq: Some(destroy_cq::<T>),
        resize_user_cq: Some(resize_cq::<T>),
        req_notify_cq: Some(req_notify_cq::<T>),
        poll_cq: Some(poll_cq::<T>),
        process_mad: Some(process_mad::<T>),
        size_ib_cq: size_of::<Object<ffi::ib_cq, T::Cq>>(),
        get_dma_mr: Some(get_dma_mr::<T>),
        reg_user_mr: Some(reg_user_mr::<T>),
        rereg_user_mr: Some(rereg_user_mr::<T>),
        dereg_mr: Some(dereg_mr::<T>),
        alloc_mr: Some(alloc_mr::<T>),
        map_mr_sg: Some(map_mr_sg::<T>),
        alloc_mw: Some(alloc_mw::<T>),
        dealloc_mw: Some(dealloc_mw::<T>),
        size_ib_mw: size_of::<Object<ffi::ib_mw, T::Mw>>(),
        create_srq: Some(create_srq::<T>),
        modify_srq: Some(modify_srq::<T>),
        query_srq: Some(query_srq::<T>),
        destroy_srq: Some(destroy_srq::<T>),
        size_ib_srq: size_of::<Object<ffi::ib_srq, T::Srq>>(),
        create_qp: Some(super::qp::create_qp::<T>),
        post_send: Some(super::qp::post_send::<T>),
        post_recv: Some(super::qp::post_recv::<T>),
        post_srq_recv: Some(super::qp::post_srq_recv::<T>),
        modify_qp: Some(super::qp::modify_qp::<T>),
        query_qp: Some(super::qp::query_qp::<T>),
        destroy_qp: Some(super::qp::destroy_qp::<T>),
        attach_mcast: Some(super::qp::attach_mcast::<T>),
        detach_mcast: Some(super::qp::detach_mcast::<T>),
        size_ib_qp: size_of::<Object<ffi::ib_qp, T::Qp>>(),
        create_ah: Some(create_ah::<T>),
        create_user_ah: Some(create_ah::<T>),
        query_ah: Some(query_ah::<T>),
        destroy_ah: Some(destroy_ah::<T>),
        size_ib_ah: size_of::<Object<ffi::ib_ah, T::Ah>>(),
        size_ib_ucontext: size_of::<Object<ffi::ib_ucontext, T::Ucontext>>(),
        size_ib_pd: size_of::<Object<ffi::ib_pd, T::Pd>>(),
        ..Default::default()
    }
}

// The trampolines below are only installed on `Device<T>` devices (by `register`), whose data is
// initialised before the ops are set and dropped only by `dealloc_driver`, the last op.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn dealloc_driver<T: DeviceOps>(ib: *mut ffi::ib_device) {
    // SAFETY: last call on this device (its stats are gone): drop what ib_core is about to free.
    unsafe {
        let dev = ib.cast::<Device<T>>();
        core::ptr::drop_in_place(addr_of_mut!((*dev).data));
        core::ptr::drop_in_place(addr_of_mut!((*dev).stat_descs));
        core::ptr::drop_in_place(addr_of_mut!((*dev).mmaps));
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn enable_driver<T: DeviceOps>(ib: *mut ffi::ib_device) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    from_result(|| T::enable(dev).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn alloc_hw_port_stats<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    _port: u32,
) -> *mut ffi::rdma_hw_stats {
    // SAFETY: see the note above the trampolines.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    let descs = &dev.stat_descs.0;
    // SAFETY: `descs` outlives the stats: ib_core frees port stats before `dealloc_driver`.
    unsafe {
        ffi::rdma_alloc_hw_stats_struct(
            descs.as_ptr(),
            descs.len() as i32,
            ffi::RDMA_HW_STATS_DEFAULT_LIFESPAN as usize,
        )
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn get_hw_stats<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    stats: *mut ffi::rdma_hw_stats,
    port: u32,
    _index: kernel::ffi::c_int,
) -> kernel::ffi::c_int {
    if port == 0 || stats.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: see the note above the trampolines; `stats` came from `alloc_hw_port_stats`, so it
    // has `num_counters` values and ib_core holds its lock.
    unsafe {
        let dev = Device::<T>::from_raw(ib);
        let n = ((*stats).num_counters as usize).min(T::COUNTER_NAMES.len());
        T::read_counters(dev, (*stats).value.as_mut_slice(n));
        n as kernel::ffi::c_int
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn query_device<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    attr: *mut ffi::ib_device_attr,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    from_result(|| {
        // SAFETY: `udata` is null or valid for this call.
        kernel::error::to_result(unsafe { ffi::rxe_rs_ib_no_udata_io(udata) })?;
        // SAFETY: see the note above the trampolines; `attr` is valid and exclusive here.
        let (dev, attr) = unsafe { (Device::<T>::from_raw(ib), &mut *attr) };
        T::query_device(dev, attr).map(|()| 0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn query_port<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    port: u32,
    attr: *mut ffi::ib_port_attr,
) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines; `attr` is valid and exclusive here.
    let (dev, attr) = unsafe { (Device::<T>::from_raw(ib), &mut *attr) };
    from_result(|| T::query_port(dev, port, attr).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn query_pkey<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    port: u32,
    index: u16,
    pkey: *mut u16,
) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    from_result(|| {
        let value = T::query_pkey(dev, port, index)?;
        // SAFETY: `pkey` is a valid out pointer for this call.
        unsafe { *pkey = value };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn modify_device<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    mask: kernel::ffi::c_int,
    attr: *mut ffi::ib_device_modify,
) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines; `attr` is valid for this call.
    let (dev, attr) = unsafe { (Device::<T>::from_raw(ib), &*attr) };
    from_result(|| T::modify_device(dev, mask, attr).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn modify_port<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    port: u32,
    mask: kernel::ffi::c_int,
    attr: *mut ffi::ib_port_modify,
) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines; `attr` is valid for this call.
    let (dev, attr) = unsafe { (Device::<T>::from_raw(ib), &*attr) };
    from_result(|| T::modify_port(dev, port, mask, attr).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn get_port_immutable<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    port: u32,
    imm: *mut ffi::ib_port_immutable,
) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines; `imm` is valid and exclusive here.
    let (dev, imm) = unsafe { (Device::<T>::from_raw(ib), &mut *imm) };
    from_result(|| T::port_immutable(dev, port, imm).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn get_link_layer<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    port: u32,
) -> ffi::rdma_link_layer {
    // SAFETY: see the note above the trampolines.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    if T::link_layer_is_ethernet(dev, port) {
        ffi::rdma_link_layer_IB_LINK_LAYER_ETHERNET
    } else {
        ffi::rdma_link_layer_IB_LINK_LAYER_UNSPECIFIED
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn alloc_ucontext<T: DeviceOps>(
    uc: *mut ffi::ib_ucontext,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_ucontext` zeroed bytes for an `Object` and set its
    // `device` to one of our devices.
    let (dev, obj) = unsafe {
        (
            Device::<T>::from_raw((*uc).device),
            uc.cast::<Object<ffi::ib_ucontext, T::Ucontext>>(),
        )
    };
    from_result(|| {
        let data = T::alloc_ucontext(dev)?;
        // SAFETY: `obj` is valid for writes; the data slot is uninitialised until now.
        unsafe { addr_of_mut!((*obj).data).write(data) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn dealloc_ucontext<T: DeviceOps>(uc: *mut ffi::ib_ucontext) {
    // SAFETY: `alloc_ucontext` succeeded for this object, so its data is initialised; this is
    // the last call for it.
    unsafe {
        let obj = uc.cast::<Object<ffi::ib_ucontext, T::Ucontext>>();
        T::dealloc_ucontext(Device::<T>::from_raw((*uc).device), &(*obj).data);
        core::ptr::drop_in_place(addr_of_mut!((*obj).data));
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn disassociate_ucontext(_uc: *mut ffi::ib_ucontext) {}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn alloc_pd<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: as for `alloc_ucontext`, with `size_ib_pd`.
    let (dev, obj) = unsafe {
        (
            Device::<T>::from_raw((*pd).device),
            pd.cast::<Object<ffi::ib_pd, T::Pd>>(),
        )
    };
    from_result(|| {
        let data = T::alloc_pd(dev)?;
        // SAFETY: `obj` is valid for writes; the data slot is uninitialised until now.
        unsafe { addr_of_mut!((*obj).data).write(data) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn dealloc_pd<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: as for `dealloc_ucontext`.
    unsafe {
        let obj = pd.cast::<Object<ffi::ib_pd, T::Pd>>();
        T::dealloc_pd(Device::<T>::from_raw((*pd).device), &(*obj).data);
        core::ptr::drop_in_place(addr_of_mut!((*obj).data));
    }
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn mmap<T: DeviceOps>(
    uc: *mut ffi::ib_ucontext,
    vma: *mut ffi::vm_area_struct,
) -> kernel::ffi::c_int {
    // SAFETY: ib_uverbs passes the caller's ucontext of one of our devices and its VMA.
    from_result(|| unsafe {
        let dev = Device::<T>::from_raw((*uc).device);
        dev.mmaps.mmap(uc, vma).map(|()| 0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn create_cq<T: DeviceOps>(
    ibcq: *mut ffi::ib_cq,
    attr: *const ffi::ib_cq_init_attr,
    attrs: *mut ffi::uverbs_attr_bundle,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_cq` zeroed bytes for an `Object` on one of our devices;
    // `attr` is valid; `attrs` is NULL for kernel callers, else the uverbs bundle, whose first
    // member is the driver's udata.
    from_result(|| unsafe {
        let dev = Device::<T>::from_raw((*ibcq).device);
        let obj = ibcq.cast::<Object<ffi::ib_cq, T::Cq>>();
        let init = CqInit {
            cqe: (*attr).cqe,
            flags: (*attr).flags,
        };
        let user = if attrs.is_null() {
            None
        } else {
            UserReq::new(attrs.cast(), ffi::rxe_rs_udata_context(attrs), &dev.mmaps)
        };
        let handle = CqHandle::new(ibcq).ok_or(EINVAL)?;
        let (data, cqe) = T::create_cq(dev, &init, user, handle)?;
        addr_of_mut!((*obj).data).write(data);
        (*ibcq).cqe = cqe as i32;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn resize_cq<T: DeviceOps>(
    ibcq: *mut ffi::ib_cq,
    cqe: kernel::ffi::c_uint,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_cq` succeeded for this CQ; `udata` is null or valid for the call. The
    // driver supplies the user context the CQ was created by.
    from_result(|| unsafe {
        let dev = Device::<T>::from_raw((*ibcq).device);
        let obj = ibcq.cast::<Object<ffi::ib_cq, T::Cq>>();
        let user = UserReq::new(udata, core::ptr::null_mut(), &dev.mmaps);
        let cqe = T::resize_cq(dev, &(*obj).data, cqe, user)?;
        (*ibcq).cqe = cqe as i32;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn destroy_cq<T: DeviceOps>(
    ibcq: *mut ffi::ib_cq,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_cq` succeeded for this object, so its data is initialised; on success
    // this is the last call for it.
    from_result(|| unsafe {
        let obj = ibcq.cast::<Object<ffi::ib_cq, T::Cq>>();
        T::destroy_cq(Device::<T>::from_raw((*ibcq).device), &(*obj).data)?;
        core::ptr::drop_in_place(addr_of_mut!((*obj).data));
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn req_notify_cq<T: DeviceOps>(
    ibcq: *mut ffi::ib_cq,
    flags: ffi::ib_cq_notify_flags,
) -> kernel::ffi::c_int {
    // SAFETY: the CQ was created by `create_cq`, so its data is initialised.
    from_result(|| unsafe {
        let obj = ibcq.cast::<Object<ffi::ib_cq, T::Cq>>();
        let missed = T::req_notify_cq(Device::<T>::from_raw((*ibcq).device), &(*obj).data, flags)?;
        Ok(i32::from(missed))
    })
}

/// MRs are allocated by the driver (ib_core has no `size_ib_mr`): an `Object` in a `KBox`.
pub(super) type MrObject<T> = Object<ffi::ib_mr, <T as DeviceOps>::Mr>;

fn new_mr<T: DeviceOps>((data, key): (T::Mr, u32)) -> Result<*mut ffi::ib_mr> {
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

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn get_dma_mr<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    access: kernel::ffi::c_int,
) -> *mut ffi::ib_mr {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::from_raw((*pd).device) };
    mr_result(T::get_dma_mr(dev, PdId(pd as usize), access).and_then(new_mr::<T>))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn reg_user_mr<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    start: u64,
    length: u64,
    virt_addr: u64,
    access: kernel::ffi::c_int,
    dmah: *mut ffi::ib_dmah,
    _udata: *mut ffi::ib_udata,
) -> *mut ffi::ib_mr {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::from_raw((*pd).device) };
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
unsafe extern "C" fn alloc_mr<T: DeviceOps>(
    pd: *mut ffi::ib_pd,
    mr_type: ffi::ib_mr_type,
    max_num_sg: u32,
) -> *mut ffi::ib_mr {
    // SAFETY: `pd` is a PD of one of our devices.
    let dev = unsafe { Device::<T>::from_raw((*pd).device) };
    mr_result(T::alloc_mr(dev, PdId(pd as usize), mr_type, max_num_sg).and_then(new_mr::<T>))
}

/// `ib_sg_to_pages`' callback: one page of the MR being mapped.
///
/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn set_page<T: DeviceOps>(mr: *mut ffi::ib_mr, addr: u64) -> kernel::ffi::c_int {
    // SAFETY: `mr` is the MR `map_mr_sg` is mapping, one of ours.
    from_result(|| unsafe {
        T::map_mr_page(&(*mr.cast::<MrObject<T>>()).data, addr)?;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn map_mr_sg<T: DeviceOps>(
    mr: *mut ffi::ib_mr,
    sgl: *mut ffi::scatterlist,
    sg_nents: kernel::ffi::c_int,
    sg_offset: *mut kernel::ffi::c_uint,
) -> kernel::ffi::c_int {
    // SAFETY: `mr` came from `alloc_mr`; `sgl`, `sg_nents` and `sg_offset` are the ULP's DMA
    // mapped scatterlist, as `ib_sg_to_pages` expects them (ib_core's `ib_map_mr_sg` set
    // `page_size` before calling us).
    unsafe {
        let data = &(*mr.cast::<MrObject<T>>()).data;
        if let Err(e) = T::map_mr_sg_start(data, (*mr).page_size) {
            return e.to_errno();
        }
        let n = ffi::ib_sg_to_pages(mr, sgl, sg_nents, sg_offset, Some(set_page::<T>));
        T::map_mr_sg_end(data, (*mr).iova, (*mr).length);
        n
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn rereg_user_mr<T: DeviceOps>(
    mr: *mut ffi::ib_mr,
    flags: kernel::ffi::c_int,
    _start: u64,
    _length: u64,
    _virt_addr: u64,
    access: kernel::ffi::c_int,
    pd: *mut ffi::ib_pd,
    _udata: *mut ffi::ib_udata,
) -> *mut ffi::ib_mr {
    // SAFETY: ib_uverbs passes one of our MRs (a `KBox<MrObject<T>>` from `new_mr`) under its
    // uobject's write lock (no dereg can run), and a PD of the same device: the new one with
    // `IB_MR_REREG_PD`, else the MR's own.
    let (dev, data) = unsafe {
        (
            Device::<T>::from_raw((*mr).device),
            &(*mr.cast::<MrObject<T>>()).data,
        )
    };
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
unsafe extern "C" fn dereg_mr<T: DeviceOps>(
    mr: *mut ffi::ib_mr,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `mr` came from `new_mr` (a `KBox<MrObject<T>>`); on success this is its last use.
    // The data path reaches an MR through the key table (`Arc<MrShared>`, under RCU), never
    // through this box, and `T::dereg_mr` waits a grace period after taking it out of the table.
    from_result(|| unsafe {
        let obj = mr.cast::<MrObject<T>>();
        T::dereg_mr(Device::<T>::from_raw((*mr).device), &(*obj).data)?;
        drop(KBox::from_raw(obj));
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn alloc_mw<T: DeviceOps>(
    mw: *mut ffi::ib_mw,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_mw` zeroed bytes for an `Object` on one of our devices.
    from_result(|| unsafe {
        let obj = mw.cast::<Object<ffi::ib_mw, T::Mw>>();
        let pd = PdId((*mw).pd as usize);
        let (data, rkey) = T::alloc_mw(Device::<T>::from_raw((*mw).device), pd, (*mw).type_)?;
        addr_of_mut!((*obj).data).write(data);
        (*mw).rkey = rkey;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn dealloc_mw<T: DeviceOps>(mw: *mut ffi::ib_mw) -> kernel::ffi::c_int {
    // SAFETY: `alloc_mw` succeeded for this object; this is the last call for it.
    unsafe {
        let obj = mw.cast::<Object<ffi::ib_mw, T::Mw>>();
        T::dealloc_mw(Device::<T>::from_raw((*mw).device), &(*obj).data);
        core::ptr::drop_in_place(addr_of_mut!((*obj).data));
    }
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn create_ah<T: DeviceOps>(
    ah: *mut ffi::ib_ah,
    init: *mut ffi::rdma_ah_init_attr,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_ah` zeroed bytes for an `Object` on one of our devices;
    // `init` and its `ah_attr` are valid, and so is `sgid_attr` when the GRH flag is set.
    from_result(|| unsafe {
        let dev = Device::<T>::from_raw((*ah).device);
        let init = parse_ah_attr(&*(*init).ah_attr)?;
        let user = UserReq::new(udata, core::ptr::null_mut(), &dev.mmaps);
        let data = T::create_ah(dev, &init, user)?;
        addr_of_mut!((*ah.cast::<Object<ffi::ib_ah, T::Ah>>()).data).write(data);
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn query_ah<T: DeviceOps>(
    ah: *mut ffi::ib_ah,
    attr: *mut ffi::rdma_ah_attr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_ah` succeeded for this object; `attr` is valid and ours to fill.
    unsafe {
        let obj = ah.cast::<Object<ffi::ib_ah, T::Ah>>();
        let (port_num, route) = T::query_ah(Device::<T>::from_raw((*ah).device), &(*obj).data);
        write_ah_attr(&mut *attr, port_num, &route);
    }
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn destroy_ah<T: DeviceOps>(
    ah: *mut ffi::ib_ah,
    _flags: u32,
) -> kernel::ffi::c_int {
    // SAFETY: `create_ah` succeeded for this object; this is the last call for it.
    unsafe {
        let obj = ah.cast::<Object<ffi::ib_ah, T::Ah>>();
        T::destroy_ah(Device::<T>::from_raw((*ah).device), &(*obj).data);
        core::ptr::drop_in_place(addr_of_mut!((*obj).data));
    }
    0
}

/// The user context a PD belongs to (null for kernel PDs): the context of the user objects
/// created in it, whose queues it may map.
///
/// # Safety
///
/// `pd` is null or a valid PD.
pub(super) unsafe fn pd_context(pd: *mut ffi::ib_pd) -> *mut ffi::ib_ucontext {
    // SAFETY: `pd` is null or valid (caller); a user PD's `uobject` is valid while it lives.
    unsafe {
        if pd.is_null() || (*pd).uobject.is_null() {
            core::ptr::null_mut()
        } else {
            (*(*pd).uobject).context
        }
    }
}

/// Reads the RoCE view of an `rdma_ah_attr` (AH creation, `IB_QP_AV`).
///
/// # Safety
///
/// `attr.grh.sgid_attr` is valid (or null) when `IB_AH_GRH` is set, as ib_core guarantees for
/// the attributes it hands to drivers.
pub(super) unsafe fn parse_ah_attr(attr: &ffi::rdma_ah_attr) -> Result<AhInit> {
    let grh = if u32::from(attr.ah_flags) & ffi::ib_ah_flags_IB_AH_GRH != 0 {
        let g = &attr.grh;
        let sgid_attr = g.sgid_attr;
        if sgid_attr.is_null() {
            return Err(EINVAL);
        }
        let route = GlobalRoute {
            // SAFETY: plain unions of bytes.
            dgid: unsafe { *g.dgid.raw.as_ref() },
            flow_label: g.flow_label,
            sgid_index: g.sgid_index,
            hop_limit: g.hop_limit,
            traffic_class: g.traffic_class,
        };
        // SAFETY: `sgid_attr` is valid per the caller.
        let (sgid, network_type) = unsafe {
            (
                *(*sgid_attr).gid.raw.as_ref(),
                ffi::rxe_rs_gid_attr_network_type(sgid_attr) as u32,
            )
        };
        Some((route, sgid, network_type))
    } else {
        None
    };
    Ok(AhInit {
        grh,
        port_num: attr.port_num,
        // SAFETY: the RoCE member of a plain union of byte arrays.
        dmac: unsafe { attr.__bindgen_anon_1.roce.as_ref().dmac },
    })
}

/// Writes the RoCE view back into an `rdma_ah_attr` (`rxe_av_to_attr`).
pub(super) fn write_ah_attr(attr: &mut ffi::rdma_ah_attr, port_num: u32, route: &GlobalRoute) {
    *attr = ffi::rdma_ah_attr {
        type_: ffi::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE,
        ah_flags: ffi::ib_ah_flags_IB_AH_GRH as u8,
        port_num,
        ..Default::default()
    };
    let grh = &mut attr.grh;
    // SAFETY: plain union of bytes.
    unsafe { *grh.dgid.raw.as_mut() = route.dgid };
    grh.flow_label = route.flow_label;
    grh.sgid_index = route.sgid_index;
    grh.hop_limit = route.hop_limit;
    grh.traffic_class = route.traffic_class;
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn create_srq<T: DeviceOps>(
    srq: *mut ffi::ib_srq,
    init: *mut ffi::ib_srq_init_attr,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_srq` zeroed bytes for an `Object` on one of our
    // devices, with its PD set; `init` is valid; `udata` is null or valid for the call.
    from_result(|| unsafe {
        let dev = Device::<T>::from_raw((*srq).device);
        let i = &mut *init;
        let mut attr = SrqAttr {
            max_wr: i.attr.max_wr,
            max_sge: i.attr.max_sge,
            srq_limit: i.attr.srq_limit,
        };
        let user = UserReq::new(udata, pd_context((*srq).pd), &dev.mmaps);
        let (data, _srq_num) = T::create_srq(
            dev,
            &mut attr,
            i.srq_type,
            user,
            SrqHandle::new(srq).ok_or(EINVAL)?,
        )?;
        addr_of_mut!((*srq.cast::<Object<ffi::ib_srq, T::Srq>>()).data).write(data);
        i.attr.max_wr = attr.max_wr;
        i.attr.max_sge = attr.max_sge;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn modify_srq<T: DeviceOps>(
    srq: *mut ffi::ib_srq,
    attr: *mut ffi::ib_srq_attr,
    mask: ffi::ib_srq_attr_mask,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ (its PD set); `attr` is valid; `udata` null
    // or valid for the call.
    from_result(|| unsafe {
        let dev = Device::<T>::from_raw((*srq).device);
        let mut a = SrqAttr {
            max_wr: (*attr).max_wr,
            max_sge: (*attr).max_sge,
            srq_limit: (*attr).srq_limit,
        };
        let user = UserReq::new(udata, pd_context((*srq).pd), &dev.mmaps);
        let obj = srq.cast::<Object<ffi::ib_srq, T::Srq>>();
        T::modify_srq(dev, &(*obj).data, &mut a, mask, user)?;
        (*attr).max_wr = a.max_wr;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn query_srq<T: DeviceOps>(
    srq: *mut ffi::ib_srq,
    attr: *mut ffi::ib_srq_attr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ; `attr` is ours to fill.
    from_result(|| unsafe {
        let obj = srq.cast::<Object<ffi::ib_srq, T::Srq>>();
        let a = T::query_srq(Device::<T>::from_raw((*srq).device), &(*obj).data)?;
        (*attr).max_wr = a.max_wr;
        (*attr).max_sge = a.max_sge;
        (*attr).srq_limit = a.srq_limit;
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn destroy_srq<T: DeviceOps>(
    srq: *mut ffi::ib_srq,
    _udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: `create_srq` succeeded for this SRQ; this is the last call for it.
    unsafe {
        let obj = srq.cast::<Object<ffi::ib_srq, T::Srq>>();
        T::destroy_srq(Device::<T>::from_raw((*srq).device), &(*obj).data);
        core::ptr::drop_in_place(addr_of_mut!((*obj).data));
    }
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn poll_cq<T: DeviceOps>(
    ibcq: *mut ffi::ib_cq,
    num_entries: kernel::ffi::c_int,
    wc: *mut ffi::ib_wc,
) -> kernel::ffi::c_int {
    const BATCH: usize = 16;
    let Ok(want) = usize::try_from(num_entries) else {
        return EINVAL.to_errno();
    };
    // SAFETY: `create_cq` succeeded for this CQ; `wc` has room for `num_entries` entries.
    unsafe {
        let obj = ibcq.cast::<Object<ffi::ib_cq, T::Cq>>();
        let dev = Device::<T>::from_raw((*ibcq).device);
        let mut done = 0usize;
        while done < want {
            let mut batch = [PolledWc::default(); BATCH];
            let n = (want - done).min(BATCH);
            let got = T::poll_cq(dev, &(*obj).data, &mut batch[..n]);
            for p in &batch[..got] {
                let out = &mut *wc.add(done);
                *out = ffi::ib_wc::default();
                *out.__bindgen_anon_1.wr_id.as_mut() = p.wc.wr_id;
                out.status = p.wc.status.raw();
                out.opcode = p.wc.opcode;
                out.vendor_err = p.wc.vendor_err;
                out.byte_len = p.wc.byte_len;
                out.qp = p.qp.map_or(core::ptr::null_mut(), |q| q.as_raw());
                *out.ex.imm_data.as_mut() = p.wc.ex;
                out.src_qp = p.wc.src_qp;
                out.slid = u32::from(p.wc.slid);
                out.wc_flags = p.wc.wc_flags as i32;
                out.pkey_index = p.wc.pkey_index;
                out.sl = p.wc.sl;
                out.dlid_path_bits = p.wc.dlid_path_bits;
                out.port_num = u32::from(p.wc.port_num);
                out.network_hdr_type = p.network_hdr_type;
                done += 1;
            }
            if got < n {
                break;
            }
        }
        done as kernel::ffi::c_int
    }
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
unsafe extern "C" fn process_mad<T: DeviceOps>(
    ibdev: *mut ffi::ib_device,
    _flags: kernel::ffi::c_int,
    port_num: u32,
    _in_wc: *const ffi::ib_wc,
    _in_grh: *const ffi::ib_grh,
    in_mad: *const ffi::ib_mad,
    out_mad: *mut ffi::ib_mad,
    _out_mad_size: *mut usize,
    _out_mad_pkey_index: *mut u16,
) -> kernel::ffi::c_int {
    if port_num != 1 {
        return 0;
    }
    const LEN: usize = core::mem::size_of::<ffi::ib_mad>();
    const _: () = assert!(LEN == mad::MAD_LEN);
    // SAFETY: the device is one of ours (the ops table is only installed on them).
    let dev = unsafe { Device::<T>::from_raw(ibdev) };
    // SAFETY: ib_core passes a full `ib_mad`, only read during the call.
    let input = unsafe { core::slice::from_raw_parts(in_mad.cast::<u8>(), LEN) };
    // SAFETY: ib_core passes a full `ib_mad` to fill, not aliased by `in_mad`.
    let out = unsafe { core::slice::from_raw_parts_mut(out_mad.cast::<u8>(), LEN) };
    mad::pma_reply(&T::pma_counters(dev), input, out)
}
