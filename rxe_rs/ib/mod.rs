// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around ib_core, for writing an RDMA driver in Rust: the verbs traits a driver
//! implements, the `struct ib_device_ops` built from them, device and link registration, and
//! the objects ib_core hands over. Everything a driver needs from ib_core comes through here;
//! the net_device is in `net/`, generic kernel helpers (a `timer_list`, an `Arc` slot) in
//! `kernel_ext/`. `skeleton.rs` is the smallest complete driver, compiled with the module;
//! `rxe/` is the real one.
//!
//! # What the layer gives
//!
//! - One `#[vtable]` trait per object family, each in its file with the `unsafe extern "C"`
//!   callbacks that call it: [`DeviceOps`] (`device.rs`: device and port queries, P_Keys,
//!   counters, MADs, user contexts and PDs), [`CqOps`] (`cq.rs`), [`SrqOps`] (`srq.rs`),
//!   [`MrOps`] (`mr.rs`: MRs and MWs), [`AhOps`] (`ah.rs`) and [`QpOps`] (`qp.rs`), which
//!   requires all the others. A verb takes the device (`&Device<Self>`) and the object's data,
//!   and answers with plain Rust values ([`cq::PolledWc`], [`qp::QpAttrs`], [`mr::Sge`], ...)
//!   or `Err(errno)`.
//! - The ops table, built at compile time ([`driver::OperationsVTable`]): the op of a required
//!   method is always set, that of an optional one only when the driver implements it (the
//!   trait's `HAS_*`), so that ib_core answers `EOPNOTSUPP` or does without, as it does for C
//!   drivers. Optional: `modify_device`, `modify_port`, `read_counters` (with
//!   `COUNTER_NAMES`), `process_mad`; `resize_cq`; `modify_srq`, `query_srq`;
//!   `rereg_user_mr`, `advise_mr`, `alloc_mw` with `dealloc_mw`; `attach_mcast` with
//!   `detach_mcast`. Everything else is required.
//! - Object data stored in ib_core's allocation: each family names its data type (`type Cq`,
//!   `type Qp`, ...; `()` for none). ib_core allocates `ib_*` struct and data in one block
//!   (`size_ib_*`, `object.rs`); the create verb returns the data, which the layer writes in
//!   place, later verbs get `&data`, and the layer drops it after the destroy verb (after a
//!   successful one, for the destroys that can fail). MRs, which ib_core does not allocate,
//!   are boxed by the layer. The device itself is a [`Device<T>`](device::Device): the
//!   `ib_device` with the driver's `T` after it ([`Device::data`](device::Device::data)),
//!   dropped when ib_core frees the device.
//! - Registration: [`driver::register`] allocates a device of `T` with one port over a
//!   net_device, as [`DeviceInfo`](device::DeviceInfo) describes it, and registers it under the
//!   name given; [`DriverRegistration<T>`](device::DriverRegistration) unregisters every device
//!   of `T` when dropped. [`LinkRegistration<L>`](link::LinkRegistration) registers a link
//!   type, whose [`LinkOps::newlink`](link::LinkOps::newlink) `rdma link add` calls.
//! - For the data path: counted device references ([`device::DeviceRef`],
//!   [`device::DevicePart`]), handles to raise events and call completion handlers
//!   ([`handles`]), user requests, queues shared with user space and their mmap offers
//!   ([`uqueue`]), pinned and on-demand user memory ([`mr::Umem`], [`odp`]) and the pages of
//!   MRs ([`mem`]), and ib_core's constants under their C names ([`consts`]).
//!
//! # Writing a driver
//!
//! 1. A type for the per-device data, and [`DeviceOps`] for it with `#[vtable]`: the object
//!    types of user contexts and PDs, `DRIVER_ID` (an `RDMA_DRIVER_*` of its own: devices are
//!    found by it) and the ABI version its rdma-core provider checks, then the verbs.
//! 2. [`CqOps`], [`SrqOps`], [`MrOps`], [`AhOps`] and [`QpOps`] for the same type, each with
//!    `#[vtable]`: the object's data type and its verbs. Implement the optional methods the
//!    device supports and leave the others out.
//! 3. A [`LinkOps`](link::LinkOps) type whose `newlink` makes the per-device data and calls
//!    [`driver::register`].
//! 4. In the module, a pinned [`LinkRegistration`](link::LinkRegistration) of it and a
//!    [`DriverRegistration`](device::DriverRegistration) of the driver, the link first so that
//!    it goes first at unload (`rxe_rs.rs`).
//!
//! # Example
//!
//! An excerpt of `skeleton.rs`, which has the whole of it and is compiled with the module (its
//! objects carry nothing, it creates none, its queries answer defaults); the module part is as
//! in `rxe_rs.rs`:
//!
//! ```ignore
//! use crate::ib::{
//!     consts::RDMA_DRIVER_UNKNOWN,
//!     cq::{CqInit, CqOps},
//!     device::{Device, DeviceAttr, DeviceInfo, DeviceOps, UverbsCmds},
//!     driver,
//!     handles::CqHandle,
//!     link::LinkOps,
//!     uqueue::UserReq,
//!     // ...
//! };
//! use crate::net::netdev::NetDev;
//! use kernel::prelude::*;
//!
//! struct Skeleton;
//!
//! #[vtable]
//! impl DeviceOps for Skeleton {
//!     type Ucontext = ();
//!     type Pd = ();
//!
//!     const DRIVER_ID: u32 = RDMA_DRIVER_UNKNOWN;
//!     const UVERBS_ABI_VERSION: u32 = 1;
//!
//!     fn query_device(_dev: &Device<Self>, attr: &mut DeviceAttr) -> Result {
//!         *attr = DeviceAttr::default();
//!         Ok(())
//!     }
//!
//!     fn alloc_pd(_dev: &Device<Self>) -> Result {
//!         Ok(())
//!     }
//!
//!     fn dealloc_pd(_dev: &Device<Self>, _pd: &()) {}
//!
//!     // query_port, query_pkey, port_immutable, link_layer_is_ethernet, enable,
//!     // alloc_ucontext, dealloc_ucontext; none of the optional methods.
//! }
//!
//! #[vtable]
//! impl CqOps for Skeleton {
//!     type Cq = ();
//!
//!     fn create_cq(
//!         _dev: &Device<Self>,
//!         _attr: &CqInit,
//!         _user: Option<UserReq>,
//!         _handle: CqHandle,
//!     ) -> Result<((), u32)> {
//!         Err(EOPNOTSUPP)
//!     }
//!
//!     // destroy_cq, req_notify_cq, poll_cq.
//! }
//!
//! // SrqOps, MrOps, AhOps and QpOps alike.
//!
//! struct SkeletonLink;
//!
//! impl LinkOps for SkeletonLink {
//!     const TYPE: &'static CStr = c"skeleton";
//!
//!     fn newlink(ibdev_name: &CStr, netdev: &NetDev) -> Result {
//!         let info = DeviceInfo {
//!             node_desc: c"skeleton",
//!             node_guid: [0; 8],
//!             comp_vectors: 1,
//!             local_dma_lkey: 0,
//!             extra_uverbs_cmds: UverbsCmds::default(),
//!         };
//!         driver::register(ibdev_name, netdev, &info, Skeleton)
//!     }
//! }
//!
//! // The module, as rxe_rs.rs has it for rxe. Not in skeleton.rs: with a DRIVER_ID that is no
//! // driver's own, DriverRegistration<Skeleton> does not build.
//! module! {
//!     type: SkeletonModule,
//!     name: "skeleton",
//!     license: "GPL",
//! }
//!
//! #[pin_data]
//! struct SkeletonModule {
//!     #[pin]
//!     link: LinkRegistration<SkeletonLink>,
//!     devices: DriverRegistration<Skeleton>,
//! }
//!
//! impl kernel::InPlaceModule for SkeletonModule {
//!     fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
//!         try_pin_init!(Self {
//!             devices: DriverRegistration::new(),
//!             link <- LinkRegistration::new(),
//!         })
//!     }
//! }
//! ```
//!
//! # Rules
//!
//! - Context: every verb may sleep (process context) but those ib_core's kernel users call
//!   from any context, softirq and hard irq included, which must not sleep and allocate with
//!   `GFP_ATOMIC`: `poll_cq` and `req_notify_cq`; `post_srq_recv`; `post_send_kernel`,
//!   `kick_send` and `post_recv`; `create_ah` and `destroy_ah` (their callers may be atomic
//!   when they do not pass `RDMA_CREATE_AH_SLEEPABLE` or `RDMA_DESTROY_AH_SLEEPABLE`); and
//!   `map_mr_sg_start`, `map_mr_page` and `map_mr_sg_end`, which run in whatever context the
//!   ULP calls `ib_map_mr_sg` from. `newlink` runs under RTNL; `enable` runs once the device is
//!   registered. Each trait's documentation says the same for its family.
//! - Process-context code that takes a lock the data path also takes in softirq holds a
//!   [`handles::BhDisabled`]; work that sleeps goes to [`handles::unbound_wq`].
//! - An object's data lives until its destroy verb returns; a [`handles`] handle given at
//!   create must not be used after that.
//! - A device has one port, port 1, over the net_device it was registered with.
//! - The C side: `struct ib_device_ops` and the structs of every verb (`ib_device_attr`,
//!   `ib_port_attr`, `ib_qp_init_attr`, `ib_qp_attr`, `ib_send_wr`, `ib_wc`, `rdma_ah_attr`, ...)
//!   are in `include/rdma/ib_verbs.h`, user memory in `include/rdma/ib_umem.h`,
//!   `struct rdma_link_ops` in `include/rdma/rdma_netlink.h`, `enum rdma_driver_id` in
//!   `include/uapi/rdma/ib_user_ioctl_verbs.h`; ib_core's callers are in
//!   `drivers/infiniband/core/` (`device.c`: registration; `verbs.c`: kernel verbs;
//!   `uverbs_cmd.c`: user verbs). Each Rust item's documentation names the C struct or op it
//!   stands for; their bindgen output is `crate::ffi`.
//! - `ib/` uses only `ffi` and `net`, and a driver does not use `ffi` (the layer table of
//!   `Documentation/architecture.md`): `skeleton.rs` uses `ib/`, `net/` and the `kernel` crate
//!   only.
//!
//! [`DeviceOps`]: device::DeviceOps
//! [`CqOps`]: cq::CqOps
//! [`SrqOps`]: srq::SrqOps
//! [`MrOps`]: mr::MrOps
//! [`AhOps`]: ah::AhOps
//! [`QpOps`]: qp::QpOps

