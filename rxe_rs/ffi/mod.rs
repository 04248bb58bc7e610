// SPDX-License-Identifier: GPL-2.0

//! Raw bindings for the kernel C APIs the kernel crate does not bind (ib_core, the UDP
//! tunnel, …) and the C shims of `shim.c`.
//!
//! Generated at build time by `scripts/ffi-bindgen` from `include/rxe_rs_ffi.h`. Only the
//! safe wrappers in `ib/` and `net/` use this module; nothing above them may.

#[allow(
    clippy::all,
    clippy::as_underscore,
    clippy::cast_lossless,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::undocumented_unsafe_blocks,
    dead_code,
    missing_docs,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    improper_ctypes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    unused_imports,
    clashing_extern_declarations
)]
#[cfg_attr(not(CONFIG_RUSTC_HAS_UNNECESSARY_TRANSMUTES), allow(unknown_lints))]
#[allow(unnecessary_transmutes)]
mod raw {
    // The Kbuild file exports RXE_RS_GENERATED: the generated code depends on the kernel's
    // configuration, so it lives in the build output directory, one per kernel.
    include!(concat!(env!("RXE_RS_GENERATED"), "/ffi_bindings.rs"));
}

pub(crate) use raw::*;

mod layout;
