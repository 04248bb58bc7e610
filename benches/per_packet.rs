// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB

//! Host micro-benchmarks of the per-packet code of the protocol core, run natively:
//!
//! ```sh
//! cargo bench --bench per_packet                 # ≈ 10 s
//! cargo bench --bench per_packet -- 3            # 3× the iterations of every batch
//! cargo bench --bench per_packet -- 1 ICRC       # only the rows whose name contains "ICRC"
//! ```
//!
//! Measures the ICRC (the slice-by-8 table [`icrc::crc32_le`] of the host build against a
//! PCLMULQDQ CRC-32 standing in for the kernel's accelerated `crc32_le()`), header parse and
//! build, the PSN and opcode decisions of the responder and the completer, and the WQE parsers.
//! Every row is the median of [`BATCHES`] timed batches of the same operation, each batch
//! calibrated to last about [`BATCH_TARGET`] times the multiplier; ns/op includes the loop and
//! the [`black_box`] around inputs and results (about a nanosecond). GB/s is per byte the
//! operation reads: for the ICRC, the IPv4 and UDP headers and the UDP payload without the ICRC.
//! Without `--bench`, which `cargo bench` passes and `cargo test --benches` does not, every row
//! runs once, untimed. `Documentation/performance.md` has the numbers and what they decide.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rxe_proto::proto::comp::{check_response, HeadWqe, Response, WqeState};
use rxe_proto::proto::hdr::{
    Aeth, Bth, Header, Reth, Syndrome, AETH_LEN, BTH_LEN, DEFAULT_PKEY, ICRC_LEN, RETH_LEN,
};
use rxe_proto::proto::icrc::{self, crc32_le, IpHeader, IPV4_HDR_LEN, UDP_HDR_LEN};
use rxe_proto::proto::opcode::{self, opcode_info};
use rxe_proto::proto::packet::{pad_len, Packet};
use rxe_proto::proto::parts::Parts;
use rxe_proto::proto::psn::{psn_add, psn_cmp, psn_diff, PSN_MASK};
use rxe_proto::proto::qp_state::QpType;
use rxe_proto::proto::resp::{check_op_seq, check_psn_rc};
use rxe_proto::proto::wqe::{
    write_recv_wqe, write_send_wqe, RecvWqe, SendData, SendLimits, SendWqe, SendWr, Sge, WrDetail,
    WrMask, IB_SEND_INLINE, IB_SEND_SIGNALED, IB_WR_RDMA_WRITE, IB_WR_SEND, RECV_WQE_HDR_LEN,
    SEND_WQE_HDR_LEN, SGE_LEN,
};

/// Timed batches per row; the row reports their median.
const BATCHES: usize = 15;
/// How long one batch lasts (times the multiplier).
const BATCH_TARGET: Duration = Duration::from_millis(25);
/// How long a calibration run must last before its rate is trusted.
const CALIBRATION_MIN: Duration = Duration::from_millis(2);
/// Inputs cycled through by the cheap decisions, so that no call is folded into a constant.
const CASES: usize = 256;

/// `crc32_le` as the kernel's (raw reflected CRC-32, no inversion on entry or exit), from
/// crc32fast: PCLMULQDQ on x86_64 like the kernel's `crc32_le_arch`.
fn accelerated(crc: u32, data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(!crc);
    h.update(data);
    !h.finalize()
}

/// One line of the table.
struct Row {
    name: String,
    /// Median picoseconds per operation.
    ps: u128,
}

struct Bench {
    /// `false` without `--bench` (`cargo test --benches`): run every row once, untimed.
    timed: bool,
    multiplier: u32,
    filter: Option<String>,
    rows: Vec<Row>,
}

/// Runs `f(0), f(1), …, f(n - 1)` and returns how long that took.
fn run_batch<R>(n: usize, f: &mut impl FnMut(usize) -> R) -> Duration {
    let start = Instant::now();
    for i in 0..n {
        black_box(f(black_box(i)));
    }
    start.elapsed()
}

fn to_u128(n: usize) -> u128 {
    u128::try_from(n).expect("usize fits in u128")
}

