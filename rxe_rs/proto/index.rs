// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Cyclic allocation of object indices in a range, as the C driver's pools do with
//! `xa_alloc_cyclic`: MR/MW keys, QPNs and SRQ numbers come from it, and a freed index is not
//! handed out again until the range wraps, so a stale key or QPN is unlikely to hit a new
//! object. The bitmap is the caller's (`(max - min + 1)` bits, see [`IndexAllocator::words`]).

/// The allocation state for indices `min..=max`; the bitmap lives with the caller.
#[derive(Debug)]
pub struct IndexAllocator {
    min: u32,
    max: u32,
    /// Where the next search starts (`xa_alloc_cyclic`'s `next`).
    next: u32,
}

impl IndexAllocator {
    /// Indices `min..=max`; `None` if the range is empty or has 2^32 indices.
    pub const fn new(min: u32, max: u32) -> Option<Self> {
        if min > max || (min == 0 && max == u32::MAX) {
            return None;
        }
        Some(Self {
            min,
            max,
            next: min,
        })
    }

    /// 64-bit words of bitmap the range needs.
    pub const fn words(&self) -> usize {
        ((self.max - self.min) as usize) / 64 + 1
    }

    /// Allocates the first free index at or after the cursor, wrapping once; `None` when the
    /// range is full or `bits` is too short.
    pub fn alloc(&mut self, bits: &mut [u64]) -> Option<u32> {
        if bits.len() < self.words() {
            return None;
        }
        let span = self.max - self.min + 1;
        let start = self.next - self.min;
        let mut i = 0u32;
        while i < span {
            // `start + i` may pass `span` once: wrap it back into the range.
            let rel = match start.checked_add(i) {
                Some(r) if r < span => r,
                Some(r) => r - span,
                None => return None,
            };
            let (word, bit) = ((rel / 64) as usize, rel % 64);
            let w = bits.get_mut(word)?;
            if *w & (1 << bit) == 0 {
                *w |= 1 << bit;
                let index = self.min + rel;
                self.next = if index == self.max {
                    self.min
                } else {
                    index + 1
                };
                return Some(index);
            }
            i += 1;
        }
        None
    }

    /// Frees `index`; ignored if it is outside the range or not allocated.
    pub fn free(&self, bits: &mut [u64], index: u32) {
        if index < self.min || index > self.max {
            return;
        }
        let rel = index - self.min;
        if let Some(w) = bits.get_mut((rel / 64) as usize) {
            *w &= !(1 << (rel % 64));
        }
    }
}
