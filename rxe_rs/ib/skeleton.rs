// SPDX-License-Identifier: GPL-2.0

//! The smallest complete driver of the `ib` layer, the example of the how-to in `ib/mod.rs`:
//! every verbs trait implemented, objects that carry nothing, creation verbs that answer
//! `EOPNOTSUPP` where a real driver does its work, queries that answer plain defaults, and a
//! link type whose `newlink` registers a device.
//!
//! It is compiled into the module with its ops table and registration, but never runs: the
//! module registers no `skeleton` link type, so no device of it ever exists.

use crate::ib::{
    ah::{AhInit, AhOps, GlobalRoute},
    consts::{
        IB_MGMT_MAD_SIZE, IB_PORT_DOWN, IB_PORT_PHYS_STATE_DISABLED,
        RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP, RDMA_DRIVER_UNKNOWN,
    },
    cq::{CqInit, CqOps, PolledWc},
    device::{
        Device, DeviceAttr, DeviceInfo, DeviceOps, PdId, PortAttr, PortImmutable, UverbsCmds,
    },
    driver,
    handles::{CqHandle, SrqHandle},
    link::LinkOps,
    mr::{MrOps, Sge, UserMrReq},
    qp::{KernelSendWr, QpAttrs, QpCap, QpInit, QpLinks, QpOps},
    srq::{SrqAttr, SrqOps},
    uqueue::UserReq,
};
use crate::net::netdev::NetDev;
use kernel::prelude::*;

/// The driver's per-device data (`Device::data`): none here.
struct Skeleton;

#[vtable]
impl DeviceOps for Skeleton {
    type Ucontext = ();
    type Pd = ();

    // No id of its own (a real driver adds one to `enum rdma_driver_id`), so no lookup of its
    // devices by id builds for it: `DeviceRef::from_netdev`, `DriverRegistration`.
    const DRIVER_ID: u32 = RDMA_DRIVER_UNKNOWN;
    // What the driver's rdma-core provider expects; the skeleton has none.
    const UVERBS_ABI_VERSION: u32 = 1;

    fn query_device(_dev: &Device<Self>, attr: &mut DeviceAttr) -> Result {
        // No limits and no capabilities: the device can make nothing.
        *attr = DeviceAttr::default();
        Ok(())
    }

    fn query_port(_dev: &Device<Self>, _port: u32, attr: &mut PortAttr) -> Result {
        // Nothing behind the port: down.
        *attr = PortAttr::default();
        attr.state = IB_PORT_DOWN;
        attr.phys_state = IB_PORT_PHYS_STATE_DISABLED as u8;
        Ok(())
    }

    fn query_pkey(_dev: &Device<Self>, _port: u32, index: u16) -> Result<u16> {
        // One entry, the default P_Key with full membership.
        if index != 0 {
            return Err(EINVAL);
        }
        Ok(0xffff)
    }

    fn port_immutable(_dev: &Device<Self>, _port: u32, imm: &mut PortImmutable) -> Result {
        // A RoCE v2 port with one GID and one P_Key.
        imm.core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
        imm.pkey_tbl_len = 1;
        imm.gid_tbl_len = 1;
        imm.max_mad_size = IB_MGMT_MAD_SIZE;
        Ok(())
    }

    fn link_layer_is_ethernet(_dev: &Device<Self>, _port: u32) -> bool {
        true
    }

    fn enable(_dev: &Device<Self>) -> Result {
        Ok(())
    }

    fn alloc_ucontext(_dev: &Device<Self>) -> Result {
        Ok(())
    }

    fn dealloc_ucontext(_dev: &Device<Self>, _uc: &()) {}

    fn alloc_pd(_dev: &Device<Self>) -> Result {
        Ok(())
    }

    fn dealloc_pd(_dev: &Device<Self>, _pd: &()) {}
}

// The objects below are never made, so their other verbs are never called: they answer as for
// an object with nothing in it. (A registered device of this driver would have no MAD or CM
// service either: ib_core's clients fail to make their CQs and QPs on it, log it, and go on.)

#[vtable]
impl CqOps for Skeleton {
    type Cq = ();

    fn create_cq(
        _dev: &Device<Self>,
        _attr: &CqInit,
        _user: Option<UserReq>,
        _handle: CqHandle,
    ) -> Result<((), u32)> {
        Err(EOPNOTSUPP)
    }

    fn destroy_cq(_dev: &Device<Self>, _cq: &()) -> Result {
        Ok(())
    }

    fn req_notify_cq(_dev: &Device<Self>, _cq: &(), _flags: u32) -> Result<bool> {
        // No completion was missed.
        Ok(false)
    }

    fn poll_cq(_dev: &Device<Self>, _cq: &(), _out: &mut [PolledWc]) -> usize {
        0
    }
}

#[vtable]
impl SrqOps for Skeleton {
    type Srq = ();

