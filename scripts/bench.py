#!/usr/bin/env python3
"""Benchmarks of draftline's release build, measured, not asserted.

  scripts/bench.py [--target-dir DIR | --bin-dir DIR] [--load-calls N] [--connections N] [--backends] ...

Builds the release binaries (fat LTO: minutes on 2 cores) unless --bin-dir
names a directory holding `draftline`, `inventory_get_stock` and
`purchasing_create_po_draft` already built, then reports:
  - the size of a function binary, and checks it against --max-size-mb
    (8 MB; the one check of this script that fails it);
  - cold start: exec of a function binary (Vercel mode, VERCEL_DEV_PORT) until
    its first successful tool call, against the embedded DynamoDB engine of a
    running `draftline serve`; the function's resident memory at rest after
    51 calls (VmRSS) and its peak (VmHWM);
  - CPU per call: the function binaries (`inventory_get_stock` for a read,
    `purchasing_create_po_draft` for a replay and a fresh draft), each in its
    own process in Vercel mode, the DynamoDB engine in a `draftline serve`
    process of its own for each case, under a fixed load of --connections
    keep-alive connections (16) that each send their next request as soon
    as the last is answered, or (--rate R) at a fixed offered rate.
    CPU per call = (utime + stime of the function process, all threads, from
    /proc/<pid>/stat) / calls, after a warm-up; beside it requests/s and
    p50/p99 under that load (latency and req/s depend on what else runs on
    the machine; CPU per call much less);
  - the floor of one DynamoDB request: CPU per `GetItem` and per `Query`
    of draftline's DynamoDB client alone (`shared/dynamo/examples/request_floor.rs`,
    one runtime thread, the same concurrency), against the same engine;
  - per-request latency (p50/p90/p99) of a read, a fresh draft and a replay
    through the local server, one request at a time (keep-alive);
  - fresh drafts of one branch under 16 and 64 concurrent clients (each
    with its own keep-alive connection and its own keys): answers by
    status, requests/s and p50/p99 — every answer must be 2xx;
  - with --backends (off by default: the first run installs trytond into
    ~/.cache, ~2 min): p50/p99 of a read, a fresh draft and a replay, one
    request at a time (keep-alive), through `draftline serve` on the
    built-in ERP and through `draftline serve --erp tryton`, with the Tryton
    REST requests per call counted in trytond's access log
    (<data>/tryton/trytond.log, one werkzeug line per request);
  - with --only webhooks: on `draftline serve` (sweeping every 250 ms, then
    50 ms), p50/p99 from each draft's event (its timestamp, set just before
    the draft's transaction commits) to its webhook's receipt at a local
    endpoint, for --webhooks drafts made one at a time at random phases of
    the sweep; then a backlog of --webhook-backlog events delivered by one
    sweeper (`draftline notify sweep --until-empty`, a process of its own):
    events per second, and its CPU per delivery.
With --otlp, the function processes export every call's spans and the
metrics to a local OTLP/HTTP receiver, a Python process of its own
(binaries built with the default feature `otlp`), for CPU per call with
export on against the same binaries with no endpoint; the bench's other
OTEL_* variables (OTEL_METRICS_EXPORTER=none, ...) are passed on.
The bench drafts the same items again and again, so it turns the
near-duplicate question off (DRAFTLINE_NEAR_DUPLICATE_HOURS=0: every draft
would ask; off, no near-duplicate marker is read or written; with it on a
fresh draft makes the same three requests, see tests/api/drafts.rs). CPU
per call runs the read, the replay and a fresh draft under a tenant policy
that limits nothing (`draftline policy set`: the demo's seeded policy would
refuse the load's drafts by its day limit), or with --no-policy under none
at all (for A/B against builds from before policies), then a fresh draft
again under a policy whose run, day and rate limits count every draft (far
above the load), and under one shaped like the demo's (a run's drafts and
value and the person's day's value count each draft, no rate; amounts raised
above the load, a new run every 40 drafts). With --stages, each CPU case
also prints the median and p90 of each stage of its calls (auth,
validation, idempotency, erp, audit),
from the functions' log lines. Functions log at their production default
(one JSON line per call, to /dev/null here, or to /tmp with --stages).
The floor (`request_floor`) also puts new items alone and in transactions
of 8 (the shared audit write's two shapes), and gives each request's p50
and p99 under the load and alone. With --sdk-options N it then builds one
client per SDK option, each differing from production's in that option
alone, and measures GetItem and PutItem CPU per request in N interleaved
rounds (median and difference from production's).
With --callgrind DIR, each CPU case runs its function under valgrind's
callgrind, instrumented from the end of the warm-up to the end of the load,
and reports user-space instructions per call: the same binary and load give
the same count within a fraction of a percent, where CPU time moves by tens
(callgrind_annotate on the dumps in DIR says where they go). One caveat:
valgrind hides SHA-NI, so the SigV4 hashes run the portable code, a bigger
share of the count than of the time natively (docs/benchmarks.md).
Everything runs on 127.0.0.1; every loop is bounded.
"""
import argparse
import atexit
import collections
import glob
import http.client
import json
import os
import re
import selectors
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "draftline-local-development-secret-do-not-use-in-production"
# The functions' resource (token audience): a loopback URL, the only kind the
# public development secret above is accepted for.
BENCH_RESOURCE = "http://127.0.0.1:8443"
BINARIES = ("draftline", "inventory_get_stock", "purchasing_create_po_draft")
CLK_TCK = os.sysconf("SC_CLK_TCK")
FUNCTION_LOG = None  # DRAFTLINE_LOG of the function processes; None: their default
CASES = None  # --cases: the CPU cases to run (read, replay, fresh, policed, demo); None: all
STAGES = False  # --stages: keep the function processes' log lines and report where a call's time goes
OTLP_ENDPOINT = None  # OTEL_EXPORTER_OTLP_ENDPOINT of the function processes (--otlp); None: no export
RATE = None  # --rate: requests per second offered in each CPU case's measured calls; None: each connection sends on at once
CALLGRIND = None  # --callgrind: where the function processes' callgrind dumps go; None: not under valgrind


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


