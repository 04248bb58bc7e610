// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Host tests of the protocol core: against the C driver's captured packets,
//! against a straight-from-the-spec ICRC, and as property tests.

mod av;
mod comp;
mod cq;
mod destroy;
mod error;
mod fuzz;
mod hdr;
mod icrc;
mod index;
mod mad;
mod mcast;
mod mw;
mod opcode;
mod packet_ring;
mod params;
mod parts;
mod pcap;
mod props;
mod psn;
mod qp_state;
mod queue;
mod range;
mod reference;
mod resources;
mod resp;
mod seq;
mod task;
mod vectors;
mod wqe;
