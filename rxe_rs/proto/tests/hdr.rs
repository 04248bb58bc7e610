// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Header fields at known positions, the AETH syndrome, the RNR timer
//! table and the packet parser's refusals.

use crate::proto::hdr::{
    rnr_timer_usec, Aeth, Bth, Feth, Header, NakCode, Reth, Syndrome, BTH_LEN, RETH_LEN,
    RNR_TIMER_USEC,
};
use crate::proto::hdr::{Atmack, Atmeth, Deth, Hdr, Ieth, Immdt};
use crate::proto::opcode::{self, opcode_info};
use crate::proto::packet::{pad_len, Headers, Packet};
use crate::proto::parts::Parts;
use crate::proto::Error;

#[test]
fn bth_fields_sit_where_rxe_hdr_h_puts_them() {
    let bytes = [
        0x0a,        // RC RDMA WRITE ONLY
        0b1110_0000, // SE, MigReq, pad 2, TVer 0
        0x12,
        0x34, // P_Key
        0b1011_1111,
        0x01,
        0x02,
        0x03, // FECN, resv6a all ones, QPN
        0b1000_0001,
        0xfe,
        0xdc,
        0xba, // AckReq, resv7 = 1, PSN
    ];
    let bth = Bth::parse(&bytes).unwrap();
    assert_eq!(
        bth,
        Bth {
            opcode: opcode::RC_RDMA_WRITE_ONLY,
            se: true,
            mig: true,
            pad: 2,
            tver: 0,
            pkey: 0x1234,
            fecn: true,
            becn: false,
            resv6a: 0x3f,
            qpn: 0x01_0203,
            ack_req: true,
            resv7: 1,
            psn: 0xfe_dcba,
        }
    );
    let mut out = [0; BTH_LEN];
    bth.write(&mut out).unwrap();
    assert_eq!(out, bytes);
}

#[test]
fn reth_and_feth_fields_sit_where_rxe_hdr_h_puts_them() {
    let reth = Reth {
        va: 0x0102_0304_0506_0708,
        rkey: 0x1122_3344,
        len: 0x0000_2328,
    };
    let mut out = [0; RETH_LEN];
    reth.write(&mut out).unwrap();
    assert_eq!(
        out,
        [1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0, 0, 0x23, 0x28]
    );

    let feth = Feth::parse(&[0xff, 0xff, 0xff, 0x2a]).unwrap();
    assert_eq!(feth.selectivity_level, 2);
    assert_eq!(feth.placement_type, 0xa);
}

#[test]
fn writing_into_a_short_buffer_fails_without_writing() {
    let mut out = [0x55; RETH_LEN - 1];
    assert_eq!(Reth::default().write(&mut out), Err(Error::Truncated));
    assert_eq!(out, [0x55; RETH_LEN - 1]);
    assert_eq!(Reth::parse(&out), Err(Error::Truncated));
    assert_eq!(Bth::parse(&[]), Err(Error::Truncated));
}

#[test]
fn syndromes_decode_as_the_ib_spec_says() {
    assert_eq!(Syndrome::decode(0x1f), Syndrome::ACK_UNLIMITED);
    assert_eq!(Syndrome::decode(0x00), Syndrome::Ack { credits: 0 });
    assert_eq!(Syndrome::decode(0x20), Syndrome::RnrNak { timer: 0 });
    assert_eq!(Syndrome::decode(0x3f), Syndrome::RnrNak { timer: 31 });
    assert_eq!(
        Syndrome::decode(0x60),
        Syndrome::Nak(NakCode::PsnSequenceError)
    );
    assert_eq!(
        Syndrome::decode(0x61),
        Syndrome::Nak(NakCode::InvalidRequest)
    );
    assert_eq!(
        Syndrome::decode(0x62),
        Syndrome::Nak(NakCode::RemoteAccessError)
    );
    assert_eq!(
        Syndrome::decode(0x63),
        Syndrome::Nak(NakCode::RemoteOperationalError)
    );
    assert_eq!(
        Syndrome::decode(0x64),
        Syndrome::Nak(NakCode::InvalidRdRequest)
    );
    assert_eq!(Syndrome::decode(0x65), Syndrome::Nak(NakCode::Reserved(5)));
    assert_eq!(Syndrome::decode(0x40), Syndrome::Reserved(0x40));
    assert_eq!(Syndrome::decode(0x9f), Syndrome::Reserved(0x9f));
    for byte in 0..=255 {
        assert_eq!(Syndrome::decode(byte).encode(), byte);
    }

    let aeth = Aeth::parse(&[0x60, 0x00, 0x01, 0x02]).unwrap();
    assert_eq!(aeth.syndrome, Syndrome::Nak(NakCode::PsnSequenceError));
    assert_eq!(aeth.msn, 0x102);
}

