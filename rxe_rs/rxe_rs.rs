// SPDX-License-Identifier: GPL-2.0

//! rxe-rs: a soft-RoCE (RDMA over Converged Ethernet v2) driver in Rust.
//!
//! Registers the `rxe` link type with ib_core, so `rdma link add rxe0 type rxe netdev eth0`
//! reaches this module. A drop-in replacement for the C `rdma_rxe`; never load both.

mod ffi;
mod ib;
pub mod proto;

use ib::{
    link::{LinkOps, LinkRegistration},
    netdev::NetDev,
};
use kernel::prelude::*;

module! {
    type: RxeModule,
    name: "rdma_rxe_rs",
    authors: ["rxe-rs developers"],
    description: "Soft RDMA over Converged Ethernet (RoCEv2) driver in Rust",
    license: "GPL",
    alias: ["rdma-link-rxe"],
}

struct RxeLink;

impl LinkOps for RxeLink {
    const TYPE: &'static CStr = c"rxe";

    fn newlink(ibdev_name: &CStr, netdev: &NetDev) -> Result {
        // The ib_device over a netdev is the control-path work still to come.
        pr_info!(
            "rdma link add {} netdev {}: device creation not implemented yet\n",
            ibdev_name.to_str().unwrap_or("?"),
            netdev.name().to_str().unwrap_or("?")
        );
        Err(EOPNOTSUPP)
    }
}

#[pin_data]
struct RxeModule {
    #[pin]
    link: LinkRegistration<RxeLink>,
}

impl kernel::InPlaceModule for RxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pr_info!("loaded; link type \"rxe\" registered\n");
        try_pin_init!(Self {
            link <- LinkRegistration::new(),
        })
    }
}
