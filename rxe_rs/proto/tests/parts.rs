// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! `Parts` against the contiguous bytes it stands for (the captures' ICRCs are checked in
//! pieces by `vectors.rs`).

use crate::proto::parts::{Full, Parts, MAX_PARTS};
use proptest::prelude::*;
use std::vec;
use std::vec::Vec;

/// `bytes` cut at `cuts` (sorted, deduplicated, inside it).
fn split<'a>(bytes: &'a [u8], cuts: &[usize]) -> Parts<'a> {
    let mut parts = Parts::new();
    let mut at = 0;
    for &c in cuts.iter().chain(core::iter::once(&bytes.len())) {
        parts.push(&bytes[at..c]).unwrap();
        at = c;
    }
    parts
}

fn cuts(len: usize, raw: &[usize]) -> Vec<usize> {
    let mut c: Vec<usize> = raw.iter().map(|r| r % (len + 1)).collect();
    c.sort_unstable();
    c.dedup();
    c.truncate(MAX_PARTS - 1);
    c
}

fn flat(parts: &Parts<'_>) -> Vec<u8> {
    parts.iter().collect::<Vec<_>>().concat()
}

proptest! {
    #[test]
    fn parts_read_as_the_bytes_they_cut(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        raw in proptest::collection::vec(any::<usize>(), 0..30),
        at in any::<usize>(),
    ) {
        let c = cuts(bytes.len(), &raw);
        let parts = split(&bytes, &c);
        prop_assert_eq!(parts.len(), bytes.len());
        prop_assert!(parts.iter().all(|p| !p.is_empty()));
        prop_assert_eq!(flat(&parts), bytes.clone());
        prop_assert!(parts == bytes[..]);
        let at = at % (bytes.len() + 2);
        match (parts.skip(at), bytes.get(at..)) {
            (Some(s), Some(b)) => prop_assert_eq!(flat(&s), b.to_vec()),
            (None, None) => {}
            (s, b) => prop_assert!(false, "skip({}) {:?} vs {:?}", at, s.map(|p| p.len()), b),
        }
        match (parts.take(at), bytes.get(..at)) {
            (Some(t), Some(b)) => prop_assert_eq!(flat(&t), b.to_vec()),
            (None, None) => {}
            (t, b) => prop_assert!(false, "take({}) {:?} vs {:?}", at, t.map(|p| p.len()), b),
        }
        let mut dst = vec![0u8; at];
        prop_assert_eq!(parts.copy_prefix(&mut dst), at <= bytes.len());
        if at <= bytes.len() {
            prop_assert_eq!(&dst[..], &bytes[..at]);
        }
        prop_assert_eq!(
            parts.last_chunk::<4>(),
            bytes.last_chunk::<4>().copied()
        );
    }

    #[test]
    fn a_window_reads_as_its_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        raw in proptest::collection::vec(any::<usize>(), 0..30),
        a in any::<usize>(),
        b in any::<usize>(),
    ) {
        let c = cuts(bytes.len(), &raw);
        let parts = split(&bytes, &c);
        let (a, b) = (a % (bytes.len() + 1), b % (bytes.len() + 1));
        let (start, end) = (a.min(b), a.max(b));
        let window = parts.range(start, end).unwrap();
        let want = &bytes[start..end];
        let first = window.first();
        prop_assert!(want.starts_with(first));
        prop_assert_eq!(first.is_empty(), want.is_empty());
        if let Some(one) = window.as_slice() {
            prop_assert_eq!(one, want);
        }
        prop_assert_eq!(window.as_slice().is_some(), window.iter().count() <= 1);
        prop_assert_eq!(window.last_chunk::<4>(), want.last_chunk::<4>().copied());
        prop_assert_eq!(window.last_chunk::<1>(), want.last_chunk::<1>().copied());
    }
}

#[test]
fn a_full_parts_refuses_more() {
    let byte = [1u8];
    let mut parts = Parts::new();
    for _ in 0..MAX_PARTS {
        parts.push(&byte).unwrap();
    }
    assert_eq!(parts.push(&byte), Err(Full));
    // Empty pieces take no slot.
    assert_eq!(parts.push(&[]), Ok(()));
    assert_eq!(parts.len(), MAX_PARTS);
}

#[test]
fn a_cut_parts_takes_no_more_pieces() {
    let bytes = [1u8, 2, 3, 4];
    let cut = Parts::from_slice(&bytes).skip(1).unwrap();
    assert!(cut == bytes[1..]);
    let mut more = cut;
    assert_eq!(more.push(&bytes), Err(Full));
    assert_eq!(more.len(), 3);
}
