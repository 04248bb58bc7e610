// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The fuzz harness of the protocol core: [`fuzz_packet`] feeds untrusted bytes to everything
//! the receive path (and the rings user space writes) hands the core, and checks invariants,
//! not only the absence of panics.
//!
//! This file is compiled three times, always as a module whose crate has `proto` at its root
//! (`crate::proto`): into the host crate's tests (`rxe_rs/proto/tests/fuzz.rs`), into the
//! mutation-loop binary `fuzz-packet` (`fuzz/fuzz_packet.rs`) and into the cargo-fuzz target
//! (`fuzz/fuzz_targets/packet.rs`). It uses `std`; the kernel never sees it.
//!
//! An input is one selector byte and the bytes of one target:
//!
//! | `data[0] % 5` | `data[1..]` is |
//! |---|---|
//! | 0 | a UDP payload, BTH to ICRC (what `Packet::parse` gets) |
//! | 1 | an IP datagram: IPv4 or IPv6 header, UDP header, UDP payload (the receive path) |
//! | 2 | QP type, `max_sge`, `max_inline`, kernel flag, then a send queue slot |
//! | 3 | `max_sge`, then a receive queue slot (also read as a CQE) |
//! | 4 | queue sizes and hostile shared indices |
//!
//! Whatever the selector, `data[1..]` is also parsed as a UDP payload.

use std::vec;
use std::vec::Vec;

use crate::proto::hdr::{
    Aeth, Atmack, Atmeth, Bth, Deth, Feth, Header, Ieth, Immdt, Rdeth, Reth, BTH_LEN, ICRC_LEN,
};
use crate::proto::icrc::{self, IpHeader, IPV4_HDR_LEN, IPV6_HDR_LEN, UDP_HDR_LEN};
use crate::proto::opcode::{opcode_info, Hdr, OpcodeInfo};
use crate::proto::packet::{pad_len, Packet};
use crate::proto::params::PORT_MAX_MSG_SZ;
use crate::proto::parts::{Parts, MAX_PARTS};
use crate::proto::qp_state::QpType;
use crate::proto::queue::{Geometry, QueueType, RawIndex, MAX_BUF_SIZE, QUEUE_BUF_HDR_SIZE};
use crate::proto::wqe::{
    atomic_write_value, inline_data, recv_sge, sge, write_recv_wqe, write_send_wqe, DataKind,
    DmaCursor, DmaError, RecvWqe, SendData, SendLimits, SendWqe, Sge, UverbsWc, WcStatus, WqeError,
    WrMask, IB_SEND_INLINE, SEND_WQE_DMA_OFFSET, SEND_WR_OPCODE_OFFSET, SEND_WR_SEND_FLAGS_OFFSET,
    UVERBS_WC_LEN, UVERBS_WC_STATUS_OFFSET,
};
use crate::proto::Error;

/// Number of targets the selector byte chooses from.
pub(crate) const TARGETS: u8 = 5;
/// Selector: a UDP payload.
pub(crate) const TARGET_UDP_PAYLOAD: u8 = 0;
/// Selector: an IP datagram.
pub(crate) const TARGET_IP_DATAGRAM: u8 = 1;
/// Selector: a send WQE.
pub(crate) const TARGET_SEND_WQE: u8 = 2;
/// Selector: a receive WQE.
pub(crate) const TARGET_RECV_WQE: u8 = 3;
/// Selector: queue index arithmetic.
pub(crate) const TARGET_RING: u8 = 4;

/// Bytes before the slot in a [`TARGET_SEND_WQE`] input.
pub(crate) const SEND_PREFIX: usize = 10;
/// Bytes before the slot in a [`TARGET_RECV_WQE`] input.
pub(crate) const RECV_PREFIX: usize = 4;

/// A signature of the path an input took (which target, which errors, which opcode): the
/// mutation loop keeps inputs that show a new one. Panics on a broken invariant.
pub(crate) fn fuzz_packet(data: &[u8]) -> u64 {
    let Some((&selector, rest)) = data.split_first() else {
        return 0;
    };
    let mut sig = Sig::new(u64::from(selector % TARGETS));
    check_udp_payload(rest, &mut sig);
    match selector % TARGETS {
        TARGET_UDP_PAYLOAD => {
            // Also through a fixed IPv4 and IPv6 wrapper, to reach the ICRC checks.
            check_icrc(IpHeader::V4(&IPV4_TEMPLATE), &UDP_TEMPLATE, rest, &mut sig);
            check_icrc(IpHeader::V6(&IPV6_TEMPLATE), &UDP_TEMPLATE, rest, &mut sig);
        }
        TARGET_IP_DATAGRAM => check_ip_datagram(rest, &mut sig),
        TARGET_SEND_WQE => check_send_wqe(rest, &mut sig),
        TARGET_RECV_WQE => check_recv_wqe(rest, &mut sig),
        _ => check_ring(rest, &mut sig),
    }
    sig.0
}

/// Mixes tags into a path signature.
struct Sig(u64);

impl Sig {
    fn new(tag: u64) -> Self {
        let mut sig = Self(0xcbf2_9ce4_8422_2325);
        sig.add(tag);
        sig
    }

    fn add(&mut self, tag: u64) {
        self.0 = (self.0 ^ tag).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn error(&mut self, e: &Error) {
        self.add(match e {
            Error::Truncated => 1,
            Error::UnknownOpcode(_) => 2,
            Error::BadTransportVersion(_) => 3,
            Error::BadIpVersion(_) => 4,
            Error::IcrcMismatch { .. } => 5,
        });
    }
}

fn hex(bytes: &[u8]) -> std::string::String {
    use std::fmt::Write;
    bytes.iter().fold(std::string::String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..)?.first_chunk::<2>()?;
    Some(u16::from_be_bytes(*b))
}

fn le32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<4>())
        .map_or(0, |b| u32::from_le_bytes(*b))
}

