// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The InfiniBand transport headers as RoCEv2 carries them.
//!
//! Each header is a plain struct of its fields, decoded from and encoded to
//! the big-endian wire layout of the C driver's `rxe_hdr.h`. Decoding checks
//! the length and never panics; encoding writes exactly the header's bytes.

use super::psn::PSN_MASK;
use super::Error;

/// Size of the Base Transport Header.
pub const BTH_LEN: usize = 12;
/// Size of the Reliable Datagram Extended Transport Header.
pub const RDETH_LEN: usize = 4;
/// Size of the Datagram Extended Transport Header.
pub const DETH_LEN: usize = 8;
/// Size of the Flush Extended Transport Header.
pub const FETH_LEN: usize = 4;
/// Size of the RDMA Extended Transport Header.
pub const RETH_LEN: usize = 16;
/// Size of the ACK Extended Transport Header.
pub const AETH_LEN: usize = 4;
/// Size of the Atomic Acknowledge Extended Transport Header.
pub const ATMACK_LEN: usize = 8;
/// Size of the Atomic Extended Transport Header.
pub const ATMETH_LEN: usize = 28;
/// Size of the Invalidate Extended Transport Header.
pub const IETH_LEN: usize = 4;
/// Size of the Immediate Data Extended Transport Header.
pub const IMMDT_LEN: usize = 4;
/// Size of the Invariant CRC that ends every packet.
pub const ICRC_LEN: usize = 4;

/// The only transport header version defined.
pub const BTH_TVER: u8 = 0;
/// The default partition key, full membership.
pub const DEFAULT_PKEY: u16 = 0xffff;

/// Whether a packet's P_Key matches the port's, [`DEFAULT_PKEY`] (C `pkey_match`, IBA 10.9.3):
/// the same partition (the low 15 bits), of which one side is a full member (bit 15), which the
/// port always is. A limited member of the default partition (0x7FFF) is accepted.
pub const fn pkey_matches_default(pkey: u16) -> bool {
    pkey & 0x7fff == DEFAULT_PKEY & 0x7fff
}
/// The Q_Key of QP1, the General Services Interface (CM MADs).
pub const GSI_QKEY: u32 = 0x8001_0000;
/// QP numbers are 24 bits wide; so are end-to-end contexts and MSNs.
pub const QPN_MASK: u32 = 0x00ff_ffff;

/// A transport header, listed in the order headers follow each other on the
/// wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hdr {
    /// Base Transport Header, first in every packet.
    Bth,
    /// Reliable Datagram Extended Transport Header.
    Rdeth,
    /// Datagram Extended Transport Header.
    Deth,
    /// Flush Extended Transport Header.
    Feth,
    /// RDMA Extended Transport Header.
    Reth,
    /// ACK Extended Transport Header.
    Aeth,
    /// Atomic Acknowledge Extended Transport Header.
    Atmack,
    /// Atomic Extended Transport Header.
    Atmeth,
    /// Invalidate Extended Transport Header.
    Ieth,
    /// Immediate Data Extended Transport Header.
    Immdt,
}

impl Hdr {
    pub(super) const COUNT: usize = 10;
    pub(super) const WIRE_ORDER: [Self; Self::COUNT] = [
        Self::Bth,
        Self::Rdeth,
        Self::Deth,
        Self::Feth,
        Self::Reth,
        Self::Aeth,
        Self::Atmack,
        Self::Atmeth,
        Self::Ieth,
        Self::Immdt,
    ];

    /// Size of the header on the wire, in bytes.
    pub const fn wire_len(self) -> usize {
        match self {
            Self::Bth => BTH_LEN,
            Self::Rdeth => RDETH_LEN,
            Self::Deth => DETH_LEN,
            Self::Feth => FETH_LEN,
            Self::Reth => RETH_LEN,
            Self::Aeth => AETH_LEN,
            Self::Atmack => ATMACK_LEN,
            Self::Atmeth => ATMETH_LEN,
            Self::Ieth => IETH_LEN,
            Self::Immdt => IMMDT_LEN,
        }
    }
}

