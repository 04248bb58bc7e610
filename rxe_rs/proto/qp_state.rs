// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The QP state machine and the pure checks of `create_qp` / `modify_qp`.
//!
//! [`modify_is_ok`] is the IB core's `ib_modify_qp_is_ok` over its `qp_state_table`
//! (`drivers/infiniband/core/verbs.c`), restricted to the QP types rxe knows; [`transition`] is
//! one entry of that table. [`chk_cap`], [`chk_init`], [`chk_attr`], [`chk_state`] and
//! [`chk_modify`] are the checks of `rxe_qp.c` and `rxe_verbs.c:rxe_modify_qp` that depend on
//! nothing but their arguments, with the C driver's errno.
//!
//! Not covered here, because they need device state: the AV checks of `rxe_av_chk_attr` (GID
//! table and GID type), and the "one GSI QP per port" check of `rxe_qp_chk_init`.

use super::params::{MAX_INLINE_DATA, MAX_QP_RD_ATOM, MAX_QP_WR, MAX_SGE};
use super::Errno;

/// `enum ib_qp_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum QpState {
    /// `IB_QPS_RESET`: the state of a new QP.
    #[default]
    Reset = 0,
    /// `IB_QPS_INIT`.
    Init = 1,
    /// `IB_QPS_RTR`: ready to receive.
    Rtr = 2,
    /// `IB_QPS_RTS`: ready to send.
    Rts = 3,
    /// `IB_QPS_SQD`: send queue drain(ed).
    Sqd = 4,
    /// `IB_QPS_SQE`: send queue error (UC, UD).
    Sqe = 5,
    /// `IB_QPS_ERR`.
    Err = 6,
}

impl QpState {
    /// Every state, in numeric order.
    pub const ALL: [Self; 7] = [
        Self::Reset,
        Self::Init,
        Self::Rtr,
        Self::Rts,
        Self::Sqd,
        Self::Sqe,
        Self::Err,
    ];

    /// The state numbered `raw`; `None` above `IB_QPS_ERR`, which uverbs rejects with `-EINVAL`
    /// (`uverbs_cmd.c:modify_qp`) before the table would be indexed out of bounds.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::Reset),
            1 => Some(Self::Init),
            2 => Some(Self::Rtr),
            3 => Some(Self::Rts),
            4 => Some(Self::Sqd),
            5 => Some(Self::Sqe),
            6 => Some(Self::Err),
            _ => None,
        }
    }
}

/// The `enum ib_qp_type` values of the table rows that matter to rxe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum QpType {
    /// `IB_QPT_SMI` (QP0): in the table, but rxe does not create it (RoCE has no SMI).
    Smi = 0,
    /// `IB_QPT_GSI` (QP1).
    Gsi = 1,
    /// `IB_QPT_RC`.
    Rc = 2,
    /// `IB_QPT_UC`.
    Uc = 3,
    /// `IB_QPT_UD`.
    Ud = 4,
}

impl QpType {
    /// Every type, in numeric order.
    pub const ALL: [Self; 5] = [Self::Smi, Self::Gsi, Self::Rc, Self::Uc, Self::Ud];

    /// The type numbered `raw`; `None` for the types rxe has no use for (raw packet, XRC,
    /// driver-specific).
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::Smi),
            1 => Some(Self::Gsi),
            2 => Some(Self::Rc),
            3 => Some(Self::Uc),
            4 => Some(Self::Ud),
            _ => None,
        }
    }
}

