// SPDX-License-Identifier: GPL-2.0

//! A `timer_list` owned by an `Arc`ed object (the kernel crate has hrtimers but no
//! `timer_list`; the retransmit and RNR timers of the C driver are jiffies timers).

use crate::ffi;
use core::{
    marker::PhantomData,
    sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering},
};
use kernel::{
    prelude::*,
    sync::{Arc, ArcBorrow},
    types::Opaque,
};

/// What a timer calls when it expires (softirq context).
pub(crate) trait TimerOwner: Send + Sync + Sized + 'static {
    /// Timer `id` of `this` expired.
    fn timer_fired(this: ArcBorrow<'_, Self>, id: u8);
}

#[repr(C)]
struct Inner<T> {
    raw: ffi::timer_list,
    owner: AtomicPtr<T>,
    id: u8,
}

/// A jiffies timer of an `Arc<T>`.
///
/// Invariant: the owner of the `Arc<T>` that arms the timer calls [`Timer::shutdown`] before it
/// drops that `Arc` (rxe: `destroy_qp` does, after draining the QP's task). The expiry callback
/// therefore always runs while that `Arc` is alive, and never after `shutdown` returns.
#[pin_data(PinnedDrop)]
pub(crate) struct Timer<T: TimerOwner> {
    #[pin]
    inner: Opaque<Inner<T>>,
    /// [`Timer::shutdown`] returned: dropping needs no second `timer_shutdown_sync` (the last
    /// `Arc` of a destroyed QP may go in an skb destructor, under another QP's engine lock,
    /// where waiting for a timer is what lockdep forbids).
    shut_down: AtomicBool,
    /// The expiry (jiffies) the last [`Timer::arm`] set: re-arming for the same tick is a no-op.
    expires: AtomicU64,
    _t: PhantomData<T>,
}

// SAFETY: the timer is driven by the timer core; our fields are an atomic pointer and an id.
unsafe impl<T: TimerOwner> Send for Timer<T> {}
// SAFETY: as above: `arm` and `shutdown` are callable concurrently (the timer core locks).
unsafe impl<T: TimerOwner> Sync for Timer<T> {}

/// # Safety
///
/// Called by the timer core for a `timer_list` embedded in a live `Timer<T>` armed by `arm`.
unsafe extern "C" fn expired<T: TimerOwner>(raw: *mut ffi::timer_list) {
    let inner = raw.cast::<Inner<T>>();
    // SAFETY: `raw` is the first field of a `repr(C)` `Inner<T>` (set up in `new`).
    let (owner, id) = unsafe { ((*inner).owner.load(Ordering::Acquire), (*inner).id) };
    if owner.is_null() {
        return;
    }
    // SAFETY: `owner` was stored by `arm` from a live `Arc<T>`, which stays alive while the
    // timer can still fire (type invariant: `shutdown` comes first, and waits for us).
    let this = unsafe { ArcBorrow::from_raw(owner) };
    T::timer_fired(this, id);
}

impl<T: TimerOwner> Timer<T> {
    /// A timer with identifier `id` (passed back to [`TimerOwner::timer_fired`]).
    pub(crate) fn new(id: u8) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `timer_setup` initialises the timer; the other fields are written before
            // the timer can be armed.
            inner <- Opaque::ffi_init(move |slot: *mut Inner<T>| unsafe {
                ffi::rxe_rs_timer_setup(core::ptr::addr_of_mut!((*slot).raw), Some(expired::<T>));
                core::ptr::addr_of_mut!((*slot).owner).write(AtomicPtr::new(core::ptr::null_mut()));
                core::ptr::addr_of_mut!((*slot).id).write(id);
            }),
            shut_down: AtomicBool::new(false),
            expires: AtomicU64::new(0),
            _t: PhantomData,
        })
    }

    fn raw(&self) -> *mut ffi::timer_list {
        // SAFETY: `raw` is the first field of the initialised `Inner`.
        unsafe { core::ptr::addr_of_mut!((*self.inner.get()).raw) }
    }

    /// (Re)arms the timer to fire in `delay` jiffies, for `owner`. No-op after `shutdown`.
    ///
    /// A requester re-arms its retransmit timer for every packet, many within one tick. The
    /// expiry is counted in ticks, so a re-arm within the tick of the last one would set the
    /// same expiry: it is skipped without calling into the timer core (C calls `mod_timer`,
    /// which then finds the expiry unchanged). The timer cannot have fired since: it fires at
    /// its expiry, a tick later at the soonest.
    pub(crate) fn arm(&self, owner: &Arc<T>, delay: u64) {
        let expires = jiffies().wrapping_add(delay);
        if self.expires.load(Ordering::Relaxed) == expires {
            return;
        }
        // SAFETY: `inner` is initialised; the pointer is only dereferenced under the invariant.
        unsafe {
            (*self.inner.get())
                .owner
                .store(Arc::as_ptr(owner).cast_mut(), Ordering::Release)
        };
        // SAFETY: the timer is initialised (`new`).
        unsafe { ffi::rxe_rs_mod_timer_at(self.raw(), expires as usize) };
        // Stored after the timer is armed: a skip never comes before the arm it relies on.
        self.expires.store(expires, Ordering::Relaxed);
    }

    /// Stops the timer for good, waiting for a running expiry to finish.
    pub(crate) fn shutdown(&self) {
        // SAFETY: the timer is initialised; process context (the owner's destroy path).
        unsafe { ffi::rxe_rs_timer_shutdown_sync(self.raw()) };
        self.shut_down.store(true, Ordering::Release);
    }
}

#[pinned_drop]
impl<T: TimerOwner> PinnedDrop for Timer<T> {
    fn drop(self: Pin<&mut Self>) {
        // Shut down by the owner already (type invariant); this keeps a never-armed timer, or a
        // misuse, from outliving its memory. A shut-down timer can never run again.
        if !self.shut_down.load(Ordering::Acquire) {
            self.shutdown();
        }
    }
}

/// The kernel's tick count (`jiffies`).
pub(crate) fn jiffies() -> u64 {
    // SAFETY: `jiffies` is a kernel variable that lives for ever; a volatile load is C's read of
    // it (`volatile` there), inline: a run of a QP's task reads it after every step.
    let now = unsafe { core::ptr::read_volatile(&raw const kernel::bindings::jiffies) };
    now as u64
}

/// Microseconds to jiffies, rounded up.
pub(crate) fn usecs_to_jiffies(usecs: u32) -> u64 {
    // SAFETY: pure conversion.
    unsafe { ffi::rxe_rs_usecs_to_jiffies(usecs) as u64 }
}
