// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Send WQEs (`proto/wqe/send.rs`, and the slot reads of `proto/wqe/sges.rs`): slots built by
//! hand at the C offsets, the writer against the C post path and `validate_send_wr`, round
//! trips, and hostile and mutated slots.

use std::vec;
use std::vec::Vec;

use proptest::prelude::*;

use super::{allowed, set32, set64, sge_strategy};
use crate::proto::params::PORT_MAX_MSG_SZ;
use crate::proto::qp_state::QpType;
use crate::proto::queue::send_wqe_size;
use crate::proto::wqe::*;

fn user(max_sge: u32, max_inline: u32) -> SendLimits {
    SendLimits {
        max_sge,
        max_inline,
        allow_kernel_only: false,
    }
}

fn kernel(max_sge: u32, max_inline: u32) -> SendLimits {
    SendLimits {
        allow_kernel_only: true,
        ..user(max_sge, max_inline)
    }
}

/// A send slot of `len` bytes as librxe writes it, with literal C offsets; `sges` as (addr,
/// length, lkey).
fn raw_send(
    len: usize,
    opcode: u32,
    flags: u32,
    length: u32,
    num_sge: u32,
    sges: &[(u64, u32, u32)],
) -> Vec<u8> {
    let mut v = vec![0u8; len];
    set64(&mut v, 0, 0x1122_3344_5566_7788);
    set32(&mut v, 8, 0xdead_beef); // reserved / old num_sge: ignored
    set32(&mut v, 12, opcode);
    set32(&mut v, 16, flags);
    v[20..24].copy_from_slice(&[0x12, 0x34, 0x56, 0x78]); // ex: imm as stored
    set64(&mut v, 152, 0xaaaa_0000);
    set32(&mut v, 184, length);
    set32(&mut v, 188, length);
    set32(&mut v, 196, num_sge);
    for (i, &(addr, l, lkey)) in sges.iter().enumerate() {
        let o = 208 + 16 * i;
        set64(&mut v, o, addr);
        set32(&mut v, o + 8, l);
        set32(&mut v, o + 12, lkey);
    }
    v
}

#[test]
fn parses_an_rc_send_with_sges() {
    let slot = raw_send(
        256,
        IB_WR_SEND_WITH_IMM,
        IB_SEND_SIGNALED,
        300,
        2,
        &[(0x1000, 100, 7), (0x9000, 200, 8)],
    );
    let wqe = SendWqe::parse(&slot, QpType::Rc, user(2, 0)).unwrap();
    assert_eq!(
        wqe,
        SendWqe {
            wr_id: 0x1122_3344_5566_7788,
            opcode: IB_WR_SEND_WITH_IMM,
            send_flags: IB_SEND_SIGNALED,
            ex: u32::from_le_bytes([0x12, 0x34, 0x56, 0x78]),
            detail: WrDetail::None,
            iova: 0xaaaa_0000,
            length: 300,
            num_sge: 2,
            mask: WrMask::INLINE | WrMask::SEND,
            data: DataKind::Sges,
        }
    );
    assert_eq!(wqe.imm_be_bytes(), [0x12, 0x34, 0x56, 0x78]);
    assert_eq!(wqe.imm_data(), 0x1234_5678);
    assert_eq!(imm_to_ex(wqe.imm_data()), wqe.ex);
    assert_eq!(ex_to_imm(imm_to_ex(0xcafe_f00d)), 0xcafe_f00d);
    assert!(!wqe.is_inline());
    assert_eq!(
        sge(&slot, 1),
        Some(Sge {
            addr: 0x9000,
            length: 200,
            lkey: 8
        })
    );
    assert_eq!(sge(&slot, 3), None, "past the slot");
    assert_eq!(wqe.wr().opcode, IB_WR_SEND_WITH_IMM);
}

#[test]
fn c_progress_state_in_the_slot_is_ignored() {
    let clean = raw_send(256, IB_WR_SEND, 0, 10, 1, &[(0x1000, 10, 1)]);
    let mut dirty = clean.clone();
    for off in [144, 148, 160, 164, 168, 172, 176, 180, 188, 192, 200, 204] {
        set32(&mut dirty, off, 0xffff_ffff);
    }
    let limits = user(2, 0);
    assert_eq!(
        SendWqe::parse(&clean, QpType::Rc, limits),
        SendWqe::parse(&dirty, QpType::Rc, limits)
    );
}

