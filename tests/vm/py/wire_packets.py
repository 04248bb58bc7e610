# SPDX-License-Identifier: GPL-2.0
"""
RC QPs of a device against a peer made of hand-made RoCEv2 packets (run by tests/vm/wire.sh,
either driver):
  python3 wire_packets.py DEV GID_INDEX NETNS

DEV is an rxe device on veth0 (10.20.0.1); its peer veth1 (10.20.0.2) is in network namespace
NETNS, where this script plays the other end with a raw IP socket: every packet built here
(IP, UDP, BTH, extension headers, payload, ICRC), every packet of the device's read back whole
and its ICRC checked. Each case has a fresh RC QP of DEV, connected to a QP number that exists
only here. IBA 1.7 chapter 9 and the C driver's rxe_resp.c and rxe_comp.c give the expected
answers. The device as the responder:
  - packets that must be dropped without an answer (bad ICRC, transport version, unknown
    opcode, headers or pad past the end, another P_Key, no such QP, a UD opcode to an RC QP);
  - a SEND, a WRITE, a two-packet WRITE, a READ, a FETCH_ADD, each answered with the right
    opcode, PSN, syndrome and MSN, and the data where it belongs; a duplicate READ executed
    again, a duplicate atomic answered from its saved result, not executed twice;
  - an ATOMIC WRITE and a FLUSH answered by a zero-length READ RESPONSE ONLY with an ACK, a
    duplicate ATOMIC WRITE not executed again, a FLUSH without the MR's FLUSH right NAKed;
  - PSN sequence errors (one NAK, then silence), a duplicate re-acknowledged, RNR NAK;
  - a SEND with its MIDDLE lost, immediate data (SEND, WRITE), zero-length RDMA with a bogus
    rkey (C9-88), CMP_SWAP both ways, rights the QP does not grant;
  - class C errors (a bad rkey, va + len past 2^64, a READ beyond the MR, a WRITE's payload
    other than its RETH length, a middle packet without a first, a misaligned atomic, a SEND
    longer than its receive buffer): the NAK code, and the QP in ERROR;
  - a UD datagram landing after its GRH, another Q_Key's dropped;
  - on UC, a message with a packet lost dropped whole and unanswered, the next one taken;
  - beyond one message: UC SENDs and WRITEs with immediate of three packets, UD datagrams in a
    row, RC QPs sharing an SRQ (its receives taken in order by either QP, RNR NAK once empty);
  - a SEND with invalidate of a type 2 window the QP bound: received WITH_INV and its rkey, a
    WRITE through the window before lands, one after is NAKed remote access error.
The device as the requester: each request's opcode, PSN, AckReq, RETH and bytes; ACKs, a READ
response, a duplicate ACK; each NAK code's completion status; RNR and sequence NAKs answered by
sending again (a WRITE from its MIDDLE); retries running out; an atomic's original value; a
READ's MIDDLE response lost; a READ response longer than its READ, a READ answered by a plain
ACK, a READ response to a SEND; an ATOMIC WRITE's and a FLUSH's requests (RETH and value,
FETH and RETH) and their completions on a zero-length READ RESPONSE ONLY.
C's known departures are expected of C, and said so: a SEND longer than its receive NAKed
remote operational error (not invalid request); on UC, the message after one with a packet
lost dropped when it starts right after the gap; a READ answered by a plain ACK completed as a
success without its data; a READ response to a SEND completed FATAL_ERR (not BAD_RESP_ERR); an
RC receive flagged IB_WC_GRH (no GRH is in its buffer).
Every check prints "ok   ..." or "FAIL ..."; the exit status is 1 if one failed.
"""
import os
import select
import socket
import struct
import sys
import time
import zlib

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

from guestcheck import DRIVER, check, tally, wc_name

LOCAL_IP, PEER_IP = '10.20.0.1', '10.20.0.2'
PEER_QPN = 0x4242  # the requester's QP: it exists only in this script
PSN = 0x1000  # the device's first expected PSN
SPSN = 0x2000  # the device's first PSN sent
REMOTE_VA, REMOTE_RKEY = 0x7000_0000_1000, 0x1234  # the peer's memory: here, nowhere
MTU = 1024
PKEY = 0xffff
# Opcodes (IBA table 38), RC unless said.
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY_IMM = 0x00, 0x01, 0x02, 0x05
UC = 0x20  # UC opcodes: RC's + 0x20
SEND_ONLY, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST = 0x04, 0x06, 0x07, 0x08
READ_RESPONSE_FIRST, READ_RESPONSE_MIDDLE, READ_RESPONSE_LAST = 0x0d, 0x0e, 0x0f
WRITE_ONLY, READ_REQUEST, READ_RESPONSE_ONLY = 0x0a, 0x0c, 0x10
ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE, COMPARE_SWAP, FETCH_ADD = 0x11, 0x12, 0x13, 0x14
WRITE_ONLY_IMM, WRITE_LAST_IMM = 0x0b, 0x09
SEND_ONLY_INV = 0x17
FLUSH, ATOMIC_WRITE = 0x1c, 0x1d
UD_SEND_ONLY = 0x64
# AETH syndromes (IBA 9.7.5.1): ACK 000xxxxx, RNR NAK 001ttttt, NAK 011ccccc.
NAK_PSN_SEQ, NAK_INV_REQ, NAK_REM_ACC, NAK_REM_OP = 0x60, 0x61, 0x62, 0x63
MIN_RNR_TIMER = 12
# Waits for the device, longer on the debug kernel (KASAN, lockdep: a packet takes ms there).
SLOW = 5 if os.environ.get('VARIANT') == 'debug' else 1
LW, RW, RR, RA = (e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE,
                  e.IBV_ACCESS_REMOTE_READ, e.IBV_ACCESS_REMOTE_ATOMIC)
FG = e.IBV_ACCESS_FLUSH_GLOBAL


def icrc(ip, udp, rest):
    """The RoCEv2 ICRC (IBA annex A17): CRC-32 of 8 bytes of ones, the IPv4 header with TOS, TTL
    and checksum as ones, the UDP header with its checksum as ones, the BTH with its byte 4
    (FECN, BECN, reserved) as ones, and the rest up to the ICRC; little-endian on the wire.
    A FLUSH's as the C driver computes it, which both drivers expect: C's opcode table gives
    FLUSH no payload offset, so its ICRC covers the headers (BTH, FETH, RETH) masked, then the
    whole packet again from the BTH (rxe-rs: `proto::opcode` `icrc_payload_offset`)."""
    ip, udp, masked = bytearray(ip), bytearray(udp), bytearray(rest)
    ip[1] = ip[8] = 0xff
    ip[10:12] = b'\xff\xff'
    udp[6:8] = b'\xff\xff'
    masked[4] = 0xff
    if rest[:1] == bytes([FLUSH]):
        return zlib.crc32(b'\xff' * 8 + ip + udp + masked[:12 + 4 + 16] + rest)
    return zlib.crc32(b'\xff' * 8 + ip + udp + masked)


def bth(opcode, qpn, psn, pad=0, tver=0, pkey=PKEY, ack_req=True, se=False):
    flags = (se << 7) | (pad << 4) | tver
    return struct.pack('!BBHII', opcode, flags, pkey, qpn & 0xffffff,
                       (ack_req << 31) | (psn & 0xffffff))


def reth(va, rkey, length):
    return struct.pack('!QII', va % (1 << 64), rkey, length)


def feth(selectivity, placement):
    """Flush extended transport header: selectivity level (0: the range), placement type
    (bit 0: global visibility)."""
    return struct.pack('!I', (selectivity & 3) << 4 | (placement & 0xf))


def packet(transport, payload=b'', sport=0xc000, bad_icrc=False, pad_bytes=None):
    """The IPv4 packet of a RoCEv2 UDP payload `transport` (BTH onwards) + `payload`, with the
    pad the BTH says (or `pad_bytes` of it) and its ICRC."""
    pad = (transport[1] >> 4) & 3 if pad_bytes is None else pad_bytes
    body = transport + payload + bytes(pad)
    udp_len = 8 + len(body) + 4
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 0x1234, 0x4000, 64, 17, 0,
                     socket.inet_aton(PEER_IP), socket.inet_aton(LOCAL_IP))
    udp = struct.pack('!HHHH', sport, 4791, udp_len, 0)
    crc = icrc(ip, udp, body) ^ (1 if bad_icrc else 0)
    return ip + udp + body + struct.pack('<I', crc)


