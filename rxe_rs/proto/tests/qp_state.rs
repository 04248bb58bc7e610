// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The QP state table against a hand transcription of the IB core's `qp_state_table`, the
//! rules of `ib_modify_qp_is_ok`, and rxe's create / modify checks with their errnos.

use proptest::prelude::*;

use crate::proto::qp_state::*;
use crate::proto::Errno;

use QpState::{Err as E, Init as I, Reset as R, Rtr, Rts, Sqd, Sqe};
use QpType::{Gsi, Rc, Smi, Uc, Ud};

// Short names for the table below.
const CUR: u32 = IB_QP_CUR_STATE;
const SQD_N: u32 = IB_QP_EN_SQD_ASYNC_NOTIFY;
const ACC: u32 = IB_QP_ACCESS_FLAGS;
const PKEY: u32 = IB_QP_PKEY_INDEX;
const PORT: u32 = IB_QP_PORT;
const QKEY: u32 = IB_QP_QKEY;
const AV: u32 = IB_QP_AV;
const MTU: u32 = IB_QP_PATH_MTU;
const TMO: u32 = IB_QP_TIMEOUT;
const RETRY: u32 = IB_QP_RETRY_CNT;
const RNR: u32 = IB_QP_RNR_RETRY;
const RQ_PSN: u32 = IB_QP_RQ_PSN;
const RD: u32 = IB_QP_MAX_QP_RD_ATOMIC;
const ALT: u32 = IB_QP_ALT_PATH;
const RNR_T: u32 = IB_QP_MIN_RNR_TIMER;
const SQ_PSN: u32 = IB_QP_SQ_PSN;
const DRD: u32 = IB_QP_MAX_DEST_RD_ATOMIC;
const MIG: u32 = IB_QP_PATH_MIG_STATE;
const DQPN: u32 = IB_QP_DEST_QPN;

/// One row of the expectation: transition, type, required, optional.
type Row = (QpState, QpState, QpType, u32, u32);

