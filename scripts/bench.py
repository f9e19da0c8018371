#!/usr/bin/env python3
"""Benchmarks of draftline's release build, measured, not asserted.

  scripts/bench.py [--target-dir DIR] [--requests N] [--cold-starts N]

Builds the release binaries (fat LTO: minutes on 2 cores), then reports:
  - the size of a function binary;
  - cold start: exec of a function binary (Vercel mode, VERCEL_DEV_PORT) until
    its first successful tool call, against the embedded DynamoDB engine of a
    running `draftline serve`;
  - per-request latency (p50/p90/p99) of a read, a fresh draft and a replay
    over loopback HTTP, one request at a time (keep-alive);
  - the function process's peak resident memory (VmHWM) after the run;
  - fresh drafts of one branch under 16 and 64 concurrent clients (each
    with its own keep-alive connection and its own keys): answers by
    status, requests/s and p50/p99 — every answer must be 2xx.
Everything runs on 127.0.0.1; every loop is bounded.
"""
import argparse
import collections
import http.client
import threading
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def post(conn, path, token, body, headers=None):
    h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    h.update(headers or {})
    conn.request("POST", path, body=json.dumps(body), headers=h)
    r = conn.getresponse()
    return r.status, r.read()


def concurrent_drafts(port, tok, needed_by, clients, total):
    """`total` fresh drafts in one branch from `clients` connections at once."""
    statuses = collections.Counter()
    times = []
    lock = threading.Lock()
    per_client = total // clients

    def worker(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        for i in range(per_client):
            ref = f"c{clients}-{n}-{i}-{uuid.uuid4().hex[:8]}"
            body = {"vendor_code": "V-00231", "needed_by": needed_by, "client_ref": ref, "note": None,
                    "lines": [{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]}
            t = time.perf_counter()
            status, _ = post(conn, "/api/purchasing_create_po_draft", tok, body, {"Idempotency-Key": ref})
            mine.append((status, (time.perf_counter() - t) * 1000))
        with lock:
            for status, ms in mine:
                statuses[status] += 1
                times.append(ms)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    elapsed = time.perf_counter() - started
    non_2xx = sum(n for status, n in statuses.items() if not 200 <= status < 300)
    print(f"fresh drafts, {clients:2d} clients     n={len(times)} {len(times) / elapsed:6.0f} req/s  "
          f"p50 {pct(times, 50):.2f} ms  p99 {pct(times, 99):.2f} ms  statuses {dict(statuses)}  "
          f"non-2xx {non_2xx}")
    return non_2xx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")))
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--cold-starts", type=int, default=10)
    ap.add_argument("--concurrent-total", type=int, default=640,
                    help="fresh drafts per concurrency level (16 and 64 clients)")
    args = ap.parse_args()

    for package, binary in (("draftline-cli", "draftline"), ("draftline-functions", "inventory_get_stock")):
        subprocess.run(
            ["cargo", "build", "--release", "--locked", "-p", package, "--bin", binary],
            cwd=ROOT, check=True, env={**os.environ, "CARGO_TARGET_DIR": args.target_dir},
        )
    rel = os.path.join(args.target_dir, "release")
    fn = os.path.join(rel, "inventory_get_stock")
    print(f"function binary size: {os.path.getsize(fn) / 1e6:.2f} MB ({fn})")

    port = free_port()
    server = subprocess.Popen([os.path.join(rel, "draftline"), "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        endpoint = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = server.stdout.readline()
            m = re.match(r"dynamodb endpoint: (\S+)", line)
            if m:
                endpoint = m.group(1)
            if line.startswith("seeded") or line.startswith("demo data"):
                break
        assert endpoint, "the local server did not start"
        base = f"http://127.0.0.1:{port}"

        def token(user, resource):
            return subprocess.run([os.path.join(rel, "draftline"), "token", "--user", user, "--resource", resource],
                                  check=True, capture_output=True, text=True).stdout.strip()

        # Cold start of one function binary, Vercel mode.
        samples, hwm = [], None
        fn_resource = "https://bench.example.com"
        fn_token = token("buyer-sby", fn_resource)
        for _ in range(args.cold_starts):
            fport = free_port()
            env = {"PATH": os.environ.get("PATH", ""), "VERCEL_DEV_PORT": str(fport),
                   "DRAFTLINE_RESOURCE": fn_resource, "DRAFTLINE_ISSUER": "draftline-local",
                   "DRAFTLINE_JWT_SECRET": "draftline-local-development-secret-do-not-use-in-production",
                   "DRAFTLINE_DYNAMODB_ENDPOINT": endpoint, "DRAFTLINE_LOG": "warn"}
            started = time.perf_counter()
            proc = subprocess.Popen([fn], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ok = False
            while time.perf_counter() - started < 20:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", fport, timeout=5)
                    status, _ = post(c, "/api/inventory_get_stock", fn_token, {"item_code": "BRG-0042"})
                    ok = status == 200
                    break
                except OSError:
                    time.sleep(0.002)
            samples.append((time.perf_counter() - started) * 1000)
            if ok:
                c = http.client.HTTPConnection("127.0.0.1", fport, timeout=5)
                for _ in range(50):
                    post(c, "/api/inventory_get_stock", fn_token, {"item_code": "BRG-0042"})
                with open(f"/proc/{proc.pid}/status") as f:
                    hwm = next(l.split()[1] for l in f if l.startswith("VmHWM"))
            proc.terminate()
            proc.wait(timeout=10)
            assert ok, "the function did not answer"
        print(f"cold start to first 200 (n={len(samples)}): median {statistics.median(samples):.1f} ms, "
              f"max {max(samples):.1f} ms")
        print(f"function peak RSS after 51 calls: {int(hwm) / 1024:.1f} MiB")

        # Warm latency through the local server.
        tok = token("buyer-sby", base)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        needed_by = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 14 * 86400))
        def draft(ref):
            return {"vendor_code": "V-00231", "needed_by": needed_by, "client_ref": ref, "note": None,
                    "lines": [{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]}
        cases = {
            "read inventory_get_stock": lambda i: post(conn, "/api/inventory_get_stock", tok, {"item_code": "BRG-0042"}),
            "fresh draft": lambda i: post(conn, "/api/purchasing_create_po_draft", tok, draft(f"b-{i}"),
                                          {"Idempotency-Key": f"bench-{uuid.uuid4()}"}),
            "replay": lambda i: post(conn, "/api/purchasing_create_po_draft", tok, draft("b-replay"),
                                     {"Idempotency-Key": "bench-replay"}),
        }
        for name, call in cases.items():
            times = []
            for i in range(args.requests):
                t = time.perf_counter()
                status, body = call(i)
                times.append((time.perf_counter() - t) * 1000)
                assert status in (200, 201), (name, status, body[:200])
            print(f"{name:28s} n={len(times)} p50 {pct(times, 50):.2f} ms  p90 {pct(times, 90):.2f} ms  "
                  f"p99 {pct(times, 99):.2f} ms")

        # Fresh drafts of one branch, concurrently: numbering must not serialize them.
        failures = sum(concurrent_drafts(port, tok, needed_by, clients, args.concurrent_total)
                       for clients in (16, 64))
        if failures:
            print(f"FAILED: {failures} concurrent fresh drafts were not answered 2xx")
            return 1
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
