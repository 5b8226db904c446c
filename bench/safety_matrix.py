#!/usr/bin/env python3
"""bench/safety_matrix.py [BIN]: issue 39's matrix, rerun against a built binary.

Every case the issue's body lists (outputs that clobbered, commands from a plan file, the
reference servers turned against their host, unbounded memory and time, lost results and wrong
exits, panics, bad input that wrote), tried again on its exact input against BIN (default
target/release/wirebench), one case after another. Each prints one row: the case, what was
tried, what happened, and `clean` or `NOT CLEAN`; the script exits 1 when a case is not clean.

Everything it makes is in a temporary folder of its own (device files with mknod there, never
the machine's; full disks are small tmpfs mounts it makes and removes, as root); every server
is one it starts on 127.0.0.1 and stops by its PID; every run is bounded in time.
"""

import json
import os
import resource
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/wirebench")
TMP = tempfile.mkdtemp(prefix="wb-matrix-")
HOME = os.path.join(TMP, "home")  # XDG_DATA_HOME of every command: the user's is never touched
os.makedirs(HOME)
ENV = dict(os.environ, XDG_DATA_HOME=HOME, NO_COLOR="1")
ROWS = []


def path(*names):
    return os.path.join(TMP, *names)


def run(args, limit=60, env=None, stdout=subprocess.PIPE, **kw):
    """Runs BIN ARGS; returns (exit code or -signal, stdout, stderr, seconds)."""
    started = time.monotonic()
    p = subprocess.Popen([BIN] + args, stdin=subprocess.DEVNULL, stdout=stdout,
                         stderr=subprocess.PIPE, env=env or ENV, **kw)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out or b"", err, time.monotonic() - started
    return p.returncode, out or b"", err, time.monotonic() - started


def one_line_2(code, err):
    """Bad input's answer: exit 2, one line, no panic."""
    text = err.decode(errors="replace")
    return code == 2 and len(text.strip().splitlines()) == 1 and "panick" not in text


def outside_fences(text):
    """Markdown `text` without its fenced blocks (where HTML shows as text)."""
    out, fence = [], None
    for line in text.splitlines():
        ticks = len(line) - len(line.lstrip("`"))
        if fence is not None:
            if ticks >= fence and line.strip() == "`" * ticks:
                fence = None
        elif ticks >= 3:
            fence = ticks
        else:
            out.append(line)
    return "\n".join(out)


