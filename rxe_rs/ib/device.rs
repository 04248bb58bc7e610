// SPDX-License-Identifier: GPL-2.0

//! An `ib_device` owned by ib_core with the driver's data in the same allocation, the device's
//! own verbs ([`DeviceOps`]: attributes, ports, counters, user contexts and PDs) and their
//! `ib_device_ops` callbacks. The verbs of the other objects are in their files (`cq.rs`,
//! `srq.rs`, `mr.rs`, `ah.rs`, `qp.rs`); `driver.rs` builds the ops table from all of them.
//!
//! ib_core allocates the device (`_ib_alloc_device`) and frees it after the last reference is
//! gone; it calls `dealloc_driver` just before, which is where the driver's data is dropped.

use super::{object::IbObject, uqueue::MmapTable};
use crate::ffi;
use crate::net::netdev::{netdev_ref_from_raw, NetDev, NetDevRef};
use core::{
    marker::PhantomData,
    mem::size_of,
    ptr::{addr_of_mut, NonNull},
};
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

/// The verbs of an RDMA device itself. Methods run in process context. Optional ones (`HAS_*`,
/// `#[vtable]`) leave their op unset: ib_core then answers `EOPNOTSUPP` or does without.
#[vtable]
pub(crate) trait DeviceOps: Send + Sync + Sized + 'static {
    /// Per user context data (`ibv_open_device`).
    type Ucontext: Send + Sync;
    /// Per protection domain data.
    type Pd: Send + Sync;

    /// `ib_device_ops.driver_id`: an `RDMA_DRIVER_*` no other driver uses.
    /// [`DeviceRef::from_netdev`], [`DevicePart::device`] and [`DriverRegistration`] find the
    /// driver's devices by it, and refuse `RDMA_DRIVER_UNKNOWN` (which any device matches) at
    /// compile time.
    const DRIVER_ID: ffi::rdma_driver_id;
    /// `ib_device_ops.uverbs_abi_ver`: the ABI the user-space provider checks.
    const UVERBS_ABI_VERSION: u32;

    /// `query_device`.
    fn query_device(dev: &Device<Self>, attr: &mut DeviceAttr) -> Result;
    /// `query_port`.
    fn query_port(dev: &Device<Self>, port: u32, attr: &mut PortAttr) -> Result;
    /// `query_pkey`.
    fn query_pkey(dev: &Device<Self>, port: u32, index: u16) -> Result<u16>;
    /// `modify_device` (optional).
    fn modify_device(_dev: &Device<Self>, _mask: i32, _attr: &DeviceModify) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `modify_port` (optional).
    fn modify_port(_dev: &Device<Self>, _port: u32, _mask: i32, _attr: &PortModify) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `get_port_immutable`.
    fn port_immutable(dev: &Device<Self>, port: u32, imm: &mut PortImmutable) -> Result;
    /// `get_link_layer`: true for Ethernet.
    fn link_layer_is_ethernet(dev: &Device<Self>, port: u32) -> bool;
    /// `enable_driver`: the device is registered and visible.
    fn enable(dev: &Device<Self>) -> Result;

    /// Names of the hardware counters (`rdma statistic show`), in index order (optional, with
    /// `read_counters`).
    const COUNTER_NAMES: &'static [&'static CStr] = &[];
    /// Current values of the counters, `values.len() == COUNTER_NAMES.len()` (optional: without
    /// it the device has no hardware counters).
    fn read_counters(_dev: &Device<Self>, _values: &mut [u64]) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
    /// `process_mad` (optional: without it MADs get no answer from the driver): the answer to
    /// the MAD `input` received on `port_num`, written to `out`; `IB_MAD_RESULT_*` flags.
    fn process_mad(
        _dev: &Device<Self>,
        _port_num: u32,
        _input: &[u8; MAD_SIZE],
        _out: &mut [u8; MAD_SIZE],
    ) -> i32 {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `alloc_ucontext`.
    fn alloc_ucontext(dev: &Device<Self>) -> Result<Self::Ucontext>;
    /// `dealloc_ucontext`; the data is dropped after it.
    fn dealloc_ucontext(dev: &Device<Self>, uc: &Self::Ucontext);
    /// `alloc_pd`.
    fn alloc_pd(dev: &Device<Self>) -> Result<Self::Pd>;
    /// `dealloc_pd`; the data is dropped after it.
    fn dealloc_pd(dev: &Device<Self>, pd: &Self::Pd);
}