class Received:
    """A packet from the device: its BTH's fields, the bytes after the BTH up to the pad, and
    whether its ICRC is right."""

    def __init__(self, ip, udp, body):
        self.good = struct.unpack('<I', body[-4:])[0] == icrc(ip, udp, body[:-4])
        self.opcode, flags, _, qpn_word, psn_word = struct.unpack('!BBHII', body[:12])
        self.qpn, self.psn = qpn_word & 0xffffff, psn_word & 0xffffff
        self.ack_req = bool(psn_word >> 31)
        self.after = body[12:len(body) - 4 - ((flags >> 4) & 3)]

    def __repr__(self):
        return (f'opcode {self.opcode:#x} psn {self.psn:#x} qpn {self.qpn:#x} '
                f'{len(self.after)} bytes after the BTH, icrc {"good" if self.good else "BAD"}')


class Wire:
    """The requester's sockets, in the peer's namespace: a raw IP socket that sends packets as
    built (the kernel fills in only the IP checksum) and a raw UDP socket that reads every reply
    whole (a bound UDP socket on 4791 keeps the port open)."""

    def __init__(self, netns):
        home = os.open('/proc/self/ns/net', os.O_RDONLY)
        there = os.open(f'/var/run/netns/{netns}', os.O_RDONLY)
        os.setns(there, os.CLONE_NEWNET)
        try:
            self.tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
            self.rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
            self.port = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.port.bind((PEER_IP, 4791))
        finally:
            os.setns(home, os.CLONE_NEWNET)
            os.close(home)
            os.close(there)

    def send(self, pkt):
        self.tx.sendto(pkt, (LOCAL_IP, 0))

    def replies(self, timeout=0.5, want=1):
        """Responses from the device: (opcode, psn, syndrome, msn, rest after the AETH, ICRC
        good), until `want` came or `timeout` passed since the last."""
        return [(p.opcode, p.psn, p.after[0], int.from_bytes(p.after[1:4], 'big'), p.after[4:],
                 p.good) for p in self.received(timeout, want)]

    def received(self, timeout=0.5, want=1):
        """RoCEv2 packets from the device (from LOCAL_IP to UDP 4791), each a Received, until
        `want` came or `timeout` passed since the last."""
        got = []
        timeout *= SLOW
        deadline = time.monotonic() + timeout
        while len(got) < want:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rx], [], [], left)[0]:
                break
            data = self.rx.recv(65536)
            ihl = (data[0] & 0xf) * 4
            if data[12:16] != socket.inet_aton(LOCAL_IP) or len(data) < ihl + 8 + 12 + 4:
                continue
            ip, udp, body = data[:ihl], data[ihl:ihl + 8], data[ihl + 8:]
            if struct.unpack('!H', udp[2:4])[0] != 4791:
                continue
            got.append(Received(ip, udp, body))
            deadline = time.monotonic() + timeout
        return got

    def drain(self):
        while self.replies(timeout=0.05):
            pass


class DeviceQp:
    """A fresh RC QP of the device (or of `qp_type`), in RTR/RTS towards PEER_QPN at PEER_IP
    (first PSNs: PSN received, SPSN sent), with a 64 KiB MR open to every remote access and
    `recvs` receives of `recv_len` bytes posted, unless it takes its receives from `srq`. With
    `send_ops` (IBV_QP_EX_WITH_* flags), an extended QP."""

    def __init__(self, env, recvs=1, recv_len=4096, retry_cnt=7, timeout=14,
                 access=LW | RW | RR | RA, rd_atomic=4, qp_type=e.IBV_QPT_RC, srq=None,
                 send_ops=None):
        self.env = env
        self.cq = CQ(env.ctx, 32, None, None, 0)
        cap = QPCap(max_send_wr=4, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
        if send_ops is None:
            self.qp = QP(env.pd, QPInitAttr(qp_type=qp_type, scq=self.cq, rcq=self.cq, cap=cap,
                                            srq=srq))
        else:
            # An extended QP, for the send operations only its wr_* calls post.
            self.qp = QPEx(env.ctx, QPInitAttrEx(
                cap=cap, qp_type=qp_type, scq=self.cq, rcq=self.cq, pd=env.pd,
                send_ops_flags=send_ops,
                comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = access
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = PEER_QPN
        attr.rq_psn, attr.sq_psn = PSN, SPSN
        attr.max_dest_rd_atomic = attr.max_rd_atomic = rd_atomic
        attr.min_rnr_timer, attr.timeout = MIN_RNR_TIMER, timeout
        attr.retry_cnt, attr.rnr_retry = retry_cnt, 7
        gr = GlobalRoute(dgid=env.peer_gid, sgid_index=env.gid_index)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        self.qp.to_rts(attr)
        self.qpn = self.qp.qp_num
        self.mr = env.mr
        self.mr.write(bytes(65536), 65536)
        for i in range(0 if srq else recvs):
            self.qp.post_recv(RecvWR(wr_id=i, num_sge=1,
                                     sg=[SGE(self.mr.buf + 32768 + i * 4096, recv_len,
                                             self.mr.lkey)]))

    def post(self, opcode, length, offset=0, wr_id=1):
        """A signalled WR of `length` bytes at `offset` in the MR; RDMA to the peer's
        REMOTE_VA with REMOTE_RKEY."""
        wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1,
                    sg=[SGE(self.mr.buf + offset, length, self.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        if opcode in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ):
            wr.set_wr_rdma(REMOTE_RKEY, REMOTE_VA)
        self.qp.post_send(wr)

    def completions(self, timeout=0.3):
        wcs = []
        deadline = time.monotonic() + timeout * SLOW
        while time.monotonic() < deadline:
            n, got = self.cq.poll(16)
            wcs += got[:n] if n else []
            time.sleep(0.01)
        return wcs

    def state(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return attr.qp_state

    def close(self):
        self.qp.close()
        self.cq.close()


class Env:
    def __init__(self, dev, gid_index, netns):
        self.ctx = Context(name=dev)
        self.gid_index = gid_index
        self.pd = PD(self.ctx)
        self.mr = MR(self.pd, 65536, LW | RW | RR | RA)
        a, b, c, d = (int(x) for x in PEER_IP.split('.'))
        self.peer_gid = GID(f'0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}')
        self.wire = Wire(netns)


def one_reply(what, replies, opcode, psn, syndrome=None, msn=None):
    """Exactly one reply, with this opcode, PSN (and syndrome, MSN if given) and a good ICRC."""
    r = replies[0] if len(replies) == 1 else None
    ok = (r is not None and r[0] == opcode and r[1] == psn and r[5] and
          (syndrome is None or r[2] == syndrome) and (msn is None or r[3] == msn))
    shown = [f'opcode {x[0]:#x} psn {x[1]:#x} syndrome {x[2]:#x} msn {x[3]} icrc '
             f'{"good" if x[5] else "BAD"}' for x in replies]
    check(what, ok, '; '.join(shown) or 'no reply')
    return r


def case_dropped(env):
    """Packets the receive path must drop: no answer, no completion; then a good one works."""
    w = env.wire
    r = DeviceQp(env)
    good = bth(SEND_ONLY, r.qpn, PSN)
    bad = [
        ('a bad ICRC', packet(good, b'x' * 64, bad_icrc=True)),
        ('transport version 1', packet(bth(SEND_ONLY, r.qpn, PSN, tver=1), b'x' * 64)),
        ('an unknown opcode (0x15)', packet(bth(0x15, r.qpn, PSN), b'x' * 64)),
        ('an RDMA WRITE with no room for its RETH',
         packet(bth(WRITE_ONLY, r.qpn, PSN))),
        ('a pad past the end (pad 3, nothing to pad)',
         packet(bth(SEND_ONLY, r.qpn, PSN, pad=3), pad_bytes=0)),
        ('another partition\'s P_Key (0x9234)',
         packet(bth(SEND_ONLY, r.qpn, PSN, pkey=0x9234), b'x' * 64)),
        ('no such QP', packet(bth(SEND_ONLY, r.qpn ^ 0x800, PSN), b'x' * 64)),
        ('a UD SEND to an RC QP',
         packet(bth(UD_SEND_ONLY, r.qpn, PSN) + struct.pack('!II', 0x11111111, PEER_QPN),
                b'x' * 64)),
    ]
    for what, pkt in bad:
        w.send(pkt)
        replies = w.replies(timeout=0.4)
        wcs = r.completions(0.1)
        check(f'dropped without an answer: {what}', not replies and not wcs,
              f'{len(replies)} replies, {len(wcs)} completions')
    data = os.urandom(64)
    w.send(packet(good, data))
    one_reply('then a SEND ONLY at the expected PSN: ACK, PSN, MSN 1', w.replies(),
              ACKNOWLEDGE, PSN, msn=1)
    wcs = r.completions()
    check('  its receive completes: SUCCESS, 64 bytes, the data',
          len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and wcs[0].byte_len == 64 and
          r.mr.read(64, 32768) == data,
          [(wc_name(x.status), x.byte_len) for x in wcs])
    r.close()
    # IBA 10.9.3: a P_Key matches when the partitions are the same and either side is a full
    # member; the port's is the default partition's full member, 0xFFFF.
    r = DeviceQp(env)
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN, pkey=0x7fff), data))
    one_reply('a SEND with P_Key 0x7FFF (a limited member of the default partition): ACK',
              w.replies(), ACKNOWLEDGE, PSN, msn=1)
    r.close()


def case_sequence(env):
    """PSN sequence errors, a duplicate, RNR."""
    w = env.wire
    r = DeviceQp(env, recvs=2)
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN + 3), b'a' * 16))
    one_reply('a SEND 3 PSNs ahead: NAK PSN sequence error at the expected PSN', w.replies(),
              ACKNOWLEDGE, PSN, syndrome=NAK_PSN_SEQ)
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN + 4), b'a' * 16))
    replies = w.replies()
    check('  the next one out of sequence: dropped without a second NAK', not replies,
          f'{len(replies)} replies')
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN), b'b' * 16))
    one_reply('then the expected PSN: ACK, MSN 1', w.replies(), ACKNOWLEDGE, PSN, msn=1)
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN), b'b' * 16))
    one_reply('the same SEND again (a duplicate): ACK at its PSN, MSN still 1', w.replies(),
              ACKNOWLEDGE, PSN, msn=1)
    wcs = r.completions()
    check('  one receive completed, not two', len(wcs) == 1 and
          wcs[0].status == e.IBV_WC_SUCCESS, [wc_name(x.status) for x in wcs])
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN + 1), b'c' * 16))
    one_reply('the next SEND: ACK, MSN 2', w.replies(), ACKNOWLEDGE, PSN + 1, msn=2)
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN + 2), b'd' * 16))
    one_reply('a SEND with no receive posted: RNR NAK with the QP\'s min_rnr_timer',
              w.replies(), ACKNOWLEDGE, PSN + 2, syndrome=0x20 | MIN_RNR_TIMER)
    check('  the QP stays in RTS', r.state() == e.IBV_QPS_RTS)
    r.close()