def cpu_run(args, limit=60):
    """run(), with the CPU seconds (user + system) the command took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run(args, limit)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r + (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,)


def first(err):
    lines = err.decode(errors="replace").strip().splitlines()
    return (lines[0] if lines else "")[:110]


def case(name, tried):
    """Decorator: runs the case at once and records its row."""
    def wrap(f):
        try:
            happened, clean = f()
        except Exception as e:  # a case that cannot run is not clean
            happened, clean = f"the case failed to run: {e!r}", False
        ROWS.append((name, tried, happened, clean))
        print(f"{'clean' if clean else 'NOT CLEAN':9}  {name}: {tried}\n           -> {happened}",
              flush=True)
        return f
    return wrap


class Server:
    """`wirebench serve KIND ARGS` on 127.0.0.1, its address read from its first line."""

    def __init__(self, kind, *args):
        self.p = subprocess.Popen([BIN, "serve", kind, *args], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
        line = self.p.stdout.readline().decode().strip()
        host, port = line.split("://", 1)[1].rsplit(":", 1)
        self.addr = (host, int(port))
        self.url = line
        threading.Thread(target=lambda: self.p.stdout.read(), daemon=True).start()

    def stop(self):
        self.p.kill()
        self.p.wait()


def rss_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def watched(args, limit=30):
    """Runs BIN ARGS sampling its RSS every 10 ms: (code, stdout, stderr, seconds, peak kB)."""
    started = time.monotonic()
    p = subprocess.Popen([BIN] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ENV)
    box = {}
    t = threading.Thread(target=lambda: box.update(zip(("out", "err"), p.communicate())))
    t.start()
    peak = 0
    while p.poll() is None and time.monotonic() - started < limit:
        peak = max(peak, rss_kb(p.pid))
        time.sleep(0.01)
    if p.poll() is None:
        p.kill()
    t.join()
    return p.returncode, box.get("out", b""), box.get("err", b""), time.monotonic() - started, peak


def history(db):
    code, out, err, _ = run(["history", "--db", db, "--json"])
    if code != 0:
        return []
    return [(r.get("kind"), r.get("status")) for r in json.loads(out)["runs"]]


def mount_tmpfs(at, options):
    os.makedirs(at, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "wb-matrix", at],
                       capture_output=True)
    return r.returncode == 0


def fill(d, room):
    fd = os.open(os.path.join(d, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    os.close(fd)
    size = os.path.getsize(os.path.join(d, "filler"))
    os.truncate(os.path.join(d, "filler"), max(0, size - room))


def main():
    tcp = Server("tcp")
    url = tcp.url
    code, doc_text, err, _ = run(["run", url, "-n", "200", "--json", "-q", "--no-save"])
    assert code == 0, err
    doc = json.loads(doc_text)
    good = path("good.json")
    open(good, "w").write(doc_text.decode())

    # ---------------- Damage and security ----------------
    os.makedirs(path("out"))
    os.mknod(path("out", "full"), 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    os.mkfifo(path("out", "pipe"))
    os.symlink(path("out", "full"), path("out", "to-full"))
    os.symlink(path("out", "nothing"), path("out", "dangling"))

    def kinds():
        return {n: stat.S_IFMT(os.lstat(path("out", n)).st_mode) for n in os.listdir(path("out"))}

    @case("out-not-a-file", "--out FILE and report -o FILE onto a device (mknod 1,7), a link to "
          "it, a named pipe, a link to nothing")
    def _():
        before = kinds()
        codes = []
        for name in ["full", "to-full", "pipe", "dangling"]:
            p = path("out", name)
            for args in (["run", url, "-n", "1", "--no-save", "--out", p], ["report", good, "-o", p]):
                code, _, err, _ = run(args)
                codes.append(one_line_2(code, err))
        same = kinds() == before
        return (f"{sum(codes)} of {len(codes)} refused (exit 2, one line); the paths "
                f"{'untouched' if same else 'CHANGED'}", all(codes) and same)

    @case("out-named-link", "report -o LINK where the user named a link to a regular file")
    def _():
        open(path("real.html"), "w").write("old")
        os.symlink(path("real.html"), path("page.html"))
        code, _, err, _ = run(["report", good, "-o", path("page.html")])
        kept = os.path.islink(path("page.html"))
        written = open(path("real.html")).read().startswith("<!DOCTYPE html>")
        return (f"exit {code}; the link {'kept' if kept else 'REPLACED'}, its file "
                f"{'written' if written else 'NOT written'}", code == 0 and kept and written)

    @case("plan-launcher", "study of a plan with launcher = \"sh -c 'touch MARK'\" and shards = 2")
    def _():
        mark = path("MARK")
        plan = path("launcher.toml")
        open(plan, "w").write(f'[targets]\na = "{url}"\n[run]\nrequests = 10\nconnections = 2\nshards = 2\n'
                              f'launcher = "sh -c \'touch {mark}\'"\n')
        code, _, err, _ = run(["study", plan, "--no-save"])
        ran = os.path.exists(mark)
        return (f"exit {code}: {first(err)}; command run: {ran}",
                one_line_2(code, err) and "--allow-launcher" in err.decode() and not ran)

    @case("slurm-newline", "launch slurm -N 2 --sbatch $'--partition=a\\n#evil' -- run ...")
    def _():
        code, out, err, _ = run(["launch", "slurm", "-N", "2", "--sbatch", "--partition=a\nrm -rf /x",
                                 "--", "run", "tcp://198.18.0.2:7000", "-c", "2"])
        return (f"exit {code}: {first(err)}; script printed: {bool(out)}",
                one_line_2(code, err) and not out)

    @case("k8s-newline", "launch k8s --name $'a\\nb' --parallelism 2 --image wb -- run ...")
    def _():
        code, out, err, _ = run(["launch", "k8s", "--parallelism", "2", "--image", "wb", "--name",
                                 "a\nb", "--", "run", "tcp://198.18.0.2:7000", "-c", "2"])
        return (f"exit {code}: {first(err)}; manifest printed: {bool(out)}",
                one_line_2(code, err) and not out)

    root = path("root")
    os.makedirs(root)
    open(path("secret"), "w").write("OUTSIDE-SECRET")
    open(os.path.join(root, "name"), "w").write("inside")
    http = Server("http", "--dir", root, "-t", "1")

    def get(conn_file, sock, p):
        sock.sendall(f"GET {p} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        status = int(conn_file.readline().split()[1])
        length = 0
        while True:
            line = conn_file.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return status, conn_file.read(length)

    @case("dir-symlink-race", "serve http --dir: GET /name for 10 s while /name is swapped for a "
          "link to a file outside and back")
    def _():
        stop = threading.Event()
        swaps = [0]

        def swapper():
            while not stop.is_set():
                try:
                    os.remove(os.path.join(root, ".l"))
                except OSError:
                    pass
                os.symlink(path("secret"), os.path.join(root, ".l"))
                os.rename(os.path.join(root, ".l"), os.path.join(root, "name"))
                open(os.path.join(root, ".f"), "w").write("inside")
                os.rename(os.path.join(root, ".f"), os.path.join(root, "name"))
                swaps[0] += 1
        t = threading.Thread(target=swapper)
        t.start()
        s = socket.create_connection(http.addr)
        f = s.makefile("rb")
        counts = {"inside": 0, "refused": 0, "leaked": 0}
        end = time.monotonic() + 10
        while time.monotonic() < end:
            status, body = get(f, s, "/name")
            if b"SECRET" in body:
                counts["leaked"] += 1
            elif status == 200:
                counts["inside"] += 1
            else:
                counts["refused"] += 1
        stop.set()
        t.join()
        s.close()
        n = sum(counts.values())
        return (f"{counts['leaked']} of {n} requests answered from outside ({counts['inside']} "
                f"inside, {counts['refused']} 404; {swaps[0]} swaps)",
                counts["leaked"] == 0 and counts["refused"] > 0 and counts["inside"] > 0)

    @case("dir-oracle", "serve http --dir: /%2fetc%2fshadow, /%2fno%2fsuch, /../secret, "
          "/%2e%2e/..., a link out, against /no-such-file")
    def _():
        def once(p):
            s = socket.create_connection(http.addr)
            f = s.makefile("rb")
            r = get(f, s, p)
            s.close()
            return r
        missing = once("/no-such-file")
        outside = ["/%2fetc%2fshadow", "/%2fetc%2fpasswd", "/%2fno%2fsuch%2ffile", "/../secret",
                   "/%2e%2e/secret", "/%2e%2e/%2e%2e/%2e%2e/etc/shadow"]
        answers = {p: once(p) for p in outside}
        differ = [p for p, a in answers.items() if a != missing]
        return (f"missing file: {missing[0]}; {len(outside) - len(differ)} of {len(outside)} "
                f"outside paths answered the same" + (f"; differ: {differ}" if differ else ""),
                missing[0] == 404 and not differ)
    http.stop()

    @case("udp-amplification", "serve udp: a 32-byte datagram asking a 65,507-byte reply")
    def _():
        udp = Server("udp", "-t", "1")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        header = b"WBU1" + bytes([0]) + (65507).to_bytes(3, "big") + struct.pack(">QQQ", 1, 1, 1)
        s.sendto(header, udp.addr)
        got = len(s.recv(65536))
        udp.stop()
        return f"a {len(header)}-byte datagram got {got} bytes back (x{got / len(header):.0f})", got <= 10 * 32

    @case("delay-8760h", "serve http: GET /delay/8760h; 500 clients asking /delay/50s, then leaving")
    def _():
        srv = Server("http", "-t", "1")
        s = socket.create_connection(srv.addr)
        s.settimeout(5)
        s.sendall(b"GET /delay/8760h HTTP/1.1\r\nHost: x\r\n\r\n")
        year = s.recv(200).split(b"\r\n")[0].decode()
        s.close()
        fds = lambda: len(os.listdir(f"/proc/{srv.p.pid}/fd"))
        before = fds()
        socks = []
        for _ in range(500):
            c = socket.create_connection(srv.addr)
            c.sendall(b"GET /delay/50s HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(c)
        end = time.monotonic() + 10
        while fds() < before + 500 and time.monotonic() < end:
            time.sleep(0.05)
        held = fds()
        for c in socks:
            c.close()
        left = time.monotonic()
        while fds() > before and time.monotonic() - left < 20:
            time.sleep(0.05)
        after, took = fds(), time.monotonic() - left
        srv.stop()
        return (f"/delay/8760h: '{year}'; 500 waiting held {held - before} descriptors, "
                f"{after - before} left {took:.1f} s after the clients closed",
                year.startswith("HTTP/1.1 400") and after <= before)

    @case("csv-md-injection", "study --out of targets named +SUM(1+1) and @SUM(1), a <script> title, "
          "an <img> server string")
    def _():
        plan = path("inject.toml")
        open(plan, "w").write(
            f'title = "<script>alert(1)</script>"\n[targets]\n'
            f'"+SUM(1+1)" = {{ url = "{url}", server = "<img src=x onerror=alert(1)>" }}\n'
            f'"@SUM(1)" = {{ url = "{url}" }}\n[run]\nrequests = 20\n')
        out = path("inject-out")
        code, _, err, _ = run(["study", plan, "--out", out, "--no-save"])
        bad = []
        for n in os.listdir(out):
            if n.endswith(".csv"):
                for line in open(os.path.join(out, n)):
                    for cell in line.rstrip("\n").split(","):
                        c = cell.lstrip('"')
                        try:
                            float(c)
                            continue
                        except ValueError:
                            pass
                        if c[:1] in ("=", "+", "-", "@", "\t", "\r"):
                            bad.append(f"{n}: {c}")
        md = outside_fences(open(os.path.join(out, "report.md")).read())
        raw = [r for r in ("<script", "<img") if r in md]
        return (f"exit {code}; formula cells: {len(bad)}; raw HTML in report.md: {raw or 'none'}",
                code == 0 and not bad and not raw)

    @case("shard-tmp-folders", "run --shards 2 with TMPDIR set: the folders it makes")
    def _():
        tmp = path("tmpdir")
        os.makedirs(tmp)
        env = dict(ENV, TMPDIR=tmp)
        p = subprocess.Popen([BIN, "run", url, "-c", "2", "-d", "2s", "--shards", "2", "--no-save", "-q"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seen = {}
        while p.poll() is None:
            for n in os.listdir(tmp):
                try:
                    seen[n] = stat.S_IMODE(os.stat(os.path.join(tmp, n)).st_mode)
                except OSError:
                    pass
            time.sleep(0.02)
        left = os.listdir(tmp)
        predictable = [n for n in seen if n == f"wirebench-run-{p.pid}"]
        private = all(m & 0o077 == 0 for m in seen.values())
        return (f"exit {p.returncode}; folders seen {sorted(seen)} mode "
                f"{sorted({oct(m) for m in seen.values()})}; left after: {left}",
                p.returncode == 0 and seen and not predictable and private and not left)

    # ---------------- Unbounded memory and time ----------------
    def frame(kind, flags, stream, payload):
        return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload

    def hostile_h2(attack):
        lsock = socket.socket()
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(64)
        lsock.settimeout(0.2)
        stop = threading.Event()

        def conn(s):
            s.settimeout(1)
            try:
                s.sendall(frame(4, 0, 0, b""))
                if attack == "goaway-at-once":
                    s.sendall(frame(7, 0, 0, bytes(8)))
                    flood = b""
                elif attack == "goaway-then-hold":
                    seen = b""
                    while b"\x01\x05" not in seen and not stop.is_set():
                        try:
                            d = s.recv(4096)
                        except socket.timeout:
                            continue
                        if not d:
                            return
                        seen += d
                    s.sendall(frame(7, 0, 0, (0x7FFFFFFF).to_bytes(4, "big") + bytes(4)))
                    flood = b""
                elif attack == "pings":
                    flood = frame(6, 0, 0, b"floodgat") * 3000
                elif attack == "settings":
                    flood = frame(4, 0, 0, b"") * 7000
                else:  # continuation
                    s.sendall(frame(1, 0, 1, b"\x88"))
                    flood = frame(9, 0, 1, b"\x40" * 4096) * 16
                while not stop.is_set():
                    if flood:
                        s.sendall(flood)
                    else:
                        try:
                            if not s.recv(4096):
                                return
                        except socket.timeout:
                            pass
            except OSError:
                return
            finally:
                s.close()

        def accept():
            while not stop.is_set():
                try:
                    c, _ = lsock.accept()
                except socket.timeout:
                    continue
                threading.Thread(target=conn, args=(c,), daemon=True).start()
            lsock.close()
        threading.Thread(target=accept, daemon=True).start()
        return f"http://127.0.0.1:{lsock.getsockname()[1]}/", stop

    for attack in ["goaway-at-once", "goaway-then-hold", "pings", "settings", "continuation"]:
        @case(f"h2-{attack}", f"run URL --http2 -d 2s --timeout 500ms against a server sending {attack}")
        def _():
            h2url, stop = hostile_h2(attack)
            code, out, err, took, peak = watched(["run", h2url, "--http2", "-d", "2s", "--timeout",
                                                  "500ms", "--json", "-q", "--no-save"])
            stop.set()
            bounded = peak < 200_000 and took < 12
            if attack == "goaway-at-once":
                return (f"exit {code} in {took:.1f} s, peak RSS {peak / 1024:.0f} MB: {first(err)}",
                        bounded and code == 1 and len(err.strip().splitlines()) == 1)
            d = json.loads(out)
            errors = d["errors"]["total"]
            return (f"exit {code} in {took:.1f} s, peak RSS {peak / 1024:.0f} MB, ok {d['ok']}, "
                    f"errors {errors}", bounded and errors > 0)

    def damaged(name, change):
        d = json.loads(json.dumps(doc))
        change(d)
        p = path(f"{name}.json")
        open(p, "w").write(json.dumps(d))
        return p

    last = len(doc["series"]) - 1
    for name, field, change in [
        ("second-100000", "series[].second = 100000",
         lambda d: d["series"][last].__setitem__("second", 100000)),
        ("second-1e7", "series[].second = 10000000",
         lambda d: d["series"][last].__setitem__("second", 10_000_000)),
        ("second-2^63", "series[].second = 2^63", lambda d: d["series"][0].__setitem__("second", 1 << 63)),
        ("ops-1e308", "throughput.ops_per_s = 1e308",
         lambda d: d["throughput"].__setitem__("ops_per_s", 1e308)),
        ("duration-0", "duration_s = 0", lambda d: d.__setitem__("duration_s", 0)),
        ("ok-2^64-1", "ok = 2^64-1", lambda d: d.__setitem__("ok", (1 << 64) - 1)),
    ]:
        @case(f"document-{name}", f"merge good.json BAD.json and report BAD.json, BAD with {field}")
        def _():
            bad = damaged(name, change)
            code, _, err, took, peak = watched(["merge", good, bad])
            page = path(f"{name}.html")
            rcode, _, rerr, _ = run(["report", bad, "-o", page])
            far = name.startswith("second-1")  # a figure, refused by merge, fine for report
            report_ok = (rcode == 0) if far and name != "second-2^63" else one_line_2(rcode, rerr)
            return (f"merge: exit {code} in {took:.2f} s, peak RSS {peak / 1024:.0f} MB: "
                    f"{first(err)}; report: exit {rcode}",
                    one_line_2(code, err) and peak < 100_000 and report_ok)

    @case("deadline-one-connection", "run URL -n 1000000 --deadline 2s (one connection per worker)")
    def _():
        code, out, err, took = run(["run", url, "-n", "1000000", "--deadline", "2s", "--json", "-q",
                                    "--no-save"])
        d = json.loads(out)
        return (f"exit {code} in {took:.1f} s; ok {d['ok']} + errors {d['errors']['total']}",
                took < 6 and d["ok"] + d["errors"]["total"] == 1_000_000)

    @case("count-frozen-2s", "run URL -n 300000 against a server frozen (SIGSTOP) 2 s, then resumed")
    def _():
        srv = Server("tcp")
        db = path("frozen.db")
        p = subprocess.Popen([BIN, "run", srv.url, "-n", "300000", "--db", db, "-q"], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)
        os.kill(srv.p.pid, signal.SIGSTOP)
        time.sleep(2)
        os.kill(srv.p.pid, signal.SIGCONT)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        srv.stop()
        rows = history(db)
        return (f"exit {p.returncode}; printed {len(out)} bytes; history {rows}",
                p.returncode is not None and p.returncode >= 0 and out and len(rows) == 1)

    @case("count-udp-killed", "run udp://... -n 100000 --timeout 1s (its default --deadline), the "
          "UDP server killed after 1 s")
    def _():
        srv = Server("udp")
        db = path("udp.db")
        p = subprocess.Popen([BIN, "run", srv.url, "-n", "100000", "--timeout", "1s", "--db", db,
                              "-q"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1)
        srv.stop()
        started = time.monotonic()
        try:
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        rows = history(db)
        return (f"exit {p.returncode} {time.monotonic() - started:.1f} s after the kill; printed "
                f"{len(out)} bytes; history {rows}", p.returncode in (0, 1) and out and len(rows) == 1)

    for value in ["1e9", "1e7"]:
        @case(f"pipeline-{value}", f"run URL --pipeline {value} -d 1s")
        def _():
            code, _, err, took, peak = watched(["run", "http://127.0.0.1:9/", "--pipeline", value,
                                                "-d", "1s", "--no-save"])
            return (f"exit {code} in {took:.2f} s, peak RSS {peak / 1024:.0f} MB: {first(err)}",
                    one_line_2(code, err) and peak < 100_000)

    fifo = path("fifo")
    os.mkfifo(fifo)
    os.makedirs(path("set"))
    os.mkfifo(path("set", "manifest.tsv"))
    for args in [["run", url, "--payload", "@" + fifo],
                 ["run", "http://127.0.0.1:9/", "-X", "PUT", "--body", "@" + fifo],
                 ["run", "http://127.0.0.1:9/", "--targets", fifo],
                 ["run", "https://127.0.0.1:9/", "--cacert", fifo],
                 ["run", "http://127.0.0.1:9/{file}", "--manifest", path("set")],
                 ["study", fifo, "--dry-run"],
                 ["report", fifo, "-o", path("fifo-out.html")]]:
        @case("fifo", " ".join(a.replace(TMP, "$T") for a in args) + " (a named pipe, no writer)")
        def _():
            code, _, err, took = run(args, limit=30)
            return f"exit {code} in {took:.2f} s: {first(err)}", one_line_2(code, err) and took < 5

    @case("plan-100000-keys", "study PLAN --dry-run, PLAN with 100,000 unknown keys under [run]")
    def _():
        plan = path("keys.toml")
        open(plan, "w").write('[targets]\na = "tcp://127.0.0.1:9"\n[run]\n' +
                              "".join(f"k{i}=1\n" for i in range(100_000)))
        code, _, err, took, cpu = cpu_run(["study", plan, "--dry-run"])
        return (f"exit {code} in {took:.2f} s ({cpu:.2f} CPU-s): {first(err)}",
                one_line_2(code, err) and cpu < 2)

    for n in [1000, 10000]:
        @case(f"plan-{n}-targets", f"study PLAN --dry-run, a compare plan of {n:,} targets")
        def _():
            plan = path(f"targets{n}.toml")
            open(plan, "w").write('title = "many"\ncommand = "compare"\n[targets]\n' + "".join(
                f't{i} = "tcp://127.0.0.{1 + i % 200}:{1000 + i}"\n' for i in range(n)) +
                "[run]\nrequests = 10\n")
            code, out, err, took, cpu = cpu_run(["study", plan, "--dry-run"])
            listed = out.count(b"  run ")
            return (f"exit {code} in {took:.2f} s ({cpu:.2f} CPU-s); {listed:,} runs listed",
                    code == 0 and listed == 5 * n and cpu < n / 1000)

    # ---------------- Lost results and wrong exits ----------------
    @case("closed-stdout", "run URL -n 200 --db DB | head -1 (stdout closed)")
    def _():
        db = path("pipe.db")
        r, w = os.pipe()
        os.close(r)
        code, _, err, _ = run(["run", url, "-n", "200", "--db", db], stdout=w)
        os.close(w)
        rows = history(db)
        return (f"exit {code} (SIGPIPE as documented); history {rows}",
                code == -signal.SIGPIPE and rows == [("result", "ok")])

    @case("sighup-run", "run URL -d 60s --db DB, SIGHUP after 1.5 s")
    def _():
        db = path("hup.db")
        p = subprocess.Popen([BIN, "run", url, "-d", "60s", "--db", db, "-q"], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        p.send_signal(signal.SIGHUP)
        out, _ = p.communicate(timeout=60)
        rows = history(db)
        said = b"Interrupted (SIGHUP)" in out
        return (f"exit {p.returncode}; 'Interrupted (SIGHUP)' printed: {said}; history {rows}",
                p.returncode == 129 and said and rows == [("result", "interrupted")])

    @case("sighup-study-out", "study PLAN --out DIR (2 targets x 1 s), SIGHUP after the first save")
    def _():
        plan = path("hup.toml")
        open(plan, "w").write(f'title = "t"\n[targets]\na = "{url}"\nb = "{url}"\n[run]\nduration = "1s"\n')
        db, out_dir = path("hup-study.db"), path("hup-study")
        p = subprocess.Popen([BIN, "study", plan, "--out", out_dir, "--db", db], env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        end = time.monotonic() + 60
        while not history(db) and time.monotonic() < end:
            time.sleep(0.1)
        p.send_signal(signal.SIGHUP)
        p.communicate(timeout=60)
        md = os.path.join(out_dir, "report.md")
        partial = os.path.exists(md) and "**Interrupted**" in open(md).read()
        files = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
        return (f"exit {p.returncode}; --out holds {files}", p.returncode == 129 and partial)

    disk = path("disk")
    if mount_tmpfs(disk, "size=2m"):
        try:
            @case("full-disk-sweep", "run URL -c 1,2 -d 300ms --db DB on a full disk (tmpfs 2 MB)")
            def _():
                db = os.path.join(disk, "h.db")
                run(["run", url, "-n", "10", "-q", "--db", db])
                fill(disk, 40 << 10)
                code, out, err, _ = run(["run", url, "-c", "1,2", "-d", "300ms", "--db", db])
                errors = [l for l in err.decode().splitlines() if l.startswith("error:")]
                return (f"exit {code}; tables printed: {b'ops/s' in out}; {errors}",
                        code == 1 and len(errors) == 1 and "not saved" in errors[0])
        finally:
            subprocess.run(["umount", disk])
    else:
        ROWS.append(("full-disk-sweep", "tmpfs", "skipped: cannot mount", False))
    disk = path("disk2")
    if mount_tmpfs(disk, "size=1m,nr_inodes=12"):
        try:
            @case("files-make-full", "files make DIR --total 10M, then --total 64k --count 16, "
                  "on a 1 MB tmpfs of 12 inodes")
            def _():
                s = os.path.join(disk, "set")
                c1, _, e1, _ = run(["files", "make", s, "--total", "10M"])
                first_left = os.path.exists(s)
                c2, _, e2, _ = run(["files", "make", s, "--total", "64k", "--count", "16"])
                return (f"10M: exit {c1}: {first(e1)}; 16 files: exit {c2}: {first(e2)}; "
                        f"left: {first_left or os.path.exists(s)}",
                        one_line_2(c1, e1) and c2 == 1 and not first_left and not os.path.exists(s))
        finally:
            subprocess.run(["umount", disk])
    else:
        ROWS.append(("files-make-full", "tmpfs", "skipped: cannot mount", False))

    # ---------------- Panics, bad input that writes, nonsense ----------------
    def fresh():
        d = tempfile.mkdtemp(dir=TMP, prefix="xdg-")
        return d, dict(ENV, XDG_DATA_HOME=d)

    for args in [["run", url, "--shards", "2", "--launcher", ""],
                 ["history", "--since", "1e308d"],
                 ["run", b"tcp://127.0.0.1:1/\xff\xfe"],
                 ["history", "--db", b"/tmp/\xc3\x28.db"],
                 ["show", "zzzz"], ["show", ""], ["merge", good, "/dev/zero"], ["merge", "zzzz"],
                 ["export", "zzzz"], ["diff", "zzzz", "yyyy"], ["report", "zzzz"],
                 ["run", "tcp://127.0.0.1:1", "--fail-if", "errors>-1"],
                 ["run", "tcp://127.0.0.1:1", "--fail-if", "errors>=0"],
                 ["run", "tcp://127.0.0.1:1", "--fail-if", "p99>0ms"],
                 ["peak", "tcp://127.0.0.1:1", "--slo", "p99<=0ms"],
                 ["run", "tcp://127.0.0.1:1", "--rate", "1e308"],
                 ["run", "tcp://127.0.0.1:1", "--stages", "1s@1e300"]]:
        shown = " ".join(a.decode(errors="backslashreplace") if isinstance(a, bytes) else
                         (a or "''") for a in args).replace(TMP, "$T")

        @case("bad-input", shown)
        def _():
            d, env = fresh()
            code, _, err, _ = run(args, env=env)
            left = [os.path.join(r, f) for r, ds, fs in os.walk(d) for f in fs + ds]
            return (f"exit {code}: {first(err)}; written: {left or 'nothing'}",
                    one_line_2(code, err) and not left)

    tcp.stop()


if __name__ == "__main__":
    # COMMIT=... names the commit BIN was built from, when it is not the checkout's.
    commit = os.environ.get("COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# bench/safety_matrix.py {BIN} -- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, "
          f"commit {commit}, load average {os.getloadavg()[0]:.1f}")
    try:
        main()
    finally:
        subprocess.run(["umount", path("disk")], capture_output=True)
        subprocess.run(["umount", path("disk2")], capture_output=True)
        subprocess.run(["rm", "-rf", TMP])
    bad = [r for r in ROWS if not r[3]]
    print(f"# {len(ROWS) - len(bad)} of {len(ROWS)} cases clean" +
          ("" if not bad else "; not clean: " + ", ".join(r[0] for r in bad)))
    sys.exit(1 if bad else 0)
