// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The pure RoCEv2 protocol core of rxe-rs.
//!
//! Everything here is a function of bytes and numbers: the InfiniBand
//! transport opcodes and the C driver's opcode table, the transport headers
//! (BTH and its extension headers), PSN arithmetic and the ICRC, the index
//! arithmetic of the rings shared with user space, the checks of the QP
//! state machine and the scheduling state of a QP task (one atomic byte).
//! Nothing touches a socket buffer, a lock or an allocator, so the same files
//! are compiled twice:
//!
//! - into the kernel module, as `proto` under its crate root `rxe_rs.rs`;
//! - into the host crate `rxe-proto` (`rxe_rs/proto_host.rs`), where
//!   `cargo test` checks them against packets captured from the C driver.
//!
//! Hence the rules for this directory: `core` only, no `unsafe`, no floats,
//! and no panics on anything that came off the wire: parsers take `&[u8]` and
//! return [`Result`] or [`Option`].
//!
//! The module forbids `unsafe` (`forbid(unsafe_code)`), in the kernel build as in the host
//! crate.

#![forbid(unsafe_code)]

/// The operations of a bit-mask newtype over `u32` whose bits are the C driver's: `from_bits`,
/// `bits`, `contains`, `intersects`, `union` (all `const`) and `|`.
macro_rules! bit_mask_ops {
    ($t:ident) => {
        impl $t {
            /// The mask with exactly the bits of `bits`, as the C driver numbers them.
            pub const fn from_bits(bits: u32) -> Self {
                Self(bits)
            }

            /// The bits, as the C driver numbers them.
            pub const fn bits(self) -> u32 {
                self.0
            }

            /// Whether every bit of `other` is set in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }

            /// Whether any bit of `other` is set in `self`.
            pub const fn intersects(self, other: Self) -> bool {
                self.0 & other.0 != 0
            }

            /// The bits set in `self` or `other`.
            pub const fn union(self, other: Self) -> Self {
                Self(self.0 | other.0)
            }
        }

        impl core::ops::BitOr for $t {
            type Output = Self;

            fn bitor(self, other: Self) -> Self {
                self.union(other)
            }
        }
    };
}

pub mod av;
pub mod comp;
pub mod cq;
pub mod error;
pub mod hdr;
pub mod icrc;
pub mod index;
pub mod mad;
pub mod mcast;
pub mod mw;
pub mod opcode;
pub mod packet;
pub mod packet_ring;
pub mod params;
pub mod parts;
pub mod psn;
pub mod qp_state;
pub mod queue;
pub mod range;
pub mod resources;
pub mod resp;
pub mod seq;
pub mod task;
pub mod wqe;

/// Why bytes could not be read, written or trusted as a RoCEv2 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The buffer ends before a header, field or the ICRC that must be there.
    Truncated,
    /// The BTH opcode is not in the driver's opcode table.
    UnknownOpcode(u8),
    /// The BTH transport header version is not 0, the only one defined.
    BadTransportVersion(u8),
    /// The IP header is neither version 4 nor version 6.
    BadIpVersion(u8),
    /// The ICRC carried by the packet is not the one computed over it.
    IcrcMismatch {
        /// ICRC computed over the packet.
        computed: u32,
        /// ICRC found at the end of the packet.
        carried: u32,
    },
}

/// A Linux errno with which a control-path check fails, as the C driver returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// `EINVAL`: an argument is out of range or not allowed here.
    Inval,
    /// `ENOMEM`: a queue cannot be made that large (the C `rxe_queue_init` returns NULL).
    NoMem,
    /// `EOPNOTSUPP`: a feature rxe does not implement (QP type, attribute mask bit).
    OpNotSupp,
}

impl Errno {
    /// The negative errno the C function returns (`-EINVAL` is `-22`).
    pub const fn to_errno(self) -> i32 {
        match self {
            Self::Inval => -22,
            Self::NoMem => -12,
            Self::OpNotSupp => -95,
        }
    }
}