/// `T::DRIVER_ID` for a lookup of `T`'s devices by it; a build error for
/// `RDMA_DRIVER_UNKNOWN`, which `ib_device_get_by_netdev` matches on any device.
const fn own_driver_id<T: DeviceOps>() -> ffi::rdma_driver_id {
    assert!(
        T::DRIVER_ID != ffi::rdma_driver_id_RDMA_DRIVER_UNKNOWN,
        "a driver looking up its devices needs an RDMA_DRIVER_* of its own"
    );
    T::DRIVER_ID
}

/// Bytes of a MAD as `process_mad` sees it (`struct ib_mad`).
pub(crate) const MAD_SIZE: usize = core::mem::size_of::<ffi::ib_mad>();

/// A protection domain's identity (its address), for the data path's PD checks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct PdId(pub(super) usize);

impl PdId {
    /// The identity as a number, for the pure checks of `proto`.
    pub(crate) fn raw(self) -> usize {
        self.0
    }
}

/// Static description of a device, set before registration.
pub(crate) struct DeviceInfo<'a> {
    /// `node_desc`.
    pub(crate) node_desc: &'a CStr,
    /// `node_guid`, as it goes on the wire (big-endian bytes).
    pub(crate) node_guid: [u8; 8],
    /// `num_comp_vectors`: the completion vectors consumers may spread their CQs over.
    pub(crate) comp_vectors: u32,
    /// `local_dma_lkey`: the lkey of all of kernel memory, for kernel consumers' SGEs.
    pub(crate) local_dma_lkey: u32,
    /// The uverbs write commands the device takes beyond ib_uverbs' default set.
    pub(crate) extra_uverbs_cmds: UverbsCmds,
}

/// A set of uverbs write commands (bits of `ib_device.uverbs_cmd_mask`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct UverbsCmds(u64);

impl UverbsCmds {
    /// `IB_USER_VERBS_CMD_REQ_NOTIFY_CQ`: a driver whose user CQs are armed in the kernel.
    pub(crate) const REQ_NOTIFY_CQ: Self =
        Self(1 << ffi::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
    /// `IB_USER_VERBS_CMD_POST_SEND`: a driver whose send doorbell is a system call.
    pub(crate) const POST_SEND: Self =
        Self(1 << ffi::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND);
}

impl core::ops::BitOr for UverbsCmds {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
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

    pub(super) fn as_raw(&self) -> *mut ffi::ib_device {
        self.ib.get()
    }

    /// # Safety
    ///
    /// `ib` is the `ib_device` of a `Device<T>` whose data is initialised, valid for `'a`.
    pub(super) unsafe fn from_raw<'a>(ib: *mut ffi::ib_device) -> &'a Self {
        // SAFETY: `ib` is the first field of the `repr(C)` `Device<T>` (per the caller).
        unsafe { &*ib.cast::<Self>() }
    }

