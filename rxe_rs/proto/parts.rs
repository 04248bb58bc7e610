// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! A byte string in pieces: a packet whose payload is not contiguous (a socket buffer's linear
//! part and its page fragments), read without gathering it into one buffer.

/// The most pieces a [`Parts`] holds: an skb's linear part and a few page fragments (a packet
/// of ours carries at most [`MAX_PARTS`] − 2 payload fragments and its trailer). Few, so that a
/// `Parts` stays small enough to pass and copy per packet; a received skb with more fragments
/// is linearised.
pub const MAX_PARTS: usize = 4;

/// Too many pieces for a [`Parts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

/// Bytes as a sequence of slices, read in order: the pieces as given, and the window of them
/// this value stands for (so that `skip`, `take` and `range` only move the window).
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    pieces: [&'a [u8]; MAX_PARTS],
    count: u32,
    /// Bytes of all the pieces.
    total: u32,
    /// Bytes of the pieces before the window.
    start: u32,
    /// Bytes in the window (a packet's: `u32` keeps a `Parts` small).
    len: u32,
}

impl<'a> Default for Parts<'a> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Parts<'a> {
    /// No bytes.
    pub const fn new() -> Self {
        Self {
            pieces: [&[]; MAX_PARTS],
            count: 0,
            total: 0,
            start: 0,
            len: 0,
        }
    }

    /// The bytes of one slice.
    pub fn from_slice(bytes: &'a [u8]) -> Self {
        let mut parts = Self::new();
        // A slice too long for a `Parts` (4 GiB) gives no bytes: nothing parses.
        if let Ok(len) = u32::try_from(bytes.len()) {
            parts.pieces[0] = bytes;
            parts.count = 1;
            parts.total = len;
            parts.len = len;
        }
        parts
    }

    /// Appends `bytes` (an empty slice adds nothing) to bytes not yet cut by `skip`, `take` or
    /// `range` (`Full` after a cut, as when no slot is left).
    pub fn push(&mut self, bytes: &'a [u8]) -> Result<(), Full> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.start != 0 || self.len != self.total {
            return Err(Full);
        }
        let len = u32::try_from(bytes.len())
            .ok()
            .and_then(|n| self.len.checked_add(n))
            .ok_or(Full)?;
        let slot = self.pieces.get_mut(self.count as usize).ok_or(Full)?;
        *slot = bytes;
        self.count += 1;
        self.total = len;
        self.len = len;
        Ok(())
    }

    fn pieces(&self) -> &[&'a [u8]] {
        &self.pieces[..self.count as usize]
    }

    /// How many bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes, as non-empty slices in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.iter_range(0, self.len())
    }

    /// Bytes `start..end` (clamped to the bytes there are), as non-empty slices in order:
    /// [`Self::range`] without making a `Parts`.
    pub fn iter_range(&self, start: usize, end: usize) -> impl Iterator<Item = &'a [u8]> + '_ {
        let end = end.min(self.len());
        let (mut skip, mut left) = (self.start as usize + start.min(end), end - start.min(end));
        self.pieces().iter().filter_map(move |piece| {
            if skip >= piece.len() {
                skip -= piece.len();
                return None;
            }
            let n = left.min(piece.len() - skip);
            let out = &piece[skip..skip + n];
            skip = 0;
            left -= n;
            (!out.is_empty()).then_some(out)
        })
    }

    /// The bytes as one slice, if they lie in one piece.
    #[inline]
    pub fn as_slice(&self) -> Option<&'a [u8]> {
        let first = self.first();
        (first.len() == self.len()).then_some(first)
    }

    /// The first slice of the bytes (empty if there are none). Per packet, several times: a
    /// loop of its own rather than [`Self::iter`]'s.
    #[inline]
    pub fn first(&self) -> &'a [u8] {
        let mut skip = self.start as usize;
        // Most often the window starts in the first piece (a packet's headers always do).
        let head = self.pieces[0];
        if skip < head.len() {
            let n = (head.len() - skip).min(self.len());
            return head.get(skip..skip + n).unwrap_or(&[]);
        }
        for piece in self.pieces() {
            if skip < piece.len() {
                let n = (piece.len() - skip).min(self.len());
                return &piece[skip..skip + n];
            }
            skip -= piece.len();
        }
        &[]
    }

    /// The bytes from `at` on; `None` if there are fewer than `at`.
    pub fn skip(&self, at: usize) -> Option<Self> {
        self.range(at, self.len())
    }

    /// The first `n` bytes; `None` if there are fewer.
    pub fn take(&self, n: usize) -> Option<Self> {
        self.range(0, n)
    }

    /// Bytes `start..end`; `None` unless `start <= end <= len`.
    #[inline]
    pub fn range(&self, start: usize, end: usize) -> Option<Self> {
        if start > end || end > self.len() {
            return None;
        }
        // Both within `len`, a `u32`.
        Some(Self {
            start: self.start + start as u32,
            len: (end - start) as u32,
            ..*self
        })
    }

    /// Copies the first `dst.len()` bytes into `dst`; `false` (and `dst` untouched) if there
    /// are fewer.
    pub fn copy_prefix(&self, dst: &mut [u8]) -> bool {
        if dst.len() > self.len() {
            return false;
        }
        let mut done = 0;
        for piece in self.iter() {
            if done == dst.len() {
                break;
            }
            let k = (dst.len() - done).min(piece.len());
            dst[done..done + k].copy_from_slice(&piece[..k]);
            done += k;
        }
        true
    }

    /// The last `N` bytes, wherever the pieces split them.
    pub fn last_chunk<const N: usize>(&self) -> Option<[u8; N]> {
        let from = self.len().checked_sub(N)?;
        let (first, end) = (self.start as usize + from, self.start as usize + self.len());
        // Most often (an ICRC) the bytes lie in the window's last piece.
        let mut at = 0;
        for piece in self.pieces() {
            let next = at + piece.len();
            if end <= next {
                if let Some(bytes) = first.checked_sub(at).and_then(|o| piece.get(o..o + N)) {
                    return bytes.first_chunk().copied();
                }
                break;
            }
            at = next;
        }
        let mut out = [0u8; N];
        let mut done = 0;
        for piece in self.iter_range(from, self.len()) {
            out[done..done + piece.len()].copy_from_slice(piece);
            done += piece.len();
        }
        Some(out)
    }
}

impl PartialEq for Parts<'_> {
    fn eq(&self, other: &Self) -> bool {
        let mine = self.iter().flat_map(|p| p.iter());
        let theirs = other.iter().flat_map(|p| p.iter());
        self.len == other.len && mine.eq(theirs)
    }
}

impl PartialEq<[u8]> for Parts<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        if self.len() != other.len() {
            return false;
        }
        let mut at = 0;
        for piece in self.iter() {
            if other[at..at + piece.len()] != *piece {
                return false;
            }
            at += piece.len();
        }
        true
    }
}