/// A transport header that can be decoded from and encoded to the wire.
pub trait Header: Sized {
    /// Which header this is; it takes `KIND.wire_len()` bytes.
    const KIND: Hdr;

    /// Decodes the header from the start of `bytes`.
    fn parse(bytes: &[u8]) -> Result<Self, Error>;

    /// Encodes the header into the start of `out` and touches nothing else.
    ///
    /// A value wider than its field is cut to the field's width; reserved
    /// bits that are not fields of the struct are written as 0.
    fn write(&self, out: &mut [u8]) -> Result<(), Error>;
}

/// Reads big-endian fields one after another from a header's bytes.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over the first `len` bytes of `bytes`, which must be there.
    fn new(bytes: &'a [u8], len: usize) -> Result<Self, Error> {
        let rest = bytes.get(..len).ok_or(Error::Truncated)?;
        Ok(Self { rest })
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let (head, rest) = self.rest.split_first_chunk().ok_or(Error::Truncated)?;
        self.rest = rest;
        Ok(*head)
    }

    fn u8(&mut self) -> Result<u8, Error> {
        let [byte] = self.array()?;
        Ok(byte)
    }

    fn u16(&mut self) -> Result<u16, Error> {
        self.array().map(u16::from_be_bytes)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        self.array().map(u32::from_be_bytes)
    }

    fn u64(&mut self) -> Result<u64, Error> {
        self.array().map(u64::from_be_bytes)
    }
}

/// Writes big-endian fields one after another into a header's bytes.
struct Writer<'a> {
    rest: &'a mut [u8],
}

impl<'a> Writer<'a> {
    /// A writer over the first `len` bytes of `out`, which must be there, so
    /// that a short buffer is refused before anything is written.
    fn new(out: &'a mut [u8], len: usize) -> Result<Self, Error> {
        let rest = out.get_mut(..len).ok_or(Error::Truncated)?;
        Ok(Self { rest })
    }

    fn array<const N: usize>(&mut self, bytes: [u8; N]) -> Result<(), Error> {
        let (head, rest) = core::mem::take(&mut self.rest)
            .split_first_chunk_mut()
            .ok_or(Error::Truncated)?;
        *head = bytes;
        self.rest = rest;
        Ok(())
    }

    fn u8(&mut self, value: u8) -> Result<(), Error> {
        self.array([value])
    }

    fn u16(&mut self, value: u16) -> Result<(), Error> {
        self.array(value.to_be_bytes())
    }

    fn u32(&mut self, value: u32) -> Result<(), Error> {
        self.array(value.to_be_bytes())
    }

    fn u64(&mut self, value: u64) -> Result<(), Error> {
        self.array(value.to_be_bytes())
    }
}

const BTH_SE: u8 = 0x80;
const BTH_MIG: u8 = 0x40;
pub(super) const BTH_PAD_SHIFT: u32 = 4;
pub(super) const BTH_PAD_MASK: u8 = 0x3;
pub(super) const BTH_TVER_MASK: u8 = 0x0f;
const BTH_FECN: u32 = 1 << 31;
const BTH_BECN: u32 = 1 << 30;
const BTH_RESV6A_MASK: u32 = 0x3f;
const BTH_ACK_REQ: u32 = 1 << 31;
const BTH_RESV7_MASK: u32 = 0x7f;

/// Base Transport Header: opcode, partition, destination QP and PSN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bth {
    /// What the packet is; see [`super::opcode`].
    pub opcode: u8,
    /// Solicited event: the receiver should raise a completion event.
    pub se: bool,
    /// Path migration state.
    pub mig: bool,
    /// Pad bytes, 0 to 3, between payload and ICRC.
    pub pad: u8,
    /// Transport header version, 4 bits; must be [`BTH_TVER`].
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// Forward explicit congestion notification.
    pub fecn: bool,
    /// Backward explicit congestion notification.
    pub becn: bool,
    /// The 6 reserved bits after FECN and BECN.
    pub resv6a: u8,
    /// Destination QP number, 24 bits.
    pub qpn: u32,
    /// Asks the responder to acknowledge this packet.
    pub ack_req: bool,
    /// The 7 reserved bits after AckReq.
    pub resv7: u8,
    /// Packet sequence number, 24 bits.
    pub psn: u32,
}

