#!/usr/bin/env python3
"""A server's response time as the wire saw it, from a packet capture on loopback.

Usage: bench/wire_gaps.py CAPTURE.pcap SERVER_PORT [SKIP_S]

Reads a pcap written by `tcpdump -i lo --time-stamp-precision=nano -w CAPTURE.pcap` (or with
microsecond stamps), and for every TCP segment carrying a request to SERVER_PORT, the time until
the first segment carrying reply bytes back on the same connection: the server's response time
taken by the kernel at each segment's transmission, with neither the client's wake-up nor its
clock reads in it. The first SKIP_S seconds of the capture (a warm-up) are left out.

Prints one JSON object: {"n": gaps, "p50_us": ..., "p99_us": ..., "max_us": ...}; the
percentiles are nearest-rank over every gap (exact, not estimated). Only IPv4 on Ethernet or
Linux "cooked" captures, which is what tcpdump writes for lo.
"""

import json
import struct
import sys


def records(path):
    """(nanoseconds, link type, packet bytes) for each record of a pcap file."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        else:
            magic = struct.unpack(">I", head[:4])[0]
            endian = ">"
        # Integer nanoseconds: a float of seconds since 1970 keeps only ~0.2 µs.
        scale = 1 if magic == 0xA1B23C4D else 1000
        linktype = struct.unpack(endian + "I", head[20:24])[0]
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            sec, frac, caplen, _ = struct.unpack(endian + "IIII", rh)
            data = f.read(caplen)
            yield sec * 1_000_000_000 + frac * scale, linktype, data


def segment(linktype, data):
    """(source address, source port, destination address, destination port, payload bytes) of
    an IPv4 TCP packet, else None."""
    if linktype == 1:  # Ethernet
        if len(data) < 14 or data[12:14] != b"\x08\x00":
            return None
        ip = data[14:]
    elif linktype == 113:  # Linux cooked (SLL)
        if len(data) < 16 or data[14:16] != b"\x08\x00":
            return None
        ip = data[16:]
    else:
        return None
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
        return None
    ihl = (ip[0] & 0x0F) * 4
    total = struct.unpack(">H", ip[2:4])[0]
    tcp = ip[ihl:]
    if len(tcp) < 20:
        return None
    sport, dport = struct.unpack(">HH", tcp[:4])
    doff = (tcp[12] >> 4) * 4
    payload = total - ihl - doff
    return ip[12:16], sport, ip[16:20], dport, payload


def nearest_rank(sorted_xs, q):
    if not sorted_xs:
        return None
    k = max(1, -(-len(sorted_xs) * q // 100))  # ceil(n * q / 100)
    return sorted_xs[int(k) - 1]


def main():
    path, port = sys.argv[1], int(sys.argv[2])
    skip = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    first = None
    waiting = {}  # client's (addr, port) -> time its request left, not yet answered
    gaps = []
    for t, linktype, data in records(path):
        seg = segment(linktype, data)
        if seg is None:
            continue
        src, sport, dst, dport, payload = seg
        if payload <= 0:
            continue
        first = t if first is None else first
        if dport == port:
            client = (src, sport)
            waiting.setdefault(client, t)  # a request in several segments: its first
        elif sport == port:
            client = (dst, dport)
            sent = waiting.pop(client, None)
            if sent is not None and sent - first >= skip * 1e9:
                gaps.append((t - sent) / 1000)
    gaps.sort()
    print(json.dumps({
        "n": len(gaps),
        "p50_us": nearest_rank(gaps, 50),
        "p99_us": nearest_rank(gaps, 99),
        "max_us": gaps[-1] if gaps else None,
    }))


if __name__ == "__main__":
    main()
