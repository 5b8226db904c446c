#!/usr/bin/env bash
# The Flash effect (issue 20, "must show"): examples/flash.toml as written, three web servers
# (nginx, wirebench serve http, lighttpd) each in a 64 MiB memory cgroup (page cache included),
# the page cache dropped before every run, data sets of 16M, 32M, 128M and 256M of one SPECweb99
# file set requested by Zipf popularity. Needs root (cgroups, drop_caches), nginx and lighttpd.
# Writes bench/results/flash/ (report.md, report.html, study.json, CSVs); about 4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${WIREBENCH:-target/release/wirebench}
D=/tmp/flash
G=/sys/fs/cgroup/memory/flash # flash-nginx and flash-lighttpd: a group each
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rmdir "$G-nginx" "$G-lighttpd" 2>/dev/null || true
}
trap cleanup EXIT
rm -rf "$D" && mkdir -p "$D"
"$B" files make "$D/set" --total 256M --sizes specweb --seed 1
for s in nginx lighttpd; do mkdir -p "$G-$s" && echo 64M > "$G-$s/memory.limit_in_bytes"; done
printf 'daemon off; pid %s/nginx.pid; error_log %s/nginx.err; events {}\nhttp { access_log off; sendfile on; keepalive_requests 1000000; server { listen 127.0.0.1:8090; root %s/set; } }\n' "$D" "$D" "$D" > "$D/nginx.conf"
printf 'server.document-root = "%s/set"\nserver.bind = "127.0.0.1"\nserver.port = 8092\nserver.errorlog = "%s/lighttpd.err"\nserver.max-keep-alive-requests = 1000000\n' "$D" "$D" > "$D/lighttpd.conf"
sh -c "echo \$\$ > $G-nginx/cgroup.procs; exec nginx -c $D/nginx.conf" & PIDS+=($!)
sh -c "echo \$\$ > $G-lighttpd/cgroup.procs; exec lighttpd -D -f $D/lighttpd.conf" & PIDS+=($!)
"$B" serve http --listen 127.0.0.1:8091 --dir "$D/set" --memory-limit 64M > "$D/serve.out" & PIDS+=($!)
sleep 1
rm -rf bench/results/flash
"$B" study examples/flash.toml --out bench/results/flash --yes --no-save
