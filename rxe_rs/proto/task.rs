// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The scheduling state of a QP task (`rxe_task.c`): the engine that runs a QP's requester and
//! completer (`send_task`) or its responder (`recv_task`).
//!
//! A task is run by at most one runner at a time, either inline by the context that brought the
//! work (a doorbell, a received packet) or by its work item on a workqueue. It runs a budget of
//! steps at a time, and it can be drained: stopped for good, with the drainer learning when the
//! last run has ended. The C driver keeps this in an `int` under a spinlock; here it is one
//! [`AtomicU8`], [`TaskState`], and every transition is a compare-exchange loop over a pure
//! transition function.
//!
//! | C `TASK_STATE_*`     | here                                    |
//! |----------------------|-----------------------------------------|
//! | `IDLE`               | [`State::Idle`]                         |
//! | `BUSY`               | [`State::Queued`] or [`State::Running`] |
//! | `ARMED`              | [`State::Rerun`]                        |
//! | `DRAINING`           | [`State::Draining`]                     |
//! | `DRAINED`, `INVALID` | [`State::Drained`]                      |
//!
//! [`State::Drained`] is final: there is no counterpart of `rxe_enable_task`, which the C driver
//! uses to restart a task it stopped with `rxe_disable_task` (QP reset, `max_dest_rd_atomic`).
//!
//! The C `do_task` once ended a run that had used up its budget with a plain store of `IDLE` and
//! a reschedule. Stored over `DRAINING`, that forgot the drain: the drainer took `IDLE` for
//! "done" and let the QP be freed, and the rescheduled work then ran on it. (The current C code
//! checks for `DRAINING` first, which is right only because both happen under `task->lock`.)
//! Here that cannot be written: there is no plain store of the state anywhere, and a runner
//! leaves "running" only through [`TaskState::finish`] and [`TaskState::out_of_budget`], whose
//! transitions turn a drain request ([`State::Draining`]) into [`State::Drained`] and never into
//! anything else. The host tests check the protocol exhaustively on a model that runs these very
//! transitions, and show that the same checker catches the plain store.
//!
//! # Protocol
//!
//! - Work arrives: publish it (post the WQE, queue the packet), then call
//!   [`TaskState::request`] (or [`TaskState::request_deferred`] where running inline is not
//!   allowed) and act on the [`Request`].
//! - The work item function calls [`TaskState::start_queued`] and runs only if it returns
//!   `true`.
//! - The runner runs the task's steps; when a step finds no work it calls
//!   [`TaskState::finish`], when it has done its budget with work left it calls
//!   [`TaskState::out_of_budget`], and acts on the [`Finish`].
//! - [`TaskState::drain`] stops the task for good; on [`Drain::Wait`] the drainer waits until
//!   [`TaskState::is_drained`], which the runner signals with [`Finish::Drained`].
//!
//! Whoever gets [`Request::Enqueue`] or [`Finish::Requeue`] enqueues the work item, exactly
//! once; nobody else ever does. So at most one work item is in flight, and when its function
//! begins the state is [`State::Queued`] (or [`State::Drained`]: a drain came first).
//!
//! Every transition, even one that leaves the state as it is, is a read-modify-write with
//! acquire and release ordering, so the work published before a request is visible to the run
//! that the request is answered with: a request that finds the task queued or running writes
//! the state, and the runner's next transition reads that write.

use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

/// Where a task is in its life; the value of a [`TaskState`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum State {
    /// Not running, not queued: the next request starts a run.
    Idle = 0,
    /// The work item is handed to a workqueue (or about to be) and has not begun.
    Queued = 1,
    /// A runner is running the task.
    Running = 2,
    /// A runner is running the task and more work arrived: it runs again before going idle.
    Rerun = 3,
    /// A runner is running the task and a drain was requested: it stops and reports.
    Draining = 4,
    /// Stopped for good: no run is in progress and none ever starts again.
    Drained = 5,
}

impl State {
    /// Every state, in numeric order.
    pub const ALL: [Self; 6] = [
        Self::Idle,
        Self::Queued,
        Self::Running,
        Self::Rerun,
        Self::Draining,
        Self::Drained,
    ];

