// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! A received RoCEv2 packet, from its BTH to its ICRC, checked for shape.

use super::hdr::{
    Aeth, Atmack, Atmeth, Bth, Deth, Feth, Header, Ieth, Immdt, Reth, BTH_LEN, BTH_PAD_MASK,
    BTH_PAD_SHIFT, BTH_TVER, BTH_TVER_MASK, ICRC_LEN,
};
use super::opcode::{opcode_info, OpcodeInfo};
use super::parts::Parts;
use super::Error;

/// The UDP payload of a RoCEv2 packet whose layout has been checked: the
/// opcode is known, the version is 0, and the headers, pad and ICRC fit.
/// Its headers are contiguous; its payload may be in pieces (a socket
/// buffer's page fragments).
///
/// Nothing about QPs, PSNs or the ICRC's value is checked here; see
/// [`super::icrc::verify`] for the ICRC.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    headers: &'a [u8],
    info: &'static OpcodeInfo,
    bth: Bth,
    payload: Parts<'a>,
    icrc: u32,
}

impl<'a> Packet<'a> {
    /// Checks the layout of `bytes`, the UDP payload: BTH, extension headers,
    /// payload, pad and ICRC. Its length must be the one the UDP header
    /// gives, not whatever the frame holds after it.
    #[inline]
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let (bth, info) = Self::parse_bth(bytes)?;
        // The pad sits between payload and ICRC, so the payload ends that
        // many bytes before the ICRC; too short a packet fails here.
        let payload_end = bytes
            .len()
            .checked_sub(ICRC_LEN + usize::from(bth.pad))
            .ok_or(Error::Truncated)?;
        let payload = bytes
            .get(info.length..payload_end)
            .ok_or(Error::Truncated)?;
        let icrc = bytes.last_chunk().ok_or(Error::Truncated)?;
        Ok(Self {
            headers: &bytes[..info.length],
            info,
            bth,
            payload: Parts::from_slice(payload),
            icrc: u32::from_le_bytes(*icrc),
        })
    }

    /// The BTH at the start of `head`, and its opcode's row, checked.
    fn parse_bth(head: &[u8]) -> Result<(Bth, &'static OpcodeInfo), Error> {
        let bth = Bth::parse(head)?;
        let info = opcode_info(bth.opcode).ok_or(Error::UnknownOpcode(bth.opcode))?;
        if bth.tver != BTH_TVER {
            return Err(Error::BadTransportVersion(bth.tver));
        }
        Ok((bth, info))
    }

    /// What [`Self::parse_parts`] checks, without making the packet: its BTH
    /// and its opcode's row if `parts` would parse.
    pub fn check_layout(parts: &Parts<'_>) -> Result<(Bth, &'static OpcodeInfo), Error> {
        let route = Self::route(parts)?;
        Ok((Bth::parse(parts.first())?, route.info))
    }

    /// [`Self::parse`] of a UDP payload in pieces, whose first piece holds
    /// every header of its opcode (`Truncated` otherwise).
    #[inline]
    pub fn parse_parts(parts: &Parts<'a>) -> Result<Self, Error> {
        if let Some(bytes) = parts.as_slice() {
            return Self::parse(bytes);
        }
        let (bth, info) = Self::check_layout(parts)?;
        let headers = parts.first().get(..info.length).ok_or(Error::Truncated)?;
        // The pad sits between payload and ICRC, so the payload ends that
        // many bytes before the ICRC (the layout check made sure it fits).
        let payload_end = parts.len() - ICRC_LEN - usize::from(bth.pad);
        let payload = parts
            .range(info.length, payload_end)
            .ok_or(Error::Truncated)?;
        let icrc = parts
            .last_chunk::<ICRC_LEN>()
            .map(u32::from_le_bytes)
            .ok_or(Error::Truncated)?;
        Ok(Self {
            headers,
            info,
            bth,
            payload,
            icrc,
        })
    }

    /// A packet whose payload came apart from its headers (a looped-back packet whose payload
    /// was left in the sender's memory): `head` is its headers exactly, `payload` its payload,
    /// its BTH's pad the one that payload needs; it carries no ICRC (0). A layout that does not
    /// hold is `Truncated`.
    #[inline]
    pub fn with_payload(head: &'a [u8], payload: Parts<'a>) -> Result<Self, Error> {
        let (bth, info) = Self::parse_bth(head)?;
        if head.len() != info.length || usize::from(bth.pad) != pad_len(payload.len()) {
            return Err(Error::Truncated);
        }
        Ok(Self {
            headers: head,
            info,
            bth,
            payload,
            icrc: 0,
        })
    }

    /// What the receive path routes a packet by: the opcode's row, the P_Key and the destination
    /// QP, read from the BTH of `parts` (the UDP payload) without parsing the rest of it, once
    /// the layout holds (opcode, version, headers, pad and ICRC within the bytes; the checks of
    /// [`Self::check_layout`], which builds on this). The engine that takes the packet parses
    /// it then ([`Self::parse_parts`]).
    #[inline]
    pub fn route(parts: &Parts<'_>) -> Result<Route, Error> {
        let head = parts.first();
        let bth = head.first_chunk::<BTH_LEN>().ok_or(Error::Truncated)?;
        let info = opcode_info(bth[0]).ok_or(Error::UnknownOpcode(bth[0]))?;
        let tver = bth[1] & BTH_TVER_MASK;
        if tver != BTH_TVER {
            return Err(Error::BadTransportVersion(tver));
        }
        let pad = usize::from((bth[1] >> BTH_PAD_SHIFT) & BTH_PAD_MASK);
        if info.length > head.len() || info.length + ICRC_LEN + pad > parts.len() {
            return Err(Error::Truncated);
        }
        Ok(Route {
            info,
            pkey: u16::from_be_bytes([bth[2], bth[3]]),
            qpn: u32::from_be_bytes([0, bth[5], bth[6], bth[7]]),
        })
    }

    /// The Base Transport Header.
    pub fn bth(&self) -> &Bth {
        &self.bth
    }

    /// What the opcode table says about this packet's opcode.
    pub fn info(&self) -> &'static OpcodeInfo {
        self.info
    }

    /// Extension header `H`, or `None` if this opcode does not carry it.
    pub fn header<H: Header>(&self) -> Option<H> {
        let offset = self.info.offset(H::KIND)?;
        H::parse(self.headers.get(offset..)?).ok()
    }

    /// The payload: after the headers, before the pad.
    pub fn payload(&self) -> &Parts<'a> {
        &self.payload
    }

    /// The ICRC the packet carries, in the byte order [`super::icrc::compute`]
    /// returns it.
    pub fn icrc(&self) -> u32 {
        self.icrc
    }

    /// The BTH and extension headers.
    pub fn headers(&self) -> &'a [u8] {
        self.headers
    }
}

