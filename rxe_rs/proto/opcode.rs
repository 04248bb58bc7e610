// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! InfiniBand transport opcodes and what each one carries.
//!
//! The opcode is the first byte of the BTH: its top three bits name the
//! transport service, the low five the operation. [`opcode_info`] is the C
//! driver's `rxe_opcode[]` table (`rxe_opcode.c`): for every opcode the driver
//! handles, which extension headers follow the BTH, where, and what kind of
//! work the packet belongs to.

pub use super::hdr::Hdr;

/// The transport service of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Reliable Connected.
    Rc,
    /// Unreliable Connected.
    Uc,
    /// Reliable Datagram (in the table, but the driver has no RD QPs).
    Rd,
    /// Unreliable Datagram.
    Ud,
}

impl Transport {
    /// The opcode bits that select the transport service.
    pub const OPCODE_MASK: u8 = 0xe0;

    /// The transport service of `opcode`; `None` for CNP, XRC and the
    /// reserved and manufacturer-specific ranges.
    pub const fn of(opcode: u8) -> Option<Self> {
        match opcode & Self::OPCODE_MASK {
            0x00 => Some(Self::Rc),
            0x20 => Some(Self::Uc),
            0x40 => Some(Self::Rd),
            0x60 => Some(Self::Ud),
            _ => None,
        }
    }
}

/// What a header implies for a packet's [`Mask`]; the headers themselves are [`super::hdr`]'s.
impl Hdr {
    /// The [`Mask`] bit that says a packet carries this header.
    pub const fn mask(self) -> Mask {
        match self {
            Self::Bth => Mask::BTH,
            Self::Rdeth => Mask::RDETH,
            Self::Deth => Mask::DETH,
            Self::Feth => Mask::FETH,
            Self::Reth => Mask::RETH,
            Self::Aeth => Mask::AETH,
            Self::Atmack => Mask::ATMACK,
            Self::Atmeth => Mask::ATMETH,
            Self::Ieth => Mask::IETH,
            Self::Immdt => Mask::IMMDT,
        }
    }
}

/// A set of facts about a packet, bit for bit the C driver's
/// `enum rxe_hdr_mask`.
///
/// The opcode table sets the header and kind bits. `GRH` and `LOOPBACK` are
/// never in the table: the C driver ORs them into a packet's mask at run time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mask(u32);

impl Mask {
    /// No bit set.
    pub const NONE: Self = Self(0);
    /// Local Route Header; never present on RoCE.
    pub const LRH: Self = Self(1 << 0);
    /// Global Route Header; set on every packet received over RoCEv2.
    pub const GRH: Self = Self(1 << 1);
    /// Base Transport Header; every packet has one, the table omits the bit.
    pub const BTH: Self = Self(1 << 2);
    /// Carries a RETH.
    pub const RETH: Self = Self(1 << 3);
    /// Carries an AETH.
    pub const AETH: Self = Self(1 << 4);
    /// Carries an ATMETH.
    pub const ATMETH: Self = Self(1 << 5);
    /// Carries an ATMACK.
    pub const ATMACK: Self = Self(1 << 6);
    /// Carries an IETH.
    pub const IETH: Self = Self(1 << 7);
    /// Carries an RDETH.
    pub const RDETH: Self = Self(1 << 8);
    /// Carries a DETH.
    pub const DETH: Self = Self(1 << 9);
    /// Carries an IMMDT.
    pub const IMMDT: Self = Self(1 << 10);
    /// Carries a FETH.
    pub const FETH: Self = Self(1 << 11);
    /// May carry payload after the headers.
    pub const PAYLOAD: Self = Self(1 << 12);
    /// Sent by a requester.
    pub const REQ: Self = Self(1 << 13);
    /// Sent by a responder: an acknowledgement or read response.
    pub const ACK: Self = Self(1 << 14);
    /// Part of a SEND.
    pub const SEND: Self = Self(1 << 15);
    /// Part of an RDMA WRITE.
    pub const WRITE: Self = Self(1 << 16);
    /// An RDMA READ request.
    pub const READ: Self = Self(1 << 17);
    /// An atomic compare-and-swap or fetch-and-add request.
    pub const ATOMIC: Self = Self(1 << 18);
    /// A FLUSH request.
    pub const FLUSH: Self = Self(1 << 19);
    /// Consumes a receive work request at the responder.
    pub const RWR: Self = Self(1 << 20);
    /// Completes the receive work request at the responder.
    pub const COMP: Self = Self(1 << 21);
    /// First packet of a message (FIRST or ONLY).
    pub const START: Self = Self(1 << 22);
    /// Neither first nor last packet of a message.
    pub const MIDDLE: Self = Self(1 << 23);
    /// Last packet of a message (LAST or ONLY).
    pub const END: Self = Self(1 << 24);
    /// Looped back inside the host rather than sent on the wire.
    pub const LOOPBACK: Self = Self(1 << 25);
    /// An ATOMIC WRITE request.
    pub const ATOMIC_WRITE: Self = Self(1 << 27);
    /// An RDMA READ or atomic request.
    pub const READ_OR_ATOMIC: Self = Self::READ.union(Self::ATOMIC);
    /// Part of an RDMA WRITE or a SEND.
    pub const WRITE_OR_SEND: Self = Self::WRITE.union(Self::SEND);
    /// Part of an RDMA READ or WRITE.
    pub const READ_OR_WRITE: Self = Self::READ.union(Self::WRITE);
    /// Any request that names remote memory.
    pub const RDMA_OP: Self = Self::READ
        .union(Self::WRITE)
        .union(Self::ATOMIC_WRITE)
        .union(Self::FLUSH)
        .union(Self::ATOMIC);
}

