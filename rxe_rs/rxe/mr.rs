// SPDX-License-Identifier: GPL-2.0

//! Memory regions and memory windows (`rxe_mr.c`, `rxe_mw.c`, their verbs in `rxe_verbs.c`).
//!
//! An MR's shared part ([`MrShared`]) sits in the device's key table while the MR is
//! registered; the data path finds it there by key and reads or writes through it. Deregistration
//! takes it out of the table and marks it dead; a user MR's pages are unpinned after an RCU grace
//! period: every data-path access checks liveness and copies inside one RCU read-side section
//! ([`kernel::sync::rcu::Guard`]), so none can reach an unpinned page. A fast MR's accesses copy
//! under its own lock, which deregistration takes once instead. (The C driver waits for the MR's
//! reference count.)
//!
//! `rereg_user_mr` may change an MR's PD and access rights while the data path uses it: both
//! sit together in one lock-free pair ([`MrShared::rights`], a sequence count), so a check sees
//! the old pair or the new one, never a mix, and takes no lock per packet. (The C driver just
//! stores the two fields.)

use super::{
    pool::{IndexPool, PoolIndex},
    ring::errno,
    table::Table,
};
use crate::ib::{
    device::{Device, DeviceOps, PdId},
    mem::{KernelMem, KernelPages, PageList},
    mr::{AdviseSge, ReregMrReq, Umem, UserMrReq},
    odp::{OdpMiss, OdpPages, OdpUmem},
};
use crate::net::skb::PayloadSink;
use crate::proto::{
    error::Absent,
    mw::{self, Bind, MrView, MwType, Window},
    params,
    parts::Parts,
    range, resp,
    seq::{SeqPair, SeqWriter},
    Errno,
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::{rcu, Arc, SpinLockIrq},
};

/// `IB_ACCESS_*` bits the data path checks (the rights a request needs by its opcode come from
/// `proto::resp::required_access`).
pub(crate) mod access {
    pub(crate) const LOCAL_WRITE: u32 = 1;
    pub(crate) const REMOTE_READ: u32 = crate::proto::mw::ACCESS_REMOTE_READ;
    pub(crate) const REMOTE_ATOMIC: u32 = crate::proto::mw::ACCESS_REMOTE_ATOMIC;
}

/// Where an MR's bytes are.
enum MrMem {
    /// A DMA MR: kernel virtual addresses, any.
    Kernel,
    /// A user MR: its pinned pages, from `iova` for `length` bytes.
    User {
        pages: PageList,
        iova: u64,
        length: u64,
    },
    /// A fast-registration MR (`alloc_mr`, kernel ULPs): pages mapped by `map_mr_sg`, key,
    /// rights and range set by REG_MR, invalidated by LOCAL_INV / SEND_WITH_INV.
    Fast(Pin<KBox<FastMr>>),
    /// An on-demand paging user MR: `length` bytes from `iova`, at user address `start`, mapped
    /// page by page as accesses fault them in.
    Odp {
        pages: OdpPages,
        iova: u64,
        length: u64,
        start: u64,
    },
}

/// The changing part of a fast-registration MR.
#[pin_data]
struct FastMr {
    #[pin]
    inner: SpinLockIrq<FastInner>,
}

struct FastInner {
    /// Registered (`RXE_MR_STATE_VALID`), else free.
    valid: bool,
    key: u32,
    access: u32,
    /// The registered range.
    iova: u64,
    length: u64,
    /// The range the next REG_MR registers: `map_mr_sg`'s, or what the ULP made of it in its
    /// `ib_mr` when it posted the REG_MR (NFS/RDMA puts its XID in the high bits of `iova`).
    next_iova: u64,
    next_length: u64,
    /// The mapped pages, from the first byte `map_mr_sg` mapped.
    pages: KernelPages,
    /// 4 KiB pages each page of the mapping in progress is split into.
    map_split: usize,
    /// The split `pages` has room for, `max_sg` pages of it.
    cap_split: usize,
    /// `max_num_sg` of `alloc_mr`.
    max_sg: usize,
}

impl FastInner {
    /// Byte offset of `len` bytes at `iova` in the registered range; `Key` once invalidated,
    /// also under a message that began before (C looks the key up for every packet).
    fn offset(&self, iova: u64, len: usize) -> Result<usize, MrError> {
        if !self.valid {
            return Err(MrError::Key);
        }
        let off =
            range::offset_in(self.iova, self.length, iova, len as u64).ok_or(MrError::Range)?;
        usize::try_from(off).map_err(|_| MrError::Range)
    }
}

/// [`MrShared::state`]: deregistered. The bits below count the windows bound to the MR.
const MR_DEAD: u32 = 1 << 31;

/// The part of an MR `rereg_user_mr` changes, as one read of [`MrShared::rights`] gives it.
#[derive(Clone, Copy)]
struct Rights {
    /// [`PdId::raw`] of the MR's PD.
    pd: usize,
    /// `IB_ACCESS_*` (a fast MR's own, set by REG_MR, are in [`FastInner`]).
    access: u32,
}