/// Every valid (cur, next, type) of `qp_state_table` for SMI, GSI, RC, UC and UD, written
/// from the table in `drivers/infiniband/core/verbs.c` (and IBA vol. 1 §11.2.4.2).
/// Combinations not listed must be invalid.
#[rustfmt::skip]
const TABLE: &[Row] = &[
    // RESET
    (R, R, Smi, 0, 0), (R, R, Gsi, 0, 0), (R, R, Rc, 0, 0), (R, R, Uc, 0, 0), (R, R, Ud, 0, 0),
    (R, I, Smi, PKEY | QKEY, 0),
    (R, I, Gsi, PKEY | QKEY, 0),
    (R, I, Rc, PKEY | PORT | ACC, 0),
    (R, I, Uc, PKEY | PORT | ACC, 0),
    (R, I, Ud, PKEY | PORT | QKEY, 0),
    // INIT
    (I, R, Smi, 0, 0), (I, R, Gsi, 0, 0), (I, R, Rc, 0, 0), (I, R, Uc, 0, 0), (I, R, Ud, 0, 0),
    (I, E, Smi, 0, 0), (I, E, Gsi, 0, 0), (I, E, Rc, 0, 0), (I, E, Uc, 0, 0), (I, E, Ud, 0, 0),
    (I, I, Smi, 0, PKEY | QKEY),
    (I, I, Gsi, 0, PKEY | QKEY),
    (I, I, Rc, 0, PKEY | PORT | ACC),
    (I, I, Uc, 0, PKEY | PORT | ACC),
    (I, I, Ud, 0, PKEY | PORT | QKEY),
    (I, Rtr, Smi, 0, PKEY | QKEY),
    (I, Rtr, Gsi, 0, PKEY | QKEY),
    (I, Rtr, Rc, AV | MTU | DQPN | RQ_PSN | DRD | RNR_T, ALT | ACC | PKEY),
    (I, Rtr, Uc, AV | MTU | DQPN | RQ_PSN, ALT | ACC | PKEY),
    (I, Rtr, Ud, 0, PKEY | QKEY),
    // RTR
    (Rtr, R, Smi, 0, 0), (Rtr, R, Gsi, 0, 0), (Rtr, R, Rc, 0, 0),
    (Rtr, R, Uc, 0, 0), (Rtr, R, Ud, 0, 0),
    (Rtr, E, Smi, 0, 0), (Rtr, E, Gsi, 0, 0), (Rtr, E, Rc, 0, 0),
    (Rtr, E, Uc, 0, 0), (Rtr, E, Ud, 0, 0),
    (Rtr, Rts, Smi, SQ_PSN, CUR | QKEY),
    (Rtr, Rts, Gsi, SQ_PSN, CUR | QKEY),
    (Rtr, Rts, Rc, TMO | RETRY | RNR | SQ_PSN | RD, CUR | ALT | ACC | RNR_T | MIG),
    (Rtr, Rts, Uc, SQ_PSN, CUR | ALT | ACC | MIG),
    (Rtr, Rts, Ud, SQ_PSN, CUR | QKEY),
    // RTS
    (Rts, R, Smi, 0, 0), (Rts, R, Gsi, 0, 0), (Rts, R, Rc, 0, 0),
    (Rts, R, Uc, 0, 0), (Rts, R, Ud, 0, 0),
    (Rts, E, Smi, 0, 0), (Rts, E, Gsi, 0, 0), (Rts, E, Rc, 0, 0),
    (Rts, E, Uc, 0, 0), (Rts, E, Ud, 0, 0),
    (Rts, Rts, Smi, 0, CUR | QKEY),
    (Rts, Rts, Gsi, 0, CUR | QKEY),
    (Rts, Rts, Rc, 0, CUR | ACC | ALT | MIG | RNR_T),
    (Rts, Rts, Uc, 0, CUR | ACC | ALT | MIG),
    (Rts, Rts, Ud, 0, CUR | QKEY),
    (Rts, Sqd, Smi, 0, SQD_N), (Rts, Sqd, Gsi, 0, SQD_N), (Rts, Sqd, Rc, 0, SQD_N),
    (Rts, Sqd, Uc, 0, SQD_N), (Rts, Sqd, Ud, 0, SQD_N),
    // SQD
    (Sqd, R, Smi, 0, 0), (Sqd, R, Gsi, 0, 0), (Sqd, R, Rc, 0, 0),
    (Sqd, R, Uc, 0, 0), (Sqd, R, Ud, 0, 0),
    (Sqd, E, Smi, 0, 0), (Sqd, E, Gsi, 0, 0), (Sqd, E, Rc, 0, 0),
    (Sqd, E, Uc, 0, 0), (Sqd, E, Ud, 0, 0),
    (Sqd, Rts, Smi, 0, CUR | QKEY),
    (Sqd, Rts, Gsi, 0, CUR | QKEY),
    (Sqd, Rts, Rc, 0, CUR | ALT | ACC | RNR_T | MIG),
    (Sqd, Rts, Uc, 0, CUR | ALT | ACC | MIG),
    (Sqd, Rts, Ud, 0, CUR | QKEY),
    (Sqd, Sqd, Smi, 0, PKEY | QKEY),
    (Sqd, Sqd, Gsi, 0, PKEY | QKEY),
    (Sqd, Sqd, Rc, 0, PORT | AV | TMO | RETRY | RNR | RD | DRD | ALT | ACC | PKEY | RNR_T | MIG),
    (Sqd, Sqd, Uc, 0, AV | ALT | ACC | PKEY | MIG),
    (Sqd, Sqd, Ud, 0, PKEY | QKEY),
    // SQE
    (Sqe, R, Smi, 0, 0), (Sqe, R, Gsi, 0, 0), (Sqe, R, Rc, 0, 0),
    (Sqe, R, Uc, 0, 0), (Sqe, R, Ud, 0, 0),
    (Sqe, E, Smi, 0, 0), (Sqe, E, Gsi, 0, 0), (Sqe, E, Rc, 0, 0),
    (Sqe, E, Uc, 0, 0), (Sqe, E, Ud, 0, 0),
    (Sqe, Rts, Smi, 0, CUR | QKEY),
    (Sqe, Rts, Gsi, 0, CUR | QKEY),
    (Sqe, Rts, Rc, 0, 0),
    (Sqe, Rts, Uc, 0, CUR | ACC),
    (Sqe, Rts, Ud, 0, CUR | QKEY),
    // ERR
    (E, R, Smi, 0, 0), (E, R, Gsi, 0, 0), (E, R, Rc, 0, 0), (E, R, Uc, 0, 0), (E, R, Ud, 0, 0),
    (E, E, Smi, 0, 0), (E, E, Gsi, 0, 0), (E, E, Rc, 0, 0), (E, E, Uc, 0, 0), (E, E, Ud, 0, 0),
];

