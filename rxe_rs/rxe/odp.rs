// SPDX-License-Identifier: GPL-2.0

//! On-demand paging in the engines (C's `rxe_odp.c`): the faults the data path cannot take
//! itself, and `advise_mr`'s prefetch.
//!
//! The engines run in softirq. An access to an ODP MR either finds every page it needs mapped
//! and happens, or happens not at all and fails with [`MrError::Absent`](super::mr::MrError)
//! before the step that made it changed anything. The machine then stops where it is (the
//! responder and the completer keep the packet, the requester its WQE position), and
//! [`FaultWork`] faults the range in on the kernel's unbound workqueue and runs the QP's task, which
//! takes the same step again. A fault that fails (the range is no longer mapped in the
//! process) lets the access fail as C's does: remote access error for the responder, local
//! protection error for the requester and the completer. (C takes the fault inline: its data
//! path runs on a workqueue and sleeps in `hmm_range_fault`.)

use super::{
    device::RxeDev,
    engine::{Engine, FaultWait, Machine},
    mr::{self, MrShared},
    qp::QpShared,
};
use crate::ib::{
    device::{Device, DeviceRef, PdId},
    handles::{unbound_wq, with_bh_disabled},
    mr::AdviseSge,
};
use crate::proto::{error::Absent, error::RxeError, params};
use kernel::{
    impl_has_work, new_work,
    prelude::*,
    sync::Arc,
    workqueue::{Work, WorkItem},
};

/// Faults in the pages a machine of a QP waits for, then runs the QP's task.
#[pin_data]
struct FaultWork {
    #[pin]
    work: Work<FaultWork>,
    /// Holds the QP (and through it the device) until the machine is told.
    qp: Arc<QpShared>,
    mr: Arc<MrShared>,
    absent: Absent,
    machine: Machine,
}

impl_has_work! {
    impl HasWork<Self> for FaultWork { self.work }
}

impl WorkItem for FaultWork {
    type Pointer = Pin<KBox<FaultWork>>;

    fn run(this: Pin<KBox<FaultWork>>) {
        let a = this.absent;
        let ok = this
            .mr
            .fault(a.iova, u64::from(a.len), a.write, true)
            .is_ok();
        with_bh_disabled(|| {
            let mut eng = this.qp.eng.lock();
            let wait = eng.fault_wait(this.machine);
            // A QP reset or errored meanwhile has forgotten the wait.
            if *wait == FaultWait::Waiting {
                *wait = if ok {
                    FaultWait::None
                } else {
                    FaultWait::Failed(a)
                };
            }
        });
        this.qp.kick();
    }
}

impl QpShared {
    /// Machine `m` failed with `e`. If for pages of an ODP MR that are not mapped, the machine
    /// now waits while they are faulted in (`true`: the caller keeps its packet or WQE and
    /// stops). `false`: `e` stands, because it is another error, the fault of this very range
    /// failed last time, or no work could be allocated.
    pub(crate) fn await_fault(
        self: &Arc<Self>,
        eng: &mut Engine,
        m: Machine,
        e: &RxeError,
    ) -> bool {
        let Some(absent) = e.absent() else {
            return false;
        };
        let wait = eng.fault_wait(m);
        if let FaultWait::Failed(failed) = *wait {
            *wait = FaultWait::None;
            if failed == absent {
                return false;
            }
        }
        let Some(mr) = self.dev.keys().mr(absent.key) else {
            return false;
        };
        let Ok(work) = KBox::pin_init(
            pin_init!(FaultWork {
                work <- new_work!("rxe_rs_odp_fault"),
                qp: self.clone(),
                mr,
                absent,
                machine: m,
            }),
            GFP_ATOMIC,
        ) else {
            return false;
        };
        *wait = FaultWait::Waiting;
        // A fresh item is never pending, so it is queued.
        unbound_wq().enqueue(work);
        true
    }
}

/// An asynchronous `advise_mr` (C `rxe_ib_prefetch_mr_work`): best effort, its errors dropped.
#[pin_data]
struct PrefetchWork {
    #[pin]
    work: Work<PrefetchWork>,
    /// Keeps the device registered (and this module loaded) until the work is done.
    _dev: DeviceRef<RxeDev>,
    targets: KVec<(Arc<MrShared>, u64, u64)>,
    advice: u32,
}

impl_has_work! {
    impl HasWork<Self> for PrefetchWork { self.work }
}

impl WorkItem for PrefetchWork {
    type Pointer = Pin<KBox<PrefetchWork>>;

    fn run(this: Pin<KBox<PrefetchWork>>) {
        let _ = mr::prefetch(&this.targets, this.advice);
    }
}

/// `advise_mr` (C `rxe_ib_advise_mr`): the ranges are checked now; with
/// `IB_UVERBS_ADVISE_MR_FLAG_FLUSH` they are fetched before it returns, else by work that holds
/// the MRs and the device.
pub(crate) fn advise_mr(
    dev: &Device<RxeDev>,
    pd: PdId,
    advice: u32,
    flags: u32,
    sges: &[AdviseSge],
) -> Result {
    let targets = mr::prefetch_targets(dev.data().shared().keys(), pd, advice, sges)?;
    if flags & params::ADVISE_FLAG_FLUSH != 0 {
        return mr::prefetch(&targets, advice);
    }
    let dev_ref = DeviceRef::get(dev).ok_or(ENODEV)?;
    let work = KBox::pin_init(
        pin_init!(PrefetchWork {
            work <- new_work!("rxe_rs_odp_prefetch"),
            _dev: dev_ref,
            targets,
            advice,
        }),
        GFP_KERNEL,
    )?;
    unbound_wq().enqueue(work);
    Ok(())
}