def case_operations(env):
    """WRITE (one and two packets), READ and FETCH_ADD answered, the data where it belongs."""
    w = env.wire
    r = DeviceQp(env)
    base = r.mr.buf
    data = os.urandom(64)
    w.send(packet(bth(WRITE_ONLY, r.qpn, PSN) + reth(base, r.mr.rkey, 64), data))
    one_reply('RDMA WRITE ONLY, 64 bytes: ACK, MSN 1', w.replies(), ACKNOWLEDGE, PSN, msn=1)
    check('  the bytes are in the MR', r.mr.read(64, 0) == data)
    two = os.urandom(2 * MTU)
    w.send(packet(bth(WRITE_FIRST, r.qpn, PSN + 1, ack_req=False) +
                  reth(base + 4096, r.mr.rkey, 2 * MTU), two[:MTU]))
    w.send(packet(bth(WRITE_LAST, r.qpn, PSN + 2), two[MTU:]))
    one_reply('RDMA WRITE FIRST + LAST, 2 KiB: one ACK at the last PSN, MSN 2', w.replies(),
              ACKNOWLEDGE, PSN + 2, msn=2)
    check('  the bytes are in the MR', r.mr.read(2 * MTU, 4096) == two)
    w.send(packet(bth(READ_REQUEST, r.qpn, PSN + 3) + reth(base + 4096 + 100, r.mr.rkey, 200)))
    rep = one_reply('RDMA READ of 200 bytes: READ RESPONSE ONLY at its PSN, MSN 3', w.replies(),
                    READ_RESPONSE_ONLY, PSN + 3, syndrome=None, msn=3)
    check('  it carries the bytes', rep is not None and rep[4] == two[100:300],
          f'{len(rep[4]) if rep else 0} bytes')
    r.mr.write(struct.pack('<Q', 1000), 8, 8192)
    w.send(packet(bth(FETCH_ADD, r.qpn, PSN + 4) +
                  struct.pack('!QIQQ', base + 8192, r.mr.rkey, 234, 0)))
    rep = one_reply('FETCH_ADD 234 to 1000: ATOMIC ACKNOWLEDGE at its PSN, MSN 4', w.replies(),
                    ATOMIC_ACKNOWLEDGE, PSN + 4, msn=4)
    check('  it carries the original value 1000, the MR holds 1234',
          rep is not None and rep[4][:8] == struct.pack('!Q', 1000) and
          r.mr.read(8, 8192) == struct.pack('<Q', 1234),
          f'{rep[4][:8].hex() if rep else "-"}, MR {r.mr.read(8, 8192).hex()}')
    # Duplicates (IBA 9.9.2.2): a READ is executed again, an atomic is not: its saved result is
    # sent again.
    w.send(packet(bth(READ_REQUEST, r.qpn, PSN + 3) + reth(base + 4096 + 100, r.mr.rkey, 200)))
    rep = one_reply('the READ again (a duplicate): READ RESPONSE ONLY at its PSN', w.replies(),
                    READ_RESPONSE_ONLY, PSN + 3)
    check('  it carries the bytes again', rep is not None and rep[4] == two[100:300])
    w.send(packet(bth(FETCH_ADD, r.qpn, PSN + 4) +
                  struct.pack('!QIQQ', base + 8192, r.mr.rkey, 234, 0)))
    rep = one_reply('the FETCH_ADD again (a duplicate): ATOMIC ACKNOWLEDGE at its PSN',
                    w.replies(), ATOMIC_ACKNOWLEDGE, PSN + 4)
    check('  the saved original value 1000, not executed twice (the MR holds 1234)',
          rep is not None and rep[4][:8] == struct.pack('!Q', 1000) and
          r.mr.read(8, 8192) == struct.pack('<Q', 1234),
          f'{rep[4][:8].hex() if rep else "-"}, MR {r.mr.read(8, 8192).hex()}')
    w.send(packet(bth(SEND_ONLY, r.qpn, PSN + 5), b'e' * 8))
    one_reply('then a new SEND: ACK at the next PSN', w.replies(), ACKNOWLEDGE, PSN + 5)
    wcs = r.completions()
    check('  its receive is the only completion at the responder (none for RDMA and atomics)',
          len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and wcs[0].byte_len == 8,
          [(wc_name(x.status), x.byte_len) for x in wcs])
    r.close()


