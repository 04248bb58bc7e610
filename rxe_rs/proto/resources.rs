// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The responder resources (C `struct resp_res` in the ring `qp->resp.resources`): what the
//! responder remembers of the reads, atomics, ATOMIC WRITEs and FLUSHes it executed, so that a
//! duplicate of one is answered again without executing it a second time (C
//! `rxe_prepare_res`, `find_resource`, `duplicate_request`).
//!
//! The ring has `max_dest_rd_atomic` slots (as `modify_qp` rounds it: a power of two), the
//! number of reads and atomics the requester may have outstanding; each executed request of
//! those kinds takes the next slot and evicts the oldest resource. `modify_qp` with
//! `IB_QP_MAX_DEST_RD_ATOMIC` replaces the ring by an empty one of the new size
//! (`free_rd_atomic_resources` + `alloc_rd_atomic_resources`), a move to RESET empties it
//! (`cleanup_rd_atomic_resources`); ERROR leaves it, as nothing is answered there.
//!
//! A resource is never changed once recorded. C rewrites a read's resource when it replays it
//! (its cursor, and `va_org`: the start of the range later duplicates are checked against,
//! while keeping its length, so the window moves); here a replay is a copy
//! ([`ReadReplay`]) the engine sends from, so a slot recorded again while a replay is being
//! sent cannot change that replay, and a replay cannot widen what later duplicates may read.

use core::ops::DerefMut;

use super::psn::{psn_add, psn_diff};

/// What a resource records of the request that took it (the union of C `struct resp_res`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An RDMA READ: its RETH, as it came on the wire. (C records `qp->resp.va +
    /// qp->resp.offset`, the MR address a zero-based memory window's offset translates to,
    /// and compares a duplicate's wire address with it.)
    Read {
        /// RETH virtual address.
        va: u64,
        /// RETH DMA length.
        length: u32,
        /// RETH rkey.
        rkey: u32,
    },
    /// A COMPARE & SWAP or FETCH & ADD and the original value it returned.
    Atomic {
        /// The original value (`atomic.orig_val`).
        orig: u64,
    },
    /// An ATOMIC WRITE.
    AtomicWrite,
    /// A FLUSH.
    Flush,
}

/// One responder resource: the PSNs of the request's responses and what it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resource {
    /// PSN of the request (its first response).
    pub first_psn: u32,
    /// PSN of its last response: `first_psn` but for a read of more than one MTU.
    pub last_psn: u32,
    /// What it was.
    pub kind: Kind,
}

/// How many response packets a read of `length` bytes takes under path MTU `mtu`: one per MTU,
/// and one for a zero-length read (C `rxe_prepare_res`). An `mtu` of 0 counts as 1.
pub const fn read_packets(length: u32, mtu: u32) -> u32 {
    let mtu = if mtu == 0 { 1 } else { mtu };
    let n = length.div_ceil(mtu);
    if n == 0 {
        1
    } else {
        n
    }
}

impl Resource {
    /// A read at PSN `psn` of `length` bytes at `va` with `rkey`, answered in MTUs of `mtu`
    /// bytes: its responses take PSNs `psn ..= psn + read_packets - 1` (mod 2^24).
    pub const fn read(psn: u32, va: u64, length: u32, rkey: u32, mtu: u32) -> Self {
        Self {
            first_psn: psn,
            last_psn: psn_add(psn, read_packets(length, mtu) - 1),
            kind: Kind::Read { va, length, rkey },
        }
    }

    /// An atomic, ATOMIC WRITE or FLUSH at PSN `psn`: one response, at `psn`.
    pub const fn single(psn: u32, kind: Kind) -> Self {
        Self {
            first_psn: psn,
            last_psn: psn,
            kind,
        }
    }

    /// Whether `psn` is one of this resource's PSNs, by 24-bit PSN order (C `find_resource`:
    /// `psn_compare(psn, first_psn) >= 0 && psn_compare(psn, last_psn) <= 0`).
    pub const fn contains(&self, psn: u32) -> bool {
        psn_diff(psn, self.first_psn) >= 0 && psn_diff(psn, self.last_psn) <= 0
    }
}

/// Why a duplicate read, atomic, ATOMIC WRITE or FLUSH is dropped unanswered (C class D:
/// `RESPST_CLEANUP` from `duplicate_request`). The requester retries it after its timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DupDrop {
    /// No resource holds its PSN: evicted by newer ones, or never executed.
    NotFound,
    /// The resource at its PSN is of another kind (C answers from it anyway, with whatever the
    /// union holds: an "original value" that is a read's address, say).
    OtherKind,
    /// A read asking for bytes outside the read recorded.
    NotSubset,
    /// A read with another rkey than the read recorded.
    OtherRkey,
}

