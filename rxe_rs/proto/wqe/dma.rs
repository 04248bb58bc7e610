// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The walk over a WQE's scatter/gather list of C `copy_data()` in `rxe_mr.c`: [`DmaCursor`],
//! the progress state of `struct rxe_dma_info` (`cur_sge`, `sge_offset`, `resid`), kept by the
//! kernel, and the chunks it hands out.

use core::ops::Range;

use super::sges::Sge;
use super::verbs::{WcStatus, IB_WC_LOC_LEN_ERR, IB_WC_LOC_PROT_ERR, IB_WC_LOC_QP_OP_ERR};

/// Why a [`DmaCursor`] cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaError {
    /// More bytes asked for than are left (`resid`): C `copy_data()` returns `-EINVAL`.
    TooLong,
    /// The SGEs end before the bytes asked for: C returns `-ENOSPC`.
    NoSpace,
    /// The SGE at this index could not be read (past the end of the slot).
    BadSge(u32),
    /// The chunk's addresses would wrap around the end of the 64-bit address space.
    AddrOverflow,
}

impl DmaError {
    /// The status a receive WQE completes with when its buffer fails this way: the message
    /// does not fit (`LOC_LEN_ERR`), the WQE cannot be read (`LOC_QP_OP_ERR`), or an SGE names
    /// addresses past 2^64, which no MR holds (`LOC_PROT_ERR`, as a bad lkey or an address
    /// outside the MR).
    pub const fn recv_status(self) -> WcStatus {
        match self {
            Self::TooLong | Self::NoSpace => IB_WC_LOC_LEN_ERR,
            Self::BadSge(_) => IB_WC_LOC_QP_OP_ERR,
            Self::AddrOverflow => IB_WC_LOC_PROT_ERR,
        }
    }
}

/// A contiguous piece of one SGE: `len` bytes at `addr` in the MR of `lkey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Start address, within the SGE.
    pub addr: u64,
    /// Bytes, at least 1, within the SGE.
    pub len: u32,
    /// Local key of the SGE.
    pub lkey: u32,
}

/// The progress of a copy through a WQE's data (`cur_sge`, `sge_offset` and `resid` of
/// `struct rxe_dma_info`), kept by the kernel, never read from a shared ring.
///
/// [`next_chunk`](Self::next_chunk) walks the SGEs as C `copy_data()` does and leaves the same
/// state behind: zero-length SGEs are skipped, and an SGE that was used up is left only when the
/// next byte is asked for. On an error the cursor is unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaCursor {
    /// Index of the current SGE.
    pub cur_sge: u32,
    /// Bytes of the current SGE already used (for inline data: of the inline data).
    pub sge_offset: u32,
    /// Bytes left.
    pub resid: u32,
}

impl DmaCursor {
    /// The start of a message of `length` bytes.
    pub const fn new(length: u32) -> Self {
        Self {
            cur_sge: 0,
            sge_offset: 0,
            resid: length,
        }
    }

    /// Whether no byte is left.
    pub const fn is_done(&self) -> bool {
        self.resid == 0
    }

    /// The next contiguous chunk of at most `max_len` bytes, and the cursor moved past it.
    /// `sge_at(i)` is SGE `i` of the WQE (e.g. `|i| sge(slot, i)`), for `i < num_sge` only.
    ///
    /// To copy `n` bytes as C `copy_data(..., n, ...)`, call it with the bytes still to copy
    /// until they are done. `Ok(None)` when `max_len` is 0; [`DmaError::TooLong`] when
    /// `max_len` exceeds [`resid`](Self::resid); [`DmaError::NoSpace`] when the SGEs end first.
    /// The walk visits each SGE at most once, so it is bounded by `num_sge`.
    pub fn next_chunk(
        &mut self,
        sge_at: impl Fn(u32) -> Option<Sge>,
        num_sge: u32,
        max_len: u32,
    ) -> Result<Option<Chunk>, DmaError> {
        if max_len == 0 {
            return Ok(None);
        }
        if max_len > self.resid {
            return Err(DmaError::TooLong);
        }
        let mut cur = self.cur_sge;
        let mut offset = self.sge_offset;
        loop {
            if cur >= num_sge {
                return Err(DmaError::NoSpace);
            }
            let sge = sge_at(cur).ok_or(DmaError::BadSge(cur))?;
            if offset >= sge.length {
                // `cur < num_sge`, so this does not overflow.
                cur += 1;
                offset = 0;
                continue;
            }
            let left = sge.length - offset;
            let len = if max_len < left { max_len } else { left };
            let addr = sge
                .addr
                .checked_add(u64::from(offset))
                .ok_or(DmaError::AddrOverflow)?;
            // `len >= 1`: the last byte must be addressable.
            addr.checked_add(u64::from(len - 1))
                .ok_or(DmaError::AddrOverflow)?;
            self.cur_sge = cur;
            self.sge_offset = offset + len;
            self.resid -= len;
            return Ok(Some(Chunk {
                addr,
                len,
                lkey: sge.lkey,
            }));
        }
    }

    /// Moves past `len` bytes without copying (C `advance_dma_data()`, used to replay the
    /// packets already acknowledged on a retry), with the errors of
    /// [`next_chunk`](Self::next_chunk); unchanged on error.
    pub fn advance(
        &mut self,
        sge_at: impl Fn(u32) -> Option<Sge>,
        num_sge: u32,
        len: u32,
    ) -> Result<(), DmaError> {
        let mut cursor = *self;
        let mut left = len;
        while left > 0 {
            match cursor.next_chunk(&sge_at, num_sge, left)? {
                Some(chunk) => left -= chunk.len,
                None => break,
            }
        }
        *self = cursor;
        Ok(())
    }

    /// The next `len` bytes of inline data, as a range of the inline data
    /// ([`inline_data`](super::inline_data)), and the cursor moved past them: the inline branch of
    /// C `finish_packet()` (`sge_offset` and `resid` only). [`DmaError::TooLong`] when `len`
    /// exceeds [`resid`](Self::resid); unchanged on error.
    pub fn next_inline(&mut self, len: u32) -> Result<Range<usize>, DmaError> {
        if len > self.resid {
            return Err(DmaError::TooLong);
        }
        let end = self.sge_offset.checked_add(len).ok_or(DmaError::TooLong)?;
        let start = self.sge_offset;
        self.sge_offset = end;
        self.resid -= len;
        Ok(start as usize..end as usize)
    }
}
