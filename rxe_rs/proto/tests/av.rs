use crate::proto::av::*;

#[test]
fn gid_to_ip_follows_rdma_gid2ip() {
    let mut v4 = [0u8; 16];
    v4[10] = 0xff;
    v4[11] = 0xff;
    v4[12..].copy_from_slice(&[10, 0, 2, 15]);
    assert_eq!(GidIp::from_gid(v4), GidIp::V4([10, 0, 2, 15]));
    let mut ll = [0u8; 16];
    ll[0] = 0xfe;
    ll[1] = 0x80;
    ll[8..].copy_from_slice(&[0x50, 0x54, 0, 0xff, 0xfe, 0x12, 0x34, 0x0f]);
    assert_eq!(GidIp::from_gid(ll), GidIp::V6(ll));
    // Almost v4-mapped (a non-zero byte in the prefix) stays IPv6.
    let mut odd = v4;
    odd[3] = 1;
    assert_eq!(GidIp::from_gid(odd), GidIp::V6(odd));
}

#[test]
fn address_vector_takes_ips_from_gids() {
    let mut sgid = [0u8; 16];
    sgid[10] = 0xff;
    sgid[11] = 0xff;
    sgid[12..].copy_from_slice(&[10, 0, 2, 15]);
    let mut dgid = sgid;
    dgid[15] = 16;
    let grh = GlobalRoute {
        dgid,
        hop_limit: 64,
        sgid_index: 1,
        ..Default::default()
    };
    let av = AddressVector::new(1, grh, sgid, NetworkType::Ipv4, [2, 0, 0, 0, 0, 1]);
    assert_eq!(av.sgid_ip, GidIp::V4([10, 0, 2, 15]));
    assert_eq!(av.dgid_ip, GidIp::V4([10, 0, 2, 16]));
    assert_eq!(av.grh.hop_limit, 64);
    assert_eq!(av.network_type as u8, 1);
}

fn v4_mapped(a: [u8; 4]) -> [u8; 16] {
    let mut gid = [0u8; 16];
    gid[10] = 0xff;
    gid[11] = 0xff;
    gid[12..].copy_from_slice(&a);
    gid
}

#[test]
fn multicast_gids_follow_rdma_is_multicast_addr() {
    assert!(is_multicast_gid(&v4_mapped([239, 1, 1, 1])));
    assert!(is_multicast_gid(&v4_mapped([224, 0, 0, 1])));
    assert!(!is_multicast_gid(&v4_mapped([10, 0, 2, 15])));
    assert!(!is_multicast_gid(&v4_mapped([240, 0, 0, 1])));
    let mut v6 = [0u8; 16];
    v6[0] = 0xff;
    v6[1] = 0x0e;
    v6[15] = 1;
    assert!(is_multicast_gid(&v6));
    v6[0] = 0xfe;
    assert!(!is_multicast_gid(&v6));
    // The IPv4 multicast range outside a v4-mapped GID is not multicast.
    let mut odd = v4_mapped([239, 1, 1, 1]);
    odd[10] = 0;
    assert!(!is_multicast_gid(&odd));
}

#[test]
fn multicast_macs_follow_ip_and_ipv6_eth_mc_map() {
    // ip_eth_mc_map: 01:00:5e and the low 23 bits of the group.
    assert_eq!(
        multicast_mac(&v4_mapped([239, 129, 2, 3])),
        [0x01, 0x00, 0x5e, 0x01, 0x02, 0x03]
    );
    // ipv6_eth_mc_map: 33:33 and the last 32 bits.
    let mut v6 = [0u8; 16];
    v6[0] = 0xff;
    v6[1] = 0x12;
    v6[12..].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(multicast_mac(&v6), [0x33, 0x33, 0xde, 0xad, 0xbe, 0xef]);
}
