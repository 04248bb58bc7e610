// SPDX-License-Identifier: GPL-2.0

//! The rxe driver proper: what an rxe device is and does, on top of the safe `ib` layer.
//! No `unsafe` and no raw bindings here: the compiler refuses it (`forbid(unsafe_code)`).

#![forbid(unsafe_code)]

pub(crate) mod ah;
pub(crate) mod comp;
pub(crate) mod counters;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod engine;
pub(crate) mod ib_values;
pub(crate) mod intake;
pub(crate) mod local;
pub(crate) mod mcast;
pub(crate) mod mr;
pub(crate) mod odp;
pub(crate) mod outbox;
pub(crate) mod packet_rings;
pub(crate) mod pool;
pub(crate) mod qp;
pub(crate) mod recv;
pub(crate) mod req;
pub(crate) mod resp;
pub(crate) mod ring;
pub(crate) mod sg;
pub(crate) mod shared;
pub(crate) mod srq;
pub(crate) mod step;
pub(crate) mod table;
pub(crate) mod task;
pub(crate) mod verbs;