/// A duplicate read to answer again (C `duplicate_request` → `RESPST_READ_REPLY` with the
/// resource's `replay` set): what the engine sends its responses from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadReplay {
    /// PSN of the first response: the duplicate's (C `res->cur_psn = pkt->psn`).
    pub psn: u32,
    /// The duplicate's RETH address (C resets the cursor to it).
    pub va: u64,
    /// The duplicate's RETH length: the bytes to send.
    pub len: u32,
    /// The rkey, the recorded read's (and the duplicate's).
    pub rkey: u32,
    /// The duplicate asks from the read's first PSN: responses start with FIRST or ONLY (C
    /// `rdatm_res_state_new`). Otherwise it resumes a read the requester got part of, with
    /// MIDDLE or LAST (C `rdatm_res_state_replay`).
    pub from_start: bool,
}

/// The ring of responder resources over the slots `S` (a slice of `Option<Resource>`: the
/// engine's is a kernel vector allocated by `modify_qp`, the tests' a `Vec`). `head` is the
/// slot the next resource takes (C `res_head`, `rxe_advance_resp_resource`).
pub struct Resources<S> {
    slots: S,
    head: usize,
}

impl<S: Default + DerefMut<Target = [Option<Resource>]>> Default for Resources<S> {
    fn default() -> Self {
        Self::new(S::default())
    }
}

impl<S: DerefMut<Target = [Option<Resource>]>> Resources<S> {
    /// A ring over `slots`, emptied: `slots.len()` is its capacity, `max_dest_rd_atomic`.
    pub fn new(mut slots: S) -> Self {
        for slot in slots.iter_mut() {
            *slot = None;
        }
        Self { slots, head: 0 }
    }

    /// How many resources the ring keeps (`max_dest_rd_atomic`).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many resources it holds now.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records an executed request in the next slot, evicting the oldest resource once the
    /// ring is full (C `rxe_prepare_res`). With no slots (`max_dest_rd_atomic` 0, which the
    /// responder refuses reads and atomics for, but not FLUSHes) nothing is recorded; C writes
    /// past its zero-length array there.
    pub fn record(&mut self, res: Resource) {
        let cap = self.slots.len();
        if let Some(slot) = self.slots.get_mut(self.head) {
            *slot = Some(res);
            self.head = (self.head + 1) % cap;
        }
    }

    /// Forgets every resource (C `cleanup_rd_atomic_resources`, on a move to RESET). The
    /// capacity stays.
    pub fn clear(&mut self) {
        for slot in self.slots.iter_mut() {
            *slot = None;
        }
        self.head = 0;
    }

    /// The resources from the newest to the oldest.
    pub fn newest_first(&self) -> impl Iterator<Item = &Resource> + '_ {
        let cap = self.slots.len();
        (1..=cap).filter_map(move |i| self.slots.get((self.head + cap - i) % cap)?.as_ref())
    }

    /// The resource whose PSNs hold `psn` (C `find_resource`), the newest if several do (C
    /// takes the first in slot order; two can only match once PSNs wrap).
    pub fn find(&self, psn: u32) -> Option<&Resource> {
        self.newest_first().find(|r| r.contains(psn))
    }

    /// A duplicate RDMA READ at `psn` whose RETH is `va`, `len`, `rkey` (C `duplicate_request`,
    /// `RXE_READ_MASK`): replayed if a read resource holds its PSN, asks for a part of that read
    /// (`va .. va + len` inside the read recorded) and names its rkey; else dropped.
    pub fn replay_read(
        &self,
        psn: u32,
        va: u64,
        len: u32,
        rkey: u32,
    ) -> Result<ReadReplay, DupDrop> {
        let res = self.find(psn).ok_or(DupDrop::NotFound)?;
        let Kind::Read {
            va: rva,
            length: rlen,
            rkey: rrkey,
        } = res.kind
        else {
            return Err(DupDrop::OtherKind);
        };
        let inside = va
            .checked_sub(rva)
            .and_then(|off| off.checked_add(u64::from(len)))
            .is_some_and(|end| end <= u64::from(rlen));
        if !inside {
            return Err(DupDrop::NotSubset);
        }
        if rkey != rrkey {
            return Err(DupDrop::OtherRkey);
        }
        Ok(ReadReplay {
            psn,
            va,
            len,
            rkey,
            from_start: psn == res.first_psn,
        })
    }

    /// A duplicate COMPARE & SWAP or FETCH & ADD at `psn`: the original value recorded, sent
    /// again in an ATOMIC ACKNOWLEDGE at `psn` (C `atomic_reply` with `replay` set), or dropped.
    pub fn replay_atomic(&self, psn: u32) -> Result<u64, DupDrop> {
        match self.find(psn).ok_or(DupDrop::NotFound)?.kind {
            Kind::Atomic { orig } => Ok(orig),
            _ => Err(DupDrop::OtherKind),
        }
    }

    /// A duplicate ATOMIC WRITE (`flush` false) or FLUSH (`flush` true) at `psn`: acknowledged
    /// again with a zero-length READ RESPONSE ONLY at `psn` if recorded (C
    /// `atomic_write_reply` / `process_flush` with `replay` set), without executing it.
    pub fn replay_ack(&self, psn: u32, flush: bool) -> Result<(), DupDrop> {
        match (self.find(psn).ok_or(DupDrop::NotFound)?.kind, flush) {
            (Kind::AtomicWrite, false) | (Kind::Flush, true) => Ok(()),
            _ => Err(DupDrop::OtherKind),
        }
    }
}