/// What the data path knows of an MR.
#[pin_data]
pub(crate) struct MrShared {
    key: u32,
    /// PD ([`PdId::raw`]) and access rights, replaced together by `rereg_user_mr`; the data
    /// path reads them without a lock.
    rights: SeqPair,
    /// The writer of `rights`: `rereg_user_mr`s of the MR take it in turn, with interrupts
    /// off (a data-path reader interrupting a write on its CPU would spin on the half-written
    /// pair forever).
    #[pin]
    rights_writer: SpinLockIrq<SeqWriter>,
    mem: MrMem,
    /// [`MR_DEAD`] and the number of memory windows bound to the MR (`num_mw`): one atomic
    /// word, so that a bind and a deregistration cannot both succeed.
    state: AtomicU32,
}

/// Why an MR access was refused (all are protection errors to the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrError {
    /// Dead, wrong key, PD or access rights.
    Key,
    /// Outside the region.
    Range,
    /// On-demand paging: pages not mapped; nothing was accessed (see [`MrShared::fault`]).
    Absent(Absent),
}

impl MrShared {
    fn alive(&self) -> bool {
        self.state.load(Ordering::Acquire) & MR_DEAD == 0
    }

    /// Whether the MR is registered and its memory is pages pinned while it is, in the direct
    /// map (a user MR without on-demand paging): a packet may then refer to it and its receiver
    /// read it in place later, in an RCU reader that finds it still alive ([`Self::map`]).
    pub(crate) fn pins_pages(&self) -> bool {
        matches!(&self.mem, MrMem::User { pages, .. } if pages.in_direct_map()) && self.alive()
    }