impl Bench {
    /// Times `f` and adds its row, unless the filter leaves it out.
    fn run<R>(&mut self, name: &str, bytes: Option<usize>, mut f: impl FnMut(usize) -> R) {
        if let Some(filter) = &self.filter {
            if !name.contains(filter.as_str()) {
                return;
            }
        }
        if !self.timed {
            black_box(f(black_box(0)));
            self.rows.push(Row {
                name: name.to_owned(),
                ps: 0,
            });
            return;
        }
        // Calibrate (and warm up): double the count until a run lasts long enough, then scale
        // it to the batch target.
        let mut n: usize = 1;
        let mut elapsed = run_batch(n, &mut f);
        while elapsed < CALIBRATION_MIN {
            n = n.saturating_mul(2);
            elapsed = run_batch(n, &mut f);
        }
        let target = BATCH_TARGET.saturating_mul(self.multiplier).as_nanos();
        let scaled = to_u128(n) * target / elapsed.as_nanos().max(1);
        let n = usize::try_from(scaled).unwrap_or(usize::MAX).max(1);

        let mut per_op: Vec<u128> = (0..BATCHES)
            .map(|_| run_batch(n, &mut f).as_nanos() * 1000 / to_u128(n))
            .collect();
        per_op.sort_unstable();
        let ps = per_op[BATCHES / 2];
        println!("{}", format_row(name, ps, bytes));
        self.rows.push(Row {
            name: name.to_owned(),
            ps,
        });
    }

    fn ps(&self, name: &str) -> Option<u128> {
        self.rows.iter().find(|r| r.name == name).map(|r| r.ps)
    }
}

/// `whole.frac` with `digits` decimals of `value / 10^digits`.
fn fixed(value: u128, digits: u32) -> String {
    let scale = 10u128.pow(digits);
    let width = usize::try_from(digits).expect("a few digits");
    format!("{}.{:0width$}", value / scale, value % scale)
}

fn format_row(name: &str, ps: u128, bytes: Option<usize>) -> String {
    // ns/op with 2 decimals; GB/s = bytes/ns = bytes * 1000 / ps, with 2 decimals.
    let ns = fixed(ps / 10, 2);
    let gbs = match bytes {
        Some(bytes) if ps > 0 => fixed(to_u128(bytes) * 100_000 / ps, 2),
        _ => "-".to_owned(),
    };
    format!("| {name:<48} | {ns:>9} | {gbs:>6} |")
}

