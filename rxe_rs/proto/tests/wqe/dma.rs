// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The DMA cursor (`proto/wqe/dma.rs`) against C `copy_data()` of `rxe_mr.c`, transliterated,
//! and the completion status of a receive buffer that fails.

use std::vec::Vec;

use proptest::prelude::*;

use crate::proto::wqe::*;

/// C `copy_data()` of `rxe_mr.c`, transliterated with `int` arithmetic, recording the
/// `rxe_mr_copy()` calls instead of copying. `dma` is (cur_sge, sge_offset, resid).
fn c_copy_data(
    sges: &[Sge],
    num_sge: u32,
    dma: &mut (u32, u32, u32),
    mut length: i64,
) -> Result<Vec<(u64, u32, u32)>, i32> {
    let mut calls = Vec::new();
    if length == 0 {
        return Ok(calls);
    }
    let mut sge = dma.0 as usize;
    let mut offset = i64::from(dma.1);
    let mut resid = i64::from(dma.2);
    if length > resid {
        return Err(-22);
    }
    while length > 0 {
        let mut bytes = length;
        if offset >= i64::from(sges[sge].length) {
            sge += 1;
            dma.0 += 1;
            offset = 0;
            if dma.0 >= num_sge {
                return Err(-28);
            }
            if sges[sge].length == 0 {
                continue;
            }
        }
        let s = sges[sge];
        if bytes > i64::from(s.length) - offset {
            bytes = i64::from(s.length) - offset;
        }
        if bytes > 0 {
            calls.push((s.addr + offset as u64, bytes as u32, s.lkey));
            offset += bytes;
            resid -= bytes;
            length -= bytes;
        }
    }
    dma.1 = offset as u32;
    dma.2 = resid as u32;
    Ok(calls)
}

/// SGEs at disjoint addresses, `lens` bytes each, lkey = index.
fn spaced(lens: &[u32]) -> Vec<Sge> {
    lens.iter()
        .enumerate()
        .map(|(i, &length)| Sge {
            addr: 0x10_0000 * (i as u64 + 1),
            length,
            lkey: i as u32,
        })
        .collect()
}

/// Copies `len` bytes with the cursor, chunk by chunk.
fn copy(
    cursor: &mut DmaCursor,
    sges: &[Sge],
    num_sge: u32,
    len: u32,
) -> Result<Vec<(u64, u32, u32)>, DmaError> {
    let mut out = Vec::new();
    let mut left = len;
    while left > 0 {
        let c = cursor
            .next_chunk(|i| sges.get(i as usize).copied(), num_sge, left)?
            .unwrap();
        out.push((c.addr, c.len, c.lkey));
        left -= c.len;
    }
    Ok(out)
}

#[test]
fn cursor_walks_like_copy_data() {
    let sges = spaced(&[5, 0, 0, 3, 10]);
    let mut cursor = DmaCursor::new(18);
    let mut dma = (0, 0, 18);
    for len in [2, 3, 4, 0, 9] {
        let ours = copy(&mut cursor, &sges, 5, len).unwrap();
        let c = c_copy_data(&sges, 5, &mut dma, i64::from(len)).unwrap();
        assert_eq!(ours, c);
        assert_eq!((cursor.cur_sge, cursor.sge_offset, cursor.resid), dma);
    }
    assert!(cursor.is_done());
    // Used up SGEs are left lazily, as in C.
    assert_eq!((cursor.cur_sge, cursor.sge_offset), (4, 10));
    assert_eq!(
        cursor.next_chunk(|i| sges.get(i as usize).copied(), 5, 1),
        Err(DmaError::TooLong)
    );
    assert_eq!(cursor.next_chunk(|_| None, 5, 0), Ok(None));
}

#[test]
fn cursor_errors() {
    let sges = spaced(&[4, 4]);
    let at = |i: u32| sges.get(i as usize).copied();
    // resid larger than the SGEs: C -ENOSPC.
    let mut cursor = DmaCursor::new(20);
    assert_eq!(cursor.advance(at, 2, 8), Ok(()));
    let before = cursor;
    assert_eq!(cursor.next_chunk(at, 2, 1), Err(DmaError::NoSpace));
    assert_eq!(cursor, before, "unchanged on error");
    assert_eq!(cursor.advance(at, 2, 12), Err(DmaError::NoSpace));
    assert_eq!(cursor, before);
    // An SGE that cannot be read.
    let mut cursor = DmaCursor::new(8);
    assert_eq!(cursor.next_chunk(|_| None, 2, 1), Err(DmaError::BadSge(0)));
    // num_sge 0.
    assert_eq!(
        DmaCursor::new(1).next_chunk(at, 0, 1),
        Err(DmaError::NoSpace)
    );
    // Addresses that would wrap.
    let top = [Sge {
        addr: u64::MAX - 1,
        length: 4,
        lkey: 0,
    }];
    let mut cursor = DmaCursor::new(4);
    assert_eq!(
        cursor.next_chunk(|i| top.get(i as usize).copied(), 1, 2),
        Ok(Some(Chunk {
            addr: u64::MAX - 1,
            len: 2,
            lkey: 0
        }))
    );
    assert_eq!(
        cursor.next_chunk(|i| top.get(i as usize).copied(), 1, 1),
        Err(DmaError::AddrOverflow)
    );
    // Inline data.
    let mut cursor = DmaCursor::new(10);
    assert_eq!(cursor.next_inline(4), Ok(0..4));
    assert_eq!(cursor.next_inline(6), Ok(4..10));
    assert_eq!(cursor.next_inline(1), Err(DmaError::TooLong));
    assert_eq!(cursor.next_inline(0), Ok(10..10));
    let mut hostile = DmaCursor {
        cur_sge: 0,
        sge_offset: u32::MAX,
        resid: 5,
    };
    assert_eq!(hostile.next_inline(5), Err(DmaError::TooLong));
}

