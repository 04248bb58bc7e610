// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The ICRC: CRC-32 basics, which bytes it covers and which it must not,
//! IPv6, and the C driver's FLUSH quirk.

use std::collections::BTreeMap;
use std::vec::Vec;

use super::pcap::{read_frames, roce};
use super::reference::{bitwise_crc32_le, spec_icrc};
use crate::proto::hdr::{
    Bth, Deth, Feth, Header, Reth, BTH_LEN, DEFAULT_PKEY, DETH_LEN, FETH_LEN, ICRC_LEN, RETH_LEN,
};
use crate::proto::icrc::{self, crc32_le, IpHeader, ICRC_SEED, IPV4_HDR_LEN, IPV6_HDR_LEN};
use crate::proto::opcode;
use crate::proto::packet::{pad_len, Packet};
use crate::proto::Error;

#[test]
fn crc32_le_is_the_ethernet_crc() {
    // The standard check value of CRC-32/ISO-HDLC.
    assert_eq!(!crc32_le(!0, b"123456789"), 0xcbf4_3926);
    assert_eq!(crc32_le(0x1234_5678, &[]), 0x1234_5678);
    let data: Vec<u8> = (0..=255).cycle().take(1000).collect();
    for len in [0, 1, 7, 8, 9, 15, 16, 17, 999, 1000] {
        assert_eq!(
            crc32_le(0xdead_beef, &data[..len]),
            bitwise_crc32_le(0xdead_beef, &data[..len])
        );
    }
}

#[test]
fn icrc_seed_is_the_crc_of_the_masked_lrh() {
    assert_eq!(crc32_le(!0, &[0xff; 8]), ICRC_SEED);
}

/// The first captured frame of each opcode, across all captures.
fn one_frame_per_opcode() -> Vec<Vec<u8>> {
    let mut by_opcode = BTreeMap::new();
    for name in [
        "rxe-c-rc-uc-ud-cm.pcap",
        "rxe-c-write-read-atomic-send.pcap",
        "rxe-c-lossy-naks.pcap",
    ] {
        for frame in read_frames(name) {
            let opcode = roce(&frame).unwrap().payload[0];
            by_opcode.entry(opcode).or_insert(frame);
        }
    }
    by_opcode.into_values().collect()
}

/// Every header byte and the payload's edges, plus a sample of its middle.
fn positions(len: usize) -> impl Iterator<Item = usize> {
    (0..len).filter(move |&i| i < 64 || i + 64 >= len || i % 61 == 0)
}

const DELTAS: [u8; 3] = [0x01, 0x80, 0xff];

/// The masked bytes of the BTH: FECN, BECN and 6 reserved bits.
const BTH_MASKED: [usize; 1] = [4];
/// TOS, TTL and header checksum.
const IPV4_MASKED: [usize; 4] = [1, 8, 10, 11];
/// The UDP checksum.
const UDP_MASKED: [usize; 2] = [6, 7];

#[test]
fn corrupting_a_covered_byte_breaks_the_icrc_and_masked_bytes_do_not() {
    let frames = one_frame_per_opcode();
    assert!(frames.len() >= 20, "one frame for each opcode captured");
    for frame in &frames {
        let r = roce(frame).unwrap();
        let ip = r.ip_header();
        assert_eq!(icrc::verify(ip, r.udp, r.payload), Ok(()));

        let mut payload = r.payload.to_vec();
        for i in positions(payload.len()) {
            for delta in DELTAS {
                payload[i] ^= delta;
                let result = icrc::verify(ip, r.udp, &payload);
                if BTH_MASKED.contains(&i) {
                    assert_eq!(result, Ok(()), "BTH byte {i} is masked");
                } else {
                    assert!(
                        result.is_err(),
                        "byte {i} of {} ^ {delta:#x}",
                        payload.len()
                    );
                }
                payload[i] ^= delta;
            }
        }

        let mut ip4: [u8; IPV4_HDR_LEN] = r.ip.try_into().unwrap();
        for i in 0..IPV4_HDR_LEN {
            for delta in DELTAS {
                ip4[i] ^= delta;
                let result = icrc::verify(IpHeader::V4(&ip4), r.udp, r.payload);
                assert_eq!(result.is_ok(), IPV4_MASKED.contains(&i), "IPv4 byte {i}");
                ip4[i] ^= delta;
            }
        }

        let mut udp = *r.udp;
        for i in 0..udp.len() {
            for delta in DELTAS {
                udp[i] ^= delta;
                let result = icrc::verify(ip, &udp, r.payload);
                assert_eq!(result.is_ok(), UDP_MASKED.contains(&i), "UDP byte {i}");
                udp[i] ^= delta;
            }
        }
    }
}

