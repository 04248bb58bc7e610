# SPDX-License-Identifier: GPL-2.0
"""
RDMA ATOMIC WRITE and RDMA FLUSH between two hosts over RC (run by tests/vm/interop.sh, one
side with each driver; no rdma-core tool sends these two between hosts):

  python3 flush_aw_pair.py server DEV GID_INDEX PORT
  python3 flush_aw_pair.py client DEV GID_INDEX SERVER_IP PORT

The server registers MR "main" (two pages, filled with a known pattern) with
LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | FLUSH_GLOBAL | FLUSH_PERSISTENT.
Both drivers refuse FLUSH_PERSISTENT on memory that is not pmem (EINVAL, C
rxe_mr_fill_pages_from_sgt; the guests have none: a check); the server then registers it without
and tells the client, which flushes with the placement types the MR allows. MR "global" (one page, FLUSH_GLOBAL only, no
persistence) is the target of a negative case. The server has four RC QPs with every remote
right, the client four extended QPs (QPEx: send ops ATOMIC_WRITE, FLUSH, RDMA_READ, as
rdma-core's test_qpex.py); QPNs, PSNs, GIDs, MR addresses and rkeys go over one TCP
connection as JSON lines.

Client, QP 0: for each 8-byte aligned offset (page starts and ends, the last word of the MR, one
offset twice): ATOMIC WRITE a fresh 8-byte pattern, FLUSH it with each allowed placement type at
both selectivity levels (the range just written, and the whole MR), RDMA READ the 8 bytes back
and compare. QP 1: a FLUSH with a wrong rkey, QP 2: a FLUSH PERSISTENT to MR "global", QP 3:
a FLUSH RANGE of 16 bytes from the MR's last word (past its end: the responder checks the RETH
range, C check_rkey mr_check_range): all must complete IBV_WC_REM_ACCESS_ERR (each errors its
QP, hence one QP each). Then the client sends what it wrote; the server checks both MRs byte for
byte (the writes where they were sent, its fill everywhere else), and that its QP 0 is still RTS
and QPs 1 to 3 went to ERR.

Each side prints "ok   ..." / "FAIL ..." per check and "N passed, M failed", and exits 0 only
if all its checks passed. Every wait is bounded (CQ polls, the TCP channel).
"""
import errno
import itertools
import json
import os
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import SGE

from guestcheck import DRIVER, check, failures, tally, wc_name

MR_LEN = 8192  # two pages: offsets on both sides of the page boundary
GLOBAL_LEN = 4096
OFFSETS = [0, 8, 4088, 4096, 4104, MR_LEN - 8, 8]  # 8 again: overwritten
NQP = 4  # 0: traffic, 1: wrong rkey, 2: PERSISTENT to MR "global", 3: range past the MR's end
WC_TIMEOUT = 10  # seconds per completion
TCP_TIMEOUT = 90
REMOTE = (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC |
          e.IBV_ACCESS_FLUSH_GLOBAL | e.IBV_ACCESS_FLUSH_PERSISTENT)
PLACEMENT = {e.IBV_FLUSH_GLOBAL: 'GLOBAL', e.IBV_FLUSH_PERSISTENT: 'PERSISTENT'}
LEVEL = {e.IBV_FLUSH_RANGE: 'RANGE', e.IBV_FLUSH_MR: 'MR'}


def fill(length, seed):
    """The server's initial MR content: known, and different per MR."""
    return bytes((i * 7 + seed) & 0xff for i in range(length))


# --- the TCP channel: one JSON object per line ---------------------------------------------