    /// The state stored as `raw`. Only the values of [`State`] are ever stored; anything else
    /// reads as [`State::Drained`], the state in which nothing runs.
    const fn from_raw(raw: u8) -> Self {
        match raw {
            0 => Self::Idle,
            1 => Self::Queued,
            2 => Self::Running,
            3 => Self::Rerun,
            4 => Self::Draining,
            _ => Self::Drained,
        }
    }

    /// Whether a runner is running the task ([`Running`](Self::Running),
    /// [`Rerun`](Self::Rerun) or [`Draining`](Self::Draining)).
    pub const fn has_runner(self) -> bool {
        matches!(self, Self::Running | Self::Rerun | Self::Draining)
    }

    /// [`TaskState::request`] (`inline`) and [`TaskState::request_deferred`].
    const fn on_request(self, inline: bool) -> (Self, Request) {
        match self {
            Self::Idle if inline => (Self::Running, Request::RunInline),
            Self::Idle => (Self::Queued, Request::Enqueue),
            Self::Queued => (Self::Queued, Request::Pending),
            Self::Running | Self::Rerun => (Self::Rerun, Request::Pending),
            Self::Draining | Self::Drained => (self, Request::Dead),
        }
    }

    /// [`TaskState::start_queued`].
    const fn on_start_queued(self) -> (Self, bool) {
        match self {
            Self::Queued => (Self::Running, true),
            _ => (self, false),
        }
    }

    /// [`TaskState::finish`].
    const fn on_finish(self) -> (Self, Finish) {
        match self {
            Self::Running => (Self::Idle, Finish::Idle),
            Self::Rerun => (Self::Running, Finish::Again),
            Self::Draining => (Self::Drained, Finish::Drained),
            Self::Idle | Self::Queued | Self::Drained => (self, Finish::Idle),
        }
    }

    /// [`TaskState::out_of_budget`].
    const fn on_out_of_budget(self) -> (Self, Finish) {
        match self {
            Self::Running | Self::Rerun => (Self::Queued, Finish::Requeue),
            Self::Draining => (Self::Drained, Finish::Drained),
            Self::Idle | Self::Queued | Self::Drained => (self, Finish::Idle),
        }
    }

    /// [`TaskState::drain`].
    const fn on_drain(self) -> (Self, Drain) {
        match self {
            Self::Idle | Self::Queued | Self::Drained => (Self::Drained, Drain::Done),
            Self::Running | Self::Rerun | Self::Draining => (Self::Draining, Drain::Wait),
        }
    }
}

/// What the caller of [`TaskState::request`] or [`TaskState::request_deferred`] must do.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Request {
    /// `Idle → Running` ([`TaskState::request`] only): the caller is now the runner. It runs the
    /// task now and ends with [`TaskState::finish`] or [`TaskState::out_of_budget`].
    RunInline,
    /// `Idle → Queued` ([`TaskState::request_deferred`] only): the caller enqueues the work item,
    /// exactly once.
    Enqueue,
    /// The task is queued or running (now `Rerun`): a run that begins after this request will
    /// see the work. Nothing to do.
    Pending,
    /// The task is draining or drained and will not run again: nothing to do. The work is for
    /// whoever drained the task to flush (the C driver calls `rxe_sender` / `rxe_receiver`
    /// directly after `rxe_disable_task`).
    Dead,
}

/// What the runner must do after [`TaskState::finish`] or [`TaskState::out_of_budget`].
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Finish {
    /// `Running → Idle` ([`TaskState::finish`]): the run is over; return.
    Idle,
    /// `Rerun → Running` ([`TaskState::finish`]): work arrived during the run. The caller is
    /// still the runner: it runs the task again (with a fresh budget) and ends it the same way.
    Again,
    /// `Running | Rerun → Queued` ([`TaskState::out_of_budget`]): the run is over; the caller
    /// enqueues the work item, exactly once, to continue later.
    Requeue,
    /// `Draining → Drained`: the run is over and the task stopped for good; the caller wakes the
    /// drainer(s) waiting for [`TaskState::is_drained`].
    Drained,
}

/// What the caller of [`TaskState::drain`] must do.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Drain {
    /// The task is [`State::Drained`]: no run is in progress and none will start.
    Done,
    /// A run is in progress and was told to stop (`Draining`): the caller waits until
    /// [`TaskState::is_drained`]; the runner wakes it with [`Finish::Drained`].
    Wait,
}