    /// Appends the `len` bytes at `iova` to `parts` as slices of the MR's pages, to be read in
    /// place while `rcu` is held: a payload a looped-back packet left in the sender's MR, whose
    /// range was checked when the packet was built. Only an MR that [`Self::pins_pages`];
    /// `MrError::Key` if it was deregistered since.
    pub(crate) fn map<'a>(
        &'a self,
        rcu: &'a rcu::Guard,
        iova: u64,
        len: usize,
        parts: &mut Parts<'a>,
    ) -> Result<(), MrError> {
        if !self.alive() {
            return Err(MrError::Key);
        }
        let (pages, off) = self.offset(iova)?.ok_or(MrError::Range)?;
        pages
            .map(rcu, off, len, |bytes| parts.push(bytes).map_err(|_| EINVAL))
            .map_err(|_| MrError::Range)
    }

    /// Counts a window bound to the MR; `false` if the MR is deregistered.
    fn hold_mw(&self) -> bool {
        self.state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                (s & MR_DEAD == 0).then_some(s + 1)
            })
            .is_ok()
    }

    /// A window bound to the MR is unbound.
    fn release_mw(&self) {
        self.state.fetch_sub(1, Ordering::AcqRel);
    }

    /// Windows bound to the MR.
    fn num_mw(&self) -> u32 {
        self.state.load(Ordering::Acquire) & !MR_DEAD
    }

    /// The MR's PD and access rights now.
    fn rights(&self) -> Rights {
        let (pd, access) = self.rights.read();
        Rights { pd, access }
    }

    /// What the bind checks see of the MR (`ibmr.iova`, `ibmr.length`: 0 for a DMA MR).
    fn view(&self) -> MrView {
        let rights = self.rights();
        let (access, iova, length) = match &self.mem {
            MrMem::Kernel => (rights.access, 0, 0),
            MrMem::User { iova, length, .. } | MrMem::Odp { iova, length, .. } => {
                (rights.access, *iova, *length)
            }
            MrMem::Fast(f) => {
                let g = f.inner.lock();
                (g.access, g.iova, g.length)
            }
        };
        MrView {
            pd: rights.pd,
            access,
            iova,
            length,
        }
    }

    /// The MR's current key (a fast MR's changes with each REG_MR).
    fn current_key(&self) -> u32 {
        match &self.mem {
            MrMem::Fast(f) => f.inner.lock().key,
            _ => self.key,
        }
    }

    /// `mr_check_range` alone, for an access through a memory window (which carries the
    /// rights): alive and `len` bytes at `iova` inside the MR.
    fn check_range(&self, iova: u64, len: usize) -> Result<(), MrError> {
        if !self.alive() {
            return Err(MrError::Key);
        }
        self.in_range(iova, len)
    }

    #[inline]
    fn in_range(&self, iova: u64, len: usize) -> Result<(), MrError> {
        match &self.mem {
            MrMem::Kernel => Ok(()),
            MrMem::Fast(f) => f.inner.lock().offset(iova, len).map(|_| ()),
            MrMem::User {
                iova: start,
                length,
                ..
            }
            | MrMem::Odp {
                iova: start,
                length,
                ..
            } => range::offset_in(*start, *length, iova, len as u64)
                .map(|_| ())
                .ok_or(MrError::Range),
        }
    }

    /// An ODP MR's pages and the user address of `len` bytes at `iova` (`None`: not ODP).
    fn odp_at(&self, iova: u64, len: usize) -> Option<Result<(&OdpPages, u64), MrError>> {
        let MrMem::Odp {
            pages,
            iova: mr_iova,
            length,
            start,
        } = &self.mem
        else {
            return None;
        };
        let va = range::offset_in(*mr_iova, *length, iova, len as u64)
            .and_then(|off| start.checked_add(off))
            .map(|va| (pages, va))
            .ok_or(MrError::Range);
        Some(va)
    }

    /// The error of an ODP access that did not happen.
    fn odp_miss(&self, miss: OdpMiss, iova: u64, len: usize, write: bool) -> MrError {
        match miss {
            OdpMiss::Absent => MrError::Absent(Absent {
                key: self.key,
                iova,
                len: len as u32,
                write,
            }),
            OdpMiss::Range => MrError::Range,
        }
    }

    /// Maps `len` bytes at `iova` of an ODP MR (for writing if `write`), faulting them in if
    /// `fault` (C `rxe_odp_do_pagefault_and_lock`). Sleeps. Nothing to do for other MRs, whose
    /// pages are always there.
    pub(crate) fn fault(&self, iova: u64, len: u64, write: bool, fault: bool) -> Result {
        if !self.alive() {
            return Err(EFAULT);
        }
        let Ok(len_usize) = usize::try_from(len) else {
            return Err(EFAULT);
        };
        match self.odp_at(iova, len_usize) {
            None => Ok(()),
            Some(Err(_)) => Err(EFAULT),
            Some(Ok((pages, va))) => pages.fault(va, len, write, fault),
        }
    }

    /// `lookup_mr` + `mr_check_range`: usable by `pd` with `need` rights for `len` bytes at `iova`.
    pub(crate) fn check(
        &self,
        key: u32,
        pd: PdId,
        need: u32,
        iova: u64,
        len: usize,
    ) -> Result<(), MrError> {
        self.check_key(key, pd, need, Some((iova, len)))
    }

    /// `lookup_mr` without the range: registered, named by `key`, in `pd`, with `need` rights.
    pub(crate) fn allows(&self, key: u32, pd: PdId, need: u32) -> bool {
        self.check_key(key, pd, need, None).is_ok()
    }

    /// [`Self::check`], the range only if given (a fast MR's under the same lock as its key).
    fn check_key(
        &self,
        key: u32,
        pd: PdId,
        need: u32,
        range: Option<(u64, usize)>,
    ) -> Result<(), MrError> {
        self.check_key_counted(key, pd, need, range).map(|_| ())
    }

    /// [`Self::check_key`], and, for an MR whose key and rights only `rereg_user_mr` changes
    /// (not a fast MR), the count of its rights pair the check read: while the pair is unchanged
    /// since ([`KeyUse::still_allows`]), only a deregistration can end the access.
    #[inline]
    fn check_key_counted(
        &self,
        key: u32,
        pd: PdId,
        need: u32,
        range: Option<(u64, usize)>,
    ) -> Result<Option<u32>, MrError> {
        let (rights_pd, access, count) = self.rights.read_counted();
        if !self.alive() || rights_pd != pd.raw() {
            return Err(MrError::Key);
        }
        if let MrMem::Fast(f) = &self.mem {
            let g = f.inner.lock();
            if !g.valid || g.key != key || need & !g.access != 0 {
                return Err(MrError::Key);
            }
            return range.map_or(Ok(None), |(iova, len)| g.offset(iova, len).map(|_| None));
        }
        if self.key != key || need & !access != 0 {
            return Err(MrError::Key);
        }
        range.map_or(Ok(()), |(iova, len)| self.in_range(iova, len))?;
        Ok(Some(count))
    }

    fn offset(&self, iova: u64) -> Result<Option<(&PageList, usize)>, MrError> {
        match &self.mem {
            MrMem::Kernel | MrMem::Fast(_) => Ok(None),
            // Reached through `odp_at` first.
            MrMem::Odp { .. } => Err(MrError::Range),
            MrMem::User {
                pages, iova: start, ..
            } => {
                let off = iova.checked_sub(*start).ok_or(MrError::Range)?;
                Ok(Some((
                    pages,
                    usize::try_from(off).map_err(|_| MrError::Range)?,
                )))
            }
        }
    }

    /// Copies from `iova` into `buf` (`rxe_mr_copy`, `RXE_FROM_MR_OBJ`). The caller checked
    /// the range; the RCU guard keeps the pages pinned for the copy.
    pub(crate) fn read(&self, _rcu: &rcu::Guard, iova: u64, buf: &mut [u8]) -> Result<(), MrError> {
        if !self.alive() {
            return Err(MrError::Key);
        }
        if let MrMem::Fast(f) = &self.mem {
            let g = f.inner.lock();
            let off = g.offset(iova, buf.len())?;
            return g.pages.read(off, buf).map_err(|_| MrError::Range);
        }
        if let Some(at) = self.odp_at(iova, buf.len()) {
            let (pages, va) = at?;
            let len = buf.len();
            return pages
                .read(va, buf)
                .map_err(|m| self.odp_miss(m, iova, len, false));
        }
        match self.offset(iova)? {
            None => {
                KernelMem::read(iova, buf);
                Ok(())
            }
            Some((pages, off)) => pages.read(off, buf).map_err(|_| MrError::Range),
        }
    }

    /// Attaches `len` bytes from `iova` to a packet by reference (see [`PayloadSink`]); memory
    /// a packet cannot hold (ODP pages, which may be invalidated under it) refuses. The caller
    /// checked the range; the RCU guard keeps the pages pinned until the packet holds them.
    pub(crate) fn attach(
        &self,
        _rcu: &rcu::Guard,
        iova: u64,
        len: usize,
        sink: &mut PayloadSink<'_>,
    ) -> Result<(), MrError> {
        if !self.alive() {
            return Err(MrError::Key);
        }
        match &self.mem {
            MrMem::Fast(f) => {
                let g = f.inner.lock();
                let off = g.offset(iova, len)?;
                g.pages.attach(off, len, sink).map_err(|_| MrError::Range)
            }
            MrMem::Odp { .. } => {
                sink.refuse();
                Ok(())
            }
            MrMem::Kernel => {
                sink.attach_kernel(iova, len);
                Ok(())
            }
            MrMem::User { .. } => match self.offset(iova)? {
                Some((pages, off)) => pages.attach(off, len, sink).map_err(|_| MrError::Range),
                None => Err(MrError::Range),
            },
        }
    }

    /// [`Self::write`] of bytes in pieces, one after the other from `iova`.
    pub(crate) fn write_parts(
        &self,
        rcu: &rcu::Guard,
        iova: u64,
        data: &Parts<'_>,
    ) -> Result<(), MrError> {
        let mut at = iova;
        for piece in data.iter() {
            self.write(rcu, at, piece)?;
            at = at.wrapping_add(piece.len() as u64);
        }
        Ok(())
    }

    /// Copies `buf` to `iova` (`RXE_TO_MR_OBJ`).
    pub(crate) fn write(&self, _rcu: &rcu::Guard, iova: u64, buf: &[u8]) -> Result<(), MrError> {
        if !self.alive() {
            return Err(MrError::Key);
        }
        if let MrMem::Fast(f) = &self.mem {
            let g = f.inner.lock();
            let off = g.offset(iova, buf.len())?;
            return g.pages.write(off, buf).map_err(|_| MrError::Range);
        }
        if let Some(at) = self.odp_at(iova, buf.len()) {
            let (pages, va) = at?;
            return pages
                .write(va, buf)
                .map_err(|m| self.odp_miss(m, iova, buf.len(), true));
        }
        match self.offset(iova)? {
            None => {
                KernelMem::write(iova, buf);
                Ok(())
            }
            Some((pages, off)) => pages.write(off, buf).map_err(|_| MrError::Range),
        }
    }

    /// `rxe_reg_fast_mr`: REG_MR by a QP of `qp_pd` with the new `key` and `access`.
    fn reg_fast(&self, qp_pd: PdId, key: u32, access: u32) -> Result<(), Errno> {
        let MrMem::Fast(f) = &self.mem else {
            // Any other MR is registered already: not free (C).
            return Err(Errno::Inval);
        };
        let mr_pd = self.rights().pd;
        let mut g = f.inner.lock();
        // Under the lock deregistration takes after marking the MR dead (see `deregister`).
        if !self.alive() {
            return Err(Errno::Inval);
        }
        mw::check_reg_fast_mr(!g.valid, mr_pd, qp_pd.raw(), g.key, key)?;
        g.access = access;
        g.key = key;
        g.iova = g.next_iova;
        g.length = g.next_length;
        g.valid = true;
        Ok(())
    }

    /// `rxe_invalidate_mr`: LOCAL_INV / SEND_WITH_INV of `key`.
    fn invalidate(&self, key: u32) -> Result<(), Errno> {
        let MrMem::Fast(f) = &self.mem else {
            return mw::check_invalidate_mr(key, self.key, self.num_mw(), false);
        };
        let mut g = f.inner.lock();
        mw::check_invalidate_mr(key, g.key, self.num_mw(), true)?;
        g.valid = false;
        Ok(())
    }

    /// An 8-byte atomic at `iova` (`rxe_mr_do_atomic_op`): compare-and-swap or fetch-and-add;
    /// the original value. Kernel MRs are not supported targets here (`Range`).
    pub(crate) fn atomic(
        &self,
        _rcu: &rcu::Guard,
        iova: u64,
        compare: Option<u64>,
        value: u64,
    ) -> Result<u64, MrError> {
        if !self.alive() {
            return Err(MrError::Key);
        }
        if let MrMem::Fast(f) = &self.mem {
            let g = f.inner.lock();
            let off = g.offset(iova, 8)?;
            return g
                .pages
                .atomic(off, compare, value)
                .map_err(|_| MrError::Range);
        }
        if let Some(at) = self.odp_at(iova, 8) {
            let (pages, va) = at?;
            return pages
                .atomic(va, compare, value)
                .map_err(|m| self.odp_miss(m, iova, 8, true));
        }
        match self.offset(iova)? {
            None => Err(MrError::Range),
            Some((pages, off)) => pages
                .atomic(off, compare, value)
                .map_err(|_| MrError::Range),
        }
    }
}

