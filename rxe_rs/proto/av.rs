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

/// `rdma_is_multicast_addr`: an IPv6 multicast GID (`ff00::/8`), or a v4-mapped GID of an IPv4
/// multicast address (`::ffff:224.0.0.0/100`).
pub fn is_multicast_gid(gid: &[u8; 16]) -> bool {
    gid[0] == 0xff || matches!(GidIp::from_gid(*gid), GidIp::V4(a) if a[0] & 0xf0 == 0xe0)
}

/// The Ethernet multicast address a NIC must accept for packets to the multicast GID `mgid`:
/// `ip_eth_mc_map` (`01:00:5e` and the low 23 bits) for a v4-mapped GID, else
/// `ipv6_eth_mc_map` (`33:33` and the last 4 bytes). The C driver's `rxe_mcast_add` uses the
/// IPv6 mapping for both, so for an IPv4 group it adds an address no IPv4 multicast frame carries
/// (rdma_cm's IGMP join adds the right one).
pub fn multicast_mac(mgid: &[u8; 16]) -> [u8; 6] {
    match GidIp::from_gid(*mgid) {
        GidIp::V4(a) => [0x01, 0x00, 0x5e, a[1] & 0x7f, a[2], a[3]],
        GidIp::V6(a) => [0x33, 0x33, a[12], a[13], a[14], a[15]],
    }
}
