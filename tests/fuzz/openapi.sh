#!/usr/bin/env bash
# The schema-driven fuzz run: Schemathesis (pinned, from PyPI, installed into a
# cache once) generates requests from `GET /api/tools?format=openapi` of a
# fresh `draftline serve` and checks every answer against the same document:
# no 5xx, documented statuses, content types and response schemas, invalid
# requests refused, valid requests accepted unless a rule beyond the schema
# refuses them (hooks.py, schemathesis.toml). Every check runs, on two fixed
# seeds in turn, each with a number of examples per operation and a time
# budget. Exits non-zero on any finding.
#
#   tests/fuzz/openapi.sh               # uses $DRAFTLINE_BIN or cargo builds the CLI
#   FUZZ_EXAMPLES=200 tests/fuzz/openapi.sh
#   FUZZ_SEEDS="1 2 3" tests/fuzz/openapi.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="4.32.5"
cache="${DRAFTLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draftline}/schemathesis-$version"
examples="${FUZZ_EXAMPLES:-20}"
budget="${FUZZ_MAX_SECONDS:-120}"
seeds="${FUZZ_SEEDS:-${FUZZ_SEED:-20261201 7340261}}"

# A venv cannot move once made, so it is made in place and marked complete.
if [ ! -f "$cache/.complete" ]; then
  echo "fuzz: installing schemathesis $version into $cache" >&2
  rm -rf "$cache"
  python3 -m venv "$cache"
  "$cache/bin/pip" install --quiet "schemathesis==$version"
  touch "$cache/.complete"
fi

bin="${DRAFTLINE_BIN:-}"
if [ -z "$bin" ]; then
  (cd "$root" && cargo build -q -p draftline-cli)
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/draftline"
fi

work="$(mktemp -d)"
server=""
cleanup() {
  local rc=$?
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

"$bin" serve --port 0 >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  grep -q "listening on" "$work/serve.log" && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.1
done
url="$(grep -o 'listening on http://[0-9.:]*' "$work/serve.log" | head -1 | sed 's/listening on //')"
[ -n "$url" ] || { echo "fuzz: the server never said where it listens" >&2; cat "$work/serve.log" >&2; exit 1; }

scopes="purchasing:read purchasing:draft inventory:read sales:read sales:draft finance:read"
token="$("$bin" token --sub fuzzer --tenant demo --branch SBY-01 --branch-code SBY --scope "$scopes" --resource "$url")"
python3 - "$url" "$token" "$work/openapi.json" <<'PY'
import sys, urllib.request
url, token, out = sys.argv[1:4]
request = urllib.request.Request(url + "/api/tools?format=openapi", headers={"Authorization": "Bearer " + token})
with urllib.request.urlopen(request, timeout=10) as response, open(out, "wb") as f:
    f.write(response.read())
PY

cd "$here"
for seed in $seeds; do
  echo "fuzz: $url, $examples examples per operation, seed $seed, every check, at most ${budget}s" >&2
  SCHEMATHESIS_HOOKS=hooks timeout --kill-after=10 "$((budget + 60))" \
    "$cache/bin/schemathesis" --config-file "$here/schemathesis.toml" run "$work/openapi.json" \
      --url "$url" \
      --header "Authorization: Bearer $token" \
      --checks all \
      --max-examples "$examples" \
      --max-time "$budget" \
      --seed "$seed" \
      --workers 2 \
      --request-timeout 10 \
      --suppress-health-check all \
      --no-color
done