/// The device's memory keys (C's MR and MW pools): the indices handed out, and the MRs and
/// windows by key index, which work requests and packets name.
pub(crate) struct MemKeys {
    mr_pool: IndexPool,
    mw_pool: IndexPool,
    mrs: Pin<KBox<Table<MrShared>>>,
    mws: Pin<KBox<Table<MwShared>>>,
}

impl MemKeys {
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            mr_pool: IndexPool::new(params::MIN_MR_INDEX, params::MAX_MR_INDEX)?,
            mw_pool: IndexPool::new(params::MIN_MW_INDEX, params::MAX_MW_INDEX)?,
            mrs: KBox::pin_init(Table::new(), GFP_KERNEL)?,
            mws: KBox::pin_init(Table::new(), GFP_KERNEL)?,
        })
    }

    /// The MR with key `key` (index `key >> 8`; the caller checks the whole key).
    pub(crate) fn mr(&self, key: u32) -> Option<Arc<MrShared>> {
        self.mrs.get(key >> 8)
    }

    /// The memory window with rkey `key` (index `key >> 8`; the caller checks the whole key).
    pub(crate) fn mw(&self, key: u32) -> Option<Arc<MwShared>> {
        self.mws.get(key >> 8)
    }
}

/// An rxe MR (ib_core's object): the pinned memory, and the shared part in the key table.
pub(crate) struct RxeMr {
    index: PoolIndex,
    shared: Arc<MrShared>,
    /// The pinned user buffer of a user MR (`None` for DMA MRs); unpinned after the grace
    /// period of `deregister`.
    umem: Option<Umem>,
    /// The registration of an ODP MR; released after that grace period.
    odp: Option<OdpUmem>,
}

