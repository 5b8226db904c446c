#!/usr/bin/env python3
"""HTTP/2 requests per client CPU-second: wirebench (framing layer), wirebench (h2 crate,
WIREBENCH_H2=crate) and h2load, against one nginx (1 worker, h2c, pinned to CPU 0), every client
pinned to CPU 1, 10 connections, -m 1/10/100, DUR s per run, ROUNDS rounds in a random order
per round (RMIT); per-round ratios wirebench/h2load, median and range.
Usage: bench/h2_per_cpu.py WIREBENCH_BINARY   (ROUNDS=3, DUR=3 seconds by default; prints the
table; the results of issue 21 item 1 are in bench/results/h2_cost.txt). Ad hoc: nginx at
/usr/sbin/nginx, h2load on the PATH, 127.0.0.1 only, every run bounded by -d/-D."""
import os, random, re, socket, subprocess, sys, tempfile, time, json, statistics
WB = sys.argv[1]
ROUNDS = int(os.environ.get("ROUNDS", "3")); DUR = int(os.environ.get("DUR", "3"))
d = tempfile.mkdtemp(prefix="wirebench-h2pc.")
os.makedirs(f"{d}/www"); os.makedirs(f"{d}/logs"); os.makedirs(f"{d}/tmp"); os.chmod(d, 0o755); os.chmod(f"{d}/www", 0o755)
open(f"{d}/www/small.bin", "w").write("x" * 100); os.chmod(f"{d}/www/small.bin", 0o644)
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
open(f"{d}/nginx.conf", "w").write(f"""worker_processes 1; daemon off; pid {d}/nginx.pid;
error_log {d}/logs/error.log warn; events {{ worker_connections 1024; }}
http {{ access_log off; keepalive_requests 1000000; keepalive_timeout 75s; http2_max_concurrent_streams 128;
client_body_temp_path {d}/tmp/b; proxy_temp_path {d}/tmp/p; fastcgi_temp_path {d}/tmp/f; uwsgi_temp_path {d}/tmp/u; scgi_temp_path {d}/tmp/s;
sendfile off; server {{ listen 127.0.0.1:{port} http2; root {d}/www; }} }}""")
ngx = subprocess.Popen(["taskset", "-c", "0", "/usr/sbin/nginx", "-c", f"{d}/nginx.conf", "-p", d, "-e", f"{d}/logs/error.log"])
time.sleep(0.5)
url = f"http://127.0.0.1:{port}/small.bin"
def run(tool, m):
    env = dict(os.environ)
    if tool.startswith("wirebench"):
        cmd = [WB, "run", "--http2", url, "-c", "10", "--pipeline", str(m), "-d", f"{DUR}s", "--threads", "1", "--json", "-q", "--no-save"]
        if tool == "wirebench-crate": env["WIREBENCH_H2"] = "crate"
    else:
        cmd = ["h2load", "-c10", f"-m{m}", "-t1", "-D", str(DUR), url]
    p = subprocess.Popen(["taskset", "-c", "1"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = p.stdout.read().decode(); _, _, ru = os.wait4(p.pid, 0)
    cpu = ru.ru_utime + ru.ru_stime
    ok = json.loads(out)["ok"] if tool.startswith("wirebench") else int(re.search(r"requests: .* (\d+) succeeded", out).group(1))
    return ok / cpu, ok / DUR
tools = ["wirebench", "wirebench-crate", "h2load"]
res = {}
try:
    for r in range(ROUNDS + 1):  # round 0: warm-up, discarded
        jobs = [(t, m) for t in tools for m in (1, 10, 100)]
        random.shuffle(jobs)
        for t, m in jobs:
            v = run(t, m)
            if r: res.setdefault((t, m), []).append(v)
            print(f"round {r} {t:16} m{m:<3} {v[0]:10.0f} req/CPU-s {v[1]:9.0f} req/s", flush=True)
finally:
    ngx.terminate(); ngx.wait()
print("\nper client CPU-second, median over rounds (range); ratio per round to h2load, median (range)")
for m in (1, 10, 100):
    h = [x[0] for x in res[("h2load", m)]]
    for t in tools:
        v = [x[0] for x in res[(t, m)]]
        ratio = [a / b for a, b in zip(v, h)]
        print(f"m{m:<3} {t:16} {statistics.median(v):9.0f} ({min(v):.0f}-{max(v):.0f})   x h2load {statistics.median(ratio):.2f} ({min(ratio):.2f}-{max(ratio):.2f})")
