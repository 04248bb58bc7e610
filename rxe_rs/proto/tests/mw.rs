// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Memory window and fast-registration rules, case by case against `rxe_mw.c` / `rxe_mr.c`.

use crate::proto::mw::*;
use crate::proto::{params, Errno};

const PD: usize = 0x1000;
const OTHER_PD: usize = 0x2000;
const QP: u64 = 7;
const MW_KEY: u32 = (params::MIN_MW_INDEX + 3) << 8 | 0x42;

fn mr() -> MrView {
    MrView {
        pd: PD,
        access: ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_MW_BIND,
        iova: 0x10_000,
        length: 0x1000,
    }
}

fn bind(addr: u64, length: u64, access: u32) -> Bind {
    Bind {
        addr,
        length,
        access,
        rkey: MW_KEY.wrapping_add(1),
    }
}

#[test]
fn keys() {
    assert!(!rkey_is_mw(params::MAX_MR_INDEX << 8 | 0xff));
    assert!(rkey_is_mw(params::MIN_MW_INDEX << 8));
    assert!(rkey_is_mw(params::MAX_MW_INDEX << 8 | 0xff));
    assert!(!rkey_is_mw(0x1234));
    assert_eq!(with_key_byte(0x1234_56ff, 0x100), 0x1234_5600);
    assert_eq!(with_key_byte(0x1234_5601, 0xab), 0x1234_56ab);
    assert_eq!(ACCESS_SUPPORTED_MW, 0x3ff0_037f);
}

#[test]
fn new_windows() {
    let w1 = Window::new(MwType::One, PD, MW_KEY);
    assert_eq!(w1.state, MwState::Valid);
    let w2 = Window::new(MwType::Two, PD, MW_KEY);
    assert_eq!(w2.state, MwState::Free);
    // Neither grants anything before a bind.
    assert!(!w1.allows(MW_KEY, PD, QP, 0));
    assert!(!w2.allows(MW_KEY, PD, QP, 0));
    assert_eq!(MwType::from_raw(1), Some(MwType::One));
    assert_eq!(MwType::from_raw(2), Some(MwType::Two));
    assert_eq!(MwType::from_raw(3), None);
}

#[test]
fn type2_bind_use_invalidate() {
    let mut w = Window::new(MwType::Two, PD, MW_KEY);
    let b = bind(0x10_100, 0x100, ACCESS_REMOTE_WRITE);
    assert_eq!(w.check_bind(PD, Some(&mr()), &b), Ok(()));
    assert!(w.bind(QP, &b));
    assert_eq!(w.rkey, (MW_KEY & !0xff) | 0x43);
    assert_eq!(w.state, MwState::Valid);
    assert_eq!(w.qp, Some(QP));
    let key = w.rkey;
    assert!(w.allows(key, PD, QP, ACCESS_REMOTE_WRITE));
    assert!(!w.allows(MW_KEY, PD, QP, ACCESS_REMOTE_WRITE), "old key");
    assert!(!w.allows(key, PD, QP + 1, ACCESS_REMOTE_WRITE), "other QP");
    assert!(
        !w.allows(key, OTHER_PD, QP, ACCESS_REMOTE_WRITE),
        "other PD"
    );
    assert!(
        !w.allows(key, PD, QP, ACCESS_REMOTE_READ),
        "right not granted"
    );
    assert_eq!(w.target(0x10_100, 0x100), Some(0x10_100));
    assert_eq!(w.target(0x10_180, 0x80), Some(0x10_180));
    assert_eq!(w.target(0x10_0ff, 1), None);
    assert_eq!(w.target(0x10_180, 0x81), None);
    assert_eq!(w.target(u64::MAX, 2), None);
    // A bound type 2 window cannot be bound again.
    assert_eq!(w.check_bind(PD, Some(&mr()), &b), Err(Errno::Inval));
    assert_eq!(w.check_invalidate(), Ok(()));
    w.invalidate();
    assert_eq!(w.state, MwState::Free);
    assert!(!w.allows(key, PD, QP, ACCESS_REMOTE_WRITE));
    // Free again: bindable again (by any QP of the PD).
    assert_eq!(w.check_bind(PD, Some(&mr()), &b), Ok(()));
    w.dealloc();
    assert_eq!(w.state, MwState::Invalid);
    assert_eq!(w.check_invalidate(), Err(Errno::Inval));
    assert_eq!(w.check_bind(PD, Some(&mr()), &b), Err(Errno::Inval));
}