bit_mask_ops!(Mask);

/// The most bytes of headers (BTH and extension headers) any opcode has: what a receiver must
/// see contiguous to parse a packet.
pub const MAX_HEADERS_LEN: usize = 52;

/// What the driver knows about one opcode: a row of the C `rxe_opcode[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// The opcode itself.
    pub opcode: u8,
    /// Its name in `<rdma/ib_pack.h>`, e.g. `IB_OPCODE_RC_SEND_FIRST`.
    pub name: &'static str,
    /// Headers carried and kind of work.
    pub mask: Mask,
    /// Bytes of the BTH and all extension headers: where the payload starts.
    pub length: usize,
    offsets: [u8; Hdr::COUNT],
    icrc_payload_offset: usize,
}

impl OpcodeInfo {
    const fn new(opcode: u8, name: &'static str, mask: Mask) -> Self {
        let mut offsets = [0; Hdr::COUNT];
        let mut length = 0;
        let mut i = 0;
        while i < Hdr::COUNT {
            let hdr = Hdr::WIRE_ORDER[i];
            if matches!(hdr, Hdr::Bth) || mask.contains(hdr.mask()) {
                // At most 52 bytes of headers: the casts are lossless.
                offsets[hdr as usize] = length as u8;
                length += hdr.wire_len();
            }
            i += 1;
        }
        // The C table leaves offset[RXE_PAYLOAD] at 0 for these three, and the
        // C driver's ICRC runs from that offset to the end of the packet.
        let icrc_payload_offset = match opcode {
            RC_FLUSH | RD_ACKNOWLEDGE | RD_ATOMIC_ACKNOWLEDGE => 0,
            _ => length,
        };
        Self {
            opcode,
            name,
            mask,
            length,
            offsets,
            icrc_payload_offset,
        }
    }

    /// Byte offset of `hdr` from the start of the BTH, or `None` if packets
    /// with this opcode do not carry it.
    pub const fn offset(&self, hdr: Hdr) -> Option<usize> {
        if matches!(hdr, Hdr::Bth) || self.mask.contains(hdr.mask()) {
            Some(self.offsets[hdr as usize] as usize)
        } else {
            None
        }
    }

    /// Where the C driver's ICRC resumes after the headers, counted from the
    /// start of the BTH.
    ///
    /// This is [`Self::length`] except for `RC_FLUSH`, `RD_ACKNOWLEDGE` and
    /// `RD_ATOMIC_ACKNOWLEDGE`, which the C table gives no payload offset: for
    /// them it is 0 and the C driver feeds the headers into the ICRC twice.
    /// Peers running the C driver expect exactly that.
    pub const fn icrc_payload_offset(&self) -> usize {
        self.icrc_payload_offset
    }

