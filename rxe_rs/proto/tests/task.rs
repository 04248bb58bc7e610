// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The scheduling state of a task: every transition; an exhaustive model check of the protocol
//! (runners, requesters, a workqueue and drainers, interleaved in every possible order); the C
//! driver's plain-store bug, and other broken variants, caught by that same checker; and a
//! threaded stress test.

use std::collections::{BTreeMap, HashMap};
use std::format;
use std::string::String;
use std::thread;
use std::time::{Duration, Instant};
use std::vec::Vec;

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::proto::task::{Drain, Finish, Request, State, TaskState};

// ------------------------------------------------------------------------------------------------
// Transitions, one by one.

/// A task in `state`, reached through the public API only.
fn task_in(state: State) -> TaskState {
    let t = TaskState::new();
    match state {
        State::Idle => {}
        State::Queued => assert_eq!(t.request_deferred(), Request::Enqueue),
        State::Running => assert_eq!(t.request(), Request::RunInline),
        State::Rerun => {
            assert_eq!(t.request(), Request::RunInline);
            assert_eq!(t.request(), Request::Pending);
        }
        State::Draining => {
            assert_eq!(t.request(), Request::RunInline);
            assert_eq!(t.drain(), Drain::Wait);
        }
        State::Drained => assert_eq!(t.drain(), Drain::Done),
    }
    assert_eq!(t.state(), state);
    t
}

/// The operations that change a task's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
    Request,
    RequestDeferred,
    StartQueued,
    Finish,
    OutOfBudget,
    Drain,
}

/// What an [`Op`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Outcome {
    Request(Request),
    Start(bool),
    Finish(Finish),
    Drain(Drain),
}

impl Op {
    const ALL: [Self; 6] = [
        Self::Request,
        Self::RequestDeferred,
        Self::StartQueued,
        Self::Finish,
        Self::OutOfBudget,
        Self::Drain,
    ];

    fn apply(self, t: &TaskState) -> Outcome {
        match self {
            Self::Request => Outcome::Request(t.request()),
            Self::RequestDeferred => Outcome::Request(t.request_deferred()),
            Self::StartQueued => Outcome::Start(t.start_queued()),
            Self::Finish => Outcome::Finish(t.finish()),
            Self::OutOfBudget => Outcome::Finish(t.out_of_budget()),
            Self::Drain => Outcome::Drain(t.drain()),
        }
    }
}

/// `op` applied by the real [`TaskState`] to a task in `state`: the state after it and what it
/// returned.
fn apply(state: State, op: Op) -> (State, Outcome) {
    let t = task_in(state);
    let outcome = op.apply(&t);
    (t.state(), outcome)
}

/// The whole transition table: state before, operation, state after, result.
const TABLE: [(State, Op, State, Outcome); 36] = {
    use Op as O;
    use Outcome::{Drain as D, Finish as F, Request as R, Start};
    use State::*;
    [
        (Idle, O::Request, Running, R(Request::RunInline)),
        (Idle, O::RequestDeferred, Queued, R(Request::Enqueue)),
        (Idle, O::StartQueued, Idle, Start(false)),
        (Idle, O::Finish, Idle, F(Finish::Idle)),
        (Idle, O::OutOfBudget, Idle, F(Finish::Idle)),
        (Idle, O::Drain, Drained, D(Drain::Done)),
        (Queued, O::Request, Queued, R(Request::Pending)),
        (Queued, O::RequestDeferred, Queued, R(Request::Pending)),
        (Queued, O::StartQueued, Running, Start(true)),
        (Queued, O::Finish, Queued, F(Finish::Idle)),
        (Queued, O::OutOfBudget, Queued, F(Finish::Idle)),
        (Queued, O::Drain, Drained, D(Drain::Done)),
        (Running, O::Request, Rerun, R(Request::Pending)),
        (Running, O::RequestDeferred, Rerun, R(Request::Pending)),
        (Running, O::StartQueued, Running, Start(false)),
        (Running, O::Finish, Idle, F(Finish::Idle)),
        (Running, O::OutOfBudget, Queued, F(Finish::Requeue)),
        (Running, O::Drain, Draining, D(Drain::Wait)),
        (Rerun, O::Request, Rerun, R(Request::Pending)),
        (Rerun, O::RequestDeferred, Rerun, R(Request::Pending)),
        (Rerun, O::StartQueued, Rerun, Start(false)),
        (Rerun, O::Finish, Running, F(Finish::Again)),
        (Rerun, O::OutOfBudget, Queued, F(Finish::Requeue)),
        (Rerun, O::Drain, Draining, D(Drain::Wait)),
        (Draining, O::Request, Draining, R(Request::Dead)),
        (Draining, O::RequestDeferred, Draining, R(Request::Dead)),
        (Draining, O::StartQueued, Draining, Start(false)),
        (Draining, O::Finish, Drained, F(Finish::Drained)),
        (Draining, O::OutOfBudget, Drained, F(Finish::Drained)),
        (Draining, O::Drain, Draining, D(Drain::Wait)),
        (Drained, O::Request, Drained, R(Request::Dead)),
        (Drained, O::RequestDeferred, Drained, R(Request::Dead)),
        (Drained, O::StartQueued, Drained, Start(false)),
        (Drained, O::Finish, Drained, F(Finish::Idle)),
        (Drained, O::OutOfBudget, Drained, F(Finish::Idle)),
        (Drained, O::Drain, Drained, D(Drain::Done)),
    ]
};