def cpu_seconds(pid):
    """utime + stime of every thread of `pid` so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        # The command name may hold spaces: the fields after it start after ')'.
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory(pid):
    with open(f"/proc/{pid}/status") as f:
        values = dict(line.split(":", 1) for line in f if ":" in line)
    kib = lambda name: int(values[name].split()[0])  # noqa: E731
    return kib("VmRSS"), kib("VmHWM")


def raw_request(path, token, body, headers=()):
    payload = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {token}",
            "Content-Type: application/json", f"Content-Length: {len(payload)}"]
    head += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + payload


class Load:
    """`connections` keep-alive HTTP/1.1 connections driven from one thread:
    each sends its next request as soon as its last one is answered (or, at
    a fixed rate, when the next one is due), until `calls` requests have
    been answered. `request(conn, i)` builds the bytes
    of the i-th request on connection `conn`. Far cheaper per request than
    http.client in threads, so the client is not what limits the server."""

    def __init__(self, port, connections, request):
        self.port, self.request = port, request
        self.selector = selectors.DefaultSelector()
        self.issued = 0
        self.socks = []
        for n in range(connections):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.setblocking(False)
            self.socks.append(s)

    def close(self):
        for s in self.socks:
            s.close()
        self.selector.close()

    def run(self, calls, deadline_s=600, rate=None):
        """Sends `calls` requests and reads their answers. With `rate`
        (requests per second), the k-th request is sent no sooner than
        k / rate seconds after the start, on the first connection free
        then: an offered load below what the server and its engine can
        take, the same for every case measured, so that none is measured
        at a throughput (and a batching of its wake-ups) of its own."""
        statuses = collections.Counter()
        latencies = []
        state = {}
        issued = 0
        free = collections.deque()

        def send(n, s):
            nonlocal issued
            data = self.request(n, self.issued)
            issued += 1
            self.issued += 1
            s.setblocking(True)
            s.sendall(data)
            s.setblocking(False)
            state[n] = [time.perf_counter(), b""]

        for n, s in enumerate(self.socks):
            self.selector.register(s, selectors.EVENT_READ, n)
            free.append(n)
        started = time.perf_counter()
        done = 0
        while done < calls:
            now = time.perf_counter()
            if now - started > deadline_s:
                raise RuntimeError("load did not finish in time")
            while free and issued < calls and (rate is None or now >= started + issued / rate):
                n = free.popleft()
                send(n, self.socks[n])
            timeout = 10
            if rate is not None and free and issued < calls:
                timeout = max(0.0, started + issued / rate - time.perf_counter())
            for key, _ in self.selector.select(timeout=timeout):
                n, s = key.data, key.fileobj
                try:
                    chunk = s.recv(65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise RuntimeError("the server closed a keep-alive connection")
                state[n][1] += chunk
                buf = state[n][1]
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    continue
                head = buf[:end].decode("latin-1")
                length = int(re.search(r"(?im)^content-length:\s*(\d+)", head).group(1))
                if len(buf) < end + 4 + length:
                    continue
                latencies.append((time.perf_counter() - state[n][0]) * 1000)
                statuses[int(head.split(" ", 2)[1])] += 1
                done += 1
                if rate is None and issued < calls:
                    send(n, s)
                else:
                    free.append(n)
        for s in self.socks:
            self.selector.unregister(s)
        elapsed = time.perf_counter() - started
        return statuses, latencies, elapsed


OTLP_RECEIVER = r"""
import http.server, threading
counts = [0, 0]
lock = threading.Lock()
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            counts[0] += 1
            counts[1] += len(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_GET(self):
        with lock:
            answer = f"{counts[0]} {counts[1]}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class OtlpSink:
    """A local OTLP/HTTP receiver for --otlp: answers every POST with an
    empty protobuf export response (200) and counts what it received. It
    is a process of its own (as a collector is), so neither its CPU nor
    its interpreter lock is shared with the function or the load."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", OTLP_RECEIVER], stdout=subprocess.PIPE, text=True)
        port = int(self.proc.stdout.readline())
        self.endpoint = f"http://127.0.0.1:{port}"
        atexit.register(self.stop)

    def counts(self):
        """(export requests, bytes) received so far."""
        with urllib.request.urlopen(self.endpoint + "/stats", timeout=10) as answer:
            requests, size = answer.read().decode().split()
        return int(requests), int(size)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def spawn_function(binary, endpoint, resource, extra_env=None):
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "VERCEL_DEV_PORT": str(port),
           "DRAFTLINE_RESOURCE": resource, "DRAFTLINE_ISSUER": "draftline-local",
           "DRAFTLINE_JWT_SECRET": SECRET, "DRAFTLINE_DYNAMODB_ENDPOINT": endpoint,
           "DRAFTLINE_NEAR_DUPLICATE_HOURS": "0"}
    if FUNCTION_LOG:
        env["DRAFTLINE_LOG"] = FUNCTION_LOG
    if OTLP_ENDPOINT:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = OTLP_ENDPOINT
        # The other OTEL_* settings of the bench's own environment (say,
        # OTEL_METRICS_EXPORTER=none to measure spans alone).
        env.update({k: v for k, v in os.environ.items() if k.startswith("OTEL_") and k != "OTEL_EXPORTER_OTLP_ENDPOINT"})
    # How long a warm function keeps a tenant's policy: 0 reads and parses
    # it on every draft (a cold instance's first draft, every time).
    if "DRAFTLINE_POLICY_CACHE_SECONDS" in os.environ:
        env["DRAFTLINE_POLICY_CACHE_SECONDS"] = os.environ["DRAFTLINE_POLICY_CACHE_SECONDS"]
    env.update(extra_env or {})
    log = open(f"/tmp/draftline-bench-{port}.log", "w+") if STAGES else subprocess.DEVNULL
    command = [binary]
    if CALLGRIND:
        # Instructions, not seconds: counted from the measured calls only
        # (instrumentation is switched on after the warm-up).
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   f"--callgrind-out-file={CALLGRIND}/callgrind.out.{port}", binary]
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.DEVNULL)
    proc.log = log if STAGES else None
    proc.callgrind = f"{CALLGRIND}/callgrind.out.{port}" if CALLGRIND else None
    return proc, port


def stage_breakdown(log, start):
    """Medians and p90 of the stage times of the calls logged in `log` after byte `start`."""
    log.flush()
    log.seek(start)
    stages = collections.defaultdict(list)
    for line in log:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        fields = record.get("fields", record)
        if fields.get("message") != "tool call":
            continue
        for name in ("duration_ms", "auth_ms", "validation_ms", "idempotency_ms", "erp_ms", "audit_ms"):
            if isinstance(fields.get(name), (int, float)):
                stages[name].append(fields[name])
    return "  ".join(f"{name[:-3]} {statistics.median(v):.2f}/{pct(v, 90):.2f}"
                     for name, v in stages.items() if v)


def wait_for_port(port, proc, limit_s=20):
    started = time.perf_counter()
    while time.perf_counter() - started < limit_s:
        if proc.poll() is not None:
            raise RuntimeError(f"the function exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.002)
    raise RuntimeError("the function did not listen")


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def cpu_per_call(bins, fn_token, needed_by, connections, calls, warmup, no_policy=False):
    """CPU per call of the function process under a fixed concurrent load,
    each case against an engine of its own."""
    resource = BENCH_RESOURCE
    read_body = {"item_code": "BRG-0042"}

    def draft(ref):
        return {"vendor_code": "V-00231", "needed_by": needed_by, "client_ref": ref, "note": None,
                "lines": [{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]}

    run_id = uuid.uuid4().hex[:8]
    read = raw_request("/api/inventory_get_stock", fn_token, read_body)
    replays = [raw_request("/api/purchasing_create_po_draft", fn_token, draft(f"replay-{run_id}-{n}"),
                           [("Idempotency-Key", f"replay-{run_id}-{n}")]) for n in range(connections)]

    def fresh_in_run(case, drafts_per_run=None):
        # Each case its own keys (a load numbers its calls from 0): a key
        # of an earlier case would be a replay. One run per connection, or
        # a new one after every `drafts_per_run` drafts of that connection
        # (`i` counts the calls of every connection).
        sent = collections.Counter()

        def request(n, i):
            ref = f"{case}-{run_id}-{n}-{i}"
            run = f"bench-{case}-{run_id}-{n}" + (f"-{sent[n] // drafts_per_run}" if drafts_per_run else "")
            sent[n] += 1
            return raw_request("/api/purchasing_create_po_draft", fn_token, draft(ref),
                               [("Idempotency-Key", ref), ("X-Agent-Run-Id", run)])
        return request

    # The first three cases run under a policy that limits nothing (the
    # same requests and work as none); the last under one whose run, day
    # and rate limits all count every draft (set far above the load, so
    # none refuses): its counters ride in the draft's own transaction.
    # With no_policy, the first three run with no policy at all (the demo's
    # removed), as builds from before tenant policies did; the last runs
    # only if the build has policies (`draftline policy`).
    if no_policy:
        first = delete_policy
        has_policies = subprocess.run([os.path.join(bins, "draftline"), "policy", "--help"],
                                      capture_output=True).returncode == 0
    else:
        first = lambda endpoint: set_policy(bins, endpoint, POLICY_WITHOUT_LIMITS)
        has_policies = True
    cases = [
        ("read", "inventory_get_stock", lambda n, i: read, (200,), first),
        ("replay", "purchasing_create_po_draft", lambda n, i: replays[n], (200,), first),
        ("fresh draft", "purchasing_create_po_draft", fresh_in_run("fresh"), (201,), first),
    ]
    if has_policies:
        cases.append(("fresh draft, policy in force", "purchasing_create_po_draft", fresh_in_run("policed"),
                      (201,), lambda endpoint: set_policy(bins, endpoint, POLICY_COUNTING_EVERYTHING)))
        # Its runs hold 40 drafts each: the demo lets a run draft 50.
        cases.append(("fresh draft, demo's policy", "purchasing_create_po_draft", fresh_in_run("demo", 40),
                      (201,), lambda endpoint: set_policy(bins, endpoint, POLICY_SHAPED_LIKE_THE_DEMO)))
    if CASES:
        short = {"read": "read", "replay": "replay", "fresh draft": "fresh", "fresh draft, policy in force": "policed",
                 "fresh draft, demo's policy": "demo"}
        cases = [case for case in cases if short[case[0]] in CASES]
    results = {}
    for name, binary, request, ok, policy in cases:
        # Each case on an engine of its own, seeded afresh: the embedded
        # engine's work per transaction grows with the transactions of the
        # last ten minutes (it keeps every ClientRequestToken that long and
        # sweeps them all on each one), so a case run after another's
        # thousands of drafts would pay for them.
        engine, _, endpoint = start_engine(bins)
        try:
            policy(endpoint)
            proc, port = spawn_function(os.path.join(bins, binary), endpoint, resource)
        except BaseException:
            stop(engine)
            raise
        try:
            wait_for_port(port, proc, 180 if CALLGRIND else 20)
            load = Load(port, connections, request)
            try:
                # Warm-up: connections to DynamoDB, caches, every replay's key created.
                statuses, _, _ = load.run(max(warmup, connections))
                logged = proc.log.seek(0, os.SEEK_END) if proc.log else 0
                if proc.callgrind:
                    callgrind_control(proc.pid, "--instr=on")
                before = cpu_seconds(proc.pid)
                statuses, latencies, elapsed = load.run(calls, rate=RATE)
                used = cpu_seconds(proc.pid) - before
                if proc.callgrind:
                    callgrind_control(proc.pid, "--instr=off")
                    callgrind_control(proc.pid, "--dump")
            finally:
                load.close()
            if proc.log:
                print(f"  {name}: stage ms, median/p90: {stage_breakdown(proc.log, logged)}")
            bad = {s: n for s, n in statuses.items() if s not in ok}
            results[name] = used / calls * 1e6
            print(f"{name:28s} {binary:27s} n={calls} c={connections}  CPU {used / calls * 1e6:6.0f} µs/call  "
                  f"{calls / elapsed:6.0f} req/s  p50 {pct(latencies, 50):.2f} ms  p99 {pct(latencies, 99):.2f} ms"
                  + (f"  UNEXPECTED {bad}" if bad else ""))
            if bad:
                raise RuntimeError(f"{name}: unexpected statuses {bad}")
        finally:
            stop(proc)
            stop(engine)
        if proc.callgrind:
            instructions = callgrind_instructions(proc.callgrind)
            print(f"{name:28s} callgrind: {instructions / calls:,.0f} instructions/call in the function process "
                  f"(user space; {proc.callgrind}*)")
    return results


def callgrind_control(pid, command):
    """Sends a callgrind process a command and waits for it to be done."""
    subprocess.run(["callgrind_control", command, str(pid)], check=True, capture_output=True, timeout=120)


def callgrind_instructions(out):
    """The instructions of every dump file of a callgrind run (the one asked for, and the one at exit)."""
    total = 0
    for path in [out] + glob.glob(out + ".*"):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                if line.startswith("totals:"):
                    total += int(line.split()[1])
    return total


# A policy of the demo tenant that limits nothing, and one whose every
# limit counts each draft (far above the bench's load: none refuses).
POLICY_WITHOUT_LIMITS = {"version": None, "mode": "enforce", "time_zone": "+07:00", "limits": {}, "branches": None}
POLICY_COUNTING_EVERYTHING = {
    "version": None, "mode": "enforce", "time_zone": "+07:00", "branches": None,
    "limits": {
        "per_run": {"max_drafts": 1_000_000, "max_value": [{"currency": "IDR", "amount": "99999999999999.00"}]},
        "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "99999999999999.00"}]},
        "per_tool_per_person": {"calls_per_minute": 100_000},
    },
}


# The demo tenant's seeded policy (shared/erp/demo/demo.json), its amounts
# raised above the load: for the bench's buyer in SBY-01, a run's drafts
# (at most 50) and value and the person's day's value count each draft (two
# counters in the draft's transaction, the run's read with its key), and no
# rate.
POLICY_SHAPED_LIKE_THE_DEMO = {
    "version": None, "mode": "enforce", "time_zone": "+07:00",
    "limits": {
        "per_run": {"max_drafts": 50, "max_value": [{"currency": "IDR", "amount": "99999999999999.00"}]},
        "per_person_per_day": {"max_value": [{"currency": "IDR", "amount": "99999999999999.00"}]},
        "per_tool_per_person": None,
        "counterparties": {"rule": "all", "vendors": None, "customers": None},
        "near_duplicate_hours": None,
    },
    "branches": [{"branch_id": "SBY-01", "limits": {"per_run": {
        "max_drafts": None, "max_value": [{"currency": "IDR", "amount": "99999999999999.00"}]}}}],
}


def delete_policy(endpoint):
    """Removes the demo tenant's policy from the bench's table, with its versions: no policy at all."""
    conn = http.client.HTTPConnection(endpoint.split("//", 1)[1], timeout=10)

    def request(operation, body):
        # The engine checks that a request is signed, not the signature.
        signed = {"Authorization": "AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, "
                                   "SignedHeaders=host;x-amz-date, Signature=00",
                  "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                  "X-Amz-Target": f"DynamoDB_20120810.{operation}", "Content-Type": "application/x-amz-json-1.0"}
        conn.request("POST", "/", json.dumps({"TableName": "draftline", **body}), signed)
        answer = conn.getresponse()
        text = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"the policy was not removed: {operation} {answer.status} {text[:200]!r}")
        return json.loads(text)

    try:
        # Every item of the policy's partition: the one in force and its
        # versions (a stored version with none in force is refused by `set`).
        found = request("Query", {"KeyConditionExpression": "pk = :pk",
                                  "ExpressionAttributeValues": {":pk": {"S": "T#demo#POLICY"}},
                                  "ProjectionExpression": "pk, sk"})
        for item in found.get("Items", []):
            request("DeleteItem", {"Key": {"pk": item["pk"], "sk": item["sk"]}})
    finally:
        conn.close()


def set_policy(bins, endpoint, policy):
    """`draftline policy set` of the demo tenant's policy against the bench's table."""
    path = os.path.join("/tmp", f"draftline-bench-policy-{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(policy, f)
    try:
        subprocess.run([os.path.join(bins, "draftline"), "policy", "set", path, "--tenant", "demo", "--by", "bench"],
                       check=True, capture_output=True, text=True,
                       env={**os.environ, "DRAFTLINE_DYNAMODB_ENDPOINT": endpoint, "DRAFTLINE_TABLE": "draftline"})
    finally:
        os.remove(path)


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


TRYTON_REST = re.compile(r'"(?:GET|POST|PUT|PATCH|DELETE) /([^/ ]+)/rest/')


def tryton_requests(log_path, database):
    """REST requests trytond has logged so far for `database` (werkzeug's
    access log, one line per request, in the trytond.log the CLI's local
    trytond writes). Waits briefly so the last lines are flushed."""
    time.sleep(0.3)
    try:
        with open(log_path, errors="replace") as f:
            return sum(1 for line in f if (m := TRYTON_REST.search(line)) and m.group(1) == database)
    except FileNotFoundError:
        return None


def start_engine(bins, env_extra=None):
    """`draftline serve` of the built-in backend on its embedded engine,
    seeded with the demo's data; returns (process, port, DynamoDB endpoint)."""
    port = free_port()
    server = subprocess.Popen([os.path.join(bins, "draftline"), "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env={**os.environ, "DRAFTLINE_NEAR_DUPLICATE_HOURS": "0", "DRAFTLINE_LOG": "warn",
                                   **(env_extra or {})})
    endpoint = None
    deadline = time.time() + 60
    while time.time() < deadline:
        line = server.stdout.readline()
        m = re.match(r"dynamodb endpoint: (\S+)", line)
        if m:
            endpoint = m.group(1)
        if line.startswith("seeded") or line.startswith("demo data"):
            break
    if not endpoint:
        stop(server)
        raise RuntimeError("the local server did not start")
    return server, port, endpoint


class HookReceiver:
    """A webhook endpoint on 127.0.0.1 (threads of this process): keeps, for
    each POST, when it arrived, its webhook-id and its event's timestamp,
    and answers 204."""

    def __init__(self):
        import http.server
        self.lock = threading.Lock()
        self.received = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrived = time.time()
                with receiver.lock:
                    receiver.received.append((arrived, self.headers.get("webhook-id"), json.loads(body)["timestamp"]))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self, n, limit_s=120):
        """The first `n` receipts, waiting at most `limit_s`; then forgets them all."""
        deadline = time.time() + limit_s
        while time.time() < deadline:
            with self.lock:
                if len(self.received) >= n:
                    got, self.received = self.received[:n], []
                    return got
            time.sleep(0.01)
        raise RuntimeError(f"the endpoint received {len(self.received)} webhooks, not {n}")


