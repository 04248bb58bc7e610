// SPDX-License-Identifier: GPL-2.0

//! The verbs of an rxe device's objects (C's `rxe_verbs.c`): CQs, MRs and MWs, SRQs, AHs and
//! QPs, each a thin step into the object's own file, plus `rdma link add` (`newlink`). The
//! device's own verbs (attributes, ports, counters) are in `device.rs`.

use crate::ib::{
    ah::{AhInit, AhOps, GlobalRoute},
    cq::{CqInit, CqOps, PolledWc},
    device::{Device, DeviceInfo, DeviceRef, PdId, UverbsCmds},
    driver,
    handles::{CqHandle, SrqHandle},
    mr::{AdviseSge, MrOps, ReregMrReq, Sge, UserMrReq},
    qp::{KernelSendWr, QpAttrs, QpCap, QpInit, QpLinks, QpOps},
    srq::{SrqAttr, SrqOps},
    uqueue::UserReq,
};
use crate::kernel_ext::cpu::num_possible_cpus;
use crate::net::{netdev::NetDev, tunnel::TunnelUser};
use crate::proto::params::{self, ObjectCount};
use crate::rxe::{
    ah::RxeAh,
    cq::RxeCq,
    device::RxeDev,
    mcast::Mgid,
    mr::{RxeMr, RxeMw},
    qp::RxeQp,
    recv::RxeReceiver,
    srq::RxeSrq,
};
use core::sync::atomic::Ordering::Relaxed;
use kernel::{prelude::*, sync::Arc};

/// `rdma link add NAME type rxe netdev NETDEV` (`rxe_newlink`).
pub(crate) fn newlink(ibdev_name: &CStr, netdev: &NetDev) -> Result {
    if netdev.is_vlan() {
        pr_err!("rxe creation allowed on top of a real device only\n");
        return Err(EPERM);
    }
    if let Some(dev) = DeviceRef::<RxeDev>::from_netdev(netdev) {
        pr_err!(
            "{}: already configured on {}\n",
            dev.name().to_str().unwrap_or("?"),
            netdev.name().to_str().unwrap_or("?")
        );
        return Err(EEXIST);
    }
    let tunnel = TunnelUser::acquire::<RxeReceiver>(netdev)?;
    let guid = params::eui64_from_mac(netdev.hw_addr_or_random());
    let info = DeviceInfo {
        node_desc: c"rxe",
        node_guid: guid,
        // As C: a vector per possible CPU, though completions run where the QP's task runs.
        comp_vectors: num_possible_cpus(),
        // rxe's DMA addresses are kernel virtual addresses: lkey 0 is all of them.
        local_dma_lkey: 0,
        // User CQs are polled in user space but armed here; the send doorbell is a syscall.
        extra_uverbs_cmds: UverbsCmds::REQ_NOTIFY_CQ | UverbsCmds::POST_SEND,
    };
    driver::register(
        ibdev_name,
        netdev,
        &info,
        RxeDev::new(guid, netdev, tunnel)?,
    )
}

#[vtable]
impl CqOps for RxeDev {
    type Cq = RxeCq;

    fn create_cq(
        dev: &Device<Self>,
        attr: &CqInit,
        user: Option<UserReq>,
        handle: CqHandle,
    ) -> Result<(RxeCq, u32)> {
        with_count(&dev.data().cqs, || RxeCq::create(attr, user, handle))
    }

    fn resize_cq(_dev: &Device<Self>, cq: &RxeCq, cqe: u32, user: Option<UserReq>) -> Result<u32> {
        cq.resize(cqe, user)
    }

    fn destroy_cq(dev: &Device<Self>, _cq: &RxeCq) -> Result {
        // ib_core refuses to destroy a CQ a QP still uses (`usecnt`; the C driver also checks
        // its `num_wq`), and a QP holds its CQs by `Arc` anyway.
        dev.data().cqs.put();
        Ok(())
    }

    fn req_notify_cq(_dev: &Device<Self>, cq: &RxeCq, flags: u32) -> Result<bool> {
        Ok(cq.req_notify(flags))
    }

    fn poll_cq(dev: &Device<Self>, cq: &RxeCq, out: &mut [PolledWc]) -> usize {
        cq.poll(out, |qpn| dev.data().qps().get(qpn).map(|qp| qp.handle))
    }
}

#[vtable]
impl MrOps for RxeDev {
    type Mr = RxeMr;

    type Mw = RxeMw;

    fn get_dma_mr(dev: &Device<Self>, pd: PdId, access: i32) -> Result<(RxeMr, u32)> {
        with_count(&dev.data().mrs, || {
            RxeMr::dma(dev.data().shared().keys(), pd, access)
        })
    }

    fn reg_user_mr(dev: &Device<Self>, req: &UserMrReq) -> Result<(RxeMr, u32)> {
        with_count(&dev.data().mrs, || {
            RxeMr::user(dev, dev.data().shared().keys(), req)
        })
    }

    fn alloc_mr(
        dev: &Device<Self>,
        pd: PdId,
        mr_type: u32,
        max_num_sg: u32,
    ) -> Result<(RxeMr, u32)> {
        with_count(&dev.data().mrs, || {
            RxeMr::fast(dev.data().shared().keys(), pd, mr_type, max_num_sg)
        })
    }

    fn map_mr_sg_start(mr: &RxeMr, page_size: u32) -> Result {
        mr.map_start(page_size)
    }

    fn map_mr_page(mr: &RxeMr, addr: u64) -> Result {
        mr.map_page(addr)
    }

    fn map_mr_sg_end(mr: &RxeMr, iova: u64, length: u64) {
        mr.map_end(iova, length);
    }

