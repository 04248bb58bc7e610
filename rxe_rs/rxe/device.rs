// SPDX-License-Identifier: GPL-2.0

//! An rxe device: one ib_device over one net device, with the C driver's attributes
//! (`rxe.c`, `rxe_verbs.c`), created by `rdma link add` and removed with its netdev.

use crate::ib::{
    consts::*,
    device::{
        Device, DeviceAttr, DeviceModify, DeviceOps, DeviceRef, PortAttr, PortEvent, PortImmutable,
        PortModify, MAD_SIZE,
    },
};
use crate::net::{
    netdev::{NetDev, NetdevEvent, NetdevListener},
    tunnel::TunnelUser,
};
use crate::proto::{
    mad::{self, PmaCounters},
    params::{self, ObjectCount},
};
use crate::rxe::{
    counters::Counter, mcast::McastGroups, pool::IndexPool, qp::Qps, shared::DevShared,
};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use kernel::prelude::*;

/// Per-device state (the C `struct rxe_dev`, minus what ib_core already holds).
pub(crate) struct RxeDev {
    /// Changed by `modify_device`, so kept apart from `attr`.
    sys_image_guid: AtomicU64,
    /// Port capability flags, changed by `modify_port`.
    port_cap_flags: AtomicU32,
    /// Q_Key violations, reset by `modify_port`.
    qkey_viol_cntr: AtomicU32,
    pub(super) ucontexts: ObjectCount,
    pub(super) pds: ObjectCount,
    pub(super) cqs: ObjectCount,
    pub(super) mrs: ObjectCount,
    pub(super) mws: ObjectCount,
    ah_pool: IndexPool,
    srq_pool: IndexPool,
    /// Keeps the namespace's UDP 4791 sockets open while the device exists.
    tunnel: TunnelUser,
    /// QPs by number, which packets name.
    qps: Qps,
    /// Multicast groups by GID (`mcg_tree`).
    mcast: Pin<KBox<McastGroups>>,
    /// What the QPs share: net device, MTU, counters, memory keys, address handles.
    shared: DevShared,
}

impl Drop for RxeDev {
    fn drop(&mut self) {
        // The multicast addresses the groups put in the net device's filter.
        self.mcast.leave_all();
    }
}

impl RxeDev {
    pub(super) fn new(guid: [u8; 8], netdev: &NetDev, tunnel: TunnelUser) -> Result<Self> {
        Ok(Self {
            sys_image_guid: AtomicU64::new(u64::from_ne_bytes(guid)),
            port_cap_flags: AtomicU32::new(IB_PORT_CM_SUP),
            qkey_viol_cntr: AtomicU32::new(0),
            ucontexts: ObjectCount::new(params::MAX_UCONTEXT),
            pds: ObjectCount::new(params::MAX_PD),
            cqs: ObjectCount::new(params::MAX_CQ),
            mrs: ObjectCount::new(params::MAX_MR),
            mws: ObjectCount::new(params::MAX_MW),
            ah_pool: IndexPool::new(params::MIN_AH_INDEX, params::MAX_AH)?,
            srq_pool: IndexPool::new(params::MIN_SRQ_INDEX, params::MAX_SRQ_INDEX)?,
            tunnel,
            qps: Qps::new()?,
            mcast: KBox::pin_init(McastGroups::new(netdev), GFP_KERNEL)?,
            shared: DevShared::new(netdev)?,
        })
    }

    /// What the QPs share.
    pub(crate) fn shared(&self) -> &DevShared {
        &self.shared
    }

    /// QPs by number.
    pub(crate) fn qps(&self) -> &Qps {
        &self.qps
    }

    pub(crate) fn mcast(&self) -> &McastGroups {
        &self.mcast
    }

    pub(crate) fn ah_pool(&self) -> &IndexPool {
        &self.ah_pool
    }

    pub(crate) fn srq_pool(&self) -> &IndexPool {
        &self.srq_pool
    }