def event_time(timestamp):
    """Epoch seconds of an event's RFC 3339 `timestamp`."""
    import datetime
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def webhooks(bins, needed_by, n, backlog):
    """On `draftline serve`: p50/p99 from a draft's event to its webhook's
    receipt (drafts one at a time, at random phases of the sweep), then
    the events per second one sweeper delivers from a backlog, and its CPU
    per delivery (`draftline notify sweep --until-empty`, a process of its
    own, against the server's engine)."""
    hooks = HookReceiver()
    hooks_file = os.path.join("/tmp", f"draftline-bench-hooks-{os.getpid()}.json")
    with open(hooks_file, "w") as f:
        json.dump({"version": None, "endpoints": [{"id": "bench", "url": hooks.url, "events": ["draft.created"],
                                                   "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]}]}, f)
    loopback = {"DRAFTLINE_WEBHOOKS_ALLOW_LOOPBACK": "true"}

    def serving(every_ms):
        server, port, endpoint = start_engine(bins, {**loopback, "DRAFTLINE_SWEEP_MILLISECONDS": str(every_ms)})
        set_policy(bins, endpoint, POLICY_WITHOUT_LIMITS)
        subprocess.run([os.path.join(bins, "draftline"), "notify", "set", hooks_file], check=True, capture_output=True,
                       env={**os.environ, **loopback, "DRAFTLINE_DYNAMODB_ENDPOINT": endpoint,
                            "DRAFTLINE_TABLE": "draftline"})
        tok = subprocess.run([os.path.join(bins, "draftline"), "token", "--user", "buyer-sby", "--resource",
                              f"http://127.0.0.1:{port}"], check=True, capture_output=True, text=True).stdout.strip()
        return server, port, endpoint, tok

    def draft(ref):
        return {"vendor_code": "V-00231", "needed_by": needed_by, "client_ref": ref, "note": None,
                "lines": [{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]}

    try:
        import random
        for every_ms in (250, 50):
            server, port, _, tok = serving(every_ms)
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                for i in range(n):
                    ref = f"hook-{every_ms}-{i}-{uuid.uuid4().hex[:8]}"
                    status, body = post(conn, "/api/purchasing_create_po_draft", tok, draft(ref),
                                        {"Idempotency-Key": ref})
                    assert status == 201, (status, body[:200])
                    time.sleep(random.uniform(0, 0.1))
                got = hooks.take(n)
                ms = [(arrived - event_time(at)) * 1000 for arrived, _, at in got]
                assert len({hook_id for _, hook_id, _ in got}) == n, "one webhook per event"
                print(f"webhook latency, sweep every {every_ms:3d} ms  n={n} event -> receipt p50 {pct(ms, 50):.1f} ms"
                      f"  p99 {pct(ms, 99):.1f} ms")
            finally:
                stop(server)

        # A backlog, swept by one process (the server sweeps nothing itself).
        server, port, endpoint, tok = serving("off")
        try:
            threads, lock, statuses = [], threading.Lock(), collections.Counter()

            def worker(k):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                for i in range(backlog // 8):
                    ref = f"backlog-{k}-{i}-{uuid.uuid4().hex[:8]}"
                    status, _ = post(conn, "/api/purchasing_create_po_draft", tok, draft(ref), {"Idempotency-Key": ref})
                    with lock:
                        statuses[status] += 1
            for k in range(8):
                threads.append(threading.Thread(target=worker, args=(k,)))
                threads[-1].start()
            for t in threads:
                t.join(timeout=120)
            events = statuses[201]
            assert events == backlog // 8 * 8, dict(statuses)
            before, engine_before = os.times(), cpu_seconds(server.pid)
            t0 = time.perf_counter()
            out = subprocess.run([os.path.join(bins, "draftline"), "notify", "sweep", "--until-empty"], check=True,
                                 capture_output=True, text=True,
                                 env={**os.environ, **loopback, "DRAFTLINE_DYNAMODB_ENDPOINT": endpoint,
                                      "DRAFTLINE_TABLE": "draftline", "DRAFTLINE_LOG": "warn"}).stdout.strip()
            wall = time.perf_counter() - t0
            after, engine = os.times(), cpu_seconds(server.pid) - engine_before
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            got = hooks.take(events)
            assert len({hook_id for _, hook_id, _ in got}) == events, "one webhook per event"
            print(f"one sweeper, a backlog of {events} events: {events / wall:.0f} events/s delivered "
                  f"({wall:.2f} s), CPU per delivery {cpu / events * 1e6:.0f} us of the sweeping process "
                  f"(its start included), and {engine / events * 1e6:.0f} us of the engine's process "
                  f"(`draftline serve`, {engine / wall * 100:.0f} % of a core): {out}")
        finally:
            stop(server)
    finally:
        os.remove(hooks_file)
        hooks.server.shutdown()


def start_server(bins, erp, data_dir, env_extra, limit_s=600):
    """`draftline serve` on a free port; returns (process, base URL, tryton database or None)."""
    port = free_port()
    cmd = [os.path.join(bins, "draftline"), "serve", "--port", str(port), "--data", data_dir]
    if erp != "builtin":
        cmd += ["--erp", erp]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env={**os.environ, "DRAFTLINE_LOG": "warn", **env_extra})
    database = None
    deadline = time.time() + limit_s
    while time.time() < deadline:
        line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"draftline serve --erp {erp} exited with {server.poll()}")
        m = re.match(r"tryton: \S+ database (\S+)", line)
        if m:
            database = m.group(1)
        if line.startswith("tools:"):
            return server, f"http://127.0.0.1:{port}", database
    stop(server)
    raise RuntimeError(f"draftline serve --erp {erp} did not start in {limit_s} s")


def backends(bins, needed_by, requests):
    """One request at a time (keep-alive) through `draftline serve` on the
    built-in ERP and on a local Tryton: p50/p99 of a read, a fresh draft and
    a replay, and the Tryton REST requests per call from trytond's access log."""
    import tempfile
    rows = []
    for erp in ("builtin", "tryton"):
        with tempfile.TemporaryDirectory(prefix=f"draftline-bench-{erp}-") as data:
            # The same items are drafted again and again: the near-duplicate
            # question is off (with it on, a fresh draft adds one Query on the
            # built-in ERP, one search on Tryton: 5 requests, tests/api/tryton_boundary.rs).
            server, base, database = start_server(bins, erp, data, {"DRAFTLINE_NEAR_DUPLICATE_HOURS": "0"})
            log_path = os.path.join(data, "tryton", "trytond.log")
            try:
                tok = subprocess.run([os.path.join(bins, "draftline"), "token", "--user", "buyer-sby",
                                      "--resource", base], check=True, capture_output=True, text=True).stdout.strip()
                conn = http.client.HTTPConnection("127.0.0.1", int(base.rsplit(":", 1)[1]), timeout=30)
                run_id = uuid.uuid4().hex[:8]

                def draft(ref):
                    return {"vendor_code": "V-00231", "needed_by": needed_by, "client_ref": ref, "note": None,
                            "lines": [{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]}
                cases = [
                    ("read inventory_get_stock", lambda i: post(conn, "/api/inventory_get_stock", tok,
                                                                {"item_code": "BRG-0042"})),
                    ("fresh draft", lambda i: post(conn, "/api/purchasing_create_po_draft", tok,
                                                   draft(f"f-{run_id}-{i}"),
                                                   {"Idempotency-Key": f"fresh-{run_id}-{i}"})),
                    ("replay", lambda i: post(conn, "/api/purchasing_create_po_draft", tok, draft(f"r-{run_id}"),
                                              {"Idempotency-Key": f"replay-{run_id}"})),
                ]
                for name, call in cases:
                    # Warm-up: master data cached, the replay's key created.
                    for i in range(-3, 0):
                        status, body = call(i)
                        assert status in (200, 201), (erp, name, status, body[:300])
                    before = tryton_requests(log_path, database) if database else None
                    times = []
                    for i in range(requests):
                        t = time.perf_counter()
                        status, body = call(i)
                        times.append((time.perf_counter() - t) * 1000)
                        assert status in (200, 201), (erp, name, status, body[:300])
                    after = tryton_requests(log_path, database) if database else None
                    per_call = (after - before) / requests if before is not None and after is not None else None
                    rows.append((erp, name, len(times), pct(times, 50), pct(times, 99), per_call))
                    tr = f"{per_call:.2f}" if per_call is not None else ("-" if erp == "builtin" else "no log")
                    print(f"{erp:8s} {name:26s} n={len(times)} p50 {pct(times, 50):7.2f} ms  "
                          f"p99 {pct(times, 99):7.2f} ms  Tryton requests/call {tr}")
            finally:
                stop(server)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target-dir", default=os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")))
    ap.add_argument("--bin-dir", help="use the binaries in this directory instead of building them")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--cold-starts", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16, help="connections of the CPU-per-call load")
    ap.add_argument("--load-calls", type=int, default=4000, help="measured calls per CPU-per-call case")
    ap.add_argument("--warmup", type=int, default=400, help="calls before each CPU-per-call measurement")
    ap.add_argument("--max-size-mb", type=float, default=8.0, help="the most a function binary may weigh")
    ap.add_argument("--only", choices=["size", "cold", "cpu", "floor", "latency", "concurrent", "backends",
                                       "webhooks"],
                    action="append", help="run only these parts (repeatable)")
    ap.add_argument("--backends", action="store_true",
                    help="also compare the built-in ERP with a local Tryton through `draftline serve` "
                         "(installs trytond into ~/.cache on the first run, ~2 min)")
    ap.add_argument("--backend-requests", type=int, default=100, help="calls per case in --backends")
    ap.add_argument("--webhooks", type=int, default=200, metavar="N",
                    help="with --only webhooks: drafts whose webhook latency is measured per sweep interval")
    ap.add_argument("--webhook-backlog", type=int, default=1600,
                    help="with --only webhooks: events in the backlog one sweeper delivers")
    ap.add_argument("--concurrent-total", type=int, default=640,
                    help="fresh drafts per concurrency level (16 and 64 clients)")
    ap.add_argument("--cases", help="with cpu: a comma-separated choice of read, replay, fresh, policed, demo "
                                    "(e.g. to profile one with perf)")
    ap.add_argument("--no-policy", action="store_true",
                    help="with cpu: run the read, the replay and a fresh draft with no tenant policy (the demo's "
                         "removed), as builds from before policies did (for A/B against them)")
    ap.add_argument("--stages", action="store_true",
                    help="with cpu: keep the function processes' log lines (in /tmp) and report the median "
                         "and p90 of each stage of the measured calls (auth, validation, idempotency, erp, audit)")
    ap.add_argument("--sdk-options", type=int, metavar="ROUNDS", default=0,
                    help="with floor: then measure the SDK client's options one at a time, in this many "
                         "interleaved rounds (request_floor ... options ROUNDS)")
    ap.add_argument("--function-log", help="DRAFTLINE_LOG of the function processes (default: theirs, info)")
    ap.add_argument("--otlp", action="store_true",
                    help="export every call's spans from the function processes to a local OTLP receiver "
                         "(needs binaries built with the default feature otlp)")
    ap.add_argument("--rate", type=float, metavar="REQ_PER_S",
                    help="with cpu: offer the measured calls at this fixed rate (below what every case can "
                         "take) instead of each connection sending on at once: the cases compared then run at "
                         "one throughput, so none's CPU per call is measured with a batching of its own")
    ap.add_argument("--callgrind", metavar="DIR",
                    help="with cpu: run each function under valgrind's callgrind and report the instructions "
                         "per measured call (repeatable where CPU time is not; dumps in DIR for "
                         "callgrind_annotate; the load's CPU and latency figures mean nothing then)")
    args = ap.parse_args()
    global FUNCTION_LOG, OTLP_ENDPOINT, STAGES, CASES, CALLGRIND, RATE
    CALLGRIND = os.path.abspath(args.callgrind) if args.callgrind else None
    RATE = args.rate
    if CALLGRIND:
        os.makedirs(CALLGRIND, exist_ok=True)
    FUNCTION_LOG = args.function_log
    CASES = set(args.cases.split(",")) if args.cases else None
    STAGES = args.stages
    sink = None
    if args.otlp:
        sink = OtlpSink()
        OTLP_ENDPOINT = sink.endpoint
    parts = set(args.only or ["size", "cold", "cpu", "floor", "latency", "concurrent"])
    if args.backends:
        parts.add("backends")

    if args.bin_dir:
        bins = args.bin_dir
    else:
        subprocess.run(
            ["cargo", "build", "--release", "--locked", "-p", "draftline-cli", "--bin", "draftline",
             "-p", "draftline-functions", "--bin", "inventory_get_stock", "--bin", "purchasing_create_po_draft",
             "-p", "draftline-dynamo", "--example", "request_floor"],
            cwd=ROOT, check=True, env={**os.environ, "CARGO_TARGET_DIR": args.target_dir},
        )
        bins = os.path.join(args.target_dir, "release")
    fn = os.path.join(bins, "inventory_get_stock")
    failed = []
    if "size" in parts:
        # Every function binary in the directory (the release profile strips
        # symbols), at least the two this script builds.
        api = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "api")) if f.endswith(".rs"))
        for name in api:
            path = os.path.join(bins, name)
            if not os.path.exists(path):
                continue
            size = os.path.getsize(path) / 1e6
            verdict = "ok" if size <= args.max_size_mb else f"OVER {args.max_size_mb:g} MB"
            print(f"function binary size: {size:5.2f} MB  {name}: {verdict}")
            if size > args.max_size_mb:
                failed.append(f"function binary {name} is {size:.2f} MB, over {args.max_size_mb:g} MB")

    needed_by = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 14 * 86400))
    if parts <= {"size", "backends", "webhooks"}:
        if "backends" in parts:
            backends(bins, needed_by, args.backend_requests)
        if "webhooks" in parts:
            webhooks(bins, needed_by, args.webhooks, args.webhook_backlog)
        for failure in failed:
            print(f"FAILED: {failure}")
        return 1 if failed else 0

    server, port, endpoint = start_engine(bins)
    try:
        base = f"http://127.0.0.1:{port}"

        def token(user, resource):
            return subprocess.run([os.path.join(bins, "draftline"), "token", "--user", user, "--resource", resource],
                                  check=True, capture_output=True, text=True).stdout.strip()

        fn_resource = BENCH_RESOURCE
        fn_token = token("buyer-sby", fn_resource)

        if "cold" in parts:
            # Cold start of one function binary, Vercel mode.
            samples, rss, hwm = [], [], []
            for _ in range(args.cold_starts):
                started = time.perf_counter()
                proc, fport = spawn_function(fn, endpoint, fn_resource)
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
                    time.sleep(0.2)
                    now_kib, peak_kib = memory(proc.pid)
                    rss.append(now_kib)
                    hwm.append(peak_kib)
                stop(proc)
                assert ok, "the function did not answer"
            print(f"cold start to first 200 (n={len(samples)}): median {statistics.median(samples):.1f} ms, "
                  f"max {max(samples):.1f} ms")
            print(f"function memory after 51 calls: idle RSS {statistics.median(rss) / 1024:.1f} MiB, "
                  f"peak RSS {statistics.median(hwm) / 1024:.1f} MiB")

        if "cpu" in parts:
            cpu_per_call(bins, fn_token, needed_by, args.connections, args.load_calls, args.warmup,
                         args.no_policy)

        if "floor" in parts:
            # One DynamoDB request through draftline's client and nothing else:
            # the SDK's CPU floor under which no call that makes one can go.
            floor = next((p for p in (os.path.join(bins, "request_floor"),
                                      os.path.join(bins, "examples", "request_floor")) if os.path.exists(p)), None)
            if floor is None:
                print("request floor: no request_floor binary in --bin-dir (cargo build --release "
                      "-p draftline-dynamo --example request_floor)")
            else:
                subprocess.run([floor, endpoint, "draftline", str(max(args.load_calls, 3000)), str(args.connections)],
                               check=True)
                if args.sdk_options:
                    subprocess.run([floor, endpoint, "draftline", str(max(args.load_calls, 3000)),
                                    str(args.connections), "options", str(args.sdk_options)], check=True)

        tok = token("buyer-sby", base)
        if "latency" in parts:
            # Warm latency through the local server, one request at a time.
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

            def draft(ref):
                return {"vendor_code": "V-00231", "needed_by": needed_by, "client_ref": ref, "note": None,
                        "lines": [{"item_code": "BRG-0042", "qty": 10, "uom": "BOX"}]}
            cases = {
                "read inventory_get_stock": lambda i: post(conn, "/api/inventory_get_stock", tok,
                                                           {"item_code": "BRG-0042"}),
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

        if "concurrent" in parts:
            # Fresh drafts of one branch, concurrently: numbering must not serialize them.
            failures = sum(concurrent_drafts(port, tok, needed_by, clients, args.concurrent_total)
                           for clients in (16, 64))
            if failures:
                failed.append(f"{failures} concurrent fresh drafts were not answered 2xx")
    finally:
        stop(server)
    if "backends" in parts:
        backends(bins, needed_by, args.backend_requests)
    if sink:
        requests, size = sink.counts()
        sink.stop()
        print(f"otlp: the local receiver got {requests} export requests, {size} bytes")
        if requests == 0:
            failed.append("--otlp: nothing was exported (binaries built with --no-default-features?)")
    for failure in failed:
        print(f"FAILED: {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