#[test]
fn type2_bind_checks() {
    let w = Window::new(MwType::Two, PD, MW_KEY);
    let ok = bind(0x10_000, 0x1000, ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
    assert_eq!(w.check_bind(PD, Some(&mr()), &ok), Ok(()));
    // o10-37.2.40: no MR / zero length.
    assert_eq!(w.check_bind(PD, None, &ok), Err(Errno::Inval));
    assert_eq!(
        w.check_bind(PD, Some(&mr()), &bind(0x10_000, 0, 0)),
        Err(Errno::Inval)
    );
    // C10-72: QP of another PD; MR of another PD.
    assert_eq!(w.check_bind(OTHER_PD, Some(&mr()), &ok), Err(Errno::Inval));
    let other = MrView {
        pd: OTHER_PD,
        ..mr()
    };
    assert_eq!(w.check_bind(PD, Some(&other), &ok), Err(Errno::Inval));
    // Zero-based MR.
    let zb = MrView {
        access: mr().access | ACCESS_ZERO_BASED,
        ..mr()
    };
    assert_eq!(w.check_bind(PD, Some(&zb), &ok), Err(Errno::Inval));
    // C10-73: no MW_BIND right on the MR.
    let nobind = MrView {
        access: ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE,
        ..mr()
    };
    assert_eq!(w.check_bind(PD, Some(&nobind), &ok), Err(Errno::Inval));
    // C10-74: a writable window on an MR without local write.
    let ro = MrView {
        access: ACCESS_MW_BIND | ACCESS_REMOTE_READ,
        ..mr()
    };
    assert_eq!(w.check_bind(PD, Some(&ro), &ok), Err(Errno::Inval));
    let atomic = bind(0x10_000, 8, ACCESS_REMOTE_ATOMIC);
    assert_eq!(w.check_bind(PD, Some(&ro), &atomic), Err(Errno::Inval));
    assert_eq!(
        w.check_bind(PD, Some(&ro), &bind(0x10_000, 8, ACCESS_REMOTE_READ)),
        Ok(())
    );
    // C10-75: outside the MR.
    for (addr, len) in [(0xffff, 2), (0x10_001, 0x1000), (u64::MAX, 2)] {
        assert_eq!(
            w.check_bind(PD, Some(&mr()), &bind(addr, len, 0)),
            Err(Errno::Inval),
            "{addr:#x}+{len:#x}"
        );
    }
    // Zero-based window: the length alone counts.
    assert_eq!(
        w.check_bind(PD, Some(&mr()), &bind(0, 0x1000, ACCESS_ZERO_BASED)),
        Ok(())
    );
    assert_eq!(
        w.check_bind(PD, Some(&mr()), &bind(0, 0x1001, ACCESS_ZERO_BASED)),
        Err(Errno::Inval)
    );
    // Unsupported rights.
    assert_eq!(
        w.check_bind(PD, Some(&mr()), &bind(0x10_000, 8, 1 << 7)),
        Err(Errno::OpNotSupp)
    );
}

#[test]
fn zero_based_target() {
    let mut w = Window::new(MwType::Two, PD, MW_KEY);
    let b = bind(0x100, 0x200, ACCESS_ZERO_BASED | ACCESS_REMOTE_READ);
    assert_eq!(w.check_bind(PD, Some(&mr()), &b), Ok(()));
    w.bind(QP, &b);
    assert_eq!(w.target(0, 0x200), Some(0x100));
    assert_eq!(w.target(0x10, 0x10), Some(0x110));
    assert_eq!(w.target(0x1f0, 0x11), None);
}

#[test]
fn type1_bind_and_unbind() {
    let mut w = Window::new(MwType::One, PD, MW_KEY);
    let b = bind(0x10_000, 0x1000, ACCESS_REMOTE_WRITE);
    assert_eq!(w.check_bind(PD, Some(&mr()), &b), Ok(()));
    assert!(w.bind(QP, &b));
    assert_eq!(w.qp, None, "type 1 belongs to no QP");
    let key = w.rkey;
    assert!(
        w.allows(key, PD, QP + 5, ACCESS_REMOTE_WRITE),
        "any QP of the PD"
    );
    // A type 1 window is rebound while valid; zero length unbinds it.
    let unbind = Bind {
        addr: 0x10_000,
        length: 0,
        access: 0,
        rkey: key.wrapping_add(1),
    };
    assert_eq!(w.check_bind(PD, None, &unbind), Ok(()));
    assert!(!w.bind(QP, &unbind));
    assert_eq!(w.state, MwState::Valid);
    assert!(!w.allows(w.rkey, PD, QP, 0));
    // Zero-based type 1 windows are refused (o10-36.2.2); so is invalidation (o10-37.2.26).
    assert_eq!(
        w.check_bind(PD, Some(&mr()), &bind(0, 8, ACCESS_ZERO_BASED)),
        Err(Errno::Inval)
    );
    assert_eq!(w.check_invalidate(), Err(Errno::Inval));
    // QP of another PD.
    assert_eq!(w.check_bind(OTHER_PD, None, &unbind), Err(Errno::Inval));
    w.dealloc();
    assert_eq!(w.check_bind(PD, None, &unbind), Err(Errno::Inval));
}

#[test]
fn fast_reg_rules() {
    let key = 0x0000_1234;
    assert_eq!(check_reg_fast_mr(true, PD, PD, key, 0x0000_12ff), Ok(()));
    assert_eq!(
        check_reg_fast_mr(false, PD, PD, key, key),
        Err(Errno::Inval)
    );
    assert_eq!(
        check_reg_fast_mr(true, PD, OTHER_PD, key, key),
        Err(Errno::Inval)
    );
    assert_eq!(
        check_reg_fast_mr(true, PD, PD, key, 0x0000_1334),
        Err(Errno::Inval)
    );
    assert_eq!(check_invalidate_mr(key, key, 0, true), Ok(()));
    assert_eq!(
        check_invalidate_mr(key, key + 1, 0, true),
        Err(Errno::Inval)
    );
    assert_eq!(check_invalidate_mr(key, key, 1, true), Err(Errno::Inval));
    assert_eq!(check_invalidate_mr(key, key, 0, false), Err(Errno::Inval));
}
