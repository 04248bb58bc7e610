// SPDX-License-Identifier: GPL-2.0

//! A QP's local memory: the MR an lkey names for an access ([`with_local_mr`]), and the one walk
//! over a WQE's scatter/gather list that every copy between SGEs and packets takes
//! ([`walk_sges`], C's `copy_data()`): the requester's payload (copied or attached by
//! reference), the completer's read responses, the responder's receives.

use super::{
    engine::{Cause, MemFault, RxeError},
    mr::{access, MrShared},
    qp::QpShared,
};
use crate::proto::wqe::{self, DmaCursor, DmaError};
use core::ops::{ControlFlow, Range};
use kernel::{sync::rcu, sync::Arc};

/// A WQE's SGEs, read from the kernel's private copy of its slot.
#[derive(Clone, Copy)]
pub(crate) enum Sges<'a> {
    /// A send WQE's slot and its `num_sge`.
    Send(&'a [u8], u32),
    /// A receive WQE's slot and its `num_sge`.
    Recv(&'a [u8], u32),
}

/// Why [`walk_sges`] stopped.
pub(crate) enum WalkError {
    /// The SGEs: they end before the bytes do, or one is malformed (`DmaError`).
    Sges(DmaError),
    /// A piece's MR refused it (`with_local_mr`'s checks) or the move failed.
    Mem(RxeError),
}

/// The next `len` bytes of `sges` from `dma` on, one piece per SGE, each through the MR of the
/// QP's PD its lkey names, checked for `access`: `f(mr, addr, range)` moves a piece, `range`
/// being where it lies in the `len` bytes. `f` may stop the walk early (`Break`). The cursor
/// has moved past every piece `f` was given; the walk visits each SGE at most once.
pub(crate) fn walk_sges(
    qp: &QpShared,
    sges: Sges<'_>,
    dma: &mut DmaCursor,
    len: usize,
    access: u32,
    f: impl FnMut(&Arc<MrShared>, u64, Range<usize>) -> Result<ControlFlow<()>, RxeError>,
) -> Result<(), WalkError> {
    // Each layout its own instance, so that the SGE reader inlines into the walk.
    match sges {
        Sges::Send(slot, n) => walk(qp, |i| wqe::sge(slot, i), n, dma, len, access, f),
        Sges::Recv(slot, n) => walk(qp, |i| wqe::recv_sge(slot, i), n, dma, len, access, f),
    }
}

fn walk(
    qp: &QpShared,
    sge_at: impl Fn(u32) -> Option<wqe::Sge>,
    num_sge: u32,
    dma: &mut DmaCursor,
    len: usize,
    access: u32,
    mut f: impl FnMut(&Arc<MrShared>, u64, Range<usize>) -> Result<ControlFlow<()>, RxeError>,
) -> Result<(), WalkError> {
    let mut done = 0usize;
    while done < len {
        // `len - done > 0`, so a chunk or an error (`next_chunk`'s `None` is for 0 bytes).
        let want = u32::try_from(len - done).map_err(|_| WalkError::Sges(DmaError::TooLong))?;
        let Some(chunk) = dma
            .next_chunk(&sge_at, num_sge, want)
            .map_err(WalkError::Sges)?
        else {
            break;
        };
        let n = chunk.len as usize;
        let flow = with_local_mr(qp, chunk.lkey, access, chunk.addr, n, |mr| {
            f(mr, chunk.addr, done..done + n)
        })
        .and_then(|r| r)
        .map_err(WalkError::Mem)?;
        done += n;
        if flow.is_break() {
            break;
        }
    }
    Ok(())
}

/// Writes `data` into `sges` from `dma` on, each piece into an MR that allows local writes: a
/// receive or a read response landing.
pub(crate) fn write_sges(
    qp: &QpShared,
    rcu: &rcu::Guard,
    sges: Sges<'_>,
    dma: &mut DmaCursor,
    data: &[u8],
) -> Result<(), WalkError> {
    walk_sges(
        qp,
        sges,
        dma,
        data.len(),
        access::LOCAL_WRITE,
        |mr, addr, r| {
            mr.write(rcu, addr, &data[r])?;
            Ok(ControlFlow::Continue(()))
        },
    )
}

/// `f` run on an MR of this QP's PD for a local access (`lookup_mr` with an lkey). The MR the
/// QP used last ([`QpShared::local_mr`]) is used without a key-table lookup or a reference
/// taken when it passes the same checks: its key is `lkey` and it is alive (a deregistered MR
/// fails them, and then the table answers, as it would have).
pub(crate) fn with_local_mr<R>(
    qp: &QpShared,
    lkey: u32,
    access: u32,
    addr: u64,
    len: usize,
    f: impl FnOnce(&Arc<MrShared>) -> R,
) -> core::result::Result<R, RxeError> {
    let f = match qp
        .local_mr
        .with_if(|mr| mr.check(lkey, qp.pd, access, addr, len).is_ok(), f)
    {
        Ok(out) => return Ok(out),
        Err(f) => f,
    };
    let no_mr = RxeError::local_protection(Cause::Memory(MemFault::Key));
    let mr = qp.dev.keys().mr(lkey).ok_or(no_mr)?;
    mr.check(lkey, qp.pd, access, addr, len)?;
    qp.local_mr.keep(&mr);
    Ok(f(&mr))
}