fn udp_header(udp_payload_len: usize) -> [u8; 8] {
    let len = u16::try_from(8 + udp_payload_len).unwrap().to_be_bytes();
    [0xc0, 0x01, 0x12, 0xb7, len[0], len[1], 0x00, 0x00]
}

/// A UD SEND ONLY with `payload_len` bytes of payload, ICRC included.
fn ud_send(payload_len: usize) -> Vec<u8> {
    let pad = pad_len(payload_len);
    let header_len = BTH_LEN + DETH_LEN;
    let mut packet = std::vec![0; header_len + payload_len + pad + ICRC_LEN];
    let bth = Bth {
        opcode: opcode::UD_SEND_ONLY,
        pad: u8::try_from(pad).unwrap(),
        pkey: DEFAULT_PKEY,
        qpn: 0x12,
        psn: 0xab_cdef,
        ..Bth::default()
    };
    bth.write(&mut packet).unwrap();
    let deth = Deth {
        qkey: 0x1111_1111,
        sqp: 0x34,
    };
    deth.write(&mut packet[BTH_LEN..]).unwrap();
    for (i, byte) in packet[header_len..header_len + payload_len]
        .iter_mut()
        .enumerate()
    {
        *byte = i as u8;
    }
    packet
}

fn ipv6_header(payload_len: usize) -> [u8; IPV6_HDR_LEN] {
    let mut ip = [0; IPV6_HDR_LEN];
    // Version 6, traffic class 0xa5, flow label 0xbcdef.
    ip[..4].copy_from_slice(&[0x6a, 0x5b, 0xcd, 0xef]);
    ip[4..6].copy_from_slice(&u16::try_from(payload_len).unwrap().to_be_bytes());
    ip[6] = 17;
    ip[7] = 64;
    ip[8..24].copy_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    ip[24..40].copy_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    ip
}

#[test]
fn ipv6_icrc_masks_traffic_class_flow_label_and_hop_limit() {
    let mut packet = ud_send(13);
    let udp = udp_header(packet.len());
    let ip = ipv6_header(udp.len() + packet.len());
    icrc::generate(IpHeader::parse(&ip).unwrap(), &udp, &mut packet).unwrap();
    let (covered, _) = packet.split_at(packet.len() - ICRC_LEN);
    assert_eq!(
        icrc::compute(IpHeader::V6(&ip), &udp, covered),
        Ok(spec_icrc(&ip, &udp, covered))
    );

    let pkt = Packet::parse(&packet).unwrap();
    assert_eq!(pkt.payload().len(), 13);
    assert_eq!(pkt.bth().pad, 3);
    assert_eq!(pkt.header::<Deth>().unwrap().sqp, 0x34);

    let mut corrupt = ip;
    for i in 0..IPV6_HDR_LEN {
        for delta in DELTAS {
            corrupt[i] ^= delta;
            let result = icrc::verify(IpHeader::V6(&corrupt), &udp, &packet);
            // The low nibble of byte 0 and bytes 1-3 are traffic class and
            // flow label; byte 7 is the hop limit.
            let masked = match i {
                0 => delta & 0xf0 == 0,
                1..=3 | 7 => true,
                _ => false,
            };
            assert_eq!(result.is_ok(), masked, "IPv6 byte {i} ^ {delta:#x}");
            corrupt[i] ^= delta;
        }
    }

    // The pad is covered too.
    let pad_at = packet.len() - ICRC_LEN - 1;
    packet[pad_at] ^= 1;
    assert!(matches!(
        icrc::verify(IpHeader::V6(&ip), &udp, &packet),
        Err(Error::IcrcMismatch { .. })
    ));
}