    /// The device attributes of `rxe_init_device_param`, but for `sys_image_guid`.
    fn fill_attr(attr: &mut DeviceAttr) {
        *attr = DeviceAttr::default();
        attr.vendor_id = params::VENDOR_ID;
        attr.max_mr_size = params::MAX_MR_SIZE;
        attr.page_size_cap = params::PAGE_SIZE_CAP;
        attr.max_qp = params::MAX_QP;
        attr.max_qp_wr = params::MAX_QP_WR;
        attr.device_cap_flags = (IB_DEVICE_BAD_PKEY_CNTR
            | IB_DEVICE_BAD_QKEY_CNTR
            | IB_DEVICE_AUTO_PATH_MIG
            | IB_DEVICE_CHANGE_PHY_PORT
            | IB_DEVICE_UD_AV_PORT_ENFORCE
            | IB_DEVICE_PORT_ACTIVE_EVENT
            | IB_DEVICE_SYS_IMAGE_GUID
            | IB_DEVICE_RC_RNR_NAK_GEN
            | IB_DEVICE_SRQ_RESIZE
            | IB_DEVICE_MEM_MGT_EXTENSIONS
            | IB_DEVICE_MEM_WINDOW
            | IB_DEVICE_FLUSH_GLOBAL
            | IB_DEVICE_FLUSH_PERSISTENT
            | IB_DEVICE_MEM_WINDOW_TYPE_2B
            | IB_DEVICE_ATOMIC_WRITE) as u64;
        attr.kernel_cap_flags = u64::from(IBK_ALLOW_USER_UNREG) | u64::from(IBK_ON_DEMAND_PAGING);
        // On-demand paging as C reports it (`rxe_init_device_param`).
        attr.odp_caps.general_caps = u64::from(IB_ODP_SUPPORT);
        let ud = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_SRQ_RECV;
        attr.odp_caps.per_transport_caps.ud_odp_caps = ud;
        attr.odp_caps.per_transport_caps.rc_odp_caps = ud
            | IB_ODP_SUPPORT_WRITE
            | IB_ODP_SUPPORT_READ
            | IB_ODP_SUPPORT_ATOMIC
            | IB_ODP_SUPPORT_FLUSH
            | IB_ODP_SUPPORT_ATOMIC_WRITE;
        attr.max_send_sge = params::MAX_SGE;
        attr.max_recv_sge = params::MAX_SGE;
        attr.max_sge_rd = params::MAX_SGE_RD;
        attr.max_cq = params::MAX_CQ;
        attr.max_cqe = (1u32 << params::MAX_LOG_CQE) - 1;
        attr.max_mr = params::MAX_MR;
        attr.max_mw = params::MAX_MW;
        attr.max_pd = params::MAX_PD;
        attr.max_qp_rd_atom = params::MAX_QP_RD_ATOM;
        attr.max_res_rd_atom = params::MAX_RES_RD_ATOM;
        attr.max_qp_init_rd_atom = params::MAX_QP_INIT_RD_ATOM;
        attr.atomic_cap = IB_ATOMIC_HCA;
        attr.max_mcast_grp = params::MAX_MCAST_GRP;
        attr.max_mcast_qp_attach = params::MAX_MCAST_QP_ATTACH;
        attr.max_total_mcast_qp_attach = params::MAX_TOT_MCAST_QP_ATTACH;
        attr.max_ah = params::MAX_AH;
        attr.max_srq = params::MAX_SRQ;
        attr.max_srq_wr = params::MAX_SRQ_WR;
        attr.max_srq_sge = params::MAX_SRQ_SGE;
        attr.max_fast_reg_page_list_len = params::MAX_FMR_PAGE_LIST_LEN;
        attr.max_pkeys = params::MAX_PKEYS as u16;
        attr.local_ca_ack_delay = params::LOCAL_CA_ACK_DELAY;
    }

    /// Reports the port state of the netdev to ib_core's clients (`rxe_set_port_state`).
    fn report_port_state(dev: &Device<Self>) {
        let Some(netdev) = dev.netdev() else { return };
        if netdev.port_active() {
            dev.dispatch_port_event(PortEvent::Active);
            pr_info!("{}: set active\n", dev.name().to_str().unwrap_or("?"));
        } else {
            dev.dispatch_port_event(PortEvent::Err);
            dev.data().shared.count(Counter::LinkDowned);
            pr_info!("{}: set down\n", dev.name().to_str().unwrap_or("?"));
        }
    }
}

