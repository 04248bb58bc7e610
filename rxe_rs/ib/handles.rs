// SPDX-License-Identifier: GPL-2.0

//! Handles the data path keeps on ib_core objects to raise events on them, the bottom-half
//! guard under which the data path's locks are taken from process context, and the workqueue
//! its sleeping work goes to.

use crate::ffi;
use core::{marker::PhantomData, ptr::NonNull};

/// `local_bh_disable()` until dropped. The data path runs in softirq context (receive, BH
/// workqueue); process-context code taking the same spinlocks holds one of these.
pub(crate) struct BhDisabled(PhantomData<*mut ()>);

impl BhDisabled {
    pub(crate) fn new() -> Self {
        // SAFETY: no preconditions; paired with the enable in `drop` on the same CPU (the
        // guard is neither `Send` nor `Sync`, and softirq-disabled code does not migrate).
        unsafe { ffi::rxe_rs_local_bh_disable() };
        Self(PhantomData)
    }
}

impl Drop for BhDisabled {
    fn drop(&mut self) {
        // SAFETY: paired with `new`.
        unsafe { ffi::rxe_rs_local_bh_enable() };
    }
}

/// Runs `f` with bottom halves disabled.
pub(crate) fn with_bh_disabled<R>(f: impl FnOnce() -> R) -> R {
    let _bh = BhDisabled::new();
    f()
}

/// The kernel's default unbound workqueue (`system_dfl_wq`), for work that may sleep and need
/// not run where it was queued. (The kernel crate's `system_unbound()` names the workqueue
/// Linux 7.3 deprecates, which warns on first use.)
pub(crate) fn unbound_wq() -> &'static kernel::workqueue::Queue {
    // SAFETY: no preconditions: `system_dfl_wq` is set up at boot and never freed.
    let wq = unsafe { ffi::rxe_rs_system_dfl_wq() };
    // SAFETY: a valid workqueue for the kernel's lifetime.
    unsafe { kernel::workqueue::Queue::from_raw(wq.cast()) }
}

/// Asynchronous events (`enum ib_event_type`) rxe raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IbEvent {
    CqErr,
    QpFatal,
    QpReqErr,
    QpAccessErr,
    SrqLimitReached,
    SqDrained,
    LastWqeReached,
    CommEst,
}

impl IbEvent {
    fn raw(self) -> ffi::ib_event_type {
        match self {
            Self::CqErr => ffi::ib_event_type_IB_EVENT_CQ_ERR,
            Self::QpFatal => ffi::ib_event_type_IB_EVENT_QP_FATAL,
            Self::QpReqErr => ffi::ib_event_type_IB_EVENT_QP_REQ_ERR,
            Self::QpAccessErr => ffi::ib_event_type_IB_EVENT_QP_ACCESS_ERR,
            Self::SrqLimitReached => ffi::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED,
            Self::SqDrained => ffi::ib_event_type_IB_EVENT_SQ_DRAINED,
            Self::LastWqeReached => ffi::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED,
            Self::CommEst => ffi::ib_event_type_IB_EVENT_COMM_EST,
        }
    }
}

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $raw:ty) => {
        $(#[$doc])*
        ///
        /// Invariant: the object outlives every use of the handle. Its owner (the driver
        /// object embedded in it) only hands the handle to code that stops before the
        /// object's destroy verb returns: the QP's task is drained in `destroy_qp`, and
        /// ib_core destroys a CQ or SRQ only after every QP using it.
        #[derive(Clone, Copy)]
        pub(crate) struct $name(NonNull<$raw>);

        // SAFETY: ib_core objects may be used from any context; see the invariant.
        unsafe impl Send for $name {}
        // SAFETY: as above.
        unsafe impl Sync for $name {}

        impl $name {
            pub(super) fn new(raw: *mut $raw) -> Option<Self> {
                NonNull::new(raw).map(Self)
            }

            #[allow(dead_code, reason = "not every handle type is passed back to ib_core")]
            pub(super) fn as_raw(&self) -> *mut $raw {
                self.0.as_ptr()
            }
        }
    };
}

handle!(
    /// An `ib_cq`, for completion callbacks and CQ events.
    CqHandle,
    ffi::ib_cq
);
handle!(
    /// An `ib_qp`, for QP events.
    QpHandle,
    ffi::ib_qp
);
handle!(
    /// An `ib_srq`, for SRQ events.
    SrqHandle,
    ffi::ib_srq
);

impl CqHandle {
    /// Calls the CQ's completion handler (`cq->comp_handler`).
    pub(crate) fn notify(&self) {
        // SAFETY: the CQ is alive (type invariant).
        unsafe { ffi::rxe_rs_cq_comp_handler(self.0.as_ptr()) };
    }

    /// Raises `event` on the CQ.
    pub(crate) fn event(&self, event: IbEvent) {
        // SAFETY: the CQ is alive (type invariant).
        unsafe { ffi::rxe_rs_cq_event(self.0.as_ptr(), event.raw()) };
    }
}

impl QpHandle {
    /// Raises `event` on the QP.
    pub(crate) fn event(&self, event: IbEvent) {
        // SAFETY: the QP is alive (type invariant).
        unsafe { ffi::rxe_rs_qp_event(self.0.as_ptr(), event.raw()) };
    }
}

impl SrqHandle {
    /// Raises `event` on the SRQ.
    pub(crate) fn event(&self, event: IbEvent) {
        // SAFETY: the SRQ is alive (type invariant).
        unsafe { ffi::rxe_rs_srq_event(self.0.as_ptr(), event.raw()) };
    }
}
