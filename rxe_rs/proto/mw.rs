// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The rules of memory windows (`rxe_mw.c`) and of fast-registered MRs (`rxe_mr.c`:
//! `rxe_reg_fast_mr`, `rxe_invalidate_mr`), as pure functions of the objects' state.
//!
//! A window ([`Window`]) is bound by a BIND_MW work request (type 2, and type 1 through
//! `ibv_bind_mw`, which librxe turns into the same WQE), invalidated by LOCAL_INV or a
//! SEND_WITH_INV naming its rkey (type 2 only), and resolves a remote access to the MR it is
//! bound to. Protection domains and QPs are opaque identities here (`usize`, `u64`).

use super::range::offset_in;
use super::{params, Errno};

/// `IB_ACCESS_LOCAL_WRITE`.
pub const ACCESS_LOCAL_WRITE: u32 = 1;
/// `IB_ACCESS_REMOTE_WRITE`.
pub const ACCESS_REMOTE_WRITE: u32 = 2;
/// `IB_ACCESS_REMOTE_READ`.
pub const ACCESS_REMOTE_READ: u32 = 4;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub const ACCESS_REMOTE_ATOMIC: u32 = 8;
/// `IB_ACCESS_MW_BIND`.
pub const ACCESS_MW_BIND: u32 = 0x10;
/// `IB_ZERO_BASED`.
pub const ACCESS_ZERO_BASED: u32 = 0x20;
/// `RXE_ACCESS_REMOTE`: every remote right.
pub const ACCESS_REMOTE: u32 = ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC;
/// `RXE_ACCESS_SUPPORTED_MW`: the MR's supported rights and `IB_ZERO_BASED`.
pub const ACCESS_SUPPORTED_MW: u32 = params::ACCESS_SUPPORTED_MR | ACCESS_ZERO_BASED;

/// Whether `key` names a memory window rather than an MR (`rkey_is_mw`): its index
/// (`key >> 8`) lies in the MW pool's range.
pub const fn rkey_is_mw(key: u32) -> bool {
    let index = key >> 8;
    index >= params::MIN_MW_INDEX && index <= params::MAX_MW_INDEX
}

/// `key` with its low byte (the consumer-owned "key" part) replaced by that of `new`.
pub const fn with_key_byte(key: u32, new: u32) -> u32 {
    (key & !0xff) | (new & 0xff)
}

/// `enum ib_mw_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MwType {
    /// `IB_MW_TYPE_1`: bound by `ibv_bind_mw`, any QP of its PD may use it, not invalidated.
    One,
    /// `IB_MW_TYPE_2`: bound by a BIND_MW work request, to one QP; invalidated by LOCAL_INV and
    /// SEND_WITH_INV.
    Two,
}

impl MwType {
    /// From `ib_mw.type` (`IB_MW_TYPE_1` = 1, `IB_MW_TYPE_2` = 2).
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(Self::One),
            2 => Some(Self::Two),
            _ => None,
        }
    }
}

/// `enum rxe_mw_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MwState {
    /// A type 2 window not bound.
    Free,
    /// Bound (a type 1 window is valid from allocation, bound to nothing).
    Valid,
    /// Deallocated.
    Invalid,
}

/// The MR a bind names, as the bind checks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrView {
    /// Its protection domain.
    pub pd: usize,
    /// Its access flags.
    pub access: u32,
    /// Its first address (`ibmr.iova`).
    pub iova: u64,
    /// Its length in bytes (`ibmr.length`).
    pub length: u64,
}

/// What a BIND_MW work request asks (`wr.mw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bind {
    /// Start of the window: an address of the MR, or an offset for a zero-based window.
    pub addr: u64,
    /// Bytes; 0 unbinds a type 1 window.
    pub length: u64,
    /// The window's rights (`IB_ACCESS_*`, `IB_ZERO_BASED`).
    pub access: u32,
    /// The new rkey: only its low byte is used.
    pub rkey: u32,
}

/// A memory window's state (`struct rxe_mw` but the references it holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Type 1 or 2.
    pub mw_type: MwType,
    /// Free, valid or invalid.
    pub state: MwState,
    /// Its protection domain.
    pub pd: usize,
    /// Its current rkey.
    pub rkey: u32,
    /// Rights granted through it.
    pub access: u32,
    /// Start (MR address, or offset for a zero-based window).
    pub addr: u64,
    /// Length; 0 when bound to no MR.
    pub length: u64,
    /// The QP a type 2 window is bound to.
    pub qp: Option<u64>,
}

impl Window {
    /// A window just allocated (`rxe_alloc_mw`): type 2 free, type 1 valid and bound to nothing.
    pub const fn new(mw_type: MwType, pd: usize, rkey: u32) -> Self {
        Self {
            mw_type,
            state: match mw_type {
                MwType::One => MwState::Valid,
                MwType::Two => MwState::Free,
            },
            pd,
            rkey,
            access: 0,
            addr: 0,
            length: 0,
            qp: None,
        }
    }

