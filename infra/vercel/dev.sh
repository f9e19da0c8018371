#!/usr/bin/env bash
# Runs every function of api/ under the real Vercel CLI (`vercel dev --local`,
# pinned in package.json here), exactly as Vercel builds and serves them, with
# the data in the embedded DynamoDB engine of a `draftline serve` started alongside.
#
#   infra/vercel/dev.sh            # serve on http://127.0.0.1:3300 until Ctrl-C
#   infra/vercel/dev.sh --smoke    # start, check a read, a draft, its replay, the MCP
#                                  # endpoint, the tool list and the well-known
#                                  # metadata, the review pages' rewrites, the cron's
#                                  # function (its bearer or 401), then stop
#                                  # (used by scripts/test)
#
# Environment: VERCEL_PORT (3300), DRAFTLINE_BIN (a prebuilt `draftline`;
# otherwise `cargo build -p draftline-cli`), CARGO_TARGET_DIR (honoured by the
# Vercel CLI's cargo builds too, so binaries already built are reused).
# The first request builds the function with cargo: minutes on a cold cache.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
smoke=false
[ "${1:-}" = "--smoke" ] && smoke=true
port="${VERCEL_PORT:-3300}"
if $smoke && [ -z "${VERCEL_PORT:-}" ]; then
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
fi
url="http://127.0.0.1:$port"

(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

if [ -z "${DRAFTLINE_BIN:-}" ]; then
  (cd "$root" && cargo build -q -p draftline-cli)
  target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$root/$target" ;; esac
  DRAFTLINE_BIN="$target/debug/draftline"
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  rm -f "$root/.env"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The data: a local server on a free port; its embedded DynamoDB engine is what the
# functions under `vercel dev` talk to.
setsid "$DRAFTLINE_BIN" serve --port 0 > "$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  grep -q "get a token:" "$work/serve.log" && break
  sleep 0.1
done
endpoint="$(sed -n 's/^dynamodb endpoint: \([^ ]*\).*/\1/p' "$work/serve.log")"
[ -n "$endpoint" ] || { echo "dev.sh: draftline serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

# What a deployed function needs (DESIGN.md, Configuration); `vercel dev` reads .env.
cat > "$root/.env" <<ENV
DRAFTLINE_RESOURCE=$url
DRAFTLINE_ISSUER=draftline-local
DRAFTLINE_JWT_SECRET=draftline-local-development-secret-do-not-use-in-production
DRAFTLINE_DYNAMODB_ENDPOINT=$endpoint
CRON_SECRET=draftline-vercel-dev-cron-secret-not-for-use
ENV
if $smoke; then
  # The review function refuses to start where nobody could sign in; the smoke
  # only checks that /review reaches it (no provider is asked until a sign-in).
  cat >> "$root/.env" <<ENV
DRAFTLINE_SESSION_SECRET=draftline-vercel-smoke-session-secret-not-for-use
DRAFTLINE_OIDC_ISSUER=http://127.0.0.1:9
DRAFTLINE_OIDC_CLIENT_ID=draftline-vercel-smoke
ENV
fi

export VERCEL_TELEMETRY_DISABLED=1 NO_UPDATE_NOTIFIER=1
cd "$root"
if ! $smoke; then
  echo "functions: $url/api/<name>   token: $DRAFTLINE_BIN token --user buyer-sby --resource $url"
  exec "$here/node_modules/.bin/vercel" dev --local --yes --listen "127.0.0.1:$port"
fi

setsid "$here/node_modules/.bin/vercel" dev --local --yes --listen "127.0.0.1:$port" > "$work/vercel.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  grep -q "Ready!" "$work/vercel.log" && break
  sleep 0.1
done
grep -q "Ready!" "$work/vercel.log" || { echo "dev.sh: vercel dev did not start" >&2; cat "$work/vercel.log" >&2; exit 1; }

token="$("$DRAFTLINE_BIN" token --user buyer-sby --resource "$url")"
fail() { echo "dev.sh --smoke: $*" >&2; tail -n 40 "$work/vercel.log" >&2; exit 1; }
call() { # path, expected status, [curl args...]
  local path=$1 want=$2; shift 2
  local got
  got="$(curl -s -m 900 -o "$work/body" -w '%{http_code}' "$url$path" -H "Authorization: Bearer $token" "$@")"
  [ "$got" = "$want" ] || fail "$path answered $got, expected $want: $(head -c 400 "$work/body")"
  echo "vercel dev: $path -> $got"
}
needed_by="$(date -u -d '+14 days' +%F)"
draft='{"vendor_code":"V-00231","needed_by":"'"$needed_by"'","client_ref":"vercel-smoke","note":null,"lines":[{"item_code":"BRG-0042","qty":10,"uom":"BOX"}]}'
call /api/inventory_get_stock 200 -d '{"item_code":"BRG-0042"}'
call /api/purchasing_create_po_draft 201 -H 'Idempotency-Key: vercel-smoke' -d "$draft"
call /api/purchasing_create_po_draft 200 -H 'Idempotency-Key: vercel-smoke' -d "$draft"
grep -q '"replayed":true' "$work/body" || fail "the retry was not a replay"
call /api/mcp 200 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
grep -q '"purchasing_create_po_draft"' "$work/body" || fail "tools/list lacks the draft tool"
call '/api/tools?format=openai' 200
call /.well-known/oauth-protected-resource 200
grep -q "\"resource\":\"$url\"" "$work/body" || fail "the metadata names another resource"
# The review pages: vercel.json rewrites /review and /review/* to api/review.rs,
# which sees the browser's path (a signed-out reader is sent to sign in).
call /review 303
call /review/documents/PO-SBY-000001 303
location="$(curl -s -m 900 -o /dev/null -w '%{redirect_url}' "$url/review/documents/PO-SBY-000001")"
case "$location" in
  *"/review/signin?next=%2Freview%2Fdocuments%2FPO-SBY-000001"*) ;;
  *) fail "/review/documents/… redirected to '$location', not to its sign-in" ;;
esac
call /review/signin 200
grep -q "Sign in" "$work/body" || fail "/review/signin is not the sign-in page"
# The cron's function (vercel.json crons): the scheduler's bearer, or 401.
cron() { # bearer (empty: none), expected status
  local got
  got="$(curl -s -m 900 -o "$work/body" -w '%{http_code}' "$url/api/notify" ${1:+-H "Authorization: Bearer $1"})"
  [ "$got" = "$2" ] || fail "/api/notify with bearer '$1' answered $got, expected $2: $(head -c 400 "$work/body")"
  echo "vercel dev: /api/notify (bearer '${1:0:8}…') -> $got"
}
cron "" 401
cron "$token" 401
cron draftline-vercel-dev-cron-secret-not-for-use 200
grep -q '"swept":true' "$work/body" || fail "the cron's call did not sweep: $(head -c 400 "$work/body")"
echo "vercel dev --local: every check passed"
