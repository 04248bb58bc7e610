// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! CQ notification ([`CqNotify`]): the arm/complete decisions, and an exhaustive model check of
//! the arm/post/fire protocol against an event-driven consumer.

use crate::proto::cq::{CqNotify, IB_CQ_NEXT_COMP, IB_CQ_SOLICITED};
use std::collections::HashSet;
use std::vec::Vec;

#[test]
fn unarmed_cq_never_fires() {
    let mut n = CqNotify::new();
    for (solicited, success) in [(false, true), (true, true), (false, false), (true, false)] {
        assert!(!n.completion(solicited, success));
    }
}

#[test]
fn next_comp_fires_once_then_disarms() {
    let mut n = CqNotify::new();
    n.arm(IB_CQ_NEXT_COMP);
    assert!(n.completion(false, true));
    assert!(!n.is_armed());
    assert!(!n.completion(false, true));
}

#[test]
fn solicited_only_waits_for_a_solicited_completion() {
    let mut n = CqNotify::new();
    n.arm(IB_CQ_SOLICITED);
    assert!(
        !n.completion(false, true),
        "an unsolicited success does not wake"
    );
    assert!(n.is_armed());
    assert!(n.completion(true, true));
    assert!(!n.is_armed());
}

#[test]
fn solicited_only_wakes_on_an_unsuccessful_completion() {
    // IBA 11.4.2.2: an error completion counts as solicited (flush completions included).
    let mut n = CqNotify::new();
    n.arm(IB_CQ_SOLICITED);
    assert!(n.completion(false, false));
    assert!(!n.is_armed());
}

#[test]
fn stronger_arm_wins() {
    let mut n = CqNotify::new();
    n.arm(IB_CQ_SOLICITED);
    n.arm(IB_CQ_NEXT_COMP);
    assert!(n.completion(false, true));
    let mut n = CqNotify::new();
    // IB_CQ_REPORT_MISSED_EVENTS (4) is not an arm bit.
    n.arm(IB_CQ_NEXT_COMP | 4);
    assert!(n.completion(false, true));
    assert!(!n.is_armed());
}