/// `IB_QP_STATE`.
pub const IB_QP_STATE: u32 = 1;
/// `IB_QP_CUR_STATE`.
pub const IB_QP_CUR_STATE: u32 = 1 << 1;
/// `IB_QP_EN_SQD_ASYNC_NOTIFY`.
pub const IB_QP_EN_SQD_ASYNC_NOTIFY: u32 = 1 << 2;
/// `IB_QP_ACCESS_FLAGS`.
pub const IB_QP_ACCESS_FLAGS: u32 = 1 << 3;
/// `IB_QP_PKEY_INDEX`.
pub const IB_QP_PKEY_INDEX: u32 = 1 << 4;
/// `IB_QP_PORT`.
pub const IB_QP_PORT: u32 = 1 << 5;
/// `IB_QP_QKEY`.
pub const IB_QP_QKEY: u32 = 1 << 6;
/// `IB_QP_AV`.
pub const IB_QP_AV: u32 = 1 << 7;
/// `IB_QP_PATH_MTU`.
pub const IB_QP_PATH_MTU: u32 = 1 << 8;
/// `IB_QP_TIMEOUT`.
pub const IB_QP_TIMEOUT: u32 = 1 << 9;
/// `IB_QP_RETRY_CNT`.
pub const IB_QP_RETRY_CNT: u32 = 1 << 10;
/// `IB_QP_RNR_RETRY`.
pub const IB_QP_RNR_RETRY: u32 = 1 << 11;
/// `IB_QP_RQ_PSN`.
pub const IB_QP_RQ_PSN: u32 = 1 << 12;
/// `IB_QP_MAX_QP_RD_ATOMIC`.
pub const IB_QP_MAX_QP_RD_ATOMIC: u32 = 1 << 13;
/// `IB_QP_ALT_PATH`.
pub const IB_QP_ALT_PATH: u32 = 1 << 14;
/// `IB_QP_MIN_RNR_TIMER`.
pub const IB_QP_MIN_RNR_TIMER: u32 = 1 << 15;
/// `IB_QP_SQ_PSN`.
pub const IB_QP_SQ_PSN: u32 = 1 << 16;
/// `IB_QP_MAX_DEST_RD_ATOMIC`.
pub const IB_QP_MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
/// `IB_QP_PATH_MIG_STATE`.
pub const IB_QP_PATH_MIG_STATE: u32 = 1 << 18;
/// `IB_QP_CAP`.
pub const IB_QP_CAP: u32 = 1 << 19;
/// `IB_QP_DEST_QPN`.
pub const IB_QP_DEST_QPN: u32 = 1 << 20;
/// `IB_QP_RESERVED1`.
pub const IB_QP_RESERVED1: u32 = 1 << 21;
/// `IB_QP_RESERVED2`.
pub const IB_QP_RESERVED2: u32 = 1 << 22;
/// `IB_QP_RESERVED3`.
pub const IB_QP_RESERVED3: u32 = 1 << 23;
/// `IB_QP_RESERVED4`.
pub const IB_QP_RESERVED4: u32 = 1 << 24;
/// `IB_QP_RATE_LIMIT`: always allowed by [`modify_is_ok`], refused by rxe ([`chk_modify`]).
pub const IB_QP_RATE_LIMIT: u32 = 1 << 25;
/// `IB_QP_ATTR_STANDARD_BITS` (`GENMASK(20, 0)`): the bits rxe accepts at all.
pub const IB_QP_ATTR_STANDARD_BITS: u32 = (1 << 21) - 1;

/// `RXE_ACCESS_SUPPORTED_QP`: the `qp_access_flags` bits rxe accepts (local write, remote
/// write / read / atomic, MW bind, on demand, flush global / persistent, the optional range).
pub const ACCESS_SUPPORTED_QP: u32 = crate::proto::params::ACCESS_SUPPORTED_MR;

/// The number of rxe's only port (`rdma_start_port` = `rdma_end_port` = 1).
pub const PORT_NUM: u32 = 1;

/// Largest local ACK timeout exponent (`timeout`, `alt_timeout`) rxe accepts.
pub const MAX_TIMEOUT: u8 = 31;

/// The largest path MTU of the port (`port->attr.max_mtu`, `IB_MTU_4096`).
const PORT_MAX_MTU: u32 = crate::proto::params::IbMtu::Mtu4096 as u32;

/// The attribute masks of one valid transition for one QP type (an entry of `qp_state_table`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttrMasks {
    /// Attributes that must be given (`req_param`).
    pub required: u32,
    /// Attributes that may be given (`opt_param`).
    pub optional: u32,
}

const fn masks(required: u32, optional: u32) -> Option<AttrMasks> {
    Some(AttrMasks { required, optional })
}

