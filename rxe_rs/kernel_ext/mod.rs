// SPDX-License-Identifier: GPL-2.0

//! Kernel facilities the `kernel` crate of 7.3 does not wrap and that are neither ib_core nor
//! networking: a jiffies `timer_list` owned by an `Arc`ed object ([`timer::Timer`]), a
//! lock-free slot for one `Arc` ([`arc_slot::ArcSlot`]) and the possible CPUs
//! ([`cpu::num_possible_cpus`]). Any driver could use them; nothing here knows about RDMA.

pub(crate) mod arc_slot;
pub(crate) mod cpu;
pub(crate) mod timer;