// ------------------------------------------------------------------------------------------------
// Exhaustive model check.
//
// Producers each write CQEs; one consumer runs the event-driven loop every kernel ULP and
// `ibv_get_cq_event` user runs: arm with IB_CQ_REPORT_MISSED_EVENTS; if completions were
// missed, poll; else sleep until an event, then poll; until it has seen every CQE. Each step is
// one critical section of the CQ lock (or one atomic operation, for the broken protocol, which
// is the arm/fire handling the driver had: the arm an atomic `fetch_or` outside the lock, the
// fire decision a load and a store after the ring lock was released). A depth-first search
// visits every interleaving. Checked: one arm raises at most one event, and the consumer never
// sleeps for ever with CQEs it has not seen.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// Arm, write + decide + fire: each one step under the CQ lock ([`CqNotify`]).
    Locked,
    /// Write under the lock, then load `notify`, then store 0 and fire: three steps.
    SplitLoadStore,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Producer {
    /// About to write CQE number `left` (counting down).
    Write {
        left: u8,
    },
    /// Broken protocol: wrote; about to load `notify`.
    Load {
        left: u8,
    },
    /// Broken protocol: loaded an armed `notify`; about to clear it and fire.
    Fire {
        left: u8,
    },
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Consumer {
    /// About to arm (and, with the lock, learn whether CQEs are waiting).
    Arm,
    /// Broken protocol: armed with `fetch_or`; about to check the ring under the lock.
    CheckMissed,
    /// Asleep until an event.
    Sleep,
    /// About to poll every CQE there is.
    Poll,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    notify: CqNotify,
    /// Broken protocol's `notify` word.
    raw: u32,
    /// CQEs written and not polled.
    ring: u8,
    polled: u8,
    /// Events raised and not taken by the consumer, and in all.
    events_pending: u8,
    events: u8,
    arms: u8,
    producers: Vec<Producer>,
    consumer: Consumer,
}

struct Model {
    protocol: Protocol,
    total: u8,
}

impl Model {
    fn fire(s: &mut State) {
        s.events += 1;
        s.events_pending += 1;
    }

    /// Every state one step away from `s`.
    fn next(&self, s: &State) -> Vec<State> {
        let mut out = Vec::new();
        for (i, p) in s.producers.iter().enumerate() {
            let mut t = s.clone();
            let next_of = |left: u8| {
                if left > 1 {
                    Producer::Write { left: left - 1 }
                } else {
                    Producer::Done
                }
            };
            t.producers[i] = match (*p, self.protocol) {
                (Producer::Done, _) => continue,
                (Producer::Write { left }, Protocol::Locked) => {
                    t.ring += 1;
                    if t.notify.completion(false, true) {
                        Self::fire(&mut t);
                    }
                    next_of(left)
                }
                (Producer::Write { left }, Protocol::SplitLoadStore) => {
                    t.ring += 1;
                    Producer::Load { left }
                }
                (Producer::Load { left }, _) => {
                    if t.raw & IB_CQ_NEXT_COMP != 0 {
                        Producer::Fire { left }
                    } else {
                        next_of(left)
                    }
                }
                (Producer::Fire { left }, _) => {
                    t.raw = 0;
                    Self::fire(&mut t);
                    next_of(left)
                }
            };
            out.push(t);
        }
        let mut t = s.clone();
        t.consumer = match (s.consumer, self.protocol) {
            (Consumer::Done, _) => return out,
            (Consumer::Arm, Protocol::Locked) => {
                t.arms += 1;
                t.notify.arm(IB_CQ_NEXT_COMP);
                if t.ring > 0 {
                    Consumer::Poll
                } else {
                    Consumer::Sleep
                }
            }
            (Consumer::Arm, Protocol::SplitLoadStore) => {
                t.arms += 1;
                t.raw |= IB_CQ_NEXT_COMP;
                Consumer::CheckMissed
            }
            (Consumer::CheckMissed, _) => {
                if t.ring > 0 {
                    Consumer::Poll
                } else {
                    Consumer::Sleep
                }
            }
            (Consumer::Sleep, _) => {
                if t.events_pending == 0 {
                    return out;
                }
                t.events_pending -= 1;
                Consumer::Poll
            }
            (Consumer::Poll, _) => {
                t.polled += t.ring;
                t.ring = 0;
                if t.polled == self.total {
                    Consumer::Done
                } else {
                    Consumer::Arm
                }
            }
        };
        out.push(t);
        out
    }

    /// Explores every interleaving; the first violation found, if any.
    fn check(&self, producers: &[u8]) -> Result<usize, std::string::String> {
        let start = State {
            notify: CqNotify::new(),
            raw: 0,
            ring: 0,
            polled: 0,
            events_pending: 0,
            events: 0,
            arms: 0,
            producers: producers
                .iter()
                .map(|&n| Producer::Write { left: n })
                .collect(),
            consumer: Consumer::Arm,
        };
        let mut seen = HashSet::new();
        let mut stack = std::vec![start];
        while let Some(s) = stack.pop() {
            if !seen.insert(s.clone()) {
                continue;
            }
            if s.events > s.arms {
                return Err(std::format!(
                    "{} events for {} arms: {s:?}",
                    s.events,
                    s.arms
                ));
            }
            let next = self.next(&s);
            if next.is_empty() && s.consumer != Consumer::Done {
                return Err(std::format!("the consumer sleeps for ever: {s:?}"));
            }
            stack.extend(next);
        }
        Ok(seen.len())
    }
}

#[test]
fn locked_protocol_one_event_per_arm_and_no_lost_wakeup() {
    for producers in [
        &[1u8][..],
        &[2],
        &[1, 1],
        &[2, 1],
        &[2, 2],
        &[1, 1, 1],
        &[2, 2, 1],
    ] {
        let total = producers.iter().sum();
        let model = Model {
            protocol: Protocol::Locked,
            total,
        };
        let states = model
            .check(producers)
            .unwrap_or_else(|e| panic!("{producers:?}: {e}"));
        assert!(states >= 4, "{producers:?}: only {states} states explored");
    }
}

#[test]
fn split_load_store_raises_two_events_for_one_arm() {
    // The protocol the checker must reject: two CQEs written at once both see the arm.
    let model = Model {
        protocol: Protocol::SplitLoadStore,
        total: 2,
    };
    let err = model
        .check(&[1, 1])
        .expect_err("the split protocol must be caught");
    assert!(err.contains("events for"), "{err}");
}