/// The memory a new MR is made over.
enum Backing {
    /// All of kernel memory (a DMA MR).
    Kernel,
    /// Pinned user memory.
    User(Umem),
    /// User memory paged on demand, registered from user address `start`.
    Odp(OdpUmem, u64),
    /// Up to this many pages a kernel ULP maps (a fast-registration MR).
    Fast(usize),
}

impl RxeMr {
    /// An MR of `pd` with `access` over `backing`, `length` bytes from `iova`, in the key table.
    fn new(
        keys: &MemKeys,
        pd: PdId,
        access: u32,
        backing: Backing,
        iova: u64,
        length: u64,
    ) -> Result<(Self, u32)> {
        let index = keys.mr_pool.take()?;
        let key = index.new_key();
        let (mem, umem, odp) = match backing {
            Backing::Kernel => (MrMem::Kernel, None, None),
            Backing::User(umem) => {
                let pages = PageList::new(&umem)?;
                let mem = MrMem::User {
                    pages,
                    iova,
                    length,
                };
                (mem, Some(umem), None)
            }
            Backing::Odp(odp, start) => {
                let mem = MrMem::Odp {
                    pages: odp.pages().clone(),
                    iova,
                    length,
                    start,
                };
                (mem, None, Some(odp))
            }
            Backing::Fast(max_sg) => {
                let pages = KernelPages::new(max_sg)?;
                let fast = KBox::pin_init(
                    pin_init!(FastMr {
                        inner <- new_spinlock_irq!(FastInner {
                            valid: false,
                            key,
                            access,
                            iova: 0,
                            length: 0,
                            next_iova: 0,
                            next_length: 0,
                            pages,
                            map_split: 1,
                            cap_split: 1,
                            max_sg,
                        }),
                    }),
                    GFP_KERNEL,
                )?;
                (MrMem::Fast(fast), None, None)
            }
        };
        let (rights, writer) = SeqPair::new(pd.raw(), access);
        let shared = Arc::pin_init(
            pin_init!(MrShared {
                key,
                rights,
                rights_writer <- new_spinlock_irq!(writer),
                mem,
                state: AtomicU32::new(0),
            }),
            GFP_KERNEL,
        )?;
        keys.mrs.insert(index.get(), shared.clone())?;
        Ok((
            Self {
                index,
                shared,
                umem,
                odp,
            },
            key,
        ))
    }

    /// `rxe_get_dma_mr`: an MR over all of kernel memory (access is not validated, as in C).
    pub(crate) fn dma(keys: &MemKeys, pd: PdId, access: i32) -> Result<(Self, u32)> {
        Self::new(keys, pd, access as u32, Backing::Kernel, 0, 0)
    }

    /// `rxe_reg_user_mr`.
    pub(crate) fn user<T: DeviceOps>(
        dev: &Device<T>,
        keys: &MemKeys,
        req: &UserMrReq,
    ) -> Result<(Self, u32)> {
        let access = req.access as u32;
        if req.has_dmah || access & !params::ACCESS_SUPPORTED_MR != 0 {
            return Err(EOPNOTSUPP);
        }
        if access & params::ACCESS_ON_DEMAND != 0 {
            // Implicit ODP (the whole address space) is not supported, as in C.
            if req.start == 0 && req.length == u64::MAX {
                return Err(EOPNOTSUPP);
            }
            // Persistent memory is found by its pinned pages; an ODP MR has none (as C, whose
            // `is_pmem_page` check only runs on pinned MRs, rxe-rs refuses rather than guess).
            if access & resp::ACCESS_FLUSH_PERSISTENT != 0 {
                return Err(EINVAL);
            }
            let odp = OdpUmem::get(dev, req)?;
            let backing = Backing::Odp(odp, req.start);
            return Self::new(keys, req.pd, access, backing, req.iova, req.length);
        }
        let umem = Umem::get(dev, req)?;
        // As C `rxe_mr_fill_pages_from_sgt`: persistent FLUSH needs persistent memory.
        if access & resp::ACCESS_FLUSH_PERSISTENT != 0 && !umem.is_pmem() {
            return Err(EINVAL);
        }
        Self::new(
            keys,
            req.pd,
            access,
            Backing::User(umem),
            req.iova,
            req.length,
        )
    }

    /// `rxe_alloc_mr`: a fast-registration MR for `max_num_sg` pages, free until a REG_MR
    /// (with every remote right until then, as C `rxe_mr_init_fast`).
    pub(crate) fn fast(
        keys: &MemKeys,
        pd: PdId,
        mr_type: u32,
        max_num_sg: u32,
    ) -> Result<(Self, u32)> {
        // `IB_MR_TYPE_MEM_REG` only.
        if mr_type != 0 {
            return Err(EINVAL);
        }
        let max = usize::try_from(max_num_sg).map_err(|_| EINVAL)?;
        Self::new(keys, pd, mw::ACCESS_REMOTE, Backing::Fast(max), 0, 0)
    }