def case_atomic_write_flush(env):
    """ATOMIC WRITE and FLUSH (the memory placement extensions) answered by a zero-length READ
    RESPONSE ONLY with an ACK syndrome, a duplicate ATOMIC WRITE answered again, FLUSH rights
    checked."""
    w = env.wire
    flush_mr = MR(env.pd, 4096, LW | RW | FG)
    r = DeviceQp(env, access=LW | RW | RR | RA | FG)
    base = r.mr.buf
    value = os.urandom(8)
    w.send(packet(bth(ATOMIC_WRITE, r.qpn, PSN) + reth(base + 64, r.mr.rkey, 8), value))
    one_reply('ATOMIC WRITE of 8 bytes: READ RESPONSE ONLY at its PSN, ACK, MSN 1', w.replies(),
              READ_RESPONSE_ONLY, PSN, syndrome=0x1f, msn=1)
    check('  the 8 bytes are in the MR as sent', r.mr.read(8, 64) == value,
          r.mr.read(8, 64).hex())
    r.mr.write(bytes(8), 8, 64)
    w.send(packet(bth(ATOMIC_WRITE, r.qpn, PSN) + reth(base + 64, r.mr.rkey, 8), value))
    one_reply('the ATOMIC WRITE again (a duplicate): answered again at its PSN', w.replies(),
              READ_RESPONSE_ONLY, PSN, syndrome=0x1f)
    check('  not executed again (the MR keeps what was put there since)',
          r.mr.read(8, 64) == bytes(8), r.mr.read(8, 64).hex())
    w.send(packet(bth(FLUSH, r.qpn, PSN + 1) + feth(0, 1) +
                  reth(flush_mr.buf + 512, flush_mr.rkey, 1024)))
    one_reply('FLUSH of 1 KiB, global visibility: READ RESPONSE ONLY at its PSN, ACK, MSN 2',
              w.replies(), READ_RESPONSE_ONLY, PSN + 1, syndrome=0x1f, msn=2)
    w.send(packet(bth(FLUSH, r.qpn, PSN + 2) + feth(0, 1) + reth(base, r.mr.rkey, 1024)))
    one_reply('FLUSH to an MR registered without the FLUSH_GLOBAL right: NAK remote access',
              w.replies(), ACKNOWLEDGE, PSN + 2, syndrome=NAK_REM_ACC)
    check('  the QP is in ERROR', r.state() == e.IBV_QPS_ERR, r.state())
    r.close()
    flush_mr.close()


def case_messages(env):
    """Multi-packet SENDs, immediate data, rights the QP does not grant."""
    w = env.wire
    r = DeviceQp(env, recvs=3)
    parts = [os.urandom(MTU), os.urandom(MTU), os.urandom(100)]
    w.send(packet(bth(SEND_FIRST, r.qpn, PSN, ack_req=False), parts[0]))
    w.send(packet(bth(SEND_LAST, r.qpn, PSN + 2), parts[2]))
    one_reply('SEND FIRST, then LAST with the MIDDLE missing: NAK PSN sequence error at the '
              'MIDDLE\'s PSN', w.replies(), ACKNOWLEDGE, PSN + 1, syndrome=NAK_PSN_SEQ)
    w.send(packet(bth(SEND_MIDDLE, r.qpn, PSN + 1, ack_req=False), parts[1]))
    w.send(packet(bth(SEND_LAST, r.qpn, PSN + 2), parts[2]))
    one_reply('  the MIDDLE and LAST sent again: ACK at the LAST, MSN 1', w.replies(),
              ACKNOWLEDGE, PSN + 2, msn=1)
    wcs = r.completions()
    check('  one receive of 2,148 bytes, the message whole',
          [(x.status, x.byte_len) for x in wcs] == [(e.IBV_WC_SUCCESS, 2 * MTU + 100)] and
          r.mr.read(2 * MTU + 100, 32768) == b''.join(parts),
          [(wc_name(x.status), x.byte_len) for x in wcs])
    w.send(packet(bth(SEND_ONLY_IMM, r.qpn, PSN + 3) + struct.pack('!I', 0xdeadbeef),
                  b'i' * 16))
    one_reply('SEND ONLY with immediate: ACK, MSN 2', w.replies(), ACKNOWLEDGE, PSN + 3, msn=2)
    wcs = r.completions()
    check('  the receive completes with the immediate data',
          len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
          wcs[0].wc_flags & e.IBV_WC_WITH_IMM and
          socket.ntohl(wcs[0].imm_data) == 0xdeadbeef,
          [(wc_name(x.status), x.wc_flags, hex(x.imm_data)) for x in wcs])
    data = os.urandom(32)
    w.send(packet(bth(WRITE_ONLY_IMM, r.qpn, PSN + 4) + reth(r.mr.buf + 256, r.mr.rkey, 32) +
                  struct.pack('!I', 0x1234abcd), data))
    one_reply('RDMA WRITE ONLY with immediate: ACK, MSN 3', w.replies(), ACKNOWLEDGE, PSN + 4,
              msn=3)
    wcs = r.completions()
    check('  the bytes land and a receive completes RECV_RDMA_WITH_IMM with the immediate, '
          'length 32', len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
          wcs[0].opcode == e.IBV_WC_RECV_RDMA_WITH_IMM and wcs[0].byte_len == 32 and
          socket.ntohl(wcs[0].imm_data) == 0x1234abcd and r.mr.read(32, 256) == data,
          [(wc_name(x.status), x.opcode, x.byte_len, hex(x.imm_data)) for x in wcs])
    # C9-88: a zero-length RDMA needs no valid rkey or address.
    w.send(packet(bth(WRITE_ONLY, r.qpn, PSN + 5) + reth(0xdead0000, 0x777, 0)))
    one_reply('a zero-length RDMA WRITE with a bogus rkey and address: ACK (C9-88)',
              w.replies(), ACKNOWLEDGE, PSN + 5)
    w.send(packet(bth(READ_REQUEST, r.qpn, PSN + 6) + reth(0xdead0000, 0x777, 0)))
    rep = one_reply('a zero-length RDMA READ with a bogus rkey and address: READ RESPONSE ONLY '
                    'of no bytes', w.replies(), READ_RESPONSE_ONLY, PSN + 6)
    check('  empty, the QP still RTS', rep is not None and rep[4] == b'' and
          r.state() == e.IBV_QPS_RTS, f'state {r.state()}')
    r.mr.write(struct.pack('<Q', 7), 8, 8192)
    for swap_when, compare, orig, after in (('equal', 7, 7, 99), ('different', 8, 99, 99)):
        psn = PSN + (7 if swap_when == 'equal' else 8)
        w.send(packet(bth(COMPARE_SWAP, r.qpn, psn) +
                      struct.pack('!QIQQ', r.mr.buf + 8192, r.mr.rkey, 99, compare)))
        rep = one_reply(f'CMP_SWAP, compare {swap_when}: ATOMIC ACKNOWLEDGE', w.replies(),
                        ATOMIC_ACKNOWLEDGE, psn)
        check(f'  the original value {orig}, the MR holds {after}',
              rep is not None and rep[4][:8] == struct.pack('!Q', orig) and
              r.mr.read(8, 8192) == struct.pack('<Q', after),
              f'{rep[4][:8].hex() if rep else "-"}, MR {r.mr.read(8, 8192).hex()}')
    r.close()
    # Rights the QP does not grant (C check_op_valid): class C, invalid request.
    for what, access, rd_atomic, pkt in (
            ('an RDMA WRITE to a QP without REMOTE_WRITE', LW | RR | RA, 4,
             lambda r: packet(bth(WRITE_ONLY, r.qpn, PSN) + reth(r.mr.buf, r.mr.rkey, 64),
                              b'w' * 64)),
            ('an RDMA READ to a QP with max_dest_rd_atomic 0', LW | RW | RR | RA, 0,
             lambda r: packet(bth(READ_REQUEST, r.qpn, PSN) + reth(r.mr.buf, r.mr.rkey, 64)))):
        r = DeviceQp(env, access=access, rd_atomic=rd_atomic)
        w.send(pkt(r))
        one_reply(f'{what}: NAK {NAK_INV_REQ:#x}', w.replies(), ACKNOWLEDGE, PSN,
                  syndrome=NAK_INV_REQ)
        check('  the responder QP in ERROR', r.state() == e.IBV_QPS_ERR, f'state {r.state()}')
        r.close()
        w.drain()


