use crate::proto::params::*;

#[test]
fn limits_match_rxe_param_h() {
    assert_eq!(MAX_QP, (1 << 20) - 16);
    assert_eq!(MAX_SRQ, (1 << 20) - 0x20001);
    assert_eq!(MAX_MR, (1 << 19) - 1);
    assert_eq!(MAX_MW, (1 << 20) - ((1 << 19) + 1));
    assert_eq!(MAX_AH, 32767);
    assert_eq!(MAX_INLINE_DATA, 512);
    assert_eq!((1u32 << MAX_LOG_CQE) - 1, 32767);
}

#[test]
fn ib_mtu_from_ethernet_mtu() {
    // The C driver subtracts the 80-byte worst-case header before choosing.
    assert_eq!(IbMtu::for_eth_mtu(1500), IbMtu::Mtu1024);
    assert_eq!(IbMtu::for_eth_mtu(1104), IbMtu::Mtu1024);
    assert_eq!(IbMtu::for_eth_mtu(1103), IbMtu::Mtu512);
    assert_eq!(IbMtu::for_eth_mtu(4200), IbMtu::Mtu4096);
    assert_eq!(IbMtu::for_eth_mtu(9000), IbMtu::Mtu4096);
    assert_eq!(IbMtu::for_eth_mtu(4175), IbMtu::Mtu2048);
    assert_eq!(IbMtu::for_eth_mtu(68), IbMtu::Mtu256);
    assert_eq!(IbMtu::for_eth_mtu(0), IbMtu::Mtu256);
    assert_eq!(IbMtu::Mtu1024.bytes(), 1024);
    assert_eq!(IbMtu::Mtu4096.bytes(), 4096);
    assert_eq!(IbMtu::Mtu256.bytes(), 256);
}

#[test]
fn guid_from_mac_is_modified_eui64() {
    // ibv_devinfo on the C driver shows node_guid 5054:00ff:fe12:340f for MAC 52:54:00:12:34:0f.
    assert_eq!(
        eui64_from_mac([0x52, 0x54, 0x00, 0x12, 0x34, 0x0f]),
        [0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x0f]
    );
}

#[test]
fn object_count_is_bounded() {
    let c = ObjectCount::new(2);
    assert!(c.try_get());
    assert!(c.try_get());
    assert!(!c.try_get(), "third object past max 2");
    assert_eq!(c.live(), 2);
    c.put();
    assert!(c.try_get());
    assert_eq!(c.live(), 2);
}