pub(crate) mod ah;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod driver;
pub(crate) mod handles;
pub(crate) mod link;
pub(crate) mod mem;
pub(crate) mod mr;
mod object;
pub(crate) mod odp;
pub(crate) mod qp;
mod skeleton;
pub(crate) mod srq;
mod ucontext;
pub(crate) mod uqueue;

/// ib_core constants the driver uses, under the names of `include/rdma/ib_verbs.h`.
pub(crate) mod consts {
    pub(crate) use crate::ffi::{
        ib_atomic_cap_IB_ATOMIC_HCA as IB_ATOMIC_HCA,
        ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS as IB_CQ_REPORT_MISSED_EVENTS,
        ib_cq_notify_flags_IB_CQ_SOLICITED_MASK as IB_CQ_SOLICITED_MASK,
        ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE as IB_DEVICE_ATOMIC_WRITE,
        ib_device_cap_flags_IB_DEVICE_AUTO_PATH_MIG as IB_DEVICE_AUTO_PATH_MIG,
        ib_device_cap_flags_IB_DEVICE_BAD_PKEY_CNTR as IB_DEVICE_BAD_PKEY_CNTR,
        ib_device_cap_flags_IB_DEVICE_BAD_QKEY_CNTR as IB_DEVICE_BAD_QKEY_CNTR,
        ib_device_cap_flags_IB_DEVICE_CHANGE_PHY_PORT as IB_DEVICE_CHANGE_PHY_PORT,
        ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as IB_DEVICE_FLUSH_GLOBAL,
        ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT as IB_DEVICE_FLUSH_PERSISTENT,
        ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as IB_DEVICE_MEM_MGT_EXTENSIONS,
        ib_device_cap_flags_IB_DEVICE_MEM_WINDOW as IB_DEVICE_MEM_WINDOW,
        ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B as IB_DEVICE_MEM_WINDOW_TYPE_2B,
        ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as IB_DEVICE_PORT_ACTIVE_EVENT,
        ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as IB_DEVICE_RC_RNR_NAK_GEN,
        ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE as IB_DEVICE_SRQ_RESIZE,
        ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID as IB_DEVICE_SYS_IMAGE_GUID,
        ib_device_cap_flags_IB_DEVICE_UD_AV_PORT_ENFORCE as IB_DEVICE_UD_AV_PORT_ENFORCE,
        ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC as IB_DEVICE_MODIFY_NODE_DESC,
        ib_device_modify_flags_IB_DEVICE_MODIFY_SYS_IMAGE_GUID as IB_DEVICE_MODIFY_SYS_IMAGE_GUID,
        ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG as IBK_ALLOW_USER_UNREG,
        ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING as IBK_ON_DEMAND_PAGING,
        ib_mtu_IB_MTU_4096 as IB_MTU_4096,
        ib_odp_general_cap_bits_IB_ODP_SUPPORT as IB_ODP_SUPPORT,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC as IB_ODP_SUPPORT_ATOMIC,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC_WRITE as IB_ODP_SUPPORT_ATOMIC_WRITE,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_FLUSH as IB_ODP_SUPPORT_FLUSH,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ as IB_ODP_SUPPORT_READ,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV as IB_ODP_SUPPORT_RECV,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND as IB_ODP_SUPPORT_SEND,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV as IB_ODP_SUPPORT_SRQ_RECV,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE as IB_ODP_SUPPORT_WRITE,
        ib_port_capability_mask_bits_IB_PORT_CM_SUP as IB_PORT_CM_SUP,
        ib_port_modify_flags_IB_PORT_RESET_QKEY_CNTR as IB_PORT_RESET_QKEY_CNTR,
        ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as IB_PORT_PHYS_STATE_DISABLED,
        ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as IB_PORT_PHYS_STATE_LINK_UP,
        ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING as IB_PORT_PHYS_STATE_POLLING,
        ib_port_state_IB_PORT_ACTIVE as IB_PORT_ACTIVE, ib_port_state_IB_PORT_DOWN as IB_PORT_DOWN,
        ib_port_width_IB_WIDTH_1X as IB_WIDTH_1X,
        rdma_driver_id_RDMA_DRIVER_RXE as RDMA_DRIVER_RXE,
        rdma_driver_id_RDMA_DRIVER_UNKNOWN as RDMA_DRIVER_UNKNOWN, IB_MGMT_MAD_SIZE,
        RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP,
    };
}
