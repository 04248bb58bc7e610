use crate::proto::params::*;

#[test]
fn limits_match_rxe_param_h() {
    assert_eq!(MAX_QP, (1 << 20) - 16);
    assert_eq!(MAX_SRQ, (1 << 20) - 0x20001);
    assert_eq!(MAX_MR, (1 << 19) - 1);
    assert_eq!(MAX_MW, (1 << 20) - ((1 << 19) + 1));
    assert_eq!(MAX_AH, 32767);
    assert_eq!(MAX_INLINE_DATA, 512);
    assert_eq!((1u32 << MAX_LOG_CQE) - 1, 524_287);
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

#[test]
fn rereg_flags_as_rxe_rereg_user_mr() {
    use crate::proto::Errno;
    // The values of enum ib_mr_rereg_flags.
    assert_eq!((MR_REREG_TRANS, MR_REREG_PD, MR_REREG_ACCESS), (1, 2, 4));
    assert_eq!(check_rereg_flags(MR_REREG_PD), Ok(()));
    assert_eq!(check_rereg_flags(MR_REREG_ACCESS), Ok(()));
    assert_eq!(check_rereg_flags(MR_REREG_PD | MR_REREG_ACCESS), Ok(()));
    // ib_uverbs clears REREG_PD when the PD is the MR's own: nothing to do.
    assert_eq!(check_rereg_flags(0), Ok(()));
    // Translation changes, alone or with the others, and unknown bits (IB_MR_REREG_SUPPORTED
    // is 7 in Linux 7.3; a negative C int has them all).
    for f in [
        MR_REREG_TRANS,
        MR_REREG_TRANS | MR_REREG_PD,
        MR_REREG_TRANS | MR_REREG_ACCESS | MR_REREG_PD,
        8,
        1 << 31,
        u32::MAX,
    ] {
        assert_eq!(check_rereg_flags(f), Err(Errno::OpNotSupp), "flags {f:#x}");
        assert_eq!(rereg_plan(f, 0), Err(Errno::OpNotSupp), "flags {f:#x}");
    }
}

#[test]
fn rereg_plan_access() {
    use crate::proto::Errno;
    const LOCAL_WRITE: u32 = 1;
    const REMOTE_WRITE: u32 = 1 << 1;
    const REMOTE_READ: u32 = 1 << 2;
    const REMOTE_ATOMIC: u32 = 1 << 3;
    const MW_BIND: u32 = 1 << 4;
    const ZERO_BASED: u32 = 1 << 5;
    const FLUSH_GLOBAL: u32 = 1 << 8;
    const FLUSH_PERSISTENT: u32 = 1 << 9;
    const RELAXED_ORDERING: u32 = 1 << 20;
    let all = LOCAL_WRITE
        | REMOTE_WRITE
        | REMOTE_READ
        | REMOTE_ATOMIC
        | MW_BIND
        | FLUSH_GLOBAL
        | FLUSH_PERSISTENT
        | RELAXED_ORDERING;
    for a in [0, LOCAL_WRITE, LOCAL_WRITE | REMOTE_WRITE, REMOTE_READ, all] {
        assert_eq!(
            rereg_plan(MR_REREG_ACCESS, a),
            Ok(Rereg {
                pd: false,
                access: Some(a)
            })
        );
        assert_eq!(
            rereg_plan(MR_REREG_ACCESS | MR_REREG_PD, a),
            Ok(Rereg {
                pd: true,
                access: Some(a)
            })
        );
    }
    // Outside RXE_ACCESS_SUPPORTED_MR: zero-based (an MW right), reserved bits.
    for a in [ZERO_BASED, 1 << 7, 1 << 10, 1 << 19, 1 << 30, 1 << 31] {
        assert_eq!(
            rereg_plan(MR_REREG_ACCESS, a),
            Err(Errno::OpNotSupp),
            "{a:#x}"
        );
    }
    // ODP: refused as by reg_user_mr.
    assert_eq!(
        rereg_plan(MR_REREG_ACCESS, LOCAL_WRITE | ACCESS_ON_DEMAND),
        Err(Errno::OpNotSupp)
    );
    // Without REREG_ACCESS the access argument is not looked at (C).
    assert_eq!(
        rereg_plan(MR_REREG_PD, ZERO_BASED | ACCESS_ON_DEMAND),
        Ok(Rereg {
            pd: true,
            access: None
        })
    );
    assert_eq!(
        rereg_plan(0, u32::MAX),
        Ok(Rereg {
            pd: false,
            access: None
        })
    );
}