#[test]
fn rnr_timer_table_is_the_ib_specs() {
    let expected: [u32; 32] = [
        655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
        327680, 491520,
    ];
    assert_eq!(RNR_TIMER_USEC, expected);
    assert!(RNR_TIMER_USEC[1..].windows(2).all(|w| w[0] < w[1]));
    assert_eq!(rnr_timer_usec(0), 655_360);
    assert_eq!(rnr_timer_usec(14), 1280);
    assert_eq!(rnr_timer_usec(31), 491_520);
    assert_eq!(rnr_timer_usec(0x20 | 14), 1280, "only 5 bits count");
}

fn bth_bytes(opcode: u8, flags: u8) -> [u8; BTH_LEN] {
    let mut bytes = [0; BTH_LEN];
    bytes[0] = opcode;
    bytes[1] = flags;
    bytes
}

#[test]
fn packet_parser_refuses_malformed_packets() {
    assert_eq!(Packet::parse(&[]).unwrap_err(), Error::Truncated);
    assert_eq!(
        Packet::parse(&[0; BTH_LEN - 1]).unwrap_err(),
        Error::Truncated
    );

    let mut ack = [0; 16 + 4];
    ack[..BTH_LEN].copy_from_slice(&bth_bytes(opcode::RC_ACKNOWLEDGE, 0));
    assert!(Packet::parse(&ack).is_ok());
    assert_eq!(Packet::parse(&ack[..19]).unwrap_err(), Error::Truncated);

    ack[0] = 0x15;
    assert_eq!(Packet::parse(&ack).unwrap_err(), Error::UnknownOpcode(0x15));
    ack[0] = opcode::RC_ACKNOWLEDGE;
    ack[1] = 0x01;
    assert_eq!(
        Packet::parse(&ack).unwrap_err(),
        Error::BadTransportVersion(1)
    );

    // A pad that would eat into the headers.
    ack[1] = 0x30;
    assert_eq!(Packet::parse(&ack).unwrap_err(), Error::Truncated);

    // A SEND with 1 byte of payload and 3 of pad.
    let mut send = [0; BTH_LEN + 4 + 4];
    send[..BTH_LEN].copy_from_slice(&bth_bytes(opcode::RC_SEND_ONLY, 0x30));
    send[BTH_LEN] = 0xaa;
    let pkt = Packet::parse(&send).unwrap();
    assert!(*pkt.payload() == [0xaa][..]);
    assert_eq!(pkt.header::<Reth>(), None);
}

#[test]
fn a_packet_with_its_payload_apart_reads_as_the_whole_packet() {
    // An RDMA WRITE ONLY: BTH, RETH, 1001 bytes of payload, 3 of pad, the ICRC.
    let payload: std::vec::Vec<u8> = (0..1001u32).map(|i| i as u8).collect();
    let mut head = [0; BTH_LEN + RETH_LEN];
    head[..BTH_LEN].copy_from_slice(&bth_bytes(opcode::RC_RDMA_WRITE_ONLY, 0x30));
    head[BTH_LEN..].copy_from_slice(&[7; RETH_LEN]);
    let mut whole = head.to_vec();
    whole.extend_from_slice(&payload);
    whole.extend_from_slice(&[0; 3 + 4]);
    let parsed = Packet::parse(&whole).unwrap();
    let apart = Packet::with_payload(&head, Parts::from_slice(&payload)).unwrap();
    assert_eq!(apart.bth(), parsed.bth());
    assert_eq!(apart.headers(), parsed.headers());
    assert_eq!(apart.header::<Reth>(), parsed.header::<Reth>());
    assert!(*apart.payload() == payload[..]);
    assert!(*parsed.payload() == payload[..]);
    assert_eq!(apart.icrc(), 0);
    // The payload in two pieces (across a page of the sender's MR) reads the same.
    let mut pieces = Parts::new();
    pieces.push(&payload[..500]).unwrap();
    pieces.push(&payload[500..]).unwrap();
    let in_pieces = Packet::with_payload(&head, pieces).unwrap();
    assert!(*in_pieces.payload() == payload[..]);
    assert_eq!(in_pieces.headers(), parsed.headers());

    // Headers that are not exactly the opcode's, or a pad the payload does not need.
    assert_eq!(
        Packet::with_payload(&head[..BTH_LEN], Parts::from_slice(&payload)).unwrap_err(),
        Error::Truncated
    );
    assert_eq!(
        Packet::with_payload(&head, Parts::from_slice(&payload[..1000])).unwrap_err(),
        Error::Truncated
    );
    let mut long = head.to_vec();
    long.push(0);
    assert_eq!(
        Packet::with_payload(&long, Parts::from_slice(&payload)).unwrap_err(),
        Error::Truncated
    );
}