#[test]
fn every_transition() {
    for (before, op, after, outcome) in TABLE {
        assert_eq!(apply(before, op), (after, outcome), "{op:?} in {before:?}");
    }
    // The table has each (state, operation) exactly once.
    for state in State::ALL {
        for op in Op::ALL {
            let rows = TABLE
                .iter()
                .filter(|(s, o, _, _)| *s == state && *o == op)
                .count();
            assert_eq!(rows, 1, "{op:?} in {state:?}");
        }
    }
}

#[test]
fn new_default_debug_and_encoding() {
    assert_eq!(TaskState::new().state(), State::Idle);
    assert_eq!(TaskState::default().state(), State::Idle);
    assert_eq!(format!("{:?}", task_in(State::Rerun)), "TaskState(Rerun)");
    for (i, s) in State::ALL.into_iter().enumerate() {
        assert_eq!(s as u8 as usize, i);
        assert_eq!(task_in(s).is_drained(), s == State::Drained);
        assert_eq!(
            s.has_runner(),
            matches!(s, State::Running | State::Rerun | State::Draining)
        );
    }
}

#[test]
fn request_inline() {
    // Idle → Running; the runner runs, finds nothing more, goes idle.
    let t = TaskState::new();
    assert_eq!(t.request(), Request::RunInline);
    assert_eq!(t.state(), State::Running);
    assert_eq!(t.finish(), Finish::Idle);
    assert_eq!(t.state(), State::Idle);
    // The next request runs inline again.
    assert_eq!(t.request(), Request::RunInline);
}

#[test]
fn request_deferred_enqueues_once() {
    let t = TaskState::new();
    assert_eq!(t.request_deferred(), Request::Enqueue);
    // Until the item begins, every request is pending: no second enqueue, no inline run.
    assert_eq!(t.request_deferred(), Request::Pending);
    assert_eq!(t.request(), Request::Pending);
    assert_eq!(t.state(), State::Queued);
    assert!(t.start_queued());
    assert_eq!(t.state(), State::Running);
    assert_eq!(t.finish(), Finish::Idle);
}

#[test]
fn request_during_run_reruns() {
    let t = task_in(State::Running);
    assert_eq!(t.request(), Request::Pending);
    assert_eq!(t.request_deferred(), Request::Pending);
    assert_eq!(t.state(), State::Rerun);
    assert_eq!(t.finish(), Finish::Again);
    assert_eq!(t.state(), State::Running);
    assert_eq!(t.finish(), Finish::Idle);
}

#[test]
fn out_of_budget_requeues() {
    for s in [State::Running, State::Rerun] {
        let t = task_in(s);
        assert_eq!(t.out_of_budget(), Finish::Requeue);
        assert_eq!(t.state(), State::Queued);
        assert_eq!(t.request(), Request::Pending);
        assert!(t.start_queued());
    }
}

#[test]
fn start_queued_only_from_queued() {
    assert!(task_in(State::Queued).start_queued());
    for s in [
        State::Idle,
        State::Running,
        State::Rerun,
        State::Draining,
        State::Drained,
    ] {
        let t = task_in(s);
        assert!(!t.start_queued(), "{s:?}");
        assert_eq!(t.state(), s);
    }
}

#[test]
fn drain_idle_or_queued_is_done() {
    for s in [State::Idle, State::Queued] {
        let t = task_in(s);
        assert_eq!(t.drain(), Drain::Done);
        assert!(t.is_drained());
        // The work item queued before the drain finds Drained and does nothing.
        assert!(!t.start_queued());
        assert_eq!(t.drain(), Drain::Done);
    }
}

#[test]
fn drain_while_running_waits_for_the_runner() {
    for s in [State::Running, State::Rerun] {
        let t = task_in(s);
        assert_eq!(t.drain(), Drain::Wait);
        assert_eq!(t.state(), State::Draining);
        // A second drainer waits too; requests are dead; no rerun.
        assert_eq!(t.drain(), Drain::Wait);
        assert_eq!(t.request(), Request::Dead);
        assert_eq!(t.request_deferred(), Request::Dead);
        assert!(!t.is_drained());
        assert_eq!(t.finish(), Finish::Drained);
        assert!(t.is_drained());
    }
}

