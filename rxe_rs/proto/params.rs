// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The device limits of the C driver's `rxe_param.h`, and the small pure computations the
//! control path makes from a netdev: the IB MTU for an Ethernet MTU, GUIDs from a MAC.
//!
//! The values must stay those of the C driver: rdma-core and its tests compare them.

/// `DEFAULT_MAX_VALUE`.
const DEFAULT_MAX_VALUE: u32 = 1 << 20;

/// Largest header a RoCEv2 packet carries ahead of the payload (`RXE_MAX_HDR_LENGTH`).
pub const MAX_HDR_LENGTH: u32 = 80;
/// `RXE_VENDOR_ID`.
pub const VENDOR_ID: u32 = 0xff_ffff;
/// `RXE_MAX_MR_SIZE`.
pub const MAX_MR_SIZE: u64 = u64::MAX;
/// `RXE_PAGE_SIZE_CAP`.
pub const PAGE_SIZE_CAP: u64 = 0xffff_f000;
/// `RXE_MAX_QP_WR`.
pub const MAX_QP_WR: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_SGE`.
pub const MAX_SGE: u32 = 32;
/// `RXE_MAX_SGE_RD`.
pub const MAX_SGE_RD: u32 = 32;
/// `RXE_MAX_INLINE_DATA`: the SGE array of a maximal WQE, reused for inline data.
pub const MAX_INLINE_DATA: u32 = MAX_SGE * 16;
/// `RXE_MAX_CQ`.
pub const MAX_CQ: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_LOG_CQE`, larger than C's 15: libfabric's `ofi_rxm` opens its message CQ with
/// (128 + 128) × its universe size (1,024) entries and, on C's 32,767, fails `fi_enable` with
/// `EINVAL`. 2^19 − 1 entries are a 64 MiB ring (128-byte slots), as a hardware CQ that size is.
pub const MAX_LOG_CQE: u32 = 19;
/// `RXE_MAX_PD`.
pub const MAX_PD: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_QP_RD_ATOM`.
pub const MAX_QP_RD_ATOM: u32 = 128;
/// `RXE_MAX_RES_RD_ATOM`.
pub const MAX_RES_RD_ATOM: u32 = 0x3f000;
/// `RXE_MAX_QP_INIT_RD_ATOM`.
pub const MAX_QP_INIT_RD_ATOM: u32 = 128;
/// `RXE_MAX_MCAST_GRP`.
pub const MAX_MCAST_GRP: u32 = 8192;
/// `RXE_MAX_MCAST_QP_ATTACH`.
pub const MAX_MCAST_QP_ATTACH: u32 = 56;
/// `RXE_MAX_TOT_MCAST_QP_ATTACH`.
pub const MAX_TOT_MCAST_QP_ATTACH: u32 = 0x70000;
/// `RXE_MAX_AH`.
pub const MAX_AH: u32 = (1 << 15) - 1;
/// `RXE_MIN_AH_INDEX`: AH numbers start at 1 (0 means "no number" to user space).
pub const MIN_AH_INDEX: u32 = 1;
/// `RXE_MAX_SRQ_WR`.
pub const MAX_SRQ_WR: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_SRQ_SGE`.
pub const MAX_SRQ_SGE: u32 = 27;
/// `RXE_MAX_FMR_PAGE_LIST_LEN`.
pub const MAX_FMR_PAGE_LIST_LEN: u32 = 512;
/// `RXE_MAX_PKEYS`.
pub const MAX_PKEYS: u32 = 64;
/// `RXE_LOCAL_CA_ACK_DELAY`.
pub const LOCAL_CA_ACK_DELAY: u8 = 15;
/// `RXE_MAX_UCONTEXT`.
pub const MAX_UCONTEXT: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MIN_QP_INDEX`: QPNs below are reserved (0, 1 are SMI/GSI).
pub const MIN_QP_INDEX: u32 = 16;
/// `RXE_MAX_QP_INDEX`.
pub const MAX_QP_INDEX: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_QP`.
pub const MAX_QP: u32 = DEFAULT_MAX_VALUE - MIN_QP_INDEX;
/// `RXE_MIN_SRQ_INDEX`.
pub const MIN_SRQ_INDEX: u32 = 0x0002_0001;
/// `RXE_MAX_SRQ_INDEX`.
pub const MAX_SRQ_INDEX: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_SRQ`.
pub const MAX_SRQ: u32 = DEFAULT_MAX_VALUE - MIN_SRQ_INDEX;
/// `RXE_MIN_MR_INDEX`.
pub const MIN_MR_INDEX: u32 = 1;
/// `RXE_MAX_MR_INDEX`.
pub const MAX_MR_INDEX: u32 = DEFAULT_MAX_VALUE >> 1;
/// `RXE_MAX_MR`.
pub const MAX_MR: u32 = MAX_MR_INDEX - MIN_MR_INDEX;
/// `RXE_MIN_MW_INDEX`.
pub const MIN_MW_INDEX: u32 = MAX_MR_INDEX + 1;
/// `RXE_MAX_MW_INDEX`.
pub const MAX_MW_INDEX: u32 = DEFAULT_MAX_VALUE;
/// `RXE_MAX_MW`.
pub const MAX_MW: u32 = DEFAULT_MAX_VALUE - MIN_MW_INDEX;

/// `RXE_PORT_GID_TBL_LEN`.
pub const PORT_GID_TBL_LEN: i32 = 1024;
/// `RXE_PORT_MAX_MSG_SZ`.
pub const PORT_MAX_MSG_SZ: u32 = 1 << 31;
/// `RXE_PORT_MAX_VL_NUM`.
pub const PORT_MAX_VL_NUM: u8 = 1;
/// `RXE_PORT_PKEY_TBL_LEN`.
pub const PORT_PKEY_TBL_LEN: u16 = 1;
/// `RXE_PORT_SUBNET_PREFIX`.
pub const PORT_SUBNET_PREFIX: u64 = 0xfe80_0000_0000_0000;
/// The one P_Key: `IB_DEFAULT_PKEY_FULL`.
pub const DEFAULT_PKEY_FULL: u16 = 0xffff;

/// An IB path MTU (`enum ib_mtu`): 1 = 256 bytes … 5 = 4096 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum IbMtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes.
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes.
    Mtu4096 = 5,
}

impl IbMtu {
    /// The MTU of `enum ib_mtu` value `raw`, `None` outside 1..=5.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(Self::Mtu256),
            2 => Some(Self::Mtu512),
            3 => Some(Self::Mtu1024),
            4 => Some(Self::Mtu2048),
            5 => Some(Self::Mtu4096),
            _ => None,
        }
    }

    /// The MTU in bytes (`ib_mtu_enum_to_int`).
    pub const fn bytes(self) -> u32 {
        128 << (self as u32)
    }

    /// The largest IB MTU that fits a RoCE payload in an Ethernet MTU of `eth_mtu` bytes,
    /// 256 when nothing fits (`rxe_set_mtu` with `eth_mtu_int_to_enum`).
    pub const fn for_eth_mtu(eth_mtu: u32) -> Self {
        match eth_mtu.saturating_sub(MAX_HDR_LENGTH) {
            0..=511 => Self::Mtu256,
            512..=1023 => Self::Mtu512,
            1024..=2047 => Self::Mtu1024,
            2048..=4095 => Self::Mtu2048,
            _ => Self::Mtu4096,
        }
    }
}

/// A modified EUI-64 interface identifier from a MAC (`addrconf_addr_eui48`): the node and port
/// GUID of a device, in wire (big-endian) byte order.
pub const fn eui64_from_mac(mac: [u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 0x02,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

/// `RXE_UVERBS_ABI_VERSION`: the user ABI librxe checks at `ibv_open_device`.
pub const UVERBS_ABI_VERSION: u32 = 2;

/// A bounded count of live objects of one kind, as the C driver's pools enforce
/// (`rxe_add_to_pool` fails past the pool's maximum).
#[derive(Debug)]
pub struct ObjectCount {
    live: core::sync::atomic::AtomicU32,
    max: u32,
}

impl ObjectCount {
    /// A count that admits at most `max` live objects.
    pub const fn new(max: u32) -> Self {
        Self {
            live: core::sync::atomic::AtomicU32::new(0),
            max,
        }
    }

    /// Takes one slot; `false` when `max` are already live.
    pub fn try_get(&self) -> bool {
        use core::sync::atomic::Ordering::Relaxed;
        self.live
            .fetch_update(Relaxed, Relaxed, |n| {
                if n < self.max {
                    Some(n + 1)
                } else {
                    None
                }
            })
            .is_ok()
    }

    /// Gives one slot back.
    pub fn put(&self) {
        self.live
            .fetch_sub(1, core::sync::atomic::Ordering::Relaxed);
    }

    /// Live objects now.
    pub fn live(&self) -> u32 {
        self.live.load(core::sync::atomic::Ordering::Relaxed)
    }
}

/// `IB_ACCESS_ON_DEMAND`: on-demand paging.
pub const ACCESS_ON_DEMAND: u32 = 1 << 6;
/// `IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH`: map for reading.
pub const ADVISE_PREFETCH: u32 = 0;
/// `IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE`: map for writing.
pub const ADVISE_PREFETCH_WRITE: u32 = 1;
/// `IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT`: map what is mapped already.
pub const ADVISE_PREFETCH_NO_FAULT: u32 = 2;
/// `IB_UVERBS_ADVISE_MR_FLAG_FLUSH`: prefetch before returning.
pub const ADVISE_FLAG_FLUSH: u32 = 1;

/// How an `advise_mr` advice maps pages: (for writing, faulting missing ones in); `None` for
/// an advice rxe does not take (`EOPNOTSUPP`, as C).
pub fn prefetch_mode(advice: u32) -> Option<(bool, bool)> {
    match advice {
        ADVISE_PREFETCH => Some((false, true)),
        ADVISE_PREFETCH_WRITE => Some((true, true)),
        ADVISE_PREFETCH_NO_FAULT => Some((false, false)),
        _ => None,
    }
}

/// `RXE_ACCESS_SUPPORTED_MR`: local write, remote read/write/atomic, MW bind, on-demand,
/// flush global/persistent, and the optional bits.
pub const ACCESS_SUPPORTED_MR: u32 = 0x3ff0_035f;

/// `IB_MR_REREG_TRANS`: new address range (not supported by rxe, as C).
pub const MR_REREG_TRANS: u32 = 1 << 0;
/// `IB_MR_REREG_PD`: new protection domain.
pub const MR_REREG_PD: u32 = 1 << 1;
/// `IB_MR_REREG_ACCESS`: new access rights.
pub const MR_REREG_ACCESS: u32 = 1 << 2;
/// `RXE_MR_REREG_SUPPORTED`: only the two easy cases, in place.
pub const MR_REREG_SUPPORTED: u32 = MR_REREG_PD | MR_REREG_ACCESS;

/// What a `rereg_user_mr` changes in the MR (it stays the same object, as in C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rereg {
    /// The MR moves to the PD ib_uverbs passes.
    pub pd: bool,
    /// The MR's new access rights.
    pub access: Option<u32>,
}

/// `rxe_rereg_user_mr`'s first check: any flag but PD and ACCESS (translation changes) is
/// `EOPNOTSUPP`, which ib_uverbs passes on and the python tests turn into a skip. `flags` is
/// the C `int`, taken as bits.
pub fn check_rereg_flags(flags: u32) -> Result<(), crate::proto::Errno> {
    if flags & !MR_REREG_SUPPORTED != 0 {
        return Err(crate::proto::Errno::OpNotSupp);
    }
    Ok(())
}

/// `rxe_rereg_user_mr` after `ib_umem_check_rereg`: the change to make, or `EOPNOTSUPP` for
/// unsupported flags or, with `IB_MR_REREG_ACCESS`, access bits outside
/// `RXE_ACCESS_SUPPORTED_MR`. Unlike C, `IB_ACCESS_ON_DEMAND` is refused too: whether an MR
/// pages on demand is its kind, not a right (the caller takes the bit off for an ODP MR).
/// `access` is ignored without `IB_MR_REREG_ACCESS`, as in C.
pub fn rereg_plan(flags: u32, access: u32) -> Result<Rereg, crate::proto::Errno> {
    check_rereg_flags(flags)?;
    let access = if flags & MR_REREG_ACCESS != 0 {
        if access & !ACCESS_SUPPORTED_MR != 0 || access & ACCESS_ON_DEMAND != 0 {
            return Err(crate::proto::Errno::OpNotSupp);
        }
        Some(access)
    } else {
        None
    };
    Ok(Rereg {
        pd: flags & MR_REREG_PD != 0,
        access,
    })
}
