#!/usr/bin/env python3
"""Hostile clients for bench/hostile.sh: loopback only, stdlib only, bounded in time.

usage: hostile.py ATTACK HOST PORT SECONDS [N]
  slowloris  N connections (default 2000), each sending one header byte every 3 s
  garbage    N connections (default 8) writing random bytes as fast as the server reads them,
             reconnecting whenever the server closes
  oversized  N connections (default 8) each sending a 1 MiB header again and again,
             reconnecting whenever the server closes
Prints one line: what it sent.
"""
import ipaddress, os, random, select, socket, sys, time


def loopback(host):
    return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback


def connect(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    return s


def slowloris(host, port, end, n):
    socks, opened, sent = [], 0, 0
    # Open in batches so the listen backlog is not the thing measured.
    while len(socks) < n and time.time() < end:
        for _ in range(min(100, n - len(socks))):
            socks.append(connect(host, port))
            opened += 1
        time.sleep(0.02)
    first = b"GET / HTTP/1.1\r\nHost: x\r\nX-a: "
    for s in socks:
        try:
            s.send(first)
        except OSError:
            pass
    while time.time() < end:
        time.sleep(min(3.0, max(0.0, end - time.time())))
        alive = []
        for s in socks:
            try:
                s.send(b"a")
                sent += 1
                alive.append(s)
            except OSError:
                s.close()
                # A slowloris reconnects when dropped, as the real tool does.
                alive.append(connect(host, port))
                opened += 1
        socks = alive
    for s in socks:
        s.close()
    return f"slowloris: {opened} connections opened, {sent} single bytes sent"


def flood(host, port, end, n, chunk):
    """Writes `chunk()` to n connections as fast as they take it, reconnecting on close."""
    socks = [connect(host, port) for _ in range(n)]
    sent = opened = 0
    while time.time() < end:
        _, w, _ = select.select([], socks, [], 0.1)
        for s in w:
            try:
                sent += s.send(chunk(s))
                # Read and drop replies (400/431) so they do not fill the socket.
                try:
                    s.recv(65536)
                except BlockingIOError:
                    pass
            except OSError:
                socks.remove(s)
                s.close()
                socks.append(connect(host, port))
                opened += 1
    for s in socks:
        s.close()
    return sent, opened


def main():
    attack, host, port, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    if not loopback(host):
        sys.exit("hostile.py: loopback addresses only")
    seconds = min(seconds, 60.0)  # bounded whatever the caller says
    end = time.time() + seconds
    n = int(sys.argv[5]) if len(sys.argv) > 5 else None
    if attack == "slowloris":
        print(slowloris(host, port, end, n or 2000))
    elif attack == "garbage":
        junk = os.urandom(1 << 16)
        sent, opened = flood(host, port, end, n or 8, lambda s: junk)
        print(f"garbage: {sent / 1e6:.0f} MB sent, {opened} reconnects")
    elif attack == "oversized":
        head = b"GET / HTTP/1.1\r\nHost: x\r\nX-big: " + b"a" * (1 << 20) + b"\r\n\r\n"
        pos = {}

        def chunk(s):
            # Each connection walks through the 1 MiB header; a reconnect starts over.
            at = pos.get(s.fileno(), 0)
            pos[s.fileno()] = (at + 65536) % len(head)
            return head[at:at + 65536]

        sent, opened = flood(host, port, end, n or 8, chunk)
        print(f"oversized: {sent / 1e6:.0f} MB of 1 MiB headers sent, {opened} reconnects")
    else:
        sys.exit(f"hostile.py: unknown attack {attack!r} (slowloris, garbage, oversized)")


if __name__ == "__main__":
    main()