class Channel:
    def __init__(self, sock):
        sock.settimeout(TCP_TIMEOUT)
        self.sock, self.f = sock, sock.makefile('r')

    def send(self, obj):
        self.sock.sendall((json.dumps(obj) + '\n').encode())

    def recv(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError('peer closed the TCP channel')
        return json.loads(line)


# --- RC QPs ---------------------------------------------------------------------------------

class Side:
    def __init__(self, dev, gid_index):
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.gid_index = gid_index
        self.gid = self.ctx.query_gid(1, gid_index).gid
        self.cqs, self.qps = [], []
        self.psns = [int.from_bytes(os.urandom(3), 'little') for _ in range(NQP)]

    def info(self):
        return {'qpns': [qp.qp_num for qp in self.qps], 'psns': self.psns, 'gid': self.gid,
                'driver': DRIVER}

    def to_rts(self, peer):
        for qp, psn, rqpn, rpsn in zip(self.qps, self.psns, peer['qpns'], peer['psns']):
            attr = QPAttr(port_num=1)
            attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | REMOTE
            attr.path_mtu = e.IBV_MTU_1024
            attr.dest_qp_num = rqpn
            attr.rq_psn, attr.sq_psn = rpsn, psn
            attr.max_dest_rd_atomic = attr.max_rd_atomic = 4
            # retry_cnt 7 would retry forever in both drivers: 6, and every poll has a deadline.
            attr.min_rnr_timer, attr.timeout, attr.retry_cnt, attr.rnr_retry = 12, 14, 6, 6
            gid = GID()
            gid.gid = peer['gid']
            gr = GlobalRoute(dgid=gid, sgid_index=self.gid_index)
            attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
            qp.to_rts(attr)


def server(dev, gid_index, port):
    side = Side(dev, gid_index)
    lw = e.IBV_ACCESS_LOCAL_WRITE
    try:
        mr = MR(side.pd, MR_LEN, lw | REMOTE)
        persistent = True
        # The guests have no pmem: both drivers must refuse (C rxe_mr_fill_pages_from_sgt).
        check('MR with FLUSH_PERSISTENT refused: EINVAL (as C on memory that is not pmem)',
              False, f'registered on ordinary memory ({DRIVER} driver)')
    except PyverbsRDMAError as ex:
        check('MR with FLUSH_PERSISTENT refused: EINVAL (as C on memory that is not pmem)',
              ex.error_code == errno.EINVAL, str(ex))
        mr = MR(side.pd, MR_LEN, lw | (REMOTE & ~e.IBV_ACCESS_FLUSH_PERSISTENT))
        persistent = False
        print(f'note: MR with FLUSH_PERSISTENT refused (EINVAL, {DRIVER} driver): registered '
              'without; the client flushes GLOBAL only')
    mr_g = MR(side.pd, GLOBAL_LEN, lw | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_FLUSH_GLOBAL)
    mr.write(fill(MR_LEN, 3), MR_LEN)
    mr_g.write(fill(GLOBAL_LEN, 5), GLOBAL_LEN)
    for _ in range(NQP):
        cq = CQ(side.ctx, 4, None, None, 0)
        cap = QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
        side.cqs.append(cq)
        side.qps.append(QP(side.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)))

    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(('', port))
    lsock.listen(1)
    lsock.settimeout(TCP_TIMEOUT)
    conn, peer_addr = lsock.accept()
    ch = Channel(conn)
    ch.send(dict(side.info(), addr=mr.buf, rkey=mr.rkey, length=MR_LEN, persistent=persistent,
                 g_addr=mr_g.buf, g_rkey=mr_g.rkey))
    peer = ch.recv()
    print(f'server ({DRIVER}) on {dev}: QPNs {side.info()["qpns"]}; client {peer_addr[0]} '
          f'({peer["driver"]}): QPNs {peer["qpns"]}')
    side.to_rts(peer)
    ch.send({'rts': True})

    done = ch.recv()
    print(f'client done: {len(done["writes"])} ATOMIC WRITEs, client failures {done["failures"]}')
    want = bytearray(fill(MR_LEN, 3))
    for off, hexpat in done['writes']:
        want[off:off + 8] = bytes.fromhex(hexpat)
    got = mr.read(MR_LEN, 0)
    bad = [i for i in range(0, MR_LEN, 8) if got[i:i + 8] != want[i:i + 8]]
    check('MR "main": the ATOMIC WRITEs at their offsets, the fill everywhere else', not bad,
          ', '.join(f'offset {i}: {got[i:i + 8].hex()} (want {want[i:i + 8].hex()})'
                    for i in bad[:8]))
    check('MR "global": untouched', mr_g.read(GLOBAL_LEN, 0) == fill(GLOBAL_LEN, 5))
    for i, want_state, why in ((0, e.IBV_QPS_RTS, 'traffic'),
                               (1, e.IBV_QPS_ERR, 'wrong-rkey FLUSH'),
                               (2, e.IBV_QPS_ERR, 'FLUSH PERSISTENT to MR "global"'),
                               (3, e.IBV_QPS_ERR, 'FLUSH RANGE past the end of the MR')):
        deadline = time.monotonic() + 5
        while True:
            state = side.qps[i].query(e.IBV_QP_STATE)[0].qp_state
            if state == want_state or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        check(f'responder QP {i} ({why}): state {want_state} (RTS 3, ERR 6)',
              state == want_state, f'state {state}')
    ch.send({'server_failures': failures()})
    conn.close()
    lsock.close()