    fn create_srq(
        _dev: &Device<Self>,
        _attr: &mut SrqAttr,
        _srq_type: u32,
        _user: Option<UserReq>,
        _handle: SrqHandle,
    ) -> Result<((), u32)> {
        Err(EOPNOTSUPP)
    }

    fn destroy_srq(_dev: &Device<Self>, _srq: &()) {}

    fn post_srq_recv(_dev: &Device<Self>, _srq: &(), _wr_id: u64, _sges: &[Sge]) -> Result {
        Err(EOPNOTSUPP)
    }
}

#[vtable]
impl MrOps for Skeleton {
    type Mr = ();
    type Mw = ();

    fn get_dma_mr(_dev: &Device<Self>, _pd: PdId, _access: i32) -> Result<((), u32)> {
        // `ib_alloc_pd` asks for one per kernel PD (no `IBK_LOCAL_DMA_LKEY`): those fail too.
        Err(EOPNOTSUPP)
    }

    fn reg_user_mr(_dev: &Device<Self>, _req: &UserMrReq) -> Result<((), u32)> {
        Err(EOPNOTSUPP)
    }

    fn alloc_mr(_dev: &Device<Self>, _pd: PdId, _type: u32, _max_sg: u32) -> Result<((), u32)> {
        Err(EOPNOTSUPP)
    }

    fn map_mr_sg_start(_mr: &(), _page_size: u32) -> Result {
        Err(EOPNOTSUPP)
    }

    fn map_mr_page(_mr: &(), _addr: u64) -> Result {
        Err(EOPNOTSUPP)
    }

    fn map_mr_sg_end(_mr: &(), _iova: u64, _length: u64) {}

    fn dereg_mr(_dev: &Device<Self>, _mr: &()) -> Result {
        Ok(())
    }
}

#[vtable]
impl AhOps for Skeleton {
    type Ah = ();

    fn create_ah(_dev: &Device<Self>, _attr: &AhInit, _user: Option<UserReq>) -> Result {
        Err(EOPNOTSUPP)
    }

    fn query_ah(_dev: &Device<Self>, _ah: &()) -> (u32, GlobalRoute) {
        (1, GlobalRoute::default())
    }

    fn destroy_ah(_dev: &Device<Self>, _ah: &()) {}
}

#[vtable]
impl QpOps for Skeleton {
    type Qp = ();

    fn create_qp(
        _dev: &Device<Self>,
        _init: &mut QpInit,
        _links: QpLinks<'_, Self>,
        _user: Option<UserReq>,
    ) -> Result<((), u32)> {
        Err(EOPNOTSUPP)
    }

    fn modify_qp(_dev: &Device<Self>, _qp: &(), _attr: &QpAttrs, _mask: u32) -> Result {
        Err(EOPNOTSUPP)
    }

    fn query_qp(_dev: &Device<Self>, _qp: &()) -> (QpAttrs, QpCap) {
        (QpAttrs::default(), QpCap::default())
    }

    fn destroy_qp(_dev: &Device<Self>, _qp: &()) -> Result {
        Ok(())
    }

    fn post_send_user(_dev: &Device<Self>, _qp: &()) -> Result {
        Err(EOPNOTSUPP)
    }

    fn post_send_kernel(_dev: &Device<Self>, _qp: &(), _wr: &KernelSendWr<'_, Self>) -> Result {
        Err(EOPNOTSUPP)
    }

    // Nothing was queued, so there is nothing to start.
    fn kick_send(_dev: &Device<Self>, _qp: &()) {}

    fn post_recv(_dev: &Device<Self>, _qp: &(), _wr_id: u64, _sges: &[Sge]) -> Result {
        Err(EOPNOTSUPP)
    }
}

/// `rdma link add NAME type skeleton netdev DEV`, had the module registered the link type
/// (`LinkRegistration<SkeletonLink>`).
struct SkeletonLink;

impl LinkOps for SkeletonLink {
    const TYPE: &'static CStr = c"skeleton";

    fn newlink(ibdev_name: &CStr, netdev: &NetDev) -> Result {
        let info = DeviceInfo {
            node_desc: c"skeleton",
            // A real driver takes it from its hardware (rxe: the netdev's MAC as an EUI-64).
            node_guid: [0; 8],
            comp_vectors: 1,
            // Unused: `query_device` does not claim `IBK_LOCAL_DMA_LKEY`.
            local_dma_lkey: 0,
            extra_uverbs_cmds: UverbsCmds::default(),
        };
        driver::register(ibdev_name, netdev, &info, Skeleton)
    }
}

/// Keeps `newlink`, and with it `driver::register::<Skeleton>` and the skeleton's ops table, in
/// the module, so that the build compiles and links them. Nothing calls it.
#[used]
static NEWLINK: fn(&CStr, &NetDev) -> Result = <SkeletonLink as LinkOps>::newlink;
