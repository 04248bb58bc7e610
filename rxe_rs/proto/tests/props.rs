// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Property tests: headers survive a round trip, the parsers survive any
//! bytes, and PSN arithmetic obeys its laws.

use core::fmt::Debug;
use std::vec::Vec;

use proptest::prelude::*;

use super::reference::bitwise_crc32_le;
use crate::proto::hdr::{
    Aeth, Atmack, Atmeth, Bth, Deth, Feth, Header, Ieth, Immdt, NakCode, Rdeth, Reth, Syndrome,
    ICRC_LEN, QPN_MASK,
};
use crate::proto::icrc::{self, crc32_le, IpHeader};
use crate::proto::opcode::{opcode_info, Hdr, Mask};
use crate::proto::packet::Packet;
use crate::proto::psn::{psn_add, psn_cmp, psn_diff, psn_next, PSN_MASK};

/// Writes `header` amid sentinel bytes, checks only its own bytes changed,
/// and reads it back.
fn round_trip<H: Header + PartialEq + Debug>(header: H) -> Result<(), TestCaseError> {
    let len = H::KIND.wire_len();
    let mut buf = [0xa5; 64];
    header.write(&mut buf[..len + 8]).unwrap();
    prop_assert!(buf[len..].iter().all(|&b| b == 0xa5));
    prop_assert_eq!(H::parse(&buf[..len]).unwrap(), header);
    Ok(())
}

/// Reads a header from arbitrary bytes and writes it back: the bytes come
/// back except reserved bits, which come back as 0.
fn rewrite<H: Header>(bytes: &[u8], reserved: &[u8]) -> Result<(), TestCaseError> {
    let len = H::KIND.wire_len();
    let header = H::parse(bytes).unwrap();
    let mut out = std::vec![0; len];
    header.write(&mut out).unwrap();
    for i in 0..len {
        let keep = !reserved.get(i).copied().unwrap_or(0);
        prop_assert_eq!(out[i], bytes[i] & keep, "byte {}", i);
    }
    Ok(())
}

fn bth() -> impl Strategy<Value = Bth> {
    (
        (
            any::<u8>(),
            any::<bool>(),
            any::<bool>(),
            0..4u8,
            0..16u8,
            any::<u16>(),
        ),
        (any::<bool>(), any::<bool>(), 0..64u8, 0..=QPN_MASK),
        (any::<bool>(), 0..128u8, 0..=PSN_MASK),
    )
        .prop_map(
            |(
                (opcode, se, mig, pad, tver, pkey),
                (fecn, becn, resv6a, qpn),
                (ack_req, resv7, psn),
            )| Bth {
                opcode,
                se,
                mig,
                pad,
                tver,
                pkey,
                fecn,
                becn,
                resv6a,
                qpn,
                ack_req,
                resv7,
                psn,
            },
        )
}

fn syndrome() -> impl Strategy<Value = Syndrome> {
    prop_oneof![
        (0..32u8).prop_map(|credits| Syndrome::Ack { credits }),
        (0..32u8).prop_map(|timer| Syndrome::RnrNak { timer }),
        prop_oneof![
            Just(NakCode::PsnSequenceError),
            Just(NakCode::InvalidRequest),
            Just(NakCode::RemoteAccessError),
            Just(NakCode::RemoteOperationalError),
            Just(NakCode::InvalidRdRequest),
            (5..32u8).prop_map(NakCode::Reserved),
        ]
        .prop_map(Syndrome::Nak),
        prop_oneof![0x40..0x60u8, 0x80..=0xffu8].prop_map(Syndrome::Reserved),
    ]
}

/// Opcodes the table knows, to get past the opcode check more often.
fn known_opcode() -> impl Strategy<Value = u8> {
    let known: Vec<u8> = (0..=255).filter(|&op| opcode_info(op).is_some()).collect();
    prop::sample::select(known)
}