    fn rereg_user_mr(_dev: &Device<Self>, mr: &RxeMr, req: &ReregMrReq) -> Result {
        mr.rereg(req)
    }

    fn advise_mr(
        dev: &Device<Self>,
        pd: PdId,
        advice: u32,
        flags: u32,
        sges: &[AdviseSge],
    ) -> Result {
        crate::rxe::odp::advise_mr(dev, pd, advice, flags, sges)
    }

    fn dereg_mr(dev: &Device<Self>, mr: &RxeMr) -> Result {
        // `EINVAL` while memory windows are bound to it, as C.
        mr.deregister(dev.data().shared().keys())?;
        dev.data().mrs.put();
        Ok(())
    }

    fn alloc_mw(dev: &Device<Self>, pd: PdId, mw_type: u32) -> Result<(RxeMw, u32)> {
        with_count(&dev.data().mws, || {
            RxeMw::new(dev.data().shared().keys(), pd, mw_type)
        })
    }

    fn dealloc_mw(dev: &Device<Self>, mw: &RxeMw) {
        mw.dealloc(dev.data().shared().keys());
        dev.data().mws.put();
    }
}

#[vtable]
impl SrqOps for RxeDev {
    type Srq = RxeSrq;

    fn create_srq(
        dev: &Device<Self>,
        attr: &mut SrqAttr,
        srq_type: u32,
        user: Option<UserReq>,
        handle: SrqHandle,
    ) -> Result<(RxeSrq, u32)> {
        RxeSrq::create(dev.data().srq_pool(), attr, srq_type, user, handle)
    }

    fn modify_srq(
        _dev: &Device<Self>,
        srq: &RxeSrq,
        attr: &mut SrqAttr,
        mask: u32,
        user: Option<UserReq>,
    ) -> Result {
        srq.modify(attr, mask, user)
    }

    fn query_srq(_dev: &Device<Self>, srq: &RxeSrq) -> Result<SrqAttr> {
        Ok(srq.query())
    }

    fn destroy_srq(_dev: &Device<Self>, _srq: &RxeSrq) {}

    fn post_srq_recv(_dev: &Device<Self>, srq: &RxeSrq, wr_id: u64, sges: &[Sge]) -> Result {
        srq.shared().post(wr_id, sges)
    }
}

#[vtable]
impl AhOps for RxeDev {
    type Ah = RxeAh;

    fn create_ah(dev: &Device<Self>, attr: &AhInit, user: Option<UserReq>) -> Result<RxeAh> {
        // The AH pool's range is its bound (`RXE_MAX_AH`): no separate count needed.
        let ah = RxeAh::create(dev.data().ah_pool(), attr, user)?;
        dev.data()
            .shared()
            .ahs_table()
            .insert(ah.num(), Arc::new(*ah.av(), GFP_ATOMIC)?)?;
        Ok(ah)
    }

    fn query_ah(_dev: &Device<Self>, ah: &RxeAh) -> (u32, GlobalRoute) {
        ah.query()
    }

    fn destroy_ah(dev: &Device<Self>, ah: &RxeAh) {
        drop(dev.data().shared().ahs_table().remove(ah.num()));
    }
}

#[vtable]
impl QpOps for RxeDev {
    type Qp = RxeQp;

    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit,
        links: QpLinks<'_, Self>,
        user: Option<UserReq>,
    ) -> Result<(RxeQp, u32)> {
        let shared = DeviceRef::get(dev).ok_or(ENODEV)?.project(RxeDev::shared);
        RxeQp::create(shared, dev.data().qps(), init, links, user)
    }

    fn modify_qp(_dev: &Device<Self>, qp: &RxeQp, attr: &QpAttrs, mask: u32) -> Result {
        qp.modify(attr, mask)
    }

    fn query_qp(_dev: &Device<Self>, qp: &RxeQp) -> (QpAttrs, QpCap) {
        qp.query()
    }

    fn destroy_qp(dev: &Device<Self>, qp: &RxeQp) -> Result {
        // IBA o10-2.2.3: not while attached to a multicast group (`rxe_qp_chk_destroy`).
        if qp.shared().mcast_attached.load(Relaxed) != 0 {
            return Err(EBUSY);
        }
        qp.destroy(dev.data().qps());
        Ok(())
    }

    fn post_send_user(_dev: &Device<Self>, qp: &RxeQp) -> Result {
        qp.post_send_user()
    }

    fn post_send_kernel(_dev: &Device<Self>, qp: &RxeQp, wr: &KernelSendWr<'_, Self>) -> Result {
        qp.post_kernel(wr)
    }

    fn kick_send(_dev: &Device<Self>, qp: &RxeQp) {
        qp.kick_send();
    }

    fn post_recv(_dev: &Device<Self>, qp: &RxeQp, wr_id: u64, sges: &[Sge]) -> Result {
        qp.post_recv(wr_id, sges)
    }

    fn attach_mcast(dev: &Device<Self>, qp: &RxeQp, mgid: &Mgid) -> Result {
        dev.data().mcast().attach(qp.shared(), mgid)
    }

    fn detach_mcast(dev: &Device<Self>, qp: &RxeQp, mgid: &Mgid) -> Result {
        dev.data().mcast().detach(qp.shared(), mgid)
    }
}

/// Creates an object under a bounded count: `EINVAL` past the maximum (`rxe_add_to_pool`),
/// the slot given back if creation fails.
fn with_count<T>(count: &ObjectCount, create: impl FnOnce() -> Result<T>) -> Result<T> {
    if !count.try_get() {
        return Err(EINVAL);
    }
    create().inspect_err(|_| count.put())
}