    /// `rxe_rereg_user_mr`: a new PD and/or new access rights for a user MR, in place.
    ///
    /// Both change in one write of [`MrShared::rights`], so the data path sees the old pair or
    /// the new one. A check that passed before keeps its access going (a message in
    /// progress, a copy under RCU), as in C, which just stores the fields. PDs are not
    /// reference-counted here: ib_uverbs moves `ib_mr.pd` and the PDs' `usecnt` (C's
    /// `rxe_put(old_pd)`/`rxe_get(pd)` on top of it), so the MR's PD cannot be deallocated
    /// while the MR is in it, and the old one can.
    pub(crate) fn rereg(&self, req: &ReregMrReq) -> Result {
        params::check_rereg_flags(req.flags).map_err(errno)?;
        // Only user MRs come through ib_uverbs (DMA and fast MRs are kernel objects).
        match (&self.umem, &self.odp) {
            (Some(umem), _) => umem.check_rereg(req.flags, req.access)?,
            // As `ib_umem_check_rereg` for ODP memory: write rights need writable memory.
            (None, Some(odp)) => {
                if req.flags & params::MR_REREG_ACCESS != 0
                    && req.access as u32 & access::LOCAL_WRITE != 0
                    && !odp.pages().writable()
                {
                    return Err(EACCES);
                }
            }
            (None, None) => return Err(EOPNOTSUPP),
        }
        let mut new_access = req.access as u32;
        if self.odp.is_some() {
            new_access &= !params::ACCESS_ON_DEMAND;
        }
        let plan = params::rereg_plan(req.flags, new_access).map_err(errno)?;
        let mut writer = self.shared.rights_writer.lock();
        let pd = plan.pd.then_some(req.pd.raw());
        self.shared.rights.write(&mut writer, pd, plan.access);
        Ok(())
    }

    fn fast_mr(&self) -> Result<&FastMr> {
        match &self.shared.mem {
            MrMem::Fast(f) => Ok(f),
            _ => Err(EINVAL),
        }
    }

    /// `rxe_map_mr_sg` starts: pages of `page_size` bytes (a multiple of 4 KiB; C also takes
    /// smaller ones, rxe-rs does not).
    pub(crate) fn map_start(&self, page_size: u32) -> Result {
        let f = self.fast_mr()?;
        let page = 1usize << 12;
        let size = usize::try_from(page_size).map_err(|_| EINVAL)?;
        if size < page || size % page != 0 {
            return Err(EINVAL);
        }
        let split = size / page;
        let (max_sg, cap_split) = {
            let g = f.inner.lock();
            (g.max_sg, g.cap_split)
        };
        // Larger pages split into more 4 KiB ones: room for them, allocated here (as C).
        let fresh = if split > cap_split {
            Some(KernelPages::new(max_sg.checked_mul(split).ok_or(ENOMEM)?)?)
        } else {
            None
        };
        let mut g = f.inner.lock();
        if let Some(p) = fresh {
            g.pages = p;
            g.cap_split = split;
        }
        g.pages.clear();
        g.map_split = split;
        Ok(())
    }

    /// `rxe_set_page`: the next mapped page, at kernel address `addr`.
    pub(crate) fn map_page(&self, addr: u64) -> Result {
        let f = self.fast_mr()?;
        let mut g = f.inner.lock();
        let split = g.map_split;
        g.pages.push(addr, split)
    }

    /// `map_mr_sg` is done: the pages hold `length` bytes from `iova`.
    pub(crate) fn map_end(&self, iova: u64, length: u64) {
        if let Ok(f) = self.fast_mr() {
            let mut g = f.inner.lock();
            let page_size = g.map_split << 12;
            g.pages.set_start(iova, page_size);
            g.next_iova = iova;
            g.next_length = length;
        }
    }

    /// A REG_MR of this MR is posted: it registers `length` bytes from `iova`.
    pub(crate) fn stage_reg(&self, iova: u64, length: u64) {
        if let Ok(f) = self.fast_mr() {
            let mut g = f.inner.lock();
            g.next_iova = iova;
            g.next_length = length;
        }
    }

    /// `rxe_dereg_mr`: out of the table, dead, and once no data-path access is left its pages
    /// go (a user MR's are unpinned on drop, a fast MR's go back to their ULP). `EINVAL` while
    /// memory windows are bound to it, as C.
    pub(crate) fn deregister(&self, keys: &MemKeys) -> Result {
        self.shared
            .state
            .compare_exchange(0, MR_DEAD, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| EINVAL)?;
        drop(keys.mrs.remove(self.index.get()));
        match &self.shared.mem {
            // Every access to a fast MR's pages checks `valid` and copies under its lock: once
            // it is taken here, an access under way has ended and any later one finds it
            // invalid. No grace period, which a ULP tearing down a pool of hundreds (nvme-rdma,
            // one per queue entry) would wait out once per MR.
            MrMem::Fast(f) => f.inner.lock().valid = false,
            // A user MR's pages are read in RCU readers that checked liveness: after the grace
            // period none is left.
            _ if self.umem.is_some() || self.odp.is_some() => rcu::synchronize_rcu(),
            _ => {}
        }
        Ok(())
    }
}