/// An IPv4 header for a UDP datagram of `udp_len` bytes, 192.168.122.1 → 192.168.122.2,
/// with its checksum.
fn ipv4_header(udp_len: usize) -> [u8; IPV4_HDR_LEN] {
    let total = u16::try_from(IPV4_HDR_LEN + udp_len).expect("fits an IPv4 datagram");
    let [t0, t1] = total.to_be_bytes();
    let mut h = [
        0x45, 0x00, t0, t1, 0x12, 0x34, 0x40, 0x00, 0x40, 17, 0, 0, 192, 168, 122, 1, 192, 168,
        122, 2,
    ];
    let sum = h
        .chunks_exact(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum::<u32>();
    let folded = (sum & 0xffff) + (sum >> 16);
    let folded = (folded & 0xffff) + (folded >> 16);
    let checksum = !u16::try_from(folded).expect("folded to 16 bits");
    h[10..12].copy_from_slice(&checksum.to_be_bytes());
    h
}

/// A UDP header to the RoCEv2 port 4791 for `payload_len` bytes of payload, checksum 0.
fn udp_header(payload_len: usize) -> [u8; UDP_HDR_LEN] {
    let [l0, l1] = u16::try_from(UDP_HDR_LEN + payload_len)
        .expect("fits a UDP datagram")
        .to_be_bytes();
    [0xc0, 0x01, 0x12, 0xb7, l0, l1, 0, 0]
}

/// A packet as the stack hands it over: IPv4 and UDP headers, and the UDP payload (BTH to
/// ICRC, the ICRC filled in).
struct Frame {
    ip: [u8; IPV4_HDR_LEN],
    udp: [u8; UDP_HDR_LEN],
    udp_payload: Vec<u8>,
}

impl Frame {
    /// The UDP payload without its ICRC: what `icrc::compute` takes.
    fn covered(&self) -> &[u8] {
        &self.udp_payload[..self.udp_payload.len() - ICRC_LEN]
    }

    /// Bytes the ICRC's CRC-32 runs over (besides the 8 of the masked LRH in its seed).
    fn icrc_bytes(&self) -> usize {
        IPV4_HDR_LEN + UDP_HDR_LEN + self.covered().len()
    }
}

/// An RC RDMA WRITE ONLY (BTH + RETH) with `payload_len` bytes of payload.
fn rdma_write_only(payload_len: usize) -> Frame {
    let pad = pad_len(payload_len);
    let header_len = BTH_LEN + RETH_LEN;
    let len = header_len + payload_len + pad + ICRC_LEN;
    let mut p = vec![0u8; len];
    Bth {
        opcode: opcode::RC_RDMA_WRITE_ONLY,
        pad: u8::try_from(pad).expect("pad is 0..=3"),
        pkey: DEFAULT_PKEY,
        qpn: 0x11,
        ack_req: true,
        psn: 0x12_3456,
        ..Bth::default()
    }
    .write(&mut p)
    .expect("room for the BTH");
    Reth {
        va: 0x7f12_3456_7000,
        rkey: 0x0000_1a2b,
        len: u32::try_from(payload_len).expect("payload fits the RETH"),
    }
    .write(&mut p[BTH_LEN..])
    .expect("room for the RETH");
    for (i, byte) in p[header_len..header_len + payload_len]
        .iter_mut()
        .enumerate()
    {
        *byte = (i % 251) as u8;
    }
    let udp = udp_header(len);
    let ip = ipv4_header(UDP_HDR_LEN + len);
    icrc::generate(IpHeader::V4(&ip), &udp, &mut p).expect("a well-formed packet");
    // The accelerated CRC must give the same ICRC as the table, or its timing means nothing.
    icrc::verify_with(accelerated, IpHeader::V4(&ip), &udp, &p).expect("same ICRC");
    Frame {
        ip,
        udp,
        udp_payload: p,
    }
}

/// A small deterministic generator (xorshift), so the inputs need no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        u32::try_from(self.0 >> 32).expect("the high half")
    }
}

fn icrc_rows(b: &mut Bench) {
    for (label, payload_len) in [("64 B", 64), ("1 KiB", 1024), ("4 KiB", 4096)] {
        let frame = rdma_write_only(payload_len);
        let bytes = Some(frame.icrc_bytes());
        b.run(&format!("ICRC, table, {label} payload"), bytes, |_| {
            icrc::compute(
                IpHeader::V4(black_box(&frame.ip)),
                black_box(&frame.udp),
                black_box(frame.covered()),
            )
        });
        b.run(
            &format!("ICRC, accelerated, {label} payload"),
            bytes,
            |_| {
                icrc::compute_with(
                    accelerated,
                    IpHeader::V4(black_box(&frame.ip)),
                    black_box(&frame.udp),
                    black_box(frame.covered()),
                )
            },
        );
    }
    let data: Vec<u8> = (0..4096u32).map(|i| (i % 253) as u8).collect();
    assert_eq!(crc32_le(!0, &data), accelerated(!0, &data));
    b.run("CRC-32, table, 4 KiB", Some(data.len()), |_| {
        crc32_le(!0, black_box(&data))
    });
    b.run("CRC-32, accelerated, 4 KiB", Some(data.len()), |_| {
        accelerated(!0, black_box(&data))
    });
}

