// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Just enough of a classic pcap reader to pull RoCEv2 packets out of the
//! C driver's captures.

use std::vec::Vec;

use crate::proto::icrc::{IpHeader, UDP_HDR_LEN};

/// Where the captures live: `tests/vectors/` of this repository.
pub(super) fn vector_path(name: &str) -> std::string::String {
    std::format!("{}/tests/vectors/{}", env!("CARGO_MANIFEST_DIR"), name)
}

const LINKTYPE_ETHERNET: u32 = 1;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const IPPROTO_UDP: u8 = 17;
/// The IANA port of RoCEv2.
pub(super) const ROCE_V2_PORT: u16 = 4791;

/// The frames of a classic pcap file whose link type is Ethernet.
pub(super) fn read_frames(name: &str) -> Vec<Vec<u8>> {
    let path = vector_path(name);
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(data.len() >= 24, "{path}: no pcap header");
    let magic = u32::from_le_bytes(data[0..4].try_into().unwrap());
    let little = match magic {
        0xa1b2_c3d4 | 0xa1b2_3c4d => true,
        0xd4c3_b2a1 | 0x4d3c_b2a1 => false,
        other => panic!("{path}: not a classic pcap file (magic {other:#x})"),
    };
    let word = |at: usize| {
        let bytes: [u8; 4] = data[at..at + 4].try_into().unwrap();
        if little {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        }
    };
    assert_eq!(
        word(20),
        LINKTYPE_ETHERNET,
        "{path}: link type is not Ethernet"
    );

    let mut frames = Vec::new();
    let mut at = 24;
    while at < data.len() {
        assert!(at + 16 <= data.len(), "{path}: truncated record header");
        let captured = word(at + 8) as usize;
        let original = word(at + 12) as usize;
        assert_eq!(captured, original, "{path}: frame cut by the snap length");
        let start = at + 16;
        assert!(start + captured <= data.len(), "{path}: truncated frame");
        frames.push(data[start..start + captured].to_vec());
        at = start + captured;
    }
    frames
}

/// The layers of a RoCEv2 frame that the ICRC covers.
pub(super) struct Roce<'a> {
    /// The IP header, 20 (IPv4, no options) or 40 bytes.
    pub(super) ip: &'a [u8],
    pub(super) udp: &'a [u8; UDP_HDR_LEN],
    /// The UDP payload as long as the UDP header says: BTH to ICRC.
    pub(super) payload: &'a [u8],
}

impl Roce<'_> {
    pub(super) fn ip_header(&self) -> IpHeader<'_> {
        IpHeader::parse(self.ip).expect("IP header")
    }
}

fn be16(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(bytes[at..at + 2].try_into().unwrap())
}

/// Ethernet → IPv4/IPv6 → UDP to port 4791, or `None` for anything else.
pub(super) fn roce(frame: &[u8]) -> Option<Roce<'_>> {
    let mut ethertype = be16(frame, 12);
    let mut l3 = 14;
    if ethertype == ETHERTYPE_VLAN {
        ethertype = be16(frame, 16);
        l3 = 18;
    }
    let (ip, l4, udp_len_limit) = match ethertype {
        ETHERTYPE_IPV4 => {
            let ihl = usize::from(frame[l3] & 0x0f) * 4;
            if frame[l3 + 9] != IPPROTO_UDP {
                return None;
            }
            let total = usize::from(be16(frame, l3 + 2));
            (&frame[l3..l3 + ihl], l3 + ihl, total - ihl)
        }
        ETHERTYPE_IPV6 => {
            if frame[l3 + 6] != IPPROTO_UDP {
                return None;
            }
            let payload = usize::from(be16(frame, l3 + 4));
            (&frame[l3..l3 + 40], l3 + 40, payload)
        }
        _ => return None,
    };
    let udp: &[u8; UDP_HDR_LEN] = frame[l4..l4 + UDP_HDR_LEN].try_into().unwrap();
    if be16(udp, 2) != ROCE_V2_PORT {
        return None;
    }
    let udp_len = usize::from(be16(udp, 4));
    assert_eq!(udp_len, udp_len_limit, "UDP and IP lengths disagree");
    let payload = &frame[l4 + UDP_HDR_LEN..l4 + udp_len];
    Some(Roce { ip, udp, payload })
}
