// SPDX-License-Identifier: GPL-2.0

//! Queue pairs, control path (`rxe_qp.c`, the QP verbs of `rxe_verbs.c`): creation with the
//! send and receive rings user space maps, the attribute checks and state table of
//! `modify_qp`, and `query_qp`. Moving work through the rings is the data path's.

use super::{
    device::RxeDev,
    pool::PoolIndex,
    ring::{errno, Ring},
};
use crate::ib::{
    device::Device,
    qp::{QpAttrs, QpAv, QpInit},
    uqueue::{MmapInfo, UserReq},
};
use crate::proto::{
    av::{AddressVector, NetworkType},
    params::{self, IbMtu},
    qp_state::{self, QpCap, QpState, QpType},
    queue::{recv_wqe_size, send_wqe_size},
};
use core::sync::atomic::Ordering;
use kernel::{new_mutex, prelude::*, sync::Mutex};

/// `struct rxe_create_qp_resp { struct mminfo rq_mi, sq_mi; }`.
const CREATE_QP_RESP_LEN: usize = 32;
/// The GSI QP's number.
const GSI_QPN: u32 = 1;

/// How a QP is numbered: from the QP pool, or the one GSI QP of the port.
enum Qpn {
    Pool(PoolIndex),
    Gsi,
}

/// An rxe QP.
pub(crate) struct RxeQp {
    qpn: Qpn,
    qp_type: QpType,
    has_srq: bool,
    /// The send ring (read by the data path, still to come; held for user space until then).
    _sq: Ring,
    /// The receive ring, `None` when receives come from an SRQ.
    _rq: Option<Ring>,
    /// The capabilities as made (`sq.max_wr`…), reported by `query_qp`.
    cap: QpCap,
    state: Pin<KBox<Mutex<QpNowState>>>,
}

/// What `modify_qp` changes, under the QP's lock.
struct QpNowState {
    attrs: QpAttrs,
    /// The primary and alternate address vectors (`qp->pri_av`, `qp->alt_av`).
    pri_av: Option<AddressVector>,
    alt_av: Option<AddressVector>,
}

fn state(raw: u32) -> QpState {
    QpState::from_raw(raw).unwrap_or(QpState::Reset)
}

impl RxeQp {
    /// `rxe_create_qp`: checks (`rxe_qp_chk_init`), numbering, the rings, the user response.
    pub(crate) fn create(
        dev: &Device<RxeDev>,
        init: &mut QpInit,
        user: Option<UserReq>,
    ) -> Result<(Self, u32)> {
        if let Some(u) = &user {
            if init.udata_inlen != 0 || u.outlen() < CREATE_QP_RESP_LEN {
                return Err(EINVAL);
            }
        }
        if init.create_flags != 0 {
            return Err(EOPNOTSUPP);
        }
        let qp_type = qp_state::chk_init(
            init.qp_type,
            init.has_cqs,
            &init.cap,
            init.has_srq,
            init.port_num,
        )
        .map_err(errno)?;
        let rxe = dev.data();
        let qpn = if matches!(qp_type, QpType::Gsi) {
            if rxe.gsi_taken.swap(true, Ordering::AcqRel) {
                return Err(EINVAL);
            }
            Qpn::Gsi
        } else {
            Qpn::Pool(rxe.qp_pool().take()?)
        };
        let qp = Self::make(qp_type, init, user, qpn).inspect_err(|_| {
            if matches!(qp_type, QpType::Gsi) {
                rxe.gsi_taken.store(false, Ordering::Release);
            }
        })?;
        let num = qp.qp_num();
        Ok((qp, num))
    }

