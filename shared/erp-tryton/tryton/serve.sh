#!/usr/bin/env bash
# serve.sh <cache-dir> <data-dir> <port>
#
# Runs trytond in the foreground for the databases of <data-dir> (made by
# setup.sh with the same <cache-dir>) on 127.0.0.1:<port>. `exec`s trytond,
# so the caller's child process IS trytond: kill it (SIGTERM) to stop it.
# A database file copied into <data-dir> after the start is not served
# (404): start trytond after setup.sh.
set -euo pipefail
if [ $# -ne 3 ]; then
    echo "usage: $0 <cache-dir> <data-dir> <port>" >&2
    exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cache_dir=$(cd "$1" && pwd)
data_dir=$(cd "$2" && pwd)
port=$3
venv=$cache_dir/venv-$(env_hash)
if [ ! -e "$venv/.complete" ] || [ ! -e "$data_dir/trytond.conf" ]; then
    echo "serve.sh: run setup.sh $1 $2 <database> first" >&2
    exit 1
fi
export TRYTOND_WEB__LISTEN=127.0.0.1:$port
exec "$venv/bin/trytond" -c "$data_dir/trytond.conf"