fn header_rows(b: &mut Bench) {
    let frame = rdma_write_only(1024);
    let packet = &frame.udp_payload[..];
    b.run("Packet::parse (RDMA WRITE ONLY, 1 KiB)", None, |_| {
        Packet::parse(black_box(packet)).map(|p| p.bth().psn)
    });
    b.run("Packet::parse + header::<Reth>()", None, |_| {
        Packet::parse(black_box(packet))
            .ok()
            .and_then(|p| p.header::<Reth>())
    });
    // As a packet sent by reference arrives: headers, payload fragment, pad-and-ICRC fragment.
    let info = opcode_info(opcode::RC_RDMA_WRITE_ONLY).unwrap();
    let (head, rest) = packet.split_at(info.length);
    let (payload, trailer) = rest.split_at(rest.len() - ICRC_LEN);
    let mut pieces = Parts::from_slice(head);
    pieces.push(payload).unwrap();
    pieces.push(trailer).unwrap();
    b.run("Packet::parse_parts (3 pieces, 1 KiB)", None, |_| {
        Packet::parse_parts(black_box(&pieces)).map(|p| p.bth().psn)
    });
    b.run("Packet::check_layout (3 pieces, 1 KiB)", None, |_| {
        Packet::check_layout(black_box(&pieces)).map(|(bth, _)| bth.psn)
    });
    b.run("Packet::route (3 pieces, 1 KiB)", None, |_| {
        Packet::route(black_box(&pieces)).map(|r| r.qpn)
    });
    b.run("ICRC verify, accelerated, 3 pieces, 1 KiB", None, |_| {
        icrc::verify_parts(
            accelerated,
            IpHeader::V4(black_box(&frame.ip)),
            black_box(&frame.udp),
            black_box(&pieces),
        )
    });
    b.run("ICRC verify, accelerated, contiguous, 1 KiB", None, |_| {
        icrc::verify_with(
            accelerated,
            IpHeader::V4(black_box(&frame.ip)),
            black_box(&frame.udp),
            black_box(packet),
        )
    });

    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let psns: Vec<u32> = (0..CASES).map(|_| rng.next() & PSN_MASK).collect();
    let bth = Bth {
        opcode: opcode::RC_RDMA_WRITE_ONLY,
        pkey: DEFAULT_PKEY,
        qpn: 0x11,
        ack_req: true,
        ..Bth::default()
    };
    let reth = Reth {
        va: 0x7f12_3456_7000,
        rkey: 0x0000_1a2b,
        len: 1024,
    };
    b.run("build BTH + RETH (RDMA WRITE ONLY)", None, |i| {
        let mut out = [0u8; BTH_LEN + RETH_LEN];
        let bth = Bth {
            psn: psns[i % CASES],
            ..bth
        };
        let ok = black_box(&bth).write(&mut out).is_ok()
            && black_box(&reth).write(&mut out[BTH_LEN..]).is_ok();
        (ok, out)
    });
    let ack = Bth {
        opcode: opcode::RC_ACKNOWLEDGE,
        ..bth
    };
    b.run("build BTH + AETH (ACK)", None, |i| {
        let mut out = [0u8; BTH_LEN + AETH_LEN];
        let psn = psns[i % CASES];
        let bth = Bth { psn, ..ack };
        let aeth = Aeth {
            syndrome: Syndrome::ACK_UNLIMITED,
            msn: psn,
        };
        let ok = black_box(&bth).write(&mut out).is_ok()
            && black_box(&aeth).write(&mut out[BTH_LEN..]).is_ok();
        (ok, out)
    });
}

