#!/usr/bin/env bash
# Runs the TypeScript client suites against a local `draftline serve`:
#   clients/ai-sdk            (@draftline/ai-sdk + the Vercel AI SDK, mock model, no network)
#   clients/mcp-client-tests  (the official MCP TypeScript SDK client against /api/mcp)
#   clients/oidc-sign-in      (the review pages' OpenID Connect sign-in against oidc-provider,
#                              and Okta-, Entra-, Auth0- and Keycloak-shaped access tokens)
# Each: `npm ci` (the npm registry is the only network it needs), then `npm test`, which
# builds the package, runs `cargo build -p draftline-cli` (honours CARGO_TARGET_DIR; skipped
# when DRAFTLINE_BIN names a binary), and starts/stops its own servers on free ports.
# Every suite runs in its own process group with a time limit; the group (servers
# included) is killed on timeout or when this script is interrupted.
# Exits non-zero if any step of any suite fails. Needs Node >= 20.3 and npm.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
suite_limit="${CLIENT_TESTS_TIMEOUT_SECONDS:-1800}"   # per suite, npm ci + build + tests

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "clients/run-tests.sh: node and npm are required" >&2
  exit 1
fi
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=3)?0:1)'; then
  echo "clients/run-tests.sh: Node >= 20.3 is required (found $(node -v))" >&2
  exit 1
fi

pgid=""
watchdog=""
cleanup() {
  [ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
  if [ -n "$pgid" ]; then
    kill -TERM -- "-$pgid" 2>/dev/null
    sleep 1
    kill -KILL -- "-$pgid" 2>/dev/null
  fi
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap cleanup EXIT

passed=0
failed=0
failures=()

# run_suite DIR [COMMAND]: npm ci && COMMAND (default: npm test) in DIR, in a new
# process group, bounded in time.
run_suite() {
  local dir="$1" command="${2:-npm test}" log rc
  log="$(mktemp)"
  echo "=== clients/$dir: npm ci && $command (limit ${suite_limit}s)"
  # setsid: the suite (npm, node, the draftline servers it spawns) gets its own process
  # group, whose id is the child's pid, so it can be ended as a whole.
  setsid --wait bash -c 'cd "$1" && npm ci --no-audit --no-fund && eval "$2"' _ "$here/$dir" "$command" \
    > >(tee "$log") 2>&1 < /dev/null &
  pgid=$!
  ( sleep "$suite_limit"
    echo "clients/$dir: time limit of ${suite_limit}s reached; stopping it" >&2
    kill -TERM -- "-$pgid" 2>/dev/null; sleep 10; kill -KILL -- "-$pgid" 2>/dev/null ) &
  watchdog=$!
  wait "$pgid"
  rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  watchdog=""
  # Anything of the group still alive (it should not be) goes too.
  kill -KILL -- "-$pgid" 2>/dev/null
  pgid=""
  sleep 0.2   # let tee flush

  # Node's test runner closes with "# pass N" / "# fail N" (TAP) or "ℹ pass N" (spec).
  local p f
  p="$(grep -aE '^(# |ℹ )pass [0-9]+$' "$log" | tail -1 | grep -oE '[0-9]+$' || true)"
  f="$(grep -aE '^(# |ℹ )fail [0-9]+$' "$log" | tail -1 | grep -oE '[0-9]+$' || true)"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  rm -f "$log"
  if [ "$rc" -ne 0 ]; then
    failures+=("$dir (exit $rc)")
    # A suite that failed before or outside its tests still counts as a failure.
    [ "${f:-0}" -eq 0 ] && failed=$((failed + 1))
  fi
  echo "=== clients/$dir: exit $rc"
}

run_suite ai-sdk
run_suite mcp-client-tests
# The review pages' OpenID Connect sign-in against a real provider (oidc-provider on Node 22),
# and access tokens shaped as four identity providers issue them, read through DRAFTLINE_ISSUERS.
run_suite oidc-sign-in
# The same clients against the Tryton backend (`draftline serve --erp tryton`): the AI SDK
# reorder workflow (read tools and a draft with its replay) and the MCP client suite (a
# read tool, a draft and its replay, scopes).
run_suite ai-sdk "npm run build && DRAFTLINE_TEST_ERP=tryton node test/support/node22.mjs --test --test-timeout=300000 test/reorder-workflow.test.mjs"
run_suite mcp-client-tests "DRAFTLINE_TEST_ERP=tryton node --test --test-timeout=300000 test/mcp-client.test.mjs"

if [ "${#failures[@]}" -gt 0 ]; then
  echo "clients: failed: ${failures[*]}" >&2
fi
echo "clients: $passed passed, $failed failed"
[ "${#failures[@]}" -eq 0 ]