/// The C driver's bug, directly: a run that used up its budget while a drain was requested
/// must not go back to Idle or Queued.
#[test]
fn out_of_budget_while_draining_drains() {
    let t = task_in(State::Running);
    assert_eq!(t.drain(), Drain::Wait);
    assert_eq!(t.out_of_budget(), Finish::Drained);
    assert!(t.is_drained());
    assert_eq!(t.request(), Request::Dead);
}

#[test]
fn drained_is_terminal() {
    for op in Op::ALL {
        let (after, _) = apply(State::Drained, op);
        assert_eq!(after, State::Drained, "{op:?}");
    }
}

#[test]
fn finish_without_runner_changes_nothing() {
    for s in [State::Idle, State::Queued, State::Drained] {
        for op in [Op::Finish, Op::OutOfBudget] {
            assert_eq!(apply(s, op), (s, Outcome::Finish(Finish::Idle)), "{op:?}");
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Exhaustive model check.
//
// The task's atomic is one shared value; every actor is a small state machine whose every step
// is one atomic operation on it (or one on the modelled workqueue). A depth-first search visits
// every state reachable by any interleaving of the steps, so every execution within the bounds.
// The protocol's steps run the real `TaskState` methods (on a task brought into the model's
// state through the public API); the broken variants replace some steps by plain loads and
// stores.

/// Which protocol the runners and requesters follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// [`TaskState`] as it is.
    Correct,
    /// The C driver's bug: a run that used up its budget stores `Idle` with a plain store, then
    /// reschedules (`rxe_sched_task`: [`TaskState::request_deferred`]).
    BudgetStoresIdle,
    /// The current C `do_task` without its lock: a run that used up its budget loads the state;
    /// on `Draining` it stores `Drained`, otherwise it stores `Idle` (a second step) and
    /// reschedules.
    BudgetChecksThenStoresIdle,
    /// A run that found no more work stores `Idle` with a plain store (forgets `Rerun`).
    FinishStoresIdle,
    /// An inline request loads the state and, if `Idle`, stores `Running` (a second step).
    RequestChecksThenStoresRunning,
}

/// The bounds of one model check.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    /// Inline requesters: each runs the task itself on [`Request::RunInline`].
    inline_requesters: u8,
    /// Requests by each inline requester.
    inline_requests: u8,
    /// Deferred requesters: each enqueues the work item on [`Request::Enqueue`].
    deferred_requesters: u8,
    /// Requests by each deferred requester.
    deferred_requests: u8,
    /// Workqueue workers: each takes the pending work item and runs its function.
    workers: u8,
    /// Drainers.
    drainers: u8,
    /// How many times, over a whole execution, a run may use up its budget.
    budget_exhaustions: u8,
    variant: Variant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Role {
    Inline,
    Deferred,
    Worker,
    Drainer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Requester: between requests. Worker: waiting for the work item. Drainer: not started.
    Idle,
    /// Inline requester (`RequestChecksThenStoresRunning`): loaded `Idle`, about to store
    /// `Running`.
    Claim,
    /// Worker: took the work item off the queue, about to call `start_queued`.
    Start,
    /// Runner: about to run the task once (consuming all work published so far).
    Run,
    /// Runner: ran; about to call `finish` (no work left) or `out_of_budget`.
    Decide,
    /// Broken runner (`BudgetChecksThenStoresIdle`): loaded a state other than `Draining`,
    /// about to store `Idle`.
    StoreIdle,
    /// Broken runner: stored `Idle`, about to reschedule.
    Resched,
    /// Holds an `Enqueue` or `Requeue`: about to enqueue the work item.
    Enqueue,
    /// Drainer: got `Wait`, blocked until the task is drained.
    Waiting,
    /// Drainer: done.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Actor {
    role: Role,
    phase: Phase,
    /// Requests left (requesters).
    left: u8,
}

/// One state of the whole system: the task's atomic, the workqueue, the actors, and the
/// history the invariants need.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct World {
    task: State,
    /// The work item is on the workqueue, not yet taken by a worker.
    item_pending: bool,
    /// Actors between the start of a run and the transition that ends it.
    runners: u8,
    budget_left: u8,
    /// Requesters (bit per actor) whose request (not `Dead`) no run has begun after yet, nor a
    /// drain taken over.
    owed: u16,
    /// A drain has been called.
    drain_requested: bool,
    /// A drain returned `Done` or saw the task drained.
    drain_done: bool,
    /// The task has been `Drained`.
    was_drained: bool,
    actors: Vec<Actor>,
}

/// A broken invariant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Bug {
    /// Two actors running the task at once.
    TwoRunners,
    /// The state says a runner exists (`Running`, `Rerun`, `Draining`) and none does, or the
    /// other way round.
    RunnerCountMismatch,
    /// A run began after the task was drained.
    RunStartAfterDrained,
    /// A run began after a drain was requested.
    RunStartAfterDrainRequest,
    /// The task ran after a drain returned `Done` or saw it drained.
    RunAfterDrainDone,
    /// The task left `Drained`.
    DrainedLeft,
    /// The work item was enqueued while already on the queue.
    DoubleEnqueue,
    /// The work item began with the task neither `Queued` nor `Drained`.
    WorkItemInWrongState,
    /// An operation returned what it cannot return to that caller.
    WrongResult,
    /// `Finish::Drained` with no drainer waiting.
    DrainedReportWithoutDrainer,
    /// The task went idle (nothing will run it until the next request), or everything
    /// stopped, with a request no run has begun after and no drain has taken over.
    LostRequest,
    /// Nothing can move and an actor (a drainer) waits forever.
    Stuck,
    /// Everything stopped and the task is not drained (with drainers) or idle (without).
    WrongEndState,
    /// A cycle: an execution that never ends.
    Livelock,
}