impl Header for Bth {
    const KIND: Hdr = Hdr::Bth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes, BTH_LEN)?;
        let opcode = r.u8()?;
        let flags = r.u8()?;
        let pkey = r.u16()?;
        let qpn_word = r.u32()?;
        let psn_word = r.u32()?;
        Ok(Self {
            opcode,
            se: flags & BTH_SE != 0,
            mig: flags & BTH_MIG != 0,
            pad: (flags >> BTH_PAD_SHIFT) & BTH_PAD_MASK,
            tver: flags & BTH_TVER_MASK,
            pkey,
            fecn: qpn_word & BTH_FECN != 0,
            becn: qpn_word & BTH_BECN != 0,
            resv6a: ((qpn_word >> 24) & BTH_RESV6A_MASK) as u8,
            qpn: qpn_word & QPN_MASK,
            ack_req: psn_word & BTH_ACK_REQ != 0,
            resv7: ((psn_word >> 24) & BTH_RESV7_MASK) as u8,
            psn: psn_word & PSN_MASK,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        let mut w = Writer::new(out, BTH_LEN)?;
        let mut flags = ((self.pad & BTH_PAD_MASK) << BTH_PAD_SHIFT) | (self.tver & BTH_TVER_MASK);
        if self.se {
            flags |= BTH_SE;
        }
        if self.mig {
            flags |= BTH_MIG;
        }
        let mut qpn_word =
            ((u32::from(self.resv6a) & BTH_RESV6A_MASK) << 24) | (self.qpn & QPN_MASK);
        if self.fecn {
            qpn_word |= BTH_FECN;
        }
        if self.becn {
            qpn_word |= BTH_BECN;
        }
        let mut psn_word = ((u32::from(self.resv7) & BTH_RESV7_MASK) << 24) | (self.psn & PSN_MASK);
        if self.ack_req {
            psn_word |= BTH_ACK_REQ;
        }
        w.u8(self.opcode)?;
        w.u8(flags)?;
        w.u16(self.pkey)?;
        w.u32(qpn_word)?;
        w.u32(psn_word)
    }
}

/// Reliable Datagram Extended Transport Header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rdeth {
    /// End-to-end context, 24 bits.
    pub een: u32,
}

impl Header for Rdeth {
    const KIND: Hdr = Hdr::Rdeth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes, RDETH_LEN)?;
        Ok(Self {
            een: r.u32()? & QPN_MASK,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        Writer::new(out, RDETH_LEN)?.u32(self.een & QPN_MASK)
    }
}

/// Datagram Extended Transport Header, on every UD packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deth {
    /// Queue key the receiving QP must hold.
    pub qkey: u32,
    /// Source QP number, 24 bits.
    pub sqp: u32,
}

impl Header for Deth {
    const KIND: Hdr = Hdr::Deth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes, DETH_LEN)?;
        Ok(Self {
            qkey: r.u32()?,
            sqp: r.u32()? & QPN_MASK,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        let mut w = Writer::new(out, DETH_LEN)?;
        w.u32(self.qkey)?;
        w.u32(self.sqp & QPN_MASK)
    }
}

const FETH_PLT_MASK: u32 = 0x0f;
const FETH_SEL_SHIFT: u32 = 4;
const FETH_SEL_MASK: u32 = 0x3;

/// Flush Extended Transport Header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Feth {
    /// Selectivity level, 2 bits: what the flush covers (0: the named
    /// region only, 1: the whole memory region).
    pub selectivity_level: u8,
    /// Placement type, 4 bits: which persistence the flush reaches (bit 0:
    /// global visibility, bit 1: persistence).
    pub placement_type: u8,
}

