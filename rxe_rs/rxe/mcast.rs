// SPDX-License-Identifier: GPL-2.0

//! Multicast groups (`rxe_mcast.c`): the QPs attached to each multicast GID of a device, for
//! `attach_mcast`/`detach_mcast` and for the receive path, which hands a packet sent to QPN
//! `0xFFFFFF` at a group's address to every QP of the group.
//!
//! The C driver keeps an rbtree of reference-counted groups, each with a list of QP references,
//! under one spinlock, and races attach against attach with a speculative allocation and a
//! re-check. Here a mutex serialises attach and detach (they may sleep in `dev_mc_add`), and the
//! rbtree, under an irq-safe spinlock for the receive path, maps a GID to the QP numbers of its
//! group; the receive path finds the QPs in the QP table. A group holds no QP reference: a QP
//! cannot be destroyed while attached (`EBUSY`, as C), so a number in a group is always its
//! QP's.

use crate::net::netdev::{NetDev, NetDevRef};
use crate::proto::{av::multicast_mac, mcast::Members, params};
use core::sync::atomic::Ordering::Relaxed;
use kernel::{
    new_mutex, new_spinlock_irq,
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{Mutex, SpinLockIrq},
};

use super::{qp::QpShared, ring::errno};

/// A multicast GID (`union ib_gid`).
pub(crate) type Mgid = [u8; 16];

/// The counts the C driver keeps in atomics (`rxe->mcg_num`, `rxe->mcg_attach`).
struct Counts {
    groups: u32,
    attached: u32,
}

/// The multicast groups of one device. Its owner calls [`McastGroups::leave_all`] when the
/// device goes (`RxeDev`'s `Drop`).
#[pin_data]
pub(crate) struct McastGroups {
    /// Serialises attach and detach; holds the counts they check.
    #[pin]
    ctl: Mutex<Counts>,
    /// Groups by GID: read by the receive path (softirq), changed under `ctl`.
    #[pin]
    groups: SpinLockIrq<RBTree<Mgid, Members>>,
    /// The net device whose multicast filter the groups' addresses are in.
    netdev: NetDevRef,
}

impl McastGroups {
    pub(crate) fn new(netdev: &NetDev) -> impl PinInit<Self> {
        let netdev = NetDevRef::from(netdev);
        pin_init!(Self {
            ctl <- new_mutex!(Counts { groups: 0, attached: 0 }),
            groups <- new_spinlock_irq!(RBTree::new()),
            netdev,
        })
    }

    /// `rxe_attach_mcast`: attaches `qp` to the group of `mgid`, made (and its address added to
    /// the net device's filter) if new. Attaching a QP twice does nothing. `ENOMEM` past
    /// `RXE_MAX_MCAST_GRP` groups, `RXE_MAX_MCAST_QP_ATTACH` QPs in the group or
    /// `RXE_MAX_TOT_MCAST_QP_ATTACH` attachments on the device.
    pub(crate) fn attach(&self, qp: &QpShared, mgid: &Mgid) -> Result {
        let mut counts = self.ctl.lock();
        let exists = match self.groups.lock().get(mgid) {
            Some(members) if members.contains(qp.qpn) => return Ok(()),
            Some(_) => true,
            None => false,
        };
        if !exists {
            if counts.groups >= params::MAX_MCAST_GRP {
                return Err(ENOMEM);
            }
            let node = RBTreeNode::new(*mgid, Members::new(), GFP_KERNEL)?;
            self.netdev.mc_add(&multicast_mac(mgid))?;
            drop(self.groups.lock().insert(node));
            counts.groups += 1;
        }
        let result = if counts.attached >= params::MAX_TOT_MCAST_QP_ATTACH {
            Err(ENOMEM)
        } else {
            self.groups
                .lock()
                .get_mut(mgid)
                .ok_or(EINVAL)
                .and_then(|members| members.push(qp.qpn).map_err(errno))
        };
        match result {
            Ok(()) => {
                counts.attached += 1;
                qp.mcast_attached.fetch_add(1, Relaxed);
            }
            // A group made for this QP and left empty goes again.
            Err(_) if !exists => self.remove_group(&mut counts, mgid),
            Err(_) => {}
        }
        result
    }

    /// `rxe_detach_mcast`: `EINVAL` when there is no such group or `qp` is not in it. The last
    /// QP out removes the group and its address from the net device's filter (the C driver
    /// leaves the address there).
    pub(crate) fn detach(&self, qp: &QpShared, mgid: &Mgid) -> Result {
        let mut counts = self.ctl.lock();
        let empty = {
            let mut groups = self.groups.lock();
            let members = groups.get_mut(mgid).ok_or(EINVAL)?;
            if !members.remove(qp.qpn) {
                return Err(EINVAL);
            }
            members.is_empty()
        };
        counts.attached -= 1;
        qp.mcast_attached.fetch_sub(1, Relaxed);
        if empty {
            self.remove_group(&mut counts, mgid);
        }
        Ok(())
    }

    fn remove_group(&self, counts: &mut Counts, mgid: &Mgid) {
        // Freed outside the spinlock.
        let node = self.groups.lock().remove_node(mgid);
        if node.is_some() {
            counts.groups -= 1;
            // Nothing to do if the address is gone already (the net device was unregistered).
            let _ = self.netdev.mc_del(&multicast_mac(mgid));
        }
    }

    /// The members of the group of `mgid`, if there is one (`rxe_lookup_mcg`).
    pub(crate) fn members(&self, mgid: &Mgid) -> Option<Members> {
        self.groups.lock().get(mgid).copied()
    }
}

impl McastGroups {
    /// Device removal: every group left (ib_core detaches uverbs QPs before destroying them, so
    /// normally none) goes, with its address in the net device's filter.
    pub(crate) fn leave_all(&self) {
        let groups = core::mem::replace(&mut *self.groups.lock(), RBTree::new());
        for mgid in groups.keys() {
            let _ = self.netdev.mc_del(&multicast_mac(mgid));
        }
    }
}
