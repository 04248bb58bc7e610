// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Every packet the C driver sent in the captures of `tests/vectors/`
//! must parse, and its ICRC must be the one we compute.

use std::collections::{BTreeMap, BTreeSet};
use std::vec::Vec;

use super::pcap::{read_frames, roce};
use super::reference::spec_icrc;
use crate::proto::hdr::{
    Aeth, Atmack, Atmeth, Deth, NakCode, Reth, Syndrome, DEFAULT_PKEY, GSI_QKEY, ICRC_LEN,
};
use crate::proto::icrc;
use crate::proto::opcode::{self, Mask};
use crate::proto::packet::{pad_len, Packet};
use crate::proto::parts::{Parts, MAX_PARTS};
use crate::proto::psn::{psn_cmp, psn_next};

const RC_UC_UD_CM: &str = "rxe-c-rc-uc-ud-cm.pcap";
const WRITE_READ_ATOMIC_SEND: &str = "rxe-c-write-read-atomic-send.pcap";
const LOSSY_NAKS: &str = "rxe-c-lossy-naks.pcap";

/// A RoCEv2 packet of a capture, with the addresses that tell flows apart.
struct Captured {
    frame: Vec<u8>,
}

impl Captured {
    fn roce(&self) -> super::pcap::Roce<'_> {
        roce(&self.frame).expect("every captured frame is RoCEv2")
    }

    fn packet(&self) -> Packet<'_> {
        Packet::parse(self.roce().payload).expect("every captured packet parses")
    }

    /// Source and destination IP address, and destination QP: one direction
    /// of one connection.
    fn flow(&self) -> (Vec<u8>, Vec<u8>, u32) {
        let ip = self.roce().ip;
        let (src, dst) = if ip.len() == 20 {
            (&ip[12..16], &ip[16..20])
        } else {
            (&ip[8..24], &ip[24..40])
        };
        (src.to_vec(), dst.to_vec(), self.packet().bth().qpn)
    }
}

fn capture(name: &str) -> Vec<Captured> {
    read_frames(name)
        .into_iter()
        .map(|frame| Captured { frame })
        .collect()
}

/// Parses every packet of `name`, checks its layout and ICRC, and returns
/// the opcodes seen.
fn check_every_packet(name: &str, expected_count: usize) -> BTreeSet<u8> {
    let packets = capture(name);
    assert_eq!(packets.len(), expected_count, "{name}: packet count");
    let mut opcodes = BTreeSet::new();
    for (index, captured) in packets.iter().enumerate() {
        let roce = captured.roce();
        let pkt = Packet::parse(roce.payload).unwrap_or_else(|e| panic!("{name} #{index}: {e:?}"));
        let bth = pkt.bth();
        let info = opcode::opcode_info(bth.opcode).expect("known opcode");
        assert_eq!(pkt.info(), info);
        opcodes.insert(bth.opcode);

        // Headers, payload, pad and ICRC account for every byte.
        let pad = usize::from(bth.pad);
        assert_eq!(
            info.length + pkt.payload().len() + pad + ICRC_LEN,
            roce.payload.len(),
            "{name} #{index}: lengths"
        );
        assert_eq!(pad, pad_len(pkt.payload().len()), "{name} #{index}: pad");
        if !info.mask.contains(Mask::PAYLOAD) {
            assert!(pkt.payload().is_empty(), "{name} #{index}: payload");
        }
        assert_eq!(bth.pkey, DEFAULT_PKEY);
        assert!(!bth.fecn && !bth.becn && bth.resv6a == 0 && bth.resv7 == 0);

        // The ICRC: ours, the spec's and the C driver's all agree.
        let covered = &roce.payload[..roce.payload.len() - ICRC_LEN];
        let computed = icrc::compute(roce.ip_header(), roce.udp, covered).unwrap();
        assert_eq!(computed, pkt.icrc(), "{name} #{index}: ICRC");
        assert_eq!(computed, spec_icrc(roce.ip, roce.udp, covered));
        assert_eq!(
            icrc::verify(roce.ip_header(), roce.udp, roce.payload),
            Ok(())
        );
        // In pieces as a socket buffer's fragments hold it: headers, then the rest cut every
        // 7 bytes (as many pieces as fit), the same packet and ICRC.
        let mut parts = Parts::from_slice(&roce.payload[..info.length]);
        let mut at = info.length;
        for piece in roce.payload[info.length..].chunks(7).take(MAX_PARTS - 2) {
            parts.push(piece).unwrap();
            at += piece.len();
        }
        parts.push(&roce.payload[at..]).unwrap();
        assert_eq!(
            icrc::verify_parts(icrc::crc32_le, roce.ip_header(), roce.udp, &parts),
            Ok(()),
            "{name} #{index}: ICRC in pieces"
        );
        let split = Packet::parse_parts(&parts).unwrap();
        let route = Packet::route(&parts).unwrap();
        assert!(core::ptr::eq(route.info, info));
        assert_eq!((route.pkey, route.qpn), (bth.pkey, bth.qpn));
        assert_eq!(split.payload(), pkt.payload());
        assert_eq!(split.icrc(), pkt.icrc());
        assert_eq!(
            &roce.payload[roce.payload.len() - ICRC_LEN..],
            &computed.to_le_bytes(),
            "{name} #{index}: the ICRC goes on the wire little-endian"
        );
    }
    opcodes
}