    /// `rxe_bind_mw`'s access check and `rxe_check_bind_mw`: whether a QP of `qp_pd` may bind
    /// this window as `b` asks, to `mr` (`None` when `b.length` is 0: no MR is looked up).
    pub fn check_bind(&self, qp_pd: usize, mr: Option<&MrView>, b: &Bind) -> Result<(), Errno> {
        if b.access & !ACCESS_SUPPORTED_MW != 0 {
            return Err(Errno::OpNotSupp);
        }
        match self.mw_type {
            MwType::One => {
                if self.state != MwState::Valid {
                    return Err(Errno::Inval);
                }
                // o10-36.2.2
                if b.access & ACCESS_ZERO_BASED != 0 {
                    return Err(Errno::Inval);
                }
            }
            MwType::Two => {
                // o10-37.2.30
                if self.state != MwState::Free {
                    return Err(Errno::Inval);
                }
                // o10-37.2.40
                if mr.is_none() || b.length == 0 {
                    return Err(Errno::Inval);
                }
            }
        }
        // C10-72
        if qp_pd != self.pd {
            return Err(Errno::Inval);
        }
        let Some(mr) = mr else {
            return Ok(());
        };
        if mr.pd != qp_pd || mr.access & ACCESS_ZERO_BASED != 0 {
            return Err(Errno::Inval);
        }
        // C10-73
        if mr.access & ACCESS_MW_BIND == 0 {
            return Err(Errno::Inval);
        }
        // C10-74
        if b.access & (ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC) != 0
            && mr.access & ACCESS_LOCAL_WRITE == 0
        {
            return Err(Errno::Inval);
        }
        // C10-75
        let inside = if b.access & ACCESS_ZERO_BASED != 0 {
            b.length <= mr.length
        } else {
            offset_in(mr.iova, mr.length, b.addr, b.length).is_some()
        };
        if inside {
            Ok(())
        } else {
            Err(Errno::Inval)
        }
    }

    /// `rxe_do_bind_mw`, after [`Self::check_bind`]: the window is valid with `b`'s range and
    /// rights and `b.rkey`'s key byte; a type 2 window now belongs to QP `qp`. Whether it now
    /// holds an MR (`b.length != 0`): the caller keeps (or drops) the MR reference accordingly.
    pub fn bind(&mut self, qp: u64, b: &Bind) -> bool {
        self.rkey = with_key_byte(self.rkey, b.rkey);
        self.access = b.access;
        self.state = MwState::Valid;
        self.addr = b.addr;
        self.length = b.length;
        if self.mw_type == MwType::Two {
            self.qp = Some(qp);
        }
        self.length != 0
    }

    /// `rxe_check_invalidate_mw`: only a bound type 2 window can be invalidated.
    pub fn check_invalidate(&self) -> Result<(), Errno> {
        // o10-37.2.26
        if self.state == MwState::Invalid || self.mw_type == MwType::One {
            return Err(Errno::Inval);
        }
        Ok(())
    }

    /// `rxe_do_invalidate_mw`: free again, bound to nothing (the caller drops the MR).
    pub fn invalidate(&mut self) {
        self.qp = None;
        self.access = 0;
        self.addr = 0;
        self.length = 0;
        self.state = MwState::Free;
    }

    /// `rxe_mw_cleanup`: deallocated (the caller drops the MR).
    pub fn dealloc(&mut self) {
        self.invalidate();
        self.state = MwState::Invalid;
    }

    /// `rxe_lookup_mw`: whether QP `qp` of `pd` may use this window with `rkey` for `need`.
    pub fn allows(&self, rkey: u32, pd: usize, qp: u64, need: u32) -> bool {
        self.rkey == rkey
            && self.pd == pd
            && !(self.mw_type == MwType::Two && self.qp != Some(qp))
            && self.length != 0
            && need & self.access == need
            && self.state == MwState::Valid
    }

    /// The MR address of `len` bytes at `va` through this window, if they lie inside it. A
    /// zero-based window's `va` is an offset from its start (C: `resp.offset = mw->addr`).
    ///
    /// The C responder checks the range against the MR only, not the window; rxe-rs keeps the
    /// access inside the window (IBA 10.6.7.2).
    pub fn target(&self, va: u64, len: u64) -> Option<u64> {
        let start = if self.access & ACCESS_ZERO_BASED != 0 {
            0
        } else {
            self.addr
        };
        offset_in(start, self.length, va, len)?;
        if self.access & ACCESS_ZERO_BASED != 0 {
            self.addr.checked_add(va)
        } else {
            Some(va)
        }
    }
}

/// `rxe_invalidate_mr`'s checks: LOCAL_INV or SEND_WITH_INV of key `key` on an MR whose key is
/// `mr_key`, with `num_mw` windows bound, which is a fast-registration MR or not.
pub const fn check_invalidate_mr(
    key: u32,
    mr_key: u32,
    num_mw: u32,
    fast_reg: bool,
) -> Result<(), Errno> {
    if key != mr_key || num_mw > 0 || !fast_reg {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// `rxe_reg_fast_mr`'s checks: REG_MR of an MR (`free`: not registered; `mr_pd`, `mr_key`) by
/// a QP of `qp_pd` with the new key `key`, which may only change the low byte.
pub const fn check_reg_fast_mr(
    free: bool,
    mr_pd: usize,
    qp_pd: usize,
    mr_key: u32,
    key: u32,
) -> Result<(), Errno> {
    if !free || mr_pd != qp_pd || (mr_key & !0xff) != (key & !0xff) {
        return Err(Errno::Inval);
    }
    Ok(())
}