#[test]
fn flush_icrc_covers_the_headers_twice_like_the_c_driver() {
    let header_len = BTH_LEN + FETH_LEN + RETH_LEN;
    let mut packet = std::vec![0; header_len + ICRC_LEN];
    let bth = Bth {
        opcode: opcode::RC_FLUSH,
        pkey: DEFAULT_PKEY,
        qpn: 0x11,
        ack_req: true,
        psn: 7,
        ..Bth::default()
    };
    bth.write(&mut packet).unwrap();
    let feth = Feth {
        selectivity_level: 1,
        placement_type: 2,
    };
    feth.write(&mut packet[BTH_LEN..]).unwrap();
    let reth = Reth {
        va: 0x1000,
        rkey: 0x42,
        len: 4096,
    };
    reth.write(&mut packet[BTH_LEN + FETH_LEN..]).unwrap();
    let udp = udp_header(packet.len());
    let ip: [u8; IPV4_HDR_LEN] = [
        0x45, 0x00, 0x00, 0x40, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 192, 168, 50, 1,
        192, 168, 50, 2,
    ];

    let covered = &packet[..header_len];
    // The C driver resumes its CRC at payload offset 0 for FLUSH, which has
    // none, and so runs over the unmasked headers once more.
    let mut twice = covered.to_vec();
    twice.extend_from_slice(covered);
    let c_icrc = spec_icrc(&ip, &udp, &twice);
    assert_eq!(icrc::compute(IpHeader::V4(&ip), &udp, covered), Ok(c_icrc));
    assert_ne!(c_icrc, spec_icrc(&ip, &udp, covered));

    icrc::generate(IpHeader::V4(&ip), &udp, &mut packet).unwrap();
    assert_eq!(Packet::parse(&packet).unwrap().icrc(), c_icrc);
    assert_eq!(icrc::verify(IpHeader::V4(&ip), &udp, &packet), Ok(()));
}

#[test]
fn icrc_refuses_what_it_cannot_cover() {
    let udp = udp_header(0);
    let ip = ipv6_header(0);
    let ip = IpHeader::V6(&ip);
    assert_eq!(
        icrc::compute(ip, &udp, &[0; BTH_LEN - 1]),
        Err(Error::Truncated)
    );
    assert_eq!(
        icrc::compute(ip, &udp, &[0x15; BTH_LEN]),
        Err(Error::UnknownOpcode(0x15))
    );
    // A WRITE FIRST needs its RETH.
    let mut write_first = [0; BTH_LEN + RETH_LEN - 1];
    write_first[0] = opcode::RC_RDMA_WRITE_FIRST;
    assert_eq!(icrc::compute(ip, &udp, &write_first), Err(Error::Truncated));
    assert_eq!(icrc::verify(ip, &udp, &[0; 3]), Err(Error::Truncated));
    assert_eq!(icrc::generate(ip, &udp, &mut [0; 3]), Err(Error::Truncated));

    assert!(matches!(IpHeader::parse(&[]), Err(Error::Truncated)));
    assert!(matches!(
        IpHeader::parse(&[0x45; 19]),
        Err(Error::Truncated)
    ));
    assert!(matches!(
        IpHeader::parse(&[0x60; 39]),
        Err(Error::Truncated)
    ));
    assert!(matches!(
        IpHeader::parse(&[0x55; 40]),
        Err(Error::BadIpVersion(5))
    ));
    assert!(matches!(IpHeader::parse(&[0x46; 24]), Ok(IpHeader::V4(_))));
    assert!(matches!(IpHeader::parse(&[0x60; 40]), Ok(IpHeader::V6(_))));
}

/// `crc32_le` as the kernel's (raw, no inversion) from crc32fast, a PCLMULQDQ implementation
/// on x86 like the kernel's `crc32_le_arch`.
fn accelerated_crc32_le(crc: u32, data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(!crc);
    h.update(data);
    !h.finalize()
}

#[test]
fn accelerated_crc_gives_the_table_crc_on_every_captured_packet() {
    // The module computes the ICRC with the kernel's crc32_le (`compute_with`); an accelerated
    // CRC-32 must verify every packet of the C driver's captures exactly as the table does.
    let mut n = 0;
    for name in [
        "rxe-c-rc-uc-ud-cm.pcap",
        "rxe-c-write-read-atomic-send.pcap",
        "rxe-c-lossy-naks.pcap",
    ] {
        for frame in read_frames(name) {
            let Some(r) = roce(&frame) else { continue };
            let ip = r.ip_header();
            let (packet, _) = r.payload.split_last_chunk::<ICRC_LEN>().unwrap();
            let table = icrc::compute(ip, r.udp, packet).unwrap();
            let fast = icrc::compute_with(accelerated_crc32_le, ip, r.udp, packet).unwrap();
            assert_eq!(table, fast, "{name}: packet {n}");
            icrc::verify_with(accelerated_crc32_le, ip, r.udp, r.payload).unwrap();
            n += 1;
        }
    }
    assert!(n > 2500, "only {n} packets");
    // And the raw CRC at every length and alignment of a buffer.
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 31 + 7) as u8).collect();
    for start in 0..8 {
        for len in [0, 1, 3, 8, 15, 64, 1000, 4000] {
            let d = &data[start..start + len];
            assert_eq!(
                accelerated_crc32_le(0x1234_5678, d),
                crc32_le(0x1234_5678, d)
            );
        }
    }
}