#[test]
fn rc_uc_ud_cm_packets_parse_with_good_icrc() {
    let opcodes = check_every_packet(RC_UC_UD_CM, 101);
    // As listed in tests/vectors/README.md.
    let expected = BTreeSet::from([0, 1, 2, 4, 10, 12, 16, 17, 32, 33, 34, 100]);
    assert_eq!(opcodes, expected);
}

#[test]
fn write_read_atomic_send_packets_parse_with_good_icrc() {
    let opcodes = check_every_packet(WRITE_READ_ATOMIC_SEND, 105);
    let expected = BTreeSet::from([0, 2, 6, 7, 8, 12, 13, 14, 15, 17, 18, 19, 20]);
    assert_eq!(opcodes, expected);
}

#[test]
fn lossy_packets_parse_with_good_icrc() {
    let opcodes = check_every_packet(LOSSY_NAKS, 2500);
    assert_eq!(opcodes, BTreeSet::from([6, 7, 8, 17]));
}

/// Reassembles the messages of a capture without loss: within a message
/// the PSNs follow each other, and a message with a RETH carries exactly the
/// RETH's length. Returns the sizes of all messages that carry payload.
fn message_sizes(name: &str) -> BTreeSet<usize> {
    struct InProgress {
        size: usize,
        reth_len: Option<u32>,
        last_psn: u32,
    }
    let mut open: BTreeMap<(Vec<u8>, Vec<u8>, u32), InProgress> = BTreeMap::new();
    let mut sizes = BTreeSet::new();
    for captured in capture(name) {
        let pkt = captured.packet();
        let mask = pkt.info().mask;
        if !mask.contains(Mask::PAYLOAD) {
            continue;
        }
        let flow = captured.flow();
        let psn = pkt.bth().psn;
        let len = pkt.payload().len();
        let message = if mask.contains(Mask::START) {
            let reth_len = pkt.header::<Reth>().map(|reth| reth.len);
            assert!(!open.contains_key(&flow), "{name}: message started twice");
            open.entry(flow.clone()).or_insert(InProgress {
                size: len,
                reth_len,
                last_psn: psn,
            })
        } else {
            let message = open.get_mut(&flow).expect("message in progress");
            assert_eq!(psn, psn_next(message.last_psn), "{name}: PSN gap");
            message.size += len;
            message.last_psn = psn;
            message
        };
        if mask.contains(Mask::END) {
            if let Some(reth_len) = message.reth_len {
                assert_eq!(message.size, reth_len as usize, "{name}: RETH length");
            }
            sizes.insert(message.size);
            open.remove(&flow);
        }
    }
    assert!(open.is_empty(), "{name}: message left unfinished");
    sizes
}