    /// The device of an object ib_core made on it.
    ///
    /// # Safety
    ///
    /// `obj` is a valid object of a `Device<T>` that lives for `'a` (ib_core holds the device
    /// while any of its objects exists).
    pub(super) unsafe fn of<'a, R: IbObject>(obj: *mut R) -> &'a Self {
        // SAFETY: `obj` is valid and names its device (the caller's contract).
        let ib = unsafe { R::device(obj) };
        // SAFETY: the device is a `Device<T>` with initialised data (the caller's contract).
        unsafe { Self::from_raw(ib) }
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
        unsafe { netdev_ref_from_raw(ffi::ib_device_get_netdev(self.as_raw(), 1)) }
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
        let ib = unsafe {
            ffi::ib_device_get_by_netdev(netdev.as_raw(), const { own_driver_id::<T>() })
        };
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

impl<T: DeviceOps> DeviceRef<T> {
    /// The reference, narrowed to the part `part` picks of the driver's data: a holder reaches
    /// that part only, and need not name the driver's type.
    pub(crate) fn project<P>(self, part: impl FnOnce(&T) -> &P) -> DevicePart<P> {
        let part = NonNull::from(part(self.data()));
        let ib = self.0;
        // The reference moves into the `DevicePart`.
        core::mem::forget(self);
        DevicePart { ib, part }
    }
}

/// A counted reference to a registered device (`ib_device_put` on drop) through which one
/// part `P` of its driver data is reached ([`DeviceRef::project`]).
///
/// # Invariants
///
/// `ib` is a device we hold one reference to; `part` points into its driver data, which lives
/// until `dealloc_driver`, after the last reference is gone.
pub(crate) struct DevicePart<P> {
    ib: *mut ffi::ib_device,
    part: NonNull<P>,
}

// SAFETY: device references may be dropped from any context; `P` is only shared.
unsafe impl<P: Sync> Send for DevicePart<P> {}
// SAFETY: shared access only reads through `&P`.
unsafe impl<P: Sync> Sync for DevicePart<P> {}

impl<P> DevicePart<P> {
    /// The whole device, if it is one of driver `T`'s (as [`DeviceRef::from_netdev`], by the
    /// driver id ib_core keeps in its ops).
    pub(crate) fn device<T: DeviceOps>(&self) -> Option<&Device<T>> {
        // SAFETY: we hold a reference to `ib` (the type invariant); `ops` is set before
        // registration and never changes after.
        let driver_id = unsafe { (*self.ib).ops.driver_id };
        let ours = driver_id == const { own_driver_id::<T>() };
        // SAFETY: a device with `T`'s driver id is a `Device<T>` with initialised data, alive
        // while we hold it.
        ours.then(|| unsafe { Device::from_raw(self.ib) })
    }
}

impl<P> core::ops::Deref for DevicePart<P> {
    type Target = P;
    fn deref(&self) -> &P {
        // SAFETY: the part lives while we hold the device (the type invariant).
        unsafe { self.part.as_ref() }
    }
}

impl<P> Drop for DevicePart<P> {
    fn drop(&mut self) {
        // SAFETY: we own one reference (the type invariant).
        unsafe { ffi::ib_device_put(self.ib) };
    }
}

/// Allocates, sets up and registers a device named `name` over `netdev`.
///
/// `ops` is the driver's complete ops table (`driver::OperationsVTable`).
pub(super) fn register<T: DeviceOps>(
    name: &CStr,
    netdev: &NetDev,
    info: &DeviceInfo<'_>,
    data: T,
    ops: &'static ffi::ib_device_ops,
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
        d.num_comp_vectors = i32::try_from(info.comp_vectors).unwrap_or(i32::MAX);
        d.local_dma_lkey = info.local_dma_lkey;
        d.node_guid = u64::from_ne_bytes(info.node_guid);
        d.uverbs_cmd_mask |= info.extra_uverbs_cmds.0;
        ffi::rxe_rs_ib_mark_name_assigned_by_user(ib);
        ffi::ib_set_device_ops(ib, ops);
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
        unsafe { ffi::ib_unregister_driver(const { own_driver_id::<T>() }) };
    }
}

// The trampolines below are only installed on `Device<T>` devices (by `register`), whose data is
// initialised before the ops are set and dropped only by `dealloc_driver`, the last op.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn dealloc_driver<T: DeviceOps>(ib: *mut ffi::ib_device) {
    let dev = ib.cast::<Device<T>>();
    // SAFETY: last call on this device (its stats are gone): drop what ib_core is about to
    // free, each field once.
    unsafe { core::ptr::drop_in_place(addr_of_mut!((*dev).data)) };
    // SAFETY: as above.
    unsafe { core::ptr::drop_in_place(addr_of_mut!((*dev).stat_descs)) };
    // SAFETY: as above.
    unsafe { core::ptr::drop_in_place(addr_of_mut!((*dev).mmaps)) };
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn enable_driver<T: DeviceOps>(
    ib: *mut ffi::ib_device,
) -> kernel::ffi::c_int {
    // SAFETY: see the note above the trampolines.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    from_result(|| T::enable(dev).map(|()| 0))
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn alloc_hw_port_stats<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn get_hw_stats<T: DeviceOps>(
    ib: *mut ffi::ib_device,
    stats: *mut ffi::rdma_hw_stats,
    port: u32,
    _index: kernel::ffi::c_int,
) -> kernel::ffi::c_int {
    if port == 0 || stats.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: see the note above the trampolines.
    let dev = unsafe { Device::<T>::from_raw(ib) };
    // SAFETY: `stats` came from `alloc_hw_port_stats`, so it has `num_counters` values, and
    // ib_core holds its lock.
    let values = unsafe {
        let n = ((*stats).num_counters as usize).min(T::COUNTER_NAMES.len());
        (*stats).value.as_mut_slice(n)
    };
    T::read_counters(dev, values);
    values.len() as kernel::ffi::c_int
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn query_device<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn query_port<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn query_pkey<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn modify_device<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn modify_port<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn get_port_immutable<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn get_link_layer<T: DeviceOps>(
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
pub(super) unsafe extern "C" fn process_mad<T: DeviceOps>(
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
    // SAFETY: the device is one of ours (the ops table is only installed on them).
    let dev = unsafe { Device::<T>::from_raw(ibdev) };
    // SAFETY: ib_core passes a full `ib_mad`, only read during the call.
    let input = unsafe { &*in_mad.cast::<[u8; MAD_SIZE]>() };
    // SAFETY: ib_core passes a full `ib_mad` to fill, not aliased by `in_mad`.
    let out = unsafe { &mut *out_mad.cast::<[u8; MAD_SIZE]>() };
    T::process_mad(dev, port_num, input, out)
}
