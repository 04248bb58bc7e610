// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The Invariant CRC that ends every RoCEv2 packet, as the C driver's
//! `rxe_icrc.c` computes it.
//!
//! It is the Ethernet CRC-32 over the packet with everything a router may
//! change set to ones: 8 bytes standing for the InfiniBand LRH, the IP header
//! with its mutable fields masked, the UDP header with its checksum masked,
//! the BTH with its FECN/BECN byte masked, then the rest of the packet up to
//! the ICRC. The result goes on the wire least significant byte first,
//! unlike every other field of the packet.
//!
//! The CRC-32 itself is a parameter (`*_with`): the kernel module passes the kernel's
//! `crc32_le()`, which is arch-accelerated (PCLMULQDQ on x86: 12–18× the table's speed per byte,
//! `Documentation/performance.md`); [`crc32_le`] here is a portable slice-by-8 table for the host
//! build, its tests and fuzzers, and the reference the accelerated one is checked against.

use super::hdr::{BTH_LEN, ICRC_LEN};
use super::opcode::opcode_info;
use super::parts::Parts;
use super::Error;

/// Size of an IPv4 header without options.
pub const IPV4_HDR_LEN: usize = 20;
/// Size of an IPv6 header without extension headers.
pub const IPV6_HDR_LEN: usize = 40;
/// Size of a UDP header.
pub const UDP_HDR_LEN: usize = 8;

/// The reflected Ethernet CRC-32 polynomial.
const POLY: u32 = 0xedb8_8320;

/// Lookup tables for CRC-32 eight bytes at a time: `TABLES[0]` is the
/// classic byte-wise table, `TABLES[k]` advances a byte through `k` more
/// zero bytes.
static TABLES: [[u32; 256]; 8] = make_tables();