/// The `qp_state_table[cur][next]` entry for `qp_type`: `None` when the transition is not
/// `.valid`. Transitions that are valid for some types only through their masks (an empty
/// entry) give empty masks, so only `IB_QP_STATE` may be given.
pub const fn transition(cur: QpState, next: QpState, qp_type: QpType) -> Option<AttrMasks> {
    use QpState::{Err, Init, Reset, Rtr, Rts, Sqd, Sqe};
    use QpType::{Gsi, Rc, Smi, Uc, Ud};

    const PKEY_PORT_ACCESS: u32 = IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS;
    const PKEY_PORT_QKEY: u32 = IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY;
    const PKEY_QKEY: u32 = IB_QP_PKEY_INDEX | IB_QP_QKEY;
    const CUR_QKEY: u32 = IB_QP_CUR_STATE | IB_QP_QKEY;
    const CUR_ALT_ACCESS_MIG: u32 =
        IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PATH_MIG_STATE;
    const UC_RTR: u32 = IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN;

    match (cur, next) {
        (Reset, Reset) => masks(0, 0),
        (Reset, Init) => match qp_type {
            Ud => masks(PKEY_PORT_QKEY, 0),
            Uc | Rc => masks(PKEY_PORT_ACCESS, 0),
            Smi | Gsi => masks(PKEY_QKEY, 0),
        },
        (Init, Init) => match qp_type {
            Ud => masks(0, PKEY_PORT_QKEY),
            Uc | Rc => masks(0, PKEY_PORT_ACCESS),
            Smi | Gsi => masks(0, PKEY_QKEY),
        },
        (Init, Rtr) => match qp_type {
            Uc => masks(
                UC_RTR,
                IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX,
            ),
            Rc => masks(
                UC_RTR | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER,
                IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX,
            ),
            Ud | Smi | Gsi => masks(0, PKEY_QKEY),
        },
        (Rtr, Rts) => match qp_type {
            Rc => masks(
                IB_QP_TIMEOUT
                    | IB_QP_RETRY_CNT
                    | IB_QP_RNR_RETRY
                    | IB_QP_SQ_PSN
                    | IB_QP_MAX_QP_RD_ATOMIC,
                CUR_ALT_ACCESS_MIG | IB_QP_MIN_RNR_TIMER,
            ),
            Uc => masks(IB_QP_SQ_PSN, CUR_ALT_ACCESS_MIG),
            Ud | Smi | Gsi => masks(IB_QP_SQ_PSN, CUR_QKEY),
        },
        (Rts, Rts) | (Sqd, Rts) => match qp_type {
            Rc => masks(0, CUR_ALT_ACCESS_MIG | IB_QP_MIN_RNR_TIMER),
            Uc => masks(0, CUR_ALT_ACCESS_MIG),
            Ud | Smi | Gsi => masks(0, CUR_QKEY),
        },
        (Rts, Sqd) => masks(0, IB_QP_EN_SQD_ASYNC_NOTIFY),
        (Sqd, Sqd) => match qp_type {
            Rc => masks(
                0,
                IB_QP_PORT
                    | IB_QP_AV
                    | IB_QP_TIMEOUT
                    | IB_QP_RETRY_CNT
                    | IB_QP_RNR_RETRY
                    | IB_QP_MAX_QP_RD_ATOMIC
                    | IB_QP_MAX_DEST_RD_ATOMIC
                    | IB_QP_ALT_PATH
                    | IB_QP_ACCESS_FLAGS
                    | IB_QP_PKEY_INDEX
                    | IB_QP_MIN_RNR_TIMER
                    | IB_QP_PATH_MIG_STATE,
            ),
            Uc => masks(
                0,
                IB_QP_AV
                    | IB_QP_ALT_PATH
                    | IB_QP_ACCESS_FLAGS
                    | IB_QP_PKEY_INDEX
                    | IB_QP_PATH_MIG_STATE,
            ),
            Ud | Smi | Gsi => masks(0, PKEY_QKEY),
        },
        (Sqe, Rts) => match qp_type {
            // The table has no RC entry: an RC QP never is in SQE.
            Rc => masks(0, 0),
            Uc => masks(0, IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS),
            Ud | Smi | Gsi => masks(0, CUR_QKEY),
        },
        // Every state but RESET may go to RESET and to ERR; RESET may not go to ERR.
        (Init | Rtr | Rts | Sqd | Sqe | Err, Reset | Err) => masks(0, 0),
        _ => None,
    }
}

