// SPDX-License-Identifier: GPL-2.0

//! The `ib` layer's verbs values (`struct ib_sge`, `ib_qp_cap`, `ib_global_route`,
//! `ib_send_wr`, `ib_wc`) turned into the protocol core's ring and wire types and back, field
//! for field: `ib/` knows nothing of `proto/`, and `proto/` nothing of ib_core.

use crate::ib::{ah, cq::Wc, mr, qp};
use crate::proto::{av, qp_state, wqe};
use kernel::prelude::*;

impl From<mr::Sge> for wqe::Sge {
    fn from(s: mr::Sge) -> Self {
        Self {
            addr: s.addr,
            length: s.length,
            lkey: s.lkey,
        }
    }
}

/// The most SGEs a kernel work request can carry through the `ib` layer (its `read_sges`).
pub(crate) const MAX_KERNEL_SGE: usize = 32;

/// A kernel work request's SGEs as the ring's, in `buf`; `EINVAL` for more than `buf` holds.
pub(crate) fn ring_sges<'a>(
    sges: &[mr::Sge],
    buf: &'a mut [wqe::Sge; MAX_KERNEL_SGE],
) -> Result<&'a [wqe::Sge]> {
    let out = buf.get_mut(..sges.len()).ok_or(EINVAL)?;
    for (o, s) in out.iter_mut().zip(sges) {
        *o = (*s).into();
    }
    Ok(out)
}

impl From<qp::QpCap> for qp_state::QpCap {
    fn from(c: qp::QpCap) -> Self {
        Self {
            max_send_wr: c.max_send_wr,
            max_recv_wr: c.max_recv_wr,
            max_send_sge: c.max_send_sge,
            max_recv_sge: c.max_recv_sge,
            max_inline_data: c.max_inline_data,
        }
    }
}

impl From<qp_state::QpCap> for qp::QpCap {
    fn from(c: qp_state::QpCap) -> Self {
        Self {
            max_send_wr: c.max_send_wr,
            max_recv_wr: c.max_recv_wr,
            max_send_sge: c.max_send_sge,
            max_recv_sge: c.max_recv_sge,
            max_inline_data: c.max_inline_data,
        }
    }
}

impl From<ah::GlobalRoute> for av::GlobalRoute {
    fn from(r: ah::GlobalRoute) -> Self {
        Self {
            dgid: r.dgid,
            flow_label: r.flow_label,
            sgid_index: r.sgid_index,
            hop_limit: r.hop_limit,
            traffic_class: r.traffic_class,
        }
    }
}

impl From<av::GlobalRoute> for ah::GlobalRoute {
    fn from(r: av::GlobalRoute) -> Self {
        Self {
            dgid: r.dgid,
            flow_label: r.flow_label,
            sgid_index: r.sgid_index,
            hop_limit: r.hop_limit,
            traffic_class: r.traffic_class,
        }
    }
}

/// A kernel send work request as the ring's; `ah_num` names a UD send's address handle.
pub(crate) fn send_wr(wr: &qp::SendWr, ah_num: Option<u32>) -> Result<wqe::SendWr> {
    let detail = match wr.detail {
        qp::WrDetail::None => wqe::WrDetail::None,
        qp::WrDetail::Rdma { remote_addr, rkey } => wqe::WrDetail::Rdma { remote_addr, rkey },
        qp::WrDetail::Atomic {
            remote_addr,
            compare_add,
            swap,
            rkey,
        } => wqe::WrDetail::Atomic {
            remote_addr,
            compare_add,
            swap,
            rkey,
        },
        qp::WrDetail::Ud {
            remote_qpn,
            remote_qkey,
            pkey_index,
        } => wqe::WrDetail::Ud {
            remote_qpn,
            remote_qkey,
            pkey_index,
            ah_num: ah_num.ok_or(EINVAL)?,
        },
        qp::WrDetail::Reg { key, access } => wqe::WrDetail::Reg { key, access },
    };
    Ok(wqe::SendWr {
        wr_id: wr.wr_id,
        opcode: wr.opcode,
        send_flags: wr.send_flags,
        ex: wr.ex,
        detail,
    })
}

impl From<wqe::UverbsWc> for Wc {
    fn from(w: wqe::UverbsWc) -> Self {
        Self {
            wr_id: w.wr_id,
            status: w.status.raw(),
            opcode: w.opcode,
            vendor_err: w.vendor_err,
            byte_len: w.byte_len,
            ex: w.ex,
            qp_num: w.qp_num,
            src_qp: w.src_qp,
            wc_flags: w.wc_flags,
            pkey_index: w.pkey_index,
            slid: w.slid,
            sl: w.sl,
            dlid_path_bits: w.dlid_path_bits,
            port_num: w.port_num,
        }
    }
}