/// What the data path knows of a memory window: its state, and the MR it is bound to.
#[pin_data]
pub(crate) struct MwShared {
    #[pin]
    inner: SpinLockIrq<MwInner>,
}

struct MwInner {
    win: Window,
    /// The MR the window is bound to (counted in its `num_mw`), while `win.length != 0`.
    mr: Option<Arc<MrShared>>,
}

impl MwInner {
    /// Drops the bound MR, if any; the caller drops the returned reference outside the lock.
    fn unbind_mr(&mut self) -> Option<Arc<MrShared>> {
        let mr = self.mr.take();
        if let Some(mr) = &mr {
            mr.release_mw();
        }
        mr
    }
}

/// An rxe MW: its pool index and the shared part in the device's window table.
pub(crate) struct RxeMw {
    index: PoolIndex,
    shared: Arc<MwShared>,
}

impl RxeMw {
    /// `rxe_alloc_mw`: the MW and its rkey (type 1 starts valid, type 2 free).
    pub(crate) fn new(keys: &MemKeys, pd: PdId, mw_type: u32) -> Result<(Self, u32)> {
        let mw_type = MwType::from_raw(mw_type).ok_or(EINVAL)?;
        let index = keys.mw_pool.take()?;
        let rkey = index.new_key();
        let shared = Arc::pin_init(
            pin_init!(MwShared {
                inner <- new_spinlock_irq!(MwInner {
                    win: Window::new(mw_type, pd.raw(), rkey),
                    mr: None,
                }),
            }),
            GFP_KERNEL,
        )?;
        keys.mws.insert(index.get(), shared.clone())?;
        Ok((Self { index, shared }, rkey))
    }

    /// `rxe_dealloc_mw`: out of the table, unbound, invalid.
    pub(crate) fn dealloc(&self, keys: &MemKeys) {
        drop(keys.mws.remove(self.index.get()));
        let mr = {
            let mut g = self.shared.inner.lock();
            g.win.dealloc();
            g.unbind_mr()
        };
        drop(mr);
    }
}

/// `rxe_bind_mw`: BIND_MW of window `mw_rkey` to MR `mr_lkey` by a QP of `qp_pd` (`qp`: its
/// identity, which a type 2 window records).
pub(crate) fn bind_mw(
    keys: &MemKeys,
    qp_pd: PdId,
    qp: u64,
    mw_rkey: u32,
    mr_lkey: u32,
    b: &Bind,
) -> Result<(), Errno> {
    let mw = keys.mw(mw_rkey).ok_or(Errno::Inval)?;
    let mr = if b.length != 0 {
        let mr = keys.mr(mr_lkey).ok_or(Errno::Inval)?;
        if mr.current_key() != mr_lkey || !mr.alive() {
            return Err(Errno::Inval);
        }
        Some(mr)
    } else {
        None
    };
    let old = {
        let mut g = mw.inner.lock();
        if g.win.rkey != mw_rkey {
            return Err(Errno::Inval);
        }
        g.win
            .check_bind(qp_pd.raw(), mr.as_ref().map(|m| m.view()).as_ref(), b)?;
        if let Some(mr) = &mr {
            if !mr.hold_mw() {
                return Err(Errno::Inval);
            }
        }
        let old = g.unbind_mr();
        g.win.bind(qp, b);
        g.mr = mr;
        old
    };
    drop(old);
    Ok(())
}

/// `rxe_invalidate_mw` / `rxe_invalidate_mr`: LOCAL_INV, or SEND_WITH_INV received, of `key`.
pub(crate) fn invalidate_key(keys: &MemKeys, key: u32) -> Result<(), Errno> {
    if mw::rkey_is_mw(key) {
        let mw = keys.mw(key).ok_or(Errno::Inval)?;
        let old = {
            let mut g = mw.inner.lock();
            if g.win.rkey != key {
                return Err(Errno::Inval);
            }
            g.win.check_invalidate()?;
            g.win.invalidate();
            g.unbind_mr()
        };
        drop(old);
        Ok(())
    } else {
        keys.mr(key).ok_or(Errno::Inval)?.invalidate(key)
    }
}

/// `rxe_reg_fast_mr`: REG_MR of the MR whose index `key` names (the one the ULP's `ib_mr`
/// is: `ib_update_fast_reg_key` only changes the low byte), by a QP of `qp_pd`.
pub(crate) fn reg_fast_mr(keys: &MemKeys, qp_pd: PdId, key: u32, access: u32) -> Result<(), Errno> {
    keys.mr(key)
        .ok_or(Errno::Inval)?
        .reg_fast(qp_pd, key, access)
}

/// `check_rkey`'s lookup: the MR behind `rkey` (an MR's, or a window's) for `need` rights on
/// `len` bytes at `va`, by QP `qp` of `pd`, the MR address `va` stands for, and how the key was
/// resolved, to be checked again for the message's later packets.
pub(crate) fn resolve_rkey(
    keys: &MemKeys,
    pd: PdId,
    qp: u64,
    rkey: u32,
    need: u32,
    va: u64,
    len: usize,
) -> Option<(Arc<MrShared>, u64, KeyUse)> {
    if mw::rkey_is_mw(rkey) {
        let mw = keys.mw(rkey)?;
        let (mr, iova) = {
            let g = mw.inner.lock();
            if !g.win.allows(rkey, pd.raw(), qp, need) {
                return None;
            }
            (g.mr.clone()?, g.win.target(va, len as u64)?)
        };
        mr.check_range(iova, len).ok()?;
        let window = WindowUse {
            mw,
            rkey,
            pd: pd.raw(),
            qp,
            need,
        };
        Some((mr, iova, KeyUse::Window(window)))
    } else {
        let mr = keys.mr(rkey)?;
        let rights_count = mr.check_key_counted(rkey, pd, need, Some((va, len))).ok()?;
        let key = KeyUse::Mr {
            rkey,
            pd,
            need,
            rights_count,
        };
        Some((mr, va, key))
    }
}

