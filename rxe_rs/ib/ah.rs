// SPDX-License-Identifier: GPL-2.0

//! Address handles: the verbs a driver implements for them ([`AhOps`]), their `ib_device_ops`
//! callbacks, and the RoCE view of `struct rdma_ah_attr` that QPs' address vectors share.

use super::{
    device::{Device, DeviceOps},
    object::Object,
    uqueue::UserReq,
};
use crate::ffi;
use kernel::{error::from_result, prelude::*};

/// The global route of an address handle or a QP's path (`struct ib_global_route`, its source
/// GID by index).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GlobalRoute {
    /// Destination GID.
    pub(crate) dgid: [u8; 16],
    /// Flow label.
    pub(crate) flow_label: u32,
    /// Source GID table index.
    pub(crate) sgid_index: u8,
    /// Hop limit.
    pub(crate) hop_limit: u8,
    /// Traffic class.
    pub(crate) traffic_class: u8,
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

/// The address handle verbs of a driver.
#[vtable]
pub(crate) trait AhOps: DeviceOps {
    /// Per address handle data.
    type Ah: Send + Sync;

    /// `create_ah` / `create_user_ah`. May be called in atomic context (no
    /// `RDMA_CREATE_AH_SLEEPABLE`): must not sleep or allocate with `GFP_KERNEL`.
    fn create_ah(dev: &Device<Self>, attr: &AhInit, user: Option<UserReq>) -> Result<Self::Ah>;
    /// `query_ah`: port and global route.
    fn query_ah(dev: &Device<Self>, ah: &Self::Ah) -> (u32, GlobalRoute);
    /// `destroy_ah`; the data is dropped after it. May be called in atomic context too (no
    /// `RDMA_DESTROY_AH_SLEEPABLE`).
    fn destroy_ah(dev: &Device<Self>, ah: &Self::Ah);
}

pub(super) type AhObject<T> = Object<ffi::ib_ah, <T as AhOps>::Ah>;

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
        // SAFETY: `sgid_attr` is valid per the caller; its GID is a plain union of bytes.
        let sgid = unsafe { *(*sgid_attr).gid.raw.as_ref() };
        // SAFETY: `sgid_attr` is valid per the caller.
        let network_type = unsafe { ffi::rxe_rs_gid_attr_network_type(sgid_attr) } as u32;
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

// The callbacks below are only installed in the ops table of a `Device<T>` (`register`):
// ib_core calls them as their op, with every pointer argument valid for the call and naming
// objects of this device, which outlives them.

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn create_ah<T: AhOps>(
    ah: *mut ffi::ib_ah,
    init: *mut ffi::rdma_ah_init_attr,
    udata: *mut ffi::ib_udata,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core allocated `size_ib_ah` zeroed bytes on one of our devices; `init` and
    // its `ah_attr` are valid for the call.
    let (dev, ah_attr) = unsafe { (Device::<T>::of(ah), &*(*init).ah_attr) };
    // SAFETY: `udata` is null or valid for the call.
    let user = unsafe { UserReq::new(udata, core::ptr::null_mut(), dev.mmaps()) };
    from_result(|| {
        // SAFETY: ib_core sets a valid `sgid_attr` with the GRH flag.
        let init = unsafe { parse_ah_attr(ah_attr) }?;
        let data = T::create_ah(dev, &init, user)?;
        // SAFETY: the data slot of the new AH is unwritten until now.
        unsafe { AhObject::<T>::init(ah, data) };
        Ok(0)
    })
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn query_ah<T: AhOps>(
    ah: *mut ffi::ib_ah,
    attr: *mut ffi::rdma_ah_attr,
) -> kernel::ffi::c_int {
    // SAFETY: `create_ah` succeeded for this AH, so its data is initialised; `attr` is valid and
    // ours to fill.
    let (dev, data, attr) = unsafe { (Device::<T>::of(ah), AhObject::<T>::data(ah), &mut *attr) };
    let (port_num, route) = T::query_ah(dev, data);
    write_ah_attr(attr, port_num, &route);
    0
}

/// # Safety
///
/// Installed only in the ops table of a `Device<T>` (`register`): ib_core calls it as that op,
/// with every pointer argument valid for the call and naming objects of this device.
pub(super) unsafe extern "C" fn destroy_ah<T: AhOps>(
    ah: *mut ffi::ib_ah,
    _flags: u32,
) -> kernel::ffi::c_int {
    // SAFETY: `create_ah` succeeded for this AH, so its data is initialised.
    let (dev, data) = unsafe { (Device::<T>::of(ah), AhObject::<T>::data(ah)) };
    T::destroy_ah(dev, data);
    // SAFETY: this is the last call for the AH.
    unsafe { AhObject::<T>::drop_data(ah) };
    0
}