/// One step of an execution, for the traces.
#[derive(Clone, Copy, Debug)]
struct Step {
    actor: usize,
    role: Role,
    what: &'static str,
    outcome: Option<Outcome>,
    /// The task's state after the step.
    task: State,
}

/// What a model check found.
#[derive(Debug)]
struct Report {
    states: usize,
    transitions: usize,
    ends: usize,
    /// The first counterexample found for each broken invariant.
    bugs: BTreeMap<Bug, String>,
}

struct Checker {
    bounds: Bounds,
    /// `false` while on the DFS stack, `true` once all its successors are explored.
    seen: HashMap<World, bool>,
    path: Vec<Step>,
    transitions: usize,
    ends: usize,
    bugs: BTreeMap<Bug, String>,
}

/// A step applying `op` to the model's task, through the real [`TaskState`].
fn real(w: &mut World, op: Op) -> Outcome {
    let (after, outcome) = apply(w.task, op);
    w.task = after;
    outcome
}

fn drainer_waiting(w: &World) -> bool {
    w.actors
        .iter()
        .any(|a| a.role == Role::Drainer && a.phase == Phase::Waiting)
}

/// Actor `i` begins a run: `fresh` when it was not the runner before (not `Again`).
fn start_run(w: &mut World, i: usize, fresh: bool) -> Result<(), Bug> {
    if fresh {
        w.runners += 1;
    }
    if w.runners > 1 {
        return Err(Bug::TwoRunners);
    }
    if w.was_drained {
        return Err(Bug::RunStartAfterDrained);
    }
    if w.drain_requested {
        return Err(Bug::RunStartAfterDrainRequest);
    }
    w.actors[i].phase = Phase::Run;
    Ok(())
}

/// The world after a step, or the invariant the step broke and the task's state after it.
type Next = Result<World, (Bug, State)>;

/// Actor `i` begins a run in `n` (see [`start_run`]).
fn started(mut n: World, i: usize, fresh: bool) -> Next {
    match start_run(&mut n, i, fresh) {
        Ok(()) => Ok(n),
        Err(bug) => Err((bug, n.task)),
    }
}

/// Actor `i` reports `Drained` in `n` (see [`report_drained`]).
fn drained(mut n: World, i: usize) -> Next {
    match report_drained(&mut n, i) {
        Ok(()) => Ok(n),
        Err(bug) => Err((bug, n.task)),
    }
}

/// Actor `i` stops being the runner through a transition that returned `Drained`.
fn report_drained(w: &mut World, i: usize) -> Result<(), Bug> {
    w.runners -= 1;
    if !drainer_waiting(w) {
        return Err(Bug::DrainedReportWithoutDrainer);
    }
    w.actors[i].phase = Phase::Idle;
    Ok(())
}

