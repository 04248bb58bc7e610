// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! `fuzz-packet`: a mutation fuzzer for the protocol core that needs no nightly toolchain.
//!
//! ```sh
//! cargo run --release --bin fuzz-packet -- [SECONDS] [SEED]
//! ```
//!
//! Seeds: the C driver's captures in `tests/vectors/` (each packet as a UDP payload and as
//! an IP datagram, a few per opcode) and synthetic packets of every opcode, WQEs and rings.
//! Each iteration takes a corpus entry, applies 1 to 8 mutations (bit flips, byte sets,
//! truncation, extension, removal, opcode swaps, pad/version edits, length fields set to edge
//! values, splices with another entry) and runs [`harness::fuzz_packet`], which panics on a
//! broken invariant. An input whose path signature was not seen before joins the corpus.
//! On a failure it prints the input in hex and exits 1; `FUZZ_INPUT=<hex>` replays one input.
//! `--write-corpus DIR` writes the seeds as files (for cargo-fuzz) and exits.

use std::collections::HashSet;
use std::panic;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rxe_proto::proto;

#[path = "harness.rs"]
mod harness;
#[path = "../rxe_rs/proto/tests/pcap.rs"]
mod pcap;

const CAPTURES: [&str; 3] = [
    "rxe-c-rc-uc-ud-cm.pcap",
    "rxe-c-write-read-atomic-send.pcap",
    "rxe-c-lossy-naks.pcap",
];
/// Corpus entries are kept below this size.
const MAX_INPUT: usize = 4200;
/// The corpus stops growing here.
const MAX_CORPUS: usize = 20_000;

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for name in CAPTURES {
        let path = pcap::vector_path(name);
        if std::fs::metadata(&path).is_err() {
            eprintln!("fuzz-packet: {path} missing, going on without it");
            continue;
        }
        let mut per_opcode = [0usize; 256];
        for frame in pcap::read_frames(name) {
            let Some(r) = pcap::roce(&frame) else {
                continue;
            };
            let _ = r.ip_header();
            let Some(&opcode) = r.payload.first() else {
                continue;
            };
            let n = &mut per_opcode[usize::from(opcode)];
            if *n < 3 {
                *n += 1;
                seeds.extend(harness::packet_seeds(r.ip, r.udp, r.payload));
            }
        }
    }
    seeds.extend(harness::synthetic_seeds());
    seeds
}

fn from_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn run(input: &[u8]) -> Result<u64, String> {
    panic::catch_unwind(|| harness::fuzz_packet(input)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "panic".to_owned())
    })
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--write-corpus") {
        let dir = args
            .nth(1)
            .unwrap_or_else(|| "fuzz/corpus/packet".to_owned());
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("{dir}: {e}");
            return ExitCode::FAILURE;
        }
        let seeds = seeds();
        for (i, input) in seeds.iter().enumerate() {
            if let Err(e) = std::fs::write(format!("{dir}/seed-{i:04}"), input) {
                eprintln!("{dir}: {e}");
                return ExitCode::FAILURE;
            }
        }
        println!("{} seeds written to {dir}", seeds.len());
        return ExitCode::SUCCESS;
    }
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });

    if let Ok(hex) = std::env::var("FUZZ_INPUT") {
        let Some(input) = from_hex(&hex) else {
            eprintln!("FUZZ_INPUT is not hex");
            return ExitCode::FAILURE;
        };
        return match run(&input) {
            Ok(sig) => {
                println!("ok, path {sig:#018x}");
                ExitCode::SUCCESS
            }
            Err(msg) => {
                println!("FAILED: {msg}");
                ExitCode::FAILURE
            }
        };
    }

    // Failures are reported once, with the input, below; not by the default hook.
    panic::set_hook(Box::new(|_| {}));
    let mut corpus = seeds();
    let mut paths = HashSet::new();
    for (i, input) in corpus.iter().enumerate() {
        match run(input) {
            Ok(sig) => {
                paths.insert(sig);
            }
            Err(msg) => {
                println!(
                    "FAILED on seed {i}: {msg}\ninput: {}",
                    harness::to_hex(input)
                );
                return ExitCode::FAILURE;
            }
        }
    }
    let seeds = corpus.len();
    let mut found: u64 = 0;
    println!(
        "fuzz-packet: {seeds} seeds, {} paths, {seconds} s, rng seed {seed}",
        paths.len()
    );

    let mut rng = Rng(seed | 1);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut iterations: u64 = 0;
    let mut next_report = start + Duration::from_secs(10);
    loop {
        if iterations % 256 == 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if now >= next_report {
                println!(
                    "  {:>4} s: {iterations} iterations, corpus {}, paths {}",
                    (now - start).as_secs(),
                    corpus.len(),
                    paths.len()
                );
                next_report += Duration::from_secs(10);
            }
        }
        iterations += 1;
        let mut input = corpus[rng.below(corpus.len())].clone();
        if rng.below(10) == 0 {
            let other = &corpus[rng.below(corpus.len())];
            input = harness::splice(&input, other, rng.next() as usize, rng.next() as usize);
        }
        for _ in 0..1 + rng.below(8) {
            harness::Mutation::from_random([rng.next(), rng.next(), rng.next()]).apply(&mut input);
        }
        match run(&input) {
            Ok(sig) => {
                if paths.insert(sig) && input.len() <= MAX_INPUT {
                    found += 1;
                    if corpus.len() < MAX_CORPUS {
                        corpus.push(input);
                    } else {
                        // Full: a new path replaces an old find, never a seed.
                        let victim = seeds + rng.below(corpus.len() - seeds);
                        corpus[victim] = input;
                    }
                }
            }
            Err(msg) => {
                println!(
                    "FAILED after {iterations} iterations: {msg}\ninput: {}\n\
                     replay: FUZZ_INPUT={} cargo run --release --bin fuzz-packet",
                    harness::to_hex(&input),
                    harness::to_hex(&input)
                );
                return ExitCode::FAILURE;
            }
        }
    }
    let millis = start.elapsed().as_millis().max(1);
    println!(
        "fuzz-packet: {iterations} iterations in {}.{:03} s ({}/s), corpus {}, \
         {found} inputs with a new path, paths {}, no failure",
        millis / 1000,
        millis % 1000,
        u128::from(iterations) * 1000 / millis,
        corpus.len(),
        paths.len()
    );
    ExitCode::SUCCESS
}