impl Header for Feth {
    const KIND: Hdr = Hdr::Feth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let bits = Reader::new(bytes, FETH_LEN)?.u32()?;
        Ok(Self {
            selectivity_level: ((bits >> FETH_SEL_SHIFT) & FETH_SEL_MASK) as u8,
            placement_type: (bits & FETH_PLT_MASK) as u8,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        let bits = ((u32::from(self.selectivity_level) & FETH_SEL_MASK) << FETH_SEL_SHIFT)
            | (u32::from(self.placement_type) & FETH_PLT_MASK);
        Writer::new(out, FETH_LEN)?.u32(bits)
    }
}

/// RDMA Extended Transport Header: the remote memory a request targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reth {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key of the memory region or window.
    pub rkey: u32,
    /// Length in bytes of the whole RDMA operation, not of this packet.
    pub len: u32,
}

impl Header for Reth {
    const KIND: Hdr = Hdr::Reth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes, RETH_LEN)?;
        Ok(Self {
            va: r.u64()?,
            rkey: r.u32()?,
            len: r.u32()?,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        let mut w = Writer::new(out, RETH_LEN)?;
        w.u64(self.va)?;
        w.u32(self.rkey)?;
        w.u32(self.len)
    }
}

/// ACK Extended Transport Header: how a responder acknowledges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aeth {
    /// ACK, RNR NAK or NAK, and its detail.
    pub syndrome: Syndrome,
    /// Message sequence number, 24 bits: messages completed by the responder.
    pub msn: u32,
}

impl Header for Aeth {
    const KIND: Hdr = Hdr::Aeth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let word = Reader::new(bytes, AETH_LEN)?.u32()?;
        Ok(Self {
            syndrome: Syndrome::decode((word >> 24) as u8),
            msn: word & QPN_MASK,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        let word = (u32::from(self.syndrome.encode()) << 24) | (self.msn & QPN_MASK);
        Writer::new(out, AETH_LEN)?.u32(word)
    }
}

/// The 8-bit AETH syndrome, decoded.
///
/// Bits 6-5 say ACK, RNR NAK or NAK; bits 4-0 carry the credit count, the
/// RNR timer or the NAK code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syndrome {
    /// Positive acknowledgement.
    Ack {
        /// End-to-end credits, 5 bits; 31 means none are advertised.
        credits: u8,
    },
    /// Receiver not ready: retry after the time the timer code stands for.
    RnrNak {
        /// RNR NAK timer code, 5 bits; see [`rnr_timer_usec`].
        timer: u8,
    },
    /// Negative acknowledgement.
    Nak(NakCode),
    /// A syndrome with bit 7 set or type `10b`, which the IBA reserves.
    Reserved(u8),
}

const SYNDROME_TYPE_MASK: u8 = 0xe0;
const SYNDROME_VALUE_MASK: u8 = 0x1f;
const SYNDROME_ACK: u8 = 0x00;
const SYNDROME_RNR_NAK: u8 = 0x20;
const SYNDROME_NAK: u8 = 0x60;

impl Syndrome {
    /// The ACK the driver sends: 31 credits, i.e. no credit count
    /// (`AETH_ACK_UNLIMITED`, syndrome 31).
    pub const ACK_UNLIMITED: Self = Self::Ack {
        credits: SYNDROME_VALUE_MASK,
    };

    /// Decodes a syndrome byte; every byte decodes to something.
    pub const fn decode(syndrome: u8) -> Self {
        let value = syndrome & SYNDROME_VALUE_MASK;
        match syndrome & SYNDROME_TYPE_MASK {
            SYNDROME_ACK => Self::Ack { credits: value },
            SYNDROME_RNR_NAK => Self::RnrNak { timer: value },
            SYNDROME_NAK => Self::Nak(NakCode::decode(value)),
            _ => Self::Reserved(syndrome),
        }
    }

    /// Encodes the syndrome byte; the inverse of [`Self::decode`].
    pub const fn encode(self) -> u8 {
        match self {
            Self::Ack { credits } => SYNDROME_ACK | (credits & SYNDROME_VALUE_MASK),
            Self::RnrNak { timer } => SYNDROME_RNR_NAK | (timer & SYNDROME_VALUE_MASK),
            Self::Nak(code) => SYNDROME_NAK | code.encode(),
            Self::Reserved(syndrome) => syndrome,
        }
    }
}

