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