proptest! {
    /// The chunks are the requested bytes, in order, never crossing an SGE, and the cursor ends
    /// in C's state.
    #[test]
    fn cursor_chunks_are_the_bytes(
        lens in prop::collection::vec(prop_oneof![Just(0u32), 1..40u32], 0..8),
        pieces in prop::collection::vec(0..60u32, 0..20),
    ) {
        let sges = spaced(&lens);
        let num_sge = sges.len() as u32;
        let total: u32 = lens.iter().sum();
        let flat: Vec<u64> = sges.iter().flat_map(|s| s.addr..s.addr + u64::from(s.length)).collect();
        let mut cursor = DmaCursor::new(total);
        let mut dma = (0, 0, total);
        let mut got: Vec<u64> = Vec::new();
        for p in pieces {
            let len = p.min(cursor.resid);
            let ours = copy(&mut cursor, &sges, num_sge, len);
            let c = c_copy_data(&sges, num_sge, &mut dma, i64::from(len));
            prop_assert_eq!(&ours.clone().map_err(|_| ()), &c.clone().map_err(|_| ()));
            let ours = ours.unwrap();
            for &(addr, l, lkey) in &ours {
                prop_assert!(l >= 1);
                let s = sges[lkey as usize];
                prop_assert!(addr >= s.addr && addr + u64::from(l) <= s.addr + u64::from(s.length));
                got.extend(addr..addr + u64::from(l));
            }
            prop_assert_eq!((cursor.cur_sge, cursor.sge_offset, cursor.resid), dma);
        }
        prop_assert_eq!(&got[..], &flat[..got.len()]);
        // And the rest in one go.
        let resid = cursor.resid;
        let rest = copy(&mut cursor, &sges, num_sge, resid).unwrap();
        got.extend(rest.iter().flat_map(|&(a, l, _)| a..a + u64::from(l)));
        prop_assert_eq!(got, flat);
        prop_assert!(cursor.is_done());
    }

    /// `advance` lands where copying the same bytes does.
    #[test]
    fn advance_is_copy_without_data(
        lens in prop::collection::vec(0..30u32, 1..6),
        a in 0..200u32,
        b in 0..200u32,
    ) {
        let sges = spaced(&lens);
        let n = sges.len() as u32;
        let total: u32 = lens.iter().sum();
        let a = a.min(total);
        let b = b.min(total - a);
        let mut copied = DmaCursor::new(total);
        copy(&mut copied, &sges, n, a).unwrap();
        copy(&mut copied, &sges, n, b).unwrap();
        let mut advanced = DmaCursor::new(total);
        advanced.advance(|i| sges.get(i as usize).copied(), n, a).unwrap();
        advanced.advance(|i| sges.get(i as usize).copied(), n, b).unwrap();
        prop_assert_eq!(advanced, copied);
    }

    /// Any cursor, SGEs and count: no panic, and an error leaves the cursor alone.
    #[test]
    fn hostile_cursors(
        cur_sge in any::<u32>(),
        sge_offset in any::<u32>(),
        resid in any::<u32>(),
        sges in prop::collection::vec((any::<u64>(), any::<u32>(), any::<u32>()), 0..6),
        num_sge in prop_oneof![0..8u32, Just(u32::MAX)],
        max_len in any::<u32>(),
    ) {
        let sges: Vec<Sge> = sges.into_iter().map(|(addr, length, lkey)| Sge { addr, length, lkey }).collect();
        let mut cursor = DmaCursor { cur_sge: cur_sge % 8, sge_offset, resid };
        let before = cursor;
        match cursor.next_chunk(|i| sges.get(i as usize).copied(), num_sge, max_len) {
            Ok(Some(c)) => {
                prop_assert!(c.len >= 1 && c.len <= max_len);
                prop_assert_eq!(cursor.resid, before.resid - c.len);
                prop_assert!(c.addr.checked_add(u64::from(c.len - 1)).is_some());
            }
            Ok(None) => prop_assert_eq!(max_len, 0),
            Err(_) => prop_assert_eq!(cursor, before),
        }
    }
}

#[test]
fn receive_buffer_failures_complete_with_their_status() {
    use crate::proto::wqe::{DmaError, IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR};
    assert_eq!(DmaError::TooLong.recv_status(), IB_WC_LOC_LEN_ERR);
    assert_eq!(DmaError::NoSpace.recv_status(), IB_WC_LOC_LEN_ERR);
    assert_eq!(DmaError::BadSge(3).recv_status(), IB_WC_LOC_QP_OP_ERR);
    // An SGE at 2^64 - 16 of 64 bytes: no MR holds its end.
    assert_eq!(DmaError::AddrOverflow.recv_status(), IB_WC_LOC_PROT_ERR);
}
