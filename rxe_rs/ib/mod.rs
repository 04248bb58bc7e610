// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around ib_core: the verbs traits a driver implements, the ops table built from
//! them, device and link registration, and the objects ib_core hands over. Everything the driver
//! needs from ib_core comes through here; the net_device is in `net/`, generic kernel helpers
//! (a `timer_list`, an `Arc` slot) in `kernel_ext/`.

pub(crate) mod ah;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod driver;
pub(crate) mod handles;
pub(crate) mod link;
pub(crate) mod mem;
pub(crate) mod mr;
mod object;
pub(crate) mod odp;
pub(crate) mod qp;
pub(crate) mod srq;
mod ucontext;
pub(crate) mod uqueue;

/// ib_core constants the driver uses, under the names of `include/rdma/ib_verbs.h`.
pub(crate) mod consts {
    pub(crate) use crate::ffi::{
        ib_atomic_cap_IB_ATOMIC_HCA as IB_ATOMIC_HCA,
        ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS as IB_CQ_REPORT_MISSED_EVENTS,
        ib_cq_notify_flags_IB_CQ_SOLICITED_MASK as IB_CQ_SOLICITED_MASK,
        ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE as IB_DEVICE_ATOMIC_WRITE,
        ib_device_cap_flags_IB_DEVICE_AUTO_PATH_MIG as IB_DEVICE_AUTO_PATH_MIG,
        ib_device_cap_flags_IB_DEVICE_BAD_PKEY_CNTR as IB_DEVICE_BAD_PKEY_CNTR,
        ib_device_cap_flags_IB_DEVICE_BAD_QKEY_CNTR as IB_DEVICE_BAD_QKEY_CNTR,
        ib_device_cap_flags_IB_DEVICE_CHANGE_PHY_PORT as IB_DEVICE_CHANGE_PHY_PORT,
        ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as IB_DEVICE_FLUSH_GLOBAL,
        ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT as IB_DEVICE_FLUSH_PERSISTENT,
        ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS as IB_DEVICE_MEM_MGT_EXTENSIONS,
        ib_device_cap_flags_IB_DEVICE_MEM_WINDOW as IB_DEVICE_MEM_WINDOW,
        ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B as IB_DEVICE_MEM_WINDOW_TYPE_2B,
        ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT as IB_DEVICE_PORT_ACTIVE_EVENT,
        ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as IB_DEVICE_RC_RNR_NAK_GEN,
        ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE as IB_DEVICE_SRQ_RESIZE,
        ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID as IB_DEVICE_SYS_IMAGE_GUID,
        ib_device_cap_flags_IB_DEVICE_UD_AV_PORT_ENFORCE as IB_DEVICE_UD_AV_PORT_ENFORCE,
        ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC as IB_DEVICE_MODIFY_NODE_DESC,
        ib_device_modify_flags_IB_DEVICE_MODIFY_SYS_IMAGE_GUID as IB_DEVICE_MODIFY_SYS_IMAGE_GUID,
        ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG as IBK_ALLOW_USER_UNREG,
        ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING as IBK_ON_DEMAND_PAGING,
        ib_mtu_IB_MTU_4096 as IB_MTU_4096,
        ib_odp_general_cap_bits_IB_ODP_SUPPORT as IB_ODP_SUPPORT,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC as IB_ODP_SUPPORT_ATOMIC,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC_WRITE as IB_ODP_SUPPORT_ATOMIC_WRITE,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_FLUSH as IB_ODP_SUPPORT_FLUSH,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ as IB_ODP_SUPPORT_READ,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV as IB_ODP_SUPPORT_RECV,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND as IB_ODP_SUPPORT_SEND,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV as IB_ODP_SUPPORT_SRQ_RECV,
        ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE as IB_ODP_SUPPORT_WRITE,
        ib_port_capability_mask_bits_IB_PORT_CM_SUP as IB_PORT_CM_SUP,
        ib_port_modify_flags_IB_PORT_RESET_QKEY_CNTR as IB_PORT_RESET_QKEY_CNTR,
        ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as IB_PORT_PHYS_STATE_DISABLED,
        ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as IB_PORT_PHYS_STATE_LINK_UP,
        ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING as IB_PORT_PHYS_STATE_POLLING,
        ib_port_state_IB_PORT_ACTIVE as IB_PORT_ACTIVE, ib_port_state_IB_PORT_DOWN as IB_PORT_DOWN,
        ib_port_width_IB_WIDTH_1X as IB_WIDTH_1X,
        rdma_driver_id_RDMA_DRIVER_RXE as RDMA_DRIVER_RXE, IB_MGMT_MAD_SIZE,
        RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP,
    };
}