    fn make(qp_type: QpType, init: &mut QpInit, user: Option<UserReq>, qpn: Qpn) -> Result<Self> {
        // rxe_init_sq: SGEs and inline data share the WQE's data area, reported back in full.
        let sq_size = send_wqe_size(init.cap.max_send_sge, init.cap.max_inline_data);
        let (sq, sq_mi) = Ring::new(init.cap.max_send_wr, sq_size.elem_size, user.as_ref())?;
        init.cap.max_send_wr = sq.geometry().capacity();
        init.cap.max_send_sge = sq_size.max_sge;
        init.cap.max_inline_data = sq_size.max_inline;
        let (rq, rq_mi) = if init.has_srq {
            (None, MmapInfo::default())
        } else {
            let (rq, mi) = Ring::new(
                init.cap.max_recv_wr,
                recv_wqe_size(init.cap.max_recv_sge),
                user.as_ref(),
            )?;
            init.cap.max_recv_wr = rq.geometry().capacity();
            (Some(rq), mi)
        };
        if let Some(u) = &user {
            let mut resp = [0u8; CREATE_QP_RESP_LEN];
            resp[..16].copy_from_slice(&rq_mi.to_bytes());
            resp[16..].copy_from_slice(&sq_mi.to_bytes());
            u.respond(&resp)?;
        }
        // rxe_qp_init_misc: RESET, path MTU 256; a GSI QP sits on its port.
        let attrs = QpAttrs {
            qp_state: QpState::Reset as u32,
            cur_qp_state: QpState::Reset as u32,
            path_mtu: IbMtu::Mtu256 as u32,
            port_num: if matches!(qp_type, QpType::Gsi) {
                init.port_num
            } else {
                0
            },
            ..Default::default()
        };
        Ok(Self {
            qpn,
            qp_type,
            has_srq: init.has_srq,
            _sq: sq,
            _rq: rq,
            cap: init.cap,
            state: KBox::pin_init(
                new_mutex!(QpNowState {
                    attrs,
                    pri_av: None,
                    alt_av: None
                }),
                GFP_KERNEL,
            )?,
        })
    }

    fn qp_num(&self) -> u32 {
        match &self.qpn {
            Qpn::Pool(index) => index.get(),
            Qpn::Gsi => GSI_QPN,
        }
    }

