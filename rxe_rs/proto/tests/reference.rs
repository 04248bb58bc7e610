// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! A slow, obviously-correct ICRC to hold the fast one against.

use std::vec::Vec;

use crate::proto::hdr::BTH_LEN;

/// CRC-32 one bit at a time, without inversions, like `crc32_le()`.
pub(super) fn bitwise_crc32_le(mut crc: u32, data: &[u8]) -> u32 {
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// The ICRC as the IBA (annex A17) defines it for RoCEv2: the CRC-32 of 8
/// bytes of ones, the IP header with TOS/TTL/checksum (IPv4) or traffic
/// class/flow label/hop limit (IPv6) set to ones, the UDP header with its
/// checksum set to ones, the BTH with its FECN/BECN/reserved byte set to
/// ones, and everything after the BTH up to the ICRC.
pub(super) fn spec_icrc(ip: &[u8], udp: &[u8], packet: &[u8]) -> u32 {
    let mut buf = Vec::from([0xff; 8]);
    let ip_start = buf.len();
    buf.extend_from_slice(ip);
    let ip = &mut buf[ip_start..];
    if ip[0] >> 4 == 4 {
        ip[1] = 0xff;
        ip[8] = 0xff;
        ip[10..12].fill(0xff);
    } else {
        ip[0] |= 0x0f;
        ip[1..4].fill(0xff);
        ip[7] = 0xff;
    }
    let udp_start = buf.len();
    buf.extend_from_slice(udp);
    buf[udp_start + 6..udp_start + 8].fill(0xff);
    let bth_start = buf.len();
    buf.extend_from_slice(packet);
    buf[bth_start + 4] = 0xff;
    assert!(packet.len() >= BTH_LEN);
    !bitwise_crc32_le(!0, &buf)
}
