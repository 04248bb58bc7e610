// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Host build of the rxe-rs protocol core.
//!
//! The kernel module compiles `proto/` from its own crate root; this crate
//! compiles the very same files on the host so that `cargo test` can check
//! them against the C driver's captured packets without a kernel.

#![no_std]

#[cfg(test)]
extern crate std;

pub mod proto;

#[cfg(test)]
#[path = "proto/tests/mod.rs"]
mod tests;

/// The fuzz harness, shared with the `fuzz-packet` binary and the cargo-fuzz target.
#[cfg(test)]
#[path = "../fuzz/harness.rs"]
mod fuzz_harness;