fn expected(cur: QpState, next: QpState, ty: QpType) -> Option<AttrMasks> {
    TABLE
        .iter()
        .find(|r| (r.0, r.1, r.2) == (cur, next, ty))
        .map(|r| AttrMasks {
            required: r.3,
            optional: r.4,
        })
}

/// Every bit a mask may carry, the 26 of `enum ib_qp_attr_mask` and a few beyond.
fn all_bits() -> impl Iterator<Item = u32> {
    (0..32).map(|b| 1u32 << b)
}

#[test]
fn enum_values_are_the_c_ones() {
    assert_eq!(QpState::ALL.map(|s| s as u32), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(QpType::ALL.map(|t| t as u32), [0, 1, 2, 3, 4]);
    for s in QpState::ALL {
        assert_eq!(QpState::from_raw(s as u32), Some(s));
    }
    for t in QpType::ALL {
        assert_eq!(QpType::from_raw(t as u32), Some(t));
    }
    assert_eq!(QpState::from_raw(7), None);
    assert_eq!(QpState::from_raw(u32::MAX), None);
    // RAW_IPV6 5, RAW_ETHERTYPE 6, RAW_PACKET 8, XRC 9/10, DRIVER 0xff.
    for raw in [5, 6, 7, 8, 9, 10, 0xff, 0x1000, u32::MAX] {
        assert_eq!(QpType::from_raw(raw), None);
    }
    assert_eq!(QpState::default(), QpState::Reset);
}

#[test]
fn attr_mask_bits_are_enum_ib_qp_attr_mask() {
    let bits = [
        IB_QP_STATE,
        IB_QP_CUR_STATE,
        IB_QP_EN_SQD_ASYNC_NOTIFY,
        IB_QP_ACCESS_FLAGS,
        IB_QP_PKEY_INDEX,
        IB_QP_PORT,
        IB_QP_QKEY,
        IB_QP_AV,
        IB_QP_PATH_MTU,
        IB_QP_TIMEOUT,
        IB_QP_RETRY_CNT,
        IB_QP_RNR_RETRY,
        IB_QP_RQ_PSN,
        IB_QP_MAX_QP_RD_ATOMIC,
        IB_QP_ALT_PATH,
        IB_QP_MIN_RNR_TIMER,
        IB_QP_SQ_PSN,
        IB_QP_MAX_DEST_RD_ATOMIC,
        IB_QP_PATH_MIG_STATE,
        IB_QP_CAP,
        IB_QP_DEST_QPN,
        IB_QP_RESERVED1,
        IB_QP_RESERVED2,
        IB_QP_RESERVED3,
        IB_QP_RESERVED4,
        IB_QP_RATE_LIMIT,
    ];
    for (i, b) in bits.iter().enumerate() {
        assert_eq!(*b, 1 << i, "bit {i}");
    }
    assert_eq!(IB_QP_ATTR_STANDARD_BITS, 0x1f_ffff);
    // RXE_ACCESS_SUPPORTED_QP: LOCAL_WRITE 1, REMOTE_WRITE 2, REMOTE_READ 4, REMOTE_ATOMIC 8,
    // MW_BIND 0x10, ON_DEMAND 0x40, FLUSH_GLOBAL 0x100, FLUSH_PERSISTENT 0x200, optional
    // range bits 20..29; not ZERO_BASED 0x20 nor HUGETLB 0x80.
    assert_eq!(
        ACCESS_SUPPORTED_QP,
        0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x40 | 0x100 | 0x200 | 0x3ff0_0000
    );
    assert_eq!((PORT_NUM, MAX_TIMEOUT), (1, 31));
}

#[test]
fn table_matches_the_transcription_for_every_combination() {
    let mut valid = 0;
    for cur in QpState::ALL {
        for next in QpState::ALL {
            for ty in QpType::ALL {
                let got = transition(cur, next, ty);
                assert_eq!(got, expected(cur, next, ty), "{cur:?} -> {next:?} {ty:?}");
                valid += usize::from(got.is_some());
            }
        }
    }
    assert_eq!(valid, TABLE.len());
    // 22 valid (cur, next) pairs for each of the 5 types.
    assert_eq!(valid, 22 * 5);
}

#[test]
fn modify_is_ok_follows_the_masks_for_every_combination() {
    for cur in QpState::ALL {
        for next in QpState::ALL {
            for ty in QpType::ALL {
                let Some(m) = expected(cur, next, ty) else {
                    // Invalid transitions fail whatever is given.
                    for mask in [0, IB_QP_STATE, u32::MAX, IB_QP_STATE | 0x1f_fffc] {
                        assert!(
                            !modify_is_ok(cur, next, ty, mask),
                            "{cur:?}->{next:?} {ty:?}"
                        );
                    }
                    continue;
                };
                let base = IB_QP_STATE | m.required;
                assert!(
                    modify_is_ok(cur, next, ty, base),
                    "{cur:?}->{next:?} {ty:?}"
                );
                assert!(
                    modify_is_ok(cur, next, ty, m.required),
                    "STATE itself is not required"
                );
                assert!(modify_is_ok(cur, next, ty, base | IB_QP_RATE_LIMIT));
                for bit in all_bits() {
                    let cur_ok = matches!(cur, Rtr | Rts | Sqd | Sqe);
                    if m.required & bit != 0 {
                        assert!(
                            !modify_is_ok(cur, next, ty, base & !bit),
                            "missing {bit:#x}"
                        );
                    } else if m.optional & bit != 0 {
                        assert_eq!(
                            modify_is_ok(cur, next, ty, base | bit),
                            bit != CUR || cur_ok,
                            "optional {bit:#x}"
                        );
                    } else if bit != IB_QP_STATE && bit != IB_QP_RATE_LIMIT {
                        assert!(!modify_is_ok(cur, next, ty, base | bit), "extra {bit:#x}");
                    }
                }
                // All optional bits at once.
                assert!(modify_is_ok(cur, next, ty, base | m.optional));
            }
        }
    }
}

#[test]
fn transitions_named_in_the_brief() {
    for ty in [Rc, Uc] {
        assert_eq!(transition(R, I, ty).unwrap().required, PKEY | PORT | ACC);
        assert!(modify_is_ok(R, I, ty, IB_QP_STATE | PKEY | PORT | ACC));
        assert!(!modify_is_ok(R, I, ty, IB_QP_STATE | PKEY | PORT | QKEY));
    }
    assert_eq!(transition(R, I, Ud).unwrap().required, PKEY | PORT | QKEY);
    assert!(modify_is_ok(R, I, Ud, IB_QP_STATE | PKEY | PORT | QKEY));
    assert!(!modify_is_ok(
        R,
        I,
        Ud,
        IB_QP_STATE | PKEY | PORT | QKEY | ACC
    ));
    // GSI has no port attribute at INIT.
    assert!(modify_is_ok(R, I, Gsi, IB_QP_STATE | PKEY | QKEY));
    assert!(!modify_is_ok(R, I, Gsi, IB_QP_STATE | PKEY | QKEY | PORT));

    let rc_rtr = AV | MTU | DQPN | RQ_PSN | DRD | RNR_T;
    assert_eq!(transition(I, Rtr, Rc).unwrap().required, rc_rtr);
    assert!(modify_is_ok(I, Rtr, Rc, IB_QP_STATE | rc_rtr));
    assert!(modify_is_ok(
        I,
        Rtr,
        Rc,
        IB_QP_STATE | rc_rtr | PKEY | ACC | ALT
    ));
    assert!(!modify_is_ok(I, Rtr, Rc, IB_QP_STATE | rc_rtr | SQ_PSN));
    assert!(
        !modify_is_ok(I, Rtr, Uc, IB_QP_STATE | rc_rtr),
        "UC has no rd_atomic / RNR"
    );
    assert!(modify_is_ok(I, Rtr, Ud, IB_QP_STATE));

    let rc_rts = SQ_PSN | RD | RETRY | RNR | TMO;
    assert_eq!(transition(Rtr, Rts, Rc).unwrap().required, rc_rts);
    assert!(modify_is_ok(Rtr, Rts, Rc, IB_QP_STATE | rc_rts));
    assert!(!modify_is_ok(Rtr, Rts, Rc, IB_QP_STATE | SQ_PSN));
    assert!(modify_is_ok(Rtr, Rts, Uc, IB_QP_STATE | SQ_PSN));
    assert!(modify_is_ok(
        Rtr,
        Rts,
        Ud,
        IB_QP_STATE | SQ_PSN | QKEY | CUR
    ));

    // Every state but RESET goes to RESET and to ERR with STATE alone, nothing more.
    for cur in QpState::ALL {
        for ty in QpType::ALL {
            assert!(modify_is_ok(cur, R, ty, IB_QP_STATE), "{cur:?} -> RESET");
            assert!(!modify_is_ok(cur, R, ty, IB_QP_STATE | QKEY));
            assert_eq!(
                modify_is_ok(cur, E, ty, IB_QP_STATE),
                cur != R,
                "{cur:?} -> ERR"
            );
            assert!(!modify_is_ok(cur, E, ty, IB_QP_STATE | PKEY));
            // CUR_STATE is not in the optional set of any transition to RESET or ERR.
            assert!(!modify_is_ok(cur, E, ty, IB_QP_STATE | CUR));
        }
    }

    // Some illegal transitions.
    for (cur, next) in [
        (R, Rtr),
        (R, Rts),
        (I, Rts),
        (Rtr, Rtr),
        (Rtr, Sqd),
        (Rts, I),
        (Sqd, Sqe),
        (Rts, Sqe),
        (E, I),
        (E, Rts),
        (Sqe, Sqe),
        (Sqe, Sqd),
    ] {
        for ty in QpType::ALL {
            assert_eq!(transition(cur, next, ty), None);
            assert!(!modify_is_ok(cur, next, ty, IB_QP_STATE));
        }
    }
}

#[test]
fn cur_state_only_from_rtr_rts_sqd_sqe() {
    assert!(modify_is_ok(Rts, Rts, Rc, IB_QP_STATE | CUR));
    assert!(modify_is_ok(Sqd, Rts, Ud, IB_QP_STATE | CUR));
    assert!(modify_is_ok(Sqe, Rts, Uc, IB_QP_STATE | CUR));
    assert!(
        !modify_is_ok(Sqe, Rts, Rc, IB_QP_STATE | CUR),
        "no RC entry for SQE->RTS"
    );
    assert!(!modify_is_ok(I, I, Rc, IB_QP_STATE | CUR));
    assert!(!modify_is_ok(
        R,
        I,
        Rc,
        IB_QP_STATE | CUR | PKEY | PORT | ACC
    ));
}

#[test]
fn errno_values() {
    assert_eq!(Errno::Inval.to_errno(), -22);
    assert_eq!(Errno::NoMem.to_errno(), -12);
    assert_eq!(Errno::OpNotSupp.to_errno(), -95);
}

#[test]
fn chk_cap_limits() {
    let ok = QpCap {
        max_send_wr: 1 << 20,
        max_recv_wr: 1 << 20,
        max_send_sge: 32,
        max_recv_sge: 32,
        max_inline_data: 512,
    };
    assert_eq!(chk_cap(&ok, false), Ok(()));
    assert_eq!(chk_cap(&QpCap::default(), false), Ok(()));
    let bad = [
        QpCap {
            max_send_wr: (1 << 20) + 1,
            ..ok
        },
        QpCap {
            max_send_sge: 33,
            ..ok
        },
        QpCap {
            max_recv_wr: u32::MAX,
            ..ok
        },
        QpCap {
            max_recv_sge: 33,
            ..ok
        },
        QpCap {
            max_inline_data: 513,
            ..ok
        },
    ];
    for (i, cap) in bad.iter().enumerate() {
        assert_eq!(chk_cap(cap, false), Err(Errno::Inval), "{i}");
    }
    // With an SRQ the receive side is not looked at.
    assert_eq!(chk_cap(&bad[2], true), Ok(()));
    assert_eq!(chk_cap(&bad[3], true), Ok(()));
    assert_eq!(chk_cap(&bad[0], true), Err(Errno::Inval));
}

#[test]
fn chk_init_types_cqs_and_gsi_port() {
    let cap = QpCap::default();
    assert_eq!(chk_init(2, true, &cap, false, 0), Ok(Rc));
    assert_eq!(chk_init(3, true, &cap, false, 7), Ok(Uc));
    assert_eq!(chk_init(4, true, &cap, false, 0), Ok(Ud));
    assert_eq!(chk_init(1, true, &cap, false, 1), Ok(Gsi));
    assert_eq!(chk_init(1, true, &cap, false, 2), Err(Errno::Inval));
    assert_eq!(chk_init(1, true, &cap, false, 0), Err(Errno::Inval));
    for raw in [0, 5, 8, 9, 10, 0xff, u32::MAX] {
        // Type first: even without CQs it is EOPNOTSUPP.
        assert_eq!(
            chk_init(raw, false, &cap, false, 1),
            Err(Errno::OpNotSupp),
            "{raw}"
        );
    }
    assert_eq!(chk_init(2, false, &cap, false, 1), Err(Errno::Inval));
    let big = QpCap {
        max_send_sge: 33,
        ..cap
    };
    assert_eq!(chk_init(2, true, &big, false, 1), Err(Errno::Inval));
}

fn qp(qp_type: QpType, state: QpState) -> QpNow {
    QpNow {
        qp_type,
        state,
        sq_draining: false,
        has_srq: false,
    }
}

#[test]
fn chk_attr_field_by_field() {
    let rc = qp(Rc, I);
    let good = ModifyAttr {
        port_num: 1,
        alt_port_num: 1,
        path_mtu: 5,
        max_rd_atomic: 128,
        timeout: 31,
        alt_timeout: 31,
        qp_access_flags: ACCESS_SUPPORTED_QP,
        ..ModifyAttr::default()
    };
    let every = IB_QP_ATTR_STANDARD_BITS;
    assert_eq!(chk_attr(&rc, &good, every), Ok(()));
    let cases: [(u32, ModifyAttr); 11] = [
        (
            PORT,
            ModifyAttr {
                port_num: 0,
                ..good
            },
        ),
        (
            PORT,
            ModifyAttr {
                port_num: 2,
                ..good
            },
        ),
        (
            ALT,
            ModifyAttr {
                alt_port_num: 2,
                ..good
            },
        ),
        (
            ALT,
            ModifyAttr {
                alt_timeout: 32,
                ..good
            },
        ),
        (
            MTU,
            ModifyAttr {
                path_mtu: 6,
                ..good
            },
        ),
        (
            MTU,
            ModifyAttr {
                path_mtu: u32::MAX,
                ..good
            },
        ),
        (
            RD,
            ModifyAttr {
                max_rd_atomic: 129,
                ..good
            },
        ),
        (
            TMO,
            ModifyAttr {
                timeout: 32,
                ..good
            },
        ),
        (
            ACC,
            ModifyAttr {
                qp_access_flags: 0x20,
                ..good
            },
        ), // ZERO_BASED
        (
            ACC,
            ModifyAttr {
                qp_access_flags: 1 << 31,
                ..good
            },
        ), // a negative int
        (
            IB_QP_CAP,
            ModifyAttr {
                cap: QpCap {
                    max_send_wr: u32::MAX,
                    ..QpCap::default()
                },
                ..good
            },
        ),
    ];
    for (i, (bit, attr)) in cases.iter().enumerate() {
        assert_eq!(chk_attr(&rc, attr, every), Err(Errno::Inval), "case {i}");
        assert_eq!(chk_attr(&rc, attr, *bit), Err(Errno::Inval), "case {i}");
        // Only looked at when its bit is given.
        assert_eq!(chk_attr(&rc, attr, every & !bit), Ok(()), "case {i}");
    }
    // Access flags only on RC and UC.
    assert_eq!(chk_attr(&qp(Uc, I), &good, ACC), Ok(()));
    for t in [Ud, Gsi, Smi] {
        assert_eq!(
            chk_attr(&qp(t, I), &ModifyAttr::default(), ACC),
            Err(Errno::Inval)
        );
    }
    // IB_QP_CAP with an SRQ ignores the receive side.
    let rq = ModifyAttr {
        cap: QpCap {
            max_recv_sge: 99,
            ..QpCap::default()
        },
        ..good
    };
    assert_eq!(chk_attr(&rc, &rq, IB_QP_CAP), Err(Errno::Inval));
    assert_eq!(
        chk_attr(
            &QpNow {
                has_srq: true,
                ..rc
            },
            &rq,
            IB_QP_CAP
        ),
        Ok(())
    );
    // What the C driver lets through: path MTU 0, anything not listed.
    assert_eq!(
        chk_attr(
            &rc,
            &ModifyAttr {
                path_mtu: 0,
                ..good
            },
            MTU
        ),
        Ok(())
    );
    assert_eq!(
        chk_attr(&rc, &good, PKEY | DRD | RETRY | RNR | RNR_T | AV),
        Ok(())
    );
}

#[test]
fn chk_state_uses_cur_state_and_sq_draining() {
    let a = |next, cur| ModifyAttr {
        qp_state: next,
        cur_qp_state: cur,
        ..ModifyAttr::default()
    };
    let rc_rts = SQ_PSN | RD | RETRY | RNR | TMO;
    assert_eq!(
        chk_state(&qp(Rc, Rtr), &a(Rts, R), IB_QP_STATE | rc_rts),
        Ok(())
    );
    assert_eq!(
        chk_state(&qp(Rc, I), &a(Rts, R), IB_QP_STATE | rc_rts),
        Err(Errno::Inval)
    );
    // IB_QP_CUR_STATE overrides the QP's own state (the user's claim is trusted).
    assert_eq!(
        chk_state(&qp(Rc, I), &a(Rts, Rtr), IB_QP_STATE | CUR | rc_rts),
        Ok(())
    );
    assert_eq!(
        chk_state(&qp(Rc, Rtr), &a(Rts, I), IB_QP_STATE | CUR | rc_rts),
        Err(Errno::Inval)
    );
    // SQD still draining: only ERR.
    let draining = QpNow {
        sq_draining: true,
        ..qp(Rc, Sqd)
    };
    assert_eq!(
        chk_state(&draining, &a(Rts, R), IB_QP_STATE),
        Err(Errno::Inval)
    );
    assert_eq!(
        chk_state(&draining, &a(R, R), IB_QP_STATE),
        Err(Errno::Inval)
    );
    assert_eq!(
        chk_state(&draining, &a(Sqd, R), IB_QP_STATE),
        Err(Errno::Inval)
    );
    assert_eq!(chk_state(&draining, &a(E, R), IB_QP_STATE), Ok(()));
    assert_eq!(chk_state(&qp(Rc, Sqd), &a(Rts, R), IB_QP_STATE), Ok(()));
    assert_eq!(
        chk_state(&qp(Rc, R), &a(E, R), IB_QP_STATE),
        Err(Errno::Inval)
    );
}

#[test]
fn chk_modify_order_and_no_state_bit() {
    let bad_port = ModifyAttr {
        port_num: 9,
        ..ModifyAttr::default()
    };
    let rts = qp(Rc, Rts);
    // Bits beyond the standard ones first, even RATE_LIMIT, which the table would allow.
    assert_eq!(
        chk_modify(&rts, &bad_port, PORT | IB_QP_RESERVED1),
        Err(Errno::OpNotSupp)
    );
    assert_eq!(
        chk_modify(&rts, &bad_port, IB_QP_RATE_LIMIT),
        Err(Errno::OpNotSupp)
    );
    assert_eq!(chk_modify(&rts, &bad_port, PORT), Err(Errno::Inval));
    // Without IB_QP_STATE no table applies: an RTS QP may change its destination or MTU.
    let mtu = ModifyAttr {
        path_mtu: 3,
        ..ModifyAttr::default()
    };
    assert_eq!(chk_modify(&rts, &mtu, DQPN | MTU | AV | RQ_PSN), Ok(()));
    // With it the table refuses the same change.
    let to_rts = ModifyAttr {
        qp_state: Rts,
        ..mtu
    };
    assert_eq!(
        chk_modify(&rts, &to_rts, IB_QP_STATE | DQPN),
        Err(Errno::Inval)
    );
    assert_eq!(chk_modify(&rts, &to_rts, IB_QP_STATE | RNR_T), Ok(()));
    // A full bring-up of an RC QP.
    let mut q = qp(Rc, R);
    let steps: [(QpState, u32); 3] = [
        (I, IB_QP_STATE | PKEY | PORT | ACC),
        (Rtr, IB_QP_STATE | AV | MTU | DQPN | RQ_PSN | DRD | RNR_T),
        (Rts, IB_QP_STATE | SQ_PSN | RD | RETRY | RNR | TMO),
    ];
    for (next, mask) in steps {
        let attr = ModifyAttr {
            qp_state: next,
            port_num: 1,
            path_mtu: 5,
            ..ModifyAttr::default()
        };
        assert_eq!(chk_modify(&q, &attr, mask), Ok(()), "{next:?}");
        q.state = next;
    }
}

proptest! {
    #[test]
    fn modify_is_ok_is_the_c_formula(
        cur in 0u32..7, next in 0u32..7, ty in 0u32..5, mask in any::<u32>(),
    ) {
        let cur = QpState::from_raw(cur).unwrap();
        let next = QpState::from_raw(next).unwrap();
        let ty = QpType::from_raw(ty).unwrap();
        let want = match expected(cur, next, ty) {
            None => false,
            Some(m) => {
                (mask & CUR == 0 || matches!(cur, Rtr | Rts | Sqd | Sqe))
                    && mask & m.required == m.required
                    && mask & !(m.required | m.optional | IB_QP_STATE | IB_QP_RATE_LIMIT) == 0
            }
        };
        prop_assert_eq!(modify_is_ok(cur, next, ty, mask), want);
    }

    #[test]
    fn checks_never_panic(
        raw_type in any::<u32>(), port in any::<u32>(), mask in any::<u32>(),
        state in 0u32..7, next in 0u32..7, ty in 0u32..5,
        mtu in any::<u32>(), rd in any::<u8>(), t in any::<u8>(), flags in any::<u32>(),
        draining in any::<bool>(), srq in any::<bool>(), cap in any::<[u32; 5]>(),
    ) {
        let cap = QpCap {
            max_send_wr: cap[0],
            max_recv_wr: cap[1],
            max_send_sge: cap[2],
            max_recv_sge: cap[3],
            max_inline_data: cap[4],
        };
        let _ = chk_init(raw_type, true, &cap, srq, port);
        let qp_type = QpType::from_raw(ty).unwrap();
        let state = QpState::from_raw(state).unwrap();
        let q = QpNow { qp_type, state, sq_draining: draining, has_srq: srq };
        let attr = ModifyAttr {
            qp_state: QpState::from_raw(next).unwrap(),
            cur_qp_state: state,
            port_num: port,
            cap,
            qp_access_flags: flags,
            alt_port_num: port,
            alt_timeout: t,
            path_mtu: mtu,
            max_rd_atomic: rd,
            timeout: t,
        };
        let r = chk_modify(&q, &attr, mask);
        if mask & !IB_QP_ATTR_STANDARD_BITS != 0 {
            prop_assert_eq!(r, Err(Errno::OpNotSupp));
        } else if r.is_ok() {
            prop_assert_eq!(chk_attr(&q, &attr, mask), Ok(()));
            if mask & IB_QP_STATE != 0 {
                let cur = attr_cur(&q, &attr, mask);
                prop_assert!(modify_is_ok(cur, attr.qp_state, qp_type, mask));
            }
        }
    }
}

fn attr_cur(q: &QpNow, a: &ModifyAttr, mask: u32) -> QpState {
    if mask & CUR != 0 {
        a.cur_qp_state
    } else {
        q.state
    }
}
