// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! A byte string in pieces: a packet whose payload is not contiguous (a socket buffer's linear
//! part and its page fragments), read without gathering it into one buffer.

/// The most pieces a [`Parts`] holds: an skb's linear part and its fragments (17 with the
/// kernel's default `MAX_SKB_FRAGS`), with room to spare.
pub const MAX_PARTS: usize = 24;

/// Too many pieces for a [`Parts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

/// Bytes as a sequence of non-empty slices, read in order.
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    pieces: [&'a [u8]; MAX_PARTS],
    count: usize,
    len: usize,
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
            len: 0,
        }
    }

    /// The bytes of one slice.
    pub fn from_slice(bytes: &'a [u8]) -> Self {
        let mut parts = Self::new();
        // One piece always fits.
        let _ = parts.push(bytes);
        parts
    }

    /// Appends `bytes` (an empty slice adds nothing).
    pub fn push(&mut self, bytes: &'a [u8]) -> Result<(), Full> {
        if bytes.is_empty() {
            return Ok(());
        }
        let slot = self.pieces.get_mut(self.count).ok_or(Full)?;
        *slot = bytes;
        self.count += 1;
        self.len += bytes.len();
        Ok(())
    }

    /// How many bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces, in order, none empty.
    pub fn pieces(&self) -> &[&'a [u8]] {
        &self.pieces[..self.count]
    }

    /// The first piece (empty if there are no bytes).
    pub fn first(&self) -> &'a [u8] {
        self.pieces().first().copied().unwrap_or(&[])
    }

    /// The bytes from `at` on; `None` if there are fewer than `at`.
    pub fn skip(&self, mut at: usize) -> Option<Self> {
        if at > self.len {
            return None;
        }
        let mut out = Self::new();
        for piece in self.pieces() {
            if at >= piece.len() {
                at -= piece.len();
                continue;
            }
            // At most as many pieces as `self`.
            out.push(&piece[at..]).ok()?;
            at = 0;
        }
        Some(out)
    }

    /// The first `n` bytes; `None` if there are fewer.
    pub fn take(&self, mut n: usize) -> Option<Self> {
        if n > self.len {
            return None;
        }
        let mut out = Self::new();
        for piece in self.pieces() {
            if n == 0 {
                break;
            }
            let k = n.min(piece.len());
            out.push(&piece[..k]).ok()?;
            n -= k;
        }
        Some(out)
    }

    /// Copies the first `dst.len()` bytes into `dst`; `false` (and `dst` partly written) if
    /// there are fewer.
    pub fn copy_prefix(&self, dst: &mut [u8]) -> bool {
        if dst.len() > self.len {
            return false;
        }
        let mut done = 0;
        for piece in self.pieces() {
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
        let mut out = [0u8; N];
        let tail = self.skip(self.len.checked_sub(N)?)?;
        tail.copy_prefix(&mut out).then_some(out)
    }
}

impl PartialEq for Parts<'_> {
    fn eq(&self, other: &Self) -> bool {
        let mine = self.pieces().iter().flat_map(|p| p.iter());
        let theirs = other.pieces().iter().flat_map(|p| p.iter());
        self.len == other.len && mine.eq(theirs)
    }
}

impl PartialEq<[u8]> for Parts<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        if self.len != other.len() {
            return false;
        }
        let mut at = 0;
        for piece in self.pieces() {
            if other[at..at + piece.len()] != **piece {
                return false;
            }
            at += piece.len();
        }
        true
    }
}