impl Checker {
    fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            seen: HashMap::new(),
            path: Vec::new(),
            transitions: 0,
            ends: 0,
            bugs: BTreeMap::new(),
        }
    }

    fn initial(&self) -> World {
        let b = self.bounds;
        let mut actors = Vec::new();
        let mut add = |role, n: u8, left| {
            for _ in 0..n {
                actors.push(Actor {
                    role,
                    phase: Phase::Idle,
                    left,
                });
            }
        };
        add(Role::Inline, b.inline_requesters, b.inline_requests);
        add(Role::Deferred, b.deferred_requesters, b.deferred_requests);
        add(Role::Worker, b.workers, 0);
        add(Role::Drainer, b.drainers, 0);
        World {
            task: State::Idle,
            item_pending: false,
            runners: 0,
            budget_left: b.budget_exhaustions,
            owed: 0,
            drain_requested: false,
            drain_done: false,
            was_drained: false,
            actors,
        }
    }

    /// Every step actor `i` can take in `w`: its description and the world after it, or the
    /// invariant it breaks.
    fn steps_of(&self, w: &World, i: usize, out: &mut Vec<(Step, Next)>) {
        let actor = w.actors[i];
        let variant = self.bounds.variant;
        let mut push = |what, outcome, next: Next| {
            let task = match &next {
                Ok(n) => n.task,
                Err((_, task)) => *task,
            };
            out.push((
                Step {
                    actor: i,
                    role: actor.role,
                    what,
                    outcome,
                    task,
                },
                next,
            ));
        };
        let bit = 1u16 << i;
        match (actor.role, actor.phase) {
            (Role::Inline, Phase::Idle) if actor.left > 0 => {
                let mut n = w.clone();
                n.actors[i].left -= 1;
                if variant == Variant::RequestChecksThenStoresRunning && w.task == State::Idle {
                    n.actors[i].phase = Phase::Claim;
                    push("load (Idle)", None, Ok(n));
                    return;
                }
                let outcome = real(&mut n, Op::Request);
                let next = match outcome {
                    Outcome::Request(Request::RunInline) => {
                        n.owed |= bit;
                        started(n, i, true)
                    }
                    Outcome::Request(Request::Pending) => {
                        n.owed |= bit;
                        Ok(n)
                    }
                    Outcome::Request(Request::Dead) => Ok(n),
                    _ => Err((Bug::WrongResult, n.task)),
                };
                push("request()", Some(outcome), next);
            }
            (Role::Inline, Phase::Claim) => {
                let mut n = w.clone();
                n.task = State::Running;
                n.owed |= bit;
                let next = started(n, i, true);
                push("store Running", None, next);
            }
            (Role::Deferred, Phase::Idle) if actor.left > 0 => {
                let mut n = w.clone();
                n.actors[i].left -= 1;
                let outcome = real(&mut n, Op::RequestDeferred);
                let next = match outcome {
                    Outcome::Request(Request::Enqueue) => {
                        n.owed |= bit;
                        n.actors[i].phase = Phase::Enqueue;
                        Ok(n)
                    }
                    Outcome::Request(Request::Pending) => {
                        n.owed |= bit;
                        Ok(n)
                    }
                    Outcome::Request(Request::Dead) => Ok(n),
                    _ => Err((Bug::WrongResult, n.task)),
                };
                push("request_deferred()", Some(outcome), next);
            }
            (Role::Worker, Phase::Idle) if w.item_pending => {
                let mut n = w.clone();
                n.item_pending = false;
                n.actors[i].phase = Phase::Start;
                push("dequeue the work item", None, Ok(n));
            }
            (Role::Worker, Phase::Start) => {
                let mut n = w.clone();
                let outcome = real(&mut n, Op::StartQueued);
                let next = match outcome {
                    Outcome::Start(true) => started(n, i, true),
                    Outcome::Start(false) if n.task == State::Drained => {
                        n.actors[i].phase = Phase::Idle;
                        Ok(n)
                    }
                    _ => Err((Bug::WorkItemInWrongState, n.task)),
                };
                push("start_queued()", Some(outcome), next);
            }
            (Role::Inline | Role::Worker, Phase::Run) => {
                let mut n = w.clone();
                let next = if n.drain_done {
                    Err((Bug::RunAfterDrainDone, n.task))
                } else {
                    // The run sees every request made so far.
                    n.owed = 0;
                    n.actors[i].phase = Phase::Decide;
                    Ok(n)
                };
                push("run the task", None, next);
            }
            (Role::Inline | Role::Worker, Phase::Decide) => {
                // No work left.
                let mut n = w.clone();
                if variant == Variant::FinishStoresIdle {
                    n.task = State::Idle;
                    n.runners -= 1;
                    n.actors[i].phase = Phase::Idle;
                    push("no more work: store Idle", None, Ok(n));
                } else {
                    let outcome = real(&mut n, Op::Finish);
                    let next = match outcome {
                        Outcome::Finish(Finish::Idle) => {
                            n.runners -= 1;
                            n.actors[i].phase = Phase::Idle;
                            Ok(n)
                        }
                        Outcome::Finish(Finish::Again) => started(n, i, false),
                        Outcome::Finish(Finish::Drained) => drained(n, i),
                        _ => Err((Bug::WrongResult, n.task)),
                    };
                    push("finish()", Some(outcome), next);
                }
                // Budget used up, work may be left.
                if w.budget_left == 0 {
                    return;
                }
                let mut n = w.clone();
                n.budget_left -= 1;
                match variant {
                    Variant::BudgetStoresIdle => {
                        n.task = State::Idle;
                        n.runners -= 1;
                        n.actors[i].phase = Phase::Resched;
                        push("out of budget: store Idle", None, Ok(n));
                    }
                    Variant::BudgetChecksThenStoresIdle if n.task == State::Draining => {
                        n.task = State::Drained;
                        let next = drained(n, i);
                        push("out of budget: load Draining, store Drained", None, next);
                    }
                    Variant::BudgetChecksThenStoresIdle => {
                        n.actors[i].phase = Phase::StoreIdle;
                        push("out of budget: load (not Draining)", None, Ok(n));
                    }
                    _ => {
                        let outcome = real(&mut n, Op::OutOfBudget);
                        let next = match outcome {
                            Outcome::Finish(Finish::Requeue) => {
                                n.runners -= 1;
                                n.actors[i].phase = Phase::Enqueue;
                                Ok(n)
                            }
                            Outcome::Finish(Finish::Drained) => drained(n, i),
                            _ => Err((Bug::WrongResult, n.task)),
                        };
                        push("out_of_budget()", Some(outcome), next);
                    }
                }
            }
            (_, Phase::StoreIdle) => {
                let mut n = w.clone();
                n.task = State::Idle;
                n.runners -= 1;
                n.actors[i].phase = Phase::Resched;
                push("store Idle", None, Ok(n));
            }
            (_, Phase::Resched) => {
                let mut n = w.clone();
                let outcome = real(&mut n, Op::RequestDeferred);
                n.actors[i].phase = if outcome == Outcome::Request(Request::Enqueue) {
                    Phase::Enqueue
                } else {
                    Phase::Idle
                };
                push("reschedule: request_deferred()", Some(outcome), Ok(n));
            }
            (_, Phase::Enqueue) => {
                let mut n = w.clone();
                let next = if n.item_pending {
                    Err((Bug::DoubleEnqueue, n.task))
                } else {
                    n.item_pending = true;
                    n.actors[i].phase = Phase::Idle;
                    Ok(n)
                };
                push("enqueue the work item", None, next);
            }
            (Role::Drainer, Phase::Idle) => {
                let mut n = w.clone();
                let outcome = real(&mut n, Op::Drain);
                n.drain_requested = true;
                // The drainer flushes whatever work it keeps from running.
                n.owed = 0;
                n.actors[i].phase = match outcome {
                    Outcome::Drain(Drain::Done) => {
                        n.drain_done = true;
                        Phase::Done
                    }
                    _ => Phase::Waiting,
                };
                push("drain()", Some(outcome), Ok(n));
            }
            (Role::Drainer, Phase::Waiting) if task_in(w.task).is_drained() => {
                let mut n = w.clone();
                n.drain_done = true;
                n.actors[i].phase = Phase::Done;
                push("is_drained() (true)", None, Ok(n));
            }
            _ => {}
        }
    }

    /// The invariants on every state reached.
    fn check(w: &World) -> Result<(), Bug> {
        if w.runners > 1 {
            return Err(Bug::TwoRunners);
        }
        if (w.runners == 1) != w.task.has_runner() {
            return Err(Bug::RunnerCountMismatch);
        }
        if w.was_drained && w.task != State::Drained {
            return Err(Bug::DrainedLeft);
        }
        if w.task == State::Idle && w.owed != 0 {
            return Err(Bug::LostRequest);
        }
        Ok(())
    }

    /// The invariants on a state where nothing can move: the end of an execution.
    fn check_end(&self, w: &World) -> Result<(), Bug> {
        if w.actors
            .iter()
            .any(|a| !matches!(a.phase, Phase::Idle | Phase::Done))
        {
            return Err(Bug::Stuck);
        }
        if w.owed != 0 {
            return Err(Bug::LostRequest);
        }
        let end = if self.bounds.drainers > 0 {
            State::Drained
        } else {
            State::Idle
        };
        if w.task != end {
            return Err(Bug::WrongEndState);
        }
        Ok(())
    }

    fn record(&mut self, bug: Bug) {
        if self.bugs.contains_key(&bug) {
            return;
        }
        let mut trace = String::new();
        for s in &self.path {
            let outcome = s.outcome.map_or(String::new(), |o| format!(" = {o:?}"));
            trace += &format!(
                "  {:?}#{}: {}{outcome}  [task {:?}]\n",
                s.role, s.actor, s.what, s.task
            );
        }
        trace += &format!("  => {bug:?}\n");
        self.bugs.insert(bug, trace);
    }

    fn dfs(&mut self, w: World) {
        self.seen.insert(w.clone(), false);
        let mut steps = Vec::new();
        for i in 0..w.actors.len() {
            self.steps_of(&w, i, &mut steps);
        }
        if steps.is_empty() {
            self.ends += 1;
            if let Err(bug) = self.check_end(&w) {
                self.record(bug);
            }
        }
        for (step, next) in steps {
            self.transitions += 1;
            self.path.push(step);
            let checked = next.and_then(|mut n| {
                // `was_drained` is still the flag of the state before the step.
                Self::check(&n).map_err(|bug| (bug, n.task))?;
                n.was_drained |= n.task == State::Drained;
                Ok(n)
            });
            match checked {
                Err((bug, _)) => self.record(bug),
                Ok(n) => match self.seen.get(&n) {
                    Some(false) => self.record(Bug::Livelock),
                    Some(true) => {}
                    None => self.dfs(n),
                },
            }
            self.path.pop();
        }
        self.seen.insert(w, true);
    }
}

