// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The fuzz harness (`fuzz/harness.rs`) under proptest: random inputs for every target, and
//! mutations (bit flips, truncation, length fields, opcode swaps, splices) of the C driver's
//! captured packets and of synthetic packets, WQEs and rings. The long runs are the
//! `fuzz-packet` binary's (`Documentation/protocol-core.md`).

use std::sync::OnceLock;
use std::vec::Vec;

use proptest::prelude::*;

use super::pcap::{read_frames, roce};
use crate::fuzz_harness::{
    fuzz_packet, packet_seeds, splice, synthetic_seeds, to_hex, Mutation, TARGETS,
    TARGET_IP_DATAGRAM, TARGET_UDP_PAYLOAD,
};

const CAPTURES: [&str; 3] = [
    "rxe-c-rc-uc-ud-cm.pcap",
    "rxe-c-write-read-atomic-send.pcap",
    "rxe-c-lossy-naks.pcap",
];

/// At most this many packets per capture and opcode: the lossy capture alone has 2,500.
const PER_OPCODE: usize = 3;

/// Captured packets (each as a UDP payload and as an IP datagram), then the synthetic seeds.
fn corpus() -> &'static [Vec<u8>] {
    static CORPUS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut seeds = Vec::new();
        for name in CAPTURES {
            let mut per_opcode = [0usize; 256];
            for frame in read_frames(name) {
                let Some(r) = roce(&frame) else { continue };
                let Some(&opcode) = r.payload.first() else {
                    continue;
                };
                let n = &mut per_opcode[usize::from(opcode)];
                if *n < PER_OPCODE {
                    *n += 1;
                    seeds.extend(packet_seeds(r.ip, r.udp, r.payload));
                }
            }
        }
        seeds.extend(synthetic_seeds());
        seeds
    })
}

#[test]
fn every_seed_passes_the_harness() {
    let corpus = corpus();
    assert!(corpus.len() > 200, "{} seeds", corpus.len());
    let mut signatures = std::collections::BTreeSet::new();
    for seed in corpus {
        signatures.insert(fuzz_packet(seed));
    }
    // The seeds take many different paths, not one error path.
    assert!(signatures.len() > 100, "{} paths", signatures.len());
}

/// The mutation loop of the `fuzz-packet` binary, briefly, with a fixed seed.
#[test]
fn mutation_loop() {
    let corpus = corpus();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..3_000 {
        let mut input = corpus[(next() % corpus.len() as u64) as usize].clone();
        for _ in 0..1 + next() % 8 {
            Mutation::from_random([next(), next(), next()]).apply(&mut input);
        }
        let result = std::panic::catch_unwind(|| fuzz_packet(&input));
        assert!(result.is_ok(), "failing input: {}", to_hex(&input));
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::SetByte { at, value }),
        1 => any::<usize>().prop_map(|len| Mutation::Truncate { len }),
        1 => (0..32u8, any::<u8>()).prop_map(|(count, value)| Mutation::Extend { count, value }),
        1 => (any::<usize>(), 0..8u8).prop_map(|(at, count)| Mutation::Remove { at, count }),
        2 => prop_oneof![
            any::<usize>().prop_map(crate::fuzz_harness::known_opcode),
            any::<u8>()
        ]
        .prop_map(|opcode| Mutation::Opcode { opcode }),
        1 => (0..4u8, prop_oneof![3 => Just(0u8), 1 => 0..16u8])
            .prop_map(|(pad, tver)| Mutation::PadVersion { pad, tver }),
        3 => (any::<usize>(), any::<usize>(), any::<u32>())
            .prop_map(|(field, edge, value)| Mutation::Field { field, edge, value }),
        1 => (0..TARGETS).prop_map(|selector| Mutation::Retarget { selector }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    /// Random bytes for every target.
    #[test]
    fn harness_takes_random_bytes(
        selector in 0..TARGETS,
        bytes in prop::collection::vec(any::<u8>(), 0..320),
    ) {
        let mut input = std::vec![selector];
        input.extend_from_slice(&bytes);
        fuzz_packet(&input);
    }

    /// Random bytes after a valid BTH of a known opcode, so that the parser gets past the
    /// opcode and version checks.
    #[test]
    fn harness_takes_random_packets(
        opcode in any::<usize>().prop_map(crate::fuzz_harness::known_opcode),
        pad in 0..4u8,
        datagram in any::<bool>(),
        bytes in prop::collection::vec(any::<u8>(), 0..96),
    ) {
        let mut payload = std::vec![opcode, pad << 4];
        payload.extend_from_slice(&bytes);
        let udp_len = u16::try_from(8 + payload.len()).unwrap().to_be_bytes();
        let input = if datagram {
            let mut input = std::vec![TARGET_IP_DATAGRAM, 0x45];
            input.extend_from_slice(&[0; 19]);
            input.extend_from_slice(&[0xc0, 0, 0x12, 0xb7, udp_len[0], udp_len[1], 0, 0]);
            input.extend_from_slice(&payload);
            input
        } else {
            let mut input = std::vec![TARGET_UDP_PAYLOAD];
            input.extend_from_slice(&payload);
            input
        };
        fuzz_packet(&input);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(15_000))]

    /// Mutations of the seeds: captured packets, synthetic packets of every opcode, WQEs and
    /// rings.
    #[test]
    fn harness_takes_mutated_seeds(
        index in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..6),
        splice_with in prop::option::weighted(0.1, (any::<prop::sample::Index>(), any::<usize>(), any::<usize>())),
    ) {
        let corpus = corpus();
        let mut input = corpus[index.index(corpus.len())].clone();
        if let Some((other, cut_a, cut_b)) = splice_with {
            input = splice(&input, &corpus[other.index(corpus.len())], cut_a, cut_b);
        }
        for m in &mutations {
            m.apply(&mut input);
        }
        fuzz_packet(&input);
    }
}