/// Why a responder refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NakCode {
    /// The PSN is ahead of the one expected: packets were lost (code 0).
    PsnSequenceError,
    /// The request is malformed or not supported (code 1).
    InvalidRequest,
    /// The remote key, address or access rights do not allow it (code 2).
    RemoteAccessError,
    /// The responder failed to carry out a valid request (code 3).
    RemoteOperationalError,
    /// Invalid RD request (code 4).
    InvalidRdRequest,
    /// Codes 5 to 31, which the IBA reserves.
    Reserved(u8),
}

impl NakCode {
    const fn decode(code: u8) -> Self {
        match code {
            0 => Self::PsnSequenceError,
            1 => Self::InvalidRequest,
            2 => Self::RemoteAccessError,
            3 => Self::RemoteOperationalError,
            4 => Self::InvalidRdRequest,
            other => Self::Reserved(other),
        }
    }

    const fn encode(self) -> u8 {
        match self {
            Self::PsnSequenceError => 0,
            Self::InvalidRequest => 1,
            Self::RemoteAccessError => 2,
            Self::RemoteOperationalError => 3,
            Self::InvalidRdRequest => 4,
            Self::Reserved(code) => code & SYNDROME_VALUE_MASK,
        }
    }
}

/// Microseconds each RNR NAK timer code stands for (IBA table 45, the C
/// driver's `rnrnak_usec[]`). Code 0 is the longest wait, not the shortest.
pub const RNR_TIMER_USEC: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// Microseconds to wait for RNR NAK timer code `timer`; only its low 5 bits
/// count, as on the wire.
pub const fn rnr_timer_usec(timer: u8) -> u32 {
    RNR_TIMER_USEC[(timer & SYNDROME_VALUE_MASK) as usize]
}

/// Atomic Acknowledge Extended Transport Header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Atmack {
    /// The value the remote memory held before the atomic operation.
    pub orig: u64,
}

impl Header for Atmack {
    const KIND: Hdr = Hdr::Atmack;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Ok(Self {
            orig: Reader::new(bytes, ATMACK_LEN)?.u64()?,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        Writer::new(out, ATMACK_LEN)?.u64(self.orig)
    }
}

/// Atomic Extended Transport Header: target and operands of an atomic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Atmeth {
    /// Remote virtual address, 8-byte aligned.
    pub va: u64,
    /// Remote key of the memory region or window.
    pub rkey: u32,
    /// Value to swap in (compare-and-swap) or to add (fetch-and-add).
    pub swap_add: u64,
    /// Value to compare with (compare-and-swap only).
    pub compare: u64,
}

impl Header for Atmeth {
    const KIND: Hdr = Hdr::Atmeth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes, ATMETH_LEN)?;
        Ok(Self {
            va: r.u64()?,
            rkey: r.u32()?,
            swap_add: r.u64()?,
            compare: r.u64()?,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        let mut w = Writer::new(out, ATMETH_LEN)?;
        w.u64(self.va)?;
        w.u32(self.rkey)?;
        w.u64(self.swap_add)?;
        w.u64(self.compare)
    }
}

/// Invalidate Extended Transport Header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ieth {
    /// Remote key the receiver must invalidate.
    pub rkey: u32,
}

impl Header for Ieth {
    const KIND: Hdr = Hdr::Ieth;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Ok(Self {
            rkey: Reader::new(bytes, IETH_LEN)?.u32()?,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        Writer::new(out, IETH_LEN)?.u32(self.rkey)
    }
}

/// Immediate Data Extended Transport Header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Immdt {
    /// The immediate data, read big-endian; the verbs `imm_data` (a
    /// `__be32`) is this value in network byte order.
    pub imm: u32,
}

impl Header for Immdt {
    const KIND: Hdr = Hdr::Immdt;

    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Ok(Self {
            imm: Reader::new(bytes, IMMDT_LEN)?.u32()?,
        })
    }

    fn write(&self, out: &mut [u8]) -> Result<(), Error> {
        Writer::new(out, IMMDT_LEN)?.u32(self.imm)
    }
}
