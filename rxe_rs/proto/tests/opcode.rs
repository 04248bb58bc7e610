// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The opcode table against the C driver's `rxe_opcode[]`.

use crate::proto::hdr::{BTH_LEN, RETH_LEN};
use crate::proto::opcode::{self, opcode_info, Hdr, Mask, Transport};

fn known_opcodes() -> impl Iterator<Item = u8> {
    (0..=255).filter(|&op| opcode_info(op).is_some())
}

#[test]
fn table_has_the_c_drivers_opcodes() {
    let count = |transport| {
        known_opcodes()
            .filter(|&op| Transport::of(op) == Some(transport))
            .count()
    };
    assert_eq!(count(Transport::Rc), 25);
    assert_eq!(count(Transport::Uc), 12);
    assert_eq!(count(Transport::Rd), 21);
    assert_eq!(count(Transport::Ud), 2);
    assert_eq!(known_opcodes().count(), 60);
    // Reserved or not handled by the driver.
    for op in [
        0x15, 0x18, 0x1e, 0x2c, 0x55, 0x60, 0x63, 0x66, 0x80, 0x81, 0xff,
    ] {
        assert_eq!(opcode_info(op), None, "{op:#x}");
    }
}

#[test]
fn mask_bits_are_the_c_drivers() {
    // enum rxe_hdr_mask: header bits by enum rxe_hdr_type, then the rest
    // from NUM_HDR_TYPES (13) up.
    let header_bits = [
        (Mask::LRH, 0),
        (Mask::GRH, 1),
        (Mask::BTH, 2),
        (Mask::RETH, 3),
        (Mask::AETH, 4),
        (Mask::ATMETH, 5),
        (Mask::ATMACK, 6),
        (Mask::IETH, 7),
        (Mask::RDETH, 8),
        (Mask::DETH, 9),
        (Mask::IMMDT, 10),
        (Mask::FETH, 11),
        (Mask::PAYLOAD, 12),
    ];
    let other_bits = [
        (Mask::REQ, 0),
        (Mask::ACK, 1),
        (Mask::SEND, 2),
        (Mask::WRITE, 3),
        (Mask::READ, 4),
        (Mask::ATOMIC, 5),
        (Mask::FLUSH, 6),
        (Mask::RWR, 7),
        (Mask::COMP, 8),
        (Mask::START, 9),
        (Mask::MIDDLE, 10),
        (Mask::END, 11),
        (Mask::LOOPBACK, 12),
        (Mask::ATOMIC_WRITE, 14),
    ];
    for (mask, bit) in header_bits {
        assert_eq!(mask.bits(), 1 << bit);
    }
    for (mask, bit) in other_bits {
        assert_eq!(mask.bits(), 1 << (13 + bit));
    }
    assert_eq!(
        Mask::RDMA_OP,
        Mask::READ | Mask::WRITE | Mask::ATOMIC_WRITE | Mask::FLUSH | Mask::ATOMIC
    );
    assert_eq!(Mask::from_bits(Mask::SEND.bits()), Mask::SEND);
    assert!((Mask::SEND | Mask::START).contains(Mask::SEND));
    assert!(!Mask::SEND.contains(Mask::SEND | Mask::START));
    assert!(Mask::SEND.intersects(Mask::WRITE_OR_SEND));
}

