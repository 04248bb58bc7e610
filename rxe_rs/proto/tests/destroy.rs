// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! A model check of QP destruction against packet delivery (`rxe/qp.rs` `destroy`,
//! `rxe/recv.rs` `deliver`, the closable `SkbQueue` of `net/skb.rs`).
//!
//! Receivers look the QP up in the table (taking a reference), then push their packet on its
//! queue and kick its task; the QP's task pops packets until it is drained. Destruction removes
//! the QP from the table, closes its queues (under the queue lock: purge and refuse from now
//! on), then drains the task. Every interleaving is visited; checked: when every actor is done,
//! no packet is left on the destroyed QP's queues (a packet left there would hold the QP, its
//! MRs' pages and, looped back, a reference to a QP: a leak). The variant that only purges,
//! without closing, must be caught.

use std::collections::HashSet;
use std::vec::Vec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Teardown {
    /// Close the queues: a push after the close drops its packet.
    Close,
    /// Purge the queues once; pushes are always accepted.
    PurgeOnly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Receiver {
    /// About to look the QP up.
    Lookup,
    /// Found it; about to push the packet.
    Push,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Destroyer {
    Remove,
    Close,
    Drain,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    in_table: bool,
    closed: bool,
    queued: u8,
    dropped: u8,
    drained: bool,
    receivers: Vec<Receiver>,
    destroyer: Destroyer,
}

fn next(teardown: Teardown, s: &State) -> Vec<State> {
    let mut out = Vec::new();
    for (i, r) in s.receivers.iter().enumerate() {
        let mut t = s.clone();
        t.receivers[i] = match *r {
            Receiver::Lookup if s.in_table => Receiver::Push,
            Receiver::Lookup => Receiver::Done,
            Receiver::Push => {
                if teardown == Teardown::Close && t.closed {
                    t.dropped += 1;
                } else {
                    t.queued += 1;
                }
                Receiver::Done
            }
            Receiver::Done => continue,
        };
        out.push(t);
    }
    // The QP's task takes a packet while it is not drained.
    if !s.drained && s.queued > 0 {
        let mut t = s.clone();
        t.queued -= 1;
        out.push(t);
    }
    let mut t = s.clone();
    t.destroyer = match s.destroyer {
        Destroyer::Remove => {
            t.in_table = false;
            Destroyer::Close
        }
        Destroyer::Close => {
            t.closed = teardown == Teardown::Close;
            t.queued = 0;
            Destroyer::Drain
        }
        Destroyer::Drain => {
            t.drained = true;
            Destroyer::Done
        }
        Destroyer::Done => return out,
    };
    out.push(t);
    out
}

/// Every interleaving of `receivers` deliveries with one destruction: the states seen, or the
/// first final state that leaves a packet queued.
fn check(teardown: Teardown, receivers: usize) -> Result<usize, std::string::String> {
    let start = State {
        in_table: true,
        closed: false,
        queued: 0,
        dropped: 0,
        drained: false,
        receivers: std::vec![Receiver::Lookup; receivers],
        destroyer: Destroyer::Remove,
    };
    let mut seen = HashSet::new();
    let mut stack = std::vec![start];
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        let n = next(teardown, &s);
        if n.is_empty() && s.queued > 0 {
            return Err(std::format!("a packet outlives the QP: {s:?}"));
        }
        stack.extend(n);
    }
    Ok(seen.len())
}

#[test]
fn closed_queues_leave_nothing_behind() {
    for receivers in 1..=4 {
        let states = check(Teardown::Close, receivers).unwrap_or_else(|e| panic!("{e}"));
        assert!(states > 4 * receivers, "{receivers}: {states} states");
    }
}

#[test]
fn purging_without_closing_is_caught() {
    let err = check(Teardown::PurgeOnly, 1).expect_err("the purge-only teardown must leak");
    assert!(err.contains("outlives"), "{err}");
}
