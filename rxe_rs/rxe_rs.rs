// SPDX-License-Identifier: GPL-2.0

//! rxe-rs: a soft-RoCE (RDMA over Converged Ethernet v2) driver in Rust.
//!
//! Registers the `rxe` link type with ib_core, so `rdma link add rxe0 type rxe netdev eth0`
//! creates an rxe device over `eth0`. A drop-in replacement for the C `rdma_rxe`; never load
//! both.

mod ffi;
mod ib;
mod kernel_ext;
mod net;
pub mod proto;
mod rxe;

use ib::{
    device::DriverRegistration,
    link::{LinkOps, LinkRegistration},
};
use kernel::prelude::*;
use net::{
    netdev::{NetDev, NetdevNotifier},
    tunnel::Tunnels,
};
use rxe::device::{RxeDev, RxeNetdevListener};

module! {
    type: RxeModule,
    name: "rdma_rxe_rs",
    authors: ["rxe-rs developers"],
    description: "Soft RDMA over Converged Ethernet (RoCEv2) driver in Rust",
    license: "GPL",
}

struct RxeLink;

impl LinkOps for RxeLink {
    const TYPE: &'static CStr = c"rxe";

    fn newlink(ibdev_name: &CStr, netdev: &NetDev) -> Result {
        rxe::verbs::newlink(ibdev_name, netdev)
    }
}

/// Fields drop in order: no new links, then every device, then the notifier, then the tunnel
/// sockets left (as the C `rxe_module_exit`).
#[pin_data]
struct RxeModule {
    #[pin]
    link: LinkRegistration<RxeLink>,
    devices: DriverRegistration<RxeDev>,
    #[pin]
    notifier: NetdevNotifier<RxeNetdevListener>,
    #[pin]
    tunnels: Tunnels,
}

impl kernel::InPlaceModule for RxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            tunnels <- Tunnels::new(),
            notifier <- NetdevNotifier::new(),
            devices: DriverRegistration::new(),
            link <- LinkRegistration::new(),
        })
        .pin_chain(|_| {
            pr_info!("loaded\n");
            Ok(())
        })
    }
}