    /// `rxe_modify_qp`: the checks (`proto::qp_state::chk_modify`, the AV checks of
    /// `rxe_av_chk_attr`), then the attributes as `rxe_qp_from_attr` stores them.
    pub(crate) fn modify(&self, attr: &QpAttrs, mask: u32) -> Result {
        use qp_state::*;
        let mut guard = self.state.lock();
        let now = QpNow {
            qp_type: self.qp_type,
            state: state(guard.attrs.qp_state),
            sq_draining: false,
            has_srq: self.has_srq,
        };
        let check = ModifyAttr {
            qp_state: state(attr.qp_state),
            cur_qp_state: state(attr.cur_qp_state),
            port_num: attr.port_num,
            cap: attr.cap,
            qp_access_flags: attr.qp_access_flags,
            alt_port_num: attr.alt_port_num,
            alt_timeout: attr.alt_timeout,
            path_mtu: attr.path_mtu,
            max_rd_atomic: attr.max_rd_atomic,
            timeout: attr.timeout,
        };
        // States outside the enum are refused before anything else reads them.
        if (mask & IB_QP_STATE != 0 && QpState::from_raw(attr.qp_state).is_none())
            || (mask & IB_QP_CUR_STATE != 0 && QpState::from_raw(attr.cur_qp_state).is_none())
        {
            return Err(EINVAL);
        }
        chk_modify(&now, &check, mask).map_err(errno)?;
        // rxe_av_chk_attr, as for address handles; then rxe_init_av.
        let av_of = |av: &QpAv| -> Result<AddressVector> {
            let network = match av.network_type {
                2 => NetworkType::Ipv4,
                3 => NetworkType::Ipv6,
                _ => return Err(EINVAL),
            };
            if i32::from(av.route.sgid_index) > params::PORT_GID_TBL_LEN {
                return Err(EINVAL);
            }
            Ok(AddressVector::new(
                av.port_num,
                av.route,
                av.sgid,
                network,
                av.dmac,
            ))
        };
        let pri_av = match (&attr.av, mask & IB_QP_AV != 0) {
            (Some(av), true) => Some(av_of(av)?),
            _ => None,
        };
        let alt_av = match (&attr.alt_av, mask & IB_QP_ALT_PATH != 0) {
            (Some(av), true) => Some(av_of(av)?),
            _ => None,
        };
        if pri_av.is_some() {
            guard.pri_av = pri_av;
        }
        if alt_av.is_some() {
            guard.alt_av = alt_av;
        }
        let cur = &mut guard.attrs;
        let round = |v: u8| {
            if v == 0 {
                0
            } else {
                v.checked_next_power_of_two().unwrap_or(128)
            }
        };
        // `rxe_qp_from_attr`: each attribute whose mask bit is set, as stored (some rounded or
        // masked). CUR_STATE takes `qp_state`: sic, as the C driver does.
        let psn = |v: u32| v & crate::proto::psn::PSN_MASK;
        macro_rules! store {
            ($($bit:ident => $($field:ident = $value:expr),+;)+) => {
                $(if mask & $bit != 0 { $(cur.$field = $value;)+ })+
            };
        }
        store! {
            IB_QP_CUR_STATE => cur_qp_state = attr.qp_state;
            IB_QP_STATE => qp_state = attr.qp_state;
            IB_QP_MAX_QP_RD_ATOMIC => max_rd_atomic = round(attr.max_rd_atomic);
            IB_QP_MAX_DEST_RD_ATOMIC => max_dest_rd_atomic = round(attr.max_dest_rd_atomic);
            IB_QP_EN_SQD_ASYNC_NOTIFY => en_sqd_async_notify = attr.en_sqd_async_notify;
            IB_QP_ACCESS_FLAGS => qp_access_flags = attr.qp_access_flags;
            IB_QP_PKEY_INDEX => pkey_index = attr.pkey_index;
            IB_QP_PORT => port_num = attr.port_num;
            IB_QP_QKEY => qkey = attr.qkey;
            IB_QP_AV => av = attr.av;
            IB_QP_ALT_PATH => alt_av = attr.alt_av, alt_port_num = attr.alt_port_num,
                alt_pkey_index = attr.alt_pkey_index, alt_timeout = attr.alt_timeout;
            IB_QP_PATH_MTU => path_mtu = attr.path_mtu;
            IB_QP_TIMEOUT => timeout = attr.timeout;
            IB_QP_RETRY_CNT => retry_cnt = attr.retry_cnt;
            IB_QP_RNR_RETRY => rnr_retry = attr.rnr_retry;
            IB_QP_RQ_PSN => rq_psn = psn(attr.rq_psn);
            IB_QP_MIN_RNR_TIMER => min_rnr_timer = attr.min_rnr_timer;
            IB_QP_SQ_PSN => sq_psn = psn(attr.sq_psn);
            IB_QP_PATH_MIG_STATE => path_mig_state = attr.path_mig_state;
            IB_QP_DEST_QPN => dest_qp_num = attr.dest_qp_num;
        }
        Ok(())
    }

    /// `rxe_query_qp`: the stored attributes, the current state as both states, the caps.
    pub(crate) fn query(&self) -> (QpAttrs, QpCap) {
        let mut attrs = self.state.lock().attrs;
        attrs.cur_qp_state = attrs.qp_state;
        attrs.cap = self.cap;
        (attrs, self.cap)
    }

    /// `rxe_destroy_qp`: gives the GSI number back (the C driver never does: a second GSI QP
    /// could never be made).
    pub(crate) fn destroy(&self, rxe: &RxeDev) {
        if matches!(self.qpn, Qpn::Gsi) {
            rxe.gsi_taken.store(false, Ordering::Release);
        }
    }
}
