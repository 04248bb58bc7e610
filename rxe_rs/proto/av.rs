// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Address vectors (`rxe_av.c`): where a UD send or a connected QP's packets go, made from an
//! address handle's attributes. RoCEv2 only: the GID says the IP version.

/// `RXE_NETWORK_TYPE_*`: how a GID is carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkType {
    /// RoCEv2 over IPv4 (`RXE_NETWORK_TYPE_IPV4` = 1).
    Ipv4 = 1,
    /// RoCEv2 over IPv6 (`RXE_NETWORK_TYPE_IPV6` = 2).
    Ipv6 = 2,
}

/// An IP address taken from a GID (`rdma_gid2ip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GidIp {
    /// From a v4-mapped GID `::ffff:a.b.c.d`.
    V4([u8; 4]),
    /// Any other GID, as is.
    V6([u8; 16]),
}

impl GidIp {
    /// `rdma_gid2ip`: IPv4 when the GID is v4-mapped, else the GID as an IPv6 address.
    pub fn from_gid(gid: [u8; 16]) -> Self {
        let mapped = gid[..10].iter().all(|&b| b == 0) && gid[10] == 0xff && gid[11] == 0xff;
        if mapped {
            Self::V4([gid[12], gid[13], gid[14], gid[15]])
        } else {
            Self::V6(gid)
        }
    }
}

/// The global route of an address vector (`struct rxe_global_route`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GlobalRoute {
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Source GID table index.
    pub sgid_index: u8,
    /// Hop limit (TTL).
    pub hop_limit: u8,
    /// Traffic class (TOS).
    pub traffic_class: u8,
}

/// An address vector (`struct rxe_av` without the socket-address padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressVector {
    /// Port, always 1.
    pub port_num: u32,
    /// IP version of the path, from the source GID's type.
    pub network_type: NetworkType,
    /// Destination MAC (resolved by ib_core).
    pub dmac: [u8; 6],
    /// The GRH fields.
    pub grh: GlobalRoute,
    /// Source address, from the source GID.
    pub sgid_ip: GidIp,
    /// Destination address, from the destination GID.
    pub dgid_ip: GidIp,
}

impl AddressVector {
    /// `rxe_init_av`: `sgid` is the GID at `grh.sgid_index` and `network_type` its type.
    pub fn new(
        port_num: u32,
        grh: GlobalRoute,
        sgid: [u8; 16],
        network_type: NetworkType,
        dmac: [u8; 6],
    ) -> Self {
        Self {
            port_num,
            network_type,
            dmac,
            grh,
            sgid_ip: GidIp::from_gid(sgid),
            dgid_ip: GidIp::from_gid(grh.dgid),
        }
    }
}
