// SPDX-License-Identifier: GPL-2.0

//! A whole RDMA driver: every verbs trait of the `ib` layer, the `ib_device_ops` table built
//! from them at compile time, and device registration with that table.

use super::{
    ah::{self, AhOps},
    cq::{self, CqObject},
    device::{self, DeviceInfo, DeviceOps},
    mr::{self, MrOps},
    object::Object,
    qp::{self, QpOps},
    srq::{self, SrqOps},
    ucontext,
};
use crate::{ffi, net::netdev::NetDev};
use core::{marker::PhantomData, mem::size_of};
use kernel::{module::this_module, prelude::*};

/// The op `f` if the driver implements it (`has`: a `HAS_*` of its `#[vtable]` trait), else
/// NULL, which ib_core treats as "not supported".
const fn optional<F: Copy>(has: bool, f: F) -> Option<F> {
    if has {
        Some(f)
    } else {
        None
    }
}

/// A driver implementing every verbs trait; [`QpOps`] requires all the others.
pub(crate) trait Driver: QpOps {}

impl<T: QpOps> Driver for T {}

/// The `ib_device_ops` of driver `T`, built at compile time: an op is set when `T` implements
/// it (`HAS_*` of the `#[vtable]` traits), as `rust/kernel/block/mq/operations.rs` does for
/// `blk_mq_ops`. ib_core copies the table into each device (`ib_set_device_ops`).
pub(crate) struct OperationsVTable<T: Driver>(PhantomData<T>);

impl<T: Driver> OperationsVTable<T> {
    const VTABLE: ffi::ib_device_ops = ffi::ib_device_ops {
        // ib_core takes a module reference per open uverbs file through `owner`.
        owner: this_module::<<T as DeviceOps>::OwnerModule>().as_ptr(),
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VERSION,
        dealloc_driver: Some(device::dealloc_driver::<T>),
        enable_driver: Some(device::enable_driver::<T>),
        query_device: Some(device::query_device::<T>),
        query_port: Some(device::query_port::<T>),
        query_pkey: Some(device::query_pkey::<T>),
        modify_device: optional(T::HAS_MODIFY_DEVICE, device::modify_device::<T>),
        modify_port: optional(T::HAS_MODIFY_PORT, device::modify_port::<T>),
        get_port_immutable: Some(device::get_port_immutable::<T>),
        get_link_layer: Some(device::get_link_layer::<T>),
        alloc_hw_port_stats: optional(T::HAS_READ_COUNTERS, device::alloc_hw_port_stats::<T>),
        get_hw_stats: optional(T::HAS_READ_COUNTERS, device::get_hw_stats::<T>),
        process_mad: optional(T::HAS_PROCESS_MAD, device::process_mad::<T>),
        alloc_ucontext: Some(ucontext::alloc_ucontext::<T>),
        dealloc_ucontext: Some(ucontext::dealloc_ucontext::<T>),
        disassociate_ucontext: Some(ucontext::disassociate_ucontext),
        alloc_pd: Some(ucontext::alloc_pd::<T>),
        dealloc_pd: Some(ucontext::dealloc_pd::<T>),
        mmap: Some(ucontext::mmap::<T>),
        size_ib_ucontext: size_of::<Object<ffi::ib_ucontext, <T as DeviceOps>::Ucontext>>(),
        size_ib_pd: size_of::<Object<ffi::ib_pd, <T as DeviceOps>::Pd>>(),
        create_cq: Some(cq::create_cq::<T>),
        destroy_cq: Some(cq::destroy_cq::<T>),
        resize_user_cq: optional(T::HAS_RESIZE_CQ, cq::resize_cq::<T>),
        req_notify_cq: Some(cq::req_notify_cq::<T>),
        poll_cq: Some(cq::poll_cq::<T>),
        size_ib_cq: size_of::<CqObject<T>>(),
        get_dma_mr: Some(mr::get_dma_mr::<T>),
        reg_user_mr: Some(mr::reg_user_mr::<T>),
        rereg_user_mr: optional(T::HAS_REREG_USER_MR, mr::rereg_user_mr::<T>),
        dereg_mr: Some(mr::dereg_mr::<T>),
        alloc_mr: Some(mr::alloc_mr::<T>),
        map_mr_sg: Some(mr::map_mr_sg::<T>),
        alloc_mw: optional(T::HAS_ALLOC_MW, mr::alloc_mw::<T>),
        dealloc_mw: optional(T::HAS_ALLOC_MW, mr::dealloc_mw::<T>),
        advise_mr: optional(T::HAS_ADVISE_MR, mr::advise_mr::<T>),
        size_ib_mw: size_of::<Object<ffi::ib_mw, <T as MrOps>::Mw>>(),
        create_srq: Some(srq::create_srq::<T>),
        modify_srq: optional(T::HAS_MODIFY_SRQ, srq::modify_srq::<T>),
        query_srq: optional(T::HAS_QUERY_SRQ, srq::query_srq::<T>),
        destroy_srq: Some(srq::destroy_srq::<T>),
        post_srq_recv: Some(qp::post_srq_recv::<T>),
        size_ib_srq: size_of::<Object<ffi::ib_srq, <T as SrqOps>::Srq>>(),
        create_qp: Some(qp::create_qp::<T>),
        modify_qp: Some(qp::modify_qp::<T>),
        query_qp: Some(qp::query_qp::<T>),
        destroy_qp: Some(qp::destroy_qp::<T>),
        post_send: Some(qp::post_send::<T>),
        post_recv: Some(qp::post_recv::<T>),
        attach_mcast: optional(T::HAS_ATTACH_MCAST, qp::attach_mcast::<T>),
        detach_mcast: optional(T::HAS_ATTACH_MCAST, qp::detach_mcast::<T>),
        size_ib_qp: size_of::<Object<ffi::ib_qp, <T as QpOps>::Qp>>(),
        create_ah: Some(ah::create_ah::<T>),
        create_user_ah: Some(ah::create_ah::<T>),
        query_ah: Some(ah::query_ah::<T>),
        destroy_ah: Some(ah::destroy_ah::<T>),
        size_ib_ah: size_of::<Object<ffi::ib_ah, <T as AhOps>::Ah>>(),
        // SAFETY: every other member is a nullable function pointer or a plain integer, for
        // which all-zero is "absent".
        ..unsafe { core::mem::zeroed() }
    };

    /// The table.
    pub(crate) const fn build() -> &'static ffi::ib_device_ops {
        &Self::VTABLE
    }
}

/// Allocates, sets up and registers a device of driver `T` named `name` over `netdev`.
pub(crate) fn register<T: Driver>(
    name: &CStr,
    netdev: &NetDev,
    info: &DeviceInfo<'_>,
    data: T,
) -> Result {
    device::register(name, netdev, info, data, OperationsVTable::<T>::build())
}