    /// The transport service of the opcode.
    pub const fn transport(&self) -> Option<Transport> {
        Transport::of(self.opcode)
    }
}

/// The row of the opcode table for `opcode`, or `None` if the driver does not
/// handle it.
pub fn opcode_info(opcode: u8) -> Option<&'static OpcodeInfo> {
    OPCODE_TABLE.get(usize::from(opcode))?.as_ref()
}

/// Declares the opcode constants and builds the table from one list, so a
/// name can never drift from its number.
macro_rules! opcodes {
    ($($name:ident = $value:literal => $($bit:ident)|+;)*) => {
        $(
            #[doc = concat!("`IB_OPCODE_", stringify!($name), "`.")]
            pub const $name: u8 = $value;
        )*

        static OPCODE_TABLE: [Option<OpcodeInfo>; 256] = {
            let mut table = [None; 256];
            $(
                table[$value] = Some(OpcodeInfo::new(
                    $value,
                    concat!("IB_OPCODE_", stringify!($name)),
                    Mask::NONE $(.union(Mask::$bit))+,
                ));
            )*
            table
        };
    };
}

opcodes! {
    RC_SEND_FIRST = 0x00 => PAYLOAD | REQ | RWR | SEND | START;
    RC_SEND_MIDDLE = 0x01 => PAYLOAD | REQ | SEND | MIDDLE;
    RC_SEND_LAST = 0x02 => PAYLOAD | REQ | COMP | SEND | END;
    RC_SEND_LAST_WITH_IMMEDIATE = 0x03 => IMMDT | PAYLOAD | REQ | COMP | SEND | END;
    RC_SEND_ONLY = 0x04 => PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    RC_SEND_ONLY_WITH_IMMEDIATE = 0x05 =>
        IMMDT | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    RC_RDMA_WRITE_FIRST = 0x06 => RETH | PAYLOAD | REQ | WRITE | START;
    RC_RDMA_WRITE_MIDDLE = 0x07 => PAYLOAD | REQ | WRITE | MIDDLE;
    RC_RDMA_WRITE_LAST = 0x08 => PAYLOAD | REQ | WRITE | END;
    RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09 =>
        IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | END;
    RC_RDMA_WRITE_ONLY = 0x0a => RETH | PAYLOAD | REQ | WRITE | START | END;
    RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0b =>
        RETH | IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | START | END;
    RC_RDMA_READ_REQUEST = 0x0c => RETH | REQ | READ | START | END;
    RC_RDMA_READ_RESPONSE_FIRST = 0x0d => AETH | PAYLOAD | ACK | START;
    RC_RDMA_READ_RESPONSE_MIDDLE = 0x0e => PAYLOAD | ACK | MIDDLE;
    RC_RDMA_READ_RESPONSE_LAST = 0x0f => AETH | PAYLOAD | ACK | END;
    RC_RDMA_READ_RESPONSE_ONLY = 0x10 => AETH | PAYLOAD | ACK | START | END;
    RC_ACKNOWLEDGE = 0x11 => AETH | ACK | START | END;
    RC_ATOMIC_ACKNOWLEDGE = 0x12 => AETH | ATMACK | ACK | START | END;
    RC_COMPARE_SWAP = 0x13 => ATMETH | REQ | ATOMIC | START | END;
    RC_FETCH_ADD = 0x14 => ATMETH | REQ | ATOMIC | START | END;
    RC_SEND_LAST_WITH_INVALIDATE = 0x16 => IETH | PAYLOAD | REQ | COMP | SEND | END;
    RC_SEND_ONLY_WITH_INVALIDATE = 0x17 =>
        IETH | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    RC_FLUSH = 0x1c => FETH | RETH | FLUSH | START | END | REQ;
    RC_ATOMIC_WRITE = 0x1d => RETH | PAYLOAD | REQ | ATOMIC_WRITE | START | END;

    UC_SEND_FIRST = 0x20 => PAYLOAD | REQ | RWR | SEND | START;
    UC_SEND_MIDDLE = 0x21 => PAYLOAD | REQ | SEND | MIDDLE;
    UC_SEND_LAST = 0x22 => PAYLOAD | REQ | COMP | SEND | END;
    UC_SEND_LAST_WITH_IMMEDIATE = 0x23 => IMMDT | PAYLOAD | REQ | COMP | SEND | END;
    UC_SEND_ONLY = 0x24 => PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    UC_SEND_ONLY_WITH_IMMEDIATE = 0x25 =>
        IMMDT | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    UC_RDMA_WRITE_FIRST = 0x26 => RETH | PAYLOAD | REQ | WRITE | START;
    UC_RDMA_WRITE_MIDDLE = 0x27 => PAYLOAD | REQ | WRITE | MIDDLE;
    UC_RDMA_WRITE_LAST = 0x28 => PAYLOAD | REQ | WRITE | END;
    UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29 =>
        IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | END;
    UC_RDMA_WRITE_ONLY = 0x2a => RETH | PAYLOAD | REQ | WRITE | START | END;
    UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2b =>
        RETH | IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | START | END;

    RD_SEND_FIRST = 0x40 => RDETH | DETH | PAYLOAD | REQ | RWR | SEND | START;
    RD_SEND_MIDDLE = 0x41 => RDETH | DETH | PAYLOAD | REQ | SEND | MIDDLE;
    RD_SEND_LAST = 0x42 => RDETH | DETH | PAYLOAD | REQ | COMP | SEND | END;
    RD_SEND_LAST_WITH_IMMEDIATE = 0x43 =>
        RDETH | DETH | IMMDT | PAYLOAD | REQ | COMP | SEND | END;
    RD_SEND_ONLY = 0x44 => RDETH | DETH | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    RD_SEND_ONLY_WITH_IMMEDIATE = 0x45 =>
        RDETH | DETH | IMMDT | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    RD_RDMA_WRITE_FIRST = 0x46 => RDETH | DETH | RETH | PAYLOAD | REQ | WRITE | START;
    RD_RDMA_WRITE_MIDDLE = 0x47 => RDETH | DETH | PAYLOAD | REQ | WRITE | MIDDLE;
    RD_RDMA_WRITE_LAST = 0x48 => RDETH | DETH | PAYLOAD | REQ | WRITE | END;
    RD_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x49 =>
        RDETH | DETH | IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | END;
    RD_RDMA_WRITE_ONLY = 0x4a => RDETH | DETH | RETH | PAYLOAD | REQ | WRITE | START | END;
    RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x4b =>
        RDETH | DETH | RETH | IMMDT | PAYLOAD | REQ | WRITE | COMP | RWR | START | END;
    RD_RDMA_READ_REQUEST = 0x4c => RDETH | DETH | RETH | REQ | READ | START | END;
    RD_RDMA_READ_RESPONSE_FIRST = 0x4d => RDETH | AETH | PAYLOAD | ACK | START;
    RD_RDMA_READ_RESPONSE_MIDDLE = 0x4e => RDETH | PAYLOAD | ACK | MIDDLE;
    RD_RDMA_READ_RESPONSE_LAST = 0x4f => RDETH | AETH | PAYLOAD | ACK | END;
    RD_RDMA_READ_RESPONSE_ONLY = 0x50 => RDETH | AETH | PAYLOAD | ACK | START | END;
    RD_ACKNOWLEDGE = 0x51 => RDETH | AETH | ACK | START | END;
    RD_ATOMIC_ACKNOWLEDGE = 0x52 => RDETH | AETH | ATMACK | ACK | START | END;
    RD_COMPARE_SWAP = 0x53 => RDETH | DETH | ATMETH | REQ | ATOMIC | START | END;
    RD_FETCH_ADD = 0x54 => RDETH | DETH | ATMETH | REQ | ATOMIC | START | END;

    UD_SEND_ONLY = 0x64 => DETH | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
    UD_SEND_ONLY_WITH_IMMEDIATE = 0x65 =>
        DETH | IMMDT | PAYLOAD | REQ | COMP | RWR | SEND | START | END;
}
