// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! cargo-fuzz target: the harness of `fuzz-packet` under libFuzzer (`cargo +nightly fuzz run
//! packet`). Seed it with `cargo run --bin fuzz-packet -- --write-corpus fuzz/corpus/packet`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rxe_proto::proto;

#[path = "../harness.rs"]
mod harness;

fuzz_target!(|data: &[u8]| {
    harness::fuzz_packet(data);
});
