// SPDX-License-Identifier: GPL-2.0

//! Lookup tables from numbers on the wire (QPN, MR key index, AH number) to the shared part of
//! an object. The C driver uses its pools' xarrays under `xa_lock_irqsave`; here an rbtree
//! under an irq-safe spinlock: lookups come from softirq (receive) and inserts from any context
//! (address handles are made in atomic context, sometimes with interrupts off).

use kernel::{
    new_spinlock_irq,
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{Arc, SpinLockIrq},
};

/// A table of `Arc<T>` by number.
#[pin_data]
pub(crate) struct Table<T> {
    #[pin]
    tree: SpinLockIrq<RBTree<u32, Arc<T>>>,
}

impl<T: Send + Sync> Table<T> {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            tree <- new_spinlock_irq!(RBTree::new()),
        })
    }

    /// Adds `value` under `key` (atomic allocation: callable from any context).
    pub(crate) fn insert(&self, key: u32, value: Arc<T>) -> Result {
        let node = RBTreeNode::new(key, value, GFP_ATOMIC)?;
        // A key is only inserted by the owner of its pool index, so nothing is replaced.
        drop(self.tree.lock().insert(node));
        Ok(())
    }

    /// The entry under `key`.
    pub(crate) fn get(&self, key: u32) -> Option<Arc<T>> {
        self.tree.lock().get(&key).cloned()
    }

    /// Removes and returns the entry under `key`; dropped by the caller, outside the lock.
    pub(crate) fn remove(&self, key: u32) -> Option<Arc<T>> {
        self.tree.lock().remove(&key)
    }
}