#[test]
fn messages_reassemble_to_the_workload_sizes() {
    // ibv_rc_pingpong -s 5000, ibv_uc_pingpong -s 3000, ibv_ud_pingpong -s
    // 512; rping's 16-byte buffer descriptors, 64-byte RDMA and 256-byte MADs.
    assert_eq!(
        message_sizes(RC_UC_UD_CM),
        BTreeSet::from([16, 64, 256, 512, 3000, 5000])
    );
    // ib_write_bw and ib_read_bw -s 9000, ib_send_bw -s 2000.
    assert_eq!(
        message_sizes(WRITE_READ_ATOMIC_SEND),
        BTreeSet::from([2000, 9000])
    );
}

#[test]
fn rdma_requests_name_the_workload_lengths() {
    for captured in capture(WRITE_READ_ATOMIC_SEND) {
        let pkt = captured.packet();
        let mask = pkt.info().mask;
        let reth = pkt.header::<Reth>();
        assert_eq!(reth.is_some(), mask.contains(Mask::RETH));
        if let Some(reth) = reth {
            assert!(mask.intersects(Mask::READ_OR_WRITE));
            assert_eq!(reth.len, 9000, "ib_write_bw and ib_read_bw -s 9000");
            assert_ne!(reth.rkey, 0);
        }
        if let Some(atmeth) = pkt.header::<Atmeth>() {
            assert_eq!(atmeth.va % 8, 0, "atomics are 8-byte aligned");
            assert_ne!(atmeth.rkey, 0);
            if pkt.bth().opcode == opcode::RC_FETCH_ADD {
                // ib_atomic_bw adds 1. The compare field means nothing here
                // and the C driver leaves in it whatever the buffer held.
                assert_eq!(atmeth.swap_add, 1);
            }
        }
        assert_eq!(
            pkt.header::<Atmack>().is_some(),
            pkt.bth().opcode == opcode::RC_ATOMIC_ACKNOWLEDGE
        );
    }
    for captured in capture(LOSSY_NAKS) {
        if let Some(reth) = captured.packet().header::<Reth>() {
            assert_eq!(reth.len, 16384, "ib_write_bw -s 16384");
        }
    }
}

#[test]
fn ud_packets_carry_the_expected_qkeys() {
    let mut qp1 = 0;
    for captured in capture(RC_UC_UD_CM) {
        let pkt = captured.packet();
        let deth = pkt.header::<Deth>();
        assert_eq!(deth.is_some(), pkt.bth().opcode == opcode::UD_SEND_ONLY);
        let Some(deth) = deth else { continue };
        if pkt.bth().qpn == 1 {
            // CM MADs go from QP1 to QP1 under the well-known GSI Q_Key.
            assert_eq!(deth.qkey, GSI_QKEY);
            assert_eq!(deth.sqp, 1);
            qp1 += 1;
        } else {
            assert_eq!(deth.qkey, 0x1111_1111, "ibv_ud_pingpong's Q_Key");
        }
    }
    assert!(qp1 > 0, "rping's CM traffic is in the capture");
}

#[test]
fn lossy_capture_has_acks_and_psn_sequence_naks() {
    let packets = capture(LOSSY_NAKS);
    let mut syndromes = BTreeSet::new();
    for (index, captured) in packets.iter().enumerate() {
        let pkt = captured.packet();
        let Some(aeth) = pkt.header::<Aeth>() else {
            continue;
        };
        syndromes.insert(aeth.syndrome.encode());
        if aeth.syndrome == Syndrome::Nak(NakCode::PsnSequenceError) {
            // The NAK names the PSN the responder expects; the requester
            // must go back and send it again.
            let (src, dst, _) = captured.flow();
            let resent = packets[index + 1..].iter().any(|later| {
                let (later_src, later_dst, _) = later.flow();
                later_src == dst
                    && later_dst == src
                    && psn_cmp(later.packet().bth().psn, pkt.bth().psn).is_eq()
            });
            assert!(resent, "#{index}: NAKed PSN {} never resent", pkt.bth().psn);
        }
    }
    assert_eq!(syndromes, BTreeSet::from([31, 96]));
    assert_eq!(Syndrome::decode(31), Syndrome::ACK_UNLIMITED);
}