#[test]
fn decodes_each_union_member() {
    let mut v = raw_send(256, IB_WR_RDMA_WRITE, 0, 0, 0, &[]);
    set64(&mut v, 24, 0x0102_0304_0506_0708);
    set32(&mut v, 32, 0x1111);
    let w = SendWqe::parse(&v, QpType::Uc, user(1, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Rdma {
            remote_addr: 0x0102_0304_0506_0708,
            rkey: 0x1111
        }
    );
    assert_eq!(w.detail.remote_addr(), Some(0x0102_0304_0506_0708));

    let mut v = raw_send(256, IB_WR_ATOMIC_CMP_AND_SWP, 0, 8, 1, &[(0x40, 8, 3)]);
    set64(&mut v, 24, 0x1000);
    set64(&mut v, 32, 5);
    set64(&mut v, 40, 6);
    set32(&mut v, 48, 0x2222);
    let w = SendWqe::parse(&v, QpType::Rc, user(1, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Atomic {
            remote_addr: 0x1000,
            compare_add: 5,
            swap: 6,
            rkey: 0x2222
        }
    );
    assert_eq!(w.mask, WrMask::ATOMIC);

    for qpt in [QpType::Ud, QpType::Gsi] {
        let mut v = raw_send(256, IB_WR_SEND, 0, 0, 0, &[]);
        set32(&mut v, 24, 0x00ab_cdef);
        set32(&mut v, 28, 0x8001_0000);
        v[32..34].copy_from_slice(&3u16.to_le_bytes());
        set32(&mut v, 36, 42);
        v[56] = 0x5a;
        v[143] = 0xa5;
        let w = SendWqe::parse(&v, qpt, user(1, 0)).unwrap();
        assert_eq!(
            w.detail,
            WrDetail::Ud {
                remote_qpn: 0x00ab_cdef,
                remote_qkey: 0x8001_0000,
                pkey_index: 3,
                ah_num: 42
            }
        );
        let av = ud_av_bytes(&v).unwrap();
        assert_eq!((av.len(), av[0], av[87]), (88, 0x5a, 0xa5));
    }
    assert_eq!(ud_av_bytes(&[0; 143]), None);

    let mut v = raw_send(256, IB_WR_FLUSH, 0, 0x1234_5678, 9, &[]);
    set64(&mut v, 24, 0x7000);
    set32(&mut v, 32, 4096);
    set32(&mut v, 36, 0x3333);
    v[40] = 2;
    v[41] = 1;
    let w = SendWqe::parse(&v, QpType::Rc, user(0, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Flush {
            remote_addr: 0x7000,
            length: 4096,
            rkey: 0x3333,
            type_: 2,
            level: 1
        }
    );
    // FLUSH: dma.length passes through (the C RETH length), the SGE count is ignored.
    assert_eq!(
        (w.length, w.num_sge, w.data),
        (0x1234_5678, 0, DataKind::None)
    );

    let mut v = raw_send(256, IB_WR_BIND_MW, 0, 77, 1000, &[]);
    set64(&mut v, 24, 0x8000);
    set64(&mut v, 32, 0x1_0000_0000);
    set32(&mut v, 40, 1);
    set32(&mut v, 44, 2);
    set32(&mut v, 48, 3);
    set32(&mut v, 52, 4);
    let w = SendWqe::parse(&v, QpType::Uc, user(0, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Mw {
            addr: 0x8000,
            length: 0x1_0000_0000,
            mr_lkey: 1,
            mw_rkey: 2,
            rkey: 3,
            access: 4
        }
    );
    // Local operations have no data, whatever the dma fields say.
    assert_eq!((w.length, w.num_sge, w.data), (0, 0, DataKind::None));

    let mut v = raw_send(256, IB_WR_REG_MR, 0, 0, 0, &[]);
    set64(&mut v, 24, 0xffff_8880_0000_0000); // a kernel pointer: never read
    set32(&mut v, 32, 0x1234_56ab);
    set32(&mut v, 36, 0xf);
    let w = SendWqe::parse(&v, QpType::Rc, kernel(0, 0)).unwrap();
    assert_eq!(
        w.detail,
        WrDetail::Reg {
            key: 0x1234_56ab,
            access: 0xf
        }
    );
    assert_eq!(w.detail.remote_addr(), None);

    let w = SendWqe::parse(
        &raw_send(256, IB_WR_LOCAL_INV, 0, 0, 0, &[]),
        QpType::Rc,
        user(0, 0),
    )
    .unwrap();
    assert_eq!(w.detail, WrDetail::None);
    assert_eq!(
        w.invalidate_rkey(),
        u32::from_le_bytes([0x12, 0x34, 0x56, 0x78])
    );
}

#[test]
fn refuses_bad_opcodes() {
    let limits = kernel(4, 64);
    for (qpt, op) in [
        (QpType::Rc, IB_WR_LSO),
        (QpType::Rc, IB_WR_MASKED_ATOMIC_CMP_AND_SWP),
        (QpType::Rc, IB_WR_REG_MR_INTEGRITY),
        (QpType::Rc, 0xf0),
        (QpType::Rc, u32::MAX),
        (QpType::Uc, IB_WR_RDMA_READ),
        (QpType::Uc, IB_WR_ATOMIC_FETCH_AND_ADD),
        (QpType::Ud, IB_WR_RDMA_WRITE),
        (QpType::Gsi, IB_WR_SEND_WITH_INV),
        (QpType::Smi, IB_WR_SEND),
    ] {
        let slot = raw_send(256, op, 0, 0, 0, &[]);
        assert_eq!(
            SendWqe::parse(&slot, qpt, limits),
            Err(WqeError::BadOpcode(op)),
            "{op:#x} on {qpt:?}"
        );
    }
    let slot = raw_send(256, IB_WR_REG_MR, 0, 0, 0, &[]);
    assert_eq!(
        SendWqe::parse(&slot, QpType::Rc, user(4, 64)),
        Err(WqeError::KernelOnlyOpcode(IB_WR_REG_MR))
    );
    assert!(SendWqe::parse(&slot, QpType::Rc, kernel(4, 64)).is_ok());
}

#[test]
fn refuses_bad_sge_lists() {
    let rc = QpType::Rc;
    let ok = raw_send(240, IB_WR_RDMA_READ, 0, 30, 2, &[(0, 10, 1), (0, 20, 1)]);
    assert_eq!(SendWqe::parse(&ok, rc, user(2, 0)).unwrap().length, 30);
    assert_eq!(
        SendWqe::parse(&ok, rc, user(1, 0)),
        Err(WqeError::TooManySge {
            num_sge: 2,
            max_sge: 1
        })
    );
    assert_eq!(
        SendWqe::parse(&ok[..239], rc, user(2, 0)),
        Err(WqeError::DataOutOfSlot)
    );
    assert_eq!(
        SendWqe::parse(&ok[..207], rc, user(2, 0)),
        Err(WqeError::Truncated)
    );
    let lie = raw_send(240, IB_WR_SEND, 0, 31, 2, &[(0, 10, 1), (0, 20, 1)]);
    assert_eq!(
        SendWqe::parse(&lie, rc, user(2, 0)),
        Err(WqeError::LengthMismatch {
            length: 31,
            sum: 30
        })
    );
    let wrap = raw_send(240, IB_WR_SEND, 0, 4, 2, &[(0, 0xffff_fffe, 1), (0, 6, 1)]);
    assert_eq!(
        SendWqe::parse(&wrap, rc, user(2, 0)),
        Err(WqeError::LengthOverflow)
    );
    let big = raw_send(
        240,
        IB_WR_RDMA_WRITE,
        0,
        1 << 31,
        2,
        &[(0, 1 << 30, 1), (0, 1 << 30, 1)],
    );
    assert!(SendWqe::parse(&big, rc, user(2, 0)).is_ok());
    let big = raw_send(
        240,
        IB_WR_RDMA_WRITE,
        0,
        (1 << 31) + 1,
        2,
        &[(0, 1 << 31, 1), (0, 1, 1)],
    );
    assert_eq!(
        SendWqe::parse(&big, rc, user(2, 0)),
        Err(WqeError::MessageTooLong((1 << 31) + 1))
    );
    // A hostile SGE count cannot make the parser walk far.
    let huge = raw_send(240, IB_WR_SEND, 0, 0, u32::MAX, &[]);
    assert_eq!(
        SendWqe::parse(&huge, rc, user(u32::MAX, 0)),
        Err(WqeError::DataOutOfSlot)
    );
    // No SGEs, no data.
    let empty = raw_send(208, IB_WR_SEND, 0, 0, 0, &[]);
    let w = SendWqe::parse(&empty, rc, user(0, 0)).unwrap();
    assert_eq!((w.length, w.num_sge, w.data), (0, 0, DataKind::Sges));
}

#[test]
fn inline_data_is_bounded() {
    let mut slot = raw_send(208 + 64, IB_WR_SEND, IB_SEND_INLINE, 64, 3, &[]);
    for (i, b) in slot[208..].iter_mut().enumerate() {
        *b = i as u8;
    }
    let w = SendWqe::parse(&slot, QpType::Uc, user(0, 64)).unwrap();
    assert_eq!((w.length, w.num_sge, w.data), (64, 0, DataKind::Inline));
    assert!(w.is_inline());
    assert_eq!(inline_data(&slot, w.length).unwrap()[63], 63);
    assert_eq!(inline_data(&slot, 65), None);
    assert_eq!(
        SendWqe::parse(&slot, QpType::Uc, user(0, 63)),
        Err(WqeError::InlineTooLong {
            length: 64,
            max_inline: 63
        })
    );
    assert_eq!(
        SendWqe::parse(&slot[..271], QpType::Uc, user(0, 64)),
        Err(WqeError::DataOutOfSlot)
    );
    // The inline flag means nothing to opcodes without WR_INLINE_MASK: C ignores it too.
    let read = raw_send(224, IB_WR_RDMA_READ, IB_SEND_INLINE, 5, 1, &[(0, 5, 1)]);
    let w = SendWqe::parse(&read, QpType::Rc, user(1, 0)).unwrap();
    assert_eq!(w.data, DataKind::Sges);
}

#[test]
fn atomic_write_carries_eight_bytes() {
    let mut slot = raw_send(216, IB_WR_ATOMIC_WRITE, 0, 8, 0, &[]);
    slot[208..216].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    set64(&mut slot, 24, 0x5000);
    set32(&mut slot, 32, 9);
    let w = SendWqe::parse(&slot, QpType::Rc, user(0, 0)).unwrap();
    assert_eq!((w.length, w.data), (8, DataKind::AtomicWrite));
    assert_eq!(
        w.detail,
        WrDetail::Rdma {
            remote_addr: 0x5000,
            rkey: 9
        }
    );
    assert_eq!(atomic_write_value(&slot), Some([1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(
        SendWqe::parse(&slot[..215], QpType::Rc, user(0, 0)),
        Err(WqeError::DataOutOfSlot)
    );
    set32(&mut slot, 184, 4000);
    assert_eq!(
        SendWqe::parse(&slot, QpType::Rc, user(0, 0)),
        Err(WqeError::AtomicWriteLength(4000))
    );
}

#[test]
fn writes_what_the_c_post_path_writes() {
    let mut slot = vec![0xa5u8; 256];
    let wr = SendWr {
        wr_id: 77,
        opcode: IB_WR_RDMA_WRITE_WITH_IMM,
        send_flags: IB_SEND_SIGNALED | IB_SEND_SOLICITED,
        ex: imm_to_ex(0x0102_0304),
        detail: WrDetail::Rdma {
            remote_addr: 0x4000,
            rkey: 0x55,
        },
    };
    let sges = [
        Sge {
            addr: 0x10,
            length: 3,
            lkey: 1,
        },
        Sge {
            addr: 0x20,
            length: 4,
            lkey: 2,
        },
    ];
    let w = write_send_wqe(
        &mut slot,
        QpType::Rc,
        kernel(2, 0),
        &wr,
        SendData::Sges(&sges),
    )
    .unwrap();
    assert_eq!((w.length, w.num_sge, w.iova), (7, 2, 0x4000));
    assert_eq!(w.wr(), wr);
    // The C layout, by hand.
    assert_eq!(&slot[0..8], &77u64.to_le_bytes());
    assert_eq!(&slot[8..12], &[0; 4]);
    assert_eq!(&slot[12..16], &1u32.to_le_bytes());
    assert_eq!(&slot[20..24], &[1, 2, 3, 4]);
    assert_eq!(&slot[24..32], &0x4000u64.to_le_bytes());
    assert_eq!(&slot[32..36], &0x55u32.to_le_bytes());
    assert!(slot[36..152].iter().all(|&b| b == 0));
    assert_eq!(&slot[152..160], &0x4000u64.to_le_bytes());
    assert!(slot[160..184].iter().all(|&b| b == 0));
    assert_eq!(&slot[184..188], &7u32.to_le_bytes()); // length
    assert_eq!(&slot[188..192], &7u32.to_le_bytes()); // resid
    assert_eq!(&slot[192..196], &[0; 4]); // cur_sge
    assert_eq!(&slot[196..200], &2u32.to_le_bytes()); // num_sge
    assert_eq!(&slot[200..208], &[0; 8]); // sge_offset, reserved
    assert_eq!(&slot[224..232], &0x20u64.to_le_bytes());
    assert!(slot[240..].iter().all(|&b| b == 0xa5), "past the data");
}

/// C `validate_send_wr`: a kernel atomic has 8 bytes of SGEs and an 8-byte aligned remote
/// address; `IB_SEND_INLINE` only on an opcode that can carry inline data.
#[test]
fn writer_refuses_what_validate_send_wr_does() {
    let rc = QpType::Rc;
    let mut slot = vec![0u8; 256];
    let atomic = |remote_addr| SendWr {
        wr_id: 1,
        opcode: IB_WR_ATOMIC_FETCH_AND_ADD,
        send_flags: 0,
        ex: 0,
        detail: WrDetail::Atomic {
            remote_addr,
            compare_add: 1,
            swap: 0,
            rkey: 7,
        },
    };
    let sge = |length| Sge {
        addr: 0x100,
        length,
        lkey: 3,
    };
    let ok = write_send_wqe(
        &mut slot,
        rc,
        kernel(2, 0),
        &atomic(0x1000),
        SendData::Sges(&[sge(8)]),
    );
    assert_eq!(ok.map(|w| w.length), Ok(8));
    let halves = [sge(4), sge(4)];
    assert!(write_send_wqe(
        &mut slot,
        rc,
        kernel(2, 0),
        &atomic(0x1000),
        SendData::Sges(&halves)
    )
    .is_ok());
    for (addr, sges) in [
        (0x1004, &[sge(8)][..]),
        (0x1000, &[sge(4)][..]),
        (0x1000, &[sge(16)][..]),
    ] {
        assert_eq!(
            write_send_wqe(
                &mut slot,
                rc,
                kernel(2, 0),
                &atomic(addr),
                SendData::Sges(sges)
            ),
            Err(WqeError::BadAtomic),
            "{addr:#x} {sges:?}"
        );
    }
    let read = SendWr {
        wr_id: 2,
        opcode: IB_WR_RDMA_READ,
        send_flags: IB_SEND_INLINE,
        ex: 0,
        detail: WrDetail::Rdma {
            remote_addr: 0x2000,
            rkey: 7,
        },
    };
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(2, 16),
            &read,
            SendData::Sges(&[sge(8)])
        ),
        Err(WqeError::InlineNotAllowed(IB_WR_RDMA_READ))
    );
    let plain = SendWr {
        send_flags: 0,
        ..read
    };
    assert!(write_send_wqe(
        &mut slot,
        rc,
        kernel(2, 16),
        &plain,
        SendData::Sges(&[sge(8)])
    )
    .is_ok());
}

#[test]
fn writer_refuses_inconsistent_requests() {
    let rc = QpType::Rc;
    let mut slot = vec![0u8; 256];
    let send = SendWr {
        wr_id: 1,
        opcode: IB_WR_SEND,
        send_flags: 0,
        ex: 0,
        detail: WrDetail::None,
    };
    let inline = SendData::Inline(&[1, 2, 3]);
    assert_eq!(
        write_send_wqe(&mut slot, rc, kernel(1, 16), &send, inline),
        Err(WqeError::Inconsistent)
    );
    let flagged = SendWr {
        send_flags: IB_SEND_INLINE,
        ..send
    };
    assert!(write_send_wqe(&mut slot, rc, kernel(1, 16), &flagged, inline).is_ok());
    assert_eq!(
        write_send_wqe(&mut slot, rc, kernel(1, 2), &flagged, inline),
        Err(WqeError::InlineTooLong {
            length: 3,
            max_inline: 2
        })
    );
    let wrong_detail = SendWr {
        detail: WrDetail::Rdma {
            remote_addr: 1,
            rkey: 2,
        },
        ..send
    };
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(1, 16),
            &wrong_detail,
            SendData::Sges(&[])
        ),
        Err(WqeError::Inconsistent)
    );
    assert_eq!(
        write_send_wqe(
            &mut slot,
            QpType::Uc,
            kernel(1, 16),
            &send,
            SendData::AtomicWrite([0; 8])
        ),
        Err(WqeError::Inconsistent)
    );
    let sges = [Sge::default(); 4];
    let mut short = vec![0x77u8; 208 + 63];
    assert_eq!(
        write_send_wqe(&mut short, rc, kernel(4, 0), &send, SendData::Sges(&sges)),
        Err(WqeError::DataOutOfSlot)
    );
    assert!(short.iter().all(|&b| b == 0x77), "nothing written");
    assert_eq!(
        write_send_wqe(
            &mut short[..207],
            rc,
            kernel(4, 0),
            &send,
            SendData::Sges(&[])
        ),
        Err(WqeError::Truncated)
    );
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(4, 0),
            &send,
            SendData::Sges(&sges[..3])
        ),
        Ok(SendWqe::parse(&slot, rc, kernel(4, 0)).unwrap())
    );
    assert_eq!(
        write_send_wqe(
            &mut slot,
            rc,
            kernel(2, 0),
            &send,
            SendData::Sges(&sges[..3])
        ),
        Err(WqeError::TooManySge {
            num_sge: 3,
            max_sge: 2
        })
    );
    let over = [
        Sge {
            length: u32::MAX,
            ..Sge::default()
        },
        Sge {
            length: 1,
            ..Sge::default()
        },
    ];
    assert_eq!(
        write_send_wqe(&mut slot, rc, kernel(2, 0), &send, SendData::Sges(&over)),
        Err(WqeError::LengthOverflow)
    );
    let reg = SendWr {
        opcode: IB_WR_REG_MR,
        detail: WrDetail::Reg { key: 5, access: 1 },
        ..send
    };
    assert_eq!(
        write_send_wqe(&mut slot, rc, user(2, 0), &reg, SendData::None),
        Err(WqeError::KernelOnlyOpcode(IB_WR_REG_MR))
    );
    let w = write_send_wqe(&mut slot, rc, kernel(2, 0), &reg, SendData::None).unwrap();
    assert_eq!(&slot[24..32], &[0; 8], "no MR pointer");
    assert_eq!(w.detail, WrDetail::Reg { key: 5, access: 1 });
}

/// `flags`, the detail numbers `n` and the SGEs made into a WR C's `validate_send_wr` takes:
/// without [`IB_SEND_INLINE`] where the opcode carries no inline data; for an atomic, an 8-byte
/// aligned remote address (`n[0]`) and one 8-byte SGE (at the first of `sges`, if any)
/// returned in place of `sges`.
fn kernel_valid(
    mask: WrMask,
    flags: u32,
    n: [u64; 4],
    sges: &[Sge],
) -> (u32, [u64; 4], Option<Sge>) {
    let flags = if mask.contains(WrMask::INLINE) {
        flags
    } else {
        flags & !IB_SEND_INLINE
    };
    if !mask.contains(WrMask::ATOMIC) {
        return (flags, n, None);
    }
    let sge = Sge {
        length: 8,
        ..sges.first().copied().unwrap_or_default()
    };
    (flags, [n[0] & !7, n[1], n[2], n[3]], Some(sge))
}

/// The detail `opcode` reads back on `qpt`, filled from `n`.
fn detail_for(qpt: QpType, opcode: u32, n: [u64; 4]) -> WrDetail {
    let lo = |x: u64| x as u32;
    if matches!(qpt, QpType::Ud | QpType::Gsi) {
        return WrDetail::Ud {
            remote_qpn: lo(n[0]),
            remote_qkey: lo(n[1]),
            pkey_index: n[2] as u16,
            ah_num: lo(n[3]),
        };
    }
    match opcode {
        IB_WR_RDMA_WRITE
        | IB_WR_RDMA_WRITE_WITH_IMM
        | IB_WR_RDMA_READ
        | IB_WR_RDMA_READ_WITH_INV
        | IB_WR_ATOMIC_WRITE => WrDetail::Rdma {
            remote_addr: n[0],
            rkey: lo(n[1]),
        },
        IB_WR_ATOMIC_CMP_AND_SWP | IB_WR_ATOMIC_FETCH_AND_ADD => WrDetail::Atomic {
            remote_addr: n[0],
            compare_add: n[1],
            swap: n[2],
            rkey: lo(n[3]),
        },
        IB_WR_FLUSH => WrDetail::Flush {
            remote_addr: n[0],
            length: lo(n[1]),
            rkey: lo(n[2]),
            type_: n[3] as u8,
            level: (n[3] >> 8) as u8,
        },
        IB_WR_BIND_MW => WrDetail::Mw {
            addr: n[0],
            length: n[1],
            mr_lkey: lo(n[2]),
            mw_rkey: (n[2] >> 32) as u32,
            rkey: lo(n[3]),
            access: (n[3] >> 32) as u32,
        },
        IB_WR_REG_MR => WrDetail::Reg {
            key: lo(n[0]),
            access: lo(n[1]),
        },
        _ => WrDetail::None,
    }
}

fn qpt() -> impl Strategy<Value = QpType> {
    prop::sample::select(vec![QpType::Gsi, QpType::Rc, QpType::Uc, QpType::Ud])
}

/// What a valid parse guarantees, checked against the slot.
fn check_send(slot: &[u8], qpt: QpType, limits: SendLimits, w: &SendWqe) {
    assert_eq!(Some(w.mask), wr_opcode_mask(w.opcode, qpt));
    assert!(limits.allow_kernel_only || !wr_opcode_is_kernel_only(w.opcode));
    assert_eq!(w.data, DataKind::of(w.mask, w.send_flags));
    match w.data {
        DataKind::Sges => {
            assert!(w.num_sge <= limits.max_sge);
            let mut sum = 0u64;
            for i in 0..w.num_sge {
                sum += u64::from(sge(slot, i).unwrap().length);
            }
            assert_eq!(sum, u64::from(w.length));
            assert!(w.length <= PORT_MAX_MSG_SZ);
        }
        DataKind::Inline => {
            assert!(w.length <= limits.max_inline);
            assert_eq!(
                inline_data(slot, w.length).unwrap().len(),
                w.length as usize
            );
            assert_eq!(w.num_sge, 0);
        }
        DataKind::AtomicWrite => {
            assert_eq!((w.length, w.num_sge), (8, 0));
            assert!(atomic_write_value(slot).is_some());
        }
        DataKind::None => assert_eq!(w.num_sge, 0),
    }
    // The SGE walk of a valid WQE never runs out of SGEs or slot.
    if w.data == DataKind::Sges {
        let mut cursor = DmaCursor::new(w.length);
        while !cursor.is_done() {
            match cursor.next_chunk(|i| sge(slot, i), w.num_sge, cursor.resid.min(1 << 20)) {
                Ok(Some(_)) => {}
                Err(DmaError::AddrOverflow) => break,
                other => panic!("{other:?}"),
            }
        }
    }
}

proptest! {
    #[test]
    fn send_wqes_round_trip(
        qpt in qpt(),
        pick in any::<prop::sample::Index>(),
        wr_id in any::<u64>(),
        flags in 0..32u32,
        ex in any::<u32>(),
        n in any::<[u64; 4]>(),
        max_sge in 0..8u32,
        max_inline in 0..300u32,
        sges in prop::collection::vec(sge_strategy(), 0..8),
        inline in prop::collection::vec(any::<u8>(), 0..300),
        value in any::<[u8; 8]>(),
        fill in any::<u8>(),
    ) {
        let ops = allowed(qpt);
        let opcode = ops[pick.index(ops.len())];
        let size = send_wqe_size(max_sge, max_inline);
        let limits = kernel(size.max_sge, size.max_inline);
        let mask = wr_opcode_mask(opcode, qpt).unwrap();
        let sges = &sges[..sges.len().min(size.max_sge as usize)];
        // WRs C's `validate_send_wr` takes: an atomic's 8 bytes at an aligned address, inline
        // only where the opcode carries it (its refusals: `writer_refuses_what_validate_send_wr_does`).
        let (flags, n, atomic_sge) = kernel_valid(mask, flags, n, sges);
        let sges = atomic_sge.as_ref().map_or(sges, core::slice::from_ref);
        let wr = SendWr { wr_id, opcode, send_flags: flags, ex, detail: detail_for(qpt, opcode, n) };
        if mask.contains(WrMask::ATOMIC) && size.max_sge == 0 {
            // No room for an atomic's SGE: without one it has no 8 bytes.
            let mut slot = vec![fill; size.elem_size as usize];
            prop_assert_eq!(
                write_send_wqe(&mut slot, qpt, limits, &wr, SendData::Sges(&[])).map(|_| ()),
                Err(WqeError::BadAtomic)
            );
            return Ok(());
        }
        if DataKind::of(mask, flags) == DataKind::AtomicWrite && size.max_inline < 8 {
            // No room for an ATOMIC WRITE's 8 bytes (a send queue without data room): refused.
            let mut slot = vec![fill; size.elem_size as usize];
            prop_assert_eq!(
                write_send_wqe(&mut slot, qpt, limits, &wr, SendData::AtomicWrite(value))
                    .map(|_| ()),
                Err(WqeError::DataOutOfSlot)
            );
            return Ok(());
        }
        let inline = &inline[..inline.len().min(size.max_inline as usize)];
        let data = match DataKind::of(mask, flags) {
            DataKind::None => SendData::None,
            DataKind::Sges => SendData::Sges(sges),
            DataKind::Inline => SendData::Inline(inline),
            DataKind::AtomicWrite => SendData::AtomicWrite(value),
        };
        let mut slot = vec![fill; size.elem_size as usize];
        let w = write_send_wqe(&mut slot, qpt, limits, &wr, data).unwrap();
        prop_assert_eq!(w.wr(), wr);
        prop_assert_eq!(SendWqe::parse(&slot, qpt, limits), Ok(w));
        prop_assert_eq!(w.iova, wr.detail.remote_addr().unwrap_or(0));
        match data {
            SendData::Sges(list) => {
                prop_assert_eq!(w.num_sge as usize, list.len());
                for (i, s) in list.iter().enumerate() {
                    prop_assert_eq!(sge(&slot, i as u32), Some(*s));
                }
            }
            SendData::Inline(bytes) => {
                prop_assert_eq!(inline_data(&slot, w.length), Some(bytes));
            }
            SendData::AtomicWrite(v) => prop_assert_eq!(atomic_write_value(&slot), Some(v)),
            SendData::None => prop_assert_eq!(w.num_sge, 0),
        }
        check_send(&slot, qpt, limits, &w);
        // A user ring never gets kernel-only opcodes through.
        let as_user = SendWqe::parse(&slot, qpt, user(limits.max_sge, limits.max_inline));
        if wr_opcode_is_kernel_only(opcode) {
            prop_assert_eq!(as_user, Err(WqeError::KernelOnlyOpcode(opcode)));
        } else {
            prop_assert_eq!(as_user, Ok(w));
        }
    }

    /// Any bytes: no panic, and whatever parses keeps its promises.
    #[test]
    fn hostile_send_slots(
        slot in prop::collection::vec(any::<u8>(), 0..800),
        qpt in prop::sample::select(QpType::ALL.to_vec()),
        max_sge in prop::sample::select(vec![0u32, 1, 4, 32, u32::MAX]),
        max_inline in prop::sample::select(vec![0u32, 16, 512, u32::MAX]),
        allow in any::<bool>(),
    ) {
        let limits = SendLimits { max_sge, max_inline, allow_kernel_only: allow };
        if let Ok(w) = SendWqe::parse(&slot, qpt, limits) {
            check_send(&slot, qpt, limits, &w);
        }
        for i in [0, 1, 5, u32::MAX] {
            let _ = sge(&slot, i);
            let _ = recv_sge(&slot, i);
        }
        let _ = inline_data(&slot, u32::MAX);
        let _ = atomic_write_value(&slot);
        let _ = ud_av_bytes(&slot);
        if let Ok(r) = RecvWqe::parse(&slot, max_sge) {
            prop_assert!(r.num_sge <= max_sge);
            let mut sum = 0u64;
            for i in 0..r.num_sge {
                sum += u64::from(recv_sge(&slot, i).unwrap().length);
            }
            prop_assert_eq!(sum, u64::from(r.length));
        }
        let _ = UverbsWc::read(&slot);
    }

    /// Valid slots with a few bytes changed: more of them get far into the parser.
    #[test]
    fn mutated_send_slots(
        qpt in qpt(),
        pick in any::<prop::sample::Index>(),
        flags in 0..32u32,
        sges in prop::collection::vec(sge_strategy(), 0..5),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let ops = allowed(qpt);
        let opcode = ops[pick.index(ops.len())];
        let limits = kernel(4, 80);
        let mask = wr_opcode_mask(opcode, qpt).unwrap();
        let sges = &sges[..sges.len().min(4)];
        let (flags, n, atomic_sge) = kernel_valid(mask, flags, [1, 2, 3, 4], sges);
        let sges = atomic_sge.as_ref().map_or(sges, core::slice::from_ref);
        let wr = SendWr { wr_id: 1, opcode, send_flags: flags, ex: 0, detail: detail_for(qpt, opcode, n) };
        let data = match DataKind::of(mask, flags) {
            DataKind::None => SendData::None,
            DataKind::Sges => SendData::Sges(sges),
            DataKind::Inline => SendData::Inline(&[7; 40]),
            DataKind::AtomicWrite => SendData::AtomicWrite([9; 8]),
        };
        let mut slot = vec![0u8; send_wqe_size(4, 80).elem_size as usize];
        write_send_wqe(&mut slot, qpt, limits, &wr, data).unwrap();
        for (at, byte) in edits {
            // Mostly the fields that matter: opcode, flags, dma.length, dma.num_sge, SGE lengths.
            let hot = [12, 16, 184, 185, 187, 196, 197, 216, 232, 248, 219, 235];
            let i = if byte % 2 == 0 { hot[at.index(hot.len())] } else { at.index(slot.len()) };
            slot[i] = byte;
        }
        if let Ok(w) = SendWqe::parse(&slot, qpt, limits) {
            check_send(&slot, qpt, limits, &w);
        }
    }
}