/// `ib_modify_qp_is_ok(cur, next, type, mask)`: whether a QP of `qp_type` in `cur` may move to
/// `next` with the attributes in `mask`. `IB_QP_CUR_STATE` is allowed only from RTR, RTS, SQD
/// and SQE; the transition must be valid; every required attribute must be given; and nothing
/// outside required, optional, `IB_QP_STATE` and `IB_QP_RATE_LIMIT`.
pub const fn modify_is_ok(cur: QpState, next: QpState, qp_type: QpType, mask: u32) -> bool {
    if mask & IB_QP_CUR_STATE != 0
        && !matches!(
            cur,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        )
    {
        return false;
    }
    let Some(AttrMasks { required, optional }) = transition(cur, next, qp_type) else {
        return false;
    };
    mask & required == required
        && mask & !(required | optional | IB_QP_STATE | IB_QP_RATE_LIMIT) == 0
}

/// The queue sizes asked for at create (`struct ib_qp_cap`), also checked by `IB_QP_CAP`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpCap {
    /// `max_send_wr`.
    pub max_send_wr: u32,
    /// `max_recv_wr`.
    pub max_recv_wr: u32,
    /// `max_send_sge`.
    pub max_send_sge: u32,
    /// `max_recv_sge`.
    pub max_recv_sge: u32,
    /// `max_inline_data`.
    pub max_inline_data: u32,
}

/// `rxe_qp_chk_cap(rxe, cap, has_srq)`: the send and (without an SRQ) receive queue sizes
/// within the device limits. [`Errno::Inval`] otherwise.
pub const fn chk_cap(cap: &QpCap, has_srq: bool) -> Result<(), Errno> {
    if cap.max_send_wr > MAX_QP_WR || cap.max_send_sge > MAX_SGE {
        return Err(Errno::Inval);
    }
    if !has_srq && (cap.max_recv_wr > MAX_QP_WR || cap.max_recv_sge > MAX_SGE) {
        return Err(Errno::Inval);
    }
    if cap.max_inline_data > MAX_INLINE_DATA {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// `rdma_is_port_valid` for rxe's single port.
const fn port_is_valid(port_num: u32) -> bool {
    port_num == PORT_NUM
}

/// `rxe_qp_chk_init(rxe, init)` without the device state: the QP type (numbered `raw_type`)
/// must be GSI, RC, UC or UD ([`Errno::OpNotSupp`]); both CQs must be given, the caps be within
/// limits ([`chk_cap`]) and a GSI QP's `port_num` be 1 ([`Errno::Inval`]). The caller then
/// refuses a second GSI QP on the port (`-EINVAL` too).
pub const fn chk_init(
    raw_type: u32,
    has_cqs: bool,
    cap: &QpCap,
    has_srq: bool,
    port_num: u32,
) -> Result<QpType, Errno> {
    let qp_type = match QpType::from_raw(raw_type) {
        Some(t @ (QpType::Gsi | QpType::Rc | QpType::Uc | QpType::Ud)) => t,
        Some(QpType::Smi) | None => return Err(Errno::OpNotSupp),
    };
    if !has_cqs {
        return Err(Errno::Inval);
    }
    if let Err(e) = chk_cap(cap, has_srq) {
        return Err(e);
    }
    if matches!(qp_type, QpType::Gsi) && !port_is_valid(port_num) {
        return Err(Errno::Inval);
    }
    Ok(qp_type)
}

/// What [`chk_attr`] and [`chk_state`] need to know of the QP being modified, read under its
/// `state_lock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpNow {
    /// `qp_type(qp)`.
    pub qp_type: QpType,
    /// `qp->attr.qp_state`.
    pub state: QpState,
    /// `qp->attr.sq_draining`: an SQD transition has not finished draining the SQ.
    pub sq_draining: bool,
    /// `qp->srq != NULL`.
    pub has_srq: bool,
}

/// The fields of `struct ib_qp_attr` that the pure checks read; each matters only when its mask
/// bit is given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModifyAttr {
    /// `qp_state` (`IB_QP_STATE`).
    pub qp_state: QpState,
    /// `cur_qp_state` (`IB_QP_CUR_STATE`).
    pub cur_qp_state: QpState,
    /// `port_num` (`IB_QP_PORT`).
    pub port_num: u32,
    /// `cap` (`IB_QP_CAP`).
    pub cap: QpCap,
    /// `qp_access_flags` (`IB_QP_ACCESS_FLAGS`), the C `int` as bits.
    pub qp_access_flags: u32,
    /// `alt_port_num` (`IB_QP_ALT_PATH`).
    pub alt_port_num: u32,
    /// `alt_timeout` (`IB_QP_ALT_PATH`).
    pub alt_timeout: u8,
    /// `path_mtu` (`IB_QP_PATH_MTU`), the raw `enum ib_mtu`.
    pub path_mtu: u32,
    /// `max_rd_atomic` (`IB_QP_MAX_QP_RD_ATOMIC`).
    pub max_rd_atomic: u8,
    /// `timeout` (`IB_QP_TIMEOUT`).
    pub timeout: u8,
}

