// SPDX-License-Identifier: GPL-2.0

//! What of an rxe device its QPs share ([`DevShared`]): the net device their packets go out on,
//! the port's active MTU, the hardware counters, the memory keys and the address handles.
//! A QP holds it through a device reference narrowed to it (`ib::device::DevicePart`), so the
//! data path never names the device's other half (its object tables, which hold the QPs).

use super::{counters::Counter, mr::MemKeys, table::Table};
use crate::net::netdev::{NetDev, NetDevRef};
use crate::proto::{av::AddressVector, params::IbMtu};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::{prelude::*, sync::Arc};

/// The part of an rxe device its data path uses.
pub(crate) struct DevShared {
    /// Active MTU (`enum ib_mtu`), follows the netdev MTU.
    active_mtu: AtomicU32,
    /// The hardware counters (`rdma statistic show`), indexed by [`Counter`].
    counters: [AtomicU64; Counter::COUNT],
    /// MRs and memory windows by key.
    keys: MemKeys,
    /// Address vectors by AH number, which UD work requests name.
    ahs: Pin<KBox<Table<AddressVector>>>,
    /// The net device, held while the device exists: the data path sends on it from softirq
    /// context, where ib_core's `ib_device_get_netdev` may not be called (its lock is taken
    /// with softirqs enabled; the debug kernel's lockdep proved the inversion).
    netdev: NetDevRef,
}

impl DevShared {
    pub(super) fn new(netdev: &NetDev) -> Result<Self> {
        Ok(Self {
            active_mtu: AtomicU32::new(IbMtu::for_eth_mtu(netdev.mtu()) as u32),
            counters: [const { AtomicU64::new(0) }; Counter::COUNT],
            keys: MemKeys::new()?,
            ahs: KBox::pin_init(Table::new(), GFP_KERNEL)?,
            netdev: NetDevRef::from(netdev),
        })
    }

    /// The net device packets go out on.
    pub(crate) fn netdev(&self) -> &NetDev {
        &self.netdev
    }

    /// MRs and memory windows by key.
    pub(crate) fn keys(&self) -> &MemKeys {
        &self.keys
    }

    pub(crate) fn ahs_table(&self) -> &Table<AddressVector> {
        &self.ahs
    }

    /// The address vector of AH number `ah_num`.
    pub(crate) fn ah(&self, ah_num: u32) -> Option<Arc<AddressVector>> {
        self.ahs.get(ah_num)
    }

    /// The active MTU (`enum ib_mtu`).
    pub(crate) fn active_mtu(&self) -> u32 {
        self.active_mtu.load(Relaxed)
    }

    /// The active MTU in bytes.
    pub(crate) fn active_mtu_bytes(&self) -> u32 {
        IbMtu::from_raw(self.active_mtu()).map_or(256, |m| m.bytes())
    }

    /// Follows the netdev MTU (`rxe_set_mtu`).
    pub(crate) fn set_mtu(&self, netdev_mtu: u32) {
        self.active_mtu
            .store(IbMtu::for_eth_mtu(netdev_mtu) as u32, Relaxed);
    }

    pub(crate) fn count(&self, counter: Counter) {
        self.counters[counter as usize].fetch_add(1, Relaxed);
    }

    pub(crate) fn count_bytes(&self, counter: Counter, bytes: usize) {
        self.counters[counter as usize].fetch_add(bytes as u64, Relaxed);
    }

    /// The current value of `counter`.
    pub(crate) fn counter(&self, counter: Counter) -> u64 {
        self.counters[counter as usize].load(Relaxed)
    }

    /// Every counter's current value, in index order.
    pub(crate) fn counter_values(&self) -> impl Iterator<Item = u64> + '_ {
        self.counters.iter().map(|c| c.load(Relaxed))
    }
}