fn model_check(bounds: Bounds) -> Report {
    let mut c = Checker::new(bounds);
    let w = c.initial();
    if let Err(bug) = Checker::check(&w) {
        c.record(bug);
    }
    c.dfs(w);
    Report {
        states: c.seen.len(),
        transitions: c.transitions,
        ends: c.ends,
        bugs: c.bugs,
    }
}

fn assert_correct(bounds: Bounds) -> Report {
    let report = model_check(bounds);
    if let Some((bug, trace)) = report.bugs.iter().next() {
        panic!("{bounds:?}: {bug:?} after\n{trace}");
    }
    assert!(report.ends > 0);
    report
}

/// One inline and one deferred requester, two workers, one drainer.
const CORRECT: Bounds = Bounds {
    inline_requesters: 1,
    inline_requests: 2,
    deferred_requesters: 1,
    deferred_requests: 2,
    workers: 2,
    drainers: 1,
    budget_exhaustions: 2,
    variant: Variant::Correct,
};

#[test]
fn model_every_small_configuration() {
    let mut states = 0;
    for inline_requests in 0..=2 {
        for deferred_requests in 0..=2 {
            for workers in 1..=2 {
                for drainers in 0..=2 {
                    for budget_exhaustions in 0..=2 {
                        let r = assert_correct(Bounds {
                            inline_requests,
                            deferred_requests,
                            inline_requesters: 1,
                            deferred_requesters: 1,
                            workers,
                            drainers,
                            budget_exhaustions,
                            variant: Variant::Correct,
                        });
                        states += r.states;
                    }
                }
            }
        }
    }
    assert!(states > 10_000, "{states} states");
}

