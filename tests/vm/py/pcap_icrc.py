#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks every RoCEv2 packet (UDP port 4791) of a capture as a receiver would: the IP header's
length and checksum, the UDP length, and the ICRC (IBA A17.8: CRC-32 over 8 bytes of ones, the
IP header with TOS/traffic class, flow label, TTL/hop limit and checksum masked, the UDP header
with its checksum masked, the BTH with its FECN/BECN byte masked, then the packet up to the
ICRC, stored least significant byte first).

    pcap_icrc.py FILE [MIN_RUN]

A libpcap file of Ethernet frames, captured whole (tcpdump -s 0). Prints how many packets were
checked, by direction, and the longest run of back-to-back packets of one flow (same addresses
and ports) whose IPv4 IDs follow each other: the bursts a sender cut from one skb. Exits 1 on
any bad packet, on a truncated capture, or when no run reaches MIN_RUN (default 1).
"""
import struct
import sys
import zlib

ROCE_PORT = 4791
# Opcodes whose ICRC covers their extension headers twice in C's table (payload offset 0):
# FLUSH and two RD opcodes. Not in the traffic this checks; counted apart, not judged.
ODD_OPCODES = {0x1C, 0x4C, 0x55}


def ip_checksum(hdr):
    s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def icrc(ip, udp, packet):
    if ip[0] >> 4 == 4:
        m = bytearray(ip[:20])
        m[1] = 0xFF
        m[8] = 0xFF
        m[10:12] = b"\xff\xff"
    else:
        m = bytearray(ip[:40])
        m[0] |= 0x0F
        m[1:4] = b"\xff\xff\xff"
        m[7] = 0xFF
    u = bytearray(udp)
    u[6:8] = b"\xff\xff"
    b = bytearray(packet)
    b[4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(m) + bytes(u) + bytes(b))


def frames(path):
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        endian = {0xA1B2C3D4: "<", 0xD4C3B2A1: ">", 0xA1B23C4D: "<", 0x4D3CB2A1: ">"}.get(magic)
        if endian is None:
            raise SystemExit(f"{path}: not a pcap file")
        snaplen, linktype = struct.unpack(endian + "II", head[16:24])
        if linktype != 1:
            raise SystemExit(f"{path}: link type {linktype}, not Ethernet")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, orig = struct.unpack(endian + "IIII", rec)
            yield f.read(incl), orig


def main():
    path = sys.argv[1]
    min_run = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    bad = checked = odd = 0
    flows = {}
    run, longest, last = 0, 0, None
    for frame, orig in frames(path):
        if len(frame) != orig:
            print(f"truncated capture: a frame of {orig} B kept {len(frame)} B (use -s 0)")
            return 1
        ethertype = struct.unpack("!H", frame[12:14])[0]
        ip = frame[14:]
        if ethertype == 0x0800 and ip[9] == 17:
            ihl = (ip[0] & 0x0F) * 4
            total = struct.unpack("!H", ip[2:4])[0]
            ip_ok = ihl == 20 and total == len(ip) and ip_checksum(ip[:20]) == 0xFFFF
            ident = struct.unpack("!H", ip[4:6])[0]
            src, dst = ip[12:16], ip[16:20]
        elif ethertype == 0x86DD and ip[6] == 17:
            ihl = 40
            total = 40 + struct.unpack("!H", ip[4:6])[0]
            ip_ok = total == len(ip)
            ident = None
            src, dst = ip[8:24], ip[24:40]
        else:
            continue
        udp = ip[ihl : ihl + 8]
        sport, dport, ulen = struct.unpack("!HHH", udp[:6])
        if dport != ROCE_PORT:
            continue
        packet = ip[ihl + 8 : total]
        what = f"packet {checked + odd + 1} ({src.hex()}:{sport} -> {dst.hex()}, id {ident})"
        if not ip_ok or ulen != total - ihl or len(packet) < 16:
            print(f"bad {what}: IP length {total} of {len(ip)}, UDP length {ulen}")
            bad += 1
            continue
        if packet[0] in ODD_OPCODES:
            odd += 1
            continue
        want = struct.pack("<I", icrc(ip, udp, packet[:-4]))
        if packet[-4:] != want:
            print(f"bad {what}: opcode {packet[0]:#04x}, ICRC {packet[-4:].hex()}, "
                  f"expected {want.hex()}")
            bad += 1
        checked += 1
        key = (src, dst, sport)
        flows[key] = flows.get(key, 0) + 1
        follows = (last is not None and last[0] == key and ident is not None
                   and last[1] is not None and ident == (last[1] + 1) & 0xFFFF)
        run = run + 1 if follows else 1
        longest = max(longest, run)
        last = (key, ident)
    for (src, dst, sport), n in sorted(flows.items(), key=lambda kv: -kv[1]):
        print(f"  {src.hex()}:{sport} -> {dst.hex()}: {n} packets")
    print(f"{checked} RoCEv2 packets checked, {bad} bad, {odd} not judged; "
          f"longest run of consecutive IPv4 IDs in one flow: {longest}")
    if checked == 0 or bad or longest < min_run:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