#[test]
fn pad_rounds_the_payload_to_four_bytes() {
    assert_eq!(pad_len(0), 0);
    assert_eq!(pad_len(1), 3);
    assert_eq!(pad_len(2), 2);
    assert_eq!(pad_len(3), 1);
    assert_eq!(pad_len(4096), 0);
    assert_eq!(pad_len(usize::MAX), 1);
}

/// `Headers::write` writes every byte of an opcode's headers, whichever of them it is given, so a
/// ring slot holding an older packet needs no clearing: the result is the same over zeros and
/// over ones. A header the opcode does not carry is refused.
#[test]
fn headers_write_every_byte_of_the_opcodes_headers() {
    let all = Headers {
        reth: Some(Reth {
            va: 0x1122_3344_5566_7788,
            rkey: 0x99aa_bbcc,
            len: 0x1000,
        }),
        aeth: Some(Aeth {
            syndrome: Syndrome::ACK_UNLIMITED,
            msn: 7,
        }),
        atmeth: Some(Atmeth::default()),
        atmack: Some(Atmack::default()),
        deth: Some(Deth::default()),
        immdt: Some(Immdt::default()),
        ieth: Some(Ieth::default()),
        feth: Some(Feth::default()),
    };
    let mut checked = 0;
    for op in 0..=u8::MAX {
        let Some(info) = opcode_info(op) else {
            continue;
        };
        let has = |h: Hdr| info.offset(h).is_some();
        let carried = Headers {
            reth: all.reth.filter(|_| has(Hdr::Reth)),
            aeth: all.aeth.filter(|_| has(Hdr::Aeth)),
            atmeth: all.atmeth.filter(|_| has(Hdr::Atmeth)),
            atmack: all.atmack.filter(|_| has(Hdr::Atmack)),
            deth: all.deth.filter(|_| has(Hdr::Deth)),
            immdt: all.immdt.filter(|_| has(Hdr::Immdt)),
            ieth: all.ieth.filter(|_| has(Hdr::Ieth)),
            feth: all.feth.filter(|_| has(Hdr::Feth)),
        };
        let bth = Bth {
            opcode: op,
            qpn: 0x12_3456,
            psn: 0xab_cdef,
            ..Default::default()
        };
        for hdrs in [carried, Headers::default()] {
            let mut over_zeros = std::vec![0u8; info.length];
            let mut over_ones = std::vec![0xffu8; info.length];
            assert!(hdrs.write(&bth, info, &mut over_zeros), "opcode {op:#x}");
            assert!(hdrs.write(&bth, info, &mut over_ones), "opcode {op:#x}");
            assert_eq!(
                over_zeros, over_ones,
                "opcode {op:#x}: a byte left unwritten"
            );
            assert_eq!(Bth::parse(&over_zeros).unwrap(), bth);
            let mut short = std::vec![0u8; info.length - 1];
            assert!(
                !hdrs.write(&bth, info, &mut short),
                "opcode {op:#x}: too short"
            );
        }
        if carried.reth.is_none() {
            let mut buf = std::vec![0u8; info.length + 64];
            let extra = Headers {
                reth: all.reth,
                ..carried
            };
            assert!(
                !extra.write(&bth, info, &mut buf),
                "opcode {op:#x} carries no RETH"
            );
        }
        checked += 1;
    }
    assert!(checked > 40);
}

#[test]
fn p_keys_match_the_default_partition_as_c_pkey_match() {
    use crate::proto::hdr::pkey_matches_default;
    // The C driver's `pkey_match(key, IB_DEFAULT_PKEY_FULL)`, for every 16-bit key.
    let c_pkey_match = |k1: u16, k2: u16| {
        k1 & 0x7fff != 0 && k1 & 0x7fff == k2 & 0x7fff && (k1 & 0x8000 != 0 || k2 & 0x8000 != 0)
    };
    for key in 0..=u16::MAX {
        assert_eq!(
            pkey_matches_default(key),
            c_pkey_match(key, 0xffff),
            "{key:#06x}"
        );
    }
    assert!(pkey_matches_default(0xffff) && pkey_matches_default(0x7fff));
    assert!(!pkey_matches_default(0x9234) && !pkey_matches_default(0x8000));
}