#[test]
fn model_larger_bounds() {
    let r = assert_correct(Bounds {
        inline_requests: 3,
        deferred_requests: 3,
        budget_exhaustions: 3,
        ..CORRECT
    });
    std::println!("{r:?}");
    assert!(r.states > 1_000 && r.transitions > r.states, "{r:?}");
}

#[test]
fn model_more_actors() {
    let r = assert_correct(Bounds {
        inline_requesters: 2,
        inline_requests: 2,
        deferred_requesters: 2,
        deferred_requests: 2,
        workers: 2,
        drainers: 2,
        budget_exhaustions: 2,
        variant: Variant::Correct,
    });
    std::println!("{r:?}");
    assert!(r.states > 10_000 && r.transitions > r.states, "{r:?}");
}

/// The checker's own sanity: every broken variant is caught, and for the right reason.
fn assert_caught(variant: Variant, expected: Bug) {
    let r = model_check(Bounds {
        inline_requests: 1,
        deferred_requests: 1,
        workers: 1,
        budget_exhaustions: 1,
        variant,
        ..CORRECT
    });
    let trace = r.bugs.get(&expected).unwrap_or_else(|| {
        panic!(
            "{variant:?}: {expected:?} not found, only {:?}",
            r.bugs.keys()
        )
    });
    std::println!("{variant:?}: {expected:?} after\n{trace}");
}

/// The C driver's use-after-free: a run out of budget stores `Idle` over `Draining` and
/// reschedules; the task runs again after the drainer was told the runner would stop (in the C
/// driver, the drainer took `Idle` for done and the QP was freed under that run).
#[test]
fn model_catches_budget_plain_store() {
    assert_caught(Variant::BudgetStoresIdle, Bug::RunStartAfterDrainRequest);
}

/// The C driver's current check, `if (state != DRAINING) state = IDLE`, is only right under its
/// lock: as a load and a store, the drain lands in between.
#[test]
fn model_catches_budget_check_then_store() {
    assert_caught(
        Variant::BudgetChecksThenStoresIdle,
        Bug::RunStartAfterDrainRequest,
    );
}

#[test]
fn model_catches_lost_rerun() {
    assert_caught(Variant::FinishStoresIdle, Bug::LostRequest);
}

#[test]
fn model_catches_racing_claim() {
    assert_caught(Variant::RequestChecksThenStoresRunning, Bug::TwoRunners);
}

// ------------------------------------------------------------------------------------------------
// Threads.

/// Steps a run takes before it calls `out_of_budget`.
const BUDGET: u64 = 3;

/// A task whose work is a counter: requesters post units, runners consume them one per step.
struct Harness {
    task: TaskState,
    posted: AtomicU64,
    consumed: AtomicU64,
    /// The work item is on the queue.
    item: AtomicBool,
    in_run: AtomicBool,
    /// A drain returned and saw the task drained.
    drained: AtomicBool,
    stop: AtomicBool,
    runs: AtomicU64,
}

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "{what}");
        thread::yield_now();
    }
}

impl Harness {
    fn new() -> Self {
        Self {
            task: TaskState::new(),
            posted: AtomicU64::new(0),
            consumed: AtomicU64::new(0),
            item: AtomicBool::new(false),
            in_run: AtomicBool::new(false),
            drained: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            runs: AtomicU64::new(0),
        }
    }