def ud_qp(env, qkey, recvs, recv_len):
    """A UD QP of the device with Q_Key `qkey` in RTS, and its CQ; `recvs` receives of
    `recv_len` bytes posted, 4 KiB apart from the middle of the (zeroed) MR on."""
    cq = CQ(env.ctx, 8, None, None, 0)
    cap = QPCap(max_send_wr=2, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    qp = QP(env.pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
    attr = QPAttr(port_num=1)
    attr.qkey, attr.sq_psn = qkey, 0
    qp.to_rts(attr)
    mr = env.mr
    mr.write(bytes(65536), 65536)
    for i in range(recvs):
        qp.post_recv(RecvWR(wr_id=i, num_sge=1,
                            sg=[SGE(mr.buf + 32768 + i * 4096, recv_len, mr.lkey)]))
    return cq, qp


def case_ud(env):
    """A UD QP: a datagram with its Q_Key lands after its GRH; another Q_Key is dropped."""
    w = env.wire
    qkey = 0x11111111
    cq, qp = ud_qp(env, qkey, recvs=2, recv_len=40 + 256)
    mr = env.mr
    data = os.urandom(64)
    w.send(packet(bth(UD_SEND_ONLY, qp.qp_num, 5, ack_req=False) +
                  struct.pack('!II', qkey ^ 1, PEER_QPN), data))
    time.sleep(0.3 * SLOW)
    n, wcs = cq.poll(4)
    check('a UD SEND with another Q_Key: dropped', n == 0, f'{n} completions')
    sent = packet(bth(UD_SEND_ONLY, qp.qp_num, 6, ack_req=False) +
                  struct.pack('!II', qkey, PEER_QPN), data)
    w.send(sent)
    time.sleep(0.3 * SLOW)
    n, wcs = cq.poll(4)
    wc = wcs[0] if n == 1 else None
    check('a UD SEND with its Q_Key: one receive of 40 + 64 bytes from the peer QP, with a GRH',
          wc is not None and wc.status == e.IBV_WC_SUCCESS and wc.byte_len == 104 and
          wc.src_qp == PEER_QPN and wc.wc_flags & e.IBV_WC_GRH,
          [(wc_name(x.status), x.byte_len, hex(x.src_qp), x.wc_flags) for x in wcs[:n]])
    grh = mr.read(40, 32768)
    # The IPv4 header in the GRH's last 20 bytes (its checksum is the kernel's: not compared).
    check('  the IPv4 header in the GRH\'s last 20 bytes, then the data',
          grh[20:30] == sent[:10] and grh[32:40] == sent[12:20] and
          mr.read(64, 32768 + 40) == data, grh.hex())
    replies = w.replies(timeout=0.2)
    check('  no answer on the wire', not replies, f'{len(replies)} packets')
    qp.close()
    cq.close()


def case_uc(env):
    """A UC QP: a message with a packet lost is dropped whole, unanswered; the next lands."""
    w = env.wire
    r = DeviceQp(env, qp_type=e.IBV_QPT_UC, access=LW | RW)
    first, last = os.urandom(MTU), os.urandom(MTU)
    w.send(packet(bth(UC | WRITE_FIRST, r.qpn, PSN, ack_req=False) +
                  reth(r.mr.buf, r.mr.rkey, 3 * MTU), first))
    w.send(packet(bth(UC | WRITE_LAST, r.qpn, PSN + 2, ack_req=False), last))
    replies = w.replies(timeout=0.3)
    check('UC WRITE FIRST, then LAST with the MIDDLE lost: no answer, nothing of the LAST '
          'written', not replies and r.mr.read(MTU, 2 * MTU) == bytes(MTU),
          f'{len(replies)} packets')
    w.send(packet(bth(UC | SEND_ONLY, r.qpn, PSN + 3, ack_req=False), b'u' * 32))
    time.sleep(0.3 * SLOW)
    wcs = r.completions()
    if DRIVER == 'rs':
        check('  the next message, a SEND: received whole',
              [(x.status, x.byte_len) for x in wcs] == [(e.IBV_WC_SUCCESS, 32)] and
              r.mr.read(32, 32768) == b'u' * 32, [(wc_name(x.status), x.byte_len) for x in wcs])
    else:
        # rxe_resp.c do_class_d1e_error: "This packet may be the start of a new message and
        # could be valid", then RESPST_CLEANUP drops it.
        check("  the next message, a SEND: C's known departure, dropped too (its class D1 "
              'drops the packet that starts it)', not wcs, statuses(wcs))
    w.send(packet(bth(UC | SEND_ONLY, r.qpn, PSN + 4, ack_req=False), b'v' * 32))
    wcs = r.completions()
    check('  a SEND with no receive posted: dropped, no answer, the QP still RTS',
          not wcs and not w.replies(timeout=0.2) and r.state() == e.IBV_QPS_RTS,
          f'{statuses(wcs)}, state {r.state()}')
    r.close()


def case_more_messages(env):
    """UC and UD beyond one message, RC QPs on an SRQ."""
    w = env.wire
    r = DeviceQp(env, qp_type=e.IBV_QPT_UC, access=LW | RW, recvs=3)
    parts = [os.urandom(MTU), os.urandom(MTU), os.urandom(100)]
    for i, op in enumerate((SEND_FIRST, SEND_MIDDLE, SEND_LAST)):
        w.send(packet(bth(UC | op, r.qpn, PSN + i, ack_req=False), parts[i]))
    wcs = r.completions()
    check('UC SEND FIRST, MIDDLE, LAST: one receive of 2,148 bytes, the message whole, '
          'no answer', [(x.status, x.byte_len) for x in wcs] == [(e.IBV_WC_SUCCESS, 2 * MTU + 100)]
          and r.mr.read(2 * MTU + 100, 32768) == b''.join(parts) and not w.replies(timeout=0.1),
          [(wc_name(x.status), x.byte_len) for x in wcs])
    data = [os.urandom(MTU), os.urandom(MTU), os.urandom(MTU)]
    w.send(packet(bth(UC | WRITE_FIRST, r.qpn, PSN + 3, ack_req=False) +
                  reth(r.mr.buf + 4096, r.mr.rkey, 3 * MTU), data[0]))
    w.send(packet(bth(UC | WRITE_MIDDLE, r.qpn, PSN + 4, ack_req=False), data[1]))
    w.send(packet(bth(UC | WRITE_LAST_IMM, r.qpn, PSN + 5, ack_req=False) +
                  struct.pack('!I', 0xc0ffee), data[2]))
    wcs = r.completions()
    check('  a UC WRITE FIRST, MIDDLE, LAST with immediate: the 3 KiB land, a receive completes '
          'RECV_RDMA_WITH_IMM of 3,072 bytes with the immediate',
          len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
          wcs[0].opcode == e.IBV_WC_RECV_RDMA_WITH_IMM and wcs[0].byte_len == 3 * MTU and
          socket.ntohl(wcs[0].imm_data) == 0xc0ffee and
          r.mr.read(3 * MTU, 4096) == b''.join(data),
          [(wc_name(x.status), x.opcode, x.byte_len, hex(x.imm_data)) for x in wcs])
    w.send(packet(bth(UC | SEND_ONLY, r.qpn, PSN + 6, ack_req=False), b'z' * 8))
    wcs = r.completions()
    check('  then a SEND ONLY: the third receive, 8 bytes, the QP still RTS',
          [(x.status, x.byte_len, x.wr_id) for x in wcs] == [(e.IBV_WC_SUCCESS, 8, 2)] and
          r.state() == e.IBV_QPS_RTS, [(wc_name(x.status), x.byte_len, x.wr_id) for x in wcs])
    r.close()

    qkey = 0x22222222
    cq, qp = ud_qp(env, qkey, recvs=3, recv_len=40 + 512)
    mr = env.mr
    grams = [os.urandom(n) for n in (1, 256, 512)]
    for i, g in enumerate(grams):
        w.send(packet(bth(UD_SEND_ONLY, qp.qp_num, 9 + i, ack_req=False,
                          pad=(4 - len(g) % 4) % 4) + struct.pack('!II', qkey, PEER_QPN), g))
    time.sleep(0.3 * SLOW)
    n, wcs = cq.poll(4)
    check('three UD datagrams in a row: three receives in order, each 40 + its bytes',
          [(x.status, x.wr_id, x.byte_len) for x in wcs[:n]] ==
          [(e.IBV_WC_SUCCESS, i, 40 + len(g)) for i, g in enumerate(grams)] and
          all(mr.read(len(g), 32768 + i * 4096 + 40) == g for i, g in enumerate(grams)),
          [(wc_name(x.status), x.wr_id, x.byte_len) for x in wcs[:n]])
    qp.close()
    cq.close()

    srq = SRQ(env.pd, SrqInitAttr(SrqAttr(max_wr=4, max_sge=1)))
    a, b = DeviceQp(env, srq=srq), DeviceQp(env, srq=srq)
    for i in range(2):
        srq.post_recv(RecvWR(wr_id=10 + i, num_sge=1,
                             sg=[SGE(a.mr.buf + 32768 + i * 4096, 4096, a.mr.lkey)]))
    for which, q, body in (('second', b, b'b' * 24), ('first', a, b'a' * 48)):
        w.send(packet(bth(SEND_ONLY, q.qpn, PSN), body))
        one_reply(f'RC SEND ONLY to the {which} of two QPs on an SRQ: ACK', w.replies(),
                  ACKNOWLEDGE, PSN, msn=1)
    wcs = b.completions() + a.completions()
    check('  the SRQ\'s receives taken in order: the first by the second QP (24 bytes), the '
          'next by the first QP (48 bytes), the data in each',
          [(x.status, x.wr_id, x.byte_len, x.qp_num) for x in wcs] ==
          [(e.IBV_WC_SUCCESS, 10, 24, b.qpn), (e.IBV_WC_SUCCESS, 11, 48, a.qpn)] and
          a.mr.read(24, 32768) == b'b' * 24 and a.mr.read(48, 32768 + 4096) == b'a' * 48,
          [(wc_name(x.status), x.wr_id, x.byte_len, hex(x.qp_num)) for x in wcs])
    w.send(packet(bth(SEND_ONLY, a.qpn, PSN + 1), b'c' * 8))
    one_reply('  a SEND with the SRQ empty: RNR NAK with the QP\'s min_rnr_timer', w.replies(),
              ACKNOWLEDGE, PSN + 1, syndrome=0x20 | MIN_RNR_TIMER)
    srq.post_recv(RecvWR(wr_id=12, num_sge=1, sg=[SGE(a.mr.buf + 40960, 4096, a.mr.lkey)]))
    w.send(packet(bth(SEND_ONLY, a.qpn, PSN + 1), b'c' * 8))
    one_reply('  the SEND again once a receive is posted: ACK, MSN 2', w.replies(), ACKNOWLEDGE,
              PSN + 1, msn=2)
    wcs = a.completions()
    check('  it lands in the new receive', [(x.status, x.wr_id, x.byte_len) for x in wcs] ==
          [(e.IBV_WC_SUCCESS, 12, 8)] and a.mr.read(8, 40960) == b'c' * 8,
          [(wc_name(x.status), x.wr_id, x.byte_len) for x in wcs])
    a.close()
    b.close()
    srq.close()


def case_send_with_invalidate(env):
    """SEND with invalidate of a type 2 memory window."""
    w = env.wire
    r = DeviceQp(env, recvs=1)
    mr = MR(env.pd, 65536, LW | RW | e.IBV_ACCESS_MW_BIND)
    mw = MW(env.pd, e.IBV_MW_TYPE_2)
    bind = SendWR(wr_id=0xb1, opcode=e.IBV_WR_BIND_MW, send_flags=e.IBV_SEND_SIGNALED)
    bind.set_bind_wr(mw, MWBindInfo(mr, mr.buf, 4096, e.IBV_ACCESS_REMOTE_WRITE))
    r.qp.post_send(bind)
    wcs = r.completions()
    rkey = bind.rkey
    check('BIND_MW of a type 2 window over 4 KiB, on the QP: completes, nothing sent',
          [(x.wr_id, x.status) for x in wcs] == [(0xb1, e.IBV_WC_SUCCESS)] and
          not w.replies(timeout=0.1), [(hex(x.wr_id), wc_name(x.status)) for x in wcs])
    data = os.urandom(64)
    w.send(packet(bth(WRITE_ONLY, r.qpn, PSN) + reth(mr.buf + 128, rkey, 64), data))
    one_reply('  an RDMA WRITE through the window: ACK', w.replies(), ACKNOWLEDGE, PSN, msn=1)
    check('  its bytes land in the MR', mr.read(64, 128) == data)
    w.send(packet(bth(SEND_ONLY_INV, r.qpn, PSN + 1) + struct.pack('!I', rkey), b's' * 16))
    one_reply('a SEND ONLY with invalidate naming the window: ACK, MSN 2', w.replies(),
              ACKNOWLEDGE, PSN + 1, msn=2)
    wcs = r.completions()
    # ibv_wc's invalidated_rkey shares imm_data's place (host order), which pyverbs names. The
    # flag is the kernel's IB_WC_WITH_INVALIDATE (1 << 2): both drivers' CQEs carry the
    # kernel's wc_flags, which librxe hands on as they are (libibverbs' IBV_WC_WITH_INV is
    # 1 << 3). IB_WC_GRH (1) says the buffer starts with a GRH, which only a datagram's does;
    # C sets it on every receive of a user QP.
    flags, what = ((1 << 2, 'the flag alone') if DRIVER == 'rs' else
                   (1 << 2 | 1, "C's known departure: with IB_WC_GRH on an RC receive"))
    check(f'  the receive completes with invalidate, the window\'s rkey ({what})',
          len(wcs) == 1 and wcs[0].status == e.IBV_WC_SUCCESS and
          wcs[0].wc_flags == flags and wcs[0].imm_data == rkey and
          r.mr.read(16, 32768) == b's' * 16,
          f'rkey {rkey:#x}: ' + str([(wc_name(x.status), x.wc_flags, hex(x.imm_data))
                                     for x in wcs]))
    w.send(packet(bth(WRITE_ONLY, r.qpn, PSN + 2) + reth(mr.buf + 256, rkey, 64), data))
    one_reply('  an RDMA WRITE through the invalidated window: NAK remote access error',
              w.replies(), ACKNOWLEDGE, PSN + 2, syndrome=NAK_REM_ACC)
    check('  nothing written, the QP in ERROR', mr.read(64, 256) == bytes(64) and
          r.state() == e.IBV_QPS_ERR, f'state {r.state()}')
    r.close()
    mw.close()
    mr.close()


def case_class_c(env):
    """Class C errors: a NAK with the code, the QP to ERROR."""
    w = env.wire
    big = os.urandom(128)
    cases = [
        ('RDMA WRITE with a bad rkey', NAK_REM_ACC,
         lambda r: [packet(bth(WRITE_ONLY, r.qpn, PSN) +
                           reth(r.mr.buf, r.mr.rkey ^ 0x100, 64), big[:64])]),
        ('RDMA WRITE whose va + len wraps 2^64', NAK_REM_ACC,
         lambda r: [packet(bth(WRITE_ONLY, r.qpn, PSN) +
                           reth((1 << 64) - 16, r.mr.rkey, 64), big[:64])]),
        ('RDMA READ past the end of the MR', NAK_REM_ACC,
         lambda r: [packet(bth(READ_REQUEST, r.qpn, PSN) +
                           reth(r.mr.buf + 65536 - 100, r.mr.rkey, 200))]),
        ('RDMA WRITE ONLY whose payload is not its RETH length', NAK_INV_REQ,
         lambda r: [packet(bth(WRITE_ONLY, r.qpn, PSN) + reth(r.mr.buf, r.mr.rkey, 128),
                           big[:64])]),
        ('RDMA WRITE MIDDLE without a FIRST', NAK_INV_REQ,
         lambda r: [packet(bth(WRITE_MIDDLE, r.qpn, PSN), os.urandom(MTU))]),
        ('FETCH_ADD to an address not 8-byte aligned', NAK_INV_REQ,
         lambda r: [packet(bth(FETCH_ADD, r.qpn, PSN) +
                           struct.pack('!QIQQ', r.mr.buf + 4, r.mr.rkey, 1, 0))]),
        # C answers a remote operational error: it takes copy_data's error for a malformed
        # receive WQE (rxe_resp.c send_data_in; data-path.md, the hostile table).
        ('SEND ONLY of 128 bytes into a 64-byte receive' +
         ('' if DRIVER == 'rs' else " (C's known departure: NAK remote operational error)"),
         NAK_INV_REQ if DRIVER == 'rs' else NAK_REM_OP,
         lambda r: [packet(bth(SEND_ONLY, r.qpn, PSN), big)]),
    ]
    for what, code, build in cases:
        r = DeviceQp(env, recv_len=64)
        before = r.mr.read(256, 0)
        for pkt in build(r):
            w.send(pkt)
        one_reply(f'{what}: NAK {code:#x} at its PSN', w.replies(), ACKNOWLEDGE, PSN,
                  syndrome=code)
        check('  the responder QP in ERROR, the MR untouched',
              r.state() == e.IBV_QPS_ERR and r.mr.read(256, 0) == before,
              f'state {r.state()}')
        if what.startswith('SEND'):
            wcs = r.completions()
            check('  the receive completes in error', len(wcs) == 1 and
                  wcs[0].status != e.IBV_WC_SUCCESS, [wc_name(x.status) for x in wcs])
        r.close()
        w.drain()


def aeth(syndrome, msn):
    return struct.pack('!I', (syndrome << 24) | msn)


def response(r, opcode, psn, syndrome=0x1f, msn=1, payload=b''):
    """A response from the peer to QP `r`: BTH, AETH (ACK with unlimited credits unless said),
    payload padded."""
    pad = -len(payload) % 4
    return packet(bth(opcode, r.qpn, psn, pad=pad, ack_req=False) + aeth(syndrome, msn), payload)


def requests(what, got, expected):
    """The requests the device sent: as many as expected, each (opcode, PSN, AckReq, the bytes
    after the BTH) as listed, to the peer's QP, with a good ICRC."""
    ok = len(got) == len(expected) and all(
        g.opcode == op and g.psn == psn and g.ack_req == ack and g.qpn == PEER_QPN and g.good and
        g.after == after for g, (op, psn, ack, after) in zip(got, expected))
    return check(what, ok, '; '.join(map(repr, got)) or 'nothing sent')


def statuses(wcs):
    return [wc_name(w.status) for w in wcs]


def case_requester(env):
    """The requester and completer against hand-made responses."""
    w = env.wire
    data = os.urandom(2 * MTU)

    def fresh(**kw):
        """A QP with no receive posted (its flush would complete too), the data at the MR's
        start."""
        q = DeviceQp(env, recvs=0, **kw)
        q.mr.write(data, len(data), 0)
        return q

    def posted(opcode, length, canary=0):
        """A fresh QP with one WR of `length` bytes posted (a READ's into offset 8192, over
        `canary` bytes of 0xee), its request taken off the wire."""
        q = fresh()
        q.mr.write(b'\xee' * canary, canary, 8192)
        q.post(opcode, length, offset=8192 if opcode == e.IBV_WR_RDMA_READ else 0)
        w.received()
        return q

    q = fresh()
    q.post(e.IBV_WR_SEND, 64)
    requests('a SEND of 64 bytes: SEND ONLY at the first PSN with AckReq, the data', w.received(),
             [(SEND_ONLY, SPSN, True, data[:64])])
    w.send(response(q, ACKNOWLEDGE, SPSN))
    wcs = q.completions()
    check('  its ACK completes it: SUCCESS', statuses(wcs) == ['IBV_WC_SUCCESS'], statuses(wcs))
    w.send(response(q, ACKNOWLEDGE, SPSN))
    wcs = q.completions()
    check('  the same ACK again: ignored, no completion', not wcs, statuses(wcs))
    q.post(e.IBV_WR_RDMA_WRITE, 2 * MTU)
    first = reth(REMOTE_VA, REMOTE_RKEY, 2 * MTU) + data[:MTU]
    requests('an RDMA WRITE of 2 KiB: WRITE FIRST (RETH) and LAST, AckReq on the last',
             w.received(want=2), [(WRITE_FIRST, SPSN + 1, False, first),
                                  (WRITE_LAST, SPSN + 2, True, data[MTU:])])
    w.send(response(q, ACKNOWLEDGE, SPSN + 2, msn=2))
    wcs = q.completions()
    check('  one ACK at its last PSN completes it', statuses(wcs) == ['IBV_WC_SUCCESS'],
          statuses(wcs))
    q.post(e.IBV_WR_RDMA_READ, 200, offset=8192)
    requests('an RDMA READ of 200 bytes: READ REQUEST, its RETH', w.received(),
             [(READ_REQUEST, SPSN + 3, True, reth(REMOTE_VA, REMOTE_RKEY, 200))])
    back = os.urandom(200)
    w.send(response(q, READ_RESPONSE_ONLY, SPSN + 3, msn=3, payload=back))
    wcs = q.completions()
    check('  a READ RESPONSE ONLY completes it, the bytes land',
          statuses(wcs) == ['IBV_WC_SUCCESS'] and q.mr.read(200, 8192) == back, statuses(wcs))
    q.close()

    # A READ of three responses whose MIDDLE is lost: the READ is sent again for the bytes
    # missing (as C's req_retry: at the MIDDLE's PSN, its RETH moved on), then completes whole.
    q = posted(e.IBV_WR_RDMA_READ, 3000, canary=3000)
    back = os.urandom(3000)
    w.send(response(q, READ_RESPONSE_FIRST, SPSN, payload=back[:MTU]))
    w.send(response(q, READ_RESPONSE_LAST, SPSN + 2, payload=back[2 * MTU:]))
    requests('a READ of 3,000 bytes, its MIDDLE response lost: a READ REQUEST for the last '
             '1,976 bytes at the MIDDLE\'s PSN', w.received(),
             [(READ_REQUEST, SPSN + 1, True, reth(REMOTE_VA + MTU, REMOTE_RKEY, 3000 - MTU))])
    w.send(response(q, READ_RESPONSE_FIRST, SPSN + 1, payload=back[MTU:2 * MTU]))
    w.send(response(q, READ_RESPONSE_LAST, SPSN + 2, payload=back[2 * MTU:]))
    wcs = q.completions()
    check('  its responses complete it, the 3,000 bytes whole',
          statuses(wcs) == ['IBV_WC_SUCCESS'] and q.mr.read(3000, 8192) == back, statuses(wcs))
    q.close()
    w.drain()

    # A plain ACK where the READ's response is due: the response was lost, the READ is sent
    # again (as for an ACK past it). C completes the READ as a success without its data.
    q = posted(e.IBV_WR_RDMA_READ, 200, canary=200)
    w.send(response(q, ACKNOWLEDGE, SPSN))
    got, wcs = w.received(), q.completions(0.1)
    if DRIVER == 'rs':
        requests('a READ answered with a plain ACK: the READ REQUEST sent again', got,
                 [(READ_REQUEST, SPSN, True, reth(REMOTE_VA, REMOTE_RKEY, 200))])
        back = os.urandom(200)
        w.send(response(q, READ_RESPONSE_ONLY, SPSN, payload=back))
        wcs = q.completions()
        check('  its READ RESPONSE then completes it, the bytes land',
              statuses(wcs) == ['IBV_WC_SUCCESS'] and q.mr.read(200, 8192) == back,
              statuses(wcs))
    else:
        check("a READ answered with a plain ACK: C's known departure, the READ completes "
              'SUCCESS with none of its data', statuses(wcs) == ['IBV_WC_SUCCESS'] and
              q.mr.read(200, 8192) == b'\xee' * 200, statuses(wcs))
    q.close()
    w.drain()

    # A READ RESPONSE to a SEND: an unexpected opcode, a bad response (C: a fatal error).
    q = posted(e.IBV_WR_SEND, 64)
    w.send(response(q, READ_RESPONSE_ONLY, SPSN, payload=b'z' * 64))
    wcs = q.completions()
    want = e.IBV_WC_BAD_RESP_ERR if DRIVER == 'rs' else e.IBV_WC_FATAL_ERR
    check(f'a SEND answered with a READ RESPONSE: {wc_name(want)}, the QP in ERROR' +
          ('' if DRIVER == 'rs' else " (C's known departure: not IBA's bad response)"),
          [x.status for x in wcs] == [want] and q.state() == e.IBV_QPS_ERR,
          f'{statuses(wcs)}, state {q.state()}')
    q.close()
    w.drain()

    # A READ RESPONSE longer than the READ: an error, nothing written past the buffer.
    q = posted(e.IBV_WR_RDMA_READ, 200, canary=512)
    w.send(response(q, READ_RESPONSE_ONLY, SPSN, payload=os.urandom(300)))
    wcs = q.completions()
    check('a READ RESPONSE of 300 bytes to a READ of 200: the READ completes in error, '
          'nothing written past its 200 bytes',
          len(wcs) == 1 and wcs[0].status != e.IBV_WC_SUCCESS and
          q.mr.read(312, 8192 + 200) == b'\xee' * 312, statuses(wcs))
    q.close()

    # NAK codes (IBA 9.7.5.2.2), each to its completion status; the QP to ERROR.
    for code, status in ((NAK_INV_REQ, e.IBV_WC_REM_INV_REQ_ERR),
                         (NAK_REM_ACC, e.IBV_WC_REM_ACCESS_ERR),
                         (NAK_REM_OP, e.IBV_WC_REM_OP_ERR)):
        q = posted(e.IBV_WR_SEND, 64)
        w.send(response(q, ACKNOWLEDGE, SPSN, syndrome=code, msn=0))
        wcs = q.completions()
        check(f'a SEND answered with NAK {code:#x}: {wc_name(status)}, the QP in ERROR',
              [x.status for x in wcs] == [status] and q.state() == e.IBV_QPS_ERR,
              f'{statuses(wcs)}, state {q.state()}')
        q.close()
        w.drain()

    # RNR NAK: the SEND again after the timer, the same PSN and bytes.
    q = posted(e.IBV_WR_SEND, 64)
    w.send(response(q, ACKNOWLEDGE, SPSN, syndrome=0x20 | 1, msn=0))
    requests('a SEND answered with RNR NAK (0.01 ms): sent again, the same PSN and bytes',
             w.received(), [(SEND_ONLY, SPSN, True, data[:64])])
    w.send(response(q, ACKNOWLEDGE, SPSN))
    wcs = q.completions()
    check('  then its ACK completes it', statuses(wcs) == ['IBV_WC_SUCCESS'], statuses(wcs))
    q.close()
    w.drain()

    # PSN sequence NAK at the second of two SENDs: the first is acknowledged by it, the second
    # sent again.
    q = fresh()
    q.post(e.IBV_WR_SEND, 64, wr_id=1)
    q.post(e.IBV_WR_SEND, 64, offset=64, wr_id=2)
    w.received(want=2)
    w.send(response(q, ACKNOWLEDGE, SPSN + 1, syndrome=NAK_PSN_SEQ, msn=1))
    requests('two SENDs, a PSN sequence NAK at the second: the second sent again',
             w.received(), [(SEND_ONLY, SPSN + 1, True, data[64:128])])
    w.send(response(q, ACKNOWLEDGE, SPSN + 1, msn=2))
    wcs = q.completions()
    check('  both complete, in order', [(x.wr_id, x.status) for x in wcs] ==
          [(1, e.IBV_WC_SUCCESS), (2, e.IBV_WC_SUCCESS)], statuses(wcs))
    q.close()
    w.drain()

    # A PSN sequence NAK inside a three-packet WRITE: sent again from that PSN, with the
    # MIDDLE's opcode and bytes (C req_retry).
    q = fresh()
    q.post(e.IBV_WR_RDMA_WRITE, 2 * MTU + 100)
    w.received(want=3)
    w.send(response(q, ACKNOWLEDGE, SPSN + 1, syndrome=NAK_PSN_SEQ, msn=0))
    requests('a WRITE of 2,148 bytes NAKed for a sequence error at its MIDDLE: the MIDDLE and '
             'LAST sent again', w.received(want=2),
             [(WRITE_MIDDLE, SPSN + 1, False, data[MTU:2 * MTU]),
              (WRITE_LAST, SPSN + 2, True, bytes(100))])
    w.send(response(q, ACKNOWLEDGE, SPSN + 2))
    wcs = q.completions()
    check('  then its ACK completes it', statuses(wcs) == ['IBV_WC_SUCCESS'], statuses(wcs))
    q.close()
    w.drain()

    # An atomic answered: the original value lands in the WR's buffer.
    q = fresh()
    wr = SendWR(wr_id=9, opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                sg=[SGE(q.mr.buf + 8192, 8, q.mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_atomic(REMOTE_RKEY, REMOTE_VA, 5, 0)
    q.qp.post_send(wr)
    requests('a FETCH_ADD of 5: its AtomicETH', w.received(),
             [(FETCH_ADD, SPSN, True, struct.pack('!QIQQ', REMOTE_VA, REMOTE_RKEY, 5, 0))])
    w.send(packet(bth(ATOMIC_ACKNOWLEDGE, q.qpn, SPSN, ack_req=False) + aeth(0x1f, 1) +
                  struct.pack('!Q', 0x0102030405060708)))
    wcs = q.completions()
    check('  its ATOMIC ACKNOWLEDGE completes it, the original value in its buffer',
          statuses(wcs) == ['IBV_WC_SUCCESS'] and
          q.mr.read(8, 8192) == struct.pack('<Q', 0x0102030405060708), statuses(wcs))
    q.close()
    w.drain()

    # Retries run out: retry_cnt 1 is one retransmission, then RETRY_EXC_ERR.
    q = fresh(retry_cnt=1, timeout=10)
    q.post(e.IBV_WR_SEND, 64)
    got = w.received(timeout=1.5, want=5)
    wcs = q.completions(1.0)
    check('a SEND never answered, retry_cnt 1: sent twice, then IBV_WC_RETRY_EXC_ERR',
          [(g.opcode, g.psn) for g in got] == [(SEND_ONLY, SPSN)] * 2 and
          [x.status for x in wcs] == [e.IBV_WC_RETRY_EXC_ERR],
          f'{len(got)} sent, {statuses(wcs)}')
    q.close()


def case_atomic_write_flush_requester(env):
    """The device as an ATOMIC WRITE and FLUSH requester."""
    w = env.wire
    q = DeviceQp(env, recvs=0, send_ops=e.IBV_QP_EX_WITH_ATOMIC_WRITE | e.IBV_QP_EX_WITH_FLUSH)

    def post(wr_id, add):
        q.qp.wr_start()
        q.qp.wr_id, q.qp.wr_flags = wr_id, e.IBV_SEND_SIGNALED
        add(q.qp)
        q.qp.wr_complete()

    value = os.urandom(8)
    post(1, lambda qp: qp.wr_atomic_write(REMOTE_RKEY, REMOTE_VA, value))
    requests('an ATOMIC WRITE: ATOMIC WRITE at the first PSN with AckReq, a RETH of 8 bytes, '
             'the value', w.received(),
             [(ATOMIC_WRITE, SPSN, True, reth(REMOTE_VA, REMOTE_RKEY, 8) + value)])
    w.send(response(q, READ_RESPONSE_ONLY, SPSN))
    wcs = q.completions()
    check('  a READ RESPONSE ONLY of no bytes completes it: SUCCESS, IBV_WC_ATOMIC_WRITE',
          [(x.status, x.opcode) for x in wcs] == [(e.IBV_WC_SUCCESS, e.IBV_WC_ATOMIC_WRITE)],
          [(wc_name(x.status), x.opcode) for x in wcs])
    post(2, lambda qp: qp.wr_flush(REMOTE_RKEY, REMOTE_VA + 4096, 1024, e.IBV_FLUSH_GLOBAL,
                                   e.IBV_FLUSH_RANGE))
    requests('a FLUSH of a range, global visibility: FLUSH with AckReq, its FETH and RETH',
             w.received(), [(FLUSH, SPSN + 1, True,
                             feth(e.IBV_FLUSH_RANGE, e.IBV_FLUSH_GLOBAL) +
                             reth(REMOTE_VA + 4096, REMOTE_RKEY, 1024))])
    w.send(response(q, READ_RESPONSE_ONLY, SPSN + 1, msn=2))
    wcs = q.completions()
    check('  a READ RESPONSE ONLY of no bytes completes it: SUCCESS, IBV_WC_FLUSH',
          [(x.status, x.opcode) for x in wcs] == [(e.IBV_WC_SUCCESS, e.IBV_WC_FLUSH)],
          [(wc_name(x.status), x.opcode) for x in wcs])
    q.close()


def main():
    dev, gid_index, netns = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    env = Env(dev, gid_index, netns)
    for case in (case_dropped, case_sequence, case_operations, case_atomic_write_flush,
                 case_messages, case_ud, case_uc, case_more_messages,
                 case_send_with_invalidate, case_class_c, case_requester,
                 case_atomic_write_flush_requester):
        print(f'--- {case.__doc__.splitlines()[0]}')
        case(env)
        env.wire.drain()
    env.mr.close()
    env.pd.close()
    env.ctx.close()
    return tally()


if __name__ == '__main__':
    sys.exit(main())