#[vtable]
impl DeviceOps for RxeDev {
    type Ucontext = ();

    type Pd = ();

    const DRIVER_ID: u32 = RDMA_DRIVER_RXE;

    const UVERBS_ABI_VERSION: u32 = params::UVERBS_ABI_VERSION;

    fn query_device(dev: &Device<Self>, attr: &mut DeviceAttr) -> Result {
        Self::fill_attr(attr);
        attr.sys_image_guid = dev.data().sys_image_guid.load(Relaxed);
        Ok(())
    }

    fn query_port(dev: &Device<Self>, port: u32, attr: &mut PortAttr) -> Result {
        if port != 1 {
            return Err(EINVAL);
        }
        let rxe = dev.data();
        let netdev = dev.netdev().ok_or(ENODEV)?;
        *attr = PortAttr::default();
        attr.max_mtu = IB_MTU_4096;
        attr.active_mtu = rxe.shared.active_mtu();
        attr.gid_tbl_len = params::PORT_GID_TBL_LEN;
        attr.port_cap_flags = rxe.port_cap_flags.load(Relaxed);
        attr.max_msg_sz = params::PORT_MAX_MSG_SZ;
        attr.qkey_viol_cntr = rxe.qkey_viol_cntr.load(Relaxed);
        attr.pkey_tbl_len = params::PORT_PKEY_TBL_LEN;
        attr.max_vl_num = params::PORT_MAX_VL_NUM;
        attr.active_width = IB_WIDTH_1X as u8;
        attr.active_speed = 1;
        // Speed and width follow the netdev's link speed; like the C driver, a failure here
        // (no ethtool speed) is returned after the rest is filled in.
        let speed = dev.eth_speed(port);
        if let Ok((s, w)) = speed {
            attr.active_speed = s;
            attr.active_width = w;
        }
        if netdev.port_active() {
            attr.state = IB_PORT_ACTIVE;
            attr.phys_state = IB_PORT_PHYS_STATE_LINK_UP as u8;
        } else {
            attr.state = IB_PORT_DOWN;
            attr.phys_state = if netdev.is_up() {
                IB_PORT_PHYS_STATE_POLLING as u8
            } else {
                IB_PORT_PHYS_STATE_DISABLED as u8
            };
        }
        speed.map(|_| ())
    }

    fn query_pkey(_dev: &Device<Self>, _port: u32, index: u16) -> Result<u16> {
        if index != 0 {
            return Err(EINVAL);
        }
        Ok(params::DEFAULT_PKEY_FULL)
    }

    fn modify_device(dev: &Device<Self>, mask: i32, attr: &DeviceModify) -> Result {
        let mask = mask as u32;
        if mask & !(IB_DEVICE_MODIFY_SYS_IMAGE_GUID | IB_DEVICE_MODIFY_NODE_DESC) != 0 {
            return Err(EOPNOTSUPP);
        }
        if mask & IB_DEVICE_MODIFY_SYS_IMAGE_GUID != 0 {
            // ib_device_modify carries the GUID in host order; attributes keep it big-endian.
            dev.data()
                .sys_image_guid
                .store(attr.sys_image_guid.to_be(), Relaxed);
        }
        if mask & IB_DEVICE_MODIFY_NODE_DESC != 0 {
            dev.set_node_desc(&attr.node_desc);
        }
        Ok(())
    }

    fn modify_port(dev: &Device<Self>, port: u32, mask: i32, attr: &PortModify) -> Result {
        if port != 1 {
            return Err(EINVAL);
        }
        let mask = mask as u32;
        if mask & !IB_PORT_RESET_QKEY_CNTR != 0 {
            return Err(EOPNOTSUPP);
        }
        let rxe = dev.data();
        rxe.port_cap_flags.fetch_or(attr.set_port_cap_mask, Relaxed);
        rxe.port_cap_flags
            .fetch_and(!attr.clr_port_cap_mask, Relaxed);
        if mask & IB_PORT_RESET_QKEY_CNTR != 0 {
            rxe.qkey_viol_cntr.store(0, Relaxed);
        }
        Ok(())
    }