/// What [`Packet::route`] reads of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The opcode's row of the table.
    pub info: &'static OpcodeInfo,
    /// The BTH's partition key.
    pub pkey: u16,
    /// The BTH's destination QP number, 24 bits.
    pub qpn: u32,
}

/// How many pad bytes follow a payload of `payload_len` bytes, to bring it to
/// a multiple of 4.
pub const fn pad_len(payload_len: usize) -> usize {
    payload_len.wrapping_neg() & 3
}

/// The extension headers of a packet being built.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headers {
    /// RDMA Extended Transport Header: READ, WRITE and FLUSH requests.
    pub reth: Option<Reth>,
    /// ACK Extended Transport Header: acknowledgements and responses.
    pub aeth: Option<Aeth>,
    /// Atomic Extended Transport Header: atomic requests.
    pub atmeth: Option<Atmeth>,
    /// Atomic ACK Extended Transport Header: atomic responses.
    pub atmack: Option<Atmack>,
    /// Datagram Extended Transport Header: UD requests.
    pub deth: Option<Deth>,
    /// Immediate data.
    pub immdt: Option<Immdt>,
    /// Invalidate Extended Transport Header: SEND with invalidate.
    pub ieth: Option<Ieth>,
    /// Flush Extended Transport Header: FLUSH requests.
    pub feth: Option<Feth>,
}

impl Headers {
    /// Writes `bth` and these headers where the opcode `info` puts them, and every other byte
    /// of the opcode's `info.length` bytes of headers as zero (a header it carries that these
    /// lack), so that a buffer holding older bytes (a ring slot) needs no clearing first.
    /// `false` if these have a header the opcode does not carry or `data` is too short.
    pub fn write(&self, bth: &Bth, info: &OpcodeInfo, data: &mut [u8]) -> bool {
        // The extension headers' bytes zeroed at once, then each header there is written over
        // its place: fewer steps than a zeroing per header the opcode carries and these lack.
        let Some(extension) = data.get_mut(BTH_LEN..info.length) else {
            return false;
        };
        extension.fill(0);
        bth.write(data).is_ok()
            && write_some(&self.reth, info, data)
            && write_some(&self.aeth, info, data)
            && write_some(&self.atmeth, info, data)
            && write_some(&self.atmack, info, data)
            && write_some(&self.deth, info, data)
            && write_some(&self.immdt, info, data)
            && write_some(&self.ieth, info, data)
            && write_some(&self.feth, info, data)
    }
}

/// Writes header `h`, if there is one, where the opcode `info` puts it; `false` if the opcode
/// has no such header or it does not fit.
#[inline(always)]
fn write_some<H: Header>(h: &Option<H>, info: &OpcodeInfo, data: &mut [u8]) -> bool {
    match h {
        None => true,
        Some(h) => info
            .offset(H::KIND)
            .and_then(|offset| data.get_mut(offset..))
            .is_some_and(|at| h.write(at).is_ok()),
    }
}