/// How a WRITE's or READ's rkey reached its MR, checked again for each of the message's later
/// packets, as C looks the rkey up for every packet: an MR deregistered, invalidated, moved to
/// another PD or left without the rights by `rereg_mr`, or a window invalidated or bound anew,
/// and the next packet is a remote access error. (C's read responses check the key and state
/// only, with a TODO for the rights; here the rights too.)
pub(crate) enum KeyUse {
    /// The MR's own key, by a QP of `pd`, for `need` rights; for an MR that is not a fast MR,
    /// the count of its rights pair when they were checked ([`MrShared::check_key_counted`]).
    Mr {
        rkey: u32,
        pd: PdId,
        need: u32,
        rights_count: Option<u32>,
    },
    /// A memory window.
    Window(WindowUse),
}

impl KeyUse {
    /// Whether the key still allows the access to `mr`. An MR whose rights pair is unchanged
    /// since the first packet's check (no `rereg_user_mr` since) is asked only whether it is
    /// still registered: one load and the state's, for every later packet of a message.
    #[inline]
    pub(crate) fn still_allows(&self, mr: &Arc<MrShared>) -> bool {
        if let KeyUse::Mr {
            rights_count: Some(count),
            ..
        } = self
        {
            if mr.rights.unchanged_since(*count) {
                return mr.alive();
            }
        }
        self.check_again(mr)
    }

    /// [`Self::still_allows`] the whole way: a window, a fast MR, or rights changed since.
    #[inline(never)]
    fn check_again(&self, mr: &Arc<MrShared>) -> bool {
        match self {
            KeyUse::Mr { rkey, pd, need, .. } => mr.allows(*rkey, *pd, *need),
            KeyUse::Window(window) => window.still_allows(mr),
        }
    }
}

/// A memory window a WRITE or READ went through.
pub(crate) struct WindowUse {
    mw: Arc<MwShared>,
    rkey: u32,
    pd: usize,
    qp: u64,
    need: u32,
}

impl WindowUse {
    /// Whether the window still allows the access and is bound to `mr`.
    fn still_allows(&self, mr: &Arc<MrShared>) -> bool {
        let g = self.mw.inner.lock();
        g.win.allows(self.rkey, self.pd, self.qp, self.need)
            && g.mr.as_ref().is_some_and(|m| Arc::ptr_eq(m, mr))
    }
}

/// `advise_mr` (C `rxe_ib_advise_mr`): prefetch the ranges `sges` of MRs of `pd` (each needs
/// local write rights, as C's lookup asks). PREFETCH maps for reading, PREFETCH_WRITE for
/// writing, PREFETCH_NO_FAULT takes what is mapped already. Pinned MRs have nothing to fetch.
/// Sleeps; the caller decides whether on its own thread (`IB_UVERBS_ADVISE_MR_FLAG_FLUSH`) or
/// in work ([`prefetch_targets`] first).
pub(crate) fn prefetch(targets: &[(Arc<MrShared>, u64, u64)], advice: u32) -> Result {
    let (write, fault) = params::prefetch_mode(advice).ok_or(EOPNOTSUPP)?;
    for (mr, iova, len) in targets {
        if *len != 0 {
            mr.fault(*iova, *len, write, fault)?;
        }
    }
    Ok(())
}

/// The MRs and ranges an `advise_mr` names, checked as C `rxe_ib_prefetch_sg_list` does:
/// `EINVAL` for an lkey that is not a live MR of `pd` with local write rights, `EPERM` for
/// PREFETCH_WRITE of memory registered read-only.
pub(crate) fn prefetch_targets(
    keys: &MemKeys,
    pd: PdId,
    advice: u32,
    sges: &[AdviseSge],
) -> Result<KVec<(Arc<MrShared>, u64, u64)>> {
    let (write, _) = params::prefetch_mode(advice).ok_or(EOPNOTSUPP)?;
    let mut out = KVec::with_capacity(sges.len(), GFP_KERNEL)?;
    for sge in sges {
        let mr = keys.mr(sge.lkey).ok_or(EINVAL)?;
        let len = sge.length as usize;
        // A range outside the MR is the fault's to refuse (`EFAULT`, as C's
        // `ib_umem_odp_map_dma_and_lock`; a queued prefetch drops it).
        match mr.check(sge.lkey, pd, access::LOCAL_WRITE, sge.addr, len) {
            Ok(()) | Err(MrError::Range) => {}
            Err(_) => return Err(EINVAL),
        }
        if let MrMem::Odp { pages, .. } = &mr.mem {
            if write && !pages.writable() {
                return Err(EPERM);
            }
        }
        out.push((mr, sge.addr, u64::from(sge.length)), GFP_KERNEL)?;
    }
    Ok(out)
}