    fn port_immutable(_dev: &Device<Self>, port: u32, imm: &mut PortImmutable) -> Result {
        if port != 1 {
            return Err(EINVAL);
        }
        imm.core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
        imm.pkey_tbl_len = i32::from(params::PORT_PKEY_TBL_LEN);
        imm.gid_tbl_len = params::PORT_GID_TBL_LEN;
        imm.max_mad_size = IB_MGMT_MAD_SIZE;
        Ok(())
    }

    fn link_layer_is_ethernet(_dev: &Device<Self>, port: u32) -> bool {
        port == 1
    }

    fn enable(dev: &Device<Self>) -> Result {
        let netdev = dev.netdev().ok_or(ENODEV)?;
        Self::report_port_state(dev);
        pr_info!(
            "{}: added {}\n",
            dev.name().to_str().unwrap_or("?"),
            netdev.name().to_str().unwrap_or("?")
        );
        Ok(())
    }

    const COUNTER_NAMES: &'static [&'static CStr] = &[
        c"sent_pkts",
        c"rcvd_pkts",
        c"duplicate_request",
        c"out_of_seq_request",
        c"rcvd_rnr_err",
        c"send_rnr_err",
        c"rcvd_seq_err",
        c"ack_deferred",
        c"retry_exceeded_err",
        c"retry_rnr_exceeded_err",
        c"completer_retry_err",
        c"send_err",
        c"link_downed",
        c"rdma_sends",
        c"rdma_recvs",
        c"sent_bytes",
        c"rcvd_bytes",
    ];

    fn read_counters(dev: &Device<Self>, values: &mut [u64]) {
        for (value, counter) in values.iter_mut().zip(dev.data().shared.counter_values()) {
            *value = counter;
        }
    }

    fn process_mad(
        dev: &Device<Self>,
        port_num: u32,
        input: &[u8; MAD_SIZE],
        out: &mut [u8; MAD_SIZE],
    ) -> i32 {
        const _: () = assert!(MAD_SIZE == mad::MAD_LEN);
        if port_num != 1 {
            return 0;
        }
        let c = |k: Counter| dev.data().shared.counter(k);
        let counters = PmaCounters {
            link_downed: c(Counter::LinkDowned),
            xmit_bytes: c(Counter::SentBytes),
            rcv_bytes: c(Counter::RcvdBytes),
            xmit_packets: c(Counter::SentPkts),
            rcv_packets: c(Counter::RcvdPkts),
        };
        mad::pma_reply(&counters, input, out)
    }

    fn alloc_ucontext(dev: &Device<Self>) -> Result<()> {
        dev.data().ucontexts.try_get().then_some(()).ok_or(EINVAL)
    }

    fn dealloc_ucontext(dev: &Device<Self>, _uc: &()) {
        dev.data().ucontexts.put();
    }

    fn alloc_pd(dev: &Device<Self>) -> Result<()> {
        dev.data().pds.try_get().then_some(()).ok_or(EINVAL)
    }

    fn dealloc_pd(dev: &Device<Self>, _pd: &()) {
        dev.data().pds.put();
    }
}

/// Netdev events for devices of ours (`rxe_notify`).
pub(crate) struct RxeNetdevListener;

impl NetdevListener for RxeNetdevListener {
    fn event(event: NetdevEvent, netdev: &NetDev) {
        let Some(dev) = DeviceRef::<RxeDev>::from_netdev(netdev) else {
            return;
        };
        match event {
            NetdevEvent::Unregister => {
                dev.unregister_queued();
                dev.data().tunnel.release();
            }
            NetdevEvent::ChangeMtu => dev.data().shared.set_mtu(netdev.mtu()),
            NetdevEvent::Down | NetdevEvent::Change => {
                if !netdev.port_active() {
                    dev.data().shared.count(Counter::LinkDowned);
                }
            }
            NetdevEvent::Other(_) => {}
        }
    }
}
