// SPDX-License-Identifier: GPL-2.0

//! CPU counts the `kernel` crate of 7.3 does not give.

use crate::ffi;

/// `num_possible_cpus()`: the CPUs this boot can ever bring online.
pub(crate) fn num_possible_cpus() -> u32 {
    // SAFETY: reads the possible-CPU mask's weight; callable from any context.
    unsafe { ffi::rxe_rs_num_possible_cpus() }
}
