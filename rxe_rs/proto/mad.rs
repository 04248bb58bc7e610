// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The performance management agent of an rxe port (`rxe_process_mad`, IBA 16.1): the replies to
//! `Get` of `ClassPortInfo`, `PortCounters` and `PortCountersExtended` MADs, which
//! `perfquery` and ib_core's counters read.

/// Bytes of a MAD (`struct ib_mad`).
pub const MAD_LEN: usize = 256;

// MAD layout (`struct ib_mad`): header fields and the attribute data of the PMA replies.
const MAD_MGMT_CLASS: usize = 1;
const MAD_METHOD: usize = 3;
const MAD_STATUS: usize = 4;
const MAD_ATTR_ID: usize = 16;
const MAD_PMA_DATA: usize = 24 + 40;
/// `IB_MGMT_CLASS_PERF_MGMT`.
pub const IB_MGMT_CLASS_PERF_MGMT: u8 = 0x04;
/// `IB_MGMT_METHOD_GET`.
pub const IB_MGMT_METHOD_GET: u8 = 0x01;
/// `IB_PMA_CLASS_PORT_INFO`.
pub const IB_PMA_CLASS_PORT_INFO: u16 = 0x0001;
/// `IB_PMA_PORT_COUNTERS`.
pub const IB_PMA_PORT_COUNTERS: u16 = 0x0012;
/// `IB_PMA_PORT_COUNTERS_EXT`.
pub const IB_PMA_PORT_COUNTERS_EXT: u16 = 0x001d;
/// `IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD`.
pub const IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD: u16 = 0x0008;
/// `IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB`.
pub const IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB: u16 = 0x000c;
/// `IB_MAD_RESULT_SUCCESS`.
pub const IB_MAD_RESULT_SUCCESS: i32 = 1;
/// `IB_MAD_RESULT_REPLY`.
pub const IB_MAD_RESULT_REPLY: i32 = 2;

/// What `PortCounters` / `PortCountersExtended` queries report (IBA 16.1.3.5, 16.1.4.11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PmaCounters {
    /// Times the link went down.
    pub link_downed: u64,
    /// Bytes sent.
    pub xmit_bytes: u64,
    /// Bytes received.
    pub rcv_bytes: u64,
    /// Packets sent.
    pub xmit_packets: u64,
    /// Packets received.
    pub rcv_packets: u64,
}

/// The agent's answer to the MAD `input`, written to `out` (both [`MAD_LEN`] bytes; shorter
/// buffers get no reply): `IB_MAD_RESULT_*` as `process_mad` returns it.
pub fn pma_reply(c: &PmaCounters, input: &[u8], out: &mut [u8]) -> i32 {
    let (Some(input), Some(out)) = (input.get(..MAD_LEN), out.get_mut(..MAD_LEN)) else {
        return IB_MAD_RESULT_SUCCESS;
    };
    out.fill(0);
    let class = input[MAD_MGMT_CLASS];
    let method = input[MAD_METHOD];
    let status =
        |out: &mut [u8], s: u16| out[MAD_STATUS..MAD_STATUS + 2].copy_from_slice(&s.to_be_bytes());
    if class != IB_MGMT_CLASS_PERF_MGMT {
        status(out, IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD);
        return IB_MAD_RESULT_SUCCESS;
    }
    if method != IB_MGMT_METHOD_GET {
        return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
    }
    let d = MAD_PMA_DATA;
    match u16::from_be_bytes([input[MAD_ATTR_ID], input[MAD_ATTR_ID + 1]]) {
        IB_PMA_CLASS_PORT_INFO => {
            // capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH (bit 9), big-endian.
            out[d + 2..d + 4].copy_from_slice(&(1u16 << 9).to_be_bytes());
        }
        IB_PMA_PORT_COUNTERS => {
            // Counters stop at all ones instead of wrapping (IBA 16.1.3.5).
            out[d + 7] = u8::try_from(c.link_downed).unwrap_or(u8::MAX);
        }
        IB_PMA_PORT_COUNTERS_EXT => {
            // Data counters count 32-bit words.
            out[d + 8..d + 16].copy_from_slice(&(c.xmit_bytes >> 2).to_be_bytes());
            out[d + 16..d + 24].copy_from_slice(&(c.rcv_bytes >> 2).to_be_bytes());
            out[d + 24..d + 32].copy_from_slice(&c.xmit_packets.to_be_bytes());
            out[d + 32..d + 40].copy_from_slice(&c.rcv_packets.to_be_bytes());
        }
        _ => {
            status(out, IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
            return IB_MAD_RESULT_SUCCESS;
        }
    }
    IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY
}