/// `rxe_qp_chk_attr(rxe, qp, attr, mask)` without the AV checks: port 1, caps within limits,
/// access flags only on RC / UC and only supported bits, alternate port 1 and alternate
/// timeout at most 31, path MTU at most 4096, `max_rd_atomic` at most
/// [`MAX_QP_RD_ATOM`], timeout at most 31. [`Errno::Inval`] otherwise.
///
/// Like the C driver, this does **not** refuse a path MTU of 0 (which C turns into
/// `qp->mtu = -1`) nor one above the active MTU, and checks neither `pkey_index`,
/// `max_dest_rd_atomic`, `retry_cnt`, `rnr_retry` nor `min_rnr_timer`.
pub const fn chk_attr(qp: &QpNow, attr: &ModifyAttr, mask: u32) -> Result<(), Errno> {
    if mask & IB_QP_PORT != 0 && !port_is_valid(attr.port_num) {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_CAP != 0 && chk_cap(&attr.cap, qp.has_srq).is_err() {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_ACCESS_FLAGS != 0
        && (!matches!(qp.qp_type, QpType::Rc | QpType::Uc)
            || attr.qp_access_flags & !ACCESS_SUPPORTED_QP != 0)
    {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_ALT_PATH != 0
        && (!port_is_valid(attr.alt_port_num) || attr.alt_timeout > MAX_TIMEOUT)
    {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_PATH_MTU != 0 && attr.path_mtu > PORT_MAX_MTU {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_MAX_QP_RD_ATOMIC != 0 && attr.max_rd_atomic as u32 > MAX_QP_RD_ATOM {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_TIMEOUT != 0 && attr.timeout > MAX_TIMEOUT {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// `__qp_chk_state(qp, attr, mask)`, which the C driver runs only when `mask` has
/// `IB_QP_STATE`: from `attr.cur_qp_state` if `IB_QP_CUR_STATE` is given (trusted as is), else
/// from the QP's state, to `attr.qp_state`, [`modify_is_ok`] must hold; and a QP in SQD still
/// draining may only go to ERR. [`Errno::Inval`] otherwise.
pub const fn chk_state(qp: &QpNow, attr: &ModifyAttr, mask: u32) -> Result<(), Errno> {
    let cur = if mask & IB_QP_CUR_STATE != 0 {
        attr.cur_qp_state
    } else {
        qp.state
    };
    let next = if mask & IB_QP_STATE != 0 {
        attr.qp_state
    } else {
        cur
    };
    if !modify_is_ok(cur, next, qp.qp_type, mask) {
        return Err(Errno::Inval);
    }
    if mask & IB_QP_STATE != 0
        && matches!(cur, QpState::Sqd)
        && qp.sq_draining
        && !matches!(next, QpState::Err)
    {
        return Err(Errno::Inval);
    }
    Ok(())
}

/// Every check `rxe_modify_qp` makes before changing anything, in its order: bits outside
/// [`IB_QP_ATTR_STANDARD_BITS`] ([`Errno::OpNotSupp`]), [`chk_attr`], and [`chk_state`] when
/// `mask` has `IB_QP_STATE`. Without `IB_QP_STATE` the C driver consults no state table, so
/// e.g. an RTS QP may change its `IB_QP_DEST_QPN` or `IB_QP_PATH_MTU`; this reproduces that.
pub const fn chk_modify(qp: &QpNow, attr: &ModifyAttr, mask: u32) -> Result<(), Errno> {
    if mask & !IB_QP_ATTR_STANDARD_BITS != 0 {
        return Err(Errno::OpNotSupp);
    }
    if let Err(e) = chk_attr(qp, attr, mask) {
        return Err(e);
    }
    if mask & IB_QP_STATE != 0 {
        return chk_state(qp, attr, mask);
    }
    Ok(())
}
