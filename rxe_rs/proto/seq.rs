// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! A pair of words read together without a lock: a sequence count over two atomics.
//!
//! The data path checks an MR's PD and access rights on every packet, while `rereg_user_mr`
//! may replace both at any time; a check must see the old pair or the new one, never a mix. A
//! reader loads the count, the two words and the count again, and retries if a write was in
//! progress or happened in between; it takes no lock and writes nothing shared, so packets on
//! many CPUs do not bounce a lock's cache line. Writes are rare; each takes the pair's one
//! [`SeqWriter`] by `&mut`, so two cannot overlap: its owner keeps it inside the lock that
//! serialises them.
//!
//! The orderings follow Boehm, "Can seqlocks get along with programming language memory
//! models?" (MSPC 2012): the words are atomics themselves (no data race), the reader's second
//! count load is ordered after the word loads by an acquire fence, the writer's first count
//! store is ordered before the word stores by a release fence.

use core::sync::atomic::{fence, AtomicU32, AtomicUsize, Ordering};

/// The right to write a [`SeqPair`]: one per pair, made with it. [`SeqPair::write`] takes it
/// by `&mut`, so whoever holds it (the kernel keeps it in an irq-safe spinlock) is the only
/// writer.
pub struct SeqWriter(());

/// A `usize` and a `u32` that are read and written as one value.
pub struct SeqPair {
    /// Even: no write in progress; odd: a writer is between its two count stores.
    seq: AtomicU32,
    first: AtomicUsize,
    second: AtomicU32,
}

impl SeqPair {
    /// A pair holding `(first, second)`, and its writer.
    pub const fn new(first: usize, second: u32) -> (Self, SeqWriter) {
        let pair = Self {
            seq: AtomicU32::new(0),
            first: AtomicUsize::new(first),
            second: AtomicU32::new(second),
        };
        (pair, SeqWriter(()))
    }

    /// Both words, as one write left them.
    ///
    /// Spins while a write is in progress: a writer must not be interrupted by a reader on its
    /// own CPU (the kernel writer disables interrupts around [`SeqPair::write`]).
    pub fn read(&self) -> (usize, u32) {
        let (first, second, _) = self.read_counted();
        (first, second)
    }

    /// [`Self::read`], with the count the words were read at: while
    /// [`Self::unchanged_since`] that count, they are still what the pair holds.
    pub fn read_counted(&self) -> (usize, u32, u32) {
        loop {
            let before = self.seq.load(Ordering::Acquire);
            if before & 1 == 0 {
                let first = self.first.load(Ordering::Relaxed);
                let second = self.second.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == before {
                    return (first, second, before);
                }
            }
            core::hint::spin_loop();
        }
    }

    /// Whether no write has started since a read at `count` ([`Self::read_counted`]): one load
    /// where a read is five. (The count would have to wrap, 2^31 writes, to come back.)
    pub fn unchanged_since(&self, count: u32) -> bool {
        self.seq.load(Ordering::Acquire) == count
    }

    /// Replaces the words that are `Some`, both visible to readers at once.
    ///
    /// `_writer` is this pair's [`SeqWriter`] (a second one at once would break the count).
    /// The caller keeps readers on its own CPU out while it writes (or a reader there spins
    /// forever): the kernel holds the writer under an irq-safe spinlock.
    pub fn write(&self, _writer: &mut SeqWriter, first: Option<usize>, second: Option<u32>) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        if let Some(v) = first {
            self.first.store(v, Ordering::Relaxed);
        }
        if let Some(v) = second {
            self.second.store(v, Ordering::Relaxed);
        }
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }
}