def client(dev, gid_index, server_ip, port):
    side = Side(dev, gid_index)
    local = MR(side.pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    ops = (e.IBV_QP_EX_WITH_ATOMIC_WRITE | e.IBV_QP_EX_WITH_FLUSH |
           e.IBV_QP_EX_WITH_RDMA_READ)
    for _ in range(NQP):
        cq = CQ(side.ctx, 4, None, None, 0)
        cap = QPCap(max_send_wr=4, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
        qia = QPInitAttrEx(cap=cap, qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, pd=side.pd,
                           send_ops_flags=ops,
                           comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
        side.cqs.append(cq)
        side.qps.append(QPEx(side.ctx, qia))

    sock = None
    deadline = time.monotonic() + 30
    while sock is None:
        try:
            sock = socket.create_connection((server_ip, port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    ch = Channel(sock)
    srv = ch.recv()
    ch.send(side.info())
    print(f'client ({DRIVER}) on {dev}: QPNs {side.info()["qpns"]}; server {server_ip} '
          f'({srv["driver"]}): QPNs {srv["qpns"]}, MR {srv["addr"]:#x}+{srv["length"]} '
          f'rkey {srv["rkey"]:#x}, FLUSH_PERSISTENT {"allowed" if srv["persistent"] else "not allowed"}')
    side.to_rts(srv)
    ch.recv()  # the server's QPs are RTS too

    wr_ids = itertools.count(1)

    def run(i, what, want_status, want_opcode, post):
        """Posts one signaled WR on QP i (post(qp) adds it) and checks its completion."""
        qp, cq = side.qps[i], side.cqs[i]
        qp.wr_start()
        qp.wr_id = next(wr_ids)
        qp.wr_flags = e.IBV_SEND_SIGNALED
        post(qp)
        qp.wr_complete()
        status = opcode = None
        deadline = time.monotonic() + WC_TIMEOUT
        while time.monotonic() < deadline:
            n, wcs = cq.poll()
            if n:
                status, opcode = wcs[0].status, wcs[0].opcode
                break
            time.sleep(0.001)
        ok = status == want_status and (status != e.IBV_WC_SUCCESS or opcode == want_opcode)
        detail = f'status {wc_name(status)}' + (
            f', opcode {opcode} (want {want_opcode})' if want_status == e.IBV_WC_SUCCESS else '')
        return check(f'{what}: {wc_name(want_status)}', ok, detail)

    rkey, base = srv['rkey'], srv['addr']
    types = [e.IBV_FLUSH_GLOBAL] + ([e.IBV_FLUSH_PERSISTENT] if srv['persistent'] else [])
    writes = []
    for off in OFFSETS:
        pat = os.urandom(8)
        if not run(0, f'ATOMIC WRITE {pat.hex()} at offset {off}', e.IBV_WC_SUCCESS,
                   e.IBV_WC_ATOMIC_WRITE,
                   lambda qp: qp.wr_atomic_write(rkey, base + off, pat)):
            break
        writes.append([off, pat.hex()])
        for t in types:
            for level in (e.IBV_FLUSH_RANGE, e.IBV_FLUSH_MR):
                # IBV_FLUSH_MR names no range: va and length 0 ("FLUSH MR may not set va or
                # resid", C check_rkey).
                va, length = (base + off, 8) if level == e.IBV_FLUSH_RANGE else (base, 0)
                run(0, f'  FLUSH {PLACEMENT[t]} {LEVEL[level]}', e.IBV_WC_SUCCESS, e.IBV_WC_FLUSH,
                    lambda qp: qp.wr_flush(rkey, va, length, t, level))
        local.write(bytes(8), 8)

        def read(qp):
            qp.wr_rdma_read(rkey, base + off)
            qp.wr_set_sge(SGE(local.buf, 8, local.lkey))
        if run(0, '  RDMA READ it back', e.IBV_WC_SUCCESS, e.IBV_WC_RDMA_READ, read):
            got = local.read(8, 0)
            check(f'  read back {got.hex()} = written', got == pat)

    run(1, 'FLUSH GLOBAL RANGE with a wrong rkey (QP 1)', e.IBV_WC_REM_ACCESS_ERR, None,
        lambda qp: qp.wr_flush(rkey ^ 0x80, base, 8, e.IBV_FLUSH_GLOBAL, e.IBV_FLUSH_RANGE))
    run(2, 'FLUSH PERSISTENT RANGE to MR "global" (FLUSH_GLOBAL only; QP 2)',
        e.IBV_WC_REM_ACCESS_ERR, None,
        lambda qp: qp.wr_flush(srv['g_rkey'], srv['g_addr'], 8, e.IBV_FLUSH_PERSISTENT,
                               e.IBV_FLUSH_RANGE))
    # The RETH length of a FLUSH is the WR's length (C rxe_req.c: reth_set_len(wqe->dma.resid)).
    run(3, 'FLUSH GLOBAL RANGE of 16 bytes at the MR\'s last word, past its end (QP 3)',
        e.IBV_WC_REM_ACCESS_ERR, None,
        lambda qp: qp.wr_flush(rkey, base + srv['length'] - 8, 16, e.IBV_FLUSH_GLOBAL,
                               e.IBV_FLUSH_RANGE))

    ch.send({'writes': writes, 'failures': failures()})
    verdict = ch.recv()
    print(f'server reports {verdict["server_failures"]} failed check(s)')
    sock.close()


def main():
    role, dev, gid_index = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(f'driver: {DRIVER}')
    try:
        if role == 'server':
            server(dev, gid_index, int(sys.argv[4]))
        else:
            client(dev, gid_index, sys.argv[4], int(sys.argv[5]))
    except Exception as ex:  # the channel or a verb failed: one failed check, and out
        check(f'{role} ran to the end', False, f'{type(ex).__name__}: {ex}')
    return tally()


if __name__ == '__main__':
    sys.exit(main())