    fn enqueue(&self) {
        assert!(
            !self.item.swap(true, Ordering::SeqCst),
            "work item enqueued twice"
        );
    }

    /// The runner: run, then `finish` or `out_of_budget`, until it is told to stop.
    fn run(&self) {
        loop {
            assert!(
                !self.in_run.swap(true, Ordering::SeqCst),
                "two runners at once"
            );
            assert!(
                !self.drained.load(Ordering::SeqCst),
                "a run after the drain returned"
            );
            self.runs.fetch_add(1, Ordering::Relaxed);
            let mut steps = 0;
            let mut budget_used_up = false;
            loop {
                let posted = self.posted.load(Ordering::Acquire);
                let consumed = self.consumed.load(Ordering::Relaxed);
                if consumed == posted {
                    break;
                }
                self.consumed.store(consumed + 1, Ordering::Relaxed);
                steps += 1;
                if steps == BUDGET {
                    budget_used_up = true;
                    break;
                }
            }
            self.in_run.store(false, Ordering::SeqCst);
            let finish = if budget_used_up {
                self.task.out_of_budget()
            } else {
                self.task.finish()
            };
            match finish {
                Finish::Again => {}
                Finish::Idle | Finish::Drained => return,
                Finish::Requeue => return self.enqueue(),
            }
        }
    }

    /// Posts one unit of work and requests a run.
    fn post(&self, inline: bool) {
        self.posted.fetch_add(1, Ordering::Release);
        let request = if inline {
            self.task.request()
        } else {
            self.task.request_deferred()
        };
        match request {
            Request::RunInline => {
                assert!(inline);
                self.run();
            }
            Request::Enqueue => {
                assert!(!inline);
                self.enqueue();
            }
            Request::Pending | Request::Dead => {}
        }
    }

    /// A workqueue worker.
    fn worker(&self) {
        while !self.stop.load(Ordering::Acquire) {
            if self
                .item
                .compare_exchange(true, false, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
            {
                if self.task.start_queued() {
                    self.run();
                } else {
                    assert!(self.task.is_drained(), "work item found {:?}", self.task);
                }
            } else {
                thread::yield_now();
            }
        }
    }

    fn drain(&self) {
        if self.task.drain() == Drain::Wait {
            wait_until("the drain never completes", || self.task.is_drained());
        }
        self.drained.store(true, Ordering::SeqCst);
    }
}

const ROUNDS: u64 = 60;
const POSTS: u64 = 2000;

/// Two inline and two deferred requesters against two workers: when they are done and the task
/// is idle, every unit of work has been consumed.
#[test]
fn threads_lose_no_request() {
    for _ in 0..ROUNDS {
        let h = &Harness::new();
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| h.worker());
            }
            let requesters: Vec<_> = [true, false, true, false]
                .into_iter()
                .map(|inline| s.spawn(move || (0..POSTS).for_each(|_| h.post(inline))))
                .collect();
            for r in requesters {
                r.join().unwrap();
            }
            wait_until("the task never goes idle", || h.task.state() == State::Idle);
            assert_eq!(
                h.consumed.load(Ordering::Relaxed),
                h.posted.load(Ordering::Relaxed)
            );
            assert_eq!(h.task.drain(), Drain::Done);
            h.stop.store(true, Ordering::Release);
        });
        assert!(h.runs.load(Ordering::Relaxed) > 0);
    }
}

/// The same, with a drain at a different moment each round, half of them aimed at a run in
/// progress: the drain completes, nothing runs after it, the work item is never enqueued twice,
/// and never two runners.
#[test]
fn threads_drain_under_load() {
    for round in 0..ROUNDS * 5 {
        let h = &Harness::new();
        let drain_after = round * 7919 % (4 * POSTS);
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| h.worker());
            }
            let mut others: Vec<_> = [true, false, true, false]
                .into_iter()
                .map(|inline| s.spawn(move || (0..POSTS).for_each(|_| h.post(inline))))
                .collect();
            others.push(s.spawn(move || {
                wait_until("requesters stalled", || {
                    h.posted.load(Ordering::Relaxed) >= drain_after
                });
                // Every other round, aim at a run in progress (a drain that has to wait),
                // unless the requesters are done before one is seen.
                if round % 2 == 1 {
                    while !h.task.state().has_runner()
                        && h.posted.load(Ordering::Relaxed) < 4 * POSTS
                    {
                        core::hint::spin_loop();
                    }
                }
                h.drain();
            }));
            for t in others {
                t.join().unwrap();
            }
            // Flush: a work item queued before the drain finds it drained.
            wait_until("the work item never runs", || {
                !h.item.load(Ordering::SeqCst)
            });
            h.stop.store(true, Ordering::Release);
        });
        assert!(h.task.is_drained());
        assert_eq!(h.task.request(), Request::Dead);
        assert_eq!(h.task.request_deferred(), Request::Dead);
    }
}