/// A cheap hash of `bytes`, to pick positions deterministically.
fn hash(bytes: &[u8]) -> u64 {
    let mut sig = Sig::new(bytes.len() as u64);
    for chunk in bytes.chunks(8) {
        let mut word = [0; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        sig.add(u64::from_le_bytes(word));
    }
    sig.0
}

// ---------------------------------------------------------------------------------------------
// Packets.
// ---------------------------------------------------------------------------------------------

/// What `Packet::parse` must answer, from the spec of the layout rather than the code: the
/// opcode's row, and the payload's range.
fn model_parse(bytes: &[u8]) -> Result<(&'static OpcodeInfo, usize, usize), Error> {
    if bytes.len() < BTH_LEN {
        return Err(Error::Truncated);
    }
    let info = opcode_info(bytes[0]).ok_or(Error::UnknownOpcode(bytes[0]))?;
    let tver = bytes[1] & 0x0f;
    if tver != 0 {
        return Err(Error::BadTransportVersion(tver));
    }
    let tail = usize::from((bytes[1] >> 4) & 3) + ICRC_LEN;
    if bytes.len() < info.length + tail {
        return Err(Error::Truncated);
    }
    Ok((info, info.length, bytes.len() - tail))
}

/// The bits of each header that its struct keeps (the others are reserved and written as 0).
fn kept_bits(hdr: Hdr, i: usize) -> u8 {
    match (hdr, i) {
        (Hdr::Rdeth, 0) | (Hdr::Deth, 4) | (Hdr::Feth, 0..=2) => 0,
        (Hdr::Feth, 3) => 0x3f,
        _ => 0xff,
    }
}

/// Checks header `H` of `pkt` against the opcode table and the bytes, and writes it back into
/// `out` at its offset. Returns whether the packet carries it.
fn check_header<H: Header + PartialEq + core::fmt::Debug>(
    pkt: &Packet<'_>,
    bytes: &[u8],
    out: &mut [u8],
    tiles: &mut Vec<(usize, usize)>,
) -> bool {
    let info = pkt.info();
    let carried = info.offset(H::KIND);
    let got = pkt.header::<H>();
    let Some(offset) = carried else {
        assert!(
            got.is_none(),
            "{}: {:?} not in the table",
            info.name,
            H::KIND
        );
        return false;
    };
    let len = H::KIND.wire_len();
    assert!(
        offset + len <= info.length,
        "{}: {:?} past the headers",
        info.name,
        H::KIND
    );
    let header = got.unwrap_or_else(|| panic!("{}: {:?} missing", info.name, H::KIND));
    assert_eq!(Ok(&header), H::parse(&bytes[offset..]).as_ref());
    header
        .write(&mut out[offset..])
        .expect("room to write it back");
    // Written back, the header is the same, and the bytes are the wire's but for reserved bits.
    assert_eq!(H::parse(&out[offset..]).as_ref(), Ok(&header));
    for i in 0..len {
        let keep = kept_bits(H::KIND, i);
        assert_eq!(
            out[offset + i],
            bytes[offset + i] & keep,
            "{}: {:?} byte {i} does not round-trip",
            info.name,
            H::KIND
        );
    }
    tiles.push((offset, len));
    true
}

/// `Packet::parse` of a UDP payload and everything the receive path reads from the result.
fn check_udp_payload(bytes: &[u8], sig: &mut Sig) {
    let parsed = Packet::parse(bytes);
    let model = model_parse(bytes);
    // The layout check and the receive path's routing answer as the parse does.
    let layout = Packet::check_layout(&Parts::from_slice(bytes));
    let route = Packet::route(&Parts::from_slice(bytes));
    match (&parsed, &layout, &route) {
        (Ok(pkt), Ok((bth, info)), Ok(route)) => {
            assert_eq!(pkt.bth(), bth);
            assert!(core::ptr::eq(pkt.info(), *info));
            assert!(core::ptr::eq(route.info, *info));
            assert_eq!((route.pkey, route.qpn), (bth.pkey, bth.qpn));
        }
        (Err(e), Err(l), Err(r)) => {
            assert_eq!(e, l, "check_layout's error differs from parse's");
            assert_eq!(e, r, "route's error differs from parse's");
        }
        (p, l, r) => panic!(
            "parse {:?} but check_layout {:?} and route {:?}",
            p.map(|_| ()),
            l.map(|_| ()),
            r.map(|_| ())
        ),
    }
    let pkt = match (parsed, model) {
        (Err(e), Err(m)) => {
            assert_eq!(e, m, "parse error differs from the model");
            sig.error(&e);
            return;
        }
        (Ok(pkt), Ok(_)) => pkt,
        (p, m) => panic!("parse {:?} but model {:?}", p.map(|_| ()), m.map(|_| ())),
    };
    let (info, start, end) = model.unwrap_or_else(|_| unreachable!());
    sig.add(0x100 | u64::from(info.opcode));
    sig.add(u64::from(pkt.bth().pad) | (u64::from(pkt.payload().is_empty()) << 2));

    assert!(core::ptr::eq(pkt.info(), info));
    assert!(core::ptr::eq(pkt.headers(), &bytes[..info.length]));
    assert_eq!(Ok(pkt.bth()), Bth::parse(bytes).as_ref());
    // The payload is exactly the bytes between the headers and the pad: inside the input.
    let pieces: Vec<&[u8]> = pkt.payload().iter().collect();
    match pieces[..] {
        [] => assert_eq!(start, end),
        [one] => assert!(core::ptr::eq(one, &bytes[start..end])),
        _ => panic!("a contiguous packet's payload in {} pieces", pieces.len()),
    }
    // The same bytes in pieces, split anywhere after the headers, parse the same.
    for cut in [
        info.length,
        (info.length + bytes.len()) / 2,
        bytes.len() - 1,
    ] {
        let (a, b) = bytes.split_at(cut.min(bytes.len()));
        let mut parts = Parts::new();
        parts.push(a).unwrap();
        // The rest in as many pieces as fit.
        for piece in b.chunks(b.len().div_ceil(MAX_PARTS - 1).max(1)) {
            parts.push(piece).unwrap();
        }
        let split = Packet::parse_parts(&parts).expect("the same bytes in pieces parse");
        let (bth, _) = Packet::check_layout(&parts).expect("and pass the layout check");
        assert_eq!(&bth, split.bth());
        assert_eq!(split.bth(), pkt.bth());
        assert_eq!(split.payload(), pkt.payload());
        assert_eq!(split.icrc(), pkt.icrc());
    }
    let pad = usize::from(pkt.bth().pad);
    assert!(pad <= 3);
    assert_eq!(
        info.length + pkt.payload().len() + pad + ICRC_LEN,
        bytes.len()
    );
    let carried = u32::from_le_bytes(bytes[bytes.len() - ICRC_LEN..].try_into().unwrap());
    assert_eq!(pkt.icrc(), carried);
    assert!(pad_len(pkt.payload().len()) <= 3);

    // Every header the table names is there, they tile the header bytes, and writing them back
    // gives the packet again (but for reserved bits).
    let mut out = vec![0; bytes.len()];
    let mut tiles = Vec::new();
    let mut hdrs = 0u64;
    hdrs |= u64::from(check_header::<Bth>(&pkt, bytes, &mut out, &mut tiles));
    hdrs |= u64::from(check_header::<Rdeth>(&pkt, bytes, &mut out, &mut tiles)) << 1;
    hdrs |= u64::from(check_header::<Deth>(&pkt, bytes, &mut out, &mut tiles)) << 2;
    hdrs |= u64::from(check_header::<Feth>(&pkt, bytes, &mut out, &mut tiles)) << 3;
    hdrs |= u64::from(check_header::<Reth>(&pkt, bytes, &mut out, &mut tiles)) << 4;
    hdrs |= u64::from(check_header::<Aeth>(&pkt, bytes, &mut out, &mut tiles)) << 5;
    hdrs |= u64::from(check_header::<Atmack>(&pkt, bytes, &mut out, &mut tiles)) << 6;
    hdrs |= u64::from(check_header::<Atmeth>(&pkt, bytes, &mut out, &mut tiles)) << 7;
    hdrs |= u64::from(check_header::<Ieth>(&pkt, bytes, &mut out, &mut tiles)) << 8;
    hdrs |= u64::from(check_header::<Immdt>(&pkt, bytes, &mut out, &mut tiles)) << 9;
    assert!(hdrs & 1 == 1, "no BTH");
    tiles.sort_unstable();
    let mut at = 0;
    for &(offset, len) in &tiles {
        assert_eq!(offset, at, "{}: headers overlap or leave a gap", info.name);
        at += len;
    }
    assert_eq!(
        at, info.length,
        "{}: headers do not end at the payload",
        info.name
    );
    out[start..].copy_from_slice(&bytes[start..]);
    let again = Packet::parse(&out).expect("the written-back packet parses");
    assert_eq!(again.bth(), pkt.bth());
    assert_eq!(again.payload(), pkt.payload());
    assert_eq!(again.header::<Reth>(), pkt.header::<Reth>());
    assert_eq!(again.header::<Aeth>(), pkt.header::<Aeth>());
    assert_eq!(again.header::<Deth>(), pkt.header::<Deth>());
    assert_eq!(again.header::<Atmeth>(), pkt.header::<Atmeth>());
    assert_eq!(again.header::<Immdt>(), pkt.header::<Immdt>());
}

/// A plain IPv4 header, 10.0.0.1 to 10.0.0.2, UDP.
const IPV4_TEMPLATE: [u8; IPV4_HDR_LEN] = [
    0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
];
/// A plain IPv6 header, fe80::1 to fe80::2, UDP.
const IPV6_TEMPLATE: [u8; IPV6_HDR_LEN] = [
    0x60, 0, 0, 0, 0, 0, 17, 64, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xfe, 0x80,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
];
/// UDP from port 49152 to 4791.
const UDP_TEMPLATE: [u8; UDP_HDR_LEN] = [0xc0, 0x00, 0x12, 0xb7, 0, 0, 0, 0];

/// Whether flipping byte `i` of the IP header leaves the ICRC as it is.
fn ip_byte_masked(v6: bool, i: usize) -> bool {
    if v6 {
        matches!(i, 1..=3 | 7)
    } else {
        matches!(i, 1 | 8 | 10 | 11)
    }
}

/// The ICRC of a UDP payload under `ip` and `udp`: `verify` agrees with `compute`, a generated
/// ICRC verifies and is what `Packet::icrc` reads, and flipping a covered bit (the ICRC's own
/// included) fails verification while flipping a masked one does not.
fn check_icrc(ip: IpHeader<'_>, udp: &[u8; UDP_HDR_LEN], payload: &[u8], sig: &mut Sig) {
    let verified = icrc::verify(ip, udp, payload);
    // In pieces (the headers whole, the rest in as many pieces as fit), the same verdict.
    let head = payload.len().min(64);
    let mut parts = Parts::from_slice(&payload[..head]);
    let rest = &payload[head..];
    for piece in rest.chunks(rest.len().div_ceil(MAX_PARTS - 1).max(1)) {
        parts.push(piece).unwrap();
    }
    assert_eq!(
        icrc::verify_parts(icrc::crc32_le, ip, udp, &parts),
        verified
    );
    let Some(body_len) = payload.len().checked_sub(ICRC_LEN) else {
        assert_eq!(verified, Err(Error::Truncated));
        sig.add(0x200);
        return;
    };
    let computed = icrc::compute(ip, udp, &payload[..body_len]);
    let carried = u32::from_le_bytes(payload[body_len..].try_into().unwrap());
    let icrc = match computed {
        Err(e) => {
            assert_eq!(verified, Err(e));
            sig.error(&e);
            return;
        }
        Ok(icrc) => icrc,
    };
    if icrc == carried {
        assert_eq!(verified, Ok(()));
        sig.add(0x201);
    } else {
        assert_eq!(
            verified,
            Err(Error::IcrcMismatch {
                computed: icrc,
                carried
            })
        );
        sig.add(0x202);
    }
    let mut good = payload.to_vec();
    icrc::generate(ip, udp, &mut good).expect("generate where compute works");
    assert_eq!(icrc::verify(ip, udp, &good), Ok(()));
    if let Ok(pkt) = Packet::parse(&good) {
        assert_eq!(pkt.icrc(), icrc);
    }

    let h = hash(payload);
    let pick = |n: usize, salt: u32| (h.rotate_left(salt * 13) % n as u64) as usize;
    let bit = 1u8 << (h % 8);
    // The ICRC itself, and one byte of the transport headers or payload past the opcode.
    let mut flipped = good.clone();
    flipped[body_len + pick(ICRC_LEN, 1)] ^= bit;
    assert!(
        matches!(
            icrc::verify(ip, udp, &flipped),
            Err(Error::IcrcMismatch { .. })
        ),
        "flipped ICRC verifies: {}",
        hex(&flipped)
    );
    if body_len > 1 {
        let i = 1 + pick(body_len - 1, 2);
        let mut flipped = good.clone();
        flipped[i] ^= bit;
        let r = icrc::verify(ip, udp, &flipped);
        // BTH byte 4 is masked, but for the opcodes whose ICRC covers the headers a second
        // time, unmasked (RC_FLUSH, RD_ACKNOWLEDGE, RD_ATOMIC_ACKNOWLEDGE).
        let twice = opcode_info(good[0]).is_some_and(|info| info.icrc_payload_offset() == 0);
        if i == 4 && !twice {
            assert_eq!(r, Ok(()), "BTH byte 4 is masked");
        } else {
            assert!(r.is_err(), "flipped byte {i} verifies: {}", hex(&flipped));
        }
    }
    // The UDP header: only the checksum is masked.
    let i = pick(UDP_HDR_LEN, 3);
    let mut udp2 = *udp;
    udp2[i] ^= bit;
    assert_eq!(
        icrc::verify(ip, &udp2, &good).is_ok(),
        i >= 6,
        "UDP byte {i} flipped"
    );
    // The IP header, by version.
    match ip {
        IpHeader::V4(header) => {
            let i = pick(IPV4_HDR_LEN, 4);
            let mut ip2 = *header;
            ip2[i] ^= bit;
            let r = icrc::verify(IpHeader::V4(&ip2), udp, &good);
            assert_eq!(r.is_ok(), ip_byte_masked(false, i), "IPv4 byte {i} flipped");
        }
        IpHeader::V6(header) => {
            let i = pick(IPV6_HDR_LEN, 4);
            let mut ip2 = *header;
            ip2[i] ^= bit;
            let masked = ip_byte_masked(true, i) || (i == 0 && bit < 0x10);
            let r = icrc::verify(IpHeader::V6(&ip2), udp, &good);
            assert_eq!(r.is_ok(), masked, "IPv6 byte {i} bit {bit:#x} flipped");
        }
    }
}

/// An IP datagram as the receive path takes it apart (`rxe_rs/rxe/recv.rs`): IP header, UDP
/// header, the UDP payload as long as the UDP header says, the ICRC, then the packet.
fn check_ip_datagram(data: &[u8], sig: &mut Sig) {
    let ip = match IpHeader::parse(data) {
        Ok(ip) => ip,
        Err(e) => {
            let expected = match data.first() {
                None => Error::Truncated,
                Some(&b) if b >> 4 != 4 && b >> 4 != 6 => Error::BadIpVersion(b >> 4),
                Some(_) => Error::Truncated,
            };
            assert_eq!(e, expected);
            sig.error(&e);
            return;
        }
    };
    let ip_len = match ip {
        IpHeader::V4(h) => {
            assert!(data.len() >= IPV4_HDR_LEN && core::ptr::eq(&h[..], &data[..IPV4_HDR_LEN]));
            usize::from(h[0] & 0x0f) * 4
        }
        IpHeader::V6(h) => {
            assert!(core::ptr::eq(&h[..], &data[..IPV6_HDR_LEN]));
            IPV6_HDR_LEN
        }
    };
    sig.add(0x300 | ip_len as u64);
    if ip_len < IPV4_HDR_LEN {
        return;
    }
    let Some((udp, rest)) = data
        .get(ip_len..)
        .and_then(|d| d.split_first_chunk::<UDP_HDR_LEN>())
    else {
        return;
    };
    let udp_len = usize::from(be16(udp, 4).unwrap_or(0));
    let Some(payload) = udp_len
        .checked_sub(UDP_HDR_LEN)
        .and_then(|len| rest.get(..len))
    else {
        sig.add(0x310);
        return;
    };
    check_icrc(ip, udp, payload, sig);
    check_udp_payload(payload, sig);
    let verified = icrc::verify(ip, udp, payload).is_ok();
    if let (true, Ok(pkt)) = (verified, Packet::parse(payload)) {
        sig.add(0x320);
        let body = &payload[..payload.len() - ICRC_LEN];
        assert_eq!(icrc::compute(ip, udp, body), Ok(pkt.icrc()));
    }
}

// ---------------------------------------------------------------------------------------------
// Work queue entries.
// ---------------------------------------------------------------------------------------------

/// The QP type a byte stands for.
pub(crate) fn qp_type(byte: u8) -> QpType {
    match byte % 5 {
        0 => QpType::Rc,
        1 => QpType::Uc,
        2 => QpType::Ud,
        3 => QpType::Gsi,
        _ => QpType::Smi,
    }
}

/// Walks the SGEs of a parsed WQE as `copy_data()` does, in chunks of at most `step(resid)`.
fn walk_sges(slot_sge: &dyn Fn(u32) -> Option<Sge>, num_sge: u32, length: u32, seed: u64) {
    let mut cursor = DmaCursor::new(length);
    let mut total: u64 = 0;
    let mut calls = 0u64;
    let mut rng = seed | 1;
    while !cursor.is_done() {
        calls += 1;
        assert!(
            calls <= 2 * u64::from(num_sge) + 80,
            "the walk does not end"
        );
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let step = if rng & 1 == 0 {
            cursor.resid
        } else {
            (cursor.resid / 2).max(1)
        };
        let before = cursor;
        match cursor.next_chunk(slot_sge, num_sge, step) {
            Ok(Some(chunk)) => {
                assert!(chunk.len >= 1 && chunk.len <= step);
                let sge = slot_sge(cursor.cur_sge).expect("the chunk's SGE");
                assert_eq!(chunk.lkey, sge.lkey);
                assert!(cursor.sge_offset <= sge.length);
                assert_eq!(
                    u128::from(chunk.addr) + u128::from(chunk.len),
                    u128::from(sge.addr) + u128::from(cursor.sge_offset)
                );
                assert_eq!(before.resid - cursor.resid, chunk.len);
                total += u64::from(chunk.len);
            }
            Err(DmaError::AddrOverflow) => {
                assert_eq!(cursor, before, "the cursor moved on an error");
                return;
            }
            other => panic!("walk of a checked WQE: {other:?} at {before:?}"),
        }
    }
    assert_eq!(total, u64::from(length));
    let mut skip = DmaCursor::new(length);
    match skip.advance(slot_sge, num_sge, length) {
        Ok(()) => assert!(skip.is_done()),
        Err(e) => panic!("advance over a walked WQE: {e:?}"),
    }
}

fn wqe_error_tag(e: &WqeError) -> u64 {
    match e {
        WqeError::Truncated => 1,
        WqeError::BadOpcode(_) => 2,
        WqeError::KernelOnlyOpcode(_) => 3,
        WqeError::TooManySge { .. } => 4,
        WqeError::DataOutOfSlot => 5,
        WqeError::InlineTooLong { .. } => 6,
        WqeError::LengthOverflow => 7,
        WqeError::LengthMismatch { .. } => 8,
        WqeError::MessageTooLong(_) => 9,
        WqeError::AtomicWriteLength(_) => 10,
        WqeError::Inconsistent => 11,
        WqeError::BadStatus(_) => 12,
        WqeError::BadAtomic => 13,
        WqeError::InlineNotAllowed(_) => 14,
    }
}

/// `SendWqe::parse` of a hostile slot with arbitrary limits.
fn check_send_wqe(data: &[u8], sig: &mut Sig) {
    let Some((prefix, slot)) = data.split_first_chunk::<SEND_PREFIX>() else {
        return;
    };
    let qp_type = qp_type(prefix[0]);
    let limits = SendLimits {
        max_sge: le32(prefix, 1),
        max_inline: le32(prefix, 5),
        allow_kernel_only: prefix[9] & 1 != 0,
    };
    let wqe = match SendWqe::parse(slot, qp_type, limits) {
        Ok(wqe) => wqe,
        Err(e) => {
            sig.add(0x400 | wqe_error_tag(&e));
            return;
        }
    };
    sig.add(0x500 | (u64::from(wqe.opcode) << 4) | (qp_type as u64));
    let mask = crate::proto::wqe::wr_opcode_mask(wqe.opcode, qp_type).expect("an allowed opcode");
    assert_eq!(wqe.mask, mask);
    assert_eq!(wqe.data, DataKind::of(mask, wqe.send_flags));
    assert_eq!(wqe.opcode, le32(slot, SEND_WR_OPCODE_OFFSET));
    assert_eq!(wqe.send_flags, le32(slot, SEND_WR_SEND_FLAGS_OFFSET));
    if crate::proto::wqe::wr_opcode_is_kernel_only(wqe.opcode) {
        assert!(limits.allow_kernel_only);
    }
    let sges: Vec<Sge>;
    let send_data = match wqe.data {
        DataKind::None => {
            assert_eq!(wqe.num_sge, 0);
            if !mask.contains(WrMask::FLUSH) {
                assert_eq!(wqe.length, 0);
            }
            SendData::None
        }
        DataKind::AtomicWrite => {
            assert_eq!((wqe.length, wqe.num_sge), (8, 0));
            SendData::AtomicWrite(atomic_write_value(slot).expect("the value is in the slot"))
        }
        DataKind::Inline => {
            assert!(wqe.length <= limits.max_inline);
            assert_eq!(wqe.num_sge, 0);
            let bytes = inline_data(slot, wqe.length).expect("inline data in the slot");
            assert_eq!(bytes.len() as u64, u64::from(wqe.length));
            let mut cursor = DmaCursor::new(wqe.length);
            let mut seen = 0usize;
            while !cursor.is_done() {
                let step = (cursor.resid / 3).max(1).min(cursor.resid);
                let range = cursor.next_inline(step).expect("inline within resid");
                assert_eq!(range.start, seen);
                assert!(bytes.get(range.clone()).is_some());
                seen = range.end;
                assert!(seen <= bytes.len() && cursor.sge_offset as usize == seen);
            }
            assert_eq!(seen, bytes.len());
            SendData::Inline(bytes)
        }
        DataKind::Sges => {
            assert!(wqe.num_sge <= limits.max_sge);
            assert!(wqe.length <= PORT_MAX_MSG_SZ);
            sges = (0..wqe.num_sge)
                .map(|i| sge(slot, i).expect("every SGE is in the slot"))
                .collect();
            let sum: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
            assert_eq!(sum, u64::from(wqe.length));
            walk_sges(&|i| sge(slot, i), wqe.num_sge, wqe.length, hash(slot));
            SendData::Sges(&sges)
        }
    };
    sig.add(0x600 | wqe.data as u64);
    // More bytes after the slot change nothing.
    let mut longer = slot.to_vec();
    longer.extend_from_slice(&[0xa5; 40]);
    assert_eq!(SendWqe::parse(&longer, qp_type, limits), Ok(wqe));
    // Written again, as the kernel's own post does, it reads back the same.
    let mut fresh = vec![0xcc; slot.len()];
    let again = match write_send_wqe(&mut fresh, qp_type, limits, &wqe.wr(), send_data) {
        Ok(again) => again,
        // What C's `validate_send_wr` refuses of a kernel WR, a user WQE may hold.
        Err(WqeError::BadAtomic) => {
            let aligned = wqe.detail.remote_addr().is_some_and(|a| a % 8 == 0);
            assert!(mask.contains(WrMask::ATOMIC) && (wqe.length != 8 || !aligned));
            return;
        }
        Err(WqeError::InlineNotAllowed(_)) => {
            assert!(wqe.send_flags & IB_SEND_INLINE != 0 && !mask.contains(WrMask::INLINE));
            return;
        }
        Err(e) => panic!("rewriting {wqe:?}: {e:?}"),
    };
    assert_eq!(again.wr(), wqe.wr());
    assert_eq!(
        (again.num_sge, again.mask, again.data),
        (wqe.num_sge, wqe.mask, wqe.data)
    );
    assert_eq!(again.iova, wqe.detail.remote_addr().unwrap_or(0));
    if !mask.contains(WrMask::FLUSH) {
        assert_eq!(again.length, wqe.length);
    }
    assert_eq!(SendWqe::parse(&fresh, qp_type, limits), Ok(again));
}

/// `RecvWqe::parse` of a hostile slot with an arbitrary `max_sge`, and the same bytes as a CQE.
fn check_recv_wqe(data: &[u8], sig: &mut Sig) {
    let Some((prefix, slot)) = data.split_first_chunk::<RECV_PREFIX>() else {
        return;
    };
    let max_sge = u32::from_le_bytes(*prefix);

    if let Ok(wc) = UverbsWc::read(slot) {
        let mut out = vec![0xcc; slot.len()];
        wc.write(&mut out).expect("room for the CQE");
        assert_eq!(UverbsWc::read(&out), Ok(wc));
        assert_eq!(out[..UVERBS_WC_LEN - 1], slot[..UVERBS_WC_LEN - 1]);
        assert_eq!(out[UVERBS_WC_LEN - 1], 0);
    } else {
        // Too short, or a status `enum ib_wc_status` does not have.
        assert!(
            slot.len() < UVERBS_WC_LEN
                || WcStatus::from_raw(u32::from_le_bytes(
                    slot[UVERBS_WC_STATUS_OFFSET..UVERBS_WC_STATUS_OFFSET + 4]
                        .try_into()
                        .unwrap()
                ))
                .is_none()
        );
    }

    let wqe = match RecvWqe::parse(slot, max_sge) {
        Ok(wqe) => wqe,
        Err(e) => {
            sig.add(0x700 | wqe_error_tag(&e));
            return;
        }
    };
    sig.add(0x800 | u64::from(wqe.num_sge.min(8)));
    assert!(wqe.num_sge <= max_sge);
    assert!(wqe.length <= PORT_MAX_MSG_SZ);
    let sges: Vec<Sge> = (0..wqe.num_sge)
        .map(|i| recv_sge(slot, i).expect("every SGE is in the slot"))
        .collect();
    let sum: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
    assert_eq!(sum, u64::from(wqe.length));
    walk_sges(&|i| recv_sge(slot, i), wqe.num_sge, wqe.length, hash(slot));
    let mut longer = slot.to_vec();
    longer.extend_from_slice(&[0x5a; 40]);
    assert_eq!(RecvWqe::parse(&longer, max_sge), Ok(wqe));
    let mut fresh = vec![0xcc; slot.len()];
    assert_eq!(
        write_recv_wqe(&mut fresh, wqe.wr_id, &sges, max_sge),
        Ok(wqe)
    );
}

// ---------------------------------------------------------------------------------------------
// Rings.
// ---------------------------------------------------------------------------------------------

/// Queue sizing and hostile shared indices: 9 little-endian `u32`s (sizes of an old and a new
/// queue, a cache line, the indices) and a role byte.
fn check_ring(data: &[u8], sig: &mut Sig) {
    let word = |i: usize| le32(data, 4 * i);
    let role = match data.get(36).copied().unwrap_or(0) % 4 {
        0 => QueueType::ToClient,
        1 => QueueType::FromClient,
        2 => QueueType::FromUlp,
        _ => QueueType::ToUlp,
    };
    // Small sizes most of the time, any size some of the time.
    let size = |w: u32| if w & 0x8000_0000 != 0 { w } else { w & 0xfff };
    let cache_line = 1 << (word(2) % 8);
    let Ok(geo) = Geometry::new(size(word(0)), size(word(1)), cache_line) else {
        sig.add(0x900);
        return;
    };
    check_geometry(&geo, size(word(0)), size(word(1)), cache_line);
    let own = geo.mask(RawIndex::new(word(3)));
    let ends = geo.ends(role, own, RawIndex::new(word(4)));
    let count = ends.count();
    sig.add(0xa00 | u64::from(ends.is_empty()) | u64::from(ends.is_full()) << 1);
    assert!(count <= geo.capacity());
    assert_eq!(ends.is_empty(), count == 0);
    assert_eq!(ends.is_full(), count == geo.capacity());
    assert!(ends.producer().get() <= geo.index_mask() && ends.consumer().get() <= geo.index_mask());
    let indices = ends.indices();
    assert_eq!(indices.len() as u64, u64::from(count));
    let data_range = geo.data_range();
    for (n, index) in indices.take(64).enumerate() {
        let slot = geo.slot(index);
        assert!(slot.start >= data_range.start && slot.end <= data_range.end);
        assert_eq!(geo.index_from_offset(slot.start), Some(index));
        assert_eq!(geo.index_from_offset(slot.end - 1), Some(index));
        let expected = ends.consumer().get().wrapping_add(n as u32) & geo.index_mask();
        assert_eq!(index.get(), expected);
    }
    assert_eq!(geo.index_from_offset(data_range.end), None);
    assert_eq!(geo.index_from_offset(QUEUE_BUF_HDR_SIZE - 1), None);
    match geo.head(&ends) {
        None => assert!(ends.is_empty()),
        Some(off) => assert_eq!(off, geo.consumer_offset(&ends)),
    }

    let Ok(new) = Geometry::new(size(word(5)), size(word(6)), cache_line) else {
        return;
    };
    check_geometry(&new, size(word(5)), size(word(6)), cache_line);
    let new_start = new.mask(RawIndex::new(word(7)));
    match geo.resize(role, &ends, &new, new_start) {
        Err(_) => assert!(count > new.capacity()),
        Ok(plan) => {
            sig.add(0xb00);
            assert_eq!(plan.count(), count);
            let copies = plan.copies();
            assert_eq!(copies.len() as u64, u64::from(count));
            let new_range = new.data_range();
            for copy in copies.take(64) {
                assert!(copy.from.start >= data_range.start && copy.from.end <= data_range.end);
                assert!(copy.to.start >= new_range.start && copy.to.end <= new_range.end);
                assert!(copy.from.len() <= geo.slot_size() as usize);
                assert!(copy.to.len() <= new.slot_size() as usize);
            }
            let producer = new_start.get().wrapping_add(count) & new.index_mask();
            assert_eq!(plan.new_producer().get(), producer);
        }
    }
}

fn check_geometry(geo: &Geometry, num_elem: u32, elem_size: u32, cache_line: u32) {
    assert!(geo.num_slots().is_power_of_two());
    assert!(geo.capacity() >= num_elem);
    assert!(geo.slot_size().is_power_of_two());
    assert!(geo.slot_size() >= elem_size.max(cache_line));
    assert_eq!(geo.elem_size(), elem_size);
    let buf = u64::from(geo.num_slots()) * u64::from(geo.slot_size()) + QUEUE_BUF_HDR_SIZE as u64;
    assert_eq!(geo.buf_size() as u64, buf);
    assert!(buf <= u64::from(MAX_BUF_SIZE));
}

// ---------------------------------------------------------------------------------------------
// Seeds and mutations, shared by the proptest driver and the mutation loop.
// ---------------------------------------------------------------------------------------------

/// The two inputs a captured RoCEv2 packet gives: its UDP payload alone, and the IP datagram.
pub(crate) fn packet_seeds(ip: &[u8], udp: &[u8; UDP_HDR_LEN], payload: &[u8]) -> [Vec<u8>; 2] {
    let mut alone = vec![TARGET_UDP_PAYLOAD];
    alone.extend_from_slice(payload);
    let mut datagram = vec![TARGET_IP_DATAGRAM];
    datagram.extend_from_slice(ip);
    datagram.extend_from_slice(udp);
    datagram.extend_from_slice(payload);
    [alone, datagram]
}

/// One well-formed packet of every opcode of the table (the captures lack several), under
/// IPv4 and IPv6, with a correct ICRC, and valid WQEs and rings.
pub(crate) fn synthetic_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for opcode in 0..=255u8 {
        let Some(info) = opcode_info(opcode) else {
            continue;
        };
        for payload_len in [0usize, 5] {
            let pad = pad_len(payload_len);
            let mut pkt = vec![0; info.length + payload_len + pad + ICRC_LEN];
            let bth = Bth {
                opcode,
                pad: pad as u8,
                pkey: 0xffff,
                qpn: 0x11,
                psn: 0x00ff_fffe,
                ack_req: true,
                ..Bth::default()
            };
            bth.write(&mut pkt).unwrap();
            for (i, b) in pkt[BTH_LEN..info.length + payload_len]
                .iter_mut()
                .enumerate()
            {
                *b = (i as u8).wrapping_mul(37);
            }
            for v6 in [false, true] {
                let (ip, len): (IpHeader<'_>, usize) = if v6 {
                    (IpHeader::V6(&IPV6_TEMPLATE), IPV6_HDR_LEN)
                } else {
                    (IpHeader::V4(&IPV4_TEMPLATE), IPV4_HDR_LEN)
                };
                let mut udp = UDP_TEMPLATE;
                udp[4..6].copy_from_slice(&((UDP_HDR_LEN + pkt.len()) as u16).to_be_bytes());
                icrc::generate(ip, &udp, &mut pkt).unwrap();
                let ip_bytes = if v6 {
                    &IPV6_TEMPLATE[..]
                } else {
                    &IPV4_TEMPLATE[..len]
                };
                seeds.extend(packet_seeds(ip_bytes, &udp, &pkt));
            }
        }
    }
    // Send WQEs: SGEs, inline, atomic write, flush, UD.
    let limits = SendLimits {
        max_sge: 4,
        max_inline: 64,
        allow_kernel_only: false,
    };
    let sges = [
        Sge {
            addr: 0x1000,
            length: 100,
            lkey: 7,
        },
        Sge {
            addr: 0x9000,
            length: 0,
            lkey: 8,
        },
        Sge {
            addr: u64::MAX - 50,
            length: 20,
            lkey: 9,
        },
    ];
    let wrs: [(QpType, u32, u32, SendData<'_>); 6] = [
        (
            QpType::Rc,
            crate::proto::wqe::IB_WR_SEND,
            0,
            SendData::Sges(&sges),
        ),
        (
            QpType::Rc,
            crate::proto::wqe::IB_WR_RDMA_WRITE,
            8,
            SendData::Inline(b"hello, world"),
        ),
        (
            QpType::Rc,
            crate::proto::wqe::IB_WR_ATOMIC_WRITE,
            0,
            SendData::AtomicWrite([1; 8]),
        ),
        (
            QpType::Rc,
            crate::proto::wqe::IB_WR_FLUSH,
            0,
            SendData::None,
        ),
        (
            QpType::Ud,
            crate::proto::wqe::IB_WR_SEND_WITH_IMM,
            0,
            SendData::Sges(&sges[..2]),
        ),
        (
            QpType::Uc,
            crate::proto::wqe::IB_WR_RDMA_READ,
            0,
            SendData::Sges(&sges[..1]),
        ),
    ];
    for (qp, opcode, flags, data) in wrs {
        let mask = crate::proto::wqe::wr_opcode_mask(opcode, qp).unwrap_or(WrMask::NONE);
        let detail = match (qp, opcode) {
            (QpType::Ud, _) => crate::proto::wqe::WrDetail::Ud {
                remote_qpn: 5,
                remote_qkey: 0x8001_0000,
                pkey_index: 0,
                ah_num: 1,
            },
            (_, crate::proto::wqe::IB_WR_FLUSH) => crate::proto::wqe::WrDetail::Flush {
                remote_addr: 0x2000,
                length: 64,
                rkey: 3,
                type_: 1,
                level: 0,
            },
            _ if mask.intersects(WrMask::READ_OR_WRITE.union(WrMask::ATOMIC_WRITE)) => {
                crate::proto::wqe::WrDetail::Rdma {
                    remote_addr: 0x3000,
                    rkey: 4,
                }
            }
            _ => crate::proto::wqe::WrDetail::None,
        };
        let wr = crate::proto::wqe::SendWr {
            wr_id: 0x1234,
            opcode,
            send_flags: flags,
            ex: 0xdead_beef,
            detail,
        };
        let mut slot = vec![0; 208 + 64];
        // Some (UC READ) are refused: their bytes are still a fine seed.
        let _ = write_send_wqe(&mut slot, qp, limits, &wr, data);
        let qp_byte = match qp {
            QpType::Rc => 0,
            QpType::Uc => 1,
            QpType::Ud => 2,
            QpType::Gsi => 3,
            QpType::Smi => 4,
        };
        let mut seed = vec![TARGET_SEND_WQE, qp_byte];
        seed.extend_from_slice(&limits.max_sge.to_le_bytes());
        seed.extend_from_slice(&limits.max_inline.to_le_bytes());
        seed.push(0);
        seed.extend_from_slice(&slot);
        seeds.push(seed);
    }
    // Receive WQEs.
    let mut slot = vec![0; 40 + 3 * 16];
    write_recv_wqe(&mut slot, 99, &sges, 3).unwrap();
    let mut seed = vec![TARGET_RECV_WQE];
    seed.extend_from_slice(&3u32.to_le_bytes());
    seed.extend_from_slice(&slot);
    seeds.push(seed);
    // Rings: a CQ of 255 CQEs, a 64-entry SQ, full, empty and wrapped.
    for words in [
        [255u32, 72, 6, 3, 200, 511, 72, 0, 0],
        [64, 208, 6, 0, 0, 16, 208, 1, 5],
    ] {
        let mut seed = vec![TARGET_RING];
        for w in words {
            seed.extend_from_slice(&w.to_le_bytes());
        }
        seed.push(1);
        seeds.push(seed);
    }
    seeds
}

/// Where the BTH starts in an input of the packet targets, if it has one.
fn bth_at(input: &[u8]) -> Option<usize> {
    match input.first()? % TARGETS {
        TARGET_UDP_PAYLOAD => Some(1),
        TARGET_IP_DATAGRAM => {
            let ip_len = match input.get(1)? >> 4 {
                6 => IPV6_HDR_LEN,
                _ => usize::from(input.get(1)? & 0x0f) * 4,
            };
            Some(1 + ip_len + UDP_HDR_LEN)
        }
        _ => None,
    }
}

/// Offsets of fields worth setting to edge values, by target.
fn fields(input: &[u8]) -> Vec<usize> {
    let Some(&selector) = input.first() else {
        return Vec::new();
    };
    match selector % TARGETS {
        TARGET_UDP_PAYLOAD | TARGET_IP_DATAGRAM => {
            let mut v = Vec::new();
            if let Some(bth) = bth_at(input) {
                // RETH length, AETH, DETH: the first words after the BTH; the ICRC.
                v.extend([bth + 12, bth + 16, bth + 20, bth + 24]);
                v.push(input.len().saturating_sub(4));
                if selector % TARGETS == TARGET_IP_DATAGRAM {
                    v.push(bth - 4); // UDP length
                    v.push(1 + 2); // IPv4 total length
                }
            }
            v
        }
        TARGET_SEND_WQE => {
            let s = 1 + SEND_PREFIX;
            std::vec![
                2,
                6,
                s + SEND_WR_OPCODE_OFFSET,
                s + SEND_WR_SEND_FLAGS_OFFSET,
                s + SEND_WQE_DMA_OFFSET,
                s + SEND_WQE_DMA_OFFSET + 12,
                s + 208 + 8,
                s + 208 + 24,
            ]
        }
        TARGET_RECV_WQE => {
            let s = 1 + RECV_PREFIX;
            std::vec![1, s + 16, s + 16 + 12, s + 40 + 8, s + 40 + 24]
        }
        _ => (0..9).map(|i| 1 + 4 * i).collect(),
    }
}

/// Values a length or count likes to break on.
const EDGE_VALUES: [u32; 12] = [
    0,
    1,
    3,
    4,
    7,
    8,
    0xff,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fff8,
    0xffff_ffff,
];

/// One edit of an input.
#[derive(Clone, Debug)]
pub(crate) enum Mutation {
    /// Flip bit `bit % 8` of byte `at % len`.
    FlipBit { at: usize, bit: u8 },
    /// Set byte `at % len`.
    SetByte { at: usize, value: u8 },
    /// Keep the first `len % (len + 1)` bytes.
    Truncate { len: usize },
    /// Append bytes.
    Extend { count: u8, value: u8 },
    /// Remove `count` bytes at `at % len`.
    Remove { at: usize, count: u8 },
    /// Swap in another BTH opcode (any byte; usually a known one).
    Opcode { opcode: u8 },
    /// Set the BTH pad count and version nibble.
    PadVersion { pad: u8, tver: u8 },
    /// Set a length/count field (big-endian in packets, little-endian in WQEs and rings) to an
    /// edge value, or to `value`.
    Field {
        field: usize,
        edge: usize,
        value: u32,
    },
    /// Change the target the selector names.
    Retarget { selector: u8 },
}

impl Mutation {
    /// The mutation `n` random words give (for the mutation loop).
    pub(crate) fn from_random(r: [u64; 3]) -> Self {
        let at = r[1] as usize;
        let byte = r[2] as u8;
        match r[0] % 16 {
            0..=3 => Self::FlipBit { at, bit: byte },
            4 | 5 => Self::SetByte { at, value: byte },
            6 => Self::Truncate { len: at },
            7 => Self::Extend {
                count: byte % 32,
                value: (r[2] >> 8) as u8,
            },
            8 => Self::Remove {
                at,
                count: byte % 8,
            },
            9 | 10 => Self::Opcode {
                opcode: if byte & 0x80 != 0 {
                    byte
                } else {
                    known_opcode(at)
                },
            },
            11 => Self::PadVersion {
                pad: byte % 4,
                tver: if byte & 0x80 != 0 {
                    (byte >> 2) % 16
                } else {
                    0
                },
            },
            12..=14 => Self::Field {
                field: at,
                edge: (r[2] >> 8) as usize,
                value: (r[2] >> 32) as u32,
            },
            _ => Self::Retarget { selector: byte },
        }
    }

    /// Applies the edit.
    pub(crate) fn apply(&self, input: &mut Vec<u8>) {
        let len = input.len();
        match *self {
            Self::FlipBit { at, bit } if len > 0 => input[at % len] ^= 1 << (bit % 8),
            Self::SetByte { at, value } if len > 0 => input[at % len] = value,
            Self::Truncate { len: keep } => input.truncate(keep % (len + 1)),
            Self::Extend { count, value } => input.extend(std::iter::repeat_n(value, count.into())),
            Self::Remove { at, count } if len > 0 => {
                let at = at % len;
                let end = (at + usize::from(count)).min(len);
                input.drain(at..end);
            }
            Self::Opcode { opcode } => {
                if let Some(b) = bth_at(input).and_then(|at| input.get_mut(at)) {
                    *b = opcode;
                }
            }
            Self::PadVersion { pad, tver } => {
                if let Some(b) = bth_at(input).and_then(|at| input.get_mut(at + 1)) {
                    *b = (*b & 0xc0) | ((pad % 4) << 4) | (tver % 16);
                }
            }
            Self::Field { field, edge, value } => {
                let fields = fields(input);
                if fields.is_empty() {
                    return;
                }
                let at = fields[field % fields.len()];
                let v = EDGE_VALUES.get(edge % (EDGE_VALUES.len() + 4)).copied();
                let v = v.unwrap_or(value);
                let packet = matches!(input[0] % TARGETS, TARGET_UDP_PAYLOAD | TARGET_IP_DATAGRAM);
                // The UDP length and the IPv4 total length are 16 bits: they take the low half.
                let short = packet && (Some(at + 4) == bth_at(input) || at == 3);
                let (bytes, n) = match (packet, short) {
                    (true, true) => ((v << 16).to_be_bytes(), 2),
                    (true, false) => (v.to_be_bytes(), 4),
                    _ => (v.to_le_bytes(), 4),
                };
                for (i, &b) in bytes.iter().take(n).enumerate() {
                    if let Some(dst) = input.get_mut(at + i) {
                        *dst = b;
                    }
                }
            }
            Self::Retarget { selector } => {
                if let Some(b) = input.first_mut() {
                    *b = selector;
                }
            }
            _ => {}
        }
    }
}

/// The `n`th known opcode, cycling.
pub(crate) fn known_opcode(n: usize) -> u8 {
    let known: Vec<u8> = (0..=255).filter(|&op| opcode_info(op).is_some()).collect();
    known[n % known.len()]
}

/// Splices the head of `a` with the tail of `b` (same target as `a`).
pub(crate) fn splice(a: &[u8], b: &[u8], cut_a: usize, cut_b: usize) -> Vec<u8> {
    let mut out = a[..cut_a % (a.len() + 1)].to_vec();
    out.extend_from_slice(&b[cut_b % (b.len() + 1)..]);
    out
}

/// Lower-case hex of `bytes`, for reports.
pub(crate) fn to_hex(bytes: &[u8]) -> std::string::String {
    hex(bytes)
}
