// SPDX-License-Identifier: GPL-2.0

//! [`ArcSlot`]: a place for one `Arc<T>` that is taken and refilled without a lock.

use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::sync::Arc;

/// Holds at most one `Arc<T>`. [`ArcSlot::take`] and [`ArcSlot::put`] are one atomic exchange
/// each, so a slot costs no lock in a hot path (a QP keeps the QP its looped-back packets go to
/// in one, rather than looking it up in the QP table for every packet).
///
/// # Invariants
///
/// `ptr` is null or comes from [`Arc::into_raw`], and then the slot owns that reference.
pub(crate) struct ArcSlot<T> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<Arc<T>>,
}

impl<T> ArcSlot<T> {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        // INVARIANT: null.
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// The `Arc` the slot holds, leaving it empty.
    pub(crate) fn take(&self) -> Option<Arc<T>> {
        // INVARIANT: null is stored.
        let raw = self.ptr.swap(ptr::null_mut(), Ordering::AcqRel);
        if raw.is_null() {
            return None;
        }
        // SAFETY: by the type invariant `raw` comes from `Arc::into_raw` and the slot owned that
        // reference; the exchange handed it to this caller alone.
        Some(unsafe { Arc::from_raw(raw) })
    }

    /// A clone of the `Arc` the slot holds, if `wanted` accepts it; the slot keeps it either way.
    pub(crate) fn get_if(&self, wanted: impl FnOnce(&T) -> bool) -> Option<Arc<T>> {
        self.with_if(wanted, Arc::clone).ok()
    }

    /// `f` run on the `Arc` the slot holds, if `wanted` accepts it, with no reference taken;
    /// `f` back if the slot is empty or `wanted` refuses. The slot is empty while `f` runs.
    pub(crate) fn with_if<R, F: FnOnce(&Arc<T>) -> R>(
        &self,
        wanted: impl FnOnce(&T) -> bool,
        f: F,
    ) -> core::result::Result<R, F> {
        let Some(held) = self.take() else {
            return Err(f);
        };
        let out = if wanted(&held) { Ok(f(&held)) } else { Err(f) };
        drop(self.put(held));
        out
    }

    /// Keeps a clone of `arc`, letting go of what the slot held.
    pub(crate) fn keep(&self, arc: &Arc<T>) {
        drop(self.put(arc.clone()));
    }

    /// Puts `arc` in the slot; returns the `Arc` it held, if any.
    fn put(&self, arc: Arc<T>) -> Option<Arc<T>> {
        // INVARIANT: the stored pointer comes from `Arc::into_raw`; the slot owns its reference.
        let old = self
            .ptr
            .swap(Arc::into_raw(arc).cast_mut(), Ordering::AcqRel);
        if old.is_null() {
            return None;
        }
        // SAFETY: as in `take`, `old` was the slot's reference and is now this caller's.
        Some(unsafe { Arc::from_raw(old) })
    }
}

impl<T> Drop for ArcSlot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}