const fn make_tables() -> [[u32; 256]; 8] {
    let mut tables = [[0; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[k - 1][i];
            tables[k][i] = (prev >> 8) ^ tables[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    tables
}

fn table(k: usize, index: u32) -> u32 {
    // The index is masked to a byte, so the lookup is always in range.
    TABLES[k][(index & 0xff) as usize]
}

/// Continues a CRC-32 over `data`, exactly like the kernel's `crc32_le()`:
/// reflected Ethernet polynomial, and no inversion on the way in or out.
pub fn crc32_le(mut crc: u32, data: &[u8]) -> u32 {
    let mut rest = data;
    while let Some((block, tail)) = rest.split_first_chunk::<8>() {
        let [b0, b1, b2, b3, b4, b5, b6, b7] = *block;
        let lo = crc ^ u32::from_le_bytes([b0, b1, b2, b3]);
        let hi = u32::from_le_bytes([b4, b5, b6, b7]);
        crc = table(7, lo)
            ^ table(6, lo >> 8)
            ^ table(5, lo >> 16)
            ^ table(4, lo >> 24)
            ^ table(3, hi)
            ^ table(2, hi >> 8)
            ^ table(1, hi >> 16)
            ^ table(0, hi >> 24);
        rest = tail;
    }
    for &byte in rest {
        crc = table(0, crc ^ u32::from(byte)) ^ (crc >> 8);
    }
    crc
}

/// The CRC state after 0xffffffff and the 8 bytes of ones that stand for
/// the masked LRH; the C driver hard-codes this same value.
pub const ICRC_SEED: u32 = 0xdebb_20e3;

/// The IP header of a RoCEv2 packet.
#[derive(Clone, Copy, Debug)]
pub enum IpHeader<'a> {
    /// An IPv4 header; options, if any, are not part of it.
    V4(&'a [u8; IPV4_HDR_LEN]),
    /// An IPv6 header.
    V6(&'a [u8; IPV6_HDR_LEN]),
}

impl<'a> IpHeader<'a> {
    /// The IP header at the start of `bytes`, by its version.
    ///
    /// An IPv4 header counts as its first 20 bytes whatever its IHL, as in
    /// the C driver. RoCE does not use IP options; with them, the C driver
    /// would cover the options where the UDP header belongs.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let version = bytes.first().ok_or(Error::Truncated)? >> 4;
        match version {
            4 => bytes.first_chunk().map(Self::V4).ok_or(Error::Truncated),
            6 => bytes.first_chunk().map(Self::V6).ok_or(Error::Truncated),
            other => Err(Error::BadIpVersion(other)),
        }
    }
}

/// The ICRC of a packet whose IP and UDP headers are `ip` and `udp` and whose
/// UDP payload, without its last 4 bytes (the ICRC), is `packet`.
///
/// The value is a plain CRC; on the wire it is stored little-endian.
pub fn compute(ip: IpHeader<'_>, udp: &[u8; UDP_HDR_LEN], packet: &[u8]) -> Result<u32, Error> {
    compute_with(crc32_le, ip, udp, packet)
}

/// [`compute`] with `crc32_le`, a raw reflected CRC-32 (`crc32_le(crc, data)` as the kernel's:
/// no inversion on entry or exit).
pub fn compute_with(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    packet: &[u8],
) -> Result<u32, Error> {
    compute_linear(crc32_le, ip, udp, packet)
}

/// [`compute_with`] over a packet in pieces (BTH to ICRC, the ICRC left out), its headers in
/// the first piece.
pub fn compute_parts(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    packet: &Parts<'_>,
) -> Result<u32, Error> {
    compute_prefix(crc32_le, ip, udp, packet, packet.len())
}

/// [`compute_parts`] over the first `len` bytes of `packet`.
fn compute_prefix(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    packet: &Parts<'_>,
    len: usize,
) -> Result<u32, Error> {
    let head = packet.first();
    if let Some(linear) = head.get(..len) {
        return compute_linear(crc32_le, ip, udp, linear);
    }
    let (mut crc, rest_at) = headers_crc(&crc32_le, ip, udp, head, len)?;
    for piece in packet.iter_range(rest_at, len) {
        crc = crc32_le(crc, piece);
    }
    Ok(!crc)
}

/// [`compute_with`] over one slice: no [`Parts`] made for it (a packet sent from its linear
/// bytes).
#[inline(always)]
fn compute_linear(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    packet: &[u8],
) -> Result<u32, Error> {
    let (crc, rest_at) = headers_crc(&crc32_le, ip, udp, packet, packet.len())?;
    Ok(!crc32_le(
        crc,
        packet.get(rest_at..).ok_or(Error::Truncated)?,
    ))
}

/// The CRC of a packet of `len` bytes up to where the rest of it is read in place, and that
/// offset: its masked IP, UDP and BTH headers (copied), then, for the opcodes whose payload
/// offset is 0 (FLUSH and two RD opcodes, as C's table), its extension headers: they go in
/// twice. `head` holds every header.
#[inline(always)]
fn headers_crc(
    crc32_le: &impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    head: &[u8],
    len: usize,
) -> Result<(u32, usize), Error> {
    let bth = head.first_chunk::<BTH_LEN>().ok_or(Error::Truncated)?;
    let info = opcode_info(bth[0]).ok_or(Error::UnknownOpcode(bth[0]))?;
    let headers = head
        .get(..info.length)
        .filter(|h| h.len() <= len)
        .ok_or(Error::Truncated)?;
    let payload_at = info.icrc_payload_offset();
    if payload_at > len {
        return Err(Error::Truncated);
    }
    let crc = match ip {
        IpHeader::V4(header) => {
            let mut m = masked::<{ IPV4_HDR_LEN + UDP_HDR_LEN + BTH_LEN }>(header, udp, bth);
            m[1] = 0xff; // type of service
            m[8] = 0xff; // time to live
            m[10] = 0xff; // header checksum
            m[11] = 0xff;
            crc32_le(ICRC_SEED, &m)
        }
        IpHeader::V6(header) => {
            let mut m = masked::<{ IPV6_HDR_LEN + UDP_HDR_LEN + BTH_LEN }>(header, udp, bth);
            m[0] |= 0x0f; // traffic class, high nibble
            m[1] = 0xff; // traffic class, low nibble, and flow label
            m[2] = 0xff;
            m[3] = 0xff;
            m[7] = 0xff; // hop limit
            crc32_le(ICRC_SEED, &m)
        }
    };
    // The extension headers and the payload after them are read together, in one call, when
    // they follow each other: for every opcode but those.
    if payload_at == info.length {
        Ok((crc, BTH_LEN))
    } else {
        Ok((crc32_le(crc, &headers[BTH_LEN..]), payload_at))
    }
}

/// The IP, UDP and BTH headers as the ICRC covers them, `N` bytes, with the UDP checksum and
/// the BTH's FECN/BECN byte set to ones (the caller masks the IP header's fields). An array of
/// a fixed size per IP version, written whole: no zeroing first.
#[inline(always)]
fn masked<const N: usize>(ip: &[u8], udp: &[u8; UDP_HDR_LEN], bth: &[u8; BTH_LEN]) -> [u8; N] {
    let bth_at = N - BTH_LEN;
    let mut m = [0u8; N];
    m[..bth_at - UDP_HDR_LEN].copy_from_slice(ip);
    m[bth_at - UDP_HDR_LEN..bth_at].copy_from_slice(udp);
    m[bth_at..].copy_from_slice(bth);
    m[bth_at - 2] = 0xff; // UDP checksum
    m[bth_at - 1] = 0xff;
    m[bth_at + 4] = 0xff; // BTH: FECN, BECN and 6 reserved bits
    m
}

/// Checks the ICRC at the end of `udp_payload` (BTH to ICRC).
pub fn verify(ip: IpHeader<'_>, udp: &[u8; UDP_HDR_LEN], udp_payload: &[u8]) -> Result<(), Error> {
    verify_with(crc32_le, ip, udp, udp_payload)
}

/// [`verify`] with the CRC-32 `crc32_le` (see [`compute_with`]).
pub fn verify_with(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    udp_payload: &[u8],
) -> Result<(), Error> {
    let (packet, carried) = udp_payload
        .split_last_chunk::<ICRC_LEN>()
        .ok_or(Error::Truncated)?;
    check_carried(compute_linear(crc32_le, ip, udp, packet)?, carried)
}

/// Whether the ICRC `carried` at a packet's end is the `computed` one.
fn check_carried(computed: u32, carried: &[u8; ICRC_LEN]) -> Result<(), Error> {
    let carried = u32::from_le_bytes(*carried);
    if computed == carried {
        Ok(())
    } else {
        Err(Error::IcrcMismatch { computed, carried })
    }
}

/// [`verify_with`] over a UDP payload in pieces, its headers in the first piece.
pub fn verify_parts(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    udp_payload: &Parts<'_>,
) -> Result<(), Error> {
    if let Some(bytes) = udp_payload.as_slice() {
        return verify_with(crc32_le, ip, udp, bytes);
    }
    let carried = udp_payload
        .last_chunk::<ICRC_LEN>()
        .ok_or(Error::Truncated)?;
    let computed = compute_prefix(crc32_le, ip, udp, udp_payload, udp_payload.len() - ICRC_LEN)?;
    check_carried(computed, &carried)
}

/// Computes the ICRC of `udp_payload` (BTH to ICRC) and stores it in its
/// last 4 bytes.
pub fn generate(
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    udp_payload: &mut [u8],
) -> Result<(), Error> {
    generate_with(crc32_le, ip, udp, udp_payload)
}

/// [`generate`] with the CRC-32 `crc32_le` (see [`compute_with`]).
pub fn generate_with(
    crc32_le: impl Fn(u32, &[u8]) -> u32,
    ip: IpHeader<'_>,
    udp: &[u8; UDP_HDR_LEN],
    udp_payload: &mut [u8],
) -> Result<(), Error> {
    let (packet, icrc) = udp_payload
        .split_last_chunk_mut::<ICRC_LEN>()
        .ok_or(Error::Truncated)?;
    *icrc = compute_with(crc32_le, ip, udp, packet)?.to_le_bytes();
    Ok(())
}
