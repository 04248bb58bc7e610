// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The lock-free pair: single-threaded semantics, and a threaded stress test in which readers
//! must never see halves of two different writes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};
use std::vec::Vec;

use crate::proto::seq::SeqPair;

#[test]
fn reads_what_was_written() {
    let (p, mut w) = SeqPair::new(7, 9);
    assert_eq!(p.read(), (7, 9));
    p.write(&mut w, Some(1), None);
    assert_eq!(p.read(), (1, 9));
    p.write(&mut w, None, Some(2));
    assert_eq!(p.read(), (1, 2));
    p.write(&mut w, Some(usize::MAX), Some(u32::MAX));
    assert_eq!(p.read(), (usize::MAX, u32::MAX));
    p.write(&mut w, None, None);
    assert_eq!(p.read(), (usize::MAX, u32::MAX));
}

#[test]
fn a_count_is_unchanged_until_the_next_write() {
    let (p, mut w) = SeqPair::new(7, 9);
    let (a, b, count) = p.read_counted();
    assert_eq!((a, b), (7, 9));
    assert!(p.unchanged_since(count));
    assert_eq!(p.read_counted().2, count, "a read changes nothing");
    // Even a write of the same values, or of neither word, ends it.
    p.write(&mut w, Some(7), None);
    assert!(!p.unchanged_since(count));
    let (_, _, after) = p.read_counted();
    assert!(p.unchanged_since(after));
    p.write(&mut w, None, None);
    assert!(!p.unchanged_since(after));
}

#[test]
fn many_writes_one_thread() {
    let (p, mut w) = SeqPair::new(0, 0);
    for i in 0..100_000u32 {
        p.write(&mut w, Some(i as usize), Some(i));
        assert_eq!(p.read(), (i as usize, i));
    }
}

/// One writer stores `(n, n)` pairs with growing `n`; readers must only ever see equal halves,
/// and never go back in time.
#[test]
fn readers_never_see_a_torn_pair() {
    let (pair, mut w) = SeqPair::new(0, 0);
    let pair = Arc::new(pair);
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (pair, stop, reads) = (pair.clone(), stop.clone(), reads.clone());
            thread::spawn(move || {
                let mut last = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let (a, b, count) = pair.read_counted();
                    assert_eq!(a as u32, b, "torn read: {a} / {b}");
                    assert!(a >= last, "went back: {a} after {last}");
                    // Unchanged since the read: a read now gives the same words.
                    if pair.unchanged_since(count) {
                        let (a2, _, count2) = pair.read_counted();
                        assert!(
                            count2 != count || a2 == a,
                            "count {count} kept over a write"
                        );
                    }
                    last = a;
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let t0 = Instant::now();
    let mut n = 0usize;
    while t0.elapsed() < Duration::from_millis(500) {
        n += 1;
        pair.write(&mut w, Some(n), Some(n as u32));
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().expect("reader panicked");
    }
    assert!(n > 1000, "writer made only {n} writes");
    assert!(reads.load(Ordering::Relaxed) > 1000);
    assert_eq!(pair.read(), (n, n as u32));
}