fn decision_rows(b: &mut Bench) {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    // Mostly in sequence, some duplicates and gaps, across the 24-bit wrap.
    let psn_cases: Vec<(u32, u32, bool)> = (0..CASES)
        .map(|i| {
            let expected = rng.next() & PSN_MASK;
            let psn = match i % 8 {
                0 => psn_add(expected, PSN_MASK), // one behind: duplicate
                1 => psn_add(expected, 3),        // ahead: packets lost
                _ => expected,
            };
            (psn, expected, i % 16 == 1)
        })
        .collect();
    b.run("resp::check_psn_rc", None, |i| {
        let (psn, expected, nak) = black_box(psn_cases[i % CASES]);
        check_psn_rc(psn, expected, nak)
    });

    let sequences = [
        (None, opcode::RC_SEND_ONLY),
        (None, opcode::RC_RDMA_WRITE_FIRST),
        (
            Some(opcode::RC_RDMA_WRITE_FIRST),
            opcode::RC_RDMA_WRITE_MIDDLE,
        ),
        (
            Some(opcode::RC_RDMA_WRITE_MIDDLE),
            opcode::RC_RDMA_WRITE_LAST,
        ),
        (Some(opcode::RC_SEND_FIRST), opcode::RC_SEND_MIDDLE),
        (Some(opcode::RC_SEND_MIDDLE), opcode::RC_SEND_LAST),
        (None, opcode::RC_SEND_MIDDLE),
        (Some(opcode::RC_SEND_FIRST), opcode::RC_RDMA_WRITE_ONLY),
    ];
    let op_cases: Vec<(Option<u8>, u8)> = (0..CASES)
        .map(|_| sequences[rng.next() as usize % sequences.len()])
        .collect();
    b.run("resp::check_op_seq", None, |i| {
        let (prev, op) = black_box(op_cases[i % CASES]);
        check_op_seq(prev, op)
    });

    let ack_mask = opcode_info(opcode::RC_ACKNOWLEDGE)
        .expect("a known opcode")
        .mask;
    // An RDMA WRITE WQE of 4 packets waiting for its ACKs; ACKs for the middle, the last PSN,
    // an old one and one past the WQE.
    let resp_cases: Vec<(u32, HeadWqe, Response)> = (0..CASES)
        .map(|i| {
            let comp_psn = rng.next() & PSN_MASK;
            let head = HeadWqe {
                state: WqeState::Pending,
                wr_opcode: IB_WR_RDMA_WRITE,
                mask: WrMask::INLINE.union(WrMask::WRITE),
                sent: true,
                last_psn: psn_add(comp_psn, 3),
            };
            let offset = [1, 3, PSN_MASK, 5][i % 4];
            let pkt = Response {
                psn: psn_add(comp_psn, offset),
                opcode: opcode::RC_ACKNOWLEDGE,
                mask: ack_mask,
                syndrome: Some(Syndrome::ACK_UNLIMITED),
                has_atmack: false,
            };
            (comp_psn, head, pkt)
        })
        .collect();
    b.run("comp::check_response (ACK)", None, |i| {
        let (comp_psn, head, pkt) = black_box(&resp_cases[i % CASES]);
        check_response(*comp_psn, head, pkt)
    });

    let pairs: Vec<(u32, u32)> = (0..CASES)
        .map(|_| (rng.next() & PSN_MASK, rng.next() & PSN_MASK))
        .collect();
    b.run("psn::psn_add", None, |i| {
        let (a, n) = black_box(pairs[i % CASES]);
        psn_add(a, n & 0xff)
    });
    b.run("psn::psn_diff", None, |i| {
        let (a, c) = black_box(pairs[i % CASES]);
        psn_diff(a, c)
    });
    b.run("psn::psn_cmp", None, |i| {
        let (a, c) = black_box(pairs[i % CASES]);
        psn_cmp(a, c)
    });
}