proptest! {
    #[test]
    fn headers_round_trip(
        bth in bth(),
        (een, qkey, sqp) in (0..=QPN_MASK, any::<u32>(), 0..=QPN_MASK),
        (selectivity_level, placement_type) in (0..4u8, 0..16u8),
        (va, rkey, len) in any::<(u64, u32, u32)>(),
        (syndrome, msn) in (syndrome(), 0..=QPN_MASK),
        (swap_add, compare, orig, imm) in any::<(u64, u64, u64, u32)>(),
    ) {
        round_trip(bth)?;
        round_trip(Rdeth { een })?;
        round_trip(Deth { qkey, sqp })?;
        round_trip(Feth { selectivity_level, placement_type })?;
        round_trip(Reth { va, rkey, len })?;
        round_trip(Aeth { syndrome, msn })?;
        round_trip(Atmack { orig })?;
        round_trip(Atmeth { va, rkey, swap_add, compare })?;
        round_trip(Ieth { rkey })?;
        round_trip(Immdt { imm })?;
    }

    #[test]
    fn header_bytes_round_trip_but_for_reserved_bits(bytes in any::<[u8; 28]>()) {
        rewrite::<Bth>(&bytes, &[])?;
        rewrite::<Rdeth>(&bytes, &[0xff])?;
        rewrite::<Deth>(&bytes, &[0, 0, 0, 0, 0xff])?;
        rewrite::<Feth>(&bytes, &[0xff, 0xff, 0xff, 0xc0])?;
        rewrite::<Reth>(&bytes, &[])?;
        rewrite::<Aeth>(&bytes, &[])?;
        rewrite::<Atmack>(&bytes, &[])?;
        rewrite::<Atmeth>(&bytes, &[])?;
        rewrite::<Ieth>(&bytes, &[])?;
        rewrite::<Immdt>(&bytes, &[])?;
    }

    #[test]
    fn packet_parser_takes_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        let _ = Packet::parse(&bytes);
    }

    #[test]
    fn packets_that_parse_are_consistent(
        opcode in known_opcode(),
        flags in 0..4u8,
        rest in prop::collection::vec(any::<u8>(), 0..96),
    ) {
        let mut bytes = std::vec![opcode, flags << 4];
        bytes.extend_from_slice(&rest);
        let Ok(pkt) = Packet::parse(&bytes) else {
            // Only a packet too short for its headers, pad and ICRC fails.
            let info = opcode_info(opcode).unwrap();
            prop_assert!(bytes.len() < info.length + usize::from(flags) + ICRC_LEN);
            return Ok(());
        };
        let info = pkt.info();
        prop_assert_eq!(
            info.length + pkt.payload().len() + usize::from(pkt.bth().pad) + ICRC_LEN,
            bytes.len()
        );
        prop_assert_eq!(pkt.header::<Bth>(), Some(*pkt.bth()));
        prop_assert_eq!(pkt.header::<Reth>().is_some(), info.mask.contains(Mask::RETH));
        prop_assert_eq!(pkt.header::<Aeth>().is_some(), info.mask.contains(Mask::AETH));
        prop_assert_eq!(pkt.header::<Atmeth>().is_some(), info.mask.contains(Mask::ATMETH));
        prop_assert_eq!(pkt.header::<Atmack>().is_some(), info.mask.contains(Mask::ATMACK));
        prop_assert_eq!(pkt.header::<Deth>().is_some(), info.mask.contains(Mask::DETH));
        prop_assert_eq!(pkt.header::<Rdeth>().is_some(), info.mask.contains(Mask::RDETH));
        prop_assert_eq!(pkt.header::<Feth>().is_some(), info.mask.contains(Mask::FETH));
        prop_assert_eq!(pkt.header::<Ieth>().is_some(), info.mask.contains(Mask::IETH));
        prop_assert_eq!(pkt.header::<Immdt>().is_some(), info.mask.contains(Mask::IMMDT));
        prop_assert_eq!(info.offset(Hdr::Bth), Some(0));
    }

    #[test]
    fn icrc_takes_any_bytes_and_generated_icrcs_verify(
        ip in prop::collection::vec(any::<u8>(), 0..48),
        udp in any::<[u8; 8]>(),
        mut payload in prop::collection::vec(any::<u8>(), 0..96),
    ) {
        let Ok(ip) = IpHeader::parse(&ip) else { return Ok(()) };
        let _ = icrc::verify(ip, &udp, &payload);
        if icrc::generate(ip, &udp, &mut payload).is_ok() {
            prop_assert_eq!(icrc::verify(ip, &udp, &payload), Ok(()));
        }
    }

    #[test]
    fn crc32_le_matches_the_bitwise_crc(
        crc in any::<u32>(),
        data in prop::collection::vec(any::<u8>(), 0..64),
        split in any::<prop::sample::Index>(),
    ) {
        prop_assert_eq!(crc32_le(crc, &data), bitwise_crc32_le(crc, &data));
        let (head, tail) = data.split_at(split.index(data.len() + 1));
        prop_assert_eq!(crc32_le(crc32_le(crc, head), tail), crc32_le(crc, &data));
    }

    #[test]
    fn psn_arithmetic_laws(a in any::<u32>(), b in 0..=PSN_MASK, n in -(1i32 << 23)..(1 << 23), m in any::<u32>()) {
        let a_psn = a & PSN_MASK;
        prop_assert!(psn_add(a, m) <= PSN_MASK);
        prop_assert_eq!(psn_next(a), psn_add(a, 1));
        prop_assert_eq!(psn_add(psn_add(a, m), n as u32), psn_add(a, m.wrapping_add(n as u32)));
        // Moving n steps puts the PSN n steps away, for any |n| < 2^23.
        prop_assert_eq!(psn_diff(psn_add(a, n as u32), a), n);
        prop_assert_eq!(psn_add(b, psn_diff(a, b) as u32), a_psn);
        let diff = psn_diff(a, b);
        prop_assert!((-(1 << 23)..(1 << 23)).contains(&diff));
        if diff != -(1 << 23) {
            prop_assert_eq!(psn_diff(b, a), -diff);
            prop_assert_eq!(psn_cmp(a, b), psn_cmp(b, a).reverse());
        }
        prop_assert_eq!(psn_cmp(a, b), diff.cmp(&0));
    }
}