/// The scheduling state of one task: one atomic byte holding a [`State`].
///
/// Only the methods below change it, each by a compare-exchange loop; there is no store.
pub struct TaskState(AtomicU8);

impl TaskState {
    /// A new task: [`State::Idle`].
    pub const fn new() -> Self {
        Self(AtomicU8::new(State::Idle as u8))
    }

    /// Applies `step` to the state in one atomic read-modify-write (retried while another CPU
    /// changed the state in between) and returns what `step` returned for the state it replaced.
    fn transition<R>(&self, step: impl Fn(State) -> (State, R)) -> R {
        let mut current = self.0.load(Ordering::Acquire);
        loop {
            let (next, result) = step(State::from_raw(current));
            match self.0.compare_exchange_weak(
                current,
                next as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return result,
                Err(actual) => current = actual,
            }
        }
    }

    /// Work arrived and has been published; the caller may run the task inline.
    ///
    /// `Idle → Running`: [`Request::RunInline`]. `Queued`: [`Request::Pending`].
    /// `Running | Rerun → Rerun`: [`Request::Pending`]. `Draining | Drained`: [`Request::Dead`].
    pub fn request(&self) -> Request {
        self.transition(|s| s.on_request(true))
    }

    /// Work arrived and has been published; the caller must not run the task inline.
    ///
    /// As [`request`](Self::request), except `Idle → Queued`: [`Request::Enqueue`].
    pub fn request_deferred(&self) -> Request {
        self.transition(|s| s.on_request(false))
    }

    /// The work item function begins: whether it is now the runner.
    ///
    /// `Queued → Running`: `true`; the caller runs the task and ends with
    /// [`finish`](Self::finish) or [`out_of_budget`](Self::out_of_budget). `Drained`: `false`, a
    /// drain came first; the caller returns.
    ///
    /// Any other state returns `false` and changes nothing, but cannot happen when the work item
    /// is enqueued only on [`Request::Enqueue`] and [`Finish::Requeue`]: those come only with
    /// the transition into `Queued`, so the item is the only one in flight, and until it begins,
    /// the state leaves `Queued` only by [`drain`](Self::drain), to `Drained` for good.
    #[must_use]
    pub fn start_queued(&self) -> bool {
        self.transition(State::on_start_queued)
    }

    /// The runner found no more work.
    ///
    /// `Running → Idle`: [`Finish::Idle`]. `Rerun → Running`: [`Finish::Again`].
    /// `Draining → Drained`: [`Finish::Drained`].
    ///
    /// Only the runner may call it; in the states without a runner (a caller bug) it changes
    /// nothing and returns [`Finish::Idle`], which stops the caller.
    pub fn finish(&self) -> Finish {
        self.transition(State::on_finish)
    }

    /// The runner did its budget of steps and work may be left.
    ///
    /// `Running | Rerun → Queued`: [`Finish::Requeue`]. `Draining → Drained`:
    /// [`Finish::Drained`].
    ///
    /// Only the runner may call it; in the states without a runner (a caller bug) it changes
    /// nothing and returns [`Finish::Idle`], which stops the caller.
    pub fn out_of_budget(&self) -> Finish {
        self.transition(State::on_out_of_budget)
    }

    /// Stops the task for good.
    ///
    /// `Idle | Queued → Drained`: [`Drain::Done`]. `Running | Rerun → Draining`: [`Drain::Wait`].
    /// `Draining`: [`Drain::Wait`] (another drain is waiting too). `Drained`: [`Drain::Done`].
    ///
    /// [`Drain::Done`] from `Queued` leaves the work item in flight: it will find `Drained` and
    /// do nothing, but it still references the task, so before freeing what it points to the
    /// caller flushes or cancels it, as for any work item.
    pub fn drain(&self) -> Drain {
        self.transition(State::on_drain)
    }

    /// Whether the task is [`State::Drained`], with acquire ordering: once it returns `true`
    /// everything the last run did is visible to the caller.
    pub fn is_drained(&self) -> bool {
        self.state() == State::Drained
    }

    /// The current state, for debugging and assertions: another CPU may change it at any time
    /// (except from `Drained`).
    pub fn state(&self) -> State {
        State::from_raw(self.0.load(Ordering::Acquire))
    }
}

impl Default for TaskState {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TaskState").field(&self.state()).finish()
    }
}
