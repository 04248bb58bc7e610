// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! The performance management agent (`proto::mad`) against `rxe_process_mad`'s answers.

use crate::proto::mad::*;

fn get(class: u8, method: u8, attr: u16) -> [u8; MAD_LEN] {
    let mut m = [0u8; MAD_LEN];
    m[1] = class;
    m[3] = method;
    m[16..18].copy_from_slice(&attr.to_be_bytes());
    m
}

const COUNTERS: PmaCounters = PmaCounters {
    link_downed: 3,
    xmit_bytes: 4096 + 3,
    rcv_bytes: 1 << 40,
    xmit_packets: 7,
    rcv_packets: 9,
};
const DATA: usize = 64;

#[test]
fn port_counters_ext_count_words_and_packets() {
    let mut out = [0xaa; MAD_LEN];
    let r = pma_reply(
        &COUNTERS,
        &get(
            IB_MGMT_CLASS_PERF_MGMT,
            IB_MGMT_METHOD_GET,
            IB_PMA_PORT_COUNTERS_EXT,
        ),
        &mut out,
    );
    assert_eq!(r, IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY);
    let be64 = |at: usize| u64::from_be_bytes(out[at..at + 8].try_into().unwrap());
    assert_eq!(
        be64(DATA + 8),
        1024,
        "xmit data in 32-bit words, rounded down"
    );
    assert_eq!(be64(DATA + 16), 1 << 38);
    assert_eq!(be64(DATA + 24), 7);
    assert_eq!(be64(DATA + 32), 9);
    assert_eq!(&out[4..6], &[0, 0], "status");
}

#[test]
fn link_downed_saturates_at_255() {
    let mut out = [0; MAD_LEN];
    let mut c = COUNTERS;
    let mad = get(
        IB_MGMT_CLASS_PERF_MGMT,
        IB_MGMT_METHOD_GET,
        IB_PMA_PORT_COUNTERS,
    );
    pma_reply(&c, &mad, &mut out);
    assert_eq!(out[DATA + 7], 3);
    c.link_downed = 1000;
    pma_reply(&c, &mad, &mut out);
    assert_eq!(out[DATA + 7], 255);
}

#[test]
fn class_port_info_has_extended_width() {
    let mut out = [0; MAD_LEN];
    pma_reply(
        &COUNTERS,
        &get(
            IB_MGMT_CLASS_PERF_MGMT,
            IB_MGMT_METHOD_GET,
            IB_PMA_CLASS_PORT_INFO,
        ),
        &mut out,
    );
    assert_eq!(&out[DATA + 2..DATA + 4], &[0x02, 0x00]);
}

#[test]
fn other_classes_methods_and_attributes() {
    let mut out = [0; MAD_LEN];
    let r = pma_reply(
        &COUNTERS,
        &get(0x01, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS),
        &mut out,
    );
    assert_eq!(r, IB_MAD_RESULT_SUCCESS);
    assert_eq!(
        &out[4..6],
        &IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD.to_be_bytes()
    );
    let r = pma_reply(
        &COUNTERS,
        &get(IB_MGMT_CLASS_PERF_MGMT, 0x02, IB_PMA_PORT_COUNTERS),
        &mut out,
    );
    assert_eq!(r, IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY);
    let r = pma_reply(
        &COUNTERS,
        &get(IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_GET, 0x0099),
        &mut out,
    );
    assert_eq!(r, IB_MAD_RESULT_SUCCESS);
    assert_eq!(
        &out[4..6],
        &IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB.to_be_bytes()
    );
}

#[test]
fn short_buffers_get_no_reply() {
    let mut out = [0; 10];
    let mad = get(
        IB_MGMT_CLASS_PERF_MGMT,
        IB_MGMT_METHOD_GET,
        IB_PMA_PORT_COUNTERS,
    );
    assert_eq!(pma_reply(&COUNTERS, &mad, &mut out), IB_MAD_RESULT_SUCCESS);
    assert_eq!(
        pma_reply(&COUNTERS, &mad[..100], &mut [0; MAD_LEN]),
        IB_MAD_RESULT_SUCCESS
    );
}