fn wqe_rows(b: &mut Bench) {
    let limits = SendLimits {
        max_sge: 4,
        max_inline: 64,
        allow_kernel_only: false,
    };
    let slot_len = SEND_WQE_HDR_LEN + 4 * SGE_LEN;
    let sges: Vec<Sge> = (0..4u32)
        .map(|i| Sge {
            addr: 0x7f00_0000_0000 + u64::from(i) * 0x1000,
            length: 1024,
            lkey: 0x100 + i,
        })
        .collect();
    let write = SendWr {
        wr_id: 1,
        opcode: IB_WR_RDMA_WRITE,
        send_flags: IB_SEND_SIGNALED,
        ex: 0,
        detail: WrDetail::Rdma {
            remote_addr: 0x7f12_3456_7000,
            rkey: 0x1a2b,
        },
    };
    let send = SendWr {
        opcode: IB_WR_SEND,
        detail: WrDetail::None,
        ..write
    };
    let inline = SendWr {
        send_flags: IB_SEND_SIGNALED | IB_SEND_INLINE,
        ..write
    };
    let cases = [
        (
            "SendWqe::parse (RC RDMA WRITE, 1 SGE)",
            write,
            SendData::Sges(&sges[..1]),
        ),
        (
            "SendWqe::parse (RC SEND, 4 SGEs)",
            send,
            SendData::Sges(&sges),
        ),
        (
            "SendWqe::parse (RC RDMA WRITE, 64 B inline)",
            inline,
            SendData::Inline(&[0x5a; 64]),
        ),
    ];
    for (name, wr, data) in cases {
        let mut slot = vec![0u8; slot_len];
        write_send_wqe(&mut slot, QpType::Rc, limits, &wr, data).expect("a valid WQE");
        b.run(name, None, |_| {
            SendWqe::parse(black_box(&slot), QpType::Rc, black_box(limits))
        });
    }

    let mut slot = vec![0u8; RECV_WQE_HDR_LEN + 4 * SGE_LEN];
    write_recv_wqe(&mut slot, 2, &sges[..1], 4).expect("a valid WQE");
    b.run("RecvWqe::parse (1 SGE)", None, |_| {
        RecvWqe::parse(black_box(&slot), black_box(4))
    });
}

/// The CPU's model name, from `/proc/cpuinfo` where there is one.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// Which carry-less multiply path crc32fast takes on this CPU (its own detection, mirrored; its
/// VPCLMULQDQ paths need rustc 1.89 or later).
fn crc32fast_path() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("pclmulqdq") && has!("sse2") && has!("sse4.1") && has!("ssse3") {
            return if has!("vpclmulqdq") && has!("avx512f") {
                "VPCLMULQDQ, AVX-512"
            } else if has!("vpclmulqdq") && has!("avx2") {
                "VPCLMULQDQ, AVX2"
            } else {
                "PCLMULQDQ"
            };
        }
    }
    "no PCLMULQDQ: its own table"
}

fn main() {
    // cargo bench passes `--bench`, cargo test does not; the first number is the multiplier,
    // any other word a filter on the row names.
    let mut timed = false;
    let mut multiplier = 1;
    let mut filter = None;
    for arg in std::env::args().skip(1) {
        if arg == "--bench" {
            timed = true;
        } else if !arg.starts_with('-') {
            match arg.parse::<u32>() {
                Ok(m) if m > 0 => multiplier = m,
                _ => filter = Some(arg),
            }
        }
    }
    let mut b = Bench {
        timed,
        multiplier,
        filter,
        rows: Vec::new(),
    };
    if !timed {
        run_all(&mut b);
        println!(
            "per_packet: {} rows ran once, untimed (`cargo bench --bench per_packet` times them)",
            b.rows.len()
        );
        return;
    }

    println!(
        "per_packet: {}, accelerated CRC-32 = crc32fast ({}), {BATCHES} batches × {} ms per row",
        cpu_model(),
        crc32fast_path(),
        BATCH_TARGET.saturating_mul(multiplier).as_millis()
    );
    println!();
    println!("| {:<48} | {:>9} | {:>6} |", "operation", "ns/op", "GB/s");
    println!("|{:-<50}|{:->11}|{:->8}|", ":", ":", ":");
    let start = Instant::now();
    run_all(&mut b);
    println!();

    // Same bytes on both sides, so the ratio of times is the ratio per byte.
    let ratio = |table: &str, fast: &str| match (b.ps(table), b.ps(fast)) {
        (Some(t), Some(f)) if f > 0 => format!("{}×", fixed(t * 10 / f, 1)),
        _ => "-".to_owned(),
    };
    println!(
        "table / accelerated CRC per byte at 4 KiB: ICRC {}, raw CRC-32 {} ({} s)",
        ratio(
            "ICRC, table, 4 KiB payload",
            "ICRC, accelerated, 4 KiB payload"
        ),
        ratio("CRC-32, table, 4 KiB", "CRC-32, accelerated, 4 KiB"),
        start.elapsed().as_secs()
    );
}

fn run_all(b: &mut Bench) {
    icrc_rows(b);
    header_rows(b);
    decision_rows(b);
    wqe_rows(b);
}