#[test]
fn lengths_and_offsets_are_the_c_drivers() {
    // (opcode, .length, [(header, .offset[header])]) from rxe_opcode.c.
    type Row = (u8, usize, &'static [(Hdr, usize)]);
    let expected: [Row; 14] = [
        (opcode::RC_SEND_FIRST, 12, &[]),
        (opcode::RC_SEND_ONLY_WITH_IMMEDIATE, 16, &[(Hdr::Immdt, 12)]),
        (opcode::RC_RDMA_WRITE_FIRST, 28, &[(Hdr::Reth, 12)]),
        (
            opcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            32,
            &[(Hdr::Reth, 12), (Hdr::Immdt, 28)],
        ),
        (opcode::RC_RDMA_READ_RESPONSE_MIDDLE, 12, &[]),
        (opcode::RC_ACKNOWLEDGE, 16, &[(Hdr::Aeth, 12)]),
        (
            opcode::RC_ATOMIC_ACKNOWLEDGE,
            24,
            &[(Hdr::Aeth, 12), (Hdr::Atmack, 16)],
        ),
        (opcode::RC_COMPARE_SWAP, 40, &[(Hdr::Atmeth, 12)]),
        (opcode::RC_SEND_ONLY_WITH_INVALIDATE, 16, &[(Hdr::Ieth, 12)]),
        (opcode::RC_FLUSH, 32, &[(Hdr::Feth, 12), (Hdr::Reth, 16)]),
        (opcode::RC_ATOMIC_WRITE, 28, &[(Hdr::Reth, 12)]),
        (
            opcode::RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            44,
            &[
                (Hdr::Rdeth, 12),
                (Hdr::Deth, 16),
                (Hdr::Reth, 24),
                (Hdr::Immdt, 40),
            ],
        ),
        (
            opcode::RD_ATOMIC_ACKNOWLEDGE,
            28,
            &[(Hdr::Rdeth, 12), (Hdr::Aeth, 16), (Hdr::Atmack, 20)],
        ),
        (
            opcode::UD_SEND_ONLY_WITH_IMMEDIATE,
            24,
            &[(Hdr::Deth, 12), (Hdr::Immdt, 20)],
        ),
    ];
    for (op, length, offsets) in expected {
        let info = opcode_info(op).unwrap();
        assert_eq!(info.length, length, "{}", info.name);
        assert_eq!(info.offset(Hdr::Bth), Some(0));
        for (hdr, offset) in offsets {
            assert_eq!(info.offset(*hdr), Some(*offset), "{} {hdr:?}", info.name);
        }
    }
    assert_eq!(
        opcode_info(opcode::RC_SEND_FIRST)
            .unwrap()
            .offset(Hdr::Reth),
        None
    );
    assert_eq!(BTH_LEN + RETH_LEN, 28);
}

#[test]
fn every_row_is_consistent() {
    for op in known_opcodes() {
        let info = opcode_info(op).unwrap();
        let name = info.name;
        assert_eq!(info.opcode, op);
        let prefix = match info.transport().unwrap() {
            Transport::Rc => "IB_OPCODE_RC_",
            Transport::Uc => "IB_OPCODE_UC_",
            Transport::Rd => "IB_OPCODE_RD_",
            Transport::Ud => "IB_OPCODE_UD_",
        };
        assert!(name.starts_with(prefix), "{name}");

        // Headers are laid end to end, in wire order, after the BTH.
        let mut end = 0;
        for hdr in [
            Hdr::Bth,
            Hdr::Rdeth,
            Hdr::Deth,
            Hdr::Feth,
            Hdr::Reth,
            Hdr::Aeth,
            Hdr::Atmack,
            Hdr::Atmeth,
            Hdr::Ieth,
            Hdr::Immdt,
        ] {
            if let Some(offset) = info.offset(hdr) {
                assert_eq!(offset, end, "{name} {hdr:?}");
                end += hdr.wire_len();
            }
        }
        assert_eq!(end, info.length, "{name}");

        // Requests come from requesters, everything else from responders.
        assert_ne!(
            info.mask.contains(Mask::REQ),
            info.mask.contains(Mask::ACK),
            "{name}"
        );

        // Position in the message follows the name.
        let position = info.mask.bits() & (Mask::START | Mask::MIDDLE | Mask::END).bits();
        let expected = if name.contains("_FIRST") {
            Mask::START
        } else if name.contains("_MIDDLE") {
            Mask::MIDDLE
        } else if name.contains("_LAST") {
            Mask::END
        } else {
            Mask::START | Mask::END
        };
        assert_eq!(position, expected.bits(), "{name}");

        // The extension headers follow the name too.
        let has = |mask| info.mask.contains(mask);
        assert_eq!(has(Mask::IMMDT), name.contains("IMMEDIATE"), "{name}");
        assert_eq!(has(Mask::IETH), name.contains("INVALIDATE"), "{name}");
        assert_eq!(
            has(Mask::RDETH),
            name.starts_with("IB_OPCODE_RD_"),
            "{name}"
        );
        assert_eq!(
            has(Mask::DETH),
            has(Mask::RDETH) && has(Mask::REQ) || name.starts_with("IB_OPCODE_UD_"),
            "{name}"
        );

        let quirk = [
            opcode::RC_FLUSH,
            opcode::RD_ACKNOWLEDGE,
            opcode::RD_ATOMIC_ACKNOWLEDGE,
        ];
        let icrc_payload_offset = if quirk.contains(&op) { 0 } else { info.length };
        assert_eq!(info.icrc_payload_offset(), icrc_payload_offset, "{name}");
    }
}

#[test]
fn transport_comes_from_the_top_three_bits() {
    assert_eq!(Transport::of(0x1d), Some(Transport::Rc));
    assert_eq!(Transport::of(0x20), Some(Transport::Uc));
    assert_eq!(Transport::of(0x5f), Some(Transport::Rd));
    assert_eq!(Transport::of(0x64), Some(Transport::Ud));
    assert_eq!(Transport::of(0x80), None, "CNP");
    assert_eq!(Transport::of(0xa0), None, "XRC");
}

#[test]
fn max_headers_len_is_the_longest_opcodes() {
    let longest = known_opcodes()
        .map(|op| opcode_info(op).unwrap().length)
        .max()
        .unwrap();
    assert_eq!(opcode::MAX_HEADERS_LEN, longest);
}
